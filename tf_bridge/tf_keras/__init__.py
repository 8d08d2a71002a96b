"""tf_keras's own optimizer generation (`tf_keras.optimizers.<Name>`, on
`tf_keras.optimizers.Optimizer`: the default of TF 2.11-2.15 and of tf_keras
programs today), bridged: `tf_bridge.tf_keras.Adam` is a
`tf_keras.optimizers.Optimizer` taking native's arguments, making native's
variables, and running `jaxopt_port.tf_keras.adam` in one XLA call per step.
The classes are in `tf_bridge.tf_keras.optimizers`, all derived from
`tf_bridge.tf_keras.TfKerasOptimizer`, and
`tf_bridge.tf_keras.keras_optimizer(factory)` makes one from any optax
transform factory. TF Recommenders' optimizers, of this generation, are in
`tf_bridge.tf_keras.tfrs`.
"""

from tf_bridge.tf_keras._optimizer import TfKerasOptimizer, keras_optimizer
from tf_bridge.tf_keras.optimizers import *  # pylint: disable=wildcard-import
from tf_bridge.tf_keras.optimizers import __all__ as _optimizers

__all__ = ["TfKerasOptimizer", "keras_optimizer", *_optimizers]


def __getattr__(name: str):
  """`tf_bridge.tf_keras.tfrs` imports on first use."""
  if name == "tfrs":
    import importlib  # pylint: disable=import-outside-toplevel
    return importlib.import_module(f"tf_bridge.tf_keras.{name}")
  raise AttributeError(
      f"module 'tf_bridge.tf_keras' has no attribute {name!r}")
