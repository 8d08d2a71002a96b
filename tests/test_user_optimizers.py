"""A user's own optax factory as a Keras 3 and an OptimizerV2 class."""

import jax
import jax.numpy as jnp
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

from bridge_cases import (SHAPES, built_variables, problem, keras_trajectory,
                          fit)


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


def _matrices(params):
  """True for the 2-D parameters: a label tree built with `jax.tree.map`
  (optax also calls it on a placeholder for the whole tree)."""
  return jax.tree.map(lambda p: jnp.ndim(p) == 2, params)


def momentum_on_matrices(learning_rate=0.01, momentum=0.9):
  """optax.masked over a transform with state per parameter: only the
  matrices keep a momentum."""
  return optax.chain(optax.masked(optax.trace(momentum), _matrices),
                     optax.scale_by_learning_rate(learning_rate))


def adam_matrices_sgd_others(learning_rate=0.01):
  """optax.multi_transform with per-parameter state in both groups."""
  return optax.multi_transform(
      {"adam": optax.adam(learning_rate),
       "sgd": optax.sgd(learning_rate, momentum=0.9)},
      lambda params: jax.tree.map(
          lambda matrix: "adam" if matrix else "sgd", _matrices(params)))


@pytest.mark.parametrize("factory", [momentum_on_matrices,
                                     adam_matrices_sgd_others])
@pytest.mark.parametrize("legacy", [False, True])
def test_user_factory_with_masked_parameters(factory, legacy):
  """Transforms whose state leaves some parameters out (`optax.masked`,
  `optax.multi_transform`: optax's `MaskedNode`) bridge as any other: the
  same steps as in JAX; only the parameters a slot is kept for get one."""
  initial, gradients = problem(sparse=False)
  make = (tf_bridge.legacy.keras_optimizer(
      factory, name="Legacy" + factory.__name__) if legacy
          else tf_bridge.keras_optimizer(factory))
  optimizer = make(0.05)
  bridged = keras_trajectory(optimizer, initial, gradients)
  port = testing.transform_trajectory(factory(0.05), initial, gradients)
  testing.compare_trajectories(bridged, port, rtol=1e-6, atol=1e-7)
  variables = optimizer.variables() if legacy else optimizer.variables
  slots = sorted(tuple(v.shape) for v in variables if len(v.shape))
  if factory is momentum_on_matrices:
    assert slots == sorted(s for s in SHAPES if len(s) == 2)
  else:  # Adam's two moments of the matrices, SGD's momentum of the rest.
    assert slots == sorted([s for s in SHAPES if len(s) == 2] * 2
                           + [s for s in SHAPES if 0 < len(s) != 2])


def test_transform_sees_variables_by_name_repeats_numbered():
  """The transform's params are keyed by the variables' names (tf_keras:
  `variable.name`); a repeated name gets `#1`, `#2` after its first use,
  so path-based labels see every variable once."""
  seen = []

  def recording_sgd(learning_rate=0.01):
    inner = optax.sgd(learning_rate)

    def init(params):
      if isinstance(params, dict):  # (Not optax's placeholder.)
        seen.append(list(params))
      return inner.init(params)

    return optax.GradientTransformation(init, inner.update)

  optimizer = tf_bridge.legacy.keras_optimizer(
      recording_sgd, name="RecordingSGD")(0.1)
  variables = [tf.Variable(np.ones(2, np.float32), name=name)
               for name in ("w", "b", "w", "w")]
  optimizer.apply_gradients(zip([tf.ones(2)] * 4, variables))
  assert seen[0] == ["w:0", "b:0", "w:0#1", "w:0#2"]
  np.testing.assert_allclose([v.numpy() for v in variables], 0.9)


class _Traces:
  """A state node registered without key paths (JAX calls its children
  by position: `FlattenedIndexKey`)."""

  def __init__(self, trace):
    self.trace = trace


jax.tree_util.register_pytree_node(
    _Traces, lambda node: ((node.trace,), None),
    lambda _, children: _Traces(*children))


def traced_sgd(learning_rate=0.01):
  """SGD with a momentum trace kept in a custom pytree node."""
  momentum = optax.trace(0.9)

  def init(params):
    return _Traces(momentum.init(params))

  def update(grads, state, params=None):
    updates, trace = momentum.update(grads, state.trace, params)
    return jax.tree.map(lambda u: -learning_rate * u, updates), _Traces(trace)

  return optax.GradientTransformation(init, update)


def test_slot_names_follow_the_state_path():
  """Slots are named after their path in the state: the variable, then
  each step of the path (a chain's index, a group's name, a field, a
  custom node's child position), joined by "_"."""
  names = {}
  for factory in (adam_matrices_sgd_others, traced_sgd):
    optimizer = tf_bridge.keras_optimizer(factory)(0.05)
    optimizer.build([keras.Variable(np.ones(shape, np.float32),
                                    name=f"variable_{index}")
                     for index, shape in enumerate([(2,), (2, 2)])])
    names[factory.__name__] = [v.name for v in optimizer.variables]
  assert names == {
      "adam_matrices_sgd_others": [
          "iteration", "learning_rate", "variable_0_inner_states_sgd_0_trace",
          "variable_1_inner_states_adam_0_mu",
          "variable_1_inner_states_adam_0_nu",
          "state_inner_states_adam_0_count"],
      "traced_sgd": ["iteration", "learning_rate", "variable_0_0_trace",
                     "variable_1_0_trace"]}


def switchable_momentum(learning_rate=0.1, lazy=False):
  """SGD with momentum whose sparse mode follows an argument: lazy (only
  the touched rows' momentum moves) or dense."""
  return jaxopt_port.with_row_sparse_gradients(
      optax.sgd(learning_rate, momentum=0.9), "rows" if lazy else "dense")


def test_setting_an_argument_changes_the_sparse_mode():
  """A built optimizer whose sparse mode depends on an argument takes the
  new mode at the next step, as the transform made with the new argument
  does in JAX: dense first (every row's momentum moves), then lazy (the
  untouched row keeps its value)."""
  optimizer = tf_bridge.keras_optimizer(switchable_momentum)(0.1)
  table = keras.Variable(np.ones((4, 2), np.float32), name="table")
  steps = [[0, 1], [0]]

  def sparse(rows):
    return tf.IndexedSlices(tf.ones((len(rows), 2)),
                            tf.constant(rows, tf.int32), tf.constant([4, 2]))

  optimizer.apply_gradients([(sparse(steps[0]), table)])
  optimizer.lazy = True
  optimizer.apply_gradients([(sparse(steps[1]), table)])
  params = {"table": jnp.ones((4, 2))}
  state = switchable_momentum(0.1).init(params)
  for lazy, rows in zip((False, True), steps):
    grads = {"table": jaxopt_port.RowSparse(jnp.asarray(rows),
                                            jnp.ones((len(rows), 2)), 4)}
    updates, state = switchable_momentum(0.1, lazy).update(grads, state,
                                                           params)
    params = jaxopt_port.apply_updates(params, updates)
  np.testing.assert_allclose(table.numpy(), params["table"], rtol=1e-6)
  np.testing.assert_allclose(table.numpy()[:, 0], [0.71, 0.9, 1.0, 1.0],
                             rtol=1e-6)


def ramped_momentum(learning_rate=0.1):
  """Momentum whose state starts at a fill made inside a `jit` (0.5), a ramp
  (not one number) and a scalar literal: the initial values every kind of
  `init` gives."""

  def init(params):
    half = jax.tree.map(
        lambda p: jax.jit(lambda: jnp.full(p.shape, 0.5, p.dtype))(), params)
    ramp = jax.tree.map(
        lambda p: jnp.arange(p.size, dtype=p.dtype).reshape(p.shape), params)
    return {"half": half, "ramp": ramp, "scale": jnp.asarray(2.0)}

  def update(updates, state, params=None):
    del params
    half = jax.tree.map(lambda h, g: 0.9 * h + g, state["half"], updates)
    return (jax.tree.map(lambda h, r: -learning_rate * (h + 0.01 * r), half,
                         state["ramp"]),
            {**state, "half": half})

  return optax.GradientTransformation(init, update)


@pytest.mark.parametrize("legacy", [False, True], ids=["keras3", "legacy"])
def test_initial_state_of_every_kind_is_the_transforms(legacy):
  shapes = [(2, 3), (4,)]
  transform = ramped_momentum(0.1)
  expected = transform.init({f"v{i}": jnp.zeros(s) for i, s in
                             enumerate(shapes)})
  host = tf_bridge.legacy if legacy else tf_bridge
  variable = tf.Variable if legacy else keras.Variable
  built = built_variables(
      host.keras_optimizer(ramped_momentum)(0.1),
      [variable(np.ones(s, np.float32)) for s in shapes])
  # After `iter` (OptimizerV2), or `iteration` and `learning_rate`.
  state = built[1:] if legacy else built[2:]
  values = sorted((tuple(v.shape), np.asarray(v).tolist()) for v in state)
  assert values == sorted(
      (tuple(np.shape(leaf)), np.asarray(leaf).tolist())
      for leaf in jax.tree.leaves(expected))
