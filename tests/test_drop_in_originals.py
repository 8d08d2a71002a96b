"""The original libraries' optimizers, installed at test time, against
their twins on what a program sees beyond the numbers
(tests/scripts/drop_in_originals.py, in a process of its own by
`originals.run`): every config's keys (TF Addons', Hugging Face's as
`create_optimizer` makes it, Model Garden's, TF Recommenders'), and TF
Addons' `MovingAverage` program with a weight that is no variable."""

import numpy as np
import pytest

import originals

# One worker runs this module (README runs pytest with --dist loadgroup),
# so its process runs once.
pytestmark = pytest.mark.xdist_group("drop_in_originals")


@pytest.fixture(scope="module")
def seen():
  return originals.run("drop_in_originals.py")


def test_every_config_has_the_originals_keys(seen):
  differing = {name: {"missing": sorted(set(keys["original"])
                                        - set(keys["twin"])),
                      "extra": sorted(set(keys["twin"])
                                      - set(keys["original"]))}
               for name, keys in seen["configs"].items()
               if sorted(keys["original"]) != sorted(keys["twin"])}
  assert not differing
  assert len(seen["configs"]) == 21


def test_assign_average_vars_skips_a_weight_that_is_no_variable_as_tfa(
    seen):
  """TFA's `test_no_average_slot`: `model.variables` holds a
  `TextVectorization` layer's weight handler, which TFA skips with a
  warning while the variables take their averages."""
  tfa, bridge = (seen["unnamed_weight"][side] for side in ("tfa", "bridge"))
  assert tfa["raised"] is None and bridge["raised"] is None
  assert len(tfa["warnings"]) == 1
  assert bridge["warnings"] == tfa["warnings"]
  assert len(bridge["weights"]) == len(tfa["weights"]) == 3
  for ours, theirs in zip(bridge["weights"], tfa["weights"]):
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
