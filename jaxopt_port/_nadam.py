"""Nadam: `keras.optimizers.Nadam`."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxopt_port import _checks
from jaxopt_port._base import (UpdateStep, cast_like, one_minus_in_dtype,
                               with_keras_base_arguments)


class NadamSlots(NamedTuple):
  momentum: optax.Params
  velocity: optax.Params
  u_product: jax.Array  # shape=(): product of the momentum schedule.


def _schedule_dtype(params: optax.Params) -> Any:
  """The dtype both Nadams keep the schedule's product in: the first
  variable's (Keras's `var_list[0].dtype`), float64 or else float32 (the
  update of half-precision variables is computed in float32)."""
  leaves = jax.tree.leaves(params)
  first = jnp.result_type(leaves[0]) if leaves else None
  return jnp.float64 if first == jnp.float64 else jnp.float32


def nadam_update_step(beta_1: Any, beta_2: Any, epsilon: Any) -> UpdateStep:
  """Keras 3's Nadam update step. With `t = iteration + 1` and the momentum
  schedule `mu(t) = beta_1 * (1 - 0.5 * 0.96**t)`::

    u_product = u_product * mu(t)                 (once per step)
    m = m + (g - m) * (1 - beta_1)
    v = v + (g**2 - v) * (1 - beta_2)
    m_hat = mu(t + 1) * m / (1 - u_product * mu(t + 1))
            + (1 - mu(t)) * g / (1 - u_product)
    p = p - lr * m_hat / (sqrt(v / (1 - beta_2**t)) + epsilon)
  """

  def build(params):
    zeros = optax.tree.zeros_like(params)
    return NadamSlots(zeros, zeros, jnp.ones([], _schedule_dtype(params)))

  def update(grads, slots, params, learning_rate, iteration):
    del params
    step = (iteration + 1).astype(slots.u_product.dtype)
    decay = cast_like(0.96, slots.u_product)
    u_product = slots.u_product * cast_like(beta_1, slots.u_product) * (
        1.0 - 0.5 * jnp.power(decay, step))
    momentum = jax.tree.map(
        lambda g, m: m + (g - m) * one_minus_in_dtype(beta_1, g), grads,
        slots.momentum)
    velocity = jax.tree.map(
        lambda g, v: v + (g * g - v) * one_minus_in_dtype(beta_2, g), grads,
        slots.velocity)

    def step_of(g, m, v):
      t = step.astype(g.dtype)
      b1, b2 = cast_like(beta_1, g), cast_like(beta_2, g)
      u_t = b1 * (1.0 - 0.5 * jnp.power(decay.astype(g.dtype), t))
      u_t_1 = b1 * (1.0 - 0.5 * jnp.power(decay.astype(g.dtype), t + 1))
      u_product_t = u_product.astype(g.dtype)
      m_hat = (u_t_1 * m / (1 - u_product_t * u_t_1)
               + (1 - u_t) * g / (1 - u_product_t))
      v_hat = v / (1 - jnp.power(b2, t))
      return -(m_hat * cast_like(learning_rate, g)) / (
          jnp.sqrt(v_hat) + cast_like(epsilon, g))

    updates = jax.tree.map(step_of, grads, momentum, velocity)
    return updates, NadamSlots(momentum, velocity, u_product)

  return UpdateStep(build, update, elementwise=True)


class LegacyNadamSlots(NamedTuple):
  m: optax.Params
  v: optax.Params
  momentum_cache: jax.Array  # shape=(): product of the schedule.


def legacy_nadam_update_step(beta_1: Any, beta_2: Any, epsilon: Any,
                             schedule_decay: Any) -> UpdateStep:
  """OptimizerV2's Nadam. With `t = iteration + 1` and the momentum schedule
  `mu(t) = beta_1 * (1 - 0.5 * 0.96**(schedule_decay * t))`::

    cache = cache * mu(t)                       (once per step)
    m = beta_1 * m + (1 - beta_1) * g;  v = beta_2 * v + (1 - beta_2) * g**2
    m_bar = (1 - mu(t)) * g / (1 - cache) + mu(t + 1) * m / (1 - cache * mu(t + 1))
    p = p - lr * m_bar / (sqrt(v / (1 - beta_2**t)) + epsilon)
  """

  def build(params):
    zeros = optax.tree.zeros_like(params)
    return LegacyNadamSlots(zeros, zeros,
                            jnp.ones([], _schedule_dtype(params)))

  def update(grads, slots, params, learning_rate, iteration):
    del params
    cache = slots.momentum_cache
    step = (iteration + 1).astype(cache.dtype)
    decay = cast_like(0.96, cache)

    def schedule(t):
      return cast_like(beta_1, cache) * (
          1.0 - 0.5 * jnp.power(decay, cast_like(schedule_decay, cache) * t))

    mu_t, mu_next = schedule(step), schedule(step + 1)
    cache = cache * mu_t
    cache_next = cache * mu_next
    m = jax.tree.map(
        lambda g, m: cast_like(beta_1, m) * m + one_minus_in_dtype(beta_1, g)
        * g, grads, slots.m)
    v = jax.tree.map(
        lambda g, v: cast_like(beta_2, v) * v + one_minus_in_dtype(beta_2, g)
        * (g * g), grads, slots.v)

    def step_of(g, m, v):
      dtype = g.dtype
      m_bar = ((1.0 - mu_t.astype(dtype)) * (g / (1.0 - cache.astype(dtype)))
               + mu_next.astype(dtype) * (m / (1.0 - cache_next.astype(dtype))))
      v_prime = v / (1.0 - jnp.power(cast_like(beta_2, g), step.astype(dtype)))
      return -(cast_like(learning_rate, g) * m_bar / (
          jnp.sqrt(v_prime) + cast_like(epsilon, g)))

    updates = jax.tree.map(step_of, grads, m, v)
    return updates, LegacyNadamSlots(m, v, cache)

  return UpdateStep(build, update, elementwise=True)


@with_keras_base_arguments(learning_rate=0.001)
def nadam(beta_1: float = 0.9, beta_2: float = 0.999,
          epsilon: float = 1e-7) -> UpdateStep:
  """Nadam, as `keras.optimizers.Nadam`: Adam with Nesterov momentum and
  Dozat's momentum schedule `mu(t) = beta_1 * (1 - 0.5 * 0.96**t)`.

  With `t` the 1-based step and `U(t) = mu(1) * ... * mu(t)`::

    m = m + (g - m) * (1 - beta_1);  v = v + (g**2 - v) * (1 - beta_2)
    m_hat = mu(t+1) * m / (1 - U(t) * mu(t+1)) + (1 - mu(t)) * g / (1 - U(t))
    p = p - learning_rate * m_hat / (sqrt(v / (1 - beta_2**t)) + epsilon)

  The product `U` is one state value shared by all parameters (a plain
  optimizer variable in the Keras bridge). `optax.nadam` is Adam with a
  Nesterov step and no momentum schedule, so it differs.

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    beta_1, beta_2: Moment decays, in [0, 1).
    epsilon: >= 0.

  Reference: Dozat, 2016, "Incorporating Nesterov Momentum into Adam".
  """
  _checks.check_moment_arguments(beta_1, beta_2, epsilon)
  return nadam_update_step(beta_1, beta_2, epsilon)
