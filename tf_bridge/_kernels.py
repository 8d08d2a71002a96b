"""TensorFlow's fused training kernels, spelled in plain ops for `port`.

tf_keras's legacy built-ins and TF1's optimizers update their variables with
fused kernels on resource handles (`ResourceApplyAdam` and kin, and their
sparse forms `ResourceSparseApplyAdagrad` and kin), and sparse updates
scatter into variables (`ResourceScatterAdd`, ...): no graph-to-JAX
converter takes these. While `port` traces a class, `unfused()` puts in
their place the kernels' own formulas (as TensorFlow's `training_ops.cc`
states them) written with reads, arithmetic and assignments, so the traced
graph holds only ops the converter has. The numbers are the kernels'; a
sparse kernel's formula runs on the rows its indices name (the callers sum
duplicate indices first) and writes only those rows back; a scatter
reduces a repeated index's updates (their sum, product, maximum or
minimum) and applies the result once, which TensorFlow's kernel applies
one after another (the same up to rounding).
"""

from __future__ import annotations

import contextlib
import functools
import math
import re
import sys
from typing import Any, Callable, Iterator

import jax
import jax.numpy as jnp
import numpy as np
import tensorflow as tf
from tensorflow.python.framework import op_def_registry
from tensorflow.python.ops import gen_resource_variable_ops
from tensorflow.python.ops import gen_state_ops
from tensorflow.python.ops import gen_training_ops


def _adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad,
          use_nesterov=False):
  alpha = lr * tf.sqrt(1 - beta2_power) / (1 - beta1_power)
  m = m + (grad - m) * (1 - beta1)
  v = v + (tf.square(grad) - v) * (1 - beta2)
  if use_nesterov:
    return var - (m * beta1 + (1 - beta1) * grad) * alpha / (
        tf.sqrt(v) + epsilon), m, v
  return var - m * alpha / (tf.sqrt(v) + epsilon), m, v


def _adam_with_amsgrad(var, m, v, vhat, beta1_power, beta2_power, lr, beta1,
                       beta2, epsilon, grad):
  alpha = lr * tf.sqrt(1 - beta2_power) / (1 - beta1_power)
  m = m + (grad - m) * (1 - beta1)
  v = v + (tf.square(grad) - v) * (1 - beta2)
  vhat = tf.maximum(vhat, v)
  return var - m * alpha / (tf.sqrt(vhat) + epsilon), m, v, vhat


def _ada_max(var, m, v, beta1_power, lr, beta1, beta2, epsilon, grad):
  m = m + (grad - m) * (1 - beta1)
  v = tf.maximum(beta2 * v, tf.abs(grad))
  return var - lr / (1 - beta1_power) * (m / (v + epsilon)), m, v


def _gradient_descent(var, alpha, delta):
  return (var - alpha * delta,)


def _momentum(var, accum, lr, grad, momentum, use_nesterov=False):
  accum = accum * momentum + grad
  if use_nesterov:
    return var - (grad * lr + accum * momentum * lr), accum
  return var - lr * accum, accum


def _keras_momentum(var, accum, lr, grad, momentum, use_nesterov=False):
  accum = accum * momentum - lr * grad
  if use_nesterov:
    return var + (accum * momentum - lr * grad), accum
  return var + accum, accum


def _adagrad(var, accum, lr, grad, update_slots=True):
  if update_slots:
    accum = accum + tf.square(grad)
  return var - lr * grad * tf.math.rsqrt(accum), accum


def _adagrad_v2(var, accum, lr, epsilon, grad, update_slots=True):
  if update_slots:
    accum = accum + tf.square(grad)
  return var - lr * grad / (tf.sqrt(accum) + epsilon), accum


def _adadelta(var, accum, accum_update, lr, rho, epsilon, grad):
  accum = accum * rho + tf.square(grad) * (1 - rho)
  update = tf.sqrt(accum_update + epsilon) * tf.math.rsqrt(
      accum + epsilon) * grad
  accum_update = accum_update * rho + tf.square(update) * (1 - rho)
  return var - update * lr, accum, accum_update


def _rms_prop(var, ms, mom, lr, rho, momentum, epsilon, grad):
  ms = ms + (tf.square(grad) - ms) * (1 - rho)
  mom = mom * momentum + lr * grad * tf.math.rsqrt(ms + epsilon)
  return var - mom, ms, mom


def _centered_rms_prop(var, mg, ms, mom, lr, rho, momentum, epsilon, grad):
  ms = ms + (tf.square(grad) - ms) * (1 - rho)
  mg = mg + (grad - mg) * (1 - rho)
  mom = mom * momentum + lr * grad * tf.math.rsqrt(
      ms - tf.square(mg) + epsilon)
  return var - mom, mg, ms, mom


def _ftrl_v2(var, accum, linear, grad, lr, l1, l2, l2_shrinkage, lr_power,
             multiply_linear_by_lr=False):
  if multiply_linear_by_lr:
    raise NotImplementedError(
        "Ftrl's multiply_linear_by_lr=True kernel is not converted")
  new_accum = accum + tf.square(grad)
  half = tf.equal(lr_power, -0.5)
  new_power = tf.where(half, tf.sqrt(new_accum), tf.pow(new_accum, -lr_power))
  old_power = tf.where(half, tf.sqrt(accum), tf.pow(accum, -lr_power))
  linear = linear + grad + 2 * l2_shrinkage * var - (
      new_power - old_power) / lr * var
  quadratic = new_power / lr + 2 * l2
  var = (tf.clip_by_value(linear, -l1, l1) - linear) / quadratic
  return var, new_accum, linear


def _ftrl(var, accum, linear, grad, lr, l1, l2, lr_power,
          multiply_linear_by_lr=False):
  return _ftrl_v2(var, accum, linear, grad, lr, l1, l2, tf.zeros_like(l2),
                  lr_power, multiply_linear_by_lr)


def _proximal(prox, rate, l1, l2):
  return tf.sign(prox) * tf.maximum(tf.abs(prox) - rate * l1, 0) / (
      1 + rate * l2)


def _proximal_gradient_descent(var, alpha, l1, l2, delta):
  return (_proximal(var - alpha * delta, alpha, l1, l2),)


def _proximal_adagrad(var, accum, lr, l1, l2, grad):
  accum = accum + tf.square(grad)
  rate = lr * tf.math.rsqrt(accum)
  return _proximal(var - rate * grad, rate, l1, l2), accum


def _adagrad_da(var, gradient_accumulator, gradient_squared_accumulator, grad,
                lr, l1, l2, global_step):
  del var
  sums = gradient_accumulator + grad
  squares = gradient_squared_accumulator + tf.square(grad)
  step = tf.cast(global_step, grad.dtype)
  shrunk = tf.where(
      l1 > 0, tf.sign(sums) * tf.maximum(tf.abs(sums) - l1 * step, 0), sums)
  return -lr * shrunk / (l2 * step * lr + tf.sqrt(squares)), sums, squares


# Each kernel: its formula and how many of its leading inputs are variables.
_FORMULAS: dict[str, tuple[Callable[..., tuple], int]] = {
    "ResourceApplyAdam": (_adam, 3),
    "ResourceApplyAdamWithAmsgrad": (_adam_with_amsgrad, 4),
    "ResourceApplyAdaMax": (_ada_max, 3),
    "ResourceApplyGradientDescent": (_gradient_descent, 1),
    "ResourceApplyMomentum": (_momentum, 2),
    "ResourceApplyKerasMomentum": (_keras_momentum, 2),
    "ResourceApplyAdagrad": (_adagrad, 2),
    "ResourceApplyAdagradV2": (_adagrad_v2, 2),
    "ResourceApplyAdadelta": (_adadelta, 3),
    "ResourceApplyRMSProp": (_rms_prop, 3),
    "ResourceApplyCenteredRMSProp": (_centered_rms_prop, 4),
    "ResourceApplyFtrl": (_ftrl, 3),
    "ResourceApplyFtrlV2": (_ftrl_v2, 3),
    "ResourceApplyProximalGradientDescent": (_proximal_gradient_descent, 1),
    "ResourceApplyProximalAdagrad": (_proximal_adagrad, 2),
    "ResourceApplyAdagradDA": (_adagrad_da, 3),
}


# The kernels with a sparse form (`ResourceSparseApplyMomentum`): the dense
# form's inputs, in order, and `indices`.
_SPARSE_FORMS = ("Momentum", "KerasMomentum", "Adagrad", "AdagradV2",
                 "Adadelta", "RMSProp", "CenteredRMSProp", "Ftrl", "FtrlV2",
                 "ProximalGradientDescent", "ProximalAdagrad", "AdagradDA")


def _snake(name: str) -> str:
  return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_",
                name).lower()


def _named_inputs(op_def_inputs: list[str], args: tuple, kwargs: dict
                  ) -> dict[str, tf.Tensor]:
  """The kernel's inputs by name (generated functions take them by
  position, `tf.raw_ops` by keyword); the attributes are left in
  `kwargs`."""
  inputs = dict(zip(op_def_inputs, args))
  inputs.update((key, kwargs.pop(key)) for key in op_def_inputs
                if key in kwargs)
  return {key: tf.convert_to_tensor(value) for key, value in inputs.items()}


def _unfused_kernel(formula: Callable[..., tuple], handles: int,
                    op_def_inputs: list[str]) -> Callable[..., tf.Operation]:
  """The kernel as reads, the formula and assignments on its handles; a
  sparse kernel's on the rows `indices` names."""

  def kernel(*args, use_locking=False, name=None, **kwargs):
    del use_locking, name
    inputs = _named_inputs(op_def_inputs, args, kwargs)
    indices = inputs.pop("indices", None)
    names = [key for key in op_def_inputs if key != "indices"]
    values = [inputs[key] for key in names]
    dtype = inputs.get("grad", inputs.get("delta")).dtype
    tables = [gen_resource_variable_ops.read_variable_op(value, dtype)
              for value in values[:handles]]
    read = (tables if indices is None else
            [tf.gather(table, indices) for table in tables])
    scalars = [tf.cast(value, dtype) if key != "global_step" else value
               for key, value in zip(names[handles:], values[handles:])]
    new_values = formula(*read, *scalars, **kwargs)
    if indices is not None:
      new_values = [
          tf.tensor_scatter_nd_update(table, indices[:, None], rows)
          for table, rows in zip(tables, new_values)]
    return tf.group(*[
        gen_resource_variable_ops.assign_variable_op(handle, new_value)
        for handle, new_value in zip(values, new_values)])

  return kernel


def _entries(table: tf.Tensor, indices: tf.Tensor, updates: tf.Tensor
             ) -> tuple[tf.Tensor, tf.Tensor]:
  """The indices flat and a row of `updates` for each (`updates` may be a
  scalar, which every index gets)."""
  row_shape = tf.shape(table)[1:]
  updates = tf.broadcast_to(updates, tf.concat([tf.shape(indices), row_shape],
                                               0))
  return tf.reshape(indices, [-1]), tf.reshape(
      updates, tf.concat([[-1], row_shape], 0))


def _combining(apply: Callable[[tf.Tensor, tf.Tensor], tf.Tensor],
               reduction: Callable[..., tf.Tensor],
               nan_as: float | None = None
               ) -> Callable[[tf.Tensor, tf.Tensor, tf.Tensor], tf.Tensor]:
  """The scatter that reduces the updates of each row (`reduction`, a
  segment op: a repeated index's updates add up, multiply, or give their
  maximum) and applies the result to the row's value (`apply`); an
  untouched row gets the reduction's identity, which leaves it as it is.
  A float NaN update counts as `nan_as` where that is given."""

  def scatter(table, indices, updates):
    indices, updates = _entries(table, indices, updates)
    if nan_as is not None and updates.dtype.is_floating:
      # `x == x` is false for NaN alone (the converter has no `IsNan`).
      updates = tf.where(tf.equal(updates, updates), updates,
                         tf.constant(nan_as, updates.dtype))
    return apply(table, reduction(updates, indices, tf.shape(table)[0]))

  return scatter


def _scatter_update(table, indices, updates):
  indices, updates = _entries(table, indices, updates)
  return tf.tensor_scatter_nd_update(table, indices[:, None], updates)


def _nd(scatter: Callable[[tf.Tensor, tf.Tensor, tf.Tensor], tf.Tensor]
        ) -> Callable[[tf.Tensor, tf.Tensor, tf.Tensor], tf.Tensor]:
  """The N-d form of `scatter`: the last axis of `indices` names an entry
  of the table's leading axes, a row of the table with those axes
  flattened. A first index outside the table (a `RowSparse`'s padding:
  negative, or past the last row, the largest integer included, whose
  product wraps to a negative or still too large row) names a row outside
  the flattened table too, which the scatter drops."""

  def nd_scatter(table, indices, updates):
    depth = indices.shape[-1]
    leading = tf.shape(table, out_type=indices.dtype)[:depth]
    strides = tf.math.cumprod(leading, exclusive=True, reverse=True)
    flat = tf.reshape(table, tf.concat([[-1], tf.shape(table)[depth:]], 0))
    rows = tf.reduce_sum(indices * strides, -1)
    return tf.reshape(scatter(flat, rows, updates), tf.shape(table))

  return nd_scatter


# Scatters into a variable: its new value from its value, indices, updates.
_SCATTERS = {
    "ResourceScatterAdd": _combining(tf.add, tf.math.unsorted_segment_sum),
    "ResourceScatterSub": _combining(tf.subtract,
                                     tf.math.unsorted_segment_sum),
    "ResourceScatterMul": _combining(tf.multiply,
                                     tf.math.unsorted_segment_prod),
    "ResourceScatterDiv": _combining(tf.math.truediv,
                                     tf.math.unsorted_segment_prod),
    # TensorFlow's max and min kernels keep a row's value where an update
    # is NaN (Eigen's), where XLA's would take the NaN.
    "ResourceScatterMax": _combining(tf.maximum, tf.math.unsorted_segment_max,
                                     nan_as=-np.inf),
    "ResourceScatterMin": _combining(tf.minimum, tf.math.unsorted_segment_min,
                                     nan_as=np.inf),
    "ResourceScatterUpdate": _scatter_update,
}
# Their N-d forms (`ResourceScatterNdAdd`), generated in `gen_state_ops`.
_ND_SCATTERS = {
    f"ResourceScatterNd{kind}": _nd(_SCATTERS[f"ResourceScatter{kind}"])
    for kind in ("Add", "Sub", "Update", "Max", "Min")}


def _unfused_scatter(scatter: Callable[..., tf.Tensor],
                     op_def_inputs: list[str]) -> Callable[..., tf.Operation]:
  """The scatter as a read, the new value and an assignment."""

  def kernel(*args, name=None, **kwargs):
    del name
    inputs = _named_inputs(op_def_inputs, args, kwargs)
    # The handle is the first input: `resource`, or `ref` in N-d forms.
    handle, updates = inputs[op_def_inputs[0]], inputs["updates"]
    table = gen_resource_variable_ops.read_variable_op(handle, updates.dtype)
    return gen_resource_variable_ops.assign_variable_op(
        handle, scatter(table, inputs["indices"], updates))

  return kernel


@functools.cache
def _substitutes() -> dict[int, tuple[str, Callable[..., tf.Operation]]]:
  """By the id of each generated kernel function (`resource_apply_adam`) and
  raw op (`tf.raw_ops.ResourceApplyAdam`): its name and its substitute."""
  kernels = {op_name: (gen_training_ops, _unfused_kernel(
      formula, handles, _op_inputs(op_name)))
             for op_name, (formula, handles) in _FORMULAS.items()}
  kernels.update(
      (f"ResourceSparseApply{form}", (gen_training_ops, _unfused_kernel(
          *_FORMULAS[f"ResourceApply{form}"],
          _op_inputs(f"ResourceSparseApply{form}"))))
      for form in _SPARSE_FORMS)
  kernels.update(
      (op_name, (gen_resource_variable_ops,
                 _unfused_scatter(scatter, _op_inputs(op_name))))
      for op_name, scatter in _SCATTERS.items())
  kernels.update(
      (op_name, (gen_state_ops, _unfused_scatter(scatter,
                                                 _op_inputs(op_name))))
      for op_name, scatter in _ND_SCATTERS.items())
  substitutes = {}
  for op_name, (module, substitute) in kernels.items():
    generated = _snake(op_name)
    substitutes[id(getattr(module, generated))] = (generated, substitute)
    substitutes[id(getattr(tf.raw_ops, op_name))] = (op_name, substitute)
  return substitutes


@contextlib.contextmanager
def unfused() -> Iterator[None]:
  """Within: every module's reference to a fused kernel (the generated
  `gen_training_ops.resource_apply_*`, their re-exports, `tf.raw_ops.*`)
  calls its formula in plain ops instead."""
  substitutes = _substitutes()
  names = {name for name, _ in substitutes.values()}
  replaced = []
  try:
    for module in list(sys.modules.values()):
      if not getattr(module, "__name__", "").startswith(
          ("tensorflow", "tf_keras", "keras")):
        continue
      attributes = vars(module)
      for name in names.intersection(attributes):
        original = attributes[name]
        if id(original) in substitutes:
          replaced.append((module, name, original))
          setattr(module, name, substitutes[id(original)][1])
    yield
  finally:
    for module, name, original in reversed(replaced):
      setattr(module, name, original)


def _op_inputs(op_name: str) -> list[str]:
  return [arg.name for arg in op_def_registry.get(op_name).input_arg]


@functools.cache
def register_unique() -> None:
  """Gives the converter `Unique` (`tf.unique`, with which TF's optimizers
  sum a sparse gradient's duplicate indices), which it lacks. JAX needs a
  static size: the distinct values come sorted, padded to the input's
  length with the largest integer (a row no table has, which gathers read
  as fill and scatters drop; sums over them are zero); each input's
  position among them is TF's. By a sort, not `jnp.unique`, whose size
  must be a number: the input's length may be symbolic (`jax.export`)."""
  from tf2jax._src import ops  # pylint: disable=import-outside-toplevel
  if not ops.get_unsupported_operations(["Unique"]):
    return

  def parse(proto):
    position_dtype = tf.dtypes.as_dtype(proto.attr["out_idx"].type)

    def unique(x):
      order = jnp.argsort(x, stable=True)
      ordered = x[order]
      previous = jnp.concatenate([ordered[:1], ordered[:-1]])
      starts = (ordered != previous).at[0].set(True)
      positions = (jnp.cumsum(starts) - 1).astype(
          position_dtype.as_numpy_dtype)
      values = jnp.full_like(x, jnp.iinfo(x.dtype).max).at[positions].set(
          ordered)
      return values, jnp.zeros_like(positions).at[order].set(positions)

    return unique

  ops.register_operation("Unique")(parse)


def _holds_symbolic_dimension(value: Any) -> bool:
  """Whether `value` is a size or shape the converter computed with a
  dimension known only when the step runs (tf2jax's `Shape` keeps
  `jax.export`'s symbolic dimensions in a numpy array of objects, and an
  element of it as the dimension itself)."""
  symbolic = jax.export.is_symbolic_dim
  return symbolic(value) or (
      isinstance(value, np.ndarray) and value.dtype == object and
      any(map(symbolic, value.flat)))


def _dimensions_as_values(value: Any) -> Any:
  """A size or shape holding a symbolic dimension as an array of the step;
  any other value as it is."""
  if not _holds_symbolic_dimension(value):
    return value
  sizes = np.asarray(value, dtype=object)
  return jnp.array([jnp.array(size) for size in sizes.flat]).reshape(
      sizes.shape)


def _symbolic_size(static_size: Callable[..., Any], proto: Any
                   ) -> Callable[..., Any]:
  del proto

  def size(x):
    shape = jnp.shape(x)
    if not any(map(jax.export.is_symbolic_dim, shape)):
      return static_size(x)
    return math.prod(shape)

  return size


def _symbolic_fill(static_fill: Callable[..., Any], proto: Any
                   ) -> Callable[..., Any]:
  dtype = tf.dtypes.as_dtype(proto.attr["T"].type).as_numpy_dtype

  def fill(shape, value):
    if not _holds_symbolic_dimension(shape):
      return static_fill(shape, value)
    return jnp.full(tuple(shape), value, dtype)

  return fill


def _on_values(static_op: Callable[..., Any], proto: Any
               ) -> Callable[..., Any]:
  del proto
  return lambda *inputs: static_op(*map(_dimensions_as_values, inputs))


def _on_values_beside_arrays(static_op: Callable[..., Any], proto: Any
                             ) -> Callable[..., Any]:
  """Symbolic dimensions as values of the step where another input is one
  (`tf.range(n) * n`); among sizes and shapes alone, as they are (`n * 2`
  as a shape)."""
  del proto

  def op(*inputs):
    if any(isinstance(x, jax.Array) for x in inputs):
      inputs = map(_dimensions_as_values, inputs)
    return static_op(*inputs)

  return op


def _dimension_bound(larger: bool) -> Callable[[Any, Any], Any]:
  """The larger (or smaller) of two sizes, symbolic where one is (JAX's
  `max(n, 8)`, a shape again: the `k` of `tf.math.top_k`)."""

  def bound(a, b):
    if jax.export.is_symbolic_dim(a):
      return a.max(b) if larger else a.min(b)
    if jax.export.is_symbolic_dim(b):
      return b.rmax(a) if larger else b.rmin(a)
    return max(a, b) if larger else min(a, b)

  return bound


def _symbolic_bound(larger: bool):
  def form(static_bound: Callable[..., Any], proto: Any
           ) -> Callable[..., Any]:
    elementwise = np.vectorize(_dimension_bound(larger), otypes=[object])
    beside_arrays = _on_values_beside_arrays(static_bound, proto)

    def bound(x, y):
      if (isinstance(x, jax.Array) or isinstance(y, jax.Array) or not (
          _holds_symbolic_dimension(x) or _holds_symbolic_dimension(y))):
        return beside_arrays(x, y)
      bounds = elementwise(np.asarray(x, dtype=object),
                           np.asarray(y, dtype=object))
      # A scalar as the dimension itself, as tf2jax's slices of a shape
      # give it: ops that take a number (`top_k`'s k) take that.
      return bounds.item() if bounds.ndim == 0 else bounds

    return bound

  return form


def _symbolic_range(static_range: Callable[..., Any], proto: Any
                    ) -> Callable[..., Any]:
  dtype = tf.dtypes.as_dtype(proto.attr["Tidx"].type).as_numpy_dtype

  def range_(start, limit, delta):
    if not any(map(_holds_symbolic_dimension, (start, limit, delta))):
      return static_range(start, limit, delta)
    return jnp.arange(*(np.asarray(bound, dtype=object).item()
                        for bound in (start, limit, delta)), dtype=dtype)

  return range_


# Per op: its form for shapes holding a symbolic dimension, made from
# tf2jax's own (which it keeps for every other input) and the op's proto.
_SYMBOLIC_FORMS = {
    "Size": _symbolic_size, "Fill": _symbolic_fill, "Range": _symbolic_range,
    "Maximum": _symbolic_bound(larger=True),
    "Minimum": _symbolic_bound(larger=False),
    **dict.fromkeys(("Equal", "NotEqual", "Less", "LessEqual", "Greater",
                     "GreaterEqual", "Cast"), _on_values),
    **dict.fromkeys(("Add", "AddV2", "Sub", "Mul", "RealDiv", "FloorDiv",
                     "FloorMod", "Select", "SelectV2"),
                    _on_values_beside_arrays)}


def _parse_symbolic(symbolic_form: Callable[..., Callable[..., Any]],
                    static_parse: Callable[..., Callable[..., Any]],
                    proto: Any) -> Callable[..., Any]:
  return symbolic_form(static_parse(proto), proto)


@functools.cache
def register_symbolic_dimensions() -> None:
  """Lets the converter's ops take a shape with a dimension known only
  when the step runs (a sparse gradient's number of entries under
  `jax.export`), which tf2jax's `Shape` hands on as `jax.export`'s
  symbolic dimension (in a numpy array of objects, a scalar as the
  dimension itself), and which its slices, `Pack`, `ConcatV2`, `Reshape`,
  `Tile` and arithmetic on shapes take as they are. Where they do not:
  - `Size` makes the product an int32, which a symbolic dimension cannot
    be (`tf.size` of the entries); `Fill` and `Range` build numpy arrays
    (`tf.ones` of such a shape, `tf.range` of the number): here JAX's, of
    a symbolic length; `Maximum` and `Minimum` of sizes cannot decide
    which is larger in numpy: here JAX's symbolic bound (`min(n, 8)`,
    still a shape: the `k` of `tf.math.top_k`).
  - `Equal`, `NotEqual` and the orderings would compare symbolic
    dimensions in numpy, which calls two different expressions unequal
    (`n == 4` is False for every n) or cannot order them, and `Cast` takes
    a number: these take the dimensions as values of the step
    (`tf.cast(tf.size(indices), tf.float32)` of a mean over the entries).
  - Arithmetic and `Select` of a dimension beside a value of the step
    (`tf.range(n) * n`) take it as a value too.
  Other inputs convert as tf2jax converts them. tf2jax refuses to register
  an op twice, so these entries of its table are replaced."""
  from tf2jax._src import ops  # pylint: disable=import-outside-toplevel
  for op_name, symbolic_form in _SYMBOLIC_FORMS.items():
    ops._jax_ops[op_name] = functools.partial(  # pylint: disable=protected-access
        _parse_symbolic, symbolic_form, ops.get_parser(op_name))
