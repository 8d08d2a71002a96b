"""The fused step converted and compiled for TensorFlow, and shared.

A JAX step becomes one `XlaCallModule` op (`jax2tf`) inside a
`tf.function(autograph=False)`; reading and assigning the variables around
it is compiled with it (`tf.function(jit_compile=True)`). Optimizer
instances whose steps compute the same thing share one converted and
compiled step, keyed by the step's program (`_program_key`).
"""

from __future__ import annotations

import collections
import contextlib
import functools
import hashlib
import threading
from typing import Any, Callable, Iterator, Sequence

import jax
import jax.extend
import numpy as np

from tf_bridge._layout import StateLayout, numpy_dtype, precision, spec_of

# Compiled steps shared by optimizer instances in this process, keyed by the
# step's program (`_program_key`): a new optimizer that computes the same
# step (a model compiled again, a tuner's next trial, a fold) reuses the
# converted and compiled step instead of paying its first call again. The
# most recent ones are kept.
_SHARED_STEPS: collections.OrderedDict[Any, tuple[Any, Any, Any]] = (
    collections.OrderedDict())
_SHARED_STEPS_KEPT = 16


def compiled_step(step: Callable[..., Any], layout: StateLayout,
                  sparse: tuple[bool, ...], inputs: Sequence[Any],
                  shareable: bool = True, static_lengths: bool = False
                  ) -> tuple[Any, Any, Any]:
  """(converted step, compiled apply, its eager caller: see
  `_compile_apply`) of the JAX `step` (`FusedTransform`'s, the stored
  leaves in the layout's leaf order), another instance's of the same
  program (`_SHARED_STEPS`) if `shareable`, else new. `inputs`: the call's
  arguments, with the variables themselves (their shapes and dtypes are
  traced).

  The step is traced to a jaxpr first, which keys the sharing. A dense
  step converts that jaxpr: a shared step replays the program, never an
  instance's Python (whose hyperparameters may change later). A sparse
  step's gradient length is symbolic, so jax2tf traces it again for each
  new length (jax2tf's symbols are not the jaxpr's): the caller hands a
  step that keeps its hyperparameters as they are now. With
  `static_lengths`, the sparse gradients' lengths are the inputs' (a step
  converted for each, as a dense one)."""
  symbolic = any(sparse) and not static_lengths
  polymorphic = _polymorphic_shapes(
      sparse, [layout.param_specs[k].shape[1:] for k in layout.keys]
  ) if symbolic else None
  step = _in_stored_order(step, layout.stored_order)

  def compiled(step):
    converted = _convert(step, polymorphic)
    return (converted, *_compile_apply(
        converted, layout.float64,
        [v.dtype for v in [*inputs[0], *inputs[2]]]))

  if not shareable:
    return compiled(step)
  with precision(layout.float64):
    if symbolic:
      closed = jax.make_jaxpr(step)(*_symbolic_specs(inputs, polymorphic))
    else:
      closed, shapes = jax.make_jaxpr(step, return_shape=True)(
          *jax.tree.map(spec_of, inputs))
      step = _replay(closed, shapes)
  program = _program_key(closed)
  shared = _SHARED_STEPS.pop(program, None) or compiled(step)
  _SHARED_STEPS[program] = shared  # The most recent last.
  while len(_SHARED_STEPS) > _SHARED_STEPS_KEPT:
    _SHARED_STEPS.popitem(last=False)
  return shared


def converted(step: Callable[..., Any], layout: StateLayout,
              sparse: tuple[bool, ...], static_lengths: bool = False) -> Any:
  """The JAX `step` over `layout`'s variables as a `tf.function`, not
  shared (the stored leaves in the layout's leaf order; `static_lengths`:
  see `compiled_step`)."""
  return _convert(step, None if static_lengths else _polymorphic_shapes(
      sparse, [layout.param_specs[k].shape[1:] for k in layout.keys]))


def to_tensorflow(function: Callable[..., Any],
                  polymorphic_shapes: Any = None) -> Callable[..., Any]:
  """`function` (JAX) as a TensorFlow function: `jax2tf.convert`, one
  `XlaCallModule` op.

  Converted `with_gradient=True` though nothing differentiates it: without
  a gradient jax2tf wraps every output in a `PreventGradient` op, which
  TensorFlow's XLA compiler has no kernel of its own for and lowers through
  its MLIR pipeline one op at a time (2.5 ms each, measured: ResNet-50's
  fused step spent 1.0 s of its first call there).

  The module is serialized for the StableHLO version TensorFlow reads
  (`_serialized_for_tensorflow`) when the converted function is traced.
  """
  from jax.experimental import jax2tf  # pylint: disable=import-outside-toplevel
  converted = jax2tf.convert(function, with_gradient=True,
                             polymorphic_shapes=polymorphic_shapes,
                             native_serialization_platforms=_export_platforms())

  @functools.wraps(converted)
  def call(*arguments):
    with _serialized_for_tensorflow():
      return converted(*arguments)
  return call


# Held while `jax.export`'s serializer is swapped
# (`_serialized_for_tensorflow`).
_SERIALIZER_SWAP = threading.RLock()


@contextlib.contextmanager
def _serialized_for_tensorflow() -> Iterator[None]:
  """Within it, `jax.export` serializes this thread's modules for the
  StableHLO version TensorFlow's `XlaCallModule` deserializes, where that is
  older than the version jax targets.

  jax targets the StableHLO of 4 weeks before its release (1.18.0 for jax
  0.12), TensorFlow 2.21 reads 1.13.7. Most ops are written as 1.13.7 reads
  them either way, but a polymorphic shape's assertion (a `shape_assertion`
  custom call, e.g. that a sparse gradient's values and indices have the
  same length) is written as `vhlo.custom_call_v2` from 1.18 on, which
  TensorFlow 2.21 refuses to load. `jax.export` takes no target version, so
  its serializer is swapped for the conversion; other threads' exports keep
  jax's. A module that needs an op newer than TensorFlow reads then fails
  when it is converted, not when TensorFlow loads it.
  """
  target = _tensorflow_stablehlo_target()
  if target is None:
    yield
    return
  # pylint: disable=import-outside-toplevel,protected-access
  from jax._src import xla_bridge
  from jax._src.export import _export
  from jax._src.lib import _jax
  with _SERIALIZER_SWAP:
    jax_serializer = _export._module_to_bytecode
    thread = threading.get_ident()

    def serialize(module: Any) -> bytes:
      if threading.get_ident() != thread:
        return jax_serializer(module)
      return _jax.mlir.serialize_portable_artifact(
          module, target, xla_bridge.get_backend().serialize_with_sdy)

    _export._module_to_bytecode = serialize
    try:
      yield
    finally:
      _export._module_to_bytecode = jax_serializer


@functools.cache
def _tensorflow_stablehlo_target() -> str | None:
  """TensorFlow's StableHLO version where jax targets a newer one, else
  None (jax's own target loads in TensorFlow)."""
  # pylint: disable=import-outside-toplevel
  from jax._src.lib.mlir.dialects import hlo
  from tensorflow.compiler.mlir.stablehlo import stablehlo

  def version(text: str) -> tuple[int, ...]:
    return tuple(map(int, text.split(".")))

  tensorflows = stablehlo.get_current_version()
  jaxs = hlo.get_version_from_compatibility_requirement(
      hlo.StablehloCompatibilityRequirement.WEEK_4)
  return tensorflows if version(tensorflows) < version(jaxs) else None


def _compile_apply(step: Callable[..., Any], float64: bool,
                   dtypes: Sequence[Any]):
  """`step` (converted) with the variables read and assigned in one
  `tf.function(jit_compile=True)`: `compiled_apply`, and the same called
  through its concrete function (`_eager_caller`). It takes the
  variables' resource handles (`dtypes`: theirs, params then state): a
  function taking variables keeps weak references to the ones created
  inside a `tf.function` (tf_keras's slots), and calling it after they are
  gone raises, which a step shared by instances must not."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel

  # reduce_retracing: sparse gradients of other lengths reuse the trace.
  @tf.function(jit_compile=True, autograph=False, reduce_retracing=True)
  def apply(handles, grads, state_handles, learning_rate, row_indices,
            iterations):
    values = [tf.raw_ops.ReadVariableOp(resource=handle, dtype=dtype)
              for handle, dtype in zip([*handles, *state_handles], dtypes)]
    with precision(float64):
      new_params, new_state = step(
          values[:len(handles)], grads, values[len(handles):],
          learning_rate, row_indices, iterations)
    for handle, value in zip([*handles, *state_handles],
                             [*new_params, *new_state]):
      tf.raw_ops.AssignVariableOp(resource=handle, value=value)
    # An output, so that graphs can depend on the update having run.
    return tf.constant(True)
  return apply, _eager_caller(apply)


def is_resource(variable: Any) -> bool:
  """Whether a variable is a resource variable (not a TF1 reference one)."""
  return hasattr(variable, "handle")


def apply_to_references(converted: Callable[..., Any], float64: bool,
                        inputs: Sequence[Any]) -> Any:
  """The `converted` step on TF1 reference variables
  (`tf.compat.v1.disable_v2_behavior()`), which have no resource handle for
  the compiled apply: their values in, `tf.compat.v1.assign` of the
  results. `inputs`: `compiled_apply`'s, with the variables themselves."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  variables, grads, state_variables = inputs[:3]
  with precision(float64):
    new_params, new_state = converted(
        [v.value() for v in variables], grads,
        [s.value() for s in state_variables], *inputs[3:])
  return tf.group([tf.compat.v1.assign(variable, value) for variable, value
                   in zip([*variables, *state_variables],
                          [*new_params, *new_state])])


def _eager_caller(apply: Any) -> Callable[..., Any]:
  """`apply` called through its concrete function for the first call's
  arguments (eagerly and outside a distribution strategy, a `tf.function`
  keys its traces on the arguments' types alone, which a dense step's keep,
  also in the instances that share it)."""
  concrete = []

  def call(*arguments):
    if not concrete:
      concrete.append(apply.get_concrete_function(*arguments))
    return concrete[0](*arguments)
  return call


def _program_key(closed: Any) -> tuple[Any, ...]:
  """What identifies a traced step's computation, whatever order the
  transform visited the variables in: a digest of each output's
  computation, built from each equation's printed form (primitive,
  parameters, literals, shapes; the constants of the jaxprs among its
  parameters, which print as shapes only, by value) and its inputs'
  digests, back to the step's arguments by position and its constants by
  value. Keras names a second model's variables on from the first's
  (`dense_12` after `dense_11`) and the transform sees them as a dict
  sorted by name, so the same step can come traced in another order: it
  gets the same key, and any other difference another one."""

  def digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()

  def value(constant: Any) -> str:
    constant = np.asarray(constant)
    return digest("constant", f"{constant.dtype}{constant.shape}",
                  constant.tobytes().hex())

  jaxpr = closed.jaxpr
  digests = {var: digest("argument", str(position))
             for position, var in enumerate(jaxpr.invars)}
  for var, constant in zip(jaxpr.constvars, closed.consts):
    digests[var] = value(constant)

  def of(atom: Any) -> str:
    # A literal is printed in its equation.
    return (repr(atom) if isinstance(atom, jax.extend.core.Literal)
            else digests[atom])

  for equation in jaxpr.eqns:
    operation = digest(repr(equation), *map(of, equation.invars),
                       *map(value, _nested_constants(equation.params)))
    for index, var in enumerate(equation.outvars):
      digests[var] = digest(operation, str(index))
  # The arguments' shapes and dtypes (the converted step takes them all,
  # also those it does not read).
  return (tuple(str(var.aval) for var in jaxpr.invars),
          tuple(map(of, jaxpr.outvars)), jax.config.jax_enable_x64)


def _nested_constants(params: dict[str, Any]) -> Iterator[Any]:
  """The constants of the closed jaxprs in an equation's parameters (a
  jitted helper closing over an array), at any depth."""
  for parameter in params.values():
    for item in (parameter if isinstance(parameter, (tuple, list))
                 else (parameter,)):
      if isinstance(item, jax.extend.core.ClosedJaxpr):
        yield from item.consts
        item = item.jaxpr
      if isinstance(item, jax.extend.core.Jaxpr):
        for equation in item.eqns:
          yield from _nested_constants(equation.params)


def _in_stored_order(step: Callable[..., Any], order: Sequence[int]
                     ) -> Callable[..., Any]:
  """`step` taking and returning its stored state leaves in `order` (their
  positions in the state's leaf order)."""
  inverse = np.argsort(order)

  def reordered(params, grads, stored_leaves, *arguments):
    new_params, new_leaves = step(
        params, grads, [stored_leaves[i] for i in inverse], *arguments)
    return new_params, [new_leaves[i] for i in order]
  return reordered


def _replay(closed: Any, shapes: Any) -> Callable[..., Any]:
  """The traced step `closed` as a function of the step's arguments,
  returning its outputs' structure (`shapes`)."""
  run = jax.extend.core.jaxpr_as_fun(closed)
  outputs = jax.tree.structure(shapes)

  def step(*arguments):
    return jax.tree.unflatten(outputs, run(*jax.tree.leaves(arguments)))
  return step


def _polymorphic_shapes(sparse: tuple[bool, ...],
                        row_shapes: Sequence[tuple[int, ...]]) -> list[Any]:
  """jax2tf's `polymorphic_shapes` of the step's arguments: a sparse
  gradient's length is symbolic (one conversion serves every batch), its
  rows the variable's."""
  lengths = [f"({', '.join(map(str, (f'n{index}', *row_shape)))})"
             if is_sparse else None
             for index, (is_sparse, row_shape) in enumerate(zip(sparse,
                                                                 row_shapes))]
  return [None, lengths, None, None,
          [f"(n{index},)" for index, is_sparse in enumerate(sparse)
           if is_sparse], None]


def _symbolic_specs(inputs: Sequence[Any], polymorphic: list[Any]
                    ) -> list[Any]:
  """The specs of the step's arguments `inputs`, the lengths of the sparse
  gradients and their indices symbolic as `polymorphic` says
  (`_polymorphic_shapes`). Not `jax.export.symbolic_args_specs` of
  `spec_of`'s: in a `tf.function` those lengths are unknown, and jax 0.12
  refuses a `jax.ShapeDtypeStruct` of an unknown length."""
  scope = jax.export.SymbolicScope()

  def specs(shape: str | None, value: Any) -> Any:
    if shape is None:
      return jax.tree.map(spec_of, value)
    return jax.ShapeDtypeStruct(
        jax.export.symbolic_shape(shape, scope=scope),
        numpy_dtype(value.dtype))
  return jax.tree.map(specs, polymorphic, list(inputs),
                      is_leaf=lambda shape: shape is None)


def _convert(step: Callable[..., Any], polymorphic_shapes: list[Any]):
  """`step` as a `tf.function` (`_polymorphic_shapes`: its arguments')."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  return tf.function(
      to_tensorflow(step, polymorphic_shapes=polymorphic_shapes),
      autograph=False)


def _export_platforms() -> tuple[str, ...] | None:
  """The platforms to export the step for: the CPU where TensorFlow has no
  accelerator. jax2tf's default, JAX's default backend, is wrong where JAX
  has a GPU (jax[cuda]) and TensorFlow does not: TensorFlow then refuses to
  run the step. With an accelerator in TensorFlow, JAX's default backend as
  before."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  if any(tf.config.list_physical_devices(kind) for kind in ("GPU", "TPU")):
    return None
  return ("cpu",)
