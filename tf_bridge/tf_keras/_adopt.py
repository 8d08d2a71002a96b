"""`tf_bridge.tf_keras.adopt`: a user's TensorFlow optimizer class as a
tf_keras 2.11+ one running its port in one XLA call per step."""

from __future__ import annotations

from tf_bridge._adopt import adopted
from tf_bridge.tf_keras._optimizer import TfKerasOptimizer, keras_optimizer


def adopt(cls: type) -> type:
  """A tf_keras 2.11+ class (`tf_keras.optimizers.Optimizer`, a
  `tf_bridge.tf_keras.TfKerasOptimizer`) running `cls`'s algorithm through
  its port and the fused bridge: one XLA call per step in place of the
  class's `update_step` for each variable.

  `cls` is an optimizer class `tf_bridge.port` takes (tf_keras 2.11+,
  OptimizerV2, TF1, Keras 3 on the TensorFlow backend). The class of the
  same name is registered with tf_keras under `cls.__module__`, so a saved
  model loads with `tf_keras.models.load_model` where `adopt(cls)` has run.
  Its constructor takes `cls`'s own arguments (each with its default) and
  tf_keras's base arguments (`weight_decay`, `clipnorm`, `use_ema`, ...,
  applied by tf_keras as for the class itself); `get_config` returns them;
  its slots are named as `cls` names them. tf_keras's learning rate (a
  float, a schedule) is fed to the class's `learning_rate` variable at every
  step; the class's other arguments are attributes, as `tf_bridge.adopt`
  says (a hyperparameter an OptimizerV2 class keeps under another name by
  both). Sparse gradients go through the class's own sparse hook, as
  `tf_bridge.adopt` says: tf_keras sums their repeated indices first, into a
  number of entries known only when the step runs, so a class whose base
  sums them too gets that sum as an entry per row of the table (padding
  where untouched).
  """
  return adopted(cls, TfKerasOptimizer, keras_optimizer)
