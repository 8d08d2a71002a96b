"""Adam and AdamW: `keras.optimizers.Adam`, `keras.optimizers.AdamW`."""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxopt_port import _checks
from jaxopt_port._base import (UpdateStep, cast_like, one_minus,
                               with_keras_base_arguments)


class AdamSlots(NamedTuple):
  momentum: optax.Params
  velocity: optax.Params
  velocity_hat: optax.Params | None  # With amsgrad only.


class LegacyAdamSlots(NamedTuple):
  """Adam's slots by OptimizerV2's names (legacy Adam, TF Addons')."""
  m: optax.Params
  v: optax.Params
  vhat: optax.Params | None  # With amsgrad only.


def adam_update_step(beta_1: Any, beta_2: Any, epsilon: Any, amsgrad: bool,
                     slots: type[NamedTuple] = AdamSlots,
                     complement: Callable[[Any, jax.Array], jax.Array] = one_minus,
                     adaptive_epsilon: bool = False) -> UpdateStep:
  """Keras's Adam update step, the same in both generations.

  With `t = iteration + 1`::

    alpha = lr * sqrt(1 - beta_2**t) / (1 - beta_1**t)
    m = m + (g - m) * (1 - beta_1)
    v = v + (g**2 - v) * (1 - beta_2)
    v_hat = max(v_hat, v)                           (amsgrad)
    p = p - m * alpha / (sqrt(v or v_hat) + epsilon)

  `slots` is the state's NamedTuple class (its fields are named like the
  Keras generation's slots: momentum/velocity/velocity_hat, or legacy m/v/vhat);
  `complement` computes `1 - beta` with that generation's rounding;
  `adaptive_epsilon` (tf_keras's Adam) adds `epsilon * sqrt(1 - beta_2**t)`
  instead of `epsilon` (Algorithm 1 of the paper).
  """

  def build(params):
    zeros = optax.tree.zeros_like(params)
    return slots(zeros, zeros, zeros if amsgrad else None)

  def update(grads, state, params, learning_rate, iteration):
    del params
    m, v, v_hat = state
    step = (iteration + 1).astype(jnp.float32)

    def b2_power_like(g):
      return jnp.power(cast_like(beta_2, g), step.astype(g.dtype))

    def alpha_like(g):
      b1_power = jnp.power(cast_like(beta_1, g), step.astype(g.dtype))
      return cast_like(learning_rate, g) * jnp.sqrt(1 - b2_power_like(g)) / (
          1 - b1_power)

    def epsilon_like(g):
      if adaptive_epsilon:
        return cast_like(epsilon, g) * jnp.sqrt(1 - b2_power_like(g))
      return cast_like(epsilon, g)

    m = jax.tree.map(lambda g, m: m + (g - m) * complement(beta_1, g),
                     grads, m)
    v = jax.tree.map(
        lambda g, v: v + (g * g - v) * complement(beta_2, g), grads, v)
    if amsgrad:
      v_hat = jax.tree.map(jnp.maximum, v_hat, v)
    denominator = v_hat if amsgrad else v
    updates = jax.tree.map(
        lambda g, m, d: -(m * alpha_like(g)) / (jnp.sqrt(d) + epsilon_like(g)),
        grads, m, denominator)
    return updates, slots(m, v, v_hat)

  return UpdateStep(build, update, elementwise=True)


@with_keras_base_arguments(learning_rate=0.001)
def adam(beta_1: float = 0.9, beta_2: float = 0.999, epsilon: float = 1e-7,
         amsgrad: bool = False) -> UpdateStep:
  """Adam, as `keras.optimizers.Adam`.

  With `t` the 1-based step::

    alpha = learning_rate * sqrt(1 - beta_2**t) / (1 - beta_1**t)
    m = m + (g - m) * (1 - beta_1)
    v = v + (g**2 - v) * (1 - beta_2)
    p = p - m * alpha / (sqrt(v) + epsilon)

  Keras adds epsilon after the bias-corrected square root of `v`
  ("epsilon hat"), unlike `optax.adam`, which divides by `sqrt(v_hat) + eps`
  with `v` bias-corrected first; Keras's default epsilon is 1e-7 (optax: 1e-8).

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    beta_1: Decay of the first moment, in [0, 1).
    beta_2: Decay of the second moment, in [0, 1).
    epsilon: Added to `sqrt(v)`, >= 0.
    amsgrad: Divide by the running maximum of `v` (AMSGrad).

  Reference: Kingma and Ba, 2014, "Adam: A Method for Stochastic Optimization";
  Reddi et al., 2018, "On the Convergence of Adam and Beyond".
  """
  _checks.check_moment_arguments(beta_1, beta_2, epsilon)
  return adam_update_step(beta_1, beta_2, epsilon, amsgrad)


@with_keras_base_arguments(learning_rate=0.001)
def adamw(weight_decay: float = 0.004, beta_1: float = 0.9,
          beta_2: float = 0.999, epsilon: float = 1e-7,
          amsgrad: bool = False) -> UpdateStep:
  """AdamW, as `keras.optimizers.AdamW`: Adam with decoupled weight decay.

  Each step first decays the parameters, `p = p - p * weight_decay *
  learning_rate`, then takes the `adam` step. (`optax.adamw` instead adds
  `weight_decay * p` to the Adam direction before scaling by the learning
  rate; the two agree only to first order.)

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    weight_decay: The decay rate, required (>= 0). Defaults to 0.004.
    beta_1, beta_2, epsilon, amsgrad: As in `adam`.

  Reference: Loshchilov and Hutter, 2019, "Decoupled Weight Decay
  Regularization".
  """
  if weight_decay is None:
    raise ValueError("Argument `weight_decay` must be a float. Received: "
                     "weight_decay=None")
  _checks.check_moment_arguments(beta_1, beta_2, epsilon)
  return adam_update_step(beta_1, beta_2, epsilon, amsgrad)
