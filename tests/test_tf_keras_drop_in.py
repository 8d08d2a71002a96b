"""What a program sees of a twin beyond its numbers, run on the native class
and on ours and compared: the config's keys (every Keras 3, tf_keras
legacy and tf_keras 2.11+ twin), what tf_keras's `convert_to_legacy_optimizer`
makes of a tf_keras twin, the words of a missing `weight_decay`, which
gradients of another shape than their variable's a tf_keras optimizer
takes (and the step it then takes), and what OptimizerV2 raises for a
tensor in the place of a variable (`_compute_gradients` returns one)."""

import importlib

import numpy as np
import pytest
import tensorflow as tf
import tf_keras
from tf_keras.src.optimizers import convert_to_legacy_optimizer

import tf_bridge.legacy
import tf_bridge.tf_keras
from tf_bridge import catalog

TWINS = [d for d in catalog.CATALOG if d.has_native and d.generation in (
    catalog.KERAS, catalog.LEGACY, catalog.TF_KERAS)]


def raised(call):
  """The type and message of what `call` raises (a `tf.function`'s
  traceback left out)."""
  try:
    call()
  except Exception as error:  # pylint: disable=broad-except
    return type(error), str(error).strip().splitlines()[-1]
  return None


@pytest.mark.parametrize("declaration", TWINS, ids=lambda d: d.name)
def test_config_has_natives_keys(declaration):
  twin = getattr(importlib.import_module(declaration.bridge_path),
                 declaration.class_name)
  assert (sorted(twin(**declaration.required).get_config())
          == sorted(declaration.make_native().get_config()))


def test_adaptive_epsilon_is_lost_by_the_config_as_natively():
  """tf_keras's Adam takes `adaptive_epsilon` and leaves it out of its
  config: so do the twin, its round trip, and its legacy conversion."""
  for adam in (tf_keras.optimizers.Adam, tf_bridge.tf_keras.Adam):
    config = adam(0.01, adaptive_epsilon=True).get_config()
    assert "adaptive_epsilon" not in config
    assert not adam.from_config(config).adaptive_epsilon
  legacy = convert_to_legacy_optimizer(tf_bridge.tf_keras.Adam(0.01))
  assert (legacy.get_config()
          == convert_to_legacy_optimizer(
              tf_keras.optimizers.Adam(0.01)).get_config())


def test_missing_weight_decay_raises_natives_words():
  native = raised(lambda: tf_keras.optimizers.AdamW(0.01, weight_decay=None))
  assert native[0] is ValueError
  assert raised(lambda: tf_bridge.tf_keras.AdamW(
      0.01, weight_decay=None)) == native


# (variable shape, gradient shape): native broadcasts the first three where
# its arithmetic does (never into Adagrad's `assign_add`, and into
# Adafactor's factored moments only at the variable's rank) and refuses the
# last two.
SHAPES = [((1, 1), (1,)), ((2, 3), (3,)), ((2, 3), (2, 1)), ((3,), (1, 3)),
          ((3,), (2,))]


def steps(optimizer, variable_shape, gradient_shape, in_function):
  """Two steps on a variable with a gradient of `gradient_shape`: the
  variable after them, or None where the optimizer refuses."""
  variable = tf.Variable(np.arange(1.0, 1.0 + np.prod(variable_shape),
                                   dtype=np.float32).reshape(variable_shape))
  gradient = tf.constant(np.linspace(
      0.1, 0.5, int(np.prod(gradient_shape)),
      dtype=np.float32).reshape(gradient_shape))

  def step():
    optimizer.apply_gradients([(gradient, variable)])

  step = tf.function(step) if in_function else step
  try:
    step()
    step()
  except (ValueError, tf.errors.InvalidArgumentError):
    return None
  return variable.numpy()


@pytest.mark.parametrize("name, arguments, in_function", [
    ("Adam", {"clipnorm": 0.01}, False), ("SGD", {"momentum": 0.5}, True),
    ("Adagrad", {}, False), ("Adafactor", {}, False)])
def test_gradients_of_another_shape_are_taken_as_natively(name, arguments,
                                                          in_function):
  """(`clipnorm` reads the gradient before it is broadcast.)"""
  taken = 0
  for shapes in SHAPES:
    native = steps(getattr(tf_keras.optimizers, name)(0.1, **arguments),
                   *shapes, in_function)
    ours = steps(getattr(tf_bridge.tf_keras, name)(0.1, **arguments),
                 *shapes, in_function)
    assert (native is None) == (ours is None), shapes
    if native is not None:
      taken += 1
      np.testing.assert_allclose(ours, native, rtol=1e-5, atol=1e-6,
                                 err_msg=str(shapes))
  assert taken == {"Adagrad": 0, "Adafactor": 1}.get(name, 3)


@pytest.mark.parametrize("in_function", [False, True])
@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_a_tensor_for_a_variable_raises_what_optimizer_v2_raises(
    name, in_function):
  """SGD (no slots) refuses to update it, Adam fails making its slot."""
  def program(optimizer_class):
    def apply():
      tensor = tf.constant([1.0, 2.0])
      optimizer = optimizer_class(0.1)
      grads_and_vars = optimizer._compute_gradients(  # pylint: disable=protected-access
          lambda: tf.reduce_sum(tensor * tensor), [tensor])
      assert grads_and_vars[0][1] is tensor
      optimizer.apply_gradients(grads_and_vars)
    return raised(tf.function(apply) if in_function else apply)

  native = program(getattr(tf_keras.optimizers.legacy, name))
  assert native[0] is {"SGD": NotImplementedError,
                       "Adam": AttributeError}[name]
  assert program(getattr(tf_bridge.legacy, name)) == native
