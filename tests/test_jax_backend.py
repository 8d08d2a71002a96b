"""Keras 3's JAX backend: the same `tf_bridge` classes run the transform
directly (no jax2tf, no TensorFlow) and train as on the TensorFlow backend.

Each backend is a process of its own (KERAS_BACKEND is read once).
"""

import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

SCRIPT = pathlib.Path(__file__).parent / "scripts" / "jax_backend.py"


def run(backend):
  result = subprocess.run([sys.executable, str(SCRIPT), backend],
                          capture_output=True, text=True, timeout=900,
                          check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  return json.loads(result.stdout)


# One worker runs this module (README runs pytest with --dist loadgroup),
# so its process runs once.
pytestmark = pytest.mark.xdist_group("jax_backend")


@pytest.fixture(scope="module")
def reports():
  return run("jax"), run("tensorflow")


def test_jax_backend_does_not_import_tensorflow(reports):
  jax_report, tf_report = reports
  assert jax_report["backend"] == "jax" and tf_report["backend"] == "tensorflow"
  assert jax_report["tensorflow_imported"] is False


@pytest.mark.parametrize("name", ["Adam", "RMSprop", "AdamW",
                                  "ScheduleFreeAdamW"])
def test_jax_backend_fit_equals_native_and_tensorflow_backend(reports, name):
  """`model.fit` on Keras's JAX backend: the bridged class ends where the
  native class on the same backend ends, and where the bridge on the
  TensorFlow backend ends, within the tolerance plus the native class's own
  gap between the two backends (their gradients part by float32 rounding:
  on jax 0.12 native AdamW's backends part by 5e-6 after this fit)."""
  jax_report, tf_report = reports
  moved = 0.0
  for got, native, on_tensorflow, native_on_tensorflow, start in zip(
      jax_report["weights"][name], jax_report["native_weights"][name],
      tf_report["weights"][name], tf_report["native_weights"][name],
      jax_report["initial_weights"]):
    got, native, on_tensorflow = map(np.array, (got, native, on_tensorflow))
    np.testing.assert_allclose(got, native, rtol=1e-5, atol=1e-6)
    natives_gap = np.abs(native - np.array(native_on_tensorflow))
    bound = 1e-6 + 1e-5 * np.abs(on_tensorflow) + natives_gap
    gap = np.abs(got - on_tensorflow)
    assert np.all(gap <= bound), (
        f"{name}: the bridge's backends part by {gap.max():.3g} where "
        f"native's own part by {natives_gap.max():.3g}")
    moved = max(moved, np.max(np.abs(native - np.array(start))))
  assert moved > 1e-2


@pytest.mark.parametrize("name,lazy", [("SGD", True), ("Adagrad", True),
                                       ("SGD-momentum", False),
                                       ("Adam", False)])
def test_jax_backend_row_sparse_gradients(reports, name, lazy):
  """BCOO gradients over rows take the transform's row path where it has
  one ("rows": SGD, Adagrad), are densified otherwise, and equal native,
  with a dense gradient after them in the list and a variable without one
  (which stays as it was)."""
  result = reports[0]["row_sparse"][name]
  assert result["sparse_rows"] == ("rows" if lazy else "dense")
  assert (result["sparse_steps"] > 0) == lazy
  assert result["moved"] > 0.1
  assert result["eager"] < 1e-6 and result["jitted"] < 1e-6
  assert result["untouched"]


def test_jax_backend_refuses_hyperparameters_only_tensorflow_evaluates(
    reports):
  assert reports[0]["refusal"] == (
      "beta_1: a TensorFlow tensor, variable or callable hyperparameter "
      "cannot run on Keras's JAX backend; pass a number.")


def _keras_classes():
  from tf_bridge import catalog  # pylint: disable=import-outside-toplevel
  return [d.class_name for d in catalog.CATALOG
          if d.generation == catalog.KERAS and d.has_native]


@pytest.mark.parametrize("name", _keras_classes())
def test_jax_backend_stateless_apply_equals_native(reports, name):
  """Every Keras 3 class in a jitted `stateless_apply` loop on Keras's JAX
  backend ends where native Keras on JAX ends."""
  result = reports[0]["stateless"][name]
  assert result["moved"] > 1e-2
  assert result["difference"] < 1e-5 * max(1.0, result["moved"])
