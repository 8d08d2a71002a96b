"""Hyperparameters TensorFlow evaluates each step: a tensor, a variable, a
callable (OptimizerV2's `_set_hyper` takes them all, Keras 3 tensors and
variables) or, for TF Addons' weight decay, a schedule. The bridged step
takes their current values as inputs, so a variable assigned between steps
steers the next step even inside a `tf.function` traced before, as native's
does; each program runs on the native class and on its bridged twin."""

import jax
import numpy as np
import pytest
import tensorflow as tf
import keras
import tf_keras

import jaxopt_port
import jaxopt_port.legacy
import tf_bridge
import tf_bridge.legacy
import tf_bridge.legacy.addons

GRADIENTS = np.random.RandomState(0).standard_normal((8, 4)).astype(np.float32)


def run(optimizer, hyper, schedule, *, keras3=False, in_function=True):
  """Eight steps of `optimizer` on one variable, `hyper` (a variable) set to
  `schedule[t]` before step t; the variable after each step."""
  variable = (keras.Variable if keras3 else tf.Variable)(
      np.linspace(-1.0, 1.0, 4).astype(np.float32))

  def step(gradient):
    optimizer.apply_gradients([(gradient, variable)])

  step = tf.function(step) if in_function else step
  trajectory = []
  for gradient, value in zip(GRADIENTS, schedule):
    hyper.assign(value)
    step(tf.constant(gradient))
    trajectory.append(np.array(keras.ops.convert_to_numpy(variable)))
  return np.array(trajectory)


LEGACY = [("Adam", "beta_1", [0.9, 0.9, 0.5, 0.5, 0.0, 0.0, 0.9, 0.9]),
          ("SGD", "momentum", [0.9, 0.9, 0.5, 0.5, 0.1, 0.1, 0.9, 0.9]),
          ("RMSprop", "rho", [0.9, 0.9, 0.5, 0.5, 0.1, 0.1, 0.9, 0.9]),
          ("Adagrad", "epsilon", [1e-7, 1e-7, 0.5, 0.5, 1.0, 1.0, 1e-7, 1e-7]),
          # The kernels' sqrt branch for -0.5, pow for the others.
          ("Ftrl", "learning_rate_power",
           [-0.5, -0.5, -1.0, -1.0, -0.5, -0.5, -0.1, -0.1])]


@pytest.mark.parametrize("in_function", [True, False],
                         ids=["tf.function", "eager"])
@pytest.mark.parametrize("name,hyper_name,schedule", LEGACY,
                         ids=[case[0] for case in LEGACY])
def test_legacy_variable_hyperparameter_steers_each_step(name, hyper_name,
                                                         schedule,
                                                         in_function):
  """A `tf.Variable` hyperparameter assigned between steps: the bridged
  trajectory is native's, and differs from one with the first value kept
  (the changes matter)."""
  trajectories = []
  for module in (tf_keras.optimizers.legacy, tf_bridge.legacy):
    hyper = tf.Variable(schedule[0])
    optimizer = getattr(module, name)(0.1, **{hyper_name: hyper})
    trajectories.append(run(optimizer, hyper, schedule,
                            in_function=in_function))
  native, bridged = trajectories
  np.testing.assert_allclose(bridged, native, rtol=1e-5, atol=1e-6)
  hyper = tf.Variable(schedule[0])
  fixed = run(getattr(tf_keras.optimizers.legacy, name)(
      0.1, **{hyper_name: hyper}), hyper, [schedule[0]] * 8)
  assert np.max(np.abs(fixed - native)) > 1e-3


def test_legacy_ftrl_half_power_fed_at_run_time_is_the_kernels_sqrt():
  """A fed `learning_rate_power` is traced: legacy FTRL then takes the
  kernels' sqrt when it is -0.5 at run time (not `pow(x, 0.5)`, which
  differs from it in the last bit on some accumulators), so the step equals
  the one with the number given, bit for bit."""
  rng = np.random.RandomState(1)
  params = {"w": rng.uniform(-1, 1, 65536).astype(np.float32)}
  grads = {"w": rng.uniform(-3, 3, 65536).astype(np.float32)}

  def step(power, params, grads):
    transform = jaxopt_port.legacy.ftrl(learning_rate=0.1,
                                        learning_rate_power=power)
    updates, _ = transform.update(grads, transform.init(params), params)
    return updates["w"]

  for power in (-0.5, -0.3):
    given = jax.jit(lambda params, grads, power=power: step(
        power, params, grads))(params, grads)
    fed = jax.jit(step)(np.float32(power), params, grads)
    np.testing.assert_array_equal(np.asarray(fed), np.asarray(given))


def test_legacy_callable_hyperparameter_and_its_config():
  """`beta_1=lambda: value`: called each step (native and bridged agree),
  `_get_hyper` evaluates it, `get_config` holds its current number."""
  box = {"beta_1": 0.9}
  trajectories = []
  for module in (tf_keras.optimizers.legacy, tf_bridge.legacy):
    optimizer = module.Adam(0.1, beta_1=lambda: box["beta_1"])
    variable = tf.Variable([1.0, -1.0])
    for t in range(6):
      box["beta_1"] = 0.9 if t < 3 else 0.2
      optimizer.apply_gradients([(tf.constant([0.5, 0.25]), variable)])
    trajectories.append(variable.numpy())
    assert optimizer.get_config()["beta_1"] == pytest.approx(0.2)
    assert float(optimizer._get_hyper("beta_1", tf.float32)) == (  # pylint: disable=protected-access
        pytest.approx(0.2))
  np.testing.assert_allclose(trajectories[1], trajectories[0], rtol=1e-6)


def test_keras3_variable_hyperparameter_steers_each_step():
  """Keras 3: a variable `beta_1` assigned between steps of a traced
  `tf.function`, native and bridged."""
  schedule = [0.9, 0.9, 0.5, 0.5, 0.0, 0.0, 0.9, 0.9]
  trajectories = []
  for module in (keras.optimizers, tf_bridge):
    hyper = tf.Variable(schedule[0])
    trajectories.append(run(module.Adam(0.1, beta_1=hyper), hyper, schedule,
                            keras3=True))
  np.testing.assert_allclose(trajectories[1], trajectories[0], rtol=1e-5,
                             atol=1e-6)


def test_tfa_weight_decay_schedule():
  """TF Addons' AdamW with `weight_decay` a schedule of `iterations` (TFA's
  `_decayed_wd`): each step decays by the schedule's value at Keras's count
  before it, then runs legacy Adam (numpy here)."""
  schedule = tf_keras.optimizers.schedules.ExponentialDecay(0.1, 2, 0.5)
  optimizer = tf_bridge.legacy.addons.AdamW(schedule, 0.01)
  variable = tf.Variable(np.linspace(-1.0, 1.0, 4).astype(np.float32))

  @tf.function
  def step(gradient):
    optimizer.apply_gradients([(gradient, variable)])

  want = np.linspace(-1.0, 1.0, 4)
  m = v = 0.0
  for t, gradient in enumerate(GRADIENTS, 1):
    step(tf.constant(gradient))
    want = want - 0.1 * 0.5 ** ((t - 1) / 2) * want
    m = 0.9 * m + 0.1 * gradient
    v = 0.999 * v + 0.001 * gradient.astype(np.float64) ** 2
    alpha = 0.01 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
    want = want - alpha * m / (np.sqrt(v) + 1e-7)
    np.testing.assert_allclose(variable.numpy(), want, rtol=1e-5, atol=1e-6,
                               err_msg=f"step {t}")
