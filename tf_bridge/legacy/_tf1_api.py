"""TF1's own optimizer API (`tf.compat.v1.train.Optimizer`) on the
OptimizerV2 hosts of TF1's algorithms (`tf_bridge.legacy.tf1`), for TF1
programs in graph mode and sessions: `compute_gradients`, `apply_gradients`
with a `global_step`, `minimize` with a `global_step` and the graph's
trainable variables. Keras (`fit`) keeps calling them as OptimizerV2's."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from tf_bridge.legacy._optimizer import LegacyOptimizer

# TF1's `Optimizer.GATE_NONE`, `GATE_OP`, `GATE_GRAPH`.
GATE_NONE, GATE_OP, GATE_GRAPH = 0, 1, 2


class LegacyTF1Optimizer(LegacyOptimizer):
  """An OptimizerV2 running a TF1 algorithm, which also takes TF1's calls."""

  GATE_NONE, GATE_OP, GATE_GRAPH = GATE_NONE, GATE_OP, GATE_GRAPH

  def compute_gradients(self, loss: Any, var_list: Any = None,
                        gate_gradients: int = GATE_OP,
                        aggregation_method: Any = None,
                        colocate_gradients_with_ops: bool = False,
                        grad_loss: Any = None) -> list[tuple[Any, Any]]:
    """TF1's `compute_gradients`: `(gradient, variable)` pairs of `loss` (a
    tensor in a graph, or a callable), for `var_list` or, in a graph, its
    trainable variables."""
    if callable(loss):
      with tf.GradientTape() as tape:
        if var_list is not None:
          tape.watch(var_list)
        value = loss()
      if var_list is None:
        var_list = tape.watched_variables()
      return list(zip(tape.gradient(value, var_list, grad_loss), var_list))
    if tf.executing_eagerly():
      raise RuntimeError("`loss` passed to Optimizer.compute_gradients should "
                         "be a function when eager execution is enabled.")
    if gate_gradients not in (GATE_NONE, GATE_OP, GATE_GRAPH):
      raise ValueError("gate_gradients must be one of: Optimizer.GATE_NONE, "
                       "Optimizer.GATE_OP, Optimizer.GATE_GRAPH.  Not "
                       f"{gate_gradients}")
    if var_list is None:
      var_list = (tf.compat.v1.trainable_variables()
                  + tf.compat.v1.get_collection(
                      tf.compat.v1.GraphKeys.TRAINABLE_RESOURCE_VARIABLES))
    else:
      var_list = tf.nest.flatten(var_list)
    if not var_list:
      raise ValueError("No variables to optimize.")
    grads = tf.compat.v1.gradients(
        loss, var_list, grad_ys=grad_loss,
        gate_gradients=gate_gradients == GATE_OP,
        aggregation_method=aggregation_method,
        colocate_gradients_with_ops=colocate_gradients_with_ops)
    if gate_gradients == GATE_GRAPH:
      grads = tf.tuple(grads)
    return list(zip(grads, var_list))

  def apply_gradients(self, grads_and_vars: Any, global_step: Any = None,
                      name: str | None = None, **kwargs: Any) -> Any:
    """OptimizerV2's `apply_gradients`; with TF1's `global_step` (a
    variable), the step then adds 1 to it, as TF1's does."""
    if isinstance(global_step, str):  # OptimizerV2's positional `name`.
      global_step, name = None, global_step
    step = super().apply_gradients(grads_and_vars, name=name, **kwargs)
    if global_step is None:
      return step
    with tf.control_dependencies([step]):
      return tf.compat.v1.assign_add(global_step, 1, name=name)

  def minimize(self, loss: Any, global_step: Any = None, var_list: Any = None,
               gate_gradients: int = GATE_OP, aggregation_method: Any = None,
               colocate_gradients_with_ops: bool = False,
               name: str | None = None, grad_loss: Any = None,
               tape: Any = None) -> Any:
    """TF1's `minimize(loss, global_step=None, var_list=None, ...)`, and
    OptimizerV2's `minimize(loss, var_list, tape=...)` (Keras's call: a
    list of variables or a callable second is `var_list`)."""
    if isinstance(global_step, (list, tuple)) or callable(global_step):
      global_step, var_list = None, global_step
    if tape is not None or (callable(loss) and callable(var_list)):
      grads_and_vars = self._compute_gradients(
          loss, var_list=var_list, grad_loss=grad_loss, tape=tape)
    else:
      grads_and_vars = self.compute_gradients(
          loss, var_list=var_list, gate_gradients=gate_gradients,
          aggregation_method=aggregation_method,
          colocate_gradients_with_ops=colocate_gradients_with_ops,
          grad_loss=grad_loss)
    trained = [v for g, v in grads_and_vars if g is not None]
    if not trained:
      raise ValueError(
          "No gradients provided for any variable, check your graph for ops "
          "that do not support gradients, between variables "
          f"{[str(v) for _, v in grads_and_vars]} and loss {loss}.")
    return self.apply_gradients(grads_and_vars, global_step=global_step,
                                name=name)
