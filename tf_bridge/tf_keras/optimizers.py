"""The catalog's classes of tf_keras's 2.11+ generation (re-exported by
`tf_bridge.tf_keras`)."""

from typing import TYPE_CHECKING

from tf_bridge.tf_keras._optimizer import TfKerasOptimizer

# Catalog classes, written by `python -m tf_bridge.catalog` from CATALOG.


class SGD(TfKerasOptimizer, algorithm="tf_keras.sgd"):
  """`tf_keras.optimizers.SGD`, bridged as a tf_keras optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False,
                 weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, jit_compile=True, name='SGD', *,
                 skip_nonfinite=False) -> None: ...


class Adam(TfKerasOptimizer, algorithm="tf_keras.adam"):
  """`tf_keras.optimizers.Adam`, bridged as a tf_keras optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-07, adaptive_epsilon=False, amsgrad=False,
                 weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, jit_compile=True, name='Adam',
                 *, skip_nonfinite=False) -> None: ...


class AdamW(TfKerasOptimizer, algorithm="tf_keras.adamw"):
  """`tf_keras.optimizers.AdamW`, bridged as a tf_keras optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9,
                 beta_2=0.999, epsilon=1e-07, amsgrad=False, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None,
                 jit_compile=True, name='AdamW', *,
                 skip_nonfinite=False) -> None: ...


class Adagrad(TfKerasOptimizer, algorithm="tf_keras.adagrad"):
  """`tf_keras.optimizers.Adagrad`, bridged as a tf_keras optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1,
                 epsilon=1e-07, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None,
                 jit_compile=True, name='Adagrad', *,
                 skip_nonfinite=False) -> None: ...


class RMSprop(TfKerasOptimizer, algorithm="tf_keras.rmsprop"):
  """`tf_keras.optimizers.RMSprop`, bridged as a tf_keras optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0,
                 epsilon=1e-07, centered=False, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99, ema_overwrite_frequency=100,
                 jit_compile=True, name='RMSprop', *,
                 skip_nonfinite=False) -> None: ...


class Adamax(TfKerasOptimizer, algorithm="tf_keras.adamax"):
  """`tf_keras.optimizers.Adamax`, bridged as a tf_keras optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-07, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None,
                 jit_compile=True, name='Adamax', *,
                 skip_nonfinite=False) -> None: ...


class Nadam(TfKerasOptimizer, algorithm="tf_keras.nadam"):
  """`tf_keras.optimizers.Nadam`, bridged as a tf_keras optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-07, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None,
                 jit_compile=True, name='Nadam', *,
                 skip_nonfinite=False) -> None: ...


class Adadelta(TfKerasOptimizer, algorithm="tf_keras.adadelta"):
  """`tf_keras.optimizers.Adadelta`, bridged as a tf_keras optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-07,
                 weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, jit_compile=True,
                 name='Adadelta', *, skip_nonfinite=False) -> None: ...


class Lion(TfKerasOptimizer, algorithm="tf_keras.lion"):
  """`tf_keras.optimizers.Lion`, bridged as a tf_keras optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.0001, beta_1=0.9, beta_2=0.99,
                 weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, jit_compile=True, name='Lion',
                 *, skip_nonfinite=False) -> None: ...


class Ftrl(TfKerasOptimizer, algorithm="tf_keras.ftrl"):
  """`tf_keras.optimizers.Ftrl`, bridged as a tf_keras optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, learning_rate_power=-0.5,
                 initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0,
                 l2_shrinkage_regularization_strength=0.0, beta=0.0,
                 weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, jit_compile=True, name='Ftrl',
                 *, skip_nonfinite=False) -> None: ...


class Adafactor(TfKerasOptimizer, algorithm="tf_keras.adafactor"):
  """`tf_keras.optimizers.Adafactor`, bridged as a tf_keras optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_2_decay=-0.8, epsilon_1=1e-30,
                 epsilon_2=0.001, clip_threshold=1.0, relative_step=True,
                 weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, jit_compile=True,
                 name='Adafactor', *, skip_nonfinite=False) -> None: ...


__all__ = ["SGD", "Adam", "AdamW", "Adagrad", "RMSprop", "Adamax", "Nadam",
           "Adadelta", "Lion", "Ftrl", "Adafactor"]
# End of catalog classes.
