"""LAMB: `keras.optimizers.Lamb`."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxopt_port import _checks
from jaxopt_port._base import (UpdateStep, cast_like, one_minus,
                               with_keras_base_arguments)


class LambSlots(NamedTuple):
  momentum: optax.Params
  velocity: optax.Params


def lamb_update_step(beta_1: Any, beta_2: Any, epsilon: Any) -> UpdateStep:
  """Keras 3's LAMB update step (reads the parameters for the trust ratio).

  With `t = iteration + 1`, per parameter::

    m = m + (g - m) * (1 - beta_1);  v = v + (g**2 - v) * (1 - beta_2)
    u = (m / (1 - beta_1**t)) / (sqrt(v / (1 - beta_2**t)) + epsilon)
    r = ||p|| / ||u|| if both norms are > 0, else 1
    p = p - r * lr * u
  """

  def build(params):
    zeros = optax.tree.zeros_like(params)
    return LambSlots(zeros, zeros)

  def update(grads, slots, params, learning_rate, iteration):
    _checks.require_params(params, "lamb's trust ratio reads the parameters")
    step = (iteration + 1).astype(jnp.float32)
    momentum = jax.tree.map(lambda g, m: m + (g - m) * one_minus(beta_1, g),
                            grads, slots.momentum)
    velocity = jax.tree.map(
        lambda g, v: v + (g * g - v) * one_minus(beta_2, g), grads,
        slots.velocity)

    def step_of(p, m, v):
      t = step.astype(p.dtype)
      m_hat = m / (1.0 - jnp.power(cast_like(beta_1, p), t))
      v_sqrt = jnp.sqrt(v / (1.0 - jnp.power(cast_like(beta_2, p), t))) + (
          cast_like(epsilon, p))
      direction = m_hat / v_sqrt
      p_norm = jnp.sqrt(jnp.sum(p * p))
      d_norm = jnp.sqrt(jnp.sum(direction * direction))
      ratio = jnp.where(p_norm > 0,
                        jnp.where(d_norm > 0, p_norm / d_norm, 1.0), 1.0)
      return -(ratio * cast_like(learning_rate, p) * direction)

    updates = jax.tree.map(step_of, params, momentum, velocity)
    return updates, LambSlots(momentum, velocity)

  return UpdateStep(build, update)


@with_keras_base_arguments(learning_rate=0.001)
def lamb(beta_1: float = 0.9, beta_2: float = 0.999,
         epsilon: float = 1e-7) -> UpdateStep:
  """LAMB, as `keras.optimizers.Lamb`: Adam's direction scaled per parameter
  by the trust ratio `||p|| / ||u||`.

  With `t` the 1-based step::

    u = (m / (1 - beta_1**t)) / (sqrt(v / (1 - beta_2**t)) + epsilon)
    p = p - (||p|| / ||u||) * learning_rate * u

  Keras's Lamb has no weight-decay term of its own (its base `weight_decay`
  decays `p` before the step); `optax.lamb` adds `weight_decay * p` to `u`
  before the trust ratio, with eps=1e-6 added differently.

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    beta_1, beta_2: Moment decays, in [0, 1).
    epsilon: >= 0.

  Reference: You et al., 2020, "Large Batch Optimization for Deep Learning:
  Training BERT in 76 minutes".
  """
  _checks.check_moment_arguments(beta_1, beta_2, epsilon)
  return lamb_update_step(beta_1, beta_2, epsilon)
