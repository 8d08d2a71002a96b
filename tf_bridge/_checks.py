"""Refusals before a step or a restore changes anything: gradients that
cannot belong to the variables, a variable twice in one step, variables the
optimizer was not built for, saved state of another shape."""

from __future__ import annotations

import collections
import contextlib
import functools
import sys
from typing import Any, Sequence

import jax.numpy as jnp
import numpy as np

def tensor_slices(grads: Sequence[Any]) -> list[Any]:
  """`grads` with every `tf.IndexedSlices` made of tensors: Keras's own
  examples write `tf.IndexedSlices(values, indices=(0, 2, 4), ...)`, and
  native optimizers take them."""
  tf = sys.modules.get("tensorflow")
  if tf is None:
    return list(grads)
  return [tf.IndexedSlices(tf.convert_to_tensor(grad.values),
                           tf.convert_to_tensor(grad.indices),
                           None if grad.dense_shape is None
                           else tf.convert_to_tensor(grad.dense_shape))
          if isinstance(grad, tf.IndexedSlices)
          and not all(tf.is_tensor(part) or part is None for part in (
              grad.values, grad.indices, grad.dense_shape))
          else grad for grad in grads]


def check_gradients(class_name: str, grads: Sequence[Any],
                    variables: Sequence[Any], complex_values: bool = False
                    ) -> Any:
  """Refuses gradients that cannot belong to `variables`, before anything
  is assigned (so a failed step changes nothing).

  Returns a context in which to run the step: in a graph, the step's ops
  depend on the assertions there (below).

  None gradients pass (Keras skips those variables with a warning). A
  variable with two gradients is refused: native would step it twice.
  Gradients of another floating dtype pass too: Keras casts them to the
  variable's dtype. Complex ones pass where the transform takes them
  (`complex_values`, see `jaxopt_port.UpdateStep`). Out-of-range `tf.IndexedSlices` indices raise
  ValueError when eager; in a graph an assertion raises InvalidArgumentError
  when the step runs, before any of the step's ops (XLA-compiled graphs
  drop assertions: there TensorFlow ignores such rows).
  """
  # Keras 3 on the JAX backend never imports TensorFlow: only gradients
  # made by TensorFlow need it.
  tf = sys.modules.get("tensorflow")
  if len(grads) != len(variables):
    raise ValueError(
        f"{class_name} got {len(grads)} gradients for {len(variables)} "
        "variables: pass one gradient (or None) per variable.")
  entries = collections.Counter(
      id(v) for g, v in zip(grads, variables) if g is not None)
  for grad, variable in zip(grads, variables):
    if grad is not None and entries[id(variable)] > 1:
      raise ValueError(
          f"Variable {variable_name(variable)!r} has {entries[id(variable)]} "
          "gradients in one step: pass each variable once, with its "
          "gradients summed (native Keras would step it once for each).")
  assertions = []
  for grad, variable in zip(grads, variables):
    if grad is None:
      continue
    label = f"Gradient of variable {variable_name(variable)!r}"
    sliced = tf is not None and isinstance(grad, tf.IndexedSlices)
    values = grad.values if sliced else grad
    dtype_name, floating, complex_ = _dtype_of(values)
    if not (floating or complex_values and complex_):
      raise TypeError(f"{label} has dtype {dtype_name}; gradients must be "
                      "real floating point.")
    shape = tuple(variable.shape)
    if sliced:
      assertions += _row_assertions(label, grad, shape)
      continue
    grad_shape = tuple(values.shape if hasattr(values, "shape")
                       else np.shape(values))
    if len(grad_shape) != len(shape) or any(
        got is not None and got != want for got, want in zip(grad_shape,
                                                               shape)):
      raise _gradient_shape_error(
          f"{label} has shape {grad_shape}, expected {shape} (the variable's "
          "shape).")
  return (tf.control_dependencies(assertions) if assertions
          else contextlib.nullcontext())


def _gradient_shape_error(message: str) -> ValueError:
  """The error for a gradient of another shape: a ValueError that is also
  the `tf.errors.InvalidArgumentError` native's ops raise for it where
  TensorFlow runs (native raises that eagerly and ValueError while tracing
  a `tf.function`), so a program's `except` of either catches it."""
  tf = sys.modules.get("tensorflow")
  if tf is None:
    return ValueError(message)
  return _invalid_argument_value_error(tf)(None, None, message)


@functools.cache
def _invalid_argument_value_error(tf: Any) -> type[ValueError]:
  # InvalidArgumentError first: its constructor (which autograph calls
  # again to re-raise it from a traced function) sets what OpError reads.
  class GradientShapeError(tf.errors.InvalidArgumentError, ValueError):
    pass

  return GradientShapeError


def _dtype_of(values: Any) -> tuple[str, bool, bool]:
  """The name of a gradient's dtype (TensorFlow's, JAX's or numpy's), and
  whether it is real floating point, and complex."""
  dtype = getattr(values, "dtype", None)
  if dtype is None:
    dtype = np.asarray(values).dtype
  if hasattr(dtype, "is_floating"):  # A tf.DType.
    return dtype.name, dtype.is_floating, dtype.is_complex
  dtype = np.dtype(dtype)
  return (dtype.name, bool(jnp.issubdtype(dtype, jnp.floating)),
          bool(jnp.issubdtype(dtype, jnp.complexfloating)))


def check_built_for(class_name: str, built: Sequence[Any],
                    variables: Sequence[Any]) -> None:
  """Refuses variables an OptimizerV2 host has no slots for (Keras 3's
  hosts leave this to Keras's own `_check_variables_are_known`)."""
  known = {v.ref() for v in built}
  unknown = [variable_name(v) for v in variables if v.ref() not in known]
  if unknown:
    raise ValueError(
        f"{class_name} was built for {[variable_name(v) for v in built]}; "
        f"it cannot update {unknown}. Make a new optimizer for other "
        "variables.")


def check_saved_shapes(name: str, variables: Sequence[Any],
                       saved: Sequence[Any]) -> None:
  """Refuses saved optimizer variables whose shapes do not match
  `variables`', before any is assigned."""
  for index, (variable, value) in enumerate(zip(variables, saved)):
    if tuple(value.shape) != tuple(variable.shape):
      raise ValueError(
          f"The saved state of optimizer {name!r} does not match it: saved "
          f"variable {index} has shape {tuple(value.shape)}, expected "
          f"{tuple(variable.shape)} for {variable_name(variable)!r}.")


def _row_assertions(label: str, grad: Any, shape: tuple[int, ...]
                    ) -> list[Any]:
  """Checks that the rows of `grad`, a `tf.IndexedSlices`, exist in the
  variable: now if eager, else as assertion ops to run first."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  if not tf.TensorShape(grad.values.shape[1:]).is_compatible_with(shape[1:]):
    raise ValueError(
        f"{label} is a tf.IndexedSlices with rows of shape "
        f"{tuple(grad.values.shape[1:])}, expected {shape[1:]} (the "
        "variable's rows).")
  message = (f"{label} is a tf.IndexedSlices with indices outside [0, "
             f"{shape[0]}), the variable's rows")
  if tf.executing_eagerly():
    indices = grad.indices.numpy()
    outside = indices[(indices < 0) | (indices >= shape[0])]
    if outside.size:
      raise ValueError(f"{message}: {sorted(set(outside.tolist()))}.")
    return []
  return [tf.debugging.assert_non_negative(grad.indices, message=message),
          tf.debugging.assert_less(
              grad.indices, tf.cast(shape[0], grad.indices.dtype),
              message=message)]


def variable_name(variable: Any) -> str:
  return getattr(variable, "path", None) or variable.name
