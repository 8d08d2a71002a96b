"""The sparse problem `tf_bridge.port`'s sparse tests share (tests/
test_port_sparse.py, tests/scripts/port_sparse_addons.py): a dense variable
and two tables whose gradients are `(values, indices)` pairs with a
repeated index and untouched rows at every step, and the ports' trajectories
on it given `jaxopt_port.RowSparse` gradients."""

import jax.numpy as jnp
import numpy as np
import tensorflow as tf

import jaxopt_port
from tf_bridge import testing

STEPS = 30
RTOL, ATOL = 1e-5, 1e-6
SHAPES = ((4,), (6, 3), (5,))
INDEX_DTYPES = (None, np.int32, np.int64)  # The tables' index dtypes.


def problem():
  """Initial values and `STEPS` gradients: each table's gradient has four
  entries on three rows (the first repeated), so at least two rows are
  untouched at every step."""
  initial, gradients = testing.seeded_problem(STEPS, 3, 1.0, SHAPES)
  rng = np.random.default_rng(11)
  steps = []
  for dense, *_ in gradients:
    step = [dense]
    for shape, dtype in zip(SHAPES[1:], INDEX_DTYPES[1:]):
      rows = rng.choice(shape[0], size=3, replace=False)
      indices = np.array([rows[0], rows[1], rows[0], rows[2]], dtype)
      values = rng.standard_normal((4, *shape[1:])).astype(np.float32)
      step.append((values, indices))
    steps.append(step)
  return initial, steps


def densified(gradients):
  """The same gradients as dense arrays (repeated rows summed)."""
  return [[np.asarray(tf.convert_to_tensor(tf.IndexedSlices(
      g[0], g[1], tf.constant(shape, tf.int64))))
           if isinstance(g, tuple) else g for g, shape in zip(step, SHAPES)]
          for step in gradients]


def port_trajectories(transforms, initial, gradients):
  """Each transform's trajectory given the gradients, a pair as a
  `RowSparse` leaf, all their steps in one jitted program."""
  return testing.transform_trajectories(transforms, initial, [
      [jaxopt_port.RowSparse(jnp.asarray(g[1]), jnp.asarray(g[0]), shape[0])
       if isinstance(g, tuple) else g for g, shape in zip(step, SHAPES)]
      for step in gradients])


def failure(actual, expected, initial, expected_name):
  """What `compare_trajectories` says is wrong, or None."""
  try:
    testing.compare_trajectories(actual, expected, rtol=RTOL, atol=ATOL,
                                 initial=initial,
                                 expected_name=expected_name)
  except AssertionError as error:
    return str(error)[:600]
  return None
