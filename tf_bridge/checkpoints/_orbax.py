"""orbax-checkpoint directories of `{"params": ..., "state": ...}`: the JAX
side of a converted run (`orbax-checkpoint` is installed with the `orbax`
extra)."""

from __future__ import annotations

import os
from typing import Any, Mapping

import jax
import numpy as np


def is_orbax(path: str) -> bool:
  return os.path.isdir(path) and os.path.exists(
      os.path.join(path, "_CHECKPOINT_METADATA"))


def _orbax() -> Any:
  try:
    import orbax.checkpoint as ocp  # pylint: disable=import-outside-toplevel
  except ImportError as error:
    raise ImportError(
        "orbax checkpoints need orbax-checkpoint: pip install "
        "'jaxopt-port[orbax]' (or orbax-checkpoint).") from error
  return ocp


def save(path: str, params: Mapping[str, Any], state: Any) -> None:
  """Saves the run (orbax writes a temporary directory and renames it when
  whole)."""
  checkpointer = _orbax().StandardCheckpointer()
  checkpointer.save(os.path.abspath(path), {"params": dict(params),
                                            "state": state})
  checkpointer.wait_until_finished()


def restore(path: str, transform: Any) -> tuple[dict[str, np.ndarray], Any]:
  """The run `save` wrote, its state in the tree `transform.init` gives."""
  checkpointer = _orbax().StandardCheckpointer()
  path = os.path.abspath(path)
  stored = checkpointer.metadata(path).item_metadata
  if "params" not in stored or "state" not in stored:
    raise ValueError(f"{path!r} is an orbax checkpoint without the "
                     "`params` and `state` of a converted run.")
  params = {name: jax.ShapeDtypeStruct(leaf.shape, leaf.dtype)
            for name, leaf in stored["params"].items()}
  restored = checkpointer.restore(path, {
      "params": params, "state": jax.eval_shape(transform.init, params)})
  return ({name: np.asarray(value)
           for name, value in restored["params"].items()},
          restored["state"])
