"""Runs a native Keras 3 optimizer on another Keras backend, in a process of
its own (KERAS_BACKEND is read once per process), started at the first run
and kept for the next ones.

The ground truth of an optimizer whose TensorFlow backend has a defect
(`ScheduleFreeAdamW`: docs/known-differences.md) is its JAX backend's result. The optimizer
travels as its Keras config (plain data, deserialized through Keras's
registry) and the arrays as an `.npz` file; the process reads one line
`REQUEST.npz RESULT.npz` per run and answers `done` or `failed` and the
error:

    python -m tf_bridge._other_backend BACKEND
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import tempfile
import traceback
from typing import Any, Sequence

import numpy as np


def run(backend: str, optimizer_config: dict[str, Any],
        initial: Sequence[np.ndarray],
        gradients: Sequence[Sequence[np.ndarray]] | None = None,
        inputs: np.ndarray | None = None, targets: np.ndarray | None = None,
        steps: int = 0) -> tuple[list[list[np.ndarray]], list[float]]:
  """The trajectory (and losses) of the optimizer on `backend`.

  With `gradients`, it applies them in turn (losses empty). With `inputs`
  and `targets`, it trains the least-squares problem `mean((x @ kernel +
  bias - y)**2)` for `steps` steps, `initial` being `[kernel, bias]`.
  """
  with tempfile.TemporaryDirectory() as directory:
    request = os.path.join(directory, "request.npz")
    result = os.path.join(directory, "result.npz")
    arrays = {f"initial_{i}": value for i, value in enumerate(initial)}
    if gradients is not None:
      arrays["gradients"] = np.array(
          [np.concatenate([np.ravel(g) for g in step]) for step in gradients])
    if inputs is not None:
      arrays.update(inputs=inputs, targets=targets)
    np.savez(request, config=json.dumps(optimizer_config),
             steps=steps, count=len(initial), **arrays)
    _ask(backend, f"{request} {result}")
    with np.load(result) as data:
      flat, losses = data["trajectory"], data["losses"].tolist()
  shapes = [np.shape(value) for value in initial]
  sizes = [int(np.prod(shape)) for shape in shapes]
  trajectory = []
  for row in flat:
    values, start = [], 0
    for shape, size in zip(shapes, sizes):
      values.append(row[start:start + size].reshape(shape))
      start += size
    trajectory.append(values)
  return trajectory, losses


# backend -> its running process, and the file its standard error goes to.
_WORKERS: dict[str, tuple[subprocess.Popen, Any]] = {}


def _ask(backend: str, line: str) -> None:
  """Has `backend`'s process (started if there is none alive) run the
  request `line`; raises RuntimeError with its error if it fails."""
  worker = _WORKERS.get(backend)
  if worker is None or worker[0].poll() is not None:
    errors = tempfile.TemporaryFile("w+")
    process = subprocess.Popen(
        [sys.executable, "-m", "tf_bridge._other_backend", backend],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors,
        text=True, env=dict(os.environ, KERAS_BACKEND=backend,
                            TF_CPP_MIN_LOG_LEVEL="2"))
    worker = _WORKERS[backend] = (process, errors)
  process, errors = worker
  try:
    process.stdin.write(line + "\n")
    process.stdin.flush()
    answer = process.stdout.readline()
  except BrokenPipeError:
    answer = ""
  if answer.strip() == "done":
    return
  if answer.startswith("failed "):
    message = json.loads(answer.removeprefix("failed "))
  else:  # The process ended: its standard error says why.
    errors.seek(0)
    message = errors.read()[-3000:]
  raise RuntimeError(f"The {backend} backend run failed:\n{message}")


@atexit.register
def _stop_workers() -> None:
  for process, errors in _WORKERS.values():
    process.stdin.close()
    process.wait()
    errors.close()


def _serve() -> None:
  """Runs each request line of standard input (`_run_request`)."""
  for line in sys.stdin:
    try:
      _run_request(*line.split())
      answer = "done"
    except Exception:  # pylint: disable=broad-except
      answer = "failed " + json.dumps(traceback.format_exc()[-3000:])
    print(answer, flush=True)


def _run_request(request_path: str, result_path: str) -> None:
  import jax  # pylint: disable=import-outside-toplevel
  import jax.numpy as jnp  # pylint: disable=import-outside-toplevel
  import keras  # pylint: disable=import-outside-toplevel
  with np.load(request_path) as data:
    request = {key: data[key] for key in data.files}
  optimizer = keras.optimizers.deserialize(json.loads(str(request["config"])))
  initial = [request[f"initial_{i}"] for i in range(int(request["count"]))]
  variables = [keras.Variable(value, name=f"variable_{i}")
               for i, value in enumerate(initial)]
  shapes = [value.shape for value in initial]
  optimizer.build(variables)
  # As Keras's JAX trainer does: one jitted stateless step on values.
  apply = jax.jit(optimizer.stateless_apply)
  state = [v.value for v in optimizer.variables]
  values = [v.value for v in variables]
  trajectory, losses = [], []

  def step(step_gradients):
    nonlocal values, state
    values, state = apply(state, step_gradients, values)
    trajectory.append(np.concatenate([np.ravel(v) for v in values]))

  if "gradients" in request:
    for row in request["gradients"]:
      split = np.split(row, np.cumsum([int(np.prod(s)) for s in shapes])[:-1])
      step([jnp.asarray(part.reshape(shape))
            for part, shape in zip(split, shapes)])
  else:
    inputs, targets = request["inputs"], request["targets"]

    def loss(kernel, bias):
      return jnp.mean(jnp.square(inputs @ kernel + bias - targets))

    gradient = jax.jit(jax.grad(loss, argnums=(0, 1)))
    for _ in range(int(request["steps"])):
      step(list(gradient(*values)))
      losses.append(float(loss(*values)))
  np.savez(result_path, trajectory=np.array(trajectory),
           losses=np.array(losses))


if __name__ == "__main__":
  _serve()
