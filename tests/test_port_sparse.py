"""`tf_bridge.port` given `jaxopt_port.RowSparse` gradients runs them
through what the class does with `tf.IndexedSlices`: its sparse hook
(OptimizerV2's `_resource_apply_sparse` after its duplicate indices are
summed, or its own `_resource_apply_sparse_duplicate_indices`; TF1's;
tf_keras 2.11+ and Keras 3 `update_step`), fused sparse kernels and all.
Ground truth is the class itself given the same `tf.IndexedSlices` (a
repeated index at every step) for 30 steps; the comparison parts from the
class with one hyperparameter 1 % off, and, where the class's sparse step is
not its dense one, from the class given the gradients densified. TF Addons'
LazyAdam: tests/scripts/port_sparse_addons.py."""

import jax
import jax.numpy as jnp
import keras
import numpy as np
import optax
import pytest
import tensorflow as tf
import tf_keras
from tensorflow.python.keras.optimizer_v2 import adagrad as old_keras_adagrad
from tensorflow.python.keras.optimizer_v2 import rmsprop as old_keras_rmsprop

import jaxopt_port
import originals
import port_sparse_cases as cases
from port_classes import (CatchUpMomentum, DampedSGD, EntrySignSGD,
                          LazyMomentum, RampSGD, RangeSGD, RowDecayAdagrad,
                          RowDecaySGD, TopEntriesSGD, VisitSGD)
import tf_bridge
from tf_bridge import testing

pytestmark = pytest.mark.xdist_group("port_sparse")

legacy, v1 = tf_keras.optimizers.legacy, tf.compat.v1.train
MUTATION = 1.01


# Each case: the optimizer with one hyperparameter multiplied by `k`, and
# whether its sparse step differs from its dense one on this problem (a
# lazy kernel; Keras 3's TensorFlow backend squares repeated indices
# apart; a class's own treatment of them).
CASES = {
    "legacy.SGD(momentum)": (lambda k: legacy.SGD(0.01, momentum=0.9 * k),
                             True),
    "legacy.SGD": (lambda k: legacy.SGD(0.01 * k), False),
    "legacy.Adagrad": (lambda k: legacy.Adagrad(0.1 * k), False),
    "legacy.Adadelta": (lambda k: legacy.Adadelta(1.0 * k), False),
    "legacy.Adam": (lambda k: legacy.Adam(0.01 * k), False),
    "legacy.Ftrl": (lambda k: legacy.Ftrl(
        0.1 * k, l1_regularization_strength=0.001,
        l2_regularization_strength=0.01,
        l2_shrinkage_regularization_strength=0.01), True),
    "legacy.RMSprop(centered)": (lambda k: legacy.RMSprop(
        0.01 * k, momentum=0.5, centered=True), True),
    "tf1.GradientDescent": (lambda k: v1.GradientDescentOptimizer(0.01 * k),
                            False),
    "tf1.Momentum": (lambda k: v1.MomentumOptimizer(0.01, 0.9 * k), True),
    "tf1.Adagrad": (lambda k: v1.AdagradOptimizer(0.1 * k), False),
    "tf1.Adam": (lambda k: v1.AdamOptimizer(0.01 * k), False),
    "tf1.Ftrl": (lambda k: v1.FtrlOptimizer(
        0.1 * k, l1_regularization_strength=0.001,
        l2_regularization_strength=0.01), False),
    "tf1.ProximalAdagrad": (lambda k: v1.ProximalAdagradOptimizer(
        0.1 * k, l1_regularization_strength=0.001,
        l2_regularization_strength=0.01), True),
    "tf1.RMSProp": (lambda k: v1.RMSPropOptimizer(0.01 * k, momentum=0.5),
                    True),
    "tf1.ProximalGradientDescent": (
        lambda k: v1.ProximalGradientDescentOptimizer(
            0.01 * k, l1_regularization_strength=0.001,
            l2_regularization_strength=0.01), True),
    "tf1.AdagradDA": (lambda k: v1.AdagradDAOptimizer(
        0.1 * k, tf.Variable(0, dtype=tf.int64),
        l1_regularization_strength=0.001, l2_regularization_strength=0.01),
                      True),
    "tensorflow.python.keras.Adagrad": (lambda k: old_keras_adagrad.Adagrad(
        0.1 * k), False),
    "tensorflow.python.keras.RMSprop": (lambda k: old_keras_rmsprop.RMSprop(
        0.01 * k), False),
    "tf_keras.Adam": (lambda k: tf_keras.optimizers.Adam(0.01 * k), False),
    "keras.Adam": (lambda k: keras.optimizers.Adam(0.01 * k), True),
    "user.LazyMomentum(OptimizerV2)": (
        lambda k: LazyMomentum(0.01, momentum=0.9 * k), True),
    "user.EntrySignSGD(OptimizerV2)": (lambda k: EntrySignSGD(0.01 * k),
                                       True),
    "user.RowDecayAdagrad(TF1)": (lambda k: RowDecayAdagrad(0.1 * k), True),
    "user.RowDecaySGD(OptimizerV2, scatter_mul)": (
        lambda k: RowDecaySGD(0.01, decay=0.95 * k), True),
    "user.DampedSGD(TF1, scatter_div)": (
        lambda k: DampedSGD(0.01, damping=0.5 * k), True),
    "user.RangeSGD(OptimizerV2, scatter_max/min)": (
        lambda k: RangeSGD(0.01 * k), True),
    "user.CatchUpMomentum(OptimizerV2, scatter_nd_*)": (
        lambda k: CatchUpMomentum(0.01, momentum=0.9 * k), True),
}
NAMES = list(CASES)
DIFFERING = [name for name in NAMES if CASES[name][1]]


@pytest.fixture(scope="module")
def runs():
  """Per case: its port's trajectory given RowSparse gradients (all ports
  in one jitted program), the class's given the same IndexedSlices, its
  mutant's, and the class's given them densified (the natives in one
  `tf.function` call where the API allows)."""
  initial, gradients = cases.problem()
  makes = [CASES[name][0] for name in NAMES]
  natives = testing.native_trajectories(
      [make(1.0) for make in makes] + [make(MUTATION) for make in makes],
      initial, gradients)
  dense = testing.native_trajectories(
      [CASES[name][0](1.0) for name in DIFFERING], initial,
      cases.densified(gradients))
  ports = cases.port_trajectories(
      [tf_bridge.port(make(1.0)) for make in makes], initial, gradients)
  dense_of = dict(zip(DIFFERING, dense))
  return {name: (ports[i], natives[i], natives[len(NAMES) + i],
                 dense_of.get(name))
          for i, name in enumerate(NAMES)}


@pytest.mark.parametrize("name", NAMES)
def test_port_follows_the_classes_sparse_step(runs, name):
  ported, native, _, _ = runs[name]
  testing.compare_trajectories(ported, native, rtol=cases.RTOL,
                               atol=cases.ATOL, initial=cases.problem()[0],
                               expected_name=name)


@pytest.mark.parametrize("name", NAMES)
def test_port_parts_from_a_mutant(runs, name):
  ported, _, mutant, _ = runs[name]
  with pytest.raises(AssertionError, match="part at step"):
    testing.compare_trajectories(ported, mutant, rtol=cases.RTOL,
                                 atol=cases.ATOL, initial=cases.problem()[0],
                                 expected_name=f"{name} (mutant)")


@pytest.mark.parametrize("name", DIFFERING)
def test_port_parts_from_the_class_given_dense_gradients(runs, name):
  """The sparse hook, not the dense one, ran: where the two differ, the
  port parts from the class given the gradients densified."""
  ported, _, _, dense = runs[name]
  with pytest.raises(AssertionError, match="part at step"):
    testing.compare_trajectories(ported, dense, rtol=cases.RTOL,
                                 atol=cases.ATOL, initial=cases.problem()[0],
                                 expected_name=f"{name} (dense)")


def test_tf_addons_lazy_adam_through_port():
  """LazyAdam's `_resource_apply_sparse` (its point): its port equals the
  class; it parts from a 1 % mutant and from TFA's (non-lazy) Adam."""
  results = originals.run("port_sparse_addons.py")
  assert results["port"] is None, results["port"]
  assert "part at step" in results["mutant"], results["mutant"]
  assert "part at step" in results["dense"], results["dense"]


def test_padding_rows_are_ignored():
  """Entries outside the table (a RowSparse's padding) move nothing: the
  update equals the one without them, jitted."""
  transform = tf_bridge.port(legacy.SGD(0.1, momentum=0.9))
  params = {"table": jnp.arange(12.0).reshape(4, 3)}
  state = transform.init(params)
  values = jnp.ones((4, 3))
  padded = jaxopt_port.RowSparse(jnp.array([1, -1, 4, 1]), values, 4)
  plain = jaxopt_port.RowSparse(jnp.array([1, 1]), values[:2], 4)
  update = jax.jit(transform.update)
  got, got_state = update({"table": padded}, state, params)
  want, want_state = update({"table": plain}, state, params)
  np.testing.assert_array_equal(got["table"], want["table"])
  np.testing.assert_array_equal(got_state.slots["momentum"]["table"],
                                want_state.slots["momentum"]["table"])
  assert float(jnp.abs(got["table"][1]).sum()) > 0


def test_padding_rows_are_ignored_by_n_d_scatters():
  """A padding entry (negative, past the last row, the largest integer)
  moves nothing through the N-d scatters either: on the rows and on their
  entries, whose full index multiplies the padding row (int32, wrapping)."""
  transform = tf_bridge.port(CatchUpMomentum(0.1))
  params = {"table": jnp.arange(12.0).reshape(4, 3) / 10}
  state = transform.init(params)
  values = jnp.ones((4, 3))
  largest = np.iinfo(np.int32).max
  padded = jaxopt_port.RowSparse(jnp.array([1, -1, largest, 2], jnp.int32),
                                 values, 4)
  plain = jaxopt_port.RowSparse(jnp.array([1, 2], jnp.int32), values[:2], 4)
  update = jax.jit(transform.update)
  got, got_state = update({"table": padded}, state, params)
  want, want_state = update({"table": plain}, state, params)
  np.testing.assert_array_equal(got["table"], want["table"])
  for name in ("m", "last"):
    np.testing.assert_array_equal(got_state.slots[name]["table"],
                                  want_state.slots[name]["table"])
  assert float(jnp.abs(got["table"][1]).sum()) > 0


def test_scatter_max_and_min_keep_a_row_where_an_update_is_nan():
  """As TensorFlow's kernels (Eigen's max and min), where XLA's maximum
  would take the NaN: the port's slots equal the class's after a step with
  a NaN entry."""
  values = np.array([[np.nan, 1.0], [2.0, -3.0], [0.5, np.nan]], np.float32)
  indices = np.array([0, 2, 0], np.int32)
  variable = tf.Variable(np.ones((3, 2), np.float32))
  native = RangeSGD(0.1)
  native.apply_gradients([(tf.IndexedSlices(values, indices), variable)])
  transform = tf_bridge.port(RangeSGD(0.1))
  params = {"table": jnp.ones((3, 2))}
  _, state = transform.update(
      {"table": jaxopt_port.RowSparse(jnp.asarray(indices),
                                      jnp.asarray(values), 3)},
      transform.init(params), params)
  for name in ("hi", "lo"):
    np.testing.assert_array_equal(state.slots[name]["table"],
                                  native.get_slot(variable, name).numpy())


class PyFunctionSparse(legacy.SGD):

  def _resource_apply_sparse(self, grad, var, indices, apply_state=None):
    grad = tf.py_function(lambda g: g * 2, [grad], grad.dtype)
    return super()._resource_apply_sparse(grad, var, indices, apply_state)


class DenseOnly(legacy.Optimizer):

  def __init__(self, learning_rate=0.1, name="DenseOnly", **kwargs):
    super().__init__(name, **kwargs)
    self._set_hyper("learning_rate", learning_rate)

  def _resource_apply_dense(self, grad, var, apply_state=None):
    return var.assign_sub(self._decayed_lr(var.dtype) * grad)


def test_a_sparse_hook_is_checked_at_the_first_sparse_update():
  """`port` checks the step on dense gradients; the sparse hook's refusal
  comes at the first update given a RowSparse gradient, naming it; a class
  with no sparse hook raises as it does natively."""
  params = {"table": jnp.ones((4, 3))}
  grads = {"table": jaxopt_port.RowSparse(jnp.array([0, 2]),
                                          jnp.ones((2, 3)), 4)}
  transform = tf_bridge.port(PyFunctionSparse(0.1, momentum=0.9))
  state = transform.init(params)
  transform.update({"table": jnp.ones((4, 3))}, state, params)
  with pytest.raises(tf_bridge.PortError) as refused:
    transform.update(grads, state, params)
  assert str(refused.value).startswith(
      "tf_bridge.port cannot convert PyFunctionSparse._resource_apply_sparse: "
      "it calls tf.py_function (op EagerPyFunc"), str(refused.value)
  dense_only = tf_bridge.port(DenseOnly())
  with pytest.raises(NotImplementedError,
                     match="`_resource_apply_sparse` Must be implemented in "
                     "subclasses"):
    dense_only.update(grads, dense_only.init(params), params)


def test_a_malformed_row_sparse_gradient_is_refused_naming_its_path():
  transform = tf_bridge.port(legacy.SGD(0.1))
  params = {"table": jnp.ones((4, 3))}
  grads = {"table": jaxopt_port.RowSparse(jnp.array([0]), jnp.ones((1, 3)),
                                          5)}
  with pytest.raises(ValueError, match=r"The RowSparse gradient at "
                     r"\['table'\] has dense shape \(5, 3\), expected "
                     r"\(4, 3\)"):
    transform.update(grads, transform.init(params), params)


# Classes whose sparse hooks convert for a symbolic number of entries: by
# each kind of scatter, through `tf.unique` (those that sum repeated
# indices first), and with shapes computed from the entries' (`tf.size`,
# `tf.shape`, `tf.meshgrid`, the smaller of their number and a cap as the k
# of `tf.math.top_k`); each with one hyperparameter multiplied by `k`.
SYMBOLIC_CASES = {
    "own duplicate indices hook": lambda k: EntrySignSGD(0.01 * k),
    "scatter_mul": lambda k: RowDecaySGD(0.01, decay=0.95 * k),
    "scatter_max/min": lambda k: RangeSGD(0.01 * k),
    "TF1 scatter_div": lambda k: DampedSGD(0.01, damping=0.5 * k),
    "summed (tf.unique)": lambda k: LazyMomentum(0.01, momentum=0.9 * k),
    "legacy.Adam (fused kernel)": lambda k: legacy.Adam(0.01 * k),
    "tf.ones of tf.size's shape": lambda k: VisitSGD(0.01 * k),
    "tf.meshgrid, N-d scatters": lambda k: CatchUpMomentum(
        0.01, momentum=0.9 * k),
    "top_k of tf.minimum(tf.size, cap)": lambda k: TopEntriesSGD(
        0.01 * k, max_entries=2),
}


def _exported_steps(transform, initial, steps):
  """`transform`'s update exported by `jax.export` with the tables' numbers
  of entries symbolic, run on `steps` (pairs of different numbers)."""
  params = [jnp.asarray(value) for value in initial]
  state = transform.init(params)
  scope = jax.export.SymbolicScope()

  def spec(value, shape, name):
    if not isinstance(value, tuple):
      return jax.ShapeDtypeStruct(value.shape, value.dtype)
    length = jax.export.symbolic_shape(name, scope=scope)[0]
    return jaxopt_port.RowSparse(
        jax.ShapeDtypeStruct((length,),
                             jax.dtypes.canonicalize_dtype(value[1].dtype)),
        jax.ShapeDtypeStruct((length, *shape[1:]), value[0].dtype), shape[0])

  exported = jax.export.export(jax.jit(transform.update))(
      [spec(g, shape, f"n{i}") for i, (g, shape) in enumerate(
          zip(steps[0], cases.SHAPES))],
      *jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype),
                    (state, params)))
  trajectory = []
  for step in steps:
    grads = [jaxopt_port.RowSparse(jnp.asarray(g[1]), jnp.asarray(g[0]),
                                   shape[0])
             if isinstance(g, tuple) else jnp.asarray(g)
             for g, shape in zip(step, cases.SHAPES)]
    updates, state = exported.call(grads, state, params)
    params = optax.apply_updates(params, updates)
    trajectory.append([np.asarray(p) for p in params])
  return trajectory


def _varying_entries():
  """The problem's first four steps, the tables' entries cut to 2 and 3 at
  the second and fourth (a partial batch's)."""
  initial, gradients = cases.problem()
  steps = [[(g[0][:cut], g[1][:cut]) if isinstance(g, tuple) else g
            for g in step]
           for step, cut in zip(gradients, (4, 2, 4, 3))]
  return initial, steps


@pytest.mark.parametrize("name", SYMBOLIC_CASES)
def test_port_takes_a_symbolic_number_of_entries(name):
  """The port exported with `jax.export`, the tables' numbers of entries
  symbolic (one program for every number, as the bridge steps a batch
  dimension traced as None): run on 4, 2, 4 and 3 entries it follows the
  class given the same `tf.IndexedSlices`, and parts from its mutant."""
  initial, steps = _varying_entries()
  make = SYMBOLIC_CASES[name]
  ported = _exported_steps(tf_bridge.port(make(1.0)), initial, steps)
  native, mutant = (testing.native_trajectory(make(k), initial, steps,
                                              backend="eager")
                    for k in (1.0, MUTATION))
  testing.compare_trajectories(ported, native, rtol=cases.RTOL,
                               atol=cases.ATOL, initial=initial,
                               expected_name=name)
  with pytest.raises(AssertionError, match="part at step"):
    testing.compare_trajectories(ported, mutant, rtol=cases.RTOL,
                                 atol=cases.ATOL, initial=initial,
                                 expected_name=f"{name} (mutant)")


def test_a_symbolic_number_of_entries_computes_when_the_step_runs():
  """The port's converter compares a symbolic number (`tf.size`, an element
  of `tf.shape`) to another as the step's values (tf2jax alone compares
  `jax.export`'s symbolic dimensions in numpy, where `n == 4` is False for
  every n), orders, casts and bounds it, counts to it and tiles by it:
  exported once, the step equals TensorFlow's on 4 and 2 entries."""
  import tf2jax  # pylint: disable=import-outside-toplevel
  from tf_bridge import _kernels  # pylint: disable=import-outside-toplevel
  _kernels.register_symbolic_dimensions()

  @tf.function
  def step(entries):
    number = tf.size(entries)
    return (tf.where(tf.equal(number, 4), entries, -entries)
            + tf.where(tf.not_equal(tf.shape(entries)[0], 2), 0.0, 10.0)
            + tf.cast(tf.range(number) * tf.maximum(number, 3), tf.float32)
            / tf.cast(tf.minimum(number, 3), tf.float32)
            + tf.cast(number, tf.float32)
            + tf.tile([tf.where(number > 3, 100.0, 0.0)], [number]))

  converted, _ = tf2jax.convert(step, tf.TensorSpec((None,), tf.float32))
  exported = jax.export.export(jax.jit(lambda x: converted({}, x)[0]))(
      jax.ShapeDtypeStruct(jax.export.symbolic_shape("n"), jnp.float32))
  for entries in (np.arange(1.0, 5.0, dtype=np.float32),
                  np.array([1.0, 2.0], np.float32)):
    np.testing.assert_array_equal(np.asarray(exported.call(entries)),
                                  step(entries).numpy())


# TensorFlow's linspace casts the number to int64, which JAX, in 32-bit
# mode, truncates with a warning while it converts the class.
@pytest.mark.filterwarnings("ignore:Explicitly requested dtype int64")
def test_a_sparse_hook_that_needs_a_number_of_entries_is_refused():
  """A hook that computes a shape from the number of entries as a value of
  the step (`tf.linspace` to it) is refused for a symbolic number, naming
  the class, the op and the cause; the same port takes each static number
  (the bridge densifies then)."""
  initial, steps = _varying_entries()
  with pytest.raises(jaxopt_port.UnknownEntriesError, match=(
      r"^tf_bridge.port cannot convert RampSGD's sparse hook for a number "
      r"of entries known only when the step runs \(its Range op\): "
      r"ConcretizationTypeError: Abstract tracer value encountered where "
      r"concrete value is expected: traced array with shape int32\[\]")):
    _exported_steps(tf_bridge.port(RampSGD(0.01)), initial, steps)
  ported = cases.port_trajectories([tf_bridge.port(RampSGD(0.01))], initial,
                                   steps[:1])[0]
  native, mutant = (testing.native_trajectories([RampSGD(0.01, first=first)],
                                                initial, steps[:1])[0]
                    for first in (0.5, 0.505))
  testing.compare_trajectories(ported, native, rtol=cases.RTOL,
                               atol=cases.ATOL, initial=initial,
                               expected_name="RampSGD")
  with pytest.raises(AssertionError, match="part at step"):
    testing.compare_trajectories(ported, mutant, rtol=cases.RTOL,
                                 atol=cases.ATOL, initial=initial,
                                 expected_name="RampSGD (mutant)")


@pytest.mark.parametrize("make,mode", [
    (lambda: LazyMomentum(0.01), "summed_entries"),
    (lambda: RowDecayAdagrad(0.1), "summed_entries"),
    (lambda: legacy.Adam(0.01), "summed_entries"),
    (lambda: tf_keras.optimizers.Adam(0.01), "summed_entries"),
    (lambda: EntrySignSGD(0.01), "entries"),
    (lambda: legacy.SGD(0.01), "entries"),
    (lambda: v1.GradientDescentOptimizer(0.01), "entries"),
    (lambda: keras.optimizers.Adam(0.01), "entries"),
], ids=["OptimizerV2", "TF1", "legacy.Adam", "tf_keras.Adam",
        "own duplicate indices hook", "legacy.SGD", "tf1.GradientDescent",
        "keras.Adam"])
def test_port_declares_whether_its_class_sums_repeated_indices(make, mode):
  """The port's `sparse_mode`, which the bridge reads: "summed_entries"
  where the class's API sums a sparse gradient's repeated indices before
  its sparse hook (so the bridge may hand it their sum, padded), "entries"
  where the class takes them as they come (it overrides the API's
  `_resource_apply_sparse_duplicate_indices`; Keras 3)."""
  assert jaxopt_port.sparse_mode(tf_bridge.port(make())) == mode
