"""What `tf_bridge.port` and `tf_bridge.adopt` cost against the catalog's
hand-written ports of the same algorithms, in one run (ratios, not seconds:
the machines are shared).

- JAX step: the port of a class, jitted, params and state donated, against
  the catalog's transform: an OptimizerV2 momentum SGD written as users
  write it vs `jaxopt_port.momentum_sgd`, tf_keras's legacy Adam vs
  `jaxopt_port.legacy.adam`, and TF Addons' RectifiedAdam vs
  `jaxopt_port.addons.rectified_adam` where TF Addons imports (run with
  `PYTHONPATH=$VIRTUAL_ENV/originals TF_USE_LEGACY_KERAS=1`, as the tests run it).
- Keras 3 step: `adopt(MomentumSGD)`'s `apply` against the catalog's
  bridged `tf_bridge.MomentumSGD` on the same variables.
- The one-time conversion: the first `init` of a port (trace and convert).

    python benchmarks/port.py            # 20 variables of 100k floats
    python benchmarks/port.py --smoke    # tiny shapes, 3 repeats

Each ratio is of the medians of interleaved repeats (200 in the full run:
a step is about 2 ms, and 20 repeats moved the median by 10 % from run to
run), with the ratio of the fastest repeats beside it.
"""

import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # pylint: disable=wrong-import-position
import jax.numpy as jnp  # pylint: disable=wrong-import-position
import keras  # pylint: disable=wrong-import-position
import numpy as np  # pylint: disable=wrong-import-position
import optax  # pylint: disable=wrong-import-position
import tensorflow as tf  # pylint: disable=wrong-import-position
import tf_keras  # pylint: disable=wrong-import-position

import jaxopt_port  # pylint: disable=wrong-import-position
import jaxopt_port.addons  # pylint: disable=wrong-import-position
import tf_bridge  # pylint: disable=wrong-import-position
from measure import time_interleaved  # pylint: disable=wrong-import-position


class MomentumSGD(tf_keras.optimizers.legacy.Optimizer):
  """m = b*m + (1-b)*g; var -= lr * m, as users write it."""

  def __init__(self, learning_rate=0.01, momentum=0.0, name="MomentumSGD",
               **kwargs):
    super().__init__(name, **kwargs)
    self._set_hyper("learning_rate", learning_rate)
    self._set_hyper("momentum", momentum)

  def _create_slots(self, var_list):
    for var in var_list:
      self.add_slot(var, "momentum")

  def _resource_apply_dense(self, grad, var, apply_state=None):
    lr = self._decayed_lr(var.dtype.base_dtype)
    b = self._get_hyper("momentum", var.dtype.base_dtype)
    m = self.get_slot(var, "momentum")
    m_t = m.assign(b * m + (1 - b) * grad)
    return var.assign_sub(lr * m_t)


def _rectified_adam_pair():
  try:
    import originals  # pylint: disable=import-outside-toplevel
  except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "tests"))
    import originals  # pylint: disable=import-outside-toplevel
  try:
    tfa = originals.import_tensorflow_addons()
  except ImportError:
    return None
  return (lambda: tfa.optimizers.RectifiedAdam(0.001),
          jaxopt_port.addons.rectified_adam(0.001))


def jax_runner(transform, params, grads):
  step = jax.jit(lambda p, s, g: _apply(transform, p, s, g),
                 donate_argnums=(0, 1))
  carried = [jax.tree.map(jnp.copy, params), transform.init(params)]

  def run():
    carried[:] = step(*carried, grads)
    jax.block_until_ready(carried)

  return run


def _apply(transform, params, state, grads):
  updates, state = transform.update(grads, state, params)
  return optax.apply_updates(params, updates), state


def keras_runner(optimizer, values, grads):
  variables = [keras.Variable(v) for v in values]
  tensors = [tf.constant(g) for g in grads]

  @tf.function(jit_compile=True)
  def step():
    optimizer.apply(tensors, variables)

  def run():
    step()
    variables[0].numpy()

  return run


def _ratios(times, measured, reference):
  """`measured`'s and `reference`'s median and fastest step times, and
  their ratios."""
  medians = {name: statistics.median(t) for name, t in times.items()}
  fastest = {name: min(t) for name, t in times.items()}
  return {f"{measured}_median_seconds": medians[measured],
          f"{reference}_median_seconds": medians[reference],
          f"{measured}_over_{reference}": (medians[measured]
                                            / medians[reference]),
          f"{measured}_over_{reference}_fastest": (fastest[measured]
                                                   / fastest[reference])}


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--smoke", action="store_true")
  parser.add_argument("--json", help="write the results there too")
  options = parser.parse_args()
  count, size, repeats = ((3, 100, 3) if options.smoke
                          else (20, 100_000, 200))
  rng = np.random.default_rng(0)
  values = [rng.standard_normal(size).astype(np.float32)
            for _ in range(count)]
  grads = [rng.standard_normal(size).astype(np.float32) for _ in range(count)]
  params = {f"w{i}": jnp.asarray(v) for i, v in enumerate(values)}
  jax_grads = {f"w{i}": jnp.asarray(g) for i, g in enumerate(grads)}

  pairs = {
      "momentum_sgd": (lambda: MomentumSGD(0.01, momentum=0.9),
                       jaxopt_port.momentum_sgd(0.01, momentum=0.9)),
      "legacy.adam": (lambda: tf_keras.optimizers.legacy.Adam(0.001),
                      jaxopt_port.legacy.adam(0.001)),
  }
  rectified = _rectified_adam_pair()
  if rectified is not None:
    pairs["addons.rectified_adam"] = rectified

  results = {"variables": count, "floats_per_variable": size,
             "repeats": repeats, "algorithms": {}}
  for algorithm, (make, catalog) in pairs.items():
    ported = tf_bridge.port(make())
    start = time.perf_counter()
    jax.block_until_ready(ported.init(params))
    conversion = time.perf_counter() - start
    times = time_interleaved({
        "port": jax_runner(ported, params, jax_grads),
        "catalog": jax_runner(catalog, params, jax_grads)}, repeats)
    results["algorithms"][algorithm] = {
        "conversion_seconds": conversion,
        **_ratios(times, "port", "catalog")}

  adopted = tf_bridge.adopt(MomentumSGD)
  times = time_interleaved({
      "adopted": keras_runner(adopted(0.01, momentum=0.9), values, grads),
      "catalog": keras_runner(tf_bridge.MomentumSGD(0.01, momentum=0.9),
                              values, grads)}, repeats)
  results["keras3_momentum_sgd"] = _ratios(times, "adopted", "catalog")

  print(f"{count} variables of {size} floats, {repeats} repeats")
  for algorithm, row in results["algorithms"].items():
    print(f"{algorithm:24s} port/catalog {row['port_over_catalog']:.2f}x "
          f"(fastest {row['port_over_catalog_fastest']:.2f}x)  "
          f"conversion {row['conversion_seconds']:.2f} s")
  row = results["keras3_momentum_sgd"]
  print(f"{'keras3 momentum_sgd':24s} adopted/bridged "
        f"{row['adopted_over_catalog']:.2f}x "
        f"(fastest {row['adopted_over_catalog_fastest']:.2f}x)")
  if options.json:
    with open(options.json, "w", encoding="utf-8") as f:
      json.dump(results, f, indent=1)


if __name__ == "__main__":
  main()
