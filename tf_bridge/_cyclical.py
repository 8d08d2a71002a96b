"""TF Addons' cyclical learning-rate schedules, in TensorFlow.

A schedule given to an optimizer is evaluated by that optimizer, native or
bridged, in TensorFlow, so these are Keras `LearningRateSchedule`s computing
with TensorFlow ops in TFA's order (the same kernels, so the same floats as
`tfa.optimizers.CyclicalLearningRate`); `jaxopt_port.schedules` has them for
JAX. The classes below are mixins: `tf_bridge.legacy.addons` puts them on
tf_keras's `LearningRateSchedule` (ops from `tensorflow`), `tf_bridge.addons`
on Keras 3's (ops from `keras.ops`).
"""

from __future__ import annotations

from typing import Any, Callable

from jaxopt_port import schedules


class Cyclical:
  """`tfa.optimizers.CyclicalLearningRate`::

    cycle = floor(1 + step / (2 * step_size))
    x = |step / step_size - 2 * cycle + 1|
    lr = initial + (maximal - initial) * max(0, 1 - x) * scale_fn(cycle or step)

  `scale_fn` takes the cycle number, or the step with
  `scale_mode="iterations"`. Reference: Smith, 2017, "Cyclical Learning
  Rates for Training Neural Networks".
  """
  _ops: Any  # `tensorflow` or `keras.ops`: set by each generation's class.
  _scale_fn_in_config = True  # Not for the named policies (as TFA).

  def __init__(self, initial_learning_rate: Any, maximal_learning_rate: Any,
               step_size: Any, scale_fn: Callable[[Any], Any],
               scale_mode: str = "cycle", name: str = "CyclicalLearningRate"):
    super().__init__()
    schedules.check_scale_mode(scale_mode)
    self.initial_learning_rate = initial_learning_rate
    self.maximal_learning_rate = maximal_learning_rate
    self.step_size = step_size
    self.scale_fn = scale_fn
    self.scale_mode = scale_mode
    self.name = name

  def __call__(self, step: Any) -> Any:
    ops = self._ops
    initial = ops.convert_to_tensor(self.initial_learning_rate)
    dtype = initial.dtype
    maximal = ops.cast(self.maximal_learning_rate, dtype)
    step_size = ops.cast(self.step_size, dtype)
    step_as_dtype = ops.cast(step, dtype)
    cycle = ops.floor(1 + step_as_dtype / (2 * step_size))
    x = ops.abs(step_as_dtype / step_size - 2 * cycle + 1)
    # As TFA, `scale_fn` gets a Python number as it came (TFA's golden
    # values are computed so); a tensor in the dtype (Keras 3's int64
    # `iterations`, which `gamma ** step` could not take).
    mode_step = (cycle if self.scale_mode == "cycle" else
                 step if isinstance(step, (int, float)) else step_as_dtype)
    return initial + (maximal - initial) * ops.maximum(
        ops.cast(0, dtype), 1 - x) * self.scale_fn(mode_step)

  def get_config(self) -> dict[str, Any]:
    config = {"initial_learning_rate": self.initial_learning_rate,
              "maximal_learning_rate": self.maximal_learning_rate,
              "scale_fn": self.scale_fn, "step_size": self.step_size,
              "scale_mode": self.scale_mode}
    if not self._scale_fn_in_config:
      del config["scale_fn"]
    return config


class Triangular(Cyclical):
  """TFA's `TriangularCyclicalLearningRate`: scale 1."""
  _scale_fn_in_config = False

  def __init__(self, initial_learning_rate: Any, maximal_learning_rate: Any,
               step_size: Any, scale_mode: str = "cycle",
               name: str = "TriangularCyclicalLearningRate"):
    super().__init__(initial_learning_rate, maximal_learning_rate, step_size,
                     lambda x: 1.0, scale_mode, name)


class Triangular2(Cyclical):
  """TFA's `Triangular2CyclicalLearningRate`: the amplitude halves every
  cycle, scale `1 / 2**(cycle - 1)`."""
  _scale_fn_in_config = False

  def __init__(self, initial_learning_rate: Any, maximal_learning_rate: Any,
               step_size: Any, scale_mode: str = "cycle",
               name: str = "Triangular2CyclicalLearningRate"):
    super().__init__(initial_learning_rate, maximal_learning_rate, step_size,
                     lambda x: 1 / (2.0 ** (x - 1)), scale_mode, name)


class Exponential(Cyclical):
  """TFA's `ExponentialCyclicalLearningRate`: scale `gamma ** step`."""
  _scale_fn_in_config = False

  def __init__(self, initial_learning_rate: Any, maximal_learning_rate: Any,
               step_size: Any, scale_mode: str = "iterations",
               gamma: float = 1.0,
               name: str = "ExponentialCyclicalLearningRate"):
    self.gamma = gamma
    super().__init__(initial_learning_rate, maximal_learning_rate, step_size,
                     lambda x: gamma ** x, scale_mode, name)

  def get_config(self) -> dict[str, Any]:
    return {**super().get_config(), "gamma": self.gamma}
