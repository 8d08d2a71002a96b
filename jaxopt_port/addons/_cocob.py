"""TF Addons' COCOB: parameter-free training by coin betting."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxopt_port import _checks
from jaxopt_port._base import UpdateStep, cast_like, with_legacy_base_arguments
from jaxopt_port._tree import map_leaves


class COCOBSlots(NamedTuple):
  lr: optax.Params  # The running maximum |g| (TFA's slot name), from 1e-8.
  grad_norm_sum: optax.Params
  gradients_sum: optax.Params
  tilde_w: optax.Params  # The offset of p from its start.
  reward: optax.Params


@with_legacy_base_arguments(learning_rate=0.0)
def cocob(alpha: float = 100.0, use_locking: bool = False, *,
          learning_rate: float = 0.0) -> UpdateStep:
  """COCOB-Backprop, as `tfa.optimizers.COCOB(alpha, use_locking)`:
  learning-rate free (the keyword `learning_rate` is ignored, as TFA has
  none)::

    L = max(L, |g|);  G = G + |g|;  S = S + g
    R = max(R - g * w~, 0)
    w~' = -S / (L * max(G + L, alpha * L)) * (R + L)
    p = p - w~ + w~';  w~ = w~'

  Args:
    alpha: >= 1; bounds the step early in training.
    use_locking: TFA's TF1 locking flag, taken for its signature; no effect
      (TFA's step never read it either).

  Reference: Orabona and Tommasi, 2017, "Training Deep Networks without
  Learning Rates Through Coin Betting".
  """
  _checks.check_range("alpha", alpha, 1.0)
  del use_locking, learning_rate

  def build(params):
    zeros = optax.tree.zeros_like(params)
    return COCOBSlots(jax.tree.map(lambda p: jnp.full_like(p, 1e-8), params),
                      zeros, zeros, zeros, zeros)

  def update(grads, slots, params, learning_rate, iteration):
    del params, learning_rate, iteration

    def leaf_step(g, lr, norm_sum, grad_sum, tilde_w, reward):
      lr = jnp.maximum(lr, jnp.abs(g))
      grad_sum = grad_sum + g
      norm_sum = norm_sum + jnp.abs(g)
      reward = jnp.maximum(reward - g * tilde_w, 0)
      bound = jnp.maximum(norm_sum + lr, cast_like(alpha, g) * lr)
      new_w = -grad_sum / (lr * bound) * (reward + lr)
      return new_w - tilde_w, lr, norm_sum, grad_sum, new_w, reward

    updates, *fields = map_leaves(leaf_step, 6, grads, *slots)
    return updates, COCOBSlots(*fields)

  return UpdateStep(build, update, elementwise=True)
