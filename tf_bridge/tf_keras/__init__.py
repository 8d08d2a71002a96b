"""tf_keras's own optimizer generation (`tf_keras.optimizers.<Name>`, on
`tf_keras.optimizers.Optimizer`: the default of TF 2.11-2.15 and of tf_keras
programs today), bridged: `tf_bridge.tf_keras.Adam` is a
`tf_keras.optimizers.Optimizer` taking native's arguments, making native's
variables, and running `jaxopt_port.tf_keras.adam` in one XLA call per step.
The classes are in `tf_bridge.tf_keras.optimizers`, all derived from
`tf_bridge.tf_keras.TfKerasOptimizer`, and
`tf_bridge.tf_keras.keras_optimizer(factory)` makes one from any optax
transform factory. TF Recommenders' optimizers, of this generation, are in
`tf_bridge.tf_keras.tfrs`. `tf_bridge.tf_keras.adopt(cls)` makes one of a
user's own TensorFlow optimizer class (through `tf_bridge.port`).
"""

from tf_bridge.tf_keras._optimizer import TfKerasOptimizer, keras_optimizer
from tf_bridge.tf_keras.optimizers import *  # pylint: disable=wildcard-import
from tf_bridge.tf_keras.optimizers import __all__ as _optimizers

__all__ = ["adopt", "TfKerasOptimizer", "keras_optimizer", *_optimizers]


def __getattr__(name: str):
  """`tf_bridge.tf_keras.tfrs` and `adopt` import on first use."""
  import importlib  # pylint: disable=import-outside-toplevel
  if name == "tfrs":
    return importlib.import_module(f"tf_bridge.tf_keras.{name}")
  if name == "adopt":
    return importlib.import_module("tf_bridge.tf_keras._adopt").adopt
  raise AttributeError(
      f"module 'tf_bridge.tf_keras' has no attribute {name!r}")
