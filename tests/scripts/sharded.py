"""JAX state sharded like its params over 8 virtual CPU devices.

Run as a process of its own (the device count is fixed when JAX starts):
prints a JSON report, per optimizer: the largest difference from the same
steps on one device, and the state leaves whose sharding differs from their
parameter's.
"""

import json
import os

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                           + " --xla_force_host_platform_device_count=8")

# pylint: disable=wrong-import-position
import jax
import jaxopt_port
import numpy as np
import optax
from jax.sharding import NamedSharding, PartitionSpec

STEPS = 5
MESH = jax.make_mesh((4, 2), ("data", "model"),
                     axis_types=(jax.sharding.AxisType.Auto,) * 2)
SPECS = {"dense": {"kernel": PartitionSpec("data", "model"),
                   "bias": PartitionSpec("model")},
         "embedding": PartitionSpec("data", None),
         "scale": PartitionSpec()}
SHAPES = {"dense": {"kernel": (16, 8), "bias": (8,)}, "embedding": (32, 4),
          "scale": ()}
OPTIMIZERS = {
    "adam": lambda: jaxopt_port.adam(0.01),
    "adamw": lambda: jaxopt_port.adamw(0.01, weight_decay=0.1),
    "legacy.rmsprop": lambda: jaxopt_port.legacy.rmsprop(0.01, momentum=0.9),
    "lamb": lambda: jaxopt_port.lamb(0.01),
    "nadam": lambda: jaxopt_port.nadam(0.01),
    "adam-ema-accumulation": lambda: jaxopt_port.adam(
        0.01, use_ema=True, gradient_accumulation_steps=2),
    "tf1.ftrl": lambda: jaxopt_port.tf1.ftrl(0.1),
    "addons.lookahead": lambda: jaxopt_port.addons.lookahead(
        jaxopt_port.addons.yogi(0.01)),
    "skip_nonfinite(sgd)": lambda: jaxopt_port.skip_nonfinite(
        jaxopt_port.sgd(0.01, momentum=0.9)),
}


def problem():
  rng = np.random.default_rng(0)
  make = lambda shape: rng.standard_normal(shape).astype(np.float32)
  params = jax.tree.map(make, SHAPES, is_leaf=lambda x: isinstance(x, tuple))
  grads = [jax.tree.map(make, SHAPES, is_leaf=lambda x: isinstance(x, tuple))
           for _ in range(STEPS)]
  return params, grads


def run(transform, params, grads, shardings):
  @jax.jit
  def step(params, state, grads):
    updates, state = transform.update(grads, state, params)
    return optax.apply_updates(params, updates), state
  place = (lambda tree: jax.device_put(tree, shardings)) if shardings else (
      lambda tree: jax.device_put(tree, jax.devices()[0]))
  params = place(params)
  state = jax.jit(transform.init)(params)
  for g in grads:
    params, state = step(params, state, place(g))
  return params, state


def mismatched_shardings(transform, state, shardings):
  """Paths of the state leaves that mirror a parameter but are not laid out
  like it."""
  mismatched = []
  paths = jax.tree_util.tree_map_with_path(
      lambda path, _: jax.tree_util.keystr(path), SHAPES,
      is_leaf=lambda x: isinstance(x, tuple))
  optax.tree_map_params(
      transform,
      lambda leaf, sharding, path: mismatched.append(path) if (
          not leaf.sharding.is_equivalent_to(sharding, leaf.ndim)) else None,
      state, shardings, paths, transform_non_params=lambda _: None)
  return mismatched


def main():
  shardings = jax.tree.map(lambda spec: NamedSharding(MESH, spec), SPECS,
                           is_leaf=lambda x: isinstance(x, PartitionSpec))
  params, grads = problem()
  report = {"devices": jax.device_count()}
  for name, make in OPTIMIZERS.items():
    transform = make()
    sharded_params, sharded_state = run(transform, params, grads, shardings)
    single_params, single_state = run(transform, params, grads, None)
    difference = max(
        float(np.max(np.abs(np.asarray(a) - np.asarray(b)), initial=0.0))
        for a, b in zip(jax.tree.leaves((sharded_params, sharded_state)),
                        jax.tree.leaves((single_params, single_state))))
    mismatched = mismatched_shardings(transform, sharded_state, shardings)
    params_sharded_alike = all(
        p.sharding.is_equivalent_to(s, p.ndim) for p, s in zip(
            jax.tree.leaves(sharded_params), jax.tree.leaves(shardings)))
    slots = len(jax.tree.leaves(optax.tree_map_params(
        transform, lambda leaf: 0, sharded_state,
        transform_non_params=lambda _: None)))
    report[name] = {"max_abs_diff": difference,
                    "mismatched_state_shardings": mismatched,
                    "param_shaped_state_leaves": slots,
                    "params_sharded_alike": params_sharded_alike}
    if name == "adam":  # The check catches a state laid out otherwise.
      replicated = jax.device_put(sharded_state,
                                  NamedSharding(MESH, PartitionSpec()))
      report["control: replicated adam state"] = mismatched_shardings(
          transform, replicated, shardings)
  print(json.dumps(report))


if __name__ == "__main__":
  main()
