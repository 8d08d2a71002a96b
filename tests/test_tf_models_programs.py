"""Model Garden's own code looks at the optimizer, not only at its numbers:
its trainer and eval actions, and a checkpoint's keys, with the originals
and with the bridged twins (tests/scripts/tf_models_programs.py, in a
process of its own where Model Garden imports)."""

import numpy as np
import pytest

import originals

# Model Garden's programs run in one worker's process (its imports and
# tf.functions cost more than the checks).
pytestmark = pytest.mark.xdist_group("tf_models_programs")


@pytest.fixture(scope="module")
def found():
  return originals.run("tf_models_programs.py")


def test_trainer_evaluates_the_averages_and_writes_ema_checkpoints(found):
  """Model Garden's trainer takes the bridged `ExponentialMovingAverage`
  for its own (`isinstance`): it makes the averages, evaluates on them and
  swaps the weights back, and its eval action writes `ema_checkpoints/`
  with the averages as the model's weights, under the original's keys."""
  original, bridged = found["original"]["trainer"], found["bridged"]["trainer"]
  assert original["isinstance"] and bridged["isinstance"]
  np.testing.assert_allclose(bridged["validation_loss"],
                             original["validation_loss"], rtol=1e-5)
  for ours, theirs in zip(bridged["weights"], original["weights"]):
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
  assert original["ema_checkpoint"] is not None
  assert bridged["ema_checkpoint"] is not None
  assert sorted(bridged["ema_checkpoint"]) == sorted(original["ema_checkpoint"])
  for key, value in original["ema_checkpoint"].items():
    if key.startswith("model/"):  # The values; the others' shape and dtype.
      np.testing.assert_allclose(bridged["ema_checkpoint"][key], value,
                                 rtol=1e-5, atol=1e-6, err_msg=key)
    else:
      assert bridged["ema_checkpoint"][key] == value, key


@pytest.mark.parametrize("name", ["AdamWeightDecay", "LAMB", "LARS"])
def test_checkpoint_keys_are_the_originals(found, name):
  """A checkpoint of a model the bridged class trained holds the
  original's keys, shapes and dtypes: its OptimizerV2 hyperparameters too
  (`beta_1` and `beta_2` of AdamWeightDecay, a legacy Adam; LAMB's and its
  `weight_decay_rate`)."""
  assert (found["bridged"]["checkpoints"][name]
          == found["original"]["checkpoints"][name])
