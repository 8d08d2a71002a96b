"""Public methods a native class has beyond Keras's `Optimizer`, on its
bridged twin (a catalog declaration's `methods`): the port's own functions,
run in TensorFlow by jax2tf (directly on Keras's JAX backend)."""

from __future__ import annotations

import functools
from typing import Any, Callable

from jaxopt_port import _adam_weight_decay, _muon
from jaxopt_port.addons import _adam_family


def _run(function: Callable[[Any], Any], x: Any) -> Any:
  """`function` (JAX) on `x`: a TensorFlow tensor or variable (eager or in
  a graph), or a JAX array."""
  import keras  # pylint: disable=import-outside-toplevel
  if keras.backend.backend() != "tensorflow":
    return function(x)
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  from tf_bridge._compiled import to_tensorflow  # pylint: disable=import-outside-toplevel
  return to_tensorflow(function)(tf.convert_to_tensor(x))


class MuonMethods:
  """Keras 3 Muon's `transpose_last_axis`, `lr_adjust` and
  `zeropower_via_newtonschulz5`, with the hyperparameters the optimizer
  holds; "no patterns" kept as Keras keeps them."""

  def __init__(self, *args: Any, **kwargs: Any):
    super().__init__(*args, **kwargs)
    if self.exclude_layers is None:  # Keras's `exclude_layers or []`.
      self.exclude_layers = []

  def transpose_last_axis(self, x: Any) -> Any:
    """`x` with its last two axes swapped."""
    return _run(_muon.transpose_last, x)

  def lr_adjust(self, x: Any) -> Any:
    """`x * sqrt(max(n, m)) * rms_rate` for an `(n, m)` matrix (Moonlight's
    scaling, https://arxiv.org/abs/2502.16982); `x` if `rms_rate` is None."""
    return _run(functools.partial(_muon.rms_scaled, rms_rate=self.rms_rate),
                x)

  def zeropower_via_newtonschulz5(self, x: Any, steps: int) -> Any:
    """`steps` quintic Newton-Schulz iterations towards `U V^T` of `x`
    (`muon_a`, `muon_b`, `muon_c`), on its last two axes."""
    if len(x.shape) < 2:
      raise ValueError(
          "Expected gradient or momentum to have at least 2 dimensions. "
          f"Received: shape={tuple(x.shape)}")
    return _run(functools.partial(
        _muon.orthogonalize, steps=steps, a=self.muon_a, b=self.muon_b,
        c=self.muon_c), x)


class LambNameMethods:
  """TF Addons' and Model Garden's LAMB `_do_use_weight_decay` and
  `_do_layer_adaptation` (their own tests call them): whether a variable
  name decays and is adapted, as the port decides it."""

  # The port's arguments (Keras 3's `exclude_from_weight_decay` is a method).
  def _do_use_weight_decay(self, param_name: str) -> bool:
    return not _searched(self._arguments["exclude_from_weight_decay"],
                         param_name)

  def _do_layer_adaptation(self, param_name: str) -> bool:
    return not _searched(_adam_family.layer_adaptation_exclusions(
        self._arguments["exclude_from_weight_decay"],
        self._arguments["exclude_from_layer_adaptation"]), param_name)


def _searched(patterns: Any, name: str) -> bool:
  found = _adam_weight_decay.searched(patterns)
  return found is not None and found(name)
