"""Sparse gradients (`tf.IndexedSlices`) through the bridge against native
Keras's sparse kernels; TF Addons' lazy updates."""

import functools

import keras
import numpy as np
import pytest
import tensorflow as tf
import tf_keras

import tf_bridge
import tf_bridge.legacy
from tf_bridge import catalog, testing

import grids
import mutants
import sampling
from bridge_cases import (bridged_class, problem, to_tensor, densify,
                          keras_trajectory, native_dense_trajectory,
                          optimizer_values)


NATIVE = [d for d in catalog.CATALOG if d.has_native]
SPARSE_CASES = [(d, {}) for d in NATIVE] + [
    (catalog.lookup(name), {"momentum": 0.5})
    for name in ("sgd", "rmsprop", "legacy.sgd", "legacy.rmsprop")]


# In a `tf.function`; every sixth case eagerly too (`sampling`).
SPARSE_MODES = sampling.traced_and_eager(len(SPARSE_CASES), shift=1)


@pytest.mark.parametrize(
    "declaration,kwargs,in_function",
    [(*SPARSE_CASES[index], in_function) for index, in_function
     in SPARSE_MODES],
    ids=[SPARSE_CASES[index][0].name
         + ("-momentum" if SPARSE_CASES[index][1] else "")
         + ("-tf.function" if in_function else "-eager")
         for index, in_function in SPARSE_MODES])
def test_bridged_sparse(declaration, kwargs, in_function):
  """Sparse gradients with duplicate indices summed.

  Legacy, TF1 and tf_keras: the native sparse path is the ground truth (lazy
  where native is lazy; tf_keras deduplicates first). Keras 3: the native dense result is (the TensorFlow backend
  squares duplicate indices separately; the bridge follows the JAX backend,
  docs/known-differences.md).
  """
  initial, gradients = problem(sparse=True)
  bridged = keras_trajectory(
      bridged_class(declaration)(**{**declaration.required, **kwargs}),
      initial, gradients, sparse=True, in_function=in_function)
  native = _sparse_truth(declaration.name, tuple(kwargs.items()))
  testing.compare_trajectories(bridged, native, rtol=1e-5, atol=1e-6,
                               actual_name="bridge",
                               expected_name=declaration.native_path)


@functools.lru_cache(maxsize=None)
def _sparse_truth(name, items):
  """Native's trajectory on the sparse problem with arguments `items`, its
  steps in one `tf.function` call (the eager and tf.function cases share
  it): its sparse kernel for legacy and TF1, its dense one on the same
  gradients made dense for Keras 3."""
  declaration, kwargs = catalog.lookup(name), dict(items)
  initial, gradients = problem(sparse=True)
  if declaration.generation != catalog.KERAS:
    return testing.native_trajectory(declaration.make_native(**kwargs),
                                     initial, gradients,
                                     backend=declaration.native_backend)
  return native_dense_trajectory(declaration, kwargs, densify(gradients))


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


# Where native's sparse kernel is the truth (legacy, TF1): every grid point
# of tests/grids.py, then the hyperparameter mutants and a densifying
# bridge, each of which the same check must tell apart.
SPARSE_TRUTH = [d for d in NATIVE if d.generation in (catalog.LEGACY,
                                                      catalog.TF1)]
SPARSE_GRID = [(d, point) for d in SPARSE_TRUTH
               for point in grids.OWN.get(d.name, []) if point]


def _built(declaration, point):
  return grids.build(point, tf_keras.optimizers.schedules
                     if declaration.generation == catalog.LEGACY
                     else keras.optimizers.schedules)


_NATIVE_SPARSE = {}


def _sparse_runs(declaration, point, mutant=None):
  """(bridged trajectory, native sparse trajectory) at `point`, each run's
  steps in one `tf.function` call; the bridged one with `mutant`'s
  arguments if given, fed as tensors (`mutants.fed`: one compiled step
  serves the point's mutants). Native's is computed once per point (the
  mutants of a point share it)."""
  initial, gradients = problem(sparse=True)
  arguments = (point if mutant is None
               else mutants.fed(declaration, mutant))
  bridged = testing.native_trajectory(
      bridged_class(declaration)(**{**declaration.required, **_built(
          declaration, arguments)}), initial, gradients)
  key = (declaration.name, grids.label(point))
  if key not in _NATIVE_SPARSE:
    _NATIVE_SPARSE[key] = testing.native_trajectory(
        declaration.make_native(**grids.build(
            point, tf_keras.optimizers.schedules)), initial, gradients)
  return bridged, _NATIVE_SPARSE[key]


@pytest.mark.parametrize("declaration,point", [
    grids.grouped(f"sparse-{d.name}", d, p,
                  case_id=f"{d.name}-{grids.label(p)}")
    for d, p in SPARSE_GRID])
def test_bridged_sparse_grid(declaration, point):
  """Sparse gradients at every grid point against native's sparse kernel."""
  bridged, native = _sparse_runs(declaration, point)
  testing.compare_trajectories(bridged, native, rtol=1e-5, atol=1e-6,
                               actual_name="bridge",
                               expected_name=declaration.native_path)


KERAS3_GRID = [(d, point) for d in NATIVE
               if d.generation == catalog.KERAS
               and d.native_backend == "tensorflow"
               for point in grids.OWN.get(d.name, []) if point]


@pytest.mark.parametrize(
    "declaration,point", KERAS3_GRID,
    ids=[f"{d.name}-{grids.label(p)}" for d, p in KERAS3_GRID])
def test_keras3_bridged_sparse_grid(declaration, point):
  """Keras 3 classes on sparse gradients at every grid point against native
  on the same gradients made dense (the ground truth: docs/known-differences.md)."""
  initial, gradients = problem(sparse=True)
  bridged = testing.native_trajectory(
      bridged_class(declaration)(**_built(declaration, point)), initial,
      gradients)
  native = native_dense_trajectory(declaration, _built(declaration, point),
                                   densify(gradients))
  testing.compare_trajectories(bridged, native, rtol=1e-5, atol=1e-6,
                               actual_name="bridge",
                               expected_name=declaration.native_path)


@pytest.mark.parametrize("declaration", [
    grids.grouped(f"sparse-{d.name}", d, case_id=d.name)
    for index, d in enumerate(SPARSE_TRUTH) if sampling.whole(index)])
def test_every_mutant_parts_from_native_sparse(declaration):
  """The sparse check kills each hyperparameter mutant at the default point
  or at a grid point where it binds (`mutants.search_order`), and a bridge
  that densifies the gradient wherever native's sparse kernel computes
  otherwise than its dense one: for every sixth class (`sampling`), the
  grid check above holding every class."""
  survivors = []
  points = [{}] + [p for p in grids.OWN.get(declaration.name, []) if p]
  for hyperparameter in mutants.numeric_hyperparameters(declaration):
    for _, point in mutants.search_order(declaration, points, hyperparameter):
      mutant = mutants.perturbed(declaration, point, hyperparameter)
      if mutant is None:
        continue
      try:
        if mutants.parts(*_sparse_runs(declaration, point, mutant)):
          break
      except ValueError:
        continue  # Out of the argument's range here.
    else:
      survivors.append(hyperparameter)
  assert not survivors, (declaration.name, survivors)
  initial, gradients = problem(sparse=True)
  native = _sparse_runs(declaration, {})[1]
  # Native's sparse kernel differs from its dense one (lazy rows, or
  # duplicates): a bridge that densifies must then part from it.
  sparse_differs = bool(mutants.parts(testing.native_trajectory(
      declaration.make_native(), initial, densify(gradients)), native))
  densified = testing.native_trajectory(
      bridged_class(declaration)(**declaration.required), initial,
      densify(gradients))
  assert bool(mutants.parts(densified, native)) == sparse_differs, (
      declaration.name, sparse_differs)
