"""Old optimizer packages from PyPI, installed without their dependencies
(tests/originals.txt) and imported under TensorFlow 2.21 as users import
them: adabelief-tf 0.2.1 (`AdaBeliefOptimizer`) and keras-rectified-adam
0.20.0 (`keras_radam.RAdam`), both OptimizerV2 subclasses of
`tf.keras.optimizers.Optimizer`. Each class's port against the class for
100 steps, and a mutant's port (one argument 1 % off) against it; then
`tf_bridge.adopt(cls)` training a Keras 3 model against the class training
the same tf_keras model, with the class's own `weight_decay` (not Keras 3's
base argument of that name) under a warmup. Prints, per class and check, what failed (None
where nothing did) as JSON.

Run by `originals.run` (TF_USE_LEGACY_KERAS=1: `tf.keras` is tf_keras)."""

import contextlib
import importlib
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # pylint: disable=wrong-import-position
import tensorflow as tf  # pylint: disable=wrong-import-position
import tf_keras  # pylint: disable=wrong-import-position
import keras  # pylint: disable=wrong-import-position

import tf_bridge  # pylint: disable=wrong-import-position
from tf_bridge import testing  # pylint: disable=wrong-import-position

STEPS = 100
RTOL, ATOL = 1e-5, 1e-6


@contextlib.contextmanager
def optimizer_v2_as_the_base():
  """Packages written before TF 2.11 subclass `tf.keras.optimizers.Optimizer`
  meaning OptimizerV2, which tf_keras names `optimizers.legacy.Optimizer`:
  they are imported with that name pointing there."""
  # `tf.keras.optimizers` and the module `from tensorflow.keras.optimizers
  # import Optimizer` reads, which may be another object.
  modules = {id(m): m for m in (
      tf.keras.optimizers,
      importlib.import_module("tensorflow.keras.optimizers"))}.values()
  bases = [module.Optimizer for module in modules]
  for module in modules:
    module.Optimizer = tf_keras.optimizers.legacy.Optimizer
  try:
    yield
  finally:
    for module, base in zip(modules, bases):
      module.Optimizer = base


with optimizer_v2_as_the_base():
  import adabelief_tf  # pylint: disable=wrong-import-position
  import keras_radam  # pylint: disable=wrong-import-position

# class, its arguments, and the argument a mutant moves.
CASES = {
    "AdaBeliefOptimizer": (adabelief_tf.AdaBeliefOptimizer,
                           dict(learning_rate=0.01, weight_decay=0.01,
                                print_change_log=False), "learning_rate"),
    "AdaBeliefOptimizer(warmup)": (adabelief_tf.AdaBeliefOptimizer,
                                   dict(learning_rate=0.01, total_steps=100,
                                        warmup_proportion=0.1, min_lr=0.001,
                                        weight_decay=0.01,
                                        print_change_log=False), "min_lr"),
    "RAdam": (keras_radam.RAdam, dict(learning_rate=0.01, weight_decay=0.01,
                                      total_steps=100, min_lr=0.001),
              "learning_rate"),
}


def failure(actual, expected, initial, name):
  try:
    testing.compare_trajectories(actual, expected, rtol=RTOL, atol=ATOL,
                                 initial=initial, expected_name=name)
  except AssertionError as error:
    return str(error)[:400]
  return None


def trained(models, optimizer):
  """A small model's weights after 2 epochs of `fit` (4 steps each)."""
  rng = np.random.default_rng(1)
  model = models.Sequential([models.Input((5,)),
                             models.layers.Dense(8, activation="tanh"),
                             models.layers.Dense(1)])
  model.set_weights([rng.standard_normal(w.shape).astype(np.float32) * 0.5
                     for w in model.get_weights()])
  model.compile(optimizer=optimizer, loss="mse")
  x = rng.standard_normal((32, 5)).astype(np.float32)
  y = rng.standard_normal((32, 1)).astype(np.float32)
  model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
  return [np.asarray(w) for w in model.get_weights()]


def main():
  initial, gradients = testing.seeded_problem(STEPS, 0, 1.0)
  natives = testing.native_trajectories(
      [cls(**arguments) for cls, arguments, _ in CASES.values()], initial,
      gradients)
  transforms = []
  for cls, arguments, moved in CASES.values():
    mutant = {**arguments, moved: arguments[moved] * 1.01}
    transforms += [tf_bridge.port(cls(**arguments)),
                   tf_bridge.port(cls(**mutant))]
  runs = testing.transform_trajectories(transforms, initial, gradients)
  results = {}
  for index, (name, native) in enumerate(zip(CASES, natives)):
    ported, mutant = runs[2 * index:2 * index + 2]
    results[name] = {"port": failure(ported, native, initial, name),
                     "mutant": failure(mutant, native, initial, name)}

  # In warmup (the 8 steps of `trained`) the rate scales the class's own
  # `weight_decay`, which Keras 3's base argument of that name would not.
  for name in ("AdaBeliefOptimizer(warmup)", "RAdam"):
    cls, arguments, _ = CASES[name]
    moved = "learning_rate"
    adopted = tf_bridge.adopt(cls)
    expected = trained(tf_keras, cls(**arguments))
    start = trained(tf_keras, tf_keras.optimizers.legacy.SGD(0.0))
    runs = [trained(keras, adopted(**arguments)),
            trained(keras, adopted(**{**arguments,
                                      moved: arguments[moved] * 1.01}))]
    results[name].update(
        adopted_is_keras_3=isinstance(adopted(**arguments),
                                      keras.optimizers.Optimizer),
        fit=failure([runs[0]], [expected], start, name),
        fit_mutant=failure([runs[1]], [expected], start, name))
  json.dump(results, sys.stdout)


if __name__ == "__main__":
  main()
