"""One optax transform applied to a whole Keras variable list in one XLA call.

Shared by both Keras generations. The transform sees the variables as a dict
keyed by name (Keras 3 `variable.path`, legacy `variable.name`); its state is
flattened into leaves, each either a slot of one variable (found with
`optax.tree_map_params`) or a variable of its own (counts and the like). The
update runs through `jax2tf` as a single `XlaCallModule` op inside a
`tf.function(autograph=False)`, converted once per signature and cached.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import dataclasses
import functools
import hashlib
import inspect
from typing import Any, Callable, Iterator, Sequence

import jax
import jax.extend
import jax.numpy as jnp
import numpy as np
import optax

import jaxopt_port
from jaxopt_port import _row_sparse
from jaxopt_port._base import HALF_PRECISION, weight_decay_term
from jaxopt_port._nonfinite import all_finite
from jaxopt_port._tree import map_param_copies
from tf_bridge._arguments import (is_bridged, is_runtime, runtime_value,
                                  stand_in)

# Compiled steps shared by optimizer instances in this process, keyed by the
# step's program (`_program_key`): a new optimizer that computes the same
# step (a model compiled again, a tuner's next trial, a fold) reuses the
# converted and compiled step instead of paying its first call again. The
# most recent ones are kept.
_SHARED_STEPS: collections.OrderedDict[Any, tuple[Any, Any, Any]] = (
    collections.OrderedDict())
_SHARED_STEPS_KEPT = 16


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
  # from there, not stored (so the variables are native's).
  derived: bool = False

  @property
  def fill(self) -> Any:
    """The one value every element of `value` holds if `value` is a
    broadcast of it (a Keras initializer can fill the variable), else
    None."""
    return _fill_of(self.value)

  @property
  def stored(self) -> bool:
    """Kept in a Keras variable: not the derived count, not an empty leaf
    (Muon's unused velocity of a matrix, which native does not create)."""
    return not self.derived and self.value.size > 0

  def is_slot_of(self, variables: Sequence[Any]) -> bool:
    """A Keras slot: it mirrors a variable with that variable's dtype and
    shape (factored moments are plain optimizer variables instead)."""
    if self.slot_of is None:
      return False
    variable = variables[self.slot_of]
    return (_numpy_dtype(variable.dtype) == self.value.dtype and tuple(variable.shape) == self.value.shape)


class FusedTransform:
  """`factory(learning_rate=lr, **arguments)` over a Keras variable list.

  The host (a Keras base class) applies its own base arguments, so the
  transform must not: the arguments named in `host_base_arguments` are not
  passed to `factory`. For a `jaxopt_port` optimizer of the host's own
  generation (`factory.wrap_update_step is host_wrapper`) the bare algorithm
  runs (its update step, so AdamW's `weight_decay` goes to Keras only); a
  Keras 3 port hosted by OptimizerV2 keeps the base arguments OptimizerV2
  lacks (weight decay, EMA, ...).
  """

  def __init__(self, factory: Callable[..., Any], arguments: dict[str, Any],
               host_base_arguments: Sequence[str], host_wrapper: Any,
               skip_nonfinite: bool = False):
    self._skip_nonfinite = skip_nonfinite
    self._factory = factory
    self._arguments = dict(arguments)
    self._host_base_arguments = tuple(host_base_arguments)
    self._bare = getattr(factory, "wrap_update_step", None) is host_wrapper
    self._takes_learning_rate = (
        "learning_rate" in inspect.signature(factory).parameters)
    self._steps: dict[Any, Any] = {}
    # Counts the changes of arguments and layout (a host's caches key on it).
    self.version = 0
    self._fed: dict[str, Callable[[], Any]] = {}
    # The state's layout, set by `initial_state`.
    self.keys: list[str] = []
    self._treedef: Any = None
    self._roles: list[int | None] = []
    self._stored_order: list[int] = []
    self._leaf_names: list[str] = []
    self._param_specs: dict[str, jax.ShapeDtypeStruct] = {}
    self._from_params: list[bool] = []
    self._float64 = False

  def precision(self) -> Any:
    """The context to trace the transform in: JAX's 64-bit mode if a
    variable is float64 (JAX would truncate it to float32 otherwise; the
    mode is not turned on for other variable lists, whose numbers it would
    not change but whose traces it would)."""
    return _precision(self._float64)

  @functools.cached_property
  def sparse_rows(self) -> str | None:
    """How the transform takes a sparse gradient (`jaxopt_port.sparse_mode`:
    "rows", "params", "touched" or "dense"), or None: the bridge densifies
    it."""
    return jaxopt_port.sparse_mode(self._algorithm(0.001))

  def argument(self, name: str) -> Any:
    """The hyperparameter's value the next traced step uses."""
    return self._arguments.get(name)

  def set_argument(self, name: str, value: Any) -> None:
    """Sets a hyperparameter, as assigning a native optimizer's attribute
    does: the next step traced uses it (in eager mode, the next step). A
    bad value raises as the constructor does. On a built optimizer the
    state stays as built: a number that would drop a slot (SGD's momentum
    set to 0) runs as an array, which keeps it (and computes the same); a
    value that needs other state (momentum from 0, Adam's amsgrad) raises
    ValueError."""
    previous = self._arguments.get(name)
    try:
      fits = False
      for candidate in (value, np.asarray(value)):
        self._arguments[name] = candidate
        transform = self.transform(0.001)
        if self._treedef is None:
          fits = True
          break
        with self.precision():
          structure = jax.tree.structure(jax.eval_shape(
              transform.init, self._param_specs))
        fits = structure == self._treedef
        if fits or not isinstance(value, (int, float)) or isinstance(
            value, bool):
          break
      if not fits:
        raise ValueError(
            f"Setting {name}={value!r} changes the state the optimizer "
            f"keeps (from {self._treedef.num_leaves} to "
            f"{structure.num_leaves} arrays), and it is built already: "
            "pass it to the constructor instead.")
    except Exception:
      self._arguments[name] = previous
      raise
    self._changed()
    self.__dict__.pop("sparse_rows", None)

  def _changed(self) -> None:
    self._steps.clear()
    self.version += 1

  def transform(self, learning_rate: Any, runtime: dict[str, Any] | None = None
                ) -> optax.GradientTransformation:
    """The transform at `learning_rate`, with the runtime hyperparameters
    (`runtime_names`) at `runtime`'s values (inside the step: traced), or
    at stand-ins of their current values (for shapes and checks)."""
    transform = self._algorithm(learning_rate, runtime)
    return (jaxopt_port.skip_nonfinite(transform) if self._skip_nonfinite
            else transform)

  @property
  def runtime_names(self) -> tuple[str, ...]:
    """The hyperparameters given as tensors, variables, callables or
    schedules, or read from the host (`feed`), in the order `rate_inputs`
    feeds them."""
    return tuple(k for k, v in self._arguments.items()
                 if k in self._fed or is_runtime(self._factory, k, v))

  def feed(self, name: str, read: Callable[[], Any]) -> None:
    """Feeds hyperparameter `name` to each step from `read()` (OptimizerV2's
    hyperparameter variable), if a runtime value keeps the state its
    current value gives (SGD's momentum of 0 keeps no slot: it stays a
    number, as native's then keeps no momentum either)."""
    value = self._arguments[name]
    if not is_runtime(self._factory, name, value):
      specs = {"x": jax.ShapeDtypeStruct((2,), np.float32)}
      layouts = []
      for candidate in (value, stand_in(value)):
        self._arguments[name] = candidate
        layouts.append(jax.tree.structure(jax.eval_shape(
            self.transform(0.001).init, specs)))
      self._arguments[name] = value
      if layouts[0] != layouts[1]:
        return
    self._fed[name] = read
    self._changed()

  def rate_inputs(self, learning_rate: Any, iterations: Any) -> Any:
    """The step's `learning_rate` input: the rate, float32; with runtime
    hyperparameters, a vector of the rate and their current values."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    # A tensor, not OptimizerV2's rate variable (a cast to its own dtype
    # returns it): the compiled step must not refer to a variable.
    rate = tf.cast(tf.convert_to_tensor(learning_rate), tf.float32)
    if not self.runtime_names:
      return rate
    return tf.stack([rate] + [
        tf.cast(self._fed[name]() if name in self._fed
                else runtime_value(self._arguments[name], iterations),
                tf.float32)
        for name in self.runtime_names])

  def _arguments_at(self, runtime: dict[str, Any] | None) -> dict[str, Any]:
    arguments = dict(self._arguments)
    for name in self.runtime_names:
      arguments[name] = (runtime[name] if runtime is not None
                         else stand_in(arguments[name]))
    return arguments

  def _algorithm(self, learning_rate: Any,
                 runtime: dict[str, Any] | None = None
                 ) -> optax.GradientTransformation:
    factory = self._factory
    rate = {"learning_rate": learning_rate} if self._takes_learning_rate else {}
    arguments = self._arguments_at(runtime)
    if self._bare:
      # The host applies weight decay, also an update step's own rates
      # (see `weight_decay_rates`).
      return factory.wrap_update_step(
          self._update_step({**arguments, **rate})._replace(
              weight_decay_rates=None),
          learning_rate)
    # A wrapper's inner bridged optimizer (TFA's Lookahead(optimizer)) runs
    # as its transform, fed the same learning rate.
    own = {k: v._fused.transform(learning_rate) if is_bridged(v) else v
           for k, v in arguments.items()
           if k not in self._host_base_arguments}
    return factory(**rate, **own)

  def weight_decay_rates(self) -> list[Any] | None:
    """Per-variable weight decay rates, in variable order, of an update step
    with its own rule (Muon: Adam parameters decay by `adam_weight_decay`);
    None where Keras's uniform `weight_decay` applies."""
    if not self._bare:
      return None
    step = self._update_step(self._arguments_at(None))
    if step.weight_decay_rates is None:
      return None
    rates = step.weight_decay_rates(self._param_specs)
    return [rates[key] for key in self.keys]

  def _update_step(self, arguments: dict[str, Any]):
    """The bare algorithm's `UpdateStep` (for a port of the host's
    generation); `learning_rate` reaches it only if it takes one (legacy
    Nadam, to refuse schedules)."""
    make = self._factory.make_update_step
    parameters = inspect.signature(make).parameters
    return make(**{k: v for k, v in arguments.items() if k in parameters})

  def initial_state(self, keys: Sequence[str], specs: Sequence[Any]
                    ) -> list[StateLeaf]:
    """The state's leaves with their Keras roles, from the variables' shapes
    and dtypes (`specs`: anything with `.shape` and a numpy-compatible
    `.dtype`); records the layout that `converted_step` and `jitted_step`
    read (the state's structure does not depend on the learning rate, so any
    rate builds it).

    The variables' values are not read: a model built inside the
    `tf.function` of its first step (a Sequential without `Input`), or in a
    TF1 graph, has none yet. Leaves whose initial value depends on them are
    marked `from_params`, for `initial_values_from`.
    """
    transform = self.transform(0.001)
    self._changed()  # Steps traced for another layout.
    self.keys = list(keys)
    self._param_specs = {key: _spec_of(spec) for key, spec in zip(keys, specs)}
    self._float64 = any(spec.dtype == np.float64
                        for spec in self._param_specs.values())
    specs = self._param_specs
    with self.precision():
      # The params dict in the variables' order, as the step passes it.
      closed, shape_tree = jax.make_jaxpr(
          lambda *params: transform.init(dict(zip(self.keys, params))),
          return_shape=True)(*specs.values())
      state = _initial_values(closed, shape_tree)
      self._from_params = _depends_on_params(closed)
    indices = dict(zip(keys, range(len(keys))))
    not_a_slot = -1  # (None would vanish: it is an empty subtree.)
    roles = map_param_copies(transform, state, indices, not_a_slot)
    paths_and_leaves, treedef = jax.tree_util.tree_flatten_with_path(state)
    follows = _follows_params(transform.init, specs, keys,
                              len(paths_and_leaves))
    seen: dict[tuple[str, Any], int] = {}
    leaves = []
    for (path, leaf), role, from_params, follows_params in zip(
        paths_and_leaves, jax.tree.leaves(roles), self._from_params,
        follows):
      role = None if role == not_a_slot else role
      name = _slot_name(path, keys)
      # A wrapper's inner count and its own are both "iterations": Keras
      # (HDF5 above all) needs distinct names.
      count = seen.get((name, role), 0)
      seen[(name, role)] = count + 1
      leaf = np.asarray(leaf)
      if role is not None:
        leaf = _in_native_dtype(leaf, self._param_specs[keys[role]])
      elif follows_params:
        leaf = _in_native_dtype(leaf, self._param_specs[keys[0]])
      derived = (name, count, role, leaf.shape) == ("iterations", 0, None, ())
      leaves.append(StateLeaf(name if count == 0 else f"{name}_{count}", role,
                              leaf, from_params, derived))
    self._treedef = treedef
    self._computed_dtypes = [np.asarray(leaf).dtype
                             for leaf in jax.tree.leaves(state)]
    self._kept_dtypes = [leaf.value.dtype for leaf in leaves]
    self._roles = [leaf.slot_of for leaf in leaves]
    positions = {key: index for index, key in enumerate(keys)}
    stored_paths = [_positional_path(path, positions)
                    for (path, _), leaf in zip(paths_and_leaves, leaves)
                    if leaf.stored]
    self._stored_order = sorted(range(len(stored_paths)),
                                key=stored_paths.__getitem__)
    self._leaf_names = [leaf.name for leaf in leaves]
    self._derived = [leaf.derived for leaf in leaves]
    self._empty = {index: leaf.value for index, leaf in enumerate(leaves)
                   if not leaf.derived and not leaf.stored}
    return leaves

  def _full_leaves(self, stored: Sequence[Any], iterations: Any) -> list[Any]:
    """The state's leaves from the stored ones and Keras's `iterations` (the
    transform's count; less the skipped steps under `skip_nonfinite`, which
    Keras counts and the transform does not), in the transform's dtypes."""
    stored = iter(stored)
    leaves = [jnp.asarray(self._empty[index], self._computed_dtypes[index])
              if index in self._empty
              else None if derived
              else next(stored).astype(self._computed_dtypes[index])
              for index, derived in enumerate(self._derived)]
    for index, derived in enumerate(self._derived):
      if derived:
        skipped = [leaf for leaf, name in zip(leaves, self._leaf_names)
                   if name == "skipped_steps"] if self._skip_nonfinite else []
        count = jnp.asarray(iterations).astype(jnp.int32)
        leaves[index] = count - skipped[0] if skipped else count
    return leaves

  def _stored_leaves(self, leaves: Sequence[Any]) -> list[Any]:
    """The leaves Keras keeps, in the dtypes it keeps them in."""
    return [leaf.astype(self._kept_dtypes[index])
            for index, (leaf, derived) in enumerate(zip(leaves, self._derived))
            if not derived and index not in self._empty]

  def initial_values_from(self, params: Sequence[Any], tensorflow: bool = True
                          ) -> list[Any]:
    """The initial values of the `from_params` leaves, in leaf order,
    computed from `params` (the variables' tensors, in variable order):
    TensorFlow tensors (in a graph or a `tf.function` they read the
    variables once those are initialized, as a TF Addons slot made from
    `var.read_value()` does), or JAX arrays if not `tensorflow`."""
    transform, keys = self.transform(0.001), list(self.keys)
    wanted = [i for i, from_params in enumerate(self._from_params)
              if from_params]

    def initial_values(params):
      leaves = jax.tree.leaves(transform.init(dict(zip(keys, params))))
      return [leaves[i].astype(self._kept_dtypes[i]) for i in wanted]

    with self.precision():
      if not tensorflow:
        return initial_values(list(params))
      # Not a tf.function: it runs once, in whatever graph or lifted
      # initializer the variable is being made in.
      return to_tensorflow(initial_values)(list(params))

  def averages(self, variables: Sequence[Any], state_variables: Sequence[Any]
               ) -> dict[Any, Any]:
    """id(variable) -> its `average` state variable (MovingAverage, SWA)."""
    stored = [(name, role) for index, (name, role) in enumerate(
        zip(self._leaf_names, self._roles))
              if not self._derived[index] and index not in self._empty]
    return {id(variables[role]): state
            for (name, role), state in zip(stored, state_variables)
            if name == "average" and role is not None}

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
    (`decay`: see `converted_step`).
    """
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    present = tuple(g is not None for g in grads)
    iterations = tf.cast(tf.convert_to_tensor(iterations), tf.int32)
    # The compiled step takes the stored leaves in an order independent of
    # the variables' names, so that instances can share it.
    state_variables = [state_variables[i] for i in self._stored_order]

    def update_on_device(_, variables, grads, state_variables, learning_rate):
      grads, row_indices, sparse = step_gradients(grads, variables,
                                                  self.sparse_rows)
      inputs = (list(variables), grads, list(state_variables), learning_rate,
                row_indices, iterations)
      return self.compiled_apply(present, sparse, decay, inputs)(
          [v.handle for v in variables], grads,
          [s.handle for s in state_variables], *inputs[3:])

    # Not converted by autograph, as `extended.update` would (seconds of a
    # first step, for code without Python control flow on tensors).
    return distribution.extended.update(
        variables[0], tf.autograph.experimental.do_not_convert(
            update_on_device),
        args=(list(variables), list(grads), list(state_variables),
              self.rate_inputs(learning_rate, iterations)), group=True)

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
    this step's increment), in `_stored_order`. Variables without a
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
    """(converted step, compiled apply, its eager caller: see
    `_compile_apply`) for the signature: this instance's, else another
    instance's of the same program (`_SHARED_STEPS`), else new. The step is
    traced to a jaxpr first, which keys the sharing (`_program_key`). A
    dense step converts that jaxpr: a shared step replays the program,
    never an instance's Python (whose hyperparameters may change later). A
    sparse step's gradient length is symbolic, so it is traced again for
    each new length (jax2tf's symbols are not the jaxpr's): it converts a
    step built from a copy of this transform as it is now (`_snapshot`).
    A transform running another bridged optimizer's transform (a factory
    argument, as TFA's Lookahead takes) reads that optimizer's
    hyperparameters as they are then, so its sparse step is not shared."""
    key = ("tf", present, sparse, decay, self.runtime_names)
    if key not in self._steps:
      order = self._stored_order
      polymorphic = _polymorphic_shapes(
          sparse, [self._param_specs[k].shape[1:] for k in self.keys])

      def compiled(step):
        converted = _convert(step, polymorphic)
        return (converted, *_compile_apply(
            converted, self._float64,
            [v.dtype for v in [*inputs[0], *inputs[2]]]))

      if any(sparse):
        step = _in_stored_order(
            self._snapshot()._jax_step(present, sparse, decay), order)  # pylint: disable=protected-access
        if any(map(is_bridged, self._arguments.values())):
          self._steps[key] = compiled(step)
          return self._steps[key]
      specs = jax.tree.map(_spec_of, inputs)
      with self.precision():
        if any(sparse):
          closed = jax.make_jaxpr(step)(
              *jax.export.symbolic_args_specs(specs, polymorphic))
        else:
          closed, shapes = jax.make_jaxpr(
              _in_stored_order(self._jax_step(present, sparse, decay), order),
              return_shape=True)(*specs)
          step = _replay(closed, shapes)
      program = _program_key(closed)
      shared = _SHARED_STEPS.pop(program, None) or compiled(step)
      _SHARED_STEPS[program] = shared  # The most recent last.
      while len(_SHARED_STEPS) > _SHARED_STEPS_KEPT:
        _SHARED_STEPS.popitem(last=False)
      self._steps[key] = shared
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

  def _jax_step(self, present, sparse, decay):
    keys, treedef, roles = self.keys, self._treedef, self._roles

    def step(params, grads, stored_leaves, learning_rate, row_indices,
             iterations):
      state_leaves = self._full_leaves(stored_leaves, iterations)
      new_params, new_leaves = update(params, grads, state_leaves,
                                      learning_rate, row_indices)
      if self._skip_nonfinite:
        # The transform keeps its state; the params (weight decay included)
        # are kept here.
        finite = all_finite([g for g, has in zip(grads, present) if has])
        new_params = [jnp.where(finite, new, old)
                      for new, old in zip(new_params, params)]
      return new_params, self._stored_leaves(new_leaves)

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


def step_gradients(grads: Sequence[Any], variables: Sequence[Any],
                   sparse_rows: str | None) -> tuple[list[Any], list[Any],
                                                     tuple[bool, ...]]:
  """The fused step's gradients, in the variables' dtypes.

  A `tf.IndexedSlices` stays sparse (its values, and its indices as int32
  in the returned `row_indices`) for a transform that takes row-sparse
  gradients as "rows", "params" or "touched"; otherwise it is densified,
  duplicate indices summed. None becomes zeros. Returns the gradients, the row
  indices and which variables are sparse.
  """
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  by_rows = sparse_rows in _row_sparse.SPARSE_INPUT_MODES
  step, row_indices, sparse = [], [], []
  for grad, variable in zip(grads, variables):
    # Not read (a read op per variable costs graph building time).
    dtype, shape = tf.as_dtype(variable.dtype).base_dtype, variable.shape
    if grad is None:
      step.append(tf.zeros_like(variable))
      sparse.append(False)
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


def jax_step_gradients(grads: Sequence[Any], params: Sequence[Any],
                       sparse_rows: str | None) -> tuple[list[Any], list[Any],
                                                         tuple[bool, ...]]:
  """`step_gradients` for Keras 3's JAX backend: a gradient over rows (a
  `jaxopt_port.RowSparse`, or a `jax.experimental.sparse.BCOO` whose
  indices pick rows) stays sparse for a transform that takes them; any
  other BCOO is densified."""
  from jax.experimental import sparse as jax_sparse  # pylint: disable=import-outside-toplevel
  by_rows = sparse_rows in _row_sparse.SPARSE_INPUT_MODES
  step, row_indices, sparse = [], [], []
  for grad, param in zip(grads, params):
    if isinstance(grad, jax_sparse.BCOO):
      if grad.n_batch == 0 and grad.n_sparse == 1:
        grad = jaxopt_port.RowSparse(grad.indices[:, 0], grad.data,
                                     grad.shape[0])
      else:
        grad = grad.todense()
    if isinstance(grad, jaxopt_port.RowSparse):
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


def _compile_apply(step: Callable[..., Any], float64: bool,
                   dtypes: Sequence[Any]):
  """`step` (converted) with the variables read and assigned in one
  `tf.function(jit_compile=True)`: `compiled_apply`, and the same called
  through its concrete function (`_eager_caller`). It takes the
  variables' resource handles (`dtypes`: theirs, params then state): a
  function taking variables keeps weak references to the ones created
  inside a `tf.function` (tf_keras's slots), and calling it after they are
  gone raises, which a step shared by instances must not."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel

  # reduce_retracing: sparse gradients of other lengths reuse the trace.
  @tf.function(jit_compile=True, autograph=False, reduce_retracing=True)
  def apply(handles, grads, state_handles, learning_rate, row_indices,
            iterations):
    values = [tf.raw_ops.ReadVariableOp(resource=handle, dtype=dtype)
              for handle, dtype in zip([*handles, *state_handles], dtypes)]
    with _precision(float64):
      new_params, new_state = step(
          values[:len(handles)], grads, values[len(handles):],
          learning_rate, row_indices, iterations)
    for handle, value in zip([*handles, *state_handles],
                             [*new_params, *new_state]):
      tf.raw_ops.AssignVariableOp(resource=handle, value=value)
    # An output, so that graphs can depend on the update having run.
    return tf.constant(True)
  return apply, _eager_caller(apply)


def _eager_caller(apply: Any) -> Callable[..., Any]:
  """`apply` called through its concrete function for the first call's
  arguments (eagerly and outside a distribution strategy, a `tf.function`
  keys its traces on the arguments' types alone, which a dense step's keep,
  also in the instances that share it)."""
  concrete = []

  def call(*arguments):
    if not concrete:
      concrete.append(apply.get_concrete_function(*arguments))
    return concrete[0](*arguments)
  return call


def _spec_of(value: Any) -> jax.ShapeDtypeStruct:
  """The shape and dtype of a variable or tensor (anything with `.shape`
  and a numpy-compatible `.dtype`), for tracing."""
  return jax.ShapeDtypeStruct(tuple(value.shape), _numpy_dtype(value.dtype))


def _precision(float64: bool) -> Any:
  """JAX's 64-bit mode for a float64 variable list, else nothing
  (`FusedTransform.precision`)."""
  return jax.enable_x64(True) if float64 else contextlib.nullcontext()


def _program_key(closed: Any) -> tuple[Any, ...]:
  """What identifies a traced step's computation, whatever order the
  transform visited the variables in: a digest of each output's
  computation, built from each equation's printed form (primitive,
  parameters, literals, shapes; the constants of the jaxprs among its
  parameters, which print as shapes only, by value) and its inputs'
  digests, back to the step's arguments by position and its constants by
  value. Keras names a second model's variables on from the first's
  (`dense_12` after `dense_11`) and the transform sees them as a dict
  sorted by name, so the same step can come traced in another order: it
  gets the same key, and any other difference another one."""

  def digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()

  def value(constant: Any) -> str:
    constant = np.asarray(constant)
    return digest("constant", f"{constant.dtype}{constant.shape}",
                  constant.tobytes().hex())

  jaxpr = closed.jaxpr
  digests = {var: digest("argument", str(position))
             for position, var in enumerate(jaxpr.invars)}
  for var, constant in zip(jaxpr.constvars, closed.consts):
    digests[var] = value(constant)

  def of(atom: Any) -> str:
    # A literal is printed in its equation.
    return (repr(atom) if isinstance(atom, jax.extend.core.Literal)
            else digests[atom])

  for equation in jaxpr.eqns:
    operation = digest(repr(equation), *map(of, equation.invars),
                       *map(value, _nested_constants(equation.params)))
    for index, var in enumerate(equation.outvars):
      digests[var] = digest(operation, str(index))
  # The arguments' shapes and dtypes (the converted step takes them all,
  # also those it does not read).
  return (tuple(str(var.aval) for var in jaxpr.invars),
          tuple(map(of, jaxpr.outvars)), jax.config.jax_enable_x64)


def _nested_constants(params: dict[str, Any]) -> Iterator[Any]:
  """The constants of the closed jaxprs in an equation's parameters (a
  jitted helper closing over an array), at any depth."""
  for parameter in params.values():
    for item in (parameter if isinstance(parameter, (tuple, list))
                 else (parameter,)):
      if isinstance(item, jax.extend.core.ClosedJaxpr):
        yield from item.consts
        item = item.jaxpr
      if isinstance(item, jax.extend.core.Jaxpr):
        for equation in item.eqns:
          yield from _nested_constants(equation.params)


def _in_stored_order(step: Callable[..., Any], order: Sequence[int]
                     ) -> Callable[..., Any]:
  """`step` taking and returning its stored state leaves in `order` (their
  positions in the state's leaf order)."""
  inverse = np.argsort(order)

  def reordered(params, grads, stored_leaves, *arguments):
    new_params, new_leaves = step(
        params, grads, [stored_leaves[i] for i in inverse], *arguments)
    return new_params, [new_leaves[i] for i in order]
  return reordered


def _positional_path(path: tuple[Any, ...], positions: dict[str, int]
                     ) -> tuple[tuple[str, Any], ...]:
  """A state leaf's tree path with each variable's key replaced by the
  variable's position: the same leaf of the same step under other variable
  names."""
  return tuple(
      ("variable", positions[entry.key])
      if isinstance(entry, jax.tree_util.DictKey) and entry.key in positions
      else ("entry", str(entry)) for entry in path)


def _replay(closed: Any, shapes: Any) -> Callable[..., Any]:
  """The traced step `closed` as a function of the step's arguments,
  returning its outputs' structure (`shapes`)."""
  run = jax.extend.core.jaxpr_as_fun(closed)
  outputs = jax.tree.structure(shapes)

  def step(*arguments):
    return jax.tree.unflatten(outputs, run(*jax.tree.leaves(arguments)))
  return step


def _polymorphic_shapes(sparse: tuple[bool, ...],
                        row_shapes: Sequence[tuple[int, ...]]) -> list[Any]:
  """jax2tf's `polymorphic_shapes` of the step's arguments: a sparse
  gradient's length is symbolic (one conversion serves every batch), its
  rows the variable's."""
  lengths = [f"({', '.join(map(str, (f'n{index}', *row_shape)))})"
             if is_sparse else None
             for index, (is_sparse, row_shape) in enumerate(zip(sparse,
                                                                 row_shapes))]
  return [None, lengths, None, None,
          [f"(n{index},)" for index, is_sparse in enumerate(sparse)
           if is_sparse], None]


def _convert(step: Callable[..., Any], polymorphic_shapes: list[Any]):
  """`step` as a `tf.function` (`_polymorphic_shapes`: its arguments')."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  return tf.function(
      to_tensorflow(step, polymorphic_shapes=polymorphic_shapes),
      autograph=False)


def to_tensorflow(function: Callable[..., Any],
                  polymorphic_shapes: Any = None) -> Callable[..., Any]:
  """`function` (JAX) as a TensorFlow function: `jax2tf.convert`, one
  `XlaCallModule` op.

  Converted `with_gradient=True` though nothing differentiates it: without
  a gradient jax2tf wraps every output in a `PreventGradient` op, which
  TensorFlow's XLA compiler has no kernel of its own for and lowers through
  its MLIR pipeline one op at a time (2.5 ms each, measured: ResNet-50's
  fused step spent 1.0 s of its first call there).
  """
  from jax.experimental import jax2tf  # pylint: disable=import-outside-toplevel
  return jax2tf.convert(function, with_gradient=True,
                        polymorphic_shapes=polymorphic_shapes,
                        native_serialization_platforms=_export_platforms())


def _export_platforms() -> tuple[str, ...] | None:
  """The platforms to export the step for: the CPU where TensorFlow has no
  accelerator. jax2tf's default, JAX's default backend, is wrong where JAX
  has a GPU (jax[cuda]) and TensorFlow does not: TensorFlow then refuses to
  run the step. With an accelerator in TensorFlow, JAX's default backend as
  before."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  if any(tf.config.list_physical_devices(kind) for kind in ("GPU", "TPU")):
    return None
  return ("cpu",)


def creation_order(leaves: Sequence[StateLeaf], slots_by_variable: bool,
                   shared_first: bool) -> list[int]:
  """The order to create the stored leaves' variables in, native's: the
  slots of one variable after another (`slots_by_variable`, Keras 3's
  `add_optimizer_variables`) or each slot for every variable in turn
  (OptimizerV2's `_create_slots` loops), variables in their list's order
  (the state's dicts hold them sorted by path); the leaves of no variable
  (Nadam's momentum cache) before the slots if `shared_first`, else
  after."""
  first: dict[str, int] = {}
  for index, leaf in enumerate(leaves):
    first.setdefault(leaf.name, index)

  def key(index):
    leaf = leaves[index]
    if leaf.slot_of is None:
      return (0 if shared_first else 2, index)
    if slots_by_variable:
      return (1, leaf.slot_of, first[leaf.name])
    return (1, first[leaf.name], leaf.slot_of)

  return sorted((i for i, leaf in enumerate(leaves) if leaf.stored), key=key)


def _numpy_dtype(dtype: Any) -> np.dtype:
  """A numpy dtype from a TensorFlow, Keras (string) or numpy one."""
  return np.dtype(getattr(dtype, "as_numpy_dtype", dtype))


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


def unique_keys(names: Sequence[str]) -> list[str]:
  """Variable names as dict keys, made unique by a `#n` suffix if needed."""
  seen: dict[str, int] = {}
  keys = []
  for name in names:
    count = seen.get(name, 0)
    seen[name] = count + 1
    keys.append(name if count == 0 else f"{name}#{count}")
  return keys
