"""tf.distribute.MirroredStrategy over two logical CPUs equals one device
and the native optimizer under the same strategy, sparse gradients included.

Logical devices are fixed when TensorFlow starts, so the run is a process of
its own (tests/scripts/mirrored.py).
"""

import json
import pathlib
import subprocess
import sys

import pytest

# One worker runs this module (README runs pytest with --dist loadgroup),
# so its process runs once.
pytestmark = pytest.mark.xdist_group("distribute")

SCRIPT = pathlib.Path(__file__).parent / "scripts" / "mirrored.py"


@pytest.fixture(scope="module")
def report():
  result = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True,
                          text=True, timeout=900, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  return json.loads(result.stdout)


def test_two_replicas(report):
  assert report["replicas"] == 2


# Whether the embedding's tf.IndexedSlices take the row-by-row path.
CASES = {"keras3.Adam": False, "keras3.Adagrad": True, "legacy.Adam": False,
         "legacy.RMSprop": True, "legacy.Ftrl": True, "tf_keras.Adam": False,
         "tf_keras.Adagrad": True}


@pytest.mark.parametrize("case", CASES)
def test_mirrored_equals_single_device_and_native(report, case):
  assert report[case]["moved"] > 0.05  # It trained.
  assert report[case]["max_abs_diff"] < 1e-5
  assert report[case]["native_max_abs_diff"] < 1e-5
  assert report[case]["variable_types"] == ["MirroredVariable"]
  assert (report[case]["sparse_steps"] > 0) == CASES[case]


@pytest.mark.parametrize("case", CASES)
def test_a_model_built_again_shares_the_compiled_step(report, case):
  """A tuner's next trial under the strategy: a new model and optimizer,
  the same program, sparse steps included; nothing converted, the same
  weights."""
  assert report[case]["later_model_conversions"] == 0
  assert report[case]["later_model_max_abs_diff"] < 1e-6


def test_a_gradient_native_broadcasts_is_broadcast_on_each_replica(report):
  """tf_keras 2.11+ broadcasts a shape-(1,) gradient of a (1, 1) kernel;
  under the strategy the bridged class does so on each replica, as
  native."""
  case = report["tf_keras.Adam broadcast"]
  assert case["moved"] > 0.05
  assert case["native_max_abs_diff"] < 1e-6
