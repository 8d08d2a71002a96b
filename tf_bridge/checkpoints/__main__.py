"""The checkpoint command: what a file holds, and a file in another format.

    python -m tf_bridge.checkpoints inspect PATH
    python -m tf_bridge.checkpoints convert SRC DST --optimizer NAME
        [--arguments JSON] --to {orbax,tf1,legacy,keras3} [--like FILE]
        [--model MODULE:FUNCTION]

`inspect` lists a TF1 or TF2 checkpoint's variables, the slots the
optimizer keeps for each, its counters and other variables, and the
optimizers its slots point to (of a Keras 3 or tf_keras 2.11+ optimizer,
which keeps its variables by position, their shapes by position).
`convert` reads SRC (a TF1 or TF2 checkpoint, or an orbax directory this
command wrote) with the port NAME (a parity-command name: `tf1.adam`,
`legacy.rmsprop`) made with the JSON arguments,
and writes DST: an orbax directory of `{"params": ..., "state": ...}` for a
JAX run, a TF1 Saver checkpoint (a TF1 optimizer's port; with `--like`, in
that file's keys; SRC's count as `global_step`, none where SRC holds none)
or a TF2 object-based one in the keys of `--like` (the program's own
checkpoint, whose object graph it restores by), or a Keras 3
`.weights.h5` laid out as `--like` for the model `--model MODULE:FUNCTION`
returns (Keras 3 files keep their variables by position; the model reads
them too; so does a TF2 checkpoint of a Keras 3 or tf_keras 2.11+
optimizer, with its Keras 3 or tf_keras model).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Sequence

import numpy as np

from tf_bridge import catalog, checkpoints
from tf_bridge.checkpoints import _bundle, _files, _keras3, _keys, _orbax


def listing(path: str, optimizer: str | None = None) -> str:
  """What `inspect` prints: of each optimizer, for a TF2 checkpoint of
  several (a GAN's)."""
  tensors = _bundle.read_bundle(path)
  lines = [f"checkpoint: {_bundle.checkpoint_prefix(path)}"]
  owner = _keras3.object_owner(tensors)
  if owner is not None:
    return "\n".join(lines + _positional_listing(tensors, owner))
  if _keys.dialect_of(tensors) == _keys.TF2:
    optimizers = _keys.tf2_optimizers(tensors)
    if optimizer is None and len(optimizers) > 1:
      return "\n".join(listing(path, name) for name in optimizers)
    keys = _keys.tf2_keys(tensors, path, optimizer)
    slots = set(keys.slots)
    lines += [f"dialect: TF2 object-based; optimizer at {keys.optimizer!r}",
              f"its slots ({', '.join(sorted(slots)) or 'none'}) point to "
              f"{_keys.tf2_suggestion(slots)}"]
    per_variable = {variable: sorted(s for s, held in keys.slots.items()
                                     if variable in held)
                    for variable in keys.params}
    counters = {"iterations": keys.counter} if keys.counter else {}
    own = keys.scalars
  else:
    children = _keys.tf1_children(tensors)
    known = _keys.tf1_default_names()
    names = sorted(children)
    lines += ["dialect: TF1 name-based (Saver)"]
    self_named = _keys.self_named(names)
    if self_named is not None:  # BERT's `<variable>/adam_m`.
      lines.append(f"slots named by themselves ({', '.join(names)}) point "
                   f"to {self_named.port_path}")
    else:
      lines += [f"slots named {name!r} point to "
                f"{_keys.tf1_suggestion(name, known)}" for name in names]
    slot_keys = {key for held in children.values() for key in held}
    per_variable = {key: sorted(k.rpartition("/")[2] for held in
                                children.values() for k, parent in
                                held.items() if parent == key)
                    for key in tensors if key not in slot_keys
                    and np.issubdtype(tensors[key].dtype, np.inexact)}
    shared = _keys.tf1_shared_names()
    own = {k: k for k in per_variable if not per_variable[k]
           and _keys.unnumbered(k) in shared}
    per_variable = {k: v for k, v in per_variable.items() if k not in own}
    counters = {"global_step": "global_step"} if "global_step" in tensors \
        else {}
  lines.append("variables:")
  for variable, held in sorted(per_variable.items()):
    value = tensors[_value_key(tensors, variable)]
    lines.append(f"  {variable} {list(value.shape)} {value.dtype}: slots "
                 f"{', '.join(held) or 'none yet'}")
  for title, entries in (("counters", counters), ("optimizer's own", own)):
    if entries:
      lines.append(f"{title}:")
      lines += [f"  {name} = {np.asarray(tensors[key]).tolist()}"
                for name, key in sorted(entries.items())]
  return "\n".join(lines)


def _positional_listing(tensors, owner):
  """`inspect`'s lines for a TF2 checkpoint of a Keras 3 or tf_keras 2.11+
  optimizer, which keeps its variables by position (the model says whose
  slot each is)."""
  prefix, value = f"{owner}/", _keras3.VALUE
  stored = sorted(key[:-len(value)] for key in tensors if key.endswith(value))
  by_position = sorted(
      (int(key[len(prefix + "_variables/"):]), key) for key in stored
      if key.startswith(prefix + "_variables/"))
  writer = ("Keras 3" if _keras3.writer_generation(tensors, owner)
            == catalog.KERAS else "tf_keras 2.11+")
  lines = [f"dialect: TF2 object-based; optimizer at {owner!r} keeps its "
           f"{_keras3.object_count(tensors, owner)} variables by position (a "
           f"{writer} optimizer: read and convert it with its model, "
           "`model=`, `--model`)", "variables:"]
  lines += [f"  {key} {list(tensors[key + value].shape)} "
            f"{tensors[key + value].dtype}" for key in stored
            if not key.startswith(prefix)
            and np.issubdtype(tensors[key + value].dtype, np.inexact)]
  lines.append("optimizer's variables, by position:")
  lines += [f"  {index}: {list(tensors[key + value].shape)} "
            f"{tensors[key + value].dtype}" for index, key in by_position]
  iterations = tensors.get(prefix + "_iterations" + value)
  if iterations is not None:
    lines += ["counters:", f"  iterations = {np.asarray(iterations).tolist()}"]
  return lines


def _model(reference: str):
  module, _, function = reference.partition(":")
  if not function:
    raise ValueError(f"--model takes MODULE:FUNCTION, not {reference!r}.")
  sys.path.insert(0, "")
  return getattr(importlib.import_module(module), function)()


def _holds_keras3(path: str) -> bool:
  """Whether `path` is a Keras 3 file or a TF checkpoint of a Keras 3
  optimizer (which `read` reads with the model)."""
  if _keras3.is_keras3(path):
    return True
  try:
    return _keras3.object_owner(_bundle.bundle_keys(path)) is not None
  except (FileNotFoundError, ValueError):
    return False


def _value_key(tensors, variable):
  suffixed = variable + "/.ATTRIBUTES/VARIABLE_VALUE"
  return suffixed if suffixed in tensors else variable


def main(argv: Sequence[str] | None = None) -> int:
  parser = argparse.ArgumentParser(
      prog="python -m tf_bridge.checkpoints",
      description="Inspect a TF1 or TF2 checkpoint, or convert it for a JAX "
      "run or a TF1 program.")
  commands = parser.add_subparsers(dest="command", required=True)
  inspect_command = commands.add_parser("inspect", help="list what a "
                                        "checkpoint holds")
  inspect_command.add_argument("path")
  convert = commands.add_parser("convert", help="write a checkpoint in "
                                "another format")
  convert.add_argument("source")
  convert.add_argument("destination")
  convert.add_argument("--optimizer", required=True,
                       help="the port of the optimizer that wrote SRC: "
                       "tf1.adam, legacy.adam, ...")
  convert.add_argument("--arguments", default="{}",
                       help="its arguments as JSON, e.g. "
                       "'{\"amsgrad\": true}'")
  convert.add_argument("--to", required=True,
                       choices=("orbax", "tf1", "legacy", "keras3"))
  convert.add_argument("--like", help="a checkpoint the destination's "
                       "program wrote: its keys and everything but the "
                       "state are kept (required with --to legacy and "
                       "keras3)")
  convert.add_argument("--model", metavar="MODULE:FUNCTION",
                       help="for Keras 3 files and TF2 checkpoints of Keras "
                       "3 or tf_keras 2.11+ optimizers: a function returning "
                       "the model they are for")
  convert.add_argument("--object", metavar="PATH",
                       help="for a TF2 checkpoint of several optimizers (a "
                       "GAN's): the object path of the one to convert, as "
                       "inspect lists it (generator_optimizer)")
  args = parser.parse_args(argv)
  try:
    if args.command == "inspect":
      print(listing(args.path))
      return 0
    transform = catalog.lookup(args.optimizer).make_port(
        **json.loads(args.arguments))
    model = _model(args.model) if args.model else None
    params, state, counted = _files.read_counted(
        args.source, transform,
        model=model if _holds_keras3(args.source) else None,
        optimizer=args.object)
    if args.to == "orbax":
      _orbax.save(args.destination, params, state, counted)
    elif args.to == "keras3" and not (args.like and model is not None):
      raise ValueError(
          "A Keras 3 file keeps its variables by position, in the order of "
          "the model's own traversal: give --like (a file of the program) "
          "and --model (a function returning its model).")
    elif args.like:
      checkpoints.write(args.destination, params, state, transform,
                        like=args.like, model=model, optimizer=args.object,
                        global_step=counted)
    elif args.to == "legacy":
      raise ValueError(
          "A TF2 object-based checkpoint is restored through its program's "
          "object graph: give --like, a checkpoint that program wrote.")
    else:
      checkpoints.write_tf1(args.destination, params, state, transform,
                            global_step=counted)
  except (KeyError, ValueError, FileNotFoundError, ImportError) as error:
    parser.exit(2, f"{parser.prog}: error: {error}\n")
  print(f"{args.source} -> {args.destination} ({args.to})")
  return 0


if __name__ == "__main__":
  sys.exit(main())
