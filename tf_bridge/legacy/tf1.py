"""TF1's `tf.compat.v1.train` optimizers as OptimizerV2 classes.

`tf_bridge.legacy.tf1.<Name>` runs `jaxopt_port.tf1.<name>` with
OptimizerV2's `lr`, `decay` and clipping around it (see `tf_bridge.tf1` for
the Keras 3 classes).
"""

from tf_bridge import _fused, catalog
from tf_bridge.legacy import keras_optimizer

_CLASSES = _fused.declared_classes(
    keras_optimizer, catalog.legacy_hosted(catalog.TF1), __name__)
globals().update(_CLASSES)
__all__ = list(_CLASSES)
