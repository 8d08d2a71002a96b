"""TensorFlow Addons' optimizers as Keras 3 optimizers.

`tf_bridge.addons.<Name>` (`AdamW`, `SGDW`, `LazyAdam`, `RectifiedAdam`,
`Yogi`, `NovoGrad`, `COCOB`, `ConditionalGradient`, `ProximalAdagrad`,
`LAMB`) runs `jaxopt_port.addons.<name>` with TFA's argument names and
numerics (TFA's optimizers were OptimizerV2 ones, so the port also takes `lr`
and `decay`); the OptimizerV2 classes are in `tf_bridge.legacy.addons`.
"""

import keras as _keras
from jaxopt_port import addons as _ports

from tf_bridge import _cyclical, _fused, catalog
from tf_bridge._keras3 import keras_optimizer

_CLASSES = _fused.declared_classes(
    keras_optimizer,
    [d for d in catalog.CATALOG if d.generation == catalog.ADDONS], __name__)
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


_SCHEDULE = _keras.optimizers.schedules.LearningRateSchedule
_serializable = _keras.saving.register_keras_serializable(package="Addons")


@_serializable
class CyclicalLearningRate(_cyclical.Cyclical, _SCHEDULE):
  __doc__ = _cyclical.Cyclical.__doc__
  _ops = _keras.ops


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
