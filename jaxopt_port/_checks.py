"""Argument and tree checks shared by every transform.

Hyperparameters are checked only when their value is known at construction:
`optax.inject_hyperparams` passes every numeric argument as an array, traced
under `jit`, and a check must never break tracing.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
from typing import Any, Callable, Iterable, TypeVar

import jax
import jax.numpy as jnp
import numpy as np


def check_number(name: str, value: Any, *, optional: bool = True) -> None:
  """Raises TypeError naming `name` when `value` cannot be a number: a
  string (which would be read as the number it spells), a sequence, a
  mapping, an array that is not a real scalar (which would broadcast
  against every parameter), None unless `optional`. Callables pass (what a
  port makes of them is its own), as do traced scalars."""
  if ((value is None and optional) or callable(value)
      or isinstance(value, numbers.Real)):
    return
  dtype = getattr(value, "dtype", None)
  if (not isinstance(value, (str, bytes)) and getattr(value, "shape", None)
      == () and dtype is not None and jnp.issubdtype(dtype, jnp.number)
      and not jnp.issubdtype(dtype, jnp.complexfloating)):
    return
  raise TypeError(f"`{name}` must be a number or a scalar array. Received: "
                  f"{name}={value!r}")


def check_numbers(numbers: dict[str, bool], arguments: dict[str, Any]
                  ) -> None:
  """`check_number` of the `arguments` named in `numbers`, which says
  whether None is one of an argument's values."""
  for name, optional in numbers.items():
    check_number(name, arguments[name], optional=optional)


# The annotations (as `from __future__ import annotations` leaves them) of
# the arguments `numbers_checked` refuses unless they are numbers (or None,
# where the annotation says so).
NUMERIC_ANNOTATIONS = ("float", "float | None", "int", "int | None")


def numbers_among(parameters: Iterable[inspect.Parameter]) -> dict[str, bool]:
  """{name: whether None is one of its values} of the parameters annotated
  as numbers."""
  return {parameter.name: parameter.annotation.endswith("| None")
          for parameter in parameters
          if parameter.annotation in NUMERIC_ANNOTATIONS}


Function = TypeVar("Function", bound=Callable[..., Any])


def numbers_checked(function: Function) -> Function:
  """`function` with its arguments annotated as numbers checked by
  `check_number` after its own checks, which give the native class's words
  where it refuses a value itself (Keras 3 AdamW's `weight_decay=None`,
  SGD's `momentum="0.9"`)."""
  signature = inspect.signature(function)
  numeric = numbers_among(signature.parameters.values())

  @functools.wraps(function)
  def checked(*args, **kwargs):
    result = function(*args, **kwargs)
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    check_numbers(numeric, bound.arguments)
    return result

  return checked  # type: ignore[return-value]


def bound_arguments(function: Callable[..., Any], signature: inspect.Signature,
                    args: tuple, kwargs: dict[str, Any]
                    ) -> inspect.BoundArguments:
  """`signature.bind(*args, **kwargs)`, its TypeError naming the function
  by its public name (`jaxopt_port.legacy.adam`) and what it takes."""
  try:
    return signature.bind(*args, **kwargs)
  except TypeError as error:
    public = ".".join(part for part in function.__module__.split(".")
                      if not part.startswith("_"))
    raise TypeError(
        f"{public}.{function.__name__}(): {error}. It takes: "
        f"{', '.join(signature.parameters)}.") from None


def concrete_number(value: Any) -> float | None:
  """The Python float `value` holds, or None when it is traced or not a scalar."""
  if value is None or callable(value) or isinstance(value, bool):
    return None
  if isinstance(value, (int, float)):
    return float(value)
  try:
    array = np.asarray(value)  # Raises on tracers.
  except (jax.errors.TracerArrayConversionError,
          jax.errors.ConcretizationTypeError, TypeError):
    return None
  if array.shape != () or not np.issubdtype(array.dtype, np.number):
    return None
  return float(array)


def is_python_zero(value: Any) -> bool:
  """True for the Python number 0, which lets a transform skip a step's
  work (a slot left unread; see `_base.by_zero`).

  An array (as `optax.inject_hyperparams` passes) is never treated as zero, so
  the state layout does not depend on an array's value.
  """
  return isinstance(value, (int, float)) and value == 0


def check_range(name: str, value: Any, low: float, high: float = math.inf, *,
                low_open: bool = False, high_open: bool = False,
                message: str | None = None) -> None:
  """Raises ValueError naming `name` when a known `value` is outside the
  range; `message` (fields `{name}`, `{value}`, `{type}`) gives the native
  class's own words where it refuses the same values."""
  check_number(name, value)
  number = concrete_number(value)
  if number is None:
    return
  too_low = number <= low if low_open else number < low
  too_high = number >= high if high_open else number > high
  if too_low or too_high or math.isnan(number):
    if message is not None:
      raise ValueError(message.format(name=name, value=value,
                                      type=type(value)))
    interval = (("(" if low_open else "[") + f"{low:g}, {high:g}"
                + (")" if high_open else "]"))
    raise ValueError(
        f"`{name}` must be in {interval}. Received: {name}={value!r}")


# OptimizerV2's words for a momentum outside [0, 1] (SGD, RMSprop).
LEGACY_MOMENTUM_MESSAGE = ("`{name}` must be between [0, 1]. Received: "
                           "{name}={value} (of type {type}).")


def check_moment_arguments(beta_1: Any, beta_2: Any, epsilon: Any, *,
                           names: tuple[str, str] = ("beta_1", "beta_2")
                           ) -> None:
  """The Adam family's betas in [0, 1) and a non-negative epsilon."""
  check_range(names[0], beta_1, 0.0, 1.0, high_open=True)
  check_range(names[1], beta_2, 0.0, 1.0, high_open=True)
  check_range("epsilon", epsilon, 0.0)


def check_optional_int(name: str, value: Any, minimum: int) -> None:
  """Raises ValueError unless `value` is None, traced, or an int >= minimum."""
  check_number(name, value)
  if value is None or concrete_number(value) is None:
    return
  number = concrete_number(value)
  if isinstance(value, bool) or number != int(number) or number < minimum:
    raise ValueError(
        f"`{name}` must be None or an integer >= {minimum}. "
        f"Received: {name}={value!r}")


def check_learning_rate(learning_rate: Any) -> None:
  """A learning rate is a non-negative number, an array, or a schedule."""
  if callable(learning_rate):
    return
  if isinstance(learning_rate, (str, bytes, bool)) or not (
      isinstance(learning_rate, (int, float, np.ndarray, jax.Array, np.number))):
    raise TypeError(
        "`learning_rate` must be a float, a scalar array, or a schedule (a "
        f"callable of the step count). Received: learning_rate={learning_rate!r}")
  check_range("learning_rate", learning_rate, 0.0)


def _takes(dtype: Any, complex_values: bool) -> bool:
  return bool(jnp.issubdtype(dtype, jnp.floating) or (
      complex_values and jnp.issubdtype(dtype, jnp.complexfloating)))


def check_float_params(params: Any, complex_values: bool = False) -> None:
  """Raises TypeError naming the first parameter that is not floating point
  (nor complex, with `complex_values`)."""
  for path, leaf in jax.tree_util.tree_flatten_with_path(params)[0]:
    dtype = getattr(leaf, "dtype", None)
    if dtype is not None and not _takes(dtype, complex_values):
      raise TypeError(
          f"Parameter {_name(path)} has dtype {dtype}; optimizers update "
          "floating-point parameters only (float16, bfloat16, float32, "
          f"float64{'; complex ones too' if complex_values else ''}).")


def check_gradient_dtypes(grads: Any, params: Any,
                          complex_values: bool = False) -> None:
  """Raises TypeError naming the first gradient that is not real floating
  point (nor complex, with `complex_values`), or whose dtype differs from
  its parameter's (`params` may be None). None leaves (no gradient)
  pass."""
  grads_with_paths = jax.tree_util.tree_flatten_with_path(
      grads, is_leaf=lambda x: x is None)[0]
  for path, grad in grads_with_paths:
    dtype = getattr(grad, "dtype", None)
    if grad is None or dtype is None and isinstance(grad, (int, float)):
      continue  # No gradient; a Python scalar takes its parameter's dtype.
    if dtype is None or not _takes(dtype, complex_values):
      received = f"dtype {dtype}" if dtype is not None else type(grad).__name__
      raise TypeError(
          f"grads at {_name(path)} has {received}; gradients must be real "
          "floating point (float16, bfloat16, float32, float64)"
          f"{' or complex' if complex_values else ''}.")
  if params is None:
    return
  for (path, grad), param in zip(grads_with_paths, jax.tree.leaves(params)):
    if hasattr(grad, "dtype") and hasattr(param, "dtype") and (
        grad.dtype != param.dtype):
      raise TypeError(
          f"grads at {_name(path)} has dtype {grad.dtype}, expected "
          f"{param.dtype} as in params: cast the gradients to their "
          "parameters' dtypes.")


def check_same_tree(expected: Any, received: Any, *, expected_name: str,
                    received_name: str) -> None:
  """Raises ValueError naming the first path where two trees' layouts differ.

  Both the tree structure and the leaf shapes are compared. A None leaf of
  `received` (no gradient) stands for any leaf.
  """
  expected_leaves, expected_def = jax.tree_util.tree_flatten_with_path(expected)
  received_leaves, received_def = jax.tree_util.tree_flatten_with_path(
      received, is_leaf=lambda x: x is None)
  if expected_def != received_def:
    expected_paths = [_name(path) for path, _ in expected_leaves]
    received_paths = [_name(path) for path, _ in received_leaves]
    for index in range(max(len(expected_paths), len(received_paths))):
      want = expected_paths[index] if index < len(expected_paths) else None
      got = received_paths[index] if index < len(received_paths) else None
      if want != got:
        break
    else:  # Same leaf paths, different node types.
      raise ValueError(
          f"{received_name} has tree structure {received_def}, expected the "
          f"structure of {expected_name}: {expected_def}")
    if want is None:
      detail = f"it has an extra leaf at {got}"
    elif got is None:
      detail = f"it has no leaf at {want}"
    else:
      detail = f"expected a leaf at {want}, found one at {got}"
    raise ValueError(
        f"{received_name} does not match the tree of {expected_name}: "
        f"{detail} ({len(received_paths)} leaves, expected "
        f"{len(expected_paths)}).")
  for (path, want), (_, got) in zip(expected_leaves, received_leaves):
    if got is None:
      continue
    want_shape, got_shape = jnp.shape(want), jnp.shape(got)
    if want_shape != got_shape:
      raise ValueError(
          f"{received_name} at {_name(path)} has shape {got_shape}, expected "
          f"{want_shape} as in {expected_name}.")


def _name(path: tuple[Any, ...]) -> str:
  return jax.tree_util.keystr(path) or "<root>"


def require_params(params: Any, reason: str) -> None:
  """Raises ValueError when a transform that reads the params got none:
  `"<reason>: call update(grads, state, params)."`."""
  if params is None:
    raise ValueError(f"{reason}: call update(grads, state, params).")


def nonzero_epsilon(epsilon: Any) -> Any:
  """`epsilon or backend.epsilon()`, as legacy and TF Addons optimizers
  read it: 0 and None mean 1e-7 (also for an injected array)."""
  if epsilon is None or concrete_number(epsilon) is not None:
    return epsilon or 1e-7
  return jnp.where(epsilon == 0, 1e-7, epsilon)  # Injected, traced.
