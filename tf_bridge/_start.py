"""TensorFlow started without the C++ lines it writes as its libraries load.

TensorFlow 2.21 writes them before it reads `TF_CPP_MIN_LOG_LEVEL` (absl's
"All log messages before absl::InitializeLog() ...", "oneDNN custom
operations are on", "Could not find cuda drivers", later "failed call to
cuInit"), and twice: `import tensorflow` loads its profiler plugin, a
library with a copy of TensorFlow's runtime of its own, whose start-up
writes them again. On a machine without a GPU they read as failures.
"""

import importlib
import os
import re
import sys
import tempfile

from tf_bridge import _backend

# A line of TensorFlow's C++ log ("I0000 00:00:1796156556.592540    6912
# port.cc:153] ..."): its severity's letter.
_LOG_LINE = re.compile(r"([IWEF])\d{4} [\d:.]+ +\d+ [\w./-]+:\d+\] ")
_ABSL_NOTICE = ("WARNING: All log messages before absl::InitializeLog() is "
                "called are written to STDERR")
_SEVERITIES = "IWEF"


def kept_lines(text: str, level: int) -> str:
  """`text` without TensorFlow's C++ log lines below `level` (as
  `TF_CPP_MIN_LOG_LEVEL` counts: 1 drops I, 2 also W, 3 also E) nor absl's
  notice about its own start; every other line as it was."""
  kept = []
  for line in text.splitlines(keepends=True):
    match = _LOG_LINE.match(line)
    if match and _SEVERITIES.index(match.group(1)) < level:
      continue
    if level >= 1 and line.rstrip("\n") == _ABSL_NOTICE:
      continue
    kept.append(line)
  return "".join(kept)


def _is_command() -> bool:
  """Whether the process runs one of this package's command lines
  (`python -m tf_bridge.parity`)."""
  argv = list(getattr(sys, "orig_argv", ()))
  command = argv[argv.index("-m") + 1] if "-m" in argv[:-1] else ""
  return command.startswith("tf_bridge.")


def start_keras() -> None:
  """Imports Keras (`_backend.import_keras`), and with it TensorFlow where
  it is Keras's backend, holding back the C++ lines TensorFlow's libraries
  write while they load below `TF_CPP_MIN_LOG_LEVEL`, which TensorFlow reads
  only afterwards: what the variable asks for, kept from the start. A
  command line of this package sets the variable to 3 unless the user set
  it, and imports TensorFlow whatever the backend (the commands run it); a
  program sets the variable itself (0 or unset: every line is written as
  TensorFlow writes it). Standard error is held in a file meanwhile, and
  everything else written there (Python's warnings, a failed import's
  message) follows when Keras has started."""
  command = _is_command()
  if command:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
  try:
    level = int(os.environ.get("TF_CPP_MIN_LOG_LEVEL", "0"))
  except ValueError:
    level = 0  # TensorFlow's to judge.
  if level <= 0 or "tensorflow" in sys.modules:
    _backend.import_keras()
    return
  sys.stderr.flush()
  saved = os.dup(2)
  with tempfile.TemporaryFile() as held:
    os.dup2(held.fileno(), 2)
    try:
      if command:
        importlib.import_module("tensorflow")
      _backend.import_keras()
      if "tensorflow" in sys.modules:  # Where CUDA is looked for.
        sys.modules["tensorflow"].config.list_physical_devices()
    finally:
      sys.stderr.flush()
      os.dup2(saved, 2)
      os.close(saved)
      held.seek(0)
      sys.stderr.write(kept_lines(held.read().decode(errors="replace"),
                                  level))
      sys.stderr.flush()
