"""Hugging Face transformers' TF optimization (`transformers.optimization_tf`,
removed in transformers 5) as OptimizerV2 classes, as transformers shipped
it: `AdamWeightDecay` runs `jaxopt_port.hf.adam_weight_decay`; `WarmUp` and
`create_optimizer` are Hugging Face's. Hugging Face's own `WarmUp` objects
are taken as learning rates too."""

from typing import TYPE_CHECKING

import tensorflow as _tf
import tf_keras as _tf_keras

from tf_bridge import _hf
from tf_bridge.legacy._optimizer import LegacyOptimizer
from tf_bridge.tf_keras import Adam as _Adam

# Catalog classes, written by `python -m tf_bridge.catalog` from CATALOG.


class AdamWeightDecay(LegacyOptimizer, algorithm="hf.adam_weight_decay"):
  """`transformers.optimization_tf.AdamWeightDecay`, bridged as an
  OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-07, amsgrad=False, weight_decay_rate=0.0,
                 include_in_weight_decay=None, exclude_from_weight_decay=None,
                 name='AdamWeightDecay', *, lr=None, decay=0.0, clipnorm=None,
                 clipvalue=None, global_clipnorm=None,
                 gradient_aggregator=None, gradient_transformers=None,
                 skip_nonfinite=False) -> None: ...


__all__ = ["AdamWeightDecay"]
# End of catalog classes.


@_tf_keras.saving.register_keras_serializable(package=__name__)
class WarmUp(_hf.WarmUp, _tf_keras.optimizers.schedules.LearningRateSchedule):
  __doc__ = _hf.WarmUp.__doc__
  _ops = _tf


# `create_optimizer` without weight decay makes `tf_keras.optimizers.Adam`,
# of the 2.11+ generation: its twin is `tf_bridge.tf_keras.Adam`.
create_optimizer = _hf.create_optimizer_of(_tf_keras, AdamWeightDecay, _Adam,
                                           WarmUp)

__all__ += ["WarmUp", "create_optimizer"]
