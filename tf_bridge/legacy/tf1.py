"""TF1's `tf.compat.v1.train` optimizers as OptimizerV2 classes.

`tf_bridge.legacy.tf1.<Name>` runs `jaxopt_port.tf1.<name>` with
OptimizerV2's `lr`, `decay` and clipping around it (see `tf_bridge.tf1` for
the Keras 3 classes).
"""

from tf_bridge import catalog
from tf_bridge.legacy import keras_optimizer

__all__ = []

for _declaration in catalog.legacy_hosted(catalog.TF1):
  globals()[_declaration.class_name] = keras_optimizer(
      _declaration.port, name=_declaration.class_name,
      lazy_sparse=_declaration.lazy_sparse, module=__name__)
  __all__.append(_declaration.class_name)
del _declaration
