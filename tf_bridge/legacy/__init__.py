"""OptimizerV2: the ports as `tf_keras.optimizers.legacy.Optimizer` classes.

`tf_bridge.legacy.<Name>` exists for every legacy port in the catalog (with
legacy numerics) and for every Keras 3 algorithm legacy lacks (with Keras 3
numerics, e.g. `AdamW`); the classes are in `tf_bridge.legacy.optimizers`,
all derived from `tf_bridge.legacy.LegacyOptimizer`, and
`tf_bridge.legacy.keras_optimizer(factory)` makes one from any optax
transform factory. TF1's and TF Addons' OptimizerV2 classes are in
`tf_bridge.legacy.tf1` and `tf_bridge.legacy.addons`.
`tf_bridge.legacy.adopt(cls)` makes one of a user's own TensorFlow optimizer
class (through `tf_bridge.port`).
"""

from tf_bridge.legacy._optimizer import LegacyOptimizer, keras_optimizer
from tf_bridge.legacy.optimizers import *  # pylint: disable=wildcard-import
from tf_bridge.legacy.optimizers import __all__ as _optimizers

__all__ = ["adopt", "LegacyOptimizer", "keras_optimizer", *_optimizers]


def __getattr__(name: str):
  """`tf_bridge.legacy.tf1`, `.addons` and `adopt` import on first use."""
  import importlib  # pylint: disable=import-outside-toplevel
  if name in ("tf1", "addons"):
    return importlib.import_module(f"tf_bridge.legacy.{name}")
  if name == "adopt":
    return importlib.import_module("tf_bridge.legacy._adopt").adopt
  raise AttributeError(f"module 'tf_bridge.legacy' has no attribute {name!r}")
