#!/usr/bin/env bash
# The long profile (README, Development), outside CI: hypothesis's "long"
# search, then mutmut over the update steps and the fused step. MUTANTS
# holds mutmut's name globs: by default every fifth mutant of each function.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-.venv/bin/python}
HYPOTHESIS_PROFILE=long "$python" -m pytest -q -n 2 tests/test_properties.py
# The in-process parity tests with TensorFlow's Grappler on (CI runs them
# without it: tests/conftest.py), and every sampled check of every class
# (CI runs a sample: tests/sampling.py; tests/test_long_profile.py).
TEST_GRAPPLER=1 TEST_EVERY_CASE=1 "$python" -m pytest -q -n 2 --dist loadgroup \
  tests/test_native_parity.py tests/test_bridge_parity.py \
  tests/test_bridge_sparse.py tests/test_bridge_fit.py tests/test_programs.py \
  tests/test_optax_composition.py tests/test_jax_citizen.py \
  tests/test_sharding.py tests/test_tf1_graphs.py
# Every hyperparameter's mutant of every class, searched over the grid,
# against the bridge-vs-native and `model.fit` checks (the suite tries a
# sample: tests/mutants.py, tests/sampling.py), each set in a fresh process.
for cases in bridge_mutant_cases.py fit_mutant_cases.py; do
  TEST_MUTANT_GRID=1 TEST_EVERY_CASE=1 "$python" -m pytest -q -p no:xdist \
    "tests/$cases"
done
# The parity command over the whole catalog at its defaults (the suite runs
# each entry through it at 10 steps: tests/test_parity_command.py).
"$python" -m tf_bridge.parity --all
# Every bridged class with its variables on two devices: prints any error.
PYTHONPATH=. "$python" tests/scripts/device_groups.py --all | "$python" -c \
  'import json, sys; r = json.load(sys.stdin); bad = {k: v for k, v in r.items() if "error" in v}; print(bad or f"{len(r)} classes equal their ports"); sys.exit(bool(bad))'
# shellcheck disable=SC2086
"$python" -m mutmut run ${MUTANTS:-"*__mutmut_*0" "*__mutmut_*5"}
"$python" -m mutmut results
