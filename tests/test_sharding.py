"""JAX state sharded like its params (NamedSharding over 8 virtual CPU
devices): the same numbers as on one device, and every state leaf that
mirrors a parameter laid out like that parameter.

The device count is fixed when JAX starts, so the run is a process of its
own (tests/scripts/sharded.py).
"""

import json
import pathlib
import subprocess
import sys

import pytest

SCRIPT = pathlib.Path(__file__).parent / "scripts" / "sharded.py"
OPTIMIZERS = ["adam", "adamw", "legacy.rmsprop", "lamb", "nadam",
              "adam-ema-accumulation", "tf1.ftrl", "addons.lookahead",
              "skip_nonfinite(sgd)"]


@pytest.fixture(scope="module")
def report():
  result = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True,
                          text=True, timeout=600, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  return json.loads(result.stdout)


def test_eight_devices(report):
  assert report["devices"] == 8


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_sharded_equals_one_device_with_state_laid_out_like_params(report,
                                                                   name):
  result = report[name]
  # Lamb's and Nadam's reductions add up in another order across shards.
  assert result["max_abs_diff"] <= 2e-7
  assert result["params_sharded_alike"]
  assert result["param_shaped_state_leaves"] >= 4
  assert result["mismatched_state_shardings"] == []


def test_the_layout_check_catches_a_replicated_state(report):
  assert sorted(report["control: replicated adam state"]) == sorted(
      ["['dense']['bias']", "['dense']['kernel']", "['embedding']"] * 2)
