"""The OptimizerV2 generation: `tf_keras.optimizers.legacy`'s numerics.

Each function computes what its `tf_keras.optimizers.legacy` namesake computes,
with that class's argument names and defaults, plus OptimizerV2's `lr`,
`decay`, `clipnorm`, `clipvalue` and `global_clipnorm`. Where the formula is
Keras 3's, the update step is shared; the state's slot fields carry the legacy
slot names (`m`, `v`, `vhat`, `rms`, `mg`, ...).
"""

from jaxopt_port.legacy._optimizers import (adadelta, adagrad, adagrad_decay,
                                            adam, adamax, centered_momentum_sgd,
                                            ftrl, momentum_sgd, nadam, rmsprop,
                                            sgd, vanilla_sgd)

__all__ = [
    "adadelta", "adagrad", "adagrad_decay", "adam", "adamax",
    "centered_momentum_sgd", "ftrl",
    "momentum_sgd", "nadam", "rmsprop", "sgd", "vanilla_sgd",
]
