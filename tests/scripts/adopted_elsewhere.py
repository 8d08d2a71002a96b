"""Adopted classes where a setting is fixed at process start, for
tests/test_adopt_hosts.py. `python adopted_elsewhere.py BACKEND [MODEL...]`:

- jax: Keras 3 on its JAX backend trains a model with
  `tf_bridge.adopt(CenteredMomentumSGD)` and with a mutant of it (momentum
  1 % off): the class is converted with TensorFlow, the step runs in JAX.
- tensorflow: the same fit on the TensorFlow backend, and the class itself
  training the same tf_keras model (its own generation); the adoption of
  the TF1 class `AdagradDecay` under `tf.distribute.MirroredStrategy` over
  two logical CPUs and on one, in Keras 3 (`tf_bridge.adopt`) and in
  tf_keras (`tf_bridge.legacy.adopt`), and a mutant of each under the
  strategy; the adoption of the lazy OptimizerV2 class `LazyMomentum`
  training a model with an Embedding (a sparse gradient, all-reduced over
  the replicas) under the strategy, its mutant (momentum 1 % off), and the
  class itself on one device in tf_keras; then each MODEL (a tf_keras model saved with an adopted
  optimizer) loaded by `tf_keras.models.load_model` in this fresh process,
  once the hosts have adopted its class.

Prints the final weights and the loaded optimizers' classes, configs and
variables as JSON.
"""

import json
import os
import sys

os.environ["KERAS_BACKEND"] = sys.argv[1]
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import tensorflow as tf  # pylint: disable=wrong-import-position

if sys.argv[1] == "tensorflow":
  tf.config.set_logical_device_configuration(
      tf.config.list_physical_devices("CPU")[0],
      [tf.config.LogicalDeviceConfiguration()] * 2)

import keras  # pylint: disable=wrong-import-position
import numpy as np  # pylint: disable=wrong-import-position
import tf_keras  # pylint: disable=wrong-import-position

import adopt_fits  # pylint: disable=wrong-import-position
import port_classes  # pylint: disable=wrong-import-position
from adopt_fits import trained  # pylint: disable=wrong-import-position
import tf_bridge  # pylint: disable=wrong-import-position
import tf_bridge.legacy  # pylint: disable=wrong-import-position
import tf_bridge.tf_keras  # pylint: disable=wrong-import-position

MOMENTUM = {"learning_rate": 0.05, "momentum": 0.9}
ADAGRAD = {"learning_rate": 0.1, "accumulator_decay_step": 3}


def backend_runs():
  adopted = tf_bridge.adopt(port_classes.CenteredMomentumSGD)
  mutant = {**MOMENTUM, "momentum": MOMENTUM["momentum"] * 1.01}
  return {"adopted": trained(keras, lambda: adopted(**MOMENTUM)),
          "mutant": trained(keras, lambda: adopted(**mutant))}


def strategy_runs(mirrored):
  """The TF1 class adopted on Keras 3 and on tf_keras's OptimizerV2, on
  two replicas, on one, and its mutant (decay rate 1 % off) on two."""
  mutant = {**ADAGRAD, "accumulator_decay_rate": 0.9 * 1.01}
  runs = {"replicas": mirrored.num_replicas_in_sync}
  for name, library, adopt in (
      ("keras", keras, tf_bridge.adopt),
      ("legacy", tf_keras, tf_bridge.legacy.adopt)):
    adopted = adopt(port_classes.AdagradDecay)
    runs[name] = {
        "mirrored": trained(library, lambda: adopted(**ADAGRAD), mirrored),  # pylint: disable=cell-var-from-loop
        "one": trained(library, lambda: adopted(**ADAGRAD)),  # pylint: disable=cell-var-from-loop
        "mutant": trained(library, lambda: adopted(**mutant), mirrored)}  # pylint: disable=cell-var-from-loop
  return runs


def sparse_strategy_runs(mirrored):
  adopted = tf_bridge.adopt(port_classes.LazyMomentum)

  def weights(library, make, strategy=None):
    return [w.tolist() for w in adopt_fits.sparse_fit(
        adopt_fits.sparse_model_of(library, make, strategy=strategy))]
  return {"native": weights(tf_keras, lambda: port_classes.LazyMomentum(
      **MOMENTUM)),
          "mirrored": weights(keras, lambda: adopted(**MOMENTUM), mirrored),
          "mutant": weights(keras, lambda: adopted(
              **{**MOMENTUM, "momentum": MOMENTUM["momentum"] * 1.01}),
                            mirrored)}


def loaded(paths):
  """Each saved model's optimizer, loaded here: its class and variables."""
  tf_bridge.legacy.adopt(port_classes.CenteredMomentumSGD)
  tf_bridge.tf_keras.adopt(port_classes.SignMomentum)
  found = []
  for path in paths:
    optimizer = tf_keras.models.load_model(path).optimizer
    variables = (optimizer.variables() if callable(optimizer.variables)
                 else optimizer.variables)
    found.append({"class": [type(optimizer).__module__,
                            type(optimizer).__name__,
                            type(optimizer)._adopted_on],  # pylint: disable=protected-access
                  "config": {k: v.item() if isinstance(v, np.generic)
                             else v
                             for k, v in optimizer.get_config().items()
                             if isinstance(v, (int, float, str, np.generic))},
                  "variables": {v.name: np.asarray(v).tolist()
                                for v in variables}})
  return found


def main():
  results = {}
  if sys.argv[1] == "tensorflow":
    results["native"] = trained(
        tf_keras, lambda: port_classes.CenteredMomentumSGD(**MOMENTUM))
    # One strategy: a second one's collective ops would take the first's
    # instance keys, with other shapes.
    mirrored = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    results["strategies"] = strategy_runs(mirrored)
    results["sparse strategy"] = sparse_strategy_runs(mirrored)
    results["loaded"] = loaded(sys.argv[2:])
  results.update(backend_runs())
  results["backend"] = keras.backend.backend()
  json.dump(results, sys.stdout)


if __name__ == "__main__":
  main()
