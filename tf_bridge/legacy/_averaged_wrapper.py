"""TF Addons' `AveragedOptimizerWrapper`, the base of averaging wrappers a
user writes around a native OptimizerV2: the inner optimizer's own kernels
run, then the subclass's `average_op` in TensorFlow ops. The bridged
`MovingAverage` and `SWA` are registered as its subclasses; they run the
inner step and the average in one XLA call instead.
"""

from __future__ import annotations

import abc
import warnings
from typing import Any

import tensorflow as tf
import tf_keras

from tf_bridge.legacy._wrapper import InnerOptimizerSurface


class AveragedOptimizerWrapper(InnerOptimizerSurface,
                               tf_keras.optimizers.legacy.Optimizer,
                               metaclass=abc.ABCMeta):
  """An OptimizerV2 that applies an inner optimizer's step, then keeps an
  `average` slot per variable through the subclass's `average_op`, as
  `tfa.optimizers.AveragedOptimizerWrapper`. The inner optimizer shares
  this one's `iterations`, learning rate (`lr`, `learning_rate`) and
  checkpoint; `weights` lists both; `assign_average_vars` copies the
  averages into the variables.

  Args:
    optimizer: A native OptimizerV2, or its name (`"sgd"`). Its kernels run
      here, so a bridged optimizer (whose step is one XLA call) is refused:
      wrap it in `MovingAverage` or `SWA`.
    name: The optimizer's name.
    **kwargs: OptimizerV2's arguments (`clipnorm`, ...).
  """

  def __init__(self, optimizer: Any, name: str = "AverageOptimizer",
               **kwargs: Any) -> None:
    super().__init__(name, **kwargs)
    if isinstance(optimizer, str):
      optimizer = tf_keras.optimizers.get(optimizer,
                                          use_legacy_optimizer=True)
    if not isinstance(optimizer, tf_keras.optimizers.legacy.Optimizer):
      raise TypeError("optimizer is not an object of "
                      "tf.keras.optimizers.legacy.Optimizer")
    if getattr(optimizer, "_fused_class", False):
      raise TypeError(
          f"{type(self).__name__} runs the inner optimizer's own kernels; "
          f"{type(optimizer).__name__} is bridged (its step is one XLA "
          "call). Wrap a native optimizer, or use tf_bridge.legacy.addons."
          "MovingAverage or SWA.")
    self._optimizer = optimizer
    self._track_trackable(self._optimizer, "awg_optimizer")

  @abc.abstractmethod
  def average_op(self, var: Any, average_var: Any,
                 local_apply_state: dict[str, Any]) -> Any:
    """Updates `average_var` from `var` just updated; returns the op."""

  def _create_slots(self, var_list):
    self._optimizer._create_slots(var_list=var_list)  # pylint: disable=protected-access
    for var in var_list:
      self.add_slot(var, "average")

  def _prepare_local(self, var_device, var_dtype, apply_state):
    return self._optimizer._prepare_local(var_device, var_dtype, apply_state)  # pylint: disable=protected-access

  def _then_average(self, train_op, var, apply_state):
    key = (var.device, var.dtype.base_dtype)
    local = ((apply_state or {}).get(key)
             or self._fallback_apply_state(*key))
    return tf.group(train_op, self.average_op(
        var, self.get_slot(var, "average"), local))

  def _inner_kernel(self, kernel_name, apply_args, *args, apply_state):
    kernel = getattr(self._optimizer, kernel_name)
    if "apply_state" in apply_args:
      return kernel(*args, apply_state=apply_state)
    return kernel(*args)

  def _resource_apply_dense(self, grad, var, apply_state=None):
    return self._then_average(self._inner_kernel(
        "_resource_apply_dense", self._optimizer._dense_apply_args, grad,  # pylint: disable=protected-access
        var, apply_state=apply_state), var, apply_state)

  def _resource_apply_sparse(self, grad, var, indices, apply_state=None):
    return self._then_average(self._inner_kernel(
        "_resource_apply_sparse", self._optimizer._sparse_apply_args, grad,  # pylint: disable=protected-access
        var, indices, apply_state=apply_state), var, apply_state)

  def _resource_apply_sparse_duplicate_indices(self, grad, var, indices,
                                               apply_state=None):
    return self._then_average(self._inner_kernel(
        "_resource_apply_sparse_duplicate_indices",
        self._optimizer._sparse_apply_args, grad, var, indices,  # pylint: disable=protected-access
        apply_state=apply_state), var, apply_state)

  def assign_average_vars(self, var_list):
    """Assigns each variable its average (skipping, with TFA's warning, one
    without); returns the assignments as one op."""
    assignments = []
    for var in var_list:
      try:
        assignments.append(var.assign(self.get_slot(var, "average"),
                                      use_locking=self._use_locking))
      except Exception as error:  # pylint: disable=broad-except
        warnings.warn(f"Unable to assign average slot to {var} : {error}")
    return tf.group(assignments)

  def get_config(self):
    return {**super().get_config(),
            "optimizer": tf_keras.optimizers.serialize(self._optimizer)}

  @classmethod
  def from_config(cls, config, custom_objects=None):
    config = dict(config)
    optimizer = tf_keras.optimizers.deserialize(
        config.pop("optimizer"), custom_objects=custom_objects,
        use_legacy_optimizer=True)
    return cls(optimizer, **config)
