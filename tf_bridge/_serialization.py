"""A bridged optimizer's arguments in a Keras config and back: plain data
only (an inner optimizer as its registered name and config, never code)."""

from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from tf_bridge._arguments import (is_bridged, is_runtime, is_schedule,
                                  is_schedule_class, stand_in)


def serialized_arguments(arguments: dict[str, Any],
                         factory: Callable[..., Any],
                         schedules: Any) -> dict[str, Any]:
  """`arguments` for `get_config`: an inner bridged optimizer as its
  registered name and config (plain data); a schedule (TF Addons' weight
  decay) as the host's `schedules.serialize` writes it; a tensor, variable
  or callable hyperparameter as its current number (OptimizerV2's
  `_serialize_hyperparameter`)."""
  def serialized(name, value):
    if is_bridged(value):
      return {"class_name": type(value).registered_name,
              "config": value.get_config()}
    if is_schedule(value):
      return schedules.serialize(value)
    if is_runtime(factory, name, value) and not is_schedule(value):
      return float(stand_in(value))
    # As JSON keeps it (Keras's own configs hold lists).
    return list(value) if isinstance(value, tuple) else value

  return {k: serialized(k, v) for k, v in arguments.items()}


def deserialized_arguments(arguments: dict[str, Any],
                           registered: Callable[[str], Any],
                           schedules: Any) -> dict[str, Any]:
  """The reverse: an inner optimizer's config becomes the optimizer again,
  its class found by name in Keras's registry (`registered`) among the
  bridge's classes, and a schedule's config the schedule (its class one of
  the host's `schedules` or a registered schedule), never by importing or
  evaluating anything; a numpy scalar (what OptimizerV2's configs hold for
  hyperparameter variables) becomes the Python number it holds, so it
  decides the state as that number would (SGD's momentum of 0 keeps no
  slot)."""
  resolved = {}
  for key, value in arguments.items():
    if isinstance(value, np.generic):
      value = value.item()
    elif isinstance(value, dict) and "class_name" in value:
      name = value.get("registered_name") or value["class_name"]
      found = getattr(schedules, value["class_name"], None) or registered(
          name)
      if (getattr(found, "_fused_class", False) is not True
          and not is_schedule_class(found)):
        raise ValueError(
            f"`{key}` holds a serialized object named "
            f"{value['class_name']!r}: only a registered tf_bridge optimizer "
            "or a learning rate schedule may appear there (configs are "
            "plain data).")
      value = found.from_config(value["config"])
    resolved[key] = value
  return resolved


def inner_optimizer(value: Any, bridged_module: Any,
                    native_get: Callable[[str], Any]) -> Any:
  """A wrapper's `optimizer` argument as a bridged optimizer: one already,
  or made from an optimizer name (`"adam"`) or a native optimizer (its
  config), as TF Addons' wrappers take all three.

  Args:
    value: The argument.
    bridged_module: Where the host's bridged classes live
      (`tf_bridge.legacy` or `tf_bridge`).
    native_get: The host's `optimizers.get`, from a name to a native
      optimizer.
  """
  if is_bridged(value):
    return value
  if isinstance(value, str):
    value = native_get(value)
  get_config = getattr(value, "get_config", None)
  bridged = getattr(bridged_module, type(value).__name__, None)
  if get_config is None or bridged is None or not hasattr(
      bridged, "_fused_class"):
    raise TypeError(
        "optimizer is not an object of tf.keras.optimizers.Optimizer (nor "
        f"an optimizer name): got {value!r}, of type "
        f"{type(value).__name__}, which has no class in "
        f"{bridged_module.__name__}.")
  accepted = set(inspect.signature(bridged.port).parameters) | {"name"}
  return bridged(**{key: item for key, item in get_config().items()
                    if key in accepted})
