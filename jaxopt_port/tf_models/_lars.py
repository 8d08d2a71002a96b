"""TF Model Garden's `official.modeling.optimization.lars.LARS`."""

from __future__ import annotations

from typing import NamedTuple, Sequence

import jax.numpy as jnp
import optax

from jaxopt_port import _adam_weight_decay, _checks, _row_sparse
from jaxopt_port._base import UpdateStep, cast_like, with_legacy_base_arguments
from jaxopt_port._tree import map_leaves, path_name


class LarsSlots(NamedTuple):
  momentum: optax.Params


def _trust_ratio(eeta: float, param: jnp.ndarray, direction: jnp.ndarray
                 ) -> jnp.ndarray:
  """`eeta * ||p|| / ||direction||`, 1 where either norm is 0."""
  w_norm = jnp.linalg.norm(param.ravel())
  d_norm = jnp.linalg.norm(direction.ravel())
  return jnp.where(w_norm > 0, jnp.where(
      d_norm > 0, cast_like(eeta, param) * w_norm / d_norm, 1.0), 1.0)


@with_legacy_base_arguments(learning_rate=0.01, sparse_rows=_row_sparse.REFUSED)
def lars(momentum: float = 0.9, weight_decay_rate: float = 0.0,
         eeta: float = 0.001, nesterov: bool = False,
         classic_momentum: bool = True,
         exclude_from_weight_decay: Sequence[str] | None = None,
         exclude_from_layer_adaptation: Sequence[str] | None = None
         ) -> UpdateStep:
  """LARS, as TF Model Garden's `official.modeling.optimization.lars.LARS`.

  With `g = g + weight_decay_rate * p` (the parameters that decay) and
  `r = eeta * ||p|| / ||x||` (1 where a norm is 0, or the parameter is
  excluded from layer adaptation), classic momentum (`x = g`)::

    v = momentum * v + lr * r * g
    p = p - (momentum * v + lr * r * g  if nesterov else v)

  and otherwise (`x` the update)::

    v = momentum * v + g
    u = momentum * v + g  if nesterov else v
    p = p - r * lr * u

  Names are tree paths (the bridge gives the variable's name), matched by
  `re.search`; `exclude_from_layer_adaptation` defaults to
  `exclude_from_weight_decay`. Model Garden's LARS takes no sparse
  gradients: neither does this (NotImplementedError, as it raises).

  Args:
    learning_rate: A float or a schedule. Defaults to 0.01.
    momentum: >= 0.
    weight_decay_rate: >= 0.
    eeta: The LARS coefficient, >= 0.
    nesterov: Nesterov momentum.
    classic_momentum: Scale the gradient by the learning rate before the
      momentum (else the update after it).
    exclude_from_weight_decay, exclude_from_layer_adaptation: Regular
      expressions of parameter names, or None.

  Reference: You, Gitman and Ginsburg, 2017, "Large Batch Training of
  Convolutional Networks"; TF Model Garden 2.20, `lars.py`.
  """
  _checks.check_range("momentum", momentum, 0.0)
  _checks.check_range("weight_decay_rate", weight_decay_rate, 0.0)
  _checks.check_range("eeta", eeta, 0.0)
  decays = _adam_weight_decay.decays_by_name(
      weight_decay_rate, None,
      _adam_weight_decay.searched(exclude_from_weight_decay))
  not_adapted = _adam_weight_decay.searched(
      exclude_from_layer_adaptation or exclude_from_weight_decay)

  def build(params):
    return LarsSlots(optax.tree.zeros_like(params))

  def update(grads, slots, params, learning_rate, iteration):
    del iteration
    _checks.require_params(params, "lars scales its step by the params' norm")

    def leaf_step(path, g, v, p):
      mu = cast_like(momentum, g)
      lr = cast_like(learning_rate, g)
      adapted = not_adapted is None or not not_adapted(path_name(path))
      if _adam_weight_decay.decays_at(decays, path):
        g = g + cast_like(weight_decay_rate, p) * p
      if classic_momentum:
        scaled_lr = lr * _trust_ratio(eeta, p, g) if adapted else lr
        v = mu * v + scaled_lr * g
        step = mu * v + scaled_lr * g if nesterov else v
        return -step, v
      v = mu * v + g
      step = mu * v + g if nesterov else v
      ratio = _trust_ratio(eeta, p, step) if adapted else 1.0
      return -(ratio * lr * step), v

    updates, v = map_leaves(leaf_step, 2, grads, slots.momentum, params,
                            with_path=True)
    return updates, LarsSlots(v)

  return UpdateStep(build, update)
