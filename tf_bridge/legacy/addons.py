"""TensorFlow Addons' optimizers as OptimizerV2 classes, as TFA shipped them:
`tf_bridge.legacy.addons.<Name>` runs `jaxopt_port.addons.<name>` with
OptimizerV2's `lr`, `decay` and clipping around it."""

import tensorflow as _tf
import tf_keras as _tf_keras
from jaxopt_port import addons as _ports

from tf_bridge import _cyclical, _fused, catalog
from tf_bridge.legacy import keras_optimizer

_CLASSES = _fused.declared_classes(
    keras_optimizer, catalog.legacy_hosted(catalog.ADDONS), __name__)
globals().update(_CLASSES)
__all__ = list(_CLASSES)

# TFA's wrappers take an optimizer (a bridged one of this generation): not
# algorithms, so not in the catalog.
MovingAverage = keras_optimizer(_ports.moving_average, name="MovingAverage",
                                module=__name__,
                                mixins=(_fused.AveragedOptimizer,))
SWA = keras_optimizer(_ports.swa, name="SWA", module=__name__,
                      mixins=(_fused.AveragedOptimizer,))
Lookahead = keras_optimizer(_ports.lookahead, name="Lookahead",
                            module=__name__)
__all__ += ["Lookahead", "MovingAverage", "SWA"]


_SCHEDULE = _tf_keras.optimizers.schedules.LearningRateSchedule
# Registered as TFA registered them, so TFA's saved configs load.
_serializable = _tf_keras.utils.register_keras_serializable(package="Addons")


@_serializable
class CyclicalLearningRate(_cyclical.Cyclical, _SCHEDULE):
  __doc__ = _cyclical.Cyclical.__doc__
  _ops = _tf


@_serializable
class TriangularCyclicalLearningRate(_cyclical.Triangular,
                                     CyclicalLearningRate):
  __doc__ = _cyclical.Triangular.__doc__


@_serializable
class Triangular2CyclicalLearningRate(_cyclical.Triangular2,
                                      CyclicalLearningRate):
  __doc__ = _cyclical.Triangular2.__doc__


@_serializable
class ExponentialCyclicalLearningRate(_cyclical.Exponential,
                                      CyclicalLearningRate):
  __doc__ = _cyclical.Exponential.__doc__


__all__ += ["CyclicalLearningRate", "TriangularCyclicalLearningRate",
            "Triangular2CyclicalLearningRate",
            "ExponentialCyclicalLearningRate"]
