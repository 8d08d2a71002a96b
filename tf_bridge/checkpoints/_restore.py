"""A checkpoint of another generation into a Keras 3 model and optimizer.

Keras 3 refuses tf_keras's checkpoints ("You are trying to restore a
checkpoint from a legacy Keras optimizer into a v2.11+ Optimizer"), reads
no TF1 Saver file, and no TF checkpoint of a tf_keras 2.11+ optimizer into
its own optimizers (their variables are by position: they are read through
tf_keras's native class instead). `restore` maps the file's variables to
the model's and
the slots of the optimizer that wrote it to the Keras 3 optimizer's, for the
algorithms whose state means the same in both (the catalog's `same_state`:
legacy Adam's `m` is Keras 3 Adam's `momentum`, TF1 Adam's `global_step` its
`iterations`).
"""

from __future__ import annotations

import re
from typing import Any, Mapping

import jax.numpy as jnp
import numpy as np

from tf_bridge import _state, catalog
from tf_bridge.checkpoints import _bundle, _keras3, _keys

_LAYER_WEIGHT = re.compile(r"(?:^|/)layer_with_weights-(\d+)/([^/]+)$")


def restore(path: str, model: Any, optimizer: Any, *,
            assignment_map: Mapping[str, str] | None = None) -> None:
  """Restores a tf_keras checkpoint (of a legacy optimizer, or of a 2.11+
  one: `tf_keras.optimizers.Adam`, ...) or a TF1 Saver checkpoint into a
  Keras 3 `model` and its `optimizer` (native or bridged), which then
  continue the run.

  Args:
    path: The checkpoint's prefix, or its directory.
    model: A Keras 3 model whose weights the file holds.
    optimizer: A Keras 3 optimizer (`keras.optimizers.Adam`,
      `tf_bridge.Adam`) of the algorithm that wrote the file; built for the
      model's trainable variables here if it is not.
    assignment_map: File keys (or scopes ending in "/") to the model's
      variable paths (or scopes), as `tf.compat.v1.train.init_from_checkpoint`
      takes them. By default a tf_keras file's `layer_with_weights-<i>/<name>`
      is weight `<name>` of the model's i-th layer with weights, and a TF1
      name is the variable whose path it is, the model's name left out
      (`dense/kernel` for `sequential/dense/kernel`).
  """
  target = _target(optimizer)
  tensors = _bundle.read_bundle(path)
  owner = _keras3.object_owner(tensors)
  if owner is not None:
    _restore_positional(path, tensors, owner, model, optimizer, target,
                        assignment_map)
    return
  if not target.same_state:
    raise ValueError(
        f"No optimizer of another generation keeps the state of Keras 3's "
        f"{target.class_name}: nothing to restore it from.")
  source, keys = _source(tensors, target, path)
  if keys.counter is None and _keys.reads_the_count(target.make_port()):
    raise ValueError(
        f"{path!r} holds no step count (TF1 keeps it only as `global_step`, "
        f"which this program did not save), and Keras 3's "
        f"{target.class_name} reads its count: save the global step with "
        "the checkpoint.")
  weights = list(model.weights)
  matched = _match(keys.params, weights, model, assignment_map, path)
  # Every value is checked before any is assigned: a file that does not fit
  # leaves the model's weights and the optimizer's state as they were (an
  # optimizer not built yet is built, with fresh state).
  assignments = [(weights[index], _checked(tensors, keys.params[name],
                                            weights[index], path))
                 for index, name in matched.items()]
  trainable = [v for v in model.trainable_variables]
  if not optimizer.built:
    optimizer.build(trainable)
  by_name = {v.name: v for v in optimizer.variables}
  mapping = target.same_state[source]
  position = {id(v): i for i, v in enumerate(weights)}
  for variable in trainable:
    name = matched.get(position[id(variable)])
    prefix = variable.path.replace("/", "_")
    for slot, own in mapping.items():
      key = keys.slots.get(slot, {}).get(name)
      if key is None:
        continue
      holder = by_name.get(f"{prefix}_{own}")
      if holder is None:
        raise ValueError(
            f"{type(optimizer).__name__} keeps no {own} for {variable.path}, "
            f"and {path!r} holds its {slot} ({key!r}): make the optimizer "
            "with the arguments the file's optimizer had (amsgrad, "
            "centered, momentum).")
      assignments.append((holder, _checked(tensors, key, holder, path)))
  shared = _keys.Expected.of(catalog.lookup(source).make_port().init(
      {"v": jnp.zeros(1)})).scalars
  for slot, own in mapping.items():
    if slot in shared:
      holder = by_name.get(own, getattr(
          optimizer, target.native_attributes.get(own, "_" + own), None))
      assignments.append((holder, _checked(tensors, keys.scalars[slot],
                                           holder, path)))
  for variable, value in assignments:
    variable.assign(value)
  if keys.counter is not None:
    optimizer.iterations.assign(int(tensors[keys.counter]))


def _restore_positional(path: str, tensors: Mapping[str, np.ndarray],
                        owner: str, model: Any, optimizer: Any,
                        target: catalog.Declaration,
                        assignment_map: Mapping[str, str] | None) -> None:
  """`restore` of a TF2 checkpoint of a tf_keras 2.11+ optimizer (its
  variables by position, in the order of the model's trainable variables
  it was built for): read into tf_keras's native twin of the target's
  algorithm, built for stand-ins of the Keras 3 model's trainable
  variables, and put into the Keras 3 optimizer through the port's state
  (the two generations' states mean the same: `jaxopt_port.tf_keras`
  reuses Keras 3's steps)."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  if _keras3.writer_generation(tensors, owner) == catalog.KERAS:
    raise ValueError(
        f"{path!r} holds a Keras 3 optimizer, of the same generation: Keras "
        "3 restores it itself (tf.train.Checkpoint(optimizer=optimizer)"
        ".read(path)).")
  name = "tf_keras." + target.name
  if name not in {d.name for d in catalog.CATALOG}:
    raise ValueError(
        f"{path!r} holds a tf_keras 2.11+ optimizer, and tf_keras has no "
        f"twin of Keras 3's {target.class_name} to read it with.")
  source = catalog.lookup(name)
  weights = list(model.weights)
  stored = [key[:-len(_keras3.VALUE)] for key in tensors
            if key.endswith(_keras3.VALUE) and not key.startswith(owner + "/")]
  matched = _match(dict(zip(stored, stored)), weights, model, assignment_map,
                   path)
  assignments = [(weights[index], _checked(tensors, name + _keras3.VALUE,
                                            weights[index], path))
                 for index, name in matched.items()]
  trainable = list(model.trainable_variables)
  stand_ins = [tf.Variable(tf.zeros(v.shape, v.dtype), trainable=True)
               for v in trainable]
  native = _keras3.native_like(source, stand_ins,
                               _keras3.object_count(tensors, owner), path)
  tf.train.Checkpoint(**{owner: native}).read(path).expect_partial()
  state = _state.state_of(native, stand_ins, source)
  for variable, value in assignments:
    variable.assign(value)
  if not optimizer.built:
    optimizer.build(trainable)
  _state.assign_state(state, optimizer, trainable, target)


def _target(optimizer: Any) -> catalog.Declaration:
  import keras  # pylint: disable=import-outside-toplevel
  declaration = getattr(type(optimizer), "declaration", None)
  if declaration is None:
    declaration = next((d for d in catalog.CATALOG
                        if d.generation == catalog.KERAS and d.has_native
                        and type(optimizer) is d.native_class()), None)
  if (declaration is None or declaration.generation != catalog.KERAS
      or not isinstance(optimizer, keras.optimizers.Optimizer)):
    raise TypeError(
        f"{type(optimizer).__name__} is not a Keras 3 optimizer of the "
        "catalog: restore takes a Keras 3 one (keras.optimizers.Adam, "
        "tf_bridge.Adam, ...).")
  return declaration


def _source(tensors: Mapping[str, np.ndarray], target: catalog.Declaration,
            path: str) -> tuple[str, _keys.Keys]:
  """The optimizer of another generation that wrote the file, and its
  keys."""
  dialect = _keys.dialect_of(tensors)
  tf2 = _keys.tf2_keys(tensors, path) if dialect == _keys.TF2 else None
  tried = []
  for name in sorted(target.same_state, key=lambda n: n.startswith("tf1.")):
    source = catalog.lookup(name)
    if dialect == _keys.TF1 and source.generation != catalog.TF1:
      continue
    for arguments in ({}, source.every_slot_arguments):
      expected = _keys.Expected.of(source.make_port(**arguments).init(
          {"v": jnp.zeros(1)}))
      try:
        keys = tf2 or _keys.tf1_keys(tensors, expected, path)
      except ValueError:
        continue
      if (set(keys.slots) == set(expected.slots)
          and set(expected.scalars) <= set(keys.scalars)):
        return name, keys
    tried.append(source.native_path or source.port_path)
  found = sorted(tf2.slots) if tf2 else sorted(_keys.tf1_children(tensors))
  raise ValueError(
      f"{path!r} does not hold the state of an optimizer whose state Keras "
      f"3's {target.class_name} keeps ({', '.join(tried)}): its slots are "
      f"{', '.join(found) or 'none'}.")


def _match(file_params: Mapping[str, str], weights: list[Any], model: Any,
           assignment_map: Mapping[str, str] | None, path: str
           ) -> dict[int, str]:
  """The file's variable for each of the model's weights, by index."""
  by_path = {w.path: i for i, w in enumerate(weights)}
  matched: dict[int, str] = {}
  if assignment_map is not None:
    for name in file_params:
      destination = _mapped(name, assignment_map)
      if destination is None:
        continue
      if destination not in by_path:
        raise ValueError(
            f"assignment_map maps {name!r} of {path!r} to {destination!r}, "
            f"which is no variable of the model (its variables: "
            f"{', '.join(by_path)}).")
      matched[by_path[destination]] = name
    return matched
  layers = [layer for layer in model.layers if layer.weights]
  position = {id(w): i for i, w in enumerate(weights)}
  for name in file_params:
    layer_weight = _LAYER_WEIGHT.search(name)
    if layer_weight:
      index, attribute = int(layer_weight.group(1)), layer_weight.group(2)
      if index < len(layers):
        for weight in layers[index].weights:
          if weight.name == attribute:
            matched[position[id(weight)]] = name
      continue
    for weight_path, index in by_path.items():
      if name in (weight_path, weight_path.partition("/")[2]):
        matched[index] = name
  missing = [weights[i].path for i in range(len(weights))
             if i not in matched and weights[i].trainable]
  if missing:
    raise ValueError(
        f"{path!r} holds no value for the model's {', '.join(missing)} (its "
        f"variables: {', '.join(sorted(file_params))}): pass an "
        "assignment_map.")
  return matched


def _mapped(name: str, assignment_map: Mapping[str, str]) -> str | None:
  for source, destination in assignment_map.items():
    if source.endswith("/") and name.startswith(source):
      return destination + name[len(source):]
    if name == source:
      return destination
  return None


def _checked(tensors: Mapping[str, np.ndarray], key: str, variable: Any,
             path: str) -> np.ndarray:
  return _keys.fitted(tensors[key], variable, f"{key!r} of {path!r}",
                      variable.path)
