"""The OptimizerV2 optimizers: one class per legacy entry of the catalog
(`tf_bridge.catalog`) with legacy numerics, and one per Keras 3 algorithm
legacy lacks (with Keras 3 numerics, e.g. `AdamW`), each running its
`jaxopt_port` transform in one XLA call per step
(`tf_bridge.legacy.LegacyOptimizer`); `tf_bridge.legacy.<Name>` is the same
class."""

from typing import TYPE_CHECKING

from tf_bridge._native_methods import MuonMethods
from tf_bridge.legacy._optimizer import LegacyOptimizer

# Catalog classes, written by `python -m tf_bridge.catalog` from CATALOG.


class SGD(LegacyOptimizer, algorithm="legacy.sgd"):
  """`tf_keras.optimizers.legacy.SGD`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False,
                 name='SGD', *, lr=None, decay=0.0, clipnorm=None,
                 clipvalue=None, global_clipnorm=None,
                 gradient_aggregator=None, gradient_transformers=None,
                 skip_nonfinite=False) -> None: ...


class Adam(LegacyOptimizer, algorithm="legacy.adam"):
  """`tf_keras.optimizers.legacy.Adam`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-07, amsgrad=False, name='Adam', *, lr=None,
                 decay=0.0, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, gradient_aggregator=None,
                 gradient_transformers=None, skip_nonfinite=False) -> None: ...


class Adagrad(LegacyOptimizer, algorithm="legacy.adagrad"):
  """`tf_keras.optimizers.legacy.Adagrad`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1,
                 epsilon=1e-07, name='Adagrad', *, lr=None, decay=0.0,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 gradient_aggregator=None, gradient_transformers=None,
                 skip_nonfinite=False) -> None: ...


class RMSprop(LegacyOptimizer, algorithm="legacy.rmsprop"):
  """`tf_keras.optimizers.legacy.RMSprop`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0,
                 epsilon=1e-07, centered=False, name='RMSprop', *, lr=None,
                 decay=0.0, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, gradient_aggregator=None,
                 gradient_transformers=None, skip_nonfinite=False) -> None: ...


class Adamax(LegacyOptimizer, algorithm="legacy.adamax"):
  """`tf_keras.optimizers.legacy.Adamax`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-07, name='Adamax', *, lr=None, decay=0.0,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 gradient_aggregator=None, gradient_transformers=None,
                 skip_nonfinite=False) -> None: ...


class Adadelta(LegacyOptimizer, algorithm="legacy.adadelta"):
  """`tf_keras.optimizers.legacy.Adadelta`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-07,
                 name='Adadelta', *, lr=None, decay=0.0, clipnorm=None,
                 clipvalue=None, global_clipnorm=None,
                 gradient_aggregator=None, gradient_transformers=None,
                 skip_nonfinite=False) -> None: ...


class Nadam(LegacyOptimizer, algorithm="legacy.nadam"):
  """`tf_keras.optimizers.legacy.Nadam`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-07, name='Nadam', *, schedule_decay=0.004,
                 decay=None, lr=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, gradient_aggregator=None,
                 gradient_transformers=None, skip_nonfinite=False) -> None: ...


class Ftrl(LegacyOptimizer, algorithm="legacy.ftrl"):
  """`tf_keras.optimizers.legacy.Ftrl`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, learning_rate_power=-0.5,
                 initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, name='Ftrl',
                 l2_shrinkage_regularization_strength=0.0, beta=0.0, *,
                 lr=None, decay=0.0, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, gradient_aggregator=None,
                 gradient_transformers=None, skip_nonfinite=False) -> None: ...


class VanillaSGD(LegacyOptimizer, algorithm="legacy.vanilla_sgd"):
  """`jaxopt_port.legacy.vanilla_sgd`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.01, name='VanillaSGD', *, lr=None,
                 decay=0.0, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, gradient_aggregator=None,
                 gradient_transformers=None, skip_nonfinite=False) -> None: ...


class MomentumSGD(LegacyOptimizer, algorithm="legacy.momentum_sgd"):
  """`jaxopt_port.legacy.momentum_sgd`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.01, momentum=0.0, name='MomentumSGD', *,
                 lr=None, decay=0.0, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, gradient_aggregator=None,
                 gradient_transformers=None, skip_nonfinite=False) -> None: ...


class CenteredMomentumSGD(LegacyOptimizer,
                          algorithm="legacy.centered_momentum_sgd"):
  """`jaxopt_port.legacy.centered_momentum_sgd`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.01, momentum=0.0,
                 name='CenteredMomentumSGD', *, lr=None, decay=0.0,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 gradient_aggregator=None, gradient_transformers=None,
                 skip_nonfinite=False) -> None: ...


class AdagradDecay(LegacyOptimizer, algorithm="legacy.adagrad_decay"):
  """`jaxopt_port.legacy.adagrad_decay`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate, initial_accumulator_value=0.1,
                 accumulator_decay_step=100000, accumulator_decay_rate=0.9,
                 name='AdagradDecay', *, lr=None, decay=0.0, clipnorm=None,
                 clipvalue=None, global_clipnorm=None,
                 gradient_aggregator=None, gradient_transformers=None,
                 skip_nonfinite=False) -> None: ...


class AdamW(LegacyOptimizer, algorithm="adamw"):
  """`keras.optimizers.AdamW`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9,
                 beta_2=0.999, epsilon=1e-07, amsgrad=False, name='AdamW', *,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, lr=None, decay=None,
                 gradient_aggregator=None, gradient_transformers=None,
                 skip_nonfinite=False) -> None: ...


class Lion(LegacyOptimizer, algorithm="lion"):
  """`keras.optimizers.Lion`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.99,
                 name='Lion', *, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None,
                 loss_scale_factor=None, gradient_accumulation_steps=None,
                 lr=None, decay=None, gradient_aggregator=None,
                 gradient_transformers=None, skip_nonfinite=False) -> None: ...


class Lamb(LegacyOptimizer, algorithm="lamb"):
  """`keras.optimizers.Lamb`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-07, name='Lamb', *, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, lr=None, decay=None,
                 gradient_aggregator=None, gradient_transformers=None,
                 skip_nonfinite=False) -> None: ...


class Adafactor(LegacyOptimizer, algorithm="adafactor"):
  """`keras.optimizers.Adafactor`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_2_decay=-0.8, epsilon_1=1e-30,
                 epsilon_2=0.001, clip_threshold=1.0, relative_step=True,
                 name='Adafactor', *, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None,
                 loss_scale_factor=None, gradient_accumulation_steps=None,
                 lr=None, decay=None, gradient_aggregator=None,
                 gradient_transformers=None, skip_nonfinite=False) -> None: ...


class Muon(MuonMethods, LegacyOptimizer, algorithm="muon"):
  """`keras.optimizers.Muon`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, adam_beta_1=0.9, adam_beta_2=0.999,
                 adam_weight_decay=0.004, epsilon=1e-07, weight_decay=0.004,
                 exclude_layers=None, exclude_embeddings=True, muon_a=3.4445,
                 muon_b=-4.775, muon_c=2.0315, adam_lr_ratio=1, momentum=0.95,
                 ns_steps=5, nesterov=True, rms_rate=0.2, name='Muon', *,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, lr=None, decay=None,
                 gradient_aggregator=None, gradient_transformers=None,
                 skip_nonfinite=False) -> None: ...


class ScheduleFreeAdamW(LegacyOptimizer, algorithm="schedule_free_adamw"):
  """`keras.optimizers.ScheduleFreeAdamW`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.0025, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-08, warmup_steps=0, name='ScheduleFreeAdamW', *,
                 weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, lr=None, decay=None,
                 gradient_aggregator=None, gradient_transformers=None,
                 skip_nonfinite=False) -> None: ...


__all__ = ["SGD", "Adam", "Adagrad", "RMSprop", "Adamax", "Adadelta", "Nadam",
           "Ftrl", "VanillaSGD", "MomentumSGD", "CenteredMomentumSGD",
           "AdagradDecay", "AdamW", "Lion", "Lamb", "Adafactor", "Muon",
           "ScheduleFreeAdamW"]
# End of catalog classes.
