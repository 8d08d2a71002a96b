"""TF Model Garden's moving average, schedules and factory as the bridge has
them, in programs (Model Garden itself runs only in a process of its own:
tests/test_tf_libraries.py holds the comparisons with it, its own tests on
the bridged module, and the factory's optimizers against its factory's)."""

import sys
import types

import jax
import jax.numpy as jnp
import jaxopt_port
import keras
import numpy as np
import pytest
import tensorflow as tf
import tf_keras

import tf_bridge
import tf_bridge.legacy
import tf_bridge.legacy.tf_models
import tf_bridge.tf_models
from tf_bridge import testing

RTOL, ATOL = 1e-5, 1e-6
RNG = np.random.default_rng(3)
X = RNG.standard_normal((32, 4)).astype(np.float32)
Y = RNG.standard_normal((32, 2)).astype(np.float32)
KERNEL = RNG.standard_normal((4, 2)).astype(np.float32)
BIAS = RNG.standard_normal((2,)).astype(np.float32)
STEPS = 20


def _port_run(transform):
  """The port on the Dense layer's least-squares gradients: the weights
  and their averages after STEPS steps."""
  params = {"kernel": jnp.asarray(KERNEL), "bias": jnp.asarray(BIAS)}
  state = transform.init(params)

  def loss(params):
    return jnp.mean((X @ params["kernel"] + params["bias"] - Y) ** 2)

  @jax.jit
  def step(params, state):
    updates, state = transform.update(jax.grad(loss)(params), state, params)
    return jaxopt_port.apply_updates(params, updates), state

  for _ in range(STEPS):
    params, state = step(params, state)
  average = jaxopt_port.addons.average_params(state)
  return [np.asarray(params["kernel"]), np.asarray(params["bias"]),
          np.asarray(average["kernel"]), np.asarray(average["bias"])]


def _keras3_run(optimizer):
  model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
  model.set_weights([KERNEL, BIAS])
  optimizer.shadow_copy(model)
  variables = model.trainable_variables

  @tf.function
  def step():
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean((model(X) - Y) ** 2)
    optimizer.apply(tape.gradient(loss, variables), variables)

  for _ in range(STEPS):
    step()
  weights = [v.numpy() for v in variables]
  optimizer.assign_average_vars(variables)
  return weights + [v.numpy() for v in variables]


def test_keras3_moving_average_follows_the_port():
  """`tf_bridge.tf_models.ExponentialMovingAverage` (Keras 3; Model Garden
  has none) around the bridged Adam: the weights and their averages after
  20 steps are the port's (whose averages equal Model Garden's:
  tests/test_tf_libraries.py); TF Addons' average (it starts at the
  params) parts."""
  bridged = _keras3_run(tf_bridge.tf_models.ExponentialMovingAverage(
      tf_bridge.Adam(0.05), average_decay=0.9))
  port = _port_run(jaxopt_port.tf_models.exponential_moving_average(
      jaxopt_port.adam(0.05), average_decay=0.9))
  testing.compare_trajectories([bridged], [port], rtol=RTOL, atol=ATOL)
  mutant = _port_run(jaxopt_port.addons.moving_average(
      jaxopt_port.adam(0.05), average_decay=0.9, dynamic_decay=True))
  with pytest.raises(AssertionError, match="part at step"):
    testing.compare_trajectories([mutant], [bridged], rtol=RTOL, atol=ATOL)


def _legacy_model():
  model = tf_keras.Sequential([tf_keras.Input((4,)),
                               tf_keras.layers.Dense(2)])
  model.set_weights([KERNEL, BIAS])
  return model


def _averages(optimizer, model):
  return [optimizer.get_slot(v, "average").numpy()
          for v in model.trainable_variables]


def _fitted(epochs, model=None, optimizer=None):
  if model is None:
    model = _legacy_model()
    optimizer = tf_bridge.legacy.tf_models.ExponentialMovingAverage(
        tf_bridge.legacy.SGD(0.05, momentum=0.9), average_decay=0.9)
    optimizer.shadow_copy(model)
    model.compile(optimizer=optimizer, loss="mse")
  model.fit(X, Y, batch_size=8, epochs=epochs, shuffle=False, verbose=0)
  return model, optimizer


def test_legacy_moving_average_resumes_from_a_checkpoint(tmp_path):
  """`model.fit` with the bridged OptimizerV2 EMA, checkpointed after 2
  epochs and restored into a fresh model and optimizer, continues on the
  uninterrupted run's weights and averages (step count, momentum and
  averages restored); the weights alone with a fresh optimizer part."""
  model, optimizer = _fitted(4)
  expected = model.get_weights() + _averages(optimizer, model)
  first, first_optimizer = _fitted(2)
  path = tf.train.Checkpoint(model=first, optimizer=first_optimizer).write(
      str(tmp_path / "checkpoint"))

  def resumed(restore):
    model = _legacy_model()
    optimizer = tf_bridge.legacy.tf_models.ExponentialMovingAverage(
        tf_bridge.legacy.SGD(0.05, momentum=0.9), average_decay=0.9)
    optimizer.shadow_copy(model)
    model.compile(optimizer=optimizer, loss="mse")
    restore(model, optimizer)
    _fitted(2, model, optimizer)
    return model.get_weights() + _averages(optimizer, model), optimizer

  restored, restored_optimizer = resumed(
      lambda model, optimizer: tf.train.Checkpoint(
          model=model, optimizer=optimizer).read(path).assert_consumed())
  assert int(restored_optimizer.iterations.numpy()) == 16
  testing.compare_trajectories([restored], [expected], rtol=RTOL, atol=ATOL)
  fresh, _ = resumed(
      lambda model, optimizer: model.set_weights(first.get_weights()))
  with pytest.raises(AssertionError, match="part at step"):
    testing.compare_trajectories([fresh], [expected], rtol=RTOL, atol=ATOL)


def test_legacy_moving_average_refusals():
  """What the bridged EMA refuses, by name: averaging non-trainable
  variables (which get no gradient), a fractional `start_step`, swapping
  weights outside a distribution strategy (Model Garden's words); Model
  Garden's config value of `start_step` (a float tensor) is its step."""
  make = tf_bridge.legacy.tf_models.ExponentialMovingAverage
  with pytest.raises(NotImplementedError,
                     match=r"trainable_weights_only=False\) would average"):
    make(tf_bridge.legacy.Adam(), trainable_weights_only=False).shadow_copy(
        _legacy_model())
  with pytest.raises(ValueError, match="`start_step`"):
    make(tf_bridge.legacy.Adam(), start_step=2.5)
  assert make(tf_bridge.legacy.Adam(),
              start_step=tf.constant(3.0)).get_config()["start_step"] == 3
  with pytest.raises(ValueError, match=r"^Swapping weights must occur under "
                                       r"a tf\.distribute\.Strategy\.$"):
    make(tf_bridge.legacy.Adam()).swap_weights()


@pytest.mark.parametrize("host,library", [
    (tf_bridge.legacy.tf_models, tf_keras), (tf_bridge.tf_models, keras)])
@pytest.mark.parametrize("name,arguments", [
    ("LinearWarmup", {"warmup_learning_rate": 0.01}),
    ("PolynomialWarmUp", {"power": 2.0}),
    ("CosineDecayWithOffset", {"initial_learning_rate": 0.1,
                               "decay_steps": 20, "offset": 3}),
    ("StepCosineDecayWithOffset", {"boundaries": [0, 10], "values": [0.1,
                                                                    0.05]}),
])
def test_schedules_round_trip_through_their_config(host, library, name,
                                                   arguments):
  """Each host's schedules (a schedule inside a warm-up included) are
  rebuilt by `deserialize(serialize(...))` with the same values, offset
  included (Model Garden's offset schedules lose it, its warm-ups their
  inner schedule's class)."""
  if name.endswith(("Warmup", "WarmUp")):
    arguments = {**arguments, "warmup_steps": 5,
                 "after_warmup_lr_sched": library.optimizers.schedules
                 .PolynomialDecay(0.1, 20, 0.001)}
  schedule = getattr(host, name)(**arguments)
  schedules = library.optimizers.schedules
  rebuilt = schedules.deserialize(schedules.serialize(schedule))
  assert type(rebuilt) is type(schedule)
  steps = range(0, 25, 4)
  np.testing.assert_array_equal([float(rebuilt(s)) for s in steps],
                                [float(schedule(s)) for s in steps])
  assert len({float(schedule(s)) for s in steps}) > 2


def test_offset_schedules_are_keras_schedules_at_an_offset():
  """Model Garden's construction: `<Base>WithOffset` subclasses the host's
  `<Base>` (`base_lr_class`), and is it at `step - offset`."""
  for host, library in ((tf_bridge.legacy.tf_models, tf_keras),
                        (tf_bridge.tf_models, keras)):
    schedule = host.PolynomialDecayWithOffset(
        offset=7, initial_learning_rate=0.1, decay_steps=30)
    base = library.optimizers.schedules.PolynomialDecay
    assert host.PolynomialDecayWithOffset.base_lr_class is base
    assert isinstance(schedule, base)
    plain = base(initial_learning_rate=0.1, decay_steps=30)
    assert [float(schedule(s)) for s in range(10, 40, 5)] == [
        float(plain(s - 7)) for s in range(10, 40, 5)]


class _OneOf:
  """A stand-in of Model Garden's one-of configs (`type`, `get()`)."""

  def __init__(self, type_=None, **fields):
    self.type = type_
    self._fields = fields

  def get(self):
    if self.type is None:
      return None
    return types.SimpleNamespace(as_dict=lambda: dict(self._fields),
                                 **self._fields)


def _config(optimizer, ema=None, **fields):
  clips = {"clipnorm": None, "clipvalue": None, "global_clipnorm": None}
  return types.SimpleNamespace(
      optimizer=_OneOf(optimizer, **clips, **fields), ema=ema,
      learning_rate=_OneOf("constant", learning_rate=0.1),
      warmup=_OneOf())


def test_optimizer_factory_refusals(monkeypatch):
  """Model Garden's placeholders (`slide`, `adafactor`) are refused
  (Model Garden fails calling the string "Unimplemented"); `decay` or an
  EMA with `use_legacy_optimizer=False`, Model Garden's ValueErrors; a dict
  without Model Garden installed, an ImportError saying what to do."""
  factory = tf_bridge.legacy.tf_models.OptimizerFactory
  for placeholder in ("slide", "adafactor"):
    with pytest.raises(NotImplementedError,
                       match=f"Model Garden's '{placeholder}' optimizer is a "
                             "placeholder"):
      factory(_config(placeholder)).build_optimizer(0.1)
  with pytest.raises(ValueError, match="^`decay` is deprecated in new Keras"):
    factory(_config("sgd", decay=0.0)).build_optimizer(
        0.1, use_legacy_optimizer=False)
  ema = types.SimpleNamespace(as_dict=lambda: {})
  with pytest.raises(ValueError, match="^EMA can only work with the legacy"):
    factory(_config("adam", ema=ema)).build_optimizer(
        0.1, use_legacy_optimizer=False)
  built = factory(_config("lamb", ema=ema, weight_decay_rate=0.01))
  optimizer = built.build_optimizer(built.build_learning_rate())
  assert type(optimizer) is tf_bridge.legacy.tf_models.ExponentialMovingAverage
  assert type(optimizer._optimizer) is tf_bridge.legacy.tf_models.LAMB  # pylint: disable=protected-access
  monkeypatch.setitem(sys.modules, "official", None)
  with pytest.raises(ImportError, match="pass an OptimizationConfig, or "
                                        "install it"):
    factory({"optimizer": {"type": "sgd"}})
