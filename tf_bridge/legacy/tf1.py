"""TF1's `tf.compat.v1.train` optimizers as OptimizerV2 classes:
`tf_bridge.legacy.tf1.<Name>` runs `jaxopt_port.tf1.<name>` (TF1's numerics
and argument names) with OptimizerV2's `lr`, `decay` and clipping around
it."""

from tf_bridge.legacy._optimizer import LegacyOptimizer

# Catalog classes, written by `python -m tf_bridge.catalog` from CATALOG.


class GradientDescent(LegacyOptimizer, algorithm="tf1.gradient_descent"):
  """`tensorflow.compat.v1.train.GradientDescentOptimizer`, bridged as an
  OptimizerV2."""


class Momentum(LegacyOptimizer, algorithm="tf1.momentum"):
  """`tensorflow.compat.v1.train.MomentumOptimizer`, bridged as an
  OptimizerV2."""


class Adam(LegacyOptimizer, algorithm="tf1.adam"):
  """`tensorflow.compat.v1.train.AdamOptimizer`, bridged as an OptimizerV2."""


class Adagrad(LegacyOptimizer, algorithm="tf1.adagrad"):
  """`tensorflow.compat.v1.train.AdagradOptimizer`, bridged as an
  OptimizerV2."""


class AdagradDA(LegacyOptimizer, algorithm="tf1.adagrad_da"):
  """`tensorflow.compat.v1.train.AdagradDAOptimizer`, bridged as an
  OptimizerV2."""


class Adadelta(LegacyOptimizer, algorithm="tf1.adadelta"):
  """`tensorflow.compat.v1.train.AdadeltaOptimizer`, bridged as an
  OptimizerV2."""


class RMSProp(LegacyOptimizer, algorithm="tf1.rmsprop"):
  """`tensorflow.compat.v1.train.RMSPropOptimizer`, bridged as an
  OptimizerV2."""


class Ftrl(LegacyOptimizer, algorithm="tf1.ftrl"):
  """`tensorflow.compat.v1.train.FtrlOptimizer`, bridged as an OptimizerV2."""


class ProximalAdagrad(LegacyOptimizer, algorithm="tf1.proximal_adagrad"):
  """`tensorflow.compat.v1.train.ProximalAdagradOptimizer`, bridged as an
  OptimizerV2."""


class ProximalGradientDescent(LegacyOptimizer,
                              algorithm="tf1.proximal_gradient_descent"):
  """`tensorflow.compat.v1.train.ProximalGradientDescentOptimizer`, bridged as
  an OptimizerV2."""


__all__ = ["GradientDescent", "Momentum", "Adam", "Adagrad", "AdagradDA",
           "Adadelta", "RMSProp", "Ftrl", "ProximalAdagrad",
           "ProximalGradientDescent"]
# End of catalog classes.
