"""Adopted classes where a setting is fixed at process start, for
tests/test_adopt_hosts.py. `python adopted_elsewhere.py BACKEND [MODEL...]`:

- jax: Keras 3 on its JAX backend trains a model with
  `tf_bridge.adopt(CenteredMomentumSGD)` and with a mutant of it (momentum
  1 % off): the class is converted with TensorFlow, the step runs in JAX;
  and the adoptions of classes with sparse hooks of their own, and their
  mutants, apply a table's sparse gradients (BCOO over rows, of 4, 2 and 5
  entries, a repeated index in each; the class itself applies them as
  `tf.IndexedSlices` on the tensorflow backend, and given them densified).
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
  once the hosts have adopted its class; `tf_bridge.tf_keras.adopt(
  LrMomentum)` (a class taking its rate as `lr`: the other tf_keras host
  has it in tests/test_adopt_hosts.py's process), its mutant and the class
  itself; last, under tf_keras's global `mixed_float16` policy (tf_keras
  wraps each optimizer in its LossScaleOptimizer at `compile`), classes of
  tests/port_classes.py, their adoptions on tf_keras's hosts and mutants
  (and a lazy class given its gradients densified) training tf_keras
  models, with the wrapper's config round trip and the slots' dtypes; and
  the TF1 class `AdagradDecay` adopted by `tf_bridge.legacy.adopt`, step by
  step, against the class in TF1's own MixedPrecisionLossScaleOptimizer on
  data whose scaled gradient overflows.

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


# Classes with sparse hooks of their own applying `sparse_steps`: their
# arguments, one multiplied by `k`.
SPARSE_APPLIED = {
    "EntrySignSGD": lambda k: {"learning_rate": 0.1 * k},
    "LazyMomentum": lambda k: {"learning_rate": 0.1, "momentum": 0.9 * k},
}


def sparse_steps():
  """A table's initial value and three sparse gradients of it, (values,
  indices) of 4, 2 and 5 entries; in the first and the last the first
  index repeats, its second entry of the other sign (so the sign of their
  sum is not the sum of their signs)."""
  rng = np.random.default_rng(5)
  steps = []
  for n in (4, 2, 5):
    values = rng.standard_normal((n, 3)).astype(np.float32)
    if n > 2:
      values[2] = -0.5 * values[0]
    steps.append((values, np.array([1, 3, 1, 4, 0][:n], np.int32)))
  return rng.standard_normal((6, 3)).astype(np.float32), steps


def sparse_apply_runs():
  """Per class: on Keras's JAX backend, its adoption's and its mutant's
  table after `apply` of the steps as BCOO gradients, and how many sparse
  steps the adoption compiled; on the TensorFlow backend, the class's own
  after `apply_gradients` of them as `tf.IndexedSlices`, and given them
  densified."""
  initial, steps = sparse_steps()
  runs = {}
  for name, arguments in SPARSE_APPLIED.items():
    cls = getattr(port_classes, name)
    if keras.backend.backend() == "jax":
      import jax.numpy as jnp  # pylint: disable=import-outside-toplevel
      from jax.experimental import sparse  # pylint: disable=import-outside-toplevel
      adopted, run = tf_bridge.adopt(cls), {}
      for key, k in (("adopted", 1.0), ("mutant", 1.01)):
        variable, optimizer = keras.Variable(initial), adopted(**arguments(k))
        for values, indices in steps:
          optimizer.apply([sparse.BCOO(
              (jnp.asarray(values), jnp.asarray(indices[:, None])),
              shape=initial.shape)], [variable])
        run[key] = np.asarray(variable.value).tolist()
      run["sparse_steps"] = sum(1 for key in optimizer._fused._steps  # pylint: disable=protected-access
                                if any(key[2]))
    else:
      run = {}
      for key, make in (("native", cls),
                        ("densified", adopt_fits.densifying(cls))):
        variable, optimizer = tf.Variable(initial), make(**arguments(1.0))
        for values, indices in steps:
          optimizer.apply_gradients([(tf.IndexedSlices(
              values, indices, tf.constant(initial.shape)), variable)])
        run[key] = variable.numpy().tolist()
    runs[name] = run
  return runs


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


def lr_runs():
  """The rate given positionally, then set between epochs (as a callback
  sets it), with the momentum its `beta` is kept as."""
  cls = port_classes.LrMomentum
  adopted = tf_bridge.tf_keras.adopt(cls)

  def weights(make):
    model = adopt_fits.model_of(tf_keras, make)
    adopt_fits.fit(model, epochs=2)
    model.optimizer.learning_rate = 0.02
    model.optimizer.momentum = 0.5
    # tf_keras 2.11+ reads an attribute set after its step was traced at
    # the next trace (OptimizerV2's hyperparameter is a variable).
    model.make_train_function(force=True)
    return [w.tolist() for w in adopt_fits.fit(model, epochs=1)]
  return {"native": weights(lambda: cls(lr=0.05, beta=0.8)),
          "adopted": weights(lambda: adopted(0.05, 0.8)),
          "mutant": weights(lambda: adopted(lr=0.0505, beta=0.8))}


# Each mixed_float16 case: the host's adopt, the class, whether it trains
# the Embedding model (a sparse gradient, and a Dense layer's), and its
# arguments (`k`: the mutant's multiplier of one of them).
MIXED_CASES = {
    "tf_keras.adopt(tf_keras class)": (
        "tf_keras", port_classes.SignMomentum, False,
        lambda k: dict(learning_rate=0.01 * k, beta=0.9)),
    "legacy.adopt(OptimizerV2 lazy class)": (
        "legacy", port_classes.LazyMomentum, True,
        lambda k: dict(learning_rate=0.05, momentum=0.9 * k)),
    "legacy.adopt(OptimizerV2 lazy class), clipnorm": (
        "legacy", port_classes.LazyMomentum, True,
        lambda k: dict(learning_rate=0.05, momentum=0.9 * k, clipnorm=0.05)),
}


def wrapped(model, cls):
  """The optimizer tf_keras compiled `model` with and whether its inner one
  is `cls`'s adoption; the dtypes of the inner one's float variables (its
  slots, beside the float16 compute); whether the wrapper's config (the
  inner one's serialized in it) deserializes to the inner one's class and
  to an equal config."""
  optimizer = model.optimizer
  inner = optimizer.inner_optimizer
  variables = (inner.variables() if callable(inner.variables)
               else inner.variables)
  restored = tf_keras.optimizers.deserialize(
      tf_keras.optimizers.serialize(optimizer))
  return {"optimizers": [type(optimizer).__name__,
                         getattr(type(inner), "adopted_class", None) is cls],
          "float variables": [v.dtype.name for v in variables
                              if v.dtype.is_floating],
          "round trip": [type(restored.inner_optimizer) is type(inner),
                         restored.get_config() == optimizer.get_config()]}


def mixed_run(host, cls, sparse, arguments):
  """The final weights of the class, its adoption and the mutant (and of
  the class given its gradients densified, on the Embedding model, where
  unclipped: a dense gradient's norm is another), and what `wrapped` finds
  of the adoption's model."""
  adopted = getattr(tf_bridge, host).adopt(cls)
  makes = {"native": lambda: cls(**arguments(1.0)),
           "adopted": lambda: adopted(**arguments(1.0)),
           "mutant": lambda: adopted(**arguments(1.01))}
  if sparse and "clipnorm" not in arguments(1.0):
    makes["densified"] = lambda: adopt_fits.densifying(cls)(
        **arguments(1.0))
  run = {}
  for key, make in makes.items():
    if sparse:
      model = adopt_fits.sparse_model_of(tf_keras, make)
      weights = adopt_fits.sparse_fit(model)
    else:
      model = adopt_fits.model_of(tf_keras, make)
      weights = adopt_fits.fit(model)
    run[key] = [w.tolist() for w in weights]
    if key == "adopted":
      run.update(wrapped(model, cls))
  return run


def overflowing_data():
  """`adopt_fits.data()` with the second batch's targets 30 times as large:
  under mixed_float16 its scaled gradient overflows float16 at every loss
  scale the TF1 fits reach (each skips that step and halves the scale)."""
  inputs, targets, initial = adopt_fits.data()
  targets = targets.copy()
  targets[16:32] *= 30
  return inputs, targets, initial


def stepped(loss_scale, model):
  return {"loss scale": float(loss_scale),
          "weights": [w.tolist() for w in model.get_weights()]}


def fitted_steps(model, epochs=3):
  """Each step of `fit` on `overflowing_data` (batches of 16, not
  shuffled): the loss scale after it and the weights."""
  inputs, targets, _ = overflowing_data()
  steps = []
  record = tf_keras.callbacks.LambdaCallback(
      on_train_batch_end=lambda batch, logs: steps.append(
          stepped(model.optimizer.loss_scale, model)))
  model.fit(inputs, targets, batch_size=16, epochs=epochs, shuffle=False,
            verbose=0, callbacks=[record])
  return steps


def tf1_wrapped_steps(optimizer, loss_scale, epochs=3):
  """The same steps, of the uncompiled model, by `optimizer` (a TF1 class)
  in TF1's own MixedPrecisionLossScaleOptimizer with `loss_scale`, each an
  eager `minimize` of tf_keras's mean squared error (`fit`'s "mse"); and
  the dtypes of the class's float variables."""
  model = adopt_fits.model_of(tf_keras, None)
  inputs, targets, _ = overflowing_data()
  wrapper = tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(
      optimizer, loss_scale)
  mse = tf_keras.losses.MeanSquaredError()
  steps = []
  for _ in range(epochs):
    for start in range(0, len(inputs), 16):
      batch = slice(start, start + 16)
      wrapper.minimize(lambda: mse(targets[batch], model(  # pylint: disable=cell-var-from-loop
          inputs[batch], training=True)), var_list=model.trainable_variables)
      steps.append(stepped(loss_scale(), model))
  return steps, [v.dtype.name for v in optimizer.variables()
                 if v.dtype.is_floating]


# The TF1 class's loss scalings: how the adoption is wrapped (by `compile`
# itself where it is not) and TF1's `DynamicLossScale` of the same settings
# (TF1's "dynamic" is `DynamicLossScale()`).
TF1_LOSS_SCALES = {
    "default": (lambda optimizer: optimizer,
                tf.compat.v1.mixed_precision.DynamicLossScale),
    "growth every 2 steps": (
        lambda optimizer: tf_keras.mixed_precision.LossScaleOptimizer(
            optimizer, dynamic_growth_steps=2),
        lambda: tf.compat.v1.mixed_precision.DynamicLossScale(
            increment_period=2)),
}


def tf1_mixed_runs():
  """Per loss scaling: the steps of `tf_bridge.legacy.adopt(AdagradDecay)`
  in `fit` and of the class in TF1's wrapper, both wrappers' settings, and
  what `wrapped` finds of the adoption's model; by default also the final
  weights of the mutant (learning rate 1 % off) and of the adoption
  without loss scaling (a fixed scale of 1: no step skipped)."""
  cls = port_classes.AdagradDecay
  adopted = tf_bridge.legacy.adopt(cls)
  runs = {}
  for setting, (wrap, tf1_loss_scale) in TF1_LOSS_SCALES.items():
    model = adopt_fits.model_of(tf_keras, lambda: wrap(adopted(**ADAGRAD)))  # pylint: disable=cell-var-from-loop
    loss_scale = tf1_loss_scale()
    truth, truth_float_variables = tf1_wrapped_steps(cls(**ADAGRAD),
                                                     loss_scale)
    runs[setting] = {
        "adopted": fitted_steps(model), **wrapped(model, cls),
        "truth": truth, "truth float variables": truth_float_variables,
        "settings": [[model.optimizer.initial_scale,
                      model.optimizer.dynamic_growth_steps],
                     [loss_scale.initial_loss_scale,
                      loss_scale.increment_period, loss_scale.multiplier]]}
  for key, make in (
      ("mutant", lambda: adopted(**{**ADAGRAD, "learning_rate": 0.101})),
      ("unscaled", lambda: tf_keras.mixed_precision.LossScaleOptimizer(
          adopted(**ADAGRAD), dynamic=False, initial_scale=1))):
    runs["default"][key] = fitted_steps(
        adopt_fits.model_of(tf_keras, make))[-1]["weights"]
  return runs


def mixed_precision_runs():
  tf_keras.mixed_precision.set_global_policy("mixed_float16")
  return {**{name: mixed_run(*case) for name, case in MIXED_CASES.items()},
          "legacy.adopt(TF1 class)": tf1_mixed_runs()}


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
  results["sparse apply"] = sparse_apply_runs()
  if sys.argv[1] == "tensorflow":
    results["lr"] = lr_runs()
    # Last: the policy is global.
    results["mixed_float16"] = mixed_precision_runs()
  json.dump(results, sys.stdout)


if __name__ == "__main__":
  main()
