"""TF1's optimizers, as `jaxopt_port.tf1` exports them (see there)."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxopt_port import (_adadelta, _adagrad, _checks, _classic, _ftrl,
                         _rmsprop)
from jaxopt_port._base import (UpdateStep, cast_like, one_minus_in_dtype,
                               with_tf1_arguments)


def _check_regularization(l1: Any, l2: Any) -> None:
  _checks.check_range("l1_regularization_strength", l1, 0.0)
  _checks.check_range("l2_regularization_strength", l2, 0.0)


@with_tf1_arguments()
def gradient_descent() -> UpdateStep:
  """Gradient descent, as `tf.compat.v1.train.GradientDescentOptimizer`:
  `p = p - learning_rate * g`.

  Args:
    learning_rate: A float or a schedule (required).
  """
  return _classic.vanilla_sgd_update_step()


class MomentumSlots(NamedTuple):
  momentum: optax.Params


@with_tf1_arguments()
def momentum(momentum: float, use_nesterov: bool = False) -> UpdateStep:  # pylint: disable=redefined-outer-name
  """Momentum, as `tf.compat.v1.train.MomentumOptimizer` (ApplyMomentum).

  The accumulator sums raw gradients; the learning rate scales the step::

    a = momentum * a + g
    p = p - learning_rate * a                                  (default)
    p = p - learning_rate * g - learning_rate * momentum * a   (use_nesterov)

  (Keras's SGD keeps `lr * g` inside its momentum; the two agree for a
  constant learning rate.) On sparse gradients only the touched rows move.

  Args:
    learning_rate: A float or a schedule (required).
    momentum: Required, >= 0.
    use_nesterov: Nesterov's form.
  """
  _checks.check_range("momentum", momentum, 0.0)

  def build(params):
    return MomentumSlots(optax.tree.zeros_like(params))

  def update(grads, slots, params, learning_rate, iteration):
    del params, iteration
    accumulator = jax.tree.map(lambda g, a: a * cast_like(momentum, a) + g,
                               grads, slots.momentum)

    def step(g, a):
      lr = cast_like(learning_rate, g)
      if use_nesterov:
        return -(g * lr + a * cast_like(momentum, a) * lr)
      return -(a * lr)

    return jax.tree.map(step, grads, accumulator), MomentumSlots(accumulator)

  return UpdateStep(build, update, elementwise=True)


class AdamSlots(NamedTuple):
  m: optax.Params
  v: optax.Params
  beta1_power: jax.Array  # beta1**t, kept by repeated multiplication.
  beta2_power: jax.Array


@with_tf1_arguments(learning_rate=0.001, sparse_rows="dense")
def adam(beta1: float = 0.9, beta2: float = 0.999,
         epsilon: float = 1e-8) -> UpdateStep:
  """Adam, as `tf.compat.v1.train.AdamOptimizer` (ApplyAdam).

  ::

    alpha = learning_rate * sqrt(1 - beta2_power) / (1 - beta1_power)
    m = m + (g - m) * (1 - beta1);  v = v + (g**2 - v) * (1 - beta2)
    p = p - m * alpha / (sqrt(v) + epsilon)
    beta1_power = beta1_power * beta1;  beta2_power = beta2_power * beta2

  The powers start at the betas and are scalars of the state (TF1's
  non-slot variables), multiplied once per step, not recomputed by `pow`.
  On sparse gradients TF1 decays `m` and `v` everywhere (not lazily).

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    beta1, beta2: Moment decays, in [0, 1).
    epsilon: >= 0; TF1's default is 1e-8.
  """
  _checks.check_moment_arguments(beta1, beta2, epsilon,
                                 names=("beta1", "beta2"))

  def build(params):
    zeros = optax.tree.zeros_like(params)
    return AdamSlots(zeros, zeros, jnp.asarray(beta1, jnp.float32),
                     jnp.asarray(beta2, jnp.float32))

  def update(grads, slots, params, learning_rate, iteration):
    del params, iteration
    m = jax.tree.map(lambda g, m: m + (g - m) * one_minus_in_dtype(beta1, g),
                     grads, slots.m)
    v = jax.tree.map(
        lambda g, v: v + (g * g - v) * one_minus_in_dtype(beta2, g), grads,
        slots.v)

    def step(m, v):
      alpha = cast_like(learning_rate, m) * jnp.sqrt(
          1 - slots.beta2_power.astype(m.dtype)) / (
              1 - slots.beta1_power.astype(m.dtype))
      return -(m * alpha) / (jnp.sqrt(v) + cast_like(epsilon, v))

    return jax.tree.map(step, m, v), AdamSlots(
        m, v, slots.beta1_power * jnp.asarray(beta1, jnp.float32),
        slots.beta2_power * jnp.asarray(beta2, jnp.float32))

  return UpdateStep(build, update, elementwise=True)


@with_tf1_arguments()
def adagrad(initial_accumulator_value: float = 0.1) -> UpdateStep:
  """Adagrad, as `tf.compat.v1.train.AdagradOptimizer` (ApplyAdagrad)::

    a = a + g**2
    p = p - learning_rate * g / sqrt(a)     (no epsilon)

  Args:
    learning_rate: A float or a schedule (required).
    initial_accumulator_value: > 0, as TF1 requires.
  """
  _checks.check_range("initial_accumulator_value", initial_accumulator_value,
                      0.0, low_open=True)
  return _adagrad.adagrad_update_step(initial_accumulator_value, 0.0,
                                      epsilon_inside_sqrt=False)


class AdagradDASlots(NamedTuple):
  gradient_accumulator: optax.Params
  gradient_squared_accumulator: optax.Params


@with_tf1_arguments()
def adagrad_da(initial_gradient_squared_accumulator_value: float = 0.1,
               l1_regularization_strength: float = 0.0,
               l2_regularization_strength: float = 0.0) -> UpdateStep:
  """Adagrad dual averaging, as `tf.compat.v1.train.AdagradDAOptimizer`
  (ApplyAdagradDA). With `t` the 1-based step (TF1's `global_step + 1`)::

    s = s + g;  q = q + g**2
    p = -learning_rate * shrink(s, l1 * t) / (l2 * t * learning_rate + sqrt(q))

  where `shrink(s, k) = sign(s) * max(|s| - k, 0)` (just `s` when l1 is 0).
  The parameters are set from the accumulators, not moved. TF1 takes a
  `global_step` tensor as its second argument; here the step is the
  transform's own count, so that argument does not exist.

  Args:
    learning_rate: A float or a schedule (required).
    initial_gradient_squared_accumulator_value: Start of `q`, > 0.
    l1_regularization_strength, l2_regularization_strength: >= 0.
  """
  _checks.check_range("initial_gradient_squared_accumulator_value",
                      initial_gradient_squared_accumulator_value, 0.0,
                      low_open=True)
  l1, l2 = l1_regularization_strength, l2_regularization_strength
  _check_regularization(l1, l2)

  def build(params):
    return AdagradDASlots(
        optax.tree.zeros_like(params),
        jax.tree.map(lambda p: jnp.full_like(
            p, initial_gradient_squared_accumulator_value), params))

  def update(grads, slots, params, learning_rate, iteration):
    _checks.require_params(params, "tf1.adagrad_da sets the params from its "
                           "accumulators")
    sums = jax.tree.map(jnp.add, slots.gradient_accumulator, grads)
    squares = jax.tree.map(lambda q, g: q + g * g,
                           slots.gradient_squared_accumulator, grads)

    def new_value(s, q):
      t = (iteration + 1).astype(s.dtype)
      lr = cast_like(learning_rate, s)
      if not _checks.is_python_zero(l1):
        s = jnp.sign(s) * jnp.maximum(jnp.abs(s) - cast_like(l1, s) * t, 0.0)
      return -lr * s / (cast_like(l2, s) * t * lr + jnp.sqrt(q))

    updates = jax.tree.map(lambda p, s, q: new_value(s, q) - p, params, sums,
                           squares)
    return updates, AdagradDASlots(sums, squares)

  return UpdateStep(build, update, elementwise=True)


class AdadeltaSlots(NamedTuple):
  accum: optax.Params
  accum_update: optax.Params


@with_tf1_arguments(learning_rate=0.001)
def adadelta(rho: float = 0.95, epsilon: float = 1e-8) -> UpdateStep:
  """Adadelta, as `tf.compat.v1.train.AdadeltaOptimizer` (ApplyAdadelta):
  the formula of `jaxopt_port.adadelta`, slots `accum` and `accum_update`,
  TF1's default epsilon 1e-8. On sparse gradients only the touched rows
  move.

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    rho: In [0, 1] (1: plain SGD).
    epsilon: >= 0.
  """
  _adadelta.check_adadelta_arguments(rho, epsilon)
  return _adadelta.adadelta_update_step(rho, epsilon, slots=AdadeltaSlots,
                                        complement=one_minus_in_dtype)


@with_tf1_arguments()
def rmsprop(decay: float = 0.9, momentum: float = 0.0,  # pylint: disable=redefined-outer-name
            epsilon: float = 1e-10, centered: bool = False) -> UpdateStep:
  """RMSProp, as `tf.compat.v1.train.RMSPropOptimizer` (Apply(Centered)RMSProp).

  `decay` is the decay of the mean square (Keras's `rho`); `rms` starts at
  1 (Keras: 0) and the momentum kernel always runs, epsilon inside the root::

    rms = rms + (g**2 - rms) * (1 - decay);  mg = mg + (g - mg) * (1 - decay)
    mom = momentum * mom + learning_rate * g / sqrt(rms [- mg**2] + epsilon)
    p = p - mom

  On sparse gradients only the touched rows move.

  Args:
    learning_rate: A float or a schedule (required).
    decay: In [0, 1).
    momentum: In [0, 1].
    epsilon: >= 0; TF1's default is 1e-10.
    centered: Subtract the squared mean gradient.
  """
  _rmsprop.check_rmsprop_arguments(decay, momentum, epsilon,
                                   rho_name="decay")
  return _rmsprop.legacy_rmsprop_update_step(
      decay, momentum, epsilon, centered, initial_rms=1.0,
      always_momentum=True)


class FtrlSlots(NamedTuple):
  accum: optax.Params
  linear: optax.Params


@with_tf1_arguments()
def ftrl(learning_rate_power: float = -0.5,
         initial_accumulator_value: float = 0.1,
         l1_regularization_strength: float = 0.0,
         l2_regularization_strength: float = 0.0,
         l2_shrinkage_regularization_strength: float = 0.0,
         beta: float = 0.0) -> UpdateStep:
  """FTRL-Proximal, as `tf.compat.v1.train.FtrlOptimizer` (ApplyFtrl(V2)):
  the formula of `jaxopt_port.ftrl`, slots `accum` and `linear`. On sparse
  gradients only the touched rows move.

  Its step reads slots as they were before it: pass `applied_as_is=True` to
  `update` where the updates go to the params as they are (README, Speed).

  Args:
    learning_rate: A float or a schedule (required).
    learning_rate_power: <= 0.
    initial_accumulator_value, l1_regularization_strength,
    l2_regularization_strength, l2_shrinkage_regularization_strength, beta:
      >= 0.
  """
  _ftrl.check_ftrl_arguments(learning_rate_power, initial_accumulator_value,
                             l1_regularization_strength,
                             l2_regularization_strength,
                             l2_shrinkage_regularization_strength, beta)
  return _ftrl.ftrl_update_step(
      learning_rate_power, initial_accumulator_value,
      l1_regularization_strength, l2_regularization_strength,
      l2_shrinkage_regularization_strength, beta, slots=FtrlSlots,
      sqrt_for_half_power=True)


@with_tf1_arguments()
def proximal_adagrad(initial_accumulator_value: float = 0.1,
                     l1_regularization_strength: float = 0.0,
                     l2_regularization_strength: float = 0.0) -> UpdateStep:
  """Proximal Adagrad, as `tf.compat.v1.train.ProximalAdagradOptimizer`::

    a = a + g**2;  rate = learning_rate / sqrt(a);  v = p - rate * g
    p = sign(v) * max(|v| - rate * l1, 0) / (1 + rate * l2)

  On sparse gradients only the touched rows move.

  Args:
    learning_rate: A float or a schedule (required).
    initial_accumulator_value: > 0.
    l1_regularization_strength, l2_regularization_strength: >= 0.

  Reference: Duchi and Singer, 2009, "Efficient Learning using
  Forward-Backward Splitting".
  """
  _checks.check_range("initial_accumulator_value", initial_accumulator_value,
                      0.0, low_open=True)
  _check_regularization(l1_regularization_strength,
                        l2_regularization_strength)
  return _adagrad.proximal_adagrad_update_step(initial_accumulator_value,
                                      l1_regularization_strength,
                                      l2_regularization_strength)


@with_tf1_arguments()
def proximal_gradient_descent(l1_regularization_strength: float = 0.0,
                              l2_regularization_strength: float = 0.0
                              ) -> UpdateStep:
  """Proximal gradient descent, as
  `tf.compat.v1.train.ProximalGradientDescentOptimizer`::

    v = p - learning_rate * g
    p = sign(v) * max(|v| - learning_rate * l1, 0) / (1 + learning_rate * l2)

  On sparse gradients only the touched rows move.

  Args:
    learning_rate: A float or a schedule (required).
    l1_regularization_strength, l2_regularization_strength: >= 0.
  """
  l1, l2 = l1_regularization_strength, l2_regularization_strength
  _check_regularization(l1, l2)

  def update(grads, slots, params, learning_rate, iteration):
    del iteration
    _checks.require_params(params, "proximal_gradient_descent sets the params "
                           "through its proximal step")

    def step(p, g):
      rate = cast_like(learning_rate, p)
      return _adagrad.proximal_step(p - rate * g, rate, l1, l2) - p

    return jax.tree.map(step, params, grads), slots

  return UpdateStep(lambda params: (), update, elementwise=True)
