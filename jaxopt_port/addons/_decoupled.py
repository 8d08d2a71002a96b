"""TF Addons' decoupled weight decay: `DecoupledWeightDecayExtension`
(`decoupled_weight_decay`, `extend_with_decoupled_weight_decay`), `AdamW`
and `SGDW`."""

from __future__ import annotations

import functools
import inspect
import re
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import optax

from jaxopt_port import _adam, _checks, _row_sparse, _sgd
from jaxopt_port._base import (UpdateStep, cast_like, one_minus_in_dtype,
                               with_legacy_base_arguments)
from jaxopt_port._tree import path_name


def matches(patterns: Sequence[str] | None) -> Callable[[Any], bool]:
  """Whether a tree path's name matches one of `patterns` (`re.search`, as
  TFA matches variable names)."""
  compiled = [re.compile(pattern) for pattern in patterns or []]
  return lambda path: any(p.search(path_name(path)) for p in compiled)


def _decay_terms(params: Any, weight_decay: Any,
                 excluded: Callable[[Any], bool]) -> Any:
  """`-weight_decay * p` per parameter (0 where excluded), as TFA's
  DecoupledWeightDecayExtension subtracts before the step."""
  return jax.tree_util.tree_map_with_path(
      lambda path, p: jnp.zeros_like(p) if excluded(path)
      else -(cast_like(weight_decay, p) * p), params)


def _touched_only(tree: Any, touched_rows: Any) -> Any:
  """`tree` with its rows outside `touched_rows` zeroed."""
  return jax.tree.map(lambda x, touched: jnp.where(touched, x, 0.0), tree,
                      touched_rows)


def _with_decoupled_decay(step: UpdateStep, weight_decay: Any,
                          exclude_from_weight_decay: Sequence[str] | None
                          ) -> UpdateStep:
  excluded = matches(exclude_from_weight_decay)

  def update(grads, slots, params, learning_rate, iteration,
             touched_rows=None):
    _checks.require_params(params, "Decoupled weight decay needs the params")
    decay = _decay_terms(params, weight_decay, excluded)
    if touched_rows is not None:  # TFA decays a sparse gradient's rows only.
      decay = _touched_only(decay, touched_rows)
    updates, slots = step.update(grads, slots,
                                 jax.tree.map(jnp.add, params, decay),
                                 learning_rate, iteration)
    return jax.tree.map(jnp.add, decay, updates), slots

  return UpdateStep(step.build, update, elementwise=(
      step.elementwise and not exclude_from_weight_decay),
                    reads_old_slots=step.reads_old_slots)


def decoupled_weight_decay(factory: Callable[..., optax.GradientTransformation]
                           ) -> Callable[..., optax.GradientTransformationExtraArgs]:
  """TFA's `extend_with_decoupled_weight_decay` for any optax transform
  factory: the returned factory takes `weight_decay` first, then `factory`'s
  arguments, and `exclude_from_weight_decay` (regular expressions of tree
  paths, `re.search`). Each step first decays the params, `p = p -
  weight_decay * p` (not scaled by the learning rate: schedule both
  together, as TFA advises), then runs `factory`'s transform on the decayed
  params. A row-sparse gradient decays only its touched rows (TFA's sparse
  path) and reaches `factory`'s transform as that one takes it.

  `decoupled_weight_decay(jaxopt_port.legacy.adam)` is TFA's `AdamW`.

  Reference: Loshchilov and Hutter, 2019, "Decoupled Weight Decay
  Regularization".
  """
  inner_parameters = list(inspect.signature(factory).parameters.values())

  @functools.wraps(factory, assigned=("__module__", "__doc__"), updated=())
  def with_weight_decay(weight_decay, *args, exclude_from_weight_decay=None,
                        **kwargs):
    _checks.check_range("weight_decay", weight_decay, 0.0)
    inner = factory(*args, **kwargs)
    inner_mode = _row_sparse.sparse_mode(inner)
    excluded = matches(exclude_from_weight_decay)

    def update_fn(grads, state, params=None, touched_rows=None,
                  **extra_args):
      _checks.require_params(params, "Decoupled weight decay needs the params")
      decay = _decay_terms(params, weight_decay, excluded)
      if touched_rows is not None:  # TFA decays a sparse gradient's rows.
        decay = _touched_only(decay, touched_rows)
        if inner_mode == _row_sparse.TOUCHED:
          extra_args = {**extra_args, "touched_rows": touched_rows}
      updates, state = inner.update(
          grads, state, jax.tree.map(jnp.add, params, decay), **extra_args)
      if touched_rows is not None and inner_mode == _row_sparse.PARAMS:
        updates = _touched_only(updates, touched_rows)
      return jax.tree.map(jnp.add, decay, updates), state

    transform = optax.GradientTransformationExtraArgs(inner.init, update_fn)
    if inner_mode is None or inner_mode in _row_sparse.STATIC_LENGTH_MODES:
      # A port's sparse hook is its class's; the decay is not: densified.
      return transform
    # The decay is row by row: on a lazy inner transform the touched rows
    # alone run; otherwise the step is told which rows to decay.
    return _row_sparse.with_row_sparse_gradients(
        transform, _row_sparse.ROWS if inner_mode == _row_sparse.ROWS
        else _row_sparse.TOUCHED)

  with_weight_decay.__name__ = with_weight_decay.__qualname__ = (
      factory.__name__ + "w")
  with_weight_decay.__signature__ = inspect.Signature(
      [inspect.Parameter("weight_decay",
                         inspect.Parameter.POSITIONAL_OR_KEYWORD)]
      + [p for p in inner_parameters if p.kind != p.KEYWORD_ONLY]
      + [inspect.Parameter("exclude_from_weight_decay",
                           inspect.Parameter.KEYWORD_ONLY, default=None)]
      + [p for p in inner_parameters if p.kind == p.KEYWORD_ONLY])
  return with_weight_decay


@with_legacy_base_arguments(learning_rate=0.001, sparse_rows="touched")
def adamw(weight_decay: float, learning_rate: Any = 0.001,
          beta_1: float = 0.9, beta_2: float = 0.999, epsilon: float = 1e-7,
          amsgrad: bool = False, *,
          exclude_from_weight_decay: Sequence[str] | None = None
          ) -> UpdateStep:
  """AdamW, as `tfa.optimizers.AdamW`: legacy Adam after a decoupled decay.

  ::

    p = p - weight_decay * p          (not scaled by the learning rate)
    p = <tf_keras legacy Adam step>

  (Keras 3's `AdamW` decays by `weight_decay * learning_rate * p`.) On
  sparse gradients only the touched rows decay, while the Adam step moves
  every row (its moments decay everywhere), as TFA's sparse path does.

  Args:
    weight_decay: Required, >= 0.
    learning_rate: A float or a schedule. Defaults to 0.001.
    beta_1, beta_2, epsilon, amsgrad: As `jaxopt_port.legacy.adam`.
    exclude_from_weight_decay: Regular expressions of parameter paths not
      decayed.
  """
  del learning_rate
  _checks.check_range("weight_decay", weight_decay, 0.0)
  _checks.check_moment_arguments(beta_1, beta_2, epsilon)
  return _with_decoupled_decay(
      _adam.adam_update_step(beta_1, beta_2, epsilon, amsgrad,
                             slots=_adam.LegacyAdamSlots,
                             complement=one_minus_in_dtype),
      weight_decay, exclude_from_weight_decay)


@with_legacy_base_arguments(learning_rate=0.001, sparse_rows="rows")
def sgdw(weight_decay: float, learning_rate: Any = 0.001,
         momentum: float = 0.0, nesterov: bool = False, *,
         exclude_from_weight_decay: Sequence[str] | None = None
         ) -> UpdateStep:
  """SGDW, as `tfa.optimizers.SGDW`: legacy SGD after a decoupled decay
  `p = p - weight_decay * p`. On sparse gradients only the touched rows
  decay and move (TFA's sparse path; the bridge does the same).

  Args:
    weight_decay: Required, >= 0.
    learning_rate: A float or a schedule. Defaults to 0.001 (TFA's).
    momentum, nesterov: As `jaxopt_port.legacy.sgd`.
    exclude_from_weight_decay: Regular expressions of parameter paths not
      decayed.
  """
  del learning_rate
  _checks.check_range("weight_decay", weight_decay, 0.0)
  _checks.check_range("momentum", momentum, 0.0, 1.0)
  return _with_decoupled_decay(_sgd.sgd_update_step(momentum, nesterov),
                               weight_decay, exclude_from_weight_decay)
