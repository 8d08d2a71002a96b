"""TensorFlow Addons' optimizers (`tfa.optimizers`, end-of-life).

TF Addons' optimizers were OptimizerV2 subclasses: each function here takes
its TFA class's arguments with their names and defaults, plus OptimizerV2's
`lr`, `decay` and clipping arguments, and computes TFA's formula in float32.
TF Addons cannot be installed beside TensorFlow 2.21; the tests check each
port against a numpy implementation of the published formula. The wrappers
(`moving_average`, `swa`, `lookahead`) wrap any optax transformation.
"""

from jaxopt_port.addons._adam_family import (adabelief, lamb, lazy_adam,
                                             novograd, rectified_adam, yogi)
from jaxopt_port.addons._cocob import cocob
from jaxopt_port.addons._conditional_gradient import conditional_gradient
from jaxopt_port.addons._decoupled import adamw, decoupled_weight_decay, sgdw
from jaxopt_port.addons._proximal_adagrad import proximal_adagrad
from jaxopt_port.addons._wrappers import (AveragedState, LookaheadState,
                                          average_params, lookahead,
                                          moving_average, swa)

__all__ = [
    "AveragedState", "LookaheadState", "adabelief", "adamw", "average_params",
    "cocob", "conditional_gradient", "decoupled_weight_decay", "lamb",
    "lazy_adam", "lookahead", "moving_average", "novograd", "proximal_adagrad",
    "rectified_adam", "sgdw", "swa", "yogi",
]
