"""Hugging Face transformers' TF optimization (`optimization_tf.py`, removed
in transformers 5): `AdamWeightDecay`, the `WarmUp` schedule and
`create_optimizer`."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import optax

from jaxopt_port import _adam, _adam_weight_decay, _checks, schedules
from jaxopt_port._base import UpdateStep, with_legacy_base_arguments


@with_legacy_base_arguments(learning_rate=0.001)
def adam_weight_decay(
    beta_1: float = 0.9, beta_2: float = 0.999, epsilon: float = 1e-7,
    amsgrad: bool = False, weight_decay_rate: float = 0.0,
    include_in_weight_decay: Sequence[str] | None = None,
    exclude_from_weight_decay: Sequence[str] | None = None) -> UpdateStep:
  """AdamWeightDecay, as Hugging Face's `transformers.AdamWeightDecay` (TF).

  With `lr` the learning rate at this step::

    p = p - lr * p * weight_decay_rate         (the parameters that decay)
    p = <tf_keras legacy Adam step>            (`jaxopt_port.legacy.adam`)

  A parameter decays unless the rate is 0 or a string of
  `exclude_from_weight_decay` is a substring of its name (its tree path,
  `dense/bias`; the bridge gives the variable's name); a string of
  `include_in_weight_decay` in its name makes it decay anyway. Sparse
  gradients decay every row, as dense ones.

  Args:
    learning_rate: A float or a schedule (`jaxopt_port.hf.WarmUp`).
      Defaults to 0.001.
    beta_1, beta_2, epsilon, amsgrad: As `jaxopt_port.legacy.adam`.
    weight_decay_rate: >= 0.
    include_in_weight_decay, exclude_from_weight_decay: Substrings of
      parameter names, or None.

  Reference: Loshchilov and Hutter, 2019, "Decoupled Weight Decay
  Regularization"; Hugging Face transformers 4.57, `optimization_tf.py`.
  """
  _checks.check_range("weight_decay_rate", weight_decay_rate, 0.0)
  return _adam_weight_decay.with_scaled_decay(
      _adam_weight_decay.legacy_adam_step(beta_1, beta_2, epsilon, amsgrad),
      weight_decay_rate, _adam_weight_decay.decays_by_name(
          weight_decay_rate,
          _adam_weight_decay.found_in(include_in_weight_decay),
          _adam_weight_decay.found_in(exclude_from_weight_decay)))


@dataclasses.dataclass(frozen=True)
class WarmUp:
  """`transformers.WarmUp`: a polynomial warm-up, then `decay_schedule_fn`::

    lr = initial_learning_rate * (step / warmup_steps) ** power
                                                  (step < warmup_steps)
    lr = decay_schedule_fn(step - warmup_steps)   (after)

  Args:
    initial_learning_rate: The rate at the end of the warm-up.
    decay_schedule_fn: A schedule (a callable of the step count).
    warmup_steps: > 0.
    power: 1.0 warms up linearly.
    name: Kept for the config, as Hugging Face's.
  """
  initial_learning_rate: float
  decay_schedule_fn: Callable[[jax.Array], jax.Array]
  warmup_steps: int
  power: float = 1.0
  name: str | None = None

  def __post_init__(self):
    _checks.check_range("warmup_steps", self.warmup_steps, 0.0,
                        low_open=True)

  def __call__(self, step: jax.Array) -> jax.Array:
    step_float = jnp.asarray(step, jnp.float32)
    warmup_steps = jnp.asarray(self.warmup_steps, jnp.float32)
    warmup_rate = jnp.asarray(self.initial_learning_rate, jnp.float32) * (
        jnp.power(step_float / warmup_steps,
                  jnp.asarray(self.power, jnp.float32)))
    return jnp.where(step_float < warmup_steps, warmup_rate,
                     self.decay_schedule_fn(step - self.warmup_steps))

  def get_config(self) -> dict[str, Any]:
    return {field.name: getattr(self, field.name)
            for field in dataclasses.fields(self)}


def create_optimizer(init_lr: float, num_train_steps: int,
                     num_warmup_steps: int, min_lr_ratio: float = 0.0,
                     adam_beta1: float = 0.9, adam_beta2: float = 0.999,
                     adam_epsilon: float = 1e-8,
                     adam_clipnorm: float | None = None,
                     adam_global_clipnorm: float | None = None,
                     weight_decay_rate: float = 0.0, power: float = 1.0,
                     include_in_weight_decay: Sequence[str] | None = None
                     ) -> optax.GradientTransformationExtraArgs:
  """`transformers.create_optimizer`'s optimizer, as a transform.

  The learning rate decays polynomially (`power`) from `init_lr` to
  `init_lr * min_lr_ratio` over `num_train_steps - num_warmup_steps` steps,
  after a linear `WarmUp` of `num_warmup_steps` (if any). With a
  `weight_decay_rate` > 0 the optimizer is `adam_weight_decay`, excluding
  the names holding `LayerNorm`, `layer_norm` or `bias` (unless
  `include_in_weight_decay` names them); otherwise it is
  `tf_keras.optimizers.Adam`, whose numbers are Keras 3's:
  `jaxopt_port.adam`. `adam_clipnorm` clips each gradient's norm,
  `adam_global_clipnorm` their global norm.
  """
  schedule: Any = schedules.PolynomialDecay(
      initial_learning_rate=init_lr,
      decay_steps=num_train_steps - num_warmup_steps,
      end_learning_rate=init_lr * min_lr_ratio, power=power)
  if num_warmup_steps:
    schedule = WarmUp(initial_learning_rate=init_lr,
                      decay_schedule_fn=schedule,
                      warmup_steps=num_warmup_steps)
  clipping = {"clipnorm": adam_clipnorm,
              "global_clipnorm": adam_global_clipnorm}
  if weight_decay_rate > 0.0:
    return adam_weight_decay(
        learning_rate=schedule, weight_decay_rate=weight_decay_rate,
        beta_1=adam_beta1, beta_2=adam_beta2, epsilon=adam_epsilon,
        exclude_from_weight_decay=["LayerNorm", "layer_norm", "bias"],
        include_in_weight_decay=include_in_weight_decay, **clipping)
  return _adam.adam(learning_rate=schedule, beta_1=adam_beta1,
                    beta_2=adam_beta2, epsilon=adam_epsilon, **clipping)
