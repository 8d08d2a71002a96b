"""`jaxopt_port.schedules` equals `keras.optimizers.schedules` at every step."""

import jax
import jax.numpy as jnp
import keras
import numpy as np
import pytest

import jaxopt_port
from jaxopt_port import schedules

CASES = [
    ("ExponentialDecay", dict(initial_learning_rate=0.1, decay_steps=7,
                              decay_rate=0.6)),
    ("ExponentialDecay", dict(initial_learning_rate=0.1, decay_steps=7,
                              decay_rate=0.6, staircase=True)),
    ("PiecewiseConstantDecay", dict(boundaries=[10, 25, 40],
                                    values=[1.0, 0.5, 0.1, 0.01])),
    ("PiecewiseConstantDecay", dict(boundaries=[12.7], values=[0.3, 0.2])),
    ("PolynomialDecay", dict(initial_learning_rate=0.1, decay_steps=30)),
    ("PolynomialDecay", dict(initial_learning_rate=0.1, decay_steps=30,
                             end_learning_rate=0.01, power=2.0, cycle=True)),
    ("InverseTimeDecay", dict(initial_learning_rate=0.1, decay_steps=5,
                              decay_rate=0.5)),
    ("InverseTimeDecay", dict(initial_learning_rate=0.1, decay_steps=5,
                              decay_rate=0.5, staircase=True)),
    ("CosineDecay", dict(initial_learning_rate=0.1, decay_steps=40)),
    ("CosineDecay", dict(initial_learning_rate=0.1, decay_steps=40,
                         alpha=0.1)),
    ("CosineDecay", dict(initial_learning_rate=0.0, decay_steps=40,
                         alpha=0.05, warmup_target=0.2, warmup_steps=15)),
    ("CosineDecayRestarts", dict(initial_learning_rate=0.1,
                                 first_decay_steps=10)),
    ("CosineDecayRestarts", dict(initial_learning_rate=0.1,
                                 first_decay_steps=8, t_mul=1.0, m_mul=0.7,
                                 alpha=0.1)),
    ("CosineDecayRestarts", dict(initial_learning_rate=0.1,
                                 first_decay_steps=6, t_mul=1.5, m_mul=0.8)),
]


@pytest.mark.parametrize("name,kwargs", CASES,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_schedule_equals_keras(name, kwargs):
  ours = getattr(schedules, name)(**kwargs)
  theirs = getattr(keras.optimizers.schedules, name)(**kwargs)
  steps = np.arange(0, 120)
  expected = np.array([float(theirs(int(step))) for step in steps])
  actual = np.asarray(jax.jit(jax.vmap(ours))(jnp.asarray(steps, jnp.int32)))
  # atol: one float32 ulp of the peak rate. Near the end of a cosine period
  # `1 + cos(x)` cancels, and XLA's and TensorFlow's cos differ by an ulp.
  peak = np.max(np.abs(expected))
  np.testing.assert_allclose(actual, expected, rtol=1e-6,
                             atol=float(np.finfo(np.float32).eps) * peak)
  assert ours.get_config() == {key: value for key, value in
                               theirs.get_config().items() if key != "name"}


@pytest.mark.parametrize("name,kwargs,message", [
    ("ExponentialDecay", dict(initial_learning_rate=0.1, decay_steps=0,
                              decay_rate=0.5),
     "Argument `decay_steps` must be > 0. Received: decay_steps=0"),
    ("CosineDecayRestarts", dict(initial_learning_rate=0.1,
                                 first_decay_steps=-3),
     "Argument `first_decay_steps` must be > 0. Received: first_decay_steps=-3"),
    ("PiecewiseConstantDecay", dict(boundaries=[1, 2], values=[0.1, 0.2]),
     "The length of boundaries should be 1 less than the length of values"),
])
def test_invalid_schedule_arguments(name, kwargs, message):
  with pytest.raises(ValueError, match=message.replace("[", r"\[")):
    getattr(schedules, name)(**kwargs)


def cyclical_numpy(initial, maximal, step_size, scale, mode, step):
  """TF Addons' cyclical formula (Smith, 2017), in float64."""
  cycle = np.floor(1 + step / (2 * step_size))
  x = np.abs(step / step_size - 2 * cycle + 1)
  return initial + (maximal - initial) * max(0.0, 1 - x) * scale(
      cycle if mode == "cycle" else step)


@pytest.mark.parametrize("schedule,scale,mode", [
    (schedules.TriangularCyclicalLearningRate(1e-4, 1e-2, 7),
     lambda _: 1.0, "cycle"),
    (schedules.Triangular2CyclicalLearningRate(1e-4, 1e-2, 6),
     lambda c: 1 / 2.0 ** (c - 1), "cycle"),
    (schedules.ExponentialCyclicalLearningRate(1e-4, 1e-2, 5, gamma=0.97),
     lambda s: 0.97 ** s, "iterations"),
    (schedules.CyclicalLearningRate(1e-3, 5e-2, 9, scale_fn=lambda c: 1 / c),
     lambda c: 1 / c, "cycle"),
], ids=["triangular", "triangular2", "exponential", "custom"])
def test_cyclical_schedules_equal_formula(schedule, scale, mode):
  got = jax.jit(jax.vmap(schedule))(jnp.arange(120))
  want = [cyclical_numpy(schedule.initial_learning_rate,
                         schedule.maximal_learning_rate, schedule.step_size,
                         scale, mode, step) for step in range(120)]
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-9)
  assert np.ptp(np.asarray(want)[:40]) > 1e-3  # It cycles.


def test_cyclical_schedule_drives_a_port():
  schedule = schedules.TriangularCyclicalLearningRate(0.0, 1.0, 2)
  transform = jaxopt_port.sgd(schedule)
  params = {"w": jnp.zeros(())}
  state = transform.init(params)
  steps = []
  for _ in range(4):
    updates, state = transform.update({"w": jnp.ones(())}, state, params)
    steps.append(float(-updates["w"]))
  assert steps == [0.0, 0.5, 1.0, 0.5]


# TF Addons' own tests' schedules: initial 0.1, maximal 1, 8001 steps,
# compared with `assert_allclose(rtol=1e-6)`; step size 4000, and 2000 with
# gamma 0.996 for the exponential one (the triangular ones at 2000 miss it in
# TFA's float32 too, at steps 4010 and 7990). (name, arguments, scale mode,
# scale as a function of the cycle or of the step.)
TFA_CYCLICAL = [
    ("CyclicalLearningRate", {"step_size": 4000, "scale_fn": lambda c: 1 / c},
     "cycle", lambda c: 1 / c),
    ("TriangularCyclicalLearningRate", {"step_size": 4000}, "cycle",
     lambda c: 1.0),
    ("Triangular2CyclicalLearningRate", {"step_size": 4000}, "cycle",
     lambda c: 1 / 2.0 ** (c - 1)),
    ("ExponentialCyclicalLearningRate", {"step_size": 2000, "gamma": 0.996},
     "iterations", lambda s: 0.996 ** s),
]


def tfa_golden(kwargs, scale, mode, steps):
  return np.array([cyclical_numpy(0.1, 1.0, kwargs["step_size"], scale,
                                  mode, step) for step in steps])


@pytest.mark.parametrize("generation", ["legacy", "keras3"])
@pytest.mark.parametrize("name,kwargs,mode,scale", TFA_CYCLICAL,
                         ids=[case[0] for case in TFA_CYCLICAL])
def test_tf_cyclical_schedules_give_tfa_golden_values(name, kwargs, mode,
                                                      scale, generation):
  """`tf_bridge.legacy.addons.<Name>` (tf_keras) and `tf_bridge.addons.
  <Name>` (Keras 3) at TFA's golden values (its tests: Python steps, the
  exact formula, relative 1e-6), after a round trip
  from a config named as TFA named it, "Addons>Name" (the named policies; a
  custom `scale_fn` through `from_config`)."""
  import tf_keras  # pylint: disable=import-outside-toplevel
  import tf_bridge.addons  # pylint: disable=import-outside-toplevel
  import tf_bridge.legacy.addons  # pylint: disable=import-outside-toplevel
  legacy = generation == "legacy"
  module = tf_bridge.legacy.addons if legacy else tf_bridge.addons
  serialization = (tf_keras if legacy else keras).optimizers.schedules
  schedule = getattr(module, name)(0.1, 1.0, **kwargs)
  if "scale_fn" in kwargs:
    schedule = type(schedule).from_config(schedule.get_config())
  else:
    config = serialization.serialize(schedule)
    assert config["registered_name"] == f"Addons>{name}", config
    # As a model saved with TFA names it.
    schedule = serialization.deserialize(
        {"class_name": f"Addons>{name}", "config": config["config"]})
  assert type(schedule) is getattr(module, name)
  assert schedule.scale_mode == mode
  steps = list(range(0, 8001, 41)) + [4010, 7990]
  got = [keras.ops.convert_to_numpy(schedule(step)) for step in steps]
  np.testing.assert_allclose(got, tfa_golden(kwargs, scale, mode, steps), rtol=1e-6)
  assert np.ptp(got) > 0.01  # It moves.


@pytest.mark.parametrize("name,kwargs,mode,scale", TFA_CYCLICAL,
                         ids=[case[0] for case in TFA_CYCLICAL])
def test_port_cyclical_schedules_give_tfa_golden_values(name, kwargs, mode,
                                                        scale):
  """The JAX port at every one of TFA's 8001 golden values (its exponential
  scale through a float64 logarithm: `0.996 ** step` in float32 misses
  them by 4 %)."""
  schedule = getattr(schedules, name)(0.1, 1.0, **kwargs)
  got = jax.jit(jax.vmap(schedule))(jnp.arange(8001))
  np.testing.assert_allclose(got, tfa_golden(kwargs, scale, mode, range(8001)),
                             rtol=1e-6)


@pytest.mark.parametrize("legacy", [True, False], ids=["legacy", "keras3"])
def test_tf_cyclical_schedule_drives_native_and_bridged_optimizers(legacy):
  """In an optimizer the step arrives as a tensor (tf_keras: float32 cast of
  `iterations`; Keras 3: the int64 variable) and `gamma` is rounded to
  float32, as in TFA: each SGD step moves a unit-gradient variable by the
  rate of its 0-based step, natively and bridged."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  import tf_keras  # pylint: disable=import-outside-toplevel
  import tf_bridge  # pylint: disable=import-outside-toplevel
  import tf_bridge.addons  # pylint: disable=import-outside-toplevel
  import tf_bridge.legacy.addons  # pylint: disable=import-outside-toplevel
  module = tf_bridge.legacy.addons if legacy else tf_bridge.addons
  gamma = np.float32(0.9)
  want = -np.cumsum([cyclical_numpy(0.1, 1.0, 3, lambda s: gamma ** s,
                                    "iterations", step)
                     for step in range(12)])
  natives = (tf_keras.optimizers.legacy.SGD if legacy
             else keras.optimizers.SGD)
  bridged = tf_bridge.legacy.SGD if legacy else tf_bridge.SGD
  for optimizer_class in (natives, bridged):
    optimizer = optimizer_class(module.ExponentialCyclicalLearningRate(
        0.1, 1.0, 3, gamma=0.9))
    variable = tf.Variable(0.0)
    got = []
    for _ in range(12):
      optimizer.apply_gradients([(tf.constant(1.0), variable)])
      got.append(variable.numpy())
    np.testing.assert_allclose(got, want, rtol=1e-6,
                               err_msg=optimizer_class.__module__)
