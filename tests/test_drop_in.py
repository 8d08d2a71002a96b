"""Drop-in: ordinary Keras and tf_keras programs, run once with the native
optimizer and once with its bridged twin, give the same numbers (the native
class is the specification)."""

import contextlib
import functools
import inspect
import re

import numpy as np
import pytest
import tensorflow as tf
import keras
import tf_keras

import jaxopt_port
import tf_bridge
import tf_bridge.legacy
from tf_bridge import testing

import mutants
from bridge_cases import built_variables, outcome

RTOL, ATOL = 1e-5, 1e-6
X = np.random.RandomState(0).rand(32, 4).astype("float32")
Y = np.random.RandomState(1).rand(32, 1).astype("float32")
KERAS_CASES = [("Adam", {}), ("SGD", {"momentum": 0.9}), ("Adagrad", {}),
               ("RMSprop", {"momentum": 0.5}), ("Lion", {}),
               ("Nadam", {}), ("Adafactor", {})]
LEGACY_CASES = [("Adam", {}), ("SGD", {"momentum": 0.9}), ("Ftrl", {}),
                ("RMSprop", {"centered": True})]


def _keras_sequential(optimizer, *, use_input=False, train_on_batch=False):
  """Dense(3), Dense(1) built at its first step unless `use_input`: the
  weights come from a fixed seed, so every run starts equal."""
  keras.utils.set_random_seed(0)
  layers = [keras.layers.Dense(3), keras.layers.Dense(1)]
  if use_input:
    layers.insert(0, keras.Input((4,)))
  model = keras.Sequential(layers)
  model.compile(optimizer, "mse")
  if train_on_batch:
    for start in range(0, 32, 8):
      model.train_on_batch(X[start:start + 8], Y[start:start + 8])
  else:
    model.fit(X, Y, batch_size=8, epochs=2, verbose=0, shuffle=False)
  return model.get_weights()


@functools.lru_cache(maxsize=None)
def _keras_sequential_start():
  """`_keras_sequential`'s starting weights (trained at a rate of 0)."""
  return _keras_sequential(keras.optimizers.SGD(0.0))


def _assert_same(got, want):
  assert len(got) == len(want)
  for g, w in zip(got, want):
    np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL)


def _compiled(library, optimizer):
  """Dense(3), Dense(1) on 4 inputs from a fixed seed (`library`: keras or
  tf_keras), compiled with `optimizer` and mse."""
  library.utils.set_random_seed(0)
  model = library.Sequential([library.Input((4,)), library.layers.Dense(3),
                              library.layers.Dense(1)])
  model.compile(optimizer, "mse")
  return model


@pytest.mark.parametrize("name, kwargs", KERAS_CASES,
                         ids=[c[0] for c in KERAS_CASES])
def test_keras_sequential_without_input_trains_as_native(name, kwargs):
  """The model (and so the optimizer) is built inside the `tf.function` of
  its first step: no variable has a value there yet."""
  native = _keras_sequential(getattr(keras.optimizers, name)(0.01, **kwargs))
  bridged = _keras_sequential(getattr(tf_bridge, name)(0.01, **kwargs))
  moved = max(np.max(np.abs(w - w0))
              for w, w0 in zip(native, _keras_sequential_start()))
  assert moved > 100 * ATOL
  _assert_same(bridged, native)


def test_keras_train_on_batch_and_ema_without_input():
  for kwargs in ({}, {"use_ema": True, "ema_overwrite_frequency": 2}):
    native = _keras_sequential(keras.optimizers.Adam(0.01, **kwargs),
                               train_on_batch=True)
    bridged = _keras_sequential(tf_bridge.Adam(0.01, **kwargs),
                                train_on_batch=True)
    _assert_same(bridged, native)


def test_keras_embedding_built_at_first_call():
  """(SGD with momentum: Keras 3's TensorFlow backend applies duplicate rows
  of Adagrad's and Adam's sparse gradients one by one: docs/known-differences.md.)"""
  ids = np.random.RandomState(2).randint(0, 20, (32, 3))

  def run(optimizer):
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.layers.Embedding(20, 4),
                              keras.layers.GlobalAveragePooling1D(),
                              keras.layers.Dense(1)])
    model.compile(optimizer, "mse")
    model.fit(ids, Y, batch_size=8, epochs=2, verbose=0, shuffle=False)
    return model.get_weights()

  _assert_same(run(tf_bridge.SGD(0.1, momentum=0.9)),
               run(keras.optimizers.SGD(0.1, momentum=0.9)))


def test_state_made_from_the_params_in_a_model_built_at_its_first_step():
  """ScheduleFreeAdamW's `z` starts at the variable: built inside the first
  step's trace, it reads the variable once TensorFlow has initialized it,
  so the run equals the one of a model built before `fit`. (Native Keras's
  TensorFlow backend loses that start here: docs/known-differences.md.)"""
  late = _keras_sequential(tf_bridge.ScheduleFreeAdamW(0.01))
  early = _keras_sequential(tf_bridge.ScheduleFreeAdamW(0.01), use_input=True)
  _assert_same(late, early)
  zero_start = _keras_sequential(keras.optimizers.ScheduleFreeAdamW(0.01))
  assert max(np.max(np.abs(a - b)) for a, b in zip(late, zero_start)) > 1e-3


@pytest.mark.parametrize("name", ["Adam", "SGD", "Adagrad", "Lion", "Nadam"])
def test_keras_float64_variables_are_updated_in_float64(name):
  """As native: float64 in, float64 slots and result; and computed in
  float64 (the port in JAX's 64-bit mode, to 1e-12), where native Keras
  rounds some terms to float32 (its Adam is 2e-6 off a float64 numpy
  reference after 3 steps, so it is compared at the project's tolerance)."""
  start = np.linspace(0.1, 1.0, 10)
  gradient = np.linspace(-1.0, 1.0, 10) * 1e-2
  results = {}
  for module in (keras.optimizers, tf_bridge):
    variable = keras.Variable(start)
    optimizer = getattr(module, name)(learning_rate=0.1)
    for _ in range(3):
      optimizer.apply_gradients([(tf.constant(gradient), variable)])
    assert variable.dtype == "float64"
    results[module] = (variable.numpy(), sorted(
        str(v.dtype) for v in optimizer.variables if v.shape == (10,)))
  np.testing.assert_allclose(results[tf_bridge][0],
                             results[keras.optimizers][0], rtol=RTOL,
                             atol=ATOL)
  assert results[tf_bridge][1] == results[keras.optimizers][1]
  import jax  # pylint: disable=import-outside-toplevel
  with jax.enable_x64(True):
    # Keras keeps the learning rate in a float32 variable.
    transform = getattr(jaxopt_port, name.lower())(
        learning_rate=float(np.float32(0.1)))
    params = jax.numpy.asarray(start)
    state = transform.init(params)
    for _ in range(3):
      updates, state = transform.update(jax.numpy.asarray(gradient), state,
                                        params)
      params = params + updates
    np.testing.assert_allclose(results[tf_bridge][0], np.asarray(params),
                               rtol=1e-12, atol=0)


@pytest.mark.parametrize("generation, name, kwargs", [
    ("keras", "Adam", {}), ("keras", "SGD", {"momentum": 0.9}),
    ("keras", "Adagrad", {}), ("keras", "Lion", {}),
    ("legacy", "Adam", {}), ("legacy", "SGD", {"momentum": 0.9}),
    ("legacy", "Adagrad", {}), ("legacy", "RMSprop", {})])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_low_precision_variables_without_a_policy(generation, name, kwargs,
                                                  dtype):
  """float16 and bfloat16 variables (no mixed-precision policy): slots of
  the variable's dtype, as native's, and native's values to a few units of
  that dtype's rounding (the port computes the moments in float32 and
  rounds them where native keeps them)."""
  keras3 = generation == "keras"
  start = np.linspace(0.5, 1.5, 6).astype(dtype)
  gradients = [np.linspace(-1.0, 1.0, 6) * scale for scale in (1, -0.5, 2)]
  results = []
  for module in ((keras.optimizers, tf_bridge) if keras3 else
                 (tf_keras.optimizers.legacy, tf_bridge.legacy)):
    variable = (keras.Variable if keras3 else tf.Variable)(start)
    optimizer = getattr(module, name)(learning_rate=0.1, **kwargs)
    for gradient in gradients:
      optimizer.apply_gradients([(tf.constant(gradient, dtype), variable)])
    slots = (optimizer.variables if keras3 else optimizer.variables())
    results.append((np.asarray(variable.numpy(), np.float32), sorted(
        str(v.dtype) for v in slots if tuple(v.shape) == (6,))))
  (native, native_slots), (bridged, bridged_slots) = results
  assert bridged_slots == native_slots
  assert all(dtype in slot for slot in native_slots)
  moved = np.max(np.abs(bridged - start.astype(np.float32)))
  assert moved > 0.1
  if (name, dtype) == ("Adam", "bfloat16"):
    # Native computes in bfloat16, where beta_2 = 0.999 rounds to 1: its
    # bias correction sqrt(1 - beta_2**t) is 0 and the variable never moves
    # (docs/migrating.md). The bridge trains.
    np.testing.assert_array_equal(native, start.astype(np.float32))
    return
  resolution = 2.0 ** (-7 if dtype == "bfloat16" else -10)
  np.testing.assert_allclose(bridged, native, rtol=8 * resolution, atol=0)


def test_indexed_slices_with_tuple_indices():
  results = []
  for optimizer in (keras.optimizers.Adam(0.1), tf_bridge.Adam(0.1)):
    variable = keras.Variable(np.ones((6, 2), "float32"))
    optimizer.apply_gradients([(tf.IndexedSlices(
        tf.ones((3, 2)), (0, 2, 4), (6, 2)), variable)])
    results.append(variable.numpy())
  np.testing.assert_allclose(results[1], results[0], rtol=RTOL, atol=ATOL)
  assert results[1][1, 0] == 1.0 and results[1][0, 0] < 1.0
  legacy = []
  for optimizer in (tf_keras.optimizers.legacy.SGD(0.1),
                    tf_bridge.legacy.SGD(0.1)):
    variable = tf.Variable(np.ones((6, 2), "float32"))
    optimizer.apply_gradients([(tf.IndexedSlices(
        tf.ones((3, 2)), (0, 2, 4), (6, 2)), variable)])
    legacy.append(variable.numpy())
  np.testing.assert_array_equal(legacy[1], legacy[0])


def _legacy_sequential(optimizer, constraint=None):
  tf_keras.utils.set_random_seed(0)
  model = tf_keras.Sequential([
      tf_keras.layers.Dense(3, kernel_constraint=constraint),
      tf_keras.layers.Dense(1)])
  model.compile(optimizer, "mse")
  model.fit(X, -Y, batch_size=8, epochs=2, verbose=0, shuffle=False)
  return model.get_weights()


@pytest.mark.parametrize("name, kwargs", LEGACY_CASES,
                         ids=[c[0] for c in LEGACY_CASES])
def test_legacy_sequential_without_input_trains_as_native(name, kwargs):
  native = _legacy_sequential(
      getattr(tf_keras.optimizers.legacy, name)(0.05, **kwargs))
  bridged = _legacy_sequential(getattr(tf_bridge.legacy, name)(0.05,
                                                               **kwargs))
  _assert_same(bridged, native)


def test_legacy_constraints_apply_after_the_step():
  native = _legacy_sequential(tf_keras.optimizers.legacy.SGD(0.5),
                              tf_keras.constraints.NonNeg())
  bridged = _legacy_sequential(tf_bridge.legacy.SGD(0.5),
                               tf_keras.constraints.NonNeg())
  _assert_same(bridged, native)
  assert native[0].min() == 0.0  # The constraint binds.
  unconstrained = _legacy_sequential(tf_bridge.legacy.SGD(0.5))
  assert unconstrained[0].min() < -1e-3


def _graph_run(make, steps=5):
  """A TF1 graph and session, as the OptimizerV2 generation ran."""
  graph = tf.Graph()
  with graph.as_default():
    variable = tf.compat.v1.get_variable(
        "v", initializer=np.linspace(-1, 1, 5).astype("float32"),
        use_resource=True)
    loss = tf.reduce_sum(variable * variable * tf.constant(
        np.arange(5, dtype="float32")))
    optimizer = make()
    train = optimizer.apply_gradients(zip(
        tf.compat.v1.gradients(loss, [variable]), [variable]))
    with tf.compat.v1.Session(graph=graph) as session:
      session.run(tf.compat.v1.global_variables_initializer())
      for _ in range(steps):
        session.run(train)
      return session.run(variable)


@pytest.mark.parametrize("name, kwargs", [("Adam", {}), ("Ftrl", {}),
                                          ("SGD", {"momentum": 0.9})])
def test_legacy_graph_mode_and_sessions(name, kwargs):
  native = _graph_run(lambda: getattr(tf_keras.optimizers.legacy, name)(
      0.1, **kwargs))
  bridged = _graph_run(lambda: getattr(tf_bridge.legacy, name)(0.1,
                                                               **kwargs))
  assert np.max(np.abs(native - np.linspace(-1, 1, 5))) > 0.01
  np.testing.assert_allclose(bridged, native, rtol=RTOL, atol=ATOL)


COMPLEX_CASES = [("SGD", {}), ("SGD", {"momentum": 0.9, "nesterov": True}),
                 ("Adagrad", {}), ("Adadelta", {}), ("RMSprop", {}),
                 ("RMSprop", {"momentum": 0.5, "centered": True})]


def _complex_problem(dtype, sparse):
  """A complex matrix and 30 steps of random complex gradients (as sparse
  `(values, indices)` rows with a repeated index if `sparse`)."""
  rng = np.random.default_rng(0)
  draw = lambda *shape: (rng.standard_normal(shape)
                         + 1j * rng.standard_normal(shape)).astype(dtype)
  initial = [draw(5, 3)]
  if sparse:
    return initial, [[(draw(3, 3), np.array([1, 4, 1], np.int32))]
                     for _ in range(30)]
  return initial, [[draw(5, 3)] for _ in range(30)]


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name, kwargs", COMPLEX_CASES,
                         ids=[n + "-" + "-".join(k) for n, k in COMPLEX_CASES])
def test_legacy_complex_variables_as_native(name, kwargs, dtype, sparse):
  """tf_keras's SGD, Adagrad, Adadelta and RMSprop take complex variables
  and gradients, dense and sparse, in TensorFlow's complex arithmetic
  (`g**2` is `g * g`, the principal square root): the bridged classes
  follow them, and a learning rate 1.001 times native's parts from them."""
  initial, gradients = _complex_problem(dtype, sparse)
  rate = 1.0 if name == "Adadelta" else 0.05  # Adadelta's steps are small.
  make = lambda module, rate=rate: getattr(module, name)(rate, **kwargs)
  native = testing.native_trajectory(make(tf_keras.optimizers.legacy),
                                     initial, gradients)
  assert native[-1][0].dtype == np.dtype(dtype)
  assert np.max(np.abs(native[-1][0].imag - initial[0].imag)) > 1e-2
  bridged = testing.native_trajectory(make(tf_bridge.legacy), initial,
                                      gradients)
  testing.compare_trajectories(bridged, native, rtol=RTOL, atol=ATOL)
  assert mutants.parts(testing.native_trajectory(
      make(tf_bridge.legacy, rate * 1.001), initial, gradients), native,
                       rtol=RTOL, atol=ATOL)


def _tensor_loss_run(make, graph):
  """`minimize` and `_compute_gradients` given the loss as a tensor and the
  tape that recorded it, eagerly or in a TF1 graph and session; and the
  error without the tape."""
  def loss_of(variable):
    return tf.reduce_sum(variable * variable * tf.constant(
        np.arange(5, dtype="float32")))

  context = tf.Graph().as_default() if graph else contextlib.nullcontext()
  with context:
    variable = tf.Variable(np.linspace(-1, 1, 5).astype("float32"))
    optimizer = make()
    with tf.GradientTape(persistent=True) as tape:
      loss = loss_of(variable)
    (gradient, _), = optimizer._compute_gradients(loss, [variable], tape=tape)  # pylint: disable=protected-access
    train = optimizer.minimize(loss, [variable], tape=tape)
    with pytest.raises(ValueError) as refused:
      optimizer.minimize(loss, [variable])
    if not graph:
      for _ in range(2):
        with tf.GradientTape() as tape:
          loss = loss_of(variable)
        optimizer.minimize(loss, [variable], tape=tape)
      return tf.convert_to_tensor(gradient).numpy(), variable.numpy(), str(
          refused.value)
    with tf.compat.v1.Session() as session:
      session.run(tf.compat.v1.global_variables_initializer())
      found = session.run(gradient)
      for _ in range(3):
        session.run(train)
      return found, session.run(variable), str(refused.value)


@pytest.mark.parametrize("graph", [False, True], ids=["eager", "graph"])
def test_legacy_minimize_with_a_tensor_loss_and_its_tape(graph):
  native = _tensor_loss_run(lambda: tf_keras.optimizers.legacy.Adam(0.1),
                            graph)
  bridged = _tensor_loss_run(lambda: tf_bridge.legacy.Adam(0.1), graph)
  np.testing.assert_array_equal(bridged[0], native[0])
  assert np.max(np.abs(native[1] - np.linspace(-1, 1, 5))) > 0.1
  np.testing.assert_allclose(bridged[1], native[1], rtol=RTOL, atol=ATOL)
  assert bridged[2] == native[2]
  assert "`tape` is required when a `Tensor` loss is passed" in native[2]


def test_legacy_graph_mode_state_made_from_the_params():
  """MovingAverage's average starts at the variable (TF Addons'
  `add_slot(var, "average", var.read_value())`), also in a graph, where
  the variable has no value until the session initializes it."""
  graph = tf.Graph()
  with graph.as_default():
    variable = tf.compat.v1.get_variable(
        "v", initializer=np.array([1.0, 2.0], "float32"), use_resource=True)
    optimizer = tf_bridge.legacy.addons.MovingAverage(
        tf_bridge.legacy.SGD(1.0), average_decay=0.5)
    train = optimizer.apply_gradients([(tf.constant([0.5, 0.5]), variable)])
    with tf.compat.v1.Session(graph=graph) as session:
      session.run(tf.compat.v1.global_variables_initializer())
      session.run(train)
      average = session.run(optimizer.get_slot(variable, "average"))
  # TF Addons: average = decay * average + (1 - decay) * new value.
  np.testing.assert_allclose(average, [0.5 * 1.0 + 0.5 * 0.5,
                                       0.5 * 2.0 + 0.5 * 1.5])


def _layout_cases():
  from tf_bridge import catalog  # pylint: disable=import-outside-toplevel
  return [d for d in catalog.CATALOG
          if d.has_native and d.generation in (catalog.KERAS, catalog.LEGACY)]


def _layout(optimizer, variables):
  """(name without the optimizer's prefix, shape, dtype) of every optimizer
  variable, in order."""
  return [(v.name.split("/", 1)[-1] if "/" in v.name else v.name,
           tuple(v.shape), str(v.dtype))
          for v in built_variables(optimizer, variables)]


@pytest.mark.parametrize("kernel_dtype, bias_dtype", [
    ("float32", "float32"), ("float32", "float16"), ("float64", "float64"),
    ("float16", "float16")])
@pytest.mark.parametrize("declaration", _layout_cases(),
                         ids=lambda d: d.name)
def test_optimizer_variables_are_natives(declaration, kernel_dtype,
                                         bias_dtype):
  """The same variables, names, shapes, dtypes and order as the native
  class: what `tf.train.Checkpoint` and `.keras` files hold; with a float16
  variable in the list too (native keeps its slots in float16), and for a
  float64 and a float16 model (both Nadams keep their schedule's product
  in the first variable's dtype, Keras 3 Adafactor its factored moments in
  their variable's)."""
  keras3 = declaration.generation == "keras"
  make = keras.Variable if keras3 else tf.Variable
  layouts = []
  for optimizer in (declaration.make_native(),
                    getattr(tf_bridge if keras3 else tf_bridge.legacy,
                            declaration.class_name)(**declaration.required)):
    variables = [make(np.ones((3, 2), kernel_dtype), name="kernel"),
                 make(np.ones((2,), bias_dtype), name="bias")]
    layouts.append(_layout(optimizer, variables))
  native, bridged = layouts
  assert [v[1:] for v in bridged] == [v[1:] for v in native]
  # Keras 3 files and checkpoints hold optimizer variables by position;
  # where native keeps Keras's default names (Nadam's `u_product` is
  # "variable", Adafactor's factored moments are named after the variable),
  # the bridge names them after what they hold.
  def named(name):
    return not keras3 or re.sub(r"_\d+$", "", name) not in (
        "variable", "kernel", "bias")

  assert [b[0] for b, n in zip(bridged, native) if named(n[0])] == [
      n[0] for n in native if named(n[0])]


def _flag_cases():
  """(declaration, arguments) for every flag of a native class that may add
  a variable: each boolean turned from its default, a momentum of 0 made
  0.5; one at a time and all together."""
  cases = []
  for declaration in _layout_cases():
    flags = {}
    for name, parameter in inspect.signature(
        declaration.native_class()).parameters.items():
      if isinstance(parameter.default, bool):
        flags[name] = not parameter.default
      elif name == "momentum" and parameter.default == 0:
        flags[name] = 0.5
    cases += [(declaration, {name: value}) for name, value in flags.items()]
    if len(flags) > 1:
      cases.append((declaration, flags))
  return cases


@pytest.mark.parametrize("declaration, kwargs", _flag_cases(),
                         ids=lambda case: (case.name if hasattr(case, "name")
                                           else "-".join(case)))
def test_optimizer_variables_are_natives_under_every_flag(declaration,
                                                          kwargs):
  """Native's names, shapes and order with each flag that adds a variable
  (Adam's amsgrad makes every `velocity_hat` after every variable's
  `momentum` and `velocity`; Keras 3 RMSprop each slot for every variable
  in turn): Keras 3 files hold optimizer variables by position."""
  keras3 = declaration.generation == "keras"
  make = keras.Variable if keras3 else tf.Variable
  bridged_class = getattr(tf_bridge if keras3 else tf_bridge.legacy,
                          declaration.class_name)
  layouts = [
      _layout(optimizer, [make(np.ones((3, 2), "float32"), name="kernel"),
                          make(np.ones((2,), "float32"), name="bias")])
      for optimizer in (declaration.make_native(**kwargs),
                        bridged_class(**declaration.required, **kwargs))]
  native, bridged = layouts
  assert [v[1:] for v in bridged] == [v[1:] for v in native]
  if declaration.class_name not in ("Nadam", "Adafactor"):  # Keras's names.
    assert [v[0] for v in bridged] == [v[0] for v in native]


@pytest.mark.parametrize("name, kwargs", [("Adam", {}), ("Nadam", {}),
                                          ("SGD", {"momentum": 0.9}),
                                          ("Adadelta", {"learning_rate": 1.0})])
def test_legacy_hdf5_files_move_between_native_and_bridged(name, kwargs,
                                                           tmp_path):
  """tf_keras's HDF5 model files (optimizer weights included): one written
  with the native class loads into the bridged one, one written with the
  bridged class loads and its optimizer weights move into a native
  optimizer (`get_weights`/`set_weights`); training continues on the
  writer's trajectory."""
  native_class = getattr(tf_keras.optimizers.legacy, name)
  bridged_class = getattr(tf_bridge.legacy, name)

  def saved(optimizer_class):
    model = _compiled(tf_keras, optimizer_class(
        **{"learning_rate": 0.05, **kwargs}))
    model.fit(X, Y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    path = str(tmp_path / f"{optimizer_class.__module__}.h5")
    model.save(path)
    return path

  def continued(model):
    model.fit(X, Y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    return model.get_weights()

  native_path, bridged_path = saved(native_class), saved(bridged_class)
  native = continued(tf_keras.models.load_model(native_path))
  # tf_keras's file names its own class by its key ("adam").
  with tf_keras.saving.custom_object_scope({name.lower(): bridged_class}):
    model = tf_keras.models.load_model(native_path)
  assert type(model.optimizer) is bridged_class
  _assert_same(continued(model), native)

  model = tf_keras.models.load_model(bridged_path)
  assert type(model.optimizer) is bridged_class
  weights = model.optimizer.get_weights()
  bridged = continued(model)
  _assert_same(bridged, native)
  model = tf_keras.models.load_model(bridged_path)
  model.compile(native_class(**{"learning_rate": 0.05, **kwargs}), "mse")
  model.optimizer._create_all_weights(model.trainable_variables)  # pylint: disable=protected-access
  model.optimizer.set_weights(weights)
  _assert_same(continued(model), bridged)
  # From a fresh optimizer state the run ends elsewhere: the state counted.
  model = tf_keras.models.load_model(native_path)
  model.compile(native_class(**{"learning_rate": 0.05, **kwargs}), "mse")
  assert max(np.max(np.abs(a - b))
             for a, b in zip(continued(model), native)) > 1e-4


@pytest.mark.parametrize("name, kwargs", [
    ("Adam", {}), ("Nadam", {}), ("Adafactor", {}), ("Lion", {}),
    ("SGD", {"momentum": 0.9}), ("Adam", {"amsgrad": True}),
    ("RMSprop", {"momentum": 0.5, "centered": True})])
def test_keras_files_move_between_native_and_bridged(name, kwargs, tmp_path):
  """A `.keras` file written with either class: `load_model` gives the
  writer's class back with its state, and `load_weights` of the file into
  a model compiled with the other class (optimizer built) moves the
  optimizer's state too; training continues on the writer's trajectory."""
  classes = (getattr(keras.optimizers, name), getattr(tf_bridge, name))

  def compiled(optimizer_class):
    return _compiled(keras, optimizer_class(
        **{"learning_rate": 0.05, **kwargs}))

  def continued(model):
    model.fit(X, Y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    return model.get_weights()

  for writer, reader in (classes, classes[::-1]):
    model = compiled(writer)
    model.fit(X, Y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    path = str(tmp_path / f"{writer.__module__}.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    assert type(loaded.optimizer) is writer
    expected = continued(loaded)
    other = compiled(reader)
    other.optimizer.build(other.trainable_variables)
    other.load_weights(path)
    _assert_same(continued(other), expected)
  # A fresh optimizer state ends elsewhere: the file's state counted.
  fresh = compiled(classes[0])
  fresh.load_weights(path)
  assert max(np.max(np.abs(a - b))
             for a, b in zip(continued(fresh), expected)) > 1e-4


@pytest.mark.parametrize("suffix", [".weights.h5", ".keras"])
def test_keras_weights_load_where_the_optimizer_cannot_take_its_state(
    suffix, tmp_path):
  """`load_weights` into a model compiled but not trained yet (its
  optimizer unbuilt), or compiled with another optimizer: Keras loads the
  layers, warns that it skips the optimizer's state, and training starts
  from a fresh one; the bridged classes, as the native ones."""
  def run(module):
    model = _compiled(keras, module.Adam(0.05))
    model.fit(X, Y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    path = str(tmp_path / f"{module.__name__}{suffix}")
    (model.save if suffix == ".keras" else model.save_weights)(path)
    results = []
    for reader, built in ((module.Adam(0.05), False),
                          (module.SGD(0.05, momentum=0.9), True)):
      other = _compiled(keras, reader)
      if built:
        other.optimizer.build(other.trainable_variables)
      with pytest.warns(UserWarning, match=(
          r"Skipping variable loading for optimizer '\w+', because it "
          r"has \d+ variables whereas the saved optimizer has 10 "
          r"variables")):
        other.load_weights(path)
      _assert_same(other.get_weights(), model.get_weights())
      assert int(other.optimizer.iterations.numpy()) == 0
      other.fit(X, Y, batch_size=8, epochs=1, verbose=0, shuffle=False)
      results.append(other.get_weights())
    return results

  native, bridged = run(keras.optimizers), run(tf_bridge)
  for got, want in zip(bridged, native):
    _assert_same(got, want)


def test_keras_model_saved_before_training_loads(tmp_path):
  """A `.keras` file of a model compiled but not trained (its optimizer
  holds no slots yet): `load_model` builds the optimizer, skips the
  file's optimizer state with Keras's warning, and the model trains as
  native's."""
  trained = []
  for optimizer_class in (keras.optimizers.Adam, tf_bridge.Adam):
    model = _compiled(keras, optimizer_class(0.05))
    path = str(tmp_path / f"{optimizer_class.__module__}.keras")
    model.save(path)
    with pytest.warns(UserWarning, match=(
        r"Skipping variable loading for optimizer '\w+', because it has 10 "
        r"variables whereas the saved optimizer has 2 variables")):
      loaded = keras.models.load_model(path)
    assert type(loaded.optimizer) is optimizer_class
    loaded.fit(X, Y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    trained.append(loaded.get_weights())
  _assert_same(trained[1], trained[0])


@pytest.mark.parametrize("generation", ["keras", "legacy"])
def test_backup_and_restore_resumes_an_interrupted_fit(generation, tmp_path):
  """`callbacks.BackupAndRestore`: a fit stopped after its second epoch,
  run again with the same callback, resumes the model and the optimizer's
  state and ends where an uninterrupted fit ends, as native's."""
  library = keras if generation == "keras" else tf_keras
  classes = ((keras.optimizers.Adam, tf_bridge.Adam) if generation == "keras"
             else (tf_keras.optimizers.legacy.Adam, tf_bridge.legacy.Adam))

  class Interrupt(library.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
      if epoch == 1:
        raise KeyboardInterrupt

  def fit(optimizer_class, callbacks):
    model = _compiled(library, optimizer_class(0.05))
    history = model.fit(X, Y, batch_size=8, epochs=4, verbose=0,
                        shuffle=False, callbacks=callbacks)
    model.epochs_run = len(history.epoch)
    return model

  ended = []
  for optimizer_class in classes:
    backup = str(tmp_path / optimizer_class.__module__)
    with pytest.raises(KeyboardInterrupt):
      fit(optimizer_class, [library.callbacks.BackupAndRestore(backup),
                            Interrupt()])
    resumed = fit(optimizer_class,
                  [library.callbacks.BackupAndRestore(backup)])
    # Two epochs run again, on two restored: the optimizer's count too.
    assert resumed.epochs_run == 2
    assert int(resumed.optimizer.iterations.numpy()) == 16
    _assert_same(resumed.get_weights(), fit(optimizer_class, []).get_weights())
    ended.append(resumed.get_weights())
  _assert_same(ended[1], ended[0])


@pytest.mark.parametrize("generation, name", [
    ("keras", "Adam"), ("keras", "Nadam"), ("keras", "Adafactor"),
    ("keras", "SGD"), ("legacy", "Adam"), ("legacy", "Nadam"),
    ("legacy", "Ftrl")])
def test_checkpoints_move_between_native_and_bridged(generation, name,
                                                     tmp_path):
  """A `tf.train.Checkpoint` written by either class restores into the
  other, which then takes the steps the writer would have taken."""
  keras3 = generation == "keras"
  natives = keras.optimizers if keras3 else tf_keras.optimizers.legacy
  bridges = tf_bridge if keras3 else tf_bridge.legacy
  make_variable = keras.Variable if keras3 else tf.Variable
  gradients = [np.linspace(-1, 1, 6).reshape(3, 2).astype("float32"),
               np.array([0.5, -2.0], "float32")]

  def run(optimizer, variables, steps):
    for step in range(steps):
      optimizer.apply_gradients(zip(
          [tf.constant(g * (1 + step)) for g in gradients], variables))
    return [v.numpy() for v in variables]

  def fresh():
    return [make_variable(np.ones((3, 2), "float32"), name="kernel"),
            make_variable(np.ones((2,), "float32"), name="bias")]

  for writer_module, reader_module in ((natives, bridges),
                                       (bridges, natives)):
    variables = fresh()
    writer = getattr(writer_module, name)(learning_rate=0.1)
    run(writer, variables, 2)
    path = tf.train.Checkpoint(optimizer=writer, variables=variables).write(
        str(tmp_path / f"{writer_module.__name__}"))
    continued = run(writer, variables, 2)

    restored_variables = fresh()
    reader = getattr(reader_module, name)(learning_rate=0.1)
    if keras3:
      reader.build(restored_variables)
    else:
      reader._create_all_weights(restored_variables)  # pylint: disable=protected-access
    status = tf.train.Checkpoint(optimizer=reader,
                                 variables=restored_variables).read(path)
    # Every variable on both sides matched (OptimizerV2's hyperparameter
    # variables, beta_1 and so on, included).
    status.assert_consumed()
    np.testing.assert_allclose(run(reader, restored_variables, 2)[0],
                               continued[0], rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(run(reader, restored_variables, 0)[1],
                               continued[1], rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("declaration", _layout_cases(),
                         ids=lambda d: d.name)
def test_invalid_arguments_raise_natives_error(declaration):
  """Where the native class refuses a value, the bridged class refuses it
  with the same exception and message (where native accepts nonsense, the
  bridge may refuse it: README, differences). Where native refuses what is
  no number by accident (`'<' not supported between instances of
  'NoneType' and 'int'`), the bridge raises the same exception type, its
  message naming the argument."""
  import inspect  # pylint: disable=import-outside-toplevel
  bridged = getattr(tf_bridge if declaration.generation == "keras"
                    else tf_bridge.legacy, declaration.class_name)
  native = declaration.native_class()
  refused = 0
  for name, parameter in inspect.signature(native).parameters.items():
    default = parameter.default
    if isinstance(default, bool) or not isinstance(default, (int, float)):
      continue
    for bad in (-0.1, 1.5, -1, None, "0.5"):
      expected = outcome(lambda: native(**{name: bad}))  # pylint: disable=cell-var-from-loop
      if expected is None:
        continue
      refused += 1
      got = outcome(lambda: bridged(**{name: bad}))  # pylint: disable=cell-var-from-loop
      if "not supported between instances" in expected[1]:
        assert got == (expected[0], f"`{name}` must be a number or a "
                       f"scalar array. Received: {name}={bad!r}"), bad
      else:
        assert got == expected, (name, bad)
  if declaration.class_name in ("SGD", "Ftrl", "Lion") or (
      declaration.generation == "legacy"
      and declaration.class_name in ("Adagrad", "RMSprop")):
    assert refused > 0


@pytest.mark.parametrize("declaration", _layout_cases(),
                         ids=lambda d: d.name)
def test_unknown_arguments_raise_natives_error(declaration):
  """Keras 3: ValueError "Argument(s) not recognized: {...}"; OptimizerV2:
  TypeError naming the first one and the kwargs it allows; from a config
  too."""
  bridged = getattr(tf_bridge if declaration.generation == "keras"
                    else tf_bridge.legacy, declaration.class_name)
  native = declaration.native_class()
  unknown = {"betta_1": 0.9, "bogus": None}
  expected = outcome(lambda: native(**declaration.required, **unknown))
  assert expected is not None and "betta_1" in expected[1]
  assert outcome(lambda: bridged(**declaration.required, **unknown)) == (
      expected)
  config = {**bridged(**declaration.required).get_config(), **unknown}
  assert outcome(lambda: bridged.from_config(config)) == outcome(
      lambda: native.from_config(config))


def test_positional_base_arguments_and_name():
  native = keras.optimizers.Adam(0.002, 0.8, 0.99, 1e-6, False, 0.01, None,
                                 None, None, True, 0.9, None, None, None,
                                 "my_adam")
  bridged = tf_bridge.Adam(0.002, 0.8, 0.99, 1e-6, False, 0.01, None, None,
                           None, True, 0.9, None, None, None, "my_adam")
  assert bridged.name == native.name == "my_adam"
  assert bridged.weight_decay == native.weight_decay == 0.01
  assert bridged.use_ema and bridged.ema_momentum == 0.9
  assert (bridged.beta_1, bridged.beta_2, bridged.epsilon) == (
      native.beta_1, native.beta_2, native.epsilon)
  legacy = tf_bridge.legacy.Adam(0.002, 0.8, 0.99, 1e-6, True, "my_adam")
  assert legacy.get_config()["name"] == tf_keras.optimizers.legacy.Adam(
      0.002, 0.8, 0.99, 1e-6, True, "my_adam").get_config()["name"]
  assert legacy.get_config()["amsgrad"] is True


def test_hyperparameters_are_attributes_that_steer_the_next_step():
  """`optimizer.momentum = 0.9` between eager steps changes the next step,
  as natively; a value that would change the built state is refused."""
  results = []
  for module in (keras.optimizers, tf_bridge):
    optimizer = module.SGD(0.1, momentum=0.5)
    assert optimizer.momentum == 0.5
    variable = keras.Variable(np.ones(3, "float32"))
    for momentum in (0.5, 0.9, 0.0):
      optimizer.momentum = momentum
      optimizer.apply_gradients([(tf.ones(3), variable)])
    assert optimizer.momentum == 0.0
    results.append(variable.numpy())
  np.testing.assert_allclose(results[1], results[0], rtol=RTOL, atol=ATOL)
  # m = momentum * m - 0.1: 1 - 0.1 - (0.09 + 0.1) - 0.1 (momentum 0: a
  # plain step); a momentum fixed at 0.5 would end at 0.575.
  np.testing.assert_allclose(results[1], 0.61, rtol=1e-6)
  assert tf_bridge.Adam(beta_1=0.8).beta_1 == 0.8
  results = []
  for module in (keras.optimizers, tf_bridge):
    optimizer = module.Adam(0.1, beta_1=0.8)
    variable = keras.Variable(np.ones(3, "float32"))
    if module is tf_bridge:
      with pytest.raises(ValueError, match="`beta_1` must be in"):
        optimizer.beta_1 = 2.0
      assert optimizer.beta_1 == 0.8
    for gradient in (1.0, -0.5, 2.0):
      optimizer.apply_gradients([(tf.fill([3], gradient), variable)])
    results.append(variable.numpy())
  # The refused value reaches neither the attribute nor the steps.
  np.testing.assert_allclose(results[1], results[0], rtol=RTOL, atol=ATOL)
  optimizer = tf_bridge.SGD(0.1)
  variable = keras.Variable(np.ones(3, "float32"))
  optimizer.apply_gradients([(tf.ones(3), variable)])
  with pytest.raises(ValueError, match="changes the state the optimizer "
                     "keeps .* pass it to the constructor"):
    optimizer.momentum = 0.9
  assert optimizer.momentum == 0.0
  # The refused value does not reach the step: a plain step again.
  optimizer.apply_gradients([(tf.ones(3), variable)])
  np.testing.assert_allclose(variable.numpy(), 0.8, rtol=1e-6)


def test_update_step_called_directly():
  """Keras's `update_step(gradient, variable, learning_rate)`: the algorithm
  on one variable (custom training code calls it)."""
  results = []
  for module in (keras.optimizers, tf_bridge):
    variables = [keras.Variable(np.ones(3, "float32")),
                 keras.Variable(np.ones(2, "float32"))]
    optimizer = module.Adam(0.1, weight_decay=0.5)
    optimizer.build(variables)
    for _ in range(2):
      optimizer.update_step(tf.constant([1.0, -2.0, 0.5]), variables[0],
                            tf.constant(0.1))
    results.append([v.numpy() for v in variables])
  _assert_same(results[1], results[0])
  np.testing.assert_array_equal(results[1][1], [1.0, 1.0])


@pytest.mark.parametrize("name", ["Adam", "Nadam", "Ftrl"])
def test_legacy_optimizer_updates_a_second_variable_list(name):
  """OptimizerV2 makes slots as variables arrive: one optimizer may update
  a generator's variables, then a discriminator's, then both."""
  results = []
  for module in (tf_keras.optimizers.legacy, tf_bridge.legacy):
    first = tf.Variable(np.ones(3, "float32"))
    second = tf.Variable(np.full(2, 2.0, "float32"))
    optimizer = getattr(module, name)(0.1)
    optimizer.apply_gradients([(tf.constant([1.0, -1.0, 0.5]), first)])
    optimizer.apply_gradients([(tf.constant([0.3, -0.2]), second)])
    optimizer.apply_gradients([(tf.constant([1.0, 1.0, 1.0]), first),
                               (tf.constant([1.0, 1.0]), second)])
    results.append([first.numpy(), second.numpy(),
                    int(optimizer.iterations.numpy())])
  assert results[1][2] == results[0][2] == 3
  _assert_same(results[1][:2], results[0][:2])


@pytest.mark.parametrize("in_function", [False, True],
                         ids=["eager", "tf.function"])
def test_legacy_hyperparameters_read_and_set(in_function):
  """`optimizer.momentum`, `_get_hyper`, `_set_hyper` as OptimizerV2's: a
  hyperparameter variable, so a value set between steps reaches the next
  one even in a `tf.function` traced before."""
  results = []
  for module in (tf_keras.optimizers.legacy, tf_bridge.legacy):
    optimizer = module.SGD(0.1, momentum=0.5)
    variable = tf.Variable(np.ones(3, "float32"))

    def step(optimizer=optimizer, variable=variable):
      optimizer.apply_gradients([(tf.ones(3), variable)])

    if in_function:
      step = tf.function(step)
    step()
    assert isinstance(optimizer._hyper["momentum"], tf.Variable)  # pylint: disable=protected-access
    optimizer.momentum = 0.9
    step()
    optimizer._set_hyper("momentum", 0.2)  # pylint: disable=protected-access
    step()
    results.append((variable.numpy(), float(optimizer.momentum),
                    float(optimizer._get_hyper("momentum", tf.float32)),  # pylint: disable=protected-access
                    float(module.Adam(beta_1=0.8).beta_1)))
  np.testing.assert_allclose(results[1][0], results[0][0], rtol=RTOL,
                             atol=ATOL)
  np.testing.assert_allclose(results[1][1:], results[0][1:], rtol=1e-6)


def _halved(grads_and_vars):
  return [(0.5 * g, v) for g, v in grads_and_vars]


def _summed(grads_and_vars):
  # OptimizerV2's default aggregator, written out.
  return tf_keras.src.optimizers.utils.all_reduce_sum_gradients(
      grads_and_vars)


@pytest.mark.parametrize("name, kwargs", [
    ("Adadelta", {"epsilon": None}), ("Adadelta", {"rho": 1.0}),
    ("Adam", {"epsilon": None}), ("RMSprop", {"epsilon": 0}),
    ("SGD", {"gradient_transformers": [_halved], "momentum": 0.5}),
    ("Adam", {"gradient_aggregator": _summed,
              "gradient_transformers": [_halved]})],
    ids=["adadelta-epsilon-None", "adadelta-rho-1", "adam-epsilon-None",
         "rmsprop-epsilon-0", "sgd-transformers", "adam-aggregator"])
def test_legacy_arguments_native_accepts(name, kwargs):
  """Arguments tf_keras's legacy classes take: an epsilon of None or 0
  (`epsilon or backend.epsilon()`: 1e-7), Adadelta's rho = 1 (plain SGD),
  OptimizerV2's `gradient_aggregator` and `gradient_transformers` (after
  clipping, as OptimizerV2 orders them)."""
  results = []
  for module in (tf_keras.optimizers.legacy, tf_bridge.legacy):
    variable = tf.Variable(np.linspace(-1.0, 1.0, 5).astype("float32"))
    optimizer = getattr(module, name)(learning_rate=0.5, **kwargs)
    for scale in (1e-3, -2e-3, 3e-3):
      optimizer.apply_gradients([(tf.constant(
          np.linspace(1.0, -0.5, 5).astype("float32") * scale), variable)])
    results.append(variable.numpy())
  np.testing.assert_allclose(results[1], results[0], rtol=1e-6, atol=1e-7)
  assert np.max(np.abs(results[1] - np.linspace(-1.0, 1.0, 5))) > 1e-4


def test_legacy_clipping_and_gradient_transformers_refused_together():
  for module in (tf_keras.optimizers.legacy, tf_bridge.legacy):
    with pytest.raises(ValueError, match=re.escape(
        "`clipvalue` cannot be set when `gradient_transformers` is set.")):
      module.SGD(clipvalue=0.3, gradient_transformers=[_halved])


def test_legacy_nadam_decay_is_its_schedule_decay():
  """tf_keras's legacy Nadam keeps `schedule_decay` as its `decay`
  hyperparameter: the attribute, the variable (assigned between steps, it
  changes nothing: native's step reads the constructor's value), the config
  key; its config loads into the bridged class; a LearningRateSchedule is
  refused with native's words."""
  results = []
  for module in (tf_keras.optimizers.legacy, tf_bridge.legacy):
    optimizer = module.Nadam(0.1, schedule_decay=0.2)
    assert float(optimizer.decay) == pytest.approx(0.2)
    config = optimizer.get_config()
    variable = tf.Variable(np.linspace(-1.0, 1.0, 4).astype("float32"))

    @tf.function
    def step(optimizer=optimizer, variable=variable):
      optimizer.apply_gradients([(variable * 1.0, variable)])

    step()
    # A step that read it would move by twice as much (mu(2) 0.89, not
    # 0.46).
    optimizer.decay = 50.0
    assert float(optimizer.decay) == 50.0
    step()
    step()
    results.append((config, variable.numpy()))
    with pytest.raises(ValueError, match=re.escape(
        "The Nadam optimizer does not support "
        "tf.keras.optimizers.LearningRateSchedules as the learning rate")):
      module.Nadam(tf_keras.optimizers.schedules.ExponentialDecay(0.1, 5, 0.5))
  (native_config, native), (bridged_config, bridged) = results
  assert bridged_config == native_config
  np.testing.assert_allclose(bridged, native, rtol=RTOL, atol=ATOL)
  loaded = tf_bridge.legacy.Nadam.from_config(native_config)
  assert loaded.get_config() == native_config


def test_legacy_nadam_port_takes_decay_as_schedule_decay():
  """As docs/known-differences.md says, legacy Nadam takes `decay` as its momentum-cache schedule
  decay, in the port too (never a learning-rate decay)."""
  import jax.numpy as jnp  # pylint: disable=import-outside-toplevel

  def run(**kwargs):
    transform = jaxopt_port.legacy.nadam(0.1, **kwargs)
    params = jnp.linspace(-1.0, 1.0, 4)
    state = transform.init(params)
    for _ in range(3):
      updates, state = transform.update(params, state, params)
      params = params + updates
    return np.asarray(params)

  np.testing.assert_array_equal(run(decay=5.0), run(schedule_decay=5.0))
  assert np.max(np.abs(run(decay=5.0) - run())) > 1e-3


def test_muon_methods_are_natives():
  """Keras 3 Muon's public methods beyond Optimizer's, eager and in a
  tf.function, equal to native's (with non-default hyperparameters)."""
  x = tf.constant(np.random.RandomState(2).randn(5, 3).astype("float32"))
  batch = tf.constant(np.random.RandomState(3).randn(2, 3, 4)
                      .astype("float32"))
  results = []
  for module in (keras.optimizers, tf_bridge):
    optimizer = module.Muon(rms_rate=0.3, muon_a=3.0, muon_b=-4.0,
                            muon_c=1.9)
    unscaled = module.Muon(rms_rate=None)

    @tf.function
    def traced(x, optimizer=optimizer):
      return optimizer.zeropower_via_newtonschulz5(x, 3)

    results.append([np.asarray(value) for value in (
        optimizer.lr_adjust(x), unscaled.lr_adjust(x),
        optimizer.transpose_last_axis(batch),
        optimizer.zeropower_via_newtonschulz5(x, 5),
        optimizer.zeropower_via_newtonschulz5(batch, 2), traced(x))])
    with pytest.raises(ValueError, match=re.escape(
        "Expected gradient or momentum to have at least 2 dimensions. "
        "Received: shape=(3,)")):
      optimizer.zeropower_via_newtonschulz5(tf.ones(3), 5)
  native, bridged = results
  for got, want in zip(bridged, native):
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(native[0], native[1] * np.sqrt(5) * 0.3,
                             rtol=1e-6)


@pytest.mark.parametrize("declaration", _layout_cases(),
                         ids=lambda d: d.name)
def test_configs_are_natives(declaration):
  """`get_config()` equal to native's, and native's config loads into the
  bridged class (which then gives the same config)."""
  keras3 = declaration.generation == "keras"
  bridged_class = getattr(tf_bridge if keras3 else tf_bridge.legacy,
                          declaration.class_name)
  native = declaration.make_native().get_config()
  native["name"] = "mine"
  bridged = bridged_class(**{**declaration.required, "name": "mine"})
  assert bridged.get_config() == native
  assert bridged_class.from_config(native).get_config() == native


@pytest.mark.parametrize("declaration", [
    d for d in _layout_cases() if d.generation == "keras"],
                         ids=lambda d: d.name)
def test_keras_constructor_signatures_are_natives(declaration):
  """Keras 3's classes: the same parameters in the same order with the
  same defaults (Muon takes its own after `name`; its `exclude_layers`
  None, kept as [] as native keeps it), plus `skip_nonfinite`; a
  positional call binds as native's does."""
  def parameters(cls):
    return [(p.name, p.default)
            for p in inspect.signature(cls).parameters.values()
            if p.kind != p.VAR_KEYWORD]

  bridged_class = getattr(tf_bridge, declaration.class_name)
  assert parameters(bridged_class) == parameters(
      declaration.native_class()) + [("skip_nonfinite", False)]
  if declaration.class_name == "Muon":  # Its 7th positional is clipnorm.
    arguments = [0.01, 0.8, 0.99, 0.0, 1e-6, 0.0, 0.5]
    native = declaration.native_class()(*arguments)
    bridged = bridged_class(*arguments)
    assert (bridged.clipnorm, bridged.adam_beta_1) == (native.clipnorm, 0.8)
    assert bridged.exclude_layers == native.exclude_layers == []


@pytest.mark.parametrize("declaration", [
    d for d in _layout_cases() if d.generation == "legacy"],
                         ids=lambda d: d.name)
def test_legacy_constructor_signatures_are_natives(declaration):
  """tf_keras's legacy classes: the same positional parameters in the same
  order with the same defaults (`name` where native has it: before Ftrl's
  last two, after Nadam's epsilon), the rest keyword-only."""
  def positional(cls):
    return [(p.name, p.default)
            for p in inspect.signature(cls).parameters.values()
            if p.kind == p.POSITIONAL_OR_KEYWORD]

  native_class = declaration.native_class()
  bridged_class = getattr(tf_bridge.legacy, declaration.class_name)
  assert positional(bridged_class) == positional(native_class)
  names = [name for name, _ in positional(native_class)]
  arguments = [default for _, default in positional(native_class)]
  arguments[names.index("name")] = "mine"
  assert bridged_class(*arguments)._name == native_class(*arguments)._name  # pylint: disable=protected-access


@pytest.mark.parametrize("generation, name, kwargs", [
    ("keras", "Adam", {}), ("keras", "RMSprop", {"momentum": 0.5}),
    ("legacy", "Adam", {}), ("legacy", "SGD", {"momentum": 0.9}),
    ("legacy", "Adagrad", {}), ("legacy", "Ftrl", {}),
    ("legacy", "RMSprop", {"centered": True})])
def test_mixed_dtype_variable_lists(generation, name, kwargs):
  """One optimizer over float32, float64 and float16 variables at once (no
  policy): each updated in its dtype as native does, slots of its dtype."""
  keras3 = generation == "keras"
  make = keras.Variable if keras3 else tf.Variable
  dtypes = ("float32", "float64", "float16")
  rng = np.random.default_rng(3)
  start = [rng.standard_normal(4).astype(dtype) for dtype in dtypes]
  steps = [[rng.standard_normal(4).astype(dtype) for dtype in dtypes]
           for _ in range(3)]
  results = []
  for module in ((keras.optimizers, tf_bridge) if keras3 else
                 (tf_keras.optimizers.legacy, tf_bridge.legacy)):
    variables = [make(value) for value in start]
    optimizer = getattr(module, name)(**{"learning_rate": 0.1, **kwargs})
    for gradients in steps:
      optimizer.apply_gradients(zip([tf.constant(g) for g in gradients],
                                    variables))
    slots = optimizer.variables if keras3 else optimizer.variables()
    results.append(([v.numpy() for v in variables], sorted(
        str(v.dtype) for v in slots if tuple(v.shape) == (4,))))
  (native, native_slots), (bridged, bridged_slots) = results
  assert bridged_slots == native_slots
  for got, want, first, dtype in zip(bridged, native, start, dtypes):
    assert got.dtype == want.dtype == np.dtype(dtype)
    # float16: a few units of its rounding at the variables' scale (native
    # rounds its hyperparameters to float16 too). Native Keras 3 rounds part
    # of a float64 step through float32 (README, Known differences): a few
    # 1e-6 off after 3 steps.
    rtol, atol = {"float16": (8 * 2.0 ** -10, 4 * 2.0 ** -10),
                  "float64": (RTOL, 1e-5 if keras3 else ATOL)}.get(
                      dtype, (RTOL, ATOL))
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol,
                               atol=atol, err_msg=dtype)
    # Some element moved by 10 tolerances: a do-nothing step would fail.
    assert np.any(np.abs(want.astype(np.float64) - first)
                  > 10 * (atol + rtol * np.abs(want))), dtype


@pytest.mark.parametrize("generation, name", [
    ("keras", "Nadam"), ("keras", "Adafactor"), ("legacy", "Nadam")])
def test_float16_models_keep_natives_state(generation, name):
  """A float16 model (no policy): native keeps the state that is not a
  slot in float16 too (both Nadams' schedule product, in the first
  variable's dtype; Adafactor's factored moments, in their variable's), so
  the bridge does, with native's values after each step."""
  keras3 = generation == "keras"
  make = keras.Variable if keras3 else tf.Variable
  rng = np.random.default_rng(5)
  start = [rng.standard_normal((4, 3)).astype("float16"),
           rng.standard_normal(3).astype("float16")]
  steps = [[rng.standard_normal(v.shape).astype("float16") for v in start]
           for _ in range(3)]
  results = []
  for module in ((keras.optimizers, tf_bridge) if keras3 else
                 (tf_keras.optimizers.legacy, tf_bridge.legacy)):
    variables = [make(value) for value in start]
    optimizer = getattr(module, name)(learning_rate=0.1)
    for gradients in steps:
      optimizer.apply_gradients(zip([tf.constant(g) for g in gradients],
                                    variables))
    state = optimizer.variables if keras3 else optimizer.variables()
    results.append(([v.numpy() for v in variables],
                    [np.asarray(v.numpy()) for v in state]))
  (native, native_state), (bridged, bridged_state) = results
  assert [s.dtype for s in bridged_state] == [s.dtype for s in native_state]
  assert any(s.dtype == np.float16 and s.shape != v.shape
             for s in native_state for v in start)
  half = 2.0 ** -10
  for got, want in zip(bridged + bridged_state, native + native_state):
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=8 * half,
                               atol=4 * half)
  for got, first in zip(native, start):
    assert np.any(np.abs(got.astype(np.float64) - first) > 0.05)


_WITHOUT_THE_PROJECT = """
import importlib.abc, os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
os.environ["KERAS_BACKEND"] = "tensorflow"

class NotInstalled(importlib.abc.MetaPathFinder):
  def find_spec(self, name, path=None, target=None):
    if name.split(".")[0] in ("tf_bridge", "jaxopt_port"):
      raise ImportError(f"No module named {name!r}")

sys.meta_path.insert(0, NotInstalled())
import numpy as np
import keras
import tf_keras

data = np.load(sys.argv[1])
for index, path in enumerate(sys.argv[2:]):
  library = keras if path.endswith(".keras") else tf_keras
  model = library.models.load_model(path)
  model.fit(data["x"], data["y"], batch_size=8, epochs=1, verbose=0,
            shuffle=False)
  for position, weight in enumerate(model.get_weights()):
    np.save(f"{path}.{position}.npy", weight)
  print(type(model.optimizer).__module__, type(model.optimizer).__name__)
"""


def test_a_model_saved_with_its_native_optimizer_loads_without_the_project(
    tmp_path):
  """No lock-in: within `tf_bridge.native_optimizer(model)` a `.keras`,
  tf_keras `.h5` or SavedModel file holds the native twin with the bridged
  optimizer's state; a process that cannot import this project loads it
  with the native class, and from `.keras` and `.h5` files continues
  training on the bridged run's trajectory (a fresh optimizer state would
  part from it). A tf_keras SavedModel loses the slots at `fit` natively
  too (measured: 0.11 off the continued run), so only its class is
  checked."""
  import subprocess  # pylint: disable=import-outside-toplevel
  import sys  # pylint: disable=import-outside-toplevel
  np.savez(tmp_path / "data.npz", x=X, y=Y)
  files, continued = [], []
  for library, optimizer, suffix in (
      (keras, tf_bridge.Adam(0.05, amsgrad=True), ".keras"),
      (tf_keras, tf_bridge.legacy.RMSprop(0.05, momentum=0.5,
                                          centered=True), ".h5"),
      (tf_keras, tf_bridge.legacy.Adam(0.05), "_savedmodel")):
    model = _compiled(library, optimizer)
    model.fit(X, Y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    path = str(tmp_path / f"model{len(files)}{suffix}")
    with tf_bridge.native_optimizer(model) as twin:
      assert type(twin).__name__ == type(optimizer).__name__
      assert model.optimizer is twin
      model.save(path)
    assert model.optimizer is optimizer
    files.append(path)
    fresh = library.models.clone_model(model)
    fresh.set_weights(model.get_weights())
    fresh.compile(type(optimizer)(0.05, **{
        k: v for k, v in optimizer.get_config().items()
        if k in ("amsgrad", "momentum", "centered")}), "mse")
    fresh.fit(X, Y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    model.fit(X, Y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    continued.append((model.get_weights(), fresh.get_weights()))
  result = subprocess.run(
      [sys.executable, "-c", _WITHOUT_THE_PROJECT,
       str(tmp_path / "data.npz"), *files],
      capture_output=True, text=True, timeout=600, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  assert result.stdout.split("\n")[:3] == [
      "keras.src.optimizers.adam Adam",
      "tf_keras.src.optimizers.legacy.rmsprop RMSprop",
      "tf_keras.src.optimizers.legacy.adam Adam"]
  for path, (bridged, fresh) in zip(files[:2], continued):
    loaded = [np.load(f"{path}.{i}.npy") for i in range(len(bridged))]
    _assert_same(loaded, bridged)
    assert max(np.max(np.abs(a - b)) for a, b in zip(fresh, bridged)) > 1e-4


@pytest.mark.parametrize("make, message", [
    (lambda: tf_bridge.tf1.Adam(0.1), "Adam has no native twin"),
    (lambda: tf_bridge.legacy.addons.AdamW(0.1), "AdamW has no native twin"),
    (lambda: tf_bridge.Adam(skip_nonfinite=True),
     "Adam(skip_nonfinite=True) has no native twin"),
    (lambda: tf_bridge.keras_optimizer(jaxopt_port.vanilla_sgd,
                                       "HandWritten")(),
     "HandWritten has no native twin")])
def test_native_twin_refuses_what_native_cannot_hold(make, message):
  with pytest.raises(ValueError, match=re.escape(message)):
    tf_bridge.native_twin(make())


@pytest.mark.parametrize("declaration", [
    d for d in _layout_cases() if d.generation == "legacy"],
                         ids=lambda d: d.name)
def test_legacy_attributes_read_as_natives(declaration):
  """Native's public attributes read on the bridged class, and
  `epsilon=None` or 0 reads as native's `epsilon or backend.epsilon()`."""
  bridged_class = getattr(tf_bridge.legacy, declaration.class_name)
  native, bridged = declaration.make_native(), bridged_class(
      **declaration.required)
  public = {name for name in dir(native) if not name.startswith("_")}
  for name in public:
    if not callable(getattr(native, name)) and name not in (
        "iterations", "weights", "clipnorm", "clipvalue", "global_clipnorm"):
      assert outcome(lambda: getattr(bridged, name)) is None, name  # pylint: disable=cell-var-from-loop
  if "epsilon" in inspect.signature(type(native)).parameters:
    for epsilon in (None, 0.0):
      assert bridged_class(epsilon=epsilon).epsilon == (
          declaration.native_class()(epsilon=epsilon).epsilon)


@pytest.mark.parametrize("declaration", [
    d for d in _layout_cases() if d.generation == "legacy"],
                         ids=lambda d: d.name)
def test_legacy_dir_lists_natives_attributes(declaration):
  """`dir(optimizer)` lists every public name native's lists (OptimizerV2's
  hyperparameters, and plain attributes such as Adam's `epsilon`), each
  reading native's value."""
  native = declaration.make_native()
  bridged = getattr(tf_bridge.legacy, declaration.class_name)(
      **declaration.required)
  public = sorted(n for n in dir(native) if not n.startswith("_"))
  assert sorted(set(public) - set(dir(bridged))) == []
  for name in ("epsilon", "amsgrad", "nesterov", "centered"):
    if name in public:
      assert getattr(bridged, name) == getattr(native, name), name
