"""The optimizer APIs `port` takes, each as the calls it traces through.

A host copies a user's optimizer object (the port never touches the user's
own), makes variables of its kind, builds the optimizer's state on them, runs
one `apply_gradients` and says which of the optimizer's variables are the
slots of which variable and which is its iteration count, and whether the
optimizer sums a sparse gradient's repeated indices before its sparse hook.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
from typing import Any, Callable

import numpy as np
import tensorflow as tf


@dataclasses.dataclass(frozen=True)
class Host:
  """One optimizer API. `hooks`: the methods a class of it overrides to
  define its algorithm (refusals name the one that made an op).
  `sums_repeated_indices(optimizer)`: whether its sparse hook gets a
  `tf.IndexedSlices`' repeated indices summed (by its API's own step)."""
  api: str
  hooks: tuple[str, ...]
  variable: Callable[[np.ndarray, str], Any]
  build: Callable[[Any, list], None]
  apply: Callable[[Any, list, list, Any], None]
  iterations: Callable[[Any, Any], Any]
  slots: Callable[[Any, list], dict[str, list]]
  sums_repeated_indices: Callable[[Any], bool]


def _keras_variable(value: np.ndarray, name: str) -> Any:
  import keras  # pylint: disable=import-outside-toplevel
  return keras.Variable(value, name=name)


def _tf_variable(value: np.ndarray, name: str) -> tf.Variable:
  return tf.Variable(value, name=name)


def _slots_by_get_slot(optimizer: Any, variables: list) -> dict[str, list]:
  slots = {}
  for name in optimizer.get_slot_names():
    found = []
    for variable in variables:
      try:
        found.append(optimizer.get_slot(variable, name))
      except KeyError:  # OptimizerV2 raises where TF1 returns None.
        found.append(None)
    slots[name] = found
  return slots


def _slots_by_reference(optimizer: Any, variables: list) -> dict[str, list]:
  """tf_keras 2.11+ and Keras 3 name a slot only where it is created, in
  `add_variable_from_reference(variable, name)`: `copy_of` recorded those
  calls."""
  slots = {}
  for reference, name, slot in optimizer._port_references:  # pylint: disable=protected-access
    index = next(i for i, v in enumerate(variables) if v is reference)
    slots.setdefault(name, [None] * len(variables))[index] = slot
  return slots


def _recording_references(optimizer: Any) -> Any:
  original = optimizer.add_variable_from_reference
  optimizer._port_references = []  # pylint: disable=protected-access

  parameters = list(inspect.signature(original).parameters)

  def add_variable_from_reference(*args, **kwargs):
    slot = original(*args, **kwargs)
    named = dict(zip(parameters, args), **kwargs)
    # tf_keras: (model_variable, variable_name); Keras 3: (reference, name).
    reference, name = (named.get(parameters[0]), named.get(parameters[1]))
    optimizer._port_references.append((reference, name, slot))  # pylint: disable=protected-access
    return slot

  optimizer.add_variable_from_reference = add_variable_from_reference
  return optimizer


def copy_of(optimizer: Any) -> Any:
  """A deep copy sharing only the distribution strategy (one per process);
  a Keras 3 or tf_keras 2.11+ optimizer from its config, unbuilt (it takes
  only the variables it was built for, and a Keras 3 deep copy goes through
  Keras's registry, where a user's class need not be)."""
  import keras  # pylint: disable=import-outside-toplevel
  import tf_keras  # pylint: disable=import-outside-toplevel
  if isinstance(optimizer, (keras.optimizers.Optimizer,
                            tf_keras.optimizers.Optimizer)):
    duplicate = type(optimizer).from_config(optimizer.get_config())
  else:
    memo = {id(value): value for value in vars(optimizer).values()
            if isinstance(value, tf.distribute.Strategy)}
    duplicate = copy.deepcopy(optimizer, memo)
    if getattr(duplicate, "_distribution_strategy", None) is not None:
      # OptimizerV2 builds its slots in the strategy it was made under; the
      # copy traces outside any (`_port._outside_callers_context`).
      duplicate._distribution_strategy = None  # pylint: disable=protected-access
  if hasattr(duplicate, "add_variable_from_reference"):
    _recording_references(duplicate)
  return duplicate


def _tf1_apply(optimizer, grads, variables, iterations):
  optimizer.apply_gradients(zip(grads, variables), global_step=iterations)


def _keras_apply(optimizer, grads, variables, iterations):
  del iterations
  optimizer.apply_gradients(zip(grads, variables))


def _tf1_build(optimizer, variables):
  optimizer._create_slots(variables)  # pylint: disable=protected-access


def _v2_build(optimizer, variables):
  optimizer._create_all_weights(variables)  # pylint: disable=protected-access


def _own_iterations(optimizer, global_step):
  del global_step
  return optimizer.iterations


def _global_step(optimizer, global_step):
  del optimizer
  return global_step


def _keeps_base_method(name: str) -> Callable[[Any], bool]:
  """Whether an optimizer runs its API's own method `name` (its class does
  not override it)."""

  def keeps(optimizer: Any) -> bool:
    base = next(base for base, _ in _bases() if isinstance(optimizer, base))
    return getattr(type(optimizer), name) is getattr(base, name)
  return keeps


# OptimizerV2 and TF1 sum them in `_resource_apply_sparse_duplicate_indices`
# (a class overriding it gets them as they come), tf_keras 2.11+ in
# `apply_gradients` (`_deduplicate_sparse_grad`); Keras 3 never does.
_SUMS_BEFORE_SPARSE_HOOK = _keeps_base_method(
    "_resource_apply_sparse_duplicate_indices")


_V2_HOOKS = ("_resource_apply_dense", "_resource_apply_sparse",
             "_resource_apply_sparse_duplicate_indices", "_prepare_local",
             "_prepare", "_create_slots", "_create_all_weights",
             "_distributed_apply", "apply_gradients", "_decayed_lr")
_TF1_HOOKS = ("_apply_dense", "_resource_apply_dense", "_apply_sparse",
              "_resource_apply_sparse", "_apply_sparse_duplicate_indices",
              "_resource_apply_sparse_duplicate_indices", "_prepare",
              "_create_slots", "_finish", "apply_gradients")
_NEW_HOOKS = ("update_step", "_update_step", "_update_step_xla", "build",
              "apply_gradients", "apply", "_backend_update_step",
              "_apply_weight_decay")

OPTIMIZER_V2 = Host("OptimizerV2", _V2_HOOKS, _tf_variable, _v2_build,
                    _keras_apply, _own_iterations, _slots_by_get_slot,
                    _SUMS_BEFORE_SPARSE_HOOK)
TF1 = Host("tf.compat.v1.train.Optimizer", _TF1_HOOKS, _tf_variable,
           _tf1_build, _tf1_apply, _global_step, _slots_by_get_slot,
           _SUMS_BEFORE_SPARSE_HOOK)
TF_KERAS = Host("tf_keras.optimizers.Optimizer", _NEW_HOOKS, _tf_variable,
                lambda optimizer, variables: optimizer.build(variables),
                _keras_apply, _own_iterations, _slots_by_reference,
                _keeps_base_method("_deduplicate_sparse_grad"))
KERAS3 = Host("keras.optimizers.Optimizer", _NEW_HOOKS, _keras_variable,
              lambda optimizer, variables: optimizer.build(variables),
              _keras_apply, _own_iterations, _slots_by_reference,
              lambda optimizer: False)


def _bases() -> list[tuple[type, Host]]:
  import keras  # pylint: disable=import-outside-toplevel
  import tf_keras  # pylint: disable=import-outside-toplevel
  from tensorflow.python.keras.optimizer_v2 import optimizer_v2  # pylint: disable=import-outside-toplevel
  return [(tf_keras.optimizers.legacy.Optimizer, OPTIMIZER_V2),
          (optimizer_v2.OptimizerV2, OPTIMIZER_V2),
          (tf.compat.v1.train.Optimizer, TF1),
          (tf_keras.optimizers.Optimizer, TF_KERAS),
          (keras.optimizers.Optimizer, KERAS3)]


def host_of(optimizer: Any) -> Host:
  for base, host in _bases():
    if isinstance(optimizer, base):
      if host is KERAS3:
        import keras  # pylint: disable=import-outside-toplevel
        if keras.backend.backend() != "tensorflow":
          raise TypeError(
              "tf_bridge.port converts a Keras 3 optimizer on the "
              f"TensorFlow backend; this process runs Keras on "
              f"{keras.backend.backend()!r}.")
      return host
  raise TypeError(
      "tf_bridge.port takes an optimizer object of OptimizerV2 "
      "(tf_keras.optimizers.legacy.Optimizer), TF1 "
      "(tf.compat.v1.train.Optimizer), tf_keras.optimizers.Optimizer or "
      f"keras.optimizers.Optimizer; got {type(optimizer).__name__}.")
