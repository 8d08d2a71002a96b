"""TF Model Garden's `official.modeling.optimization.legacy_adamw`."""

from __future__ import annotations

from typing import Sequence

from jaxopt_port import _adam_weight_decay, _checks
from jaxopt_port._base import (UpdateStep, clip_by_global_norm,
                               with_legacy_base_arguments)


@with_legacy_base_arguments(learning_rate=0.001)
def adam_weight_decay(
    beta_1: float = 0.9, beta_2: float = 0.999, epsilon: float = 1e-7,
    amsgrad: bool = False, weight_decay_rate: float = 0.0,
    include_in_weight_decay: Sequence[str] | None = None,
    exclude_from_weight_decay: Sequence[str] | None = None,
    gradient_clip_norm: float = 1.0) -> UpdateStep:
  """AdamWeightDecay, as TF Model Garden's
  `official.modeling.optimization.legacy_adamw.AdamWeightDecay`.

  Hugging Face's formula (`jaxopt_port.hf.adam_weight_decay`) with the
  names matched by `re.search`, after the gradients are clipped to a global
  norm of `gradient_clip_norm` (when > 0)::

    g = g * gradient_clip_norm / max(global_norm(g), gradient_clip_norm)
    p = p - lr * p * weight_decay_rate         (the parameters that decay)
    p = <tf_keras legacy Adam step>

  Model Garden clips before OptimizerV2's own `clipnorm`/`clipvalue`/
  `global_clipnorm`; here they come first (the two differ only when both
  are set). Under a distribution strategy Model Garden clips each replica's
  gradients before they are summed; the bridge clips the sum.

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    beta_1, beta_2, epsilon, amsgrad: As `jaxopt_port.legacy.adam`.
    weight_decay_rate: >= 0.
    include_in_weight_decay, exclude_from_weight_decay: Regular expressions
      of parameter names, or None.
    gradient_clip_norm: The global norm to clip to; 0 does not clip.

  Reference: TF Model Garden 2.20, `legacy_adamw.py`.
  """
  _checks.check_range("weight_decay_rate", weight_decay_rate, 0.0)
  _checks.check_range("gradient_clip_norm", gradient_clip_norm, 0.0)
  step = _adam_weight_decay.with_scaled_decay(
      _adam_weight_decay.legacy_adam_step(beta_1, beta_2, epsilon, amsgrad),
      weight_decay_rate, _adam_weight_decay.decays_by_name(
          weight_decay_rate,
          _adam_weight_decay.searched(include_in_weight_decay),
          _adam_weight_decay.searched(exclude_from_weight_decay)))
  if _checks.concrete_number(gradient_clip_norm) == 0.0:
    return step

  def update(grads, slots, params, learning_rate, iteration):
    return step.update(clip_by_global_norm(grads, gradient_clip_norm), slots,
                       params, learning_rate, iteration)

  return UpdateStep(step.build, update)
