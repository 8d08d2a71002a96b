"""A user's own optax factory as a Keras 3 and an OptimizerV2 class."""

import jaxopt_port
import keras
import optax
import tf_keras

import tf_bridge
import tf_bridge.legacy
from tf_bridge import testing

from bridge_cases import problem, keras_trajectory, fit


def sign_momentum(learning_rate=0.01, momentum=0.9):
  """A user's transform: the sign of a momentum average."""
  return optax.chain(optax.ema(momentum, debias=False), optax.scale_by_sign(),
                     optax.scale_by_learning_rate(learning_rate))


SignMomentum = tf_bridge.keras_optimizer(sign_momentum)


def test_user_factory_in_one_line(tmp_path):
  assert SignMomentum.__name__ == "SignMomentum"
  model = fit(SignMomentum(0.01, momentum=0.5), legacy=False, epochs=1)
  # The same steps, written in JAX against the same gradients:
  initial, gradients = problem(sparse=False)
  bridged = keras_trajectory(SignMomentum(0.01, momentum=0.5), initial,
                             gradients)
  port = testing.transform_trajectory(sign_momentum(0.01, 0.5), initial,
                                      gradients)
  testing.compare_trajectories(bridged, port, rtol=1e-6, atol=1e-7)
  path = str(tmp_path / "user.keras")
  model.save(path)
  loaded = keras.models.load_model(path)
  assert type(loaded.optimizer) is SignMomentum
  assert loaded.optimizer.get_config()["momentum"] == 0.5


def test_user_factory_as_optimizer_v2_class(tmp_path):
  legacy_class = tf_bridge.legacy.keras_optimizer(sign_momentum,
                                                  name="LegacySignMomentum")
  initial, gradients = problem(sparse=False)
  bridged = keras_trajectory(legacy_class(0.01, momentum=0.5, decay=0.1),
                             initial, gradients)
  rate = lambda count: 0.01 / (1.0 + 0.1 * count)  # OptimizerV2's decay.
  port = testing.transform_trajectory(sign_momentum(rate, 0.5), initial,
                                      gradients)
  testing.compare_trajectories(bridged, port, rtol=1e-6, atol=1e-7)
  model = fit(legacy_class(0.01), legacy=True, epochs=1)
  path = str(tmp_path / "user.h5")
  model.save(path)
  assert type(tf_keras.models.load_model(path).optimizer) is legacy_class


def test_centered_momentum_as_keras_class_equals_its_port():
  initial, gradients = problem(sparse=False)
  bridged = keras_trajectory(
      tf_bridge.CenteredMomentumSGD(0.05, momentum=0.9), initial, gradients)
  port = testing.transform_trajectory(
      jaxopt_port.centered_momentum_sgd(0.05, momentum=0.9), initial, gradients)
  testing.compare_trajectories(bridged, port, rtol=1e-6, atol=1e-7)
