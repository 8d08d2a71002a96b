"""Reading and writing a run's files: the functions `tf_bridge.checkpoints`
exports."""

from __future__ import annotations

from typing import Any, Mapping

import jax
import jax.numpy as jnp
import numpy as np

from tf_bridge.checkpoints import _bundle, _keras3, _keys, _orbax


def read(path: str, transform: Any, *, model: Any = None,
         optimizer: str | None = None) -> tuple[dict[str, np.ndarray], Any]:
  """The trained variables and the port's state in a checkpoint.

  Args:
    path: A TF checkpoint's prefix (`.../ckpt-3`, `model.ckpt-1000`), or the
      directory whose `checkpoint` file names the latest one; an orbax
      directory `write_orbax` wrote; a Keras 3 `.weights.h5` or `.keras`
      file.
    transform: The `jaxopt_port` transform of the optimizer that wrote it.
    model: For a Keras 3 file (`.weights.h5`, `.keras`) or a TF2
      checkpoint of a Keras 3 optimizer (`tf.train.Checkpoint(optimizer=
      ...)` on the TensorFlow backend), the model it was saved from (or one
      built alike): the file's weights are loaded into it, as
      `model.load_weights` does, and `params` are keyed by its trainable
      variables' `path`. For a tf_keras 2.11+ optimizer's file, the
      tf_keras model: in a TF2 checkpoint (`tf.train.Checkpoint`,
      `save_weights`) `params` are keyed by the variables' object paths, in
      tf_keras's `.keras` and `.weights.h5` files by their names.
    optimizer: For a TF2 checkpoint of several optimizers (a GAN's
      `tf.train.Checkpoint(generator_optimizer=..., discriminator_optimizer=
      ...)`), the object path of the one to read; `params` are then the
      variables it keeps slots for.

  Returns:
    `(params, state)`: the variables by the file's keys (numpy arrays), and
    the tree `transform.init(params)` gives, filled with the file's slots
    and counters, so that `transform.update` takes the step the writer
    would have taken next.
  """
  params, state, _ = read_counted(path, transform, model=model,
                                  optimizer=optimizer)
  return params, state


def read_counted(path: str, transform: Any, *, model: Any = None,
                 optimizer: str | None = None
                 ) -> tuple[dict[str, np.ndarray], Any, bool]:
  """`read`, and whether the file holds the run's step count (a TF1 file
  without `global_step` does not: the state's count is then 0)."""
  if optimizer is not None and (_keras3.is_keras3(path)
                                or _orbax.is_orbax(path)):
    raise ValueError(
        f"optimizer= names one optimizer of a TF2 checkpoint of several; "
        f"{path!r} holds one optimizer's state.")
  if _keras3.is_keras3(path):
    return (*_keras3.read(path, transform, model), True)
  if _orbax.is_orbax(path):
    return _orbax.restore(path, transform)
  names = _bundle.bundle_keys(path)
  owner = _keras3.object_owner(names)
  if owner is not None:  # TensorFlow restores it: no tensor read here.
    return (*_keras3.read_object(_bundle.checkpoint_prefix(path), names,
                                 owner, transform, model), True)
  tensors = _bundle.read_bundle(path)
  if model is not None:
    raise ValueError(
        "model= is for files of Keras 3 optimizers, which keep their "
        f"variables by position; {path!r} names its variables itself.")
  keys = _file_keys(tensors, transform, path, optimizer)
  params = {name: tensors[key] for name, key in keys.params.items()}
  state = transform.init(params)
  _check_slots(keys, _keys.Expected.of(transform, params), path)
  if keys.counter is None and _keys.reads_the_count(transform):
    raise ValueError(
        f"{path!r} holds no step count (TF1 keeps it only as `global_step`, "
        "which this program did not save), and this optimizer's step "
        "depends on it (AdagradDA's, a bias correction, a schedule): save "
        "the global step with the checkpoint.")
  flat, tree = jax.tree_util.tree_flatten_with_path(state)
  leaves = []
  for leaf_path, leaf in flat:
    key = _key_of(leaf_path, keys)
    leaves.append(leaf if key is None else jnp.asarray(_keys.fitted(
        tensors[key], leaf, f"{key!r} of {path!r}", "the state's leaf")))
  return params, jax.tree.unflatten(tree, leaves), keys.counter is not None


def write(path: str, params: Mapping[str, Any], state: Any, transform: Any,
          *, like: str, model: Any = None, optimizer: str | None = None,
          global_step: bool = True) -> None:
  """Writes `params` and the port's `state` as a checkpoint at `path` (a
  prefix) in the dialect and with the keys of the checkpoint `like`, which
  the writer's program restores with its own code (`Saver.restore`,
  `checkpoint.restore`, `load_weights`) and continues from.

  Everything else of `like` (hyperparameter variables, the object graph,
  other objects' variables) is copied. `like` is only read. The files are
  written under a temporary name and renamed into place: a failure leaves
  no partial checkpoint. A Keras 3 `like` (`.weights.h5`, `.keras`, or a
  TF2 checkpoint of a Keras 3 optimizer) takes the `model` it was saved
  from: it is loaded from `like` and takes `params` (a `.weights.h5` file is
  written for the first two). `optimizer`: as `read`'s, for a `like` of
  several optimizers (the others' variables and slots are copied).
  `global_step` False: the state's count is not the run's (it was read from
  a TF1 file without one), and the file holds no `global_step`, as the
  run's own Saver file would not, though a TF1 `like` has one.
  """
  if _keras3.is_keras3(like):
    _keras3.write(path, params, state, transform, like, model)
    return
  tensors = dict(_bundle.read_bundle(like))
  owner = _keras3.object_owner(tensors)
  if owner is not None:
    _bundle.write_bundle(path, _keras3.write_object(
        path, params, state, transform, _bundle.checkpoint_prefix(like),
        tensors, owner, model))
    return
  keys = _file_keys(tensors, transform, like, optimizer)
  _check_slots(keys, _keys.Expected.of(transform, params), like)
  if not global_step and keys.dialect == _keys.TF1 and keys.counter:
    del tensors[keys.counter]
    keys.counter = None
  _bundle.write_bundle(path, _filled(tensors, keys, params, state, transform,
                                     repr(like)))


def write_orbax(path: str, params: Mapping[str, Any], state: Any) -> None:
  """Saves `params` and `state` as an orbax checkpoint directory
  `{"params": ..., "state": ...}` (what a JAX run restores with
  `orbax.checkpoint.StandardCheckpointer`; `read` reads it too)."""
  _orbax.save(path, params, state)


def write_tf1(path: str, params: Mapping[str, Any], state: Any,
              transform: Any, *, global_step: bool = True) -> None:
  """Writes `params` and the state of a TF1 optimizer's port as a TF1 Saver
  checkpoint of its own: variables by their keys in `params`, slots named
  as the TF1 class names them by default (`<variable>/Adam`,
  `<variable>/Adam_1`), shared scalars by their names (`beta1_power`) and,
  unless `global_step` is False (the state's count is not the run's: it
  was read from a file without one), the count as `global_step`."""
  keys = _keys.tf1_fresh_keys(params, _keys.Expected.of(transform, params))
  tensors = {key: np.asarray(params[name]) for name, key in keys.params.items()}
  flat = jax.tree_util.tree_flatten_with_path(state)[0]
  for leaf_path, leaf in flat:
    key = _key_of(leaf_path, keys)
    if key is None:  # A slot the step leaves unread: native has none.
      continue
    if key != keys.counter:
      tensors[key] = np.asarray(leaf)
    elif global_step:
      tensors[key] = np.asarray(leaf, np.int64)  # TF1's global_step.
  _bundle.write_bundle(path, tensors)


def _filled(tensors: dict[str, np.ndarray], keys: _keys.Keys,
            params: Mapping[str, Any], state: Any, transform: Any,
            where: str) -> dict[str, np.ndarray]:
  """`tensors` with `params` and `state` in their keys."""
  _keys.same_names(keys.params, params, where)
  for name, key in keys.params.items():
    tensors[key] = _keys.fitted(params[name], tensors[key],
                                f"params[{name!r}]", f"{key!r} of {where}")
  fresh = jax.tree_util.tree_flatten_with_path(transform.init(
      {name: np.asarray(value) for name, value in params.items()}))[0]
  flat = jax.tree_util.tree_flatten_with_path(state)[0]
  for (leaf_path, leaf), (_, initial) in zip(flat, fresh):
    key = _key_of(leaf_path, keys)
    if key is not None:
      tensors[key] = _keys.fitted(leaf, tensors[key],
                                  f"The state's {_name(leaf_path)}",
                                  f"{key!r} of {where}")
    elif isinstance(leaf_path[-1], jax.tree_util.DictKey) and not (
        np.array_equal(leaf, initial)):
      raise ValueError(
          f"{where} has no slot {_name(leaf_path)} (its variable had no "
          "gradient yet when it was saved), and the state's differs from a "
          "fresh one: write into a checkpoint saved after the optimizer "
          "made that slot.")
  return tensors


def _file_keys(tensors: Mapping[str, np.ndarray], transform: Any,
               path: str, optimizer: str | None = None) -> _keys.Keys:
  if _keys.dialect_of(tensors) == _keys.TF2:
    return _keys.tf2_keys(tensors, path, optimizer)
  if optimizer is not None:
    raise ValueError(
        f"optimizer= names an optimizer of a TF2 checkpoint; {path!r} is a "
        "TF1 Saver file, whose optimizers are told apart by their slots' "
        "names.")
  return _keys.tf1_keys(tensors, _keys.Expected.of(transform, _keys.PROBE),
                        path)


def _check_slots(keys: _keys.Keys, expected: _keys.Expected,
                 path: str, inner: bool = False) -> None:
  """Refuses a file whose slots are not the state's, naming the difference
  and the optimizer the file's slots point to (and so for a wrapper's
  `inner` optimizer)."""
  where = (f"{path!r} (its wrapped optimizer, {keys.optimizer})" if inner
           else repr(path))
  if expected.other_fields:
    raise ValueError(
        f"The transform's state holds {', '.join(expected.other_fields)}, "
        f"which a TF checkpoint such as {where} does not: read it with the "
        "port of the optimizer that wrote it (jaxopt_port.legacy.<name>, "
        "jaxopt_port.tf1.<name>, jaxopt_port.addons.<name>).")
  if (expected.inner is None) != (keys.inner is None):
    holds = ("a TF Addons wrapper and the optimizer it wraps" if keys.inner
             else "one optimizer, no wrapper")
    transform = ("a wrapper's port" if expected.inner
                 else "the port of one optimizer")
    raise ValueError(
        f"{where} holds {holds}, and the transform is {transform}: read it "
        "with the port of the optimizer that wrote it "
        "(jaxopt_port.addons.lookahead(jaxopt_port.legacy.adam(...)) for "
        "TF Addons' Lookahead of tf_keras's Adam).")
  found = set(keys.slots)
  missing = [s for s in expected.slots if s not in found]
  extra = sorted(found - set(expected.slots))
  if missing or extra:
    points_to = (_keys.tf2_suggestion(found) if keys.dialect == _keys.TF2
                 else f"an optimizer named {keys.optimizer!r}")
    raise ValueError(
        f"{where} does not hold this transform's slots: missing "
        f"{', '.join(missing) or 'none'}; extra {', '.join(extra) or 'none'}."
        f" Its slots ({', '.join(sorted(found)) or 'none'}) point to "
        f"{points_to}.")
  absent = [s for s in expected.scalars if s not in keys.scalars]
  if absent:
    raise ValueError(
        f"{where} does not hold the optimizer's {', '.join(absent)}, which "
        "the transform's state keeps: was it written by another optimizer?")
  if expected.inner is not None:
    _check_slots(keys.inner, expected.inner, path, inner=True)


def _key_of(leaf_path: tuple[Any, ...], keys: _keys.Keys) -> str | None:
  """The file's key of a state leaf; None where the file has none."""
  field = leaf_path[0].name
  if field == "iterations":
    return keys.counter
  if field == "inner_state":
    return _key_of(leaf_path[1:], keys.inner)
  if field != "slots":  # A wrapper's per-variable field.
    return keys.slots.get(field, {}).get(leaf_path[1].key)
  slot = leaf_path[1].name
  if len(leaf_path) == 2:
    return keys.scalars[slot]
  return keys.slots.get(slot, {}).get(leaf_path[2].key)


def _name(leaf_path: tuple[Any, ...]) -> str:
  if leaf_path[0].name == "inner_state":
    return f"inner optimizer's {_name(leaf_path[1:])}"
  if leaf_path[0].name == "iterations":
    return "iterations"
  if isinstance(leaf_path[-1], jax.tree_util.DictKey):
    return f"{leaf_path[-2].name} of variable {leaf_path[-1].key!r}"
  return leaf_path[1].name
