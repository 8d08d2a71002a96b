"""TF1's `tf.compat.v1.train` optimizers as OptimizerV2 classes.

`tf_bridge.legacy.tf1.<Name>` runs `jaxopt_port.tf1.<name>` with
OptimizerV2's `lr`, `decay` and clipping around it (see `tf_bridge.tf1` for
the Keras 3 classes).
"""

from tf_bridge import catalog
from tf_bridge.legacy import declared_classes

_CLASSES = declared_classes(catalog.legacy_hosted(catalog.TF1), __name__)
globals().update(_CLASSES)
__all__ = list(_CLASSES)
