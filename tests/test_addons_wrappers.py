"""TF Addons' wrappers: MovingAverage, SWA and Lookahead, as ports (against
numpy versions of TFA's formulas) and as bridged classes of both generations
(against the ports; config round trip, `assign_average_vars`, `model.fit`
and save/load)."""

import re
import warnings

import jax.numpy as jnp
import jaxopt_port
import keras
import numpy as np
import optax
import pytest
import tensorflow as tf
import tf_keras
from jaxopt_port import addons

import tf_bridge
import tf_bridge.addons
import tf_bridge.legacy.addons
from tf_bridge import testing

STEPS = 40
LEARNING_RATE, MOMENTUM = 0.05, 0.9


def sgd_trajectory(initial, gradients):
  """The inner optimizer, legacy SGD with momentum, in float64."""
  params = [p.astype(np.float64) for p in initial]
  moments = [np.zeros_like(p) for p in params]
  trajectory = []
  for grads in gradients:
    for i, g in enumerate(grads):
      moments[i] = MOMENTUM * moments[i] - LEARNING_RATE * g
      params[i] = params[i] + moments[i]
    trajectory.append([p.copy() for p in params])
  return trajectory


def moving_average_numpy(initial, trajectory, decay, start_step, dynamic):
  # TFA's slot starts at the variable's value.
  average = [np.array(p, np.float64) for p in initial]
  averages = []
  for k, params in enumerate(trajectory):  # k: steps before this one.
    rate = 0.0 if k < start_step else (
        min(decay, (1 + k - start_step) / (10 + k - start_step)) if dynamic
        else decay)
    average = [a - (1 - rate) * (a - p) for a, p in zip(average, params)]
    averages.append(average)
  return averages


def swa_numpy(initial, trajectory, start, period):
  average = [np.array(p, np.float64) for p in initial]
  averages = []
  for k, params in enumerate(trajectory):
    snapshots = max(0, (k - start) // period)
    if k >= start and k == start + snapshots * period:
      average = [(a * snapshots + p) / (snapshots + 1)
                 for a, p in zip(average, params)]
    averages.append(average)
  return averages


def lookahead_numpy(initial, gradients, sync_period, slow_step_size):
  params = [p.astype(np.float64) for p in initial]
  slow = [p.copy() for p in params]
  moments = [np.zeros_like(p) for p in params]
  trajectory = []
  for t, grads in enumerate(gradients, 1):
    for i, g in enumerate(grads):
      moments[i] = MOMENTUM * moments[i] - LEARNING_RATE * g
      params[i] = params[i] + moments[i]
      if t % sync_period == 0:
        slow[i] = slow[i] + slow_step_size * (params[i] - slow[i])
        params[i] = slow[i].copy()
    trajectory.append([p.copy() for p in params])
  return trajectory


def inner():
  return jaxopt_port.legacy.sgd(LEARNING_RATE, momentum=MOMENTUM)


def averages_of(transform, initial, gradients):
  """The port's params and its averaged params after each step."""
  import jax  # pylint: disable=import-outside-toplevel
  import optax  # pylint: disable=import-outside-toplevel
  names = [f"variable_{i}" for i in range(len(initial))]
  params = dict(zip(names, initial))
  state = transform.init(params)
  step = jax.jit(transform.update)
  trajectory, averages = [], []
  for grads in gradients:
    updates, state = step(dict(zip(names, grads)), state, params)
    params = optax.apply_updates(params, updates)
    trajectory.append([np.asarray(params[n]) for n in names])
    averages.append([np.asarray(addons.average_params(state)[n])
                     for n in names])
  return trajectory, averages


@pytest.mark.parametrize("kwargs", [
    {"average_decay": 0.9}, {"average_decay": 0.99, "dynamic_decay": True},
    {"average_decay": 0.8, "start_step": 5}])
def test_moving_average_equals_formula(kwargs):
  initial, gradients = testing.seeded_problem(STEPS, 0, 1.0)
  trajectory, averages = averages_of(addons.moving_average(inner(), **kwargs),
                                     initial, gradients)
  expected = sgd_trajectory(initial, gradients)
  testing.compare_trajectories(trajectory, expected, rtol=1e-5, atol=1e-6)
  testing.compare_trajectories(
      averages, moving_average_numpy(
          initial, expected, kwargs["average_decay"],
          kwargs.get("start_step", 0), kwargs.get("dynamic_decay", False)),
      rtol=1e-5, atol=1e-6)


def test_moving_average_golden_values():
  """TFA's own test (moving_average_test.py): SGD(2.0) with an average decay
  of 0.5, two steps; the averages start at the variables' values."""
  transform = addons.moving_average(jaxopt_port.sgd(2.0), average_decay=0.5)
  params = {"var0": jnp.array([1.0, 2.0]), "var1": jnp.array([3.0, 4.0])}
  grads = {"var0": jnp.array([0.1, 0.1]), "var1": jnp.array([0.01, 0.01])}
  state = transform.init(params)
  for _ in range(2):
    updates, state = transform.update(grads, state, params)
    params = optax.apply_updates(params, updates)
  np.testing.assert_allclose(params["var0"], [0.6, 1.6], rtol=1e-6)
  np.testing.assert_allclose(params["var1"], [2.96, 3.96], rtol=1e-6)
  average = addons.average_params(state)
  np.testing.assert_allclose(average["var0"], [0.75, 1.75], rtol=1e-6)
  np.testing.assert_allclose(average["var1"], [2.975, 3.975], rtol=1e-6)


@pytest.mark.parametrize("start,period", [(0, 10), (7, 3), (0, 1)])
def test_swa_equals_formula(start, period):
  initial, gradients = testing.seeded_problem(STEPS, 0, 1.0)
  _, averages = averages_of(addons.swa(inner(), start, period), initial,
                            gradients)
  testing.compare_trajectories(
      averages, swa_numpy(initial, sgd_trajectory(initial, gradients), start,
                          period), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("sync_period,slow_step_size", [(6, 0.5), (3, 0.8)])
def test_lookahead_equals_formula(sync_period, slow_step_size):
  initial, gradients = testing.seeded_problem(STEPS, 0, 1.0)
  actual = testing.transform_trajectory(
      addons.lookahead(inner(), sync_period, slow_step_size), initial,
      gradients)
  testing.compare_trajectories(
      actual, lookahead_numpy(initial, gradients, sync_period,
                              slow_step_size), rtol=1e-5, atol=1e-6)
  with pytest.raises(AssertionError, match="part at step"):  # Lookahead changes the trajectory.
    testing.compare_trajectories(actual, sgd_trajectory(initial, gradients),
                                 rtol=1e-5, atol=1e-6)


GENERATIONS = {"keras3": (tf_bridge.addons, tf_bridge.SGD, keras.Variable),
               "legacy": (tf_bridge.legacy.addons, tf_bridge.legacy.SGD,
                          tf.Variable)}
WRAPPERS = [("Lookahead", {"sync_period": 4}, addons.lookahead),
            ("MovingAverage", {"average_decay": 0.9}, addons.moving_average),
            ("SWA", {"start_averaging": 3, "average_period": 4}, addons.swa)]


@pytest.mark.parametrize("generation", GENERATIONS)
@pytest.mark.parametrize("name,kwargs,port", WRAPPERS,
                         ids=[w[0] for w in WRAPPERS])
def test_bridged_wrapper_equals_port(generation, name, kwargs, port):
  module, sgd, variable_class = GENERATIONS[generation]
  wrapper_class = getattr(module, name)
  optimizer = wrapper_class(sgd(LEARNING_RATE, momentum=MOMENTUM), **kwargs)
  initial, gradients = testing.seeded_problem(STEPS, 0, 1.0)
  variables = [variable_class(v, name=f"variable_{i}")
               for i, v in enumerate(initial)]
  bridged = []
  for grads in gradients:
    testing.apply_gradients(optimizer, [tf.constant(g) for g in grads],
                            variables)
    bridged.append([np.array(v.numpy()) for v in variables])
  expected, averages = (averages_of if name != "Lookahead" else
                        lambda t, i, g: (testing.transform_trajectory(t, i, g),
                                         None))(
                                             port(inner(), **kwargs), initial,
                                             gradients)
  testing.compare_trajectories(bridged, expected, rtol=1e-5, atol=1e-6,
                               actual_name="bridge", expected_name="port")
  clone = type(optimizer).from_config(optimizer.get_config())
  assert type(clone._arguments["optimizer"]) is sgd  # pylint: disable=protected-access
  assert clone.get_config() == optimizer.get_config()
  if averages is not None:
    optimizer.assign_average_vars(variables)
    for variable, average in zip(variables, averages[-1]):
      np.testing.assert_allclose(variable.numpy(), average, rtol=1e-5,
                                 atol=1e-6)


@pytest.mark.parametrize("generation", GENERATIONS)
def test_assign_average_vars_skips_unknown_variables_with_tfas_warning(
    generation):
  """As TFA: a variable without an average is skipped with a warning; the
  others take theirs."""
  module, sgd, _ = GENERATIONS[generation]
  make = tf.Variable if generation == "legacy" else keras.Variable
  optimizer = module.MovingAverage(sgd(0.5), average_decay=0.5)
  known = make(np.ones(2, np.float32), name="known")
  other = make(np.full(2, 7.0, np.float32), name="other")
  testing.apply_gradients(optimizer, [tf.ones(2)], [known])
  with pytest.warns(UserWarning, match=r"Unable to assign average slot to "
                    r"<.*other.* : MovingAverage keeps no average of it"):
    optimizer.assign_average_vars([other, known])
  # The average starts at the variable (1) and moves half way to 0.5.
  np.testing.assert_allclose(known.numpy(), [0.75, 0.75], rtol=1e-6)
  np.testing.assert_array_equal(other.numpy(), [7.0, 7.0])


@pytest.mark.filterwarnings("ignore:You are saving your model as an HDF5")
@pytest.mark.parametrize("generation", GENERATIONS)
def test_wrapper_fits_saves_and_loads(generation, tmp_path):
  module, sgd, _ = GENERATIONS[generation]
  legacy = generation == "legacy"
  layers, models = (tf_keras.layers, tf_keras) if legacy else (keras.layers,
                                                               keras)
  rng = np.random.default_rng(0)
  inputs = rng.standard_normal((64, 4)).astype(np.float32)
  targets = rng.standard_normal((64, 1)).astype(np.float32)
  model = models.Sequential([layers.Input((4,)), layers.Dense(3),
                             layers.Dense(1)])
  model.compile(optimizer=module.Lookahead(sgd(0.05, momentum=0.5),
                                           sync_period=3), loss="mse")
  model.fit(inputs, targets, batch_size=16, epochs=1, shuffle=False,
            verbose=0)
  path = str(tmp_path / ("model.h5" if legacy else "model.keras"))
  model.save(path)
  loaded = (tf_keras.models.load_model(path) if legacy
            else keras.models.load_model(path))
  assert type(loaded.optimizer) is module.Lookahead
  for m in (model, loaded):
    m.fit(inputs, targets, batch_size=16, epochs=1, shuffle=False, verbose=0)
  for a, b in zip(model.get_weights(), loaded.get_weights()):
    np.testing.assert_array_equal(a, b)


def test_inner_optimizer_config_resolves_only_bridged_classes():
  config = tf_bridge.addons.Lookahead(tf_bridge.SGD(0.1)).get_config()
  assert config["optimizer"]["class_name"] == "tf_bridge>SGD"
  config["optimizer"]["class_name"] = "builtins>eval"
  with pytest.raises(ValueError, match=re.escape(
      "`optimizer` holds a serialized object named 'builtins>eval': only a "
      "registered tf_bridge optimizer or a learning rate schedule may "
      "appear there (configs are plain data).")):
    tf_bridge.addons.Lookahead.from_config(config)


@pytest.mark.parametrize("legacy", [True, False], ids=["legacy", "keras3"])
def test_wrappers_take_an_optimizer_name_or_a_native_optimizer(legacy):
  """As TF Addons' wrappers: `Lookahead("adam")`, `Lookahead(native_sgd)`
  run what the bridged inner optimizer runs; None is a TypeError."""
  bridges = tf_bridge.legacy if legacy else tf_bridge
  wrappers = tf_bridge.legacy.addons if legacy else tf_bridge.addons
  natives = tf_keras.optimizers.legacy if legacy else keras.optimizers
  make_variable = tf.Variable if legacy else keras.Variable

  def run(optimizer):
    variable = make_variable(np.ones(3, "float32"))
    for _ in range(3):
      optimizer.apply_gradients([(tf.constant([1.0, -2.0, 0.5]), variable)])
    return variable.numpy()

  np.testing.assert_array_equal(run(wrappers.Lookahead("adam")),
                                run(wrappers.Lookahead(bridges.Adam())))
  by_native = run(wrappers.Lookahead(natives.SGD(0.1, momentum=0.5),
                                     sync_period=2))
  np.testing.assert_array_equal(
      by_native, run(wrappers.Lookahead(bridges.SGD(0.1, momentum=0.5),
                                        sync_period=2)))
  assert not np.allclose(by_native, run(wrappers.Lookahead(
      bridges.SGD(0.1), sync_period=2)))
  for wrapper in (wrappers.Lookahead, wrappers.MovingAverage, wrappers.SWA):
    with pytest.raises(TypeError, match="optimizer is not an object of "
                       "tf.keras.optimizers.Optimizer"):
      wrapper(None)


def test_cocob_takes_alpha_first_as_tfa():
  """TFA's `COCOB(alpha, use_locking, name)`: `use_locking` taken and
  without effect, as in TFA."""
  cocob = tf_bridge.legacy.addons.COCOB
  assert cocob(20).get_config()["alpha"] == 20
  optimizer = cocob(20, True, "mine")
  assert (optimizer._name, optimizer.get_config()["alpha"]) == ("mine", 20)  # pylint: disable=protected-access

  def run(optimizer):
    variable = tf.Variable(np.ones(3, "float32"))
    for _ in range(3):
      optimizer.apply_gradients([(tf.constant([1.0, -2.0, 0.5]), variable)])
    return variable.numpy()

  np.testing.assert_array_equal(run(cocob(20)), run(cocob(alpha=20)))
  np.testing.assert_array_equal(run(cocob(20, True)), run(cocob(20, False)))
  assert not np.allclose(run(cocob(20)), run(cocob()))


def _two_layer_model(layers):
  model = tf_keras.Sequential([tf_keras.Input((4,)), layers.Dense(3),
                               layers.Dense(2)])
  model.set_weights([np.linspace(-1, 1, w.size).reshape(w.shape)
                     .astype(np.float32) for w in model.get_weights()])
  return model


def test_multi_optimizer_routes_each_layer_to_its_optimizer(tmp_path):
  """TFA's `MultiOptimizer` in `model.fit`: the first layer follows bridged
  Adam, the second bridged SGD with momentum, each equal to its native
  tf_keras optimizer applied to that layer alone (a GradientTape loop);
  the config round-trips and a checkpoint restores the inner optimizers'
  slots."""
  rng = np.random.default_rng(0)
  x = rng.standard_normal((64, 4)).astype(np.float32)
  y = rng.standard_normal((64, 2)).astype(np.float32)
  model = _two_layer_model(tf_keras.layers)
  multi = tf_bridge.legacy.addons.MultiOptimizer([
      (tf_bridge.legacy.Adam(0.01), model.layers[0]),
      (tf_bridge.legacy.SGD(0.05, momentum=0.9), [model.layers[1]])])
  model.compile(optimizer=multi, loss="mse")
  model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)

  reference = _two_layer_model(tf_keras.layers)
  natives = [(tf_keras.optimizers.legacy.Adam(0.01), reference.layers[0]),
             (tf_keras.optimizers.legacy.SGD(0.05, momentum=0.9),
              reference.layers[1])]
  for _ in range(2):
    for start in range(0, 64, 16):
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(
            reference(x[start:start + 16]) - y[start:start + 16]))
      grads = tape.gradient(loss, reference.trainable_weights)
      for optimizer, layer in natives:
        optimizer.apply_gradients([
            (g, v) for g, v in zip(grads, reference.trainable_weights)
            if any(v is w for w in layer.trainable_weights)])
  initial = _two_layer_model(tf_keras.layers).get_weights()
  for got, want, start in zip(model.get_weights(), reference.get_weights(),
                              initial):
    assert np.max(np.abs(want - start)) > 1e-2
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
  assert int(multi.iterations) == 8
  assert repr(multi) == "Multi Optimizer with 2 optimizer layer pairs"

  config = multi.get_config()
  rebuilt = tf_bridge.legacy.addons.MultiOptimizer.from_config(config)
  assert [type(s["optimizer"]) for s in rebuilt.optimizer_specs] == [
      tf_bridge.legacy.Adam, tf_bridge.legacy.SGD]
  assert rebuilt.optimizer_specs[1]["weights"] == [
      v.name for v in model.layers[1].weights]

  adam = multi.optimizer_specs[0]["optimizer"]
  kernel = model.layers[0].kernel
  saved = adam.get_slot(kernel, "m").numpy()
  path = tf.train.Checkpoint(model=model, optimizer=multi).save(
      str(tmp_path / "multi"))
  adam.get_slot(kernel, "m").assign(np.zeros_like(saved))
  tf.train.Checkpoint(model=model, optimizer=multi).restore(
      path).assert_existing_objects_matched()
  np.testing.assert_array_equal(adam.get_slot(kernel, "m").numpy(), saved)
  with pytest.raises(RuntimeError, match="Must specify one of"):
    tf_bridge.legacy.addons.MultiOptimizer()


def test_keras3_multi_optimizer_routes_each_layer_to_its_optimizer(tmp_path):
  """`tf_bridge.addons.MultiOptimizer` in Keras 3's `model.fit`: each layer
  equal to its native Keras 3 optimizer applied to it alone; `.keras` files
  keep the inner optimizers' variables."""
  rng = np.random.default_rng(0)
  x = rng.standard_normal((64, 4)).astype(np.float32)
  y = rng.standard_normal((64, 2)).astype(np.float32)

  def make():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3),
                              keras.layers.Dense(2)])
    model.set_weights([np.linspace(-1, 1, w.size).reshape(w.shape)
                       .astype(np.float32) for w in model.get_weights()])
    return model

  model = make()
  multi = tf_bridge.addons.MultiOptimizer([
      (tf_bridge.Adam(0.01), model.layers[0]),
      (tf_bridge.SGD(0.05, momentum=0.9), [model.layers[1]])])
  model.compile(optimizer=multi, loss="mse")
  model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)

  reference = make()
  natives = [(keras.optimizers.Adam(0.01), reference.layers[0]),
             (keras.optimizers.SGD(0.05, momentum=0.9), reference.layers[1])]
  for _ in range(2):
    for start in range(0, 64, 16):
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(
            reference(x[start:start + 16]) - y[start:start + 16]))
      grads = tape.gradient(loss, reference.trainable_weights)
      for optimizer, layer in natives:
        optimizer.apply_gradients([
            (g, v) for g, v in zip(grads, reference.trainable_weights)
            if any(v is w for w in layer.trainable_weights)])
  for got, want, start in zip(model.get_weights(), reference.get_weights(),
                              make().get_weights()):
    assert np.max(np.abs(want - start)) > 1e-2
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
  assert int(multi.iterations) == 8

  path = str(tmp_path / "multi.keras")
  model.save(path)
  loaded = keras.models.load_model(path)
  assert type(loaded.optimizer) is tf_bridge.addons.MultiOptimizer
  for spec, restored in zip(multi.optimizer_specs,
                            loaded.optimizer.optimizer_specs):
    assert type(restored["optimizer"]) is type(spec["optimizer"])
    assert restored["weights"] == spec["weights"]
    saved = spec["optimizer"].variables
    assert len(saved) > 2  # Its slots, not only its counters.
    for want, got in zip(saved, restored["optimizer"].variables):
      np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


# Reading the inner optimizer's learning rate stays clear of numpy 2's
# warning for Keras's and TensorFlow's variables (no `copy` in __array__).
@pytest.mark.filterwarnings("error:__array__ implementation:DeprecationWarning")
@pytest.mark.parametrize("legacy", [True, False], ids=["legacy", "keras3"])
def test_moving_average_shadow_copy_and_swap_weights(legacy):
  """TFA MovingAverage's `shadow_copy` (averages created at zero before any
  step), `has_shadow_copy` and `swap_weights` (under a strategy's scope:
  TFA's a = a + b; b = a - b; a = a - b on each device, bit for bit in
  float32; twice restores both; refused elsewhere with TFA's error)."""
  module = tf_bridge.legacy.addons if legacy else tf_bridge.addons
  strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
  with strategy.scope():
    inner = (tf_bridge.legacy.SGD if legacy else tf_bridge.SGD)(0.1)
    optimizer = module.MovingAverage(inner, average_decay=0.5)
    variable = tf.Variable([1.0, -2.0, 3.0])
    assert not optimizer.has_shadow_copy
    optimizer.shadow_copy([variable])
    assert optimizer.has_shadow_copy
  average = optimizer._fused.averages(  # pylint: disable=protected-access
      optimizer._built_variables(), optimizer._state_variables)[id(variable)]  # pylint: disable=protected-access
  np.testing.assert_array_equal(average.numpy(), [0.0, 0.0, 0.0])
  @tf.function
  def train_step():
    optimizer.apply_gradients([(tf.constant([1.0, 0.5, -1.0]), variable)])

  for _ in range(3):
    strategy.run(train_step)
  weights, averages = variable.numpy(), average.numpy()
  assert not np.allclose(weights, averages, rtol=1e-3)
  swapped_average = (averages + weights).astype(np.float32)
  swapped_weight = (swapped_average - weights).astype(np.float32)
  swapped_average = (swapped_average - swapped_weight).astype(np.float32)
  with strategy.scope():
    optimizer.swap_weights()
  np.testing.assert_array_equal(variable.numpy(), swapped_weight)
  np.testing.assert_array_equal(average.numpy(), swapped_average)
  np.testing.assert_allclose(variable.numpy(), averages, rtol=1e-6)
  with strategy.scope():
    optimizer.swap_weights()
  np.testing.assert_allclose(variable.numpy(), weights, rtol=1e-6)
  with pytest.raises(ValueError, match="Swapping weights must occur under a "
                     "tf.distribute.Strategy"):
    optimizer.swap_weights()


def test_legacy_wrappers_variable_names():
  """As TFA's (tests/test_tfa_originals.py runs TFA itself): the wrapper's
  `variables()` are the shared count `iter` and its own slots; `weights`
  adds the inner optimizer's slots, which the inner optimizer owns."""
  variables = [tf.Variable(np.ones((3, 2), np.float32), name="kernel"),
               tf.Variable(np.ones(2, np.float32), name="bias")]
  names = {}
  for name, optimizer in (
      ("Lookahead", tf_bridge.legacy.addons.Lookahead(
          tf_bridge.legacy.Adam())),
      ("MovingAverage", tf_bridge.legacy.addons.MovingAverage(
          tf_bridge.legacy.SGD(momentum=0.9)))):
    optimizer._create_all_weights(variables)  # pylint: disable=protected-access
    names[name] = ([v.name for v in optimizer.variables()],
                   [v.name for v in optimizer.weights],
                   optimizer._optimizer.get_slot_names())  # pylint: disable=protected-access
  assert names == {
      "Lookahead": (["iter:0", "kernel/slow:0", "bias/slow:0"],
                    ["iter:0", "kernel/slow:0", "bias/slow:0", "kernel/m:0",
                     "bias/m:0", "kernel/v:0", "bias/v:0"], ["m", "v"]),
      "MovingAverage": (["iter:0", "kernel/average:0", "bias/average:0"],
                        ["iter:0", "kernel/average:0", "bias/average:0",
                         "kernel/momentum:0", "bias/momentum:0"],
                        ["momentum"])}


@pytest.mark.parametrize("generation", GENERATIONS)
def test_moving_average_num_updates_takes_tfas_types(generation):
  """TFA's `num_updates`: an int, or an integer tensor or variable (int32
  included), read at construction; the decay it caps then moves the
  averages (a do-nothing `num_updates` would not); other types get TFA's
  TypeError."""
  module, sgd, variable_class = GENERATIONS[generation]
  initial, gradients = testing.seeded_problem(6, 0, 1.0)

  def averages(**kwargs):
    optimizer = module.MovingAverage(sgd(LEARNING_RATE), average_decay=0.99,
                                     **kwargs)
    variables = [variable_class(v) for v in initial]
    for grads in gradients:
      testing.apply_gradients(optimizer, [tf.constant(g) for g in grads],
                              variables)
    optimizer.assign_average_vars(variables)
    return [np.array(v.numpy()) for v in variables]

  as_int = averages(num_updates=3)
  for given in (tf.constant(3), tf.constant(3, tf.int64),
                tf.Variable(3, dtype=tf.int32)):
    for got, want in zip(averages(num_updates=given), as_int):
      np.testing.assert_array_equal(got, want)
  uncapped = averages()
  assert max(float(np.max(np.abs(a - b)))
             for a, b in zip(as_int, uncapped)) > 1e-3
  for wrong, type_name in ((3.0, "float"), ("3", "str")):
    with pytest.raises(TypeError, match=re.escape(
        'type of argument "num_updates" must be one of (NoneType, int, '
        "tensorflow.python.ops.variables.Variable); got "
        f"{type_name} instead")):
      module.MovingAverage(sgd(LEARNING_RATE), num_updates=wrong)
  with pytest.raises(TypeError, match=re.escape(
      "type of argument \"num_updates\" must be int; got <dtype: "
      "'float32'> instead")):
    module.MovingAverage(sgd(LEARNING_RATE),
                         num_updates=tf.Variable(3.0))


@pytest.mark.parametrize("generation", GENERATIONS)
@pytest.mark.parametrize("name,kwargs,port", WRAPPERS,
                         ids=[w[0] for w in WRAPPERS])
def test_wrappers_keep_their_inner_optimizer_as_tfas_do(generation, name,
                                                        kwargs, port):
  """TFA's wrappers hold the inner optimizer as `_optimizer` (TFA's own
  `get_config` tests compare `_optimizer.get_config()` after a round trip)."""
  del port
  module, sgd, _ = GENERATIONS[generation]
  inner = sgd(LEARNING_RATE, momentum=MOMENTUM)
  optimizer = getattr(module, name)(inner, **kwargs)
  assert optimizer._optimizer is inner  # pylint: disable=protected-access
  clone = type(optimizer).from_config(optimizer.get_config())
  assert (clone._optimizer.get_config()  # pylint: disable=protected-access
          == inner.get_config())


@pytest.mark.parametrize("legacy", [False, True], ids=["keras3", "legacy"])
def test_lamb_weight_decay_rate_warns_as_tfa(legacy):
  """TFA's LAMB takes its old `weight_decay_rate` with a DeprecationWarning
  in its words, as the decay it names; `weight_decay` warns nothing."""
  module = tf_bridge.legacy.addons if legacy else tf_bridge.addons
  with pytest.warns(DeprecationWarning, match=re.escape(
      "weight_decay_rate has been renamed to weight_decay,and will be "
      "deprecated in Addons 0.18.")):
    old = module.LAMB(weight_decay_rate=0.01)
  assert old.get_config()["weight_decay"] == 0.01
  with warnings.catch_warnings():
    warnings.simplefilter("error", DeprecationWarning)
    module.LAMB(weight_decay=0.01)
