"""TF Model Garden's optimizers (`official.modeling.optimization`) as
OptimizerV2 classes, as Model Garden ships them: `tf_bridge.legacy.tf_models.
<Name>` (`LARS`, `AdamWeightDecay`) runs `jaxopt_port.tf_models.<name>` with
OptimizerV2's `lr`, `decay` and clipping around it."""

from typing import TYPE_CHECKING

from tf_bridge.legacy._optimizer import LegacyOptimizer

# Catalog classes, written by `python -m tf_bridge.catalog` from CATALOG.


class AdamWeightDecay(LegacyOptimizer,
                      algorithm="tf_models.adam_weight_decay"):
  """`official.modeling.optimization.legacy_adamw.AdamWeightDecay`, bridged as
  an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-07, amsgrad=False, weight_decay_rate=0.0,
                 include_in_weight_decay=None, exclude_from_weight_decay=None,
                 gradient_clip_norm=1.0, name='AdamWeightDecay', *, lr=None,
                 decay=0.0, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, gradient_aggregator=None,
                 gradient_transformers=None, skip_nonfinite=False) -> None: ...


class LARS(LegacyOptimizer, algorithm="tf_models.lars"):
  """`official.modeling.optimization.lars.LARS`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.01, momentum=0.9, weight_decay_rate=0.0,
                 eeta=0.001, nesterov=False, classic_momentum=True,
                 exclude_from_weight_decay=None,
                 exclude_from_layer_adaptation=None, name='LARS', *, lr=None,
                 decay=0.0, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, gradient_aggregator=None,
                 gradient_transformers=None, skip_nonfinite=False) -> None: ...


__all__ = ["AdamWeightDecay", "LARS"]
# End of catalog classes.
