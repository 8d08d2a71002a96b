"""Keras 3: the bridged optimizers' base class, `Keras3Optimizer`.

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
import keras

from tf_bridge import (_arguments, _backend, _checks, _fused, _layout,
                       _serialization)
from tf_bridge._bridge import BridgedOptimizer, HyperparameterAttributes
from tf_bridge._decoupled import Keras3DecoupledWeightDecay


def camel_case(name: str) -> str:
  return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def _initializer(leaf: _layout.StateLeaf):
  """A Keras initializer of the leaf's initial value (a fill if it is
  one: the value is a broadcast, which TensorFlow would copy whole)."""
  value, fill = leaf.value, leaf.fill

  def initializer(shape, dtype=None):
    del shape, dtype
    if fill is None:
      return value
    return keras.ops.full(value.shape, fill, dtype=str(value.dtype))
  return initializer


def _outside_functions():
  """`tf.init_scope()` on the TensorFlow backend: a build traced inside a
  `tf.function` must create its variables eagerly, or their initial values
  become constants of the traced graph (memory the size of the state, held
  by the function)."""
  if keras.backend.backend() != "tensorflow":
    return contextlib.nullcontext()
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  return tf.init_scope()


class Keras3Optimizer(HyperparameterAttributes, BridgedOptimizer,
                      keras.optimizers.Optimizer):
  """A Keras 3 optimizer running an optax transform factory's update.

  A subclass names its transform (`class Adam(Keras3Optimizer,
  algorithm="adam")` for a catalog entry, `port=factory` for any factory;
  `keras_optimizer(factory)` makes one). Its constructor takes
  `learning_rate` (a float, a `LearningRateSchedule` or a callable, as Keras
  allows; the default is the factory's), the factory's other keyword
  arguments with their defaults, and Keras's base arguments
  (`weight_decay`, `clipnorm`, `clipvalue`, `global_clipnorm`, `use_ema`,
  `ema_momentum`, `ema_overwrite_frequency`, `loss_scale_factor`,
  `gradient_accumulation_steps`, `name`), which Keras's base class applies
  as it does for its own optimizers, and `skip_nonfinite`: if True, a step
  whose gradients hold a NaN or an Inf leaves the variables and the
  transform's state as they were and counts itself in the optimizer
  variable `skipped_steps` (`jaxopt_port.skip_nonfinite`; Keras's own
  `iterations`, EMA and accumulators still see the step). The class is
  registered with Keras, so `load_model` needs no `custom_objects`, and
  `get_config()` round-trips.

  A sparse gradient (`tf.IndexedSlices`) reaches the transform as a
  `jaxopt_port.RowSparse` if the transform takes those
  (`jaxopt_port.sparse_mode`: the ports declare it, and
  `jaxopt_port.with_row_sparse_gradients(tx, "rows")` makes any transform
  whose update is row by row take them), so only the touched rows are read
  and written; a port of a TensorFlow class (`tf_bridge.adopt`) gets its
  entries as they come, for the class's own sparse hook (see
  `tf_bridge.adopt`); otherwise it is densified, duplicate indices summed.

  A factory argument may be another bridged optimizer (TFA's
  `Lookahead(optimizer)`): its transform runs inside this one, fed this
  class's learning rate, which defaults to the inner optimizer's.
  """
  _base_arguments = tuple(_arguments.KERAS_BASE_ARGUMENTS)
  _schedules = keras.optimizers.schedules
  _slots_by_variable = True  # As Keras 3's `add_optimizer_variables`.
  _base_defaults: dict[str, Any] = {}

  @staticmethod
  def _unknown_arguments(unknown):
    # Keras 3's `BaseOptimizer.__init__`.
    return ValueError(f"Argument(s) not recognized: {unknown}")

  @classmethod
  def _package_of(cls, declaration):
    return declaration.bridge_path

  @classmethod
  def _configure(cls):
    parameters = inspect.signature(cls.port).parameters
    cls._base_defaults = {
        argument: parameters[argument].default
        for argument in cls._host_arguments
        if argument in parameters
        and parameters[argument].default is not inspect.Parameter.empty}

  @classmethod
  def _class_signature(cls):
    """(<positional>, *, <rest>, skip_nonfinite): what the constructor
    accepts, for `help()` and IDEs."""
    base_signature = inspect.signature(
        keras.src.optimizers.base_optimizer.BaseOptimizer.__init__).parameters
    base = {name: cls._base_defaults.get(name, base_signature[name].default)
            for name in cls._host_arguments}
    own = cls._own_defaults
    required = _arguments.required_arguments(cls.port)
    parameters = []
    for name in cls._positional:
      default = cls._default_rate if name == "learning_rate" else {
          **own, **base, "name": None}[name]
      if name in required:
        default = inspect.Parameter.empty
      parameters.append(inspect.Parameter(
          name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default))
    keyword = inspect.Parameter.KEYWORD_ONLY
    if ("learning_rate" not in cls._positional
        and "learning_rate" in inspect.signature(cls.port).parameters):
      # A keyword-only rate (TFA COCOB's, which it ignores).
      parameters.append(inspect.Parameter("learning_rate", keyword,
                                          default=cls._default_rate))
    parameters += [inspect.Parameter(k, keyword, default=v)
                   for k, v in {**own, **base}.items()
                   if k not in cls._positional]
    parameters.append(inspect.Parameter("skip_nonfinite", keyword,
                                        default=False))
    return inspect.Signature(parameters)

  @classmethod
  def _register(cls, package):
    keras.saving.register_keras_serializable(package=package,
                                             name=cls.__name__)(cls)

  @staticmethod
  def _registered_class(registered_name):
    return keras.saving.get_registered_object(registered_name)

  def __init__(self, *args, skip_nonfinite=False, **kwargs):
    _backend.check_backend(type(self).__name__)
    kwargs = self._bound_arguments(args, kwargs,
                                   keras.saving.get_registered_object)
    name = kwargs.pop("name", None)
    if "optimizer" in kwargs:  # TF Addons' wrappers.
      kwargs["optimizer"] = _serialization.inner_optimizer(
          kwargs["optimizer"], importlib.import_module("tf_bridge"),
          keras.optimizers.get)
    learning_rate = self._pop_learning_rate(kwargs, _learning_rate_of)
    if kwargs.get("lr") is not None:
      # OptimizerV2's alias (TF Addons' ports take it) is Keras's learning
      # rate here, as it was there: callbacks see it.
      learning_rate = kwargs.pop("lr")
    base = {**self._base_defaults,
            **{k: kwargs.pop(k) for k in self._host_arguments if k in kwargs}}
    super().__init__(learning_rate=learning_rate, name=name, **base)
    self._keep_hyperparameter_attributes({**self._own_defaults, **kwargs})
    self._start_fused(kwargs, base, jaxopt_port.keras_transform,
                      skip_nonfinite,
                      learning_rate if isinstance(learning_rate, float)
                      else 0.001)

  def apply(self, grads, trainable_variables=None):
    grads = _checks.tensor_slices(grads)
    if not grads or (trainable_variables is None and (
        not self.built or len(grads) != len(self._trainable_variables))):
      # Keras's own cases, decided before it changes anything: no gradients
      # (a no-op), or its error.
      return super().apply(grads, trainable_variables)
    if trainable_variables is not None:
      trainable_variables = list(trainable_variables)
      if self.built:
        # Keras's own check, first, as its `apply` makes it.
        self._check_variables_are_known(trainable_variables)
    variables = (self._trainable_variables if trainable_variables is None
                 else trainable_variables)
    checked = _checks.check_gradients(type(self).__name__, grads, variables)
    with checked:
      return super().apply(grads, trainable_variables)

  def load_own_variables(self, store):
    # Keras warns and skips a store of another size (`load_weights` into a
    # model not trained yet), but would fail half-assigned on a shape.
    if len(store) == len(self.variables):
      _checks.check_saved_shapes(self.name, self.variables,
                                 [store[str(i)] for i in range(len(store))])
    super().load_own_variables(store)

  def build(self, variables):
    if self.built:
      return
    with _outside_functions():
      super().build(variables)
    leaves = self._fused.initial_state(
        _layout.unique_keys([getattr(v, "path", v.name) for v in variables]),
        variables)
    from_params = [i for i, leaf in enumerate(leaves) if leaf.from_params]
    created = {}
    for index in _layout.creation_order(leaves, self._slots_by_variable,
                                        shared_first=False,
                                        slot_groups=self._slot_groups):
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
                                                    _initializer(leaf))
    self._state_variables = [created[i] for i in sorted(created)]

  def _add_state_variable(self, variables, leaf, initializer):
    reference = None if leaf.slot_of is None else variables[leaf.slot_of]
    if leaf.is_slot_of(variables):
      return self.add_variable_from_reference(
          reference, name=leaf.name, initializer=initializer)
    # Named as Keras's `add_variable_from_reference` names slots.
    prefix = "state_" if reference is None else (
        reference.path.replace("/", "_") + "_" if hasattr(reference, "path")
        else str(reference.name).replace("/", "_").replace(":", "_") + "_")
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
          [tf_variable_of(v).read_value() for v in variables])[position]
    return initializer

  def _apply_weight_decay(self, variables):
    del variables  # Inside the fused step, one pass less over memory.

  def _decay_rates(self, trainable_variables):
    """Keras's weight decay rate for each built variable, 0 for those
    without a gradient this step; None when nothing decays."""
    rates = self._variable_decay_rates()
    present = {self._get_variable_index(v) for v in trainable_variables}
    decay = tuple(rate if index in present else 0.0
                  for index, rate in enumerate(rates))
    return decay if any(decay) else None

  def _variable_decay_rates(self):
    """Each built variable's weight decay rate (0 if excluded):
    `weight_decay`, or the update step's own rates (Muon's
    `adam_weight_decay`), computed again only when those change (Keras
    fixes the exclusions at `build`)."""
    key = (self.weight_decay, self._fused.version)
    cached = self.__dict__.get("_decay_rates_cache")
    if cached is None or cached[0] != key:
      own = self._fused.weight_decay_rates()
      rates = tuple(
          float(rate) if rate and self._use_weight_decay(variable) else 0.0
          for variable, rate in zip(
              self._trainable_variables,
              own or [self.weight_decay] * len(self._trainable_variables)))
      cached = (key, rates)
      object.__setattr__(self, "_decay_rates_cache", cached)
    return cached[1]

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
        list(zip(grads, [tf_variable_of(v) for v in trainable_variables])))
    aligned = [None] * len(self._trainable_variables)
    for index, (grad, _) in zip(indices, grads_and_vars):
      aligned[index] = grad
    # merge_call would convert it with autograph (seconds of a first step,
    # for code without Python control flow on tensors).
    tf.__internal__.distribute.interim.maybe_merge_call(
        tf.autograph.experimental.do_not_convert(self._fused_update),
        self._distribution_strategy, aligned,
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
    return self._fused.apply(
        distribution, [tf_variable_of(v) for v in self._trainable_variables],
        grads, [s.value for s in self._state_variables], learning_rate,
        self.iterations, decay)

  def _built_variables(self):
    return self._trainable_variables

  def _build_for(self, variables):
    self.build(variables)

  def get_config(self):
    config = super().get_config()
    config.update(self._bridge_config(self._arguments))
    return config


def keras_optimizer(factory: Callable[..., Any], name: str | None = None, *,
                    module: str | None = None,
                    mixins: tuple[type, ...] = (),
                    slots_by_variable: bool = True,
                    native_names: dict[str, str] | None = None,
                    positional: Sequence[str] = ()) -> type:
  """A `Keras3Optimizer` subclass running `factory`'s transform (see
  `Keras3Optimizer` for what its constructor takes and does).

  Args:
    factory: A function returning an optax transformation; if it takes
      `learning_rate`, Keras's current learning rate is fed to it every step.
    name: The class name; defaults to the CamelCase of `factory.__name__`.
    module: The class's module and its Keras registration package; defaults
      to the factory's module (`factory.__module__`), so a saved model
      names it and `load_model` finds the class wherever that module is
      imported. A class never replaces one of the catalog's.
    mixins: Base classes added before `Keras3Optimizer` (a factory with TF
      Addons' decoupled weight decay signature also gets `decay_var_list`
      in `apply_gradients` and `apply`).
    slots_by_variable: Create the slots of one variable after another, as
      Keras 3's own optimizers do, or each slot for all variables in turn.
    native_names: Other names the constructor takes for the factory's
      arguments (`{"weight_decay_rate": "weight_decay"}`).
    positional: The arguments the constructor takes positionally, in order;
      by default the factory's, then Keras's base arguments, then `name`.
  """
  _arguments.check_factory("tf_bridge.keras_optimizer", factory)
  module = module or _arguments.module_of(factory)
  if _arguments.is_decoupled(factory):
    mixins = (Keras3DecoupledWeightDecay, *mixins)
  return type(name or camel_case(factory.__name__),
              (*mixins, Keras3Optimizer), {"__module__": module},
              port=factory, package=module,
              slots_by_variable=slots_by_variable,
              native_names=native_names, positional=positional)


def tf_variable_of(variable: Any) -> Any:
  """The `tf.Variable` behind a Keras variable; a plain one as it is (Keras
  3 optimizers accept both)."""
  return variable.value if isinstance(variable, keras.Variable) else variable


def _learning_rate_of(optimizer: Any) -> Any:
  """A Keras 3 optimizer's learning rate: its schedule, or its value."""
  rate = optimizer._learning_rate  # pylint: disable=protected-access
  if isinstance(rate, keras.optimizers.schedules.LearningRateSchedule):
    return rate
  current = optimizer.learning_rate
  # `numpy()`, not keras.ops.convert_to_numpy: numpy 2 warns that Keras's
  # and TensorFlow's variables take no `copy` in `__array__`.
  return float(current.numpy() if isinstance(current, keras.Variable)
               else current)
