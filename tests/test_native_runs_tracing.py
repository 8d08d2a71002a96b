"""`assert_parity` and the native runs behind it trace each new optimizer's
steps once and never trip TensorFlow's retracing warning ("5 out of the
last 5 calls to <function ...> triggered tf.function retracing"), however
many comparisons a program makes."""

import logging

import keras
import numpy as np
import pytest
import tensorflow as tf
import tf_keras

import jaxopt_port
from tf_bridge import testing

COMPARISONS = 6  # TensorFlow warns from the fifth traced call on.


@pytest.fixture
def tensorflow_warnings():
  """The messages TensorFlow's logger records meanwhile."""
  messages = []

  class Record(logging.Handler):

    def emit(self, record):
      messages.append(record.getMessage())

  handler = Record(logging.WARNING)
  tf.get_logger().addHandler(handler)
  yield messages
  tf.get_logger().removeHandler(handler)


class CountingSGD(keras.optimizers.SGD):
  """Keras 3 SGD counting the Python runs of its step: one per trace."""
  traces = 0

  def update_step(self, gradient, variable, learning_rate):
    CountingSGD.traces += 1
    super().update_step(gradient, variable, learning_rate)


class CountingTF1(tf.compat.v1.train.GradientDescentOptimizer):
  traces = 0

  def _apply_dense(self, grad, var):
    CountingTF1.traces += 1
    return super()._apply_dense(grad, var)

  def _resource_apply_dense(self, grad, handle):
    CountingTF1.traces += 1
    return super()._resource_apply_dense(grad, handle)


def test_assert_parity_does_not_retrace(tensorflow_warnings):
  """Keras 3 and OptimizerV2 (one `tf.function` of every step) and TF1 (a
  call per step): the warning never comes, and each comparison traces its
  optimizer's step once per variable."""
  shapes = ((3,), (2, 2))
  CountingSGD.traces = CountingTF1.traces = 0
  for _ in range(COMPARISONS):
    testing.assert_parity(jaxopt_port.sgd(0.1), CountingSGD(0.1), steps=4,
                          shapes=shapes)
    testing.assert_parity(jaxopt_port.legacy.adam(0.1),
                          tf_keras.optimizers.legacy.Adam(0.1), steps=4,
                          shapes=shapes)
    testing.assert_parity(jaxopt_port.tf1.gradient_descent(0.1),
                          CountingTF1(0.1), steps=4, shapes=shapes)
  assert not [m for m in tensorflow_warnings if "retracing" in m], \
      tensorflow_warnings
  assert CountingSGD.traces == COMPARISONS * len(shapes)
  assert CountingTF1.traces == COMPARISONS * len(shapes)


def test_a_retrace_would_be_seen(tensorflow_warnings):
  """The check above can fail: a new `tf.function` per call, as the native
  runs had, logs the warning."""
  variable = tf.Variable(np.zeros(2, np.float32))
  for _ in range(COMPARISONS):
    tf.function(lambda: variable.assign_add(tf.ones(2)))()
  assert [m for m in tensorflow_warnings if "triggered tf.function "
          "retracing" in m]
