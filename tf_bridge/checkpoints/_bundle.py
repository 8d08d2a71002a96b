"""TensorFlow checkpoint files (tensor bundles: `<prefix>.index` and
`<prefix>.data-*`), read whole and written whole.

Both TF dialects are tensor bundles: TF1's `Saver` keys its tensors by
variable name, TF2's object-based checkpoints by object path, with the
object graph under `_CHECKPOINTABLE_OBJECT_GRAPH`.
"""

from __future__ import annotations

import glob
import os
import tempfile
from typing import Any, Mapping

import numpy as np

OBJECT_GRAPH = "_CHECKPOINTABLE_OBJECT_GRAPH"


def checkpoint_prefix(path: str) -> str:
  """The prefix of the checkpoint at `path`: a prefix itself, or a
  directory whose `checkpoint` file names the latest one (as
  `CheckpointManager` and `ModelCheckpoint` write)."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  if os.path.isdir(path):
    latest = tf.train.latest_checkpoint(path)
    if latest is None:
      raise FileNotFoundError(
          f"{path!r} is a directory without a `checkpoint` file naming a "
          "TensorFlow checkpoint in it.")
    return latest
  if not os.path.exists(path + ".index"):
    raise FileNotFoundError(
        f"{path!r} is not a TensorFlow checkpoint: expected the prefix of "
        f"one (its files {os.path.basename(path)}.index and "
        f"{os.path.basename(path)}.data-00000-of-00001), or its directory.")
  return path


def read_bundle(path: str) -> dict[str, np.ndarray]:
  """Every tensor of the checkpoint at `path` (a prefix or directory), by
  key; the object graph stays serialized (bytes)."""
  return _reading(path, lambda reader: {
      key: reader.get_tensor(key)
      for key in sorted(reader.get_variable_to_shape_map())})


def bundle_keys(path: str) -> list[str]:
  """The keys of the checkpoint at `path`, from its index alone."""
  return _reading(path, lambda reader: sorted(
      reader.get_variable_to_shape_map()))


def _reading(path: str, read: Any) -> Any:
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  prefix = checkpoint_prefix(path)
  try:
    return read(tf.train.load_checkpoint(prefix))
  except (tf.errors.OpError, ValueError, IndexError) as error:
    raise ValueError(
        f"{prefix!r} is not a readable TensorFlow checkpoint (truncated or "
        f"damaged?): {type(error).__name__}: {error}") from None


def write_bundle(prefix: str, tensors: Mapping[str, Any]) -> None:
  """Writes `tensors` as the checkpoint `prefix`: the files are written
  under a temporary prefix in the same directory and renamed into place,
  the index (which makes them a checkpoint) last, so that a failed write
  leaves no partial checkpoint behind."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  directory = os.path.dirname(os.path.abspath(prefix))
  os.makedirs(directory, exist_ok=True)
  scratch = tempfile.mkdtemp(prefix=".tf_bridge-", dir=directory)
  try:
    temporary = os.path.join(scratch, "checkpoint")
    names = sorted(tensors)
    # Bytes (the object graph) stay objects: numpy's fixed-width strings
    # drop trailing NUL bytes.
    values = [np.asarray(tensors[n], object if isinstance(tensors[n], bytes)
                         else None) for n in names]
    # A graph and session of its own: in a TF1 program (eager execution
    # disabled, or inside the program's graph) the op would only be added
    # to the program's graph. Placeholders keep the values out of the
    # graph, whose definition is limited to 2 GB.
    with tf.Graph().as_default() as graph, tf.device("/cpu:0"):
      fed = [tf.compat.v1.placeholder(
          tf.string if v.dtype.kind in "OSU" else tf.as_dtype(v.dtype),
          v.shape) for v in values]
      save = tf.raw_ops.SaveV2(prefix=temporary, tensor_names=names,
                               shape_and_slices=[""] * len(names),
                               tensors=fed)
    with tf.compat.v1.Session(graph=graph) as session:
      session.run(save, dict(zip(fed, values)))
    # Over an existing checkpoint, its index goes first: an interrupted
    # rename then leaves no checkpoint at `prefix`, never one whose index
    # points into another's data.
    if os.path.exists(prefix + ".index"):
      os.remove(prefix + ".index")
    for stale in glob.glob(glob.escape(prefix) + ".data-*"):
      os.remove(stale)
    for data in sorted(glob.glob(temporary + ".data-*")):
      os.replace(data, prefix + data[len(temporary):])
    os.replace(temporary + ".index", prefix + ".index")
  finally:
    for left in glob.glob(os.path.join(scratch, "*")):
      os.remove(left)
    os.rmdir(scratch)
