"""A user's own classes (`keras_optimizer(factory)` on every host): where
they are registered, how a saved model finds them in a new process, and the
errors of their construction and of the ports' own."""

import json
import os
import re
import subprocess
import sys
import zipfile

import jax.numpy as jnp
import jaxopt_port
import keras
import numpy as np
import optax
import pytest
import tf_keras

import tf_bridge
import tf_bridge.legacy
import tf_bridge.tf_keras

HOSTS = {"keras3": (tf_bridge, keras.saving),
         "legacy": (tf_bridge.legacy, tf_keras.saving),
         "tf_keras": (tf_bridge.tf_keras, tf_keras.saving)}


def adam(learning_rate=0.001, b1=0.9):
  """A user's factory that shares its name with the catalog's Adam."""
  return optax.adam(learning_rate, b1=b1)


def _saved_and_loaded(optimizer, path):
  """The optimizer of a one-step model saved to `path` and loaded again."""
  model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
  model.compile(optimizer=optimizer, loss="mse")
  model.train_on_batch(np.ones((4, 3), "float32"), np.ones((4, 1), "float32"))
  model.save(path)
  return keras.models.load_model(path).optimizer


@pytest.mark.parametrize("host", list(HOSTS))
def test_a_users_class_registers_under_the_factorys_module(host):
  module, saving = HOSTS[host]
  built_in = saving.get_registered_object(module.Adam.registered_name)
  users = module.keras_optimizer(adam)
  assert users.__module__ == __name__
  assert users.registered_name == f"{__name__}>Adam"
  assert saving.get_registered_object(users.registered_name) is users
  assert saving.get_registered_object(module.Adam.registered_name) is (
      built_in) is module.Adam


@pytest.mark.parametrize("host", list(HOSTS))
def test_a_users_class_never_replaces_a_built_in(host):
  module, saving = HOSTS[host]
  package = module.Adam.registered_name.split(">")[0]
  with pytest.raises(ValueError, match=re.escape(
      f"'{package}>Adam' is the registered name of "
      f"{module.Adam.__module__}.Adam; a class of yours would replace it, "
      "and models saved with it would no longer load. Give yours another "
      "name (`name=`) or module (`module=`).")):
    module.keras_optimizer(adam, module=package)
  assert saving.get_registered_object(f"{package}>Adam") is module.Adam


def test_a_users_adam_and_the_built_in_adam_both_load(tmp_path):
  users = tf_bridge.keras_optimizer(adam)
  loaded = _saved_and_loaded(users(0.01, b1=0.5), str(tmp_path / "u.keras"))
  assert type(loaded) is users and loaded.get_config()["b1"] == 0.5
  loaded = _saved_and_loaded(tf_bridge.Adam(0.01, beta_1=0.5),
                             str(tmp_path / "b.keras"))
  assert type(loaded) is tf_bridge.Adam
  assert loaded.get_config()["beta_1"] == 0.5


USERS_MODULE = '''
import optax
import tf_bridge

def centered_momentum(learning_rate=0.01, momentum=0.9):
  return optax.chain(optax.ema(momentum), optax.scale(-learning_rate))

CenteredMomentum = tf_bridge.keras_optimizer(centered_momentum)
'''

LOAD = '''
import sys
import keras
try:
  keras.models.load_model(sys.argv[1])
except TypeError as error:
  print("without the module:", str(error).splitlines()[0])
import my_optimizers
optimizer = keras.models.load_model(sys.argv[1]).optimizer
print("with it:", type(optimizer) is my_optimizers.CenteredMomentum,
      optimizer.get_config()["momentum"], optimizer.iterations.numpy())
'''


def test_a_new_process_loads_a_users_class_once_its_module_is_imported(
    tmp_path, request):
  (tmp_path / "my_optimizers.py").write_text(USERS_MODULE)
  sys.path.insert(0, str(tmp_path))
  # Forgotten after the test: another test's my_optimizers is another module.
  request.addfinalizer(lambda: sys.modules.pop("my_optimizers", None))
  try:
    import my_optimizers  # pylint: disable=import-outside-toplevel
  finally:
    sys.path.remove(str(tmp_path))
  path = str(tmp_path / "model.keras")
  _saved_and_loaded(my_optimizers.CenteredMomentum(momentum=0.5), path)
  with zipfile.ZipFile(path) as saved:
    config = json.loads(saved.read("config.json"))["compile_config"]
  assert {k: config["optimizer"][k] for k in ("module", "registered_name")
          } == {"module": "my_optimizers",
                "registered_name": "my_optimizers>CenteredMomentum"}
  env = {**os.environ, "PYTHONPATH": os.pathsep.join(
      [str(tmp_path), os.environ.get("PYTHONPATH", "")])}
  result = subprocess.run([sys.executable, "-c", LOAD, path],
                          capture_output=True, text=True, env=env,
                          timeout=300, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  assert ("without the module: Could not locate class 'CenteredMomentum'"
          in result.stdout), result.stdout
  assert "with it: True 0.5 1" in result.stdout, result.stdout


def test_a_transformation_instead_of_a_factory_is_refused_with_an_example():
  with pytest.raises(TypeError) as error:
    tf_bridge.keras_optimizer(optax.adam(1e-3))
  assert str(error.value) == (
      "tf_bridge.keras_optimizer takes a factory: a function that returns an "
      "optax transformation, whose keyword arguments become the class's "
      "constructor arguments. It received a GradientTransformationExtraArgs. "
      "For example:\n\n"
      "  def my_adam(learning_rate=0.001, b1=0.9):\n"
      "    return optax.adam(learning_rate, b1=b1)\n\n"
      "  MyAdam = tf_bridge.keras_optimizer(my_adam)")
  with pytest.raises(TypeError, match=re.escape(
      "tf_bridge.legacy.keras_optimizer takes a factory: ")):
    tf_bridge.legacy.keras_optimizer(keras.optimizers.Adam)


@pytest.mark.parametrize("host", list(HOSTS))
def test_a_non_number_for_a_numeric_argument_fails_at_construction(host):
  users = HOSTS[host][0].keras_optimizer(adam)
  for value in ("high", [0.9], np.ones(3)):
    with pytest.raises(TypeError) as error:
      users(b1=value)
    assert str(error.value) == (
        "Adam(): `b1` must be a number or a scalar array. Received: "
        f"b1={value!r}; the default of adam is 0.9.")
  # What a number may also be: an array (optax's inject_hyperparams), a
  # NumPy scalar, a schedule (fed to each step).
  for value in (jnp.asarray(0.5), np.float32(0.5), lambda: 0.5):
    users(b1=value)


@pytest.mark.parametrize("host,base", [
    ("keras3", "weight_decay, clipnorm, clipvalue, global_clipnorm, use_ema, "
     "ema_momentum, ema_overwrite_frequency, loss_scale_factor, "
     "gradient_accumulation_steps"),
    ("legacy", "lr, decay, clipnorm, clipvalue, global_clipnorm")])
def test_a_users_class_names_itself_for_an_unknown_argument(host, base):
  users = HOSTS[host][0].keras_optimizer(adam)
  with pytest.raises(ValueError if host == "keras3" else TypeError) as error:
    users(momentum=0.9)
  assert str(error.value) == (
      "Adam(): argument(s) not recognized: {'momentum': 0.9}. It takes the "
      f"arguments of {__name__}.adam (learning_rate, b1) and the base "
      f"arguments ({base}).")


@pytest.mark.parametrize("port,call,takes", [
    ("jaxopt_port.adam", lambda: jaxopt_port.adam(lr=0.1),
     "got an unexpected keyword argument 'lr'. It takes: learning_rate, "
     "beta_1, beta_2, epsilon, amsgrad, weight_decay, clipnorm, clipvalue, "
     "global_clipnorm, use_ema, ema_momentum, ema_overwrite_frequency, "
     "loss_scale_factor, gradient_accumulation_steps."),
    ("jaxopt_port.tf1.adam", lambda: jaxopt_port.tf1.adam(0.1, beta_1=0.9),
     "got an unexpected keyword argument 'beta_1'. It takes: learning_rate, "
     "beta1, beta2, epsilon.")])
def test_a_port_names_itself_for_an_unknown_argument(port, call, takes):
  with pytest.raises(TypeError) as error:
    call()
  assert str(error.value) == f"{port}(): {takes}"


def test_a_catalog_class_keeps_natives_words():
  """The drop-in contract: tf_bridge.Adam raises what keras's Adam raises."""
  with pytest.raises(ValueError) as native:
    keras.optimizers.Adam(betaa=0.9)
  with pytest.raises(ValueError) as bridged:
    tf_bridge.Adam(betaa=0.9)
  assert str(bridged.value) == str(native.value) == (
      "Argument(s) not recognized: {'betaa': 0.9}")
