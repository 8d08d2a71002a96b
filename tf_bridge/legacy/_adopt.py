"""`tf_bridge.legacy.adopt`: a user's TensorFlow optimizer class as an
OptimizerV2 one running its port in one XLA call per step."""

from __future__ import annotations

from tf_bridge._adopt import (adopted, kept_hyperparameters,
                              renamed_hyperparameters)
from tf_bridge.legacy._optimizer import LegacyOptimizer, keras_optimizer


class _BuiltAsConstructed:
  """An adoption's instance runs a factory of its own (`bound`): the class
  is built with the constructor's values of its hyperparameters, which
  OptimizerV2 then feeds to every step from their variables."""

  def _start_fused(self, arguments, *args, **kwargs):
    self.port = type(self).port.bound({**self._own_defaults, **arguments})
    super()._start_fused(arguments, *args, **kwargs)


def adopt(cls: type) -> type:
  """An OptimizerV2 class (`tf_keras.optimizers.legacy.Optimizer`, a
  `tf_bridge.legacy.LegacyOptimizer`) running `cls`'s algorithm through its
  port and the fused bridge: one XLA call per step in place of the class's
  ops for each variable.

  `cls` is an optimizer class `tf_bridge.port` takes (OptimizerV2, TF1,
  tf_keras 2.11+, Keras 3 on the TensorFlow backend). The class of the same
  name is registered with tf_keras under `cls.__module__`, so a saved model
  loads with `tf_keras.models.load_model` where `adopt(cls)` has run (at
  the import of that module, if it adopts its class itself). Its
  constructor takes `cls`'s own arguments (each with its default) and
  OptimizerV2's base arguments (`lr`, `decay`, `clipnorm`, `clipvalue`,
  `global_clipnorm`, applied by OptimizerV2 as for the class itself);
  `get_config` returns them; its slots are made with `add_slot` under the
  names `cls` gives them (`get_slot(var, "m")`), and the arguments `cls`
  keeps as hyperparameters (`_set_hyper`) are hyperparameters here too:
  variables, checkpointed under their names, read by every step
  (`optimizer.momentum = 0.5` reaches a traced step). OptimizerV2's
  learning rate (a float, a schedule), decayed, is fed to the class's
  `learning_rate` variable at every step. Sparse gradients go through the
  class's own sparse hook, as `tf_bridge.adopt` says. A hyperparameter the
  class keeps under another name than its argument's
  (`self._set_hyper("momentum", beta)`) is set by the hyperparameter's name
  here too (`optimizer.momentum = 0.5`), as on the class.
  """
  return adopted(cls, LegacyOptimizer, keras_optimizer,
                 mixins=(_BuiltAsConstructed,),
                 hyperparameters=kept_hyperparameters(cls),
                 native_names={hyper: argument for argument, hyper in
                               renamed_hyperparameters(cls).items()})
