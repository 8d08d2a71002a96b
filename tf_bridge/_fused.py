"""One optax transform applied to a whole Keras variable list in one XLA call.

Shared by both Keras generations. `FusedTransform` is the step itself; the
transform at its hyperparameters is `_configured`'s, the state's layout over
the variable list `_layout`'s, and the step runs through `jax2tf` as a
single `XlaCallModule` op, converted, compiled and shared by `_compiled`.
"""

from __future__ import annotations

import copy
import warnings
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

import jaxopt_port
from jaxopt_port import _row_sparse
from jaxopt_port._base import weight_decay_term
from jaxopt_port._nonfinite import all_finite
from tf_bridge import _compiled, _device_groups
from tf_bridge._arguments import is_bridged
from tf_bridge._configured import ConfiguredTransform
from tf_bridge._layout import StateLayout, StateLeaf, kept_layout, precision


class FusedTransform(ConfiguredTransform):
  """A `ConfiguredTransform` over a Keras variable list: its state's layout
  (`initial_state`) and its step, one XLA call for every variable."""

  def __init__(self, *args: Any, **kwargs: Any):
    super().__init__(*args, **kwargs)
    # The state's layout, set by `initial_state`.
    self.layout: StateLayout | None = None
    # Per variable (its `ref()`), the numbers of entries its sparse
    # gradients took as they came, for a transform traced for each
    # (`step_gradients`).
    self._entry_lengths: dict[Any, set[int]] = {}
    # Why the transform cannot take a number of entries unknown where the
    # step is traced, once it refused one (`UnknownEntriesError`).
    self._unknown_entries_refusal: str | None = None

  @property
  def keys(self) -> list[str]:
    """The variables' keys in the transform's params dict, in their order."""
    return [] if self.layout is None else self.layout.keys

  def precision(self) -> Any:
    """The context to trace the transform in: JAX's 64-bit mode if a
    variable is float64 (`_layout.precision`)."""
    return precision(self.layout is not None and self.layout.float64)

  def set_argument(self, name: str, value: Any) -> None:
    """Sets a hyperparameter, as assigning a native optimizer's attribute
    does: the next step traced uses it (in eager mode, the next step). A
    bad value raises as the constructor does. On a built optimizer the
    variables stay as built: a number that would leave one unread (SGD's
    momentum set to 0) runs as an array, which reads it (and computes the
    same); a value that needs other variables (momentum from 0, Adam's
    amsgrad) raises ValueError."""
    previous = self._arguments.get(name)
    try:
      fits = False
      for candidate in (value, np.asarray(value)):
        self._arguments[name] = candidate
        transform = self.transform(0.001)
        if self.layout is None:
          fits = True
          break
        with self.precision():
          structure, unread = kept_layout(transform, self.layout.param_specs)
        built = tuple(leaf.unread for leaf in self.layout.leaves)
        fits = (structure, unread) == (self.layout.treedef, built)
        if fits or not isinstance(value, (int, float)) or isinstance(
            value, bool):
          break
      if not fits:
        raise ValueError(
            f"Setting {name}={value!r} changes the state the optimizer "
            f"keeps (from {self.layout.treedef.num_leaves - sum(built)} to "
            f"{structure.num_leaves - sum(unread)} arrays), and it is "
            "built already: pass it to the constructor instead.")
    except Exception:
      self._arguments[name] = previous
      raise
    self._changed()
    self.__dict__.pop("sparse_rows", None)

  def weight_decay_rates(self) -> list[Any] | None:
    """Per-variable weight decay rates, in variable order, of an update step
    with its own rule (Muon: Adam parameters decay by `adam_weight_decay`);
    None where Keras's uniform `weight_decay` applies."""
    if not self._bare:
      return None
    step = self._update_step(self._arguments_at(None))
    if step.weight_decay_rates is None:
      return None
    rates = step.weight_decay_rates(self.layout.param_specs)
    return [rates[key] for key in self.keys]

  def initial_state(self, keys: Sequence[str], specs: Sequence[Any]
                    ) -> list[StateLeaf]:
    """The state's leaves with their Keras roles, from the variables' shapes
    and dtypes (`StateLayout.of`); records the layout the steps read (the
    state's structure does not depend on the learning rate, so any rate
    builds it)."""
    transform = self.transform(0.001)
    self._changed()  # Steps traced for another layout.
    self.layout = StateLayout.of(transform, keys, specs)
    return self.layout.leaves

  def initial_values_from(self, params: Sequence[Any], tensorflow: bool = True
                          ) -> list[Any]:
    """The initial values of the `from_params` leaves, in leaf order,
    computed from `params` (the variables' tensors, in variable order):
    TensorFlow tensors (in a graph or a `tf.function` they read the
    variables once those are initialized, as a TF Addons slot made from
    `var.read_value()` does), or JAX arrays if not `tensorflow`."""
    transform, keys = self.transform(0.001), list(self.keys)
    wanted = [(i, leaf.value.dtype) for i, leaf in enumerate(
        self.layout.leaves) if leaf.from_params]

    def initial_values(params):
      leaves = jax.tree.leaves(transform.init(dict(zip(keys, params))))
      return [leaves[i].astype(dtype) for i, dtype in wanted]

    with self.precision():
      if not tensorflow:
        return initial_values(list(params))
      # Not a tf.function: it runs once, in whatever graph or lifted
      # initializer the variable is being made in.
      return _compiled.to_tensorflow(initial_values)(list(params))

  def averages(self, variables: Sequence[Any], state_variables: Sequence[Any]
               ) -> dict[Any, Any]:
    """id(variable) -> its `average` state variable (MovingAverage, SWA)."""
    return self.layout.averages(variables, state_variables)

  def apply(self, distribution: Any, variables: Sequence[Any],
            grads: Sequence[Any], state_variables: Sequence[Any],
            learning_rate: Any, iterations: Any,
            decay: tuple[float, ...] | None = None) -> Any:
    """Runs the fused step on every device of `distribution` and assigns
    (`iterations`: Keras's count before this step).

    Called in cross-replica context (inside Keras's `merge_call`) with
    reduced gradients; `grads` is aligned with `variables`, None where a
    variable has no gradient. One `extended.update` call hands
    `update_on_device` each device's component of every mirrored variable
    and gradient, so each device runs one XLA call for all its variables
    (`decay`: see `converted_step`). Variables living on several devices
    (parameter servers) run one call per device (`_device_groups`).
    """
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    groups = _device_groups.by_device(variables)
    if len(groups) > 1:
      return _device_groups.apply(self, distribution, groups, variables,
                                  grads, state_variables, learning_rate,
                                  iterations, decay)
    present = tuple(g is not None for g in grads)
    iterations = tf.cast(tf.convert_to_tensor(iterations), tf.int32)
    # The compiled step takes the stored leaves in an order independent of
    # the variables' names, so that instances can share it.
    state_variables = [state_variables[i]
                       for i in self.layout.stored_order]

    def update(variables, grads, state_variables, learning_rate):
      grads, row_indices, sparse = self.step_gradients(grads, variables)
      inputs = (list(variables), grads, list(state_variables), learning_rate,
                row_indices, iterations)
      if not all(map(_compiled.is_resource, [*variables, *state_variables])):
        return _compiled.apply_to_references(
            self._compiled(present, sparse, decay, inputs)[0],
            self.layout.float64, inputs)
      return self.compiled_apply(present, sparse, decay, inputs)(
          [v.handle for v in variables], grads,
          [s.handle for s in state_variables], *inputs[3:])

    def update_on_device(_, *arguments):
      return self.densifying_unknown_entries(lambda: update(*arguments))

    # Not converted by autograph, as `extended.update` would (seconds of a
    # first step, for code without Python control flow on tensors).
    return distribution.extended.update(
        variables[0], tf.autograph.experimental.do_not_convert(
            update_on_device),
        args=(list(variables), list(grads), list(state_variables),
              self.rate_inputs(learning_rate, iterations)), group=True)

  def step_gradients(self, grads: Sequence[Any], variables: Sequence[Any]
                     ) -> tuple[list[Any], list[Any], tuple[bool, ...]]:
    """`step_gradients` in this transform's sparse mode, with the numbers
    of entries each variable's sparse gradients took as they came."""
    return step_gradients(grads, variables, self.sparse_rows,
                          self._entry_lengths, self._unknown_entries_refusal)

  def densifying_unknown_entries(self, update: Callable[[], Any]) -> Any:
    """`update()`, which builds the step; where the transform refuses the
    unknown number of entries it was given (`UnknownEntriesError`), built
    again with such gradients summed and padded or densified
    (`_port_entries`), as every later step is."""
    try:
      return update()
    except _row_sparse.UnknownEntriesError as error:
      if self._unknown_entries_refusal is not None:
        raise
      self._unknown_entries_refusal = str(error)
      return update()

  def entry_lengths(self, row_indices: Sequence[Any]
                    ) -> tuple[int, ...] | None:
    """The sparse gradients' numbers of entries, static, for a transform
    traced for each (`jaxopt_port.sparse_mode` in
    `STATIC_LENGTH_MODES`: a port's, which runs its class's own sparse
    hook), else None (the step's gradient length is symbolic: another
    transform's, or one of those given a number unknown where the step is
    traced)."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    if self.sparse_rows not in _row_sparse.STATIC_LENGTH_MODES:
      return None
    lengths = tuple(tf.compat.dimension_value(indices.shape[0])
                    for indices in row_indices)
    return None if None in lengths else lengths

  def compiled_apply(self, present: tuple[bool, ...],
                     sparse: tuple[bool, ...],
                     decay: tuple[float, ...] | None, inputs: Sequence[Any]):
    """The fused step as one `tf.function(jit_compile=True)`, cached per
    signature: `apply(handles, grads, state_handles, learning_rate,
    row_indices, iterations)` reads the variables (by their resource
    handles, params then the stored state leaves), runs the converted step
    and assigns them. Compiled together, XLA updates the variables' buffers
    in place (a scatter of touched rows costs those rows); the converted
    step alone would write new tensors that the assignments then take over,
    an extra pass over memory (measured: 1.6x slower on CPU).

    The converted step, one `XlaCallModule` (`jax2tf`): `step(params,
    grads, state_leaves, learning_rate, row_indices, iterations) -> (params,
    state)`, lists in variable order; the state leaves are the stored ones
    (not the `derived` count, which comes from Keras's `iterations` before
    this step's increment), in the layout's `stored_order`. Variables without a
    gradient (`present` False) keep their value and their slots, as Keras
    skips them. A `sparse` variable's gradient is the values of its
    `tf.IndexedSlices` and `row_indices` holds their indices (one int32
    vector per sparse variable, of any length): the transform takes them as
    a `jaxopt_port.RowSparse`, so a "rows" optimizer reads and writes only
    the touched rows. `decay` holds Keras 3's weight decay rate per variable
    (0 for none), applied first as Keras's `_apply_weight_decay` would.
    `inputs`: the call's arguments, with the variables themselves (their
    shapes and dtypes are traced).

    Called eagerly outside a distribution strategy, a dense step runs its
    concrete function: the `tf.function`'s own call matches the arguments'
    types at every step, a quarter of a small model's eager step.
    """
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    _, apply, eager = self._compiled(present, sparse, decay, inputs)
    if any(sparse) or tf.distribute.has_strategy() or (
        not tf.executing_eagerly()):
      return apply
    return eager

  def _compiled(self, present, sparse, decay, inputs):
    """`_compiled.compiled_step` for the signature, cached on this instance.
    A sparse step converts a step built from a copy of this transform as it
    is now (`_snapshot`): jax2tf traces it again for each new gradient
    length. A transform running another bridged optimizer's transform (a
    factory argument, as TFA's Lookahead takes) reads that optimizer's
    hyperparameters as they are then, so its sparse step is not shared.
    A transform traced per number of entries (`entry_lengths`) has a step
    for each."""
    lengths = self.entry_lengths(inputs[4])
    key = ("tf", present, sparse, lengths, decay, self.runtime_names)
    if key not in self._steps:
      source = self._snapshot() if any(sparse) else self
      self._steps[key] = _compiled.compiled_step(
          source._jax_step(present, sparse, decay), self.layout, sparse,  # pylint: disable=protected-access
          inputs, shareable=not (any(sparse) and any(
              map(is_bridged, self._arguments.values()))),
          static_lengths=lengths is not None)
    return self._steps[key]

  def _snapshot(self) -> FusedTransform:
    """A copy of this transform that keeps its hyperparameters as they are
    now, whatever is set on this one later (`set_argument`, `feed`). It
    keeps the fed hyperparameters' names, not their readers: those are
    bound to the host, and a shared step outlives its first owner, which
    it must not keep alive with its slots."""
    snapshot = copy.copy(self)
    snapshot._arguments = dict(self._arguments)
    snapshot._fed = dict.fromkeys(self._fed)
    snapshot._steps = {}
    return snapshot

  def jitted_step(self, present: tuple[bool, ...], sparse: tuple[bool, ...],
                  decay: tuple[float, ...] | None = None):
    """The fused step as a jitted JAX function (Keras 3's JAX backend), with
    `converted_step`'s arguments."""
    key = ("jax", present, sparse, decay)
    if self.runtime_names:
      raise ValueError(
          f"{', '.join(self.runtime_names)}: a TensorFlow tensor, variable "
          "or callable hyperparameter cannot run on Keras's JAX backend; "
          "pass a number.")
    if key not in self._steps:
      self._steps[key] = jax.jit(self._jax_step(present, sparse, decay))
    return self._steps[key]

  def _jax_step(self, present, sparse, decay, layout=None):
    layout = layout or self.layout
    keys, treedef, roles = layout.keys, layout.treedef, layout.roles

    def step(params, grads, stored_leaves, learning_rate, row_indices,
             iterations):
      state_leaves = layout.full_leaves(stored_leaves, iterations,
                                        self._skip_nonfinite)
      new_params, new_leaves = update(params, grads, state_leaves,
                                      learning_rate, row_indices)
      if self._skip_nonfinite:
        # The transform keeps its state; the params (weight decay included)
        # are kept here.
        finite = all_finite([g for g, has in zip(grads, present) if has])
        new_params = [jnp.where(finite, new, old)
                      for new, old in zip(new_params, params)]
      return new_params, layout.stored_leaves(new_leaves)

    def gradient(grad, param, has, indices):
      if indices is not None:
        return jaxopt_port.RowSparse(indices, grad, param.shape[0])
      return grad if has else jnp.zeros_like(param)

    runtime_names = self.runtime_names
    # The step adds a declared port's updates to the params as they are
    # (under `skip_nonfinite` it selects them): the port may then order its
    # slots after the params (`applied_as_is`, see `jaxopt_port.lion`).
    applied = ({"applied_as_is": True}
               if hasattr(self._factory, "wrap_update_step")
               and not self._skip_nonfinite else {})

    def update(params, grads, state_leaves, learning_rate, row_indices):
      runtime = None
      if runtime_names:  # `rate_inputs`' vector.
        runtime = dict(zip(runtime_names, learning_rate[1:]))
        learning_rate = learning_rate[0]
      if decay is not None:
        # Keras 3's `_apply_weight_decay`, before the step.
        params = [p + weight_decay_term(p, rate, learning_rate)
                  if has and rate else p
                  for p, rate, has in zip(params, decay, present)]
      transform = self.transform(learning_rate, runtime)
      indices = iter(row_indices)
      params_tree = dict(zip(keys, params))
      grads_tree = dict(zip(keys, (
          gradient(g, p, has, next(indices) if is_sparse else None)
          for g, p, has, is_sparse in zip(grads, params, present, sparse))))
      state = jax.tree_util.tree_unflatten(treedef, state_leaves)
      updates, new_state = transform.update(grads_tree, state, params_tree,
                                            **applied)
      new_params = jaxopt_port.apply_updates(params_tree, updates)
      new_params = [new_params[k] if has else p
                    for k, p, has in zip(keys, params, present)]
      new_leaves = [
          new if role is None or present[role] else old
          for new, old, role in zip(jax.tree.leaves(new_state), state_leaves,
                                    roles)]
      return new_params, new_leaves
    return step


# How many numbers of entries a transform traced for each is traced for,
# per variable, before the others are summed and padded (`step_gradients`).
_LENGTHS_KEPT = 4


def step_gradients(grads: Sequence[Any], variables: Sequence[Any],
                   sparse_rows: str | None,
                   lengths_seen: dict[Any, set[int]] | None = None,
                   unknown_entries_refusal: str | None = None
                   ) -> tuple[list[Any], list[Any], tuple[bool, ...]]:
  """The fused step's gradients, in the variables' dtypes.

  A `tf.IndexedSlices` stays sparse (its values, and its indices as int32
  in the returned `row_indices`) for a transform that takes row-sparse
  gradients as "rows", "params" or "touched"; otherwise it is densified,
  duplicate indices summed. None becomes zeros.

  A transform traced for each number of entries ("entries",
  "summed_entries": a port's, which runs its class's own sparse hook on
  them) gets a static number, or where that is unknown a symbolic one or
  a dense gradient (`_port_entries`). `lengths_seen`: per variable (its
  `ref()`), the numbers it took as they came (updated here).
  `unknown_entries_refusal`: why the transform cannot take an unknown
  number, if it refused one.

  Returns the gradients, the row indices and which variables are sparse.
  """
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  by_rows = sparse_rows in _row_sparse.SPARSE_INPUT_MODES
  by_entries = sparse_rows in _row_sparse.STATIC_LENGTH_MODES
  step, row_indices, sparse = [], [], []
  for grad, variable in zip(grads, variables):
    # Not read (a read op per variable costs graph building time).
    dtype, shape = tf.as_dtype(variable.dtype).base_dtype, variable.shape
    if isinstance(grad, tf.IndexedSlices):
      refuse_sparse(sparse_rows, variable)
    entries = None
    if by_entries and isinstance(grad, tf.IndexedSlices):
      entries = _port_entries(
          grad, variable, sparse_rows == _row_sparse.SUMMED_ENTRIES,
          {} if lengths_seen is None else lengths_seen,
          unknown_entries_refusal)
    if grad is None:
      step.append(tf.zeros_like(variable))
      sparse.append(False)
    elif entries is not None:
      step.append(entries[0])
      row_indices.append(entries[1])
      sparse.append(True)
    elif by_rows and isinstance(grad, tf.IndexedSlices):
      step.append(tf.ensure_shape(tf.cast(grad.values, dtype),
                                  [None, *shape[1:]]))
      row_indices.append(tf.cast(grad.indices, tf.int32))
      sparse.append(True)
    else:
      # Densified IndexedSlices lose their static shape; jax2tf needs it.
      step.append(tf.ensure_shape(tf.cast(tf.convert_to_tensor(grad), dtype),
                                  shape))
      sparse.append(False)
  return step, row_indices, tuple(sparse)


def _port_entries(grad: Any, variable: Any, summed: bool,
                    lengths_seen: dict[Any, set[int]],
                    unknown_entries_refusal: str | None
                    ) -> tuple[Any, Any] | None:
  """A sparse gradient's values and int32 indices for a transform traced
  for each number of entries (a port, which runs its class's sparse hook),
  or None: densify it.

  Where the number is static (batches of one shape in a `tf.function`, an
  eager step), the entries as they come; a transform that sums repeated
  indices itself (`summed`) takes at most `_LENGTHS_KEPT` numbers per
  variable so (eagerly, tf_keras 2.11+'s summed entries come in a number
  of their own each step), and the others summed and padded (below).
  Where it is unknown (a batch dimension traced as None: Keras 3's `fit`
  on arrays, Keras relaxing one after a batch of another size; tf_keras
  2.11+'s summed entries in a `tf.function`), the entries as they come, of
  a symbolic number (one conversion serves every number). Where the
  transform refused that (`unknown_entries_refusal`: its class's sparse
  hook needs the number itself, a shape computed from its value or a Python
  number from the entries' shape), a `summed` transform gets their sum
  (`tf.math.unsorted_segment_sum`, as its class's API sums them) as an
  entry per row of the table: a touched row's own, the others padding
  (index `num_rows`, zero values; its class's scatters drop them), the same
  gradient to it at the cost of a dense step; one that takes them as they
  come cannot be padded: its gradient is densified (its class's dense hook
  runs), with a warning."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  dtype, shape = tf.as_dtype(variable.dtype).base_dtype, variable.shape
  values, indices = tf.cast(grad.values, dtype), tf.cast(grad.indices,
                                                         tf.int32)
  length = tf.compat.dimension_value(values.shape[0])
  if length is None:
    length = tf.compat.dimension_value(indices.shape[0])
  name = getattr(variable, "name", "a variable")
  # By the variable itself: two tables may share a name (Keras 3's are
  # named by their layer's attribute, "embeddings").
  seen = lengths_seen.setdefault(variable.ref(), set())
  if length is not None and (length in seen or len(seen) < _LENGTHS_KEPT
                             or not summed):
    seen.add(length)
  elif length is not None or unknown_entries_refusal is not None:
    return (_summed_and_padded(values, indices, shape) if summed
            else _densified_with_warning(name, unknown_entries_refusal))
  return (tf.ensure_shape(values, [length, *shape[1:]]),
          tf.ensure_shape(indices, [length]))


def _summed_and_padded(values: Any, indices: Any, shape: Any
                       ) -> tuple[Any, Any]:
  """Row r's entry is the sum of its values if it was touched, else padding:
  static shapes, which XLA compiles (a `tf.unique` of the rows would not)."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  num_rows = int(shape[0])
  touched = tf.math.unsorted_segment_max(
      tf.ones_like(indices), indices, num_rows) > 0
  rows = tf.where(touched, tf.range(num_rows), num_rows)
  return (tf.ensure_shape(tf.math.unsorted_segment_sum(values, indices,
                                                       num_rows),
                          [num_rows, *shape[1:]]), rows)


def _densified_with_warning(name: str, refusal: str) -> None:
  warnings.warn(
      f"The sparse gradient of {name} has a number of entries unknown "
      "where the step is traced (a batch dimension traced as None: Keras "
      "3's fit on arrays, or after a batch of another size), and the "
      f"optimizer cannot take one ({refusal}); its sparse hook takes "
      "repeated indices as they come (its class overrides "
      "_resource_apply_sparse_duplicate_indices or _deduplicate_sparse_grad, "
      "or is a Keras 3 class), so their sum padded to the table's rows would "
      "be another gradient to it: the gradient is densified and the class's "
      "dense hook runs. Batches of one shape (a dataset batched with "
      "drop_remainder=True) or eager steps keep it sparse.", stacklevel=3)


def refuse_sparse(sparse_rows: str | None, variable: Any) -> None:
  """Raises the native class's NotImplementedError for a sparse gradient
  of `variable` where the transform refuses them (Model Garden's LARS)."""
  if sparse_rows == _row_sparse.REFUSED:
    raise NotImplementedError(
        f"{_row_sparse.REFUSED_MESSAGE} (The gradient of "
        f"{getattr(variable, 'name', 'a variable')} is sparse.)")


def jax_step_gradients(grads: Sequence[Any], params: Sequence[Any],
                       sparse_rows: str | None) -> tuple[list[Any], list[Any],
                                                         tuple[bool, ...]]:
  """`step_gradients` for Keras 3's JAX backend: a gradient over rows (a
  `jaxopt_port.RowSparse`, or a `jax.experimental.sparse.BCOO` whose
  indices pick rows) stays sparse for a transform that takes them (a port
  traced per number of entries too: JAX's are static); any other BCOO is
  densified."""
  from jax.experimental import sparse as jax_sparse  # pylint: disable=import-outside-toplevel
  by_rows = sparse_rows in (*_row_sparse.SPARSE_INPUT_MODES,
                            *_row_sparse.STATIC_LENGTH_MODES)
  step, row_indices, sparse = [], [], []
  for grad, param in zip(grads, params):
    if isinstance(grad, jax_sparse.BCOO):
      if grad.n_batch == 0 and grad.n_sparse == 1:
        grad = jaxopt_port.RowSparse(grad.indices[:, 0], grad.data,
                                     grad.shape[0])
      else:
        grad = grad.todense()
    if isinstance(grad, jaxopt_port.RowSparse):
      refuse_sparse(sparse_rows, param)
      if by_rows:
        step.append(jnp.asarray(grad.values, param.dtype))
        row_indices.append(jnp.asarray(grad.indices, jnp.int32))
        sparse.append(True)
        continue
      grad = grad.todense()
    step.append(jnp.zeros_like(param) if grad is None
                else jnp.asarray(grad, param.dtype))
    sparse.append(False)
  return step, row_indices, tuple(sparse)
