"""Variables on several devices: the fused step runs once per device's
variables (`tf_bridge._device_groups`), under `ParameterServerStrategy`
with two parameter servers (tests/scripts/parameter_servers.py) and with
variables placed on two logical CPUs (tests/scripts/device_groups.py),
equal to native and to the port. Each script is a process of its own (a
cluster on loopback; logical devices fixed at TensorFlow's start).
"""

import json
import os
import pathlib
import subprocess
import sys

import pytest

SCRIPTS = pathlib.Path(__file__).parent / "scripts"


def _run(script):
  result = subprocess.run(
      [sys.executable, str(SCRIPTS / script)], capture_output=True,
      text=True, timeout=600, check=False,
      env={**os.environ, "PYTHONPATH": os.pathsep.join(
          [str(SCRIPTS.parent),
           *filter(None, [os.environ.get("PYTHONPATH")])])})
  assert result.returncode == 0, result.stderr[-3000:]
  return json.loads(result.stdout)


@pytest.fixture(scope="module")
def servers():
  return _run("parameter_servers.py")


@pytest.fixture(scope="module")
def two_devices():
  return _run("device_groups.py")


SERVER_CASES = ["legacy.Adam", "legacy.Nadam", "legacy.SGD",
                "legacy.tf1.Adam", "keras3.Adam", "keras3.Adafactor",
                "legacy.adopt(LazyMomentum)", "fit.legacy.Adagrad",
                "fit.legacy.Adam", "fit.legacy.adopt(LazyMomentum)"]


@pytest.mark.xdist_group("parameter_servers")
@pytest.mark.parametrize("case", SERVER_CASES)
def test_two_parameter_servers_equal_native(servers, case):
  """Custom loops (`ClusterCoordinator.schedule` on two workers, each step
  joined) and tf_keras `fit` with partitioned weights: the weights spread
  over both servers, trained, and equal to the native class's under the
  same strategy."""
  assert servers[case]["servers"] == 2
  assert servers[case]["moved"] > 0.05
  assert servers[case]["max_abs_diff"] < 1e-6


@pytest.mark.xdist_group("parameter_servers")
def test_sharded_embedding_updates_its_touched_rows(servers):
  """Adagrad takes each shard's `tf.IndexedSlices` row by row on its
  server (Adam densifies, as native's does)."""
  assert servers["fit.legacy.Adagrad"]["sparse_steps"] > 0
  assert servers["fit.legacy.Adam"]["sparse_steps"] == 0


@pytest.mark.xdist_group("parameter_servers")
def test_an_adopted_lazy_class_on_parameter_servers(servers):
  """A user's lazy OptimizerV2 class adopted on tf_keras's OptimizerV2:
  each server's call runs the class's converted update of its variables
  (one program over every variable, whose parts read no other's), each
  shard's sparse gradient through the class's sparse hook; its mutant
  (momentum 1 % off) parts from the class."""
  assert servers["fit.legacy.adopt(LazyMomentum)"]["sparse_steps"] > 0
  assert servers["legacy.adopt(LazyMomentum)"]["mutant_diff"] > 1e-4


@pytest.mark.xdist_group("parameter_servers")
def test_an_update_reading_other_variables_is_refused(servers):
  """`skip_nonfinite` checks every gradient at once: per-server calls
  cannot, and the error says so with the devices."""
  assert servers["refused"].startswith("ValueError")
  assert "adam: its update of embedding" in servers["refused"]
  assert ("live on 2 devices (/job:ps/replica:0/task:0/device:CPU:0, "
          "/job:ps/replica:0/task:1/device:CPU:0)") in servers["refused"]


LAYOUTS = ["Adam", "Nadam", "legacy.Nadam", "tf1.Adam", "Adafactor",
           "AdagradDecay", "Muon", "addons.NovoGrad", "legacy.Ftrl",
           "ScheduleFreeAdamW", "addons.LazyAdam"]


@pytest.mark.xdist_group("device_groups")
@pytest.mark.parametrize("name", LAYOUTS)
def test_variables_on_two_devices_equal_the_port(two_devices, name):
  """Leaves of no variable (Nadam's, TF1 Adam's powers) go into both calls
  and are assigned once; state the strategy placed elsewhere (Adafactor's
  factored moments) goes in as values: a step that dropped those
  assignments parts here (Adafactor, ScheduleFreeAdamW, NovoGrad: seen)."""
  assert two_devices[name] == {"steps_per_device": 2}
