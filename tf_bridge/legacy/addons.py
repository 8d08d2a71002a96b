"""TensorFlow Addons' optimizers as OptimizerV2 classes, as TFA shipped them:
`tf_bridge.legacy.addons.<Name>` runs `jaxopt_port.addons.<name>` with
OptimizerV2's `lr`, `decay` and clipping around it."""

import functools as _functools

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


def extend_with_decoupled_weight_decay(base_optimizer: type) -> type:
  """TFA's `extend_with_decoupled_weight_decay`: an OptimizerV2 class running
  `base_optimizer`'s algorithm after TFA's decoupled weight decay
  (`jaxopt_port.addons.decoupled_weight_decay`). Its constructor takes
  `weight_decay` first, then the base's arguments, and
  `exclude_from_weight_decay`; `apply_gradients` and `minimize` take
  `decay_var_list`. `extend_with_decoupled_weight_decay(
  tf_keras.optimizers.legacy.Adam)` is TFA's `AdamW`.

  Args:
    base_optimizer: A bridged OptimizerV2 class, or a tf_keras legacy class
      with a bridged twin in `tf_bridge.legacy` (whose algorithm it runs).
  """
  from tf_bridge import legacy  # pylint: disable=import-outside-toplevel

  def is_bridged_class(value):
    return (isinstance(value, type) and getattr(value, "_fused_class", False)
            and issubclass(value, _tf_keras.optimizers.legacy.Optimizer))

  bridged = (base_optimizer if is_bridged_class(base_optimizer)
             else getattr(legacy, getattr(base_optimizer, "__name__", ""),
                          None))
  if not is_bridged_class(bridged):
    raise TypeError(
        "extend_with_decoupled_weight_decay takes a bridged OptimizerV2 "
        "class or a tf_keras legacy optimizer class with a bridged twin in "
        f"tf_bridge.legacy. Received: base_optimizer={base_optimizer!r}")
  return _with_decoupled_weight_decay(bridged)


@_functools.cache
def _with_decoupled_weight_decay(bridged: type) -> type:
  return keras_optimizer(_ports.decoupled_weight_decay(bridged.port),
                         name=f"{bridged.__name__}WithDecoupledWeightDecay",
                         module=__name__)


__all__ += ["extend_with_decoupled_weight_decay"]


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
