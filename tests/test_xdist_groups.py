"""The README's `--dist loadgroup` runs the tests of one `xdist_group` on
one worker, on the installed pytest (9.2 reads node ids where pytest-xdist
does not write them: `xdist_groups`)."""

import collections
import os
import pathlib
import re
import subprocess
import sys

import pytest

pytest.importorskip("xdist")

TESTS = pathlib.Path(__file__).parent

GROUPED = """
import pytest

@pytest.mark.xdist_group("shared")
@pytest.mark.parametrize("case", range(4))
def test_grouped(case):
  pass

@pytest.mark.parametrize("case", range(4))
def test_free(case):
  pass
"""


def workers_by_test(directory, conftest):
  """{test id: worker} of a `-n 2 --dist loadgroup` run of two modules of
  `GROUPED` in `directory` with `conftest`."""
  for name in ("test_one.py", "test_two.py"):
    (directory / name).write_text(GROUPED)
  (directory / "conftest.py").write_text(conftest)
  (directory / "pytest.ini").write_text("[pytest]\n")
  run = subprocess.run(
      [sys.executable, "-m", "pytest", "-v", "-n", "2", "--dist",
       "loadgroup", "-p", "no:cacheprovider"],
      cwd=directory, capture_output=True, text=True, timeout=300,
      env={**os.environ, "PYTHONPATH": os.pathsep.join(
          [str(TESTS), os.environ.get("PYTHONPATH", "")])})
  assert run.returncode == 0, run.stdout + run.stderr
  found = {test: worker for worker, test in re.findall(
      r"^\[(gw\d)\] \[\s*\d+%\] PASSED (\S+)", run.stdout, re.MULTILINE)}
  assert len(found) == 16, run.stdout
  return found


def grouped_workers(found):
  return collections.Counter(worker for test, worker in found.items()
                             if "::test_grouped" in test)


def test_a_group_runs_on_one_worker(tmp_path):
  found = workers_by_test(
      tmp_path, "from xdist_groups import pytest_collection_modifyitems\n")
  assert grouped_workers(found) in ({"gw0": 8}, {"gw1": 8})
  assert all(test.endswith("@shared") == ("::test_grouped" in test)
             for test in found), sorted(found)
