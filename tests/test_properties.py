"""Property-based tests (hypothesis): random parameter trees, dtypes and
hyperparameters.

The default profile ("ci", see conftest.py) is small and derandomized so the
suite stays in budget and CI is reproducible; run a longer search with
`HYPOTHESIS_PROFILE=long pytest tests/test_properties.py`.
"""

import jax
import jax.numpy as jnp
import jaxopt_port
import keras
import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import tf_bridge
from tf_bridge import testing

DTYPES = {"float32": jnp.float32, "bfloat16": jnp.bfloat16,
          "float16": jnp.float16}
learning_rates = st.floats(1e-4, 0.5)
fractions = st.floats(0.0, 0.999)

# name -> strategy of keyword arguments, the same names for the port and for
# the Keras 3 class (tf_bridge.<Name>).
OPTIMIZERS = {
    "adam": st.fixed_dictionaries({
        "learning_rate": learning_rates, "beta_1": fractions,
        "beta_2": fractions, "epsilon": st.floats(1e-8, 1.0),
        "amsgrad": st.booleans()}),
    "sgd": st.fixed_dictionaries({
        "learning_rate": learning_rates, "momentum": st.floats(0.0, 1.0),
        "nesterov": st.booleans()}),
    "rmsprop": st.fixed_dictionaries({
        "learning_rate": learning_rates, "rho": fractions,
        "momentum": st.floats(0.0, 1.0), "centered": st.booleans()}),
    "adagrad": st.fixed_dictionaries({
        "learning_rate": learning_rates,
        "initial_accumulator_value": st.floats(0.0, 1.0)}),
    "adamax": st.fixed_dictionaries({"learning_rate": learning_rates,
                                     "beta_1": fractions}),
    "nadam": st.fixed_dictionaries({"learning_rate": learning_rates,
                                    "beta_2": fractions}),
    "lion": st.fixed_dictionaries({"learning_rate": learning_rates,
                                   "beta_1": st.floats(0.001, 1.0),
                                   "beta_2": fractions}),
    "adadelta": st.fixed_dictionaries({"learning_rate": learning_rates,
                                       "rho": fractions}),
    "lamb": st.fixed_dictionaries({"learning_rate": learning_rates,
                                   "beta_1": fractions}),
    "ftrl": st.fixed_dictionaries({
        "learning_rate": learning_rates,
        "l1_regularization_strength": st.floats(0.0, 0.1),
        "l2_regularization_strength": st.floats(0.0, 0.1)}),
}
optimizers = st.sampled_from(sorted(OPTIMIZERS)).flatmap(
    lambda name: st.tuples(st.just(name), OPTIMIZERS[name]))
shapes = st.lists(st.integers(0, 3), min_size=0, max_size=3).map(tuple)


def trees(leaf):
  """Nested dicts of `leaf`, depth 0 to 2, one to four leaves per level."""
  names = st.text("abcdefgh", min_size=1, max_size=3)
  return st.recursive(leaf, lambda children: st.dictionaries(
      names, children, min_size=1, max_size=4), max_leaves=6)


def tree_of_shapes_and_dtypes():
  """Trees of (shape, dtype) leaves, or the empty tree (optax's
  `tree_map_params` calls `init` on one)."""
  return st.one_of(st.just({}),
                   trees(st.tuples(shapes, st.sampled_from(sorted(DTYPES)))))


def make_tree(spec, seed, fill=None):
  rng = np.random.default_rng(seed)

  def leaf(shape_and_dtype):
    shape, dtype = shape_and_dtype
    values = (np.full(shape, fill, np.float32) if fill is not None
              else rng.standard_normal(shape).astype(np.float32))
    return jnp.asarray(values, DTYPES[dtype])
  return jax.tree.map(leaf, spec, is_leaf=lambda x: isinstance(x, tuple))


def layout(tree):
  return (jax.tree.structure(tree),
          [(leaf.shape, leaf.dtype) for leaf in jax.tree.leaves(tree)])


def assert_close(got, want):
  """jit and eager round differently (XLA fuses, contracts to FMA): found
  1.1e-5 apart in float32 after 3 steps of centered RMSprop with momentum 1
  and learning rate 0.5; one bfloat16/float16 ulp is 0.8%/0.1%."""
  for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
    assert a.dtype == b.dtype and a.shape == b.shape
    low = a.dtype in (jnp.bfloat16, jnp.float16)
    np.testing.assert_allclose(np.asarray(a, np.float32),
                               np.asarray(b, np.float32),
                               rtol=2e-2 if low else 1e-4,
                               atol=2e-2 if low else 1e-6)


@given(spec=tree_of_shapes_and_dtypes(), optimizer=optimizers,
       seed=st.integers(0, 2**16))
def test_port_jit_and_eager_agree_and_state_keeps_its_layout(spec, optimizer,
                                                             seed):
  name, arguments = optimizer
  transform = getattr(jaxopt_port, name)(**arguments)
  params = make_tree(spec, seed)
  state = transform.init(params)
  initial_layout = layout(state)
  jitted_params, jitted_state = params, state
  update = jax.jit(transform.update)
  for step in range(3):
    grads = make_tree(spec, seed + 1 + step)
    updates, state = transform.update(grads, state, params)
    jitted_updates, jitted_state = update(grads, jitted_state, jitted_params)
    assert layout(updates) == layout(params)
    assert layout(state) == initial_layout
    assert layout(jitted_state) == initial_layout
    assert_close(jitted_updates, updates)
    assert_close(jitted_state, state)
    params = jax.tree.map(lambda p, u: p + u, params, updates)
    jitted_params = jax.tree.map(lambda p, u: p + u, jitted_params,
                                 jitted_updates)


@given(spec=tree_of_shapes_and_dtypes(), optimizer=optimizers,
       seed=st.integers(0, 2**16))
def test_init_never_reads_parameter_values(spec, optimizer, seed):
  """These optimizers' initial state depends on the params' shapes and
  dtypes only: NaN params give the same state as random ones."""
  name, arguments = optimizer
  transform = getattr(jaxopt_port, name)(**arguments)
  from_values = transform.init(make_tree(spec, seed))
  from_nan = transform.init(make_tree(spec, seed, fill=np.nan))
  assert layout(from_nan) == layout(from_values)
  for a, b in zip(jax.tree.leaves(from_nan), jax.tree.leaves(from_values)):
    np.testing.assert_array_equal(np.asarray(a, np.float32),
                                  np.asarray(b, np.float32))


# Variables of real sizes (1 to 1728 elements) for the comparisons with
# native Keras.
sized_shapes = st.lists(st.integers(1, 12), min_size=0, max_size=3).map(
    tuple)


@settings(max_examples=max(3, settings().max_examples // 5))
@given(shape_list=st.lists(sized_shapes, min_size=1, max_size=3),
       optimizer=optimizers, seed=st.integers(0, 2**16))
def test_port_and_keras3_bridge_equal_native(shape_list, optimizer, seed):
  """The port and the bridged class follow native Keras 3 (the ground
  truth) over 5 steps, float32 variables, for random hyperparameters; an
  example whose native trajectory moves too little to tell a do-nothing
  optimizer apart is discarded."""
  name, arguments = optimizer
  class_name = {"sgd": "SGD", "rmsprop": "RMSprop"}.get(
      name, name[:1].upper() + name[1:])
  initial, gradients = testing.seeded_problem(5, seed, 1.0, shape_list)
  native = testing.native_trajectory(
      getattr(keras.optimizers, class_name)(**arguments), initial, gradients)
  assume(testing.movement(native, initial, rtol=1e-5, atol=1e-6)
         >= testing.POWER)
  bridged = testing.native_trajectory(
      getattr(tf_bridge, class_name)(**arguments), initial, gradients)
  port = testing.transform_trajectory(
      getattr(jaxopt_port, name)(**arguments), initial, gradients)
  for actual, label in ((port, "port"), (bridged, "bridge")):
    testing.compare_trajectories(actual, native, rtol=1e-5, atol=1e-6,
                                 actual_name=label, initial=initial)
  assert keras.backend.backend() == "tensorflow"
