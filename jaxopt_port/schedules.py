"""Keras's (and TF Addons' cyclical) learning-rate schedules, as callables of
the step count.

Each class takes the arguments of its `keras.optimizers.schedules` namesake
and computes its formula in float32, as Keras does for a Python-float initial
learning rate, so `schedule(step)` equals Keras's at every step. Pass one as
`learning_rate` to any optimizer in `jaxopt_port`; optax schedules (plain
functions of the count) work too. `get_config()` returns the constructor
arguments.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp

from jaxopt_port._base import divide_exactly

__all__ = [
    "ExponentialDecay", "PiecewiseConstantDecay", "PolynomialDecay",
    "InverseTimeDecay", "CosineDecay", "CosineDecayRestarts",
    "CyclicalLearningRate", "TriangularCyclicalLearningRate",
    "Triangular2CyclicalLearningRate", "ExponentialCyclicalLearningRate",
]


def _float32(value: Any) -> jax.Array:
  return jnp.asarray(value, jnp.float32)


def _check_positive(name: str, value: Any) -> None:
  if value <= 0:
    raise ValueError(f"Argument `{name}` must be > 0. Received: "
                     f"{name}={value}")


def check_scale_mode(scale_mode: str) -> None:
  """The cyclical schedules' `scale_mode`: "cycle" or "iterations" (TFA
  takes any other value as "iterations"; refused here)."""
  if scale_mode not in ("cycle", "iterations"):
    raise ValueError("Argument `scale_mode` must be 'cycle' or "
                     f"'iterations'. Received: scale_mode={scale_mode!r}")


@dataclasses.dataclass(frozen=True)
class _Schedule:
  def get_config(self) -> dict[str, Any]:
    return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class ExponentialDecay(_Schedule):
  """`initial_learning_rate * decay_rate ** (step / decay_steps)`.

  With `staircase`, the exponent is floored (decay in discrete intervals).
  """
  initial_learning_rate: float
  decay_steps: float
  decay_rate: float
  staircase: bool = False

  def __post_init__(self):
    _check_positive("decay_steps", self.decay_steps)

  def __call__(self, step: jax.Array) -> jax.Array:
    p = divide_exactly(_float32(step), self.decay_steps)
    if self.staircase:
      p = jnp.floor(p)
    return _float32(self.initial_learning_rate) * jnp.power(
        _float32(self.decay_rate), p)


@dataclasses.dataclass(frozen=True)
class PiecewiseConstantDecay(_Schedule):
  """`values[0]` while `step <= boundaries[0]`, `values[i + 1]` while
  `boundaries[i] < step <= boundaries[i + 1]`, then `values[-1]`.

  Boundaries are compared in the step's integer type, as Keras casts them.
  """
  boundaries: Sequence[float]
  values: Sequence[float]

  def __post_init__(self):
    if len(self.boundaries) != len(self.values) - 1:
      raise ValueError(
          "The length of boundaries should be 1 less than the length of "
          f"values. Received: boundaries={list(self.boundaries)} of length "
          f"{len(self.boundaries)}, and values={list(self.values)} of length "
          f"{len(self.values)}.")

  def __call__(self, step: jax.Array) -> jax.Array:
    step = jnp.asarray(step)
    boundaries = [jnp.asarray(b).astype(step.dtype) for b in self.boundaries]
    values = [jnp.asarray(v) for v in self.values]
    dtype = values[0].dtype
    result = (step <= boundaries[0]).astype(dtype) * values[0]
    result += (step > boundaries[-1]).astype(dtype) * values[-1]
    for low, high, value in zip(boundaries[:-1], boundaries[1:], values[1:-1]):
      result += ((step > low) & (step <= high)).astype(dtype) * value
    return result


@dataclasses.dataclass(frozen=True)
class PolynomialDecay(_Schedule):
  """`(initial - end) * (1 - step / decay_steps) ** power + end`.

  The step stops at `decay_steps`; with `cycle`, `decay_steps` is instead
  multiplied by `ceil(step / decay_steps)` (1 at step 0).
  """
  initial_learning_rate: float
  decay_steps: float
  end_learning_rate: float = 0.0001
  power: float = 1.0
  cycle: bool = False

  def __post_init__(self):
    _check_positive("decay_steps", self.decay_steps)

  def __call__(self, step: jax.Array) -> jax.Array:
    initial = _float32(self.initial_learning_rate)
    end = _float32(self.end_learning_rate)
    step = _float32(step)
    decay_steps = _float32(self.decay_steps)
    if self.cycle:
      multiplier = jnp.where(step == 0, 1.0,
                             jnp.ceil(divide_exactly(step, self.decay_steps)))
      decay_steps = decay_steps * multiplier
    else:
      step = jnp.minimum(step, decay_steps)
    p = divide_exactly(step, decay_steps)
    return (initial - end) * jnp.power(1 - p, _float32(self.power)) + end


@dataclasses.dataclass(frozen=True)
class InverseTimeDecay(_Schedule):
  """`initial_learning_rate / (1 + decay_rate * step / decay_steps)`.

  With `staircase`, `step / decay_steps` is floored.
  """
  initial_learning_rate: float
  decay_steps: float
  decay_rate: float
  staircase: bool = False

  def __post_init__(self):
    _check_positive("decay_steps", self.decay_steps)

  def __call__(self, step: jax.Array) -> jax.Array:
    p = divide_exactly(_float32(step), self.decay_steps)
    if self.staircase:
      p = jnp.floor(p)
    return _float32(self.initial_learning_rate) / (
        1.0 + _float32(self.decay_rate) * p)


def _cosine(fraction: jax.Array, alpha: Any) -> jax.Array:
  cosine_decayed = 0.5 * (1.0 + jnp.cos(_float32(math.pi) * fraction))
  return (1 - _float32(alpha)) * cosine_decayed + _float32(alpha)


@dataclasses.dataclass(frozen=True)
class CosineDecay(_Schedule):
  """Optional linear warmup, then a cosine decay to `alpha` times the peak.

  Without `warmup_target`: `initial * ((1 - alpha) * 0.5 * (1 + cos(pi *
  min(step, decay_steps) / decay_steps)) + alpha)`. With it, the rate first
  rises linearly from `initial_learning_rate` to `warmup_target` over
  `warmup_steps`, then decays from `warmup_target` over `decay_steps`.
  """
  initial_learning_rate: float
  decay_steps: float
  alpha: float = 0.0
  warmup_target: float | None = None
  warmup_steps: float = 0

  def __post_init__(self):
    _check_positive("decay_steps", self.decay_steps)

  def __call__(self, step: jax.Array) -> jax.Array:
    initial = _float32(self.initial_learning_rate)
    decay_steps = _float32(self.decay_steps)
    step = _float32(step)
    if self.warmup_target is None:
      step = jnp.minimum(step, decay_steps)
      return initial * _cosine(divide_exactly(step, decay_steps), self.alpha)
    target = _float32(self.warmup_target)
    warmup_steps = _float32(self.warmup_steps)
    step = jnp.minimum(step, decay_steps + warmup_steps)
    warming = (target - initial) * divide_exactly(step, warmup_steps) + initial
    decaying = target * _cosine(
        divide_exactly(step - warmup_steps, decay_steps), self.alpha)
    return jnp.where(step < warmup_steps, warming, decaying)


@dataclasses.dataclass(frozen=True)
class CosineDecayRestarts(_Schedule):
  """Cosine decay with warm restarts (SGDR).

  The first period lasts `first_decay_steps`; each next one is `t_mul` times
  longer and starts from `m_mul` times the previous peak.

  Reference: Loshchilov and Hutter, 2017, "SGDR: Stochastic Gradient Descent
  with Warm Restarts".
  """
  initial_learning_rate: float
  first_decay_steps: float
  t_mul: float = 2.0
  m_mul: float = 1.0
  alpha: float = 0.0

  def __post_init__(self):
    _check_positive("first_decay_steps", self.first_decay_steps)

  def __call__(self, step: jax.Array) -> jax.Array:
    fraction = divide_exactly(_float32(step), self.first_decay_steps)
    t_mul = _float32(self.t_mul)
    if self.t_mul == 1.0:
      restart = jnp.floor(fraction)
      fraction = fraction - restart
    else:
      restart = jnp.floor(divide_exactly(
          jnp.log(1.0 - fraction * (1.0 - t_mul)), jnp.log(t_mul)))
      completed = divide_exactly(1.0 - jnp.power(t_mul, restart), 1.0 - t_mul)
      fraction = (fraction - completed) / jnp.power(t_mul, restart)
    m_factor = jnp.power(_float32(self.m_mul), restart)
    cosine_decayed = 0.5 * m_factor * (
        1.0 + jnp.cos(_float32(math.pi) * fraction))
    alpha = _float32(self.alpha)
    return _float32(self.initial_learning_rate) * (
        (1 - alpha) * cosine_decayed + alpha)


@dataclasses.dataclass(frozen=True)
class _Cyclical(_Schedule):
  """TF Addons' cyclical learning rate (`tfa.optimizers.CyclicalLearningRate`)::

    cycle = floor(1 + step / (2 * step_size))
    x = |step / step_size - 2 * cycle + 1|
    lr = initial + (maximal - initial) * max(0, 1 - x) * scale(cycle or step)

  The rate climbs from `initial_learning_rate` to `maximal_learning_rate` in
  `step_size` steps and back; `scale` (of the cycle number, or of the step
  with `scale_mode="iterations"`) shapes the amplitude.

  Reference: Smith, 2017, "Cyclical Learning Rates for Training Neural
  Networks".
  """
  initial_learning_rate: float
  maximal_learning_rate: float
  step_size: float

  def __post_init__(self):
    _check_positive("step_size", self.step_size)
    check_scale_mode(self.scale_mode)

  def _scale(self, mode_step: jax.Array) -> jax.Array:
    raise NotImplementedError

  def __call__(self, step: jax.Array) -> jax.Array:
    step = _float32(step)
    initial = _float32(self.initial_learning_rate)
    cycle = jnp.floor(1 + divide_exactly(step, 2 * self.step_size))
    x = jnp.abs(divide_exactly(step, self.step_size) - 2 * cycle + 1)
    mode_step = cycle if self.scale_mode == "cycle" else step
    return initial + (_float32(self.maximal_learning_rate) - initial) * (
        jnp.maximum(0.0, 1 - x) * self._scale(mode_step))


@dataclasses.dataclass(frozen=True)
class CyclicalLearningRate(_Cyclical):
  """TF Addons' cyclical schedule with your `scale_fn` (see `_Cyclical`)."""
  scale_fn: Callable[[jax.Array], jax.Array]
  scale_mode: str = "cycle"

  def _scale(self, mode_step):
    return self.scale_fn(mode_step)


@dataclasses.dataclass(frozen=True)
class TriangularCyclicalLearningRate(_Cyclical):
  """Constant amplitude: scale 1 (TF Addons' triangular policy)."""
  scale_mode: str = "cycle"

  def _scale(self, mode_step):
    return jnp.ones_like(mode_step)


@dataclasses.dataclass(frozen=True)
class Triangular2CyclicalLearningRate(_Cyclical):
  """The amplitude halves every cycle: scale `1 / 2**(cycle - 1)`."""
  scale_mode: str = "cycle"

  def _scale(self, mode_step):
    return 1 / (2.0 ** (mode_step - 1))


@dataclasses.dataclass(frozen=True)
class ExponentialCyclicalLearningRate(_Cyclical):
  """The amplitude decays as `gamma ** step` (`scale_mode="iterations"`).

  Computed as `exp(step * log(gamma))` with the logarithm taken in float64:
  `gamma` rounded to float32 first (TFA's kernels) is off by up to 3e-8
  relative, and so `gamma ** 500` by 500 times that, which misses TFA's own
  golden values (exact formula, 1e-6) at gamma = 0.996."""
  scale_mode: str = "iterations"
  gamma: float = 1.0

  def _scale(self, mode_step):
    if self.gamma <= 0:
      return _float32(self.gamma) ** mode_step
    return jnp.exp(mode_step * _float32(math.log(self.gamma)))
