"""The bridge's parity checks kill every hyperparameter mutant, each set run
in a fresh process: bridge vs native trajectories
(tests/bridge_mutant_cases.py, 56 bridged classes) and `model.fit` vs
native (tests/fit_mutant_cases.py, 31 classes). Their hundreds of bridged
optimizers each compile an XLA step that TensorFlow's compilation cache
keeps for the life of the process (about 75 MB per class), so the suite's
long-lived workers do not carry them."""

import pathlib
import re
import subprocess
import sys

import pytest


@pytest.mark.parametrize("cases,count", [("bridge_mutant_cases.py", 56),
                                         ("fit_mutant_cases.py", 31)])
def test_every_hyperparameter_mutant_is_killed(cases, count):
  tests = pathlib.Path(__file__).parent
  result = subprocess.run(
      [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist",
       "-p", "no:cacheprovider", str(tests / cases)],
      cwd=tests.parent, capture_output=True, text=True, timeout=1800,
      check=False)
  assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
  assert re.search(rf"^{count} passed", result.stdout, re.M), (
      result.stdout[-2000:])
