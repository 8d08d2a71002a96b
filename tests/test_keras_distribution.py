"""Keras 3's own distribution API on its JAX backend (`keras.distribution`):
`DataParallel` over 4 CPU devices and `ModelParallel` on a 2x2 mesh with a
`LayoutMap` that shards the kernels' and biases' output dimension. The
bridged Adam (AMSGrad) fits as the native one does, and every slot is laid
out as the variable it mirrors (sharded where it is). One process
(tests/scripts/keras_distribution.py): the device count is read when JAX
starts."""

import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

SCRIPT = pathlib.Path(__file__).parent / "scripts" / "keras_distribution.py"
SETTINGS = ("data_parallel", "model_parallel")

pytestmark = pytest.mark.xdist_group("keras_distribution")


@pytest.fixture(scope="module")
def report():
  result = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True,
                          text=True, timeout=900, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("setting", SETTINGS)
def test_bridged_fits_as_native_under_keras_distribution(report, setting):
  bridged, native = report[setting]["bridged"], report[setting]["native"]
  moved = 0.0
  for got, want in zip(bridged["weights"], native["weights"]):
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-5,
                               atol=1e-6)
    moved = max(moved, float(np.max(np.abs(np.array(want)))))
  assert moved > 0.1


@pytest.mark.parametrize("setting", SETTINGS)
def test_slots_are_laid_out_as_their_variables(report, setting):
  for run in report[setting].values():
    # Momentum, velocity and velocity_hat of 4 variables.
    assert len(run["slots"]) == 12 and all(run["slots"].values()), run["slots"]
  sharded = report[setting]["bridged"]["sharded"]
  if setting == "model_parallel":
    assert all(sharded.values()), sharded
  else:
    assert not any(sharded.values()), sharded
