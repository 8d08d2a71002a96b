"""Adamax: `keras.optimizers.Adamax` (and legacy's, through its slot names)."""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxopt_port import _checks
from jaxopt_port._base import (UpdateStep, cast_like, one_minus,
                               with_keras_base_arguments)


class AdamaxSlots(NamedTuple):
  momentum: optax.Params
  norm: optax.Params


def adamax_update_step(beta_1: Any, beta_2: Any, epsilon: Any,
                       slots: type[NamedTuple] = AdamaxSlots,
                       complement: Callable[[Any, jax.Array], jax.Array]
                       = one_minus) -> UpdateStep:
  """Adamax's update step (both generations; the legacy kernel rounds
  `1 - beta_1` in float32, see `complement`). With `t = iteration + 1`::

    m = m + (g - m) * (1 - beta_1)
    u = max(beta_2 * u, |g|)
    p = p - lr * m / ((1 - beta_1**t) * (u + epsilon))
  """

  def build(params):
    zeros = optax.tree.zeros_like(params)
    return slots(zeros, zeros)

  def update(grads, state, params, learning_rate, iteration):
    del params
    momentum, norm = state
    step = (iteration + 1).astype(jnp.float32)
    momentum = jax.tree.map(lambda g, m: m + (g - m) * complement(beta_1, g),
                            grads, momentum)
    norm = jax.tree.map(
        lambda g, u: jnp.maximum(cast_like(beta_2, u) * u, jnp.abs(g)),
        grads, norm)

    def step_of(m, u):
      power = jnp.power(cast_like(beta_1, m), step.astype(m.dtype))
      return -(cast_like(learning_rate, m) * m) / (
          (1 - power) * (u + cast_like(epsilon, u)))

    return jax.tree.map(step_of, momentum, norm), slots(momentum, norm)

  return UpdateStep(build, update, elementwise=True)


@with_keras_base_arguments(learning_rate=0.001)
def adamax(beta_1: float = 0.9, beta_2: float = 0.999,
           epsilon: float = 1e-7) -> UpdateStep:
  """Adamax, as `keras.optimizers.Adamax`: Adam with the infinity norm.

  With `t` the 1-based step::

    m = m + (g - m) * (1 - beta_1)
    u = max(beta_2 * u, |g|)
    p = p - learning_rate * m / ((1 - beta_1**t) * (u + epsilon))

  (`optax.adamax` adds epsilon to `u` the same way but bias-corrects `m`
  before the division; defaults eps=1e-8.)

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    beta_1: Decay of the first moment, in [0, 1).
    beta_2: Decay of the infinity norm, in [0, 1).
    epsilon: >= 0.

  Reference: Kingma and Ba, 2014, "Adam: A Method for Stochastic
  Optimization", section 7.1.
  """
  _checks.check_moment_arguments(beta_1, beta_2, epsilon)
  return adamax_update_step(beta_1, beta_2, epsilon)
