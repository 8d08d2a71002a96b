"""Row-sparse gradients: `jaxopt_port.RowSparse` in the ports, and
`tf.IndexedSlices` in the bridge, cost the touched rows and compute what the
native optimizer computes on sparse gradients.

Each catalog declaration says how its native class applies sparse gradients
(`Declaration.sparse_rows`): "rows" (touched rows of the variable and its
slots only), "params" (slots everywhere, the variable on touched rows) or
"dense". The native class checks the declaration here; the dense-result and
native-sparse parities of the bridge are in test_bridge_sparse.py
(`test_bridged_sparse`), TF Addons' sparse formulas in test_addons.py.
"""

import collections
import re

import jax
import jax.numpy as jnp
import jaxopt_port
import keras
import numpy as np
import optax
import pytest
import tensorflow as tf
import tf_keras
from jaxopt_port import RowSparse

import tf_bridge
import tf_bridge.legacy
from tf_bridge import catalog, testing
from bridge_cases import (bridged_class, bridged_step_hlo, densify,
                          keras_trajectory, problem)

SPARSE = 3  # The variable of bridge_cases.problem(sparse=True) that is.
ROWS = 6
STEPS = 12


def sparse_problem(steps=STEPS):
  initial, gradients = problem(sparse=True)
  return initial, gradients[:steps]


def untouched(step_gradients):
  _, indices = step_gradients[SPARSE]
  return sorted(set(range(ROWS)) - set(indices.tolist()))


def row_sparse_gradients(step_gradients):
  values, indices = step_gradients[SPARSE]
  grads = [jnp.asarray(g) for g in step_gradients[:SPARSE]]
  return grads + [RowSparse(jnp.asarray(indices), jnp.asarray(values), ROWS)]


def port_trajectory(transform, initial, gradients):
  """The port on RowSparse gradients, jitted with params and state donated;
  also the state after each step."""

  @jax.jit
  def step(params, state, grads):
    updates, state = transform.update(grads, state, params)
    return jaxopt_port.apply_updates(params, updates), state

  donating = jax.jit(step, donate_argnums=(0, 1))
  params = [jnp.asarray(value) for value in initial]
  state = transform.init(params)
  trajectory, states = [], []
  for step_gradients in gradients:
    params, state = donating(params, state, row_sparse_gradients(
        step_gradients))
    trajectory.append([np.asarray(p) for p in params])
    states.append(jax.tree.map(np.asarray, state))
  return trajectory, states


WITH_PORT = [d for d in catalog.CATALOG]
IDS = [d.name for d in WITH_PORT]


def test_declarations():
  """What each port declares (and the bridge and the tests read)."""
  declared = collections.defaultdict(list)
  for declaration in catalog.CATALOG:
    declared[declaration.sparse_rows()].append(declaration.name)
  assert sorted(declared["rows"]) == sorted([
      "sgd", "adagrad", "vanilla_sgd", "adagrad_decay", "legacy.sgd",
      "legacy.adagrad", "legacy.adamax", "legacy.adadelta", "legacy.ftrl",
      "legacy.vanilla_sgd", "legacy.adagrad_decay", "tf1.gradient_descent",
      "tf1.momentum", "tf1.adagrad", "tf1.adagrad_da", "tf1.adadelta",
      "tf1.rmsprop", "tf1.ftrl", "tf1.proximal_adagrad",
      "tf1.proximal_gradient_descent", "addons.sgdw", "addons.lazy_adam",
      "addons.novograd", "addons.conditional_gradient",
      "addons.proximal_adagrad", "tfrs.clippy_adagrad", "tf_keras.adagrad"])
  assert sorted(declared["params"]) == [
      "addons.rectified_adam", "addons.yogi", "legacy.nadam", "legacy.rmsprop"]
  assert declared["refused"] == ["tf_models.lars"]
  # Arguments decide where the native kernel does.
  assert catalog.lookup("sgd").sparse_rows(momentum=0.9) == "dense"
  assert catalog.lookup("legacy.rmsprop").sparse_rows() == "params"
  assert catalog.lookup("legacy.rmsprop").sparse_rows(momentum=0.5) == "rows"
  # Keras decays, averages and resets accumulators on every row.
  for base in ({"weight_decay": 0.1}, {"use_ema": True},
               {"gradient_accumulation_steps": 2}):
    assert catalog.lookup("adagrad").sparse_rows(**base) == "dense"


def _native_rows(optimizer):
  """The native optimizer's variables that are rows of the sparse
  variable (its slots), as numpy."""
  if isinstance(optimizer, keras.optimizers.Optimizer):
    variables = optimizer.variables
  else:
    variables = optimizer.variables()
  values = [np.asarray(keras.ops.convert_to_numpy(v)) for v in variables]
  return [v for v in values if v.ndim >= 1 and v.shape[0] == ROWS]


NATIVE = [d for d in catalog.CATALOG if d.has_native]


@pytest.mark.parametrize("declaration", NATIVE, ids=[d.name for d in NATIVE])
def test_native_class_confirms_the_declaration(declaration):
  """The native class on sparse gradients (Keras 3: dense gradients with
  zero rows, its ground truth) leaves untouched rows of the variable and
  its slots where the declaration says "rows", of the variable only where
  it says "params", and moves some untouched row where it says "dense"
  (so the dense path is needed)."""
  initial, gradients = sparse_problem()
  keras3 = declaration.generation == catalog.KERAS
  optimizer = declaration.make_native()
  variables = [(keras.Variable if keras3 else tf.Variable)(
      value, name=f"variable_{index}") for index, value in enumerate(initial)]
  moved_variable = moved_slot = False
  for step_gradients in gradients:
    rows = untouched(step_gradients)
    before = np.asarray(keras.ops.convert_to_numpy(variables[SPARSE]))
    slots_before = _native_rows(optimizer) if optimizer.variables else []
    grads = [tf.constant(g) for g in step_gradients[:SPARSE]]
    values, indices = step_gradients[SPARSE]
    sparse = tf.IndexedSlices(tf.constant(values), tf.constant(indices),
                              tf.constant([ROWS, 3]))
    grads.append(tf.convert_to_tensor(sparse) if keras3 else sparse)
    testing.apply_gradients(optimizer, grads, variables)
    after = np.asarray(keras.ops.convert_to_numpy(variables[SPARSE]))
    moved_variable |= not np.array_equal(after[rows], before[rows])
    for old, new in zip(slots_before, _native_rows(optimizer)):
      moved_slot |= not np.array_equal(old[rows], new[rows])
  expected = {"rows": (False, False), "params": (False, True)}.get(
      declaration.sparse_rows())
  if expected is None:  # "dense": some untouched row moves.
    assert moved_variable or moved_slot
  else:
    assert (moved_variable, moved_slot) == expected


@pytest.mark.parametrize("declaration", WITH_PORT, ids=IDS)
def test_port_takes_row_sparse_gradients(declaration):
  """The port on RowSparse gradients (duplicates summed, jitted, donated):
  equal to the bridge on the same tf.IndexedSlices (which test_bridge_sparse.py
  and test_addons.py hold to the native sparse result), and for "rows"
  every untouched row of the parameter (port and bridge) and of the port's
  state leaves is bit-identical, for "params" the parameter's; "dense"
  equals the port on dense gradients."""
  initial, gradients = sparse_problem()
  mode = declaration.sparse_rows()
  # Adadelta barely moves at Keras's default 0.001: a comparison with it
  # could not fail (testing.POWER).
  arguments = ({"learning_rate": 1.0} if declaration.port.__name__
               == "adadelta" else {})
  transform = declaration.make_port(**arguments)
  assert jaxopt_port.sparse_mode(transform) == mode
  if mode == "refused":  # As Model Garden's LARS (test_tf_libraries).
    refused = re.escape("Applying sparse gradients is not implemented.")
    with pytest.raises(NotImplementedError, match=refused):
      port_trajectory(transform, initial, gradients)
    with pytest.raises(NotImplementedError, match=refused):
      keras_trajectory(bridged_class(declaration)(**declaration.required),
                       initial, gradients, sparse=True)
    return
  port, states = port_trajectory(transform, initial, gradients)
  bridged = keras_trajectory(
      bridged_class(declaration)(**{**declaration.required, **arguments}),
      initial, gradients, sparse=True)
  testing.compare_trajectories(port, bridged, rtol=1e-5, atol=1e-6,
                               actual_name="port on RowSparse",
                               expected_name="bridge on IndexedSlices")
  if mode == "dense":
    dense = testing.transform_trajectory(declaration.make_port(**arguments),
                                         initial, densify(gradients))
    testing.compare_trajectories(port, dense, rtol=1e-6, atol=1e-7,
                                 actual_name="port on RowSparse",
                                 expected_name="port on dense")
    return
  if mode == "touched":  # Which rows move is the algorithm's: test_addons.
    return
  previous, previous_state = initial, jax.tree.map(
      np.asarray, transform.init([jnp.asarray(v) for v in initial]))
  for step, step_gradients in enumerate(gradients):
    rows = untouched(step_gradients)
    np.testing.assert_array_equal(port[step][SPARSE][rows],
                                  previous[SPARSE][rows])
    bridged_before = initial if step == 0 else bridged[step - 1]
    np.testing.assert_array_equal(bridged[step][SPARSE][rows],
                                  bridged_before[SPARSE][rows])
    if mode == "rows":
      for old, new in zip(jax.tree.leaves(previous_state),
                          jax.tree.leaves(states[step])):
        if new.ndim >= 1 and new.shape[0] == ROWS:
          np.testing.assert_array_equal(new[rows], old[rows])
    previous, previous_state = port[step], states[step]


def _full_table_arithmetic(hlo, shape):
  """The opcodes of instructions that compute a whole `shape` array
  elementwise (a parameter, a scatter into it or a fusion wrapping one
  cost no pass over it)."""
  pattern = (r"= f32\[" + ",".join(map(str, shape))
             + r"\]\{[^}]*\} ([\w\-]+)\(")
  return collections.Counter(
      op for op in re.findall(pattern, hlo)
      if op not in ("parameter", "scatter", "fusion", "bitcast"))


TABLE = (20_000, 8)
LAZY = [d for d in catalog.CATALOG if d.sparse_rows() == "rows"]


@pytest.mark.parametrize("declaration", LAZY, ids=[d.name for d in LAZY])
def test_lazy_port_step_touches_only_rows(declaration):
  """Compiled with donation, a "rows" port's step on a large table holds no
  elementwise pass over the table and no copy of it: only gathers and
  in-place scatters of the touched rows. (Adam's dense step, the control,
  has both.)"""
  transform = declaration.make_port()
  params = {"table": jnp.zeros(TABLE), "bias": jnp.zeros((3,))}
  grads = {"table": RowSparse(jnp.zeros(64, jnp.int32), jnp.ones((64, 8)),
                              TABLE[0]), "bias": jnp.ones((3,))}

  def hlo(transform):
    state = transform.init(params)

    def step(params, state, grads):
      updates, state = transform.update(grads, state, params)
      return jaxopt_port.apply_updates(params, updates), state

    return jax.jit(step, donate_argnums=(0, 1)).lower(
        params, state, grads).compile().as_text()

  assert _full_table_arithmetic(hlo(transform), TABLE) == {}
  assert _full_table_arithmetic(hlo(jaxopt_port.adam()), TABLE)


@pytest.mark.parametrize("legacy", [False, True], ids=["keras3", "legacy"])
def test_bridged_lazy_step_touches_only_rows(legacy):
  """The bridge's compiled step (read, XLA call, assign, as TensorFlow
  compiles it) on a large table and tf.IndexedSlices: no elementwise pass
  over the table; the dense Adam step, the control, has them."""
  def optimized_hlo(optimizer_class):
    variable = (tf.Variable if legacy else keras.Variable)(
        np.zeros(TABLE, np.float32))
    grad = tf.IndexedSlices(tf.ones((64, 8)), tf.zeros(64, tf.int32),
                            tf.constant(TABLE))
    return bridged_step_hlo(optimizer_class(), variable, grad)

  module = tf_bridge.legacy if legacy else tf_bridge
  assert _full_table_arithmetic(optimized_hlo(module.Adagrad), TABLE) == {}
  assert _full_table_arithmetic(optimized_hlo(module.Adam), TABLE)


def test_dynamic_lengths_and_fit():
  """tf_keras `model.fit` (batch dimension unknown, a smaller last batch)
  with an Embedding: the bridge's row-by-row step equals native's."""
  rng = np.random.default_rng(0)
  tokens = rng.integers(0, 300, (100, 4))
  targets = rng.standard_normal((100, 1)).astype(np.float32)

  def train(optimizer):
    tf_keras.utils.set_random_seed(0)
    model = tf_keras.Sequential([
        tf_keras.layers.Input((4,), dtype="int32"),
        tf_keras.layers.Embedding(300, 4), tf_keras.layers.Flatten(),
        tf_keras.layers.Dense(1)])
    model.compile(optimizer, "mse")
    history = model.fit(tokens, targets, batch_size=32, epochs=2, verbose=0)
    return history.history["loss"], model.get_weights()

  native_loss, native = train(tf_keras.optimizers.legacy.Ftrl(0.5))
  bridged_optimizer = tf_bridge.legacy.Ftrl(0.5)
  bridged_loss, bridged = train(bridged_optimizer)
  np.testing.assert_allclose(bridged_loss, native_loss, rtol=1e-5)
  for got, want in zip(bridged, native):
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
  sparse_keys = [k for k in bridged_optimizer._fused._steps  # pylint: disable=protected-access
                 if k[0] == "tf" and any(k[2])]
  assert len(sparse_keys) == 1  # One conversion for every batch length.


# --- RowSparse itself -------------------------------------------------------


def test_row_sparse_basics():
  grad = RowSparse.from_lookup(jnp.array([[1, 3], [1, 7]]),
                               jnp.arange(12.).reshape(2, 2, 3), 5)
  assert grad.shape == (5, 3) and grad.indices.shape == (4,)
  np.testing.assert_array_equal(
      grad.todense(),
      [[0, 0, 0], [6, 8, 10], [0, 0, 0], [3, 4, 5], [0, 0, 0]])  # 7: dropped.
  negative = RowSparse(jnp.array([-1, 0]), jnp.ones((2, 3)), 5)
  np.testing.assert_array_equal(negative.todense()[4], [0, 0, 0])
  with pytest.raises(ValueError, match=r"must start with the shape of ids"):
    RowSparse.from_lookup(jnp.zeros((2, 2), jnp.int32), jnp.zeros((2, 3)), 5)
  params = {"a": jnp.ones((5, 3))}
  updated = jaxopt_port.apply_updates(params, {"a": grad})
  np.testing.assert_array_equal(updated["a"], 1 + grad.todense())
  # Leaves flatten (jit, donation, orbax see arrays); num_rows is static.
  assert len(jax.tree.leaves(grad)) == 2


def test_row_sparse_errors_name_the_path():
  transform = jaxopt_port.legacy.sgd(0.1)
  params = {"table": jnp.ones((5, 3))}
  state = transform.init(params)
  with pytest.raises(ValueError, match=r"\['table'\] has dense shape "
                     r"\(6, 3\), expected \(5, 3\)"):
    transform.update({"table": RowSparse(jnp.array([0]), jnp.ones((1, 3)),
                                         6)}, state, params)
  with pytest.raises(ValueError, match=r"\['table'\] has indices of shape "
                     r"\(1, 1\)"):
    transform.update({"table": RowSparse(jnp.array([[0]]), jnp.ones((1, 3)),
                                         5)}, state, params)
  with pytest.raises(ValueError, match="mode must be one of"):
    jaxopt_port.with_row_sparse_gradients(optax.sgd(0.1), "lazy")


def test_a_transform_declares_a_static_length_mode():
  """`declare_sparse_mode` (a port's): the mode `sparse_mode` then reads;
  None declares nothing; the modes of `with_row_sparse_gradients` are
  refused, naming the ones it takes."""
  from jaxopt_port import _row_sparse  # pylint: disable=import-outside-toplevel
  transform = optax.sgd(0.1)
  assert _row_sparse.declare_sparse_mode(transform, None) is transform
  assert jaxopt_port.sparse_mode(transform) is None
  assert _row_sparse.declare_sparse_mode(transform, "entries") is transform
  assert jaxopt_port.sparse_mode(transform) == "entries"
  with pytest.raises(ValueError, match=r"mode must be one of \('entries', "
                     r"'summed_entries'\), got 'rows'"):
    _row_sparse.declare_sparse_mode(optax.sgd(0.1), "rows")


def test_any_transform_can_take_rows():
  """`with_row_sparse_gradients(tx, "rows")` makes an optax transform whose
  update is row by row take RowSparse gradients; None gradients, dense
  leaves and repeated rows work beside them."""
  transform = jaxopt_port.with_row_sparse_gradients(
      optax.adagrad(0.1), "rows")
  assert jaxopt_port.sparse_mode(transform) == "rows"
  assert jaxopt_port.sparse_mode(optax.adagrad(0.1)) is None
  params = {"table": jnp.arange(15.).reshape(5, 3), "w": jnp.ones(2)}
  state = transform.init(params)
  grads = {"table": RowSparse(jnp.array([4, 1, 4]), jnp.ones((3, 3)), 5),
           "w": jnp.ones(2)}
  updates, new_state = jax.jit(transform.update)(grads, state, params)
  new = jaxopt_port.apply_updates(params, updates)
  dense_updates, dense_state = optax.adagrad(0.1).update(
      {"table": grads["table"].todense(), "w": grads["w"]}, state, params)
  touched = np.array([1, 4])
  np.testing.assert_allclose(
      np.asarray(new["table"])[touched],
      np.asarray(optax.apply_updates(params, dense_updates)["table"])[touched],
      rtol=1e-6)
  np.testing.assert_array_equal(np.asarray(new["table"])[[0, 2, 3]],
                                np.asarray(params["table"])[[0, 2, 3]])
  np.testing.assert_array_equal(
      np.asarray(new_state[0].sum_of_squares["table"])[[0, 2, 3]],
      np.asarray(state[0].sum_of_squares["table"])[[0, 2, 3]])
  np.testing.assert_allclose(new["w"], optax.apply_updates(
      params, dense_updates)["w"], rtol=1e-6)
  del dense_state
