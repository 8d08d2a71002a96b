"""A parity test in pytest: the port of a hand-written OptimizerV2 subclass
computes what the subclass computes.

    pytest examples/test_custom_optimizer.py
"""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

# pylint: disable=wrong-import-position
import pytest
import tensorflow as tf
import tf_keras

from custom_optimizer import bias_corrected_momentum
from tf_bridge import testing


class HandWrittenMomentum(tf_keras.optimizers.legacy.Optimizer):
  """The optimizer as people wrote it before: an OptimizerV2 subclass with
  `_create_slots` and `_resource_apply_dense`."""

  def __init__(self, learning_rate=0.01, momentum=0.9,
               name="HandWrittenMomentum", **kwargs):
    super().__init__(name, **kwargs)
    self._set_hyper("learning_rate", learning_rate)
    self._momentum = momentum

  def _create_slots(self, var_list):
    for variable in var_list:
      self.add_slot(variable, "m")

  def _resource_apply_dense(self, grad, var, apply_state=None):
    m = self.get_slot(var, "m")
    learning_rate = self._decayed_lr(var.dtype.base_dtype)
    step = tf.cast(self.iterations + 1, var.dtype.base_dtype)
    m_t = m.assign(self._momentum * m + (1 - self._momentum) * grad)
    return var.assign_sub(learning_rate * m_t / (1 - self._momentum ** step))

  def get_config(self):
    return {**super().get_config(), "momentum": self._momentum,
            "learning_rate": self._serialize_hyperparameter("learning_rate")}


@pytest.mark.parametrize("grad_scale", [1.0, 1e-4])
def test_the_port_computes_what_the_subclass_computed(grad_scale):
  testing.assert_parity(bias_corrected_momentum(0.05, 0.9),
                        HandWrittenMomentum(0.05, 0.9), steps=100,
                        grad_scale=grad_scale)


def test_a_wrong_momentum_is_caught_where_it_first_shows():
  """At step 1 any momentum gives m / (1 - b) = g: they part at step 2."""
  with pytest.raises(AssertionError, match=(
      r"transform and HandWrittenMomentum part at step 2, variable 0 \(shape "
      r"\(\)\): max abs diff")):
    testing.assert_parity(bias_corrected_momentum(0.05, 0.8),
                          HandWrittenMomentum(0.05, 0.9), steps=5)
