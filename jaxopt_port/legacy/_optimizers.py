"""The OptimizerV2 generation's optimizers, as `jaxopt_port.legacy` exports
them (see there)."""

from __future__ import annotations

from typing import NamedTuple

import optax

from jaxopt_port import (_adadelta, _adagrad, _adam, _adamax, _checks,
                         _classic, _ftrl, _nadam, _rmsprop, _row_sparse,
                         _sgd)
from jaxopt_port._base import (REQUIRED, UpdateStep, one_minus_in_dtype,
                               with_legacy_base_arguments)
from jaxopt_port._checks import nonzero_epsilon


@with_legacy_base_arguments(learning_rate=0.01, sparse_rows="rows",
                            complex_values=True)
def sgd(momentum: float = 0.0, nesterov: bool = False) -> UpdateStep:
  """SGD, as `tf_keras.optimizers.legacy.SGD` (the formula of `jaxopt_port.sgd`).

  Args:
    learning_rate: A float or a schedule. Defaults to 0.01.
    momentum: In [0, 1]; at 0 the momentum slot stays at zeros.
    nesterov: Use Nesterov momentum.
  """
  _checks.check_range("momentum", momentum, 0.0, 1.0,
                      message=_checks.LEGACY_MOMENTUM_MESSAGE)
  return _sgd.sgd_update_step(momentum, nesterov)


@with_legacy_base_arguments(learning_rate=0.001)
def adam(beta_1: float = 0.9, beta_2: float = 0.999,
         epsilon: float | None = 1e-7, amsgrad: bool = False) -> UpdateStep:
  """Adam, as `tf_keras.optimizers.legacy.Adam` (the formula of `jaxopt_port.adam`).

  Slots `m`, `v` and, with amsgrad, `vhat`. An epsilon of 0 or None means 1e-7.

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    beta_1, beta_2: Moment decays, in [0, 1).
    epsilon: Added to `sqrt(v)`.
    amsgrad: Use the running maximum of `v`.
  """
  _checks.check_moment_arguments(beta_1, beta_2, epsilon)
  return _adam.adam_update_step(beta_1, beta_2, nonzero_epsilon(epsilon),
                                amsgrad, slots=_adam.LegacyAdamSlots,
                                complement=one_minus_in_dtype)


@with_legacy_base_arguments(learning_rate=0.001, sparse_rows="rows",
                            complex_values=True)
def adagrad(initial_accumulator_value: float = 0.1,
            epsilon: float | None = 1e-7) -> UpdateStep:
  """Adagrad, as `tf_keras.optimizers.legacy.Adagrad`.

  ::

    a = a + g**2
    p = p - learning_rate * g / (sqrt(a) + epsilon)

  (Keras 3 puts epsilon inside the root.) An epsilon of 0 or None means 1e-7.

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    initial_accumulator_value: >= 0.
    epsilon: >= 0.
  """
  _adagrad.check_adagrad_arguments(
      initial_accumulator_value, epsilon,
      accumulator_message="initial_accumulator_value must be non-negative: "
      "{value}")
  return _adagrad.adagrad_update_step(
      initial_accumulator_value, nonzero_epsilon(epsilon),
      epsilon_inside_sqrt=False)


@with_legacy_base_arguments(learning_rate=0.001,
                            sparse_rows=_row_sparse.rows_with_momentum,
                            complex_values=True)
def rmsprop(rho: float = 0.9, momentum: float = 0.0,
            epsilon: float | None = 1e-7, centered: bool = False
            ) -> UpdateStep:
  """RMSprop, as `tf_keras.optimizers.legacy.RMSprop`.

  Without momentum, `p = p - lr * g / (sqrt(rms) + epsilon)`; with momentum,
  `mom = momentum * mom + lr * g / sqrt(rms + epsilon)` and `p = p - mom`
  (epsilon moves inside the root: the fused TensorFlow kernels compute it so).
  Centered, `rms - mg**2` replaces `rms`. Slots `rms`, `momentum`, `mg`.
  An epsilon of 0 or None means 1e-7.

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    rho: In [0, 1).
    momentum: In [0, 1]; at 0 the momentum slot stays at zeros.
    epsilon: >= 0.
    centered: Use the centered second moment.
  """
  _rmsprop.check_rmsprop_arguments(
      rho, momentum, epsilon,
      momentum_message=_checks.LEGACY_MOMENTUM_MESSAGE)
  return _rmsprop.legacy_rmsprop_update_step(
      rho, momentum, nonzero_epsilon(epsilon), centered)


class AdamaxSlots(NamedTuple):
  m: optax.Params
  v: optax.Params  # The exponentially weighted infinity norm.


@with_legacy_base_arguments(learning_rate=0.001, sparse_rows="rows")
def adamax(beta_1: float = 0.9, beta_2: float = 0.999,
           epsilon: float | None = 1e-7) -> UpdateStep:
  """Adamax, as `tf_keras.optimizers.legacy.Adamax` (ResourceApplyAdaMax):
  the formula of `jaxopt_port.adamax`, slots `m` and `v`. On sparse gradients
  the native optimizer updates only the touched rows (the bridge too).
  An epsilon of 0 or None means 1e-7.

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    beta_1, beta_2: In [0, 1).
    epsilon: >= 0.
  """
  _checks.check_moment_arguments(beta_1, beta_2, epsilon)
  return _adamax.adamax_update_step(beta_1, beta_2, nonzero_epsilon(epsilon),
                                    slots=AdamaxSlots,
                                    complement=one_minus_in_dtype)


class AdadeltaSlots(NamedTuple):
  accum_grad: optax.Params
  accum_var: optax.Params


@with_legacy_base_arguments(learning_rate=0.001, sparse_rows="rows",
                            complex_values=True)
def adadelta(rho: float = 0.95, epsilon: float | None = 1e-7) -> UpdateStep:
  """Adadelta, as `tf_keras.optimizers.legacy.Adadelta` (ResourceApplyAdadelta):
  the formula of `jaxopt_port.adadelta`, slots `accum_grad` and `accum_var`.
  An epsilon of 0 or None means 1e-7.

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    rho: In [0, 1] (1: plain SGD).
    epsilon: >= 0.
  """
  _adadelta.check_adadelta_arguments(rho, epsilon)
  return _adadelta.adadelta_update_step(rho, nonzero_epsilon(epsilon),
                                        slots=AdadeltaSlots,
                                        complement=one_minus_in_dtype)


@with_legacy_base_arguments(learning_rate=0.001, sparse_rows="params",
                            owns=("decay",))
def nadam(learning_rate: float = 0.001, beta_1: float = 0.9,
          beta_2: float = 0.999, epsilon: float | None = 1e-7,
          schedule_decay: float = 0.004, decay: float | None = None
          ) -> UpdateStep:
  """Nadam, as `tf_keras.optimizers.legacy.Nadam`: Dozat's momentum schedule
  `mu(t) = beta_1 * (1 - 0.5 * 0.96**(schedule_decay * t))` and no
  learning-rate decay. Slots `m`, `v` and the shared `momentum_cache`. On
  sparse gradients the native optimizer moves only the touched rows of the
  variable (its slots decay everywhere); the bridge does the same.

  tf_keras keeps the schedule decay as its `decay` hyperparameter (and
  config key), so `decay` here is the schedule decay too, never a
  learning-rate decay. (Its constructor ignores a `decay` argument, which
  loses a saved schedule decay when a config is loaded; here it is used.)
  Like tf_keras, a learning-rate schedule is refused.

  Args:
    learning_rate: A float. Defaults to 0.001.
    beta_1, beta_2: In [0, 1).
    epsilon: >= 0 (0 or None means 1e-7).
    schedule_decay: The momentum schedule's decay, >= 0.
    decay: tf_keras's name of `schedule_decay`: when set, it is the
      schedule decay (refused if `schedule_decay` is set to another value).
  """
  if callable(learning_rate):
    raise ValueError(
        "The Nadam optimizer does not support "
        "tf.keras.optimizers.LearningRateSchedules as the learning rate "
        "(nor any schedule).")
  _checks.check_range("decay", decay, 0.0)
  if decay is not None:
    given, named = (_checks.concrete_number(schedule_decay),
                    _checks.concrete_number(decay))
    if given not in (None, 0.004, named) and named is not None:
      raise ValueError(
          "Legacy Nadam's `decay` is its schedule_decay (tf_keras's name "
          "for it); pass one of them. Received: "
          f"decay={decay!r}, schedule_decay={schedule_decay!r}")
    schedule_decay = decay
  _checks.check_moment_arguments(beta_1, beta_2, epsilon)
  _checks.check_range("schedule_decay", schedule_decay, 0.0)
  return _nadam.legacy_nadam_update_step(
      beta_1, beta_2, nonzero_epsilon(epsilon), schedule_decay)


@with_legacy_base_arguments(learning_rate=0.001, sparse_rows="rows")
def ftrl(learning_rate_power: float = -0.5,
         initial_accumulator_value: float = 0.1,
         l1_regularization_strength: float = 0.0,
         l2_regularization_strength: float = 0.0,
         l2_shrinkage_regularization_strength: float = 0.0,
         beta: float = 0.0, lr: float | None = None) -> UpdateStep:
  """FTRL-Proximal, as `tf_keras.optimizers.legacy.Ftrl` (the
  ResourceApplyFtrl(V2) kernels): the formula of `jaxopt_port.ftrl`, slots
  `accumulator` and `linear`. On sparse gradients the native optimizer
  updates only the touched rows (the bridge too).

  Its step reads slots as they were before it: pass `applied_as_is=True` to
  `update` where the updates go to the params as they are (README, Speed).

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    learning_rate_power: <= 0.
    initial_accumulator_value, l1_regularization_strength,
    l2_regularization_strength, l2_shrinkage_regularization_strength, beta:
      >= 0.

  tf_keras's Ftrl never reads the `lr` alias (OptimizerV2 accepts and drops
  it, so it would train at the default rate): `lr` is refused here.
  """
  if lr is not None:
    raise ValueError(
        "Legacy Ftrl ignores the `lr` alias (tf_keras reads only "
        f"`learning_rate`); pass learning_rate={lr!r} instead.")
  _ftrl.check_ftrl_arguments(learning_rate_power, initial_accumulator_value,
                             l1_regularization_strength,
                             l2_regularization_strength,
                             l2_shrinkage_regularization_strength, beta)
  return _ftrl.ftrl_update_step(
      learning_rate_power, initial_accumulator_value,
      l1_regularization_strength, l2_regularization_strength,
      l2_shrinkage_regularization_strength, beta, sqrt_for_half_power=True)


@with_legacy_base_arguments(learning_rate=0.01, sparse_rows="rows")
def vanilla_sgd() -> UpdateStep:
  """`jaxopt_port.vanilla_sgd` as an OptimizerV2 subclass computes it
  (with `_decayed_lr`: `decay` and `lr` apply).

  Args:
    learning_rate: A float or a schedule. Defaults to 0.01.
  """
  return _classic.vanilla_sgd_update_step()


@with_legacy_base_arguments(learning_rate=0.01)
def momentum_sgd(momentum: float = 0.0) -> UpdateStep:
  """`jaxopt_port.momentum_sgd` as an OptimizerV2 subclass computes it.

  Args:
    learning_rate: A float or a schedule. Defaults to 0.01.
    momentum: In [0, 1).
  """
  _checks.check_range("momentum", momentum, 0.0, 1.0, high_open=True)
  return _classic.momentum_sgd_update_step(momentum, bias_corrected=False)


@with_legacy_base_arguments(learning_rate=0.01)
def centered_momentum_sgd(momentum: float = 0.0) -> UpdateStep:
  """`jaxopt_port.centered_momentum_sgd` as an OptimizerV2 subclass computes it.

  Args:
    learning_rate: A float or a schedule. Defaults to 0.01.
    momentum: In [0, 1).
  """
  _checks.check_range("momentum", momentum, 0.0, 1.0, high_open=True)
  return _classic.momentum_sgd_update_step(momentum, bias_corrected=True)


@with_legacy_base_arguments(learning_rate=REQUIRED, sparse_rows="rows")
def adagrad_decay(initial_accumulator_value: float = 0.1,
                  accumulator_decay_step: int = 100000,
                  accumulator_decay_rate: float = 0.9) -> UpdateStep:
  """AdagradDecay as a hand-written OptimizerV2 subclass computes it: the
  formula of `jaxopt_port.adagrad_decay`, with OptimizerV2's `decay` and
  `lr`.

  Args:
    learning_rate: A float or a schedule (required).
    initial_accumulator_value, accumulator_decay_step, accumulator_decay_rate:
      As in `jaxopt_port.adagrad_decay`.
  """
  _adagrad.check_adagrad_decay_arguments(
      initial_accumulator_value, accumulator_decay_step, accumulator_decay_rate)
  return _adagrad.adagrad_decay_update_step(
      initial_accumulator_value, accumulator_decay_step, accumulator_decay_rate)
