"""The classic hand-written optimizers against numpy versions of their formulas."""

import jax
import jax.numpy as jnp
import jaxopt_port
import numpy as np
import optax
import pytest

from tf_bridge import testing

STEPS = 60


def numpy_trajectory(initial, gradients, *, learning_rate, momentum,
                     bias_corrected, decay=0.0):
  """The classic optimizers' formulas (their docstrings), in float64, step by
  step."""
  params = [p.astype(np.float64) for p in initial]
  moments = [np.zeros_like(p) for p in params]
  trajectory = []
  for step, grads in enumerate(gradients):  # step = OptimizerV2.iterations
    rate = learning_rate / (1.0 + decay * step)
    for index, grad in enumerate(grads):
      moments[index] = momentum * moments[index] + (1 - momentum) * grad
      direction = moments[index]
      if bias_corrected and momentum:
        direction = direction / (1 - momentum ** (step + 1))
      params[index] = params[index] - rate * direction
    trajectory.append([p.copy() for p in params])
  return trajectory


CASES = [
    ("vanilla_sgd", {"learning_rate": 0.1}, 0.0, False),
    ("momentum_sgd", {"learning_rate": 0.1, "momentum": 0.9}, 0.9, False),
    ("momentum_sgd", {}, 0.0, False),
    ("centered_momentum_sgd", {"learning_rate": 0.05, "momentum": 0.9}, 0.9,
     True),
    ("centered_momentum_sgd", {"learning_rate": 0.05, "momentum": 0.0}, 0.0,
     True),
]


@pytest.mark.parametrize("generation", ["keras", "legacy"])
@pytest.mark.parametrize("name,kwargs,momentum,bias_corrected", CASES)
def test_classic_equals_formula(generation, name, kwargs, momentum,
                                bias_corrected):
  module = jaxopt_port.legacy if generation == "legacy" else jaxopt_port
  initial, gradients = testing.seeded_problem(STEPS, seed=3, grad_scale=1.0)
  actual = testing.transform_trajectory(getattr(module, name)(**kwargs),
                                        initial, gradients)
  expected = numpy_trajectory(
      initial, gradients, learning_rate=kwargs.get("learning_rate", 0.01),
      momentum=momentum, bias_corrected=bias_corrected)
  testing.compare_trajectories(actual, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,momentum", [("momentum_sgd", 0.8),
                                           ("centered_momentum_sgd", 0.8),
                                           ("vanilla_sgd", None)])
def test_legacy_classic_decay_and_lr_alias(name, momentum):
  """`decay` and `lr` behave as in an OptimizerV2 subclass using _decayed_lr."""
  kwargs = {} if momentum is None else {"momentum": momentum}
  initial, gradients = testing.seeded_problem(STEPS, seed=4, grad_scale=1.0)
  with pytest.warns(DeprecationWarning, match="`lr` argument is deprecated"):
    transform = getattr(jaxopt_port.legacy, name)(lr=0.2, decay=0.05, **kwargs)
  actual = testing.transform_trajectory(transform, initial, gradients)
  expected = numpy_trajectory(
      initial, gradients, learning_rate=0.2, momentum=momentum or 0.0,
      bias_corrected=name.startswith("centered"), decay=0.05)
  testing.compare_trajectories(actual, expected, rtol=1e-5, atol=1e-6)


def test_centered_momentum_first_step_is_the_gradient_step():
  """Bias correction: step 1 moves by lr * g whatever the momentum."""
  params = {"w": jax.numpy.array([1.0, -2.0])}
  grads = {"w": jax.numpy.array([0.5, 4.0])}
  transform = jaxopt_port.centered_momentum_sgd(learning_rate=0.1,
                                                momentum=0.99)
  updates, _ = transform.update(grads, transform.init(params), params)
  np.testing.assert_allclose(updates["w"], [-0.05, -0.4], rtol=1e-5)
  plain = jaxopt_port.momentum_sgd(learning_rate=0.1, momentum=0.99)
  updates, _ = plain.update(grads, plain.init(params), params)
  np.testing.assert_allclose(updates["w"], [-0.0005, -0.004], rtol=1e-4)


def test_zero_momentum_keeps_its_slot_at_zeros_and_steps_as_vanilla_sgd():
  """One state layout whatever the momentum (optax's inject_hyperparams):
  at 0 the slot stays at zeros and the step is VanillaSGD's."""
  params = {"w": np.ones(2, np.float32)}
  grads = {"w": np.array([0.5, -4.0], np.float32)}
  transform = jaxopt_port.momentum_sgd(learning_rate=0.1, momentum=0.0)
  updates, state = transform.update(grads, transform.init(params), params)
  np.testing.assert_array_equal(state.slots.momentum["w"], [0.0, 0.0])
  np.testing.assert_allclose(updates["w"], [-0.05, 0.4], rtol=1e-6)
  state = jaxopt_port.momentum_sgd(momentum=0.5).init(params)
  assert optax.tree.size(state.slots.momentum) == 2


def adagrad_decay_numpy(initial, gradients, touched_rows, *, learning_rate,
                        initial_accumulator_value, decay_step, decay_rate):
  """AdagradDecay (jaxopt_port's docstring) in float64; `touched_rows[step][index]` lists
  the rows a sparse gradient touched (None: dense, every row)."""
  params = [p.astype(np.float64) for p in initial]
  accumulators = [np.full_like(p, initial_accumulator_value) for p in params]
  counts = [np.zeros(p.shape[:1], np.int64) for p in params]
  trajectory = []
  for step, (grads, rows_of) in enumerate(zip(gradients, touched_rows)):
    due = (step + 1) // decay_step
    for index, grad in enumerate(grads):
      rows = rows_of[index]
      if params[index].ndim == 0 or rows is None:
        rows = Ellipsis
      accumulator, count = accumulators[index], counts[index]
      decays = due > count[rows]
      per_row = decays.reshape(
          decays.shape + (1,) * (accumulator[rows].ndim - decays.ndim))
      accumulator[rows] = np.where(
          per_row, np.maximum(accumulator[rows] * decay_rate,
                              initial_accumulator_value), accumulator[rows])
      count[rows] += decays
      accumulator[rows] += grad[rows] ** 2
      params[index][rows] -= (learning_rate * grad[rows]
                              / np.sqrt(accumulator[rows]))
    trajectory.append([p.copy() for p in params])
  return trajectory


ADAGRAD_DECAY = {"learning_rate": 0.1, "initial_accumulator_value": 0.1,
                 "accumulator_decay_step": 7, "accumulator_decay_rate": 0.5}


@pytest.mark.parametrize("generation", ["keras", "legacy"])
def test_adagrad_decay_equals_formula(generation):
  assert jaxopt_port.tf1.adagrad_decay is jaxopt_port.adagrad_decay
  module = jaxopt_port.legacy if generation == "legacy" else jaxopt_port
  initial, gradients = testing.seeded_problem(STEPS, seed=5, grad_scale=1.0)
  actual = testing.transform_trajectory(module.adagrad_decay(**ADAGRAD_DECAY),
                                        initial, gradients)
  expected = adagrad_decay_numpy(
      initial, gradients, [[None] * len(initial)] * STEPS,
      learning_rate=0.1, initial_accumulator_value=0.1, decay_step=7,
      decay_rate=0.5)
  testing.compare_trajectories(actual, expected, rtol=1e-5, atol=1e-6)
  undecayed = adagrad_decay_numpy(
      initial, gradients, [[None] * len(initial)] * STEPS,
      learning_rate=0.1, initial_accumulator_value=0.1, decay_step=10**6,
      decay_rate=0.5)
  with pytest.raises(AssertionError, match="part at step"):  # The decay matters on this problem.
    testing.compare_trajectories(actual, undecayed, rtol=1e-5, atol=1e-6)


def test_adagrad_decay_counts_decays_in_integers():
  """Each row's count of decays is an int32 (exact past 2**24 decays, as a
  float32 count would not be), one per row, before and after a step."""
  transform = jaxopt_port.adagrad_decay(**ADAGRAD_DECAY)
  params = {"table": jnp.zeros((5, 3)), "scale": jnp.zeros(())}
  state = transform.init(params)
  for _ in range(2):
    counts = state.slots.decay_count
    assert {k: (v.shape, v.dtype) for k, v in counts.items()} == {
        "table": ((5,), jnp.int32), "scale": ((), jnp.int32)}
    _, state = transform.update(
        jax.tree.map(jnp.ones_like, params), state, params)


@pytest.mark.parametrize("legacy", [False, True], ids=["keras3", "legacy"])
def test_adagrad_decay_decays_sparse_rows_when_touched(legacy):
  """Per row: a row a sparse gradient skips keeps its accumulator and its
  decay count; when touched again it decays once."""
  import keras  # pylint: disable=import-outside-toplevel
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  import tf_bridge  # pylint: disable=import-outside-toplevel
  import tf_bridge.legacy  # pylint: disable=import-outside-toplevel
  rng = np.random.default_rng(6)
  initial = [rng.standard_normal((6, 2)).astype(np.float32)]
  dense, rows, slices = [], [], []
  for step in range(40):
    touched = np.unique(rng.choice(6, size=2 if step % 5 else 6))
    values = rng.standard_normal((len(touched), 2)).astype(np.float32)
    gradient = np.zeros((6, 2), np.float32)
    gradient[touched] = values
    dense.append([gradient])
    rows.append([touched])
    slices.append([tf.IndexedSlices(tf.constant(values), tf.constant(touched),
                                    tf.constant([6, 2]))])
  module = tf_bridge.legacy if legacy else tf_bridge
  optimizer = module.AdagradDecay(**ADAGRAD_DECAY)
  variable = (tf.Variable if legacy else keras.Variable)(initial[0],
                                                         name="embedding")
  trajectory = []
  for step_slices in slices:
    testing.apply_gradients(optimizer, step_slices, [variable])
    trajectory.append([np.array(variable.numpy())])
  expected = adagrad_decay_numpy(
      initial, dense, rows, learning_rate=0.1, initial_accumulator_value=0.1,
      decay_step=7, decay_rate=0.5)
  testing.compare_trajectories(trajectory, expected, rtol=1e-5, atol=1e-6,
                               actual_name="bridge", expected_name="numpy")
  all_rows = adagrad_decay_numpy(
      initial, dense, [[None]] * 40, learning_rate=0.1,
      initial_accumulator_value=0.1, decay_step=7, decay_rate=0.5)
  with pytest.raises(AssertionError, match="part at step"):  # Lazy rows differ from dense here.
    testing.compare_trajectories(trajectory, all_rows, rtol=1e-5, atol=1e-6)
