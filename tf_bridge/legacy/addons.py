"""TensorFlow Addons' optimizers as OptimizerV2 classes, as TFA shipped them:
`tf_bridge.legacy.addons.<Name>` runs `jaxopt_port.addons.<name>` with
OptimizerV2's `lr`, `decay` and clipping around it."""

from typing import TYPE_CHECKING

import functools as _functools

import tensorflow as _tf
import tf_keras as _tf_keras
from jaxopt_port import addons as _ports

from tf_bridge import _cyclical
from tf_bridge._averaging import (AveragedOptimizer, MovingAverageWeights,
                                  OptimizerWrapper)
from tf_bridge._decoupled import LegacyDecoupledWeightDecay
from tf_bridge._native_methods import LambNameMethods
from tf_bridge.legacy._averaged_wrapper import AveragedOptimizerWrapper
from tf_bridge.legacy._decoupled_extension import (
    DecoupledWeightDecayExtension)
from tf_bridge.legacy._optimizer import LegacyOptimizer, keras_optimizer
from tf_bridge.legacy._wrapper import LegacyWrapper

# Catalog classes, written by `python -m tf_bridge.catalog` from CATALOG.


class AdamW(LegacyDecoupledWeightDecay,
            LegacyOptimizer,
            algorithm="addons.adamw"):
  """TF Addons' `tfa.optimizers.AdamW`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, weight_decay, learning_rate=0.001, beta_1=0.9,
                 beta_2=0.999, epsilon=1e-07, amsgrad=False, name='AdamW', *,
                 exclude_from_weight_decay=None, lr=None, decay=0.0,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 gradient_aggregator=None, gradient_transformers=None,
                 skip_nonfinite=False) -> None: ...


class SGDW(LegacyDecoupledWeightDecay,
           LegacyOptimizer,
           algorithm="addons.sgdw"):
  """TF Addons' `tfa.optimizers.SGDW`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, weight_decay, learning_rate=0.001, momentum=0.0,
                 nesterov=False, name='SGDW', *,
                 exclude_from_weight_decay=None, lr=None, decay=0.0,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 gradient_aggregator=None, gradient_transformers=None,
                 skip_nonfinite=False) -> None: ...


class LazyAdam(LegacyOptimizer, algorithm="addons.lazy_adam"):
  """TF Addons' `tfa.optimizers.LazyAdam`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-07, amsgrad=False, name='LazyAdam', *, lr=None,
                 decay=0.0, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, gradient_aggregator=None,
                 gradient_transformers=None, skip_nonfinite=False) -> None: ...


class RectifiedAdam(LegacyOptimizer, algorithm="addons.rectified_adam"):
  """TF Addons' `tfa.optimizers.RectifiedAdam`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-07, weight_decay=0.0, amsgrad=False,
                 sma_threshold=5.0, total_steps=0, warmup_proportion=0.1,
                 min_lr=0.0, name='RectifiedAdam', *, lr=None, decay=0.0,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 gradient_aggregator=None, gradient_transformers=None,
                 skip_nonfinite=False) -> None: ...


class AdaBelief(LegacyOptimizer, algorithm="addons.adabelief"):
  """TF Addons' `tfa.optimizers.AdaBelief`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-14, weight_decay=0.0, amsgrad=False, rectify=True,
                 sma_threshold=5.0, total_steps=0, warmup_proportion=0.1,
                 min_lr=0.0, name='AdaBelief', *, lr=None, decay=0.0,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 gradient_aggregator=None, gradient_transformers=None,
                 skip_nonfinite=False) -> None: ...


class Yogi(LegacyOptimizer, algorithm="addons.yogi"):
  """TF Addons' `tfa.optimizers.Yogi`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.01, beta1=0.9, beta2=0.999,
                 epsilon=0.001, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0,
                 initial_accumulator_value=1e-06, activation='sign',
                 name='Yogi', *, lr=None, decay=0.0, clipnorm=None,
                 clipvalue=None, global_clipnorm=None,
                 gradient_aggregator=None, gradient_transformers=None,
                 skip_nonfinite=False) -> None: ...


class NovoGrad(LegacyOptimizer, algorithm="addons.novograd"):
  """TF Addons' `tfa.optimizers.NovoGrad`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-07, weight_decay=0.0, grad_averaging=False,
                 amsgrad=False, name='NovoGrad', *, lr=None, decay=0.0,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 gradient_aggregator=None, gradient_transformers=None,
                 skip_nonfinite=False) -> None: ...


class COCOB(LegacyOptimizer, algorithm="addons.cocob"):
  """TF Addons' `tfa.optimizers.COCOB`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, alpha=100.0, use_locking=False, name='COCOB', *,
                 learning_rate=0.0, lr=None, decay=0.0, clipnorm=None,
                 clipvalue=None, global_clipnorm=None,
                 gradient_aggregator=None, gradient_transformers=None,
                 skip_nonfinite=False) -> None: ...


class ConditionalGradient(LegacyOptimizer,
                          algorithm="addons.conditional_gradient"):
  """TF Addons' `tfa.optimizers.ConditionalGradient`, bridged as an
  OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate, lambda_=0.01, epsilon=1e-07, ord='fro',
                 name='ConditionalGradient', *, lr=None, decay=0.0,
                 clipnorm=None, clipvalue=None, global_clipnorm=None,
                 gradient_aggregator=None, gradient_transformers=None,
                 skip_nonfinite=False) -> None: ...


class ProximalAdagrad(LegacyOptimizer, algorithm="addons.proximal_adagrad"):
  """TF Addons' `tfa.optimizers.ProximalAdagrad`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, name='ProximalAdagrad', *,
                 lr=None, decay=0.0, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, gradient_aggregator=None,
                 gradient_transformers=None, skip_nonfinite=False) -> None: ...


class LAMB(LambNameMethods, LegacyOptimizer, algorithm="addons.lamb"):
  """TF Addons' `tfa.optimizers.LAMB`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-06, weight_decay=0.0,
                 exclude_from_weight_decay=None,
                 exclude_from_layer_adaptation=None, name='LAMB', *, lr=None,
                 decay=0.0, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, gradient_aggregator=None,
                 gradient_transformers=None, skip_nonfinite=False) -> None: ...


__all__ = ["AdamW", "SGDW", "LazyAdam", "RectifiedAdam", "AdaBelief", "Yogi",
           "NovoGrad", "COCOB", "ConditionalGradient", "ProximalAdagrad",
           "LAMB"]
# End of catalog classes.


# TFA's wrappers take an optimizer (a bridged one of this generation): not
# algorithms, so not in the catalog.
class MovingAverage(LegacyWrapper, MovingAverageWeights, LegacyOptimizer,
                    port=_ports.moving_average):
  """TF Addons' `MovingAverage` wrapper."""


class SWA(LegacyWrapper, AveragedOptimizer, LegacyOptimizer, port=_ports.swa):
  """TF Addons' `SWA` (stochastic weight averaging) wrapper."""


class Lookahead(LegacyWrapper, OptimizerWrapper, LegacyOptimizer,
                port=_ports.lookahead):
  """TF Addons' `Lookahead` wrapper."""
  _inner_dependency = "lh_base_optimizer"


# `isinstance(optimizer, AveragedOptimizerWrapper)` holds for them as in TFA.
AveragedOptimizerWrapper.register(MovingAverage)
AveragedOptimizerWrapper.register(SWA)

__all__ += ["Lookahead", "MovingAverage", "SWA", "AveragedOptimizerWrapper"]


@_tf_keras.utils.register_keras_serializable(package="Addons")
class MultiOptimizer(_tf_keras.optimizers.legacy.Optimizer):
  """TF Addons' `MultiOptimizer` (discriminative layer training): each
  optimizer updates the weights of the layers (or models) paired with it,
  each in its own fused step if it is a bridged one.

  Args:
    optimizers_and_layers: `(optimizer, layer_or_layers)` pairs; the layers
      must be built (their weights are matched by name, as TFA does).
    optimizer_specs: The config's form (`{"optimizer": ..., "weights":
      [names]}`), for `from_config`.
    name: The optimizer's name.
  """

  def __init__(self, optimizers_and_layers=None, optimizer_specs=None,
               name="MultiOptimizer", **kwargs):
    super().__init__(name, **kwargs)
    if optimizer_specs is None and optimizers_and_layers is not None:
      self.optimizer_specs = [
          self.create_optimizer_spec(optimizer, layers)
          for optimizer, layers in optimizers_and_layers]
    elif optimizer_specs is not None and optimizers_and_layers is None:
      self.optimizer_specs = [self.maybe_initialize_optimizer_spec(spec)
                              for spec in optimizer_specs]
    else:
      raise RuntimeError("Must specify one of `optimizers_and_layers` or "
                         "`optimizer_specs`.")
    for index, spec in enumerate(self.optimizer_specs):
      # Checkpointed with this optimizer, as its own slots would be.
      self._track_trackable(spec["optimizer"], name=f"optimizer_{index}")

  @classmethod
  def create_optimizer_spec(cls, optimizer, layers_or_model):
    """`{"optimizer": optimizer, "weights": [names of the weights]}`."""
    layers = (layers_or_model if isinstance(layers_or_model, list)
              else [layers_or_model])
    return {"optimizer": optimizer,
            "weights": [v.name for layer in layers for v in layer.weights]}

  @classmethod
  def maybe_initialize_optimizer_spec(cls, optimizer_spec):
    """The spec with a serialized optimizer made an optimizer again (through
    tf_keras's registry)."""
    if isinstance(optimizer_spec["optimizer"], dict):
      optimizer_spec = {**optimizer_spec, "optimizer":
                        _tf_keras.optimizers.deserialize(
                            optimizer_spec["optimizer"],
                            use_legacy_optimizer=True)}
    return optimizer_spec

  def apply_gradients(self, grads_and_vars, **kwargs):
    """Each optimizer's `apply_gradients` on its weights' gradients; counts
    one step of its own."""
    routed = [[] for _ in self.optimizer_specs]
    for grad, variable in grads_and_vars:
      for spec, pairs in zip(self.optimizer_specs, routed):
        if variable.name in spec["weights"]:
          pairs.append((grad, variable))
    updates = [spec["optimizer"].apply_gradients(pairs, **kwargs)
               for spec, pairs in zip(self.optimizer_specs, routed) if pairs]
    if _tf.executing_eagerly():
      return self.iterations.assign_add(1)
    with _tf.control_dependencies([_tf.group(updates)]):
      return self.iterations.assign_add(1, read_value=False)

  def get_config(self):
    config = super().get_config()
    config["optimizer_specs"] = [
        {"optimizer": _tf_keras.optimizers.serialize(spec["optimizer"]),
         "weights": list(spec["weights"])} for spec in self.optimizer_specs]
    return config

  def __repr__(self):
    return (f"Multi Optimizer with {len(self.optimizer_specs)} optimizer "
            "layer pairs")


__all__ += ["MultiOptimizer"]


def extend_with_decoupled_weight_decay(base_optimizer: type) -> type:
  """TFA's `extend_with_decoupled_weight_decay`: an OptimizerV2 class running
  `base_optimizer`'s algorithm after TFA's decoupled weight decay. Its
  constructor takes `weight_decay` first, then the base's arguments, and
  `exclude_from_weight_decay`; `apply_gradients` and `minimize` take
  `decay_var_list`. `extend_with_decoupled_weight_decay(
  tf_keras.optimizers.legacy.Adam)` is TFA's `AdamW`.

  Args:
    base_optimizer: A bridged OptimizerV2 class or a tf_keras legacy class
      with a bridged twin in `tf_bridge.legacy`: the decay runs in the
      twin's XLA call (`jaxopt_port.addons.decoupled_weight_decay`). Any
      other OptimizerV2 class (a user's own): the decay runs in TensorFlow
      ops before its kernels (`DecoupledWeightDecayExtension`).
  """
  from tf_bridge import legacy  # pylint: disable=import-outside-toplevel
  optimizer_v2 = _tf_keras.optimizers.legacy.Optimizer
  if not (isinstance(base_optimizer, type)
          and issubclass(base_optimizer, optimizer_v2)):
    raise TypeError(
        "extend_with_decoupled_weight_decay takes an OptimizerV2 class "
        "(tf_keras.optimizers.legacy.Optimizer or a subclass). Received: "
        f"base_optimizer={base_optimizer!r}")
  name = base_optimizer.__name__
  if getattr(_tf_keras.optimizers.legacy, name, None) is base_optimizer:
    base_optimizer = getattr(legacy, name, base_optimizer)
  if getattr(base_optimizer, "_fused_class", False):
    return _with_decoupled_weight_decay(base_optimizer)
  return _extended_native(base_optimizer)


@_functools.cache
def _with_decoupled_weight_decay(bridged: type) -> type:
  return keras_optimizer(_ports.decoupled_weight_decay(bridged.port),
                         name=f"{bridged.__name__}WithDecoupledWeightDecay",
                         module=__name__)


@_functools.cache
def _extended_native(base: type) -> type:
  return type(f"{base.__name__}WithDecoupledWeightDecay",
              (DecoupledWeightDecayExtension, base),
              {"__module__": __name__,
               "__doc__": f"`{base.__name__}` after decoupled weight decay "
                          "(`DecoupledWeightDecayExtension`)."})


# TFA's names for the bases of its optimizers.
KerasLegacyOptimizer = _tf_keras.optimizers.legacy.Optimizer

__all__ += ["extend_with_decoupled_weight_decay",
            "DecoupledWeightDecayExtension", "KerasLegacyOptimizer"]


_SCHEDULE = _tf_keras.optimizers.schedules.LearningRateSchedule
# Registered as TFA registered them, so TFA's saved configs load.
_serializable = _tf_keras.utils.register_keras_serializable(package="Addons")


@_serializable
class CyclicalLearningRate(_cyclical.Cyclical, _SCHEDULE):
  __doc__ = _cyclical.Cyclical.__doc__
  _ops = _tf


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
