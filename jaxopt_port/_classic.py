"""The classic optimizers people write by hand as OptimizerV2 subclasses."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxopt_port import _checks
from jaxopt_port._base import (UpdateStep, by_zero, cast_like, one_minus,
                               with_keras_base_arguments)


class MomentumSlots(NamedTuple):
  momentum: optax.Params  # Unused (zeros) where momentum is 0.


def vanilla_sgd_update_step() -> UpdateStep:
  """`p = p - lr * g`, no slots."""

  def build(params):
    del params
    return ()

  def update(grads, slots, params, learning_rate, iteration):
    del params, iteration
    return jax.tree.map(lambda g: -(cast_like(learning_rate, g) * g),
                        grads), slots

  return UpdateStep(build, update, elementwise=True)


def momentum_sgd_update_step(momentum: Any, *,
                             bias_corrected: bool) -> UpdateStep:
  """EMA momentum, optionally divided by its bias `1 - momentum**t`.

  ::

    m = momentum * m + (1 - momentum) * g
    p = p - lr * m                          (momentum_sgd)
    p = p - lr * m / (1 - momentum**t)      (centered_momentum_sgd; t 1-based)

  At a momentum of 0 (`vanilla_sgd`) `m` stays at zeros, unread.
  """
  def build(params):
    return MomentumSlots(optax.tree.zeros_like(params))

  def update(grads, slots, params, learning_rate, iteration):
    del params

    def with_momentum():
      m = jax.tree.map(
          lambda g, m: cast_like(momentum, m) * m + one_minus(momentum, m) * g,
          grads, slots.momentum)

      def step(m):
        direction = m
        if bias_corrected:
          t = (iteration + 1).astype(m.dtype)
          direction = m / (1 - jnp.power(cast_like(momentum, m), t))
        return -(cast_like(learning_rate, m) * direction)

      return jax.tree.map(step, m), MomentumSlots(m)

    return by_zero(momentum, lambda: vanilla_sgd_update_step().update(
        grads, slots, None, learning_rate, iteration), with_momentum)

  return UpdateStep(build, update, elementwise=True)


@with_keras_base_arguments(learning_rate=0.01, sparse_rows="rows")
def vanilla_sgd() -> UpdateStep:
  """Plain gradient descent, the textbook custom optimizer: `p = p - lr * g`.

  Args:
    learning_rate: A float or a schedule. Defaults to 0.01.
  """
  return vanilla_sgd_update_step()


@with_keras_base_arguments(learning_rate=0.01)
def momentum_sgd(momentum: float = 0.0) -> UpdateStep:
  """Gradient descent on an exponential moving average of the gradients.

  ::

    m = momentum * m + (1 - momentum) * g
    p = p - learning_rate * m

  Unlike Keras's SGD momentum (`m = momentum * m - lr * g`), the average is
  normalized (weights sum to one in the limit) and the learning rate applies
  to it.

  Args:
    learning_rate: A float or a schedule. Defaults to 0.01.
    momentum: In [0, 1); 0 is `vanilla_sgd` (its slot stays at zeros).
  """
  _checks.check_range("momentum", momentum, 0.0, 1.0, high_open=True)
  return momentum_sgd_update_step(momentum, bias_corrected=False)


@with_keras_base_arguments(learning_rate=0.01)
def centered_momentum_sgd(momentum: float = 0.0) -> UpdateStep:
  """`momentum_sgd` with Adam's bias correction of the average.

  With `t` the 1-based step::

    m = momentum * m + (1 - momentum) * g
    p = p - learning_rate * m / (1 - momentum**t)

  The first steps are then not shrunk towards zero by the zero-initialized
  average. With momentum 0 it is `momentum_sgd` (and `vanilla_sgd`).

  Args:
    learning_rate: A float or a schedule. Defaults to 0.01.
    momentum: In [0, 1).
  """
  _checks.check_range("momentum", momentum, 0.0, 1.0, high_open=True)
  return momentum_sgd_update_step(momentum, bias_corrected=True)
