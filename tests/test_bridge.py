"""The bridged Keras classes: parity with native Keras and with the JAX port,
one fused XLA call per step, sparse gradients, and Keras's own machinery."""

import functools
import importlib
import typing

import jaxopt_port
import keras
import numpy as np
import optax
import pytest
import tensorflow as tf
import tf_keras

import tf_bridge
import tf_bridge.legacy
from tf_bridge import catalog, testing

STEPS = 50
SHAPES = ((), (5,), (4, 3), (6, 3))  # The last one gets sparse gradients.


def bridged_class(declaration):
  """The declaration's own class: Keras 3's for Keras 3 and TF1 ports,
  OptimizerV2's for legacy ones."""
  return getattr(importlib.import_module(declaration.bridge_path),
                 declaration.class_name)


@functools.lru_cache(maxsize=None)
def problem(sparse):
  initial, gradients = testing.seeded_problem(STEPS, 1, 1.0, SHAPES)
  if not sparse:
    return initial, gradients
  rng = np.random.default_rng(7)
  steps = []
  for step_gradients in gradients:
    rows = rng.integers(0, 6, size=3)
    indices = np.array([rows[0], rows[1], rows[0], rows[2]], np.int32)
    values = rng.standard_normal((4, 3)).astype(np.float32)
    steps.append(step_gradients[:3] + [(values, indices)])
  return initial, steps


def to_tensor(gradient, sparse):
  if isinstance(gradient, tuple):
    values, indices = gradient
    slices = tf.IndexedSlices(tf.constant(values), tf.constant(indices),
                              tf.constant([6, 3]))
    return slices if sparse else tf.convert_to_tensor(slices)
  return tf.constant(gradient)


def densify(gradients):
  return [[np.asarray(to_tensor(g, sparse=False)) for g in step]
          for step in gradients]


def keras_trajectory(optimizer, initial, gradients, *, sparse=False,
                     in_function=False):
  """Like `testing.native_trajectory`, with IndexedSlices and tf.function."""
  keras3 = isinstance(optimizer, keras.optimizers.Optimizer)
  variables = [(keras.Variable if keras3 else tf.Variable)(
      value, name=f"variable_{index}") for index, value in enumerate(initial)]

  def apply(step_gradients):
    testing.apply_gradients(optimizer, step_gradients, variables)

  if in_function:
    apply = tf.function(apply)
  trajectory = []
  for step_gradients in gradients:
    apply([to_tensor(g, sparse) for g in step_gradients])
    trajectory.append([np.array(keras.ops.convert_to_numpy(v))
                       for v in variables])
  return trajectory


class BridgedCase(typing.NamedTuple):
  declaration: catalog.Declaration
  optimizer_class: type
  legacy: bool  # An OptimizerV2 class.

  def make(self, **kwargs):
    return self.optimizer_class(**{**self.declaration.required, **kwargs})


def _all_classes():
  """Every bridged class: each declaration's own, and the OptimizerV2 hosts
  of Keras 3 algorithms legacy lacks, of TF1's and of TF Addons' optimizers."""
  for declaration in catalog.CATALOG:
    yield BridgedCase(declaration, bridged_class(declaration),
                      declaration.generation == catalog.LEGACY)
  for generation in (catalog.LEGACY, catalog.TF1, catalog.ADDONS):
    for declaration in catalog.legacy_hosted(generation):
      if declaration.generation != catalog.LEGACY:
        yield BridgedCase(
            declaration,
            getattr(importlib.import_module(declaration.legacy_bridge_path),
                    declaration.class_name), True)


ALL_CLASSES = list(_all_classes())
IDS = [f"{case.optimizer_class.__module__}.{case.optimizer_class.__name__}"
       .removeprefix("tf_bridge.").removeprefix("tf_bridge")
       for case in ALL_CLASSES]


def test_legacy_classes_never_stand_in_for_a_native_legacy_class():
  """A Keras 3 port is not OptimizerV2's algorithm of the same name."""
  assert hasattr(tf_bridge.legacy, "AdamW") and hasattr(tf_bridge.legacy,
                                                        "Lion")
  for declaration in catalog.CATALOG:
    legacy_class = getattr(tf_bridge.legacy, declaration.class_name, None)
    if legacy_class and hasattr(tf_keras.optimizers.legacy,
                                declaration.class_name):
      assert catalog.lookup(f"legacy.{declaration.port.__name__}")


@pytest.mark.parametrize("in_function", [False, True],
                         ids=["eager", "tf.function"])
@pytest.mark.parametrize("case", range(len(ALL_CLASSES)), ids=IDS)
def test_bridged_equals_native_and_port(case, in_function):
  declaration = ALL_CLASSES[case].declaration
  initial, gradients = problem(sparse=False)
  bridged = keras_trajectory(ALL_CLASSES[case].make(), initial, gradients,
                             in_function=in_function)
  port = testing.transform_trajectory(declaration.make_port(), initial,
                                      gradients)
  testing.compare_trajectories(bridged, port, rtol=1e-5, atol=1e-6,
                               actual_name="bridge", expected_name="port")
  if declaration.has_native:
    native = native_dense_trajectory(declaration, {}, gradients, in_function)
    testing.compare_trajectories(bridged, native, rtol=1e-5, atol=1e-6,
                                 actual_name="bridge",
                                 expected_name=declaration.native_path)


def native_dense_trajectory(declaration, kwargs, gradients, in_function):
  """The native class's trajectory on dense gradients, on its ground-truth
  backend (a subprocess on Keras's JAX backend for ScheduleFreeAdamW)."""
  initial = problem(sparse=False)[0]
  optimizer = declaration.make_native(**kwargs)
  if declaration.native_backend != "tensorflow":
    return testing.native_trajectory(optimizer, initial, gradients,
                                     backend=declaration.native_backend)
  return keras_trajectory(optimizer, initial, gradients,
                          in_function=in_function)


NATIVE = [d for d in catalog.CATALOG if d.has_native]
SPARSE_CASES = [(d, {}) for d in NATIVE] + [
    (catalog.lookup(name), {"momentum": 0.5})
    for name in ("sgd", "rmsprop", "legacy.sgd", "legacy.rmsprop")]


@pytest.mark.parametrize("in_function", [False, True],
                         ids=["eager", "tf.function"])
@pytest.mark.parametrize(
    "declaration,kwargs", SPARSE_CASES,
    ids=[d.name + ("-momentum" if k else "") for d, k in SPARSE_CASES])
def test_bridged_sparse(declaration, kwargs, in_function):
  """In tf.function; sparse gradients with duplicate indices summed.

  Legacy and TF1: the native sparse path is the ground truth (lazy where
  native is lazy). Keras 3: the native dense result is (the TensorFlow backend
  squares duplicate indices separately; DESIGN.md follows the JAX backend).
  """
  initial, gradients = problem(sparse=True)
  bridged = keras_trajectory(
      bridged_class(declaration)(**{**declaration.required, **kwargs}),
      initial, gradients, sparse=True, in_function=in_function)
  if declaration.generation != catalog.KERAS:
    native = keras_trajectory(declaration.make_native(**kwargs), initial,
                              gradients, sparse=True, in_function=in_function)
  else:
    native = native_dense_trajectory(declaration, kwargs, densify(gradients),
                                     in_function)
  testing.compare_trajectories(bridged, native, rtol=1e-5, atol=1e-6,
                               actual_name="bridge",
                               expected_name=declaration.native_path)


def test_sparse_ground_truths_differ_from_dense():
  """The sparse cases above can fail: lazy legacy SGD and Keras 3 Adam on
  duplicates both leave the dense trajectory."""
  initial, gradients = problem(sparse=True)
  for native in (tf_keras.optimizers.legacy.SGD(momentum=0.9),
                 keras.optimizers.Adam()):
    sparse = keras_trajectory(native, initial, gradients, sparse=True)
    dense = keras_trajectory(type(native).from_config(native.get_config()),
                             initial, densify(gradients))
    with pytest.raises(AssertionError, match="variable 3"):
      testing.compare_trajectories(sparse, dense, rtol=1e-5, atol=1e-6)
  lazy = keras_trajectory(tf_bridge.legacy.SGD(momentum=0.9), initial,
                          gradients, sparse=True)
  touched = set()
  for step, (_, indices) in enumerate(g[3] for g in gradients):
    untouched = sorted(set(range(6)) - set(indices.tolist()))
    before = initial[3] if step == 0 else lazy[step - 1][3]
    np.testing.assert_array_equal(lazy[step][3][untouched], before[untouched])
    touched |= set(indices.tolist())
  assert touched == set(range(6))


@pytest.mark.parametrize("make,native", [
    (lambda: tf_bridge.Adam(amsgrad=True, beta_2=0.9, weight_decay=0.1,
                            clipnorm=0.5, use_ema=True,
                            ema_overwrite_frequency=3,
                            gradient_accumulation_steps=2),
     lambda: keras.optimizers.Adam(amsgrad=True, beta_2=0.9, weight_decay=0.1,
                                   clipnorm=0.5, use_ema=True,
                                   ema_overwrite_frequency=3,
                                   gradient_accumulation_steps=2)),
    (lambda: tf_bridge.SGD(
        keras.optimizers.schedules.ExponentialDecay(0.05, 10, 0.5),
        momentum=0.9, global_clipnorm=1.0),
     lambda: keras.optimizers.SGD(
         keras.optimizers.schedules.ExponentialDecay(0.05, 10, 0.5),
         momentum=0.9, global_clipnorm=1.0)),
    (lambda: tf_bridge.legacy.Adam(decay=0.05, clipnorm=0.5, clipvalue=0.3),
     lambda: tf_keras.optimizers.legacy.Adam(decay=0.05, clipnorm=0.5,
                                             clipvalue=0.3)),
    (lambda: tf_bridge.legacy.RMSprop(
        tf_keras.optimizers.schedules.InverseTimeDecay(0.01, 5, 0.5),
        momentum=0.5, centered=True),
     lambda: tf_keras.optimizers.legacy.RMSprop(
         tf_keras.optimizers.schedules.InverseTimeDecay(0.01, 5, 0.5),
         momentum=0.5, centered=True)),
], ids=["keras3-base-arguments", "keras3-schedule", "legacy-decay-clip",
        "legacy-schedule"])
def test_keras_base_features_around_the_bridge(make, native):
  initial, gradients = problem(sparse=False)
  testing.compare_trajectories(
      keras_trajectory(make(), initial, gradients, in_function=True),
      keras_trajectory(native(), initial, gradients, in_function=True),
      rtol=1e-5, atol=1e-6, actual_name="bridge")


def test_exclude_from_weight_decay():
  initial, gradients = problem(sparse=False)
  trajectories = []
  for optimizer in (tf_bridge.AdamW(0.01, weight_decay=0.5),
                    keras.optimizers.AdamW(0.01, weight_decay=0.5)):
    optimizer.exclude_from_weight_decay(var_names=["variable_2"])
    trajectories.append(keras_trajectory(optimizer, initial, gradients))
  testing.compare_trajectories(*trajectories, rtol=1e-5, atol=1e-6,
                               actual_name="bridge")
  decayed_everywhere = keras_trajectory(tf_bridge.AdamW(0.01, weight_decay=0.5),
                                        initial, gradients)
  with pytest.raises(AssertionError, match="variable 2"):
    testing.compare_trajectories(decayed_everywhere, trajectories[1],
                                 rtol=1e-5, atol=1e-6)


def test_positional_arguments_follow_keras():
  assert tf_bridge.AdamW(0.01, 0.1, 0.8, name="a").get_config() == (
      tf_bridge.AdamW(learning_rate=0.01, weight_decay=0.1, beta_1=0.8,
                      name="a").get_config())
  native = keras.optimizers.AdamW(0.01, 0.1, 0.8)
  assert native.weight_decay == 0.1 and native.beta_1 == 0.8
  legacy = tf_bridge.legacy.RMSprop(0.01, 0.8, 0.5).get_config()
  assert (legacy["rho"], legacy["momentum"]) == (0.8, 0.5)
  with pytest.raises(TypeError, match="got multiple values for argument "
                     "'learning_rate'"):
    tf_bridge.SGD(0.1, learning_rate=0.2)


def xla_call_module_count(function):
  (concrete,) = function._list_all_concrete_functions()  # pylint: disable=protected-access
  return sum(op.type == "XlaCallModule"
             for op in concrete.graph.get_operations())


@pytest.mark.parametrize("optimizer", [
    lambda: tf_bridge.Adam(), lambda: tf_bridge.legacy.RMSprop(momentum=0.9)],
    ids=["keras3", "legacy"])
def test_one_xla_call_traced_once(optimizer):
  optimizer = optimizer()
  initial, gradients = problem(sparse=False)
  keras_trajectory(optimizer, initial, gradients[:3])
  steps = optimizer._fused._steps  # pylint: disable=protected-access
  (step,) = [step for key, step in steps.items() if key[0] != "apply"]
  (apply,) = [step for key, step in steps.items() if key[0] == "apply"]
  assert xla_call_module_count(step) == 1
  assert step.experimental_get_tracing_count() == 1
  assert apply.experimental_get_tracing_count() == 1


def test_a_variable_without_gradient_is_skipped():
  variables = [keras.Variable(np.ones(3, np.float32), name="a"),
               keras.Variable(np.ones(2, np.float32), name="b")]
  optimizer = tf_bridge.Adam(0.1)
  optimizer.build(variables)
  optimizer.apply([tf.ones(3), tf.ones(2)], variables)
  b_before = keras.ops.convert_to_numpy(variables[1]).copy()
  slots_before = [keras.ops.convert_to_numpy(v).copy()
                  for v in optimizer.variables if "b_" in v.path]
  with pytest.warns(UserWarning, match=r"Gradients do not exist for "
                    r"variables \['b'\]"):  # Keras's own semantics.
    optimizer.apply_gradients([(tf.ones(3), variables[0]),
                               (None, variables[1])])
  np.testing.assert_array_equal(keras.ops.convert_to_numpy(variables[1]),
                                b_before)
  slots_after = [keras.ops.convert_to_numpy(v) for v in optimizer.variables
                 if "b_" in v.path]
  assert len(slots_after) == len(slots_before) == 2
  for after, before in zip(slots_after, slots_before):
    np.testing.assert_array_equal(after, before)
  # `a` took both steps: Adam moves by the learning rate on constant grads.
  np.testing.assert_allclose(keras.ops.convert_to_numpy(variables[0]), 0.8,
                             rtol=1e-5)


# --- model.fit ---------------------------------------------------------------

VOCABULARY = 320


def fit_data():
  """Every token id once, so no batch has duplicate indices (where Keras 3's
  TensorFlow backend is defective; see test_bridged_sparse)."""
  rng = np.random.default_rng(0)
  tokens = rng.permutation(VOCABULARY).reshape(64, 5).astype(np.int32)
  targets = rng.standard_normal((64, 1)).astype(np.float32)
  return tokens, targets


def make_model(layers_module, models_module, seed=0):
  rng = np.random.default_rng(seed)
  model = models_module.Sequential([
      layers_module.Input((5,), dtype="int32"),
      layers_module.Embedding(VOCABULARY, 4),
      layers_module.GlobalAveragePooling1D(),
      layers_module.Dense(8, activation="tanh"),
      layers_module.Dense(1)])
  model.set_weights([rng.standard_normal(w.shape).astype(np.float32) * 0.5
                     for w in model.get_weights()])
  return model


def fit(optimizer, legacy, callbacks=(), jit_compile=False, epochs=3):
  tokens, targets = fit_data()
  if legacy:
    model = make_model(tf_keras.layers, tf_keras)
    model.compile(optimizer=optimizer, loss="mse")
  else:
    model = make_model(keras.layers, keras)
    model.compile(optimizer=optimizer, loss="mse", jit_compile=jit_compile)
  model.fit(tokens, targets, batch_size=16, epochs=epochs, shuffle=False,
            verbose=0, callbacks=list(callbacks))
  return model


FIT_ARGUMENTS = {"SGD": {"momentum": 0.9}, "RMSprop": {"momentum": 0.5},
                 "Adadelta": {"learning_rate": 1.0}}


def saved_and_loaded(model, legacy, directory):
  # tf_keras restores optimizer slots from `.keras` files only at the next
  # step; HDF5 restores them at load.
  path = str(directory / ("model.h5" if legacy else "model.keras"))
  model.save(path)
  return (tf_keras.models.load_model(path) if legacy
          else keras.models.load_model(path))


def optimizer_values(optimizer):
  variables = optimizer.variables
  return [keras.ops.convert_to_numpy(v)
          for v in (variables() if callable(variables) else variables)]


@pytest.mark.filterwarnings("ignore:You are saving your model as an HDF5")
@pytest.mark.parametrize("case", range(len(ALL_CLASSES)), ids=IDS)
def test_every_class_fits_saves_and_loads(case, tmp_path):
  """`model.fit` equals the native class's (same generation, where one
  exists); `model.save` then `load_model` restores the optimizer's state bit
  for bit, and training continues identically."""
  declaration, _, legacy = ALL_CLASSES[case]
  kwargs = {"learning_rate": 0.05,
            **FIT_ARGUMENTS.get(declaration.class_name, {})}
  model = fit(ALL_CLASSES[case].make(**kwargs), legacy, epochs=1)
  native_host = {catalog.KERAS: False, catalog.LEGACY: True}.get(
      declaration.generation)
  if (declaration.has_native and native_host == legacy
      and declaration.native_backend == "tensorflow"):
    native = fit(declaration.make_native(**kwargs), legacy, epochs=1)
    for got, want in zip(model.get_weights(), native.get_weights()):
      np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
  loaded = saved_and_loaded(model, legacy, tmp_path)
  assert type(loaded.optimizer) is type(model.optimizer)
  saved, restored = (optimizer_values(m.optimizer) for m in (model, loaded))
  assert len(saved) == len(restored) >= 1
  for a, b in zip(saved, restored):
    np.testing.assert_array_equal(a, b)
  tokens, targets = fit_data()
  for m in (model, loaded):
    m.fit(tokens, targets, batch_size=16, epochs=1, shuffle=False, verbose=0)
  for a, b in zip(model.get_weights(), loaded.get_weights()):
    np.testing.assert_array_equal(a, b)


def test_model_fit_with_jit_compile():
  bridged = fit(tf_bridge.Adam(0.05), legacy=False, jit_compile=True)
  native = fit(keras.optimizers.Adam(0.05), legacy=False, jit_compile=True)
  for got, want in zip(bridged.get_weights(), native.get_weights()):
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("legacy", [False, True], ids=["keras3", "legacy"])
def test_learning_rate_callbacks(legacy):
  callbacks_module = tf_keras.callbacks if legacy else keras.callbacks

  def callbacks():
    return [callbacks_module.LearningRateScheduler(
        lambda epoch, rate: rate * 0.5 if epoch else rate),
            callbacks_module.ReduceLROnPlateau(monitor="loss", factor=0.1,
                                               patience=0, min_delta=10.0)]

  module = tf_bridge.legacy if legacy else tf_bridge
  native_module = tf_keras.optimizers.legacy if legacy else keras.optimizers
  bridged = fit(module.Adam(0.05), legacy, callbacks(), epochs=4)
  native = fit(native_module.Adam(0.05), legacy, callbacks(), epochs=4)
  rate = float(keras.ops.convert_to_numpy(bridged.optimizer.learning_rate))
  assert rate == pytest.approx(float(keras.ops.convert_to_numpy(
      native.optimizer.learning_rate)))
  assert rate < 0.05 * 0.5 ** 3  # Both callbacks acted.
  for got, want in zip(bridged.get_weights(), native.get_weights()):
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


# --- serialization and checkpoints --------------------------------------------

def test_get_config_round_trips():
  optimizer = tf_bridge.RMSprop(0.01, momentum=0.5, centered=True,
                                clipnorm=2.0, use_ema=True)
  config = optimizer.get_config()
  assert config["momentum"] == 0.5 and config["centered"] is True
  assert config["clipnorm"] == 2.0 and config["use_ema"] is True
  clone = keras.optimizers.deserialize(keras.optimizers.serialize(optimizer))
  assert type(clone) is tf_bridge.RMSprop
  assert clone.get_config() == config
  legacy = tf_bridge.legacy.Adam(0.01, amsgrad=True, decay=0.1, clipvalue=1.0)
  clone = tf_bridge.legacy.Adam.from_config(legacy.get_config())
  assert clone.get_config() == legacy.get_config()


def test_bad_constructor_arguments():
  with pytest.raises(TypeError, match=r"Adam\(\) got unexpected keyword "
                     r"argument\(s\) \['betta_1'\]"):
    tf_bridge.Adam(betta_1=0.9)
  with pytest.raises(ValueError, match=r"`beta_1` must be in \[0, 1\)"):
    tf_bridge.legacy.Adam(beta_1=1.5)


@pytest.mark.parametrize("legacy", [False, True], ids=["keras3", "legacy"])
def test_checkpoint_resume_equals_uninterrupted(legacy, tmp_path):
  module = tf_bridge.legacy if legacy else tf_bridge
  layers, models = ((tf_keras.layers, tf_keras) if legacy
                    else (keras.layers, keras))
  tokens, targets = fit_data()

  def compiled(seed=0):
    model = make_model(layers, models, seed)
    model.compile(optimizer=module.Adam(0.05, amsgrad=True), loss="mse")
    return model

  def train(model):
    model.fit(tokens, targets, batch_size=16, epochs=1, shuffle=False,
              verbose=0)

  straight = compiled()
  train(straight)
  train(straight)

  first = compiled()
  train(first)
  path = tf.train.Checkpoint(model=first, optimizer=first.optimizer).save(
      str(tmp_path / "ckpt"))
  resumed = compiled(seed=1)  # Other weights, to be overwritten.
  if not legacy:  # Keras 3 creates its variables at build, before restoring.
    resumed.optimizer.build(resumed.trainable_variables)
  tf.train.Checkpoint(model=resumed, optimizer=resumed.optimizer).restore(
      path).expect_partial()
  train(resumed)
  for a, b in zip(straight.get_weights(), resumed.get_weights()):
    np.testing.assert_array_equal(a, b)


# --- a user's own optimizer --------------------------------------------------

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


# --- mixed precision -----------------------------------------------------------

@pytest.mark.parametrize("legacy", [False, True], ids=["keras3", "legacy"])
def test_loss_scale_optimizer_wraps_a_bridged_optimizer(legacy):
  """mixed_float16: LossScaleOptimizer scales, skips overflows, unscales."""
  precision = tf_keras.mixed_precision if legacy else keras.mixed_precision
  layers, models = (tf_keras.layers, tf_keras) if legacy else (keras.layers,
                                                                keras)
  bridged_module = tf_bridge.legacy if legacy else tf_bridge
  native_module = tf_keras.optimizers.legacy if legacy else keras.optimizers
  rng = np.random.default_rng(0)
  inputs = rng.standard_normal((64, 8)).astype(np.float32)
  targets = rng.standard_normal((64, 1)).astype(np.float32)
  initial = None

  def run(optimizer):
    nonlocal initial
    model = models.Sequential([layers.Input((8,)),
                               layers.Dense(16, activation="relu"),
                               layers.Dense(1, dtype="float32")])
    initial = initial or [rng.standard_normal(w.shape).astype(np.float32) * 0.3
                          for w in model.get_weights()]
    model.set_weights(initial)
    model.compile(optimizer=precision.LossScaleOptimizer(optimizer),
                  loss="mse")
    model.fit(inputs, targets, batch_size=16, epochs=2, shuffle=False,
              verbose=0)
    return model

  previous = precision.global_policy()
  precision.set_global_policy("mixed_float16")
  try:
    bridged = run(bridged_module.Adam(0.01))
    native = run(native_module.Adam(0.01))
  finally:
    precision.set_global_policy(previous)
  assert bridged.layers[0].compute_dtype == "float16"
  inner = bridged.optimizer.inner_optimizer
  assert type(inner) is bridged_module.Adam
  for got, want in zip(bridged.get_weights(), native.get_weights()):
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


def factored_second_moment(learning_rate=0.01):
  """A user's transform whose per-parameter state is not parameter-shaped
  (optax's factored Adafactor moments: row and column vectors)."""
  return optax.chain(optax.scale_by_factored_rms(min_dim_size_to_factor=2),
                     optax.scale_by_learning_rate(learning_rate))


@pytest.mark.parametrize("legacy", [False, True], ids=["keras3", "legacy"])
def test_state_leaves_of_other_shapes_are_plain_variables(legacy):
  module = tf_bridge.legacy if legacy else tf_bridge
  optimizer_class = module.keras_optimizer(
      factored_second_moment, name=f"Factored{'Legacy' if legacy else ''}")
  initial, gradients = problem(sparse=False)
  bridged = keras_trajectory(optimizer_class(), initial, gradients[:10])
  port = testing.transform_trajectory(factored_second_moment(), initial,
                                      gradients[:10])
  testing.compare_trajectories(bridged, port, rtol=1e-5, atol=1e-6)


# --- TF Addons' lazy sparse updates ---------------------------------------------

@pytest.mark.parametrize("legacy", [False, True], ids=["keras3", "legacy"])
def test_lazy_adam_updates_only_touched_rows(legacy):
  """TFA's LazyAdam on IndexedSlices (duplicates summed): the touched rows
  follow TFA's sparse formula (numpy here), untouched rows of the variable
  and of `m` and `v` stay bit for bit."""
  initial, gradients = problem(sparse=True)
  module = tf_bridge.legacy.addons if legacy else tf_bridge.addons
  optimizer = module.LazyAdam(0.01)
  variable = (tf.Variable if legacy else keras.Variable)(initial[3],
                                                         name="embedding")
  value = initial[3].astype(np.float64)
  m, v = np.zeros_like(value), np.zeros_like(value)
  slots_before = None
  for t, step_gradients in enumerate(gradients, 1):
    values, indices = step_gradients[3]
    rows = np.unique(indices)
    summed = np.zeros_like(value)
    np.add.at(summed, indices, values)
    alpha = 0.01 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
    m[rows] = 0.9 * m[rows] + 0.1 * summed[rows]
    v[rows] = 0.999 * v[rows] + 0.001 * summed[rows] ** 2
    value[rows] -= alpha * m[rows] / (np.sqrt(v[rows]) + 1e-7)
    before = np.array(variable.numpy())
    testing.apply_gradients(optimizer, [to_tensor(step_gradients[3], True)],
                            [variable])
    after = np.array(variable.numpy())
    untouched = sorted(set(range(6)) - set(rows.tolist()))
    np.testing.assert_array_equal(after[untouched], before[untouched])
    slots = [np.array(s) for s in optimizer_values(optimizer)
             if np.shape(s) == value.shape]
    assert len(slots) == 2  # m and v.
    if slots_before is not None:
      for slot, old in zip(slots, slots_before):
        np.testing.assert_array_equal(slot[untouched], old[untouched])
    slots_before = slots
    np.testing.assert_allclose(after, value, rtol=1e-5, atol=1e-6)


def test_an_algorithm_argument_named_like_a_host_argument_stays_its_own():
  """TF1 RMSProp's `decay` is its mean-square decay, not OptimizerV2's
  learning-rate decay; TFA AdamW's `weight_decay` is TFA's (not scaled by the
  learning rate), not Keras 3's."""
  import tf_bridge.addons  # pylint: disable=import-outside-toplevel
  import tf_bridge.legacy.tf1  # pylint: disable=import-outside-toplevel
  initial, gradients = problem(sparse=False)
  bridged = tf_bridge.legacy.tf1.RMSProp(0.01, decay=0.5)
  assert bridged.get_config()["decay"] == 0.5
  testing.compare_trajectories(
      keras_trajectory(bridged, initial, gradients),
      testing.native_trajectory(
          tf.compat.v1.train.RMSPropOptimizer(0.01, decay=0.5), initial,
          gradients), rtol=1e-5, atol=1e-6, actual_name="bridge")
  adamw = tf_bridge.addons.AdamW(0.1, 0.01)
  assert adamw.weight_decay is None  # Keras's own decay stays off.
  testing.compare_trajectories(
      keras_trajectory(adamw, initial, gradients),
      testing.transform_trajectory(jaxopt_port.addons.adamw(0.1, 0.01),
                                   initial, gradients),
      rtol=1e-5, atol=1e-6, actual_name="bridge", expected_name="port")
