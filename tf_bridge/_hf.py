"""Hugging Face transformers' TF `WarmUp` and `create_optimizer`, for both
hosts.

A schedule given to an optimizer, native or bridged, is evaluated by the
optimizer in TensorFlow, so `WarmUp` is a Keras `LearningRateSchedule`
computing with TensorFlow ops in Hugging Face's order (`jaxopt_port.hf.WarmUp`
is the JAX one). The classes are mixins: `tf_bridge.legacy.hf` puts them on
tf_keras's `LearningRateSchedule` (ops from `tensorflow`), `tf_bridge.hf` on
Keras 3's (ops from `keras.ops`).
"""

from __future__ import annotations

from typing import Any, Callable


class WarmUp:
  """`transformers.WarmUp`: a polynomial warm-up, then `decay_schedule_fn`::

    lr = initial_learning_rate * (step / warmup_steps) ** power
                                                  (step < warmup_steps)
    lr = decay_schedule_fn(step - warmup_steps)   (after)
  """
  _ops: Any  # `tensorflow` or `keras.ops`: set by each host's class.

  def __init__(self, initial_learning_rate: float,
               decay_schedule_fn: Callable[[Any], Any], warmup_steps: int,
               power: float = 1.0, name: str | None = None):
    super().__init__()
    self.initial_learning_rate = initial_learning_rate
    self.warmup_steps = warmup_steps
    self.power = power
    self.decay_schedule_fn = decay_schedule_fn
    self.name = name

  def __call__(self, step: Any) -> Any:
    ops = self._ops
    step_float = ops.cast(step, "float32")
    warmup_steps = ops.cast(self.warmup_steps, "float32")
    warmup_rate = self.initial_learning_rate * (
        (step_float / warmup_steps) ** self.power)
    return ops.cond(step_float < warmup_steps, lambda: warmup_rate,
                    lambda: self.decay_schedule_fn(step - self.warmup_steps))

  def get_config(self) -> dict[str, Any]:
    return {"initial_learning_rate": self.initial_learning_rate,
            "decay_schedule_fn": self.decay_schedule_fn,
            "warmup_steps": self.warmup_steps, "power": self.power,
            "name": self.name}


def create_optimizer_of(library: Any, adam_weight_decay: type, adam: type,
                        warm_up: type) -> Callable[..., tuple[Any, Any]]:
  """`transformers.create_optimizer` making a host's classes: `library`
  (Keras 3 or tf_keras) gives `PolynomialDecay`, `adam` stands for
  `tf_keras.optimizers.Adam` (without weight decay)."""

  def create_optimizer(init_lr: float, num_train_steps: int,
                       num_warmup_steps: int, min_lr_ratio: float = 0.0,
                       adam_beta1: float = 0.9, adam_beta2: float = 0.999,
                       adam_epsilon: float = 1e-8,
                       adam_clipnorm: float | None = None,
                       adam_global_clipnorm: float | None = None,
                       weight_decay_rate: float = 0.0, power: float = 1.0,
                       include_in_weight_decay: list[str] | None = None
                       ) -> tuple[Any, Any]:
    """`transformers.create_optimizer`: returns `(optimizer, schedule)`.

    The learning rate decays polynomially (`power`) from `init_lr` to
    `init_lr * min_lr_ratio` over `num_train_steps - num_warmup_steps`
    steps, after a linear `WarmUp` of `num_warmup_steps` (if any). With a
    `weight_decay_rate` > 0 the optimizer is `AdamWeightDecay`, excluding
    the names holding `LayerNorm`, `layer_norm` or `bias` (unless
    `include_in_weight_decay` names them); otherwise Adam.
    """
    schedule = library.optimizers.schedules.PolynomialDecay(
        initial_learning_rate=init_lr,
        decay_steps=num_train_steps - num_warmup_steps,
        end_learning_rate=init_lr * min_lr_ratio, power=power)
    if num_warmup_steps:
      schedule = warm_up(initial_learning_rate=init_lr,
                         decay_schedule_fn=schedule,
                         warmup_steps=num_warmup_steps)
    arguments = {"learning_rate": schedule, "beta_1": adam_beta1,
                 "beta_2": adam_beta2, "epsilon": adam_epsilon,
                 "clipnorm": adam_clipnorm,
                 "global_clipnorm": adam_global_clipnorm}
    if weight_decay_rate > 0.0:
      return adam_weight_decay(
          **arguments, weight_decay_rate=weight_decay_rate,
          exclude_from_weight_decay=["LayerNorm", "layer_norm", "bias"],
          include_in_weight_decay=include_in_weight_decay), schedule
    return adam(**arguments), schedule

  return create_optimizer
