"""OptimizerV2: the ports as `tf_keras.optimizers.legacy.Optimizer` classes.

`tf_bridge.legacy.<Name>` exists for every legacy port in the catalog (with
legacy numerics) and for every Keras 3 algorithm legacy lacks (with Keras 3
numerics, e.g. `AdamW`). OptimizerV2's own `apply_gradients` keeps what it
owns (gradient aggregation, clipping, `lr`/`decay` and schedules through
`_decayed_lr`); the bridge overrides `_distributed_apply`, which receives the
whole clipped gradient list, and updates every variable in one XLA call.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from typing import Any, Callable, Sequence

import jaxopt_port
import optax

from tf_bridge import _fused, catalog
from tf_bridge._keras3 import camel_case
from tf_bridge.legacy import _decoupled


def keras_optimizer(factory: Callable[..., Any], name: str | None = None, *,
                    module: str = "tf_bridge.legacy",
                    mixins: tuple[type, ...] = (),
                    slots_by_variable: bool = False,
                    native_names: dict[str, str] | None = None,
                    hyperparameters: tuple[str, ...] = (),
                    unread_hyperparameters: tuple[str, ...] = (),
                    positional: Sequence[str] = ()) -> type:
  """An OptimizerV2 class running `factory`'s transform.

  The constructor takes `learning_rate` (float, schedule or callable; the
  default is the factory's), the factory's other keyword arguments, and
  OptimizerV2's `name`, `lr`, `decay`, `clipnorm`, `clipvalue` and
  `global_clipnorm`, `gradient_aggregator` and `gradient_transformers`
  (applied by OptimizerV2's `apply_gradients`, before the fused step), and
  `skip_nonfinite` (as in `tf_bridge.keras_optimizer`;
  `iterations` still counts the step). Slots are created with `add_slot`, so
  `get_slot(var, "m")` works; the class is registered with tf_keras (package
  `tf_bridge`). Sparse gradients: as in `tf_bridge.keras_optimizer`.

  Args:
    factory: A function returning an optax transformation.
    name: The class name; defaults to the CamelCase of `factory.__name__`.
    module, mixins: As in `tf_bridge.keras_optimizer` (an inner
      bridged optimizer argument works the same way).
    slots_by_variable: Create each slot for all variables in turn, as most
      OptimizerV2 classes do, or (True, as legacy Ftrl) the slots of one
      variable after another.
    native_names: The native class's names for arguments named otherwise
      here (TFA Yogi's hyperparameter `beta_1` for `beta1`): constructor
      keywords, attributes and `_get_hyper`/`_set_hyper` names too.
    hyperparameters: The arguments native keeps as OptimizerV2
      hyperparameters (`_hyper`): variables once built, checkpointed under
      their names, fed to each step (a catalog declaration reads them from
      its native class).
    unread_hyperparameters: Those of `hyperparameters` native's step does
      not read (it keeps the constructor's value: legacy Nadam's `decay`):
      variables and checkpointed, not fed.
    positional: The arguments the constructor takes positionally, in order;
      by default the factory's then `name` (a catalog declaration reads its
      native class's order: Ftrl's `name` comes before its last two).
  """
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  import tf_keras  # pylint: disable=import-outside-toplevel

  class_name = name or camel_case(factory.__name__)
  host_arguments = _fused.host_base_arguments(factory,
                                              _fused.LEGACY_BASE_ARGUMENTS)
  own_defaults = _fused.factory_arguments(factory, host_arguments)
  default_rate = _fused.learning_rate_default(factory, 0.001)
  # As OptimizerV2's classes: `name` follows the algorithm's arguments.
  positional = list(positional) or _fused.positional_names(factory) + ["name"]
  renamed = native_names or {}
  # The port's name of each native OptimizerV2 hyperparameter.
  hyper_names = {renamed.get(h, h): h for h in hyperparameters}

  class BridgedOptimizer(*mixins, tf_keras.optimizers.legacy.Optimizer):
    """Set per class below."""
    _fused_class = True  # A bridged class (checked when deserializing).
    port = staticmethod(factory)  # The transform factory it runs.

    def __init__(self, *args, skip_nonfinite=False, gradient_aggregator=None,
                 gradient_transformers=None, **kwargs):
      kwargs = _fused.deserialized_arguments(
          _fused.with_argument_names(
              class_name,
              _fused.bind_positional(class_name, positional, args, kwargs),
              renamed),
          tf_keras.saving.get_registered_object)
      name = kwargs.pop("name", class_name)
      _fused.check_arguments(class_name, kwargs, factory, own_defaults,
                             host_arguments, "OptimizerV2")
      if "optimizer" in kwargs:  # TF Addons' wrappers.
        kwargs["optimizer"] = _fused.inner_optimizer(
            kwargs["optimizer"], importlib.import_module("tf_bridge.legacy"),
            lambda name: tf_keras.optimizers.get(name, use_legacy_optimizer=True))
      inner = [v for v in kwargs.values() if _fused.is_bridged(v)]
      learning_rate = kwargs.pop(
          "learning_rate", _learning_rate_of(inner[0]) if inner
          else default_rate)
      base = {k: kwargs.pop(k) for k in host_arguments if k in kwargs}
      super().__init__(name, gradient_aggregator=gradient_aggregator,
                       gradient_transformers=gradient_transformers, **base)
      self._set_hyper("learning_rate", base.get("lr", learning_rate))
      if "decay" in host_arguments:  # Not TF1 RMSProp's own `decay`.
        self._set_hyper("decay", self._initial_decay)
      self._arguments = {**own_defaults, **kwargs}
      self._skip_nonfinite = bool(skip_nonfinite)
      self._fused = _fused.FusedTransform(factory, {**self._arguments, **base},
                                          host_arguments,
                                          jaxopt_port.legacy_transform,
                                          self._skip_nonfinite)
      rate = base.get("lr", learning_rate)
      # Bad arguments fail here (a schedule as the port's schedules would).
      self._fused.transform(
          rate if isinstance(rate, float)
          else optax.constant_schedule(0.001) if _fused.is_schedule(rate)
          else 0.001)
      # Native's OptimizerV2 hyperparameters are OptimizerV2's here too
      # (variables once built, checkpointed, assigned by `optimizer.beta_1 =
      # 0.5`), read by the step each time it runs unless their value decided
      # the state (SGD's momentum of 0: native then ignores it too).
      for own, hyper in hyper_names.items():
        if own in self._arguments:
          if hyper not in unread_hyperparameters:
            self._fused.feed(own, functools.partial(self._get_hyper, hyper))
          super()._set_hyper(hyper, self._arguments[own])
      self._variables_built_for = None
      self._state_variables, self._state_identities = [], []

    def _native_hyper(self, name):
      """The OptimizerV2 hyperparameter `name` (either name) stands for,
      once it is one; else None."""
      hyper = hyper_names.get(renamed.get(name, name), name)
      return hyper if hyper in self.__dict__.get("_hyper", {}) else None

    def __getattr__(self, name):
      # After OptimizerV2's own lookup (attributes, then `_hyper`).
      arguments = self.__dict__.get("_arguments", {})
      if self._native_hyper(name):
        return self._get_hyper(name)
      if renamed.get(name, name) in arguments:
        return arguments[renamed.get(name, name)]
      raise AttributeError(
          f"{type(self).__name__!r} object has no attribute {name!r}")

    def __setattr__(self, name, value):
      arguments = self.__dict__.get("_arguments")
      hyper = self._native_hyper(name)
      if hyper:
        super()._set_hyper(hyper, value)
        return
      name = renamed.get(name, name)
      if (arguments is not None and name in arguments
          and not _fused.is_bridged(value)):
        self._fused.set_argument(name, value)
        arguments[name] = value
        return
      super().__setattr__(name, value)

    def _get_hyper(self, name, dtype=None):
      hyper = self._native_hyper(name)
      if hyper:
        return super()._get_hyper(hyper, dtype)
      name = renamed.get(name, name)
      if name not in self._arguments:
        return super()._get_hyper(name, dtype)
      value = self._arguments[name]
      if name in self._fused.runtime_names:  # As OptimizerV2's: evaluated.
        value = _fused.runtime_value(value, self.iterations)
      return value if dtype is None else tf.cast(value, dtype)

    def _set_hyper(self, name, value):
      hyper = self._native_hyper(name)
      if (not hyper
          and renamed.get(name, name) in self.__dict__.get("_arguments", {})):
        setattr(self, name, value)
      else:
        super()._set_hyper(hyper or name, value)

    def apply_gradients(self, grads_and_vars, *args, **kwargs):
      grads_and_vars = list(grads_and_vars)
      grads_and_vars = list(zip(
          _fused.tensor_slices([g for g, _ in grads_and_vars]),
          [v for _, v in grads_and_vars]))
      with _fused.check_gradients(class_name, [g for g, _ in grads_and_vars],
                                  [v for _, v in grads_and_vars]):
        return super().apply_gradients(grads_and_vars, *args, **kwargs)

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
          _fused.unique_keys([v.name for v in var_list]), var_list)
      identities = [(leaf.name, None if leaf.slot_of is None
                     else var_list[leaf.slot_of].ref()) for leaf in leaves]
      kept = dict(zip(self._state_identities, self._state_variables))
      initial = dict(zip(
          [i for i, leaf in enumerate(leaves) if leaf.from_params],
          self._fused.initial_values_from([_initialized_value(v)
                                           for v in var_list])
          if any(leaf.from_params for leaf in leaves) else []))
      created = {}
      for index in _fused.creation_order(leaves, slots_by_variable,
                                         shared_first=True):
        leaf = leaves[index]
        if identities[index] in kept:
          created[index] = kept[identities[index]]
          continue
        # As TF Addons' `add_slot(var, name, var.read_value())`.
        value = initial.get(index, leaf.value)
        if leaf.is_slot_of(var_list):
          variable = self.add_slot(var_list[leaf.slot_of], leaf.name,
                                   initializer=value)
        else:
          # Named as native names its own weights (`momentum_cache`).
          prefix = "" if leaf.slot_of is None else (
              self._fused.keys[leaf.slot_of].replace(":", "_")
              .replace("/", "_")
              + "_")
          variable = self.add_weight(
              prefix + leaf.name, shape=leaf.value.shape,
              dtype=tf.as_dtype(leaf.value.dtype),
              initializer=(lambda shape, dtype, value=value: value),
              trainable=False)
          self._weights.append(variable)  # As OptimizerV2 lists `iter`.
        created[index] = variable
      self._state_variables = [created[i] for i in sorted(created)]
      self._state_identities = [identities[i] for i in sorted(created)]

    def _distributed_apply(self, distribution, grads_and_vars, apply_state,
                           name):
      del apply_state, name
      variables = self._variables_built_for
      positions = {v.ref(): g for g, v in grads_and_vars}
      _fused.check_built_for(class_name, variables,
                             [v for _, v in grads_and_vars],
                             key=lambda v: v.ref())
      grads = [positions.get(v.ref()) for v in variables]
      update = _fused.apply_fused(
          self._fused, distribution, variables, grads, self._state_variables,
          self._decayed_lr(tf.float32), self.iterations)
      # As OptimizerV2: a variable's constraint after its update.
      constrained = [v for v, g in zip(variables, grads)
                     if g is not None and getattr(v, "constraint", None)]
      if constrained:
        with tf.control_dependencies([update]):
          update = tf.group([distribution.extended.update(
              v, lambda v: v.assign(v.constraint(v)), group=True)
                             for v in constrained])
      # As OptimizerV2: an op in graphs (LossScaleOptimizer's tf.cond pairs it
      # with a no-op), the new count when eager.
      if tf.executing_eagerly():
        return self.iterations.assign_add(1)
      with tf.control_dependencies([update]):
        return self.iterations.assign_add(1, read_value=False)

    def _built_variables(self):
      return self._variables_built_for

    def get_config(self):
      config = super().get_config()
      config.update({
          "learning_rate": self._serialize_hyperparameter("learning_rate"),
          "decay": self._initial_decay,
          **_fused.serialized_arguments(
              {k: v for k, v in self._arguments.items()
               if hyper_names.get(k) not in self._hyper}, factory),
          **{hyper: self._serialize_hyperparameter(hyper)
             for hyper in hyperparameters if hyper in self._hyper}})
      if self._skip_nonfinite:
        config["skip_nonfinite"] = True
      return config

  if _decoupled.is_decoupled(factory):
    # Above the bridged class: its `apply_gradients` takes `decay_var_list`
    # away, its `_distributed_apply` runs before the fused step.
    BridgedOptimizer = type(class_name, (_decoupled.DecoupledWeightDecay,
                                         BridgedOptimizer), {})
  BridgedOptimizer.__name__ = BridgedOptimizer.__qualname__ = class_name
  BridgedOptimizer.__module__ = module
  BridgedOptimizer.__signature__ = _fused.legacy_class_signature(
      factory, class_name, host_arguments, positional)
  BridgedOptimizer.__doc__ = (
      f"OptimizerV2 running `{factory.__module__}.{factory.__name__}` in one "
      "XLA call per step (see `tf_bridge.legacy.keras_optimizer`).\n\n"
      + (inspect.getdoc(factory) or ""))
  return tf_keras.saving.register_keras_serializable(
      package=module, name=class_name)(BridgedOptimizer)


def _initialized_value(variable: Any) -> Any:
  """The variable's value; in a TF1 graph, its initial value until it is
  initialized (`global_variables_initializer` runs in no set order)."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  if tf.executing_eagerly():
    return variable.read_value()
  return tf.cond(tf.compat.v1.is_variable_initialized(variable),
                 variable.read_value, lambda: variable.initial_value)


def _learning_rate_of(optimizer: Any) -> Any:
  """An OptimizerV2's learning rate: its schedule, or its value."""
  import tf_keras  # pylint: disable=import-outside-toplevel
  rate = optimizer._hyper["learning_rate"]  # pylint: disable=protected-access
  if isinstance(rate, tf_keras.optimizers.schedules.LearningRateSchedule):
    return rate
  return float(rate)


_CLASSES = _fused.declared_classes(keras_optimizer, catalog.legacy_hosted(),
                                     __name__)
globals().update(_CLASSES)
__all__ = ["keras_optimizer", *_CLASSES]


def __getattr__(name: str):
  """`tf_bridge.legacy.tf1` and `.addons` import on first use."""
  if name in ("tf1", "addons"):
    import importlib  # pylint: disable=import-outside-toplevel
    return importlib.import_module(f"tf_bridge.legacy.{name}")
  raise AttributeError(f"module 'tf_bridge.legacy' has no attribute {name!r}")
