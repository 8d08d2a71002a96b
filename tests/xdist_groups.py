"""`--dist loadgroup` on every pytest the test extra allows.

pytest-xdist 3.8 sends the tests of one `xdist_group` to one worker by
writing the group into each worker's item ids (`test_x.py::test[1]@group`)
through `Node._nodeid`. pytest 9.2 keeps a node's id in `Node._id` (a
structured `NodeId`) and no longer reads `_nodeid`, so the groups are lost
without an error (pytest-dev/pytest-xdist#1386). This hook, run after
xdist's, carries the id xdist wrote over to where the running pytest reads
it; on a pytest that reads `_nodeid` it changes nothing.
"""

import pytest


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
  if not getattr(config.option, "loadgroup", False):
    return
  for item in items:
    written = getattr(item, "_nodeid", None)
    if written is not None and written != item.nodeid:
      from _pytest.nodeid import NodeId  # pylint: disable=import-outside-toplevel
      item._id = NodeId.parse(written)  # pylint: disable=protected-access
