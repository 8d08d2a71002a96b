"""A training run that checkpoints as it goes and resumes from its last
whole checkpoint: the subject of tests/test_resume.py, which kills it.

  python resumable.py SIDE DIRECTORY [--steps N] [--every K] [--die-in-save S]
                      [--paced]

SIDE is "jax" (jaxopt_port.adam, orbax-checkpoint) or "keras"
(tf_bridge.Adam on Keras 3, tf.train.CheckpointManager). The gradient of a
step is a function of the params and the step number, so any difference in
what was restored shows in the end result. Prints "step N" after each step
and, at the end, writes DIRECTORY/final.npz (params and optimizer state)
through a temporary file and a rename. `--die-in-save S` SIGKILLs the
process while it writes the checkpoint of step S (orbax's asynchronous
write, at once; TensorFlow's, see `die_half_written`). Prints "resumed from N"
first (0: a fresh start). `--paced` waits for a line on stdin after each
"step N", so whoever kills the run knows how far it can have gone.
"""

import argparse
import os
import signal
import sys
import threading

import numpy as np

SHAPES = {"kernel": (6, 4), "bias": (4,), "scale": ()}


def gradient(params: dict, step: int) -> dict:
  rng = np.random.default_rng(1000 + step)
  return {name: (np.asarray(value, np.float32) * 0.1
                 + rng.standard_normal(SHAPES[name]).astype(np.float32))
          for name, value in params.items()}


def initial_params() -> dict:
  rng = np.random.default_rng(0)
  return {name: rng.standard_normal(shape).astype(np.float32)
          for name, shape in SHAPES.items()}


def report(step: int, paced: bool) -> None:
  print(f"step {step}", flush=True)
  if paced:
    sys.stdin.readline()


def write_final(directory: str, arrays: dict) -> None:
  temporary = os.path.join(directory, "final.tmp.npz")
  np.savez(temporary, **arrays)
  os.replace(temporary, os.path.join(directory, "final.npz"))


def kill_soon() -> None:
  """SIGKILL this process from another thread in about a millisecond:
  while the checkpoint being written is half done."""
  threading.Timer(0.001, os.kill, (os.getpid(), signal.SIGKILL)).start()


def die_half_written(checkpoint, directory: str, step: int) -> None:
  """Dies as if killed in the middle of `manager.save`: the checkpoint's
  files are there, its data cut in half, the manager's record not
  updated. (tf.train.CheckpointManager writes synchronously and a timer
  mostly fires before it begins: this makes the half-written case sure.)"""
  prefix = checkpoint.write(os.path.join(directory, f"ckpt-{step}"))
  data = prefix + ".data-00000-of-00001"
  with open(data, "r+b") as file:
    file.truncate(os.path.getsize(data) // 2)
  os.kill(os.getpid(), signal.SIGKILL)


def run_jax(directory, steps, every, die_in_save, paced):
  import jax  # pylint: disable=import-outside-toplevel
  import jaxopt_port  # pylint: disable=import-outside-toplevel
  import optax  # pylint: disable=import-outside-toplevel
  import orbax.checkpoint as ocp  # pylint: disable=import-outside-toplevel

  transform = jaxopt_port.adam(0.05)
  params = jax.tree.map(jax.numpy.asarray, initial_params())
  state = transform.init(params)
  manager = ocp.CheckpointManager(
      os.path.join(os.path.abspath(directory), "checkpoints"),
      options=ocp.CheckpointManagerOptions(save_interval_steps=every,
                                           max_to_keep=2))
  start = manager.latest_step() or 0
  print(f"resumed from {start}", flush=True)
  if start:
    restored = manager.restore(start, args=ocp.args.StandardRestore(
        {"params": params, "state": state}))
    params, state = restored["params"], restored["state"]

  @jax.jit
  def step_fn(params, state, grads):
    updates, state = transform.update(grads, state, params)
    return optax.apply_updates(params, updates), state

  for step in range(start + 1, steps + 1):
    grads = gradient(jax.device_get(params), step)
    params, state = step_fn(params, state, grads)
    if step == die_in_save:
      kill_soon()
    manager.save(step, args=ocp.args.StandardSave(
        {"params": params, "state": state}))
    report(step, paced)
  manager.wait_until_finished()
  manager.close()
  leaves = jax.tree_util.tree_leaves_with_path({"params": params,
                                                "state": state})
  write_final(directory, {jax.tree_util.keystr(path): np.asarray(leaf)
                          for path, leaf in leaves})


def run_keras(directory, steps, every, die_in_save, paced):
  import keras  # pylint: disable=import-outside-toplevel
  import tensorflow as tf  # pylint: disable=import-outside-toplevel

  import tf_bridge  # pylint: disable=import-outside-toplevel

  variables = {name: keras.Variable(value, name=name)
               for name, value in initial_params().items()}
  optimizer = tf_bridge.Adam(0.05)
  optimizer.build(list(variables.values()))
  checkpoint = tf.train.Checkpoint(optimizer=optimizer, **{
      name: variable.value for name, variable in variables.items()})
  manager = tf.train.CheckpointManager(
      checkpoint, os.path.join(directory, "checkpoints"), max_to_keep=2,
      step_counter=optimizer.iterations, checkpoint_interval=every)
  if manager.latest_checkpoint:
    checkpoint.restore(manager.latest_checkpoint).assert_consumed()
  print(f"resumed from {int(optimizer.iterations.numpy())}", flush=True)
  apply = tf.function(lambda grads: optimizer.apply(
      grads, list(variables.values())))
  for step in range(int(optimizer.iterations.numpy()) + 1, steps + 1):
    grads = gradient({n: v.numpy() for n, v in variables.items()}, step)
    apply([tf.constant(grads[name]) for name in variables])
    if step == die_in_save:
      die_half_written(checkpoint, manager.directory, step)
    manager.save(checkpoint_number=step)
    report(step, paced)
  arrays = {f"params/{n}": v.numpy() for n, v in variables.items()}
  arrays.update({f"state/{v.path}": v.numpy() for v in optimizer.variables})
  write_final(directory, arrays)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("side", choices=["jax", "keras"])
  parser.add_argument("directory")
  parser.add_argument("--steps", type=int, default=12)
  parser.add_argument("--every", type=int, default=2)
  parser.add_argument("--die-in-save", type=int, default=None)
  parser.add_argument("--paced", action="store_true")
  args = parser.parse_args()
  run = run_jax if args.side == "jax" else run_keras
  run(args.directory, args.steps, args.every, args.die_in_save, args.paced)


if __name__ == "__main__":
  main()
