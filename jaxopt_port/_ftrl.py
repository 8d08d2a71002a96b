"""FTRL-Proximal: `keras.optimizers.Ftrl` (and legacy's)."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxopt_port import _checks
from jaxopt_port._base import UpdateStep, cast_like, with_keras_base_arguments


class FtrlSlots(NamedTuple):
  accumulator: optax.Params
  linear: optax.Params


def check_ftrl_arguments(learning_rate_power: Any, initial_accumulator_value: Any,
                         l1_regularization_strength: Any,
                         l2_regularization_strength: Any,
                         l2_shrinkage_regularization_strength: Any,
                         beta: Any) -> None:
  # In Keras's words (both generations).
  _checks.check_range(
      "learning_rate_power", learning_rate_power, -float("inf"), 0.0,
      message="`{name}` needs to be negative or zero. Received: "
      "{name}={value}.")
  for name, value in (
      ("initial_accumulator_value", initial_accumulator_value),
      ("l1_regularization_strength", l1_regularization_strength),
      ("l2_regularization_strength", l2_regularization_strength),
      ("l2_shrinkage_regularization_strength",
       l2_shrinkage_regularization_strength)):
    _checks.check_range(
        name, value, 0.0,
        message="`{name}` needs to be positive or zero. Received: "
        "{name}={value}.")
  _checks.check_range("beta", beta, 0.0)


def ftrl_update_step(learning_rate_power: Any, initial_accumulator_value: Any,
                     l1: Any, l2: Any, l2_shrinkage: Any, beta: Any,
                     slots: type[NamedTuple] = FtrlSlots,
                     sqrt_for_half_power: bool = False) -> UpdateStep:
  """FTRL-Proximal's update step (it sets the parameters, so it reads them)::

    n_new = n + g**2
    z = z + (g + 2 * l2_shrinkage * p) - (n_new**-c - n**-c) / lr * p
    p = (clip(z, -l1, l1) - z) / (n_new**-c / lr + 2 * (l2 + beta / (2 lr)))

  with `c = learning_rate_power`. `sqrt_for_half_power`: the TensorFlow
  kernels behind the legacy optimizer take `sqrt` when c is -0.5.
  """
  def powers(*trees):
    """`x ** -c` for every leaf; `sqrt` where the kernels take it. A fed
    hyperparameter is traced: the kernels' branch is then taken at run time,
    once for the whole step (sqrt is far cheaper than pow)."""

    def by_sqrt(trees):
      return jax.tree.map(jnp.sqrt, trees)

    def by_power(trees):
      return jax.tree.map(
          lambda x: jnp.power(x, cast_like(-learning_rate_power, x)), trees)

    if not sqrt_for_half_power:
      return by_power(trees)
    number = _checks.concrete_number(learning_rate_power)
    if number is not None:
      return (by_sqrt if number == -0.5 else by_power)(trees)
    return jax.lax.cond(jnp.asarray(learning_rate_power) == -0.5, by_sqrt,
                        by_power, trees)

  def build(params):
    return slots(jax.tree.map(
        lambda p: jnp.full_like(p, initial_accumulator_value), params),
                 optax.tree.zeros_like(params))

  def update(grads, state, params, learning_rate, iteration):
    del iteration
    _checks.require_params(params, "ftrl sets the parameters from its state")
    accumulator, linear = state
    new_accumulator = jax.tree.map(lambda g, n: n + g * g, grads, accumulator)
    old_power, new_power = powers(accumulator, new_accumulator)

    def new_linear(g, p, n_power, n_new_power, z):
      lr = cast_like(learning_rate, g)
      shrunk = g + cast_like(2 * l2_shrinkage, g) * p
      return z + (shrunk - (n_new_power - n_power) / lr * p)

    linear = jax.tree.map(new_linear, grads, params, old_power, new_power,
                          linear)

    def new_param(p, n_new_power, z):
      lr = cast_like(learning_rate, p)
      l2_total = cast_like(l2, p) + cast_like(beta, p) / (2.0 * lr)
      quadratic = n_new_power / lr + 2 * l2_total
      l1_value = cast_like(l1, p)
      return (jnp.clip(z, -l1_value, l1_value) - z) / quadratic

    new_params = jax.tree.map(new_param, params, new_power, linear)
    updates = jax.tree.map(jnp.subtract, new_params, params)
    return updates, slots(new_accumulator, linear)

  return UpdateStep(build, update, elementwise=True, reads_old_slots=True)


@with_keras_base_arguments(learning_rate=0.001)
def ftrl(learning_rate_power: float = -0.5,
         initial_accumulator_value: float = 0.1,
         l1_regularization_strength: float = 0.0,
         l2_regularization_strength: float = 0.0,
         l2_shrinkage_regularization_strength: float = 0.0,
         beta: float = 0.0) -> UpdateStep:
  """FTRL-Proximal, as `keras.optimizers.Ftrl`.

  With accumulator `n`, linear term `z` and `c = learning_rate_power`::

    n_new = n + g**2
    z = z + g + 2 * l2_shrinkage * p - (n_new**-c - n**-c) / learning_rate * p
    p = (clip(z, -l1, l1) - z) / (n_new**-c / learning_rate + 2 * l2 + beta / learning_rate)

  optax has no FTRL.

  Its step reads slots as they were before it: pass `applied_as_is=True` to
  `update` where the updates go to the params as they are (README, Speed).

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    learning_rate_power: <= 0; -0.5 is Adagrad-like, 0 a fixed rate.
    initial_accumulator_value: >= 0.
    l1_regularization_strength: >= 0 (sparsity).
    l2_regularization_strength: >= 0 (stabilization).
    l2_shrinkage_regularization_strength: >= 0 (magnitude penalty in the
      gradient).
    beta: >= 0, added to the denominator as in the paper.

  Reference: McMahan et al., 2013, "Ad Click Prediction: a View from the
  Trenches".
  """
  check_ftrl_arguments(learning_rate_power, initial_accumulator_value,
                       l1_regularization_strength, l2_regularization_strength,
                       l2_shrinkage_regularization_strength, beta)
  return ftrl_update_step(learning_rate_power, initial_accumulator_value,
                          l1_regularization_strength,
                          l2_regularization_strength,
                          l2_shrinkage_regularization_strength, beta)
