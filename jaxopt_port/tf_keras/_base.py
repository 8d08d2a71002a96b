"""tf_keras's 2.11+ base class (`tf_keras.optimizers.Optimizer`) as a
wrapper of an update step: `tf_keras_transform`, and the declaration of
tf_keras's optimizers from Keras 3's update steps."""

from __future__ import annotations

import inspect
from typing import Any, Callable

import optax

from jaxopt_port import _checks
from jaxopt_port._base import (ScalarOrSchedule, UpdateStep, _declare,
                               keras_family_transform)

TF_KERAS_BASE_ARGUMENTS: dict[str, tuple[Any, str]] = {
    "weight_decay": (None, "float | None"),
    "clipnorm": (None, "float | None"),
    "clipvalue": (None, "float | None"),
    "global_clipnorm": (None, "float | None"),
    "use_ema": (False, "bool"),
    "ema_momentum": (0.99, "float"),
    "ema_overwrite_frequency": (None, "int | None"),
    "jit_compile": (True, "bool"),
}

TF_KERAS_BASE_ARGUMENTS_DOC = """
  tf_keras base arguments (keyword-only, as in `tf_keras.optimizers.Optimizer`):
    weight_decay: If set, every step first sets `p = p - p * weight_decay * lr`.
    clipnorm: If set (> 0), each gradient leaf is rescaled so its L2 norm is at
      most `clipnorm`; it wins over the other two.
    global_clipnorm: If set (> 0), all gradients are rescaled together so their
      global L2 norm is at most `global_clipnorm`; not with `clipnorm`.
    clipvalue: If set (> 0) and neither norm is, gradients are clipped
      elementwise to `[-clipvalue, clipvalue]`.
    use_ema: Keep an exponential moving average of the parameters in the state
      (`state.average`), starting from their initial values, as tf_keras does.
    ema_momentum: The average's momentum, in [0, 1]: `average = ema_momentum *
      average + (1 - ema_momentum) * p` after every step.
    ema_overwrite_frequency: With `use_ema`, every this many iterations the
      parameters are overwritten by their average.
    jit_compile: Taken for tf_keras's signature; the step is XLA-compiled
      wherever it is jitted.
"""


def tf_keras_transform(
    update_step: UpdateStep,
    learning_rate: ScalarOrSchedule,
    *,
    weight_decay: Any = None,
    clipnorm: Any = None,
    clipvalue: Any = None,
    global_clipnorm: Any = None,
    use_ema: bool = False,
    ema_momentum: Any = 0.99,
    ema_overwrite_frequency: Any = None,
    jit_compile: bool = True,
    name: str = "optimizer",
) -> optax.GradientTransformationExtraArgs:
  """Wraps `update_step` with tf_keras's 2.11+ base optimizer semantics.

  Per call, in tf_keras's order (`_BaseOptimizer.apply_gradients`): clip (the
  first set of `clipnorm`, `global_clipnorm`, `clipvalue`); apply weight
  decay; run the update step; update the moving average, which starts at
  the initial params (and overwrite the params with it every
  `ema_overwrite_frequency` iterations); count the call. tf_keras's checks
  and words for its arguments.
  """
  del jit_compile
  _checks.check_learning_rate(learning_rate)
  if clipnorm is not None and global_clipnorm is not None:
    raise ValueError(
        "At most one of `clipnorm` and `global_clipnorm` can be set. "
        f"Received: clipnorm={clipnorm}, global_clipnorm={global_clipnorm}.")
  if use_ema:
    _checks.check_range(
        "ema_momentum", ema_momentum, 0.0, 1.0,
        message="`ema_momentum` must be in the range [0, 1]. Received: "
        "ema_momentum={value}")
    if isinstance(ema_overwrite_frequency, bool):  # An int, to tf_keras.
      ema_overwrite_frequency = int(ema_overwrite_frequency)
    frequency = _checks.concrete_number(ema_overwrite_frequency)
    if frequency == 0:  # tf_keras: no overwrite.
      ema_overwrite_frequency = None
    # An int (injected, an integer array), as tf_keras requires.
    elif ema_overwrite_frequency is not None and (
        isinstance(ema_overwrite_frequency, float)
        or (frequency is not None
            and (frequency != int(frequency) or frequency < 1))):
      raise ValueError(
          "`ema_overwrite_frequency` must be an integer > 1 or None. "
          f"Received: ema_overwrite_frequency={ema_overwrite_frequency}")

  def positive(value):
    """tf_keras skips a clip of 0 or less (a traced value applies)."""
    number = _checks.concrete_number(value)
    return None if value is None or (number is not None and number <= 0) else (
        value)

  return keras_family_transform(
      update_step, learning_rate, weight_decay=weight_decay,
      clipnorm=positive(clipnorm), clipvalue=positive(clipvalue),
      global_clipnorm=positive(global_clipnorm), use_ema=use_ema,
      ema_momentum=ema_momentum,
      ema_overwrite_frequency=(ema_overwrite_frequency if use_ema else None),
      average_from_params=True, name=name)


def with_tf_keras_base_arguments(*, learning_rate: float,
                                 sparse_rows: Any, **defaults: Any
                                 ) -> Callable[..., Any]:
  """As `jaxopt_port.with_keras_base_arguments`, with tf_keras's base
  arguments (`TF_KERAS_BASE_ARGUMENTS`) and `tf_keras_transform`."""
  return _declare(tf_keras_transform, TF_KERAS_BASE_ARGUMENTS,
                  TF_KERAS_BASE_ARGUMENTS_DOC, learning_rate, defaults,
                  sparse_rows)


def same_step_as(keras3_port: Callable[..., Any], class_name: str,
                 **defaults: Any) -> Callable[..., Any]:
  """tf_keras's `class_name`, whose update step is `keras3_port`'s (its
  arguments, defaults and numbers) and whose base arguments are tf_keras's
  (with the class's own `defaults`)."""
  make_update_step = keras3_port.make_update_step
  port = with_tf_keras_base_arguments(
      learning_rate=inspect.signature(keras3_port).parameters[
          "learning_rate"].default,
      # The Keras 3 port's own sparse mode at these arguments.
      sparse_rows=lambda **arguments: make_update_step(
          **arguments).sparse_rows, **defaults)(make_update_step)
  port.__doc__ = (
      f"{class_name}, as `tf_keras.optimizers.{class_name}`: the update step "
      f"of `jaxopt_port.{keras3_port.__name__}` (Keras 3's numbers; see its "
      "arguments there) with tf_keras's base arguments.\n"
      + TF_KERAS_BASE_ARGUMENTS_DOC)
  port.__module__ = __name__.rsplit(".", 1)[0]
  return port
