"""The Keras 3 optimizers: one class per Keras 3 entry of the catalog
(`tf_bridge.catalog`), each running its `jaxopt_port` transform in one XLA
call per step (`tf_bridge.Keras3Optimizer`); `tf_bridge.<Name>` is the
same class."""

from tf_bridge._keras3 import Keras3Optimizer
from tf_bridge._native_methods import MuonMethods

# Catalog classes, written by `python -m tf_bridge.catalog` from CATALOG.


class SGD(Keras3Optimizer, algorithm="sgd"):
  """`keras.optimizers.SGD`, bridged as a Keras 3 optimizer."""


class Adam(Keras3Optimizer, algorithm="adam"):
  """`keras.optimizers.Adam`, bridged as a Keras 3 optimizer."""


class AdamW(Keras3Optimizer, algorithm="adamw"):
  """`keras.optimizers.AdamW`, bridged as a Keras 3 optimizer."""


class Adagrad(Keras3Optimizer, algorithm="adagrad"):
  """`keras.optimizers.Adagrad`, bridged as a Keras 3 optimizer."""


class RMSprop(Keras3Optimizer, algorithm="rmsprop"):
  """`keras.optimizers.RMSprop`, bridged as a Keras 3 optimizer."""


class Adamax(Keras3Optimizer, algorithm="adamax"):
  """`keras.optimizers.Adamax`, bridged as a Keras 3 optimizer."""


class Nadam(Keras3Optimizer, algorithm="nadam"):
  """`keras.optimizers.Nadam`, bridged as a Keras 3 optimizer."""


class Adadelta(Keras3Optimizer, algorithm="adadelta"):
  """`keras.optimizers.Adadelta`, bridged as a Keras 3 optimizer."""


class Lion(Keras3Optimizer, algorithm="lion"):
  """`keras.optimizers.Lion`, bridged as a Keras 3 optimizer."""


class Ftrl(Keras3Optimizer, algorithm="ftrl"):
  """`keras.optimizers.Ftrl`, bridged as a Keras 3 optimizer."""


class Lamb(Keras3Optimizer, algorithm="lamb"):
  """`keras.optimizers.Lamb`, bridged as a Keras 3 optimizer."""


class Adafactor(Keras3Optimizer, algorithm="adafactor"):
  """`keras.optimizers.Adafactor`, bridged as a Keras 3 optimizer."""


class Muon(MuonMethods, Keras3Optimizer, algorithm="muon"):
  """`keras.optimizers.Muon`, bridged as a Keras 3 optimizer."""


class ScheduleFreeAdamW(Keras3Optimizer, algorithm="schedule_free_adamw"):
  """`keras.optimizers.ScheduleFreeAdamW`, bridged as a Keras 3 optimizer."""


class VanillaSGD(Keras3Optimizer, algorithm="vanilla_sgd"):
  """`jaxopt_port.vanilla_sgd`, bridged as a Keras 3 optimizer."""


class MomentumSGD(Keras3Optimizer, algorithm="momentum_sgd"):
  """`jaxopt_port.momentum_sgd`, bridged as a Keras 3 optimizer."""


class CenteredMomentumSGD(Keras3Optimizer, algorithm="centered_momentum_sgd"):
  """`jaxopt_port.centered_momentum_sgd`, bridged as a Keras 3 optimizer."""


class AdagradDecay(Keras3Optimizer, algorithm="adagrad_decay"):
  """`jaxopt_port.adagrad_decay`, bridged as a Keras 3 optimizer."""


__all__ = ["SGD", "Adam", "AdamW", "Adagrad", "RMSprop", "Adamax", "Nadam",
           "Adadelta", "Lion", "Ftrl", "Lamb", "Adafactor", "Muon",
           "ScheduleFreeAdamW", "VanillaSGD", "MomentumSGD",
           "CenteredMomentumSGD", "AdagradDecay"]
# End of catalog classes.
