"""Settings fixed at process start: Keras 3 runs on its TensorFlow backend;
hypothesis runs the small, derandomized "ci" profile unless
HYPOTHESIS_PROFILE names another ("long"); JAX's compilation cache is
kept on disk; TensorFlow's graphs run without Grappler; the bridge keeps
every compiled step it makes; what is alive once the tests are collected
(the libraries) is out of the garbage collector's way. Under pytest-xdist's
`--dist loadgroup` (README's test command) the tests of one `xdist_group`
run on one worker (they share its cached native runs and module
processes), on pytest 9.2 too (`xdist_groups`). `--quick` runs the
quick profile, the tests quick_profile.txt selects."""

import gc
import os
import pathlib
import re
import tempfile

import pytest
from hypothesis import settings

import xdist_groups

QUICK_PROFILE = pathlib.Path(__file__).with_name("quick_profile.txt")

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# JAX's persistent compilation cache, shared by the workers and the
# processes they start: the same program compiled twice (a grid point at
# two gradient scales, a port in several tests) compiles once, also across
# runs of the suite. Unbounded while the suite runs: JAX's own bound
# (a max size) takes a file lock and reads every entry's access time at
# each write, and with two workers and their processes writing thousands
# of entries that cost a sixth of the suite (a test waiting 40 s on the
# lock); the suite trims it to CACHE_BYTES at its start instead.
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", os.path.join(
    tempfile.gettempdir(), "jaxopt-port-jax-cache"))
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "-1")
os.environ.setdefault("JAX_COMPILATION_CACHE_MAX_SIZE", "-1")
CACHE_BYTES = 10**9

settings.register_profile("ci", max_examples=10, deadline=None,
                          derandomize=True)
settings.register_profile("long", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session", autouse=True)
def _graphs_without_grappler():
  """TensorFlow runs the tests' graphs as traced, without Grappler's
  rewrites: they cost a quarter of a small native run and change no
  number a check compares (the long profile runs the parity tests with
  them: TEST_GRAPPLER=1; the scripts the tests start, tests/scripts,
  examples and benchmarks, keep TensorFlow's defaults)."""
  if os.environ.get("TEST_GRAPPLER") != "1":
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    tf.config.optimizer.set_experimental_options(
        {"disable_meta_optimizer": True})


def pytest_addoption(parser):
  parser.addoption("--quick", action="store_true",
                   help="run the quick profile: the tests selected by "
                   f"{QUICK_PROFILE.name} (CI's run on the oldest stack)")


def pytest_configure(config):
  config.pluginmanager.register(xdist_groups)
  if not hasattr(config, "workerinput"):  # Once, in pytest's own process.
    trim_compilation_cache(os.environ["JAX_COMPILATION_CACHE_DIR"])


def trim_compilation_cache(directory, limit=CACHE_BYTES):
  """Deletes the oldest files of JAX's compilation cache in `directory`
  until the rest hold at most `limit` bytes."""
  entries = []
  for path in pathlib.Path(directory).glob("*"):
    try:
      status = path.stat()
    except FileNotFoundError:  # Trimmed by another run of the suite.
      continue
    entries.append((status.st_mtime, status.st_size, path))
  entries.sort()
  total = sum(size for _, size, _ in entries)
  for _, size, path in entries:
    if total <= limit:
      break
    path.unlink(missing_ok=True)
    total -= size


def pytest_collection_finish(session):
  """Moves every object alive after collection (the libraries' modules and
  the tests': 590,000, alive for the whole run) out of the garbage
  collector's generations: each full collection otherwise walks them all,
  1.5 s at a time, a tenth of test_bridge_fit and test_bridge_parity's run
  in one process (14.5 s of collections; 4.8 s frozen). What the tests
  make is collected as before."""
  del session
  gc.collect()
  gc.freeze()


def _quick_patterns():
  return [line.strip() for line in QUICK_PROFILE.read_text().splitlines()
          if line.strip() and not line.startswith("#")]


def pytest_ignore_collect(collection_path, config):
  """`--quick` collects only the files quick_profile.txt names."""
  if (config.getoption("quick") and collection_path.suffix == ".py"
      and collection_path.name.startswith("test_")):
    path = collection_path.relative_to(config.rootpath).as_posix()
    if path not in {pattern.split("::")[0] for pattern in _quick_patterns()}:
      return True
  return None


@pytest.hookimpl(tryfirst=True)  # Before pytest-xdist adds groups to the ids.
def pytest_collection_modifyitems(config, items):
  """`--quick`: keeps the tests whose ids match a pattern of
  quick_profile.txt (`*` matches anything), and refuses a pattern that
  matches no test of a file that was collected (a test renamed)."""
  if not config.getoption("quick"):
    return
  patterns = _quick_patterns()
  matchers = {pattern: re.compile(
      ".*".join(map(re.escape, pattern.split("*"))) + r"\Z")
              for pattern in patterns}
  matched = {pattern: [item for item in items if matcher.match(item.nodeid)]
             for pattern, matcher in matchers.items()}
  files = {item.nodeid.split("::")[0] for item in items}
  unmatched = [pattern for pattern, found in matched.items()
               if pattern.split("::")[0] in files and not found]
  if unmatched:
    raise pytest.UsageError(
        f"{QUICK_PROFILE.name}: no collected test matches {unmatched}")
  chosen = {id(item) for found in matched.values() for item in found}
  config.hook.pytest_deselected(
      items=[item for item in items if id(item) not in chosen])
  items[:] = [item for item in items if id(item) in chosen]


@pytest.fixture(scope="session", autouse=True)
def _every_compiled_step_kept():
  """The bridge shares a compiled step among the optimizers that compute
  the same program, keeping the 16 most recent (a user's process makes a
  few); a worker of the suite makes hundreds, the same ones in many tests
  (a class at its defaults on the same problem), and keeps them all.
  TensorFlow holds each compiled program for the life of the process
  anyway: four bridge test files run in one process in 320 s instead of
  372 s, at a peak of 5.6 GB instead of 5.9. Tests that count conversions
  clear the shared steps first."""
  from tf_bridge import _compiled  # pylint: disable=import-outside-toplevel
  _compiled._SHARED_STEPS_KEPT = 1_000_000  # pylint: disable=protected-access
