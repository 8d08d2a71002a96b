"""Hugging Face transformers' TF optimizers (`transformers.optimization_tf`,
removed in transformers 5): `adam_weight_decay` takes `AdamWeightDecay`'s
arguments with their names and defaults (plus OptimizerV2's `lr`, `decay`
and clipping arguments) and computes its numbers; `WarmUp` is its schedule
and `create_optimizer` the optimizer its function makes.
"""

from jaxopt_port.hf._optimization import (WarmUp, adam_weight_decay,
                                          create_optimizer)

__all__ = ["WarmUp", "adam_weight_decay", "create_optimizer"]
