"""TF Addons' wrappers' own surface on the bridged ones: the inner optimizer
as `_optimizer`, `assign_average_vars` for MovingAverage and SWA, and
MovingAverage's `num_updates` types, `shadow_copy` and `swap_weights`; and
Model Garden's `ExponentialMovingAverage`'s on those."""

from __future__ import annotations

import warnings
from typing import Any, Sequence

from tf_bridge._keras3 import tf_variable_of


class OptimizerWrapper:
  """TFA's wrappers (MovingAverage, SWA, Lookahead) keep their inner
  optimizer as `_optimizer` (TFA's `get_config` tests read it)."""

  @property
  def _optimizer(self) -> Any:
    return self._arguments["optimizer"]


class AveragedOptimizer(OptimizerWrapper):
  """TFA's `assign_average_vars` for bridged MovingAverage and SWA."""

  def assign_average_vars(self, var_list: Sequence[Any]) -> Any:
    """Sets each variable of `var_list` to its average from the state (as
    TFA's `AveragedOptimizerWrapper.assign_average_vars`, e.g. before
    evaluating or saving the averaged model). Whatever cannot take an
    average is skipped with TFA's warning: a variable without one, or an
    object that is no variable (`model.variables` holds the weight handlers
    of preprocessing layers such as `TextVectorization`). Returns the
    assignments as one op (what a TF1 session runs)."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    averages = self._fused.averages(self._built_variables() or [],
                                    self._state_variables)
    assignments = []
    for variable in var_list:
      # TFA looks `var.assign` up before the average.
      assign = getattr(variable, "assign", None)
      average = averages.get(id(variable))
      if assign is None or average is None:
        reason = (f"{type(self).__name__} keeps no average of it (it was not "
                  "built for it)." if assign is not None else
                  f"{type(variable).__name__!r} object has no attribute "
                  "'assign'")
        warnings.warn(f"Unable to assign average slot to {variable} : "
                      f"{reason}", stacklevel=2)
        continue
      assignments.append(assign(average))
    return tf.group(assignments)


def tfa_num_updates(value: Any) -> Any:
  """TFA MovingAverage's `num_updates`: None, an int, or an integer tensor
  or variable (read once, as TFA fixes the decay at construction), as a
  Python int; other types are refused with TFA's TypeError."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  if value is None or isinstance(value, int):
    return value
  if not (tf.is_tensor(value) or isinstance(value, tf.Variable)):
    raise TypeError(
        'type of argument "num_updates" must be one of (NoneType, int, '
        "tensorflow.python.ops.variables.Variable); got "
        f"{type(value).__name__} instead")
  tf.debugging.assert_integer(
      value, f'type of argument "num_updates" must be int; got '
      f"{value.dtype} instead")
  with tf.init_scope():
    number = (value.numpy() if tf.executing_eagerly()
              else tf.get_static_value(value))
  if number is None:
    raise ValueError("`num_updates` must have a value when the optimizer is "
                     f"made (TFA reads it then); {value!r} has none yet.")
  return int(number)


class MovingAverageWeights(AveragedOptimizer):
  """TFA MovingAverage's `num_updates` types, `shadow_copy`,
  `has_shadow_copy` and `swap_weights`, on the averages the fused step
  keeps."""
  _swap_outside_a_strategy = ("Swapping weights must occur under a "
                              "tf.distribute.Strategy")

  @classmethod
  def _bound_arguments(cls, args: tuple, kwargs: dict[str, Any],
                       registered: Any) -> dict[str, Any]:
    bound = super()._bound_arguments(  # type: ignore[misc]
        args, kwargs, registered)
    if "num_updates" in bound:
      bound["num_updates"] = tfa_num_updates(bound["num_updates"])
    return bound

  def shadow_copy(self, model_weights: Sequence[Any]) -> None:
    """Creates the averages of `model_weights` before any step, at zero as
    TFA's `shadow_copy` does (a first step's build starts them at the
    weights instead)."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    self._build_for(list(model_weights))
    averages = self._fused.averages(self._built_variables(),
                                    self._state_variables)
    for variable in model_weights:
      average = tf_variable_of(averages[id(variable)])
      average.assign(tf.zeros_like(average))

  @property
  def has_shadow_copy(self) -> bool:
    """Whether the averages exist (after `shadow_copy` or a first step)."""
    return bool(self._built_variables())

  def swap_weights(self) -> Any:
    """Swaps the weights and their averages, under a `tf.distribute`
    strategy's scope (cross-replica context), as TFA does: `a = a + b; b =
    a - b; a = a - b` on every device, so twice restores both (to float
    rounding, as in TFA)."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    if not tf.distribute.in_cross_replica_context():
      raise ValueError(self._swap_outside_a_strategy)
    variables = list(self._built_variables())
    averages = self._fused.averages(variables, self._state_variables)
    pairs = [(tf_variable_of(averages[id(v)]), tf_variable_of(v))
             for v in variables if id(v) in averages]

    def swap(strategy):
      for average, weight in pairs:
        strategy.extended.update(average, lambda a, b: a.assign_add(b),
                                 args=(weight,))
        strategy.extended.update(weight, lambda b, a: b.assign(a - b),
                                 args=(average,))
        strategy.extended.update(average, lambda a, b: a.assign_sub(b),
                                 args=(weight,))

    return tf.distribute.get_strategy().run(
        tf.function(lambda: tf.distribute.get_replica_context().merge_call(
            swap)))


def garden_start_step(value: Any) -> Any:
  """Model Garden EMA's `start_step`: an int, or what its config holds (a
  float32 tensor of it, or a float), as an int; others are refused."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  if tf.is_tensor(value):
    value = value.numpy().item()
  if isinstance(value, float) and value.is_integer():
    return int(value)
  return value


class GardenMovingAverage(MovingAverageWeights):
  """Model Garden `ExponentialMovingAverage`'s surface on the averages the
  fused step keeps: `shadow_copy(model)` (its trainable variables),
  `start_step` as Model Garden's config holds it, `assign_average_vars` of
  the trainable variables, `swap_weights` with Model Garden's words.

  Model Garden makes the averages only in `shadow_copy` (a step before it
  fails there); here a first step without it makes them, at zeros as
  `shadow_copy` does. Its `trainable_weights_only=False` (averaging a
  model's non-trainable variables too, such as batch-norm statistics,
  which get no gradient) is refused by `shadow_copy`: the fused step
  updates and averages the variables it is given gradients for.
  """
  _swap_outside_a_strategy = ("Swapping weights must occur under a "
                              "tf.distribute.Strategy.")

  def _omitted_from_config(self) -> tuple[str, ...]:
    # As Model Garden's config (True is the only value taken here).
    return ("trainable_weights_only",)

  @classmethod
  def _bound_arguments(cls, args: tuple, kwargs: dict[str, Any],
                       registered: Any) -> dict[str, Any]:
    bound = super()._bound_arguments(args, kwargs, registered)
    if "start_step" in bound:
      bound["start_step"] = garden_start_step(bound["start_step"])
    return bound

  def shadow_copy(self, model: Any) -> None:
    """Creates the averages of `model`'s trainable variables, at zero."""
    if not self._arguments["trainable_weights_only"]:
      raise NotImplementedError(
          f"{type(self).__name__}(trainable_weights_only=False) would "
          "average the model's non-trainable variables too, which get no "
          "gradient: the bridged class averages the trainable ones only "
          "(Model Garden's default). Use trainable_weights_only=True.")
    super().shadow_copy(model.trainable_variables)

  def assign_average_vars(self, var_list: Sequence[Any]) -> Any:
    """Sets each trainable variable of `var_list` to its average (Model
    Garden skips the others); returns the assignments as one op."""
    return super().assign_average_vars([v for v in var_list if v.trainable])
