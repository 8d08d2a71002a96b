"""TF Model Garden's optimizers (`official.modeling.optimization`): each
function takes its class's arguments with their names and defaults (plus
OptimizerV2's `lr`, `decay` and clipping arguments) and computes its
numbers. Its learning-rate schedules are here by their class names, as
callables of the step count.
"""

from jaxopt_port.tf_models._ema import exponential_moving_average
from jaxopt_port.tf_models._lamb import lamb
from jaxopt_port.tf_models._lars import lars
from jaxopt_port.tf_models._legacy_adamw import adam_weight_decay
from jaxopt_port.tf_models._schedules import (
    CosineDecayWithOffset, DirectPowerDecay, ExponentialDecayWithOffset,
    LinearWarmup, PiecewiseConstantDecayWithOffset, PolynomialDecayWithOffset,
    PolynomialWarmUp, PowerAndLinearDecay, PowerDecayWithOffset,
    StepCosineDecayWithOffset)

__all__ = [
    "CosineDecayWithOffset", "DirectPowerDecay", "ExponentialDecayWithOffset",
    "LinearWarmup", "PiecewiseConstantDecayWithOffset",
    "PolynomialDecayWithOffset", "PolynomialWarmUp", "PowerAndLinearDecay",
    "PowerDecayWithOffset", "StepCosineDecayWithOffset", "adam_weight_decay",
    "exponential_moving_average", "lamb", "lars",
]
