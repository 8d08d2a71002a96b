"""tf.distribute.MirroredStrategy over two logical CPUs equals one device.

Logical devices are fixed when TensorFlow starts, so the run is a process of
its own (tests/scripts/mirrored.py).
"""

import json
import pathlib
import subprocess
import sys

import pytest

SCRIPT = pathlib.Path(__file__).parent / "scripts" / "mirrored.py"


@pytest.fixture(scope="module")
def report():
  result = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True,
                          text=True, timeout=900, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  return json.loads(result.stdout)


def test_two_replicas(report):
  assert report["replicas"] == 2


@pytest.mark.parametrize("case", ["keras3.Adam", "keras3.SGD", "legacy.Adam",
                                  "legacy.RMSprop"])
def test_mirrored_equals_single_device(report, case):
  assert report[case]["moved"] > 0.5  # It trained.
  assert report[case]["max_abs_diff"] < 1e-5
  assert report[case]["variable_types"] == ["MirroredVariable"]
