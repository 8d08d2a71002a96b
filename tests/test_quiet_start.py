"""TensorFlow's C++ start-up lines: the commands start without them, a
program that sets TF_CPP_MIN_LOG_LEVEL gets what it asks for from the start
(TensorFlow writes them before it reads the variable), and every other
line written to standard error meanwhile is kept."""

import os
import subprocess
import sys

from tf_bridge import _start

# What TensorFlow 2.21 writes twice as it loads, on a machine without a GPU.
START_UP = "".join(line + "\n" for line in [
    "WARNING: All log messages before absl::InitializeLog() is called are "
    "written to STDERR",
    "I0000 00:00:1796156556.592540    6912 port.cc:153] oneDNN custom "
    "operations are on.",
    "I0000 00:00:1796156556.592900    6912 cudart_stub.cc:31] Could not find "
    "cuda drivers on your machine, GPU will not be used.",
    "/site-packages/x.py:3: UserWarning: a Python warning",
    '  warnings.warn("a Python warning")',
    "W0000 00:00:1796156556.640513    6912 some_file.cc:7] a warning",
    "E0000 00:00:1796156560.635901    6912 cuda_platform.cc:52] failed call "
    "to cuInit: INTERNAL: CUDA error"])
MARKS = ("absl::InitializeLog", "oneDNN custom operations", "cuda drivers",
         "cuInit")


def test_lines_below_the_level_are_held_back_and_the_rest_kept():
  lines = START_UP.splitlines(keepends=True)
  assert _start.kept_lines(START_UP, 0) == START_UP
  assert _start.kept_lines(START_UP, 1) == "".join(lines[3:])
  assert _start.kept_lines(START_UP, 2) == "".join(lines[3:5] + lines[6:])
  assert _start.kept_lines(START_UP, 3) == "".join(lines[3:5])


def test_a_program_on_kerass_jax_backend_does_not_start_tensorflow():
  env = {**os.environ, "KERAS_BACKEND": "jax", "TF_CPP_MIN_LOG_LEVEL": "3"}
  result = subprocess.run(
      [sys.executable, "-c",
       "import sys, tf_bridge; print('tensorflow' in sys.modules)"],
      capture_output=True, text=True, env=env, timeout=300, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  assert result.stdout.split() == ["False"]


def test_the_command_starts_without_tensorflows_start_up_lines():
  env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
  result = subprocess.run(
      [sys.executable, "-m", "tf_bridge.checkpoints", "--help"],
      capture_output=True, text=True, env=env, timeout=300, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  assert "inspect" in result.stdout
  assert [line for line in result.stderr.splitlines()
          if any(mark in line for mark in MARKS)] == [], result.stderr
