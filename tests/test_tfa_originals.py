"""TF Addons 0.23 itself is the ground truth for the bridged wrappers
(`tf_bridge.legacy.addons.MovingAverage`, `SWA`, `Lookahead`): both train
the same tf_keras model (tests/scripts/tfa_wrappers.py, TFA imported in a
process of its own by `originals.run`) and a program sees the same
variables, names, order, config and numbers, and either side's state, by
position or by checkpoint, continues on the other side's trajectory."""

import numpy as np
import pytest

import originals

# One worker runs this module (README runs pytest with --dist loadgroup),
# so its process runs once.
pytestmark = pytest.mark.xdist_group("tfa_originals")

WRAPPERS = ["MovingAverage", "SWA", "Lookahead"]
HANDOVERS = ["tfa->bridge", "bridge->tfa"]
RTOL, ATOL = 1e-5, 1e-6  # test_bridge_parity's.


@pytest.fixture(scope="module")
def runs():
  return originals.run("tfa_wrappers.py")


def assert_close(actual, expected, what):
  assert len(actual) == len(expected), what
  for index, (a, e) in enumerate(zip(actual, expected)):
    np.testing.assert_allclose(np.array(a), np.array(e), rtol=RTOL,
                               atol=ATOL, err_msg=f"{what}[{index}]")


def largest_difference(actual, expected):
  return max(np.max(np.abs(np.array(a) - np.array(e)))
             for a, e in zip(actual, expected))


@pytest.mark.parametrize("wrapper", WRAPPERS)
def test_variables_names_order_and_config_are_tfas(runs, wrapper):
  """`variables()` is TFA's (`iter:0` and the wrapper's own slots: 5 here),
  `weights` adds the inner optimizer's slots after them (13), and the
  config holds TFA's keys (no `learning_rate` or `decay` of the
  wrapper's)."""
  tfa, bridge = runs[wrapper]["tfa"], runs[wrapper]["bridge"]
  assert bridge["variables"] == tfa["variables"]
  assert len(tfa["variables"]) == 5 and tfa["variables"][0] == "iter:0"
  assert bridge["weights"] == tfa["weights"]
  assert len(tfa["weights"]) == 13
  assert bridge["config"] == tfa["config"]


@pytest.mark.parametrize("wrapper", WRAPPERS)
def test_trains_as_tfa_by_position_too(runs, wrapper):
  tfa, bridge = runs[wrapper]["tfa"], runs[wrapper]["bridge"]
  assert_close(bridge["trained"], tfa["trained"], "weights after 8 steps")
  assert_close(bridge["get_weights"], tfa["get_weights"], "get_weights()")
  assert_close(bridge["continued"], tfa["continued"],
               "weights after 16 steps")
  assert largest_difference(tfa["continued"], tfa["trained"]) > 1e-2


@pytest.mark.parametrize("handover", HANDOVERS)
@pytest.mark.parametrize("wrapper", WRAPPERS)
def test_state_hands_over_by_position_and_by_checkpoint(runs, wrapper,
                                                        handover):
  """One side's `get_weights()` set on the other side's optimizer, or its
  `tf.train.Checkpoint` read there, continues on the writer's trajectory
  (every object of the reader matched); a fresh optimizer on the same
  model weights (the control) parts from it."""
  source = handover.partition("->")[0]
  expected = runs[wrapper][source]["continued"]
  run = runs[wrapper][handover]
  assert_close(run["by_position"], expected, "by position")
  assert_close(run["by_checkpoint"], expected, "by checkpoint")
  assert run["unmatched"] is None
  assert largest_difference(run["fresh"], expected) > 1e-2


@pytest.mark.parametrize("handover", HANDOVERS)
@pytest.mark.parametrize("wrapper", WRAPPERS)
def test_made_from_the_other_sides_config(runs, wrapper, handover):
  """A config TFA wrote makes the bridged wrapper (its tf_keras Adam
  becomes the bridged Adam) and the reverse, with the same config."""
  source = handover.partition("->")[0]
  assert runs[wrapper][handover]["from_config"] == (
      runs[wrapper][source]["config"])
