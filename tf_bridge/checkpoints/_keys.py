"""Where a TF checkpoint keeps each part of an optimizer's state.

A `Keys` maps the port's state onto a file's keys: the trained variables,
each per-variable slot (`slots.<slot>[<variable>]`), the optimizer's shared
scalars (`slots.<name>`: TF1 Adam's `beta1_power`, legacy Nadam's
`momentum_cache`) and the step count (`iterations`).

- TF2 object-based files (`tf.train.Checkpoint`, `CheckpointManager`,
  tf_keras `save_weights` and `ModelCheckpoint`) name a slot
  `<variable>/.OPTIMIZER_SLOT/<optimizer>/<slot>` with the slot's own name
  (OptimizerV2's `get_slot` names, TF1's `get_slot_names`), the optimizer's
  variables `<optimizer>/<name>` (`iter`, `beta1_power`), every value
  followed by `/.ATTRIBUTES/VARIABLE_VALUE`.
- TF1 `Saver` files name a slot `<variable>/<Name>`, `<variable>/<Name>_1`,
  ... in the order the optimizer creates its slots (`<Name>` the optimizer's
  `name`, `Adam` by default), its shared scalars by their own names and the
  step `global_step`.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import re
from typing import Any, Mapping, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from tf_bridge import _layout, catalog

TF1 = "tf1"
TF2 = "tf2"
_VALUE = "/.ATTRIBUTES/VARIABLE_VALUE"
_SLOT = "/.OPTIMIZER_SLOT/"
_NUMBERED = re.compile(r"^(.*?)(?:_(\d+))?$")
# The generations whose optimizers keep OptimizerV2's or TF1's named slots.
_NAMED_SLOT_GENERATIONS = (catalog.LEGACY, catalog.TF1, catalog.ADDONS)
# The variable list a state's slots are told from.
PROBE = {"v": jax.ShapeDtypeStruct((1,), np.float32)}


@dataclasses.dataclass(frozen=True)
class Expected:
  """What a transform's state holds: per-variable slots and shared scalars,
  by name; a TF Addons wrapper's (Lookahead, MovingAverage, SWA) its own
  per-variable fields (`slow`, `average`) as slots, and its inner
  optimizer's state as `inner`."""
  slots: tuple[str, ...]
  scalars: tuple[str, ...]
  other_fields: tuple[str, ...]
  inner: "Expected | None" = None

  @classmethod
  def of(cls, transform: Any, params: Mapping[str, Any]) -> "Expected":
    """What `transform`'s state over `params` (arrays or specs) holds. A
    slot its step leaves unread (SGD's momentum at 0, which the port keeps
    at zeros) is not in it: native keeps no such variable, and no file
    holds it."""
    specs = {name: _layout.spec_of(value) for name, value in params.items()}
    with _layout.precision(any(spec.dtype == np.float64
                               for spec in specs.values())):
      shapes = jax.eval_shape(transform.init, specs)
      unread = _layout.unread_leaves(transform, specs, shapes)
    flat = jax.tree_util.tree_flatten_with_path(shapes)[0]
    return cls._of([(path, not (skipped and _mirrors(path, leaf, specs)))
                    for (path, leaf), skipped in zip(flat, unread)])

  @classmethod
  def _of(cls, leaves: Sequence[tuple[tuple[Any, ...], bool]]
          ) -> "Expected":
    """From the state's leaves: each one's tree path, and whether a file
    holds it."""
    slots, scalars, other, inner = [], [], [], []
    for path, held in leaves:
      field = path[0].name
      if field == "iterations":
        continue
      if field == "inner_state":
        inner.append((path[1:], held))
      elif not held:
        continue
      elif field != "slots":
        if len(path) == 2 and isinstance(path[1], jax.tree_util.DictKey):
          if field not in slots:
            slots.append(field)  # A wrapper's per-variable field.
        else:
          other.append(field)
      elif len(path) == 2:
        scalars.append(path[1].name)
      elif path[1].name not in slots:
        slots.append(path[1].name)
    return cls(tuple(slots), tuple(scalars), tuple(dict.fromkeys(other)),
               cls._of(inner) if inner else None)


def _mirrors(path: tuple[Any, ...], leaf: Any,
             specs: Mapping[str, jax.ShapeDtypeStruct]) -> bool:
  """Whether a state leaf is a slot of a variable, in its shape (not
  Adafactor's placeholder of a vector's factored moment, which native
  keeps)."""
  entry = path[-1]
  return (isinstance(entry, jax.tree_util.DictKey) and entry.key in specs
          and leaf.shape == specs[entry.key].shape)


@dataclasses.dataclass
class Keys:
  dialect: str
  optimizer: str | None  # TF2: its object path; TF1: its `name`.
  params: dict[str, str]  # variable -> key
  slots: dict[str, dict[str, str]]  # slot -> variable -> key
  # The optimizer's own variables: shared scalars, and TF2's hyperparameter
  # variables (`learning_rate`, `beta_1`), which the transform does not
  # keep in its state.
  scalars: dict[str, str]
  counter: str | None  # key of the step count
  # A TF Addons wrapper's inner optimizer (its slots and variables), which
  # shares the wrapper's count.
  inner: "Keys | None" = None


def reads_the_count(transform: Any) -> bool:
  """Whether the transform's step depends on its `iterations`: one step
  from the same state at two counts, compared."""
  params = {"v": jnp.linspace(-1.0, 1.0, 3)}
  grads = {"v": jnp.array([0.3, -0.7, 0.2])}
  state = transform.init(params)
  steps = [transform.update(grads, state._replace(
      iterations=jnp.asarray(count, jnp.asarray(state.iterations).dtype)),
                            params)[0]["v"] for count in (0, 7)]
  return not np.array_equal(*steps)


def dialect_of(tensors: Mapping[str, Any]) -> str:
  return TF2 if "_CHECKPOINTABLE_OBJECT_GRAPH" in tensors else TF1


def _is_float(value: np.ndarray) -> bool:
  return np.issubdtype(value.dtype, np.inexact)


def tf2_keys(tensors: Mapping[str, np.ndarray], path: str,
             optimizer: str | None = None) -> Keys:
  """The keys of a TF2 object-based checkpoint, read from its key names
  alone: of its one optimizer (or TF Addons wrapper, with the optimizer it
  wraps saved under it), or of the one saved at `optimizer` (its object
  path) in a file of several (a GAN's), whose params are then the
  variables it keeps slots for."""
  values, by_optimizer, owners = _tf2_optimizers(tensors)
  outermost = _outermost(owners)
  wrapped = sorted(owners - set(outermost))
  if optimizer is not None:
    if optimizer not in outermost:
      raise ValueError(
          f"{path!r} holds no optimizer at {optimizer!r}; it holds "
          f"{', '.join(outermost) or 'none'}.")
    wrapped = [w for w in wrapped if w.startswith(optimizer + "/")]
  elif len(outermost) > 1 or len(wrapped) > 1:
    raise ValueError(
        f"{path!r} holds the state of {len(owners)} optimizers "
        f"({', '.join(sorted(owners))}): name the one to read with "
        f"optimizer= (one of {', '.join(outermost)}).")
  if not owners:
    raise ValueError(
        f"{path!r} holds no optimizer state (no slot under "
        "`.OPTIMIZER_SLOT` and no `iter`): it was saved without its "
        "optimizer, or before the optimizer's first step.")
  owner = optimizer or outermost[0]
  keys = _owner_keys(tensors, values, by_optimizer, owner, path)
  if len(outermost) > 1:  # Its variables: those it keeps slots for.
    mine = {variable for owner_path, per_owner in by_optimizer.items()
            if owner_path == owner or owner_path.startswith(owner + "/")
            for per_variable in per_owner.values() for variable in per_variable}
    others = tuple(o + "/" for o in outermost if o != owner)
    keys.params = {name: key for name, key in keys.params.items()
                   if name in mine and not name.startswith(others)}
  if wrapped:
    inner = _owner_keys(tensors, values, by_optimizer, wrapped[0], path)
    keys.inner = dataclasses.replace(inner, params=keys.params,
                                     counter=keys.counter)
  return keys


def tf2_optimizers(tensors: Mapping[str, np.ndarray]) -> list[str]:
  """The object paths of the optimizers a TF2 checkpoint holds (a TF Addons
  wrapper's, not the optimizer it wraps)."""
  return _outermost(_tf2_optimizers(tensors)[2])


def _outermost(owners: set[str]) -> list[str]:
  """The optimizers' paths not saved under another's (a wrapper's inner
  optimizer is)."""
  return sorted(inner for inner in owners if not any(
      inner.startswith(outer + "/") for outer in owners))


def _tf2_optimizers(tensors: Mapping[str, np.ndarray]
                    ) -> tuple[dict[str, str], dict[str, Any], set[str]]:
  """A TF2 checkpoint's values by name (without
  `/.ATTRIBUTES/VARIABLE_VALUE`), slots by optimizer, slot and variable,
  and the optimizers' object paths (those with slots or an `iter`)."""
  values = {key[:-len(_VALUE)]: key for key in tensors if key.endswith(_VALUE)}
  by_optimizer: dict[str, dict[str, dict[str, str]]] = {}
  for name, key in values.items():
    if _SLOT in name:
      variable, rest = name.split(_SLOT, 1)
      owner, slot = rest.rsplit("/", 1) if "/" in rest else ("", rest)
      by_optimizer.setdefault(owner, {}).setdefault(slot, {})[variable] = key
  owners = set(by_optimizer) | {name.rsplit("/", 1)[0] for name in values
                                if name.endswith("/iter")}
  return values, by_optimizer, owners


def _owner_keys(tensors: Mapping[str, np.ndarray], values: dict[str, str],
                by_optimizer: dict[str, dict[str, dict[str, str]]],
                owner: str, path: str) -> Keys:
  """The keys of the optimizer saved at `owner` in a TF2 checkpoint (its
  values by name without `/.ATTRIBUTES/VARIABLE_VALUE`, its slots by
  optimizer)."""
  slots = by_optimizer.get(owner, {})
  slot_keys = {key for per_owner in by_optimizer.values()
               for per_variable in per_owner.values()
               for key in per_variable.values()}
  own = {name[len(owner) + 1:]: key for name, key in values.items()
         if name.startswith(owner + "/") and key not in slot_keys
         and "/" not in name[len(owner) + 1:]}
  params = {name: key for name, key in values.items()
            if key not in slot_keys and not name.startswith(owner + "/")
            and name != "save_counter" and _is_float(tensors[key])}
  # A slot OptimizerV2 cannot keep as a slot (an integer one, AdagradDecay's
  # `decay_count`; a per-variable scalar, NovoGrad's `v`) is the bridged
  # optimizer's weight `<variable name>_<slot>`, the name made unique with
  # `#<n>` in the order of the optimizer's variables, which no file keeps.
  names = _variable_names(tensors)
  for variable, key in params.items():
    prefix = _weight_prefix(names[key])
    for name in [n for n in own if n.startswith(prefix)]:
      slots.setdefault(name[len(prefix):], {})[variable] = own.pop(name)
  shared = [n for n in own if "#" in n]
  if shared:
    raise ValueError(
        f"{path!r} holds per-variable weights of variables that share a "
        f"name ({', '.join(sorted(shared))}): which variable each belongs "
        "to is not in the file. Give the variables distinct names.")
  counter = own.pop("iter", None)
  if counter is None and "global_step" in values:
    counter = values["global_step"]  # A TF1 optimizer's step.
  return Keys(TF2, owner, params, slots, own, counter)


def _weight_prefix(full_name: str) -> str:
  """How OptimizerV2 bridged classes begin the name of a variable's
  non-slot weight (`dense_kernel_0_`)."""
  return (full_name + ":0").replace(":", "_").replace("/", "_") + "_"


def _variable_names(tensors: Mapping[str, Any]) -> dict[str, str]:
  """The variables' own names (`dense/kernel:0`) by checkpoint key, from
  the object graph."""
  from tensorflow.core.protobuf import trackable_object_graph_pb2  # pylint: disable=import-outside-toplevel
  graph = trackable_object_graph_pb2.TrackableObjectGraph()
  graph.ParseFromString(np.asarray(tensors["_CHECKPOINTABLE_OBJECT_GRAPH"]
                                   ).item())
  return {attribute.checkpoint_key: attribute.full_name
          for node in graph.nodes for attribute in node.attributes}


def tf1_keys(tensors: Mapping[str, np.ndarray], expected: Expected,
             path: str) -> Keys:
  """The keys of a TF1 `Saver` checkpoint for a state with the `expected`
  slots (their numbered names depend on the optimizer that wrote them)."""
  children = tf1_children(tensors)
  if self_named(expected.slots) is not None:
    return _self_named_keys(tensors, children, expected, path)
  known = tf1_default_names()
  order = _tf1_slot_order(expected) if expected.slots else ()
  writer = _tf1_writer_name(children, known, order, expected, path)
  slots: dict[str, dict[str, str]] = {}
  for key, parent in children.get(writer, {}).items():
    number = _NUMBERED.match(key.rpartition("/")[2]).group(2)
    position = int(number) if number else 0
    if position >= len(order):
      raise ValueError(
          f"{path!r}: {key!r} is slot {position + 1} of {parent!r}, and the "
          f"transform's state has {len(order)} per variable "
          f"({', '.join(order)}): its slots point to "
          f"{tf1_suggestion(writer, known)}.")
    slots.setdefault(order[position], {})[parent] = key
  return _tf1_keys_with(tensors, writer, slots, expected)


def _tf1_keys_with(tensors: Mapping[str, np.ndarray], writer: str | None,
                   slots: dict[str, dict[str, str]], expected: Expected
                   ) -> Keys:
  """A TF1 file's keys, given its slots': the shared scalars, the
  `global_step` and every other float as a variable."""
  slot_keys = {k for per in slots.values() for k in per.values()}
  scalars = {name: name for name in expected.scalars if name in tensors}
  counter = "global_step" if "global_step" in tensors else None
  taken = slot_keys | set(scalars.values()) | {counter}
  params = {key: key for key, value in tensors.items()
            if key not in taken and _is_float(value)}
  return Keys(TF1, writer, params, slots, scalars, counter)


def self_named(slots: Sequence[str]) -> catalog.Declaration | None:
  """The TF1 optimizer outside `tf.compat.v1.train` that keeps exactly
  these slots and names its slot variables by the slots' own names (BERT's
  `AdamWeightDecayOptimizer`: `<variable>/adam_m`), not by its own name
  (`<variable>/Adam_1`); None if none does."""
  if not slots:
    return None
  return next((d for d in catalog.CATALOG
               if d.generation == catalog.TF1 and not d.has_native
               and set(_probe(d.name).slots) == set(slots)),
              None)


def _self_named_keys(tensors: Mapping[str, np.ndarray],
                     children: dict[str, dict[str, str]], expected: Expected,
                     path: str) -> Keys:
  missing = [slot for slot in expected.slots if slot not in children]
  if missing:
    raise ValueError(
        f"{path!r} holds no `<variable>/{missing[0]}` variables: the "
        f"transform's state has {_describe(expected)}, kept as "
        f"`<variable>/<slot>` (BERT's files); found "
        f"{', '.join(sorted(children)) or 'no slot at all'}.")
  slots = {slot: {parent: key for key, parent in children[slot].items()}
           for slot in expected.slots}
  return _tf1_keys_with(tensors, None, slots, expected)


def tf1_fresh_keys(params: Mapping[str, Any], expected: Expected) -> Keys:
  """The keys of a TF1 Saver file of these variables, written by the TF1
  class that keeps the `expected` slots, under its default name (BERT's
  slots under their own names)."""
  if self_named(expected.slots) is not None:
    return Keys(TF1, None, {v: v for v in params},
                {slot: {v: f"{v}/{slot}" for v in params}
                 for slot in expected.slots}, {}, "global_step")
  order = _tf1_slot_order(expected)
  name = next((name for name, d in tf1_default_names().items()
               if order and _fits(d, order)), None)
  slots = {slot: {variable: f"{variable}/{name}" + (f"_{i}" if i else "")
                  for variable in params}
           for i, slot in enumerate(order)}
  return Keys(TF1, name, {v: v for v in params}, slots,
              {s: s for s in expected.scalars}, "global_step")


def tf1_children(tensors: Mapping[str, np.ndarray]
                 ) -> dict[str, dict[str, str]]:
  """Keys `<variable>/<Name>[_<n>]` of a TF1 file, by `<Name>`: slot key ->
  its variable."""
  children: dict[str, dict[str, str]] = {}
  for key in tensors:
    parent, _, child = key.rpartition("/")
    if parent in tensors and _is_float(tensors[parent]):
      base = _NUMBERED.match(child).group(1)
      children.setdefault(base, {})[key] = parent
  return children


def tf1_shared_names() -> set[str]:
  """The shared scalars TF1 classes keep (`beta1_power`)."""
  return {name for d in _tf1_declarations()
          for name in _probe(d.name).scalars}


def unnumbered(name: str) -> str:
  """`beta1_power` of `beta1_power_1` (TF1 numbers repeated names)."""
  return _NUMBERED.match(name).group(1)


def tf1_default_names() -> dict[str, catalog.Declaration]:
  """The TF1 classes by the `name` they give their slots by default."""
  return {_tf1_default_name(d): d for d in _tf1_declarations()}


def _tf1_writer_name(children: dict[str, dict[str, str]],
                     known: dict[str, catalog.Declaration],
                     order: tuple[str, ...], expected: Expected,
                     path: str) -> str | None:
  """The `name` of the TF1 optimizer whose slots the file holds: the
  default name of the TF1 class the state's slots are (`Adam`), or one
  name no TF1 class has (an optimizer made with `name="..."`)."""
  own = [name for name, d in known.items() if order and _fits(d, order)]
  others = [name for name in children if name in known and name not in own]
  unknown = [name for name in children if name not in known]
  if others:
    found = others[0]
    raise ValueError(
        f"{path!r} holds slots named {found!r} (e.g. "
        f"{sorted(children[found])[0]!r}): they point to "
        f"{tf1_suggestion(found, known)}, and the transform's state has "
        f"{_describe(expected)}.")
  if not order:
    return None
  present = [name for name in own if name in children]
  if present:
    return present[0]
  if len(unknown) == 1:
    return unknown[0]
  expected_name = own[0] if own else "<Name>"
  raise ValueError(
      f"{path!r} holds no slot of a TF1 optimizer with "
      f"{_describe(expected)} (expected `<variable>/{expected_name}` and "
      "numbered ones; found "
      f"{', '.join(sorted(unknown)) or 'no slot at all'}).")


def _describe(expected: Expected) -> str:
  if not expected.slots and not expected.scalars:
    return "no slots"
  parts = [f"slots {', '.join(expected.slots)}"] if expected.slots else []
  if expected.scalars:
    parts.append(f"shared {', '.join(expected.scalars)}")
  return " and ".join(parts)


def tf1_suggestion(name: str | None, known: dict[str, catalog.Declaration]
                    ) -> str:
  declaration = known.get(name)
  if declaration is None:
    return f"an optimizer named {name!r}"
  return f"{declaration.native_path} (read it with {declaration.port_path})"


def _tf1_declarations() -> tuple[catalog.Declaration, ...]:
  """The TF1 classes of `tf.compat.v1.train` (not BERT's)."""
  return tuple(d for d in catalog.CATALOG
               if d.generation == catalog.TF1 and d.has_native)


def _tf1_default_name(declaration: catalog.Declaration) -> str:
  return inspect.signature(declaration.native_class()).parameters[
      "name"].default


def _tf1_slot_order_of(declaration: catalog.Declaration) -> tuple[str, ...]:
  return tf1_slot_order(declaration.name)


@functools.cache
def tf1_slot_order(name: str) -> tuple[str, ...]:
  """The slots the native TF1 class of the catalog entry `name` creates for
  a variable with `every_slot_arguments`, in creation order (the order of
  their numbered names: `w/Adam`, `w/Adam_1`)."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  declaration = catalog.lookup(name)
  with tf.Graph().as_default():
    variable = tf.compat.v1.get_variable(
        "v", shape=[1], initializer=tf.compat.v1.zeros_initializer())
    optimizer = declaration.make_native(**declaration.every_slot_arguments)
    optimizer.apply_gradients([(tf.ones([1]), variable)])
    numbered = {}
    for slot in optimizer.get_slot_names():
      child = optimizer.get_slot(variable, slot).op.name.rpartition("/")[2]
      number = _NUMBERED.match(child).group(2)
      numbered[int(number) if number else 0] = slot
  return tuple(numbered[k] for k in sorted(numbered))


def _tf1_slot_order(expected: Expected) -> tuple[str, ...]:
  """The state's slots in the order TF1 numbers them: the creation order of
  the TF1 class that has exactly those slots (among its optional ones)."""
  for declaration in _tf1_declarations():
    scalars = _probe(declaration.name).scalars
    if (_fits(declaration, expected.slots)
        and set(scalars) == set(expected.scalars)):
      return tuple(slot for slot in _tf1_slot_order_of(declaration)
                   if slot in expected.slots)
  raise ValueError(
      f"No TF1 optimizer keeps {_describe(expected)}: a TF1 Saver file holds "
      "the slots of a tf.compat.v1.train optimizer; read it with that "
      "optimizer's port (jaxopt_port.tf1.<name>).")


def _fits(declaration: catalog.Declaration, slots: tuple[str, ...]) -> bool:
  """Whether the TF1 class keeps these slots (with some of its flags)."""
  return (set(slots) <= set(_tf1_slot_order_of(declaration))
          and _required_slots(declaration) <= set(slots))


def _required_slots(declaration: catalog.Declaration) -> frozenset[str]:
  """The slots of the declaration's state with its default arguments."""
  return frozenset(_probe(declaration.name).slots)


def _every_slot(declaration: catalog.Declaration) -> frozenset[str]:
  return frozenset(_probe(declaration.name, True).slots)


@functools.cache
def _probe(name: str, every_slot: bool = False) -> Expected:
  """What the state of catalog entry `name`'s port holds, with its default
  arguments or those that make every slot."""
  declaration = catalog.lookup(name)
  arguments = declaration.every_slot_arguments if every_slot else {}
  return Expected.of(declaration.make_port(**arguments), PROBE)


def tf2_suggestion(file_slots: set[str]) -> str:
  """The optimizers (ports) that keep exactly these slots with some of
  their flags, those with a native class first."""
  fits = sorted(
      (not d.has_native, d.port_path) for d in catalog.CATALOG
      if d.generation in _NAMED_SLOT_GENERATIONS
      and _required_slots(d) <= file_slots <= _every_slot(d))
  if not fits:
    return "no optimizer of the catalog"
  names = [name for _, name in fits]
  return ", ".join(names[:4]) + (" ..." if len(names) > 4 else "")


def same_names(expected: Any, params: Mapping[str, Any], what: str) -> None:
  """Refuses `params` unless its names are `expected`'s, naming the
  difference."""
  missing = sorted(set(expected) - set(params))
  extra = sorted(set(params) - set(expected))
  if missing or extra:
    raise ValueError(
        f"params do not have the variables of {what}: missing "
        f"{missing or 'none'}, extra {extra or 'none'}.")


def fitted(value: Any, target: Any, what: str, where: str) -> np.ndarray:
  """`value` in `target`'s dtype (`target`: an array or a variable), refused
  unless it has `target`'s shape."""
  value = np.asarray(value)
  if value.shape != tuple(target.shape):
    raise ValueError(
        f"{what} has shape {value.shape}, and {where} {tuple(target.shape)}.")
  return value.astype(getattr(target.dtype, "as_numpy_dtype", target.dtype))
