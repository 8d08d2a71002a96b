"""MultiOptimizer: `keras.optimizers.MultiOptimizer` with an `OptimizerMap`."""

from __future__ import annotations

import re
from typing import Mapping, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxopt_port import _checks
from jaxopt_port._base import cast_like
from jaxopt_port._init import optax_init
from jaxopt_port._tree import path_name


class MultiOptimizerState(NamedTuple):
  iterations: jax.Array  # Every call, as the MultiOptimizer's own count.
  inner_states: optax.MultiTransformState


@_checks.numbers_checked
def multi_optimizer(
    default_optimizer: optax.GradientTransformation,
    optimizer_map: Mapping[str, optax.GradientTransformation] | None = None,
    *,
    loss_scale_factor: float | None = None,
) -> optax.GradientTransformationExtraArgs:
  """Different transforms for different parameters, as Keras's
  `MultiOptimizer(OptimizerMap(default_optimizer, optimizer_map))`.

  A parameter's path (Keras's `variable.path`; here the tree path joined by
  "/", so `{"encoder": {"dense": {"kernel": ...}}}` is
  `encoder/dense/kernel`) picks its transform: a key of `optimizer_map`
  equal to the path, else the one key that matches it as a regular
  expression (`re.fullmatch`; two matches are an error), else
  `default_optimizer`. A transform given under several keys updates all
  their parameters as one (with one state), as Keras does for one optimizer
  instance. Each transform sees only its own parameters (`optax.multi_transform`).

  Args:
    default_optimizer: The transform for unmatched parameters.
    optimizer_map: Path or regular expression -> transform.
    loss_scale_factor: If set, the gradients are divided by it first (Keras
      sets it on every inner optimizer, replacing theirs: give the inner
      transforms none).
  """
  optimizer_map = dict(optimizer_map or {})
  _checks.check_range("loss_scale_factor", loss_scale_factor, 0.0,
                      low_open=True)
  for pattern in optimizer_map:
    if not isinstance(pattern, str):
      raise ValueError(f"optimizer_map keys must be strings (a variable path "
                       f"or a regular expression). Received: {pattern!r}")
    re.compile(pattern)
  unique: list[optax.GradientTransformation] = []
  for transform in (default_optimizer, *optimizer_map.values()):
    if not any(transform is seen for seen in unique):
      unique.append(transform)

  def index_of(transform):
    return next(i for i, seen in enumerate(unique) if seen is transform)

  def label(path, _):
    name = path_name(path)
    if name in optimizer_map:
      return index_of(optimizer_map[name])
    matches = [p for p in optimizer_map if re.fullmatch(p, name)]
    if len(matches) > 1:
      raise ValueError(f"Multiple optimizers assigned to variable {name}: "
                       f"patterns {matches} all match.")
    return index_of(optimizer_map[matches[0]] if matches
                    else default_optimizer)

  inner = optax.multi_transform(
      dict(enumerate(unique)),
      lambda params: jax.tree_util.tree_map_with_path(label, params))

  def init_fn(params):
    return MultiOptimizerState(jnp.zeros([], jnp.int32), inner.init(params))

  def update_fn(grads, state, params=None, **extra_args):
    if loss_scale_factor is not None:
      grads = jax.tree.map(lambda g: g / cast_like(loss_scale_factor, g),
                           grads)
    updates, inner_states = inner.update(grads, state.inner_states, params,
                                         **extra_args)
    return updates, MultiOptimizerState(
        optax.safe_increment(state.iterations), inner_states)

  return optax.GradientTransformationExtraArgs(optax_init(init_fn),
                                              update_fn)
