"""The bridge-vs-native check kills every hyperparameter mutant
(tests/bridge_mutant_cases.py, 46 bridged classes), run in a fresh process:
its hundreds of bridged optimizers each compile an XLA step that
TensorFlow's compilation cache keeps for the life of the process (about
75 MB per class), so the suite's long-lived workers do not carry them."""

import pathlib
import re
import subprocess
import sys


def test_every_hyperparameter_mutant_parts_bridge_from_native():
  tests = pathlib.Path(__file__).parent
  result = subprocess.run(
      [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist",
       "-p", "no:cacheprovider", str(tests / "bridge_mutant_cases.py")],
      cwd=tests.parent, capture_output=True, text=True, timeout=1800,
      check=False)
  assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
  assert re.search(r"^46 passed", result.stdout, re.M), result.stdout[-2000:]
