"""TF1's `tf.compat.v1.train` optimizers as Keras 3 optimizers.

`tf_bridge.tf1.<Name>` (`GradientDescent`, `Momentum`, `Adam`, ...) runs
`jaxopt_port.tf1.<name>`: TF1's numerics and argument names (`beta1`,
`use_nesterov`, a required `learning_rate`), with Keras 3's base arguments
and machinery around it. The OptimizerV2 classes are in
`tf_bridge.legacy.tf1`.
"""

from typing import TYPE_CHECKING

from tf_bridge._keras3 import Keras3Optimizer

# Catalog classes, written by `python -m tf_bridge.catalog` from CATALOG.


class GradientDescent(Keras3Optimizer, algorithm="tf1.gradient_descent"):
  """`tensorflow.compat.v1.train.GradientDescentOptimizer`, bridged as a Keras
  3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None,
                 loss_scale_factor=None, gradient_accumulation_steps=None,
                 name=None, *, skip_nonfinite=False) -> None: ...


class Momentum(Keras3Optimizer, algorithm="tf1.momentum"):
  """`tensorflow.compat.v1.train.MomentumOptimizer`, bridged as a Keras 3
  optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate, momentum, use_nesterov=False,
                 weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *,
                 skip_nonfinite=False) -> None: ...


class Adam(Keras3Optimizer, algorithm="tf1.adam"):
  """`tensorflow.compat.v1.train.AdamOptimizer`, bridged as a Keras 3
  optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999,
                 epsilon=1e-08, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None,
                 loss_scale_factor=None, gradient_accumulation_steps=None,
                 name=None, *, skip_nonfinite=False) -> None: ...


class Adagrad(Keras3Optimizer, algorithm="tf1.adagrad"):
  """`tensorflow.compat.v1.train.AdagradOptimizer`, bridged as a Keras 3
  optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate, initial_accumulator_value=0.1,
                 weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *,
                 skip_nonfinite=False) -> None: ...


class AdagradDA(Keras3Optimizer, algorithm="tf1.adagrad_da"):
  """`tensorflow.compat.v1.train.AdagradDAOptimizer`, bridged as a Keras 3
  optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate,
                 initial_gradient_squared_accumulator_value=0.1,
                 l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *,
                 skip_nonfinite=False) -> None: ...


class Adadelta(Keras3Optimizer, algorithm="tf1.adadelta"):
  """`tensorflow.compat.v1.train.AdadeltaOptimizer`, bridged as a Keras 3
  optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-08,
                 weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *,
                 skip_nonfinite=False) -> None: ...


class RMSProp(Keras3Optimizer, algorithm="tf1.rmsprop"):
  """`tensorflow.compat.v1.train.RMSPropOptimizer`, bridged as a Keras 3
  optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10,
                 centered=False, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None,
                 loss_scale_factor=None, gradient_accumulation_steps=None,
                 name=None, *, skip_nonfinite=False) -> None: ...


class Ftrl(Keras3Optimizer, algorithm="tf1.ftrl"):
  """`tensorflow.compat.v1.train.FtrlOptimizer`, bridged as a Keras 3
  optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate, learning_rate_power=-0.5,
                 initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0,
                 l2_shrinkage_regularization_strength=0.0, beta=0.0,
                 weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *,
                 skip_nonfinite=False) -> None: ...


class ProximalAdagrad(Keras3Optimizer, algorithm="tf1.proximal_adagrad"):
  """`tensorflow.compat.v1.train.ProximalAdagradOptimizer`, bridged as a Keras
  3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *,
                 skip_nonfinite=False) -> None: ...


class ProximalGradientDescent(Keras3Optimizer,
                              algorithm="tf1.proximal_gradient_descent"):
  """`tensorflow.compat.v1.train.ProximalGradientDescentOptimizer`, bridged as
  a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *,
                 skip_nonfinite=False) -> None: ...


class AdamWeightDecay(Keras3Optimizer, algorithm="tf1.adam_weight_decay"):
  """`jaxopt_port.tf1.adam_weight_decay`, bridged as a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate, weight_decay_rate=0.0, beta_1=0.9,
                 beta_2=0.999, epsilon=1e-06, exclude_from_weight_decay=None,
                 weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *,
                 skip_nonfinite=False) -> None: ...


__all__ = ["GradientDescent", "Momentum", "Adam", "Adagrad", "AdagradDA",
           "Adadelta", "RMSProp", "Ftrl", "ProximalAdagrad",
           "ProximalGradientDescent", "AdamWeightDecay"]
# End of catalog classes.
