"""A bridged class's constructor arguments: the transform factory's own,
the host's base arguments (Keras 3's or OptimizerV2's), their binding and
checks, and hyperparameters given as something TensorFlow evaluates."""

from __future__ import annotations

import functools
import inspect
import sys
from typing import Any, Callable, Sequence

import numpy as np

from jaxopt_port import _base, _checks

# The arguments Keras's base classes take (and apply themselves).
KERAS_BASE_ARGUMENTS = tuple(_base.KERAS_BASE_ARGUMENTS)


LEGACY_BASE_ARGUMENTS = tuple(_base.LEGACY_BASE_ARGUMENTS)


def check_factory(function: str, factory: Any) -> None:
  """Refuses anything but a transform factory, showing what is expected
  (what comes instead is most often an optax transformation itself)."""
  if callable(factory) and not isinstance(factory, type):
    return
  received = (f"the class {factory.__name__}" if isinstance(factory, type)
              else f"a {type(factory).__name__}")
  raise TypeError(
      f"{function} takes a factory: a function that returns an optax "
      "transformation, whose keyword arguments become the class's "
      f"constructor arguments. It received {received}. For example:\n\n"
      "  def my_adam(learning_rate=0.001, b1=0.9):\n"
      "    return optax.adam(learning_rate, b1=b1)\n\n"
      f"  MyAdam = {function}(my_adam)")


def module_of(factory: Callable[..., Any]) -> str:
  """The module a user's class from `factory` lives in and is registered
  under: the factory's own."""
  return getattr(factory, "__module__", None) or "__main__"


def factory_arguments(factory: Callable[..., Any],
                      base_arguments: Sequence[str]) -> dict[str, Any]:
  """The factory's own keyword arguments and defaults (not Keras's, not lr)."""
  signature = inspect.signature(factory)
  own = {}
  for name, parameter in signature.parameters.items():
    if name == "learning_rate" or name in base_arguments:
      continue
    if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
      continue
    own[name] = (None if parameter.default is inspect.Parameter.empty
                 else parameter.default)
  return own


def positional_names(factory: Callable[..., Any]) -> list[str]:
  """The factory's positional-or-keyword parameters, in order: the bridged
  constructor takes them positionally too, like Keras's own classes."""
  return [name for name, parameter in
          inspect.signature(factory).parameters.items()
          if parameter.kind == parameter.POSITIONAL_OR_KEYWORD]


def bind_positional(class_name: str, names: Sequence[str], args: tuple,
                    kwargs: dict[str, Any]) -> dict[str, Any]:
  """`kwargs` with `args` bound to `names`, refusing duplicates."""
  if len(args) > len(names):
    raise TypeError(f"{class_name}() takes at most {len(names)} positional "
                    f"arguments ({', '.join(names)}); {len(args)} were given.")
  bound = dict(kwargs)
  for name, value in zip(names, args):
    if name in bound:
      raise TypeError(f"{class_name}() got multiple values for argument "
                      f"'{name}'")
    bound[name] = value
  return bound


def host_base_arguments(factory: Callable[..., Any],
                        base_arguments: Sequence[str]) -> list[str]:
  """The host's base arguments, less those a `jaxopt_port` declaration takes
  as its own (TF1's RMSProp `decay` is its mean-square decay, not
  OptimizerV2's learning-rate decay, which that class then lacks; TFA's
  decoupled `weight_decay` is not Keras 3's), and those a factory names in
  `claimed_base_arguments`."""
  make = getattr(factory, "make_update_step", None)
  own = set() if make is None else (
      set(inspect.signature(make).parameters) - set(factory.base_arguments))
  if is_decoupled(factory):
    own.add("weight_decay")
  # `tf_bridge.adopt`'s factories: a class's own argument of a base name.
  own.update(getattr(factory, "claimed_base_arguments", ()))
  return [argument for argument in base_arguments if argument not in own]


def required_arguments(factory: Callable[..., Any]) -> list[str]:
  """The factory's arguments without a default (TF1's `learning_rate`)."""
  return [name for name, parameter in
          inspect.signature(factory).parameters.items()
          if parameter.default is inspect.Parameter.empty
          and parameter.kind in (parameter.POSITIONAL_OR_KEYWORD,
                                 parameter.KEYWORD_ONLY)]


def check_arguments(class_name: str, kwargs: dict[str, Any],
                    factory: Callable[..., Any], own: dict[str, Any],
                    base: Sequence[str],
                    unknown_error: Callable[[dict[str, Any]], Exception],
                    users: bool = False) -> None:
  """Refuses unknown keyword arguments (`unknown_error` of them, in the
  order given: the host's native error; for a user's class, which has no
  native words to keep, of that type, naming the class and what it takes)
  and missing required ones; for a user's class, also values that cannot
  be the number an argument takes (`check_numbers`)."""
  known = set(own) | set(base) | {"learning_rate"}
  unknown = {k: v for k, v in kwargs.items() if k not in known}
  if unknown:
    error = unknown_error(unknown)
    if not users:
      raise error
    takes = [name for name in inspect.signature(factory).parameters
             if name in own or name == "learning_rate"]
    raise type(error)(
        f"{class_name}(): argument(s) not recognized: {unknown}. It takes "
        f"the arguments of {factory.__module__}.{factory.__name__} "
        f"({', '.join(takes)}) and the base arguments ({', '.join(base)}).")
  if users:
    check_numbers(class_name, kwargs, factory)
  given = set(kwargs) | ({"learning_rate"} if "lr" in kwargs else set())
  missing = [name for name in required_arguments(factory)
             if name not in given]
  if missing:
    raise TypeError(f"{class_name}() missing required argument(s): "
                    f"{', '.join(missing)}")


def check_numbers(class_name: str, kwargs: dict[str, Any],
                  factory: Callable[..., Any]) -> None:
  """Refuses a value that cannot be the number its argument takes (the
  factory's default is a number, or its annotation says `float` or `int`):
  a string, a sequence, an array that is not a scalar. A user's factory
  takes it without a word and the step fails inside `fit`. Tensors,
  variables and schedules (fed to each step) pass, as arrays do (optax's
  `inject_hyperparams` passes them)."""
  defaults = {name: parameter.default for name, parameter
              in inspect.signature(factory).parameters.items()}
  for name in _number_parameters(factory):
    value = kwargs.get(name)
    if name not in kwargs or is_runtime(factory, name, value) or (
        _is_tensorflow_value(value)):
      continue
    try:
      _checks.check_number(name, value)
    except TypeError as error:
      default = defaults[name]
      hint = ("" if default is inspect.Parameter.empty or default is None
              else f"; the default of {factory.__name__} is {default!r}")
      raise TypeError(f"{class_name}(): {error}{hint}.") from None


@functools.lru_cache(maxsize=None)
def _number_parameters(factory: Callable[..., Any]) -> tuple[str, ...]:
  """The factory's parameters whose default is a number (not a bool) or
  whose annotation is `float` or `int` (`| None`)."""
  return tuple(
      name for name, parameter in inspect.signature(factory).parameters.items()
      if (isinstance(parameter.default, (int, float))
          and not isinstance(parameter.default, bool))
      or (parameter.annotation is not inspect.Parameter.empty
          and (parameter.annotation if isinstance(parameter.annotation, str)
               else inspect.formatannotation(parameter.annotation))
          in _checks.NUMERIC_ANNOTATIONS))


def _is_tensorflow_value(value: Any) -> bool:
  tf = sys.modules.get("tensorflow")
  return tf is not None and (tf.is_tensor(value)
                             or isinstance(value, tf.Variable))


def with_argument_names(class_name: str, kwargs: dict[str, Any],
                        native_names: dict[str, str]) -> dict[str, Any]:
  """`kwargs` with the native class's names of arguments (a catalog
  declaration's `native_names`) replaced by the port's."""
  kwargs = dict(kwargs)
  for native, own in native_names.items():
    if native in kwargs:
      if own in kwargs:
        raise TypeError(f"{class_name}() got both {native!r} and {own!r}, "
                        "two names of one argument.")
      kwargs[own] = kwargs.pop(native)
  return kwargs


def learning_rate_default(factory: Callable[..., Any], fallback: float) -> Any:
  """The factory's default learning rate (`inspect.Parameter.empty` if it
  requires one); `fallback` for a factory that takes none."""
  parameter = inspect.signature(factory).parameters.get("learning_rate")
  return fallback if parameter is None else parameter.default


def is_bridged(value: Any) -> bool:
  """A Keras optimizer made by the bridge (a wrapper's inner optimizer)."""
  return (not isinstance(value, type)
          and getattr(value, "_fused_class", False) is True)


def is_schedule(value: Any) -> bool:
  """A Keras 3 or tf_keras `LearningRateSchedule` (without importing
  either)."""
  return is_schedule_class(type(value))


def is_schedule_class(value: Any) -> bool:
  """A Keras 3 or tf_keras `LearningRateSchedule` class."""
  return isinstance(value, type) and any(
      base.__name__ == "LearningRateSchedule" for base in value.__mro__)


def is_runtime(factory: Callable[..., Any], name: str, value: Any) -> bool:
  """A numeric hyperparameter given as something TensorFlow evaluates (a
  tensor, a variable, a callable, a schedule), as OptimizerV2's `_set_hyper`
  takes them: fed to the step each time it runs, not read when it is
  traced."""
  tf = sys.modules.get("tensorflow")
  # Numbers first: asked for every argument at every eager step.
  if tf is None or isinstance(value, (int, float, np.number, np.ndarray,
                                      type, str)) or is_bridged(value):
    return False
  return name in _numeric_parameters(factory) and (
      tf.is_tensor(value) or isinstance(value, tf.Variable)
      or callable(value))


@functools.lru_cache(maxsize=None)
def _numeric_parameters(factory: Callable[..., Any]) -> frozenset[str]:
  """The factory's parameters that take a number: without a default, or
  with a number (not a bool) as default."""
  return frozenset(
      name for name, parameter in inspect.signature(factory).parameters.items()
      if parameter.default is inspect.Parameter.empty
      or (isinstance(parameter.default, (int, float))
          and not isinstance(parameter.default, bool)))


def runtime_value(value: Any, iterations: Any) -> Any:
  """A runtime hyperparameter's current value, in TensorFlow: a schedule
  of Keras's `iterations` (TF Addons' weight decay schedules), a callable's
  result, a tensor's or variable's value."""
  if is_schedule(value):
    return value(iterations)
  if callable(value) and not hasattr(value, "read_value"):
    return value()
  return value


def stand_in(value: Any) -> np.ndarray:
  """A runtime hyperparameter's current value as a float32 array (an array,
  not a number: a port keeps the state a nonzero value needs), evaluated
  eagerly; 0.5 where it cannot be (a TF1 graph's tensor)."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  with tf.init_scope():
    current = runtime_value(value, 0)
    number = (current.numpy() if hasattr(current, "numpy")
              else tf.get_static_value(current) if tf.is_tensor(current)
              else current)
  return np.asarray(0.5 if number is None else number, np.float32)


def is_decoupled(factory: Callable[..., Any]) -> bool:
  """Whether `factory` has TFA's decoupled weight decay signature (TFA's
  `AdamW`, `SGDW`, `jaxopt_port.addons.decoupled_weight_decay(...)`)."""
  parameters = list(inspect.signature(factory).parameters)
  return (parameters[:1] == ["weight_decay"]
          and "exclude_from_weight_decay" in parameters)
