"""TF Addons' optimizer wrappers: `MovingAverage`, `SWA` and `Lookahead`,
for any optax transformation.

Each runs the inner transformation, then acts on the parameters it produced,
as TFA's wrappers act on the variables after the inner optimizer's update
within the same step (reading the step count before it is incremented).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxopt_port import _checks
from jaxopt_port._init import optax_init
from jaxopt_port._tree import map_leaves


class AveragedState(NamedTuple):
  inner_state: Any
  average: optax.Params  # Starts at the params, as TFA's "average" slot.
  iterations: jax.Array  # Steps taken, as the inner optimizer's count.


class LookaheadState(NamedTuple):
  inner_state: Any
  slow: optax.Params  # The slow weights, starting at the params.
  iterations: jax.Array


def average_params(state: AveragedState) -> optax.Params:
  """The averaged parameters of `moving_average` or `swa` (what TFA's
  `assign_average_vars` assigns to the model's variables)."""
  return state.average


def averaging(optimizer: optax.GradientTransformation, name: str,
              new_average, initial_average=lambda params: params
              ) -> optax.GradientTransformationExtraArgs:
  """`optimizer`, then `average = new_average(average, new params, steps
  before this one)`; the average starts at `initial_average(params)`."""
  def init_fn(params):
    return AveragedState(optimizer.init(params), initial_average(params),
                         jnp.zeros([], jnp.int32))

  def update_fn(grads, state, params=None, **extra_args):
    _checks.require_params(params, f"{name} acts on the params")
    updates, inner_state = optimizer.update(grads, state.inner_state, params,
                                            **extra_args)
    average = new_average(state.average, optax.apply_updates(params, updates),
                          state.iterations)
    return updates, AveragedState(inner_state, average,
                                  optax.safe_increment(state.iterations))

  return optax.GradientTransformationExtraArgs(optax_init(init_fn),
                                              update_fn)


@_checks.numbers_checked
def moving_average(optimizer: optax.GradientTransformation,
                   average_decay: float = 0.99,
                   num_updates: int | None = None, start_step: int = 0,
                   dynamic_decay: bool = False
                   ) -> optax.GradientTransformationExtraArgs:
  """`tfa.optimizers.MovingAverage`: an exponential moving average of the
  parameters, kept in the state (read it with `average_params`).

  After each step of `optimizer`, with `k` the number of steps before this
  one::

    decay = 0 if k < start_step, else average_decay, capped by
            (1 + k - start_step) / (10 + k - start_step) with dynamic_decay
    average = average - (1 - decay) * (average - p)

  The average starts at the params, as TFA's slot does
  (`add_slot(var, "average", var.read_value())`). The params themselves
  follow `optimizer`.

  Args:
    optimizer: The transformation whose params are averaged.
    average_decay: In [0, 1].
    num_updates: TFA's deprecated count: if given (an int >= 0), the decay
      is `min(average_decay, (1 + num_updates) / (10 + num_updates))`,
      fixed at construction as in TFA.
    start_step: Steps before averaging starts (the average copies the
      params until then: decay 0), an int >= 0.
    dynamic_decay: Ramp the decay up from 0.1, as TFA does.
  """
  _checks.check_range("average_decay", average_decay, 0.0, 1.0)
  _checks.check_optional_int("start_step", start_step, 0)
  _checks.check_optional_int("num_updates", num_updates, 0)

  def new_average(average, params, count):
    k = count.astype(jnp.float32) - jnp.asarray(start_step, jnp.float32)
    decay = jnp.asarray(average_decay, jnp.float32)
    if num_updates is not None:
      updates = jnp.asarray(num_updates, jnp.float32)
      decay = jnp.minimum(decay, (1.0 + updates) / (10.0 + updates))
    if dynamic_decay:
      decay = jnp.minimum(decay, (1.0 + k) / (10.0 + k))
    decay = jnp.where(k < 0, 0.0, decay)
    return jax.tree.map(
        lambda a, p: a - (1.0 - decay).astype(a.dtype) * (a - p), average,
        params)

  return averaging(optimizer, "moving_average", new_average)


@_checks.numbers_checked
def swa(optimizer: optax.GradientTransformation, start_averaging: int = 0,
        average_period: int = 10) -> optax.GradientTransformationExtraArgs:
  """`tfa.optimizers.SWA`: stochastic weight averaging, kept in the state
  (read it with `average_params`; the bridge's `assign_average_vars` copies
  it into the variables).

  After each step of `optimizer`, with `k` the number of steps before this
  one: when `k >= start_averaging` and `k - start_averaging` is a multiple of
  `average_period`, the params are added to the running mean of snapshots,
  `average = (average * n + p) / (n + 1)`, `n` the snapshots so far. Before
  the first snapshot the average is the initial params (TFA's slot starts at
  the variable's value).

  Args:
    optimizer: The transformation whose params are averaged.
    start_averaging: Steps before the first snapshot, an int >= 0.
    average_period: Steps between snapshots, an int >= 1.

  Reference: Izmailov et al., 2018, "Averaging Weights Leads to Wider Optima
  and Better Generalization".
  """
  _checks.check_optional_int("start_averaging", start_averaging, 0)
  _checks.check_optional_int("average_period", average_period, 1)

  def new_average(average, params, count):
    start = jnp.asarray(start_averaging, jnp.int32)
    period = jnp.asarray(average_period, jnp.int32)
    snapshots = jnp.maximum(0, (count - start) // period)
    due = (count >= start) & (count == start + snapshots * period)
    n = snapshots.astype(jnp.float32)
    return jax.tree.map(
        lambda a, p: jnp.where(due, (a * n.astype(a.dtype) + p)
                               / (n + 1.0).astype(a.dtype), a),
        average, params)

  return averaging(optimizer, "swa", new_average)


@_checks.numbers_checked
def lookahead(optimizer: optax.GradientTransformation, sync_period: int = 6,
              slow_step_size: float = 0.5
              ) -> optax.GradientTransformationExtraArgs:
  """`tfa.optimizers.Lookahead`: every `sync_period` steps the fast params
  (those `optimizer` moves) and the slow ones both jump to
  `slow + slow_step_size * (fast - slow)`.

  (`optax.lookahead` keeps both sets of params in a `LookaheadParams`
  instead; this one keeps the slow params in the state, as TFA's slot does.)

  Args:
    optimizer: The inner ("fast") transformation.
    sync_period: Steps between synchronizations, an int >= 1.
    slow_step_size: In [0, 1].

  Reference: Zhang et al., 2019, "Lookahead Optimizer: k steps forward, 1
  step back".
  """
  _checks.check_optional_int("sync_period", sync_period, 1)
  _checks.check_range("slow_step_size", slow_step_size, 0.0, 1.0)

  def init_fn(params):
    return LookaheadState(optimizer.init(params), params,
                          jnp.zeros([], jnp.int32))

  def update_fn(grads, state, params=None, **extra_args):
    _checks.require_params(params, "lookahead acts on the params")
    updates, inner_state = optimizer.update(grads, state.inner_state, params,
                                            **extra_args)
    step = state.iterations + 1
    period = jnp.asarray(sync_period, jnp.int32)
    sync = (step // period) * period == step

    def synchronize(update, slow, p):
      fast = p + update
      back = slow + jnp.asarray(slow_step_size, slow.dtype) * (fast - slow)
      return jnp.where(sync, back - p, update), jnp.where(sync, back, slow)

    updates, slow = map_leaves(synchronize, 2, updates, state.slow, params)
    return updates, LookaheadState(inner_state, slow,
                                   optax.safe_increment(state.iterations))

  return optax.GradientTransformationExtraArgs(optax_init(init_fn),
                                              update_fn)
