"""JAX state sharded like its params (a 4x2 mesh of 8 virtual CPU devices,
`Auto` and `Explicit` axes): for the ports, their Keras 3 base arguments
(accumulation, EMA, clipping, decay) and the wrappers, every sixth case
(`sampling`; Adam's and Adafactor's, which hold the controls, always; every
case in the long profile), the same numbers as on one device, and every
state leaf that mirrors a parameter laid out like that parameter
(Adafactor's factored moments like its rows and columns), after jitted
steps and as `init` builds it, from the params or from abstract params
carrying their shardings.

The device count is fixed when JAX starts, so the meshes run in a process
of their own (tests/scripts/sharded.py), which compiles the single-device
reference once for both.
"""

import json
import pathlib
import subprocess
import sys

import pytest

import sampling
from ports import SHARDED_CASES

SCRIPT = pathlib.Path(__file__).parent / "scripts" / "sharded.py"

# One worker runs this module (README runs pytest with --dist loadgroup),
# so its process runs once.
pytestmark = pytest.mark.xdist_group("sharding")

CASES = [name for index, (name, _, _) in enumerate(SHARDED_CASES)
         if name in ("adam", "adam+base", "adafactor")
         or sampling.whole(index, shift=5)]


@pytest.fixture(scope="module")
def reports():
  result = subprocess.run([sys.executable, str(SCRIPT), *CASES],
                          capture_output=True, text=True, timeout=1200,
                          check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  return json.loads(result.stdout)


@pytest.mark.parametrize("axis_type", ["Auto", "Explicit"])
def test_every_port_sharded_like_its_params_and_equal_to_one_device(
    reports, axis_type):
  found = reports[axis_type]
  assert found["devices"] == 8
  # Gradient accumulation's two branches agree on every layout, whatever
  # layout the gradients and the state come in, inside `jit` or not (on an
  # Explicit mesh the state's layouts are its type: they stay).
  assert len(found["accumulation"]) == 4
  for scenario, result in found["accumulation"].items():
    assert "error" not in result, (scenario, result)
    assert result["tolerance_ratio"] <= 1.0, (scenario, result)
    assert result["stable_layout"] or axis_type == "Auto", (scenario, result)
  assert list(found["cases"]) == CASES
  failures = {}
  for name, result in found["cases"].items():
    problems = []
    if "error" in result:
      problems.append(result["error"])
    else:
      # Reductions (global norms, Lamb's and NovoGrad's layer norms, Muon's
      # matrix products) add up in another order across shards.
      if result["tolerance_ratio"] > 1.0:
        problems.append(f"differs from one device: {result}")
      if not result["params_sharded_alike"]:
        problems.append("params not laid out as placed")
      if result["mismatched_state_shardings"]:
        problems.append(f"laid out otherwise than their parameter: "
                        f"{result['mismatched_state_shardings']}")
      if result["mismatched_init_shardings"]:
        problems.append(f"init (not jitted) lays these out otherwise than "
                        f"their parameter: "
                        f"{result['mismatched_init_shardings']}")
      if result["abstract_init_shardings_differ"]:
        problems.append(f"init of abstract params lays these out otherwise "
                        f"than init of the params: "
                        f"{result['abstract_init_shardings_differ']}")
      if result.get("mismatched_factored_moments"):
        problems.append(f"factored moments laid out otherwise: "
                        f"{result['mismatched_factored_moments']}")
    if problems:
      failures[name] = problems
  assert not failures, json.dumps(failures, indent=1)[:6000]
  # Ports with slots have them checked: Adam's m and v for the 3 sharded
  # parameters and the replicated scalar, Adafactor's factored moments.
  assert found["cases"]["adam"]["param_shaped_state_leaves"] == 8
  assert found["cases"]["adam+base"]["param_shaped_state_leaves"] == 16
  assert found["cases"]["adafactor"]["mismatched_factored_moments"] == []
  # The checks catch a state laid out otherwise (replicated).
  assert sorted(found["cases"]["adam"]["control: replicated state"]) == \
      sorted(f".slots.{slot}{path}" for slot in ("momentum", "velocity")
             for path in ("['dense']['bias']", "['dense']['kernel']",
                          "['embedding']"))
  assert sorted(found["cases"]["adafactor"]["control: replicated state"]) == \
      sorted(["row_moments['dense']['kernel']", "row_moments['embedding']",
              "column_moments['dense']['kernel']"])
