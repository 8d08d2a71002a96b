"""tf_keras's own optimizer generation (`tf_keras.optimizers.Optimizer`, the
default of TF 2.11-2.15 and of tf_keras programs): the bridged optimizers'
base class, `TfKerasOptimizer`.

tf_keras's base class keeps what it owns (the learning rate and its
schedules, clipping, weight decay, the moving average, the iteration count,
gradient aggregation under `tf.distribute`, serialization); the bridge
overrides `_distributed_apply_gradients_fn`, the point tf_keras reaches after
all of those, and there updates every variable with one fused XLA call
before tf_keras averages and counts the step. The slots are made as
tf_keras's classes make them (`add_variable_from_reference`, named
`m/<variable>`, in their order) and kept in the same attributes, so files
and checkpoints go either way between a native class and its twin.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from typing import Any, Callable, Sequence

import jaxopt_port
import tensorflow as tf
import tf_keras

from tf_bridge import _arguments, _checks, _layout, catalog
from tf_bridge._bridge import BridgedOptimizer, HyperparameterAttributes
from tf_bridge._keras3 import camel_case

BASE_ARGUMENTS = ("weight_decay", "clipnorm", "clipvalue", "global_clipnorm",
                  "use_ema", "ema_momentum", "ema_overwrite_frequency",
                  "jit_compile")
# tf_keras's `_process_kwargs`: the OptimizerV2 arguments it names.
_LEGACY_ONLY = ("decay", "gradient_aggregator", "gradient_transformers")


class TfKerasOptimizer(HyperparameterAttributes, BridgedOptimizer,
                       tf_keras.optimizers.Optimizer):
  """A tf_keras (2.11+ generation) optimizer running an optax transform
  factory's update: `class Adam(TfKerasOptimizer, algorithm="tf_keras.adam")`
  for a catalog entry. Its constructor takes what the native class takes
  (the factory's arguments, tf_keras's base arguments `weight_decay`,
  `clipnorm`, `clipvalue`, `global_clipnorm`, `use_ema`, `ema_momentum`,
  `ema_overwrite_frequency`, `jit_compile`, and `name`) and
  `skip_nonfinite` (see `tf_bridge.Adam`). `jit_compile` is kept as native
  keeps it: the fused step is one XLA call either way."""
  _base_arguments = BASE_ARGUMENTS
  _schedules = tf_keras.optimizers.schedules
  _slots_by_variable = True  # As tf_keras's `build` loops.
  _base_defaults: dict[str, Any] = {}

  @classmethod
  def _unknown_arguments(cls, unknown):
    # tf_keras's `_BaseOptimizer._process_kwargs`, on the first one.
    name = next(iter(unknown))
    if name in _LEGACY_ONLY:
      return ValueError(
          f"{name} is deprecated in the new TF-Keras optimizer, please "
          "check the docstring for valid arguments, or use the legacy "
          f"optimizer, e.g., tf.keras.optimizers.legacy.{cls.__name__}.")
    return TypeError(
        f"{name} is not a valid argument, kwargs should be empty  for "
        "`optimizer_experimental.Optimizer`.")

  @classmethod
  def _bound_arguments(cls, args, kwargs, registered):
    kwargs = dict(kwargs)
    kwargs.pop("is_legacy_optimizer", None)  # In native's configs.
    # An adopted class may take its rate as `lr`, its own argument.
    if "lr" not in cls._native_names:
      if kwargs.get("lr") is not None:
        # Native warns and goes on with `learning_rate`.
        tf.get_logger().warning(
            "`lr` is deprecated in TF-Keras optimizer, please use "
            "`learning_rate` or use the legacy optimizer, e.g.,"
            f"tf.keras.optimizers.legacy.{cls.__name__}.")
      kwargs.pop("lr", None)
    return super()._bound_arguments(args, kwargs, registered)

  @classmethod
  def _package_of(cls, declaration):
    if declaration.generation == catalog.TF_KERAS:
      return "tf_bridge.tf_keras"
    return "tf_bridge.tf_keras." + declaration.generation

  @classmethod
  def _configure(cls):
    # A Keras 3 port hosted here takes tf_keras's base arguments, not its
    # own (`loss_scale_factor`, `gradient_accumulation_steps`).
    others = set(getattr(cls.port, "base_arguments", ())) - set(
        cls._host_arguments)
    cls._own_defaults = {k: v for k, v in cls._own_defaults.items()
                         if k not in others}
    parameters = dict(inspect.signature(
        tf_keras.optimizers.Optimizer.__init__).parameters)
    declaration = cls.declaration
    if declaration is not None and declaration.has_native:
      parameters.update(inspect.signature(
          declaration.native_class()).parameters)
    cls._base_defaults = {argument: parameters[argument].default
                          for argument in cls._host_arguments}

  @classmethod
  def _class_signature(cls):
    """The positional arguments in native's order, then the others
    keyword-only, and `skip_nonfinite`."""
    defaults = {**cls._own_defaults, **cls._base_defaults,
                "learning_rate": cls._default_rate, "name": cls.__name__}
    required = _arguments.required_arguments(cls.port)

    def parameter(name, kind):
      default = (inspect.Parameter.empty if name in required
                 else defaults[name])
      return inspect.Parameter(name, kind, default=default)

    positional = [parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                  for name in cls._positional]
    keyword = [parameter(name, inspect.Parameter.KEYWORD_ONLY)
               for name in defaults if name not in cls._positional]
    return inspect.Signature(positional + keyword + [inspect.Parameter(
        "skip_nonfinite", inspect.Parameter.KEYWORD_ONLY, default=False)])

  @classmethod
  def _register(cls, package):
    tf_keras.saving.register_keras_serializable(package=package,
                                                name=cls.__name__)(cls)

  @staticmethod
  def _registered_class(registered_name):
    return tf_keras.saving.get_registered_object(registered_name)

  def __init__(self, *args, skip_nonfinite=False, **kwargs):
    kwargs = self._bound_arguments(args, kwargs,
                                   tf_keras.saving.get_registered_object)
    name = kwargs.pop("name", None) or type(self).__name__
    learning_rate = self._pop_learning_rate(
        kwargs, lambda inner: inner._learning_rate)  # pylint: disable=protected-access
    base = {**self._base_defaults,
            **{k: kwargs.pop(k) for k in self._host_arguments if k in kwargs}}
    super().__init__(name=name, **base)
    self._learning_rate = self._build_learning_rate(learning_rate)
    self._keep_hyperparameter_attributes({**self._own_defaults, **kwargs})
    self._start_fused(kwargs, base, jaxopt_port.tf_keras.tf_keras_transform,
                      skip_nonfinite,
                      learning_rate if isinstance(learning_rate, float)
                      else 0.001)

  def build(self, var_list):
    if getattr(self, "_built", False):
      return
    super().build(var_list)  # The index and the moving averages.
    self._built = True
    leaves = self._fused.initial_state(
        _layout.unique_keys([v.name for v in var_list]), var_list)
    from_params = [i for i, leaf in enumerate(leaves) if leaf.from_params]
    if from_params:
      initial = self._fused.initial_values_from(
          [v.read_value() for v in var_list])
    stored, held = {}, {}
    for index in _layout.creation_order(leaves, True, shared_first=False,
                                        slot_groups=self._slot_groups):
      leaf = leaves[index]
      value = (initial[from_params.index(index)] if leaf.from_params
               else tf.constant(leaf.value))
      stored[index], held[index] = self._state_variable(var_list, leaf,
                                                        value)
    # Tracked where native's are (`_keep_native_attributes`), not here.
    self._bridged_variables = self._no_dependency(list(var_list))
    self._state_variables = self._no_dependency(
        [stored[i] for i in sorted(stored)])
    self._keep_native_attributes(leaves, held, len(var_list))

  def _native_name(self, leaf):
    if self.declaration is None:
      return leaf.name
    return self.declaration.slot_names.get(leaf.name, leaf.name)

  def _state_variable(self, var_list, leaf, value):
    """A leaf's variable, as the native class makes it, and what native
    holds in its place: a slot made by `add_variable_from_reference` (one
    of `variables`), a counter of no variable as a bare `tf.Variable` (not
    one of them). Where native keeps only an int placeholder named after
    the variable (Adafactor's factored moments of a vector), the step's
    leaf is a variable of its own, untracked, and the placeholder is
    native's."""
    name = self._native_name(leaf)
    variable = None if leaf.slot_of is None else var_list[leaf.slot_of]
    placeholder = (variable is not None and self.declaration is not None
                   and leaf.name in self.declaration.factored_slots
                   and len(variable.shape) < 2)
    if variable is not None and not placeholder:
      slot = self.add_variable_from_reference(
          variable, name, shape=leaf.value.shape, initial_value=value)
      return slot, slot
    with tf.init_scope():
      own = tf.Variable(value, name=name, trainable=False)
      if not placeholder:
        return own, own
      return own, tf.Variable(
          0, name=f"{name}/{variable._shared_name}", trainable=False)  # pylint: disable=protected-access

  def _keep_native_attributes(self, leaves, held, count):
    """Each slot's variables in the attribute native keeps them in (a list
    in variable order: `_momentums`; by default `_<slot>`), a counter of
    no variable as itself (`_u_product`): checkpoints track them there."""
    attributes = ({} if self.declaration is None
                  else self.declaration.native_attributes)
    slots: dict[str, list[Any]] = {}
    for index, variable in held.items():
      leaf = leaves[index]
      attribute = attributes.get(leaf.name, "_" + leaf.name)
      if leaf.slot_of is None:
        setattr(self, attribute, variable)
      else:
        slots.setdefault(attribute, [None] * count)[leaf.slot_of] = variable
    for attribute, variables in slots.items():
      setattr(self, attribute, variables)

  def update_step(self, gradient, variable):
    """Nothing: `_distributed_apply_gradients_fn` has updated every
    variable in one fused call before tf_keras's per-variable loop."""
    del gradient, variable

  def _update_step_xla(self, gradient, variable, key):
    del gradient, variable, key

  def apply_gradients(self, grads_and_vars, name=None,
                      skip_gradients_aggregation=False, **kwargs):
    grads_and_vars = list(grads_and_vars)
    checked = contextlib.nullcontext()
    if grads_and_vars:
      grads, variables = zip(*grads_and_vars)
      grads = _checks.tensor_slices(grads)
      grads_and_vars = list(zip(grads, variables))
      checked = _checks.check_gradients(
          type(self).__name__,
          [tf.TensorSpec(v.shape, g.dtype) if self._broadcasts(g, v) else g
           for g, v in grads_and_vars], variables)
    with checked:
      return super().apply_gradients(
          grads_and_vars, name=name,
          skip_gradients_aggregation=skip_gradients_aggregation, **kwargs)

  @tf.autograph.experimental.do_not_convert
  def _broadcasts(self, grad, variable):
    """Whether `grad`, a dense gradient of another shape than `variable`'s,
    is one native's update step takes: it broadcasts where the step's
    arithmetic does (a (1,) gradient to a (1, 1) kernel, but never into
    tf_keras Adagrad's `assign_add`, nor a vector into Adafactor's factored
    moments), and the step is then the broadcast gradient's."""
    declaration = self.declaration
    # Not a tensor: None, IndexedSlices.
    if (not isinstance(grad, tf.Tensor)
        or declaration is None or not declaration.has_native
        or not (grad.shape.is_fully_defined()
                and variable.shape.is_fully_defined())
        or grad.shape == variable.shape):
      return False
    with tf.init_scope():  # The config reads the rate's value.
      # The rate never decides a shape (and a schedule would not hash).
      config = {**self.get_config(), "learning_rate": 0.001}
    return _native_step_takes(
        declaration.native_class(), tuple(sorted(config.items())),
        tuple(grad.shape), tuple(variable.shape), variable.dtype.name)

  def _distributed_apply_gradients_fn(self, distribution, grads_and_vars,
                                      **kwargs):
    aligned = [None] * len(self._bridged_variables)
    for grad, variable in grads_and_vars:
      # Under a strategy, each device broadcasts its component of the
      # per-replica gradient (`group=False` would return the components,
      # not one distributed value).
      if self._broadcasts(distribution.experimental_local_results(grad)[0],
                          variable):
        grad = distribution.extended.update(
            variable, lambda variable, grad: tf.broadcast_to(
                grad, variable.shape), args=(grad,))
      aligned[self._index_dict[self._var_key(variable)]] = grad
    # merge_call would convert it with autograph (seconds of a first step,
    # for code without Python control flow on tensors).
    tf.autograph.experimental.do_not_convert(self._fused.apply)(
        distribution, self._bridged_variables, aligned,
        self._state_variables, self.learning_rate, self.iterations)
    # tf_keras's own loop (its update step is a no-op here), moving
    # averages and count.
    return super()._distributed_apply_gradients_fn(
        distribution, grads_and_vars, **kwargs)

  def _built_variables(self):
    return self._bridged_variables

  def _build_for(self, variables):
    self.build(variables)

  def get_config(self):
    config = super().get_config()
    config["learning_rate"] = self._serialize_hyperparameter(
        self._learning_rate)
    config.update(self._bridge_config(self._arguments))
    for key in self._omitted_from_config():
      config.pop(key, None)
    return config


@functools.lru_cache(maxsize=256)
def _native_step_takes(native_class, config, grad_shape, variable_shape,
                       dtype):
  """Whether `native_class`'s update step, made from `config` (its items),
  takes a gradient of `grad_shape` for a variable of `variable_shape`:
  traced, never run, on a native instance of its own."""
  with tf.init_scope():
    native = native_class.from_config(dict(config))
    variable = tf.Variable(tf.zeros(variable_shape, dtype))
    native.build([variable])
    step = tf.function(lambda grad: native.update_step(grad, variable),
                       autograph=False)
    try:
      step.get_concrete_function(tf.TensorSpec(grad_shape, dtype))
    except (ValueError, TypeError, tf.errors.InvalidArgumentError):
      return False
  return True


def keras_optimizer(factory: Callable[..., Any], name: str | None = None, *,
                    module: str | None = None,
                    native_names: dict[str, str] | None = None,
                    positional: Sequence[str] = ()) -> type:
  """A `TfKerasOptimizer` subclass running `factory`'s transform: its
  constructor takes `learning_rate`, the factory's other arguments and
  tf_keras's base arguments (`positional`: those taken positionally, in
  order; by default the factory's, then the base's, then `name`;
  `native_names`: other names it takes for the factory's arguments).

  Args:
    factory: A function returning an optax transformation; if it takes
      `learning_rate`, tf_keras's current learning rate is fed to it every
      step.
    name: The class name; defaults to the CamelCase of `factory.__name__`.
    module: The class's module and its tf_keras registration package;
      defaults to the factory's module, as `tf_bridge.keras_optimizer`'s.
    positional: The arguments the constructor takes positionally.
  """
  _arguments.check_factory("tf_bridge.tf_keras.keras_optimizer", factory)
  module = module or _arguments.module_of(factory)
  return type(name or camel_case(factory.__name__), (TfKerasOptimizer,),
              {"__module__": module}, port=factory, package=module,
              native_names=native_names, positional=positional)
