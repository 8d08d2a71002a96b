"""TensorFlow Addons' optimizers as Keras 3 optimizers.

`tf_bridge.addons.<Name>` (`AdamW`, `SGDW`, `LazyAdam`, `RectifiedAdam`,
`Yogi`, `NovoGrad`, `COCOB`, `ConditionalGradient`, `ProximalAdagrad`,
`LAMB`) runs `jaxopt_port.addons.<name>` with TFA's argument names and
numerics (TFA's optimizers were OptimizerV2 ones, so the port also takes `lr`
and `decay`); the OptimizerV2 classes are in `tf_bridge.legacy.addons`.
"""

from jaxopt_port import addons as _ports

from tf_bridge import _fused, catalog
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
