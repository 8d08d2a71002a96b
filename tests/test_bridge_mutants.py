"""The bridge-vs-native check kills the learning-rate mutant of every sixth
bridged class (`sampling`; the other hyperparameters' are tried at the
defaults alone: tests/bridge_mutant_cases.py), in a fresh process:
its hundreds of bridged optimizers each compile an XLA step that
TensorFlow's compilation cache keeps for the life of the process (about
75 MB per class), so the suite's long-lived workers do not carry them.
The long profile (tests/long_profile.sh) runs it for every class with
every hyperparameter's mutant searched over the grid, and
tests/fit_mutant_cases.py (`model.fit` vs native, every hyperparameter's
mutant; the suite's fit check kills the learning rate's:
tests/test_programs.py)."""

import pathlib
import re
import subprocess
import sys

from bridge_mutant_cases import CASES


def test_the_bridges_mutants_are_killed():
  tests = pathlib.Path(__file__).parent
  result = subprocess.run(
      [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist",
       "-p", "no:cacheprovider", str(tests / "bridge_mutant_cases.py")],
      cwd=tests.parent, capture_output=True, text=True, timeout=1800,
      check=False)
  assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
  assert re.search(rf"^{len(CASES)} passed", result.stdout, re.M), (
      result.stdout[-2000:])
