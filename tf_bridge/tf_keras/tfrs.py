"""TF Recommenders' optimizers (`tensorflow_recommenders.experimental.
optimizers`), of tf_keras's 2.11+ generation, bridged as that generation's
optimizers: `tf_bridge.tf_keras.tfrs.ClippyAdagrad` runs
`jaxopt_port.tfrs.clippy_adagrad`. (`tf_bridge.tfrs` has them as Keras 3
optimizers.)"""

from typing import TYPE_CHECKING

from tf_bridge.tf_keras._optimizer import TfKerasOptimizer

# Catalog classes, written by `python -m tf_bridge.catalog` from CATALOG.


class ClippyAdagrad(TfKerasOptimizer, algorithm="tfrs.clippy_adagrad"):
  """`tensorflow_recommenders.experimental.optimizers.ClippyAdagrad`, bridged
  as a tf_keras optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1,
                 variable_relative_threshold=0.1,
                 accumulator_relative_threshold=0.0, absolute_threshold=1e-07,
                 epsilon=1e-07, export_clipping_factors=False,
                 clip_accumulator_update=False,
                 use_standard_accumulator_update=False, weight_decay=0,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, jit_compile=True,
                 name='ClippyAdagrad', *, skip_nonfinite=False) -> None: ...


__all__ = ["ClippyAdagrad"]
# End of catalog classes.
