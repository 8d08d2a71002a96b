"""The state's layout: where each leaf of a transform's state lives on the
Keras side for one variable list.

The transform sees the variables as a dict keyed by name (Keras 3
`variable.path`, legacy `variable.name`); its state is flattened into leaves,
each either a slot of one variable (found with `optax.tree_map_params`) or a
variable of its own (counts and the like), with native's names, dtypes,
initial values and creation order.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any, Callable, Sequence

import jax
import jax.extend
import jax.numpy as jnp
import numpy as np
import optax

from jaxopt_port._base import HALF_PRECISION
from jaxopt_port._tree import map_param_copies


@dataclasses.dataclass(frozen=True)
class StateLeaf:
  """Where one state leaf lives on the Keras side."""
  name: str  # Slot name ("momentum", "m", ...) or variable name.
  slot_of: int | None  # Index of the variable it mirrors, or None.
  # Initial value (shape and dtype only if from_params); a constant one is a
  # read-only broadcast of its `fill`, one element in memory.
  value: np.ndarray
  # Its initial value depends on the variables' values (Lookahead's slow
  # weights): `FusedTransform.initial_values_from` computes it.
  from_params: bool = False
  # The step count, which Keras keeps as `iterations`: fed to every step
  # from there, not stored (so the variables are native's). A wrapper's
  # count and its inner optimizer's are both this one, as TF Addons'
  # wrappers share their `iterations` with the inner optimizer.
  derived: bool = False
  # How many wrappers' `inner_state` fields hold it (a TF Addons wrapper's
  # inner optimizer's leaves are one deeper than the wrapper's own).
  depth: int = 0
  # A slot the step passes on as it got it, unread (SGD's momentum at a
  # momentum of 0, for which native keeps no variable): fed its `fill`.
  unread: bool = False

  @property
  def fill(self) -> Any:
    """The one value every element of `value` holds if `value` is a
    broadcast of it (a Keras initializer can fill the variable), else
    None."""
    return _fill_of(self.value)

  @property
  def stored(self) -> bool:
    """Kept in a Keras variable: not the derived count, not an empty or
    unread leaf (Muon's unused velocity of a matrix, SGD's momentum at 0,
    which native does not create)."""
    return not self.derived and self.value.size > 0 and not self.unread

  def is_slot_of(self, variables: Sequence[Any]) -> bool:
    """A Keras slot: it mirrors a variable with that variable's dtype and
    shape (factored moments are plain optimizer variables instead)."""
    if self.slot_of is None:
      return False
    variable = variables[self.slot_of]
    return (numpy_dtype(variable.dtype) == self.value.dtype
            and tuple(variable.shape) == self.value.shape)


@dataclasses.dataclass(frozen=True)
class StateLayout:
  """A transform's state over one variable list (`of`): the variables' keys
  and specs, the state's tree structure and its leaves in the tree's leaf
  order, with the dtypes the transform computes them in and the order the
  compiled step takes the stored ones in."""
  keys: list[str]
  param_specs: dict[str, jax.ShapeDtypeStruct]
  treedef: Any
  leaves: list[StateLeaf]
  computed_dtypes: list[np.dtype]
  # The stored leaves' order in the compiled step: by their tree paths with
  # each variable's key replaced by its position, so the same step under
  # other variable names takes them in the same order (instances share it).
  stored_order: list[int]

  @classmethod
  def of(cls, transform: optax.GradientTransformation, keys: Sequence[str],
         specs: Sequence[Any]) -> StateLayout:
    """The layout of `transform`'s state over variables of these `keys` and
    `specs` (anything with `.shape` and a numpy-compatible `.dtype`). The
    variables' values are not read: a model built inside the `tf.function`
    of its first step, or in a TF1 graph, has none yet. Leaves whose initial
    value depends on them are marked `from_params`."""
    keys = list(keys)
    param_specs = {key: spec_of(spec) for key, spec in zip(keys, specs)}
    with precision(_has_float64(param_specs)):
      # The params dict in the variables' order, as the step passes it.
      closed, shape_tree = jax.make_jaxpr(
          lambda *params: transform.init(dict(zip(keys, params))),
          return_shape=True)(*param_specs.values())
      state = _initial_values(closed, shape_tree)
    indices = dict(zip(keys, range(len(keys))))
    not_a_slot = -1  # (None would vanish: it is an empty subtree.)
    roles = map_param_copies(transform, state, indices, not_a_slot)
    paths_and_leaves, treedef = jax.tree_util.tree_flatten_with_path(state)
    follows = _follows_params(transform.init, param_specs, keys,
                              len(paths_and_leaves))
    with precision(_has_float64(param_specs)):
      unread = unread_leaves(transform, param_specs, shape_tree)
    seen: dict[tuple[str, Any], int] = {}
    leaves = []
    for (path, leaf), role, from_params, follows_params, passed_on in zip(
        paths_and_leaves, jax.tree.leaves(roles), _depends_on_params(closed),
        follows, unread):
      role = None if role == not_a_slot else role
      name = _slot_name(path, keys)
      # A wrapper's inner slots and its own can share a name: Keras (HDF5
      # above all) needs distinct names.
      count = seen.get((name, role), 0)
      seen[(name, role)] = count + 1
      leaf = np.asarray(leaf)
      if role is not None:
        leaf = _in_native_dtype(leaf, param_specs[keys[role]])
      elif follows_params:
        leaf = _in_native_dtype(leaf, param_specs[keys[0]])
      derived = (name, role, leaf.shape) == ("iterations", None, ())
      depth = sum(isinstance(entry, jax.tree_util.GetAttrKey)
                  and entry.name == "inner_state" for entry in path)
      # An unread slot mirroring its variable (not Adafactor's placeholder
      # of a vector's factored moment, which native keeps).
      unused_slot = (passed_on and not from_params and role is not None
                     and _fill_of(leaf) is not None
                     and leaf.shape == param_specs[keys[role]].shape
                     and leaf.dtype == param_specs[keys[role]].dtype)
      leaves.append(StateLeaf(
          name if count == 0 else f"{name}_{count}", role, leaf, from_params,
          derived, depth, unused_slot))
    positions = {key: index for index, key in enumerate(keys)}
    stored_paths = [_positional_path(path, positions)
                    for (path, _), leaf in zip(paths_and_leaves, leaves)
                    if leaf.stored]
    return cls(keys, param_specs, treedef, leaves,
               [np.asarray(leaf).dtype for _, leaf in paths_and_leaves],
               sorted(range(len(stored_paths)), key=stored_paths.__getitem__))

  @property
  def float64(self) -> bool:
    """A variable is float64: the step is traced in JAX's 64-bit mode."""
    return _has_float64(self.param_specs)

  @property
  def roles(self) -> list[int | None]:
    """Each leaf's variable index (`StateLeaf.slot_of`)."""
    return [leaf.slot_of for leaf in self.leaves]

  def full_leaves(self, stored: Sequence[Any], iterations: Any,
                  skip_nonfinite: bool) -> list[Any]:
    """The state's leaves from the stored ones and Keras's `iterations` (the
    transform's count; less the skipped steps under `skip_nonfinite`, which
    Keras counts and the transform does not), in the transform's dtypes."""
    stored = iter(stored)
    leaves = [None if leaf.derived
              else next(stored).astype(dtype) if leaf.stored
              else jnp.full(leaf.value.shape, leaf.fill, dtype) if leaf.unread
              else jnp.asarray(leaf.value, dtype)
              for leaf, dtype in zip(self.leaves, self.computed_dtypes)]
    skipped = [value for value, leaf in zip(leaves, self.leaves)
               if leaf.name == "skipped_steps"] if skip_nonfinite else []
    count = jnp.asarray(iterations).astype(jnp.int32)
    return [(count - skipped[0] if skipped else count) if leaf.derived
            else value for value, leaf in zip(leaves, self.leaves)]

  def stored_leaves(self, leaves: Sequence[Any]) -> list[Any]:
    """The leaves Keras keeps, in the dtypes it keeps them in."""
    return [value.astype(leaf.value.dtype)
            for value, leaf in zip(leaves, self.leaves) if leaf.stored]

  def averages(self, variables: Sequence[Any], state_variables: Sequence[Any]
               ) -> dict[Any, Any]:
    """id(variable) -> its `average` state variable (MovingAverage, SWA);
    `state_variables` are the stored leaves' variables, in leaf order."""
    stored = [leaf for leaf in self.leaves if leaf.stored]
    return {id(variables[leaf.slot_of]): state
            for leaf, state in zip(stored, state_variables)
            if leaf.name == "average" and leaf.slot_of is not None}


def unread_leaves(transform: optax.GradientTransformation,
                  param_specs: dict[str, jax.ShapeDtypeStruct],
                  state_shapes: Any) -> list[bool]:
  """For each leaf of `transform`'s state (of these shapes) over params of
  `param_specs`, whether its `update` returns it as it got it, reading it
  nowhere: a slot its arguments leave unused (SGD's momentum at 0, see
  `jaxopt_port`'s `by_zero`). Traced, nothing runs."""
  keys, specs = list(param_specs), list(param_specs.values())

  def new_state(params, grads, state):
    return transform.update(dict(zip(keys, grads)), state,
                            dict(zip(keys, params)))[1]

  jaxpr = jax.make_jaxpr(new_state)(specs, specs, state_shapes).jaxpr
  state_inputs = jaxpr.invars[2 * len(specs):]
  read = {var for equation in jaxpr.eqns for var in equation.invars
          if not isinstance(var, jax.extend.core.Literal)}
  outputs = [id(var) for var in jaxpr.outvars]
  return [var not in read and outputs.count(id(var)) == 1 and out is var
          for var, out in zip(state_inputs, jaxpr.outvars)]


def kept_layout(transform: optax.GradientTransformation,
                param_specs: dict[str, jax.ShapeDtypeStruct]) -> Any:
  """What decides the variables Keras keeps for `transform`'s state over
  params of `param_specs`: its tree structure and which slots the step
  leaves unread."""
  layout = StateLayout.of(transform, list(param_specs),
                          list(param_specs.values()))
  return layout.treedef, tuple(leaf.unread for leaf in layout.leaves)


def creation_order(leaves: Sequence[StateLeaf], slots_by_variable: bool,
                   shared_first: bool,
                   slot_groups: Sequence[Sequence[str]] = ()) -> list[int]:
  """The order to create the stored leaves' variables in, native's: the
  slots of one variable after another (`slots_by_variable`, Keras 3's
  `add_optimizer_variables`; with `slot_groups`, the slot names of each of
  its calls, one group after another) or each slot for every variable in
  turn (OptimizerV2's `_create_slots` loops), variables in their list's
  order (the state's dicts hold them sorted by path); the leaves of no
  variable (Nadam's momentum cache) before the slots if `shared_first`,
  else after."""
  first: dict[str, int] = {}
  for index, leaf in enumerate(leaves):
    first.setdefault(leaf.name, index)
  group = {name: position for position, names in enumerate(slot_groups)
           for name in names}

  def key(index):
    leaf = leaves[index]
    if leaf.slot_of is None:
      return (0 if shared_first else 2, index)
    if slots_by_variable:
      return (1, group.get(leaf.name, 0), leaf.slot_of, first[leaf.name])
    return (1, 0, first[leaf.name], leaf.slot_of)

  return sorted((i for i, leaf in enumerate(leaves) if leaf.stored), key=key)


def unique_keys(names: Sequence[str]) -> list[str]:
  """Variable names as dict keys, made unique by a `#n` suffix if needed."""
  seen: dict[str, int] = {}
  keys = []
  for name in names:
    count = seen.get(name, 0)
    seen[name] = count + 1
    keys.append(name if count == 0 else f"{name}#{count}")
  return keys


def spec_of(value: Any) -> jax.ShapeDtypeStruct:
  """The shape and dtype of a variable or tensor (anything with `.shape`
  and a numpy-compatible `.dtype`), for tracing."""
  return jax.ShapeDtypeStruct(tuple(value.shape), numpy_dtype(value.dtype))


def numpy_dtype(dtype: Any) -> np.dtype:
  """A numpy dtype from a TensorFlow, Keras (string) or numpy one."""
  return np.dtype(getattr(dtype, "as_numpy_dtype", dtype))


def precision(float64: bool) -> Any:
  """JAX's 64-bit mode for a float64 variable list, else nothing: JAX would
  truncate float64 to float32 otherwise; the mode is not turned on for other
  variable lists, whose numbers it would not change but whose traces it
  would."""
  return jax.enable_x64(True) if float64 else contextlib.nullcontext()


def _has_float64(specs: dict[str, jax.ShapeDtypeStruct]) -> bool:
  return any(spec.dtype in (np.float64, np.complex128)
             for spec in specs.values())


def _positional_path(path: tuple[Any, ...], positions: dict[str, int]
                     ) -> tuple[tuple[str, Any], ...]:
  """A state leaf's tree path with each variable's key replaced by the
  variable's position: the same leaf of the same step under other variable
  names."""
  return tuple(
      ("variable", positions[entry.key])
      if isinstance(entry, jax.tree_util.DictKey) and entry.key in positions
      else ("entry", str(entry)) for entry in path)


def _in_native_dtype(leaf: np.ndarray, param: Any) -> np.ndarray:
  """A state leaf as Keras keeps it: the float32 moment (or factored moment,
  or per-layer moment) of a float16 or bfloat16 variable is kept in the
  variable's dtype, as native's (the transform still computes it in
  float32, rounded where native rounds)."""
  if param.dtype in HALF_PRECISION and leaf.dtype == np.float32:
    fill = _fill_of(leaf)
    if fill is not None:  # A fill stays one.
      return np.broadcast_to(fill.astype(param.dtype), leaf.shape)
    return leaf.astype(param.dtype)
  return leaf


def _fill_of(value: np.ndarray) -> Any:
  """The number a broadcast array holds (every stride zero: one element in
  memory, `_initial_values`' constant leaves), else None."""
  if value.size and not any(value.strides):
    return value.flat[0]
  return None


def _initial_values(closed: Any, shape_tree: Any) -> Any:
  """The values of `init` on zero params (`closed`: its jaxpr; `shape_tree`:
  its output's shapes) as a tree of numpy arrays. A leaf that `init` makes by
  broadcasting one number (`jnp.zeros_like`, `jnp.full`: a slot starting at
  zeros, Adagrad's accumulator) is read from the jaxpr, nothing computed, and
  is a read-only broadcast of that number: a large model's state is not
  materialized in JAX and copied to numpy before TensorFlow makes its
  variables. The other leaves are computed by one compiled program (run
  eagerly, each op of each new shape would compile one: about a second for
  a ResNet's variables)."""
  fills = _broadcast_numbers(closed.jaxpr, closed.consts, [None] * len(
      closed.jaxpr.invars))
  computed = [index for index, fill in enumerate(fills) if fill is None]
  if computed:
    zeros = [np.zeros(var.aval.shape, var.aval.dtype)
             for var in closed.jaxpr.invars]
    run = jax.extend.core.jaxpr_as_fun(closed)
    outputs = jax.jit(lambda *args: [run(*args)[index]
                                     for index in computed])(*zeros)
    values = dict(zip(computed, outputs))
  leaves = [np.asarray(values[index]) if fill is None
            else np.broadcast_to(fill.astype(var.aval.dtype), var.aval.shape)
            for index, (fill, var) in enumerate(zip(fills,
                                                    closed.jaxpr.outvars))]
  return jax.tree.unflatten(jax.tree.structure(shape_tree), leaves)


# Primitives that keep an operand's one number: a broadcast of a number is
# still one.
_SAME_NUMBER = ("broadcast_in_dim", "copy", "convert_element_type", "reshape")


def _broadcast_numbers(jaxpr: Any, consts: Sequence[Any],
                       inputs: Sequence[Any]) -> list[np.ndarray | None]:
  """For each output of `jaxpr`, the number every element holds if it is a
  literal or constant number through broadcasts, copies, reshapes and
  dtype conversions (inside nested `jit`s too), else None; `inputs` the
  same for its inputs."""
  known = dict(zip(jaxpr.invars, inputs))
  known.update((var, np.asarray(value)) for var, value in zip(
      jaxpr.constvars, consts) if np.size(value) == 1)

  def number(var):
    if isinstance(var, jax.extend.core.Literal):
      return np.asarray(var.val, var.aval.dtype)
    return known.get(var)

  for equation in jaxpr.eqns:
    name = equation.primitive.name
    if name in _SAME_NUMBER:
      value = number(equation.invars[0])
      if value is not None and value.size == 1:
        out = equation.outvars[0]
        known[out] = value.reshape(()).astype(out.aval.dtype)
    elif name in ("pjit", "jit"):
      inner = equation.params["jaxpr"]
      known.update(zip(equation.outvars, _broadcast_numbers(
          inner.jaxpr, inner.consts,
          [number(var) for var in equation.invars])))
  return [number(var) for var in jaxpr.outvars]


def _follows_params(init: Callable[[Any], Any], specs: dict[str, Any],
                    keys: Sequence[str], count: int) -> list[bool]:
  """For each of the `count` leaves of `init(specs)`, whether its dtype
  follows the variables' (float64 for float64 variables): a leaf of no
  variable that does, Nadam's schedule product, Keras keeps in the first
  variable's dtype (`var_list[0].dtype`). Only asked when that variable is
  half precision (otherwise the port's dtype is already Keras's)."""
  if not keys or specs[keys[0]].dtype not in HALF_PRECISION:
    return [False] * count
  with jax.enable_x64(True):
    as_float64 = jax.eval_shape(init, {
        key: jax.ShapeDtypeStruct(spec.shape, jnp.float64)
        for key, spec in specs.items()})
  return [leaf.dtype == np.float64 for leaf in jax.tree.leaves(as_float64)]


def _depends_on_params(closed: Any) -> list[bool]:
  """For each output of `closed` (the jaxpr of `init(params)`), whether its
  value depends on the params' values (not only on their shapes): an output
  reached from an input through any equation (one with a sub-jaxpr counts
  as using all its inputs)."""
  jaxpr = closed.jaxpr
  reached = set(jaxpr.invars)

  def is_reached(var):
    return not isinstance(var, jax.extend.core.Literal) and var in reached

  for equation in jaxpr.eqns:
    if any(is_reached(var) for var in equation.invars):
      reached.update(equation.outvars)
  return [is_reached(var) for var in jaxpr.outvars]


def _slot_name(path: tuple[Any, ...], keys: Sequence[str]) -> str:
  """A readable slot name from a state path: `momentum`, `m`, `1_count`."""
  parts = []
  for entry in path:
    if isinstance(entry, jax.tree_util.DictKey) and entry.key in keys:
      continue
    if isinstance(entry, jax.tree_util.GetAttrKey):
      parts.append(entry.name)
    elif isinstance(entry, jax.tree_util.DictKey):
      parts.append(str(entry.key))
    elif isinstance(entry, jax.tree_util.SequenceKey):
      parts.append(str(entry.idx))
    elif isinstance(entry, jax.tree_util.FlattenedIndexKey):
      parts.append(str(entry.key))
  parts = [part for part in parts if part not in ("slots", "inner_state")]
  return "_".join(parts) or "state"
