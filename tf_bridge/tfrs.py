"""TF Recommenders' optimizers (`tensorflow_recommenders.experimental.
optimizers`) as Keras 3 optimizers: `tf_bridge.tfrs.ClippyAdagrad` runs
`jaxopt_port.tfrs.clippy_adagrad`. (TFRS's are tf_keras optimizers of the
2.11+ generation, whose bridged host is not there yet.)"""

from typing import TYPE_CHECKING

from tf_bridge._keras3 import Keras3Optimizer

# Catalog classes, written by `python -m tf_bridge.catalog` from CATALOG.


class ClippyAdagrad(Keras3Optimizer, algorithm="tfrs.clippy_adagrad"):
  """`tensorflow_recommenders.experimental.optimizers.ClippyAdagrad`, bridged
  as a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1,
                 variable_relative_threshold=0.1,
                 accumulator_relative_threshold=0.0, absolute_threshold=1e-07,
                 epsilon=1e-07, export_clipping_factors=False,
                 clip_accumulator_update=False,
                 use_standard_accumulator_update=False, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *,
                 skip_nonfinite=False) -> None: ...


__all__ = ["ClippyAdagrad"]
# End of catalog classes.
