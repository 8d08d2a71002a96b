"""TF Model Garden's learning-rate schedules
(`official.modeling.optimization.lr_schedule`), as callables of the step
count computing Model Garden's formulas in float32.

Each class takes its namesake's arguments; a schedule argument
(`after_warmup_lr_sched`) is a JAX schedule or a number.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Sequence, Union

import jax
import jax.numpy as jnp

from jaxopt_port import schedules

Schedule = Union[float, Callable[[jax.Array], jax.Array]]


def _float32(value: Any) -> jax.Array:
  return jnp.asarray(value, jnp.float32)


def _rate_of(schedule: Schedule, step: Any) -> jax.Array:
  return _float32(schedule(step) if callable(schedule) else schedule)


def _with_offset(base: type) -> type:
  """`base` taking an `offset` (keyword) and computing `base(step -
  offset)`, as Model Garden's `_make_offset_wrapper`."""

  def __call__(self, step):
    return base.__call__(self, _float32(step - self.offset))

  name = base.__name__ + "WithOffset"
  cls = dataclasses.dataclass(frozen=True)(type(name, (base,), {
      "__annotations__": {"offset": int}, "offset": 0,
      "__call__": __call__, "__module__": __name__,
      "__doc__": f"Model Garden's `{name}`: `{base.__name__}` of `step - "
                 "offset`."}))
  return cls


PiecewiseConstantDecayWithOffset = _with_offset(
    schedules.PiecewiseConstantDecay)
PolynomialDecayWithOffset = _with_offset(schedules.PolynomialDecay)
ExponentialDecayWithOffset = _with_offset(schedules.ExponentialDecay)
CosineDecayWithOffset = _with_offset(schedules.CosineDecay)


@dataclasses.dataclass(frozen=True)
class LinearWarmup:
  """A linear warm-up from `warmup_learning_rate` to
  `after_warmup_lr_sched(warmup_steps)` over `warmup_steps`, then
  `after_warmup_lr_sched`."""
  after_warmup_lr_sched: Schedule
  warmup_steps: int
  warmup_learning_rate: float
  name: str | None = None

  def __call__(self, step: jax.Array) -> jax.Array:
    step_float = _float32(step)
    start = _float32(self.warmup_learning_rate)
    end = _rate_of(self.after_warmup_lr_sched, self.warmup_steps)
    warming = start + step_float / _float32(self.warmup_steps) * (end - start)
    return jnp.where(step_float < self.warmup_steps, warming,
                     _rate_of(self.after_warmup_lr_sched, step))


@dataclasses.dataclass(frozen=True)
class PolynomialWarmUp:
  """`after_warmup_lr_sched(warmup_steps) * (max(step, 1) / warmup_steps) **
  power` during the warm-up, then `after_warmup_lr_sched`."""
  after_warmup_lr_sched: Schedule
  warmup_steps: int
  power: float = 1.0
  name: str = "PolynomialWarmup"

  def __call__(self, step: jax.Array) -> jax.Array:
    step_float = _float32(step)
    peak = _rate_of(self.after_warmup_lr_sched, self.warmup_steps)
    done = (_float32(1.0) if self.warmup_steps <= 0 else
            jnp.maximum(step_float, 1.0) / _float32(self.warmup_steps))
    warming = peak * jnp.power(done, _float32(self.power))
    return jnp.where(step_float < _float32(self.warmup_steps), warming,
                     _rate_of(self.after_warmup_lr_sched, step))


@dataclasses.dataclass(frozen=True)
class DirectPowerDecay:
  """`initial_learning_rate * max(step, 1) ** power`."""
  initial_learning_rate: float
  power: float = 1.0
  name: str = "DirectPowerDecay"

  def __call__(self, step: jax.Array) -> jax.Array:
    return _float32(self.initial_learning_rate) * jnp.power(
        jnp.maximum(_float32(step), 1.0), _float32(self.power))


@dataclasses.dataclass(frozen=True)
class PowerAndLinearDecay:
  """`initial_learning_rate * max(s, 1) ** power` with `s = step - offset`,
  times a linear decay to 0 over the last `linear_decay_fraction` of
  `total_decay_steps` (never below 0)."""
  initial_learning_rate: float
  total_decay_steps: int
  power: float = 1.0
  linear_decay_fraction: float = 0.1
  offset: int = 0
  name: str = "PowerAndLinearDecay"

  def __call__(self, step: jax.Array) -> jax.Array:
    step = _float32(step - self.offset)
    rate = _float32(self.initial_learning_rate) * jnp.power(
        jnp.maximum(step, 1.0), _float32(self.power))
    decay_steps = self.total_decay_steps * self.linear_decay_fraction
    if decay_steps > 0:
      rate = rate * jnp.minimum(1.0, (self.total_decay_steps - step)
                                / _float32(decay_steps))
      rate = jnp.maximum(0.0, rate)
    return rate


@dataclasses.dataclass(frozen=True)
class PowerDecayWithOffset:
  """`pre_offset_learning_rate` until `offset`, then `initial_learning_rate
  * max(step - offset, 1) ** power`, never above `pre_offset_learning_rate`."""
  initial_learning_rate: float
  power: float = 1.0
  offset: int = 0
  pre_offset_learning_rate: float = 1.0e6
  name: str = "PowerDecayWithOffset"

  def __call__(self, step: jax.Array) -> jax.Array:
    step = _float32(step)
    after = jnp.power(jnp.maximum(step - self.offset, 1.0),
                      _float32(self.power)) * _float32(
                          self.initial_learning_rate)
    after_offset = (step > self.offset).astype(jnp.float32)
    pre = _float32(self.pre_offset_learning_rate)
    combined = (1.0 - after_offset) * pre + after_offset * after
    return jnp.minimum(combined, pre)


@dataclasses.dataclass(frozen=True)
class StepCosineDecayWithOffset:
  """A cosine decay from `values[i]` to `values[i + 1]` (0 after the last)
  between `boundaries[i]` and `boundaries[i + 1]`, of `step - offset`.
  From the last boundary on the rate is NaN, as Model Garden's: its last
  interval has no length to decay over (end training before it)."""
  boundaries: Sequence[int]
  values: Sequence[float]
  offset: int = 0
  name: str = "StepCosineDecayWithOffset"

  def __post_init__(self):
    if len(self.values) < 1:
      raise ValueError(f"Expect non empty {self.values}")
    if len(self.boundaries) != len(self.values):
      raise ValueError(
          "Boundaries length is equal to learning rate levels length"
          f"{len(self.boundaries)} != {len(self.values)}")

  def __call__(self, step: jax.Array) -> jax.Array:
    step = _float32(step - self.offset)
    levels = list(self.values) + [0.0]
    lengths = [later - earlier for earlier, later in
               zip(self.boundaries, self.boundaries[1:])] + [0]
    pi = _float32(math.pi)

    def cosine(level, start):
      return ((levels[level] - levels[level + 1])
              * (jnp.cos(pi * (step - start) / lengths[level]) + 1.0) / 2.0
              + levels[level + 1])

    rate = cosine(0, 0)
    for level in range(1, len(self.values)):
      rate = jnp.where(step >= self.boundaries[level],
                       cosine(level, self.boundaries[level]), rate)
    return rate
