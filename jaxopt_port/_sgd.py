"""SGD with optional (Nesterov) momentum: `keras.optimizers.SGD`."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxopt_port import _checks, _row_sparse
from jaxopt_port._base import (UpdateStep, by_zero, cast_like,
                               with_keras_base_arguments)


class SGDSlots(NamedTuple):
  momentum: optax.Params  # Unused (zeros) where momentum is 0.


def sgd_update_step(momentum: Any, nesterov: bool,
                    keeps_momentum: bool = False) -> UpdateStep:
  """Keras's SGD update step (both generations compute the same).

  With momentum `mu`, per parameter::

    m = mu * m - lr * g
    p = p + (mu * m - lr * g)   if nesterov else   p + m

  and `p = p - lr * g` without. At a momentum of 0 the momentum slot stays
  at zeros, unread (Keras keeps none: the bridge makes no variable for
  it), unless `keeps_momentum` (tf_keras's SGD always computes it).
  """
  def build(params):
    return SGDSlots(optax.tree.zeros_like(params))

  def update(grads, slots, params, learning_rate, iteration):
    del params

    def without_momentum():
      return jax.tree.map(lambda g: -(g * cast_like(learning_rate, g)),
                          grads), slots

    def with_momentum():
      def new_momentum(g, m):
        return m * cast_like(momentum, m) - g * cast_like(learning_rate, g)

      velocity = jax.tree.map(new_momentum, grads, slots.momentum)
      if nesterov:
        updates = jax.tree.map(new_momentum, grads, velocity)
      else:
        # The same values through a select XLA cannot fold (`iteration` is
        # never negative), so that `p + updates` compiles into one loop
        # with it: a lone `p + m` is a wrapped instruction on XLA's CPU
        # backend, which does not vectorize it (a step 8-12 % slower; see
        # benchmarks/RESULTS.md).
        updates = jax.tree.map(lambda m: jnp.where(iteration >= 0, m, 0),
                               velocity)
      return updates, SGDSlots(velocity)

    if keeps_momentum:
      return with_momentum()
    return by_zero(momentum, without_momentum, with_momentum)

  return UpdateStep(build, update, elementwise=True)


@with_keras_base_arguments(learning_rate=0.01,
                           sparse_rows=_row_sparse.rows_without_momentum)
def sgd(momentum: float = 0.0, nesterov: bool = False) -> UpdateStep:
  """Gradient descent with momentum, as `keras.optimizers.SGD`.

  ::

    m = momentum * m - learning_rate * g
    p = p + momentum * m - learning_rate * g   (nesterov)
    p = p + m                                  (otherwise)

  Args:
    learning_rate: A float or a schedule (callable of the step count).
      Defaults to 0.01.
    momentum: In [0, 1]; 0 is plain gradient descent (its momentum slot
      stays at zeros).
    nesterov: Use Nesterov momentum.

  Reference: Sutskever et al., 2013, "On the importance of initialization and
  momentum in deep learning".
  """
  message = "`momentum` must be a float between [0, 1]."
  try:
    _checks.check_number("momentum", momentum, optional=False)
  except TypeError:
    # Keras's words for anything but a float (the port takes any number).
    raise ValueError(message) from None
  _checks.check_range("momentum", momentum, 0.0, 1.0, message=message)
  return sgd_update_step(momentum, nesterov)
