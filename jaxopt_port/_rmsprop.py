"""RMSprop: `keras.optimizers.RMSprop` and the legacy OptimizerV2 formula."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxopt_port import _checks
from jaxopt_port._base import (UpdateStep, by_zero, cast_like, one_minus,
                               one_minus_in_dtype, with_keras_base_arguments)


class RMSpropSlots(NamedTuple):
  velocity: optax.Params
  momentum: optax.Params  # Unused (zeros) where momentum is 0.
  average_gradient: optax.Params | None  # When centered.


class LegacyRMSpropSlots(NamedTuple):
  rms: optax.Params
  momentum: optax.Params  # Unused (zeros) where momentum is 0.
  mg: optax.Params | None


def check_rmsprop_arguments(rho: Any, momentum: Any, epsilon: Any, *,
                            momentum_message: str | None = None,
                            rho_name: str = "rho") -> None:
  _checks.check_range(rho_name, rho, 0.0, 1.0, high_open=True)
  _checks.check_range("momentum", momentum, 0.0, 1.0,
                      message=momentum_message)
  _checks.check_range("epsilon", epsilon, 0.0)


def _mean_squares(rho, grads, velocity, average_gradient, complement):
  velocity = jax.tree.map(
      lambda g, v: cast_like(rho, g) * v + complement(rho, g) * (g * g),
      grads, velocity)
  if average_gradient is not None:
    average_gradient = jax.tree.map(
        lambda g, a: cast_like(rho, g) * a + complement(rho, g) * g,
        grads, average_gradient)
  return velocity, average_gradient


def rmsprop_update_step(rho: Any, momentum: Any, epsilon: Any,
                        centered: bool) -> UpdateStep:
  """Keras 3's RMSprop update step: epsilon always inside the square root.

  ::

    v = rho * v + (1 - rho) * g**2
    a = rho * a + (1 - rho) * g                       (centered)
    step = lr * g / sqrt(v - a**2 + epsilon)          (centered)
    step = lr * g / sqrt(v + epsilon)                 (otherwise)
    mom = momentum * mom + step; p = p - mom          (momentum)
    p = p - step                                      (otherwise)

  At a momentum of 0, `mom` stays at zeros, unread (Keras keeps none).
  """
  def build(params):
    zeros = optax.tree.zeros_like(params)
    return RMSpropSlots(zeros, zeros, zeros if centered else None)

  def update(grads, slots, params, learning_rate, iteration):
    del params, iteration
    velocity, average_gradient = _mean_squares(
        rho, grads, slots.velocity, slots.average_gradient, one_minus)
    if centered:
      denominator = jax.tree.map(
          lambda g, v, a: v - a * a + cast_like(epsilon, g), grads, velocity,
          average_gradient)
    else:
      denominator = jax.tree.map(lambda g, v: v + cast_like(epsilon, g),
                                 grads, velocity)
    increment = jax.tree.map(
        lambda g, d: cast_like(learning_rate, g) * g / jnp.sqrt(d), grads,
        denominator)

    def with_momentum():
      velocity_of_params = jax.tree.map(
          lambda i, m: cast_like(momentum, m) * m + i, increment,
          slots.momentum)
      return velocity_of_params, velocity_of_params

    increment, velocity_of_params = by_zero(
        momentum, lambda: (increment, slots.momentum), with_momentum)
    updates = jax.tree.map(jnp.negative, increment)
    return updates, RMSpropSlots(velocity, velocity_of_params,
                                 average_gradient)

  return UpdateStep(build, update, elementwise=True)


def legacy_rmsprop_update_step(rho: Any, momentum: Any, epsilon: Any,
                               centered: bool, *, initial_rms: float = 0.0,
                               always_momentum: bool = False) -> UpdateStep:
  """OptimizerV2's RMSprop: epsilon's place depends on momentum.

  With momentum (the ResourceApply(Centered)RMSProp kernels), epsilon is inside
  the square root; without (a Python formula in tf_keras), outside::

    rms = rho * rms + (1 - rho) * g**2; mg = rho * mg + (1 - rho) * g
    denominator = rms - mg**2 (centered) or rms
    mom = momentum * mom + lr * g / sqrt(denominator + epsilon); p = p - mom
    p = p - lr * g / (sqrt(denominator) + epsilon)        (no momentum)

  Without momentum `mom` stays at zeros, unread (tf_keras keeps none). TF1's
  RMSProp starts `rms` at `initial_rms` = 1 and always runs the momentum
  kernel (`always_momentum`).
  """
  def build(params):
    zeros = optax.tree.zeros_like(params)
    return LegacyRMSpropSlots(
        jax.tree.map(lambda p: jnp.full_like(p, initial_rms), params), zeros,
        zeros if centered else None)

  def update(grads, slots, params, learning_rate, iteration):
    del params, iteration
    rms, mg = _mean_squares(rho, grads, slots.rms, slots.mg,
                             one_minus_in_dtype)
    if centered:
      denominator = jax.tree.map(lambda r, a: r - a * a, rms, mg)
    else:
      denominator = rms

    def with_momentum():
      mom = jax.tree.map(
          lambda g, d, m: m * cast_like(momentum, m) + g * cast_like(
              learning_rate, g) / jnp.sqrt(d + cast_like(epsilon, g)),
          grads, denominator, slots.momentum)
      return jax.tree.map(jnp.negative, mom), mom

    def without_momentum():
      return jax.tree.map(
          lambda g, d: -(cast_like(learning_rate, g) * g / (
              jnp.sqrt(d) + cast_like(epsilon, g))), grads,
          denominator), slots.momentum

    updates, mom = (with_momentum() if always_momentum
                    else by_zero(momentum, without_momentum, with_momentum))
    return updates, LegacyRMSpropSlots(rms, mom, mg)

  return UpdateStep(build, update, elementwise=True)


@with_keras_base_arguments(learning_rate=0.001)
def rmsprop(rho: float = 0.9, momentum: float = 0.0, epsilon: float = 1e-7,
            centered: bool = False) -> UpdateStep:
  """RMSprop, as `keras.optimizers.RMSprop`.

  ::

    v = rho * v + (1 - rho) * g**2
    step = learning_rate * g / sqrt(v + epsilon)
    p = p - step                 (or, with momentum: mom = momentum * mom + step;
                                  p = p - mom)

  Centered, `v - a**2` replaces `v`, with `a` the moving mean of `g`. Keras 3
  keeps epsilon inside the square root in every case; the legacy optimizer
  moves it outside when there is no momentum. `optax.rmsprop` computes the same
  with `decay=rho, eps_in_sqrt=True`, but its defaults differ (eps=1e-8).

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    rho: Decay of the moving mean square, in [0, 1).
    momentum: In [0, 1]; at 0 the momentum slot stays at zeros.
    epsilon: >= 0.
    centered: Divide by the estimated variance instead of the mean square.

  Reference: Hinton, 2012, Lecture 6e of "Neural Networks for Machine
  Learning".
  """
  check_rmsprop_arguments(rho, momentum, epsilon)
  return rmsprop_update_step(rho, momentum, epsilon, centered)
