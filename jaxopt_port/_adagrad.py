"""Adagrad: `keras.optimizers.Adagrad`."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxopt_port import _checks
from jaxopt_port._base import UpdateStep, cast_like, with_keras_base_arguments


class AdagradSlots(NamedTuple):
  accumulator: optax.Params


def check_adagrad_arguments(initial_accumulator_value: Any,
                            epsilon: Any) -> None:
  _checks.check_range("initial_accumulator_value", initial_accumulator_value,
                      0.0)
  _checks.check_range("epsilon", epsilon, 0.0)


def adagrad_update_step(initial_accumulator_value: Any, epsilon: Any, *,
                        epsilon_inside_sqrt: bool) -> UpdateStep:
  """Adagrad's update step; the generations differ in where epsilon goes.

  ::

    a = a + g**2
    p = p - lr * g / sqrt(a + epsilon)     (Keras 3: epsilon_inside_sqrt)
    p = p - lr * g / (sqrt(a) + epsilon)   (OptimizerV2's ResourceApplyAdagradV2)
  """

  def build(params):
    return AdagradSlots(jax.tree.map(
        lambda p: jnp.full_like(p, initial_accumulator_value), params))

  def update(grads, slots, params, learning_rate, iteration):
    del params, iteration
    accumulator = jax.tree.map(lambda g, a: a + g * g, grads,
                               slots.accumulator)

    def step(g, a):
      if epsilon_inside_sqrt:
        denominator = jnp.sqrt(a + cast_like(epsilon, g))
      else:
        denominator = jnp.sqrt(a) + cast_like(epsilon, g)
      return -(cast_like(learning_rate, g) * g) / denominator

    return jax.tree.map(step, grads, accumulator), AdagradSlots(accumulator)

  return UpdateStep(build, update)


@with_keras_base_arguments(learning_rate=0.001)
def adagrad(initial_accumulator_value: float = 0.1,
            epsilon: float = 1e-7) -> UpdateStep:
  """Adagrad, as `keras.optimizers.Adagrad`.

  ::

    a = a + g**2
    p = p - learning_rate * g / sqrt(a + epsilon)

  Keras 3 puts epsilon inside the square root, as `optax.adagrad` does (same
  defaults); the legacy optimizer adds it outside.

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    initial_accumulator_value: Starting value of the accumulators, >= 0.
    epsilon: >= 0.

  Reference: Duchi et al., 2011, "Adaptive Subgradient Methods for Online
  Learning and Stochastic Optimization".
  """
  check_adagrad_arguments(initial_accumulator_value, epsilon)
  return adagrad_update_step(initial_accumulator_value, epsilon,
                             epsilon_inside_sqrt=True)
