"""Google BERT's `optimization.AdamWeightDecayOptimizer` (TF1)."""

from __future__ import annotations

import re
from typing import NamedTuple, Sequence

import jax.numpy as jnp
import optax

from jaxopt_port import _adam_weight_decay, _checks
from jaxopt_port._base import (UpdateStep, cast_like, one_minus,
                               with_tf1_arguments)
from jaxopt_port._tree import map_leaves


class BertAdamSlots(NamedTuple):
  """BERT's slots, by its variable names (`<variable>/adam_m`)."""
  adam_m: optax.Params
  adam_v: optax.Params


@with_tf1_arguments(sparse_rows="dense")
def adam_weight_decay(weight_decay_rate: float = 0.0, beta_1: float = 0.9,
                          beta_2: float = 0.999, epsilon: float = 1e-6,
                          exclude_from_weight_decay: Sequence[str] | None = None
                          ) -> UpdateStep:
  """AdamWeightDecayOptimizer, as Google's BERT (`optimization.py`, TF1)::

    m = beta_1 * m + (1 - beta_1) * g
    v = beta_2 * v + (1 - beta_2) * g**2
    u = m / (sqrt(v) + epsilon)
    u = u + weight_decay_rate * p            (the parameters that decay)
    p = p - learning_rate * u

  No bias correction. A parameter decays unless the rate is 0 or a regular
  expression of `exclude_from_weight_decay` is found (`re.search`) in its
  name without its `:0` suffix. BERT's `create_optimizer` clips the
  gradients to a global norm of 1 first and schedules the learning rate;
  chain `optax.clip_by_global_norm(1.0)` and give a schedule to do the same.
  Sparse gradients update every row (BERT's step is dense).

  Args:
    learning_rate: Required; a float or a schedule of the step count.
    weight_decay_rate: >= 0.
    beta_1, beta_2: In [0, 1).
    epsilon: >= 0; BERT's default is 1e-6.
    exclude_from_weight_decay: Regular expressions of parameter names, or
      None.

  Reference: Devlin et al., 2019, "BERT: Pre-training of Deep Bidirectional
  Transformers for Language Understanding"; google-research/bert,
  `optimization.py`.
  """
  _checks.check_moment_arguments(beta_1, beta_2, epsilon)
  _checks.check_range("weight_decay_rate", weight_decay_rate, 0.0)
  excluded = _adam_weight_decay.searched(exclude_from_weight_decay)
  decays = _adam_weight_decay.decays_by_name(
      weight_decay_rate, None, excluded and (
          lambda name: excluded(re.sub(r":\d+$", "", name))))

  def build(params):
    zeros = optax.tree.zeros_like(params)
    return BertAdamSlots(zeros, zeros)

  def update(grads, slots, params, learning_rate, iteration):
    del iteration
    if decays is not False:
      _checks.require_params(params, "adam_weight_decay decays the params")

    def leaf_step(path, g, m, v, p):
      # BERT computes `1.0 - beta` in Python, then in float32.
      m = cast_like(beta_1, g) * m + one_minus(beta_1, g) * g
      v = cast_like(beta_2, g) * v + one_minus(beta_2, g) * (g * g)
      direction = m / (jnp.sqrt(v) + cast_like(epsilon, g))
      if _adam_weight_decay.decays_at(decays, path):
        direction = direction + cast_like(weight_decay_rate, p) * p
      return -(cast_like(learning_rate, g) * direction), m, v

    # Without decay the params are not read (and may be left out).
    updates, m, v = map_leaves(
        leaf_step, 3, grads, slots.adam_m, slots.adam_v,
        grads if params is None else params, with_path=True)
    return updates, BertAdamSlots(m, v)

  return UpdateStep(build, update, elementwise=not callable(decays))
