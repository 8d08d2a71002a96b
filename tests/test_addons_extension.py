"""TF Addons' base classes for users' own optimizers, on
`tf_bridge.legacy.addons`: `DecoupledWeightDecayExtension` (and
`extend_with_decoupled_weight_decay` of a class without a bridged twin),
`AveragedOptimizerWrapper` and `KerasLegacyOptimizer`, each against TFA's
formula in numpy and against the bridged classes where they overlap."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

import tf_bridge.legacy
import tf_bridge.legacy.addons as tfa
from tf_bridge import testing
from test_addons import adam_numpy, decoupled_numpy

WEIGHT_DECAY, LEARNING_RATE = 0.05, 0.01


class NativeAdamW(tfa.DecoupledWeightDecayExtension,
                  tf_keras.optimizers.legacy.Adam):
  """TFA's own pattern for AdamW (its docstring's example)."""

  def __init__(self, weight_decay, *args, **kwargs):
    super().__init__(weight_decay, *args, **kwargs)


class SignSGD(tf_keras.optimizers.legacy.Optimizer):
  """A user's OptimizerV2 with no port: p <- p - lr * sign(g)."""

  def __init__(self, learning_rate=0.01, name="SignSGD", **kwargs):
    super().__init__(name, **kwargs)
    self._set_hyper("learning_rate", learning_rate)

  def _resource_apply_dense(self, grad, var, apply_state=None):
    return var.assign_sub(self._decayed_lr(var.dtype) * tf.sign(grad))

  def _resource_apply_sparse(self, grad, var, indices, apply_state=None):
    return self._resource_scatter_add(
        var, indices, -self._decayed_lr(var.dtype) * tf.sign(grad))

  def get_config(self):
    return {**super().get_config(),
            "learning_rate": self._serialize_hyperparameter("learning_rate")}


def variables_of(initial):
  return [tf.Variable(v, name=f"v{i}") for i, v in enumerate(initial)]


@pytest.mark.parametrize("in_function", [False, True],
                         ids=["eager", "tf.function"])
def test_mixin_on_a_native_class_is_tfa_adamw(in_function):
  """`class MyAdamW(DecoupledWeightDecayExtension, legacy.Adam)`: the
  listed variables (`apply_gradients`/`minimize`'s `decay_var_list`) follow
  AdamW's formula, the others Adam's; an exclusion pattern keeps its
  matches undecayed; equal to the bridged `tfa.AdamW` with the same lists."""
  initial, gradients = testing.seeded_problem(12, seed=21, grad_scale=1.0)
  adamw, adam = decoupled_numpy(adam_numpy(), WEIGHT_DECAY), adam_numpy()
  native = NativeAdamW(WEIGHT_DECAY, learning_rate=LEARNING_RATE,
                       exclude_from_weight_decay=["v1"])
  bridged = tfa.AdamW(WEIGHT_DECAY, LEARNING_RATE,
                      exclude_from_weight_decay=["v1"])
  runs = {"native": (native, variables_of(initial)),
          "bridged": (bridged, variables_of(initial))}
  want = [v.astype(np.float64) for v in initial]
  states = [{} for _ in initial]

  def apply_with(optimizer, variables):
    def apply(grads, decayed):
      optimizer.apply_gradients(zip(grads, variables), decay_var_list=[
          variables[i] for i in decayed])
    return tf.function(apply) if in_function else apply

  applies = {label: apply_with(*run) for label, run in runs.items()}
  for t, step in enumerate(gradients, 1):
    decayed = [(0, 2), (1,), (), (0, 1, 2)][t % 4]
    for label, (optimizer, variables) in runs.items():
      if t % 3 or in_function:
        applies[label]([tf.constant(g) for g in step], decayed)
      else:
        optimizer.minimize(
            lambda v=variables, s=step: sum(
                tf.reduce_sum(x * g) for x, g in zip(v, s)),
            variables, decay_var_list=[variables[i] for i in decayed])
    # No list: all but the excluded v1 decay.
    listed = decayed or (0, 2)
    for i, g in enumerate(step):
      rule = adamw if i in listed else adam
      want[i] = rule(want[i], g.astype(np.float64), states[i], LEARNING_RATE,
                     t)
    for label, (_, variables) in runs.items():
      for i, variable in enumerate(variables):
        np.testing.assert_allclose(variable.numpy(), want[i], rtol=1e-5,
                                   atol=1e-6, err_msg=f"{label} step {t} v{i}")
  moved = max(np.max(np.abs(w - v)) for w, v in zip(want, initial))
  assert moved > 1e3 * 1e-5


def test_mixin_decays_only_touched_rows_of_a_sparse_gradient():
  """TFA's sparse path on a native base: the touched rows decay, then
  native legacy Adam's sparse kernel runs; equal to the bridged AdamW."""
  rng = np.random.default_rng(22)
  value = rng.standard_normal((6, 3)).astype(np.float32)
  native_variable, bridged_variable = tf.Variable(value), tf.Variable(value)
  native = NativeAdamW(WEIGHT_DECAY, learning_rate=0.05)
  bridged = tfa.AdamW(WEIGHT_DECAY, 0.05)
  untouched = value.copy()
  for _ in range(10):
    indices = rng.integers(0, 5, size=4).astype(np.int32)  # Row 5 never.
    grad = tf.IndexedSlices(
        tf.constant(rng.standard_normal((4, 3)).astype(np.float32)),
        tf.constant(indices), tf.constant([6, 3]))
    native.apply_gradients([(grad, native_variable)])
    bridged.apply_gradients([(grad, bridged_variable)])
    np.testing.assert_allclose(native_variable.numpy(),
                               bridged_variable.numpy(), rtol=1e-5,
                               atol=1e-6)
  # Row 5 never had a gradient: Adam moves it by its moments only (zero),
  # and no decay touched it.
  np.testing.assert_array_equal(native_variable.numpy()[5], untouched[5])
  assert np.max(np.abs(native_variable.numpy() - value)) > 0.1


def test_extending_a_user_optimizer_runs_its_kernels_after_the_decay():
  """`extend_with_decoupled_weight_decay` of a user's OptimizerV2 (no
  bridged twin): TFA's class, `weight_decay` first, here a schedule read at
  `iterations` before each step; dense and sparse kernels; its config
  round-trips and the restored optimizer continues the same run."""
  extended = tfa.extend_with_decoupled_weight_decay(SignSGD)
  assert issubclass(extended, (tfa.DecoupledWeightDecayExtension, SignSGD))
  assert extended is tfa.extend_with_decoupled_weight_decay(SignSGD)
  schedule = tf_keras.optimizers.schedules.InverseTimeDecay(0.1, 1, 0.5)
  optimizer = extended(schedule, learning_rate=0.02)
  initial, gradients = testing.seeded_problem(8, seed=23, grad_scale=1.0)
  variables = variables_of(initial)
  want = [v.astype(np.float64) for v in initial]
  for t, step in enumerate(gradients):
    optimizer.apply_gradients(zip([tf.constant(g) for g in step], variables))
    decay = 0.1 / (1 + 0.5 * t)
    want = [p - decay * p - 0.02 * np.sign(g) for p, g in zip(want, step)]
  for variable, expected in zip(variables, want):
    np.testing.assert_allclose(variable.numpy(), expected, rtol=1e-5,
                               atol=1e-6)
  config = optimizer.get_config()
  assert config["weight_decay"]["class_name"] == "InverseTimeDecay"
  restored = extended.from_config(config)
  assert isinstance(restored._get_hyper("weight_decay"),  # pylint: disable=protected-access
                    tf_keras.optimizers.schedules.InverseTimeDecay)
  # Sparse: only the touched rows decay and step.
  row_variable = tf.Variable(np.ones((4, 2), np.float32))
  restored.apply_gradients([(tf.IndexedSlices(
      tf.constant([[1.0, -1.0]]), tf.constant([2]), tf.constant([4, 2])),
                             row_variable)])
  expected = np.ones((4, 2))
  expected[2] = 1 - 0.1 - 0.02 * np.array([1.0, -1.0])
  np.testing.assert_allclose(row_variable.numpy(), expected, rtol=1e-6)


def test_extending_a_class_named_as_a_native_one_keeps_its_kernels():
  """A user's subclass that shares a native class's name is not its
  bridged twin: its own kernels run."""

  class Adam(tf_keras.optimizers.legacy.Adam):  # pylint: disable=missing-class-docstring

    def _resource_apply_dense(self, grad, var, apply_state=None):
      return var.assign_sub(grad)

  extended = tfa.extend_with_decoupled_weight_decay(Adam)
  assert issubclass(extended, Adam)
  variable = tf.Variable([1.0, 2.0])
  extended(0.5).apply_gradients([(tf.constant([1.0, 1.0]), variable)])
  np.testing.assert_allclose(variable.numpy(), [1.0 - 0.5 - 1.0,
                                                2.0 - 1.0 - 1.0])


def test_mixin_on_a_bridged_class_is_refused():
  with pytest.raises(TypeError, match=r"BridgedAdamW: "
                     r"DecoupledWeightDecayExtension decays a native "
                     r"OptimizerV2 class's variables in TensorFlow ops; Adam "
                     r"is a bridged class\. Use tf_bridge\.legacy\.addons\."
                     r"extend_with_decoupled_weight_decay\(Adam\)"):

    class BridgedAdamW(tfa.DecoupledWeightDecayExtension,  # pylint: disable=unused-variable
                       tf_bridge.legacy.Adam):
      pass


class RunningMean(tfa.AveragedOptimizerWrapper):
  """A user's averaging wrapper: the mean of the iterates so far."""

  def average_op(self, var, average_var, local_apply_state):
    count = tf.cast(self.iterations + 1, var.dtype)
    return average_var.assign_add((var - average_var) / count)


def test_averaged_optimizer_wrapper_subclass_keeps_its_average():
  """TFA's abstract base with a user's `average_op`, around native SGD with
  momentum: the inner step runs (same trajectory as the bare inner
  optimizer), the average slot is the iterates' mean, iterations and the
  learning rate are shared, `weights` lists both, the config round-trips,
  `assign_average_vars` copies the averages."""
  initial, gradients = testing.seeded_problem(10, seed=24, grad_scale=1.0)
  wrapper = RunningMean(tf_keras.optimizers.legacy.SGD(0.1, momentum=0.9))
  bare = tf_keras.optimizers.legacy.SGD(0.1, momentum=0.9)
  variables, reference = variables_of(initial), variables_of(initial)
  sums = [np.zeros_like(v, np.float64) for v in initial]
  @tf.function
  def step_fn(grads):
    wrapper.apply_gradients(zip(grads, variables))

  for t, step in enumerate(gradients):
    grads = [tf.constant(g) for g in step]
    if t % 2:
      step_fn(grads)
    else:
      wrapper.apply_gradients(zip(grads, variables))
    bare.apply_gradients(zip(grads, reference))
    sums = [s + r.numpy() for s, r in zip(sums, reference)]
  for variable, expected, total in zip(variables, reference, sums):
    np.testing.assert_allclose(variable.numpy(), expected.numpy(), rtol=1e-6)
    np.testing.assert_allclose(wrapper.get_slot(variable, "average").numpy(),
                               total / len(gradients), rtol=1e-5, atol=1e-6)
  assert int(wrapper.iterations) == int(wrapper._optimizer.iterations) == len(  # pylint: disable=protected-access
      gradients)
  assert float(wrapper.learning_rate) == pytest.approx(0.1)
  wrapper.lr = 0.3
  assert float(wrapper._optimizer._get_hyper("learning_rate")) == (  # pylint: disable=protected-access
      pytest.approx(0.3))
  names = {w.name for w in wrapper.weights}
  assert any("momentum" in n for n in names) and any("average" in n
                                                     for n in names)
  restored = RunningMean.from_config(wrapper.get_config())
  assert isinstance(restored._optimizer, tf_keras.optimizers.legacy.SGD)  # pylint: disable=protected-access
  assert restored._optimizer.get_config()["momentum"] == pytest.approx(0.9)  # pylint: disable=protected-access
  wrapper.assign_average_vars(variables)
  np.testing.assert_allclose(variables[0].numpy(),
                             sums[0] / len(gradients), rtol=1e-5, atol=1e-6)
  with pytest.warns(UserWarning, match="Unable to assign average slot"):
    wrapper.assign_average_vars([tf.Variable([0.0])])


def test_averaged_optimizer_wrapper_takes_what_tfa_takes():
  """A name (as TFA, via tf_keras's registry); None refused with TFA's
  TypeError; a bridged optimizer refused (its kernels are not separate);
  the bridged MovingAverage and SWA are its subclasses; the class cannot
  be made without `average_op`."""
  assert isinstance(RunningMean("sgd")._optimizer,  # pylint: disable=protected-access
                    tf_keras.optimizers.legacy.SGD)
  with pytest.raises(TypeError, match="optimizer is not an object of "
                     "tf.keras.optimizers.legacy.Optimizer"):
    RunningMean(None)
  with pytest.raises(TypeError, match="RunningMean runs the inner "
                     "optimizer's own kernels; SGD is bridged"):
    RunningMean(tf_bridge.legacy.SGD(0.1))
  assert isinstance(tfa.MovingAverage("sgd"), tfa.AveragedOptimizerWrapper)
  assert isinstance(tfa.SWA("sgd"), tfa.AveragedOptimizerWrapper)
  with pytest.raises(TypeError, match="abstract"):
    tfa.AveragedOptimizerWrapper("sgd")


def test_keras_legacy_optimizer_is_optimizer_v2():
  assert tfa.KerasLegacyOptimizer is tf_keras.optimizers.legacy.Optimizer


# TFA classes with a first-moment decay, by its argument name.
BETA_ONE = {"LazyAdam": "beta_1", "Yogi": "beta1", "LAMB": "beta_1",
            "RectifiedAdam": "beta_1", "NovoGrad": "beta_1",
            "AdaBelief": "beta_1", "AdamW": "beta_1"}


@pytest.mark.parametrize("name", sorted(BETA_ONE))
def test_hyperparameters_as_callables_and_tensors(name):
  """OptimizerV2's hyperparameter forms, which TFA code passes: a tensor
  learning rate and a callable `beta_1` give the floats' steps; a callable
  is read at each step (a change between steps acts as `_set_hyper`'s,
  as TFA's `_get_hyper` reads it)."""
  optimizer_class = getattr(tfa, name)
  extra = {"weight_decay": 0.01} if name == "AdamW" else {}
  gradients = [tf.constant(g) for g in ([1.0, -2.0, 0.5], [-3.0, 1.0, 2.0],
                                        [0.5, 0.5, -1.0])]

  def run(optimizer, steps=3):
    variable = tf.Variable(np.ones(3, np.float32))
    for gradient in gradients[:steps]:
      optimizer.apply_gradients([(gradient, variable)])
    return variable, optimizer

  beta = BETA_ONE[name]
  floats, _ = run(optimizer_class(learning_rate=0.01, **{beta: 0.8}, **extra))
  default, _ = run(optimizer_class(learning_rate=0.01, **extra))
  assert not np.allclose(floats.numpy(), default.numpy(), rtol=1e-5)
  for rate, value in ((tf.constant(0.01), lambda: 0.8),
                      (lambda: 0.01, tf.constant(0.8))):
    other, _ = run(optimizer_class(learning_rate=rate, **{beta: value},
                                   **extra))
    np.testing.assert_allclose(other.numpy(), floats.numpy(), rtol=1e-6)
  current = [0.8]
  variable, optimizer = run(optimizer_class(
      learning_rate=0.01, **{beta: lambda: current[0]}, **extra), steps=2)
  current[0] = 0.0
  optimizer.apply_gradients([(gradients[2], variable)])
  switched, set_optimizer = run(optimizer_class(
      learning_rate=0.01, **{beta: 0.8}, **extra), steps=2)
  set_optimizer._set_hyper("beta_1", 0.0)  # pylint: disable=protected-access
  set_optimizer.apply_gradients([(gradients[2], switched)])
  np.testing.assert_allclose(variable.numpy(), switched.numpy(), rtol=1e-6)
  assert not np.allclose(variable.numpy(), floats.numpy(), rtol=1e-5)


def test_keras3_class_from_decoupled_weight_decay_of_a_port():
  """Keras 3's road to `extend_with_decoupled_weight_decay`:
  `keras_optimizer(decoupled_weight_decay(port))`. TFA's `weight_decay`
  comes first and is not Keras's (which scales by the learning rate); of
  legacy Adam it is `tf_bridge.addons.AdamW`, `decay_var_list` included."""
  import keras  # pylint: disable=import-outside-toplevel
  import jaxopt_port  # pylint: disable=import-outside-toplevel
  from jaxopt_port import addons  # pylint: disable=import-outside-toplevel
  import tf_bridge.addons  # pylint: disable=import-outside-toplevel
  made = tf_bridge.keras_optimizer(
      addons.decoupled_weight_decay(jaxopt_port.legacy.adam))
  initial, gradients = testing.seeded_problem(10, seed=25, grad_scale=1.0)
  runs = [(made(WEIGHT_DECAY, LEARNING_RATE),
           [keras.Variable(v) for v in initial]),
          (tf_bridge.addons.AdamW(WEIGHT_DECAY, LEARNING_RATE),
           [keras.Variable(v) for v in initial])]
  for step in gradients:
    for optimizer, variables in runs:
      optimizer.apply([tf.constant(g) for g in step], variables,
                      decay_var_list=variables[:1])
  for (_, got), want in zip(runs[:1], [runs[1][1]]):
    for a, b, start in zip(got, want, initial):
      np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)
      assert np.max(np.abs(a.numpy() - start)) > 1e-2
  assert runs[0][0].get_config()["weight_decay"] == WEIGHT_DECAY


@pytest.mark.parametrize("legacy", [True, False], ids=["legacy", "keras3"])
def test_weight_decay_schedule_config_is_plain_data(legacy):
  """TFA's `weight_decay` as a schedule on the bridged SGDW: each step
  decays by the schedule at `iterations` (numpy), `get_config()` holds it
  serialized (JSON, as TFA's `_serialize_hyperparameter` writes it), and
  `from_config` rebuilds an optimizer that continues the same steps; a
  config naming anything else is refused."""
  import json  # pylint: disable=import-outside-toplevel
  import keras  # pylint: disable=import-outside-toplevel
  import tf_bridge.addons  # pylint: disable=import-outside-toplevel
  module = tfa if legacy else tf_bridge.addons
  schedules = (tf_keras if legacy else keras).optimizers.schedules
  make_variable = tf.Variable if legacy else keras.Variable
  optimizer = module.SGDW(schedules.InverseTimeDecay(0.1, 1, 0.5),
                          learning_rate=0.02)
  gradient = np.array([1.0, -2.0, 0.5], np.float32)
  variable = make_variable(np.ones(3, np.float32))
  want = np.ones(3)
  for t in range(3):
    optimizer.apply_gradients([(tf.constant(gradient), variable)])
    want = want - 0.1 / (1 + 0.5 * t) * want - 0.02 * gradient
  np.testing.assert_allclose(np.asarray(variable), want, rtol=1e-6)
  # (numpy scalars as tf_keras's JSON encoder writes them, for OptimizerV2's
  # hyperparameter variables.)
  config = json.loads(json.dumps(optimizer.get_config(),
                                 default=lambda value: value.item()))
  assert config["weight_decay"]["class_name"] == "InverseTimeDecay"
  restored = module.SGDW.from_config(config)
  other = make_variable(np.ones(3, np.float32))
  restored.apply_gradients([(tf.constant(gradient), other)])
  np.testing.assert_allclose(np.asarray(other),
                             1 - 0.1 - 0.02 * gradient, rtol=1e-6)
  with pytest.raises(ValueError, match="only a registered tf_bridge "
                     "optimizer or a learning rate schedule may appear"):
    module.SGDW.from_config({**config, "weight_decay": {
        "class_name": "Sequential", "config": {}}})


def test_keras3_classes_take_plain_tf_variables():
  """Native Keras 3 optimizers take plain `tf.Variable`s as well as
  `keras.Variable`s; so does every TF Addons class of `tf_bridge.addons`,
  with the same steps."""
  import keras  # pylint: disable=import-outside-toplevel
  import tf_bridge.addons  # pylint: disable=import-outside-toplevel
  from tf_bridge import catalog  # pylint: disable=import-outside-toplevel
  required = {"AdamW": {"weight_decay": 0.01}, "SGDW": {"weight_decay": 0.01},
              "ConditionalGradient": {"learning_rate": 0.1}}
  initial, gradients = testing.seeded_problem(3, seed=26, grad_scale=1.0)
  names = [d.class_name for d in catalog.CATALOG
           if d.generation == catalog.ADDONS]
  assert len(names) == 11
  for name in names:
    runs = []
    for make in (tf.Variable, keras.Variable):
      optimizer = getattr(tf_bridge.addons, name)(**required.get(name, {}))
      variables = [make(v) for v in initial]
      for step in gradients:
        optimizer.apply_gradients(zip([tf.constant(g) for g in step],
                                      variables))
      runs.append([np.asarray(v) for v in variables])
    for plain, wrapped, start in zip(*runs, initial):
      np.testing.assert_array_equal(plain, wrapped, err_msg=name)
    assert any(not np.array_equal(p, s) for p, s in zip(runs[0], initial)), (
        name)
