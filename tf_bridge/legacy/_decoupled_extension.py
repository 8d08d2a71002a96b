"""TF Addons' `DecoupledWeightDecayExtension`, for OptimizerV2 classes the
bridge does not run: a user's own OptimizerV2, or any class whose algorithm
has no port. The decay is TensorFlow ops before the base's own kernel, as
TFA's mixin has it; a bridged class decays inside its XLA call instead
(`extend_with_decoupled_weight_decay`).
"""

from __future__ import annotations

import re
from typing import Any

import tensorflow as tf
import tf_keras


class DecoupledWeightDecayExtension:
  """Decoupled weight decay (Loshchilov and Hutter, 2019) for an OptimizerV2
  class, as `tfa.optimizers.DecoupledWeightDecayExtension`: the first base
  of a class such as

      class MyAdamW(DecoupledWeightDecayExtension,
                    tf_keras.optimizers.legacy.Adam):
        def __init__(self, weight_decay, *args, **kwargs):
          super().__init__(weight_decay, *args, **kwargs)

  Each step first decays a variable, `var <- var - weight_decay * var`
  (only the touched rows of a sparse gradient), then runs the base's
  update. `apply_gradients` and `minimize` take `decay_var_list`, the
  variables decayed in that step (all when None or empty, unless
  `exclude_from_weight_decay` excludes some by `re.search` on their names).

  Args:
    weight_decay: A float, a tensor, a callable, or a
      `LearningRateSchedule` (evaluated at `iterations`).
    exclude_from_weight_decay: Regular expressions; variables whose name
      one matches are not decayed (when no `decay_var_list` is given).
    **kwargs: The base class's arguments.

  Raises:
    TypeError: At the class statement, for a bridged base class: its
      decay runs in its XLA call, through
      `extend_with_decoupled_weight_decay(base)`.
  """

  def __init_subclass__(cls, **kwargs: Any) -> None:
    super().__init_subclass__(**kwargs)
    bridged = [base.__name__ for base in cls.__mro__
               if getattr(base, "port", None) is not None
               and getattr(base, "_fused_class", False)]
    if bridged:
      raise TypeError(
          f"{cls.__name__}: DecoupledWeightDecayExtension decays a native "
          f"OptimizerV2 class's variables in TensorFlow ops; {bridged[-1]} "
          "is a bridged class. Use tf_bridge.legacy.addons."
          f"extend_with_decoupled_weight_decay({bridged[-1]}), whose decay "
          "runs in its XLA call.")

  def __init__(self, weight_decay: Any, exclude_from_weight_decay=None,
               **kwargs: Any) -> None:
    weight_decay = kwargs.pop("weight_decay", weight_decay)
    super().__init__(**kwargs)
    self._decay_var_list = None  # Refs; set by each apply_gradients.
    self._set_hyper("weight_decay", weight_decay)
    self.exclude_from_weight_decay = exclude_from_weight_decay

  def get_config(self) -> dict[str, Any]:
    return {**super().get_config(),
            "weight_decay": self._serialize_hyperparameter("weight_decay"),
            "exclude_from_weight_decay": self.exclude_from_weight_decay}

  @classmethod
  def from_config(cls, config: dict[str, Any], custom_objects=None):
    config = dict(config)
    for key in ("learning_rate", "weight_decay"):
      if isinstance(config.get(key), dict):
        config[key] = tf_keras.optimizers.schedules.deserialize(
            config[key], custom_objects=custom_objects)
    return cls(**config)

  def minimize(self, loss, var_list, grad_loss=None, name=None,
               decay_var_list=None, tape=None):
    # TFA 0.23's `minimize` lost `decay_var_list`: OptimizerV2's calls
    # `apply_gradients` without it. Here it is passed on.
    grads_and_vars = self._compute_gradients(
        loss, var_list=var_list, grad_loss=grad_loss, tape=tape)
    return self.apply_gradients(grads_and_vars, name=name,
                                decay_var_list=decay_var_list)

  def apply_gradients(self, grads_and_vars, name=None, decay_var_list=None,
                      **kwargs):
    grads_and_vars = list(grads_and_vars)
    self._set_decay_var_list([v for _, v in grads_and_vars], decay_var_list)
    return super().apply_gradients(grads_and_vars, name=name, **kwargs)

  def _set_decay_var_list(self, var_list, decay_var_list=None) -> None:
    if decay_var_list:
      self._decay_var_list = {v.ref() for v in decay_var_list}
    elif self.exclude_from_weight_decay:
      if callable(var_list):
        var_list = var_list()
      self._decay_var_list = {
          v.ref() for v in var_list
          if not any(re.search(pattern, v.name)
                     for pattern in self.exclude_from_weight_decay)}
    else:
      self._decay_var_list = None

  def _decays(self, var) -> bool:
    return self._decay_var_list is None or var.ref() in self._decay_var_list

  def _prepare_local(self, var_device, var_dtype, apply_state):
    super()._prepare_local(var_device, var_dtype, apply_state)
    weight_decay = self._get_hyper("weight_decay", var_dtype)
    if isinstance(weight_decay,
                  tf_keras.optimizers.schedules.LearningRateSchedule):
      weight_decay = tf.cast(weight_decay(self.iterations), var_dtype)
    apply_state[(var_device, var_dtype)]["wd_t"] = tf.identity(weight_decay)

  def _weight_decay(self, var, apply_state):
    key = (var.device, var.dtype.base_dtype)
    coefficients = ((apply_state or {}).get(key)
                    or self._fallback_apply_state(*key))
    return coefficients["wd_t"]

  def _resource_apply_dense(self, grad, var, apply_state=None):
    decay = (var.assign_sub(self._weight_decay(var, apply_state) * var,
                            self._use_locking)
             if self._decays(var) else tf.no_op())
    with tf.control_dependencies([decay]):
      return super()._resource_apply_dense(grad, var, apply_state=apply_state)

  def _resource_apply_sparse(self, grad, var, indices, apply_state=None):
    decay = (self._resource_scatter_add(
        var, indices,
        -self._weight_decay(var, apply_state) * tf.gather(var, indices))
             if self._decays(var) else tf.no_op())
    with tf.control_dependencies([decay]):
      return super()._resource_apply_sparse(grad, var, indices,
                                            apply_state=apply_state)
