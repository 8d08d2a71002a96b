"""TF1's `tf.compat.v1.train` optimizers as Keras 3 optimizers.

`tf_bridge.tf1.<Name>` (`GradientDescent`, `Momentum`, `Adam`, ...) runs
`jaxopt_port.tf1.<name>`: TF1's numerics and argument names (`beta1`,
`use_nesterov`, a required `learning_rate`), with Keras 3's base arguments
and machinery around it. The OptimizerV2 classes are in
`tf_bridge.legacy.tf1`.
"""

from tf_bridge._keras3 import Keras3Optimizer

# Catalog classes, written by `python -m tf_bridge.catalog` from CATALOG.


class GradientDescent(Keras3Optimizer, algorithm="tf1.gradient_descent"):
  """`tensorflow.compat.v1.train.GradientDescentOptimizer`, bridged as a Keras
  3 optimizer."""


class Momentum(Keras3Optimizer, algorithm="tf1.momentum"):
  """`tensorflow.compat.v1.train.MomentumOptimizer`, bridged as a Keras 3
  optimizer."""


class Adam(Keras3Optimizer, algorithm="tf1.adam"):
  """`tensorflow.compat.v1.train.AdamOptimizer`, bridged as a Keras 3
  optimizer."""


class Adagrad(Keras3Optimizer, algorithm="tf1.adagrad"):
  """`tensorflow.compat.v1.train.AdagradOptimizer`, bridged as a Keras 3
  optimizer."""


class AdagradDA(Keras3Optimizer, algorithm="tf1.adagrad_da"):
  """`tensorflow.compat.v1.train.AdagradDAOptimizer`, bridged as a Keras 3
  optimizer."""


class Adadelta(Keras3Optimizer, algorithm="tf1.adadelta"):
  """`tensorflow.compat.v1.train.AdadeltaOptimizer`, bridged as a Keras 3
  optimizer."""


class RMSProp(Keras3Optimizer, algorithm="tf1.rmsprop"):
  """`tensorflow.compat.v1.train.RMSPropOptimizer`, bridged as a Keras 3
  optimizer."""


class Ftrl(Keras3Optimizer, algorithm="tf1.ftrl"):
  """`tensorflow.compat.v1.train.FtrlOptimizer`, bridged as a Keras 3
  optimizer."""


class ProximalAdagrad(Keras3Optimizer, algorithm="tf1.proximal_adagrad"):
  """`tensorflow.compat.v1.train.ProximalAdagradOptimizer`, bridged as a Keras
  3 optimizer."""


class ProximalGradientDescent(Keras3Optimizer,
                              algorithm="tf1.proximal_gradient_descent"):
  """`tensorflow.compat.v1.train.ProximalGradientDescentOptimizer`, bridged as
  a Keras 3 optimizer."""


__all__ = ["GradientDescent", "Momentum", "Adam", "Adagrad", "AdagradDA",
           "Adadelta", "RMSProp", "Ftrl", "ProximalAdagrad",
           "ProximalGradientDescent"]
# End of catalog classes.
