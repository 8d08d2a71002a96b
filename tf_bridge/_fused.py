"""One optax transform applied to a whole Keras variable list in one XLA call.

Shared by both Keras generations. The transform sees the variables as a dict
keyed by name (Keras 3 `variable.path`, legacy `variable.name`); its state is
flattened into leaves, each either a slot of one variable (found with
`optax.tree_map_params`) or a variable of its own (counts and the like). The
update runs through `jax2tf` as a single `XlaCallModule` op inside a
`tf.function(autograph=False)`, converted once per signature and cached.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import sys
import warnings
from typing import Any, Callable, Sequence

import jax
import jax.extend
import jax.numpy as jnp
import numpy as np
import optax

import jaxopt_port
from jaxopt_port import _base, _row_sparse
from jaxopt_port._nonfinite import all_finite

# The arguments Keras's base classes take (and apply themselves).
KERAS_BASE_ARGUMENTS = tuple(_base.KERAS_BASE_ARGUMENTS)
LEGACY_BASE_ARGUMENTS = tuple(_base.LEGACY_BASE_ARGUMENTS)


@dataclasses.dataclass(frozen=True)
class StateLeaf:
  """Where one state leaf lives on the Keras side."""
  name: str  # Slot name ("momentum", "m", ...) or variable name.
  slot_of: int | None  # Index of the variable it mirrors, or None.
  value: np.ndarray  # Initial value (shape and dtype only if from_params).
  # Its initial value depends on the variables' values (Lookahead's slow
  # weights): `FusedTransform.initial_values_from` computes it.
  from_params: bool = False
  # The step count, which Keras keeps as `iterations`: fed to every step
  # from there, not stored (so the variables are native's).
  derived: bool = False

  @property
  def stored(self) -> bool:
    """Kept in a Keras variable: not the derived count, not an empty leaf
    (Muon's unused velocity of a matrix, which native does not create)."""
    return not self.derived and self.value.size > 0

  def is_slot_of(self, variables: Sequence[Any]) -> bool:
    """A Keras slot: it mirrors a variable with that variable's dtype and
    shape (factored moments are plain optimizer variables instead)."""
    if self.slot_of is None:
      return False
    variable = variables[self.slot_of]
    return (_numpy_dtype(variable.dtype) == self.value.dtype and tuple(variable.shape) == self.value.shape)


def factory_arguments(factory: Callable[..., Any],
                      base_arguments: Sequence[str]) -> dict[str, Any]:
  """The factory's own keyword arguments and defaults (not Keras's, not lr)."""
  signature = inspect.signature(factory)
  own = {}
  for name, parameter in signature.parameters.items():
    if name == "learning_rate" or name in base_arguments:
      continue
    if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
      continue
    own[name] = (None if parameter.default is inspect.Parameter.empty
                 else parameter.default)
  return own


def positional_names(factory: Callable[..., Any]) -> list[str]:
  """The factory's positional-or-keyword parameters, in order: the bridged
  constructor takes them positionally too, like Keras's own classes."""
  return [name for name, parameter in
          inspect.signature(factory).parameters.items()
          if parameter.kind == parameter.POSITIONAL_OR_KEYWORD]


def legacy_class_signature(factory: Callable[..., Any], class_name: str,
                           host_arguments: Sequence[str],
                           positional: Sequence[str]) -> inspect.Signature:
  """An OptimizerV2 class's constructor signature, as `inspect.signature`
  and `help()` show it: the `positional` arguments in order (`name` among
  them, as OptimizerV2's classes take it), then keyword-only the factory's
  other arguments and OptimizerV2's base arguments (its gradient aggregator
  and transformers too) and `skip_nonfinite`."""
  keyword = inspect.Parameter.KEYWORD_ONLY
  parameters = {p.name: p for p in
                inspect.signature(factory).parameters.values()}
  parameters["name"] = inspect.Parameter(
      "name", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=class_name)
  taken = set(parameters)
  return inspect.Signature(
      [parameters[name].replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD)
       for name in positional]
      + [p.replace(kind=keyword) for name, p in parameters.items()
         if name not in positional]
      + [inspect.Parameter(argument, keyword, default=None)
         for argument in host_arguments if argument not in taken]
      + [inspect.Parameter(argument, keyword, default=default)
         for argument, default in (("gradient_aggregator", None),
                                   ("gradient_transformers", None),
                                   ("skip_nonfinite", False))])


def bind_positional(class_name: str, names: Sequence[str], args: tuple,
                    kwargs: dict[str, Any]) -> dict[str, Any]:
  """`kwargs` with `args` bound to `names`, refusing duplicates."""
  if len(args) > len(names):
    raise TypeError(f"{class_name}() takes at most {len(names)} positional "
                    f"arguments ({', '.join(names)}); {len(args)} were given.")
  bound = dict(kwargs)
  for name, value in zip(names, args):
    if name in bound:
      raise TypeError(f"{class_name}() got multiple values for argument "
                      f"'{name}'")
    bound[name] = value
  return bound


def host_base_arguments(factory: Callable[..., Any],
                        base_arguments: Sequence[str]) -> list[str]:
  """The host's base arguments, less those a `jaxopt_port` declaration takes
  as its own (TF1's RMSProp `decay` is its mean-square decay, not
  OptimizerV2's learning-rate decay, which that class then lacks)."""
  make = getattr(factory, "make_update_step", None)
  own = set() if make is None else (
      set(inspect.signature(make).parameters) - set(factory.base_arguments))
  return [argument for argument in base_arguments if argument not in own]


class AveragedOptimizer:
  """TFA's `assign_average_vars` for bridged MovingAverage and SWA."""

  def assign_average_vars(self, var_list: Sequence[Any]) -> Any:
    """Sets each variable of `var_list` to its average from the state (as
    TFA's `AveragedOptimizerWrapper.assign_average_vars`, e.g. before
    evaluating or saving the averaged model); a variable without one is
    skipped with TFA's warning. Returns the assignments as one op (what a
    TF1 session runs)."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    averages = self._fused.averages(self._built_variables() or [],
                                    self._state_variables)
    assignments = []
    for variable in var_list:
      average = averages.get(id(variable))
      if average is None:
        warnings.warn(
            f"Unable to assign average slot to {_variable_name(variable)} : "
            f"{type(self).__name__} keeps no average of it (it was not "
            "built for it).", stacklevel=2)
        continue
      assignments.append(variable.assign(average))
    return tf.group(assignments)


def serialized_arguments(arguments: dict[str, Any],
                         factory: Callable[..., Any]) -> dict[str, Any]:
  """`arguments` for `get_config`: an inner bridged optimizer as its
  registered name and config (plain data); a tensor, variable or callable
  hyperparameter as its current number (OptimizerV2's
  `_serialize_hyperparameter`)."""
  def serialized(name, value):
    if is_bridged(value):
      return {"class_name": f"{type(value).__module__}>{type(value).__name__}",
              "config": value.get_config()}
    if _is_runtime(factory, name, value) and not is_schedule(value):
      return float(_stand_in(value))
    # As JSON keeps it (Keras's own configs hold lists).
    return list(value) if isinstance(value, tuple) else value

  return {k: serialized(k, v) for k, v in arguments.items()}


def _stand_in(value: Any) -> np.ndarray:
  """A runtime hyperparameter's current value as a float32 array (an array,
  not a number: a port keeps the state a nonzero value needs), evaluated
  eagerly; 0.5 where it cannot be (a TF1 graph's tensor)."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  with tf.init_scope():
    current = runtime_value(value, 0)
    number = (current.numpy() if hasattr(current, "numpy")
              else tf.get_static_value(current) if tf.is_tensor(current)
              else current)
  return np.asarray(0.5 if number is None else number, np.float32)


def deserialized_arguments(arguments: dict[str, Any],
                           registered: Callable[[str], Any]) -> dict[str, Any]:
  """The reverse: an inner optimizer's config becomes the optimizer again,
  its class found by name in Keras's registry (`registered`) among the
  bridge's classes, never by evaluating anything; a numpy scalar (what
  OptimizerV2's configs hold for hyperparameter variables) becomes the
  Python number it holds, so it decides the state as that number would
  (SGD's momentum of 0 keeps no slot)."""
  resolved = {}
  for key, value in arguments.items():
    if isinstance(value, np.generic):
      value = value.item()
    elif isinstance(value, dict) and "class_name" in value:
      optimizer_class = registered(value["class_name"])
      if getattr(optimizer_class, "_fused_class", False) is not True:
        raise ValueError(
            f"`{key}` holds a serialized object named "
            f"{value['class_name']!r}: only a registered tf_bridge optimizer "
            "may appear there (configs are plain data).")
      value = optimizer_class.from_config(value["config"])
    resolved[key] = value
  return resolved


def required_arguments(factory: Callable[..., Any]) -> list[str]:
  """The factory's arguments without a default (TF1's `learning_rate`)."""
  return [name for name, parameter in
          inspect.signature(factory).parameters.items()
          if parameter.default is inspect.Parameter.empty
          and parameter.kind in (parameter.POSITIONAL_OR_KEYWORD,
                                 parameter.KEYWORD_ONLY)]


def check_arguments(class_name: str, kwargs: dict[str, Any],
                    factory: Callable[..., Any], own: dict[str, Any],
                    base: Sequence[str], base_label: str) -> None:
  """Refuses unknown keyword arguments and missing required ones."""
  unknown = sorted(set(kwargs) - set(own) - set(base) - {"learning_rate"})
  if unknown:
    raise TypeError(
        f"{class_name}() got unexpected keyword argument(s) {unknown}; it "
        f"takes {sorted(own)} and {base_label}'s base arguments.")
  given = set(kwargs) | ({"learning_rate"} if "lr" in kwargs else set())
  missing = [name for name in required_arguments(factory)
             if name not in given]
  if missing:
    raise TypeError(f"{class_name}() missing required argument(s): "
                    f"{', '.join(missing)}")


def declared_classes(keras_optimizer: Callable[..., type],
                     declarations: Sequence[Any], module: str
                     ) -> dict[str, type]:
  """Classes for catalog declarations, by class name, made by the host's
  `keras_optimizer` (Keras 3's or OptimizerV2's)."""
  classes = {}
  for d in declarations:
    options = {} if d.slots_by_variable is None else {
        "slots_by_variable": d.slots_by_variable}
    if d.methods:
      options["mixins"] = d.methods
    positional = d.native_positional() if d.bridge_path == module else ()
    if positional:
      options["positional"] = positional
    hyperparameters = d.optimizer_v2_hyperparameters()
    if hyperparameters:
      options["hyperparameters"] = hyperparameters
      options["unread_hyperparameters"] = d.unread_hyperparameters
    classes[d.class_name] = keras_optimizer(
        d.port, name=d.class_name, module=module, native_names=d.native_names,
        **options)
  return classes


def with_argument_names(class_name: str, kwargs: dict[str, Any],
                        native_names: dict[str, str]) -> dict[str, Any]:
  """`kwargs` with the native class's names of arguments (a catalog
  declaration's `native_names`) replaced by the port's."""
  kwargs = dict(kwargs)
  for native, own in native_names.items():
    if native in kwargs:
      if own in kwargs:
        raise TypeError(f"{class_name}() got both {native!r} and {own!r}, "
                        "two names of one argument.")
      kwargs[own] = kwargs.pop(native)
  return kwargs


def inner_optimizer(value: Any, bridged_module: Any,
                    native_get: Callable[[str], Any]) -> Any:
  """A wrapper's `optimizer` argument as a bridged optimizer: one already,
  or made from an optimizer name (`"adam"`) or a native optimizer (its
  config), as TF Addons' wrappers take all three.

  Args:
    value: The argument.
    bridged_module: Where the host's bridged classes live
      (`tf_bridge.legacy` or `tf_bridge`).
    native_get: The host's `optimizers.get`, from a name to a native
      optimizer.
  """
  if is_bridged(value):
    return value
  if isinstance(value, str):
    value = native_get(value)
  get_config = getattr(value, "get_config", None)
  bridged = getattr(bridged_module, type(value).__name__, None)
  if get_config is None or bridged is None or not hasattr(
      bridged, "_fused_class"):
    raise TypeError(
        "optimizer is not an object of tf.keras.optimizers.Optimizer (nor "
        f"an optimizer name): got {value!r}, of type "
        f"{type(value).__name__}, which has no class in "
        f"{bridged_module.__name__}.")
  accepted = set(inspect.signature(bridged.port).parameters) | {"name"}
  return bridged(**{key: item for key, item in get_config().items()
                    if key in accepted})


def is_bridged(value: Any) -> bool:
  """A Keras optimizer made by the bridge (a wrapper's inner optimizer)."""
  return isinstance(getattr(value, "_fused", None), FusedTransform)


def learning_rate_default(factory: Callable[..., Any], fallback: float) -> Any:
  """The factory's default learning rate (`inspect.Parameter.empty` if it
  requires one); `fallback` for a factory that takes none."""
  parameter = inspect.signature(factory).parameters.get("learning_rate")
  return fallback if parameter is None else parameter.default


def is_schedule(value: Any) -> bool:
  """A Keras 3 or tf_keras `LearningRateSchedule` (without importing
  either)."""
  return any(base.__name__ == "LearningRateSchedule"
             for base in type(value).__mro__)


def _is_runtime(factory: Callable[..., Any], name: str, value: Any) -> bool:
  """A numeric hyperparameter given as something TensorFlow evaluates (a
  tensor, a variable, a callable, a schedule), as OptimizerV2's `_set_hyper`
  takes them: fed to the step each time it runs, not read when it is
  traced."""
  tf = sys.modules.get("tensorflow")
  if tf is None or is_bridged(value) or isinstance(value, (type, str)):
    return False
  parameter = inspect.signature(factory).parameters.get(name)
  numeric = parameter is not None and (
      parameter.default is inspect.Parameter.empty
      or (isinstance(parameter.default, (int, float))
          and not isinstance(parameter.default, bool)))
  return numeric and (tf.is_tensor(value) or isinstance(value, tf.Variable)
                      or callable(value))


def runtime_value(value: Any, iterations: Any) -> Any:
  """A runtime hyperparameter's current value, in TensorFlow: a schedule
  of Keras's `iterations` (TF Addons' weight decay schedules), a callable's
  result, a tensor's or variable's value."""
  if is_schedule(value):
    return value(iterations)
  if callable(value) and not hasattr(value, "read_value"):
    return value()
  return value


class FusedTransform:
  """`factory(learning_rate=lr, **arguments)` over a Keras variable list.

  The host (a Keras base class) applies its own base arguments, so the
  transform must not: the arguments named in `host_base_arguments` are not
  passed to `factory`. For a `jaxopt_port` optimizer of the host's own
  generation (`factory.wrap_update_step is host_wrapper`) the bare algorithm
  runs (its update step, so AdamW's `weight_decay` goes to Keras only); a
  Keras 3 port hosted by OptimizerV2 keeps the base arguments OptimizerV2
  lacks (weight decay, EMA, ...).
  """

  def __init__(self, factory: Callable[..., Any], arguments: dict[str, Any],
               host_base_arguments: Sequence[str], host_wrapper: Any,
               skip_nonfinite: bool = False):
    self._skip_nonfinite = skip_nonfinite
    self._factory = factory
    self._arguments = dict(arguments)
    self._host_base_arguments = tuple(host_base_arguments)
    self._bare = getattr(factory, "wrap_update_step", None) is host_wrapper
    self._takes_learning_rate = (
        "learning_rate" in inspect.signature(factory).parameters)
    self._steps: dict[Any, Any] = {}
    self._fed: dict[str, Callable[[], Any]] = {}
    # The state's layout, set by `initial_state`.
    self.keys: list[str] = []
    self._treedef: Any = None
    self._roles: list[int | None] = []
    self._leaf_names: list[str] = []
    self._param_specs: dict[str, jax.ShapeDtypeStruct] = {}
    self._from_params: list[bool] = []
    self._float64 = False

  def precision(self) -> Any:
    """The context to trace the transform in: JAX's 64-bit mode if a
    variable is float64 (JAX would truncate it to float32 otherwise; the
    mode is not turned on for other variable lists, whose numbers it would
    not change but whose traces it would)."""
    return jax.enable_x64(True) if self._float64 else contextlib.nullcontext()

  @functools.cached_property
  def sparse_rows(self) -> str | None:
    """How the transform takes a sparse gradient (`jaxopt_port.sparse_mode`:
    "rows", "params" or "dense"), or None: the bridge densifies it."""
    return jaxopt_port.sparse_mode(self._algorithm(0.001))

  def argument(self, name: str) -> Any:
    """The hyperparameter's value the next traced step uses."""
    return self._arguments.get(name)

  def set_argument(self, name: str, value: Any) -> None:
    """Sets a hyperparameter, as assigning a native optimizer's attribute
    does: the next step traced uses it (in eager mode, the next step). A
    bad value raises as the constructor does. On a built optimizer the
    state stays as built: a number that would drop a slot (SGD's momentum
    set to 0) runs as an array, which keeps it (and computes the same); a
    value that needs other state (momentum from 0, Adam's amsgrad) raises
    ValueError."""
    previous = self._arguments.get(name)
    try:
      fits = False
      for candidate in (value, np.asarray(value)):
        self._arguments[name] = candidate
        transform = self.transform(0.001)
        if self._treedef is None:
          fits = True
          break
        with self.precision():
          structure = jax.tree.structure(jax.eval_shape(
              transform.init, self._param_specs))
        fits = structure == self._treedef
        if fits or not isinstance(value, (int, float)) or isinstance(
            value, bool):
          break
      if not fits:
        raise ValueError(
            f"Setting {name}={value!r} changes the state the optimizer "
            f"keeps (from {self._treedef.num_leaves} to "
            f"{structure.num_leaves} arrays), and it is built already: "
            "pass it to the constructor instead.")
    except Exception:
      self._arguments[name] = previous
      raise
    self._steps.clear()
    self.__dict__.pop("sparse_rows", None)

  def transform(self, learning_rate: Any, runtime: dict[str, Any] | None = None
                ) -> optax.GradientTransformation:
    """The transform at `learning_rate`, with the runtime hyperparameters
    (`runtime_names`) at `runtime`'s values (inside the step: traced), or
    at stand-ins of their current values (for shapes and checks)."""
    transform = self._algorithm(learning_rate, runtime)
    return (jaxopt_port.skip_nonfinite(transform) if self._skip_nonfinite
            else transform)

  @property
  def runtime_names(self) -> tuple[str, ...]:
    """The hyperparameters given as tensors, variables, callables or
    schedules, or read from the host (`feed`), in the order `rate_inputs`
    feeds them."""
    return tuple(k for k, v in self._arguments.items()
                 if k in self._fed or _is_runtime(self._factory, k, v))

  def feed(self, name: str, read: Callable[[], Any]) -> None:
    """Feeds hyperparameter `name` to each step from `read()` (OptimizerV2's
    hyperparameter variable), if a runtime value keeps the state its
    current value gives (SGD's momentum of 0 keeps no slot: it stays a
    number, as native's then keeps no momentum either)."""
    value = self._arguments[name]
    if not _is_runtime(self._factory, name, value):
      specs = {"x": jax.ShapeDtypeStruct((2,), np.float32)}
      layouts = []
      for candidate in (value, _stand_in(value)):
        self._arguments[name] = candidate
        layouts.append(jax.tree.structure(jax.eval_shape(
            self.transform(0.001).init, specs)))
      self._arguments[name] = value
      if layouts[0] != layouts[1]:
        return
    self._fed[name] = read
    self._steps.clear()

  def rate_inputs(self, learning_rate: Any, iterations: Any) -> Any:
    """The step's `learning_rate` input: the rate, float32; with runtime
    hyperparameters, a vector of the rate and their current values."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    rate = tf.cast(learning_rate, tf.float32)
    if not self.runtime_names:
      return rate
    return tf.stack([rate] + [
        tf.cast(self._fed[name]() if name in self._fed
                else runtime_value(self._arguments[name], iterations),
                tf.float32)
        for name in self.runtime_names])

  def _arguments_at(self, runtime: dict[str, Any] | None) -> dict[str, Any]:
    arguments = dict(self._arguments)
    for name in self.runtime_names:
      arguments[name] = (runtime[name] if runtime is not None
                         else _stand_in(arguments[name]))
    return arguments

  def _algorithm(self, learning_rate: Any,
                 runtime: dict[str, Any] | None = None
                 ) -> optax.GradientTransformation:
    factory = self._factory
    rate = {"learning_rate": learning_rate} if self._takes_learning_rate else {}
    arguments = self._arguments_at(runtime)
    if self._bare:
      # The host applies weight decay, also an update step's own rates
      # (see `weight_decay_rates`).
      return factory.wrap_update_step(
          self._update_step({**arguments, **rate})._replace(
              weight_decay_rates=None),
          learning_rate)
    # A wrapper's inner bridged optimizer (TFA's Lookahead(optimizer)) runs
    # as its transform, fed the same learning rate.
    own = {k: v._fused.transform(learning_rate) if is_bridged(v) else v
           for k, v in arguments.items()
           if k not in self._host_base_arguments}
    return factory(**rate, **own)

  def weight_decay_rates(self) -> list[Any] | None:
    """Per-variable weight decay rates, in variable order, of an update step
    with its own rule (Muon: Adam parameters decay by `adam_weight_decay`);
    None where Keras's uniform `weight_decay` applies."""
    if not self._bare:
      return None
    step = self._update_step(self._arguments_at(None))
    if step.weight_decay_rates is None:
      return None
    rates = step.weight_decay_rates(self._param_specs)
    return [rates[key] for key in self.keys]

  def _update_step(self, arguments: dict[str, Any]):
    """The bare algorithm's `UpdateStep` (for a port of the host's
    generation); `learning_rate` reaches it only if it takes one (legacy
    Nadam, to refuse schedules)."""
    make = self._factory.make_update_step
    parameters = inspect.signature(make).parameters
    return make(**{k: v for k, v in arguments.items() if k in parameters})

  def initial_state(self, keys: Sequence[str], specs: Sequence[Any]
                    ) -> list[StateLeaf]:
    """The state's leaves with their Keras roles, from the variables' shapes
    and dtypes (`specs`: anything with `.shape` and a numpy-compatible
    `.dtype`); records the layout that `converted_step` and `jitted_step`
    read (the state's structure does not depend on the learning rate, so any
    rate builds it).

    The variables' values are not read: a model built inside the
    `tf.function` of its first step (a Sequential without `Input`), or in a
    TF1 graph, has none yet. Leaves whose initial value depends on them are
    marked `from_params`, for `initial_values_from`.
    """
    transform = self.transform(0.001)
    self._steps.clear()  # Steps traced for another layout.
    self.keys = list(keys)
    self._param_specs = {
        key: jax.ShapeDtypeStruct(tuple(spec.shape), _numpy_dtype(spec.dtype))
        for key, spec in zip(keys, specs)}
    self._float64 = any(spec.dtype == np.float64
                        for spec in self._param_specs.values())
    with self.precision():
      state = transform.init({key: np.zeros(spec.shape, spec.dtype)
                              for key, spec in self._param_specs.items()})
      self._from_params = _depends_on_params(transform.init,
                                             self._param_specs)
    indices = dict(zip(keys, range(len(keys))))
    not_a_slot = -1  # (None would vanish: it is an empty subtree.)
    roles = optax.tree_map_params(
        transform, lambda _, index: index, state, indices,
        transform_non_params=lambda value: jax.tree.map(
            lambda _: not_a_slot, value))
    paths_and_leaves, treedef = jax.tree_util.tree_flatten_with_path(state)
    seen: dict[tuple[str, Any], int] = {}
    leaves = []
    for (path, leaf), role, from_params in zip(
        paths_and_leaves, jax.tree.leaves(roles), self._from_params):
      role = None if role == not_a_slot else role
      name = _slot_name(path, keys)
      # A wrapper's inner count and its own are both "iterations": Keras
      # (HDF5 above all) needs distinct names.
      count = seen.get((name, role), 0)
      seen[(name, role)] = count + 1
      leaf = np.asarray(leaf)
      if role is not None:
        leaf = _as_native_slot(leaf, self._param_specs[keys[role]])
      derived = (name, count, role, leaf.shape) == ("iterations", 0, None, ())
      leaves.append(StateLeaf(name if count == 0 else f"{name}_{count}", role,
                              leaf, from_params, derived))
    self._treedef = treedef
    self._computed_dtypes = [np.asarray(leaf).dtype
                             for leaf in jax.tree.leaves(state)]
    self._kept_dtypes = [leaf.value.dtype for leaf in leaves]
    self._roles = [leaf.slot_of for leaf in leaves]
    self._leaf_names = [leaf.name for leaf in leaves]
    self._derived = [leaf.derived for leaf in leaves]
    self._empty = {index: leaf.value for index, leaf in enumerate(leaves)
                   if not leaf.derived and not leaf.stored}
    return leaves

  def _full_leaves(self, stored: Sequence[Any], iterations: Any) -> list[Any]:
    """The state's leaves from the stored ones and Keras's `iterations` (the
    transform's count; less the skipped steps under `skip_nonfinite`, which
    Keras counts and the transform does not), in the transform's dtypes."""
    stored = iter(stored)
    leaves = [jnp.asarray(self._empty[index], self._computed_dtypes[index])
              if index in self._empty
              else None if derived
              else next(stored).astype(self._computed_dtypes[index])
              for index, derived in enumerate(self._derived)]
    for index, derived in enumerate(self._derived):
      if derived:
        skipped = [leaf for leaf, name in zip(leaves, self._leaf_names)
                   if name == "skipped_steps"] if self._skip_nonfinite else []
        count = jnp.asarray(iterations).astype(jnp.int32)
        leaves[index] = count - skipped[0] if skipped else count
    return leaves

  def _stored_leaves(self, leaves: Sequence[Any]) -> list[Any]:
    """The leaves Keras keeps, in the dtypes it keeps them in."""
    return [leaf.astype(self._kept_dtypes[index])
            for index, (leaf, derived) in enumerate(zip(leaves, self._derived))
            if not derived and index not in self._empty]

  def initial_values_from(self, params: Sequence[Any], tensorflow: bool = True
                          ) -> list[Any]:
    """The initial values of the `from_params` leaves, in leaf order,
    computed from `params` (the variables' tensors, in variable order):
    TensorFlow tensors (in a graph or a `tf.function` they read the
    variables once those are initialized, as a TF Addons slot made from
    `var.read_value()` does), or JAX arrays if not `tensorflow`."""
    transform, keys = self.transform(0.001), list(self.keys)
    wanted = [i for i, from_params in enumerate(self._from_params)
              if from_params]

    def initial_values(params):
      leaves = jax.tree.leaves(transform.init(dict(zip(keys, params))))
      return [leaves[i].astype(self._kept_dtypes[i]) for i in wanted]

    with self.precision():
      if not tensorflow:
        return initial_values(list(params))
      from jax.experimental import jax2tf  # pylint: disable=import-outside-toplevel
      # Not a tf.function: it runs once, in whatever graph or lifted
      # initializer the variable is being made in.
      return jax2tf.convert(initial_values, with_gradient=False)(list(params))

  def averages(self, variables: Sequence[Any], state_variables: Sequence[Any]
               ) -> dict[Any, Any]:
    """id(variable) -> its `average` state variable (MovingAverage, SWA)."""
    stored = [(name, role) for index, (name, role) in enumerate(
        zip(self._leaf_names, self._roles))
              if not self._derived[index] and index not in self._empty]
    return {id(variables[role]): state
            for (name, role), state in zip(stored, state_variables)
            if name == "average" and role is not None}

  def converted_step(self, present: tuple[bool, ...],
                     sparse: tuple[bool, ...],
                     decay: tuple[float, ...] | None = None):
    """The fused step as a TensorFlow function, cached per signature.

    `step(params, grads, state_leaves, learning_rate, row_indices,
    iterations) -> (params, state)`, lists in variable order; the state
    leaves are the stored ones (not the `derived` count, which comes from
    Keras's `iterations` before this step's increment). Variables without a gradient
    (`present` False) keep their value and their slots, as Keras skips them.
    A `sparse` variable's gradient is the values of its `tf.IndexedSlices`
    and `row_indices` holds their indices (one int32 vector per sparse
    variable, of any length): the transform takes them as a
    `jaxopt_port.RowSparse`, so a "rows" optimizer reads and writes only the
    touched rows. `decay` holds Keras 3's weight decay rate per variable (0
    for none), applied first as Keras's `_apply_weight_decay` would.
    """
    key = (present, sparse, decay, self.runtime_names)
    if key not in self._steps:
      row_shapes = [self._param_specs[k].shape[1:] for k in self.keys]
      self._steps[key] = _convert(self._jax_step(present, sparse, decay),
                                  sparse, row_shapes)
    return self._steps[key]

  def compiled_apply(self, present: tuple[bool, ...],
                     sparse: tuple[bool, ...],
                     decay: tuple[float, ...] | None = None):
    """`converted_step` with the variables read and assigned inside one
    `tf.function(jit_compile=True)`, cached per signature.

    `apply(variables, grads, state_variables, learning_rate, row_indices,
    iterations)`.
    Compiled together, XLA updates the variables' buffers in place (a
    scatter of touched rows costs those rows); the converted step alone
    would write new tensors that the assignments then take over, an extra
    pass over memory (measured: 1.6x slower on CPU).
    """
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    key = ("apply", present, sparse, decay)
    if key not in self._steps:
      step = self.converted_step(present, sparse, decay)

      # reduce_retracing: sparse gradients of other lengths reuse the trace.
      @tf.function(jit_compile=True, autograph=False, reduce_retracing=True)
      def apply(variables, grads, state_variables, learning_rate,
                row_indices, iterations):
        with self.precision():
          new_params, new_state = step(
              [v.read_value() for v in variables], grads,
              [s.read_value() for s in state_variables], learning_rate,
              row_indices, iterations)
        for variable, value in zip([*variables, *state_variables],
                                   [*new_params, *new_state]):
          variable.assign(value)
        # An output, so that graphs can depend on the update having run.
        return tf.constant(True)
      self._steps[key] = apply
    return self._steps[key]

  def jitted_step(self, present: tuple[bool, ...], sparse: tuple[bool, ...],
                  decay: tuple[float, ...] | None = None):
    """The fused step as a jitted JAX function (Keras 3's JAX backend), with
    `converted_step`'s arguments."""
    key = ("jax", present, sparse, decay)
    if self.runtime_names:
      raise ValueError(
          f"{', '.join(self.runtime_names)}: a TensorFlow tensor, variable "
          "or callable hyperparameter cannot run on Keras's JAX backend; "
          "pass a number.")
    if key not in self._steps:
      self._steps[key] = jax.jit(self._jax_step(present, sparse, decay))
    return self._steps[key]

  def _jax_step(self, present, sparse, decay):
    keys, treedef, roles = self.keys, self._treedef, self._roles

    def decayed(param, rate, learning_rate):
      # Keras 3's `variable - variable * weight_decay * lr`, in its order.
      return param - param * jnp.asarray(rate, param.dtype) * (
          learning_rate.astype(param.dtype))

    def step(params, grads, stored_leaves, learning_rate, row_indices,
             iterations):
      state_leaves = self._full_leaves(stored_leaves, iterations)
      new_params, new_leaves = update(params, grads, state_leaves,
                                      learning_rate, row_indices)
      if self._skip_nonfinite:
        # The transform keeps its state; the params (weight decay included)
        # are kept here.
        finite = all_finite([g for g, has in zip(grads, present) if has])
        new_params = [jnp.where(finite, new, old)
                      for new, old in zip(new_params, params)]
      return new_params, self._stored_leaves(new_leaves)

    def gradient(grad, param, has, indices):
      if indices is not None:
        return jaxopt_port.RowSparse(indices, grad, param.shape[0])
      return grad if has else jnp.zeros_like(param)

    runtime_names = self.runtime_names

    def update(params, grads, state_leaves, learning_rate, row_indices):
      runtime = None
      if runtime_names:  # `rate_inputs`' vector.
        runtime = dict(zip(runtime_names, learning_rate[1:]))
        learning_rate = learning_rate[0]
      if decay is not None:
        params = [decayed(p, rate, learning_rate) if has and rate else p
                  for p, rate, has in zip(params, decay, present)]
      transform = self.transform(learning_rate, runtime)
      indices = iter(row_indices)
      params_tree = dict(zip(keys, params))
      grads_tree = dict(zip(keys, (
          gradient(g, p, has, next(indices) if is_sparse else None)
          for g, p, has, is_sparse in zip(grads, params, present, sparse))))
      state = jax.tree_util.tree_unflatten(treedef, state_leaves)
      updates, new_state = transform.update(grads_tree, state, params_tree)
      new_params = jaxopt_port.apply_updates(params_tree, updates)
      new_params = [new_params[k] if has else p
                    for k, p, has in zip(keys, params, present)]
      new_leaves = [
          new if role is None or present[role] else old
          for new, old, role in zip(jax.tree.leaves(new_state), state_leaves,
                                    roles)]
      return new_params, new_leaves
    return step


def apply_fused(fused: "FusedTransform", distribution: Any,
                variables: Sequence[Any], grads: Sequence[Any],
                state_variables: Sequence[Any], learning_rate: Any,
                iterations: Any, decay: tuple[float, ...] | None = None
                ) -> Any:
  """Runs the fused step on every device of `distribution` and assigns
  (`iterations`: Keras's count before this step).

  Called in cross-replica context (inside Keras's `merge_call`) with reduced
  gradients; `grads` is aligned with `variables`, None where a variable has
  no gradient. One `extended.update` call hands `update_on_device` each
  device's component of every mirrored variable and gradient, so each device
  runs one XLA call for all its variables (`decay`: see `converted_step`).
  """
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  present = tuple(g is not None for g in grads)
  iterations = tf.cast(tf.convert_to_tensor(iterations), tf.int32)

  def update_on_device(_, variables, grads, state_variables, learning_rate):
    grads, row_indices, sparse = step_gradients(grads, variables,
                                                fused.sparse_rows)
    return fused.compiled_apply(present, sparse, decay)(
        list(variables), grads, list(state_variables), learning_rate,
        row_indices, iterations)

  return distribution.extended.update(
      variables[0], update_on_device,
      args=(list(variables), list(grads), list(state_variables),
            fused.rate_inputs(learning_rate, iterations)), group=True)


def tensor_slices(grads: Sequence[Any]) -> list[Any]:
  """`grads` with every `tf.IndexedSlices` made of tensors: Keras's own
  examples write `tf.IndexedSlices(values, indices=(0, 2, 4), ...)`, and
  native optimizers take them."""
  tf = sys.modules.get("tensorflow")
  if tf is None:
    return list(grads)
  return [tf.IndexedSlices(tf.convert_to_tensor(grad.values),
                           tf.convert_to_tensor(grad.indices),
                           None if grad.dense_shape is None
                           else tf.convert_to_tensor(grad.dense_shape))
          if isinstance(grad, tf.IndexedSlices)
          and not all(tf.is_tensor(part) or part is None for part in (
              grad.values, grad.indices, grad.dense_shape))
          else grad for grad in grads]


def check_gradients(class_name: str, grads: Sequence[Any],
                    variables: Sequence[Any]) -> Any:
  """Refuses gradients that cannot belong to `variables`, before anything
  is assigned (so a failed step changes nothing).

  Returns a context in which to run the step: in a graph, the step's ops
  depend on the assertions there (below).

  None gradients pass (Keras skips those variables with a warning).
  Gradients of another floating dtype pass too: Keras casts them to the
  variable's dtype. Out-of-range `tf.IndexedSlices` indices raise
  ValueError when eager; in a graph an assertion raises InvalidArgumentError
  when the step runs, before any of the step's ops (XLA-compiled graphs
  drop assertions: there TensorFlow ignores such rows).
  """
  # Keras 3 on the JAX backend never imports TensorFlow: only gradients
  # made by TensorFlow need it.
  tf = sys.modules.get("tensorflow")
  if len(grads) != len(variables):
    raise ValueError(
        f"{class_name} got {len(grads)} gradients for {len(variables)} "
        "variables: pass one gradient (or None) per variable.")
  assertions = []
  for grad, variable in zip(grads, variables):
    if grad is None:
      continue
    label = f"Gradient of variable {_variable_name(variable)!r}"
    sliced = tf is not None and isinstance(grad, tf.IndexedSlices)
    values = grad.values if sliced else grad
    dtype_name, floating = _dtype_of(values)
    if not floating:
      raise TypeError(f"{label} has dtype {dtype_name}; gradients must be "
                      "real floating point.")
    shape = tuple(variable.shape)
    if sliced:
      assertions += _row_assertions(label, grad, shape)
      continue
    grad_shape = tuple(values.shape if hasattr(values, "shape")
                       else np.shape(values))
    if len(grad_shape) != len(shape) or any(
        got is not None and got != want for got, want in zip(grad_shape,
                                                               shape)):
      raise ValueError(f"{label} has shape {grad_shape}, expected {shape} "
                       "(the variable's shape).")
  return (tf.control_dependencies(assertions) if assertions
          else contextlib.nullcontext())


def _dtype_of(values: Any) -> tuple[str, bool]:
  """The name of a gradient's dtype (TensorFlow's, JAX's or numpy's), and
  whether it is real floating point."""
  dtype = getattr(values, "dtype", None)
  if dtype is None:
    dtype = np.asarray(values).dtype
  if hasattr(dtype, "is_floating"):  # A tf.DType.
    return dtype.name, dtype.is_floating
  dtype = np.dtype(dtype)
  return dtype.name, bool(jnp.issubdtype(dtype, jnp.floating))


def check_built_for(class_name: str, built: Sequence[Any],
                    variables: Sequence[Any], key: Callable[[Any], Any]
                    ) -> None:
  """Refuses variables the optimizer was not built for (`key` identifies a
  variable: Keras 3's `_var_key`, a `ref()` in legacy)."""
  known = {key(v) for v in built}
  unknown = [_variable_name(v) for v in variables if key(v) not in known]
  if unknown:
    raise ValueError(
        f"{class_name} was built for {[_variable_name(v) for v in built]}; "
        f"it cannot update {unknown}. Make a new optimizer for other "
        "variables.")


def check_saved_state(name: str, variables: Sequence[Any],
                      saved: Sequence[Any]) -> None:
  """Refuses saved optimizer variables that do not match `variables` in
  number and shapes, before any is assigned."""
  if len(saved) != len(variables):
    raise ValueError(
        f"The saved state of optimizer {name!r} holds {len(saved)} "
        f"variables; the optimizer has {len(variables)} "
        f"({[_variable_name(v) for v in variables]}). Was it saved from "
        "another optimizer or for other model variables?")
  for index, (variable, value) in enumerate(zip(variables, saved)):
    if tuple(value.shape) != tuple(variable.shape):
      raise ValueError(
          f"The saved state of optimizer {name!r} does not match it: saved "
          f"variable {index} has shape {tuple(value.shape)}, expected "
          f"{tuple(variable.shape)} for {_variable_name(variable)!r}.")


def _row_assertions(label: str, grad: Any, shape: tuple[int, ...]
                    ) -> list[Any]:
  """Checks that the rows of `grad`, a `tf.IndexedSlices`, exist in the
  variable: now if eager, else as assertion ops to run first."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  if not tf.TensorShape(grad.values.shape[1:]).is_compatible_with(shape[1:]):
    raise ValueError(
        f"{label} is a tf.IndexedSlices with rows of shape "
        f"{tuple(grad.values.shape[1:])}, expected {shape[1:]} (the "
        "variable's rows).")
  message = (f"{label} is a tf.IndexedSlices with indices outside [0, "
             f"{shape[0]}), the variable's rows")
  if tf.executing_eagerly():
    indices = grad.indices.numpy()
    outside = indices[(indices < 0) | (indices >= shape[0])]
    if outside.size:
      raise ValueError(f"{message}: {sorted(set(outside.tolist()))}.")
    return []
  return [tf.debugging.assert_non_negative(grad.indices, message=message),
          tf.debugging.assert_less(
              grad.indices, tf.cast(shape[0], grad.indices.dtype),
              message=message)]


def _variable_name(variable: Any) -> str:
  return getattr(variable, "path", None) or variable.name


def step_gradients(grads: Sequence[Any], variables: Sequence[Any],
                   sparse_rows: str | None) -> tuple[list[Any], list[Any],
                                                     tuple[bool, ...]]:
  """The fused step's gradients, in the variables' dtypes.

  A `tf.IndexedSlices` stays sparse (its values, and its indices as int32
  in the returned `row_indices`) for a transform that takes row-sparse
  gradients as "rows" or "params"; otherwise it is densified, duplicate
  indices summed. None becomes zeros. Returns the gradients, the row
  indices and which variables are sparse.
  """
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  by_rows = sparse_rows in (_row_sparse.ROWS, _row_sparse.PARAMS)
  step, row_indices, sparse = [], [], []
  for grad, variable in zip(grads, variables):
    value = tf.convert_to_tensor(variable)
    if grad is None:
      step.append(tf.zeros_like(value))
      sparse.append(False)
    elif by_rows and isinstance(grad, tf.IndexedSlices):
      step.append(tf.ensure_shape(tf.cast(grad.values, value.dtype),
                                  [None, *value.shape[1:]]))
      row_indices.append(tf.cast(grad.indices, tf.int32))
      sparse.append(True)
    else:
      # Densified IndexedSlices lose their static shape; jax2tf needs it.
      step.append(tf.ensure_shape(
          tf.cast(tf.convert_to_tensor(grad), value.dtype), value.shape))
      sparse.append(False)
  return step, row_indices, tuple(sparse)


def jax_step_gradients(grads: Sequence[Any], params: Sequence[Any],
                       sparse_rows: str | None) -> tuple[list[Any], list[Any],
                                                         tuple[bool, ...]]:
  """`step_gradients` for Keras 3's JAX backend: a gradient over rows (a
  `jaxopt_port.RowSparse`, or a `jax.experimental.sparse.BCOO` whose
  indices pick rows) stays sparse for a "rows" or "params" transform; any
  other BCOO is densified."""
  from jax.experimental import sparse as jax_sparse  # pylint: disable=import-outside-toplevel
  by_rows = sparse_rows in (_row_sparse.ROWS, _row_sparse.PARAMS)
  step, row_indices, sparse = [], [], []
  for grad, param in zip(grads, params):
    if isinstance(grad, jax_sparse.BCOO):
      if grad.n_batch == 0 and grad.n_sparse == 1:
        grad = jaxopt_port.RowSparse(grad.indices[:, 0], grad.data,
                                     grad.shape[0])
      else:
        grad = grad.todense()
    if isinstance(grad, jaxopt_port.RowSparse):
      if by_rows:
        step.append(jnp.asarray(grad.values, param.dtype))
        row_indices.append(jnp.asarray(grad.indices, jnp.int32))
        sparse.append(True)
        continue
      grad = grad.todense()
    step.append(jnp.zeros_like(param) if grad is None
                else jnp.asarray(grad, param.dtype))
    sparse.append(False)
  return step, row_indices, tuple(sparse)


def _convert(step, sparse: tuple[bool, ...],
             row_shapes: Sequence[tuple[int, ...]]):
  """`step` as a `tf.function`; a sparse gradient's length is symbolic (one
  conversion serves every batch), its rows the variable's."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  from jax.experimental import jax2tf  # pylint: disable=import-outside-toplevel
  lengths = [f"({', '.join(map(str, (f'n{index}', *row_shape)))})"
             if is_sparse else None
             for index, (is_sparse, row_shape) in enumerate(zip(sparse,
                                                                 row_shapes))]
  polymorphic = [None, lengths, None, None,
                 [f"(n{index},)" for index, is_sparse in enumerate(sparse)
                  if is_sparse], None]
  return tf.function(jax2tf.convert(step, with_gradient=False,
                                    polymorphic_shapes=polymorphic),
                     autograph=False)


def creation_order(leaves: Sequence[StateLeaf], slots_by_variable: bool,
                   shared_first: bool) -> list[int]:
  """The order to create the stored leaves' variables in, native's: the
  slots of one variable after another (`slots_by_variable`, Keras 3's
  `add_optimizer_variables`) or each slot for every variable in turn
  (OptimizerV2's `_create_slots` loops), variables in their list's order
  (the state's dicts hold them sorted by path); the leaves of no variable
  (Nadam's momentum cache) before the slots if `shared_first`, else
  after."""
  first: dict[str, int] = {}
  for index, leaf in enumerate(leaves):
    first.setdefault(leaf.name, index)

  def key(index):
    leaf = leaves[index]
    if leaf.slot_of is None:
      return (0 if shared_first else 2, index)
    if slots_by_variable:
      return (1, leaf.slot_of, first[leaf.name])
    return (1, first[leaf.name], leaf.slot_of)

  return sorted((i for i, leaf in enumerate(leaves) if leaf.stored), key=key)


def _numpy_dtype(dtype: Any) -> np.dtype:
  """A numpy dtype from a TensorFlow, Keras (string) or numpy one."""
  return np.dtype(getattr(dtype, "as_numpy_dtype", dtype))


def _as_native_slot(leaf: np.ndarray, param: Any) -> np.ndarray:
  """A state leaf as Keras keeps it: the float32 moment of a float16 or
  bfloat16 variable is a slot of the variable's dtype, as native's (the
  transform still computes it in float32, rounded where native rounds)."""
  low = (np.dtype(jnp.float16), np.dtype(jnp.bfloat16))
  if (leaf.shape == tuple(param.shape) and param.dtype in low
      and leaf.dtype == np.float32):
    return leaf.astype(param.dtype)
  return leaf


def _depends_on_params(init: Callable[[Any], Any], specs: Any) -> list[bool]:
  """For each leaf of `init(params)`, whether its value depends on the
  params' values (not only on their shapes), from `init`'s jaxpr: a leaf
  reached from an input through any equation (one with a sub-jaxpr counts
  as using all its inputs)."""
  closed = jax.make_jaxpr(init)(specs)
  jaxpr = closed.jaxpr
  reached = set(jaxpr.invars)

  def is_reached(var):
    return not isinstance(var, jax.extend.core.Literal) and var in reached

  for equation in jaxpr.eqns:
    if any(is_reached(var) for var in equation.invars):
      reached.update(equation.outvars)
  return [is_reached(var) for var in jaxpr.outvars]


def _slot_name(path: tuple[Any, ...], keys: Sequence[str]) -> str:
  """A readable slot name from a state path: `momentum`, `m`, `1_count`."""
  parts = []
  for entry in path:
    if isinstance(entry, jax.tree_util.DictKey) and entry.key in keys:
      continue
    if isinstance(entry, jax.tree_util.GetAttrKey):
      parts.append(entry.name)
    elif isinstance(entry, jax.tree_util.DictKey):
      parts.append(str(entry.key))
    elif isinstance(entry, jax.tree_util.SequenceKey):
      parts.append(str(entry.idx))
    elif isinstance(entry, jax.tree_util.FlattenedIndexKey):
      parts.append(str(entry.key))
  parts = [part for part in parts if part not in ("slots", "inner_state")]
  return "_".join(parts) or "state"


def unique_keys(names: Sequence[str]) -> list[str]:
  """Variable names as dict keys, made unique by a `#n` suffix if needed."""
  seen: dict[str, int] = {}
  keys = []
  for name in names:
    count = seen.get(name, 0)
    seen[name] = count + 1
    keys.append(name if count == 0 else f"{name}#{count}")
  return keys
