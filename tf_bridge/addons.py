"""TensorFlow Addons' optimizers as Keras 3 optimizers.

`tf_bridge.addons.<Name>` (`AdamW`, `SGDW`, `LazyAdam`, `RectifiedAdam`,
`AdaBelief`, `Yogi`, `NovoGrad`, `COCOB`, `ConditionalGradient`,
`ProximalAdagrad`, `LAMB`) runs `jaxopt_port.addons.<name>` with TFA's
argument names and numerics (TFA's optimizers were OptimizerV2 ones, so the
port also takes `lr` and `decay`); the wrappers `MovingAverage`, `SWA`,
`Lookahead` and `MultiOptimizer` and the cyclical schedules are here too.
The OptimizerV2 classes are in `tf_bridge.legacy.addons`.
"""

from typing import TYPE_CHECKING

import keras as _keras
from jaxopt_port import addons as _ports

from tf_bridge import _cyclical
from tf_bridge._averaging import (AveragedOptimizer, MovingAverageWeights,
                                  OptimizerWrapper)
from tf_bridge._decoupled import Keras3DecoupledWeightDecay
from tf_bridge._keras3 import Keras3Optimizer
from tf_bridge._native_methods import LambNameMethods

# Catalog classes, written by `python -m tf_bridge.catalog` from CATALOG.


class AdamW(Keras3DecoupledWeightDecay,
            Keras3Optimizer,
            algorithm="addons.adamw"):
  """TF Addons' `tfa.optimizers.AdamW`, bridged as a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, weight_decay, learning_rate=0.001, beta_1=0.9,
                 beta_2=0.999, epsilon=1e-07, amsgrad=False, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None,
                 loss_scale_factor=None, gradient_accumulation_steps=None,
                 name=None, *, exclude_from_weight_decay=None, lr=None,
                 decay=0.0, skip_nonfinite=False) -> None: ...


class SGDW(Keras3DecoupledWeightDecay,
           Keras3Optimizer,
           algorithm="addons.sgdw"):
  """TF Addons' `tfa.optimizers.SGDW`, bridged as a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, weight_decay, learning_rate=0.001, momentum=0.0,
                 nesterov=False, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *,
                 exclude_from_weight_decay=None, lr=None, decay=0.0,
                 skip_nonfinite=False) -> None: ...


class LazyAdam(Keras3Optimizer, algorithm="addons.lazy_adam"):
  """TF Addons' `tfa.optimizers.LazyAdam`, bridged as a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-07, amsgrad=False, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *, lr=None,
                 decay=0.0, skip_nonfinite=False) -> None: ...


class RectifiedAdam(Keras3Optimizer, algorithm="addons.rectified_adam"):
  """TF Addons' `tfa.optimizers.RectifiedAdam`, bridged as a Keras 3
  optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-07, weight_decay=0.0, amsgrad=False,
                 sma_threshold=5.0, total_steps=0, warmup_proportion=0.1,
                 min_lr=0.0, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *, lr=None,
                 decay=0.0, skip_nonfinite=False) -> None: ...


class AdaBelief(Keras3Optimizer, algorithm="addons.adabelief"):
  """TF Addons' `tfa.optimizers.AdaBelief`, bridged as a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-14, weight_decay=0.0, amsgrad=False, rectify=True,
                 sma_threshold=5.0, total_steps=0, warmup_proportion=0.1,
                 min_lr=0.0, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *, lr=None,
                 decay=0.0, skip_nonfinite=False) -> None: ...


class Yogi(Keras3Optimizer, algorithm="addons.yogi"):
  """TF Addons' `tfa.optimizers.Yogi`, bridged as a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.01, beta1=0.9, beta2=0.999,
                 epsilon=0.001, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0,
                 initial_accumulator_value=1e-06, activation='sign',
                 weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *, lr=None,
                 decay=0.0, skip_nonfinite=False) -> None: ...


class NovoGrad(Keras3Optimizer, algorithm="addons.novograd"):
  """TF Addons' `tfa.optimizers.NovoGrad`, bridged as a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-07, weight_decay=0.0, grad_averaging=False,
                 amsgrad=False, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *, lr=None,
                 decay=0.0, skip_nonfinite=False) -> None: ...


class COCOB(Keras3Optimizer, algorithm="addons.cocob"):
  """TF Addons' `tfa.optimizers.COCOB`, bridged as a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, alpha=100.0, use_locking=False, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *,
                 learning_rate=0.0, lr=None, decay=0.0,
                 skip_nonfinite=False) -> None: ...


class ConditionalGradient(Keras3Optimizer,
                          algorithm="addons.conditional_gradient"):
  """TF Addons' `tfa.optimizers.ConditionalGradient`, bridged as a Keras 3
  optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate, lambda_=0.01, epsilon=1e-07, ord='fro',
                 weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *, lr=None,
                 decay=0.0, skip_nonfinite=False) -> None: ...


class ProximalAdagrad(Keras3Optimizer, algorithm="addons.proximal_adagrad"):
  """TF Addons' `tfa.optimizers.ProximalAdagrad`, bridged as a Keras 3
  optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, *, lr=None,
                 decay=0.0, skip_nonfinite=False) -> None: ...


class LAMB(LambNameMethods, Keras3Optimizer, algorithm="addons.lamb"):
  """TF Addons' `tfa.optimizers.LAMB`, bridged as a Keras 3 optimizer."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-06, weight_decay=0.0,
                 exclude_from_weight_decay=None,
                 exclude_from_layer_adaptation=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None,
                 loss_scale_factor=None, gradient_accumulation_steps=None,
                 name=None, *, lr=None, decay=0.0,
                 skip_nonfinite=False) -> None: ...


__all__ = ["AdamW", "SGDW", "LazyAdam", "RectifiedAdam", "AdaBelief", "Yogi",
           "NovoGrad", "COCOB", "ConditionalGradient", "ProximalAdagrad",
           "LAMB"]
# End of catalog classes.


# TFA's wrappers take an optimizer (a bridged one of this generation): not
# algorithms, so not in the catalog.
class MovingAverage(MovingAverageWeights, Keras3Optimizer,
                    port=_ports.moving_average):
  """TF Addons' `MovingAverage` wrapper, as a Keras 3 optimizer."""


class SWA(AveragedOptimizer, Keras3Optimizer, port=_ports.swa):
  """TF Addons' `SWA` (stochastic weight averaging) wrapper, as a Keras 3
  optimizer."""


class Lookahead(OptimizerWrapper, Keras3Optimizer, port=_ports.lookahead):
  """TF Addons' `Lookahead` wrapper, as a Keras 3 optimizer."""


__all__ += ["Lookahead", "MovingAverage", "SWA"]


@_keras.saving.register_keras_serializable(package="Addons")
class MultiOptimizer(_keras.optimizers.Optimizer):
  """TF Addons' `MultiOptimizer` (discriminative layer training) for Keras
  3: each optimizer updates the weights of the layers (or models) paired
  with it, matched by their paths (with or without the model's name in
  front: Keras 3 drops it when a model is loaded). Keras's base arguments
  (clipping, weight decay, ...) belong to the inner optimizers, as TFA's
  `apply_gradients` bypasses its own.

  Args:
    optimizers_and_layers: `(optimizer, layer_or_layers)` pairs of built
      layers.
    optimizer_specs: The config's form (`{"optimizer": ..., "weights":
      [paths]}`), for `from_config`.
    name: The optimizer's name.
  """

  def __init__(self, optimizers_and_layers=None, optimizer_specs=None,
               name="MultiOptimizer"):
    super().__init__(learning_rate=0.0, name=name)
    if optimizer_specs is None and optimizers_and_layers is not None:
      specs = [self.create_optimizer_spec(optimizer, layers)
               for optimizer, layers in optimizers_and_layers]
    elif optimizer_specs is not None and optimizers_and_layers is None:
      specs = [self.maybe_initialize_optimizer_spec(spec)
               for spec in optimizer_specs]
    else:
      raise RuntimeError("Must specify one of `optimizers_and_layers` or "
                         "`optimizer_specs`.")
    self.optimizer_specs = specs

  @classmethod
  def create_optimizer_spec(cls, optimizer, layers_or_model):
    """`{"optimizer": optimizer, "weights": [paths of the weights]}`."""
    layers = (layers_or_model if isinstance(layers_or_model, list)
              else [layers_or_model])
    return {"optimizer": optimizer,
            "weights": [v.path for layer in layers for v in layer.weights]}

  @classmethod
  def maybe_initialize_optimizer_spec(cls, optimizer_spec):
    """The spec with a serialized optimizer made an optimizer again (through
    Keras's registry)."""
    if isinstance(optimizer_spec["optimizer"], dict):
      optimizer_spec = {**optimizer_spec, "optimizer":
                        _keras.optimizers.deserialize(
                            optimizer_spec["optimizer"])}
    return optimizer_spec

  def _routed(self, values, variables):
    """`(values, variables)` of each inner optimizer's weights."""
    routed = [([], []) for _ in self.optimizer_specs]
    for value, variable in zip(values, variables):
      path = getattr(variable, "path", variable.name)
      for spec, (own_values, own_variables) in zip(self.optimizer_specs,
                                                   routed):
        if any(_same_weight(path, weight) for weight in spec["weights"]):
          own_values.append(value)
          own_variables.append(variable)
    return routed

  def build(self, variables):
    if self.built:
      return
    super().build(variables)
    for spec, (_, own) in zip(self.optimizer_specs,
                              self._routed(variables, variables)):
      if own:
        spec["optimizer"].build(own)

  def apply(self, grads, trainable_variables=None):
    if trainable_variables is None:
      trainable_variables = self._trainable_variables
    trainable_variables = list(trainable_variables)
    if not self.built:
      with _keras.name_scope(self.name, caller=self):
        self.build(trainable_variables)
    for spec, (own_grads, own) in zip(
        self.optimizer_specs, self._routed(list(grads), trainable_variables)):
      if own:
        spec["optimizer"].apply(own_grads, own)
    self._iterations.assign_add(1)

  def get_config(self):
    return {"name": self.name, "optimizer_specs": [
        {"optimizer": _keras.optimizers.serialize(spec["optimizer"]),
         "weights": list(spec["weights"])} for spec in self.optimizer_specs]}

  def __repr__(self):
    return (f"Multi Optimizer with {len(self.optimizer_specs)} optimizer "
            "layer pairs")


def _same_weight(path: str, weight: str) -> bool:
  """Whether two Keras 3 variable paths name one weight: equal, or equal
  but for the model's name in front (`sequential/dense/kernel` is
  `dense/kernel` once the model is loaded)."""
  return (path == weight or path.endswith("/" + weight)
          or weight.endswith("/" + path))


__all__ += ["MultiOptimizer"]


_SCHEDULE = _keras.optimizers.schedules.LearningRateSchedule
_serializable = _keras.saving.register_keras_serializable(package="Addons")


@_serializable
class CyclicalLearningRate(_cyclical.Cyclical, _SCHEDULE):
  __doc__ = _cyclical.Cyclical.__doc__
  _ops = _keras.ops


@_serializable
class TriangularCyclicalLearningRate(_cyclical.Triangular,
                                     CyclicalLearningRate):
  __doc__ = _cyclical.Triangular.__doc__


@_serializable
class Triangular2CyclicalLearningRate(_cyclical.Triangular2,
                                      CyclicalLearningRate):
  __doc__ = _cyclical.Triangular2.__doc__


@_serializable
class ExponentialCyclicalLearningRate(_cyclical.Exponential,
                                      CyclicalLearningRate):
  __doc__ = _cyclical.Exponential.__doc__


__all__ += ["CyclicalLearningRate", "TriangularCyclicalLearningRate",
            "Triangular2CyclicalLearningRate",
            "ExponentialCyclicalLearningRate"]
