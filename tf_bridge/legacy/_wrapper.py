"""TF Addons' wrappers (`MovingAverage`, `SWA`, `Lookahead`) as TFA builds
them on OptimizerV2, around the one fused step that runs the inner
optimizer's update and the wrapper's own: the inner optimizer owns its
slots and its hyperparameters and shares the wrapper's `iterations`, so
`variables()`, `weights`, names, config and checkpoints are TFA's."""

from __future__ import annotations

from typing import Any

import tensorflow as tf
import tf_keras


class InnerOptimizerSurface:
  """What TF Addons' OptimizerV2 wrappers share with their inner optimizer
  (`_optimizer`): its hyperparameters (created when the wrapper's are), the
  wrapper's `iterations` (given to it at each `apply_gradients`), its
  `weights` after the wrapper's own, and its learning rate as the
  wrapper's `learning_rate` and `lr`."""

  def _create_hypers(self):
    self._optimizer._create_hypers()  # pylint: disable=protected-access

  def apply_gradients(self, grads_and_vars, *args, **kwargs):
    self._optimizer._iterations = self.iterations  # pylint: disable=protected-access
    return super().apply_gradients(grads_and_vars, *args, **kwargs)

  @property
  def weights(self):
    return self._weights + self._optimizer.weights

  @property
  def learning_rate(self):
    return self._optimizer._get_hyper("learning_rate")  # pylint: disable=protected-access

  @learning_rate.setter
  def learning_rate(self, value):
    self._optimizer._set_hyper("learning_rate", value)  # pylint: disable=protected-access

  lr = learning_rate


class LegacyWrapper(InnerOptimizerSurface):
  """The OptimizerV2 surface of a TF Addons wrapper (before
  `LegacyOptimizer` in the bases):

  - the inner optimizer is a checkpoint dependency named as TFA names it
    (`awg_optimizer`, or `lh_base_optimizer` for Lookahead);
  - `iterations` (`iter:0`) is made before the wrapper's name scope and
    shared with the inner optimizer, as TFA's `apply_gradients` does;
  - the inner optimizer's slots (Adam's `m`, `v`) are its own, so
    `variables()` lists `iter` and the wrapper's slots only, `weights`
    (what `get_weights`, `set_weights` and `.h5` files go by) those then
    the inner optimizer's;
  - the learning rate is the inner optimizer's (`learning_rate`, `lr`), its
    hyperparameters are variables of the inner optimizer, and the config
    holds `optimizer` and the wrapper's own arguments only.
  """
  _inner_dependency = "awg_optimizer"

  def __init__(self, *args: Any, **kwargs: Any) -> None:
    super().__init__(*args, **kwargs)
    self._track_trackable(self._optimizer, self._inner_dependency)
    # The rate is the inner optimizer's (TFA keeps no `learning_rate` or
    # `decay` hyperparameter of the wrapper's own).
    for name in ("learning_rate", "decay"):
      self._hyper.pop(name, None)

  def _state_owner(self, depth):
    own = int(self._skip_nonfinite)  # The skip wrapper's level.
    if depth <= own:
      return self
    return self._optimizer._state_owner(depth - own - 1)  # pylint: disable=protected-access

  def _decayed_lr(self, var_dtype):
    # The inner optimizer's rate; its `decay` is the inner transform's own.
    inner = self._optimizer
    if isinstance(inner, LegacyWrapper):
      return inner._decayed_lr(var_dtype)  # pylint: disable=protected-access
    rate = inner._get_hyper("learning_rate", var_dtype)  # pylint: disable=protected-access
    if isinstance(rate, tf_keras.optimizers.schedules.LearningRateSchedule):
      rate = tf.cast(rate(self.iterations), var_dtype)
    return rate

  def _rate_config(self):
    return {}

  def get_config(self):
    config = super().get_config()
    config["optimizer"] = tf_keras.optimizers.serialize(self._optimizer)
    return config
