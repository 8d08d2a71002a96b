"""TF1's optimizers: what `tf.compat.v1.train.<Name>Optimizer` computes.

Each function takes its TF1 class's arguments with their names and defaults
(`learning_rate` required, as in TF1; `beta1`, `use_nesterov`, ...), and
computes what TF1's kernels compute in float32. The step count is the
transform's own (TF1's `global_step` is not needed: AdagradDA's step is the
count of updates). `learning_rate` may also be a schedule of that count.
"""

from jaxopt_port._adagrad import adagrad_decay
from jaxopt_port.tf1._bert import adam_weight_decay
from jaxopt_port.tf1._optimizers import (adadelta, adagrad, adagrad_da, adam,
                                         ftrl,
                                         gradient_descent, momentum,
                                         proximal_adagrad,
                                         proximal_gradient_descent, rmsprop)

__all__ = [
    "adadelta", "adagrad", "adagrad_da", "adagrad_decay", "adam",
    "adam_weight_decay", "ftrl",
    "gradient_descent", "momentum", "proximal_adagrad",
    "proximal_gradient_descent", "rmsprop",
]
