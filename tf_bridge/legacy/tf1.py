"""TF1's `tf.compat.v1.train` optimizers as OptimizerV2 classes:
`tf_bridge.legacy.tf1.<Name>` runs `jaxopt_port.tf1.<name>` (TF1's numerics
and argument names) with OptimizerV2's `lr`, `decay` and clipping around
it."""

from typing import TYPE_CHECKING

from tf_bridge.legacy._tf1_api import LegacyTF1Optimizer

# Catalog classes, written by `python -m tf_bridge.catalog` from CATALOG.


class GradientDescent(LegacyTF1Optimizer, algorithm="tf1.gradient_descent"):
  """`tensorflow.compat.v1.train.GradientDescentOptimizer`, bridged as an
  OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate, name='GradientDescent', *, lr=None,
                 decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, gradient_aggregator=None,
                 gradient_transformers=None, skip_nonfinite=False) -> None: ...


class Momentum(LegacyTF1Optimizer, algorithm="tf1.momentum"):
  """`tensorflow.compat.v1.train.MomentumOptimizer`, bridged as an
  OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate, momentum, use_nesterov=False,
                 name='Momentum', *, lr=None, decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None,
                 gradient_aggregator=None, gradient_transformers=None,
                 skip_nonfinite=False) -> None: ...


class Adam(LegacyTF1Optimizer, algorithm="tf1.adam"):
  """`tensorflow.compat.v1.train.AdamOptimizer`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999,
                 epsilon=1e-08, name='Adam', *, lr=None, decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 gradient_aggregator=None, gradient_transformers=None,
                 skip_nonfinite=False) -> None: ...


class Adagrad(LegacyTF1Optimizer, algorithm="tf1.adagrad"):
  """`tensorflow.compat.v1.train.AdagradOptimizer`, bridged as an
  OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate, initial_accumulator_value=0.1,
                 name='Adagrad', *, lr=None, decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None,
                 gradient_aggregator=None, gradient_transformers=None,
                 skip_nonfinite=False) -> None: ...


class AdagradDA(LegacyTF1Optimizer, algorithm="tf1.adagrad_da"):
  """`tensorflow.compat.v1.train.AdagradDAOptimizer`, bridged as an
  OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate,
                 initial_gradient_squared_accumulator_value=0.1,
                 l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, name='AdagradDA', *, lr=None,
                 decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, gradient_aggregator=None,
                 gradient_transformers=None, skip_nonfinite=False) -> None: ...


class Adadelta(LegacyTF1Optimizer, algorithm="tf1.adadelta"):
  """`tensorflow.compat.v1.train.AdadeltaOptimizer`, bridged as an
  OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-08,
                 name='Adadelta', *, lr=None, decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None,
                 gradient_aggregator=None, gradient_transformers=None,
                 skip_nonfinite=False) -> None: ...


class RMSProp(LegacyTF1Optimizer, algorithm="tf1.rmsprop"):
  """`tensorflow.compat.v1.train.RMSPropOptimizer`, bridged as an
  OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10,
                 centered=False, name='RMSProp', *, lr=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None,
                 gradient_aggregator=None, gradient_transformers=None,
                 skip_nonfinite=False) -> None: ...


class Ftrl(LegacyTF1Optimizer, algorithm="tf1.ftrl"):
  """`tensorflow.compat.v1.train.FtrlOptimizer`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate, learning_rate_power=-0.5,
                 initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0,
                 l2_shrinkage_regularization_strength=0.0, beta=0.0,
                 name='Ftrl', *, lr=None, decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None,
                 gradient_aggregator=None, gradient_transformers=None,
                 skip_nonfinite=False) -> None: ...


class ProximalAdagrad(LegacyTF1Optimizer, algorithm="tf1.proximal_adagrad"):
  """`tensorflow.compat.v1.train.ProximalAdagradOptimizer`, bridged as an
  OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, name='ProximalAdagrad', *,
                 lr=None, decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, gradient_aggregator=None,
                 gradient_transformers=None, skip_nonfinite=False) -> None: ...


class ProximalGradientDescent(LegacyTF1Optimizer,
                              algorithm="tf1.proximal_gradient_descent"):
  """`tensorflow.compat.v1.train.ProximalGradientDescentOptimizer`, bridged as
  an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0,
                 name='ProximalGradientDescent', *, lr=None, decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 gradient_aggregator=None, gradient_transformers=None,
                 skip_nonfinite=False) -> None: ...


class AdamWeightDecay(LegacyTF1Optimizer, algorithm="tf1.adam_weight_decay"):
  """`jaxopt_port.tf1.adam_weight_decay`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate, weight_decay_rate=0.0, beta_1=0.9,
                 beta_2=0.999, epsilon=1e-06, exclude_from_weight_decay=None,
                 name='AdamWeightDecay', *, lr=None, decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None,
                 gradient_aggregator=None, gradient_transformers=None,
                 skip_nonfinite=False) -> None: ...


__all__ = ["GradientDescent", "Momentum", "Adam", "Adagrad", "AdagradDA",
           "Adadelta", "RMSProp", "Ftrl", "ProximalAdagrad",
           "ProximalGradientDescent", "AdamWeightDecay"]
# End of catalog classes.
