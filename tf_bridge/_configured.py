"""An optax factory at its hyperparameters, as a Keras host holds it.

The host (a Keras base class) sets hyperparameters as a native optimizer's
attributes are set, feeds some to every step from its own variables, and
applies its own base arguments, which the transform then must not.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Sequence

import jax
import numpy as np
import optax

import jaxopt_port
from jaxopt_port._checks import is_python_zero
from tf_bridge._arguments import (is_bridged, is_runtime, runtime_value,
                                  stand_in)
from tf_bridge._layout import unread_leaves


class ConfiguredTransform:
  """`factory(learning_rate=lr, **arguments)`, its arguments set and fed as
a Keras host sets and feeds them; the steps traced at them (`_steps`) are
dropped when they change.

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
    # Counts the changes of arguments and layout (a host's caches key on it).
    self.version = 0
    self._fed: dict[str, Callable[[], Any]] = {}

  @functools.cached_property
  def sparse_rows(self) -> str | None:
    """How the transform takes a sparse gradient (`jaxopt_port.sparse_mode`:
    "rows", "params", "touched" or "dense"; a port's "entries" or
    "summed_entries"), or None: the bridge densifies it."""
    return jaxopt_port.sparse_mode(self._algorithm(0.001))

  def argument(self, name: str) -> Any:
    """The hyperparameter's value the next traced step uses."""
    return self._arguments.get(name)

  def _changed(self) -> None:
    """Arguments or layout changed: the traced steps no longer hold."""
    self._steps.clear()
    self.version += 1

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
                 if k in self._fed or is_runtime(self._factory, k, v))

  def feed(self, name: str, read: Callable[[], Any]) -> None:
    """Feeds hyperparameter `name` to each step from `read()` (OptimizerV2's
    hyperparameter variable), if a runtime value keeps the variables its
    current value gives (SGD's momentum of 0 leaves its slot unread, which
    makes no variable: it stays a number, as native's then keeps no
    momentum either)."""
    value = self._arguments[name]
    if not is_runtime(self._factory, name, value):
      specs = {"x": jax.ShapeDtypeStruct((2,), np.float32)}
      layouts = []
      for candidate in (value, stand_in(value)):
        self._arguments[name] = candidate
        transform = self.transform(0.001)
        shapes = jax.eval_shape(transform.init, specs)
        # Only a Python 0 may leave a slot unread (`jaxopt_port`'s
        # `by_zero`): the step is traced for it alone.
        layouts.append((jax.tree.structure(shapes), is_python_zero(value)
                        and unread_leaves(transform, specs, shapes)))
      self._arguments[name] = value
      if layouts[0] != layouts[1]:
        return
    self._fed[name] = read
    self._changed()

  def rate_inputs(self, learning_rate: Any, iterations: Any) -> Any:
    """The step's `learning_rate` input: the rate, float32; with runtime
    hyperparameters, a vector of the rate and their current values."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    # A tensor, not OptimizerV2's rate variable (a cast to its own dtype
    # returns it): the compiled step must not refer to a variable.
    rate = tf.cast(tf.convert_to_tensor(learning_rate), tf.float32)
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
                         else stand_in(arguments[name]))
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

  def _update_step(self, arguments: dict[str, Any]):
    """The bare algorithm's `UpdateStep` (for a port of the host's
    generation); `learning_rate` reaches it only if it takes one (legacy
    Nadam, to refuse schedules)."""
    make = self._factory.make_update_step
    parameters = inspect.signature(make).parameters
    return make(**{k: v for k, v in arguments.items() if k in parameters})
