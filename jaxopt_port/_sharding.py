"""Explicitly sharded meshes: where a step must say how data is laid out.

With `jax.sharding.AxisType.Auto` axes XLA gathers and lays out data by
itself; with `Explicit` axes an array's sharding is part of its type, and an
SVD, a matrix product over a sharded axis, a concatenation of differently
sharded arrays or a mask broadcast against a sharded array needs it said.
Each helper does nothing to an array that is not explicitly sharded.
"""

from __future__ import annotations

from typing import Callable

import jax
from jax.sharding import NamedSharding, PartitionSpec


def _explicit_spec(x: jax.Array) -> PartitionSpec | None:
  """`x`'s partition spec if it names a mesh axis in the array's type (an
  explicitly sharded array), else None."""
  sharding = getattr(jax.typeof(x), "sharding", None)
  if not isinstance(sharding, NamedSharding) or all(
      axis is None for axis in sharding.spec):
    return None
  return sharding.spec


def replicated(x: jax.Array) -> jax.Array:
  """`x` whole on every device."""
  if _explicit_spec(x) is None:
    return x
  return jax.sharding.reshard(x, PartitionSpec())


def laid_out_like(x: jax.Array, reference: jax.Array) -> jax.Array:
  """`x` (of `reference`'s shape) sharded as `reference` is (whole on every
  device if `reference` is, and `x` is explicitly sharded)."""
  spec = _explicit_spec(reference)
  if _explicit_spec(x) == spec:
    return x
  if spec is None:  # On `x`'s mesh, which need not be the context's.
    return jax.sharding.reshard(x, NamedSharding(jax.typeof(x).sharding.mesh,
                                                 PartitionSpec()))
  return jax.sharding.reshard(x, spec)


def trees_laid_out_like(tree, reference):
  """`laid_out_like` leaf by leaf: `tree` with `reference`'s layouts."""
  return jax.tree.map(laid_out_like, tree, reference)


def on_whole_array(fn: Callable[[jax.Array], jax.Array],
                   x: jax.Array) -> jax.Array:
  """`fn(x)` computed on `x` whole on every device, its result (of `x`'s
  shape) laid out as `x`."""
  return laid_out_like(fn(replicated(x)), x)
