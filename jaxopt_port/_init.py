"""What every `init` here promises, as optax's own inits do.

`init` accepts abstract params (`jax.ShapeDtypeStruct` leaves, as orbax and
Flax pass to build restore targets) and returns a state whose buffers are its
own: no two state leaves and no state leaf and parameter share a buffer, so
`jax.jit(step, donate_argnums=...)` may donate params and state together.
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp


def _concrete(leaf: Any) -> Any:
  """A `ShapeDtypeStruct` as zeros of its shape, dtype and sharding."""
  if isinstance(leaf, jax.ShapeDtypeStruct):
    return jnp.zeros(leaf.shape, leaf.dtype, device=leaf.sharding)
  return leaf


def _own_buffers(state: Any, params: Any) -> Any:
  """`state` with a copy of every leaf that is a parameter or another leaf
  (`jnp.asarray` hands back the same array; one zeros tree may fill two
  slots). Under `jit` a returned input would be forwarded as that input's
  buffer, so tracers are copied the same way."""
  seen = {id(leaf) for leaf in jax.tree.leaves(params)}

  def own(leaf):
    if id(leaf) in seen:
      return jnp.copy(leaf)
    seen.add(id(leaf))
    return leaf

  return jax.tree.map(own, state)


def optax_init(init_fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
  """`init_fn` taking abstract params and returning buffers of its own."""

  def init(params):
    params = jax.tree.map(_concrete, params)
    return _own_buffers(init_fn(params), params)

  return init
