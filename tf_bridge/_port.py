"""`tf_bridge.port`: a TensorFlow optimizer object's own update as optax.

The class's Python code runs once per variable-list signature (with which
gradients are sparse, and their entries), at conversion: a copy of the
optimizer applies gradients to variables of the params' shapes inside a
`tf.function` (a `RowSparse` gradient as the `tf.IndexedSlices` it stands
for, so the class's own sparse hook runs); the traced graph (every variable
it reads or assigns an input, the assigned values outputs) is converted to
JAX by `tf2jax` at the first update. Fused training kernels and scatters
are traced as their formulas (`_kernels.unfused`). `port` itself traces
the class once on a probe variable, for the refusals that read the graph
and the Python state.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import sys
from typing import Any, Callable, Iterator, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
import tensorflow as tf

from jaxopt_port import _row_sparse
from jaxopt_port._row_sparse import is_row_sparse
from tf_bridge import _hosts, _kernels


class PortState(NamedTuple):
  """The state of a ported optimizer: its own variables, by its names."""
  slots: dict[str, Any]  # slot name -> a tree like params (None: no slot).
  iterations: jax.Array  # shape=(), the class's count (TF1: global_step).
  variables: dict[str, jax.Array]  # hyperparameters, TF1 non-slot variables.


_PYTHON_FUNCTION_OPS = frozenset({"EagerPyFunc", "PyFunc", "PyFuncStateless"})
_STATEFUL_RANDOM_OPS = frozenset({
    "RandomStandardNormal", "RandomUniform", "RandomUniformInt",
    "TruncatedNormal", "RandomShuffle", "Multinomial", "RandomGamma",
    "RandomPoisson", "RandomPoissonV2", "ParameterizedTruncatedNormal",
    "StatefulStandardNormalV2", "StatefulUniform", "StatefulUniformInt",
    "StatefulUniformFullInt", "StatefulTruncatedNormal", "RngReadAndSkip",
    "RngSkip"})


class PortError(TypeError):
  """`port` cannot convert the optimizer's update faithfully."""


def _hook_of(op: tf.Operation, host: _hosts.Host) -> str:
  """The innermost optimizer hook on the stack that created `op`."""
  for frame in reversed(op.traceback):
    if frame.name in host.hooks:
      return frame.name
  return "apply_gradients"


def _graph_ops(graph: tf.Graph):
  yield from graph.get_operations()
  for function in graph._functions.values():  # pylint: disable=protected-access
    yield from function.graph.get_operations()


def _refuse_unconvertible(graph: tf.Graph, host: _hosts.Host,
                          class_name: str) -> None:
  from tf2jax._src import ops as tf2jax_ops  # pylint: disable=import-outside-toplevel
  _kernels.register_unique()
  _kernels.register_symbolic_dimensions()
  for op in _graph_ops(graph):
    where = f"{class_name}.{_hook_of(op, host)}"
    if op.type in _PYTHON_FUNCTION_OPS:
      raise PortError(
          f"tf_bridge.port cannot convert {where}: it calls tf.py_function "
          f"(op {op.type} {op.name!r}), Python run at every step, which a "
          "JAX function cannot hold.")
    if op.type in _STATEFUL_RANDOM_OPS:
      raise PortError(
          f"tf_bridge.port cannot convert {where}: it draws from "
          f"{_random_kind(op)} random op ({op.type} {op.name!r}), whose "
          "numbers come from TensorFlow's hidden random state at every step; "
          "use a stateless random op with an explicit seed.")
    if tf2jax_ops.get_unsupported_operations([op.type]):
      raise PortError(
          f"tf_bridge.port cannot convert {where}: the TensorFlow op {op.type} "
          f"({op.name!r}) has no JAX counterpart in the converter.")


_PLAIN = (bool, int, float, str, type(None), tuple)


def _random_kind(op: tf.Operation) -> str:
  """How a refusal names a stateful random op: unseeded, or given an op
  seed (it still draws anew at every step)."""
  seeds = [op.get_attr(name) for name in ("seed", "seed2")
           if name in op.node_def.attr]
  return "a stateful" if any(seeds) else "an unseeded"


def _python_state(optimizer: Any) -> dict[str, Any]:
  """The optimizer's plain Python attributes (numbers, strings, tuples)."""
  return {name: value for name, value in vars(optimizer).items()
          if isinstance(value, _PLAIN)}


def _innermost_hook(host: _hosts.Host) -> str:
  frame = sys._getframe(2)  # pylint: disable=protected-access
  while frame is not None:
    if frame.f_code.co_name in host.hooks:
      return frame.f_code.co_name
    frame = frame.f_back
  return "apply_gradients"


@contextlib.contextmanager
def _assignments_recorded(optimizer: Any, host: _hosts.Host,
                          hooks: dict[str, str]) -> Iterator[None]:
  """Within: `hooks[name]` is the hook that last set `optimizer.<name>`."""
  cls = type(optimizer)

  def __setattr__(self, name, value):
    if isinstance(value, _PLAIN):
      hooks[name] = _innermost_hook(host)
    cls.__setattr__(self, name, value)

  optimizer.__class__ = type(cls.__name__, (cls,),
                             {"__setattr__": __setattr__})
  try:
    yield
  finally:
    optimizer.__class__ = cls


def _refuse_python_state(before: dict, after: dict, hooks: dict[str, str],
                         class_name: str) -> None:
  for name in sorted(set(before) | set(after)):
    if before.get(name, "<unset>") != after.get(name, "<unset>"):
      raise PortError(
          f"tf_bridge.port cannot convert "
          f"{class_name}.{hooks.get(name, 'apply_gradients')}: it changes "
          f"the Python attribute self.{name} at every step "
          f"({before.get(name, '<unset>')!r} -> "
          f"{after.get(name, '<unset>')!r}), state a traced step cannot "
          "carry; keep it in a variable (a slot, add_weight).")


@contextlib.contextmanager
def _quiet_absl() -> Iterator[None]:
  logger = logging.getLogger("absl")
  level = logger.level
  logger.setLevel(logging.ERROR)
  try:
    yield
  finally:
    logger.setLevel(level)


def _probe_values(spec: jax.ShapeDtypeStruct, seed: int) -> np.ndarray:
  """Distinct values the slots' initial values are checked against."""
  values = np.random.default_rng(seed).uniform(0.5, 1.5, spec.shape)
  return values.astype(spec.dtype)


def _tf2jax_keys(function: tf.types.experimental.ConcreteFunction
                 ) -> dict[Any, str]:
  """The parameter names tf2jax gives the function's variables, by handle
  (the variables' names, made unique in the order they were captured)."""
  by_handle = {v.handle.ref(): v for v in function.variables}
  keys, taken = {}, set()
  for captured in function.captured_inputs:
    if captured.dtype != tf.resource or captured.ref() in keys:
      continue
    name = by_handle[captured.ref()].name.split(":")[0]
    key, suffix = name, 1
    while key in taken:
      key, suffix = f"{name}_{suffix}", suffix + 1
    taken.add(key)
    keys[captured.ref()] = key
  return keys


def _optimizer_variables(optimizer: Any) -> list:
  found = optimizer.variables
  return list(found() if callable(found) else found)


def _tf_variable(variable: Any) -> tf.Variable:
  """The TensorFlow variable behind a Keras 3 one (its `value`)."""
  return variable if isinstance(variable, tf.Variable) else variable.value


def _handle(variable: Any) -> Any:
  return variable.handle.ref()


def _short_name(variable: Any) -> str:
  return variable.name.split(":")[0].rsplit("/", 1)[-1]


# Per gradient leaf: None (dense), or a sparse one's (entries, index dtype);
# entries None where the number is symbolic (`jax.export`).
Sparsity = tuple[int | None, np.dtype] | None


def _gradient_specs(specs: list[jax.ShapeDtypeStruct],
                    sparsity: list[Sparsity]) -> list[tf.TensorSpec]:
  """The traced step's gradient inputs: a dense leaf's array, a sparse
  leaf's values and indices."""
  flat = []
  for spec, sparse in zip(specs, sparsity):
    if sparse is None:
      flat.append(tf.TensorSpec(spec.shape, spec.dtype))
    else:
      entries, index_dtype = sparse
      flat += [tf.TensorSpec((entries, *spec.shape[1:]), spec.dtype),
               tf.TensorSpec((entries,), index_dtype)]
  return flat


def _gradients(flat: list[tf.Tensor], specs: list[jax.ShapeDtypeStruct],
               sparsity: list[Sparsity]) -> list[Any]:
  """The gradients `apply_gradients` is given: `tf.IndexedSlices` for the
  sparse leaves, as a lookup's gradient reaches an optimizer."""
  flat, grads = list(flat), []
  for spec, sparse in zip(specs, sparsity):
    if sparse is None:
      grads.append(flat.pop(0))
    else:
      values, indices = flat.pop(0), flat.pop(0)
      grads.append(tf.IndexedSlices(
          values, indices, tf.constant(spec.shape, indices.dtype)))
  return grads


class _Trace(NamedTuple):
  """A copy of the optimizer, stepped in a `tf.function` on new variables."""
  tracer: Any
  variables: list
  global_step: tf.Variable
  step: Any  # The tf.function, traced for `gradient_specs`.
  function: tf.types.experimental.ConcreteFunction
  gradient_specs: list[tf.TensorSpec]


def _traced(optimizer: Any, host: _hosts.Host,
            specs: list[jax.ShapeDtypeStruct],
            sparsity: list[Sparsity]) -> _Trace:
  """The optimizer's steady step traced on variables like `specs`, after
  the refusals that read the graph and the Python state (tf2jax is not
  run: this is what `port` checks at once, on a probe)."""
  class_name = type(optimizer).__name__
  tracer = _hosts.copy_of(optimizer)
  variables = [host.variable(_probe_values(spec, 0), f"port_variable_{i}")
               for i, spec in enumerate(specs)]
  global_step = getattr(tracer, "_global_step", None)
  if host is not _hosts.TF1 or not isinstance(global_step, tf.Variable):
    global_step = tf.Variable(0, dtype=tf.int64, name="global_step")
  # Else a TF1 class that reads the step it was made with (AdagradDA): that
  # step is the one its caller advances.

  def apply(flat):
    # Fused kernels take bare handles, which a graph does not count as
    # reading their variables: every variable is declared read here.
    graph = tf.compat.v1.get_default_graph()
    for variable in [*variables, global_step, *_optimizer_variables(tracer)]:
      graph.watch_variable(_tf_variable(variable))
    host.apply(tracer, _gradients(flat, specs, sparsity), variables,
               global_step)

  gradient_specs = _gradient_specs(specs, sparsity)
  with _kernels.unfused():
    # The first trace creates the slots; the second is the steady step,
    # and a Python attribute that differs after it changes at every step.
    tf.function(apply).get_concrete_function(gradient_specs)
    before, hooks = _python_state(tracer), {}
    step = tf.function(apply)
    with _assignments_recorded(tracer, host, hooks):
      function = step.get_concrete_function(gradient_specs)
  _refuse_python_state(before, _python_state(tracer), hooks, class_name)
  _refuse_unconvertible(function.graph, host, class_name)
  return _Trace(tracer, variables, global_step, step, function,
                gradient_specs)


class _Conversion:
  """The optimizer's update for one list of variable shapes and dtypes and
  of which gradients are sparse."""

  def __init__(self, optimizer: Any, host: _hosts.Host,
               specs: list[jax.ShapeDtypeStruct], sparsity: list[Sparsity]):
    class_name = self._class_name = type(optimizer).__name__
    self._specs, self._sparsity = specs, sparsity
    trace = _traced(optimizer, host, specs, sparsity)
    tracer, variables, function = trace.tracer, trace.variables, trace.function
    self._trace, self._jax_step = trace, None
    keys = _tf2jax_keys(function)
    self._params = [keys[_handle(v)] for v in variables]
    slots = host.slots(tracer, variables)
    # Per slot and variable: its key in the step (None: the class keeps no
    # such slot; "": the step does not read it, so it is carried as it is).
    self._slots = {name: [None if s is None else keys.get(_handle(s), "")
                          for s in found] for name, found in slots.items()}
    self._slot_starts = {name: [None if s is None else np.asarray(s.numpy())
                                for s in found]
                         for name, found in slots.items()}
    iterations = host.iterations(tracer, trace.global_step)
    self._iterations = keys.get(_handle(iterations))
    roles = set(self._params) | {self._iterations} | {
        key for found in self._slots.values() for key in found if key}
    by_key = {key: v for v in function.variables
              for key in [keys.get(_handle(v))] if key is not None}
    self._variables = {}
    for key in sorted(set(keys.values()) - roles):
      name = _short_name(by_key[key])
      while name in self._variables:
        name += "_"
      self._variables[name] = key
    # What tf2jax gives the converted step as its variables' values.
    self._initial = {keys[_handle(v)]: np.asarray(v.numpy())
                     for v in function.variables if _handle(v) in keys}
    self._initial_iterations = (np.asarray(iterations.numpy())
                                if self._iterations is None else
                                self._initial[self._iterations])
    self._copies_param = self._slot_initializers(optimizer, host, slots,
                                                 class_name)

  def _slot_initializers(self, optimizer: Any, host: _hosts.Host,
                         slots: dict[str, list], class_name: str
                         ) -> set[tuple[str, int]]:
    """Which slots start as a copy of their variable; every other one must
    start at a value that does not depend on the variable's."""
    other = _hosts.copy_of(optimizer)
    variables = [host.variable(_probe_values(spec, 1), f"port_variable_{i}")
                 for i, spec in enumerate(self._specs)]
    host.build(other, variables)
    other_slots = host.slots(other, variables)
    copies = set()
    for name, found in slots.items():
      for i, (slot, other_slot) in enumerate(zip(found, other_slots[name])):
        if slot is None:
          continue
        first = self._slot_starts[name][i]
        second = np.asarray(other_slot.numpy())
        if np.array_equal(first, second):
          continue
        if (np.array_equal(first, _probe_values(self._specs[i], 0)) and
            np.array_equal(second, _probe_values(self._specs[i], 1))):
          copies.add((name, i))
          continue
        raise PortError(
            f"tf_bridge.port cannot convert {class_name}: its slot {name!r} "
            "starts at a value computed from its variable's value other than "
            "the value itself, which init(params) does not reproduce.")
    return copies

  def initial_state(self, leaves: list, treedef: Any) -> PortState:
    def initial(key):
      value = self._initial[key]
      return jnp.asarray(value,
                         dtype=jax.dtypes.canonicalize_dtype(value.dtype))

    slots = {}
    for name, found in self._slots.items():
      if not leaves:  # An empty tree (optax.tree_map_params's placeholder).
        slots[name] = jax.tree.unflatten(treedef, [])
        continue
      slot_leaves = []
      for i, start in enumerate(self._slot_starts[name]):
        if start is None:
          slot_leaves.append(None)
        elif (name, i) in self._copies_param:
          slot_leaves.append(jnp.array(leaves[i], copy=True))
        else:
          slot_leaves.append(jnp.asarray(
              start, dtype=jax.dtypes.canonicalize_dtype(start.dtype)))
      slots[name] = jax.tree.unflatten(treedef, slot_leaves)
    iterations = jnp.asarray(
        self._initial_iterations,
        dtype=jax.dtypes.canonicalize_dtype(self._initial_iterations.dtype))
    return PortState(slots, iterations,
                     {name: initial(key)
                      for name, key in self._variables.items()})

  def update(self, grads: list, state: PortState, leaves: list, treedef: Any
             ) -> tuple[list, PortState]:
    inputs = dict(zip(self._params, leaves))
    for name, found in self._slots.items():
      for key, leaf in zip(found, treedef.flatten_up_to(state.slots[name])):
        if key:
          inputs[key] = leaf
    if self._iterations is not None:
      inputs[self._iterations] = state.iterations
    for name, key in self._variables.items():
      if name not in state.variables:
        raise PortError(
            f"tf_bridge.port cannot convert {self._class_name}'s step on "
            f"these gradients: it reads the variable {name!r}, which its "
            "step on dense gradients, whose variables init's state holds, "
            "does not.")
      inputs[key] = state.variables[name]
    if self._jax_step is None:
      self._jax_step = _outside_callers_context(self._converted_step)
    _, outputs = self._jax_step(inputs, self._flat_gradients(grads))

    def like(key, old):
      return outputs[key].astype(old.dtype)

    updates = [(outputs[key] - leaf).astype(leaf.dtype)
               for key, leaf in zip(self._params, leaves)]
    slots = {}
    for name, found in self._slots.items():
      old = treedef.flatten_up_to(state.slots[name])
      slots[name] = jax.tree.unflatten(
          treedef, [like(key, leaf) if key else leaf
                    for key, leaf in zip(found, old)])
    iterations = (state.iterations if self._iterations is None else
                  like(self._iterations, state.iterations))
    variables = {name: (like(self._variables[name], value)
                        if name in self._variables else value)
                 for name, value in state.variables.items()}
    return updates, PortState(slots, iterations, variables)

  def _converted_step(self) -> Callable[..., Any]:
    """The traced step as JAX (at the first update: `init` needs only the
    trace)."""
    import tf2jax  # pylint: disable=import-outside-toplevel
    with _quiet_absl():  # "No output nodes found": the step assigns only.
      step, _ = tf2jax.convert(self._trace.step, self._trace.gradient_specs)
    return step

  def _flat_gradients(self, grads: list) -> list:
    """The step's gradient inputs; a `RowSparse` leaf's padding rows (those
    outside the table) at the row past its last, which gathers read as
    fill and scatters drop."""
    flat = []
    for grad, spec, sparse in zip(grads, self._specs, self._sparsity):
      if sparse is None:
        flat.append(grad)
      else:
        flat += [grad.values.astype(spec.dtype),
                 grad._valid_indices().astype(sparse[1])]  # pylint: disable=protected-access
    return flat


# The probe `port` traces its optimizer on at once, for the refusals.
_PROBE = [jax.ShapeDtypeStruct((2,), jnp.float32)]


def _probe(optimizer: Any, host: _hosts.Host) -> None:
  """The refusals of `optimizer`'s step on dense gradients, on a probe
  variable. A class that cannot step on it (one made for matrices only)
  meets its refusals at its first conversion instead."""
  try:
    _traced(optimizer, host, _PROBE, [None])
  except PortError:
    raise
  except Exception:  # pylint: disable=broad-exception-caught
    pass


def _static_size(size: Any) -> int | None:
  """A dimension's size, or None where it is symbolic (`jax.export`)."""
  return size if isinstance(size, int) else None


@contextlib.contextmanager
def _symbolic_entries_refused(optimizer: Any, grads: Any) -> Iterator[None]:
  """Within it, a step on sparse gradients of a symbolic number of entries
  that the class's sparse hook cannot be traced or converted for (a Python
  number taken from their shape, an op whose JAX form needs a static size)
  raises `UnknownEntriesError`, naming the class and the cause."""
  symbolic = any(is_row_sparse(grad) and
                 _static_size(grad.indices.shape[0]) is None
                 for grad in jax.tree.leaves(grads, is_leaf=is_row_sparse))
  try:
    yield
  except PortError:
    raise
  except Exception as error:  # pylint: disable=broad-exception-caught
    if not symbolic:
      raise
    first_line = str(error).strip().partition("\n")[0]
    op = _converting_op(error)
    raise _row_sparse.UnknownEntriesError(
        f"tf_bridge.port cannot convert {type(optimizer).__name__}'s sparse "
        "hook for a number of entries known only when the step runs"
        + (f" (its {op} op)" if op else "") +
        f": {type(error).__name__}: {first_line}") from error


def _converting_op(error: BaseException) -> str | None:
  """The type of the graph's op whose conversion raised `error` (tf2jax
  calls each op's JAX form from an object holding its name and type), if
  the error came from one."""
  op = None
  traceback = error.__traceback__
  while traceback is not None:
    node = traceback.tb_frame.f_locals.get("self")
    if (traceback.tb_frame.f_code.co_name == "__call__"
        and type(node).__module__.startswith("tf2jax")
        and isinstance(getattr(node, "op", None), str)):
      op = node.op
    traceback = traceback.tb_next
  return op


def _outside_callers_context(make: Callable[[], Any]) -> Any:
  """`make()` run eagerly in a thread of its own, even where a Keras step
  being traced asks for the state: a graph's distribution strategy and
  variable creators are kept per thread, so a conversion asked for under a
  `tf.distribute` strategy (an adopted class's build and step under
  `MirroredStrategy`) traces the class as one process would, in no replica
  or cross-replica context (OptimizerV2 refuses `apply_gradients` in a
  cross-replica one)."""
  with concurrent.futures.ThreadPoolExecutor(1) as thread:
    return thread.submit(make).result()


def port(optimizer: Any) -> optax.GradientTransformationExtraArgs:
  """The optax transform of a TensorFlow optimizer object's own update.

  `optimizer` is an instance of an OptimizerV2 subclass
  (`tf_keras.optimizers.legacy.Optimizer`, or TF's old internal
  `tensorflow.python.keras` one), a TF1 `tf.compat.v1.train.Optimizer`
  subclass, a `tf_keras.optimizers.Optimizer` (2.11+) subclass or a Keras 3
  optimizer on the TensorFlow backend, built as its user builds it. The
  transform computes what the object computes: its state (`PortState`)
  holds the class's slots under the class's slot names, each a tree like
  the params, its iteration count and its other variables (hyperparameters
  it keeps as variables, TF1's non-slot variables) at their values in the
  object. Schedules and `decay` are evaluated at the count as the class
  evaluates them.

  The class's Python code runs at conversion only, once per tree of param
  shapes and dtypes and of which gradients are sparse, with how many
  entries (at the first `init` or `update` that sees it): a copy of the
  object traces its update into a TensorFlow graph, converted to a pure JAX
  function. What cannot be converted faithfully (`tf.py_function`,
  unseeded random ops, ops with no JAX counterpart, Python attributes the
  update changes) raises `PortError` here, in `port`, which traces a copy
  on a probe variable, naming the hook and the op; what the probe cannot
  show raises at the conversion that meets it: the sparse hook's refusals
  at the first `update` given a sparse gradient, and those of a class that
  cannot step on the probe (one written for matrices only) at the first
  `init` or `update` for its params.

  Sparse gradients: a `jaxopt_port.RowSparse` gradient leaf goes through
  what the class does with a `tf.IndexedSlices`: OptimizerV2's
  `_resource_apply_sparse` after its duplicate indices are summed (or the
  class's own `_resource_apply_sparse_duplicate_indices`), TF1's
  `_resource_apply_sparse` (TF1's `_apply_sparse` serves reference
  variables, which TensorFlow 2 does not make), `update_step` with the
  slices (tf_keras 2.11+, Keras 3). TensorFlow's fused sparse kernels and
  scatters compute on the touched rows, so a lazy class moves only those.
  The update of such a leaf is dense. Its entries outside the table
  (padding) read as NaN where gathered and are dropped where scattered.
  The transform declares it (`jaxopt_port.sparse_mode`): "summed_entries"
  where the class's API sums repeated indices before its sparse hook, else
  "entries"; the bridged classes (`adopt`) hand it their sparse gradients
  so (see `tf_bridge.adopt`). Under `jax.export` the number of entries may
  be symbolic (one conversion serves every number; shapes computed from
  the entries', `tf.size`, `tf.ones`, `tf.range` and bounds of it
  included, and its value cast or compared); a sparse hook that needs it
  as a number there (a Python number from their shape, a shape computed
  from its value) raises `jaxopt_port.UnknownEntriesError`, naming the
  class, the op and the cause.

  `update` needs `params` (the class's update reads its variables).
  """
  host = _hosts.host_of(optimizer)
  _outside_callers_context(lambda: _probe(optimizer, host))
  conversions: dict[Any, _Conversion] = {}

  def converted(params, grads=None):
    leaves, treedef = jax.tree.flatten(params)
    # An empty tree's state has the class's slots, found on one variable.
    specs = [jax.ShapeDtypeStruct(leaf.shape, leaf.dtype) for leaf in leaves
             ] or [jax.ShapeDtypeStruct((1,), jnp.float32)]
    sparsity = [(_static_size(grad.indices.shape[0]),
                 np.dtype(grad.indices.dtype))
                if is_row_sparse(grad) else None
                for grad in ([] if grads is None else
                             treedef.flatten_up_to(grads))]
    sparsity += [None] * (len(specs) - len(sparsity))
    key = (treedef, tuple((s.shape, s.dtype) for s in specs),
           tuple(sparsity))
    if key not in conversions:
      conversions[key] = _outside_callers_context(
          lambda: _Conversion(optimizer, host, specs, sparsity))
    return conversions[key], leaves, treedef

  def init_fn(params):
    conversion, leaves, treedef = converted(params)
    return conversion.initial_state(leaves, treedef)

  def update_fn(updates, state, params=None, **extra_args):
    del extra_args
    if params is None:
      raise ValueError(
          f"The port of {type(optimizer).__name__} needs params in update: "
          "the class's update reads its variables.")
    if any(map(is_row_sparse, jax.tree.leaves(updates,
                                              is_leaf=is_row_sparse))):
      grad_leaves, grad_def = jax.tree.flatten(updates, is_leaf=is_row_sparse)
      _row_sparse._check_row_sparse(grad_leaves, grad_def, params)  # pylint: disable=protected-access
    with _symbolic_entries_refused(optimizer, updates):
      conversion, leaves, treedef = converted(params, updates)
      new_leaves, state = conversion.update(
          treedef.flatten_up_to(updates), state, leaves, treedef)
    return jax.tree.unflatten(treedef, new_leaves), state

  return _row_sparse.declare_sparse_mode(
      optax.GradientTransformationExtraArgs(init_fn, update_fn),
      _row_sparse.SUMMED_ENTRIES if host.sums_repeated_indices(optimizer)
      else _row_sparse.ENTRIES)



def _live_slot(optimizer: Any, host: _hosts.Host, variable: Any,
               name: str) -> Any:
  """`optimizer`'s slot `name` of `variable`, or None."""
  if host in (_hosts.OPTIMIZER_V2, _hosts.TF1):
    try:
      return optimizer.get_slot(variable, name)
    except KeyError:
      return None
  # tf_keras 2.11+ names a slot `{name}/{variable}`, Keras 3
  # `{variable path}_{name}` (their `add_variable_from_reference`).
  wanted = (f"{name}/{variable._shared_name}" if host is _hosts.TF_KERAS  # pylint: disable=protected-access
            else f"{variable.path.replace('/', '_')}_{name}")
  found = [v for v in _optimizer_variables(optimizer)
           if v.name.split(":")[0].endswith(wanted)]
  if len(found) > 1:
    raise ValueError(
        f"state_from_keras cannot tell {type(optimizer).__name__}'s slots "
        f"{name!r} apart: several variables are named {variable.name!r} "
        "(give them distinct names).")
  return found[0] if found else None


def live_state(optimizer: Any, variables: Any) -> PortState:
  """The state of `port(optimizer)` for params = the list of the
  variables' values, filled from the live optimizer's slots, count and
  variables, so the port continues a run the optimizer started (a TF1
  optimizer's count is its caller's global step: it starts at 0 here)."""
  host = _hosts.host_of(optimizer)
  params = [np.asarray(v.numpy()) for v in variables]
  state = port(optimizer).init(params)
  slots, taken = {}, set()
  for name, tree in state.slots.items():
    leaves = []
    for variable, leaf in zip(variables, tree):
      live = _live_slot(optimizer, host, variable, name)
      if live is not None:
        taken.add(id(live))
      leaves.append(leaf if live is None or leaf is None else
                    jnp.asarray(live.numpy(), leaf.dtype))
    slots[name] = leaves
  # The others by name (a slot can share its last name with one: momentum).
  by_name = {_short_name(v): v for v in _optimizer_variables(optimizer)
             if id(v) not in taken}
  variables_now = {
      name: jnp.asarray(by_name[name].numpy(), value.dtype)
      if name in by_name else value
      for name, value in state.variables.items()}
  iterations = (state.iterations if host is _hosts.TF1 else jnp.asarray(
      optimizer.iterations.numpy(), state.iterations.dtype))
  return PortState(slots, iterations, variables_now)
