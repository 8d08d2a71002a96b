"""TF Model Garden's `official.modeling.optimization.lamb.LAMB`."""

from __future__ import annotations

from typing import Sequence

from jaxopt_port import _checks, addons
from jaxopt_port._base import UpdateStep, with_legacy_base_arguments


@with_legacy_base_arguments(learning_rate=0.001)
def lamb(beta_1: float = 0.9, beta_2: float = 0.999, epsilon: float = 1e-6,
         weight_decay_rate: float = 0.0,
         exclude_from_weight_decay: Sequence[str] | None = None,
         exclude_from_layer_adaptation: Sequence[str] | None = None
         ) -> UpdateStep:
  """LAMB, as TF Model Garden's `official.modeling.optimization.lamb.LAMB`:
  TF Addons' (`jaxopt_port.addons.lamb`, the code Model Garden's was copied
  from) with its decay rate named `weight_decay_rate`, as Model Garden's
  `LAMBConfig` and `OptimizerFactory` pass it::

    m = m * beta_1 + g * (1 - beta_1);  v = v * beta_2 + g**2 * (1 - beta_2)
    u = (m / (1 - beta_1**t)) / (sqrt(v / (1 - beta_2**t)) + epsilon)
    u = u + weight_decay_rate * p                (unless excluded)
    r = ||p|| / ||u|| if both > 0 else 1         (unless excluded)
    p = p - r * lr * u

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    beta_1, beta_2: In [0, 1).
    epsilon, weight_decay_rate: >= 0.
    exclude_from_weight_decay, exclude_from_layer_adaptation: Regular
      expressions of parameter names (`re.search`); the second defaults to
      the first.

  Reference: TF Model Garden 2.20, `lamb.py`; You et al., 2020, "Large
  Batch Optimization for Deep Learning: Training BERT in 76 minutes".
  """
  # Named here: TF Addons' step would name its own `weight_decay`.
  _checks.check_number("weight_decay_rate", weight_decay_rate,
                       optional=False)
  _checks.check_range("weight_decay_rate", weight_decay_rate, 0.0)
  return addons.lamb.make_update_step(
      beta_1=beta_1, beta_2=beta_2, epsilon=epsilon,
      weight_decay=weight_decay_rate,
      exclude_from_weight_decay=exclude_from_weight_decay,
      exclude_from_layer_adaptation=exclude_from_layer_adaptation)
