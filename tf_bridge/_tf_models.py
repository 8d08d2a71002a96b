"""TF Model Garden's learning-rate schedules
(`official.modeling.optimization.lr_schedule`), for both hosts.

A schedule given to an optimizer, native or bridged, is evaluated by the
optimizer in TensorFlow, so these are Keras `LearningRateSchedule`s computing
with TensorFlow ops in Model Garden's order (the same kernels, so the same
floats); `jaxopt_port.tf_models` has them for JAX. The classes are mixins:
`tf_bridge.legacy.tf_models` puts them on tf_keras's `LearningRateSchedule`
(ops from `tensorflow`), `tf_bridge.tf_models` on Keras 3's (ops from
`keras.ops`). The `...WithOffset` twins of Keras's own schedules are made
by `with_offset` from the host's class.

A schedule inside a schedule (`after_warmup_lr_sched`) is serialized in the
config with its class, so `from_config` rebuilds it (Model Garden's config
holds its bare config, which no `from_config` can rebuild).
"""

from __future__ import annotations

import math
from typing import Any


class _GardenSchedule:
  """What the hosts set: `_ops` (`tensorflow` or `keras.ops`) and
  `_schedules` (the host's `optimizers.schedules`, to serialize a schedule
  argument)."""
  _ops: Any
  _schedules: Any

  def _float32(self, value: Any) -> Any:
    return self._ops.cast(value, "float32")

  def _serialized(self, value: Any) -> Any:
    if isinstance(value, self._schedules.LearningRateSchedule):
      return self._schedules.serialize(value)
    return value

  @classmethod
  def from_config(cls, config: dict[str, Any]) -> Any:
    config = dict(config)
    inner = config.get("after_warmup_lr_sched")
    if isinstance(inner, dict):
      config["after_warmup_lr_sched"] = cls._schedules.deserialize(inner)
    return cls(**config)


class _Warmup(_GardenSchedule):
  """A warm-up ending where `after_warmup_lr_sched` (a schedule or a
  number) takes over, at `warmup_steps`."""

  def _after_warmup(self, step: Any) -> Any:
    after = self.after_warmup_lr_sched
    if isinstance(after, self._schedules.LearningRateSchedule):
      return after(step)
    return self._float32(after)


class LinearWarmup(_Warmup):
  """Model Garden's `LinearWarmup`: from `warmup_learning_rate` linearly to
  the rate `after_warmup_lr_sched` has at `warmup_steps`, then that
  schedule::

    lr = warmup_learning_rate + step / warmup_steps
         * (after_warmup_lr_sched(warmup_steps) - warmup_learning_rate)
  """

  def __init__(self, after_warmup_lr_sched: Any, warmup_steps: int,
               warmup_learning_rate: float, name: str | None = None):
    super().__init__()
    self.after_warmup_lr_sched = after_warmup_lr_sched
    self.warmup_steps = warmup_steps
    self.warmup_learning_rate = warmup_learning_rate
    self.name = name

  def __call__(self, step: Any) -> Any:
    ops = self._ops
    global_step = self._float32(step)
    final = self._after_warmup(self.warmup_steps)
    warming = self.warmup_learning_rate + global_step / self.warmup_steps * (
        final - self.warmup_learning_rate)
    return ops.cond(global_step < self.warmup_steps, lambda: warming,
                    lambda: self._after_warmup(step))

  def get_config(self) -> dict[str, Any]:
    return {"after_warmup_lr_sched": self._serialized(
        self.after_warmup_lr_sched), "warmup_steps": self.warmup_steps,
            "warmup_learning_rate": self.warmup_learning_rate,
            "name": self.name}


class PolynomialWarmUp(_Warmup):
  """Model Garden's `PolynomialWarmUp`: up to `warmup_steps`, the rate
  `after_warmup_lr_sched` has there times `(max(step, 1) / warmup_steps) **
  power`; then that schedule."""

  def __init__(self, after_warmup_lr_sched: Any, warmup_steps: int,
               power: float = 1.0, name: str = "PolynomialWarmup"):
    super().__init__()
    self.after_warmup_lr_sched = after_warmup_lr_sched
    self.warmup_steps = warmup_steps
    self.power = power
    self.name = name

  def __call__(self, step: Any) -> Any:
    ops = self._ops
    global_step = self._float32(step)
    warmup_steps = self._float32(self.warmup_steps)
    if self.warmup_steps <= 0:
      done = 1.0
    else:
      done = ops.maximum(global_step, 1.0) / warmup_steps
    warming = self._after_warmup(self.warmup_steps) * (
        self._float32(done) ** self.power)
    return ops.cond(global_step < warmup_steps, lambda: warming,
                    lambda: self._after_warmup(step))

  def get_config(self) -> dict[str, Any]:
    return {"after_warmup_lr_sched": self._serialized(
        self.after_warmup_lr_sched), "warmup_steps": self.warmup_steps,
            "power": self.power, "name": self.name}


class DirectPowerDecay(_GardenSchedule):
  """Model Garden's `DirectPowerDecay`: `initial_learning_rate *
  max(step, 1) ** power`."""

  def __init__(self, initial_learning_rate: float, power: float = 1.0,
               name: str = "DirectPowerDecay"):
    super().__init__()
    self.initial_learning_rate = initial_learning_rate
    self.power = power
    self.name = name

  def __call__(self, step: Any) -> Any:
    step = self._float32(step)
    return self.initial_learning_rate * (
        self._ops.maximum(step, 1.0) ** self.power)

  def get_config(self) -> dict[str, Any]:
    return {"initial_learning_rate": self.initial_learning_rate,
            "power": self.power, "name": self.name}


class PowerAndLinearDecay(_GardenSchedule):
  """Model Garden's `PowerAndLinearDecay`: with `s = step - offset`,
  `initial_learning_rate * max(s, 1) ** power`, times a linear decay to 0
  over the last `linear_decay_fraction` of `total_decay_steps`::

    lr = lr * min(1, (total_decay_steps - s)
                     / (total_decay_steps * linear_decay_fraction))
  """

  def __init__(self, initial_learning_rate: float, total_decay_steps: int,
               power: float = 1.0, linear_decay_fraction: float = 0.1,
               offset: int = 0, name: str = "PowerAndLinearDecay"):
    super().__init__()
    self.initial_learning_rate = initial_learning_rate
    self.total_decay_steps = total_decay_steps
    self.power = power
    self.linear_decay_fraction = linear_decay_fraction
    self.offset = offset
    self.name = name

  def __call__(self, step: Any) -> Any:
    ops = self._ops
    step = self._float32(step - self.offset)
    rate = self.initial_learning_rate * (ops.maximum(step, 1.0) ** self.power)
    linear_steps = self.total_decay_steps * self.linear_decay_fraction
    if linear_steps > 0:
      rate = rate * ops.minimum(
          1.0, (self.total_decay_steps - step) / linear_steps)
      rate = ops.maximum(0.0, rate)
    return rate

  def get_config(self) -> dict[str, Any]:
    return {"initial_learning_rate": self.initial_learning_rate,
            "total_decay_steps": self.total_decay_steps, "power": self.power,
            "linear_decay_fraction": self.linear_decay_fraction,
            "offset": self.offset, "name": self.name}


class PowerDecayWithOffset(_GardenSchedule):
  """Model Garden's `PowerDecayWithOffset`: `pre_offset_learning_rate` up to
  `offset`, then `initial_learning_rate * max(step - offset, 1) ** power`,
  capped by `pre_offset_learning_rate`."""

  def __init__(self, initial_learning_rate: float, power: float = 1.0,
               offset: int = 0, pre_offset_learning_rate: float = 1.0e6,
               name: str = "PowerDecayWithOffset"):
    super().__init__()
    self.initial_learning_rate = initial_learning_rate
    self.power = power
    self.offset = offset
    self.pre_offset_learning_rate = pre_offset_learning_rate
    self.name = name

  def __call__(self, step: Any) -> Any:
    ops = self._ops
    step = self._float32(step)
    after = (ops.maximum(step - self.offset, 1.0) ** self.power
             * self.initial_learning_rate)
    after_offset = self._float32(step > self.offset)
    combined = ((1.0 - after_offset) * self.pre_offset_learning_rate
                + after_offset * after)
    return ops.minimum(combined, self.pre_offset_learning_rate)

  def get_config(self) -> dict[str, Any]:
    return {"initial_learning_rate": self.initial_learning_rate,
            "power": self.power, "offset": self.offset,
            "pre_offset_learning_rate": self.pre_offset_learning_rate,
            "name": self.name}


class StepCosineDecayWithOffset(_GardenSchedule):
  """Model Garden's `StepCosineDecayWithOffset`: from each boundary (of
  `step - offset`) to the next, a cosine decay from its value to the next
  one (to 0 after the last boundary, over no steps, as Model Garden's)."""

  def __init__(self, boundaries: Any, values: Any, offset: int = 0,
               name: str = "StepCosineDecayWithOffset"):
    super().__init__()
    if len(values) < 1:
      raise ValueError(f"Expect non empty {values}")
    if len(boundaries) != len(values):
      raise ValueError(
          "Boundaries length is equal to learning rate levels length"
          f"{len(boundaries)} != {len(values)}")
    self.boundaries = boundaries
    self.values = values
    self.offset = offset
    self.name = name
    self.total_steps = [boundaries[i + 1] - boundaries[i]
                        for i in range(len(boundaries) - 1)] + [0]

  def _cosine(self, step: Any, level: int) -> Any:
    start = self.values[level]
    end = self.values[level + 1] if level + 1 < len(self.values) else 0.0
    since = step if level == 0 else step - self.boundaries[level]
    return (start - end) * (self._ops.cos(
        self._float32(math.pi) * since / self.total_steps[level]) + 1.0
                            ) / 2.0 + end

  def __call__(self, step: Any) -> Any:
    step = self._float32(step - self.offset)
    rate = self._cosine(step, 0)
    for level in range(1, len(self.values)):
      rate = self._ops.where(step >= self.boundaries[level],
                             self._cosine(step, level), rate)
    return rate

  def get_config(self) -> dict[str, Any]:
    return {"boundaries": self.boundaries, "values": self.values,
            "offset": self.offset, "name": self.name}


def with_offset(base: type, ops: Any, module: str) -> type:
  """Model Garden's `<base>WithOffset`: the host's schedule class `base`
  evaluated at `step - offset` (cast to float32), taking `offset` as a
  keyword (first positionally, as Model Garden's); `base_lr_class` is
  `base`. Its config holds `offset` too."""

  def __init__(self, offset: int = 0, **kwargs: Any) -> None:
    base.__init__(self, **kwargs)
    self.offset = offset

  def __call__(self, step: Any) -> Any:
    return base.__call__(self, ops.cast(step - self.offset, "float32"))

  def get_config(self) -> dict[str, Any]:
    return {**base.get_config(self), "offset": self.offset}

  name = base.__name__ + "WithOffset"
  __init__.__doc__ = (
      f"Model Garden's `{name}`: `{base.__name__}(**kwargs)` of `step - "
      "offset`.")
  return type(name, (base,), {
      "__init__": __init__, "__call__": __call__, "get_config": get_config,
      "base_lr_class": base, "__module__": module,
      "__doc__": __init__.__doc__})


OFFSET_BASES = ("PiecewiseConstantDecay", "PolynomialDecay",
                "ExponentialDecay", "CosineDecay")
SCHEDULES = (LinearWarmup, PolynomialWarmUp, DirectPowerDecay,
             PowerAndLinearDecay, PowerDecayWithOffset,
             StepCosineDecayWithOffset)


def schedule_classes(schedules: Any, ops: Any, module: str,
                     register: Any) -> dict[str, type]:
  """Model Garden's ten schedules on a host, by name: the mixins above on
  `schedules.LearningRateSchedule` computing with `ops`, and the offset
  twins of `schedules`' own classes, each passed through `register` (the
  host's `register_keras_serializable(package=module)`)."""
  classes = [type(mixin.__name__, (mixin, schedules.LearningRateSchedule),
                  {"_ops": ops, "_schedules": schedules,
                   "__module__": module, "__doc__": mixin.__doc__})
             for mixin in SCHEDULES]
  classes += [with_offset(getattr(schedules, base), ops, module)
              for base in OFFSET_BASES]
  return {cls.__name__: register(cls) for cls in classes}
