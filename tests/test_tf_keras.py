"""tf_keras's own optimizer generation (`tf_keras.optimizers.Adam` and the
rest, on `tf_keras.optimizers.Optimizer`) bridged as `tf_bridge.tf_keras`:
each program runs on the native class and on the bridged one, compared.
(Trajectories against native and the port, eager and in a `tf.function`,
sparse and dense, are tests/test_bridge_parity.py's and
tests/test_bridge_sparse.py's; the ports' grids tests/test_native_parity.py's.)
"""

import inspect

import jaxopt_port
import numpy as np
import pytest
import tensorflow as tf
import tf_keras

import tf_bridge.tf_keras
from tf_bridge import catalog, testing

DECLARATIONS = [d for d in catalog.CATALOG
                if d.generation == catalog.TF_KERAS]
IDS = [d.class_name for d in DECLARATIONS]
X = np.random.RandomState(0).rand(32, 4).astype("float32")
Y = np.random.RandomState(1).rand(32, 1).astype("float32")
RTOL, ATOL = 1e-5, 1e-6


def _bridged_class(declaration):
  return getattr(tf_bridge.tf_keras, declaration.class_name)


def _every_slot(declaration):
  """Arguments with which the class makes every variable it can."""
  return {**declaration.every_slot_arguments, "use_ema": True}


def _variables():
  return [tf.Variable(np.ones((3, 2), np.float32), name="dense/kernel"),
          tf.Variable(np.ones((2,), np.float32), name="dense/bias"),
          tf.Variable(np.float32(1.0), name="scale")]


def _layout(optimizer, variables):
  optimizer.build(variables)
  return [(v.name, tuple(v.shape), v.dtype.name) for v in optimizer.variables]


@pytest.mark.parametrize("declaration", DECLARATIONS, ids=IDS)
def test_variables_and_attributes_are_natives(declaration):
  """The same variables as native (names, shapes, dtypes, order: what
  `.keras` files and `set_weights` go by) with every slot made (amsgrad,
  momentum, centered, EMA), and the same attributes holding them (what
  `tf.train.Checkpoint` goes by): Adafactor's placeholders for vectors
  and Nadam's momentum product are not among the variables, as native's."""
  native = declaration.make_native(**_every_slot(declaration))
  bridged = _bridged_class(declaration)(**_every_slot(declaration))
  assert _layout(bridged, _variables()) == _layout(native, _variables())
  # (Shapes and dtypes: native names Adafactor's column placeholders `r/`.)
  for slot, attribute in declaration.native_attributes.items():
    held, mine = getattr(native, attribute), getattr(bridged, attribute)
    if isinstance(held, tf.Variable):
      held, mine = [held], [mine]
    assert [(v.shape, v.dtype) for v in mine] == [
        (v.shape, v.dtype) for v in held], slot


@pytest.mark.parametrize("declaration", DECLARATIONS, ids=IDS)
def test_constructor_and_config_are_natives(declaration):
  """Native's constructor signature (positional order, defaults; plus
  `skip_nonfinite`), its config (keys and values), and each class builds
  from the other's config."""
  native_class = declaration.native_class()
  bridged_class = _bridged_class(declaration)
  native_parameters = [
      (p.name, p.kind, p.default)
      for p in inspect.signature(native_class).parameters.values()
      if p.kind != p.VAR_KEYWORD]
  positional = [p for p in native_parameters
                if p[1] == inspect.Parameter.POSITIONAL_OR_KEYWORD]
  bridged_parameters = [
      (p.name, p.kind, p.default)
      for p in inspect.signature(bridged_class).parameters.values()]
  assert bridged_parameters[:len(positional)] == positional
  assert {p[0]: p[2] for p in bridged_parameters} == {
      **{p[0]: p[2] for p in native_parameters}, "skip_nonfinite": False}

  arguments = {**declaration.every_slot_arguments, "learning_rate": 0.02,
               "clipvalue": 0.5}
  native_config = native_class(**arguments).get_config()
  bridged_config = bridged_class(**arguments).get_config()
  assert bridged_config == native_config
  assert bridged_class.from_config(native_config).get_config() == (
      bridged_config)
  assert native_class.from_config(bridged_config).get_config() == (
      native_config)


@pytest.mark.parametrize("declaration", DECLARATIONS, ids=IDS)
def test_bad_arguments_raise_natives_error(declaration):
  """An unknown keyword (TypeError), an OptimizerV2 argument (ValueError),
  both clipping norms (ValueError): native's types and words."""
  for arguments in ({"momentum_decay": 0.1}, {"decay": 0.1},
                    {"clipnorm": 1.0, "global_clipnorm": 1.0}):
    raised = []
    for make in (declaration.make_native, _bridged_class(declaration)):
      with pytest.raises(Exception) as error:
        make(**arguments)
      raised.append((type(error.value), str(error.value)))
    assert raised[1] == raised[0], arguments


@pytest.mark.parametrize("arguments", [
    {"clipnorm": 1.0, "global_clipnorm": 1.0},
    {"use_ema": True, "ema_momentum": 1.5},
    {"use_ema": True, "ema_overwrite_frequency": 2.0},
    {"use_ema": True, "ema_overwrite_frequency": -1}], ids=str)
def test_port_base_arguments_raise_natives_error(arguments):
  """tf_keras's checks of its base arguments, in its words, in JAX too; what
  it takes (an `ema_overwrite_frequency` of 0 or True, `clipvalue` with a
  norm) the port takes."""
  raised = []
  for make in (tf_keras.optimizers.Adam, jaxopt_port.tf_keras.adam):
    with pytest.raises(ValueError) as error:
      make(**arguments)
    raised.append(str(error.value))
  assert raised[1] == raised[0]
  for accepted in ({"use_ema": True, "ema_overwrite_frequency": 0},
                   {"use_ema": True, "ema_overwrite_frequency": True},
                   {"clipvalue": 0.5, "clipnorm": 1.0}):
    tf_keras.optimizers.Adam(**accepted)
    jaxopt_port.tf_keras.adam(**accepted)


def _model(optimizer):
  tf_keras.utils.set_random_seed(0)
  model = tf_keras.Sequential([tf_keras.Input((4,)),
                               tf_keras.layers.Dense(3),
                               tf_keras.layers.Dense(1)])
  model.compile(optimizer, "mse")
  return model


def _fit(model, epochs=1):
  model.fit(X, Y, batch_size=8, epochs=epochs, verbose=0, shuffle=False)
  return model.get_weights()


def _assert_same(got, want):
  assert len(got) == len(want)
  for g, w in zip(got, want):
    np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL)


# Nadam's traced step has native's defect (below): its fits part. (Adadelta
# moves at a rate of 1.)
FIT_CASES = [(d, {**d.every_slot_arguments, "learning_rate": 1.0
                  if d.class_name == "Adadelta" else 0.05})
             for d in DECLARATIONS if d.native_backend == "tensorflow"] + [
                 (catalog.lookup("tf_keras.adam"),
                  {"weight_decay": 0.1, "use_ema": True,
                   "ema_overwrite_frequency": 3, "clipnorm": 0.5,
                   "learning_rate": 0.05})]


@pytest.mark.parametrize("declaration, arguments", FIT_CASES,
                         ids=[f"{d.class_name}-{len(a)}" for d, a in
                              FIT_CASES])
def test_fit_and_files_move_between_native_and_bridged(declaration,
                                                       arguments, tmp_path):
  """`model.fit` trains to native's weights; a `.keras` file written by
  either class loads as that class with its state, and moves into a model
  compiled with the other class (`load_weights`); a `tf.train.Checkpoint`
  written by either restores into the other; each continues on the
  writer's trajectory."""
  classes = (declaration.native_class(), _bridged_class(declaration))
  models = [_model(c(**arguments)) for c in classes]
  _assert_same(_fit(models[1]), _fit(models[0]))
  expected = None
  for (writer, reader), model in zip((classes, classes[::-1]), models):
    path = str(tmp_path / f"{writer.__module__}.keras")
    model.save(path)
    loaded = tf_keras.models.load_model(path)
    assert type(loaded.optimizer) is writer
    continued = _fit(loaded)
    expected = continued if expected is None else expected
    _assert_same(continued, expected)
    other = _model(reader(**arguments))
    other.optimizer.build(other.trainable_variables)
    other.load_weights(path)
    _assert_same(_fit(other), expected)

    prefix = str(tmp_path / f"{writer.__module__}-checkpoint")
    written = tf.train.Checkpoint(model=model).write(prefix)
    other = _model(reader(**arguments))
    other.optimizer.build(other.trainable_variables)
    tf.train.Checkpoint(model=other).read(written).assert_consumed()
    _assert_same(_fit(other), expected)
  # A fresh optimizer state ends elsewhere: the state counted.
  fresh = _model(classes[0](**arguments))
  fresh.set_weights(models[0].get_weights())
  assert max(np.max(np.abs(a - b))
             for a, b in zip(_fit(fresh), expected)) > 1e-4


def test_nadam_follows_natives_eager_steps():
  """tf_keras's Nadam counts its momentum product in Python: traced into a
  `tf.function` (as `fit` runs it) it multiplies the product once per
  variable and step, and leaves its eager trajectory. The bridged Nadam
  takes the eager one, Keras 3's, in a `tf.function` too (README, Known
  differences)."""
  initial, gradients = testing.seeded_problem(30, seed=0, grad_scale=1.0)
  eager = testing.native_trajectory(tf_keras.optimizers.Nadam(), initial,
                                    gradients, backend="eager")
  traced = testing.native_trajectory(tf_keras.optimizers.Nadam(), initial,
                                     gradients)
  bridged = testing.native_trajectory(tf_bridge.tf_keras.Nadam(), initial,
                                      gradients)
  testing.compare_trajectories(bridged, eager, rtol=RTOL, atol=ATOL)
  with pytest.raises(AssertionError, match="part at step"):
    testing.compare_trajectories(traced, eager, rtol=RTOL, atol=ATOL)


def test_adaptive_epsilon_is_natives():
  """tf_keras Adam's `adaptive_epsilon` at an epsilon that binds: the port
  and the bridged class equal native; without it (a port ignoring the
  argument) they part."""
  initial, gradients = testing.seeded_problem(100, seed=0, grad_scale=1.0)
  arguments = {"adaptive_epsilon": True, "epsilon": 1.0,
               "learning_rate": 0.1}
  native = testing.native_trajectory(tf_keras.optimizers.Adam(**arguments),
                                     initial, gradients)
  port = jaxopt_port.tf_keras.adam(**arguments)
  testing.compare_trajectories(
      testing.transform_trajectory(port, initial, gradients), native,
      rtol=RTOL, atol=ATOL)
  testing.compare_trajectories(testing.native_trajectory(
      tf_bridge.tf_keras.Adam(**arguments), initial, gradients), native,
                               rtol=RTOL, atol=ATOL)
  mutant = jaxopt_port.tf_keras.adam(**{**arguments,
                                        "adaptive_epsilon": False})
  with pytest.raises(AssertionError, match="part at step"):
    testing.compare_trajectories(
        testing.transform_trajectory(mutant, initial, gradients), native,
        rtol=RTOL, atol=ATOL)


def test_hyperparameters_are_attributes_that_steer_the_next_step():
  """As native's: `optimizer.beta_1` reads the argument, and setting it
  (before the step is traced) changes the next step as native's does."""
  initial, gradients = testing.seeded_problem(20, seed=0, grad_scale=1.0)
  trajectories = []
  for make in (tf_keras.optimizers.Adam, tf_bridge.tf_keras.Adam):
    optimizer = make(learning_rate=0.01)
    assert optimizer.beta_1 == 0.9
    optimizer.beta_1 = 0.5
    trajectories.append(testing.native_trajectory(optimizer, initial,
                                                  gradients))
  testing.compare_trajectories(trajectories[1], trajectories[0], rtol=RTOL,
                               atol=ATOL)
  unchanged = testing.native_trajectory(
      tf_keras.optimizers.Adam(learning_rate=0.01), initial, gradients)
  with pytest.raises(AssertionError, match="part at step"):
    testing.compare_trajectories(trajectories[1], unchanged, rtol=RTOL,
                                 atol=ATOL)


def test_nadam_momentum_product_resumes_from_a_checkpoint(tmp_path):
  """tf_keras's Nadam keeps its momentum product in `_u_product`, outside
  its variables: `tf.train.Checkpoint` holds it there (native's too), and a
  run restored from one continues on the uninterrupted trajectory; from a
  fresh product it would not."""
  initial, gradients = testing.seeded_problem(20, seed=0, grad_scale=1.0)
  whole = testing.transform_trajectory(jaxopt_port.tf_keras.nadam(), initial,
                                       gradients)

  def run(optimizer, variables, steps):
    for step in steps:
      testing.apply_gradients(optimizer, [tf.constant(g) for g in step],
                              variables)
    return [v.numpy() for v in variables]

  variables = [tf.Variable(v) for v in initial]
  optimizer = tf_bridge.tf_keras.Nadam()
  run(optimizer, variables, gradients[:10])
  path = tf.train.Checkpoint(optimizer=optimizer, variables=variables).write(
      str(tmp_path / "nadam"))
  assert set(_checkpoint_keys(path)) >= {
      "optimizer/_u_product/.ATTRIBUTES/VARIABLE_VALUE"}

  for fresh in (False, True):
    restored = [tf.Variable(np.zeros_like(v)) for v in initial]
    optimizer = tf_bridge.tf_keras.Nadam()
    optimizer.build(restored)
    checkpoint = tf.train.Checkpoint(optimizer=optimizer, variables=restored)
    checkpoint.read(path).assert_consumed()
    if fresh:
      optimizer._u_product.assign(1.0)  # pylint: disable=protected-access
    ends = run(optimizer, restored, gradients[10:])
    if fresh:
      with pytest.raises(AssertionError):
        _assert_same(ends, whole[-1])
    else:
      _assert_same(ends, whole[-1])


def _checkpoint_keys(path):
  return [name for name, _ in tf.train.list_variables(path)]


def test_any_factory_becomes_a_tf_keras_optimizer():
  """`tf_bridge.tf_keras.keras_optimizer(factory)`: a tf_keras 2.11+
  optimizer class running the factory's transform (here a Keras 3 port:
  it takes tf_keras's base arguments, not Keras 3's), on the port's
  trajectory."""
  momentum_sgd = tf_bridge.tf_keras.keras_optimizer(jaxopt_port.momentum_sgd,
                                                    module="tests.tf_keras")
  assert momentum_sgd.__name__ == "MomentumSgd"
  assert issubclass(momentum_sgd, tf_keras.optimizers.Optimizer)
  parameters = inspect.signature(momentum_sgd).parameters
  assert "jit_compile" in parameters
  assert "gradient_accumulation_steps" not in parameters
  initial, gradients = testing.seeded_problem(30, seed=0, grad_scale=1.0)
  testing.compare_trajectories(
      testing.native_trajectory(momentum_sgd(0.1, momentum=0.9), initial,
                                gradients),
      testing.transform_trajectory(
          jaxopt_port.momentum_sgd(0.1, momentum=0.9), initial, gradients),
      rtol=RTOL, atol=ATOL)
