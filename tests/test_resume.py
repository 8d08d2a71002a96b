"""Crash-safe resume: a training run (tests/scripts/resumable.py) killed with
SIGKILL, at a random point of a step or while it writes a checkpoint,
resumes from its last whole checkpoint and ends bit-identical to an
uninterrupted run with the same checkpoint schedule. JAX side:
jaxopt_port.adam with orbax-checkpoint; Keras side: tf_bridge.Adam with
tf.train.CheckpointManager.
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
EVERY = 2  # resumable.py's default checkpoint interval.
KILLS = {"jax": 3, "keras": 2}  # Random-step kills per side.


def start(side, directory, *extra):
  return subprocess.Popen(
      [sys.executable, str(SCRIPT), side, str(directory), "--steps",
       str(STEPS), *extra], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
      stderr=subprocess.PIPE, text=True)


def kill_in_the_step_after(process, step, delay):
  """SIGKILLs a fresh `--paced` run `delay` seconds after letting it go on
  from `step`: somewhere in step + 1 (its update, its save) or after it.
  Returns the last step the run printed."""
  assert process.stdout.readline() == "resumed from 0\n"
  printed = []
  for line in process.stdout:
    printed.append(int(line.removeprefix("step ")))
    process.stdin.write("\n")
    process.stdin.flush()
    if printed[-1] == step:
      time.sleep(delay)
      process.send_signal(signal.SIGKILL)
      break
  process.wait(timeout=600)
  printed += [int(line.removeprefix("step "))
              for line in process.stdout.read().splitlines()]
  assert printed == list(range(1, len(printed) + 1)), printed
  assert printed[-1] in (step, step + 1), (printed, step)
  return printed[-1]


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
    process = start(side, directory, "--paced")
    reached = kill_in_the_step_after(process, int(rng.integers(4, STEPS)),
                                     float(rng.uniform(0, 0.005)))
    assert process.returncode == -signal.SIGKILL
    assert not (directory / "final.npz").exists()
    step = resumed_from(finish(start(side, directory)))
    # A run that printed step `reached` has a whole checkpoint of a step
    # past reached - 2 * EVERY (orbax finishes an asynchronous save before
    # it starts the next; TensorFlow's are synchronous), and none of a step
    # past reached + 1 (saved, not yet printed).
    assert max(2, reached - 2 * EVERY + 1) <= step <= reached + 1, (
        step, reached)
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
