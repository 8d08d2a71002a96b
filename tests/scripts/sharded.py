"""JAX state sharded like its params over 8 virtual CPU devices.

Run as a process of its own (the device count is fixed when JAX starts):
prints a JSON report per mesh axis type (`Auto` and `Explicit`), both
against one run on one device. For every port of `ports.SHARDED_CASES` (those
named on the command line, if any):
the largest difference from the same steps on one device, the state leaves
that mirror a parameter but are laid out otherwise, and, for Adafactor, the
factored moments laid out otherwise than their parameter's rows and
columns.
"""

import json
import os
import pathlib
import sys

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                           + " --xla_force_host_platform_device_count=8")
# Compiled afresh, not read from the suite's JAX compilation cache
# (tests/conftest.py): a run that read its multi-device programs from it
# stalled in a collective (a rendezvous of 8 CPU devices timed out).
os.environ.pop("JAX_COMPILATION_CACHE_DIR", None)
sys.path.insert(0, str(pathlib.Path(__file__).parents[1]))

# pylint: disable=wrong-import-position
import contextlib
import functools

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.sharding import AxisType, NamedSharding, PartitionSpec

from ports import SHARDED_CASES

STEPS = 3
SPECS = {"dense": {"kernel": PartitionSpec("data", "model"),
                   "bias": PartitionSpec("model")},
         "embedding": PartitionSpec("data", None),
         "scale": PartitionSpec()}
SHAPES = {"dense": {"kernel": (16, 8), "bias": (8,)}, "embedding": (32, 4),
          "scale": ()}
is_shape = lambda x: isinstance(x, tuple)  # pylint: disable=unnecessary-lambda-assignment
is_spec = lambda x: isinstance(x, PartitionSpec)  # pylint: disable=unnecessary-lambda-assignment


def problem():
  rng = np.random.default_rng(0)
  make = lambda shape: rng.standard_normal(shape).astype(np.float32)
  params = jax.tree.map(make, SHAPES, is_leaf=is_shape)
  grads = [jax.tree.map(make, SHAPES, is_leaf=is_shape)
           for _ in range(STEPS)]
  return params, grads


def run(transforms, params, grads, mesh):
  """For each transform, its params and state after `STEPS` steps from
  `init`, on `mesh` (params and gradients sharded by SPECS) or on one
  device. All transforms run in one jitted function (one compile for all:
  compiles for 8 devices are the cost here), their steps in a `lax.scan`
  (the step compiles once, not once per step). A transform that cannot be
  traced on the mesh gives its error instead."""
  if mesh is None:
    place = lambda tree: jax.device_put(tree, jax.devices()[0])
    scope = contextlib.nullcontext()
  else:
    shardings = jax.tree.map(lambda spec: NamedSharding(mesh, spec), SPECS,
                             is_leaf=is_spec)
    place = lambda tree: jax.device_put(tree, shardings)
    scope = jax.set_mesh(mesh)

  def train(transform, params, grads):
    def step(carry, g):
      params, state = carry
      updates, state = transform.update(g, state, params)
      return (optax.apply_updates(params, updates), state), None
    return jax.lax.scan(step, (params, transform.init(params)),
                        jax.tree.map(lambda *g: jnp.stack(g), *grads))[0]

  with scope:
    params, grads = place(params), [place(g) for g in grads]
    errors = {}
    for index, transform in enumerate(transforms):
      try:
        jax.eval_shape(functools.partial(train, transform), params, grads)
      except Exception as error:  # pylint: disable=broad-except
        errors[index] = f"{type(error).__name__}: {error}"[:2000]
    traceable = [t for i, t in enumerate(transforms) if i not in errors]
    results = iter(jax.jit(lambda params, grads: [
        train(t, params, grads) for t in traceable])(params, grads))
    return [errors[i] if i in errors else next(results)
            for i in range(len(transforms))]


def mirrors(state):
  """(state path, leaf, parameter path) of every state leaf that mirrors a
  parameter: a floating leaf whose path ends with the parameter's, of its
  shape (not Muon's and Adafactor's empty placeholders; not AdagradDecay's
  integer count per row, nor ConditionalGradient's `conditional_gradient`,
  TFA's never-written zero slot: their values never depend on the
  parameter's, so that on an `Auto` mesh XLA lays them out as it likes)."""
  params = {jax.tree_util.keystr(path): shape for path, shape in
            jax.tree_util.tree_flatten_with_path(SHAPES, is_leaf=is_shape)[0]}
  found = []
  for path, leaf in jax.tree_util.tree_flatten_with_path(state)[0]:
    name = jax.tree_util.keystr(path)
    for param, shape in params.items():
      if (name.endswith(param) and leaf.shape == shape
          and np.issubdtype(leaf.dtype, np.floating)
          and ".conditional_gradient" not in name):
        found.append((name, leaf, param))
  return found


def mismatched_shardings(state, mesh, trained=False):
  """Paths of the state leaves that mirror a parameter but are not laid out
  like it; of a `trained` state, those the steps wrote (not a slot left at
  zeros, unread: SGD's momentum at 0, whose value never depends on the
  parameter's, so that on an `Auto` mesh XLA lays it out as it likes)."""
  specs = {jax.tree_util.keystr(path): spec for path, spec in
           jax.tree_util.tree_flatten_with_path(SPECS, is_leaf=is_spec)[0]}
  return [name for name, leaf, param in mirrors(state)
          if not (trained and not np.any(np.asarray(leaf)))
          and not leaf.sharding.is_equivalent_to(
              NamedSharding(mesh, specs[param]), leaf.ndim)]


def mismatched_factored_moments(state, mesh):
  """Adafactor's row and column moments of the 2-D parameters whose layout
  is not their parameter's with the column (row) axis dropped."""
  slots = state.slots
  mismatched = []
  for field, dropped in (("row_moments", -1), ("column_moments", -2)):
    for path, leaf in jax.tree_util.tree_flatten_with_path(
        getattr(slots, field))[0]:
      spec = SPECS
      for entry in path:
        spec = spec[entry.key]
      if len(spec) != 2:
        continue
      axes = list(spec)
      del axes[dropped]
      expected = NamedSharding(mesh, PartitionSpec(*axes))
      if not leaf.sharding.is_equivalent_to(expected, leaf.ndim):
        mismatched.append(f"{field}{jax.tree_util.keystr(path)}")
  return mismatched


def largest_difference(a, b, rtol=0.0, atol=1.0):
  """The largest |a - b| / (atol + rtol * |b|) over two trees' leaves: the
  largest absolute difference by default, and at most 1 where they are
  equal within (rtol, atol)."""
  def difference(x, y):
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    return float(np.max(np.abs(x - y) / (atol + rtol * np.abs(y)),
                        initial=0.0))
  return max(difference(x, y)
             for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)))


def accumulation(mesh, params, grads):
  """Keras 3's gradient accumulation (its `lax.cond`) where the state is
  made outside `jit`, on the placed params or before they were placed, and
  the gradients come laid out like the params or whole on every device; and
  as optax's own sharding tests call a transform, `init` jitted and
  `update` not (its `cond` traced outside `jit`): per scenario, the largest difference from one device (in tolerances) and
  whether every state leaf keeps its layout across the steps (as a
  `lax.scan` carry must; on an `Auto` mesh XLA lays them out as it likes),
  or the error."""
  import jaxopt_port  # pylint: disable=import-outside-toplevel
  transform = jaxopt_port.adam(0.1, gradient_accumulation_steps=2)
  shardings = jax.tree.map(lambda spec: NamedSharding(mesh, spec), SPECS,
                           is_leaf=is_spec)
  whole = NamedSharding(mesh, PartitionSpec())

  def steps(params, state, all_grads, jitted=True):
    step = lambda p, s, g: transform.update(g, s, p)  # pylint: disable=unnecessary-lambda-assignment
    step = jax.jit(step) if jitted else step
    layouts = [leaf.sharding for leaf in jax.tree.leaves(state)]
    stable = True
    for g in all_grads:
      updates, state = step(params, state, g)
      params = optax.apply_updates(params, updates)
      stable &= all(a.sharding.is_equivalent_to(b, a.ndim) for a, b in zip(
          jax.tree.leaves(state), layouts))
    return (params, state), stable

  single, _ = steps(params, transform.init(params), grads)
  found = {}
  explicit = mesh.axis_types[0] == AxisType.Explicit
  for scenario, state_on_placed, grads_layout, in_jit in (
      ("gradients laid out like the params", True, shardings, False),
      ("gradients whole on every device", True, whole, False),
      ("state made before the params were placed", False, shardings, False),
      ("init jitted, update outside jit", True, shardings, True)):
    try:
      with jax.set_mesh(mesh) if explicit else contextlib.nullcontext():
        placed = jax.device_put(params, shardings)
        state = (jax.jit(transform.init) if in_jit else transform.init)(
            placed if state_on_placed else params)
        result, stable = steps(placed, state, [jax.device_put(g, grads_layout)
                                               for g in grads],
                               jitted=not in_jit)
      found[scenario] = {"tolerance_ratio": largest_difference(
          result, single, rtol=1e-5, atol=1e-6), "stable_layout": stable}
    except Exception as error:  # pylint: disable=broad-except
      found[scenario] = {"error": f"{type(error).__name__}: {error}"[:1500]}
  return found


def main():
  """A report per mesh axis type, against one single-device run."""
  params, grads = problem()
  named = sys.argv[1:]
  cases = [case for case in SHARDED_CASES if not named or case[0] in named]
  transforms = [factory(**kwargs) for _, factory, kwargs in cases]
  singles = run(transforms, params, grads, None)
  print(json.dumps({axis_type: mesh_report(axis_type, cases, transforms,
                                           singles, params, grads)
                    for axis_type in ("Auto", "Explicit")}))


def mesh_report(axis_type, cases, transforms, singles, params, grads):
  mesh = jax.make_mesh((4, 2), ("data", "model"),
                       axis_types=(AxisType[axis_type],) * 2)
  shardeds = run(transforms, params, grads, mesh)
  shardings = jax.tree.map(lambda spec: NamedSharding(mesh, spec), SPECS,
                           is_leaf=is_spec)
  report = {"devices": jax.device_count(), "cases": {},
            "accumulation": accumulation(mesh, params, grads)}
  for (name, _, _), transform, single, sharded in zip(
      cases, transforms, singles, shardeds):
    if isinstance(sharded, str):
      report["cases"][name] = {"error": sharded}
      continue
    sharded_params, sharded_state = sharded
    result = {
        "max_abs_diff": largest_difference(sharded, single),
        # The project's tolerance: <= 1 where equal within rtol 1e-5, atol 1e-6.
        "tolerance_ratio": largest_difference(sharded, single, rtol=1e-5,
                                              atol=1e-6),
        "mismatched_state_shardings": mismatched_shardings(
            sharded_state, mesh, trained=True),
        "params_sharded_alike": all(
            p.sharding.is_equivalent_to(s, p.ndim) for p, s in zip(
                jax.tree.leaves(sharded_params), jax.tree.leaves(shardings))),
        "param_shaped_state_leaves": len(mirrors(sharded_state)),
    }
    # `init` outside `jit`, on the placed params and on abstract ones
    # carrying their shardings: the state is born laid out like the params.
    with (jax.set_mesh(mesh) if axis_type == "Explicit"
          else contextlib.nullcontext()):
      placed = jax.device_put(params, shardings)
      eager = transform.init(placed)
      abstract = transform.init(jax.tree.map(
          lambda p: jax.ShapeDtypeStruct(p.shape, p.dtype,
                                         sharding=p.sharding), placed))
    result["mismatched_init_shardings"] = mismatched_shardings(eager, mesh)
    result["abstract_init_shardings_differ"] = [
        jax.tree_util.keystr(path) for (path, a), e in zip(
            jax.tree_util.tree_flatten_with_path(abstract)[0],
            jax.tree.leaves(eager))
        if not a.sharding.is_equivalent_to(e.sharding, a.ndim)]
    replicated = jax.device_put(sharded_state,
                                NamedSharding(mesh, PartitionSpec()))
    if name.startswith("adafactor"):
      result["mismatched_factored_moments"] = mismatched_factored_moments(
          sharded_state, mesh)
      if name == "adafactor":  # The check catches a replicated state.
        result["control: replicated state"] = mismatched_factored_moments(
            replicated, mesh)
    if name == "adam":
      result["control: replicated state"] = mismatched_shardings(replicated,
                                                                 mesh)
    report["cases"][name] = result
  return report


if __name__ == "__main__":
  main()
