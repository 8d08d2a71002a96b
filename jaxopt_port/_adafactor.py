"""Adafactor: `keras.optimizers.Adafactor`."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxopt_port import _checks
from jaxopt_port._base import UpdateStep, cast_like, with_keras_base_arguments
from jaxopt_port._tree import map_leaves


class AdafactorSlots(NamedTuple):
  # In the order Keras 3 creates them for each variable.
  row_moments: optax.Params  # Shape p.shape[:-1]; a scalar below 2-D.
  column_moments: optax.Params  # Shape p.shape[:-2] + p.shape[-1:]; same.
  velocity: optax.Params  # The second moment, or its factored reconstruction.


def _factored(leaf: Any) -> bool:
  return jnp.ndim(leaf) >= 2


def _rms(x: jax.Array) -> jax.Array:
  return jnp.sqrt(jnp.mean(jnp.square(x)))


@with_keras_base_arguments(learning_rate=0.001)
def adafactor(beta_2_decay: float = -0.8, epsilon_1: float = 1e-30,
              epsilon_2: float = 1e-3, clip_threshold: float = 1.0,
              relative_step: bool = True) -> UpdateStep:
  """Adafactor, as `keras.optimizers.Adafactor`.

  With `t` the 1-based step, per parameter `p` and gradient `g`::

    rho = min(learning_rate, 1 / sqrt(t))
    alpha = max(epsilon_2, rms(p)) * rho
    beta = 1 - t**beta_2_decay
    s = g**2 + epsilon_1
    p of rank >= 2 (the last two axes factored):
      r = beta * r + (1 - beta) * mean(s, axis=-1)
      c = beta * c + (1 - beta) * mean(s, axis=-2)
      v = (r / mean(r, axis=-1))[..., None] * c[..., None, :]
    otherwise:
      v = beta * v + (1 - beta) * s
    u = g / sqrt(v)
    p = p - alpha * u / max(1, rms(u) / clip_threshold)

  State: `v` for every parameter (Keras's "velocity") and the row and column
  moments `r`, `c` of the factored ones; below rank 2 those are unused
  int32 scalars (Keras's placeholders there). In Keras 3.15 `relative_step`
  changes nothing: the step is capped by `1 / sqrt(t)` either way (the cap
  is applied twice when it is True); it is kept for the configuration.
  (`optax.adafactor` differs in most details: decay rate 0.8 with the
  published schedule, momentum, an absolute-step scaling, and
  `min_dim_size_to_factor`.)

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    beta_2_decay: Exponent of the second moment's decay schedule (< 0).
    epsilon_1: Added to the squared gradients, >= 0.
    epsilon_2: Lower bound of the parameter scale, >= 0.
    clip_threshold: Update clipping threshold (> 0), independent of Keras's
      `clipnorm`.
    relative_step: Kept for the configuration (see above).

  Reference: Shazeer and Stern, 2018, "Adafactor: Adaptive Learning Rates
  with Sublinear Memory Cost".
  """
  _checks.check_range("epsilon_1", epsilon_1, 0.0)
  _checks.check_range("epsilon_2", epsilon_2, 0.0)
  _checks.check_range("clip_threshold", clip_threshold, 0.0, low_open=True)
  del relative_step

  def build(params):
    # Reduced from the parameter, so that the moments take its sharding
    # along their axes.
    # Below rank 2, Keras 3.15's placeholders: int32 scalars.
    def rows(p):
      return jnp.zeros_like(p).sum(axis=-1) if _factored(p) else jnp.zeros(
          (), jnp.int32)

    def columns(p):
      return jnp.zeros_like(p).sum(axis=-2) if _factored(p) else jnp.zeros(
          (), jnp.int32)

    return AdafactorSlots(jax.tree.map(rows, params),
                          jax.tree.map(columns, params),
                          optax.tree.zeros_like(params))

  def update(grads, slots, params, learning_rate, iteration):
    step = (iteration + 1).astype(jnp.float32)

    def leaf_step(g, p, r, c, v):
      t = step.astype(p.dtype)
      rho = jnp.minimum(cast_like(learning_rate, p), 1 / jnp.sqrt(t))
      alpha = jnp.maximum(cast_like(epsilon_2, p), _rms(p)) * rho
      squares = jnp.square(g) + cast_like(epsilon_1, g)
      beta = 1 - jnp.power(t, cast_like(beta_2_decay, p))
      if _factored(p):
        r = beta * r + (1 - beta) * jnp.mean(squares, axis=-1)
        c = beta * c + (1 - beta) * jnp.mean(squares, axis=-2)
        v = (jnp.expand_dims(r / jnp.mean(r, axis=-1, keepdims=True), -1)
             * jnp.expand_dims(c, -2))
      else:
        v = beta * v + (1 - beta) * squares
      u = g / jnp.sqrt(v)
      u = u / jnp.maximum(1.0, _rms(u) / cast_like(clip_threshold, u))
      return -(alpha * u), v, r, c

    _checks.require_params(params, "adafactor scales its step by the params' "
                           "RMS")
    updates, velocity, rows, columns = map_leaves(leaf_step, 4, grads, params,
                                                  *slots)
    return updates, AdafactorSlots(rows, columns, velocity)

  return UpdateStep(build, update)
