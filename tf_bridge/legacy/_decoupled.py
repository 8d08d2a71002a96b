"""TF Addons' `DecoupledWeightDecayExtension` API on OptimizerV2 classes
whose transform decays weights as TFA does (`weight_decay` first, and
`exclude_from_weight_decay`): `apply_gradients` and `minimize` take
`decay_var_list`, the only variables decayed in that step (all when it is
None or empty, as in TFA)."""

from __future__ import annotations

import inspect
import re
from typing import Any, Callable


def is_decoupled(factory: Callable[..., Any]) -> bool:
  """Whether `factory` has TFA's decoupled weight decay signature (TFA's
  `AdamW`, `SGDW`, `jaxopt_port.addons.decoupled_weight_decay(...)`)."""
  parameters = list(inspect.signature(factory).parameters)
  return (parameters[:1] == ["weight_decay"]
          and "exclude_from_weight_decay" in parameters)


class DecoupledWeightDecay:
  """`decay_var_list` for a bridged OptimizerV2 (a mixin)."""
  _decayed: set[Any] | None = None

  def apply_gradients(self, grads_and_vars, name=None, decay_var_list=None,
                      **kwargs):
    self._decayed = ({v.ref() for v in decay_var_list} if decay_var_list
                     else None)
    return super().apply_gradients(grads_and_vars, name=name, **kwargs)

  def minimize(self, loss, var_list, grad_loss=None, name=None,
               decay_var_list=None, tape=None):
    grads_and_vars = self._compute_gradients(
        loss, var_list=var_list, grad_loss=grad_loss, tape=tape)
    return self.apply_gradients(grads_and_vars, name=name,
                                decay_var_list=decay_var_list)

  def _distributed_apply(self, distribution, grads_and_vars, apply_state,
                         name):
    # Variables outside `decay_var_list` join the exclusions (by their
    # exact key) for this step; the transform retraces only when they
    # change.
    excluded = list(self._arguments.get("exclude_from_weight_decay") or [])
    if self._decayed is not None:
      excluded += ["^" + re.escape(key) + "$" for key, variable in zip(
          self._fused.keys, self._variables_built_for)
                   if variable.ref() not in self._decayed]
    if (excluded or None) != self._fused.argument("exclude_from_weight_decay"):
      self._fused.set_argument("exclude_from_weight_decay", excluded or None)
    return super()._distributed_apply(distribution, grads_and_vars,
                                      apply_state, name)
