"""TF1's `tf.compat.v1.train` optimizers as Keras 3 optimizers.

`tf_bridge.tf1.<Name>` (`GradientDescent`, `Momentum`, `Adam`, ...) runs
`jaxopt_port.tf1.<name>`: TF1's numerics and argument names (`beta1`,
`use_nesterov`, a required `learning_rate`), with Keras 3's base arguments
and machinery around it. The OptimizerV2 classes are in
`tf_bridge.legacy.tf1`.
"""

from tf_bridge import _fused, catalog
from tf_bridge._keras3 import keras_optimizer

_CLASSES = _fused.declared_classes(
    keras_optimizer,
    [d for d in catalog.CATALOG if d.generation == catalog.TF1], __name__)
globals().update(_CLASSES)
__all__ = list(_CLASSES)
