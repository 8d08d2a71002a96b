"""What a Keras base optimizer class does around each optimizer's update step.

A Keras optimizer subclass writes two things, `build` (its slot variables) and
`update_step` (the formula); the base class owns the rest: the iteration
counter, learning-rate schedules, loss scaling, gradient accumulation,
clipping, weight decay and the moving average of the weights. Here an
optimizer's own part is an `UpdateStep`, and `keras_transform` /
`legacy_transform` wrap it into one optax transformation with exactly the
semantics of `keras.optimizers.Optimizer` (Keras 3) and
`tf_keras.optimizers.legacy.Optimizer` (OptimizerV2).

`with_keras_base_arguments` and `with_legacy_base_arguments` declare a public
optimizer from a function that returns its `UpdateStep`, adding the base
arguments to its signature so `optax.inject_hyperparams` sees every argument.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any, Callable, NamedTuple, Union

import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxopt_port import _checks, _packed, _row_sparse
from jaxopt_port._sharding import trees_laid_out_like
from jaxopt_port._init import optax_init
from jaxopt_port._tree import map_param_copies

Schedule = Callable[[jax.Array], jax.Array]
ScalarOrSchedule = Union[float, jax.Array, Schedule]
Declaration = Callable[[Callable[..., "UpdateStep"]],
                       Callable[..., optax.GradientTransformationExtraArgs]]


class UpdateStep(NamedTuple):
  """An optimizer's own part, as a Keras optimizer subclass writes it.

  Attributes:
    build: `build(params) -> slots`, the optimizer's own state (Keras's slot
      variables), a NamedTuple of trees shaped like `params`.
    update: `update(grads, slots, params, learning_rate, iteration) ->
      (updates, slots)`: Keras's `update_step` for the whole tree. `updates`
      are added to the params (sign and learning rate included);
      `iteration` is Keras's `optimizer.iterations` (0 on the first step).
    weight_decay_rates: For an optimizer that decays each parameter at its own
      rate (Muon), `weight_decay_rates(params) -> tree of rates` (0 for none);
      it replaces the base argument `weight_decay` in Keras's decay
      `p = p - p * rate * lr`. None: every parameter decays by
      `weight_decay`.
    elementwise: Each element's update depends on that element alone (and on
      scalars such as the step), so `jaxopt_port.packed` may run the step on
      one flat buffer per dtype.
    sparse_rows: How a `RowSparse` gradient is applied, as the native class
      applies `tf.IndexedSlices`: `"rows"` (touched rows of the parameter
      and its slots only), `"params"` (slots everywhere, the parameter on
      touched rows), `"dense"` or `"touched"` (dense, and `update` takes
      `touched_rows`, a tree of booleans per row, True for a dense
      gradient); see `jaxopt_port.RowSparse`. Set by the declaration
      (`with_legacy_base_arguments(..., sparse_rows=...)`).
    reads_old_slots: The updates read slots as they were before the step
      (Lion's direction interpolates the old momentum). Called with
      `applied_as_is=True`, the transform then makes the new slots follow
      the new params (`slots_after_params`), so that XLA writes them in
      place instead of copying the old ones first.
    complex_values: The step takes complex parameters and gradients, in
      complex arithmetic (`g**2` is `g * g`, the principal square root), as
      TensorFlow's kernels of tf_keras's SGD, Adagrad, Adadelta and RMSprop
      do; other steps refuse them. Set by the declaration
      (`with_legacy_base_arguments(..., complex_values=True)`).
  """
  build: Callable[[optax.Params], Any]
  update: Callable[..., tuple[optax.Updates, Any]]
  weight_decay_rates: Callable[[optax.Params], Any] | None = None
  elementwise: bool = False
  sparse_rows: str = _row_sparse.DENSE
  reads_old_slots: bool = False
  complex_values: bool = False


class KerasState(NamedTuple):
  """State of a Keras 3 optimizer: its base-class variables and its slots."""
  iterations: jax.Array  # shape=(), dtype=jnp.int32. Every call, as Keras's `_iterations`.
  slots: Any  # The UpdateStep's own state.
  accumulated_gradients: optax.Updates | None  # With gradient_accumulation_steps.
  average: optax.Params | None  # Moving average of the params, with use_ema.


class LegacyState(NamedTuple):
  """State of an OptimizerV2 optimizer: its iteration count and its slots."""
  iterations: jax.Array  # shape=(), dtype=jnp.int32.
  slots: Any


# name: (default, annotation) of the arguments Keras's base classes take.
KERAS_BASE_ARGUMENTS: dict[str, tuple[Any, str]] = {
    "weight_decay": (None, "float | None"),
    "clipnorm": (None, "float | None"),
    "clipvalue": (None, "float | None"),
    "global_clipnorm": (None, "float | None"),
    "use_ema": (False, "bool"),
    "ema_momentum": (0.99, "float"),
    "ema_overwrite_frequency": (None, "int | None"),
    "loss_scale_factor": (None, "float | None"),
    "gradient_accumulation_steps": (None, "int | None"),
}

LEGACY_BASE_ARGUMENTS: dict[str, tuple[Any, str]] = {
    "lr": (None, "float | None"),
    "decay": (0.0, "float"),
    "clipnorm": (None, "float | None"),
    "clipvalue": (None, "float | None"),
    "global_clipnorm": (None, "float | None"),
}

KERAS_BASE_ARGUMENTS_DOC = """
  Keras 3 base arguments (keyword-only, as in `keras.optimizers.Optimizer`):
    weight_decay: If set, every step first sets `p = p - p * weight_decay * lr`.
    clipnorm: If set (> 0), each gradient leaf is rescaled so its L2 norm is at
      most `clipnorm`. At most one of the three clipping arguments is set.
    clipvalue: If set (> 0), gradients are clipped elementwise to
      `[-clipvalue, clipvalue]`.
    global_clipnorm: If set (> 0), all gradients are rescaled together so their
      global L2 norm is at most `global_clipnorm`.
    use_ema: Keep an exponential moving average of the parameters in the state
      (`state.average`), as Keras does.
    ema_momentum: The average's momentum, in [0, 1]: `average = ema_momentum *
      average + (1 - ema_momentum) * p` (the first step copies `p`).
    ema_overwrite_frequency: With `use_ema`, every this many (accumulated)
      iterations the parameters are overwritten by their average.
    loss_scale_factor: If set, gradients are divided by it first (the loss was
      multiplied by it).
    gradient_accumulation_steps: If set (an int >= 2), gradients are summed and
      the parameters move only every this many calls, by the mean gradient.
      Schedules see every call; bias corrections and EMA see
      `calls // gradient_accumulation_steps`, as in Keras.
"""

LEGACY_BASE_ARGUMENTS_DOC = """
  OptimizerV2 base arguments (keyword-only, as in
  `tf_keras.optimizers.legacy.Optimizer`):
    lr: Deprecated alias of `learning_rate`; when set it wins, with a warning.
    decay: Inverse-time decay, `lr / (1 + decay * iterations)`.
    clipvalue: If set (> 0), gradients are first clipped elementwise.
    clipnorm: If set (> 0), then each gradient leaf's L2 norm is clipped.
    global_clipnorm: If set (> 0), then the global norm is clipped. Not
      together with `clipnorm`.
"""


def learning_rate_at(learning_rate: ScalarOrSchedule, step: jax.Array) -> Any:
  """The learning rate at `step`: a schedule is called, a number is kept."""
  return learning_rate(step) if callable(learning_rate) else learning_rate


# The dtypes the ports compute in float32 (`_upcast`); the bridge keeps the
# state of such a variable in its dtype, as Keras does.
HALF_PRECISION = (np.dtype(jnp.float16), np.dtype(jnp.bfloat16))


def _upcast(tree: Any) -> Any:
  """Half-precision leaves in float32: moments and arithmetic stay float32."""
  return jax.tree.map(
      lambda x: jnp.asarray(x, jnp.float32)
      if x.dtype in HALF_PRECISION else jnp.asarray(x), tree)


def cast_like(scalar: Any, leaf: jax.Array) -> jax.Array:
  """`scalar` (a hyperparameter, maybe an injected array) in `leaf`'s dtype."""
  return jnp.asarray(scalar, leaf.dtype)


def by_zero(value: Any, at_zero: Callable[[], Any],
            otherwise: Callable[[], Any]) -> Any:
  """`at_zero()` where the hyperparameter `value` is 0, else `otherwise()`
  (trees of one layout): chosen when the transform is made for a Python
  number, by a select at every step for an array (`inject_hyperparams`'s,
  traced under `jit`). The state's layout then never depends on the value,
  and a slot that Keras keeps only for a nonzero value stays as it is at 0
  (its update at 0 passes it on unread)."""
  if _checks.is_python_zero(value):
    return at_zero()
  if isinstance(value, (int, float)):
    return otherwise()
  nonzero = jnp.asarray(value) != 0
  return jax.tree.map(lambda a, b: jnp.where(nonzero, b, a), at_zero(),
                      otherwise())


def divide_exactly(numerator: jax.Array, divisor: Any) -> jax.Array:
  """`numerator / divisor`, correctly rounded even for a constant divisor.

  XLA rewrites division by a compile-time constant into multiplication by its
  rounded reciprocal (90 / 30 becomes 3.0000002, and `ceil` then jumps a
  step); Keras divides. Tying the divisor to the numerator keeps it a
  runtime value (`0 * numerator` is not folded for floats).
  """
  numerator = jnp.asarray(numerator)
  return numerator / (jnp.asarray(divisor, numerator.dtype) + 0 * numerator)


def one_minus(value: Any, leaf: jax.Array) -> jax.Array:
  """`1 - value` as Keras 3 computes it: in Python for a number, then cast.

  (1 - 0.9 rounds to 0.1f this way; the TensorFlow kernels behind the legacy
  optimizers compute `1 - float32(0.9)` = 0.10000002f, see
  `one_minus_in_dtype`. Over 100 Adam steps the two differ by ~1e-6.)
  """
  if isinstance(value, (int, float)):
    return jnp.asarray(1 - value, leaf.dtype)
  return 1 - cast_like(value, leaf)


def one_minus_in_dtype(value: Any, leaf: jax.Array) -> jax.Array:
  """`1 - value` computed in `leaf`'s dtype, as OptimizerV2's kernels do."""
  return 1 - cast_like(value, leaf)


def clip_by_norm(grad: jax.Array, clipnorm: Any) -> jax.Array:
  """`tf.clip_by_norm`: grad * clipnorm / max(||grad||, clipnorm)."""
  squares = jnp.sum(grad * grad)
  positive = squares > 0
  norm = jnp.where(positive, jnp.sqrt(jnp.where(positive, squares, 1.0)),
                   squares)
  return grad * cast_like(clipnorm, grad) / jnp.maximum(
      norm, cast_like(clipnorm, grad))


def clip_by_global_norm(grads: optax.Updates, clipnorm: Any) -> optax.Updates:
  """`tf.clip_by_global_norm`; a non-finite norm makes every gradient NaN."""
  leaves = jax.tree.leaves(grads)
  if not leaves:
    return grads
  norm = jnp.sqrt(sum(jnp.sum(g * g) for g in leaves))
  clipnorm = jnp.asarray(clipnorm, norm.dtype)
  scale = clipnorm * jnp.minimum(1.0 / norm, 1.0 / clipnorm) + (norm - norm)
  return jax.tree.map(lambda g: g * scale.astype(g.dtype), grads)


def clip_by_value(grads: optax.Updates, clipvalue: Any) -> optax.Updates:
  return jax.tree.map(
      lambda g: jnp.clip(g, -cast_like(clipvalue, g), cast_like(clipvalue, g)),
      grads)


def _check_update_inputs(grads: Any, params: Any, param_shaped: list[Any],
                         name: str, complex_values: bool = False) -> None:
  _checks.check_gradient_dtypes(grads, params, complex_values)
  if params is not None:
    _checks.check_same_tree(params, grads, expected_name="params",
                            received_name="grads")
  elif param_shaped:
    # Some copies of the params' tree in the state hold leaves of other
    # shapes (Adafactor's factored moments, before its full one): the grads
    # must match one copy, and a mismatch is told against the first.
    errors = []
    for tree in param_shaped:
      try:
        _checks.check_same_tree(tree, grads,
                                expected_name=f"the {name} state",
                                received_name="grads")
        return
      except (TypeError, ValueError) as error:
        errors.append(error)
    raise errors[0]


def _skipping_missing_gradients(init_fn, update_fn):
  """`update_fn` where a None gradient leaf means "no gradient", as Keras
  skips a variable without one: its update is zero and its state leaves
  keep their values (counts still advance)."""
  is_none = lambda x: x is None  # pylint: disable=unnecessary-lambda-assignment

  def update_with_missing(grads, state, params=None, **extra_args):
    leaves, treedef = jax.tree.flatten(grads, is_leaf=is_none)
    if all(leaf is not None for leaf in leaves):
      return update_fn(grads, state, params, **extra_args)
    reference = params
    if reference is None:
      param_shaped = _param_shaped_trees(init_fn, state)
      if not param_shaped:
        raise ValueError("grads has None leaves (no gradient) and the state "
                         "holds no copy of the params to fill them from: "
                         "call update(grads, state, params).")
      reference = param_shaped[0]
    _checks.check_same_tree(reference, grads, expected_name="params",
                            received_name="grads")
    filled = treedef.unflatten([
        jnp.zeros_like(like) if grad is None else grad
        for grad, like in zip(leaves, treedef.flatten_up_to(reference))])
    missing = treedef.unflatten([leaf is None for leaf in leaves])
    updates, new_state = update_fn(filled, state, params, **extra_args)
    updates = jax.tree.map(lambda u, m: jnp.zeros_like(u) if m else u,
                           updates, missing)
    keep = map_param_copies(init_fn, new_state, missing, False)
    new_state = jax.tree.map(lambda k, new, old: old if k else new, keep,
                             new_state, state)
    return updates, new_state
  return update_with_missing


class _ParamsMarker:
  """Stands for the params tree in `init`, to find the state's copies of it."""


jax.tree_util.register_pytree_node(
    _ParamsMarker, lambda marker: ((), None), lambda _, __: _ParamsMarker())


def _param_shaped_trees(init_fn: Callable[[Any], Any], state: Any
                        ) -> list[Any]:
  """The subtrees of `state` that mirror the params (as optax's
  `tree_map_params` finds them: where `init` puts the params' structure)."""
  found = []

  def collect(marker, subtree):
    if isinstance(marker, _ParamsMarker):
      found.append(subtree)

  jax.tree.map(collect, init_fn(_ParamsMarker()), state,
               is_leaf=lambda x: isinstance(x, _ParamsMarker))
  return found


def weight_decay_term(param: jax.Array, rate: Any, learning_rate: Any
                      ) -> jax.Array:
  """Keras 3's weight decay of one variable as an update, `-param * rate *
  lr` (Keras assigns `variable - variable * weight_decay * lr`, the same
  number)."""
  return -(param * cast_like(rate, param) * cast_like(learning_rate, param))


def _copied(params: Any) -> Any:
  """Distinct buffers equal to `params` (`init` may see donated ones)."""
  return jax.tree.map(jnp.copy, params)


def _unscaled(grads: Any, loss_scale_factor: Any) -> Any:
  """Keras 3's first step: the gradients divided by `loss_scale_factor`."""
  if loss_scale_factor is None:
    return grads
  return jax.tree.map(lambda g: g / cast_like(loss_scale_factor, g), grads)


def _clipped(grads: Any, clipnorm: Any, clipvalue: Any,
             global_clipnorm: Any) -> Any:
  """Keras 3's clipping (at most one of the three is set)."""
  if clipnorm is not None:
    return jax.tree.map(lambda g: clip_by_norm(g, clipnorm), grads)
  if global_clipnorm is not None:
    return clip_by_global_norm(grads, global_clipnorm)
  if clipvalue is not None:
    return clip_by_value(grads, clipvalue)
  return grads


def _accumulated(apply: Callable[[Any, Any], tuple[Any, Any]], grads: Any,
                 state: "KerasState", steps: Any) -> tuple[Any, Any, Any]:
  """Keras 3's gradient accumulation: the gradients join the accumulators;
  every `steps`-th call applies their mean (`apply(grads, slots)`) and
  resets them, the other calls update nothing. Returns the updates, the
  slots and the accumulators.

  On an `Explicit` mesh both branches must give the same layouts: the
  updates are laid out as the gradients, the slots and accumulators as they
  came in (gradients laid out otherwise than the state, or a state made
  before the params were placed, keep their layouts). The arrays are the
  branches' operands, not closed over: outside `jit` a closed-over array is
  a constant of the branch, without its sharding in its type."""

  def update_branch(grads, slots, accumulated):
    mean = jax.tree.map(lambda g, a: divide_exactly(g + a, steps), grads,
                        accumulated)
    updates, new_slots = apply(mean, slots)
    return (trees_laid_out_like(updates, grads),
            trees_laid_out_like(new_slots, slots),
            optax.tree.zeros_like(accumulated))

  def accumulate_branch(grads, slots, accumulated):
    return (optax.tree.zeros_like(grads), slots, trees_laid_out_like(
        jax.tree.map(jnp.add, grads, accumulated), accumulated))

  return jax.lax.cond((state.iterations + 1) % steps == 0, update_branch,
                      accumulate_branch, grads, state.slots,
                      state.accumulated_gradients)


def _moving_average(average: Any, params: Any, updates: Any, iteration: Any,
                    momentum: Any, overwrite_frequency: Any,
                    first_copies: bool = True) -> tuple[Any, Any]:
  """Keras's EMA of the updated params (Keras 3's first update copies them
  if `first_copies`; tf_keras's averages from the initial params on);
  every `overwrite_frequency`-th iteration the updates move the params onto
  the average. Returns the average and the updates."""
  new_params = jax.tree.map(jnp.add, params, updates)

  def averaged(a, p):
    weight = cast_like(momentum, p)
    if first_copies:
      weight = (iteration != 0).astype(p.dtype) * weight
    return weight * a + (1 - weight) * p

  average = jax.tree.map(averaged, average, new_params)
  if overwrite_frequency is not None:
    overwrite = (iteration + 1) % overwrite_frequency == 0
    updates = jax.tree.map(lambda u, a, p: jnp.where(overwrite, a - p, u),
                           updates, average, params)
  return average, updates


def slots_after_params(slots: Any, params: Any, updates: Any,
                       iteration: Any) -> Any:
  """`slots` made to depend on the new params, `params + updates` as
  `optax.apply_updates` computes them (so that XLA computes them once).

  Where the params' update reads a slot's old value, nothing orders the
  params' loop before the loop that writes the new slot into the old one's
  (donated) buffer, and XLA copies the old slot first: a parameter-sized
  copy per slot and step, which JAX's CPU runtime also allocates afresh at
  every step. A slot that depends on the new params is written after them,
  in place. The dependency is a select that never takes the new params
  (`iteration` is never negative), so the slots keep their bits; it reads
  one element of them. If the caller applies other updates, the new params
  here are computed apart, from the old params, which XLA then copies: so
  the transforms do this only when told `applied_as_is=True`.
  """
  if params is None:
    return slots
  structure = jax.tree.structure(params)
  new_params = structure.flatten_up_to(optax.apply_updates(params, updates))

  def after(slot, new_param):
    if jnp.shape(slot) != jnp.shape(new_param) or jnp.size(new_param) == 0:
      return slot
    first = jnp.ravel(new_param)[0].astype(jnp.asarray(slot).dtype)
    return jnp.where(iteration >= 0, slot, first)

  def field_after(field):
    if jax.tree.structure(field) != structure:
      return field
    return structure.unflatten(
        [after(slot, new_param) for slot, new_param
         in zip(structure.flatten_up_to(field), new_params)])

  return type(slots)(*map(field_after, slots))


def keras_transform(
    update_step: UpdateStep,
    learning_rate: ScalarOrSchedule,
    *,
    weight_decay: Any = None,
    clipnorm: Any = None,
    clipvalue: Any = None,
    global_clipnorm: Any = None,
    use_ema: bool = False,
    ema_momentum: Any = 0.99,
    ema_overwrite_frequency: Any = None,
    loss_scale_factor: Any = None,
    gradient_accumulation_steps: Any = None,
    name: str = "optimizer",
) -> optax.GradientTransformationExtraArgs:
  """Wraps `update_step` with Keras 3's base optimizer semantics.

  Per call, in Keras's order (`BaseOptimizer.apply`): divide the gradients by
  `loss_scale_factor`; with accumulation, add them to the accumulators and stop
  unless this is the `gradient_accumulation_steps`-th call, where the mean is
  used and the accumulators reset; clip; apply weight decay; run the update
  step; update the moving average (and overwrite the params with it every
  `ema_overwrite_frequency` iterations); count the call.
  """
  _checks.check_learning_rate(learning_rate)
  _checks.check_range("weight_decay", weight_decay, 0.0)
  clip_arguments = {"clipnorm": clipnorm, "clipvalue": clipvalue,
                    "global_clipnorm": global_clipnorm}
  if sum(value is not None for value in clip_arguments.values()) > 1:
    raise ValueError(
        "Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. "
        f"Received: clipnorm={clipnorm}, clipvalue={clipvalue}, "
        f"global_clipnorm={global_clipnorm}")
  for argument, value in clip_arguments.items():
    _checks.check_range(argument, value, 0.0, low_open=True)
  _checks.check_range("ema_momentum", ema_momentum, 0.0, 1.0)
  _checks.check_optional_int("ema_overwrite_frequency",
                             ema_overwrite_frequency, 1)
  _checks.check_optional_int("gradient_accumulation_steps",
                             gradient_accumulation_steps, 2)
  _checks.check_range("loss_scale_factor", loss_scale_factor, 0.0,
                      low_open=True)
  if ema_overwrite_frequency is not None and not use_ema:
    raise ValueError(
        "`ema_overwrite_frequency` is set but `use_ema` is False: set "
        f"use_ema=True or leave ema_overwrite_frequency=None. Received: "
        f"ema_overwrite_frequency={ema_overwrite_frequency}")
  return keras_family_transform(
      update_step, learning_rate, weight_decay=weight_decay,
      clipnorm=clipnorm, clipvalue=clipvalue, global_clipnorm=global_clipnorm,
      use_ema=use_ema, ema_momentum=ema_momentum,
      ema_overwrite_frequency=ema_overwrite_frequency,
      loss_scale_factor=loss_scale_factor,
      gradient_accumulation_steps=gradient_accumulation_steps, name=name)


def keras_family_transform(
    update_step: UpdateStep, learning_rate: ScalarOrSchedule, *,
    weight_decay: Any, clipnorm: Any, clipvalue: Any, global_clipnorm: Any,
    use_ema: bool, ema_momentum: Any, ema_overwrite_frequency: Any,
    loss_scale_factor: Any = None, gradient_accumulation_steps: Any = None,
    average_from_params: bool = False, name: str = "optimizer",
) -> optax.GradientTransformationExtraArgs:
  """`keras_transform` after its checks, shared with tf_keras's 2.11+
  generation (`jaxopt_port.tf_keras.tf_keras_transform`), whose moving
  average starts from the params (`average_from_params`)."""
  accumulates = gradient_accumulation_steps is not None
  decays = (weight_decay is not None
            or update_step.weight_decay_rates is not None)

  def init_fn(params):
    _checks.check_float_params(params)
    params = _upcast(params)
    return KerasState(
        iterations=jnp.zeros([], jnp.int32),
        slots=update_step.build(params),
        accumulated_gradients=(
            optax.tree.zeros_like(params) if accumulates else None),
        average=(_copied(params) if use_ema and average_from_params
                 else optax.tree.zeros_like(params) if use_ema else None))

  def update_fn(grads, state, params=None, **extra_args):
    # A step declared "touched" learns which rows a sparse gradient touched.
    touched = {key: value for key, value in extra_args.items()
               if key == "touched_rows"}
    _check_update_inputs(
        grads, params,
        [] if params is not None else _param_shaped_trees(init_fn, state),
        name)
    if decays or use_ema:
      _checks.require_params(
          params, f"{name} with weight_decay or use_ema needs the current "
          "params")
    out_dtypes = jax.tree.map(lambda x: x.dtype,
                              grads if params is None else params)
    given_params = params
    grads = _upcast(grads)
    params = None if params is None else _upcast(params)
    lr = learning_rate_at(learning_rate, state.iterations)
    iteration = (state.iterations // gradient_accumulation_steps
                 if accumulates else state.iterations)

    def apply(grads, slots):
      grads = _clipped(grads, clipnorm, clipvalue, global_clipnorm)
      if not decays:
        return update_step.update(grads, slots, params, lr, iteration,
                                  **touched)
      rates = (update_step.weight_decay_rates(params)
               if update_step.weight_decay_rates is not None
               else jax.tree.map(lambda _: weight_decay, params))
      decay = jax.tree.map(lambda p, rate: weight_decay_term(p, rate, lr),
                           params, rates)
      updates, slots = update_step.update(
          grads, slots, jax.tree.map(jnp.add, params, decay), lr, iteration,
          **touched)
      return jax.tree.map(jnp.add, decay, updates), slots

    grads = _unscaled(grads, loss_scale_factor)
    if accumulates:
      updates, slots, accumulated = _accumulated(
          apply, grads, state, gradient_accumulation_steps)
    else:
      (updates, slots), accumulated = apply(grads, state.slots), None
    average = state.average
    if use_ema:
      average, updates = _moving_average(
          average, params, updates, iteration, ema_momentum,
          ema_overwrite_frequency, first_copies=not average_from_params)
    updates = jax.tree.map(lambda u, dtype: u.astype(dtype), updates,
                           out_dtypes)
    if update_step.reads_old_slots and extra_args.get("applied_as_is"):
      slots = slots_after_params(slots, given_params, updates,
                                 state.iterations)
    return updates, KerasState(
        iterations=optax.safe_increment(state.iterations), slots=slots,
        accumulated_gradients=accumulated, average=average)

  # Keras decays, averages and resets accumulators on every row.
  row_wise = not (decays or use_ema or accumulates)
  return _declared(update_step, clipnorm,
                   optax.GradientTransformationExtraArgs(
                       optax_init(init_fn),
                       _skipping_missing_gradients(init_fn, update_fn)),
                   sparse_rows=(update_step.sparse_rows if row_wise
                                else _row_sparse.DENSE))


def legacy_transform(
    update_step: UpdateStep,
    learning_rate: ScalarOrSchedule,
    *,
    lr: Any = None,
    decay: Any = 0.0,
    clipnorm: Any = None,
    clipvalue: Any = None,
    global_clipnorm: Any = None,
    name: str = "optimizer",
) -> optax.GradientTransformationExtraArgs:
  """Wraps `update_step` with OptimizerV2's semantics (`tf_keras` legacy).

  Per call: clip by value, then by norm, then by global norm (each if set);
  the learning rate is the schedule's value at `iterations`, divided by
  `1 + decay * iterations`; run the update step; count the call.
  """
  if lr is not None:
    warnings.warn("The `lr` argument is deprecated, use `learning_rate` "
                  "instead.", DeprecationWarning, stacklevel=3)
    learning_rate = lr
  _checks.check_learning_rate(learning_rate)
  _checks.check_range("decay", decay, 0.0)
  if clipnorm is not None and global_clipnorm is not None:
    raise ValueError(
        "Cannot accept both `clipnorm` and `global_clipnorm`. Received: "
        f"clipnorm={clipnorm}, global_clipnorm={global_clipnorm}")
  for argument, value in (("clipnorm", clipnorm), ("clipvalue", clipvalue),
                          ("global_clipnorm", global_clipnorm)):
    _checks.check_range(argument, value, 0.0, low_open=True)
  decays = not (_checks.concrete_number(decay) == 0.0)

  def init_fn(params):
    _checks.check_float_params(params, update_step.complex_values)
    return LegacyState(iterations=jnp.zeros([], jnp.int32),
                       slots=update_step.build(_upcast(params)))

  def update_fn(grads, state, params=None, **extra_args):
    # A step declared "touched" learns which rows a sparse gradient touched.
    touched = {key: value for key, value in extra_args.items()
               if key == "touched_rows"}
    _check_update_inputs(
        grads, params,
        [] if params is not None else _param_shaped_trees(init_fn, state),
        name, update_step.complex_values)
    out_dtypes = jax.tree.map(lambda x: x.dtype,
                              grads if params is None else params)
    grads = _upcast(grads)
    iteration = state.iterations
    lr_t = learning_rate_at(learning_rate, iteration)
    if decays:
      lr_t = lr_t / (1.0 + jnp.asarray(decay, jnp.float32)
                     * iteration.astype(jnp.float32))
    if clipvalue is not None:
      grads = clip_by_value(grads, clipvalue)
    if clipnorm is not None:
      grads = jax.tree.map(lambda g: clip_by_norm(g, clipnorm), grads)
    if global_clipnorm is not None:
      grads = clip_by_global_norm(grads, global_clipnorm)
    updates, slots = update_step.update(
        grads, state.slots, None if params is None else _upcast(params),
        lr_t, iteration, **touched)
    updates = jax.tree.map(lambda u, dtype: u.astype(dtype), updates,
                           out_dtypes)
    if update_step.reads_old_slots and extra_args.get("applied_as_is"):
      slots = slots_after_params(slots, params, updates, iteration)
    return updates, LegacyState(optax.safe_increment(iteration), slots)

  return _declared(update_step, clipnorm,
                   optax.GradientTransformationExtraArgs(
                       optax_init(init_fn),
                       _skipping_missing_gradients(init_fn, update_fn)),
                   sparse_rows=update_step.sparse_rows)


def _declared(update_step: UpdateStep, clipnorm: Any,
              transform: optax.GradientTransformationExtraArgs, *,
              sparse_rows: str) -> optax.GradientTransformationExtraArgs:
  """`transform` taking `RowSparse` gradients as `sparse_rows` says,
  declared elementwise if its step is and no norm is taken per variable."""
  transform = _row_sparse.with_row_sparse_gradients(transform, sparse_rows)
  if update_step.elementwise and clipnorm is None:
    return _packed.declare_elementwise(transform)
  return transform


SparseRows = Union[str, Callable[..., str]]


def _declare(wrap: Callable[..., optax.GradientTransformationExtraArgs],
             base_arguments: dict[str, Any], base_doc: str,
             learning_rate: float, defaults: dict[str, Any],
             sparse_rows: SparseRows, owns: tuple[str, ...] = (),
             complex_values: bool = False) -> Declaration:
  unknown = set(defaults) - set(base_arguments)
  if unknown:
    raise TypeError(f"Not base arguments: {sorted(unknown)}")
  if not callable(sparse_rows) and sparse_rows not in _row_sparse.MODES:
    raise ValueError(f"sparse_rows must be one of {_row_sparse.MODES} or a "
                     f"function of the arguments, got {sparse_rows!r}")

  def declare(declared_step: Callable[..., UpdateStep]):
    @_checks.numbers_checked
    @functools.wraps(declared_step)
    def make_update_step(**arguments):
      mode = (sparse_rows(**arguments) if callable(sparse_rows)
              else sparse_rows)
      return declared_step(**arguments)._replace(
          sparse_rows=mode, complex_values=complex_values)

    own = inspect.signature(make_update_step).parameters
    parameters = [] if "learning_rate" in own else [inspect.Parameter(
        "learning_rate", inspect.Parameter.POSITIONAL_OR_KEYWORD,
        default=learning_rate,  # REQUIRED (no default) for TF1's optimizers.
        annotation="ScalarOrSchedule")]
    parameters += list(own.values())
    parameters += [
        inspect.Parameter(argument, inspect.Parameter.KEYWORD_ONLY,
                          default=defaults.get(argument, default),
                          annotation=annotation)
        for argument, (default, annotation) in base_arguments.items()
        if argument not in own]
    signature = inspect.Signature(
        parameters, return_annotation=optax.GradientTransformationExtraArgs)

    base_numbers = _checks.numbers_among([p for p in parameters
                                          if p.name in base_arguments
                                          and p.name not in own])

    @functools.wraps(make_update_step)
    def factory(*args, **kwargs):
      bound = _checks.bound_arguments(make_update_step, signature, args,
                                      kwargs)
      bound.apply_defaults()
      arguments = dict(bound.arguments)
      # Before `wrap`, whose learning-rate check would call `lr` by the
      # name it stands for.
      _checks.check_numbers(base_numbers, arguments)
      rate = (arguments["learning_rate"] if "learning_rate" in own
              else arguments.pop("learning_rate"))
      base = {argument: (base_arguments[argument][0] if argument in owns
                         else arguments[argument] if argument in own
                         else arguments.pop(argument))
              for argument in base_arguments}
      return wrap(make_update_step(**arguments), rate,
                  name=make_update_step.__name__, **base)

    factory.__signature__ = signature
    factory.__doc__ = (make_update_step.__doc__ or "") + base_doc
    # The bare algorithm, for wrappers whose host applies the base arguments
    # itself (the Keras bridge): wrap_update_step(make_update_step(...), lr).
    factory.make_update_step = make_update_step
    factory.complex_values = complex_values
    factory.wrap_update_step = wrap
    factory.base_arguments = tuple(base_arguments)
    return factory

  return declare


# A `learning_rate` without default, as TF1's optimizers take it.
REQUIRED = inspect.Parameter.empty

TF1_ARGUMENTS_DOC = """
  As TF1's `tf.compat.v1.train` optimizers: no clipping or decay arguments;
  `learning_rate` may be a schedule of the step count.
"""


def with_keras_base_arguments(*, learning_rate: float,
                              sparse_rows: SparseRows = _row_sparse.DENSE,
                              **defaults: Any) -> Declaration:
  """Declares a Keras 3 optimizer from the function making its `UpdateStep`.

  The public function takes `learning_rate` (default as given) first, then the
  decorated function's arguments, then the Keras 3 base arguments
  (`KERAS_BASE_ARGUMENTS`, defaults overridable here) as keyword-only
  arguments. A base argument (or `learning_rate`) the decorated function also
  declares is passed to it too and keeps its position (AdamW's
  `weight_decay`). `sparse_rows` says how the native class applies sparse
  gradients (`UpdateStep.sparse_rows`), or is a function of the decorated
  function's arguments that says it.
  """
  return _declare(keras_transform, KERAS_BASE_ARGUMENTS,
                  KERAS_BASE_ARGUMENTS_DOC, learning_rate, defaults,
                  sparse_rows)


def with_legacy_base_arguments(*, learning_rate: float,
                               sparse_rows: SparseRows = _row_sparse.DENSE,
                               owns: tuple[str, ...] = (),
                               complex_values: bool = False,
                               **defaults: Any) -> Declaration:
  """As `with_keras_base_arguments`, for OptimizerV2 (`lr`, `decay`, clips).
  A base argument in `owns` means only what the decorated function makes of
  it (legacy Nadam's `decay`, its schedule decay): the base keeps its
  default. `complex_values`: see `UpdateStep`."""
  return _declare(legacy_transform, LEGACY_BASE_ARGUMENTS,
                  LEGACY_BASE_ARGUMENTS_DOC, learning_rate, defaults,
                  sparse_rows, owns, complex_values)


def with_tf1_arguments(*, learning_rate: Any = REQUIRED,
                       sparse_rows: SparseRows = _row_sparse.ROWS
                       ) -> Declaration:
  """As `with_legacy_base_arguments`, for a TF1 `compat.v1.train` optimizer:
  OptimizerV2's step semantics without its base arguments; `learning_rate`
  is required, as in TF1. TF1's sparse kernels touch only the indexed rows
  (Adam's aside)."""
  return _declare(legacy_transform, {}, TF1_ARGUMENTS_DOC, learning_rate, {},
                  sparse_rows)
