"""tf_keras's own optimizer generation (`tf_keras.optimizers.<Name>`, the
`tf_keras.optimizers.Optimizer` of TF 2.11 and later), each taking the
native class's arguments and computing its numbers.

Their update steps are Keras 3's (`jaxopt_port.<name>`'s), save three:
`adam` takes tf_keras's `adaptive_epsilon`, `lion` defaults to tf_keras's
learning rate, 1e-4, and `sgd` keeps its momentum slot at momentum 0
(`adamw` has tf_keras's words for a missing `weight_decay`). Their
base arguments are tf_keras's (`tf_keras_transform`): no loss scale or
gradient accumulation, `jit_compile`, several clipping arguments at once
(the first of `clipnorm`, `global_clipnorm`, `clipvalue` applies), and a
moving average that starts from the initial params.
"""

from jaxopt_port import _adadelta, _adafactor, _adagrad, _adamax
from jaxopt_port import _ftrl, _nadam, _rmsprop
from jaxopt_port.tf_keras._base import (same_step_as, tf_keras_transform,
                                        with_tf_keras_base_arguments)
from jaxopt_port.tf_keras._optimizers import adam, adamw, lion, sgd

adadelta = same_step_as(_adadelta.adadelta, "Adadelta")
adafactor = same_step_as(_adafactor.adafactor, "Adafactor")
adagrad = same_step_as(_adagrad.adagrad, "Adagrad")
adamax = same_step_as(_adamax.adamax, "Adamax")
ftrl = same_step_as(_ftrl.ftrl, "Ftrl")
nadam = same_step_as(_nadam.nadam, "Nadam")
rmsprop = same_step_as(_rmsprop.rmsprop, "RMSprop",
                       ema_overwrite_frequency=100)

__all__ = ["adadelta", "adafactor", "adagrad", "adam", "adamax", "adamw",
           "ftrl", "lion", "nadam", "rmsprop", "sgd", "tf_keras_transform",
           "with_tf_keras_base_arguments"]
