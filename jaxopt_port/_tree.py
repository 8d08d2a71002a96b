"""Tree utilities the optimizer families share."""

from __future__ import annotations

from typing import Any, Callable

import jax


def path_name(path: tuple[Any, ...]) -> str:
  """A tree path as Keras names variables: `dense/kernel` for
  `{"dense": {"kernel": ...}}` (and for the key "dense/kernel", as the
  bridge passes Keras's `variable.path`)."""
  parts = []
  for entry in path:
    if isinstance(entry, jax.tree_util.DictKey):
      parts.append(str(entry.key))
    elif isinstance(entry, jax.tree_util.GetAttrKey):
      parts.append(entry.name)
    elif isinstance(entry, jax.tree_util.SequenceKey):
      parts.append(str(entry.idx))
    else:
      parts.append(str(getattr(entry, "key", entry)))
  return "/".join(parts)


def map_leaves(fn: Callable[..., tuple[Any, ...]], count: int, tree: Any,
               *rest: Any, with_path: bool = False) -> tuple[Any, ...]:
  """`fn` on every leaf of `tree` and the matching leaves of `rest`; `fn`
  returns a `count`-tuple (an update and new slot values), and the result is
  `count` trees shaped like `tree`. With `with_path`, `fn` takes the leaf's
  path first (`jax.tree_util.tree_map_with_path`)."""
  mapper = jax.tree_util.tree_map_with_path if with_path else jax.tree.map
  treedef = jax.tree.structure(tree)
  results = treedef.flatten_up_to(mapper(fn, tree, *rest))
  return tuple(treedef.unflatten([result[i] for result in results])
               for i in range(count))
