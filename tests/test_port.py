"""`tf_bridge.port`: an optimizer object of each TensorFlow API computes, as
an optax transform, what the object itself computes. Ground truth is the
class itself: tf_keras's built-ins of both generations, TF1's
`compat.v1.train` optimizers, Keras 3's, classes written as users write
them (tests/port_classes.py) and TF Addons 0.23's (tests/scripts/
port_addons.py, in a process of its own); each runs on the same variables
and gradients as its port for 100 steps, and the port of a mutant (one
hyperparameter 1 % off) must part from it. Conversions that would compute
something else are refused at `port`, naming the hook and the op."""

import json
import os
import pathlib
import subprocess
import sys

import jax
import jax.numpy as jnp
import keras
import numpy as np
import optax
import pytest
import tensorflow as tf
import tf_keras
from tensorflow.python.keras.optimizer_v2 import adam as old_keras_adam

import jaxopt_port
import originals
import port_classes
import tf_bridge
from tf_bridge import parity, testing

pytestmark = pytest.mark.xdist_group("port")

STEPS = 100
RTOL, ATOL = 1e-5, 1e-6
legacy, v1 = tf_keras.optimizers.legacy, tf.compat.v1.train

# Each case: a function of a multiplier `k` building the optimizer with one
# hyperparameter multiplied by it (k=1: the case; k=1.01: its mutant).
CASES = {
    "legacy.Adam": lambda k: legacy.Adam(0.01 * k, decay=0.01),
    "legacy.Adam(amsgrad)": lambda k: legacy.Adam(0.01 * k, amsgrad=True),
    "legacy.SGD(nesterov)": lambda k: legacy.SGD(0.01, momentum=0.9 * k,
                                                 nesterov=True),
    "legacy.SGD": lambda k: legacy.SGD(0.01 * k),
    "legacy.RMSprop(centered)": lambda k: legacy.RMSprop(
        0.01 * k, momentum=0.5, centered=True),
    "legacy.RMSprop(momentum)": lambda k: legacy.RMSprop(0.01 * k,
                                                         momentum=0.5),
    "legacy.Adagrad": lambda k: legacy.Adagrad(0.1 * k),
    "legacy.Adadelta": lambda k: legacy.Adadelta(1.0 * k),
    "legacy.Adamax": lambda k: legacy.Adamax(0.01 * k),
    "legacy.Ftrl": lambda k: legacy.Ftrl(
        0.1 * k, l1_regularization_strength=0.001,
        l2_regularization_strength=0.01,
        l2_shrinkage_regularization_strength=0.01),
    "legacy.Nadam": lambda k: legacy.Nadam(0.01 * k),
    "tf1.GradientDescent": lambda k: v1.GradientDescentOptimizer(0.01 * k),
    "tf1.Momentum(nesterov)": lambda k: v1.MomentumOptimizer(
        0.01, 0.9 * k, use_nesterov=True),
    "tf1.Adam": lambda k: v1.AdamOptimizer(0.01 * k),
    "tf1.Adagrad": lambda k: v1.AdagradOptimizer(0.1 * k),
    "tf1.RMSProp(centered)": lambda k: v1.RMSPropOptimizer(
        0.01 * k, momentum=0.5, centered=True),
    "tf1.Adadelta": lambda k: v1.AdadeltaOptimizer(1.0 * k),
    "tf1.Ftrl": lambda k: v1.FtrlOptimizer(
        0.1 * k, l1_regularization_strength=0.001,
        l2_regularization_strength=0.01),
    "tf1.ProximalAdagrad": lambda k: v1.ProximalAdagradOptimizer(
        0.1 * k, l1_regularization_strength=0.001,
        l2_regularization_strength=0.01),
    "tf1.ProximalGradientDescent": lambda k: (
        v1.ProximalGradientDescentOptimizer(
            0.01 * k, l1_regularization_strength=0.001,
            l2_regularization_strength=0.01)),
    # Reads the global step it is made with, which its caller advances.
    "tf1.AdagradDA": lambda k: v1.AdagradDAOptimizer(
        0.1 * k, tf.Variable(0, dtype=tf.int64),
        l1_regularization_strength=0.001, l2_regularization_strength=0.01),
    "tensorflow.python.keras.Adam": lambda k: old_keras_adam.Adam(0.01 * k),
    "tf_keras.Adam": lambda k: tf_keras.optimizers.Adam(0.01 * k),
    "tf_keras.SGD(momentum)": lambda k: tf_keras.optimizers.SGD(
        0.01, momentum=0.9 * k),
    "keras.Adam": lambda k: keras.optimizers.Adam(0.01 * k),
    "keras.Lion": lambda k: keras.optimizers.Lion(0.001 * k),
    "keras.AdamW(schedule)": lambda k: keras.optimizers.AdamW(
        keras.optimizers.schedules.ExponentialDecay(0.01 * k, 10, 0.9),
        weight_decay=0.01),
    "user.CenteredMomentumSGD(OptimizerV2)": lambda k: (
        port_classes.CenteredMomentumSGD(0.01, momentum=0.9 * k,
                                         decay=0.01)),
    "user.LrMomentum(OptimizerV2, lr)": lambda k: port_classes.LrMomentum(
        lr=0.01 * k, beta=0.8),
    "user.LrMomentum(OptimizerV2, lr schedule)": lambda k: (
        port_classes.LrMomentum(
            lr=tf_keras.optimizers.schedules.ExponentialDecay(0.01 * k, 10,
                                                              0.9),
            beta=0.8)),
    "user.AdagradDecay(TF1)": lambda k: port_classes.AdagradDecay(
        0.1, accumulator_decay_step=10, accumulator_decay_rate=0.9 * k),
    "user.SignMomentum(tf_keras)": lambda k: port_classes.SignMomentum(
        0.001, beta=0.9 * k),
    "user.KerasSignMomentum(keras)": lambda k: (
        port_classes.KerasSignMomentum(0.001, beta=0.9 * k)),
}
NAMES = list(CASES)
MUTATION = 1.01


@pytest.fixture(scope="module")
def problem():
  return testing.seeded_problem(STEPS, 0, 1.0)


@pytest.fixture(scope="module")
def trajectories(problem):
  """Every case natively, and its port and its mutant's port, in one
  `tf.function` call and one jitted program."""
  initial, gradients = problem
  natives = testing.native_trajectories(
      [CASES[name](1.0) for name in NAMES], initial, gradients)
  ports = testing.transform_trajectories(
      [tf_bridge.port(CASES[name](k)) for name in NAMES
       for k in (1.0, MUTATION)], initial, gradients)
  return {name: (native, ports[2 * i], ports[2 * i + 1])
          for i, (name, native) in enumerate(zip(NAMES, natives))}


@pytest.mark.parametrize("name", NAMES)
def test_port_follows_the_class(trajectories, problem, name):
  native, ported, _ = trajectories[name]
  testing.compare_trajectories(ported, native, rtol=RTOL, atol=ATOL,
                               initial=problem[0], expected_name=name)


@pytest.mark.parametrize("name", NAMES)
def test_port_of_a_mutant_parts_from_the_class(trajectories, problem, name):
  native, _, mutant = trajectories[name]
  with pytest.raises(AssertionError, match="part at step"):
    testing.compare_trajectories(mutant, native, rtol=RTOL, atol=ATOL,
                                 initial=problem[0], expected_name=name)


def test_assert_parity_takes_a_port():
  testing.assert_parity(tf_bridge.port(legacy.Adam(0.01)), legacy.Adam(0.01))
  with pytest.raises(AssertionError):
    testing.assert_parity(tf_bridge.port(legacy.Adam(0.0101)),
                          legacy.Adam(0.01))


@pytest.mark.parametrize("catalog, name", [
    (lambda: jaxopt_port.legacy.centered_momentum_sgd(
        0.01, momentum=0.9, decay=0.01),
     "user.CenteredMomentumSGD(OptimizerV2)"),
    (lambda: jaxopt_port.tf1.adagrad_decay(0.1, accumulator_decay_step=10,
                                           accumulator_decay_rate=0.9),
     "user.AdagradDecay(TF1)"),
])
def test_users_classes_compute_the_catalogs_formula(trajectories, problem,
                                                    catalog, name):
  """The hand-written classes are the algorithms the catalog declares
  (the catalog's classic custom optimizers), so their ports equal its ports."""
  initial, gradients = problem
  _, ported, _ = trajectories[name]
  testing.compare_trajectories(
      ported, testing.transform_trajectory(catalog(), initial, gradients),
      rtol=RTOL, atol=ATOL, initial=initial, expected_name="catalog")


def test_state_holds_the_classes_slots_count_and_variables():
  params = {"w": jnp.ones((2, 3)), "b": jnp.zeros(3)}
  state = tf_bridge.port(legacy.Adam(0.01)).init(params)
  assert set(state.slots) == {"m", "v"}
  for slot in state.slots.values():
    assert jax.tree.structure(slot) == jax.tree.structure(params)
    assert jax.tree.map(jnp.shape, slot) == jax.tree.map(jnp.shape, params)
  assert state.iterations.shape == () and int(state.iterations) == 0
  assert set(state.variables) == {"learning_rate", "beta_1", "beta_2",
                                  "decay"} - {"decay"}
  tf1_state = tf_bridge.port(v1.AdamOptimizer(0.01, beta1=0.8)).init(params)
  assert set(tf1_state.slots) == {"m", "v"}
  np.testing.assert_allclose(tf1_state.variables["beta1_power"], 0.8)
  user = tf_bridge.port(port_classes.AdagradDecay(0.1)).init(params)
  assert set(user.slots) == {"accumulator"}
  assert set(user.variables) == {"step", "decays"}
  np.testing.assert_allclose(user.slots["accumulator"]["w"], 0.1)


def test_update_is_jittable_and_keeps_the_states_structure():
  """Under `jit`, `lax.scan` and `optax.chain`; the class's Python runs
  at the first trace only."""
  optimizer = port_classes.CenteredMomentumSGD(0.01, momentum=0.9)
  transform = optax.chain(tf_bridge.port(optimizer), optax.identity())
  params = {"w": jnp.ones((2, 3))}
  state = transform.init(params)

  def step(carry, grads):
    params, state = carry
    updates, state = transform.update(grads, state, params)
    return (optax.apply_updates(params, updates), state), None

  grads = {"w": jnp.full((4, 2, 3), 0.5)}
  (moved, final), _ = jax.jit(lambda c: jax.lax.scan(step, c, grads))(
      (params, state))
  assert jax.tree.structure(final) == jax.tree.structure(state)
  assert jax.tree.map(lambda x: x.dtype, final) == jax.tree.map(
      lambda x: x.dtype, state)
  assert int(final[0].iterations) == 4
  assert float(moved["w"][0, 0]) < 1.0


def test_init_works_on_abstract_params():
  transform = tf_bridge.port(legacy.Adam(0.01))
  abstract = {"w": jax.ShapeDtypeStruct((5,), jnp.float32)}
  state = jax.eval_shape(transform.init, abstract)
  assert state.slots["m"]["w"].shape == (5,)


def test_the_users_object_is_left_as_it_was():
  optimizer = legacy.Adam(0.01)
  tf_bridge.port(optimizer).init({"w": jnp.ones(3)})
  assert optimizer.variables() == [] and not optimizer._slots  # pylint: disable=protected-access


@pytest.mark.parametrize("dtype", [np.float16, np.float64])
def test_other_float_dtypes_compute_in_the_variables_dtype(dtype):
  """The class computes in the variable's dtype (float16 moments and all),
  and so does its port; float64 under JAX's x64."""
  with jax.enable_x64(dtype == np.float64):
    initial, gradients = testing.seeded_problem(20, 1, 1.0)
    initial = [value.astype(dtype) for value in initial]
    gradients = [[g.astype(dtype) for g in step] for step in gradients]
    native = testing.native_trajectory(legacy.Adam(0.01), initial, gradients)
    ported = testing.transform_trajectory(tf_bridge.port(legacy.Adam(0.01)),
                                          initial, gradients)
    tolerance = dict(rtol=1e-3, atol=1e-3) if dtype == np.float16 else dict(
        rtol=1e-12, atol=1e-12)
    testing.compare_trajectories(ported, native, initial=initial, **tolerance)


class PyFunction(legacy.SGD):

  def _resource_apply_dense(self, grad, var, apply_state=None):
    grad = tf.py_function(lambda g: g * 2, [grad], grad.dtype)
    return super()._resource_apply_dense(grad, var, apply_state)


class Noisy(tf.compat.v1.train.GradientDescentOptimizer):

  def _resource_apply_dense(self, grad, handle):
    return super()._resource_apply_dense(
        grad + tf.random.normal(tf.shape(grad)), handle)


class SeededNoise(legacy.SGD):

  def _resource_apply_dense(self, grad, var, apply_state=None):
    return super()._resource_apply_dense(
        grad + tf.random.uniform(tf.shape(grad), seed=1), var, apply_state)


class Counting(tf_keras.optimizers.SGD):

  def update_step(self, gradient, variable):
    self.calls = getattr(self, "calls", 0) + 1
    super().update_step(gradient * self.calls, variable)


class LogSumExp(legacy.SGD):

  def _resource_apply_dense(self, grad, var, apply_state=None):
    return super()._resource_apply_dense(
        tf.math.cumulative_logsumexp(grad), var, apply_state)


@pytest.mark.parametrize("optimizer, message", [
    (PyFunction(0.1),
     "tf_bridge.port cannot convert PyFunction._resource_apply_dense: it calls "
     "tf.py_function (op EagerPyFunc"),
    (Noisy(0.1),
     "tf_bridge.port cannot convert Noisy._resource_apply_dense: it draws "
     "from an "
     "unseeded random op (RandomStandardNormal"),
    (SeededNoise(0.1),
     "tf_bridge.port cannot convert SeededNoise._resource_apply_dense: it "
     "draws from a stateful random op (RandomUniform"),
    (Counting(0.1),
     "tf_bridge.port cannot convert Counting.update_step: it changes the "
     "Python attribute self.calls at every step ("),
    (LogSumExp(0.1),
     "tf_bridge.port cannot convert LogSumExp._resource_apply_dense: the "
     "TensorFlow op CumulativeLogsumexp"),
])
def test_what_cannot_be_converted_is_refused_naming_hook_and_op(optimizer,
                                                               message):
  """At `port` itself, before any params are seen."""
  with pytest.raises(tf_bridge.PortError) as refused:
    tf_bridge.port(optimizer)
  assert str(refused.value).startswith(message), str(refused.value)


def test_other_objects_are_refused_naming_the_apis():
  with pytest.raises(TypeError, match="takes an optimizer object of "
                     "OptimizerV2"):
    tf_bridge.port(optax.adam(0.1))


@pytest.fixture(scope="module")
def addons():
  return originals.run("port_addons.py")


@pytest.mark.parametrize("name", [
    "RectifiedAdam", "Yogi", "AdaBelief", "NovoGrad", "LAMB", "COCOB",
    "ConditionalGradient", "LazyAdam", "AdamW"])
def test_tf_addons_classes_through_port(addons, name):
  """Each TFA class's port equals TFA itself and the catalog's
  hand-written port; its mutant's port parts from TFA."""
  assert addons[name]["tfa"] is None, addons[name]["tfa"]
  assert addons[name]["catalog"] is None, addons[name]["catalog"]
  assert addons[name]["mutant"] is not None


ADOPTED = {
    "CenteredMomentumSGD": (port_classes.CenteredMomentumSGD,
                            dict(learning_rate=0.01, momentum=0.9),
                            "momentum"),
    "AdagradDecay": (port_classes.AdagradDecay,
                     dict(learning_rate=0.1, accumulator_decay_step=10),
                     "learning_rate"),
    "SignMomentum": (port_classes.SignMomentum,
                     dict(learning_rate=0.001, beta=0.9), "beta"),
}


@pytest.fixture(scope="module")
def adopted_runs(problem):
  """Each class natively, adopted, and adopted with one argument 1 % off,
  in one `tf.function` call."""
  initial, gradients = problem
  optimizers = []
  for cls, arguments, moved in ADOPTED.values():
    adopted = (port_classes.AdoptedCenteredMomentumSGD
               if cls is port_classes.CenteredMomentumSGD else
               tf_bridge.adopt(cls))
    optimizers += [cls(**arguments), adopted(**arguments),
                   adopted(**{**arguments, moved: arguments[moved] * 1.01})]
  runs = testing.native_trajectories(optimizers, initial, gradients)
  return {name: runs[3 * i:3 * i + 3] for i, name in enumerate(ADOPTED)}


@pytest.mark.parametrize("name", ADOPTED)
def test_adopted_class_follows_the_class_in_keras_3(adopted_runs, problem,
                                                    name):
  native, adopted, mutant = adopted_runs[name]
  testing.compare_trajectories(adopted, native, rtol=RTOL, atol=ATOL,
                               initial=problem[0], expected_name=name)
  with pytest.raises(AssertionError, match="part at step"):
    testing.compare_trajectories(mutant, native, rtol=RTOL, atol=ATOL,
                                 initial=problem[0], expected_name=name)


def test_adopted_class_is_a_keras_3_optimizer_of_the_users_module(tmp_path):
  """The class's arguments and config, its slots by its names, Keras's
  learning rate and attributes fed to the step; `fit`, `model.save` and
  `load_model` (registered under the user's module), in this process and
  in a fresh one that imports the module."""
  adopted = port_classes.AdoptedCenteredMomentumSGD
  assert adopted.__name__ == "CenteredMomentumSGD"
  assert adopted.__module__ == "port_classes"
  optimizer = adopted(0.01, 0.9)
  assert optimizer.get_config()["momentum"] == 0.9
  model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2,
                                                                  name="out")],
                           name="net")
  model.compile(optimizer=optimizer, loss="mse")
  x, y = np.ones((8, 3), np.float32), np.zeros((8, 2), np.float32)
  model.fit(x, y, epochs=2, verbose=0)
  assert [v.name for v in optimizer.variables] == [
      "iteration", "learning_rate", "net_out_kernel_momentum",
      "net_out_bias_momentum"]
  model.save(tmp_path / "model.keras")
  loaded = keras.models.load_model(tmp_path / "model.keras")
  assert type(loaded.optimizer) is adopted
  for saved, restored in zip(optimizer.variables, loaded.optimizer.variables):
    np.testing.assert_array_equal(saved.numpy(), restored.numpy())
  fresh = subprocess.run(
      [sys.executable, "-c", "import keras, port_classes, sys; "
       "optimizer = keras.models.load_model(sys.argv[1]).optimizer; "
       "print(type(optimizer).__module__, type(optimizer).__name__, "
       "optimizer.momentum)", str(tmp_path / "model.keras")],
      capture_output=True, text=True, check=False, timeout=300,
      cwd=pathlib.Path(__file__).parent,
      env={**os.environ, "KERAS_BACKEND": "tensorflow"})
  assert fresh.returncode == 0, fresh.stderr[-2000:]
  assert fresh.stdout.split() == ["port_classes", "CenteredMomentumSGD",
                                  "0.9"]


def test_parity_command_runs_a_users_class(tmp_path, monkeypatch):
  """`--native MODULE:CLASS`: the class, its port and its adoption, each
  within tolerance of the class."""
  monkeypatch.syspath_prepend(str(tmp_path))
  report = tmp_path / "report.json"
  assert parity.main(["--native", "port_classes:CenteredMomentumSGD",
                      "--steps", "20", "--json", str(report)]) == 0
  rows = json.loads(report.read_text())["implementations"]
  assert [row["name"] for row in rows] == [
      "port_classes:CenteredMomentumSGD (native)",
      "tf_bridge.port(port_classes:CenteredMomentumSGD)",
      "tf_bridge.adopt(port_classes:CenteredMomentumSGD)"]
  assert all(row["ok"] for row in rows)


@pytest.mark.parametrize("make", [
    lambda: port_classes.CenteredMomentumSGD(0.01, momentum=0.9, decay=0.01),
    lambda: port_classes.SignMomentum(0.001, beta=0.9),
    lambda: port_classes.KerasSignMomentum(0.001, beta=0.9),
], ids=["OptimizerV2", "tf_keras", "keras"])
def test_a_run_started_in_tensorflow_continues_in_jax(make):
  """`state_from_keras` of a user's class after 10 steps, continued by its
  port for 10 more, is the class's own 20-step trajectory."""
  initial, gradients = testing.seeded_problem(20, 2, 1.0)
  native = testing.native_trajectory(make(), initial, gradients)
  optimizer = make()
  make_variable = (keras.Variable if isinstance(
      optimizer, keras.optimizers.Optimizer) else tf.Variable)
  variables = [make_variable(value, name=f"w{i}")
               for i, value in enumerate(initial)]
  for step in gradients[:10]:
    testing.apply_gradients(optimizer, [tf.constant(g) for g in step],
                            variables)
  state = tf_bridge.state_from_keras(optimizer, variables)
  assert int(state.iterations) == 10
  transform = tf_bridge.port(optimizer)
  params = [jnp.asarray(v.numpy()) for v in variables]
  continued = []
  for step in gradients[10:]:
    updates, state = transform.update([jnp.asarray(g) for g in step], state,
                                      params)
    params = optax.apply_updates(params, updates)
    continued.append([np.asarray(p) for p in params])
  testing.compare_trajectories(continued, native[10:], rtol=RTOL, atol=ATOL,
                               initial=native[9])


PYPI_PACKAGES = ("adabelief_tf", "keras_radam", "tabulate", "colorama")


@pytest.fixture(scope="module")
def pypi_runs():
  """tests/scripts/port_pypi.py's results: the packages are in
  tests/originals.txt, with the originals."""
  found = [directory for directory in [originals.DIRECTORY, *map(
      pathlib.Path, filter(None, os.environ.get("PYTHONPATH", "").split(
          os.pathsep)))]
           if all((directory / package).is_dir()
                  for package in PYPI_PACKAGES)]
  assert found, (f"adabelief-tf and keras-rectified-adam are not installed "
                 f"in {originals.DIRECTORY}: run {originals.INSTALL}.")
  return originals.run("port_pypi.py")


@pytest.mark.parametrize("name", [
    "AdaBeliefOptimizer", "AdaBeliefOptimizer(warmup)", "RAdam"])
def test_old_pypi_packages_classes_through_port(pypi_runs, name):
  """adabelief-tf's and keras-rectified-adam's OptimizerV2 classes,
  imported under TF 2.21 as docs/writing-an-optimizer.md says: each port
  equals the class for 100 steps; a mutant's port parts from it."""
  assert pypi_runs[name]["port"] is None, pypi_runs[name]["port"]
  assert "part at step" in pypi_runs[name]["mutant"]


@pytest.mark.parametrize("name", ["AdaBeliefOptimizer(warmup)", "RAdam"])
def test_old_pypi_packages_classes_adopted_train_keras_3(pypi_runs, name):
  """`tf_bridge.adopt(cls)` trains a Keras 3 model as the class trains the
  same tf_keras model (the class's own `weight_decay`, scaled by its
  warmed-up rate, not Keras 3's); a mutant's parts from it."""
  assert pypi_runs[name]["adopted_is_keras_3"]
  assert pypi_runs[name]["fit"] is None, pypi_runs[name]["fit"]
  assert "part at step" in pypi_runs[name]["fit_mutant"]


@pytest.fixture(scope="module")
def adopted_settings():
  """tests/scripts/adopted_settings.py's results (a process of its own:
  two logical CPUs, a global dtype policy)."""
  result = subprocess.run(
      [sys.executable, str(pathlib.Path(__file__).parent / "scripts" /
                           "adopted_settings.py")],
      capture_output=True, text=True, timeout=900, check=False)
  assert result.returncode == 0, result.stderr[-4000:]
  return json.loads(result.stdout)


@pytest.mark.parametrize("setting", ["mirrored", "mixed_float16"])
def test_adopted_class_under_a_strategy_and_mixed_precision(adopted_settings,
                                                            setting):
  """`adopt(tf_keras.optimizers.legacy.Adam)` trains as Keras 3's Adam under
  MirroredStrategy over two replicas (the port traces the class outside the
  strategy) and under mixed_float16 (inside Keras's LossScaleOptimizer);
  a mutant (learning rate 1 % off) parts from it."""
  run = adopted_settings[setting]
  assert run["within"], run
  assert not run["mutant_within"], run
  assert run["movement"] > 1e-2, run
  expected = {"mirrored": ("Adam", 2),
              "mixed_float16": ("LossScaleOptimizer", 1)}[setting]
  assert (run["adopted_optimizer"], run["replicas"]) == expected, run
  assert run["optimizer"] == expected[0], run
