"""Adagrad: `keras.optimizers.Adagrad` (and legacy's), and AdagradDecay."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxopt_port import _checks
from jaxopt_port._base import (REQUIRED, UpdateStep, cast_like,
                               with_keras_base_arguments)
from jaxopt_port._sharding import laid_out_like
from jaxopt_port._tree import map_leaves


class AdagradSlots(NamedTuple):
  accumulator: optax.Params


def check_adagrad_arguments(initial_accumulator_value: Any, epsilon: Any, *,
                            accumulator_message: str | None = None) -> None:
  _checks.check_range("initial_accumulator_value", initial_accumulator_value,
                      0.0, message=accumulator_message)
  _checks.check_range("epsilon", epsilon, 0.0)


def adagrad_update_step(initial_accumulator_value: Any, epsilon: Any, *,
                        epsilon_inside_sqrt: bool) -> UpdateStep:
  """Adagrad's update step; the generations differ in where epsilon goes.

  ::

    a = a + g**2
    p = p - lr * g / sqrt(a + epsilon)     (Keras 3: epsilon_inside_sqrt)
    p = p - lr * g / (sqrt(a) + epsilon)   (OptimizerV2's ResourceApplyAdagradV2)
  """

  def build(params):
    return AdagradSlots(jax.tree.map(
        lambda p: jnp.full_like(p, initial_accumulator_value), params))

  def update(grads, slots, params, learning_rate, iteration):
    del params, iteration
    accumulator = jax.tree.map(lambda g, a: a + g * g, grads,
                               slots.accumulator)

    def step(g, a):
      if epsilon_inside_sqrt:
        denominator = jnp.sqrt(a + cast_like(epsilon, g))
      else:
        denominator = jnp.sqrt(a) + cast_like(epsilon, g)
      return -(cast_like(learning_rate, g) * g) / denominator

    return jax.tree.map(step, grads, accumulator), AdagradSlots(accumulator)

  return UpdateStep(build, update, elementwise=True)


@with_keras_base_arguments(learning_rate=0.001, sparse_rows="rows")
def adagrad(initial_accumulator_value: float = 0.1,
            epsilon: float = 1e-7) -> UpdateStep:
  """Adagrad, as `keras.optimizers.Adagrad`.

  ::

    a = a + g**2
    p = p - learning_rate * g / sqrt(a + epsilon)

  Keras 3 puts epsilon inside the square root, as `optax.adagrad` does (same
  defaults); the legacy optimizer adds it outside.

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    initial_accumulator_value: Starting value of the accumulators, >= 0.
    epsilon: >= 0.

  Reference: Duchi et al., 2011, "Adaptive Subgradient Methods for Online
  Learning and Stochastic Optimization".
  """
  check_adagrad_arguments(initial_accumulator_value, epsilon)
  return adagrad_update_step(initial_accumulator_value, epsilon,
                             epsilon_inside_sqrt=True)


class AdagradDecaySlots(NamedTuple):
  accumulator: optax.Params
  decay_count: optax.Params  # Decays applied so far, per row (int32).


def check_adagrad_decay_arguments(initial_accumulator_value: Any,
                                  accumulator_decay_step: Any,
                                  accumulator_decay_rate: Any) -> None:
  _checks.check_range("initial_accumulator_value", initial_accumulator_value,
                      0.0)
  _checks.check_optional_int("accumulator_decay_step", accumulator_decay_step,
                             1)
  _checks.check_range("accumulator_decay_rate", accumulator_decay_rate, 0.0,
                      1.0)


def _row_counts(p: jax.Array) -> jax.Array:
  """Zeros, one per row of `p` (a scalar for a scalar), laid out as its
  rows (reduced from it)."""
  return jnp.zeros_like(p, jnp.int32).sum(axis=tuple(range(1, p.ndim)))


def adagrad_decay_update_step(initial_accumulator_value: Any,
                              accumulator_decay_step: Any,
                              accumulator_decay_rate: Any) -> UpdateStep:
  """AdagradDecay's update step; see `adagrad_decay`."""

  def build(params):
    return AdagradDecaySlots(
        jax.tree.map(lambda p: jnp.full_like(p, initial_accumulator_value),
                     params),
        jax.tree.map(_row_counts, params))

  def update(grads, slots, params, learning_rate, iteration):
    del params
    due = (iteration + 1) // jnp.asarray(accumulator_decay_step, jnp.int32)

    def leaf_step(g, a, count):
      decays = due > count
      rows = laid_out_like(jnp.broadcast_to(
          decays.reshape(decays.shape + (1,) * (a.ndim - decays.ndim)),
          a.shape), a)
      a = jnp.where(rows, jnp.maximum(
          a * cast_like(accumulator_decay_rate, a),
          cast_like(initial_accumulator_value, a)), a)
      a = a + g * g
      return (-(cast_like(learning_rate, g) * g / jnp.sqrt(a)), a,
              count + decays.astype(jnp.int32))

    updates, accumulator, count = map_leaves(leaf_step, 3, grads, *slots)
    return updates, AdagradDecaySlots(accumulator, count)

  return UpdateStep(build, update, elementwise=True)


@with_keras_base_arguments(learning_rate=REQUIRED, sparse_rows="rows")
def adagrad_decay(initial_accumulator_value: float = 0.1,
                  accumulator_decay_step: int = 100000,
                  accumulator_decay_rate: float = 0.9) -> UpdateStep:
  """AdagradDecay, the TF1-style Adagrad whose accumulator decays every
  `accumulator_decay_step` steps (as in PAI-TF/DeepRec's
  `AdagradDecayOptimizer`, for long-running recommendation models).

  With `t` the 1-based step and `c` the decays applied so far (per row, so a
  sparse update decays only the rows it touches, once each, when due)::

    if t // accumulator_decay_step > c:
      a = max(a * accumulator_decay_rate, initial_accumulator_value); c += 1
    a = a + g**2
    p = p - learning_rate * g / sqrt(a)           (no epsilon)

  Args:
    learning_rate: A float or a schedule (required).
    initial_accumulator_value: Start of the accumulators and floor of their
      decay, >= 0.
    accumulator_decay_step: Steps between decays, an int >= 1.
    accumulator_decay_rate: In [0, 1].
  """
  check_adagrad_decay_arguments(initial_accumulator_value,
                                accumulator_decay_step, accumulator_decay_rate)
  return adagrad_decay_update_step(initial_accumulator_value,
                                   accumulator_decay_step,
                                   accumulator_decay_rate)


def proximal_step(v: jax.Array, rate: jax.Array, l1: Any, l2: Any
                  ) -> jax.Array:
  """TF1's proximal operator: shrink `v` by `rate * l1`, scale by
  `1 / (1 + rate * l2)`."""
  shrunk = jnp.sign(v) * jnp.maximum(jnp.abs(v) - rate * cast_like(l1, v),
                                     0.0)
  return shrunk / (1 + rate * cast_like(l2, v))


def proximal_adagrad_update_step(initial_accumulator_value: Any, l1: Any,
                                 l2: Any) -> UpdateStep:
  """ApplyProximalAdagrad::

    a = a + g**2;  rate = lr / sqrt(a)
    p = prox(p - rate * g, rate, l1, l2)
  """

  def build(params):
    return AdagradSlots(jax.tree.map(
        lambda p: jnp.full_like(p, initial_accumulator_value), params))

  def update(grads, slots, params, learning_rate, iteration):
    del iteration
    _checks.require_params(params, "proximal_adagrad sets the params through "
                           "its proximal step")
    accumulator = jax.tree.map(lambda a, g: a + g * g, slots.accumulator,
                               grads)

    def step(p, g, a):
      rate = cast_like(learning_rate, a) / jnp.sqrt(a)
      return proximal_step(p - rate * g, rate, l1, l2) - p

    return (jax.tree.map(step, params, grads, accumulator),
            AdagradSlots(accumulator))

  return UpdateStep(build, update, elementwise=True)
