"""TensorFlow Addons' optimizers as OptimizerV2 classes, as TFA shipped them:
`tf_bridge.legacy.addons.<Name>` runs `jaxopt_port.addons.<name>` with
OptimizerV2's `lr`, `decay` and clipping around it."""

from jaxopt_port import addons as _ports

from tf_bridge import _fused, catalog
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
