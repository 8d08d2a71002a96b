"""OptimizerV2: the bridged optimizers' base class, `LegacyOptimizer`.

OptimizerV2's own `apply_gradients` keeps what it owns (gradient
aggregation, clipping, `lr`/`decay` and schedules through `_decayed_lr`);
the bridge overrides `_distributed_apply`, which receives the whole clipped
gradient list, and updates every variable in one XLA call.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
from typing import Any, Callable, Sequence

import jaxopt_port
import optax
import tensorflow as tf
import tf_keras

from tf_bridge import _arguments, _checks, _layout, _serialization
from tf_bridge._decoupled import LegacyDecoupledWeightDecay
from tf_bridge._bridge import BridgedOptimizer
from tf_bridge._keras3 import camel_case


class LegacyOptimizer(BridgedOptimizer, tf_keras.optimizers.legacy.Optimizer):
  """An OptimizerV2 running an optax transform factory's update.

  A subclass names its transform as `Keras3Optimizer`'s do
  (`class Adam(LegacyOptimizer, algorithm="legacy.adam")`, or `port=`;
  `keras_optimizer(factory)` makes one). The constructor takes
  `learning_rate` (float, schedule or callable; the default is the
  factory's), the factory's other keyword arguments, and OptimizerV2's
  `name`, `lr`, `decay`, `clipnorm`, `clipvalue` and `global_clipnorm`,
  `gradient_aggregator` and `gradient_transformers` (applied by
  OptimizerV2's `apply_gradients`, before the fused step), and
  `skip_nonfinite` (as `Keras3Optimizer`'s; `iterations` still counts the
  step). Slots are created with `add_slot`, so `get_slot(var, "m")` works;
  the class is registered with tf_keras. Sparse gradients and inner
  optimizers: as `Keras3Optimizer`'s.

  Class keywords besides `Keras3Optimizer`'s: `hyperparameters`, the
  arguments native keeps as OptimizerV2 hyperparameters (`_hyper`:
  variables once built, checkpointed under their names, fed to each step; a
  catalog entry reads them from its native class), and
  `unread_hyperparameters`, those of them native's step does not read (it
  keeps the constructor's value: legacy Nadam's `decay`).
  """
  _base_arguments = tuple(_arguments.LEGACY_BASE_ARGUMENTS)
  _schedules = tf_keras.optimizers.schedules
  # As most OptimizerV2 classes: each slot for all variables in turn.
  _slots_by_variable = False
  _hyperparameters: tuple[str, ...] = ()
  _unread_hyperparameters: tuple[str, ...] = ()
  _hyper_names: dict[str, str] = {}  # The port's name of each of those.

  @staticmethod
  def _unknown_arguments(unknown):
    # OptimizerV2's own check, for its words: it names the first one and
    # prints the set of kwargs it allows, in its module's set order.
    try:
      tf_keras.optimizers.legacy.Optimizer(name="unknown", **unknown)
    except TypeError as error:
      return error
    return TypeError(f"Unexpected keyword arguments: {list(unknown)}")

  @classmethod
  def _generation_options(cls, kwargs):
    return {key: kwargs.pop(key)
            for key in ("hyperparameters", "unread_hyperparameters")
            if key in kwargs}

  @classmethod
  def _declared_options(cls, declaration):
    return {"hyperparameters": declaration.optimizer_v2_hyperparameters(),
            "unread_hyperparameters": declaration.unread_hyperparameters}

  @classmethod
  def _package_of(cls, declaration):
    return declaration.legacy_bridge_path

  @classmethod
  def _native_positional(cls, declaration):
    # A Keras 3 algorithm hosted here takes the port's order.
    if declaration.bridge_path != declaration.legacy_bridge_path:
      return ()
    return declaration.native_positional()

  @classmethod
  def _default_positional(cls):
    # As OptimizerV2's classes: `name` follows the algorithm's arguments.
    return _arguments.positional_names(cls.port) + ["name"]

  @classmethod
  def _configure(cls, hyperparameters=(), unread_hyperparameters=()):
    cls._hyperparameters = tuple(hyperparameters)
    cls._unread_hyperparameters = tuple(unread_hyperparameters)
    cls._hyper_names = {cls._native_names.get(h, h): h
                        for h in cls._hyperparameters}

  @classmethod
  def _class_signature(cls):
    """The `positional` arguments in order (`name` among them, as
    OptimizerV2's classes take it), then keyword-only the factory's other
    arguments and OptimizerV2's base arguments (its gradient aggregator and
    transformers too) and `skip_nonfinite`."""
    keyword = inspect.Parameter.KEYWORD_ONLY
    parameters = {p.name: p for p in
                  inspect.signature(cls.port).parameters.values()}
    parameters["name"] = inspect.Parameter(
        "name", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=cls.__name__)
    taken = set(parameters)
    return inspect.Signature(
        [parameters[name].replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD)
         for name in cls._positional]
        + [p.replace(kind=keyword) for name, p in parameters.items()
           if name not in cls._positional]
        + [inspect.Parameter(argument, keyword, default=None)
           for argument in cls._host_arguments if argument not in taken]
        + [inspect.Parameter(argument, keyword, default=default)
           for argument, default in (("gradient_aggregator", None),
                                     ("gradient_transformers", None),
                                     ("skip_nonfinite", False))])

  @classmethod
  def _register(cls, package):
    tf_keras.saving.register_keras_serializable(package=package,
                                                name=cls.__name__)(cls)

  @staticmethod
  def _registered_class(registered_name):
    return tf_keras.saving.get_registered_object(registered_name)

  def __init__(self, *args, skip_nonfinite=False, gradient_aggregator=None,
               gradient_transformers=None, **kwargs):
    kwargs = self._bound_arguments(args, kwargs, _registered_or_twin)
    name = kwargs.pop("name", type(self).__name__)
    if "optimizer" in kwargs:  # TF Addons' wrappers.
      kwargs["optimizer"] = _serialization.inner_optimizer(
          kwargs["optimizer"], importlib.import_module("tf_bridge.legacy"),
          lambda name: tf_keras.optimizers.get(name,
                                               use_legacy_optimizer=True))
    learning_rate = self._pop_learning_rate(kwargs, _learning_rate_of)
    base = {k: kwargs.pop(k) for k in self._host_arguments if k in kwargs}
    super().__init__(name, gradient_aggregator=gradient_aggregator,
                     gradient_transformers=gradient_transformers, **base)
    rate = base.get("lr", learning_rate)
    self._set_hyper("learning_rate", rate)
    if "decay" in self._host_arguments:  # Not TF1 RMSProp's own `decay`.
      self._set_hyper("decay", self._initial_decay)
    # Bad arguments fail here (a schedule as the port's schedules would).
    self._start_fused(
        kwargs, base, jaxopt_port.legacy_transform, skip_nonfinite,
        rate if isinstance(rate, float)
        else optax.constant_schedule(0.001) if _arguments.is_schedule(rate)
        else 0.001)
    # Native's OptimizerV2 hyperparameters are OptimizerV2's here too
    # (variables once built, checkpointed, assigned by `optimizer.beta_1 =
    # 0.5`), read by the step each time it runs unless their value decided
    # the state (SGD's momentum of 0: native then ignores it too).
    for own, hyper in self._hyper_names.items():
      if own in self._arguments:
        if hyper not in self._unread_hyperparameters:
          self._fused.feed(own, functools.partial(self._get_hyper, hyper))
        super()._set_hyper(hyper, self._arguments[own])
    self._variables_built_for = None
    self._state_variables, self._state_identities = [], []

  def _own_name(self, name):
    """The port's name of an argument given by either name."""
    return self._native_names.get(name, name)

  def _native_hyper(self, name):
    """The OptimizerV2 hyperparameter `name` (either name) stands for,
    once it is one; else None."""
    hyper = self._hyper_names.get(self._own_name(name), name)
    return hyper if hyper in self.__dict__.get("_hyper", {}) else None

  def __getattr__(self, name):
    # After OptimizerV2's own lookup (attributes, then `_hyper`).
    arguments = self.__dict__.get("_arguments", {})
    if self._native_hyper(name):
      return self._get_hyper(name)
    if self._own_name(name) in arguments:
      value = arguments[self._own_name(name)]
      if name == "epsilon":  # OptimizerV2's `epsilon or backend.epsilon()`.
        return value or tf_keras.backend.epsilon()
      return value
    raise AttributeError(
        f"{type(self).__name__!r} object has no attribute {name!r}")

  def __dir__(self):
    # OptimizerV2's lists its hyperparameters; native's plain attributes
    # (Adam's `epsilon`, `amsgrad`) are arguments here, read through
    # `__getattr__` by native's names.
    native_names = {own: native for native, own in self._native_names.items()}
    return sorted(set(super().__dir__()) | {
        native_names.get(name, name)
        for name in self.__dict__.get("_arguments", {})})

  def __setattr__(self, name, value):
    arguments = self.__dict__.get("_arguments")
    hyper = self._native_hyper(name)
    if hyper:
      super()._set_hyper(hyper, value)
      return
    name = self._own_name(name)
    if (arguments is not None and name in arguments
        and not _arguments.is_bridged(value)):
      self._fused.set_argument(name, value)
      arguments[name] = value
      return
    super().__setattr__(name, value)

  def _get_hyper(self, name, dtype=None):
    hyper = self._native_hyper(name)
    if hyper:
      return super()._get_hyper(hyper, dtype)
    name = self._own_name(name)
    if name not in self._arguments:
      return super()._get_hyper(name, dtype)
    value = self._arguments[name]
    if name in self._fused.runtime_names:  # As OptimizerV2's: evaluated.
      value = _arguments.runtime_value(value, self.iterations)
    return value if dtype is None else tf.cast(value, dtype)

  def _set_hyper(self, name, value):
    hyper = self._native_hyper(name)
    if (not hyper
        and self._own_name(name) in self.__dict__.get("_arguments", {})):
      setattr(self, name, value)
    else:
      super()._set_hyper(hyper or name, value)

  def apply_gradients(self, grads_and_vars, *args, **kwargs):
    grads_and_vars = list(grads_and_vars)
    for grad, tensor in grads_and_vars:
      if grad is not None and isinstance(tensor, tf.Tensor):
        self._refuse_tensor(tensor)
    grads_and_vars = list(zip(
        _checks.tensor_slices([g for g, _ in grads_and_vars]),
        [v for _, v in grads_and_vars]))
    with _checks.check_gradients(
        type(self).__name__, [g for g, _ in grads_and_vars],
        [v for _, v in grads_and_vars],
        getattr(type(self).port, "complex_values", False)):
      return super().apply_gradients(grads_and_vars, *args, **kwargs)

  @tf.autograph.experimental.do_not_convert
  def _refuse_tensor(self, tensor):
    """What OptimizerV2 raises for a tensor in the place of a variable (as
    `_compute_gradients` returns it for one): making a slot for it reads
    its `_unique_id` (an AttributeError), and an optimizer without slots
    refuses to update it."""
    layout = _layout.StateLayout.of(self._fused.transform(0.001), ["tensor"],
                                    [tensor])
    if any(leaf.stored and leaf.is_slot_of([tensor])
           for leaf in layout.leaves):
      tf_keras.src.optimizers.legacy.optimizer_v2._var_key(tensor)  # pylint: disable=protected-access
    raise NotImplementedError(
        f"Updating a `Tensor` is not implemented. Received: var={tensor}.")

  def _create_slots(self, var_list):
    # As OptimizerV2: slots for the variables not seen before, the others
    # kept (one optimizer may update several variable lists).
    built = self._variables_built_for or []
    known = {v.ref() for v in built}
    new = [v for v in var_list if v.ref() not in known]
    if not new:
      return
    var_list = built + new
    self._variables_built_for = var_list
    leaves = self._fused.initial_state(
        _layout.unique_keys([v.name for v in var_list]), var_list)
    identities = [(leaf.name, None if leaf.slot_of is None
                   else var_list[leaf.slot_of].ref()) for leaf in leaves]
    kept = dict(zip(self._state_identities, self._state_variables))
    initial = dict(zip(
        [i for i, leaf in enumerate(leaves) if leaf.from_params],
        self._fused.initial_values_from([_initialized_value(v)
                                         for v in var_list])
        if any(leaf.from_params for leaf in leaves) else []))
    created = {}
    for index in _layout.creation_order(leaves, self._slots_by_variable,
                                        shared_first=True,
                                        slot_groups=self._slot_groups):
      leaf = leaves[index]
      if identities[index] in kept:
        created[index] = kept[identities[index]]
        continue
      if index in initial:
        # As TF Addons' `add_slot(var, name, var.read_value())`.
        value = initial[index]
      elif leaf.fill is not None:
        # Filled, as native's "zeros" (the value is a broadcast, which
        # TensorFlow would copy whole).
        value = functools.partial(_filled, leaf.fill)
      else:
        value = leaf.value
      owner = self._state_owner(leaf.depth)
      if leaf.is_slot_of(var_list):
        with self._slot_scope(owner):
          variable = owner.add_slot(var_list[leaf.slot_of], leaf.name,
                                    initializer=value)
      else:
        # Named as native names its own weights (`momentum_cache`).
        prefix = "" if leaf.slot_of is None else (
            self._fused.keys[leaf.slot_of].replace(":", "_")
            .replace("/", "_")
            + "_")
        variable = self._add_state_weight(owner, prefix + leaf.name, leaf,
                                          value)
      created[index] = variable
    self._state_variables = [created[i] for i in sorted(created)]
    self._state_identities = [identities[i] for i in sorted(created)]

  def _add_state_weight(self, owner, name, leaf, value):
    """A state leaf that is no slot of one variable (`beta1_power`), as
    `owner`'s weight, listed as OptimizerV2 lists `iter`."""
    variable = owner.add_weight(
        name, shape=leaf.value.shape, dtype=tf.as_dtype(leaf.value.dtype),
        initializer=(value if callable(value)
                     else lambda shape, dtype, value=value: value),
        trainable=False)
    owner._weights.append(variable)  # pylint: disable=protected-access
    return variable

  def _slot_scope(self, owner):
    """The name scope `owner`'s slots are made in: the current one (a
    wrapper whose inner optimizer makes its slots in its own scope, as Model
    Garden's EMA, says so)."""
    del owner
    return contextlib.nullcontext()

  def _state_owner(self, depth):
    """The optimizer whose variable a state leaf `depth` wrappers deep
    (`StateLeaf.depth`) is: this one; a TF Addons wrapper's inner
    optimizer owns its own slots (`LegacyWrapper`)."""
    del depth
    return self

  # OptimizerV2's merge_call would convert it with autograph, as it does not
  # its own (tf_keras is never converted): a fifth of a second per trace.
  @tf.autograph.experimental.do_not_convert
  def _distributed_apply(self, distribution, grads_and_vars, apply_state,
                         name):
    del apply_state, name
    variables = self._variables_built_for
    positions = {v.ref(): g for g, v in grads_and_vars}
    _checks.check_built_for(type(self).__name__, variables,
                            [v for _, v in grads_and_vars])
    grads = [positions.get(v.ref()) for v in variables]
    update = self._fused.apply(
        distribution, variables, grads, self._state_variables,
        self._decayed_lr(tf.float32), self._step_count())
    # As OptimizerV2: a variable's constraint after its update.
    constrained = [v for v, g in zip(variables, grads)
                   if g is not None and getattr(v, "constraint", None)]
    if constrained:
      with tf.control_dependencies([update]):
        update = tf.group([distribution.extended.update(
            v, lambda v: v.assign(v.constraint(v)), group=True)
                           for v in constrained])
    return self._counted(update)

  def _step_count(self):
    """The count the step reads: the steps taken before it."""
    return self.iterations

  def _counted(self, update):
    """`update`, then the count: as OptimizerV2, an op in graphs
    (LossScaleOptimizer's tf.cond pairs it with a no-op), the new count when
    eager."""
    if tf.executing_eagerly():
      return self.iterations.assign_add(1)
    with tf.control_dependencies([update]):
      return self.iterations.assign_add(1, read_value=False)

  def _built_variables(self):
    return self._variables_built_for

  def _build_for(self, variables):
    self._create_all_weights(variables)

  def _rate_config(self):
    return {"learning_rate": self._serialize_hyperparameter("learning_rate"),
            "decay": self._initial_decay}

  def get_config(self):
    config = super().get_config()
    config.update({
        **self._rate_config(),
        **self._bridge_config(
            {k: v for k, v in self._arguments.items()
             if self._hyper_names.get(k) not in self._hyper}),
        **{hyper: self._serialize_hyperparameter(hyper)
           for hyper in self._hyperparameters if hyper in self._hyper}})
    for key in self._omitted_from_config():
      config.pop(key, None)
    return config


def keras_optimizer(factory: Callable[..., Any], name: str | None = None, *,
                    module: str | None = None,
                    mixins: tuple[type, ...] = (),
                    slots_by_variable: bool = False,
                    native_names: dict[str, str] | None = None,
                    hyperparameters: tuple[str, ...] = (),
                    unread_hyperparameters: tuple[str, ...] = (),
                    positional: Sequence[str] = ()) -> type:
  """A `LegacyOptimizer` subclass running `factory`'s transform (see
  `LegacyOptimizer` for what its constructor takes and does); a factory with
  TF Addons' decoupled weight decay signature also takes `decay_var_list`
  in `apply_gradients` and `minimize`.

  Args:
    factory: A function returning an optax transformation.
    name: The class name; defaults to the CamelCase of `factory.__name__`.
    module: The class's module and its tf_keras registration package;
      defaults to the factory's module, as `tf_bridge.keras_optimizer`'s.
    mixins: Base classes added before `LegacyOptimizer`.
    slots_by_variable: Create each slot for all variables in turn, as most
      OptimizerV2 classes do, or (True, as legacy Ftrl) the slots of one
      variable after another.
    native_names: Other names the constructor, attributes and
      `_get_hyper`/`_set_hyper` take for the factory's arguments (TFA
      Yogi's `beta_1` for `beta1`).
    hyperparameters, unread_hyperparameters: See `LegacyOptimizer`.
    positional: The arguments the constructor takes positionally, in order;
      by default the factory's then `name`.
  """
  _arguments.check_factory("tf_bridge.legacy.keras_optimizer", factory)
  module = module or _arguments.module_of(factory)
  if _arguments.is_decoupled(factory):
    mixins = (LegacyDecoupledWeightDecay, *mixins)
  return type(name or camel_case(factory.__name__),
              (*mixins, LegacyOptimizer), {"__module__": module},
              port=factory, package=module,
              slots_by_variable=slots_by_variable, native_names=native_names,
              hyperparameters=hyperparameters,
              unread_hyperparameters=unread_hyperparameters,
              positional=positional)


def _filled(fill: Any, shape: Any, dtype: Any = None) -> Any:
  """An initializer's value: a `shape` tensor of `fill`."""
  return tf.fill(shape, tf.constant(fill, dtype))


def _initialized_value(variable: Any) -> Any:
  """The variable's value; in a TF1 graph, its initial value until it is
  initialized (`global_variables_initializer` runs in no set order)."""
  if tf.executing_eagerly():
    return variable.read_value()
  return tf.cond(tf.compat.v1.is_variable_initialized(variable),
                 variable.read_value, lambda: variable.initial_value)


def _registered_or_twin(name: str) -> Any:
  """The class registered with tf_keras under `name`; for the name of a
  tf_keras legacy optimizer (a TF Addons wrapper's config holds tf_keras's
  own `Adam`), its bridged twin, as Keras finds its built-in class."""
  found = tf_keras.saving.get_registered_object(name)
  if found is None and hasattr(tf_keras.optimizers.legacy, name):
    found = getattr(importlib.import_module("tf_bridge.legacy"), name, None)
  return found


def _learning_rate_of(optimizer: Any) -> Any:
  """An OptimizerV2's learning rate: its schedule, or its value (a TF Addons
  wrapper's is its inner optimizer's)."""
  if "learning_rate" not in optimizer._hyper:  # pylint: disable=protected-access
    return _learning_rate_of(optimizer._optimizer)  # pylint: disable=protected-access
  rate = optimizer._hyper["learning_rate"]  # pylint: disable=protected-access
  if isinstance(rate, tf_keras.optimizers.schedules.LearningRateSchedule):
    return rate
  return float(rate)
