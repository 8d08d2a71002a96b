"""TF Recommenders' `tensorflow_recommenders.experimental.optimizers.
ClippyAdagrad`."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxopt_port import _checks
from jaxopt_port._base import UpdateStep, cast_like, with_keras_base_arguments
from jaxopt_port._tree import map_leaves


class ClippyAdagradSlots(NamedTuple):
  accumulator: optax.Params
  # With `export_clipping_factors`: each parameter's last clipping factor.
  clipping_factor: optax.Params | None


def _shrunk(delta: jax.Array, param: jax.Array, precondition: jax.Array,
            variable_relative_threshold: float,
            accumulator_relative_threshold: float,
            absolute_threshold: float) -> tuple[jax.Array, jax.Array]:
  """TFRS's `shrink_by_references`: `delta` scaled by the largest factor in
  (0, 1] keeping every element within its reference bound."""
  bound = (cast_like(absolute_threshold, delta)
           + jnp.abs(param) * cast_like(variable_relative_threshold, delta)
           + jnp.abs(precondition)
           * cast_like(accumulator_relative_threshold, delta))
  magnitude = jnp.abs(delta)
  safe = jnp.where(magnitude == 0, 1.0, magnitude)
  per_element = jnp.where(magnitude == 0, 1.0, bound / safe)
  scale = jnp.minimum(1.0, jnp.min(per_element, initial=jnp.inf))
  return delta * scale, scale.astype(delta.dtype)


@with_keras_base_arguments(learning_rate=0.001, sparse_rows="rows")
def clippy_adagrad(initial_accumulator_value: float = 0.1,
                   variable_relative_threshold: float = 0.1,
                   accumulator_relative_threshold: float = 0.0,
                   absolute_threshold: float = 1e-7, epsilon: float = 1e-7,
                   export_clipping_factors: bool = False,
                   clip_accumulator_update: bool = False,
                   use_standard_accumulator_update: bool = False
                   ) -> UpdateStep:
  """Clippy Adagrad, as TF Recommenders' `ClippyAdagrad` (0.7.7)::

    a = a + g**2                          (use_standard_accumulator_update)
    d = lr * g / sqrt(a + epsilon)
    s = min(1, min_i (absolute_threshold + |p_i| * variable_relative_threshold
                      + |1 / sqrt(a_i + epsilon)| *
                        accumulator_relative_threshold) / |d_i|)
    a = a + (g * s if clip_accumulator_update else g)**2     (otherwise)
    p = p - s * d

  One factor `s` per parameter (per its touched rows for a sparse
  gradient, as TFRS gathers them), kept as the `clipping_factor` slot with
  `export_clipping_factors`.

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    initial_accumulator_value: The accumulators' start.
    variable_relative_threshold, accumulator_relative_threshold,
      absolute_threshold: The clipping bound's factors, >= 0.
    epsilon: Added to the accumulator under the root.
    export_clipping_factors: Keep each parameter's clipping factor.
    clip_accumulator_update: Accumulate the clipped gradient.
    use_standard_accumulator_update: Accumulate before the step, as Adagrad
      (not with `clip_accumulator_update`).

  Reference: Tang et al., 2023, "Improving Training Stability for
  Multitask Ranking Models in Recommender Systems" (arXiv:2302.09178).
  """
  if clip_accumulator_update and use_standard_accumulator_update:
    raise ValueError(
        "clip_accumulator_update and use_standard_accumulator_update cannot "
        "both be set to True.")
  # TFRS's words (it raises them at the first step).
  for name, value in (("variable_relative_threshold",
                       variable_relative_threshold),
                      ("accumulator_relative_threshold",
                       accumulator_relative_threshold)):
    _checks.check_range(name, value, 0.0, message=(
        "relative_factors must all be non-negative. ({name}={value})"))
  _checks.check_range("absolute_threshold", absolute_threshold, 0.0,
                      message="absolute_factor must be non-negative. "
                      "({name}={value})")

  def build(params):
    return ClippyAdagradSlots(
        jax.tree.map(lambda p: jnp.full_like(p, initial_accumulator_value),
                     params),
        jax.tree.map(lambda p: jnp.zeros([], p.dtype), params)
        if export_clipping_factors else None)

  def update(grads, slots, params, learning_rate, iteration):
    del iteration
    _checks.require_params(params, "clippy_adagrad bounds its step by the "
                           "params")

    def leaf_step(g, accumulator, p):
      if use_standard_accumulator_update:
        accumulator = accumulator + g * g
      precondition = jax.lax.rsqrt(accumulator + cast_like(epsilon, g))
      delta = cast_like(learning_rate, g) * g * precondition
      clipped, scale = _shrunk(delta, p, precondition,
                               variable_relative_threshold,
                               accumulator_relative_threshold,
                               absolute_threshold)
      if not use_standard_accumulator_update:
        accumulated = g * scale if clip_accumulator_update else g
        accumulator = accumulator + accumulated * accumulated
      return -clipped, accumulator, scale

    updates, accumulators, scales = map_leaves(
        leaf_step, 3, grads, slots.accumulator, params)
    return updates, ClippyAdagradSlots(
        accumulators, scales if export_clipping_factors else None)

  # The clipping factor needs every element's old accumulator before any
  # new one is written.
  return UpdateStep(build, update, reads_old_slots=True)
