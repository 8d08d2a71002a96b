"""`tf_bridge.adopt`: a user's TensorFlow optimizer class as a Keras 3 one.

The class's port (`tf_bridge.port`) becomes the factory of a bridged class
(`keras_optimizer`): its constructor takes the class's own arguments, its
slots are the class's slots by name, and Keras's learning rate (a float, a
variable callbacks set, a schedule) is fed to every step in place of the
class's `learning_rate` variable.
"""

from __future__ import annotations

import inspect
from typing import Any

import jax
import jax.numpy as jnp
import optax
import tensorflow as tf

from tf_bridge import _arguments, _hosts, _port


def _claimed_base_arguments(cls: type) -> tuple[str, ...]:
  """Keras 3 base arguments an OptimizerV2 or TF1 class declares itself:
  those bases take none of them, so the class's own (AdaBelief's
  `weight_decay`, added to its step and scaled by its warmed-up rate) is
  no Keras 3 decay (Keras's rate, before the step)."""
  hosts = {_hosts.OPTIMIZER_V2, _hosts.TF1}
  if not any(issubclass(cls, base) for base, host in _hosts._bases()  # pylint: disable=protected-access
             if host in hosts):
    return ()
  legacy = set(_arguments.LEGACY_BASE_ARGUMENTS)
  declared = inspect.signature(cls.__init__).parameters
  return tuple(name for name in _arguments.KERAS_BASE_ARGUMENTS
               if name in declared and name not in legacy)


def _own_parameters(cls: type) -> list[inspect.Parameter]:
  """The class's constructor arguments, less `self`, `*args`/`**kwargs`,
  `name` and Keras's base arguments (the bridged class's base takes
  those) but those the class claims (`_claimed_base_arguments`)."""
  parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
  taken = {"name", *_arguments.KERAS_BASE_ARGUMENTS} - set(
      _claimed_base_arguments(cls))
  own = [p for p in parameters
         if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
         and p.name not in taken]
  missing = [p.name for p in own if p.default is p.empty and
             p.name != "learning_rate"]
  if missing:
    raise TypeError(
        f"tf_bridge.adopt needs a default for each of {cls.__name__}'s "
        f"constructor arguments (a Keras class is built from its config); "
        f"{', '.join(missing)} has none.")
  return own


def _fed(transform: optax.GradientTransformationExtraArgs,
          values: dict[str, Any]) -> optax.GradientTransformationExtraArgs:
  """`transform` with the class's variables named in `values` (its
  `learning_rate`, its hyperparameters) fed from them at every step, not
  kept in the state: the Keras class's own rate and attributes decide."""

  def without(state):
    return state._replace(variables={
        k: v for k, v in state.variables.items() if k not in values})

  def init_fn(params):
    return without(transform.init(params))

  def update_fn(updates, state, params=None, **extra_args):
    kept = jax.eval_shape(transform.init, params).variables
    full = dict(state.variables)
    for name, value in values.items():
      if name in kept:
        full[name] = jnp.asarray(value, kept[name].dtype)
    updates, state = transform.update(
        updates, state._replace(variables=full), params, **extra_args)
    return updates, without(state)

  return optax.GradientTransformationExtraArgs(init_fn, update_fn)


def adopt(cls: type) -> type:
  """A Keras 3 optimizer class running `cls`'s algorithm through its port
  and the fused bridge (one XLA call per step).

  `cls` is an optimizer class `tf_bridge.port` takes (OptimizerV2, TF1,
  tf_keras 2.11+, Keras 3). The class of the same name is registered with
  Keras under `cls.__module__`, so a saved model loads where `adopt(cls)`
  has run (at the import of that module, if it adopts its class itself). Its constructor takes `cls`'s own arguments (each with its
  default) and Keras 3's base arguments; `get_config` returns them; its
  slots are named as `cls` names them. Keras's learning rate is fed to the
  class's `learning_rate` variable at every step; a class that keeps its
  rate elsewhere (a TF1 class's Python float) steps at its own.
  """
  from tf_bridge._keras3 import keras_optimizer  # pylint: disable=import-outside-toplevel
  parameters = _own_parameters(cls)
  tf1 = issubclass(cls, tf.compat.v1.train.Optimizer)
  rate_default = next((p.default for p in parameters
                       if p.name == "learning_rate"), 0.001)
  if rate_default is inspect.Parameter.empty:
    rate_default = 0.001
  ports: dict[str, optax.GradientTransformationExtraArgs] = {}

  def factory(**arguments):
    learning_rate = arguments.pop("learning_rate", None)
    # One port (one conversion per variable list) per set of arguments: the
    # bridge calls the factory again for each step it traces.
    key = repr(sorted(arguments.items()))
    if key not in ports:
      constructed = dict(arguments)
      if tf1:
        # TF1 keeps its rate as given: a variable makes it one the step
        # reads, so Keras's rate can be fed to it.
        constructed["learning_rate"] = tf.Variable(
            learning_rate if _is_number(learning_rate) else rate_default,
            dtype=tf.float32, name="learning_rate")
      ports[key] = _port.port(cls(**constructed))
    fed = {k: v for k, v in arguments.items() if _is_number(v)}
    if learning_rate is not None:
      fed["learning_rate"] = learning_rate
    return _fed(ports[key], fed)

  factory.__name__ = cls.__name__
  factory.__qualname__ = cls.__qualname__
  factory.__module__ = cls.__module__
  factory.__doc__ = cls.__doc__
  factory.__signature__ = inspect.Signature(parameters)
  factory.claimed_base_arguments = _claimed_base_arguments(cls)
  return keras_optimizer(factory, cls.__name__, module=cls.__module__)


def _is_number(value: Any) -> bool:
  return isinstance(value, (int, float))
