"""The settings tests/conftest.py fixes for the suite's processes."""

import gc
import os

import conftest


def test_jaxs_cache_is_unbounded_while_the_suite_runs():
  """No file lock and no listing of the cache at each write (JAX's bound
  does both): the suite trims the cache at its start instead."""
  assert os.environ["JAX_COMPILATION_CACHE_MAX_SIZE"] == "-1"


def test_trimming_deletes_the_oldest_entries_down_to_the_limit(tmp_path):
  for age, name in enumerate(["newest", "middle", "oldest"]):
    path = tmp_path / f"{name}-cache"
    path.write_bytes(b"x" * 100)
    os.utime(path, (1000 - age, 1000 - age))
  conftest.trim_compilation_cache(tmp_path, limit=250)
  assert sorted(p.name for p in tmp_path.iterdir()) == ["middle-cache",
                                                        "newest-cache"]
  conftest.trim_compilation_cache(tmp_path, limit=200)
  assert len(list(tmp_path.iterdir())) == 2
  conftest.trim_compilation_cache(tmp_path / "absent", limit=0)


def test_what_collection_left_alive_is_out_of_the_collectors_way():
  """Frozen (tests/conftest.py): an object alive since collection is in no
  generation the collector walks; one a test makes is."""
  made_by_the_test = []
  walked = {id(o) for o in gc.get_objects()}
  assert gc.get_freeze_count() > 0
  assert id(conftest.trim_compilation_cache) not in walked
  assert id(made_by_the_test) in walked
