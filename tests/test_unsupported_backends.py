"""A Keras backend the Keras 3 classes do not run on is named in the error
(README's supported matrix): numpy (installed with Keras) at construction, torch without
PyTorch at `import tf_bridge`; the OptimizerV2 classes (tf_keras, no Keras
backend) still work. Backends are fixed at Keras's import: each runs in a
process of its own."""

import importlib.util
import os
import subprocess
import sys

PROGRAM = """
import tf_bridge, tf_bridge.legacy, jaxopt_port
for make in (tf_bridge.Adam, tf_bridge.keras_optimizer(jaxopt_port.sgd)):
  try:
    make()
  except ValueError as error:
    print(error)
print(type(tf_bridge.legacy.Adam()).__name__)
"""


def run(backend, program):
  return subprocess.run(
      [sys.executable, "-c", program], capture_output=True, text=True,
      timeout=300, check=False,
      env={**os.environ, "KERAS_BACKEND": backend,
           "TF_CPP_MIN_LOG_LEVEL": "3"})


def test_numpy_backend_refused_at_construction():
  result = run("numpy", PROGRAM)
  assert result.returncode == 0, result.stderr[-3000:]
  message = ("{} runs on Keras's tensorflow and jax backends; this Keras "
             "runs on its 'numpy' backend (KERAS_BACKEND). Set "
             "KERAS_BACKEND=tensorflow or jax before Keras is imported, or "
             "use the optax transform (jaxopt_port) directly.")
  assert result.stdout.splitlines() == [message.format("Adam"),
                                        message.format("Sgd"), "Adam"]


def test_torch_backend_without_pytorch_named_at_import():
  assert importlib.util.find_spec("torch") is None, "needs no PyTorch"
  result = run("torch", "import tf_bridge")
  assert result.returncode == 1
  assert result.stderr.strip().splitlines()[-1] == (
      "ImportError: Keras could not start its 'torch' backend "
      "(KERAS_BACKEND=torch): No module named 'torch'. tf_bridge runs on "
      "Keras's tensorflow and jax backends: set KERAS_BACKEND to one of "
      "them before Keras is imported.")
