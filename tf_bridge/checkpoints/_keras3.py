"""Keras 3's files (`.weights.h5`, `.keras`) and its optimizers in TF2
object-based checkpoints: the optimizer's variables by position
(`optimizer/vars/<i>`; `<optimizer>/_variables/<i>`, in `optimizer.variables`
order), the model's by Keras's own traversal of the model (or as the
optimizer's `_trainable_variables`); so reading one takes the model.
tf_keras's 2.11+ optimizers (`tf_keras.optimizers.Adam`, ...) keep theirs by
position too, in TF2 checkpoints (`tf.train.Checkpoint`, `save_weights`,
`ModelCheckpoint`): read with the tf_keras model, whose variables the file
keys by their object paths (`model/layer_with_weights-0/kernel`)."""

from __future__ import annotations

import contextlib
import importlib
import io
import itertools
import os
import sys
import tempfile
import zipfile
from typing import Any, Iterable, Iterator, Mapping

import jax
import jax.numpy as jnp
import numpy as np

from tf_bridge import _state, catalog
from tf_bridge.checkpoints import _bundle, _keys


def is_keras3(path: str) -> bool:
  return path.endswith((".weights.h5", ".keras")) and os.path.isfile(path)


def read(path: str, transform: Any, model: Any
         ) -> tuple[dict[str, np.ndarray], Any]:
  """Loads the file's weights into `model` (as `model.load_weights` does)
  and reads its optimizer's variables into the port's state, the params
  keyed by `variable.path` (a tf_keras model's file, of a tf_keras 2.11+
  optimizer: by the variable's name, `dense/kernel`)."""
  _require(model, path)
  stored = _optimizer_values(path)
  model.load_weights(path)
  variables = list(model.trainable_variables)
  optimizer, declaration = _optimizer_like(transform, variables, len(stored),
                                           path, _generation_of(model))
  _assign(optimizer, stored, path)
  return _port_state(optimizer, declaration, variables, transform,
                     _variable_keys(model, variables))


def object_owner(keys: Iterable[str]) -> str | None:
  """The attribute a TF2 object-based checkpoint with these keys keeps a
  Keras 3 optimizer under (`optimizer`), or None."""
  owners = {key.split("/")[0] for key in keys
            if key.endswith("/_iterations/.ATTRIBUTES/VARIABLE_VALUE")}
  return owners.pop() if len(owners) == 1 else None


def writer_generation(keys: Iterable[str], owner: str) -> str:
  """Which generation's optimizer a TF2 checkpoint keeps at `owner`: Keras
  3's tracks the model's variables (`_trainable_variables`), tf_keras
  2.11+'s does not."""
  tracked = f"{owner}/_trainable_variables/"
  return (catalog.KERAS if any(key.startswith(tracked) for key in keys)
          else catalog.TF_KERAS)


def object_count(keys: Iterable[str], owner: str) -> int:
  """How many variables the optimizer at `owner` keeps (its count first)."""
  prefix = f"{owner}/_variables/"
  return 1 + max((int(key[len(prefix):].split("/")[0]) for key in keys
                  if key.startswith(prefix)), default=1)


def read_object(path: str, keys: Iterable[str], owner: str,
                transform: Any, model: Any
                ) -> tuple[dict[str, np.ndarray], Any]:
  """`read` of a TF2 object-based checkpoint holding a Keras 3 optimizer
  (`tf.train.Checkpoint(optimizer=...)` on the TensorFlow backend), which
  restores into a Keras 3 optimizer built for `model` (it tracks the
  model's trainable variables too), or a tf_keras 2.11+ one, restored into
  the native class built for the tf_keras `model`, whose variables are
  loaded from their object paths."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  _require(model, path)
  keys = list(keys)
  variables = list(model.trainable_variables)
  optimizer, declaration = _optimizer_like(
      transform, variables, object_count(keys, owner), path,
      _generation_of(model))
  tf.train.Checkpoint(**{owner: optimizer}).read(path).expect_partial()
  names = _variable_keys(model, variables, keys, path)
  if _generation_of(model) == catalog.TF_KERAS:
    reader = tf.train.load_checkpoint(path)
    for variable, name in zip(variables, names):
      variable.assign(reader.get_tensor(name + VALUE))
  return _port_state(optimizer, declaration, variables, transform, names)


def write_object(path: str, params: Mapping[str, Any], state: Any,
                 transform: Any, like: str, tensors: dict[str, Any],
                 owner: str, model: Any) -> dict[str, Any]:
  """`like`'s tensors with the optimizer's and the model's variables
  holding `params` and `state` (`write` of a checkpoint `read_object`
  reads)."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  _require(model, like)
  variables = list(model.trainable_variables)
  optimizer, declaration = _optimizer_like(
      transform, variables, object_count(tensors, owner), like,
      _generation_of(model))
  checkpoint = tf.train.Checkpoint(**{owner: optimizer})
  checkpoint.read(like).expect_partial()
  names = _variable_keys(model, variables, tensors, like)
  _take(optimizer, declaration, variables, params, state, names)
  with tempfile.TemporaryDirectory() as scratch:
    written = _bundle.read_bundle(checkpoint.write(
        os.path.join(scratch, "checkpoint")))
  for key, value in written.items():
    if key in tensors and key != _bundle.OBJECT_GRAPH:
      tensors[key] = value
  if _generation_of(model) == catalog.TF_KERAS:
    for variable, name in zip(variables, names):
      tensors[name + VALUE] = np.asarray(variable.numpy())
  return tensors


def _require(model: Any, path: str) -> None:
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  if not tf.executing_eagerly():
    raise RuntimeError(
        f"{path!r} keeps its optimizer's variables by position, and is read "
        "and written through its Keras model, which runs eagerly: eager "
        "execution is off here (a TF1 program, or inside a tf.Graph). "
        "Convert it in an eager program (python -m tf_bridge.checkpoints "
        "convert ... --model MODULE:FUNCTION).")
  if model is None:
    raise ValueError(
        f"{path!r} holds a Keras 3 optimizer, which keeps its variables by "
        "position: pass the model it was saved from as model=.")


VALUE = "/.ATTRIBUTES/VARIABLE_VALUE"


def _generation_of(model: Any) -> str:
  """tf_keras's 2.11+ generation for a tf_keras model, else Keras 3's."""
  tf_keras = sys.modules.get("tf_keras")
  if tf_keras is not None and isinstance(model, tf_keras.Model):
    return catalog.TF_KERAS
  return catalog.KERAS


def _variable_keys(model: Any, variables: list[Any],
                   keys: Iterable[str] | None = None, path: str = ""
                   ) -> list[str]:
  """The params' keys of `variables`: a Keras 3 model's `path`s; a
  tf_keras model's names (`dense/kernel`) in a Keras file, or with the
  `keys` of a TF2 checkpoint, each variable's object path in it
  (TensorFlow's breadth-first paths from the model, under the file's own
  prefix for it: `model/` of `tf.train.Checkpoint(model=...)`, none for
  `save_weights`)."""
  if _generation_of(model) != catalog.TF_KERAS:
    return [v.path for v in variables]
  if keys is None:
    return [v.name.rpartition(":")[0] or v.name for v in variables]
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  stored = {key[:-len(VALUE)] for key in keys if key.endswith(VALUE)}
  paths: dict[int, list[str]] = {}
  view = tf.train.TrackableView(model)
  queue, seen = [(model, "")], {id(model)}
  while queue:
    parent, prefix = queue.pop(0)
    for name, child in view.children(parent).items():
      if isinstance(child, tf.Variable):
        paths.setdefault(id(child), []).append(prefix + name)
      elif id(child) not in seen:
        seen.add(id(child))
        queue.append((child, f"{prefix}{name}/"))
  candidates = [paths.get(id(v), []) for v in variables]
  roots = {key[:-len(found)] for found in candidates[0] for key in stored
           if key.endswith(found)} if candidates and candidates[0] else set()
  for root in sorted(roots, key=len):
    names = [next((root + found for found in options
                   if root + found in stored), None) for options in candidates]
    if None not in names:
      return names
  raise ValueError(
      f"{path!r} holds none of the tf_keras model's variables where "
      "TensorFlow would save them (by object path, as "
      "`tf.train.Checkpoint(model=model)` or `model.save_weights` does): "
      "was it saved from another model?")


def _port_state(optimizer: Any, declaration: catalog.Declaration,
                variables: list[Any], transform: Any,
                names: list[str] | None = None
                ) -> tuple[dict[str, np.ndarray], Any]:
  """The params by key (`names`; by default the variables' paths) and the
  port's state, from a Keras 3 or tf_keras 2.11+ optimizer."""
  names = names or [v.path for v in variables]
  by_index = _state.state_of(optimizer, variables, declaration)
  params = {name: np.asarray(v.numpy()) for name, v in zip(names, variables)}
  state = transform.init(params)
  position = {name: i for i, name in enumerate(names)}
  flat = {_address(p, position): leaf for p, leaf
          in jax.tree_util.tree_flatten_with_path(by_index)[0]}
  leaves = [jnp.asarray(flat[_address(p, position)], jnp.asarray(leaf).dtype)
            for p, leaf in jax.tree_util.tree_flatten_with_path(state)[0]]
  return params, jax.tree.unflatten(jax.tree.structure(state), leaves)


def write(path: str, params: Mapping[str, Any], state: Any, transform: Any,
          like: str, model: Any) -> None:
  """Writes `params` and `state` as a Keras 3 file laid out as `like` (a
  `.weights.h5` file; a `.keras` one gives its weights): `model` is loaded
  from `like`, takes `params`, and is saved with the optimizer's variables
  holding `state`, under a temporary name renamed into place. `model` keeps
  `params` afterwards."""
  import h5py  # pylint: disable=import-outside-toplevel
  _require(model, like)
  if not path.endswith(".weights.h5"):
    raise ValueError(f"Keras 3 weights are written to a `.weights.h5` file, "
                     f"not {path!r}.")
  stored = _optimizer_values(like)
  variables = list(model.trainable_variables)
  names = _variable_keys(model, variables)
  _fitting(variables, params, names)  # Refused before the model loads.
  model.load_weights(like)
  optimizer, declaration = _optimizer_like(transform, variables, len(stored),
                                           like, _generation_of(model))
  _assign(optimizer, stored, like)  # What the state leaves out: its rate.
  _take(optimizer, declaration, variables, params, state, names)
  directory = os.path.dirname(os.path.abspath(path))
  handle, temporary = tempfile.mkstemp(suffix=".weights.h5", dir=directory)
  os.close(handle)
  try:
    model.save_weights(temporary, overwrite=True)
    with h5py.File(temporary, "a") as file:
      if "optimizer" in file:
        del file["optimizer"]
      group = file.create_group("optimizer").create_group("vars")
      for index, variable in enumerate(optimizer.variables):
        group.create_dataset(str(index), data=np.asarray(variable.numpy()))
    os.replace(temporary, path)
  finally:
    if os.path.exists(temporary):
      os.remove(temporary)


def _take(optimizer: Any, declaration: catalog.Declaration,
          variables: list[Any], params: Mapping[str, Any], state: Any,
          names: list[str] | None = None) -> None:
  """The model's variables take `params` (by key: `names`, by default the
  variables' paths), the optimizer's `state`."""
  paths = names or [v.path for v in variables]
  for variable, value in zip(variables, _fitting(variables, params, paths)):
    variable.assign(value)
  by_index = _state.port_of(optimizer, declaration).init(
      [np.asarray(v.numpy()) for v in variables])
  position = {p: i for i, p in enumerate(paths)}
  flat = {_address(p, position): leaf for p, leaf
          in jax.tree_util.tree_flatten_with_path(state)[0]}
  leaves = [flat[_address(p, position)] for p, _
            in jax.tree_util.tree_flatten_with_path(by_index)[0]]
  _state.assign_state(jax.tree.unflatten(jax.tree.structure(by_index),
                                         leaves), optimizer, variables,
                      declaration)


def _fitting(variables: list[Any], params: Mapping[str, Any],
             names: list[str] | None = None) -> list[np.ndarray]:
  """`params` in the variables' order and dtypes (by key: `names`, by
  default the variables' paths), refused by name unless they are the
  variables' and each has its variable's shape."""
  names = names or [v.path for v in variables]
  _keys.same_names(names, params, "the model (its trainable variables)")
  return [_keys.fitted(params[name], v, f"params[{name!r}]",
                       "the model's variable has shape")
          for name, v in zip(names, variables)]


def _assign(optimizer: Any, stored: list[np.ndarray], path: str) -> None:
  for variable, value in zip(optimizer.variables, stored):
    if tuple(variable.shape) != value.shape:
      raise ValueError(
          f"{path!r}: optimizer variable "
          f"{getattr(variable, 'path', variable.name)} has shape "
          f"{tuple(variable.shape)} for this model, and the file "
          f"{value.shape}: was it saved from another model?")
    variable.assign(value)


def _address(leaf_path: tuple[Any, ...], position: dict[str, int]
             ) -> tuple[Any, ...]:
  """A leaf's path with a variable's path replaced by its index."""
  address = []
  for entry in leaf_path:
    if isinstance(entry, jax.tree_util.DictKey):
      address.append(position[entry.key])
    elif isinstance(entry, jax.tree_util.SequenceKey):
      address.append(entry.idx)
    else:
      address.append(jax.tree_util.keystr((entry,)))
  return tuple(address)


def _optimizer_values(path: str) -> list[np.ndarray]:
  import h5py  # pylint: disable=import-outside-toplevel
  with _weights_h5(path) as source, h5py.File(source, "r") as file:
    if "optimizer" not in file or "vars" not in file["optimizer"]:
      raise ValueError(
          f"{path!r} holds no optimizer variables: it was saved from a model "
          "without a built optimizer.")
    stored = file["optimizer"]["vars"]
    return [np.asarray(stored[str(i)][()]) for i in range(len(stored))]


@contextlib.contextmanager
def _weights_h5(path: str) -> Iterator[Any]:
  if path.endswith(".keras"):
    with zipfile.ZipFile(path) as archive:
      yield io.BytesIO(archive.read("model.weights.h5"))
  else:
    yield path


def _optimizer_like(transform: Any, variables: list[Any], count: int,
                    path: str, generation: str = catalog.KERAS
                    ) -> tuple[Any, catalog.Declaration]:
  """A Keras 3 optimizer keeping the transform's slots, built for
  `variables` with `count` variables: the native class, or the bridged one
  where Keras has none on TensorFlow (the classics, ScheduleFreeAdamW,
  TF1's and TF Addons' classes on Keras 3), whose variables are laid out
  as native's; with `generation` TF_KERAS, tf_keras's 2.11+ native class."""
  probe = {"v": jnp.zeros(1)}
  wanted = transform.init(probe)
  expected = _keys.Expected.of(transform, probe)
  for declaration in catalog.CATALOG:
    if declaration.generation == catalog.LEGACY or (
        (declaration.generation == catalog.TF_KERAS)
        != (generation == catalog.TF_KERAS)):
      continue
    for arguments in _flag_combinations(declaration):
      port = declaration.make_port(**arguments)
      if (type(getattr(port.init(probe), "slots", None))
          is not type(getattr(wanted, "slots", None))
          or _keys.Expected.of(port, probe) != expected):
        continue
      if declaration.generation == catalog.TF_KERAS or (
          declaration.generation == catalog.KERAS and declaration.has_native
          and declaration.native_backend == "tensorflow"):
        optimizer = declaration.make_native(**arguments)
      else:
        optimizer = getattr(importlib.import_module(declaration.bridge_path),
                            declaration.class_name)(**arguments)
      optimizer.build(variables)
      if len(optimizer.variables) == count:
        return optimizer, declaration
      raise ValueError(
          f"{path!r} holds {count} optimizer variables, and "
          f"{type(optimizer).__module__.split('.')[0]}'s "
          f"{declaration.class_name} keeps {len(optimizer.variables)} for "
          f"this model's {len(variables)} trainable variables: was it saved "
          "from another model or optimizer?")
  raise ValueError(
      "The transform is not the port of a Keras 3 or tf_keras optimizer "
      "(jaxopt_port.adam(...), jaxopt_port.momentum_sgd(...), ...), which "
      "Keras 3 files are written by.")


def _flag_combinations(declaration: catalog.Declaration
                       ) -> Iterator[dict[str, Any]]:
  """The declaration's required arguments with each combination of the
  flags that add slots (`every_slot_arguments`), none first."""
  flags = declaration.every_slot_arguments
  for names in itertools.chain.from_iterable(
      itertools.combinations(flags, n) for n in range(len(flags) + 1)):
    yield {**declaration.required, **{name: flags[name] for name in names}}


def native_like(declaration: catalog.Declaration, variables: list[Any],
                count: int, path: str, make: Any = None) -> Any:
  """`declaration`'s native class (or the class `make` makes) built for
  `variables`, with the flags that make it keep `count` variables."""
  kept = []
  for arguments in _flag_combinations(declaration):
    optimizer = (make or declaration.make_native)(**arguments)
    optimizer.build(variables)
    if len(optimizer.variables) == count:
      return optimizer
    kept.append(len(optimizer.variables))
  raise ValueError(
      f"{path!r} holds {count} optimizer variables, and "
      f"{declaration.native_path} keeps {' or '.join(map(str, kept))} for "
      f"this model's {len(variables)} trainable variables: was it saved "
      "from another model or optimizer?")
