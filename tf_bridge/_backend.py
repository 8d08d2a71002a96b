"""The Keras backends the Keras 3 classes run on: TensorFlow (the step is
one XLA call through jax2tf) and JAX (the step is the jitted transform)."""

from __future__ import annotations

import importlib
import os

SUPPORTED = ("tensorflow", "jax")


def import_keras() -> None:
  """Imports Keras; where `KERAS_BACKEND` names a backend the bridge does not
  run on and Keras cannot even start it (torch without PyTorch), the
  ImportError names the backend and the supported ones."""
  backend = os.environ.get("KERAS_BACKEND", "tensorflow")
  try:
    importlib.import_module("keras")
  except ImportError as error:
    if backend in SUPPORTED:
      raise
    raise ImportError(
        f"Keras could not start its {backend!r} backend (KERAS_BACKEND="
        f"{backend}): {error}. tf_bridge runs on Keras's "
        f"{' and '.join(SUPPORTED)} backends: set KERAS_BACKEND to one of "
        "them before Keras is imported.") from error


def check_backend(class_name: str) -> None:
  """Refuses to make a Keras 3 class on another backend, naming it."""
  import keras  # pylint: disable=import-outside-toplevel
  backend = keras.backend.backend()
  if backend not in SUPPORTED:
    raise ValueError(
        f"{class_name} runs on Keras's {' and '.join(SUPPORTED)} backends; "
        f"this Keras runs on its {backend!r} backend (KERAS_BACKEND). Set "
        "KERAS_BACKEND=tensorflow or jax before Keras is imported, or use "
        "the optax transform (jaxopt_port) directly.")
