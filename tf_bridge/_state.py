"""Moving a training run between native Keras and the JAX port.

A native optimizer's slots and counters become the port's state pytree
(`state_from_keras`) and back (`state_to_keras`), so that a run continues in
the other framework on the trajectory it would have followed.

The port's state names its leaves as Keras names its variables: a path
`.slots.<slot>[i]` is the slot `<slot>` of the i-th variable (Keras 3:
the optimizer variable `<variable path>_<slot>`; OptimizerV2:
`get_slot(variable, "<slot>")`), `.iterations` is `optimizer.iterations`,
`.accumulated_gradients[i]` and `.average[i]` are Keras 3's gradient
accumulators and EMA averages, and a slot without an index is a scalar the
optimizer keeps as an attribute (`_u_product`, `_m_cache`).
"""

from __future__ import annotations

import inspect
from typing import Any, Sequence

import jax
import numpy as np

from tf_bridge import catalog

# Keras 3 per-variable fields of the port's `KerasState` and the suffix of
# the native variable names.
_KERAS3_FIELDS = {"accumulated_gradients": "gradient_accumulator",
                  "average": "average"}


def port_for(optimizer: Any) -> Any:
  """The `jaxopt_port` transform computing what the native `optimizer`
  computes, with its hyperparameters (a learning-rate schedule becomes
  its Keras config's value at step 0 only if it is a float)."""
  return port_of(optimizer, _declaration(optimizer))


def port_of(optimizer: Any, declaration: catalog.Declaration) -> Any:
  """`port_for` of an optimizer of `declaration`, native or bridged."""
  parameters = inspect.signature(declaration.port).parameters
  config = {k: v for k, v in optimizer.get_config().items()
            if k in parameters and k != "name"}
  rate = config.get("learning_rate", 0.0)
  if isinstance(rate, np.number):  # tf_keras's configs hold numpy floats.
    config["learning_rate"] = rate.item()
  elif not isinstance(rate, (int, float)):
    config.pop("learning_rate")  # A schedule: the state does not depend on it.
  if declaration.generation == catalog.LEGACY:
    config.pop("decay", None)  # Neither does legacy's `decay`.
  return declaration.make_port(**config)


def _declaration(optimizer: Any) -> catalog.Declaration:
  for declaration in catalog.CATALOG:
    if (declaration.generation in (catalog.KERAS, catalog.LEGACY,
                                   catalog.TF_KERAS)
        and declaration.has_native
        and type(optimizer) is declaration.native_class()):
      return declaration
  raise TypeError(
      f"{type(optimizer).__module__}.{type(optimizer).__name__} is not a "
      "native Keras 3 or tf_keras (2.11+ or legacy) optimizer with a port in "
      "jaxopt_port (see tf_bridge.catalog).")


def _is_keras3(optimizer: Any) -> bool:
  import keras  # pylint: disable=import-outside-toplevel
  return isinstance(optimizer, keras.optimizers.Optimizer)


def _native_leaves(optimizer: Any, variables: Sequence[Any], state: Any,
                   declaration: catalog.Declaration
                   ) -> list[tuple[Any, Any]]:
  """(native variable or None, port leaf) for each leaf of the port's
  `state`, None where the native optimizer keeps nothing (Muon's unused
  velocity of a matrix)."""
  keras3 = _is_keras3(optimizer)
  attributes = declaration.native_attributes
  if keras3:
    by_name = {v.name: v for v in optimizer.variables}
  pairs = []
  for path, leaf in jax.tree_util.tree_flatten_with_path(state)[0]:
    field = path[0].name  # A field of KerasState or LegacyState.
    slot = _key_name(path[1]) if len(path) > 1 else None
    index = (path[-1].idx if isinstance(path[-1], jax.tree_util.SequenceKey)
             else None)
    if field == "iterations":
      # Keras 3's `iterations` counts applied updates (calls divided by
      # the accumulation steps); the variable counts calls, as the port.
      native = optimizer._iterations if keras3 else optimizer.iterations  # pylint: disable=protected-access
    elif index is None:
      native = getattr(optimizer, attributes.get(slot, "_" + str(slot)),
                       None)
      if native is None and keras3:
        # A bridged class's leaf of no variable (TF1 Adam's beta1_power on
        # Keras 3), named by `Keras3Optimizer._add_state_variable`.
        native = by_name.get(f"state_{slot}")
    elif slot in attributes and hasattr(optimizer, attributes[slot]):
      native = getattr(optimizer, attributes[slot])[index]
    elif field == "average" and not keras3:  # tf_keras's 2.11+ EMA.
      native = optimizer._model_variables_moving_average[index]  # pylint: disable=protected-access
    elif keras3:
      name = (slot if field == "slots" else _KERAS3_FIELDS[field])
      reference = variables[index]
      prefix = getattr(reference, "path", reference.name).replace("/", "_")
      native = by_name.get(f"{prefix}_{name}")
    elif slot in optimizer.get_slot_names():
      native = optimizer.get_slot(variables[index], slot)
    else:  # A slot native keeps none of (SGD's momentum at 0).
      native = None
    pairs.append((native, leaf))
  return pairs


def _key_name(entry: Any) -> str | None:
  """A slot's name from its path entry (a NamedTuple field or a dict key);
  None for a list index (`.average[0]` has no slot name)."""
  if isinstance(entry, jax.tree_util.SequenceKey):
    return None
  return str(entry.name if hasattr(entry, "name") else entry.key)


def state_from_keras(optimizer: Any, variables: Sequence[Any]) -> Any:
  """The port's state equal to a native optimizer's slots and counters.

  Args:
    optimizer: A native Keras 3 (`keras.optimizers.Adam`, ...) or tf_keras
      legacy optimizer that has taken at least one step on `variables` (or
      been built for them).
    variables: The variables it updates, in order.

  Returns:
    The tree `port_for(optimizer).init(params)` returns for `params` the
    list of the variables' values, filled with the optimizer's state: run
    `port_for(optimizer)` (or the same `jaxopt_port` call) from there. An
    optimizer of any other class `tf_bridge.port` takes (a user's own)
    gives the `tf_bridge.PortState` of `tf_bridge.port(optimizer)`.
  """
  try:
    declaration = _declaration(optimizer)
  except TypeError:
    if getattr(optimizer, "_fused_class", False):
      raise
    from tf_bridge import _port  # pylint: disable=import-outside-toplevel
    return _port.live_state(optimizer, variables)  # Another class: its port.
  return state_of(optimizer, variables, declaration)


def state_of(optimizer: Any, variables: Sequence[Any],
             declaration: catalog.Declaration) -> Any:
  """`state_from_keras` of an optimizer of `declaration`, native or
  bridged (whose variables are laid out and named as native's)."""
  params = [np.asarray(v.numpy()) for v in variables]
  state = port_of(optimizer, declaration).init(params)
  leaves = []
  for native, leaf in _native_leaves(optimizer, variables, state,
                                     declaration):
    if native is None:
      leaves.append(leaf)
      continue
    value = np.asarray(native.numpy())
    if value.size != np.size(leaf):
      leaves.append(leaf)  # A slot Keras sizes otherwise and never reads.
      continue
    leaves.append(np.asarray(value, np.asarray(leaf).dtype).reshape(
        np.shape(leaf)))
  return jax.tree.unflatten(jax.tree.structure(state), [
      jax.numpy.asarray(leaf) for leaf in leaves])


def state_to_keras(state: Any, optimizer: Any, variables: Sequence[Any]
                   ) -> None:
  """Assigns the port's `state` to a native optimizer's slots and counters,
  building it for `variables` first if needed (the reverse of
  `state_from_keras`)."""
  assign_state(state, optimizer, variables, _declaration(optimizer))


def assign_state(state: Any, optimizer: Any, variables: Sequence[Any],
                 declaration: catalog.Declaration) -> None:
  """`state_to_keras` for an optimizer of `declaration`, native or
  bridged."""
  if hasattr(optimizer, "_create_all_weights"):  # OptimizerV2.
    optimizer._create_all_weights(variables)  # pylint: disable=protected-access
  elif not getattr(optimizer, "built", getattr(optimizer, "_built", False)):
    optimizer.build(variables)
  expected = port_of(optimizer, declaration).init(
      [np.asarray(v.numpy()) for v in variables])
  if jax.tree.structure(expected) != jax.tree.structure(state):
    raise ValueError(
        f"The state does not have the tree of {type(optimizer).__name__}'s "
        f"port: {jax.tree.structure(state)}, expected "
        f"{jax.tree.structure(expected)}.")
  for native, leaf in _native_leaves(optimizer, variables, state,
                                     declaration):
    if native is None or np.size(leaf) != int(np.prod(native.shape)):
      continue
    native.assign(np.asarray(leaf).reshape(tuple(native.shape)).astype(
        np.dtype(getattr(native.dtype, "as_numpy_dtype", native.dtype))))
