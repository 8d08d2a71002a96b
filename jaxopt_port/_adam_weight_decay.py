"""What BERT's AdamWeightDecay and its descendants share.

Google's BERT (`optimization.AdamWeightDecayOptimizer`, TF1), Hugging Face's
TF `AdamWeightDecay` and TF Model Garden's `legacy_adamw.AdamWeightDecay`
decay a variable by `learning_rate * weight_decay_rate * p`, and decide
which variables decay by their names, each its own way
(`jaxopt_port.tf1.adam_weight_decay`, `jaxopt_port.hf.adam_weight_decay`,
`jaxopt_port.tf_models.adam_weight_decay`).
"""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence, Union

import jax
import jax.numpy as jnp

from jaxopt_port import _adam, _checks
from jaxopt_port._base import UpdateStep, cast_like, one_minus_in_dtype
from jaxopt_port._tree import path_name

NameTest = Callable[[str], bool]
# Whether a parameter decays: by its tree path, or the same for all.
Decays = Union[bool, Callable[[Any], bool]]


def found_in(patterns: Sequence[str] | None) -> NameTest | None:
  """Hugging Face's test: a pattern is a substring of the name (None
  without patterns)."""
  if not patterns:
    return None
  return lambda name: any(pattern in name for pattern in patterns)


def searched(patterns: Sequence[str] | None) -> NameTest | None:
  """BERT's and Model Garden's test: `re.search` finds a pattern in the name
  (None without patterns)."""
  if not patterns:
    return None
  compiled = [re.compile(pattern) for pattern in patterns]
  return lambda name: any(p.search(name) for p in compiled)


def decays_by_name(weight_decay_rate: Any, include: NameTest | None,
                   exclude: NameTest | None) -> Decays:
  """Whether the parameter at a tree path decays, as the originals'
  `_do_use_weight_decay` decide: never at a rate of 0, always if `include`
  matches its name, else unless `exclude` does. A bool where no name
  decides."""
  if _checks.concrete_number(weight_decay_rate) == 0.0:
    return False
  if include is None and exclude is None:
    return True

  def decays(path):
    name = path_name(path)
    if include is not None and include(name):
      return True
    return exclude is None or not exclude(name)

  return decays


def decays_at(decays: Decays, path: Any) -> bool:
  return decays(path) if callable(decays) else decays


def with_scaled_decay(step: UpdateStep, weight_decay_rate: Any,
                      decays: Decays) -> UpdateStep:
  """`step` after `p = p - learning_rate * p * weight_decay_rate` on the
  parameters `decays` picks (every row, for sparse gradients too)."""
  if decays is False:
    return step

  def update(grads, slots, params, learning_rate, iteration):
    _checks.require_params(params, "adam_weight_decay decays the params")
    decay = jax.tree_util.tree_map_with_path(
        lambda path, p: -(cast_like(learning_rate, p) * p
                          * cast_like(weight_decay_rate, p))
        if decays_at(decays, path) else jnp.zeros_like(p), params)
    updates, slots = step.update(grads, slots, params, learning_rate,
                                 iteration)
    return jax.tree.map(jnp.add, decay, updates), slots

  return UpdateStep(step.build, update,
                    elementwise=step.elementwise and not callable(decays))


def legacy_adam_step(beta_1: Any, beta_2: Any, epsilon: Any, amsgrad: bool
                     ) -> UpdateStep:
  """tf_keras legacy Adam's step, which both Keras subclasses run."""
  _checks.check_moment_arguments(beta_1, beta_2, epsilon)
  return _adam.adam_update_step(beta_1, beta_2,
                                _checks.nonzero_epsilon(epsilon), amsgrad,
                                slots=_adam.LegacyAdamSlots,
                                complement=one_minus_in_dtype)
