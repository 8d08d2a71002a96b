"""Tree utilities the optimizer families share."""

from __future__ import annotations

from typing import Any, Callable

import jax
import optax


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


def _masked(value: Any) -> bool:
  return isinstance(value, optax.MaskedNode)


def map_param_copies(initable: Any, state: Any, companion: Any,
                     other: Any) -> Any:
  """`state` with each leaf that mirrors a parameter replaced by that
  parameter's leaf of `companion` (a tree of the params' structure) and
  every other leaf by `other` (`optax.tree_map_params`). The parameters
  `optax.masked` or `optax.multi_transform` left out of a copy (their
  `MaskedNode`) stay out, so the result's leaves align with `state`'s.

  optax calls `init` on a placeholder to find the copies; here that call is
  traced, so its arrays (an `iterations` zero) are abstract: nothing is
  computed, and a program that only traces JAX (the bridge) does not start
  JAX's runtime for it."""
  result = []

  def find_copies():
    result.append(optax.tree_map_params(
        initable, lambda value, leaf: value if _masked(value) else leaf,
        state, companion,
        transform_non_params=lambda value: jax.tree.map(lambda _: other,
                                                        value),
        is_leaf=_masked))

  jax.make_jaxpr(find_copies)()
  return result[0]
