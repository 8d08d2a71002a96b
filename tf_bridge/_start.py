"""The project's command lines start TensorFlow without its C++ start-up
lines."""

import os
import sys


def quiet_tensorflow_start() -> None:
  """Imports TensorFlow with its standard error closed, in a process run as
  one of this package's command lines (`python -m tf_bridge.parity`), unless
  the user set `TF_CPP_MIN_LOG_LEVEL`: on a machine without a GPU its C++
  start-up lines read as failures ("failed call to cuInit: ... CUDA
  error"), and CUDA's stub writes some before TensorFlow reads any setting.
  A failed import still raises, with its message. A program that imports
  `tf_bridge` keeps TensorFlow's logging as it set it."""
  argv = list(getattr(sys, "orig_argv", ()))
  command = argv[argv.index("-m") + 1] if "-m" in argv[:-1] else ""
  if (not command.startswith("tf_bridge.")
      or "TF_CPP_MIN_LOG_LEVEL" in os.environ or "tensorflow" in sys.modules):
    return
  os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
  sys.stderr.flush()
  saved = os.dup(2)
  try:
    with open(os.devnull, "w", encoding="utf-8") as devnull:
      os.dup2(devnull.fileno(), 2)
      import tensorflow as tf  # pylint: disable=import-outside-toplevel
      tf.config.list_physical_devices()  # Where CUDA is looked for.
  finally:
    os.dup2(saved, 2)
    os.close(saved)
