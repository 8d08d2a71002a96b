"""TF Model Garden's optimizers (`official.modeling.optimization`) as Keras 3
optimizers: `tf_bridge.tf_models.<Name>` (`LARS`, `AdamWeightDecay`, `LAMB`)
runs `jaxopt_port.tf_models.<name>` (tf_keras legacy numbers, and its `lr`
and `decay`); its `ExponentialMovingAverage` wrapper and its learning-rate
schedules, on Keras 3's `LearningRateSchedule`. The OptimizerV2 classes and
`OptimizerFactory` are in `tf_bridge.legacy.tf_models`."""

from typing import TYPE_CHECKING

import keras as _keras

from jaxopt_port import tf_models as _ports
from tf_bridge import _tf_models
from tf_bridge._averaging import GardenMovingAverage
from tf_bridge._keras3 import Keras3Optimizer
from tf_bridge._native_methods import LambNameMethods

# Catalog classes, written by `python -m tf_bridge.catalog` from CATALOG.


class AdamWeightDecay(Keras3Optimizer,
                      algorithm="tf_models.adam_weight_decay"):
  """`official.modeling.optimization.legacy_adamw.AdamWeightDecay`, bridged as
  a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-07, amsgrad=False, weight_decay_rate=0.0,
                 include_in_weight_decay=None, exclude_from_weight_decay=None,
                 gradient_clip_norm=1.0, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None,
                 loss_scale_factor=None, gradient_accumulation_steps=None,
                 name=None, *, lr=None, decay=0.0,
                 skip_nonfinite=False) -> None: ...


class LARS(Keras3Optimizer, algorithm="tf_models.lars"):
  """`official.modeling.optimization.lars.LARS`, bridged as a Keras 3
  optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.01, momentum=0.9, weight_decay_rate=0.0,
                 eeta=0.001, nesterov=False, classic_momentum=True,
                 exclude_from_weight_decay=None,
                 exclude_from_layer_adaptation=None, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *, lr=None,
                 decay=0.0, skip_nonfinite=False) -> None: ...


class LAMB(LambNameMethods, Keras3Optimizer, algorithm="tf_models.lamb"):
  """`official.modeling.optimization.lamb.LAMB`, bridged as a Keras 3
  optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-06, weight_decay_rate=0.0,
                 exclude_from_weight_decay=None,
                 exclude_from_layer_adaptation=None, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *, lr=None,
                 decay=0.0, skip_nonfinite=False) -> None: ...


__all__ = ["AdamWeightDecay", "LARS", "LAMB"]
# End of catalog classes.


# Model Garden's wrapper takes an optimizer (a bridged one of this
# generation): not an algorithm, so not in the catalog.
class ExponentialMovingAverage(GardenMovingAverage, Keras3Optimizer,
                               port=_ports.exponential_moving_average):
  """Model Garden's `ExponentialMovingAverage` wrapper, as a Keras 3
  optimizer (Model Garden has it for OptimizerV2 only)."""


_SCHEDULES = _tf_models.schedule_classes(
    _keras.optimizers.schedules, _keras.ops, __name__,
    _keras.saving.register_keras_serializable(package=__name__))
LinearWarmup = _SCHEDULES["LinearWarmup"]
PolynomialWarmUp = _SCHEDULES["PolynomialWarmUp"]
DirectPowerDecay = _SCHEDULES["DirectPowerDecay"]
PowerAndLinearDecay = _SCHEDULES["PowerAndLinearDecay"]
PowerDecayWithOffset = _SCHEDULES["PowerDecayWithOffset"]
StepCosineDecayWithOffset = _SCHEDULES["StepCosineDecayWithOffset"]
PiecewiseConstantDecayWithOffset = _SCHEDULES[
    "PiecewiseConstantDecayWithOffset"]
PolynomialDecayWithOffset = _SCHEDULES["PolynomialDecayWithOffset"]
ExponentialDecayWithOffset = _SCHEDULES["ExponentialDecayWithOffset"]
CosineDecayWithOffset = _SCHEDULES["CosineDecayWithOffset"]

__all__ += ["ExponentialMovingAverage", *_SCHEDULES]
