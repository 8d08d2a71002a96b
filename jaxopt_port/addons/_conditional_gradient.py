"""TF Addons' ConditionalGradient (Frank-Wolfe with a norm ball)."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxopt_port import _checks
from jaxopt_port._base import (REQUIRED, UpdateStep, cast_like,
                               with_legacy_base_arguments)
from jaxopt_port._sharding import on_whole_array


class ConditionalGradientSlots(NamedTuple):
  # TFA creates this slot and never writes it; kept so that the bridged
  # class's variables (and so checkpoints) are TFA's.
  conditional_gradient: optax.Params


def _top_singular_direction(g: jax.Array) -> jax.Array:
  """`u1 v1^T` of `g` (rank < 2 padded to a row; leading axes batched)."""
  matrix = g.reshape((1,) * (2 - g.ndim) + g.shape) if g.ndim < 2 else g
  flat = matrix.reshape((-1,) + matrix.shape[-2:])
  return jax.vmap(_rank_one_direction)(flat).reshape(g.shape)


def _rank_one_direction(matrix: jax.Array) -> jax.Array:
  """`u1 v1^T` of one matrix, by power iteration on its smaller Gram matrix.

  Not `jnp.linalg.svd`: on CPU that is a LAPACK call TensorFlow cannot run,
  and the bridge carries this function into TensorFlow. The iteration stops
  when the distance still to go, estimated from how fast the steps shrink,
  is below the dtype's epsilon, or when the steps stop shrinking at rounding
  level; `u` and `v` are then polished against the matrix itself. Within a
  few times float32 LAPACK's own error on random matrices; like any SVD,
  arbitrary when the top singular value is repeated.
  A zero matrix gives LAPACK's `e1 e1^T`.
  """
  rows, columns = matrix.shape
  # The Gram matrix of the smaller side; of the static one where the other
  # is symbolic (a sparse gradient's touched rows).
  if isinstance(rows, int) and (not isinstance(columns, int)
                                or rows < columns):
    return _rank_one_direction(matrix.T).T
  largest = jnp.max(jnp.abs(matrix))
  corner = jnp.zeros_like(matrix).at[0, 0].set(1)
  # Scaled to a largest entry of 1 so the Gram matrix neither under- nor
  # overflows; the direction does not depend on the scale.
  a = jnp.where(largest > 0, matrix / jnp.where(largest > 0, largest, 1),
                corner)
  gram = a.T @ a
  epsilon = jnp.finfo(a.dtype).eps
  rounding_level = 64 * columns ** 0.5 * epsilon

  def unit(x):
    return x / jnp.linalg.norm(x)

  def going_on(carry):
    _, change, previous_change, count = carry
    shrink = change / previous_change
    still_to_go = jnp.where(shrink < 1, change * shrink / (1 - shrink),
                            jnp.inf)
    stalled = (shrink >= 1) & (change <= rounding_level)
    return (count < 3) | ((count < 20_000) & (still_to_go > epsilon)
                          & ~stalled)

  def power_step(carry):
    v, change, _, count = carry
    w = unit(gram @ v)
    return w, jnp.linalg.norm(w - v), change, count + 1

  start = gram[:, jnp.argmax(jnp.sum(gram * gram, axis=0))]
  infinity = jnp.asarray(jnp.inf, a.dtype)
  v, *_ = jax.lax.while_loop(going_on, power_step,
                             (unit(start), infinity, infinity, 0))
  u = unit(a @ v)
  v = unit(a.T @ u)
  return jnp.outer(unit(a @ v), v)


@with_legacy_base_arguments(learning_rate=REQUIRED, sparse_rows="rows")
def conditional_gradient(lambda_: float = 0.01, epsilon: float = 1e-7,
                         ord: str = "fro") -> UpdateStep:  # pylint: disable=redefined-builtin
  """Conditional gradient (Frank-Wolfe), as
  `tfa.optimizers.ConditionalGradient`, over the ball of radius `lambda_`::

    s = g / (||g||_F + epsilon)                 (ord="fro")
    s = u1 v1^T, the top singular pair of g     (ord="nuclear")
    p = learning_rate * p - (1 - learning_rate) * lambda_ * s

  (TFA's parameterization: `learning_rate` is the weight kept on `p`.) TFA's
  nuclear form handles rank <= 2 (a scalar or vector as one row); here
  higher ranks are batched over their leading axes. On sparse gradients only
  the touched rows move (TFA's sparse path; the bridge too).

  Args:
    learning_rate: A float or a schedule (required, as in TFA).
    lambda_: The constraint radius, >= 0.
    epsilon: >= 0.
    ord: "fro" or "nuclear".

  Reference: Frank and Wolfe, 1956; Jaggi, 2013, "Revisiting Frank-Wolfe".
  """
  _checks.check_range("lambda_", lambda_, 0.0)
  _checks.check_range("epsilon", epsilon, 0.0)
  if ord not in ("fro", "nuclear"):
    raise ValueError(f"`ord` must be 'fro' or 'nuclear'. Received: ord={ord!r}")

  def update(grads, slots, params, learning_rate, iteration):
    del iteration
    _checks.require_params(params, "conditional_gradient sets the params from "
                           "them")

    def step(g, p):
      if ord == "fro":
        s = g / (jnp.sum(g ** 2) ** 0.5 + cast_like(epsilon, g))
      else:
        s = on_whole_array(_top_singular_direction, g)
      lr = cast_like(learning_rate, p)
      return p * lr - (1 - lr) * cast_like(lambda_, p) * s - p

    # The barrier reads the slot (a no-op that XLA keeps): a slot passed on
    # unread is one Keras keeps no variable of (SGD's momentum at 0), and
    # TFA keeps this one.
    return jax.tree.map(step, grads, params), jax.lax.optimization_barrier(
        slots)

  return UpdateStep(
      lambda params: ConditionalGradientSlots(
          jax.tree.map(jnp.zeros_like, params)), update)
