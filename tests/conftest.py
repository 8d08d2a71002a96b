"""Settings fixed at process start: Keras 3 runs on its TensorFlow backend;
hypothesis runs the small, derandomized "ci" profile unless
HYPOTHESIS_PROFILE names another ("long"). Under pytest-xdist's
`--dist loadgroup` (README's test command) the tests of one `xdist_group`
must run on one worker (they share its cached native runs and module
processes); a pytest that ignores the groups is refused."""

import os

import pytest
from hypothesis import settings

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

settings.register_profile("ci", max_examples=25, deadline=None,
                          derandomize=True)
settings.register_profile("long", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_configure(config):
  # pytest-xdist groups a test by rewriting Node._nodeid, which pytest 9.2
  # no longer has (its node ids live elsewhere).
  if config.getoption("dist", None) == "loadgroup" and not hasattr(
      pytest.Item, "_nodeid"):
    raise pytest.UsageError(
        f"pytest {pytest.__version__} ignores the xdist_group marks that "
        "--dist loadgroup goes by, so the tests of one group (sharing a "
        "worker's cached native runs and module processes) would spread "
        "over workers: install pytest<9.2 (pip install -e '.[test]')")
