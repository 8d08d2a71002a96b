"""Keras's own machinery around a bridged optimizer: base arguments, weight
decay exclusions, positional arguments, one XLA call per step, skipped
variables, loss scaling, plain state variables, argument names."""

import gc
import weakref

import jax
import jaxopt_port
import keras
import numpy as np
import optax
import pytest
import tensorflow as tf
import tf_keras

import tf_bridge
import tf_bridge.legacy
from tf_bridge import testing

from bridge_cases import built_variables, problem, keras_trajectory


@pytest.fixture
def conversions(monkeypatch):
  """A list that grows by one each time the bridge converts a step with
  jax2tf: a step taken from another instance converts nothing."""
  converted = []
  convert = tf_bridge._compiled.to_tensorflow  # pylint: disable=protected-access
  monkeypatch.setattr(tf_bridge._compiled, "to_tensorflow",  # pylint: disable=protected-access
                      lambda *args, **kwargs: converted.append(1) or
                      convert(*args, **kwargs))
  return converted


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


def op_types(function):
  (concrete,) = function._list_all_concrete_functions()  # pylint: disable=protected-access
  return [op.type for op in concrete.graph.get_operations()]


@pytest.mark.parametrize("optimizer", [
    lambda: tf_bridge.Adam(), lambda: tf_bridge.legacy.RMSprop(momentum=0.9)],
    ids=["keras3", "legacy"])
def test_one_xla_call_traced_once(optimizer):
  # A step shared with an earlier test's optimizer may have been traced in
  # other contexts.
  tf_bridge._compiled._SHARED_STEPS.clear()  # pylint: disable=protected-access
  optimizer = optimizer()
  initial, gradients = problem(sparse=False)
  keras_trajectory(optimizer, initial, gradients[:3])
  steps = optimizer._fused._steps  # pylint: disable=protected-access
  ((step, apply, _),) = steps.values()
  assert op_types(step).count("XlaCallModule") == 1
  # Beside it only identities: an op TensorFlow's XLA compiler has no kernel
  # of its own for (jax2tf's PreventGradient on every output, without a
  # gradient) is lowered through its MLIR pipeline one op at a time, about
  # a second of ResNet-50's first step.
  assert set(op_types(step)) <= {"XlaCallModule", "Placeholder", "Identity",
                                 "IdentityN", "NoOp"}
  assert step.experimental_get_tracing_count() == 1
  assert apply.experimental_get_tracing_count() == 1


def _mixed_trajectory(optimizer, initial, gradients, change):
  """Steps 0, 1, 3, 4 eager, 2 and 5 in a tf.function; `change` (an
  attribute and its value) set before step 4. Also returns how many times
  each compiled step of a bridged optimizer was traced before step 3."""
  keras3 = isinstance(optimizer, keras.optimizers.Optimizer)
  variables = [(keras.Variable if keras3 else tf.Variable)(
      value, name=f"variable_{index}") for index, value in enumerate(initial)]

  def apply(step_gradients):
    testing.apply_gradients(optimizer, step_gradients, variables)

  traced, trajectory, tracings = tf.function(apply), [], None
  for step, step_gradients in enumerate(gradients[:6]):
    if step == 3 and hasattr(optimizer, "_fused"):
      steps = optimizer._fused._steps.values()  # pylint: disable=protected-access
      tracings = [compiled.experimental_get_tracing_count()
                  for _, compiled, _ in steps]
    if step == 4:
      setattr(optimizer, *change)
    (traced if step in (2, 5) else apply)(
        [tf.constant(g) for g in step_gradients])
    trajectory.append([np.array(keras.ops.convert_to_numpy(v))
                       for v in variables])
  return trajectory, tracings


@pytest.mark.parametrize("make,native,change", [
    (tf_bridge.Adam, keras.optimizers.Adam, ("beta_1", 0.5)),
    (lambda: tf_bridge.legacy.RMSprop(momentum=0.9),
     lambda: tf_keras.optimizers.legacy.RMSprop(momentum=0.9),
     ("epsilon", 0.1))], ids=["keras3", "legacy"])
def test_eager_and_traced_steps_share_the_compiled_step(make, native, change):
  # Eager steps call the compiled step's concrete function (cheaper than
  # the polymorphic call); steps inside a tf.function call it as before.
  # Both must run the one trace, and a changed hyperparameter a new one.
  tf_bridge._compiled._SHARED_STEPS.clear()  # pylint: disable=protected-access
  initial, gradients = problem(sparse=False)
  bridged, tracings = _mixed_trajectory(make(), initial, gradients, change)
  expected, _ = _mixed_trajectory(native(), initial, gradients, change)
  assert tracings == [1]
  testing.compare_trajectories(bridged, expected, rtol=1e-5, atol=1e-6,
                               actual_name="bridge")
  unchanged, _ = _mixed_trajectory(native(), initial, gradients,
                                   (change[0], getattr(native(), change[0])))
  with pytest.raises(AssertionError):
    testing.compare_trajectories(bridged, unchanged, rtol=1e-5, atol=1e-6)


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


@pytest.mark.parametrize("make,variable,native", [
    (lambda: tf_bridge.Adagrad(initial_accumulator_value=0.25),
     keras.Variable, lambda: keras.optimizers.Adagrad(
         initial_accumulator_value=0.25)),
    (lambda: tf_bridge.legacy.Adagrad(initial_accumulator_value=0.25),
     tf.Variable, lambda: tf_keras.optimizers.legacy.Adagrad(
         initial_accumulator_value=0.25)),
], ids=["keras3", "legacy"])
def test_building_creates_the_state_without_copies_in_numpy(make, variable,
                                                           native):
  # 4M floats (16 MB) per slot: the initial state used to be computed in JAX
  # and copied to numpy before TensorFlow copied it again (a large model's
  # state, twice, at its first step); a constant slot is now a fill.
  import tracemalloc  # pylint: disable=import-outside-toplevel
  optimizer = make()
  weights = [variable(np.ones((2048, 2048), np.float32))]
  tracemalloc.start()
  try:
    built = built_variables(optimizer, weights)
    _, peak = tracemalloc.get_traced_memory()
  finally:
    tracemalloc.stop()
  assert peak < 4 * 2**20, f"building traced {peak / 2**20:.1f} MB in numpy"
  expected = built_variables(
      native(), [variable(np.ones((2048, 2048), np.float32))])
  assert [(v.shape, v.dtype, np.array_equal(v, e))
          for v, e in zip(built, expected)] == [
              (e.shape, e.dtype, True) for e in expected]


def test_training_runs_no_jax_program():
  """The bridge traces and exports JAX; every step, and the state's
  creation, runs in TensorFlow. A JAX computation at build time (optax's
  `tree_map_params` calls `init` on a placeholder, and a JAX zero made
  there ran eagerly) would compile a program in JAX's runtime: memory and
  first-call time a native run does not pay. In a fresh process (JAX
  caches its programs), with each run equal to its native twin."""
  import json  # pylint: disable=import-outside-toplevel
  import pathlib  # pylint: disable=import-outside-toplevel
  import subprocess  # pylint: disable=import-outside-toplevel
  import sys  # pylint: disable=import-outside-toplevel
  script = pathlib.Path(__file__).parent / "scripts" / "jax_compiles.py"
  result = subprocess.run([sys.executable, str(script)], capture_output=True,
                          text=True, timeout=600, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  report = json.loads(result.stdout.strip().splitlines()[-1])
  assert report["compiled"] == []
  assert sorted(report["differences"]) == [
      "keras3-adam", "keras3-sgd-embedding", "legacy-adagrad-embedding"]
  for name, difference in report["differences"].items():
    assert difference < 1e-5 and report["moved"][name] > 0.05, (name, report)


def test_step_runs_where_jax_has_a_gpu_and_tensorflow_does_not(monkeypatch):
  """jax2tf exports for JAX's default backend unless told otherwise; with
  JAX on a GPU (jax[cuda]) and TensorFlow on the CPU, the step was exported
  for CUDA and TensorFlow refused to run it. Simulated by JAX's default
  export platform answering "cuda"; the bridge exports for TensorFlow's
  CPU and steps as native."""
  from jax._src.export import _export  # pylint: disable=import-outside-toplevel
  monkeypatch.setattr(_export, "default_export_platform", lambda: "cuda")
  start = np.array([1.0, -2.0, 3.0], np.float32)
  gradient = tf.constant([0.5, 0.25, -1.0])
  moved = []
  for optimizer in (tf_bridge.Adam(0.1), keras.optimizers.Adam(0.1)):
    variable = keras.Variable(start)
    optimizer.apply_gradients([(gradient, variable)])
    moved.append(variable.numpy())
  np.testing.assert_allclose(moved[0], moved[1], rtol=1e-6)
  assert np.max(np.abs(moved[1] - start)) > 0.05


@pytest.mark.parametrize("make,native", [
    (tf_bridge.Adam, keras.optimizers.Adam),
    (tf_bridge.legacy.Adam, tf_keras.optimizers.legacy.Adam),
], ids=["keras3", "legacy"])
def test_instances_of_one_program_share_its_compiled_step(make, native,
                                                          conversions):
  """A second optimizer that computes the same step (a model compiled
  again, a tuner's next trial) reuses the first one's converted and
  compiled step instead of paying its first call again; one with another
  constant hyperparameter converts its own (legacy's `beta_1` is not one:
  OptimizerV2 keeps it in a variable, fed to the step, so the program is
  the same). Inside a `tf.function`, so tf_keras creates its slots there: a
  shared step must not refer to the first instance's variables, gone by the
  second run. Each run equals its native twin."""
  initial, gradients = problem(sparse=False)

  def run(**arguments):
    testing.compare_trajectories(
        keras_trajectory(make(0.05, **arguments), initial, gradients[:3],
                         in_function=True),
        keras_trajectory(native(0.05, **arguments), initial, gradients[:3],
                         in_function=True),
        rtol=1e-5, atol=1e-6, actual_name="bridge", initial=initial)
    gc.collect()
    return len(conversions)

  first = run(beta_1=0.81, epsilon=0.01)
  assert first >= 1
  # The same program: nothing converted.
  assert run(beta_1=0.81, epsilon=0.01) == first
  assert run(beta_1=0.81, epsilon=0.02) > first


def test_a_shared_step_keeps_its_program_when_its_first_owner_changes():
  """The shared step replays the traced program: when the optimizer that
  traced it changes a hyperparameter (which makes its own next step a new
  program), another optimizer sharing the step keeps the old value. Both
  equal native optimizers changed the same way."""
  initial, gradients = problem(sparse=False)

  def trajectories(make):
    first, second = make(), make()
    variables = [[keras.Variable(value) for value in initial]
                 for _ in range(2)]
    trajectory = []
    for step, step_gradients in enumerate(gradients[:4]):
      if step == 2:
        first.beta_1 = 0.3
      for optimizer, owned in zip((first, second), variables):
        optimizer.apply_gradients(zip(
            [tf.constant(g) for g in step_gradients], owned))
      trajectory.append([keras.ops.convert_to_numpy(v) for owned in variables
                         for v in owned])
    return trajectory

  got = trajectories(lambda: tf_bridge.Adam(0.05, beta_1=0.84))
  want = trajectories(lambda: keras.optimizers.Adam(0.05, beta_1=0.84))
  testing.compare_trajectories(got, want, rtol=1e-5, atol=1e-6,
                               actual_name="bridge",
                               initial=[*initial, *initial])


@pytest.mark.parametrize("make,native", [
    (tf_bridge.Adam, keras.optimizers.Adam),
    (tf_bridge.legacy.Adam, tf_keras.optimizers.legacy.Adam),
], ids=["keras3", "legacy"])
def test_instances_share_the_step_whatever_their_variables_are_named(
    make, native, conversions):
  """Keras numbers a second model's layers on from the first's (`dense_12`
  after `dense_11`), and the transform sees the variables keyed by name, so
  the second model's step walks its variables (and keeps their slots) in
  another order: `w, w_1, w_10, w_11, w_2, ...` against `w_12, ..., w_23`.
  It is still the same program, and shared. The shapes repeat, so a slot
  fed to another variable's step would go unnoticed by a shape check; each
  trajectory equals its native twin's."""
  tf_bridge._compiled._SHARED_STEPS.clear()  # pylint: disable=protected-access
  shapes = [(3,), (3,), (2, 2), (3,), (3,), (4,), (3,), (3,), (2, 2), (3,),
            (3,), (3,)]
  initial, gradients = testing.seeded_problem(4, 5, 1.0, shapes)

  for first_name in (0, len(shapes)):
    names = [f"w_{index}" if index else "w" for index in
             range(first_name, first_name + len(shapes))]
    testing.compare_trajectories(
        keras_trajectory(make(0.05, beta_1=0.83), initial, gradients,
                         names=names),
        keras_trajectory(native(0.05, beta_1=0.83), initial, gradients,
                         names=names),
        rtol=1e-5, atol=1e-6, actual_name="bridge", initial=initial)
    if first_name == 0:
      first = len(conversions)
      assert first >= 1
  assert len(conversions) == first


@pytest.mark.parametrize("make,native,change", [
    (lambda: tf_bridge.Adagrad(0.05),
     lambda: keras.optimizers.Adagrad(0.05), {"epsilon": 0.5}),
    (lambda: tf_bridge.legacy.Adagrad(0.05),
     lambda: tf_keras.optimizers.legacy.Adagrad(0.05), {}),
], ids=["keras3", "legacy"])
def test_instances_share_a_sparse_step(make, native, change, conversions):
  """An embedding model built again in a process (a tuner's next trial)
  shares the first one's sparse step, whatever its variables are named. Its
  batches touch another number of rows, so the shared step is traced again
  for them: with the second instance's hyperparameters, whatever the first
  instance was set to since (Keras 3's `optimizer.epsilon = 0.5`). No
  batch repeats a row (Keras 3's TensorFlow backend mishandles that; see
  test_bridged_sparse)."""
  tf_bridge._compiled._SHARED_STEPS.clear()  # pylint: disable=protected-access
  initial = problem(sparse=False)[0]
  rng = np.random.default_rng(3)

  def batches(rows):
    return [[rng.standard_normal(np.shape(value)).astype(np.float32)
             for value in initial[:-1]]
            + [(rng.standard_normal((rows, 3)).astype(np.float32),
                rng.permutation(6)[:rows].astype(np.int32))]
            for _ in range(5)]

  first = None
  for names, steps in ((["w", "w_1", "w_2", "w_3"], batches(4)),
                       (["w_8", "w_9", "w_10", "w_11"], batches(3))):
    bridged = make()
    testing.compare_trajectories(
        keras_trajectory(bridged, initial, steps, sparse=True, names=names,
                         in_function=True),
        keras_trajectory(native(), initial, steps, sparse=True, names=names,
                         in_function=True),
        rtol=1e-5, atol=1e-6, actual_name="bridge", initial=initial)
    if first is None:
      first = len(conversions)
      assert first >= 1
      for name, value in change.items():
        setattr(bridged, name, value)
  assert len(conversions) == first


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_a_shared_step_lets_its_first_owner_go(sparse):
  """A shared step outlives the optimizer that built it, and must not keep
  it (and its slots, an embedding table's size each) alive: legacy SGD
  feeds its momentum from the host's hyperparameter."""

  def train():
    variable = tf.Variable(np.zeros((6, 3), np.float32))
    optimizer = tf_bridge.legacy.SGD(0.1, momentum=0.9)

    @tf.function
    def step():
      gradient = tf.IndexedSlices(tf.ones((2, 3)), tf.constant([1, 4]),
                                  tf.constant([6, 3]))
      optimizer.apply_gradients([(
          gradient if sparse else tf.convert_to_tensor(gradient), variable)])

    step()
    np.testing.assert_allclose(variable.numpy()[:2], [[0.0] * 3, [-0.1] * 3])
    # From a function whose frame then goes: a frame's locals, once read
    # (tracing does), keep their values until it ends.
    return weakref.ref(optimizer)

  owner = train()
  gc.collect()
  assert owner() is None


def test_a_sparse_step_running_another_bridged_optimizer_is_its_own():
  """A wrapper's sparse step traces its inner bridged optimizer's transform
  again for each new number of touched rows, with the inner optimizer's
  hyperparameters as they are then: shared, a second wrapper would step
  with the first one's inner momentum, changed since."""

  def lazy(inner, learning_rate=0.1):
    del learning_rate  # The inner transform takes it.
    return jaxopt_port.with_row_sparse_gradients(inner, "rows")

  wrapper_class = tf_bridge.keras_optimizer(lazy)

  def run(rows):
    inner = tf_bridge.SGD(0.1, momentum=0.5)
    variable = keras.Variable(np.zeros((4, 2), np.float32))
    optimizer = wrapper_class(inner)

    @tf.function
    def step():
      optimizer.apply([tf.IndexedSlices(tf.ones((rows, 2)), tf.range(rows),
                                        tf.constant([4, 2]))], [variable])

    step()
    step()
    inner.momentum = 0.9
    return keras.ops.convert_to_numpy(variable)

  # Momentum 0.5: -0.1, then 0.5 * -0.1 - 0.1.
  np.testing.assert_allclose(run(4), [[-0.25] * 2] * 4, rtol=1e-6)
  np.testing.assert_allclose(run(3), [[-0.25] * 2] * 3 + [[0.0] * 2],
                             rtol=1e-6)


def test_steps_differing_in_a_constant_inside_a_jitted_helper_are_not_shared():
  """A transform may call a jitted helper that closes over an array; the
  traced step shows that array's shape, not its values, so two instances
  whose helpers close over different values must not share one step."""

  def scaled_sgd(learning_rate=0.1, scale=1.0):
    factor = np.full((3,), scale, np.float32)
    scaled = jax.jit(lambda gradient: gradient * factor)

    def update(grads, state, params=None):
      del params
      return jax.tree.map(lambda g: -learning_rate * scaled(g), grads), state
    return optax.GradientTransformation(lambda params: optax.EmptyState(),
                                        update)

  optimizer_class = tf_bridge.keras_optimizer(scaled_sgd)
  for scale in (1.0, 2.0):
    variable = keras.Variable(np.zeros(3, np.float32))
    optimizer_class(scale=scale).apply([tf.ones(3)], [variable])
    np.testing.assert_allclose(keras.ops.convert_to_numpy(variable),
                               np.full(3, -0.1 * scale), rtol=1e-6)
