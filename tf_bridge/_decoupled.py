"""TF Addons' `DecoupledWeightDecayExtension` API on bridged classes whose
transform decays weights as TFA does (`weight_decay` first, and
`exclude_from_weight_decay`): `apply_gradients` (and OptimizerV2's
`minimize`) take `decay_var_list`, the only variables decayed in that step
(all when it is None or empty, as in TFA)."""

from __future__ import annotations

import re
from typing import Any


class _DecoupledWeightDecay:
  """What both generations' mixins share."""
  _decayed: set[Any] | None = None

  def _remember_decayed(self, decay_var_list: Any) -> None:
    self._decayed = ({self._decay_key(v) for v in decay_var_list}
                     if decay_var_list else None)

  def _exclude_undecayed(self) -> None:
    """With a `decay_var_list`, the variables outside it are this step's
    exclusions (by their exact key; the list takes priority over
    `exclude_from_weight_decay`, as in TFA); the transform retraces only
    when they change."""
    if self._decayed is None:
      excluded = list(self._arguments.get("exclude_from_weight_decay") or [])
    else:
      excluded = ["^" + re.escape(key) + "$" for key, variable in zip(
          self._fused.keys, self._built_variables())
                  if self._decay_key(variable) not in self._decayed]
    if (excluded or None) != self._fused.argument("exclude_from_weight_decay"):
      self._fused.set_argument("exclude_from_weight_decay", excluded or None)


class LegacyDecoupledWeightDecay(_DecoupledWeightDecay):
  """`decay_var_list` for a bridged OptimizerV2 (a mixin)."""

  def _decay_key(self, variable: Any) -> Any:
    return variable.ref()

  def apply_gradients(self, grads_and_vars, name=None, decay_var_list=None,
                      **kwargs):
    self._remember_decayed(decay_var_list)
    return super().apply_gradients(grads_and_vars, name=name, **kwargs)

  def minimize(self, loss, var_list, grad_loss=None, name=None,
               decay_var_list=None, tape=None):
    grads_and_vars = self._compute_gradients(
        loss, var_list=var_list, grad_loss=grad_loss, tape=tape)
    return self.apply_gradients(grads_and_vars, name=name,
                                decay_var_list=decay_var_list)

  def _distributed_apply(self, distribution, grads_and_vars, apply_state,
                         name):
    self._exclude_undecayed()
    return super()._distributed_apply(distribution, grads_and_vars,
                                      apply_state, name)


class Keras3DecoupledWeightDecay(_DecoupledWeightDecay):
  """`decay_var_list` for a bridged Keras 3 optimizer (a mixin): in
  `apply_gradients` and `apply`."""

  def _decay_key(self, variable: Any) -> Any:
    return self._var_key(variable)

  def apply_gradients(self, grads_and_vars, decay_var_list=None):
    self._remember_decayed(decay_var_list)
    return super().apply_gradients(grads_and_vars)

  def apply(self, grads, trainable_variables=None, decay_var_list=None):
    if decay_var_list is not None:
      self._remember_decayed(decay_var_list)
    try:
      return super().apply(grads, trainable_variables)
    finally:
      self._decayed = None

  def _backend_update_step(self, grads, trainable_variables, learning_rate):
    self._exclude_undecayed()
    return super()._backend_update_step(grads, trainable_variables,
                                        learning_rate)
