"""Crash-safe resume: a training run (tests/scripts/resumable.py) killed with
SIGKILL, at a random step or while it writes a checkpoint, resumes from its
last whole checkpoint and ends bit-identical to an uninterrupted run with
the same checkpoint schedule. JAX side: jaxopt_port.adam with
orbax-checkpoint; Keras side: tf_bridge.Adam with tf.train.CheckpointManager.
"""

import pathlib
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

SCRIPT = pathlib.Path(__file__).parent / "scripts" / "resumable.py"
STEPS = 12
KILLS = {"jax": 3, "keras": 2}  # Random-step kills per side.


def start(side, directory, *extra):
  return subprocess.Popen(
      [sys.executable, str(SCRIPT), side, str(directory), "--steps",
       str(STEPS), *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
      text=True)


def finish(process):
  """Waits for a run to end well; returns the lines it printed."""
  stdout, stderr = process.communicate(timeout=600)
  assert process.returncode == 0, stderr[-3000:]
  return stdout.splitlines()


def resumed_from(lines):
  """The step a run resumed from, checked against the steps it then ran."""
  assert lines[0].startswith("resumed from "), lines[:3]
  step = int(lines[0].split()[-1])
  assert lines[1:] == [f"step {n}" for n in range(step + 1, STEPS + 1)]
  return step


def final(directory):
  with np.load(directory / "final.npz") as arrays:
    return {name: arrays[name] for name in arrays.files}


def assert_bit_identical(got, want):
  assert sorted(got) == sorted(want)
  for name in want:
    assert got[name].dtype == want[name].dtype, name
    np.testing.assert_array_equal(got[name], want[name], err_msg=name)


# One worker runs this module (README runs pytest with --dist loadgroup),
# so each uninterrupted run happens once.
pytestmark = pytest.mark.xdist_group("resume")


@pytest.fixture(scope="module", params=list(KILLS))
def uninterrupted(request, tmp_path_factory):
  directory = tmp_path_factory.mktemp(f"{request.param}-uninterrupted")
  assert resumed_from(finish(start(request.param, directory))) == 0
  return request.param, final(directory)


def test_killed_at_random_steps_resumes_bit_identical(uninterrupted,
                                                      tmp_path):
  side, expected = uninterrupted
  rng = np.random.default_rng(2026)
  for trial in range(KILLS[side]):
    directory = tmp_path / f"trial-{trial}"
    directory.mkdir()
    # From step 4 on, the checkpoint of step 2 is whole (orbax finishes an
    # asynchronous save before it starts the next).
    kill_after = int(rng.integers(4, STEPS))
    process = start(side, directory)
    for line in process.stdout:
      if line.strip() == f"step {kill_after}":
        time.sleep(float(rng.uniform(0, 0.005)))
        process.send_signal(signal.SIGKILL)
        break
    process.wait(timeout=600)
    assert process.returncode == -signal.SIGKILL
    assert not (directory / "final.npz").exists()
    step = resumed_from(finish(start(side, directory)))
    assert 2 <= step <= kill_after, (step, kill_after)
    assert_bit_identical(final(directory), expected)


def test_killed_while_writing_a_checkpoint_resumes_from_a_whole_one(
    uninterrupted, tmp_path):
  side, expected = uninterrupted
  save_step = 6 if side == "jax" else 7  # A step each side saves.
  process = start(side, tmp_path, "--die-in-save", str(save_step))
  process.communicate(timeout=600)
  assert process.returncode == -signal.SIGKILL
  checkpoints = tmp_path / "checkpoints"
  if side == "jax":
    # orbax writes into a temporary directory, renamed when whole.
    half_written = [p.name for p in checkpoints.iterdir()
                    if "orbax-checkpoint-tmp" in p.name]
  else:
    half_written = [p.name for p in checkpoints.iterdir()
                    if p.name.startswith(f"ckpt-{save_step}.")]
  assert half_written, sorted(p.name for p in checkpoints.iterdir())
  step = resumed_from(finish(start(side, tmp_path)))
  assert 0 < step < save_step
  assert_bit_identical(final(tmp_path), expected)
