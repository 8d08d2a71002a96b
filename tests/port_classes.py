"""Optimizers written for TensorFlow as their users write them, one per
hook style, for tests/test_port.py: what `tf_bridge.port` is for; and
classes with sparse hooks of their own (lazy ones, ones that take repeated
indices as they come, ones that scatter into their variables by every
scatter TensorFlow has) for tests/test_port_sparse.py and
tests/test_adopt_hosts.py, and one whose rate's argument is `lr`."""

import keras
import tensorflow as tf
import tf_keras
from keras import ops

import tf_bridge


class CenteredMomentumSGD(tf_keras.optimizers.legacy.Optimizer):
  """OptimizerV2: m = b*m + (1-b)*g; var -= lr * m / (1 - b**t)."""

  def __init__(self, learning_rate=0.01, momentum=0.0,
               name="CenteredMomentumSGD", **kwargs):
    super().__init__(name, **kwargs)
    self._set_hyper("learning_rate", kwargs.get("lr", learning_rate))
    self._set_hyper("momentum", momentum)
    self._momentum = momentum != 0

  def _create_slots(self, var_list):
    for var in var_list:
      self.add_slot(var, "momentum")

  def _prepare_local(self, var_device, var_dtype, apply_state):
    super()._prepare_local(var_device, var_dtype, apply_state)
    momentum = tf.identity(self._get_hyper("momentum", var_dtype))
    step = tf.cast(self.iterations + 1, var_dtype)
    apply_state[(var_device, var_dtype)].update(
        momentum=momentum, correction=1 - tf.pow(momentum, step))

  def _resource_apply_dense(self, grad, var, apply_state=None):
    coefficients = apply_state[(var.device, var.dtype.base_dtype)]
    m = self.get_slot(var, "momentum")
    b = coefficients["momentum"]
    m_t = m.assign(b * m + (1 - b) * grad)
    step = m_t / coefficients["correction"] if self._momentum else m_t
    return var.assign_sub(coefficients["lr_t"] * step)

  def _resource_apply_sparse(self, grad, var, indices, apply_state=None):
    return self._resource_apply_dense(
        tf.math.unsorted_segment_sum(grad, indices, tf.shape(var)[0]), var,
        apply_state)

  def get_config(self):
    config = super().get_config()
    config.update(learning_rate=self._serialize_hyperparameter(
        "learning_rate"), momentum=self._serialize_hyperparameter("momentum"))
    return config


class AdagradDecay(tf.compat.v1.train.Optimizer):
  """TF1: Adagrad whose accumulator decays every `accumulator_decay_step`
  steps (acc = max(acc * rate, initial)), counted by non-slot variables."""

  def __init__(self, learning_rate, initial_accumulator_value=0.1,
               accumulator_decay_step=100000, accumulator_decay_rate=0.9,
               use_locking=False, name="AdagradDecay"):
    super().__init__(use_locking, name)
    self._learning_rate = learning_rate
    self._initial = initial_accumulator_value
    self._decay_step = accumulator_decay_step
    self._decay_rate = accumulator_decay_rate

  def _create_slots(self, var_list):
    for var in var_list:
      self._get_or_make_slot_with_initializer(
          var, tf.constant_initializer(self._initial), var.shape, var.dtype,
          "accumulator", self._name)
    first = min(var_list, key=lambda v: v.name)
    self._create_non_slot_variable(0, "step", first)
    self._create_non_slot_variable(0, "decays", first)

  def _prepare(self):
    self._lr_t = tf.convert_to_tensor(self._learning_rate, name="lr")

  def _counter(self, name):
    with tf.init_scope():  # As TF1's Adam finds its beta powers.
      graph = (None if tf.executing_eagerly() else
               tf.compat.v1.get_default_graph())
    return self._get_non_slot_variable(name, graph)

  def _decay_due(self):
    t = self._counter("step") + 1
    return t // self._decay_step > self._counter("decays")

  def _resource_apply_dense(self, grad, var):
    acc = self.get_slot(var, "accumulator")
    decayed = tf.where(self._decay_due(),
                       tf.maximum(acc * self._decay_rate, self._initial), acc)
    acc_t = acc.assign(decayed + tf.square(grad))
    lr = tf.cast(self._lr_t, var.dtype.base_dtype)
    return var.assign_sub(lr * grad / tf.sqrt(acc_t))

  def _finish(self, update_ops, name_scope):
    with tf.control_dependencies(update_ops):
      due = tf.cast(self._decay_due(), tf.int32)
      with tf.control_dependencies([due]):
        decays = self._counter("decays").assign_add(due)
        step = self._counter("step").assign_add(1)
    return tf.group(*update_ops, decays, step, name=name_scope)


class SignMomentum(tf_keras.optimizers.Optimizer):
  """tf_keras 2.11+: m = b*m + (1-b)*g; var -= lr * sign(m)."""

  def __init__(self, learning_rate=0.01, beta=0.9, name="SignMomentum",
               **kwargs):
    super().__init__(name=name, **kwargs)
    self._learning_rate = self._build_learning_rate(learning_rate)
    self.beta = beta

  def build(self, var_list):
    super().build(var_list)
    if hasattr(self, "_built") and self._built:
      return
    self._built = True
    self._momenta = [self.add_variable_from_reference(var, "m")
                     for var in var_list]

  def update_step(self, gradient, variable):
    lr = tf.cast(self.learning_rate, variable.dtype)
    m = self._momenta[self._index_dict[self._var_key(variable)]]
    m.assign(self.beta * m + (1 - self.beta) * gradient)
    variable.assign_sub(lr * tf.sign(m))

  def get_config(self):
    config = super().get_config()
    config.update(learning_rate=self._serialize_hyperparameter(
        self._learning_rate), beta=self.beta)
    return config


class LazyTfKerasMomentum(SignMomentum):
  """tf_keras 2.11+: m = b*m + g; var -= lr * m; a sparse gradient (its
  repeated indices summed by its base) moves the touched rows of `m` and of
  the variable only."""

  def __init__(self, learning_rate=0.01, beta=0.9,
               name="LazyTfKerasMomentum", **kwargs):
    super().__init__(learning_rate, beta, name=name, **kwargs)

  def update_step(self, gradient, variable):
    lr = tf.cast(self.learning_rate, variable.dtype)
    m = self._momenta[self._index_dict[self._var_key(variable)]]
    if not isinstance(gradient, tf.IndexedSlices):
      return variable.assign_sub(lr * m.assign(self.beta * m + gradient))
    rows = gradient.indices
    m_rows = self.beta * tf.gather(m, rows) + gradient.values
    m.scatter_update(tf.IndexedSlices(m_rows, rows))
    return variable.scatter_sub(tf.IndexedSlices(lr * m_rows, rows))


class KerasSignMomentum(keras.optimizers.Optimizer):
  """Keras 3, the same algorithm in `keras.ops`."""

  def __init__(self, learning_rate=0.01, beta=0.9, name="KerasSignMomentum",
               **kwargs):
    super().__init__(learning_rate=learning_rate, name=name, **kwargs)
    self.beta = beta

  def build(self, var_list):
    if self.built:
      return
    super().build(var_list)
    self._momenta = [self.add_variable_from_reference(var, "m")
                     for var in var_list]

  def update_step(self, gradient, variable, learning_rate):
    lr = ops.cast(learning_rate, variable.dtype)
    m = self._momenta[self._get_variable_index(variable)]
    self.assign(m, self.beta * m + (1 - self.beta) * gradient)
    self.assign_sub(variable, lr * ops.sign(m))

  def get_config(self):
    return {**super().get_config(), "beta": self.beta}


class LazyMomentum(tf_keras.optimizers.legacy.Optimizer):
  """OptimizerV2: m = b*m + g; var -= lr * m; a sparse gradient moves the
  touched rows only (`_resource_apply_sparse`, by `_resource_scatter_add`)."""

  def __init__(self, learning_rate=0.01, momentum=0.9, name="LazyMomentum",
               **kwargs):
    super().__init__(name, **kwargs)
    self._set_hyper("learning_rate", learning_rate)
    self._set_hyper("momentum", momentum)

  def _create_slots(self, var_list):
    for var in var_list:
      self.add_slot(var, "m")

  def _resource_apply_dense(self, grad, var, apply_state=None):
    m = self.get_slot(var, "m")
    b = self._get_hyper("momentum", var.dtype)
    m_t = m.assign(b * m + grad)
    return var.assign_sub(self._decayed_lr(var.dtype) * m_t)

  def _resource_apply_sparse(self, grad, var, indices, apply_state=None):
    m = self.get_slot(var, "m")
    b = self._get_hyper("momentum", var.dtype)
    m_t = self._resource_scatter_add(m, indices,
                                     (b - 1) * tf.gather(m, indices) + grad)
    return self._resource_scatter_add(
        var, indices, -self._decayed_lr(var.dtype) * tf.gather(m_t, indices))

  def get_config(self):
    return {**super().get_config(),
            "learning_rate": self._serialize_hyperparameter("learning_rate"),
            "momentum": self._serialize_hyperparameter("momentum")}


class EntrySignSGD(tf_keras.optimizers.legacy.Optimizer):
  """OptimizerV2: var -= lr * sign(g); a sparse gradient's entries each
  move their row (its own `_resource_apply_sparse_duplicate_indices`: a
  repeated index is not summed first)."""

  def __init__(self, learning_rate=0.01, name="EntrySignSGD", **kwargs):
    super().__init__(name, **kwargs)
    self._set_hyper("learning_rate", learning_rate)

  def _resource_apply_dense(self, grad, var, apply_state=None):
    return var.assign_sub(self._decayed_lr(var.dtype) * tf.sign(grad))

  def _resource_apply_sparse_duplicate_indices(self, grad, handle, indices,
                                               **kwargs):
    return self._resource_scatter_add(
        handle, indices, -self._decayed_lr(handle.dtype) * tf.sign(grad))

  def get_config(self):
    return {**super().get_config(),
            "learning_rate": self._serialize_hyperparameter("learning_rate")}


class RowDecayAdagrad(tf.compat.v1.train.Optimizer):
  """TF1: acc = decay*acc + g**2; var -= lr * g / sqrt(acc); sparse
  gradients decay the touched rows' accumulators only. `_apply_sparse`
  (ref variables) and `_resource_apply_sparse` share the rows' update, as
  TF1's own classes write it (`tf.compat.v1.scatter_*`)."""

  def __init__(self, learning_rate, decay=0.9, use_locking=False,
               name="RowDecayAdagrad"):
    super().__init__(use_locking, name)
    self._learning_rate, self._decay = learning_rate, decay

  def _create_slots(self, var_list):
    for var in var_list:
      self._get_or_make_slot_with_initializer(
          var, tf.constant_initializer(0.1), var.shape, var.dtype,
          "accumulator", self._name)

  def _resource_apply_dense(self, grad, var):
    acc = self.get_slot(var, "accumulator")
    acc_t = acc.assign(self._decay * acc + tf.square(grad))
    return var.assign_sub(self._learning_rate * grad / tf.sqrt(acc_t))

  def _rows_update(self, grad, var, indices):
    acc = self.get_slot(var, "accumulator")
    rows = self._decay * tf.gather(acc, indices) + tf.square(grad)
    acc_t = tf.compat.v1.scatter_update(acc, indices, rows)
    with tf.control_dependencies([acc_t]):
      return tf.compat.v1.scatter_sub(
          var, indices, self._learning_rate * grad / tf.sqrt(rows))

  def _apply_sparse(self, grad, var):
    return self._rows_update(grad.values, var, grad.indices)

  def _resource_apply_sparse(self, grad, handle, indices):
    return self._rows_update(grad, handle, indices)


class RowDecaySGD(tf_keras.optimizers.legacy.Optimizer):
  """OptimizerV2: var = decay * var - lr * g; a sparse gradient's entries
  each decay their row (`tf.compat.v1.scatter_mul`, so a repeated index
  decays it twice) and move it (its own
  `_resource_apply_sparse_duplicate_indices`)."""

  def __init__(self, learning_rate=0.01, decay=0.95, name="RowDecaySGD",
               **kwargs):
    super().__init__(name, **kwargs)
    self._set_hyper("learning_rate", learning_rate)
    self._set_hyper("decay", decay)

  def _resource_apply_dense(self, grad, var, apply_state=None):
    return var.assign(self._get_hyper("decay", var.dtype) * var
                      - self._decayed_lr(var.dtype) * grad)

  def _resource_apply_sparse_duplicate_indices(self, grad, handle, indices,
                                               **kwargs):
    decayed = tf.compat.v1.scatter_mul(handle, indices,
                                       self._get_hyper("decay", handle.dtype))
    with tf.control_dependencies([decayed]):
      return handle.scatter_sub(tf.IndexedSlices(
          self._decayed_lr(handle.dtype) * grad, indices))

  def get_config(self):
    return {**super().get_config(),
            "learning_rate": self._serialize_hyperparameter("learning_rate"),
            "decay": self._serialize_hyperparameter("decay")}


class DampedSGD(tf.compat.v1.train.Optimizer):
  """TF1: var = var / (1 + damping * g**2) - lr * g; a sparse gradient's
  entries each divide their row (`scatter_div`: a repeated index divides
  it by each) and move it (its own `_resource_apply_sparse_duplicate_
  indices`)."""

  def __init__(self, learning_rate, damping=0.5, use_locking=False,
               name="DampedSGD"):
    super().__init__(use_locking, name)
    self._learning_rate, self._damping = learning_rate, damping

  def _resource_apply_dense(self, grad, var):
    return var.assign(var / (1 + self._damping * tf.square(grad))
                      - self._learning_rate * grad)

  def _resource_apply_sparse_duplicate_indices(self, grad, handle, indices):
    damped = handle.scatter_div(tf.IndexedSlices(
        1 + self._damping * tf.square(grad), indices))
    with tf.control_dependencies([damped]):
      return tf.compat.v1.scatter_add(handle, indices,
                                      -self._learning_rate * grad)


class RangeSGD(tf_keras.optimizers.legacy.Optimizer):
  """OptimizerV2: hi = max(hi, g); lo = min(lo, g);
  var -= lr * g / (hi - lo + epsilon); a sparse gradient's entries each
  widen their row's range (`scatter_max`, `scatter_min`: a repeated index's
  largest and smallest count) and move it (its own
  `_resource_apply_sparse_duplicate_indices`)."""

  def __init__(self, learning_rate=0.01, epsilon=0.1, name="RangeSGD",
               **kwargs):
    super().__init__(name, **kwargs)
    self._set_hyper("learning_rate", learning_rate)
    self.epsilon = epsilon

  def _create_slots(self, var_list):
    for var in var_list:
      self.add_slot(var, "hi")
      self.add_slot(var, "lo")

  def _resource_apply_dense(self, grad, var, apply_state=None):
    hi = self.get_slot(var, "hi").assign(
        tf.maximum(self.get_slot(var, "hi"), grad))
    lo = self.get_slot(var, "lo").assign(
        tf.minimum(self.get_slot(var, "lo"), grad))
    return var.assign_sub(self._decayed_lr(var.dtype) * grad
                          / (hi - lo + self.epsilon))

  def _resource_apply_sparse_duplicate_indices(self, grad, handle, indices,
                                               **kwargs):
    hi = self.get_slot(handle, "hi").scatter_max(
        tf.IndexedSlices(grad, indices))
    lo = self.get_slot(handle, "lo").scatter_min(
        tf.IndexedSlices(grad, indices))
    width = tf.gather(hi, indices) - tf.gather(lo, indices)
    return handle.scatter_sub(tf.IndexedSlices(
        self._decayed_lr(handle.dtype) * grad / (width + self.epsilon),
        indices))

  def get_config(self):
    return {**super().get_config(),
            "learning_rate": self._serialize_hyperparameter("learning_rate"),
            "epsilon": self.epsilon}


class CatchUpMomentum(tf_keras.optimizers.legacy.Optimizer):
  """OptimizerV2: m = b*m + g; var = clip(var - lr * m, -bound, bound); a
  sparse gradient moves the touched rows only, their momentum first
  decayed by b for every step they were not touched (`last`, the step they
  were last touched at): by the N-d scatters, on the rows
  (`indices[:, None]`: `scatter_nd_add`, `scatter_nd_update`,
  `scatter_nd_min`, `scatter_nd_max`) and on their entries
  (`scatter_nd_sub`)."""

  def __init__(self, learning_rate=0.01, momentum=0.9, bound=1.5,
               name="CatchUpMomentum", **kwargs):
    super().__init__(name, **kwargs)
    self._set_hyper("learning_rate", learning_rate)
    self._set_hyper("momentum", momentum)
    self.bound = bound

  def _create_slots(self, var_list):
    for var in var_list:
      self.add_slot(var, "m")
      self.add_slot(var, "last")

  def _resource_apply_dense(self, grad, var, apply_state=None):
    m = self.get_slot(var, "m")
    m_t = m.assign(self._get_hyper("momentum", var.dtype) * m + grad)
    self.get_slot(var, "last").assign(tf.fill(
        tf.shape(var), tf.cast(self.iterations + 1, var.dtype)))
    return var.assign(tf.clip_by_value(
        var - self._decayed_lr(var.dtype) * m_t, -self.bound, self.bound))

  def _resource_apply_sparse(self, grad, var, indices, apply_state=None):
    m, last = self.get_slot(var, "m"), self.get_slot(var, "last")
    rows = indices[:, None]
    step = tf.cast(self.iterations + 1, var.dtype)
    catch_up = self._get_hyper("momentum", var.dtype) ** (
        step - tf.gather(last, indices))
    m_t = m.scatter_nd_add(rows, (catch_up - 1) * tf.gather(m, indices)
                           + grad)
    last.scatter_nd_update(rows, tf.fill(tf.shape(grad), step))
    # The touched rows' entries by their full index, `[n, *row, rank]`.
    entries = tf.stack(tf.meshgrid(
        indices, *[tf.range(size, dtype=indices.dtype)
                   for size in var.shape[1:]], indexing="ij"), -1)
    moved = var.scatter_nd_sub(
        entries, self._decayed_lr(var.dtype) * tf.gather(m_t, indices))
    bound = tf.fill(tf.shape(grad), tf.cast(self.bound, var.dtype))
    with tf.control_dependencies([moved]):
      clipped = var.scatter_nd_min(rows, bound)
    with tf.control_dependencies([clipped]):
      return var.scatter_nd_max(rows, -bound)

  def get_config(self):
    return {**super().get_config(),
            "learning_rate": self._serialize_hyperparameter("learning_rate"),
            "momentum": self._serialize_hyperparameter("momentum"),
            "bound": self.bound}


class VisitSGD(tf_keras.optimizers.legacy.Optimizer):
  """OptimizerV2: n += (g != 0); var -= lr * g / sqrt(max(n, 1)); a sparse
  gradient's entries each count a visit to their row (its own
  `_resource_apply_sparse_duplicate_indices`, counting by ones of the
  entries' number, `tf.size`)."""

  def __init__(self, learning_rate=0.01, name="VisitSGD", **kwargs):
    super().__init__(name, **kwargs)
    self._set_hyper("learning_rate", learning_rate)

  def _create_slots(self, var_list):
    for var in var_list:
      self.add_slot(var, "visits")

  def _resource_apply_dense(self, grad, var, apply_state=None):
    visits = self.get_slot(var, "visits").assign_add(
        tf.cast(tf.not_equal(grad, 0), var.dtype))
    return var.assign_sub(self._decayed_lr(var.dtype) * grad
                          / tf.sqrt(tf.maximum(visits, 1)))

  def _resource_apply_sparse_duplicate_indices(self, grad, handle, indices,
                                               **kwargs):
    ones = tf.ones(tf.concat([[tf.size(indices)], tf.shape(grad)[1:]], 0),
                   handle.dtype)
    visits = self._resource_scatter_add(self.get_slot(handle, "visits"),
                                        indices, ones)
    return self._resource_scatter_add(
        handle, indices, -self._decayed_lr(handle.dtype) * grad
        / tf.sqrt(tf.maximum(tf.gather(visits, indices), 1)))

  def get_config(self):
    return {**super().get_config(),
            "learning_rate": self._serialize_hyperparameter("learning_rate")}


class TopEntriesSGD(tf_keras.optimizers.legacy.Optimizer):
  """OptimizerV2: var -= lr * g; a sparse gradient moves by its
  `max_entries` entries of the largest norms only, the others dropped
  (top-k sparsification; its own `_resource_apply_sparse_duplicate_indices`:
  `tf.math.top_k` with k the smaller of the number of entries and
  `max_entries`)."""

  def __init__(self, learning_rate=0.01, max_entries=8, name="TopEntriesSGD",
               **kwargs):
    super().__init__(name, **kwargs)
    self._set_hyper("learning_rate", learning_rate)
    self.max_entries = max_entries

  def _resource_apply_dense(self, grad, var, apply_state=None):
    return var.assign_sub(self._decayed_lr(var.dtype) * grad)

  def _resource_apply_sparse_duplicate_indices(self, grad, handle, indices,
                                               **kwargs):
    entries = tf.size(indices)
    norms = tf.norm(tf.reshape(grad, [entries, -1]), axis=1)
    _, kept = tf.math.top_k(norms, k=tf.minimum(entries, self.max_entries))
    return self._resource_scatter_add(
        handle, tf.gather(indices, kept),
        -self._decayed_lr(handle.dtype) * tf.gather(grad, kept))

  def get_config(self):
    return {**super().get_config(),
            "learning_rate": self._serialize_hyperparameter("learning_rate"),
            "max_entries": self.max_entries}


class RampSGD(tf_keras.optimizers.legacy.Optimizer):
  """OptimizerV2: var -= lr * g; a sparse gradient's entries weighted by a
  ramp over their order, from `first` to 1 (`tf.linspace` to their number,
  its own `_resource_apply_sparse_duplicate_indices`: a shape TensorFlow
  computes from the number as a value, which JAX needs as a number)."""

  def __init__(self, learning_rate=0.01, first=0.5, name="RampSGD",
               **kwargs):
    super().__init__(name, **kwargs)
    self._set_hyper("learning_rate", learning_rate)
    self.first = first

  def _resource_apply_dense(self, grad, var, apply_state=None):
    return var.assign_sub(self._decayed_lr(var.dtype) * grad)

  def _resource_apply_sparse_duplicate_indices(self, grad, handle, indices,
                                               **kwargs):
    ramp = tf.reshape(
        tf.linspace(tf.cast(self.first, handle.dtype), 1.0, tf.size(indices)),
        tf.concat([[-1], tf.ones_like(tf.shape(grad)[1:])], 0))
    return self._resource_scatter_add(
        handle, indices, -self._decayed_lr(handle.dtype) * ramp * grad)

  def get_config(self):
    return {**super().get_config(),
            "learning_rate": self._serialize_hyperparameter("learning_rate"),
            "first": self.first}


class LrMomentum(tf_keras.optimizers.legacy.Optimizer):
  """OptimizerV2 as packages and tutorials of 2019 wrote it: arguments
  named otherwise than the hyperparameters they are kept as, the rate's
  `lr` (`kwargs.get("lr", lr)`) and `beta` (`momentum`);
  m = b*m + g; var -= lr * m."""

  def __init__(self, lr=0.001, beta=0.9, name="LrMomentum", **kwargs):
    super().__init__(name, **kwargs)
    self._set_hyper("learning_rate", kwargs.get("lr", lr))
    self._set_hyper("momentum", beta)

  def _create_slots(self, var_list):
    for var in var_list:
      self.add_slot(var, "m")

  def _resource_apply_dense(self, grad, var, apply_state=None):
    m = self.get_slot(var, "m")
    m_t = m.assign(self._get_hyper("momentum", var.dtype) * m + grad)
    return var.assign_sub(self._decayed_lr(var.dtype) * m_t)

  def get_config(self):
    return {**super().get_config(),
            "lr": self._serialize_hyperparameter("learning_rate"),
            "momentum": self._serialize_hyperparameter("momentum")}


# As a user makes a saved model load wherever this module is imported.
AdoptedCenteredMomentumSGD = tf_bridge.adopt(CenteredMomentumSGD)
