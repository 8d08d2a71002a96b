"""Muon: `keras.optimizers.Muon`."""

from __future__ import annotations

import re
from typing import Any, NamedTuple, Sequence

import jax
import jax.numpy as jnp
import optax

from jaxopt_port import _checks
from jaxopt_port._base import (UpdateStep, cast_like, one_minus,
                               with_keras_base_arguments)
from jaxopt_port._sharding import on_whole_array
from jaxopt_port._tree import map_leaves, path_name


class MuonSlots(NamedTuple):
  momentum: optax.Params
  velocity: optax.Params  # Adam's second moment; empty (0,) on Muon leaves.


def transpose_last(x: jax.Array) -> jax.Array:
  """`x` with its last two axes swapped (Keras's `transpose_last_axis`)."""
  return jnp.swapaxes(x, -1, -2)


def rms_scaled(update: jax.Array, rms_rate: Any) -> jax.Array:
  """Moonlight's scaling of a matrix's Muon step, `update * sqrt(max(n, m))
  * rms_rate` for an `(n, m, ...)` update; unscaled if `rms_rate` is None
  (Keras's `lr_adjust`)."""
  if rms_rate is None:
    return update
  return update * jnp.sqrt(jnp.asarray(max(update.shape[0], update.shape[1]),
                                       update.dtype)) * cast_like(rms_rate,
                                                                  update)


def orthogonalize(x: jax.Array, steps: int, a: float, b: float,
                  c: float) -> jax.Array:
  """Keras's quintic Newton-Schulz iteration towards `U V^T` of `x`."""
  wide = x.shape[-2] > x.shape[-1]
  if wide:
    x = transpose_last(x)
  x = x / (jnp.linalg.norm(x, axis=(-2, -1), keepdims=True) + 1e-7)

  def iteration(_, x):
    gram = x @ transpose_last(x)
    return a * x + (b * gram + c * gram @ gram) @ x

  # A loop, not Python's range: an injected `steps` is a traced integer.
  x = jax.lax.fori_loop(0, steps, iteration, x)
  return transpose_last(x) if wide else x


@with_keras_base_arguments(learning_rate=0.001, weight_decay=0.004)
def muon(adam_beta_1: float = 0.9, adam_beta_2: float = 0.999,
         adam_weight_decay: float | None = 0.004, epsilon: float = 1e-7,
         weight_decay: float | None = 0.004,
         exclude_layers: Sequence[str] | None = None,
         exclude_embeddings: bool = True, muon_a: float = 3.4445,
         muon_b: float = -4.7750, muon_c: float = 2.0315,
         adam_lr_ratio: float = 1, momentum: float = 0.95, ns_steps: int = 5,
         nesterov: bool = True, rms_rate: float | None = 0.2) -> UpdateStep:
  """Muon, as `keras.optimizers.Muon`: orthogonalized momentum for matrices,
  AdamW for the rest.

  A parameter takes the Adam step unless it is 2-D, its path (Keras's
  `variable.path`; here the tree path joined by "/") does not contain
  "embedding" (with `exclude_embeddings`) and matches no regular expression
  of `exclude_layers` (`re.search`). Muon step, `(n, m)` the shape::

    mu = mu * momentum + g
    d = g + momentum * mu   if nesterov else   mu
    p = p - lr * NS(d) * sqrt(max(n, m)) * rms_rate     (rms_rate None: 1)

  with `NS` five quintic Newton-Schulz iterations (`muon_a, muon_b, muon_c`)
  on `d / (||d||_F + 1e-7)`. Adam step (`lr * adam_lr_ratio`, `t` 1-based)::

    m = m + (g - m) * (1 - adam_beta_1);  v = v + (g**2 - v) * (1 - adam_beta_2)
    p = p - m * lr * sqrt(1 - adam_beta_2**t) / (1 - adam_beta_1**t)
                / (sqrt(v) + epsilon)

  Weight decay, before the step: `p = p - p * rate * lr` with `rate` =
  `adam_weight_decay` on Adam parameters and `weight_decay` on Muon ones
  (None: no decay). (`optax.contrib.muon` differs: its Newton-Schulz
  normalization, shape scaling and Adam defaults are its own.)

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    adam_beta_1, adam_beta_2: Adam's moment decays, in [0, 1).
    adam_weight_decay: Decay rate of the Adam parameters, or None.
    epsilon: Adam's epsilon, >= 0.
    weight_decay: Decay rate of the Muon parameters, or None.
    exclude_layers: Regular expressions of paths that take the Adam step.
    exclude_embeddings: Paths containing "embedding" take the Adam step.
    muon_a, muon_b, muon_c: The Newton-Schulz polynomial's coefficients.
    adam_lr_ratio: The Adam step's learning rate, relative.
    momentum: The Muon momentum, in [0, 1).
    ns_steps: Newton-Schulz iterations, an int >= 0.
    nesterov: Step along `g + momentum * mu`.
    rms_rate: Scales the Muon step by `sqrt(max(n, m)) * rms_rate`
      (Moonlight's RMS matching), or None.

  Reference: Jordan et al., 2024, "Muon: An optimizer for hidden layers in
  neural networks"; Liu et al., 2025, "Muon is Scalable for LLM Training".
  """
  _checks.check_moment_arguments(adam_beta_1, adam_beta_2, epsilon,
                                 names=("adam_beta_1", "adam_beta_2"))
  _checks.check_range("momentum", momentum, 0.0, 1.0, high_open=True)
  _checks.check_optional_int("ns_steps", ns_steps, 0)
  _checks.check_range("adam_weight_decay", adam_weight_decay, 0.0)
  patterns = [re.compile(pattern) for pattern in exclude_layers or []]

  def takes_adam(path, leaf):
    name = path_name(path)
    return (jnp.ndim(leaf) != 2
            or (exclude_embeddings and "embedding" in name.lower())
            or any(pattern.search(name) for pattern in patterns))

  def weight_decay_rates(params):
    return jax.tree_util.tree_map_with_path(
        lambda path, p: _zero_if_none(adam_weight_decay if takes_adam(path, p)
                                      else weight_decay), params)

  def build(params):
    return MuonSlots(
        optax.tree.zeros_like(params),
        jax.tree_util.tree_map_with_path(
            lambda path, p: jnp.zeros_like(p) if takes_adam(path, p)
            else jnp.zeros((0,), p.dtype), params))

  def update(grads, slots, params, learning_rate, iteration):
    del params
    step = (iteration + 1).astype(jnp.float32)

    def adam_step(g, mu, v):
      lr = cast_like(learning_rate * adam_lr_ratio, g)
      t = step.astype(g.dtype)
      alpha = lr * jnp.sqrt(1 - jnp.power(cast_like(adam_beta_2, g), t)) / (
          1 - jnp.power(cast_like(adam_beta_1, g), t))
      mu = mu + (g - mu) * one_minus(adam_beta_1, g)
      v = v + (jnp.square(g) - v) * one_minus(adam_beta_2, g)
      return -(mu * alpha) / (jnp.sqrt(v) + cast_like(epsilon, g)), mu, v

    def muon_step(g, mu, v):
      mu = mu + (g + mu * (cast_like(momentum, g) - 1))
      direction = g + cast_like(momentum, g) * mu if nesterov else mu
      update = cast_like(learning_rate, g) * on_whole_array(
          lambda d: orthogonalize(d, ns_steps, muon_a, muon_b, muon_c),
          direction)
      return -rms_scaled(update, rms_rate), mu, v

    def leaf_step(path, g, mu, v):
      return (adam_step if takes_adam(path, g) else muon_step)(g, mu, v)

    updates, mu, v = map_leaves(leaf_step, 3, grads, *slots, with_path=True)
    return updates, MuonSlots(mu, v)

  return UpdateStep(build, update, weight_decay_rates)


def _zero_if_none(rate: Any) -> Any:
  # Not `rate or 0.0`: an injected rate is a traced array.
  return 0.0 if rate is None else rate
