"""The Keras 3 optimizers: one class per Keras 3 entry of the catalog
(`tf_bridge.catalog`), each running its `jaxopt_port` transform in one XLA
call per step (`tf_bridge.Keras3Optimizer`); `tf_bridge.<Name>` is the
same class."""

from typing import TYPE_CHECKING

from tf_bridge._keras3 import Keras3Optimizer
from tf_bridge._native_methods import MuonMethods

# Catalog classes, written by `python -m tf_bridge.catalog` from CATALOG.


class SGD(Keras3Optimizer, algorithm="sgd"):
  """`keras.optimizers.SGD`, bridged as a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False,
                 weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *,
                 skip_nonfinite=False) -> None: ...


class Adam(Keras3Optimizer, algorithm="adam"):
  """`keras.optimizers.Adam`, bridged as a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-07, amsgrad=False, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *,
                 skip_nonfinite=False) -> None: ...


class AdamW(Keras3Optimizer, algorithm="adamw"):
  """`keras.optimizers.AdamW`, bridged as a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9,
                 beta_2=0.999, epsilon=1e-07, amsgrad=False, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None,
                 loss_scale_factor=None, gradient_accumulation_steps=None,
                 name=None, *, skip_nonfinite=False) -> None: ...


class Adagrad(Keras3Optimizer, algorithm="adagrad"):
  """`keras.optimizers.Adagrad`, bridged as a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1,
                 epsilon=1e-07, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None,
                 loss_scale_factor=None, gradient_accumulation_steps=None,
                 name=None, *, skip_nonfinite=False) -> None: ...


class RMSprop(Keras3Optimizer, algorithm="rmsprop"):
  """`keras.optimizers.RMSprop`, bridged as a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0,
                 epsilon=1e-07, centered=False, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *,
                 skip_nonfinite=False) -> None: ...


class Adamax(Keras3Optimizer, algorithm="adamax"):
  """`keras.optimizers.Adamax`, bridged as a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-07, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None,
                 loss_scale_factor=None, gradient_accumulation_steps=None,
                 name=None, *, skip_nonfinite=False) -> None: ...


class Nadam(Keras3Optimizer, algorithm="nadam"):
  """`keras.optimizers.Nadam`, bridged as a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-07, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None,
                 loss_scale_factor=None, gradient_accumulation_steps=None,
                 name=None, *, skip_nonfinite=False) -> None: ...


class Adadelta(Keras3Optimizer, algorithm="adadelta"):
  """`keras.optimizers.Adadelta`, bridged as a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-07,
                 weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *,
                 skip_nonfinite=False) -> None: ...


class Lion(Keras3Optimizer, algorithm="lion"):
  """`keras.optimizers.Lion`, bridged as a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.99,
                 weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *,
                 skip_nonfinite=False) -> None: ...


class Ftrl(Keras3Optimizer, algorithm="ftrl"):
  """`keras.optimizers.Ftrl`, bridged as a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, learning_rate_power=-0.5,
                 initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0,
                 l2_shrinkage_regularization_strength=0.0, beta=0.0,
                 weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *,
                 skip_nonfinite=False) -> None: ...


class Lamb(Keras3Optimizer, algorithm="lamb"):
  """`keras.optimizers.Lamb`, bridged as a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-07, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None,
                 loss_scale_factor=None, gradient_accumulation_steps=None,
                 name=None, *, skip_nonfinite=False) -> None: ...


class Adafactor(Keras3Optimizer, algorithm="adafactor"):
  """`keras.optimizers.Adafactor`, bridged as a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_2_decay=-0.8, epsilon_1=1e-30,
                 epsilon_2=0.001, clip_threshold=1.0, relative_step=True,
                 weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *,
                 skip_nonfinite=False) -> None: ...


class Muon(MuonMethods, Keras3Optimizer, algorithm="muon"):
  """`keras.optimizers.Muon`, bridged as a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, adam_beta_1=0.9, adam_beta_2=0.999,
                 adam_weight_decay=0.004, epsilon=1e-07, weight_decay=0.004,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None,
                 exclude_layers=None, exclude_embeddings=True, muon_a=3.4445,
                 muon_b=-4.775, muon_c=2.0315, adam_lr_ratio=1, momentum=0.95,
                 ns_steps=5, nesterov=True, rms_rate=0.2, *,
                 skip_nonfinite=False) -> None: ...


class ScheduleFreeAdamW(Keras3Optimizer, algorithm="schedule_free_adamw"):
  """`keras.optimizers.ScheduleFreeAdamW`, bridged as a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.0025, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-08, warmup_steps=0, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *,
                 skip_nonfinite=False) -> None: ...


class VanillaSGD(Keras3Optimizer, algorithm="vanilla_sgd"):
  """`jaxopt_port.vanilla_sgd`, bridged as a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.01, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None,
                 loss_scale_factor=None, gradient_accumulation_steps=None,
                 name=None, *, skip_nonfinite=False) -> None: ...


class MomentumSGD(Keras3Optimizer, algorithm="momentum_sgd"):
  """`jaxopt_port.momentum_sgd`, bridged as a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.01, momentum=0.0, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *,
                 skip_nonfinite=False) -> None: ...


class CenteredMomentumSGD(Keras3Optimizer, algorithm="centered_momentum_sgd"):
  """`jaxopt_port.centered_momentum_sgd`, bridged as a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.01, momentum=0.0, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *,
                 skip_nonfinite=False) -> None: ...


class AdagradDecay(Keras3Optimizer, algorithm="adagrad_decay"):
  """`jaxopt_port.adagrad_decay`, bridged as a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate, initial_accumulator_value=0.1,
                 accumulator_decay_step=100000, accumulator_decay_rate=0.9,
                 weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *,
                 skip_nonfinite=False) -> None: ...


__all__ = ["SGD", "Adam", "AdamW", "Adagrad", "RMSprop", "Adamax", "Nadam",
           "Adadelta", "Lion", "Ftrl", "Lamb", "Adafactor", "Muon",
           "ScheduleFreeAdamW", "VanillaSGD", "MomentumSGD",
           "CenteredMomentumSGD", "AdagradDecay"]
# End of catalog classes.
