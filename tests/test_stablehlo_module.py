"""The module jax2tf writes for a step is one TensorFlow's `XlaCallModule`
reads, from every jax of the supported range: jax 0.12 exports for StableHLO
1.18, whose shape assertions (those of a sparse gradient's symbolic length)
TensorFlow 2.21 (StableHLO 1.13.7) cannot load; the bridge serializes for
TensorFlow's version and keeps the assertions."""

import re

import jax.numpy as jnp
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.compiler.mlir.stablehlo import stablehlo

import tf_bridge
import tf_bridge.legacy
from tf_bridge import _compiled  # pylint: disable=protected-access


def version(text):
  return tuple(map(int, text.split(".")))


def test_a_polymorphic_step_is_written_for_tensorflows_stablehlo():
  step = tf.function(_compiled.to_tensorflow(
      lambda rows, indices: jnp.zeros((5, 2)).at[indices].add(rows),
      polymorphic_shapes=["(n, 2)", "(n,)"]), autograph=False)
  graph = step.get_concrete_function(
      tf.TensorSpec((None, 2)), tf.TensorSpec((None,), tf.int32)).graph
  [module] = [op.get_attr("module") for op in graph.get_operations()
              if op.type == "XlaCallModule"]
  [written] = re.findall(rb"StableHLO_v(\d+\.\d+\.\d+)", module)
  assert version(written.decode()) <= version(stablehlo.get_current_version())
  np.testing.assert_array_equal(
      step(tf.ones((3, 2)), tf.constant([0, 3, 3])).numpy(),
      [[1, 1], [0, 0], [0, 0], [2, 2], [0, 0]])


def optimizer_variables(optimizer):
  """Keras 3's `variables` property, OptimizerV2's `variables()` method."""
  variables = optimizer.variables
  return variables() if callable(variables) else variables


@pytest.mark.parametrize("make", [tf_bridge.SGD, tf_bridge.legacy.SGD],
                         ids=["keras3", "legacy"])
def test_sparse_rows_of_any_length_step_and_inconsistent_ones_are_refused(
    make):
  """SGD takes `tf.IndexedSlices` row by row (one conversion for every
  length); values and indices of different lengths are refused before
  anything changes, as native refuses them."""
  variable = tf.Variable(np.ones((5, 2), np.float32))
  optimizer = make(learning_rate=0.5)

  def step(values, indices):
    optimizer.apply_gradients([(tf.IndexedSlices(
        tf.constant(values, tf.float32), tf.constant(indices, tf.int32),
        tf.constant([5, 2])), variable)])

  step([[1.0, 2.0]], [4])
  step([[1.0, 1.0], [1.0, 1.0], [2.0, 0.0]], [0, 0, 1])
  expected = [[0.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, 1.0], [0.5, 0.0]]
  np.testing.assert_array_equal(variable.numpy(), expected)
  counts = [v.numpy() for v in optimizer_variables(optimizer)]
  with pytest.raises(tf.errors.InvalidArgumentError):
    step([[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]], [0, 2])
  np.testing.assert_array_equal(variable.numpy(), expected)
  for before, after in zip(counts, optimizer_variables(optimizer)):
    np.testing.assert_array_equal(after.numpy(), before)
