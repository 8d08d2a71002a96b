"""Runs a native Keras 3 optimizer on another Keras backend, in a process of
its own (KERAS_BACKEND is read once per process).

The ground truth of an optimizer whose TensorFlow backend has a defect
(DESIGN.md: `ScheduleFreeAdamW`) is its JAX backend's result. The optimizer
travels as its Keras config (plain data, deserialized through Keras's
registry) and the arrays as an `.npz` file.

    python -m tf_bridge._other_backend BACKEND REQUEST.npz RESULT.npz
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
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
    environment = dict(os.environ, KERAS_BACKEND=backend,
                       TF_CPP_MIN_LOG_LEVEL="2")
    completed = subprocess.run(
        [sys.executable, "-m", "tf_bridge._other_backend", backend, request,
         result], capture_output=True, text=True, env=environment,
        check=False)
    if completed.returncode != 0:
      raise RuntimeError(f"The {backend} backend run failed:\n"
                         f"{completed.stderr[-3000:]}")
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


def _main(request_path: str, result_path: str) -> None:
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
  _main(sys.argv[2], sys.argv[3])
