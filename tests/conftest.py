"""Settings fixed at process start: Keras 3 runs on its TensorFlow backend;
hypothesis runs the small, derandomized "ci" profile unless
HYPOTHESIS_PROFILE names another ("long"). Under pytest-xdist's
`--dist loadgroup` (README's test command), a module whose tests share a
module-scoped fixture that runs a process runs on one worker, so the
process runs once."""

import os

import pytest
from hypothesis import settings

SHARED_PROCESS_MODULES = ("test_distribute", "test_jax_backend",
                          "test_parity_command", "test_resume")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
  for item in items:
    module = item.module.__name__.rpartition(".")[2]
    if module in SHARED_PROCESS_MODULES:
      item.add_marker(pytest.mark.xdist_group(module))

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

settings.register_profile("ci", max_examples=25, deadline=None,
                          derandomize=True)
settings.register_profile("long", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
