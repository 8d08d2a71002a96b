"""Skipping the steps whose gradients hold NaN or Inf."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxopt_port._init import optax_init


class SkipNonfiniteState(NamedTuple):
  """State of `skip_nonfinite`."""
  inner_state: Any
  skipped_steps: jax.Array  # int32: the steps skipped so far.


def all_finite(tree: Any) -> jax.Array:
  """A boolean scalar: every element of every leaf of `tree` is finite
  (True for an empty tree; None leaves are no leaves)."""
  leaves = jax.tree.leaves(tree)
  if not leaves:
    return jnp.array(True)
  return jnp.stack([jnp.all(jnp.isfinite(leaf)) for leaf in leaves]).all()


def skip_nonfinite(inner: optax.GradientTransformation
                   ) -> optax.GradientTransformationExtraArgs:
  """`inner`, except on a step whose gradients hold a NaN or an Inf.

  On such a step the updates are zero, `inner`'s state keeps every value it
  had (counts, moments, averages) and `skipped_steps` grows by one; on any
  other step the result is `inner`'s, unchanged::

    finite = all(isfinite(g) for g in grads)
    updates, state = inner(grads) if finite else (0, state)

  Unlike `optax.apply_if_finite`, it never gives up after a number of bad
  steps: a run with an occasional overflow keeps training, and the count
  shows how often it happened. (Without it, a NaN gradient makes the
  params NaN, as in native Keras.) Both branches are computed and one is
  selected, so it runs under `jit` with no host round trip.

  Args:
    inner: The transformation to guard.

  Returns:
    A transformation whose state is `SkipNonfiniteState(inner_state,
    skipped_steps)`.
  """
  inner = optax.with_extra_args_support(inner)

  def init_fn(params):
    return SkipNonfiniteState(inner.init(params), jnp.zeros([], jnp.int32))

  def update_fn(grads, state, params=None, **extra_args):
    finite = all_finite(grads)
    updates, inner_state = inner.update(grads, state.inner_state, params,
                                        **extra_args)
    updates = jax.tree.map(lambda u: jnp.where(finite, u, jnp.zeros_like(u)),
                           updates)
    inner_state = jax.tree.map(lambda new, old: jnp.where(finite, new, old),
                               inner_state, state.inner_state)
    skipped = state.skipped_steps + jnp.where(finite, 0, 1).astype(jnp.int32)
    return updates, SkipNonfiniteState(inner_state, skipped)

  return optax.GradientTransformationExtraArgs(optax_init(init_fn),
                                              update_fn)
