"""The OptimizerV2 optimizers: one class per legacy entry of the catalog
(`tf_bridge.catalog`) with legacy numerics, and one per Keras 3 algorithm
legacy lacks (with Keras 3 numerics, e.g. `AdamW`), each running its
`jaxopt_port` transform in one XLA call per step
(`tf_bridge.legacy.LegacyOptimizer`); `tf_bridge.legacy.<Name>` is the same
class."""

from tf_bridge._native_methods import MuonMethods
from tf_bridge.legacy._optimizer import LegacyOptimizer

# Catalog classes, written by `python -m tf_bridge.catalog` from CATALOG.


class SGD(LegacyOptimizer, algorithm="legacy.sgd"):
  """`tf_keras.optimizers.legacy.SGD`, bridged as an OptimizerV2."""


class Adam(LegacyOptimizer, algorithm="legacy.adam"):
  """`tf_keras.optimizers.legacy.Adam`, bridged as an OptimizerV2."""


class Adagrad(LegacyOptimizer, algorithm="legacy.adagrad"):
  """`tf_keras.optimizers.legacy.Adagrad`, bridged as an OptimizerV2."""


class RMSprop(LegacyOptimizer, algorithm="legacy.rmsprop"):
  """`tf_keras.optimizers.legacy.RMSprop`, bridged as an OptimizerV2."""


class Adamax(LegacyOptimizer, algorithm="legacy.adamax"):
  """`tf_keras.optimizers.legacy.Adamax`, bridged as an OptimizerV2."""


class Adadelta(LegacyOptimizer, algorithm="legacy.adadelta"):
  """`tf_keras.optimizers.legacy.Adadelta`, bridged as an OptimizerV2."""


class Nadam(LegacyOptimizer, algorithm="legacy.nadam"):
  """`tf_keras.optimizers.legacy.Nadam`, bridged as an OptimizerV2."""


class Ftrl(LegacyOptimizer, algorithm="legacy.ftrl"):
  """`tf_keras.optimizers.legacy.Ftrl`, bridged as an OptimizerV2."""


class VanillaSGD(LegacyOptimizer, algorithm="legacy.vanilla_sgd"):
  """`jaxopt_port.legacy.vanilla_sgd`, bridged as an OptimizerV2."""


class MomentumSGD(LegacyOptimizer, algorithm="legacy.momentum_sgd"):
  """`jaxopt_port.legacy.momentum_sgd`, bridged as an OptimizerV2."""


class CenteredMomentumSGD(LegacyOptimizer,
                          algorithm="legacy.centered_momentum_sgd"):
  """`jaxopt_port.legacy.centered_momentum_sgd`, bridged as an OptimizerV2."""


class AdagradDecay(LegacyOptimizer, algorithm="legacy.adagrad_decay"):
  """`jaxopt_port.legacy.adagrad_decay`, bridged as an OptimizerV2."""


class AdamW(LegacyOptimizer, algorithm="adamw"):
  """`keras.optimizers.AdamW`, bridged as an OptimizerV2."""


class Lion(LegacyOptimizer, algorithm="lion"):
  """`keras.optimizers.Lion`, bridged as an OptimizerV2."""


class Lamb(LegacyOptimizer, algorithm="lamb"):
  """`keras.optimizers.Lamb`, bridged as an OptimizerV2."""


class Adafactor(LegacyOptimizer, algorithm="adafactor"):
  """`keras.optimizers.Adafactor`, bridged as an OptimizerV2."""


class Muon(MuonMethods, LegacyOptimizer, algorithm="muon"):
  """`keras.optimizers.Muon`, bridged as an OptimizerV2."""


class ScheduleFreeAdamW(LegacyOptimizer, algorithm="schedule_free_adamw"):
  """`keras.optimizers.ScheduleFreeAdamW`, bridged as an OptimizerV2."""


__all__ = ["SGD", "Adam", "Adagrad", "RMSprop", "Adamax", "Adadelta", "Nadam",
           "Ftrl", "VanillaSGD", "MomentumSGD", "CenteredMomentumSGD",
           "AdagradDecay", "AdamW", "Lion", "Lamb", "Adafactor", "Muon",
           "ScheduleFreeAdamW"]
# End of catalog classes.
