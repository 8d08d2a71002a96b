"""TF Model Garden's `official.modeling.optimization.ema_optimizer.
ExponentialMovingAverage`, for any optax transformation."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax

from jaxopt_port import _checks
from jaxopt_port.addons._wrappers import averaging


@_checks.numbers_checked
def exponential_moving_average(optimizer: optax.GradientTransformation,
                               trainable_weights_only: bool = True,
                               average_decay: float = 0.99,
                               start_step: int = 0,
                               dynamic_decay: bool = True
                               ) -> optax.GradientTransformationExtraArgs:
  """Model Garden's `ExponentialMovingAverage`: an exponential moving average
  of the parameters, kept in the state (read it with
  `jaxopt_port.addons.average_params`).

  After each step of `optimizer`, with `k` the steps taken so far (this one
  included, as Model Garden reads the count after the inner step)::

    decay = 0 if k < start_step, else average_decay, capped by
            (1 + k - start_step) / (10 + k - start_step) with dynamic_decay
    average = average - (1 - decay) * (average - p)

  The average starts at zeros, as Model Garden's `shadow_copy` makes it
  (TF Addons' `MovingAverage` starts it at the params).

  Args:
    optimizer: The transformation whose params are averaged.
    trainable_weights_only: Model Garden averages a model's trainable
      weights only, or all of them; here the params given are averaged.
    average_decay: In [0, 1].
    start_step: Steps before averaging starts (the average copies the
      params until then), an int >= 0.
    dynamic_decay: Ramp the decay up from 0.1.
  """
  del trainable_weights_only
  _checks.check_range("average_decay", average_decay, 0.0, 1.0)
  _checks.check_optional_int("start_step", start_step, 0)

  def new_average(average, params, count):
    step = count.astype(jnp.float32) + 1.0
    since_start = step - jnp.asarray(start_step, jnp.float32)
    decay = jnp.asarray(average_decay, jnp.float32)
    if dynamic_decay:
      decay = jnp.minimum(decay, (1.0 + since_start) / (10.0 + since_start))
    decay = jnp.where(since_start < 0, 0.0, decay)
    return jax.tree.map(
        lambda a, p: a - (1.0 - decay).astype(a.dtype) * (a - p), average,
        params)

  return averaging(optimizer, "exponential_moving_average", new_average,
                   optax.tree.zeros_like)
