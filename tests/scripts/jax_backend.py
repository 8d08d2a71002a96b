"""Keras 3 on its JAX backend: `model.fit` with bridged optimizers, and
row-sparse (BCOO) gradients.

Prints the final weights per optimizer as JSON, the sparse runs' differences
from native, and whether TensorFlow was imported. Run as its own process: KERAS_BACKEND is read when Keras starts.
"""

import json
import os
import sys

os.environ["KERAS_BACKEND"] = sys.argv[1] if len(sys.argv) > 1 else "jax"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # pylint: disable=wrong-import-position
import numpy as np  # pylint: disable=wrong-import-position

import tf_bridge  # pylint: disable=wrong-import-position

OPTIMIZERS = {
    "Adam": {"learning_rate": 0.05, "amsgrad": True},
    "RMSprop": {"learning_rate": 0.01, "momentum": 0.5, "centered": True,
                "clipnorm": 1.0},
    "AdamW": {"learning_rate": 0.05, "use_ema": True,
              "ema_overwrite_frequency": 3},
    # Its native ground truth is on this backend (docs/known-differences.md).
    "ScheduleFreeAdamW": {"learning_rate": 0.05, "warmup_steps": 2},
}


def train(make_optimizer, epochs=3):
  rng = np.random.default_rng(0)
  inputs = rng.standard_normal((64, 6)).astype(np.float32)
  targets = rng.standard_normal((64, 1)).astype(np.float32)
  model = keras.Sequential([keras.layers.Input((6,)),
                            keras.layers.Dense(8, activation="tanh"),
                            keras.layers.Dense(1)])
  model.set_weights([rng.standard_normal(w.shape).astype(np.float32) * 0.5
                     for w in model.get_weights()])
  model.compile(optimizer=make_optimizer(), loss="mse")
  if epochs:
    model.fit(inputs, targets, batch_size=16, epochs=epochs, shuffle=False,
              verbose=0)
  return [w.tolist() for w in model.get_weights()]


def row_sparse():
  """BCOO gradients over rows (Keras's JAX backend's sparse tensors) for a
  table, beside a dense gradient for a bias and none for a third variable:
  the bridge's eager `apply` and jitted `stateless_apply` (table and bias)
  against native's eager `apply` (native's jitted Adagrad cannot sum BCOO
  duplicates under jit)."""
  import jax  # pylint: disable=import-outside-toplevel
  import jax.numpy as jnp  # pylint: disable=import-outside-toplevel
  from jax.experimental import sparse  # pylint: disable=import-outside-toplevel
  rng = np.random.default_rng(0)
  initial = [rng.standard_normal(shape).astype(np.float32)
             for shape in ((6, 3), (3,), (2,))]
  steps = [[sparse.BCOO(
      (jnp.asarray(rng.standard_normal((3, 3)), jnp.float32),
       jnp.asarray(rng.choice(6, 3, replace=False)[:, None])), shape=(6, 3)),
            jnp.asarray(rng.standard_normal(3), jnp.float32), None]
           for _ in range(5)]
  report = {}
  for name, arguments in (("SGD", {}), ("Adagrad", {}),
                          ("SGD-momentum", {"momentum": 0.9}), ("Adam", {})):
    class_name = name.split("-")[0]
    finals = []
    for module in (keras.optimizers, tf_bridge):
      variables = [keras.Variable(value) for value in initial]
      optimizer = getattr(module, class_name)(0.1, **arguments)
      for grads in steps:
        optimizer.apply(grads, variables)
      finals.append([np.asarray(v.value) for v in variables])
      if module is tf_bridge:
        eager = optimizer
    jitted = getattr(tf_bridge, class_name)(0.1, **arguments)
    jitted.build([keras.Variable(value) for value in initial[:2]])
    apply = jax.jit(jitted.stateless_apply)
    state = [v.value for v in jitted.variables]
    values = [jnp.asarray(value) for value in initial[:2]]
    for grads in steps:
      values, state = apply(state, grads[:2], values)
    want, got = finals
    report[name] = {
        "sparse_rows": eager._fused.sparse_rows,  # pylint: disable=protected-access
        "sparse_steps": sum(1 for key in eager._fused._steps  # pylint: disable=protected-access
                            if any(key[2])),
        "eager": max(float(np.max(np.abs(g - w))) for g, w in zip(got, want)),
        "jitted": max(float(np.max(np.abs(np.asarray(v) - w)))
                      for v, w in zip(values, want)),
        "moved": min(float(np.max(np.abs(w - i)))
                     for w, i in zip(want[:2], initial)),
        "untouched": bool(np.array_equal(want[2], initial[2])
                          and np.array_equal(got[2], initial[2]))}
  return report


def stateless_loops():
  """Every Keras 3 class of the catalog, native and bridged, in the loop
  JAX users write: `jax.jit(optimizer.stateless_apply)` over explicit state
  (a matrix and a vector: Muon's two paths), 5 steps. The largest
  difference from native's final values, and how far native moved."""
  import jax  # pylint: disable=import-outside-toplevel
  from tf_bridge import catalog  # pylint: disable=import-outside-toplevel
  rng = np.random.default_rng(1)
  initial = [rng.standard_normal((4, 3)).astype(np.float32),
             rng.standard_normal((3,)).astype(np.float32)]
  grads = [[rng.standard_normal(v.shape).astype(np.float32) for v in initial]
           for _ in range(5)]
  report = {}
  for declaration in catalog.CATALOG:
    if declaration.generation != catalog.KERAS or not declaration.has_native:
      continue
    finals = []
    for optimizer_class in (declaration.native_class(),
                            getattr(tf_bridge, declaration.class_name)):
      # Adadelta's step is tiny at small rates (its paper rate is 1).
      rate = 1.0 if declaration.class_name == "Adadelta" else 0.05
      optimizer = optimizer_class(**{**declaration.required,
                                     "learning_rate": rate})
      optimizer.build([keras.Variable(v) for v in initial])
      apply = jax.jit(optimizer.stateless_apply)
      state = [v.value for v in optimizer.variables]
      values = [jax.numpy.asarray(v) for v in initial]
      for step in grads:
        values, state = apply(state, step, values)
      finals.append([np.asarray(v) for v in values])
    native, bridged = finals
    report[declaration.class_name] = {
        "difference": max(float(np.max(np.abs(b - n)))
                          for b, n in zip(bridged, native)),
        "moved": max(float(np.max(np.abs(n - i)))
                     for n, i in zip(native, initial))}
  return report


def refusal():
  """What a hyperparameter only TensorFlow evaluates (a callable, with
  TensorFlow imported beside Keras on JAX) gives at the first step."""
  import importlib  # pylint: disable=import-outside-toplevel
  importlib.import_module("tensorflow")
  optimizer = tf_bridge.Adam(0.1, beta_1=lambda: 0.9)
  try:
    optimizer.apply([keras.ops.ones(3)],
                    [keras.Variable(np.ones(3, "float32"))])
  except ValueError as error:
    return str(error)
  return None


def main():
  on_jax = keras.backend.backend() == "jax"
  report = {"backend": keras.backend.backend(),
            "weights": {
                name: train(lambda: getattr(tf_bridge, name)(**arguments))
                for name, arguments in OPTIMIZERS.items()},
            "initial_weights": train(keras.optimizers.SGD, epochs=0),
            "native_weights": {
                name: train(lambda: getattr(keras.optimizers, name)(
                    **arguments))
                for name, arguments in OPTIMIZERS.items()},
            "row_sparse": row_sparse() if on_jax else None,
            "stateless": stateless_loops() if on_jax else None,
            "tensorflow_imported": "tensorflow" in sys.modules,
            # Last: it imports TensorFlow.
            "refusal": refusal() if on_jax else None}
  json.dump(report, sys.stdout)


if __name__ == "__main__":
  main()
