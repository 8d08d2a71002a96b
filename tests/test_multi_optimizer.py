"""`jaxopt_port.multi_optimizer` against Keras's `MultiOptimizer`, and
Keras's `MultiOptimizer` composing bridged optimizers.

Variables `variable_0..2` (a scalar, a vector, a matrix): an exact path, a
regular expression and the default each pick a transform.
"""

import jaxopt_port
import keras
import numpy as np
import pytest

import tf_bridge
from tf_bridge import testing

STEPS = 100


def native_multi(sgd, adam, rmsprop, **kwargs):
  return keras.optimizers.MultiOptimizer(keras.optimizers.OptimizerMap(
      sgd(0.1, momentum=0.9),
      {"variable_0": adam(0.05), "variable_[2-9]": rmsprop(0.01)}), **kwargs)


def port_multi(**kwargs):
  return jaxopt_port.multi_optimizer(
      jaxopt_port.sgd(0.1, momentum=0.9),
      {"variable_0": jaxopt_port.adam(0.05),
       "variable_[2-9]": jaxopt_port.rmsprop(0.01)}, **kwargs)


def classes(module):
  return module.SGD, module.Adam, module.RMSprop


@pytest.mark.parametrize("kwargs", [{}, {"loss_scale_factor": 1e3}],
                         ids=["defaults", "loss_scale"])
@pytest.mark.parametrize("scale", [1.0, 1e-4])
def test_port_equals_native_multi_optimizer(kwargs, scale):
  initial, gradients = testing.seeded_problem(STEPS, 0, scale)
  native = testing.native_trajectory(
      native_multi(*classes(keras.optimizers), **kwargs), initial, gradients)
  port = testing.transform_trajectory(port_multi(**kwargs), initial,
                                      gradients)
  testing.compare_trajectories(port, native, rtol=1e-5, atol=1e-6,
                               expected_name="keras MultiOptimizer")
  single = testing.native_trajectory(
      keras.optimizers.SGD(0.1, momentum=0.9), initial, gradients)
  with pytest.raises(AssertionError, match="variable 0"):  # Groups matter.
    testing.compare_trajectories(native, single, rtol=1e-5, atol=1e-6)


def test_one_transform_under_two_keys_keeps_one_state():
  adam = jaxopt_port.adam(0.05)
  transform = jaxopt_port.multi_optimizer(
      jaxopt_port.sgd(0.1), {"variable_0": adam, "variable_2": adam})
  native_adam = keras.optimizers.Adam(0.05)
  native = keras.optimizers.MultiOptimizer(keras.optimizers.OptimizerMap(
      keras.optimizers.SGD(0.1),
      {"variable_0": native_adam, "variable_2": native_adam}))
  initial, gradients = testing.seeded_problem(20, 1, 1.0)
  testing.compare_trajectories(
      testing.transform_trajectory(transform, initial, gradients),
      testing.native_trajectory(native, initial, gradients),
      rtol=1e-5, atol=1e-6)
  state = transform.init({f"variable_{i}": np.zeros(2, np.float32)
                          for i in range(3)})
  assert sorted(state.inner_states.inner_states) == [0, 1]


def test_keras_multi_optimizer_composes_bridged_optimizers():
  initial, gradients = testing.seeded_problem(STEPS, 0, 1.0)
  native = testing.native_trajectory(
      native_multi(*classes(keras.optimizers)), initial, gradients)
  bridged = testing.native_trajectory(native_multi(*classes(tf_bridge)),
                                      initial, gradients)
  testing.compare_trajectories(bridged, native, rtol=1e-5, atol=1e-6,
                               actual_name="bridged")


def test_two_matching_patterns_are_an_error():
  transform = jaxopt_port.multi_optimizer(
      jaxopt_port.sgd(), {"variable_.*": jaxopt_port.adam(),
                          ".*_0": jaxopt_port.rmsprop()})
  with pytest.raises(ValueError, match=r"Multiple optimizers assigned to "
                     r"variable variable_0: patterns \['variable_\.\*', "
                     r"'\.\*_0'\] all match\."):
    transform.init({"variable_0": np.zeros(2, np.float32)})


def test_nested_params_match_by_joined_path():
  transform = jaxopt_port.multi_optimizer(
      jaxopt_port.sgd(1.0), {"encoder/.*": jaxopt_port.sgd(0.0)})
  params = {"encoder": {"kernel": np.ones(2, np.float32)},
            "head": {"kernel": np.ones(2, np.float32)}}
  updates, _ = transform.update(params, transform.init(params), params)
  np.testing.assert_array_equal(updates["encoder"]["kernel"], [0.0, 0.0])
  np.testing.assert_array_equal(updates["head"]["kernel"], [-1.0, -1.0])
