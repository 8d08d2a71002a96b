"""A checkpoint of another generation into a Keras 3 model and optimizer.

Keras 3 refuses tf_keras's checkpoints ("You are trying to restore a
checkpoint from a legacy Keras optimizer into a v2.11+ Optimizer"), reads
no TF1 Saver file, and no TF checkpoint of a tf_keras 2.11+ optimizer into
its own optimizers (their variables are by position: they are read through
tf_keras's native class instead). `restore` maps the file's variables to
the model's and the state of the optimizer that wrote it to the Keras 3
optimizer's: a file of the Keras 3 class's own algorithm (TF1's
`AdamOptimizer` for `tf_bridge.tf1.Adam`, an OptimizerV2 twin's for TF
Addons' classes, the classics, Keras 3's algorithms legacy lacks) through
its port's state, and a file of an algorithm whose state means the same in
the other generation (the catalog's `same_state`: legacy Adam's `m` is
Keras 3 Adam's `momentum`, TF1 Adam's `global_step` its `iterations`) slot
by slot.
"""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any, Mapping

import jax
import jax.numpy as jnp
import numpy as np

from tf_bridge import _state, catalog
from tf_bridge.checkpoints import _bundle, _files, _keras3, _keys

_LAYER_WEIGHT = re.compile(r"(?:^|/)layer_with_weights-(\d+)/([^/]+)$")


def restore(path: str, model: Any, optimizer: Any, *,
            assignment_map: Mapping[str, str] | None = None) -> None:
  """Restores a tf_keras checkpoint (of a legacy optimizer, or of a 2.11+
  one: `tf_keras.optimizers.Adam`, ...) or a TF1 Saver checkpoint into a
  Keras 3 `model` and its `optimizer` (native or bridged), which then
  continue the run.

  The file's learning rate, where it keeps one (tf_keras's optimizers keep
  theirs as a variable: a `ReduceLROnPlateau` may have lowered it), is the
  optimizer's afterwards, as tf_keras's own resume takes it; an optimizer
  made with a `LearningRateSchedule` keeps its schedule (at the restored
  count). TF1 Saver files keep no learning rate: the optimizer keeps its
  own.

  Args:
    path: The checkpoint's prefix, or its directory.
    model: A Keras 3 model whose weights the file holds.
    optimizer: A Keras 3 optimizer of the catalog whose state means the
      file's: the algorithm that wrote the file on Keras 3 (`tf_bridge.tf1.
      Adam` for TF1's `AdamOptimizer`, `tf_bridge.addons.LazyAdam`,
      `tf_bridge.Lion` for `tf_bridge.legacy.Lion`'s file), or Keras 3's
      class of the same algorithm (`keras.optimizers.Adam`, `tf_bridge.Adam`
      for tf_keras's or TF1's Adam); built for the model's trainable
      variables here if it is not.
    assignment_map: File keys (or scopes ending in "/") to the model's
      variable paths (or scopes), as `tf.compat.v1.train.init_from_checkpoint`
      takes them. By default a tf_keras file's `layer_with_weights-<i>/<name>`
      is weight `<name>` of the model's i-th layer with weights, and a TF1
      name is the variable whose path it is, the model's name left out
      (`dense/kernel` for `sequential/dense/kernel`).
  """
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  if not tf.executing_eagerly():
    raise RuntimeError(
        "restore puts a checkpoint into a Keras 3 model and optimizer, "
        "which run eagerly only, and eager execution is off here (a TF1 "
        "program, or inside a tf.Graph): read the file with "
        "tf_bridge.checkpoints.read, or restore it in an eager program.")
  target = _target(optimizer)
  tensors = _bundle.read_bundle(path)
  owner = _keras3.object_owner(tensors)
  if owner is not None:
    _restore_positional(path, tensors, owner, model, optimizer, target,
                        assignment_map)
    return
  own_error = None
  if _writes_named_files(target, _keys.dialect_of(tensors)):
    try:
      params, state, counted = _files.read_counted(
          path, _state.port_of(optimizer, target))
    except ValueError as error:
      own_error = error
    else:
      _restore_own(path, tensors, params, state, counted, model, optimizer,
                   target, assignment_map)
      return
  same_state = _same_state(target)
  if not same_state:
    if own_error is not None:
      raise ValueError(
          f"{path!r} does not hold the state of {_described(target)}: "
          f"{own_error}") from None
    raise ValueError(
        f"{path!r} is a {_dialect_name(tensors)} file, and no optimizer "
        f"that writes one keeps the state of {_described(target)}: nothing "
        "to restore it from.")
  source, keys = _source(tensors, target, same_state, path)
  if keys.counter is None and _keys.reads_the_count(target.make_port()):
    raise ValueError(
        f"{path!r} holds no step count (TF1 keeps it only as `global_step`, "
        f"which this program did not save), and Keras 3's "
        f"{target.class_name} reads its count: save the global step with "
        "the checkpoint.")
  _check_derived(tensors, keys, source, same_state[source], optimizer,
                 target, path)
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
  mapping = same_state[source]
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
  shared = _keys.Expected.of(catalog.lookup(source).make_port(),
                             _keys.PROBE).scalars
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
  _take_rate(optimizer, _file_rate(keys, tensors))


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
  if target.generation == catalog.TFRS:
    # TF Recommenders' optimizers are tf_keras 2.11+ ones: the file is read
    # into the bridged tf_keras class of the same algorithm.
    source = target
    host = getattr(importlib.import_module(target.bridge_path.replace(
        "tf_bridge.", "tf_bridge.tf_keras.", 1)), target.class_name)
    make = lambda **arguments: host(**{**target.required, **arguments})
  else:
    name = "tf_keras." + target.name
    if name not in catalog.BY_NAME:
      raise ValueError(
          f"{path!r} holds a tf_keras 2.11+ optimizer, and tf_keras has no "
          f"twin of {_described(target)} to read it with.")
    source = catalog.lookup(name)
    make = source.make_native
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
                               _keras3.object_count(tensors, owner), path,
                               make)
  tf.train.Checkpoint(**{owner: native}).read(path).expect_partial()
  state = _state.state_of(native, stand_ins, source)
  for variable, value in assignments:
    variable.assign(value)
  if not optimizer.built:
    optimizer.build(trainable)
  _state.assign_state(state, optimizer, trainable, target)
  _take_rate(optimizer, tensors.get(f"{owner}/_learning_rate{_keras3.VALUE}"))


def _target(optimizer: Any) -> catalog.Declaration:
  import keras  # pylint: disable=import-outside-toplevel
  name = f"{type(optimizer).__module__}.{type(optimizer).__name__}"
  if not isinstance(optimizer, keras.optimizers.Optimizer):
    raise TypeError(
        f"{name} is not a Keras 3 optimizer: restore takes one "
        "(keras.optimizers.Adam, tf_bridge.Adam, tf_bridge.tf1.Adam, ...); "
        "tf_keras's optimizers restore tf_keras's files themselves.")
  declaration = getattr(type(optimizer), "declaration", None)
  if declaration is None:
    declaration = next((d for d in catalog.CATALOG
                        if d.generation == catalog.KERAS and d.has_native
                        and type(optimizer) is d.native_class()), None)
  if declaration is None:
    raise TypeError(
        f"{name} is a Keras 3 optimizer of no catalog algorithm: restore "
        "maps a file's state to the catalog's Keras 3 classes "
        "(keras.optimizers.*, tf_bridge.*, tf_bridge.tf1.*, "
        "tf_bridge.addons.*, ...), whose state it knows.")
  return declaration


def _same_state(target: catalog.Declaration) -> dict[str, dict[str, str]]:
  """The catalog's `same_state` of the target, and for a classic (no
  native class) its OptimizerV2 twin of the same name, which keeps the
  same slots (it adds OptimizerV2's `decay`, a learning-rate schedule)."""
  same = dict(target.same_state)
  twin = catalog.BY_NAME.get("legacy." + target.port.__name__)
  if (target.generation == catalog.KERAS and not target.has_native
      and twin is not None):
    expected = _keys.Expected.of(twin.make_port(
        **twin.required, **twin.every_slot_arguments), _keys.PROBE)
    same[twin.name] = {s: s for s in expected.slots + expected.scalars}
  return same


def _described(target: catalog.Declaration) -> str:
  return f"{target.bridge_path}.{target.class_name}" + (
      f" (or {target.native_path})" if target.generation == catalog.KERAS
      and target.has_native else "")


def _dialect_name(tensors: Mapping[str, np.ndarray]) -> str:
  return ("TF2 object-based" if _keys.dialect_of(tensors) == _keys.TF2
          else "TF1 Saver")


def _writes_named_files(target: catalog.Declaration, dialect: str) -> bool:
  """Whether the target's algorithm writes files of `dialect` keeping its
  port's state by name: TF1's classes write Saver files (and TF2 ones,
  eagerly), the algorithms with an OptimizerV2 class (TF Addons', the
  other libraries', the Keras 3 ones legacy lacks) TF2 files."""
  if dialect == _keys.TF1:
    return target.generation == catalog.TF1
  hosts = catalog.legacy_hosted(catalog.LEGACY if target.generation
                                == catalog.KERAS else target.generation)
  return target in hosts


def _restore_own(path: str, tensors: Mapping[str, np.ndarray],
                 params: Mapping[str, np.ndarray], state: Any, counted: bool,
                 model: Any, optimizer: Any, target: catalog.Declaration,
                 assignment_map: Mapping[str, str] | None) -> None:
  """`restore` of a file of the target's own algorithm: its port's state,
  read from the file (`read`), into the Keras 3 optimizer."""
  weights = list(model.weights)
  matched = _match(dict(zip(params, params)), weights, model, assignment_map,
                   path)
  assignments = [(weights[index], _keys.fitted(
      params[name], weights[index], f"{name!r} of {path!r}",
      weights[index].path)) for index, name in matched.items()]
  trainable = list(model.trainable_variables)
  if not optimizer.built:
    optimizer.build(trainable)
  position = {id(v): i for i, v in enumerate(weights)}
  names = [matched.get(position[id(v)]) for v in trainable]
  fresh = _state.port_of(optimizer, target).init(
      [np.asarray(v.numpy()) for v in trainable])
  stored = {_address(p, None): leaf for p, leaf
            in jax.tree_util.tree_flatten_with_path(state)[0]}
  leaves = []
  for leaf_path, leaf in jax.tree_util.tree_flatten_with_path(fresh)[0]:
    address = _address(leaf_path, names)
    if leaf_path[0].name == "iterations" and not counted:
      leaf = np.asarray(optimizer.iterations.numpy(), np.asarray(leaf).dtype)
    elif address in stored:
      leaf = _keys.fitted(stored[address], leaf, f"{path!r}'s "
                          f"{jax.tree_util.keystr(leaf_path)}",
                          "the optimizer's")
    leaves.append(leaf)
  for variable, value in assignments:
    variable.assign(value)
  _state.assign_state(jax.tree.unflatten(jax.tree.structure(fresh), leaves),
                      optimizer, trainable, target)
  if _keys.dialect_of(tensors) == _keys.TF2:
    _take_rate(optimizer, _file_rate(_keys.tf2_keys(tensors, path), tensors))


def _address(leaf_path: tuple[Any, ...], names: list[str | None] | None
             ) -> tuple[Any, ...]:
  """A state leaf's path with its variable's file key: a dict key of the
  file's state (`names` None), or the file key of the i-th trainable
  variable (None where the file has none)."""
  address = []
  for entry in leaf_path:
    if isinstance(entry, jax.tree_util.SequenceKey) and names is not None:
      address.append(("variable", names[entry.idx]))
    elif isinstance(entry, jax.tree_util.DictKey) and names is None:
      address.append(("variable", entry.key))
    else:
      address.append(jax.tree_util.keystr((entry,)))
  return tuple(address)


def _check_derived(tensors: Mapping[str, np.ndarray], keys: _keys.Keys,
                   source: str, mapping: Mapping[str, str], optimizer: Any,
                   target: catalog.Declaration, path: str) -> None:
  """Refuses a file whose shared scalars the Keras 3 class does not keep
  but derives from its count (TF1 Adam's `beta1_power`, `beta2_power`: its
  bias correction) unless they are what the count gives: the source's port
  counted from a fresh state to the file's count, with the optimizer's
  hyperparameters."""
  declaration = catalog.lookup(source)
  derived = [name for name in _keys.Expected.of(declaration.make_port(),
                                                {}).scalars
             if name not in mapping]
  if not derived:
    return
  taken = inspect.signature(declaration.port).parameters
  by_name = {name.replace("_", ""): name for name in taken}
  config = {by_name[key.replace("_", "")]: value
            for key, value in optimizer.get_config().items()
            if key.replace("_", "") in by_name
            and isinstance(value, (int, float)) and key != "learning_rate"}
  port = declaration.make_port(**config)
  count = int(tensors[keys.counter]) if keys.counter is not None else 0

  def scalars(state):
    return [getattr(state.slots, name) for name in derived]

  def step(carry):
    done, state, _ = carry
    after = port.update({}, state, {})[1]
    moved = jnp.any(jnp.stack([a != b for a, b in zip(scalars(state),
                                                         scalars(after))]))
    return done + 1, after, moved

  # Counted until the scalars stop moving (beta powers reach 0 within
  # ~1e5 steps), not to a count of millions.
  _, counted, _ = jax.jit(lambda state: jax.lax.while_loop(
      lambda carry: (carry[0] < count) & carry[2], step,
      (0, state, True)))(port.init({}))
  for name, value in zip(derived, scalars(counted)):
    stored = np.asarray(tensors[keys.scalars[name]])
    expected = np.asarray(value)
    if not np.allclose(stored, expected, rtol=1e-6, atol=0):
      raise ValueError(
          f"{path!r} keeps {name} = {stored.item()!r}, which "
          f"{_described(target)} does not keep: it derives it from its step "
          f"count (the file's {keys.counter or 'none'}: {count}) and its "
          f"{', '.join(sorted(config))}, which give {expected.item()!r}. "
          "The file's count is not its optimizer's steps, or its "
          "hyperparameters are not the writer's: restore it into "
          f"{declaration.bridge_path}.{declaration.class_name}, which keeps "
          f"{name}.")


def _file_rate(keys: _keys.Keys, tensors: Mapping[str, np.ndarray]
               ) -> np.ndarray | None:
  """The learning rate a TF2 file keeps (OptimizerV2's hyperparameter
  variable), or None."""
  key = keys.scalars.get("learning_rate")
  return None if key is None else tensors[key]


def _take_rate(optimizer: Any, rate: np.ndarray | None) -> None:
  """The file's learning rate into the optimizer, unless it has a
  schedule (or the file no rate)."""
  import keras  # pylint: disable=import-outside-toplevel
  if rate is None or not isinstance(optimizer._learning_rate,  # pylint: disable=protected-access
                                    keras.Variable):
    return
  optimizer.learning_rate = np.asarray(rate, optimizer.learning_rate.dtype)


def _source(tensors: Mapping[str, np.ndarray], target: catalog.Declaration,
            same_state: Mapping[str, Mapping[str, str]], path: str
            ) -> tuple[str, _keys.Keys]:
  """The optimizer of another generation that wrote the file, and its
  keys."""
  dialect = _keys.dialect_of(tensors)
  tf2 = _keys.tf2_keys(tensors, path) if dialect == _keys.TF2 else None
  tried = []
  for name in sorted(same_state, key=lambda n: n.startswith("tf1.")):
    source = catalog.lookup(name)
    if dialect == _keys.TF1 and source.generation != catalog.TF1:
      continue
    for arguments in ({}, source.every_slot_arguments):
      expected = _keys.Expected.of(source.make_port(**arguments),
                                   _keys.PROBE)
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
