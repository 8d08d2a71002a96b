"""orbax-checkpoint directories of `{"params": ..., "state": ...}`: the JAX
side of a converted run (`orbax-checkpoint` is installed with the `orbax`
extra)."""

from __future__ import annotations

import os
from typing import Any, Mapping

import jax
import numpy as np

# The item `save` adds when the state's count is not the run's.
_UNCOUNTED = "count_unknown"


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


def save(path: str, params: Mapping[str, Any], state: Any,
         counted: bool = True) -> None:
  """Saves the run (orbax writes a temporary directory and renames it when
  whole); `counted` False: the state's count is not the run's (its source
  file kept none), which `restore` tells."""
  checkpointer = _orbax().StandardCheckpointer()
  item = {"params": dict(params), "state": state}
  if not counted:
    item[_UNCOUNTED] = np.asarray(True)
  checkpointer.save(os.path.abspath(path), item)
  checkpointer.wait_until_finished()


def restore(path: str, transform: Any
            ) -> tuple[dict[str, np.ndarray], Any, bool]:
  """The run `save` wrote, its state in the tree `transform.init` gives,
  and whether its count is the run's."""
  checkpointer = _orbax().StandardCheckpointer()
  path = os.path.abspath(path)
  stored = checkpointer.metadata(path).item_metadata
  if "params" not in stored or "state" not in stored:
    raise ValueError(f"{path!r} is an orbax checkpoint without the "
                     "`params` and `state` of a converted run.")
  params = {name: jax.ShapeDtypeStruct(leaf.shape, leaf.dtype)
            for name, leaf in stored["params"].items()}
  target = {"params": params, "state": jax.eval_shape(transform.init, params)}
  if _UNCOUNTED in stored:
    target[_UNCOUNTED] = jax.ShapeDtypeStruct((), np.bool_)
  restored = checkpointer.restore(path, target)
  return ({name: np.asarray(value)
           for name, value in restored["params"].items()},
          restored["state"], _UNCOUNTED not in restored)
