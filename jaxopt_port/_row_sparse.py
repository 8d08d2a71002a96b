"""Row-sparse gradients: the rows of an embedding table a batch touched.

A lookup `table[ids]` has a gradient that is zero on every row the batch did
not touch. `RowSparse(indices, values, num_rows)` holds only the touched rows
(what TensorFlow calls `tf.IndexedSlices`): `values[i]` is the gradient of row
`indices[i]`, and repeated indices add up. The ports take it as a gradient
leaf and do what their native Keras class does with `tf.IndexedSlices`:

- `ROWS`: the native sparse kernel touches only the indexed rows (legacy SGD,
  Adagrad, Ftrl, TF1's kernels, TF Addons' LazyAdam, ...), or the update is
  exactly zero on the other rows. The touched rows of the parameter and of
  every state leaf that mirrors it are gathered, the transform runs on them,
  and they are scattered back: the step costs what the touched rows cost.
- `PARAMS`: the slots move on every row but the parameter only on touched
  rows (legacy Nadam, TF Addons' RectifiedAdam and Yogi): a dense step whose
  update keeps the touched rows only.
- `DENSE`: the gradient is densified (Keras 3's Adam decays every row).
- `TOUCHED`: the gradient is densified and the update step is told which
  rows were touched (`touched_rows`, a boolean per row), where the native
  sparse kernel treats them apart inside an otherwise dense step (TF
  Addons' AdamW decays only the touched rows; AdaBelief's second moment
  grows only there).
- `REFUSED`: the native class raises NotImplementedError on a sparse
  gradient (Model Garden's LARS); so does the transform.

Two more modes are declared by transforms that take a `RowSparse` leaf as
it is and are traced for its number of entries (`tf_bridge.port`'s, which
runs a TensorFlow class's own sparse hook; `declare_sparse_mode`): a host
hands them gradients of a number of entries known when its step is traced,
or of a symbolic number (`jax.export`'s shape polymorphism), which such a
transform refuses with `UnknownEntriesError` where it cannot take one.

- `SUMMED_ENTRIES`: the transform sums repeated indices itself first
  (OptimizerV2's and TF1's `_resource_apply_sparse` reached through their
  base's `_resource_apply_sparse_duplicate_indices`, tf_keras 2.11+'s
  `update_step`), so their sum, with entries past the table (padding)
  added, is the same gradient to it.
- `ENTRIES`: the transform takes repeated indices as they come.

The update of a row-sparse leaf is a `RowSparse` too: apply it with
`jaxopt_port.apply_updates`, which adds the rows in place under `jit` with
donated params.
"""

from __future__ import annotations

import dataclasses
import weakref
from typing import Any

import jax
import jax.numpy as jnp
import optax

from jaxopt_port import _checks
from jaxopt_port._tree import map_param_copies

ROWS = "rows"
PARAMS = "params"
DENSE = "dense"
TOUCHED = "touched"
REFUSED = "refused"
MODES = (ROWS, PARAMS, DENSE, TOUCHED, REFUSED)
# The native words for REFUSED (Model Garden's LARS).
REFUSED_MESSAGE = "Applying sparse gradients is not implemented."
# The modes a `RowSparse` gradient reaches the transform in (the others
# densify it first).
SPARSE_INPUT_MODES = (ROWS, PARAMS, TOUCHED)
ENTRIES = "entries"
SUMMED_ENTRIES = "summed_entries"
# The modes of transforms traced per number of entries (`declare_sparse_mode`).
STATIC_LENGTH_MODES = (ENTRIES, SUMMED_ENTRIES)


class UnknownEntriesError(TypeError):
  """A transform traced per number of entries cannot take a symbolic one
  (a ported class's sparse hook whose JAX form needs it as a number: a
  shape computed from its value, a Python number from the entries' shape);
  the bridge then pads the gradient to the table's rows or densifies it."""


@dataclasses.dataclass(frozen=True)
class RowSparse:
  """A gradient (or update) that is zero outside the rows `indices`.

  Attributes:
    indices: `(n,)` integer row numbers; they may repeat (the values add up).
      Rows outside `[0, num_rows)` are padding and are ignored.
    values: `(n, *row_shape)`, the gradient of each listed row.
    num_rows: The number of rows of the dense array (a static int).
  """
  indices: jax.Array
  values: jax.Array
  num_rows: int

  @property
  def shape(self) -> tuple[int, ...]:
    """The dense array's shape."""
    return (self.num_rows, *self.values.shape[1:])

  @property
  def dtype(self) -> Any:
    return self.values.dtype

  def todense(self) -> jax.Array:
    """The dense array, repeated rows added, padding rows dropped."""
    return jnp.zeros(self.shape, self.dtype).at[self._valid_indices()].add(
        self.values, mode="drop")

  @classmethod
  def from_lookup(cls, ids: jax.Array, row_gradients: jax.Array,
                  num_rows: int) -> "RowSparse":
    """The gradient of a table from the gradient of `table[ids]`.

    `ids` of any shape `S` (a batch of token ids), `row_gradients` of shape
    `S + row_shape` (the gradient with respect to the looked-up rows, e.g.
    `jax.grad` of the loss with respect to the embeddings), `num_rows` the
    table's rows.
    """
    ids = jnp.asarray(ids)
    row_gradients = jnp.asarray(row_gradients)
    if row_gradients.shape[:ids.ndim] != ids.shape:
      raise ValueError(
          f"row_gradients has shape {row_gradients.shape}; it must start "
          f"with the shape of ids, {ids.shape}.")
    row_shape = row_gradients.shape[ids.ndim:]
    return cls(ids.reshape(-1),
               row_gradients.reshape((ids.size, *row_shape)), num_rows)

  def _valid_indices(self) -> jax.Array:
    """The indices, with every row outside the table moved to `num_rows`
    (JAX would wrap a negative index around)."""
    indices = self.indices
    inside = (indices >= 0) & (indices < self.num_rows)
    return jnp.where(inside, indices, self.num_rows)


jax.tree_util.register_dataclass(RowSparse, data_fields=["indices", "values"],
                                 meta_fields=["num_rows"])


def is_row_sparse(value: Any) -> bool:
  return isinstance(value, RowSparse)


def unique_rows(grad: RowSparse) -> tuple[jax.Array, jax.Array]:
  """Each touched row once, its values summed: `(rows, values)` of the same
  length as `grad.indices`, rows ascending, the ones past the distinct rows
  set to `num_rows` (padding: gathers read a real row, scatters drop it).
  Static shapes, so it runs under `jit`. (Sorting the indices alone and
  finding each value's row by binary search is 3x faster on CPU than
  sorting the values with them.)"""
  indices = grad._valid_indices()  # pylint: disable=protected-access
  ordered = jnp.sort(indices)
  previous = jnp.concatenate([jnp.full((1,), -1, ordered.dtype),
                              ordered])[:-1]
  segment = jnp.cumsum(ordered != previous) - 1
  rows = jnp.full_like(ordered, grad.num_rows).at[segment].set(ordered)
  values = jnp.zeros_like(grad.values).at[_positions(rows, indices)].add(
      grad.values)
  return rows, values


def _positions(ordered: jax.Array, values: jax.Array) -> jax.Array:
  """`jnp.searchsorted(ordered, values)` (leftmost); with a symbolic length
  (the bridge's sparse gradients have one), which searchsorted cannot
  trace, a loop of vectorized halvings."""
  if isinstance(ordered.shape[0], int):
    return jnp.searchsorted(ordered, values).astype(values.dtype)
  low = jnp.zeros_like(values)
  high = jnp.full_like(values, ordered.shape[0])

  def halve(bounds):
    low, high = bounds
    middle = (low + high) // 2
    right = jnp.take(ordered, middle, mode="clip") < values
    return (jnp.where(right, middle + 1, low), jnp.where(right, high, middle))

  low, _ = jax.lax.while_loop(lambda bounds: jnp.any(bounds[0] < bounds[1]),
                              halve, (low, high))
  return low


def take_rows(leaf: jax.Array, rows: jax.Array) -> jax.Array:
  """`leaf[rows]`, padding rows reading the last row (a real value, so no
  NaN from an empty slot reaches a reduction)."""
  return jnp.take(leaf, rows, axis=0, mode="clip")


def put_rows(leaf: jax.Array, rows: jax.Array, values: jax.Array
             ) -> jax.Array:
  """`leaf` with `rows` set to `values`, padding rows dropped."""
  return leaf.at[rows].set(values.astype(leaf.dtype), mode="drop")


def apply_updates(params: optax.Params, updates: optax.Updates
                  ) -> optax.Params:
  """`optax.apply_updates`, where a `RowSparse` update adds its rows to the
  parameter (in place under `jit` with donated params)."""

  def apply(param, update):
    if update is None:
      return param
    if is_row_sparse(update):
      return param.at[update._valid_indices()].add(  # pylint: disable=protected-access
          update.values.astype(param.dtype), mode="drop")
    return jnp.asarray(param + update).astype(jnp.asarray(param).dtype)

  return jax.tree.map(apply, params, updates,
                      is_leaf=lambda x: x is None or is_row_sparse(x))


# By update function; weakly, as a host makes a transform per traced step.
_MODES: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def sparse_mode(transform: optax.GradientTransformation) -> str | None:
  """The mode `transform` takes `RowSparse` gradients with (`ROWS`,
  `PARAMS`, `DENSE`, `TOUCHED`, `REFUSED`, `ENTRIES`, `SUMMED_ENTRIES`), or
  None if it does not take them."""
  try:
    return _MODES.get(transform.update)
  except TypeError:  # An update no weak reference takes: none declared it.
    return None


def declare_sparse_mode(transform: optax.GradientTransformation,
                        mode: str | None) -> optax.GradientTransformation:
  """`transform` itself, declared to take `RowSparse` gradients as `mode`
  says (`ENTRIES` or `SUMMED_ENTRIES`: the transform handles them itself;
  None declares nothing). A wrapper that hands its gradients on unchanged
  declares its inner transform's mode."""
  if mode is not None:
    if mode not in STATIC_LENGTH_MODES:
      raise ValueError(
          f"mode must be one of {STATIC_LENGTH_MODES}, got {mode!r} (the "
          "other modes come with with_row_sparse_gradients).")
    _MODES[transform.update] = mode
  return transform


def with_row_sparse_gradients(transform: optax.GradientTransformation,
                              mode: str
                              ) -> optax.GradientTransformationExtraArgs:
  """`transform`, taking `RowSparse` gradient leaves as `mode` says (see the
  module's docstring); other gradients go to `transform` unchanged, and the
  state is `transform`'s.

  Args:
    transform: An optax transformation.
    mode: `"rows"` (only the touched rows of the parameter and of the state
      leaves that mirror it are read and written: right when the native
      optimizer is lazy or the update is zero on untouched rows),
      `"params"` (dense step, the parameter moves on touched rows only),
      `"dense"` (densify), `"touched"` (densify, and pass the update
      `touched_rows`: per leaf a boolean of shape `(num_rows, 1, ...)`, or
      True for a dense gradient) or `"refused"` (raise NotImplementedError).
  """
  if mode not in MODES:
    raise ValueError(f"mode must be one of {MODES}, got {mode!r}.")
  transform = optax.with_extra_args_support(transform)

  def update(grads, state, params=None, **extra_args):
    leaves, treedef = jax.tree.flatten(
        grads, is_leaf=lambda x: x is None or is_row_sparse(x))
    sparse = [is_row_sparse(leaf) for leaf in leaves]
    if not any(sparse):
      return transform.update(grads, state, params, **extra_args)
    _check_row_sparse(leaves, treedef, params)
    if mode == REFUSED:
      path = jax.tree_util.keystr(jax.tree_util.tree_flatten_with_path(
          grads, is_leaf=lambda x: x is None or is_row_sparse(x))[0][
              sparse.index(True)][0])
      raise NotImplementedError(f"{REFUSED_MESSAGE} (The gradient at {path} "
                                "is a RowSparse one.)")
    if mode != ROWS:
      dense = treedef.unflatten([leaf.todense() if is_sparse else leaf
                                 for leaf, is_sparse in zip(leaves, sparse)])
      if mode == TOUCHED:
        extra_args = {**extra_args, "touched_rows": treedef.unflatten([
            _touched(leaf) if is_sparse else True
            for leaf, is_sparse in zip(leaves, sparse)])}
      updates, new_state = transform.update(dense, state, params,
                                            **extra_args)
      if mode in (DENSE, TOUCHED):
        return updates, new_state
      return _touched_updates(updates, leaves, treedef), new_state
    return _rows_update(transform, leaves, treedef, state, params,
                        extra_args)

  wrapped = optax.GradientTransformationExtraArgs(transform.init, update)
  _MODES[wrapped.update] = mode
  return wrapped


def _check_row_sparse(leaves: list[Any], treedef: Any, params: Any) -> None:
  """Refuses malformed `RowSparse` leaves and those of another shape than
  their parameter, naming the tree path."""
  paths = [jax.tree_util.keystr(path) for path, _ in
           jax.tree_util.tree_flatten_with_path(
               treedef.unflatten(leaves),
               is_leaf=lambda x: x is None or is_row_sparse(x))[0]]
  param_leaves = ([None] * len(leaves) if params is None
                  else treedef.flatten_up_to(params))
  for path, leaf, param in zip(paths, leaves, param_leaves):
    if not is_row_sparse(leaf):
      continue
    if jnp.ndim(leaf.indices) != 1 or (
        jnp.shape(leaf.values)[:1] != jnp.shape(leaf.indices)):
      raise ValueError(
          f"The RowSparse gradient at {path} has indices of shape "
          f"{jnp.shape(leaf.indices)} and values of shape "
          f"{jnp.shape(leaf.values)}; expected indices (n,) and values "
          "(n, *row_shape).")
    if param is not None and tuple(leaf.shape) != tuple(jnp.shape(param)):
      raise ValueError(
          f"The RowSparse gradient at {path} has dense shape {leaf.shape}, "
          f"expected {tuple(jnp.shape(param))} (the parameter's shape).")


def _touched(grad: RowSparse) -> jax.Array:
  """Whether each row of `grad` was touched, shaped to broadcast against
  the dense array: `(num_rows, 1, ...)`."""
  touched = jnp.zeros((grad.num_rows,), bool).at[
      grad._valid_indices()].set(True, mode="drop")  # pylint: disable=protected-access
  return touched.reshape((grad.num_rows,) + (1,) * (len(grad.shape) - 1))


def _touched_updates(updates: Any, leaves: list[Any], treedef: Any) -> Any:
  """The updates of row-sparse leaves kept on their touched rows only."""
  update_leaves = treedef.flatten_up_to(updates)
  result = []
  for update, leaf in zip(update_leaves, leaves):
    if is_row_sparse(leaf):
      rows, _ = unique_rows(leaf)
      update = RowSparse(rows, take_rows(update, rows), leaf.num_rows)
    result.append(update)
  return treedef.unflatten(result)


def _rows_update(transform, leaves, treedef, state, params, extra_args):
  """The `ROWS` mode: the transform on the touched rows only."""
  rows = [unique_rows(leaf) if is_row_sparse(leaf) else None
          for leaf in leaves]
  sub_grads = treedef.unflatten([
      leaf if pair is None else pair[1] for leaf, pair in zip(leaves, rows)])
  sub_params = None if params is None else treedef.unflatten([
      param if pair is None else take_rows(param, pair[0])
      for param, pair in zip(treedef.flatten_up_to(params), rows)])
  # Which leaf of the params each state leaf mirrors (-1: none).
  positions = treedef.unflatten(list(range(len(leaves))))
  owners = jax.tree.leaves(map_param_copies(transform, state, positions, -1))
  state_leaves, state_def = jax.tree.flatten(state)
  num_rows = [None if pair is None else leaf.num_rows
              for leaf, pair in zip(leaves, rows)]

  def row_shaped(leaf, owner):
    # A leaf that mirrors a row-sparse parameter row by row (not NovoGrad's
    # per-layer moment, which is reduced over the touched rows).
    return (owner >= 0 and rows[owner] is not None and jnp.ndim(leaf) >= 1
            and jnp.shape(leaf)[0] == num_rows[owner])

  gathered = [row_shaped(leaf, owner)
              for leaf, owner in zip(state_leaves, owners)]
  sub_state = state_def.unflatten([
      take_rows(leaf, rows[owner][0]) if is_gathered else leaf
      for leaf, owner, is_gathered in zip(state_leaves, owners, gathered)])
  sub_updates, new_sub_state = transform.update(sub_grads, sub_state,
                                                sub_params, **extra_args)
  new_state = state_def.unflatten([
      put_rows(old, rows[owner][0], new) if is_gathered else new
      for old, new, owner, is_gathered in zip(
          state_leaves, state_def.flatten_up_to(new_sub_state), owners,
          gathered)])
  updates = treedef.unflatten([
      update if pair is None else RowSparse(pair[0], update, leaf.num_rows)
      for update, pair, leaf in zip(treedef.flatten_up_to(sub_updates), rows,
                                    leaves)])
  return updates, new_state


def rows_without_momentum(momentum: Any = 0.0, **_: Any) -> str:
  """Keras 3 SGD: without momentum the update is zero on untouched rows;
  with it, Keras decays the momentum of every row."""
  return ROWS if _checks.is_python_zero(momentum) else DENSE


def rows_with_momentum(momentum: Any = 0.0, **_: Any) -> str:
  """Legacy RMSprop: with momentum its sparse kernel is lazy; without, the
  mean square decays on every row and the variable moves on touched rows."""
  return PARAMS if _checks.is_python_zero(momentum) else ROWS

