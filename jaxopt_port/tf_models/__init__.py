"""TF Model Garden's optimizers (`official.modeling.optimization`): each
function takes its class's arguments with their names and defaults (plus
OptimizerV2's `lr`, `decay` and clipping arguments) and computes its
numbers.
"""

from jaxopt_port.tf_models._lars import lars
from jaxopt_port.tf_models._legacy_adamw import adam_weight_decay

__all__ = ["adam_weight_decay", "lars"]
