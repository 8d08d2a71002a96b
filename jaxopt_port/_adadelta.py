"""Adadelta: `keras.optimizers.Adadelta` (and legacy's)."""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxopt_port import _checks
from jaxopt_port._base import (UpdateStep, cast_like, one_minus,
                               with_keras_base_arguments)


class AdadeltaSlots(NamedTuple):
  accumulated_grad: optax.Params
  accumulated_delta_var: optax.Params


def check_adadelta_arguments(rho: Any, epsilon: Any) -> None:
  # rho = 1 is plain SGD (the accumulators stay 0), which Keras accepts.
  _checks.check_range("rho", rho, 0.0, 1.0)
  _checks.check_range("epsilon", epsilon, 0.0)


def adadelta_update_step(rho: Any, epsilon: Any,
                         slots: type[NamedTuple] = AdadeltaSlots,
                         complement: Callable[[Any, jax.Array], jax.Array]
                         = one_minus) -> UpdateStep:
  """Adadelta's update step (both generations)::

    a = rho * a + (1 - rho) * g**2
    delta = -sqrt(d + epsilon) / sqrt(a + epsilon) * g
    d = rho * d + (1 - rho) * delta**2
    p = p + lr * delta
  """

  def build(params):
    zeros = optax.tree.zeros_like(params)
    return slots(zeros, zeros)

  def update(grads, state, params, learning_rate, iteration):
    del params, iteration
    accumulated_grad, accumulated_delta = state
    accumulated_grad = jax.tree.map(
        lambda g, a: cast_like(rho, a) * a + complement(rho, g) * (g * g),
        grads, accumulated_grad)
    delta = jax.tree.map(
        lambda g, a, d: -(jnp.sqrt(d + cast_like(epsilon, d)) * g
                          / jnp.sqrt(a + cast_like(epsilon, a))),
        grads, accumulated_grad, accumulated_delta)
    accumulated_delta = jax.tree.map(
        lambda x, d: cast_like(rho, d) * d + complement(rho, x) * (x * x),
        delta, accumulated_delta)
    updates = jax.tree.map(lambda x: cast_like(learning_rate, x) * x, delta)
    return updates, slots(accumulated_grad, accumulated_delta)

  return UpdateStep(build, update, elementwise=True)


@with_keras_base_arguments(learning_rate=0.001)
def adadelta(rho: float = 0.95, epsilon: float = 1e-7) -> UpdateStep:
  """Adadelta, as `keras.optimizers.Adadelta`.

  ::

    a = rho * a + (1 - rho) * g**2
    delta = -sqrt(d + epsilon) / sqrt(a + epsilon) * g
    d = rho * d + (1 - rho) * delta**2
    p = p + learning_rate * delta

  Keras keeps a learning rate (default 0.001; the paper's method is 1.0).
  `optax.adadelta` is the same with eps=1e-6.

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    rho: Decay of both averages, in [0, 1] (1: plain SGD).
    epsilon: >= 0.

  Reference: Zeiler, 2012, "ADADELTA: An Adaptive Learning Rate Method".
  """
  check_adadelta_arguments(rho, epsilon)
  return adadelta_update_step(rho, epsilon)
