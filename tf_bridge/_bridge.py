"""What the bridged classes of both Keras generations share.

`BridgedOptimizer` is a mixin under `Keras3Optimizer` (`tf_bridge._keras3`)
and `LegacyOptimizer` (`tf_bridge.legacy._optimizer`). A subclass names the
transform it runs, either a catalog entry or a factory:

    class Adam(Keras3Optimizer, algorithm="adam"): ...
    class SignMomentum(Keras3Optimizer, port=sign_momentum): ...

and the class statement configures the rest: its constructor's arguments and
`inspect.signature`, its docstring, its Keras registration. An instance binds
its arguments, splits them between Keras's base class and the transform, and
keeps the transform in a `tf_bridge._fused.FusedTransform`.
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any, Callable, ClassVar, Sequence

from tf_bridge import _arguments, _fused, _serialization, catalog


class BridgedOptimizer:
  """A Keras optimizer class running one optax transform factory's update in
  one XLA call per step (a mixin; see the module docstring)."""
  _fused_class = True  # A bridged class (checked when deserializing).
  port: ClassVar[Callable[..., Any]]  # The transform factory it runs.
  # The catalog entry it was declared from, if any.
  declaration: ClassVar[catalog.Declaration | None] = None

  # Set per generation.
  _base_arguments: ClassVar[tuple[str, ...]] = ()
  _schedules: ClassVar[Any] = None  # The host's schedules module.
  _slots_by_variable: ClassVar[bool] = True
  _slot_groups: ClassVar[tuple[tuple[str, ...], ...]] = ()

  # Set per class by `__init_subclass__`.
  _host_arguments: ClassVar[list[str]]
  _own_defaults: ClassVar[dict[str, Any]]
  _default_rate: ClassVar[Any]
  _positional: ClassVar[list[str]]
  _native_names: ClassVar[dict[str, str]] = {}
  _deprecated_names: ClassVar[dict[str, tuple[type[Warning], str]]] = {}
  registered_name: ClassVar[str]

  def __init_subclass__(cls, *, algorithm: str | None = None,
                        port: Callable[..., Any] | None = None,
                        package: str | None = None,
                        native_names: dict[str, str] | None = None,
                        positional: Sequence[str] = (),
                        slots_by_variable: bool | None = None,
                        **kwargs: Any) -> None:
    """Configures a class naming a catalog `algorithm` (`"adam"`,
    `"tf1.adam"`: everything else is read from its declaration) or a
    transform factory `port` with the options of `keras_optimizer`; a
    subclass naming neither inherits its parent's configuration."""
    options = cls._generation_options(kwargs)
    super().__init_subclass__(**kwargs)
    if algorithm is not None:
      declaration = catalog.lookup(algorithm)
      cls.declaration = declaration
      port = declaration.port
      port_path = declaration.port_path
      native_names = declaration.native_names
      cls._deprecated_names = dict(declaration.deprecated_names)
      if slots_by_variable is None:
        slots_by_variable = declaration.slots_by_variable
      cls._slot_groups = declaration.slot_groups
      positional = positional or cls._native_positional(declaration)
      package = package or cls._package_of(declaration)
      options = {**cls._declared_options(declaration), **options}
    elif port is None:
      return
    else:
      port_path = f"{port.__module__}.{port.__name__}"
    cls.port = staticmethod(port)
    cls._native_names = dict(native_names or {})
    if slots_by_variable is not None:
      cls._slots_by_variable = slots_by_variable
    cls._host_arguments = _arguments.host_base_arguments(
        port, cls._base_arguments)
    cls._own_defaults = _arguments.factory_arguments(port, cls._host_arguments)
    cls._default_rate = _arguments.learning_rate_default(port, 0.001)
    cls._positional = list(positional) or cls._default_positional()
    cls._configure(**options)
    cls.__signature__ = cls._class_signature()
    own = cls.__dict__.get("__doc__")
    cls.__doc__ = "\n\n".join(
        part for part in (own and inspect.cleandoc(own),
                          f"Runs `{port_path}` in one XLA call per step.",
                          inspect.getdoc(port))
        if part)
    package = package or cls.__module__
    cls.registered_name = f"{package}>{cls.__name__}"
    holder = cls._registered_class(cls.registered_name)
    if (isinstance(holder, type) and not _is_users(holder)
        and (holder.__module__, holder.__qualname__)
        != (cls.__module__, cls.__qualname__)):
      raise ValueError(
          f"{cls.registered_name!r} is the registered name of "
          f"{holder.__module__}.{holder.__name__}; a class of yours would "
          "replace it, and models saved with it would no longer load. Give "
          "yours another name (`name=`) or module (`module=`).")
    cls._register(package)

  # Hooks each generation's base defines.
  @classmethod
  def _generation_options(cls, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Takes the generation's own class keywords out of `kwargs`."""
    del kwargs
    return {}

  @classmethod
  def _declared_options(cls, declaration: catalog.Declaration
                        ) -> dict[str, Any]:
    """The generation's class options a catalog declaration implies."""
    del declaration
    return {}

  @classmethod
  def _native_positional(cls, declaration: catalog.Declaration
                         ) -> Sequence[str]:
    """The native class's positional order, where this class is the
    declaration's own (not a host of another generation's algorithm): by
    default the installed native class's (Keras 3's, tf_keras's)."""
    return declaration.native_positional()

  @classmethod
  def _package_of(cls, declaration: catalog.Declaration) -> str:
    """The Keras registration package of the class for `declaration`."""
    raise NotImplementedError

  @classmethod
  def _default_positional(cls) -> list[str]:
    """By default as Keras 3's and tf_keras's own classes take them: the
    factory's, then the base arguments in the host's order, then `name`
    (`Adam(0.001, 0.9, 0.999, 1e-7, False, 0.01)` sets weight_decay)."""
    own = _arguments.positional_names(cls.port)
    return (own + [a for a in cls._host_arguments if a not in own]
            + ["name"])

  @classmethod
  def _configure(cls, **options: Any) -> None:
    del options

  @classmethod
  def _class_signature(cls) -> inspect.Signature:
    raise NotImplementedError

  @classmethod
  def _register(cls, package: str) -> None:
    raise NotImplementedError

  @staticmethod
  def _registered_class(registered_name: str) -> Any:
    """The class the host's registry holds under `registered_name`."""
    raise NotImplementedError

  # What an instance does with its arguments.
  @classmethod
  def _bound_arguments(cls, args: tuple, kwargs: dict[str, Any],
                       registered: Callable[[str], Any]) -> dict[str, Any]:
    """The constructor's arguments by the port's names: positional ones
    bound, native names translated, a serialized inner optimizer rebuilt
    (from the host's registry `registered`), checked."""
    name = cls.__name__
    for deprecated in set(kwargs) & set(cls._deprecated_names):
      category, message = cls._deprecated_names[deprecated]
      warnings.warn(message, category, stacklevel=4)
    kwargs = _serialization.deserialized_arguments(
        _arguments.with_argument_names(
            name, _arguments.bind_positional(name, cls._positional, args,
                                             kwargs),
            cls._native_names),
        registered, cls._schedules)
    _arguments.check_arguments(
        name, {k: v for k, v in kwargs.items() if k != "name"}, cls.port,
        cls._own_defaults, cls._host_arguments, cls._unknown_arguments,
        users=_is_users(cls))
    return kwargs

  @staticmethod
  def _unknown_arguments(unknown: dict[str, Any]) -> Exception:
    """The host's native error for keyword arguments it does not take."""
    raise NotImplementedError

  @classmethod
  def _pop_learning_rate(cls, kwargs: dict[str, Any],
                           learning_rate_of: Callable[[Any], Any]) -> Any:
    """Pops and returns the learning rate: the given one, else an inner
    bridged optimizer's (TFA's wrappers; `learning_rate_of` reads it), else
    the port's default."""
    inner = [v for v in kwargs.values() if _arguments.is_bridged(v)]
    return kwargs.pop("learning_rate",
                      learning_rate_of(inner[0]) if inner
                      else cls._default_rate)

  def _start_fused(self, arguments: dict[str, Any], base: dict[str, Any],
                   host_wrapper: Callable[..., Any], skip_nonfinite: bool,
                   probe_rate: Any) -> None:
    """Keeps the port's arguments and the fused transform (`host_wrapper`:
    the host's own rules as a transform, `jaxopt_port.keras_transform` or
    `legacy_transform`), and builds the transform once with `probe_rate` so
    bad arguments fail here, as they do in Keras's constructors."""
    self._arguments = {**self._own_defaults, **arguments}
    self._skip_nonfinite = bool(skip_nonfinite)
    self._fused = _fused.FusedTransform(
        self.port, {**self._arguments, **base}, self._host_arguments,
        host_wrapper, self._skip_nonfinite)
    self._fused.transform(probe_rate)

  def _omitted_from_config(self) -> tuple[str, ...]:
    """The arguments the original class leaves out of its config (the
    catalog's `config_omits`), which the hosts of its generation leave out
    too."""
    return () if self.declaration is None else self.declaration.config_omits

  def _bridge_config(self, arguments: dict[str, Any]) -> dict[str, Any]:
    """The config entries of the port's `arguments` and `skip_nonfinite`."""
    config = _serialization.serialized_arguments(arguments, self.port,
                                                 self._schedules)
    if self._skip_nonfinite:
      config["skip_nonfinite"] = True
    return config


def _is_users(cls: type) -> bool:
  """Whether a class is a user's (`keras_optimizer(factory)` registers it
  under the factory's module), not one of this project's."""
  return cls.__module__.partition(".")[0] != "tf_bridge"


class HyperparameterAttributes:
  """Hyperparameters kept as attributes, as Keras 3's and tf_keras's 2.11+
  classes keep them (`optimizer.beta_1`): assigning one changes the next
  traced (eager: the next) step, as it does natively. (A mixin before
  `BridgedOptimizer`.)"""

  def _keep_hyperparameter_attributes(self, arguments: dict[str, Any]
                                      ) -> None:
    """Sets the port's `arguments` as attributes, except where the host
    has one of that name (TF Addons' AdamW keeps its own `weight_decay`,
    not Keras's)."""
    self._hyperparameter_attributes = tuple(
        key for key, value in arguments.items()
        if not hasattr(self, key) and not _arguments.is_bridged(value))
    for key in self._hyperparameter_attributes:
      super().__setattr__(key, arguments[key])

  def __setattr__(self, name: str, value: Any) -> None:
    if (name in self.__dict__.get("_hyperparameter_attributes", ())
        and "_fused" in self.__dict__ and not _arguments.is_bridged(value)):
      self._fused.set_argument(name, value)
      self._arguments[name] = value
    super().__setattr__(name, value)
