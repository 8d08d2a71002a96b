"""TF1's own optimizer API (`tf.compat.v1.train.Optimizer`) on the
OptimizerV2 hosts of TF1's algorithms (`tf_bridge.legacy.tf1`), for TF1
programs in graph mode and sessions: `compute_gradients`, `apply_gradients`
with a `global_step`, `minimize` with a `global_step` and the graph's
trainable variables. Keras (`fit`) keeps calling them as OptimizerV2's.

Built into a TF1 graph (not eagerly, not in a `tf.function`), the optimizer
keeps TF1's variables, so that TF1 programs and their `Saver` files see
what the native class makes: slots named `<variable>/<Name>[_<n>]` in the
native class's order (`w/Adam`, `w/Adam_1`), shared scalars at the graph's
root (`beta1_power`), each a reference variable where its primary is one
(`tf.compat.v1.disable_v2_behavior()`), and neither OptimizerV2's `iter` nor
its hyperparameter variables: the learning rate is read as given (a number,
a tensor or a callable), and the count (which a Keras schedule and AdagradDA
with l1 or l2 read) is the `global_step` given to `apply_gradients` or
`minimize`.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf
import tf_keras
from tf_keras.src.optimizers.legacy.optimizer_v2 import _var_key

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
    self._global_step = global_step
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

  # Built into a TF1 graph: TF1's variables (see the module docstring).
  _global_step = None

  def _create_all_weights(self, var_list):
    if not _in_tf1_graph():
      super()._create_all_weights(var_list)
      return
    self._create_slots(var_list)

  def _prepare(self, var_list):
    if not _in_tf1_graph():
      return super()._prepare(var_list)
    return {}

  def _decayed_lr(self, var_dtype):
    if not _in_tf1_graph():
      return super()._decayed_lr(var_dtype)
    if self._initial_decay:
      raise ValueError(
          f"{type(self).__name__}(decay={self._initial_decay}) decays its "
          "rate by OptimizerV2's step count, which a TF1 graph does not "
          "keep: decay it as TF1 programs do (a learning-rate tensor of the "
          "global step, tf.compat.v1.train.exponential_decay).")
    rate = self._hyper["learning_rate"]
    if isinstance(rate, tf_keras.optimizers.schedules.LearningRateSchedule):
      rate = rate(self._counted_steps("its LearningRateSchedule"))
    elif callable(rate):
      rate = rate()
    return tf.cast(rate, var_dtype)

  def _step_count(self):
    if not _in_tf1_graph():
      return super()._step_count()
    if self._global_step is None and not self._reads_the_count():
      return tf.constant(0, tf.int64)  # Read by nothing.
    return self._counted_steps(f"{type(self).__name__}'s step")

  def _counted_steps(self, reader):
    """The global step given to this step, which `reader` reads."""
    if self._global_step is None:
      raise ValueError(
          f"{reader} reads the step count, which a TF1 graph keeps as the "
          "global step: pass global_step= to minimize or apply_gradients "
          "(as TF1's class takes it).")
    return self._global_step

  def _counted(self, update):
    if not _in_tf1_graph():
      return super()._counted(update)
    return update

  def _reads_the_count(self):
    from tf_bridge.checkpoints import _keys  # pylint: disable=import-outside-toplevel
    return _keys.reads_the_count(self._fused.transform(0.001))

  def add_slot(self, var, slot_name, initializer="zeros", shape=None):
    """OptimizerV2's `add_slot`; in a TF1 graph, the slot TF1's class makes
    (`<variable>/<Name>[_<n>]`, of the primary's kind)."""
    if not _in_tf1_graph():
      return super().add_slot(var, slot_name, initializer, shape)
    slots = self._slots.setdefault(_var_key(var), {})
    if slot_name in slots:
      return slots[slot_name]
    if slot_name not in self._slot_names:
      self._slot_names.append(slot_name)
    number = self._tf1_slot_order().index(slot_name)
    dtype = var.dtype.base_dtype
    slot_shape = var.shape if shape is None else shape
    value = (initializer(shape=slot_shape, dtype=dtype)
             if callable(initializer) else initializer)
    slots[slot_name] = _tf1_variable(
        value, f"{var.op.name}/{self._name}" + (f"_{number}" if number else ""),
        dtype, var)
    self._weights.append(slots[slot_name])
    return slots[slot_name]

  def _tf1_slot_order(self):
    """This optimizer's slots, in the order TF1's class numbers them."""
    from tf_bridge.checkpoints import _keys  # pylint: disable=import-outside-toplevel
    kept = set(_keys.Expected.of(self._fused.transform(0.001),
                                 _keys.PROBE).slots)
    return [slot for slot in _keys.tf1_slot_order(self.declaration.name)
            if slot in kept]

  def _add_state_weight(self, owner, name, leaf, value):
    if not _in_tf1_graph():
      return super()._add_state_weight(owner, name, leaf, value)
    dtype = tf.as_dtype(leaf.value.dtype)
    variable = _tf1_variable(
        value(leaf.value.shape, dtype) if callable(value) else value, name,
        dtype, self._variables_built_for[0])
    self._weights.append(variable)
    return variable


def _in_tf1_graph() -> bool:
  """Whether ops go into a TF1 graph (not eager, not a `tf.function`)."""
  return (not tf.executing_eagerly()
          and not tf.compat.v1.get_default_graph().building_function)


def _tf1_variable(value: Any, name: str, dtype: Any, primary: Any) -> Any:
  """A TF1 optimizer's variable: at the graph's root scope, beside
  `primary` and of its kind (a reference variable for a reference one)."""
  with tf.compat.v1.name_scope(None), tf.compat.v1.colocate_with(primary):
    return tf.compat.v1.Variable(
        value, name=name, trainable=False, dtype=dtype,
        use_resource=primary.dtype == primary.dtype.base_dtype)
