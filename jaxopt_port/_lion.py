"""Lion: `keras.optimizers.Lion`."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxopt_port import _checks
from jaxopt_port._base import (UpdateStep, cast_like, one_minus_in_dtype,
                               with_keras_base_arguments)


class LionSlots(NamedTuple):
  momentum: optax.Params


def lion_update_step(beta_1: Any, beta_2: Any) -> UpdateStep:
  """Keras's Lion update step (`1 - beta` rounded in float32, as Keras casts
  the betas first)::

    p = p - lr * sign(beta_1 * m + (1 - beta_1) * g)
    m = beta_2 * m + (1 - beta_2) * g
  """

  def build(params):
    return LionSlots(optax.tree.zeros_like(params))

  def update(grads, slots, params, learning_rate, iteration):
    del params, iteration
    updates = jax.tree.map(
        lambda g, m: -(cast_like(learning_rate, m) * jnp.sign(
            m * cast_like(beta_1, m) + g * one_minus_in_dtype(beta_1, g))),
        grads, slots.momentum)
    momentum = jax.tree.map(
        lambda g, m: m * cast_like(beta_2, m) + g * one_minus_in_dtype(
            beta_2, g), grads, slots.momentum)
    return updates, LionSlots(momentum)

  return UpdateStep(build, update, elementwise=True, reads_old_slots=True)


@with_keras_base_arguments(learning_rate=0.001)
def lion(beta_1: float = 0.9, beta_2: float = 0.99) -> UpdateStep:
  """Lion, as `keras.optimizers.Lion`.

  ::

    p = p - learning_rate * sign(beta_1 * m + (1 - beta_1) * g)
    m = beta_2 * m + (1 - beta_2) * g

  (`optax.lion` is the same, with b1/b2 names and decoupled weight decay
  `weight_decay * lr * p` added to the step; Keras applies weight decay before
  the step.)

  The step reads the old momentum after the new one is due: call `update`
  with `applied_as_is=True` where the updates go to the params as they are,
  and XLA writes the momentum in place instead of copying it first (README,
  Speed).

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    beta_1: Interpolation of the step direction, in (0, 1] (0 would be
      SignSGD, which Keras refuses).
    beta_2: Decay of the momentum, in [0, 1].

  Reference: Chen et al., 2023, "Symbolic Discovery of Optimization
  Algorithms".
  """
  _checks.check_range(
      "beta_1", beta_1, 0.0, 1.0, low_open=True,
      message="Argument `beta_1` must be in the [0, 1] range. Otherwise, the "
      "optimizer degenerates to SignSGD. Received: beta_1={value}.")
  _checks.check_range("beta_2", beta_2, 0.0, 1.0)
  return lion_update_step(beta_1, beta_2)
