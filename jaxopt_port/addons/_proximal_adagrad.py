"""TF Addons' ProximalAdagrad."""

from __future__ import annotations

from jaxopt_port import _adagrad, _checks
from jaxopt_port._base import UpdateStep, with_legacy_base_arguments


@with_legacy_base_arguments(learning_rate=0.001, sparse_rows="rows")
def proximal_adagrad(initial_accumulator_value: float = 0.1,
                     l1_regularization_strength: float = 0.0,
                     l2_regularization_strength: float = 0.0) -> UpdateStep:
  """Proximal Adagrad, as `tfa.optimizers.ProximalAdagrad` (the kernel of
  `jaxopt_port.tf1.proximal_adagrad`, with TFA's defaults and OptimizerV2's
  base arguments).

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    initial_accumulator_value: > 0.
    l1_regularization_strength, l2_regularization_strength: >= 0.
  """
  _checks.check_range("initial_accumulator_value", initial_accumulator_value,
                      0.0, low_open=True)
  _checks.check_range("l1_regularization_strength",
                      l1_regularization_strength, 0.0)
  _checks.check_range("l2_regularization_strength",
                      l2_regularization_strength, 0.0)
  return _adagrad.proximal_adagrad_update_step(initial_accumulator_value,
                                      l1_regularization_strength,
                                      l2_regularization_strength)
