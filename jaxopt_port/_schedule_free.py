"""Schedule-Free AdamW: `keras.optimizers.ScheduleFreeAdamW`."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxopt_port import _checks
from jaxopt_port._base import (UpdateStep, cast_like, one_minus_in_dtype,
                               with_keras_base_arguments)
from jaxopt_port._tree import map_leaves


class ScheduleFreeSlots(NamedTuple):
  momentum: optax.Params  # z, the sequence the gradient steps move.
  velocity: optax.Params


@with_keras_base_arguments(learning_rate=0.0025)
def schedule_free_adamw(beta_1: float = 0.9, beta_2: float = 0.999,
                        epsilon: float = 1e-8, warmup_steps: int = 0
                        ) -> UpdateStep:
  """Schedule-Free AdamW, as `keras.optimizers.ScheduleFreeAdamW` computes
  on Keras's JAX backend.

  The parameters `y` interpolate between the gradient sequence `z` (Keras's
  "momentum", starting at the parameters) and its running average `x`. With
  `t` the 1-based step and `lr` warmed up as `lr * min(t / warmup_steps, 1)`::

    v = v + (g**2 - v) * (1 - beta_2)
    z' = z - lr * g / (sqrt(v / (1 - beta_2**t)) + epsilon)
    x = (y - (1 - beta_1) * z) / beta_1
    x' = (1 - 1/t) * x + (1/t) * z'
    y' = (1 - beta_1) * z' + beta_1 * x'

  Keras's TensorFlow backend reads `z` after updating it in the line for `x`
  (its `momentum.value` is a live read), and its `build()` loses `z = y`
  inside a `tf.function`; the JAX backend computes the formula above, which
  the port and both bridges follow. Weight decay is Keras's (before the
  step, on `y`); `optax.contrib.schedule_free_adamw` differs (it decays
  inside the step and weights the average by the learning rate).

  Its step reads slots as they were before it: pass `applied_as_is=True` to
  `update` where the updates go to the params as they are (README, Speed).

  Args:
    learning_rate: A float or a schedule. Defaults to 0.0025.
    beta_1: Interpolation between `z` and `x`, in (0, 1).
    beta_2: Decay of the second moment, in [0, 1).
    epsilon: Added to the root, >= 0.
    warmup_steps: Linear learning-rate warmup, an int >= 0.

  Reference: Defazio et al., 2024, "The Road Less Scheduled".
  """
  _checks.check_range("beta_1", beta_1, 0.0, 1.0, low_open=True,
                      high_open=True)  # x is recovered by dividing by it.
  _checks.check_range("beta_2", beta_2, 0.0, 1.0, high_open=True)
  _checks.check_range("epsilon", epsilon, 0.0)
  _checks.check_optional_int("warmup_steps", warmup_steps, 0)

  def build(params):
    return ScheduleFreeSlots(jax.tree.map(jnp.array, params),
                             optax.tree.zeros_like(params))

  def update(grads, slots, params, learning_rate, iteration):
    _checks.require_params(params, "schedule_free_adamw recovers its average "
                           "from the params")
    step = (iteration + 1).astype(jnp.float32)

    def leaf_step(g, y, z, v):
      t = step.astype(g.dtype)
      lr = cast_like(learning_rate, g)
      if not _checks.is_python_zero(warmup_steps):
        lr = lr * jnp.minimum(t / cast_like(warmup_steps, g), 1.0)
      b1 = cast_like(beta_1, g)
      b2 = cast_like(beta_2, g)
      v = v + (jnp.square(g) - v) * one_minus_in_dtype(beta_2, g)
      denominator = jnp.sqrt(v / (1 - jnp.power(b2, t))) + cast_like(
          epsilon, g)
      new_z = z - lr * g / denominator
      weight = 1.0 / t
      x = (y - (1 - b1) * z) / b1
      x = (1 - weight) * x + weight * new_z
      new_y = (1 - b1) * new_z + b1 * x
      return new_y - y, new_z, v

    updates, z, v = map_leaves(leaf_step, 3, grads, params, *slots)
    return updates, ScheduleFreeSlots(z, v)

  return UpdateStep(build, update, elementwise=True, reads_old_slots=True)
