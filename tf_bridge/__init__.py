"""TensorFlow/Keras side: the ports as real Keras optimizers, and parity.

`tf_bridge.<Name>` is a Keras 3 optimizer (`keras.optimizers.Optimizer`) for
every Keras 3 port in the catalog (`tf_bridge.catalog`; the classes are in
`tf_bridge.optimizers`, all derived from `tf_bridge.Keras3Optimizer`), and
`tf_bridge.keras_optimizer(factory)` makes one from any optax transform
factory. The OptimizerV2 classes live in `tf_bridge.legacy`; TF1's and TF
Addons' optimizers in `tf_bridge.tf1` and `tf_bridge.addons` (and
`tf_bridge.legacy.tf1`, `tf_bridge.legacy.addons`).
`tf_bridge.testing.assert_parity` checks a transform against a native Keras
optimizer step by step; `python -m tf_bridge.parity` reports it.
`tf_bridge.state_from_keras` and `tf_bridge.state_to_keras` move a run's
optimizer state between a native Keras optimizer and its JAX port;
`tf_bridge.native_optimizer(model)` saves a model as compiled with the
native twin of its bridged optimizer, for users without this project.
"""

from tf_bridge._start import start_keras

start_keras()

# pylint: disable=wrong-import-position
from tf_bridge import catalog
from tf_bridge._keras3 import Keras3Optimizer, keras_optimizer
from tf_bridge._native_twin import native_optimizer, native_twin
from tf_bridge._state import port_for, state_from_keras, state_to_keras
from tf_bridge.optimizers import *  # pylint: disable=wildcard-import
from tf_bridge.optimizers import __all__ as _optimizers

__all__ = ["adopt", "catalog", "Keras3Optimizer", "keras_optimizer",
           "native_optimizer", "native_twin", "port", "PortError", "PortState",
           "port_for", "state_from_keras",
           "state_to_keras", *_optimizers]


def __getattr__(name: str):
  """`tf_bridge.legacy`, `.tf1`, `.addons`, `.testing`, `.parity` import on
  first use, so `import tf_bridge` does not load tf_keras; `port`,
  `adopt`, `PortError` and `PortState` too, so that on Keras's JAX backend
  it does not load TensorFlow."""
  import importlib  # pylint: disable=import-outside-toplevel
  if name in ("legacy", "tf1", "addons", "testing", "parity"):
    return importlib.import_module(f"tf_bridge.{name}")
  if name in ("port", "PortError", "PortState"):
    return getattr(importlib.import_module("tf_bridge._port"), name)
  if name == "adopt":
    return importlib.import_module("tf_bridge._adopt").adopt
  raise AttributeError(f"module 'tf_bridge' has no attribute {name!r}")
