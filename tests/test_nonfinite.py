"""Non-finite gradients: `jaxopt_port.skip_nonfinite` and the bridged
classes' `skip_nonfinite=True` skip the step (params and state untouched,
the step counted); without them a NaN spreads as in native Keras."""

import jax
import jax.numpy as jnp
import jaxopt_port
import keras
import numpy as np
import optax
import pytest
import tf_keras

import tf_bridge
import tf_bridge.legacy
from tf_bridge import testing

STEPS = 12
BAD_STEPS = {3: np.nan, 7: np.inf, 8: -np.inf}  # 0-based step: poison.


def poisoned_problem():
  """Gradients where the BAD_STEPS each hold one non-finite element, and
  the same gradients with those steps left out."""
  initial, gradients = testing.seeded_problem(STEPS, 3, 1.0)
  poisoned = [[g.copy() for g in step] for step in gradients]
  for step, value in BAD_STEPS.items():
    poisoned[step][2][1, 2] = value
  clean = [step for index, step in enumerate(gradients)
           if index not in BAD_STEPS]
  return initial, poisoned, clean


def expand(clean_trajectory, initial):
  """The clean trajectory with each skipped step repeating the values
  before it: what a skipping optimizer should produce on the poisoned one."""
  values, clean, expanded = list(initial), iter(clean_trajectory), []
  for step in range(STEPS):
    if step not in BAD_STEPS:
      values = next(clean)
    expanded.append(values)
  return expanded


@pytest.mark.parametrize("make", [
    jaxopt_port.adam, lambda: jaxopt_port.adamw(weight_decay=0.1),
    jaxopt_port.legacy.rmsprop, jaxopt_port.addons.lamb,
    lambda: jaxopt_port.tf1.momentum(0.1, 0.9),
    lambda: optax.chain(optax.clip_by_global_norm(1.0), jaxopt_port.lion()),
], ids=["adam", "adamw", "legacy.rmsprop", "addons.lamb", "tf1.momentum",
        "chain-clip-lion"])
def test_port_skips_nonfinite_steps(make):
  initial, poisoned, clean = poisoned_problem()
  expected = expand(testing.transform_trajectory(make(), initial, clean),
                    initial)
  actual = testing.transform_trajectory(jaxopt_port.skip_nonfinite(make()),
                                        initial, poisoned)
  # Not bitwise: the select changes how XLA fuses the step (1 ulp seen).
  testing.compare_trajectories(actual, expected, rtol=1e-6, atol=1e-7,
                               actual_name="skipping", expected_name="clean")
  for step in BAD_STEPS:  # A skipped step moves nothing, bitwise.
    for got, want in zip(actual[step], actual[step - 1]):
      np.testing.assert_array_equal(got, want)


def test_port_counts_skipped_steps_and_keeps_inner_state_bitwise():
  transform = jaxopt_port.skip_nonfinite(jaxopt_port.adam())
  params = {"w": jnp.ones(3)}
  state = transform.init(params)
  _, state = transform.update({"w": jnp.full(3, 0.5)}, state, params)
  before = jax.tree.map(np.array, state.inner_state)
  for value in (np.nan, np.inf):
    updates, state = jax.jit(transform.update)(
        {"w": jnp.array([0.5, value, 0.5])}, state, params)
    np.testing.assert_array_equal(updates["w"], np.zeros(3))
    jax.tree.map(np.testing.assert_array_equal, state.inner_state, before)
  assert int(state.skipped_steps) == 2


def test_without_skipping_a_nan_spreads_as_in_native_keras():
  initial, poisoned, _ = poisoned_problem()
  native = testing.native_trajectory(keras.optimizers.Adam(), initial,
                                     poisoned[:5])
  port = testing.transform_trajectory(jaxopt_port.adam(), initial,
                                      poisoned[:5])
  for got, want in zip(port[-1], native[-1]):
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
  assert np.isnan(native[-1][2][1, 2])
  assert not np.isnan(native[-1][1]).any()  # Only the poisoned variable.


@pytest.mark.parametrize("bridged,native", [
    (lambda: tf_bridge.Adam(0.1, skip_nonfinite=True),
     lambda: keras.optimizers.Adam(0.1)),
    (lambda: tf_bridge.AdamW(0.1, weight_decay=0.2, skip_nonfinite=True),
     lambda: keras.optimizers.AdamW(0.1, weight_decay=0.2)),
    (lambda: tf_bridge.legacy.RMSprop(0.01, skip_nonfinite=True),
     lambda: tf_keras.optimizers.legacy.RMSprop(0.01)),
    (lambda: tf_bridge.legacy.SGD(0.1, momentum=0.9, skip_nonfinite=True),
     lambda: tf_keras.optimizers.legacy.SGD(0.1, momentum=0.9)),
], ids=["keras3.Adam", "keras3.AdamW", "legacy.RMSprop", "legacy.SGD"])
def test_bridged_skip_equals_native_without_the_bad_steps(bridged, native):
  initial, poisoned, clean = poisoned_problem()
  optimizer = bridged()
  actual = testing.native_trajectory(optimizer, initial, poisoned)
  expected = expand(testing.native_trajectory(native(), initial, clean),
                    initial)
  testing.compare_trajectories(actual, expected, rtol=1e-5, atol=1e-6,
                               actual_name="bridged", expected_name="native")
  variables = optimizer.variables
  skipped = [v for v in (variables() if callable(variables) else variables)
             if "skipped_steps" in v.name]
  assert [int(v.numpy()) for v in skipped] == [len(BAD_STEPS)]


@pytest.mark.parametrize("cls", [tf_bridge.Adam, tf_bridge.legacy.Adam])
def test_skip_nonfinite_round_trips_through_config(cls):
  config = cls(skip_nonfinite=True).get_config()
  assert config["skip_nonfinite"] is True
  assert cls.from_config(config).get_config() == config
  assert "skip_nonfinite" not in cls().get_config()


def test_loss_scale_optimizer_around_a_skipping_bridged_optimizer():
  """LossScaleOptimizer skips the overflowing step itself and halves its
  scale; the bridged optimizer inside follows native Adam step for step."""
  initial, poisoned, _ = poisoned_problem()

  def run(inner):
    optimizer = keras.optimizers.LossScaleOptimizer(inner,
                                                    initial_scale=2.0 ** 4)
    trajectory = testing.native_trajectory(optimizer, initial, poisoned)
    return trajectory, float(optimizer.dynamic_scale.numpy())
  bridged, bridged_scale = run(tf_bridge.Adam(0.1, skip_nonfinite=True))
  native, native_scale = run(keras.optimizers.Adam(0.1))
  testing.compare_trajectories(bridged, native, rtol=1e-5, atol=1e-6,
                               actual_name="bridged", expected_name="native")
  assert bridged_scale == native_scale == 2.0 ** (4 - len(BAD_STEPS))
