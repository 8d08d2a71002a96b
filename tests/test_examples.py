"""Every example in examples/ runs (each in a process of its own, as a user
runs it), and the pytest example passes."""

import os
import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"


def run(*arguments, cwd=EXAMPLES):
  # As a user runs them: without the suite's TF_CPP_MIN_LOG_LEVEL.
  env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
  return subprocess.run([sys.executable, *arguments], capture_output=True,
                        text=True, cwd=cwd, env=env, timeout=900,
                        check=False)


@pytest.mark.parametrize("script,expected", [
    ("jax_training_loop.py", "loss "),
    ("keras_fit.py", "accuracy "),
    ("flax_nnx.py", "bit-identical to the uninterrupted run"),
    ("flax_linen.py", "bit-identical to the uninterrupted run"),
    ("jax_distributed.py", "state sharded like the params"),
    ("multi_worker.py", "fit tf_bridge.legacy.Adam vs "
     "fit tf_bridge.legacy.Adam, one process"),
    ("embedding_lazy_adam.py", "untouched rows and their moments unchanged"),
])
def test_example_runs(script, expected):
  result = run(str(EXAMPLES / script))
  assert result.returncode == 0, result.stderr[-3000:]
  assert expected in result.stdout
  assert not start_up_lines(result.stderr), result.stderr[-3000:]


def start_up_lines(stderr):
  """TensorFlow's C++ start-up lines, which the examples start without."""
  return [line for line in stderr.splitlines()
          if any(mark in line for mark in (
              "absl::InitializeLog", "oneDNN custom operations",
              "cuda drivers", "cuInit"))]


def test_custom_optimizer_example_runs_and_writes_its_plot(tmp_path):
  result = run(str(EXAMPLES / "custom_optimizer.py"), "--plot",
               str(tmp_path / "valley.png"))
  assert result.returncode == 0, result.stderr[-3000:]
  assert "parity checked in both Keras generations" in result.stdout
  assert not start_up_lines(result.stderr), result.stderr[-3000:]
  png = (tmp_path / "valley.png").read_bytes()
  assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_pytest_example_passes():
  result = run("-m", "pytest", "-q", "-p", "no:cacheprovider",
               str(EXAMPLES / "test_custom_optimizer.py"))
  assert result.returncode == 0, result.stdout[-3000:]
  assert "3 passed" in result.stdout
