"""Hugging Face transformers' TF optimization (`transformers.optimization_tf`,
removed in transformers 5) as Keras 3 optimizers: `AdamWeightDecay` runs
`jaxopt_port.hf.adam_weight_decay` (tf_keras legacy Adam's numbers, and its
`lr` and `decay`); `WarmUp` and `create_optimizer` are Hugging Face's, on
Keras 3. The OptimizerV2 classes are in `tf_bridge.legacy.hf`."""

from typing import TYPE_CHECKING

import keras as _keras

from tf_bridge import _hf
from tf_bridge._keras3 import Keras3Optimizer
from tf_bridge.optimizers import Adam as _Adam

# Catalog classes, written by `python -m tf_bridge.catalog` from CATALOG.


class AdamWeightDecay(Keras3Optimizer, algorithm="hf.adam_weight_decay"):
  """`transformers.optimization_tf.AdamWeightDecay`, bridged as a Keras 3
  optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-07, amsgrad=False, weight_decay_rate=0.0,
                 include_in_weight_decay=None, exclude_from_weight_decay=None,
                 weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *, lr=None,
                 decay=0.0, skip_nonfinite=False) -> None: ...


__all__ = ["AdamWeightDecay"]
# End of catalog classes.


@_keras.saving.register_keras_serializable(package=__name__)
class WarmUp(_hf.WarmUp, _keras.optimizers.schedules.LearningRateSchedule):
  __doc__ = _hf.WarmUp.__doc__
  _ops = _keras.ops


create_optimizer = _hf.create_optimizer_of(_keras, AdamWeightDecay, _Adam,
                                           WarmUp)

__all__ += ["WarmUp", "create_optimizer"]
