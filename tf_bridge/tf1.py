"""TF1's `tf.compat.v1.train` optimizers as Keras 3 optimizers.

`tf_bridge.tf1.<Name>` (`GradientDescent`, `Momentum`, `Adam`, ...) runs
`jaxopt_port.tf1.<name>`: TF1's numerics and argument names (`beta1`,
`use_nesterov`, a required `learning_rate`), with Keras 3's base arguments
and machinery around it. The OptimizerV2 classes are in
`tf_bridge.legacy.tf1`.
"""

from tf_bridge import catalog
from tf_bridge._keras3 import keras_optimizer

__all__ = []

for _declaration in catalog.CATALOG:
  if _declaration.generation == catalog.TF1:
    globals()[_declaration.class_name] = keras_optimizer(
        _declaration.port, name=_declaration.class_name,
        lazy_sparse=_declaration.lazy_sparse, module=__name__)
    __all__.append(_declaration.class_name)
del _declaration
