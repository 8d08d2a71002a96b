"""Keras 3: any optax transform factory as a `keras.optimizers.Optimizer`.

Keras's base class keeps what it owns (learning rate and its schedules,
loss scaling, gradient accumulation, clipping, weight decay, EMA, the
iteration count, serialization); the bridge overrides only
`_backend_update_step(grads, trainable_variables, learning_rate)`, the point
Keras 3 reaches after all of those, and there updates every variable with one
fused XLA call.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
from typing import Any, Callable, Sequence

import jaxopt_port
import numpy as np

from tf_bridge import _fused


def camel_case(name: str) -> str:
  return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def _constant(value: np.ndarray):
  def initializer(shape, dtype=None):
    del shape, dtype
    return value
  return initializer


def _outside_functions():
  """`tf.init_scope()` on the TensorFlow backend: a build traced inside a
  `tf.function` must create its variables eagerly, or their initial values
  become constants of the traced graph (memory the size of the state, held
  by the function)."""
  import keras  # pylint: disable=import-outside-toplevel
  if keras.backend.backend() != "tensorflow":
    return contextlib.nullcontext()
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  return tf.init_scope()


def keras_optimizer(factory: Callable[..., Any], name: str | None = None, *,
                    module: str = "tf_bridge",
                    mixins: tuple[type, ...] = (),
                    slots_by_variable: bool = True,
                    native_names: dict[str, str] | None = None,
                    positional: Sequence[str] = ()) -> type:
  """A Keras 3 optimizer class running `factory`'s transform.

  The class's constructor takes `learning_rate` (a float, a
  `LearningRateSchedule` or a callable, as Keras allows; the default is the
  factory's), the factory's other keyword arguments with their defaults, and
  Keras's base arguments (`weight_decay`, `clipnorm`, `clipvalue`,
  `global_clipnorm`, `use_ema`, `ema_momentum`, `ema_overwrite_frequency`,
  `loss_scale_factor`, `gradient_accumulation_steps`, `name`), which Keras's
  base class applies as it does for its own optimizers, and
  `skip_nonfinite`: if True, a step whose gradients hold a NaN or an Inf
  leaves the variables and the transform's state as they were and counts
  itself in the optimizer variable `skipped_steps`
  (`jaxopt_port.skip_nonfinite`; Keras's own `iterations`, EMA and
  accumulators still see the step). The class is registered with Keras
  (package `tf_bridge`), so `load_model` needs no `custom_objects`, and
  `get_config()` round-trips.

  Args:
    factory: A function returning an optax transformation; if it takes
      `learning_rate`, Keras's current learning rate is fed to it every step.
    name: The class name; defaults to the CamelCase of `factory.__name__`.
    module: The class's module and its Keras registration package
      (`tf_bridge.tf1` keeps TF1's `Adam` apart from Keras 3's).
    mixins: Base classes added before Keras's (e.g. TFA's
      `assign_average_vars`).
    slots_by_variable: Create the slots of one variable after another, as
      Keras 3's own optimizers do, or each slot for all variables in turn.
    native_names: The native class's names for arguments named otherwise
      here (`{"weight_decay_rate": "weight_decay"}`), taken by the
      constructor too.
    positional: The arguments the constructor takes positionally, in order;
      by default the factory's, then Keras's base arguments, then `name`
      (a catalog declaration reads its native class's order).

  A sparse gradient (`tf.IndexedSlices`) reaches the transform as a
  `jaxopt_port.RowSparse` if the transform takes those
  (`jaxopt_port.sparse_mode`: the ports declare it, and
  `jaxopt_port.with_row_sparse_gradients(tx, "rows")` makes any transform
  whose update is row by row take them), so only the touched rows are read
  and written; otherwise it is densified, duplicate indices summed.

  A factory argument may be another bridged optimizer (TFA's
  `Lookahead(optimizer)`): its transform runs inside this one, fed this
  class's learning rate, which defaults to the inner optimizer's.
  """
  import keras  # pylint: disable=import-outside-toplevel

  class_name = name or camel_case(factory.__name__)
  host_arguments = _fused.host_base_arguments(factory,
                                              _fused.KERAS_BASE_ARGUMENTS)
  own_defaults = _fused.factory_arguments(factory, host_arguments)
  factory_parameters = inspect.signature(factory).parameters
  base_defaults = {
      argument: factory_parameters[argument].default
      for argument in host_arguments
      if argument in factory_parameters
      and factory_parameters[argument].default is not inspect.Parameter.empty}
  default_rate = _fused.learning_rate_default(factory, 0.001)
  positional = list(positional) or _keras_positional(factory,
                                                     host_arguments)

  class BridgedOptimizer(*mixins, keras.optimizers.Optimizer):
    """Set per class below."""
    _fused_class = True  # A bridged class (checked when deserializing).
    port = staticmethod(factory)  # The transform factory it runs.

    def __init__(self, *args, skip_nonfinite=False, **kwargs):
      kwargs = _fused.deserialized_arguments(
          _fused.with_argument_names(
              class_name,
              _fused.bind_positional(class_name, positional, args, kwargs),
              native_names or {}),
          keras.saving.get_registered_object)
      name = kwargs.pop("name", None)
      _fused.check_arguments(class_name, kwargs, factory, own_defaults,
                             host_arguments, "Keras")
      if "optimizer" in kwargs:  # TF Addons' wrappers.
        kwargs["optimizer"] = _fused.inner_optimizer(
            kwargs["optimizer"], importlib.import_module("tf_bridge"),
            keras.optimizers.get)
      inner = [v for v in kwargs.values() if _fused.is_bridged(v)]
      learning_rate = kwargs.pop(
          "learning_rate", _learning_rate_of(inner[0]) if inner
          else default_rate)
      if kwargs.get("lr") is not None:
        # OptimizerV2's alias (TF Addons' ports take it) is Keras's
        # learning rate here, as it was there: callbacks see it.
        learning_rate = kwargs.pop("lr")
      base = {**base_defaults,
              **{k: kwargs.pop(k) for k in host_arguments if k in kwargs}}
      super().__init__(learning_rate=learning_rate, name=name, **base)
      self._arguments = {**own_defaults, **kwargs}
      self._skip_nonfinite = bool(skip_nonfinite)
      # Hyperparameters are attributes, as native's (`optimizer.beta_1`),
      # except where Keras has one of that name (TF Addons' AdamW keeps its
      # own `weight_decay`, not Keras's).
      self._hyperparameter_attributes = tuple(
          key for key, value in self._arguments.items()
          if not hasattr(self, key) and not _fused.is_bridged(value))
      for key in self._hyperparameter_attributes:
        super().__setattr__(key, self._arguments[key])
      self._fused = _fused.FusedTransform(
          factory, {**self._arguments, **base}, host_arguments,
          jaxopt_port.keras_transform, self._skip_nonfinite)
      # Builds the transform once so bad arguments fail here, as in Keras.
      self._fused.transform(learning_rate if isinstance(learning_rate, float)
                            else 0.001)

    def __setattr__(self, name, value):
      # Assigning a hyperparameter changes the next traced (eager: the next)
      # step, as it does natively.
      if (name in self.__dict__.get("_hyperparameter_attributes", ())
          and "_fused" in self.__dict__ and not _fused.is_bridged(value)):
        self._fused.set_argument(name, value)
        self._arguments[name] = value
      super().__setattr__(name, value)

    def apply(self, grads, trainable_variables=None):
      grads = _fused.tensor_slices(grads)
      if trainable_variables is not None:
        trainable_variables = list(trainable_variables)
      variables = (self._trainable_variables if trainable_variables is None
                   else trainable_variables)
      checked = _fused.check_gradients(class_name, grads, variables)
      if self.built:
        _fused.check_built_for(class_name, self._trainable_variables,
                               variables, key=self._var_key)
      with checked:
        return super().apply(grads, trainable_variables)

    def load_own_variables(self, store):
      # Keras warns and skips a mismatched store, or fails half-assigned.
      _fused.check_saved_state(self.name, self.variables,
                               [store[str(i)] for i in range(len(store))])
      super().load_own_variables(store)

    def build(self, variables):
      if self.built:
        return
      with _outside_functions():
        super().build(variables)
      leaves = self._fused.initial_state(
          _fused.unique_keys([getattr(v, "path", v.name) for v in variables]),
          variables)
      from_params = [i for i, leaf in enumerate(leaves) if leaf.from_params]
      created = {}
      for index in _fused.creation_order(leaves, slots_by_variable,
                                         shared_first=False):
        leaf = leaves[index]
        if leaf.from_params:
          # Reads the variables: inside the trace that creates them (a model
          # built at its first step), TensorFlow orders the initializers.
          created[index] = self._add_state_variable(
              variables, leaf, self._initial_from_params(
                  variables, from_params.index(index)))
        else:
          with _outside_functions():
            created[index] = self._add_state_variable(variables, leaf,
                                                      _constant(leaf.value))
      self._state_variables = [created[i] for i in sorted(created)]

    def _add_state_variable(self, variables, leaf, initializer):
      reference = None if leaf.slot_of is None else variables[leaf.slot_of]
      if leaf.is_slot_of(variables):
        return self.add_variable_from_reference(
            reference, name=leaf.name, initializer=initializer)
      prefix = "state_" if reference is None else (
          reference.path.replace("/", "_") + "_")
      return self.add_variable(
          shape=leaf.value.shape, initializer=initializer,
          dtype=str(leaf.value.dtype), name=prefix + leaf.name)

    def _initial_from_params(self, variables, position):
      def initializer(shape, dtype):
        del shape, dtype
        if keras.backend.backend() != "tensorflow":
          return self._fused.initial_values_from(
              [v.value for v in variables], tensorflow=False)[position]
        return self._fused.initial_values_from(
            [_tf_variable(v).read_value() for v in variables])[position]
      return initializer

    def _apply_weight_decay(self, variables):
      del variables  # Inside the fused step, one pass less over memory.

    def _decay_rates(self, trainable_variables):
      """Keras's weight decay rate for each built variable (0 without a
      gradient, or excluded): `weight_decay`, or the update step's own rates
      (Muon's `adam_weight_decay`); None when nothing decays."""
      rates = self._fused.weight_decay_rates()
      decay = [0.0] * len(self._trainable_variables)
      for variable in trainable_variables:
        index = self._get_variable_index(variable)
        rate = self.weight_decay if rates is None else rates[index]
        if rate and self._use_weight_decay(variable):
          decay[index] = float(rate)
      return tuple(decay) if any(decay) else None

    def update_step(self, gradient, variable, learning_rate):
      """One variable's step, as Keras's `update_step` (no weight decay, no
      iteration count: `apply` does those)."""
      self._fused_step([gradient], [variable], learning_rate, decay=False)

    def _backend_update_step(self, grads, trainable_variables, learning_rate):
      self._fused_step(grads, trainable_variables, learning_rate, decay=True)

    def _fused_step(self, grads, trainable_variables, learning_rate, decay):
      if keras.backend.backend() == "jax":
        return self._jax_update_step(grads, trainable_variables, learning_rate,
                                     decay)
      import tensorflow as tf  # pylint: disable=import-outside-toplevel
      indices = [self._get_variable_index(v) for v in trainable_variables]
      grads_and_vars = self._all_reduce_sum_gradients(
          list(zip(grads, [_tf_variable(v) for v in trainable_variables])))
      aligned = [None] * len(self._trainable_variables)
      for index, (grad, _) in zip(indices, grads_and_vars):
        aligned[index] = grad
      tf.__internal__.distribute.interim.maybe_merge_call(
          self._fused_update, self._distribution_strategy, aligned,
          learning_rate,
          self._decay_rates(trainable_variables) if decay else None)

    def _jax_update_step(self, grads, trainable_variables, learning_rate,
                         decay):
      """On Keras 3's JAX backend the transform runs directly, jitted. A
      row-sparse gradient (a `jax.experimental.sparse.BCOO` over rows, as
      Keras's JAX backend makes sparse tensors, or a `jaxopt_port.RowSparse`)
      takes the transform's sparse path, as `tf.IndexedSlices` does."""
      import jax.numpy as jnp  # pylint: disable=import-outside-toplevel
      aligned = [None] * len(self._trainable_variables)
      for variable, grad in zip(trainable_variables, grads):
        aligned[self._get_variable_index(variable)] = grad
      present = tuple(g is not None for g in aligned)
      params = [v.value for v in self._trainable_variables]
      gradients, row_indices, sparse = _fused.jax_step_gradients(
          aligned, params, self._fused.sparse_rows)
      step = self._fused.jitted_step(
          present, sparse,
          self._decay_rates(trainable_variables) if decay else None)
      new_params, new_state = step(
          params, gradients, [s.value for s in self._state_variables],
          jnp.asarray(learning_rate, jnp.float32), row_indices,
          jnp.asarray(self.iterations, jnp.int32))
      for variable, value in zip(self._trainable_variables, new_params):
        variable.assign(value)
      for variable, value in zip(self._state_variables, new_state):
        variable.assign(value)

    def _fused_update(self, distribution, grads, learning_rate, decay):
      return _fused.apply_fused(
          self._fused, distribution,
          [_tf_variable(v) for v in self._trainable_variables],
          grads, [s.value for s in self._state_variables], learning_rate,
          self.iterations, decay)

    def _built_variables(self):
      return self._trainable_variables

    def get_config(self):
      config = super().get_config()
      config.update(_fused.serialized_arguments(self._arguments, factory))
      if self._skip_nonfinite:
        config["skip_nonfinite"] = True
      return config

  BridgedOptimizer.__name__ = BridgedOptimizer.__qualname__ = class_name
  BridgedOptimizer.__module__ = module
  BridgedOptimizer.__doc__ = (
      f"Keras 3 optimizer running `{factory.__module__}.{factory.__name__}` "
      "in one XLA call per step (see `tf_bridge.keras_optimizer`).\n\n"
      + (inspect.getdoc(factory) or ""))
  BridgedOptimizer.__init__.__signature__ = _constructor_signature(
      factory, default_rate, own_defaults, base_defaults, host_arguments,
      positional)
  return keras.saving.register_keras_serializable(
      package=module, name=class_name)(BridgedOptimizer)


def _tf_variable(variable: Any) -> Any:
  """The `tf.Variable` behind a Keras variable; a plain one as it is (Keras
  3 optimizers accept both)."""
  import keras  # pylint: disable=import-outside-toplevel
  return variable.value if isinstance(variable, keras.Variable) else variable


def _learning_rate_of(optimizer: Any) -> Any:
  """A Keras 3 optimizer's learning rate: its schedule, or its value."""
  import keras  # pylint: disable=import-outside-toplevel
  rate = optimizer._learning_rate  # pylint: disable=protected-access
  if isinstance(rate, keras.optimizers.schedules.LearningRateSchedule):
    return rate
  return float(keras.ops.convert_to_numpy(optimizer.learning_rate))


def _keras_positional(factory, host_arguments) -> list[str]:
  """The constructor's positional arguments, as Keras 3's own classes take
  them: the factory's, then Keras's base arguments in Keras's order, then
  `name` (`Adam(0.001, 0.9, 0.999, 1e-7, False, 0.01)` sets weight_decay)."""
  own = _fused.positional_names(factory)
  return own + [a for a in host_arguments if a not in own] + ["name"]


def _constructor_signature(factory, rate, own, base_defaults, host_arguments,
                           positional) -> inspect.Signature:
  """(self, <positional>, *, <rest>, skip_nonfinite): what the constructor
  accepts, for `help()` and IDEs."""
  import keras  # pylint: disable=import-outside-toplevel
  base_signature = inspect.signature(
      keras.src.optimizers.base_optimizer.BaseOptimizer.__init__).parameters
  base = {name: base_defaults.get(name, base_signature[name].default)
          for name in host_arguments}
  parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)]
  for name in positional:
    default = rate if name == "learning_rate" else {
        **own, **base, "name": None}[name]
    if name in _fused.required_arguments(factory):
      default = inspect.Parameter.empty
    parameters.append(inspect.Parameter(
        name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default))
  keyword = inspect.Parameter.KEYWORD_ONLY
  parameters += [inspect.Parameter(k, keyword, default=v)
                 for k, v in {**own, **base}.items() if k not in positional]
  parameters.append(inspect.Parameter("skip_nonfinite", keyword,
                                      default=False))
  return inspect.Signature(parameters)
