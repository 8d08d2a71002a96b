"""`tf_bridge.adopt`: a user's TensorFlow optimizer class as a Keras 3 one
(and `adopted`, what `tf_bridge.legacy.adopt` and `tf_bridge.tf_keras.adopt`
share with it on their hosts).

The class's port (`tf_bridge.port`) becomes the factory of a bridged class
(the host's `keras_optimizer`): its constructor takes the class's own
arguments, its slots are the class's slots by name, and the host's learning
rate (a float, a variable callbacks set, a schedule) is fed to every step in
place of the class's `learning_rate` variable. The constructor argument the
class takes its rate by (`learning_rate`, or another: the `lr` of 2019's
`_set_hyper("learning_rate", lr)`) is the host's learning rate.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import io
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
import optax
import tensorflow as tf

from jaxopt_port import _row_sparse
from tf_bridge import _arguments, _bridge, _hosts, _port


def _generation_base_arguments(cls: type) -> tuple[str, ...]:
  """The base arguments `cls`'s own generation takes and applies (those a
  host of the same name applies in its place)."""
  host = next((host for base, host in _hosts._bases()  # pylint: disable=protected-access
               if issubclass(cls, base)), None)
  if host is _hosts.OPTIMIZER_V2:
    return _arguments.LEGACY_BASE_ARGUMENTS
  if host is _hosts.TF_KERAS:
    from tf_bridge.tf_keras._optimizer import BASE_ARGUMENTS  # pylint: disable=import-outside-toplevel
    return BASE_ARGUMENTS
  if host is _hosts.KERAS3:
    return _arguments.KERAS_BASE_ARGUMENTS
  return ()  # TF1's base takes none of them.


def _claimed_base_arguments(cls: type, host_arguments: tuple[str, ...]
                            ) -> tuple[str, ...]:
  """The host's base arguments `cls` declares itself though its own base
  takes none of that name: the class's own (AdaBelief's `weight_decay`,
  added to its step and scaled by its warmed-up rate, is no Keras 3 decay;
  TF1 RMSProp's `decay` is no OptimizerV2 rate decay); and the argument it
  takes its rate by, where that is a base argument's name (OptimizerV2's
  `lr`, declared by the class: the host's learning rate then)."""
  own_base = set(_generation_base_arguments(cls))
  declared = inspect.signature(cls.__init__).parameters
  rate = rate_argument(cls)
  return tuple(name for name in host_arguments
               if name in declared and (name not in own_base or name == rate))


def _declared_parameters(cls: type) -> dict[str, inspect.Parameter]:
  """The arguments `cls`'s constructor takes by name, less `self`."""
  parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
  return {p.name: p for p in parameters
          if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


@functools.cache
def rate_argument(cls: type) -> str:
  """The constructor argument `cls` takes its learning rate by:
  `learning_rate` where it declares one; else the argument its constructor
  keeps as its rate (an OptimizerV2 class's `_set_hyper("learning_rate",
  lr)`, a tf_keras 2.11+ or Keras 3 class's `learning_rate`): the one whose
  default is the rate of `cls()` and whose other value gives that rate; for
  a TF1 class, which keeps its rate where it likes, one named `lr`.
  "learning_rate" where none is found (the class steps at its own rate)."""
  parameters = _declared_parameters(cls)
  if "learning_rate" in parameters:
    return "learning_rate"
  if issubclass(cls, tf.compat.v1.train.Optimizer):
    return "lr" if "lr" in parameters else "learning_rate"
  rate = _rate_of(cls, {})
  for name, parameter in parameters.items():
    other = _probe_value(parameter.default)
    if rate is None or other is None or not _same(parameter.default, rate):
      continue
    found = _rate_of(cls, {name: other})
    if found is not None and _same(found, other):
      return name
  return "learning_rate"


def _probe_value(default: Any) -> float | None:
  """Another value than a numeric argument's `default`, to build the class
  with and see where it keeps it; None for a default that is no number."""
  if not _is_number(default) or isinstance(default, bool):
    return None
  return 2 * default + 0.01


def _same(kept: float, given: float) -> bool:
  """Whether a value the class keeps is the one it was given."""
  return bool(np.isclose(kept, given, rtol=1e-6, atol=0))


def _probe_built(cls: type, arguments: dict[str, Any]) -> Any:
  """`cls(**arguments)`, built to read what it keeps; what its constructor
  prints (AdaBelief's change log) is not shown."""
  with contextlib.redirect_stdout(io.StringIO()):
    return cls(**arguments)


def _rate_of(cls: type, arguments: dict[str, Any]) -> float | None:
  """The learning rate `cls(**arguments)` keeps, as a number (OptimizerV2:
  its `learning_rate` hyperparameter); None where it keeps none, or none
  that is a number, or cannot be built so."""
  try:
    optimizer = _probe_built(cls, arguments)
    hyper = getattr(optimizer, "_hyper", None)
    rate = (hyper.get("learning_rate") if isinstance(hyper, dict)
            else optimizer.learning_rate)
    return float(rate)
  except Exception:  # pylint: disable=broad-exception-caught
    return None


def _own_parameters(cls: type, host_arguments: tuple[str, ...]
                    ) -> list[inspect.Parameter]:
  """The class's constructor arguments, less `self`, `*args`/`**kwargs`,
  `name` and the host's base arguments (the bridged class's base takes
  those) but those the class claims (`_claimed_base_arguments`)."""
  taken = {"name", *host_arguments} - set(
      _claimed_base_arguments(cls, host_arguments))
  own = [p for p in _declared_parameters(cls).values() if p.name not in taken]
  rate = rate_argument(cls)
  missing = [p.name for p in own if p.default is p.empty and p.name != rate]
  if missing:
    raise TypeError(
        f"tf_bridge.adopt needs a default for each of {cls.__name__}'s "
        f"constructor arguments (a Keras class is built from its config); "
        f"{', '.join(missing)} has none.")
  return own


def constructor_arguments(cls: type) -> tuple[list[str], list[str]]:
  """The keyword arguments `cls`'s constructor takes (not `name`): its own,
  and those of its generation's base it takes through `**kwargs` (an
  OptimizerV2 class's `decay`)."""
  parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
  own = [p.name for p in parameters if p.name != "name" and p.kind in (
      p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
  through_kwargs = any(p.kind == p.VAR_KEYWORD for p in parameters)
  return own, [name for name in _generation_base_arguments(cls)
               if through_kwargs and name not in own]


def adopted_arguments(cls: type, host: type) -> list[str]:
  """The keyword arguments `cls`'s adoption on `host` takes (not `name`):
  the class's own, then the host's base arguments but those it claims."""
  host_arguments = tuple(host._base_arguments)  # pylint: disable=protected-access
  own = [p.name for p in _own_parameters(cls, host_arguments)]
  return own + [name for name in host_arguments if name not in own]


def _fed(transform: optax.GradientTransformationExtraArgs,
          values: dict[str, Any]) -> optax.GradientTransformationExtraArgs:
  """`transform` with the class's variables named in `values` (its
  `learning_rate`, its hyperparameters) fed from them at every step, not
  kept in the state: the Keras class's own rate and attributes decide."""

  def without(state):
    return state._replace(variables={
        k: v for k, v in state.variables.items() if k not in values})

  def init_fn(params):
    return without(transform.init(params))

  def update_fn(updates, state, params=None, **extra_args):
    kept = jax.eval_shape(transform.init, params).variables
    full = dict(state.variables)
    for name, value in values.items():
      if name in kept:
        full[name] = jnp.asarray(value, kept[name].dtype)
    updates, state = transform.update(
        updates, state._replace(variables=full), params, **extra_args)
    return updates, without(state)

  # Sparse gradients reach the port as they reach this.
  return _row_sparse.declare_sparse_mode(
      optax.GradientTransformationExtraArgs(init_fn, update_fn),
      _row_sparse.sparse_mode(transform))


def kept_hyperparameters(cls: type) -> tuple[str, ...]:
  """The hyperparameters an OptimizerV2 class keeps of its constructor
  arguments (`_set_hyper`: variables its step reads), but the learning
  rate and `decay` (OptimizerV2's own): those named as their argument (an
  instance built with the defaults says which), then those named otherwise
  (`renamed_hyperparameters`)."""
  if _generation_base_arguments(cls) != _arguments.LEGACY_BASE_ARGUMENTS:
    return ()
  own = _legacy_own_parameters(cls)
  hypers = cls(**_required_rate(cls))._hyper  # pylint: disable=protected-access
  return (*(name for name in hypers
            if name in own and name not in ("learning_rate", "decay")),
          *renamed_hyperparameters(cls).values())


def _legacy_own_parameters(cls: type) -> dict[str, inspect.Parameter]:
  return {p.name: p for p in _own_parameters(
      cls, _arguments.LEGACY_BASE_ARGUMENTS)}


def _required_rate(cls: type) -> dict[str, float]:
  """The rate an OptimizerV2 class is built with where its rate's argument
  has no default."""
  rate = _legacy_own_parameters(cls).get(rate_argument(cls))
  return ({rate.name: 0.001} if rate is not None
          and rate.default is inspect.Parameter.empty else {})


def _hyperparameters_of(cls: type, arguments: dict[str, Any]
                        ) -> dict[str, float] | None:
  """The hyperparameters `cls(**arguments)` keeps (OptimizerV2's
  `_hyper`), those that are numbers; None if it cannot be built so."""
  try:
    hypers = _probe_built(cls, arguments)._hyper  # pylint: disable=protected-access
  except Exception:  # pylint: disable=broad-exception-caught
    return None
  return {name: float(value) for name, value in hypers.items()
          if _is_number(value)}


@functools.cache
def renamed_hyperparameters(cls: type) -> dict[str, str]:
  """By constructor argument, the hyperparameter an OptimizerV2 class keeps
  its value as under another name (`{"beta": "momentum"}` for
  `self._set_hyper("momentum", beta)`), but the learning rate
  (`rate_argument`) and `decay`: building the class with another value of
  each argument says which hyperparameter takes it."""
  if _generation_base_arguments(cls) != _arguments.LEGACY_BASE_ARGUMENTS:
    return {}
  own, required = _legacy_own_parameters(cls), _required_rate(cls)
  built = _hyperparameters_of(cls, required)
  if built is None:
    return {}
  renamed = {}
  for name, parameter in own.items():
    other = _probe_value(parameter.default)
    if name in built or name == rate_argument(cls) or other is None:
      continue
    changed = _hyperparameters_of(cls, {**required, name: other}) or {}
    taken = [hyper for hyper, value in changed.items()
             if hyper not in ("learning_rate", "decay", *own)
             and _same(value, other)
             and not _same(built.get(hyper, np.nan), other)]
    if len(taken) == 1:
      renamed[name] = taken[0]
  return renamed


def _ported_factory(cls: type, host_arguments: tuple[str, ...]
                    ) -> Callable[..., optax.GradientTransformationExtraArgs]:
  """The transform factory of `cls`'s port: its signature is the class's
  own arguments on a host taking `host_arguments`. `factory.bound(
  constructed)` is one whose class is built with `constructed`'s values of
  the arguments the host feeds at each step (as arrays: OptimizerV2's
  hyperparameter variables), as the class itself is built with the
  constructor's values and reads its variables at each step. The argument
  the class takes its rate by is the factory's `learning_rate`, where it
  stands among the class's arguments: the host feeds its rate there."""
  rate = rate_argument(cls)
  parameters = [p.replace(name="learning_rate") if p.name == rate else p
                for p in _own_parameters(cls, host_arguments)]
  # Built here, not in a step being traced.
  variable_names = renamed_hyperparameters(cls)
  tf1 = issubclass(cls, tf.compat.v1.train.Optimizer)
  rate_default = next((p.default for p in parameters
                       if p.name == "learning_rate"), 0.001)
  if rate_default is inspect.Parameter.empty:
    rate_default = 0.001
  ports: dict[str, optax.GradientTransformationExtraArgs] = {}

  def ported(arguments, constructed):
    learning_rate = arguments.pop("learning_rate", None)
    runtime = {k: v for k, v in arguments.items()
               if isinstance(v, (np.ndarray, jax.Array))}
    built = {**arguments, **{k: constructed[k] for k in runtime
                             if k in constructed}}
    # One port (one conversion per variable list) per set of arguments: the
    # bridge calls the factory again for each step it traces.
    key = repr(sorted(built.items()))
    if key not in ports:
      if tf1:
        # TF1 keeps its rate as given: a variable makes it one the step
        # reads, so the host's rate can be fed to it.
        built[rate] = tf.Variable(
            learning_rate if _is_number(learning_rate) else rate_default,
            dtype=tf.float32, name="learning_rate")
      ports[key] = _port.port(cls(**built))
    # To the class's variables, named as its hyperparameters.
    fed = {variable_names.get(k, k): v for k, v in arguments.items()
           if _is_number(v) or k in runtime}
    if learning_rate is not None:
      fed["learning_rate"] = learning_rate
    return _fed(ports[key], fed)

  def described(factory):
    factory.__name__ = cls.__name__
    factory.__qualname__ = cls.__qualname__
    factory.__module__ = cls.__module__
    factory.__doc__ = cls.__doc__
    factory.__signature__ = inspect.Signature(parameters)
    factory.claimed_base_arguments = _claimed_base_arguments(cls,
                                                             host_arguments)
    return factory

  def bound(constructed):
    return described(lambda **arguments: ported(arguments, constructed))

  factory = described(lambda **arguments: ported(arguments, {}))
  factory.bound = bound
  return factory


def adopted(cls: type, host: type, keras_optimizer: Callable[..., type],
            **options: Any) -> type:
  """`cls` adopted on `host` (a bridged base: `Keras3Optimizer`,
  `LegacyOptimizer`, `TfKerasOptimizer`) by its `keras_optimizer`,
  registered under `cls.__module__` in the host's registry. A name there
  that is not this host's adoption of `cls` (the class itself, registered
  by its user; its adoption on the other tf_keras host) is refused: models
  saved with it would load as another class. `cls` adopted on `host`
  already gives that adoption again (the class a module holds, which its
  saved models load as, stays the registered one). `options` go to
  `keras_optimizer`."""
  registered_name = f"{cls.__module__}>{cls.__name__}"
  holder = host._registered_class(registered_name)  # pylint: disable=protected-access
  if holder is not None and not _is_adoption(holder, cls, host):
    raise ValueError(
        f"{registered_name!r} is the registered name of "
        f"{_described(holder)}; adopting {cls.__name__} on "
        f"{host.__name__} would register another class under it, and "
        "models saved with that one would load as this one. Adopt a class "
        "on one tf_keras host per process (tf_bridge.legacy.adopt or "
        "tf_bridge.tf_keras.adopt), and register your own class under "
        "another name than its module's.")
  if holder is not None and holder.adopted_class is cls:
    return holder
  rate = rate_argument(cls)
  if rate != "learning_rate":
    # The constructor takes the class's name of the rate (and the host's).
    options["native_names"] = {**options.get("native_names", {}),
                               rate: "learning_rate"}
  adoption = keras_optimizer(
      _ported_factory(cls, tuple(host._base_arguments)),  # pylint: disable=protected-access
      cls.__name__, module=cls.__module__, **options)
  if rate != "learning_rate":
    adoption.__signature__ = adoption.__signature__.replace(parameters=[
        p.replace(name=rate) if p.name == "learning_rate" else p
        for p in adoption.__signature__.parameters.values()])
  if issubclass(adoption, _bridge.HyperparameterAttributes):
    # The host keeps them as attributes by the constructor's names; the
    # class's users set one it keeps under another name by that one.
    for argument, hyper in renamed_hyperparameters(cls).items():
      if hyper not in host._base_arguments and not hasattr(adoption, hyper):  # pylint: disable=protected-access
        setattr(adoption, hyper, _alias_of(argument))
  adoption.adopted_class = cls
  adoption._adopted_on = host.__name__  # pylint: disable=protected-access
  return adoption


def _alias_of(argument: str) -> property:
  """An attribute that reads and sets the hyperparameter attribute
  `argument` (the next traced step uses what it sets, as `argument`'s
  own)."""
  return property(lambda self: getattr(self, argument),
                  lambda self, value: setattr(self, argument, value),
                  doc=f"`{argument}`, by the name the class keeps it under.")


def _is_adoption(holder: Any, cls: type, host: type) -> bool:
  """Whether `holder` is `host`'s adoption of `cls` (or of the same class
  defined again: a module imported again)."""
  original = getattr(holder, "adopted_class", None)
  return (isinstance(holder, type) and issubclass(holder, host)
          and original is not None
          and (original.__module__, original.__qualname__)
          == (cls.__module__, cls.__qualname__))


def _described(holder: Any) -> str:
  original = getattr(holder, "adopted_class", None)
  name = getattr(holder, "__qualname__", type(holder).__name__)
  if original is None:
    return f"{getattr(holder, '__module__', '?')}.{name}"
  return (f"the adoption of {original.__module__}.{original.__qualname__} "
          f"on {holder._adopted_on}")  # pylint: disable=protected-access


def adopt(cls: type) -> type:
  """A Keras 3 optimizer class running `cls`'s algorithm through its port
  and the fused bridge (one XLA call per step).

  `cls` is an optimizer class `tf_bridge.port` takes (OptimizerV2, TF1,
  tf_keras 2.11+, Keras 3). The class of the same name is registered with
  Keras under `cls.__module__`, so a saved model loads where `adopt(cls)`
  has run (at the import of that module, if it adopts its class itself).
  Its constructor takes `cls`'s own arguments (each with its default) and
  Keras 3's base arguments; `get_config` returns them; its slots are named
  as `cls` names them. Keras's learning rate is fed to the class's
  `learning_rate` variable at every step; a class that keeps its rate
  elsewhere (a TF1 class's Python float) steps at its own. Where `cls`
  takes its rate by another name (`lr`, which its constructor keeps by
  `_set_hyper("learning_rate", lr)`), the constructor takes Keras's rate by
  that name, in its place; the config holds it as `learning_rate`. The
  class's other arguments are attributes (`optimizer.beta = 0.5` reaches
  the next traced step), also by the name of the hyperparameter an
  OptimizerV2 class keeps one as (`optimizer.momentum` for
  `self._set_hyper("momentum", beta)`; the config holds `beta`).
  `tf_bridge.legacy.adopt` and `tf_bridge.tf_keras.adopt` adopt it on
  tf_keras's hosts.

  A sparse gradient (`tf.IndexedSlices`, an `Embedding`'s; a BCOO over
  rows on Keras's JAX backend) goes through `cls`'s own sparse hook, on
  every host. Its entries reach the hook as they come: where their number is
  known when the step is traced (whole batches, eager steps, the JAX
  backend), the class is converted for each number (eagerly, a summing
  class's numbers past a variable's fourth go summed and padded, as below);
  where it is not (a batch dimension traced as None: Keras 3's `fit` on
  arrays, a partial last batch), for a symbolic number, once. Where the
  hook cannot take a symbolic number (`jaxopt_port.UnknownEntriesError`), a
  class whose base sums repeated indices before its sparse hook gets their
  sum as an entry per row of the table, an untouched row's padding (index
  past the last row, zero values): the same gradient to the hook, at a
  dense step's cost; one that takes them as they come (its own
  `_resource_apply_sparse_duplicate_indices`, a Keras 3 class) gets the
  gradient densified, with a warning naming the cause.
  """
  from tf_bridge._keras3 import Keras3Optimizer, keras_optimizer  # pylint: disable=import-outside-toplevel
  return adopted(cls, Keras3Optimizer, keras_optimizer)


def _is_number(value: Any) -> bool:
  return isinstance(value, (int, float))
