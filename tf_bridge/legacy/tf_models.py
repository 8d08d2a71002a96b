"""TF Model Garden's optimizers (`official.modeling.optimization`) as
OptimizerV2 classes, as Model Garden ships them: `tf_bridge.legacy.tf_models.
<Name>` (`LARS`, `AdamWeightDecay`, `LAMB`) runs `jaxopt_port.tf_models.
<name>` with OptimizerV2's `lr`, `decay` and clipping around it; its
`ExponentialMovingAverage` wrapper; its learning-rate schedules (on tf_keras's
`LearningRateSchedule`); and its `OptimizerFactory`, which makes these and
the bridged tf_keras classes from an `OptimizationConfig`."""

from typing import TYPE_CHECKING, Any, Mapping

import tensorflow as _tf
import tf_keras as _tf_keras

from jaxopt_port import tf_models as _ports
from tf_bridge import _tf_models
from tf_bridge import tf_keras as _new
from tf_bridge._averaging import GardenMovingAverage
from tf_bridge._native_methods import LambNameMethods
from tf_bridge.legacy import optimizers as _legacy
from tf_bridge.legacy._optimizer import LegacyOptimizer
from tf_bridge.legacy._wrapper import LegacyWrapper

# Catalog classes, written by `python -m tf_bridge.catalog` from CATALOG.


class AdamWeightDecay(LegacyOptimizer,
                      algorithm="tf_models.adam_weight_decay"):
  """`official.modeling.optimization.legacy_adamw.AdamWeightDecay`, bridged as
  an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-07, amsgrad=False, weight_decay_rate=0.0,
                 include_in_weight_decay=None, exclude_from_weight_decay=None,
                 gradient_clip_norm=1.0, name='AdamWeightDecay', *, lr=None,
                 decay=0.0, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, gradient_aggregator=None,
                 gradient_transformers=None, skip_nonfinite=False) -> None: ...


class LARS(LegacyOptimizer, algorithm="tf_models.lars"):
  """`official.modeling.optimization.lars.LARS`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.01, momentum=0.9, weight_decay_rate=0.0,
                 eeta=0.001, nesterov=False, classic_momentum=True,
                 exclude_from_weight_decay=None,
                 exclude_from_layer_adaptation=None, name='LARS', *, lr=None,
                 decay=0.0, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, gradient_aggregator=None,
                 gradient_transformers=None, skip_nonfinite=False) -> None: ...


class LAMB(LambNameMethods, LegacyOptimizer, algorithm="tf_models.lamb"):
  """`official.modeling.optimization.lamb.LAMB`, bridged as an OptimizerV2."""
  if TYPE_CHECKING:  # The constructor, for static analysis.
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-06, weight_decay_rate=0.0,
                 exclude_from_weight_decay=None,
                 exclude_from_layer_adaptation=None, name='LAMB', *, lr=None,
                 decay=0.0, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, gradient_aggregator=None,
                 gradient_transformers=None, skip_nonfinite=False) -> None: ...


__all__ = ["AdamWeightDecay", "LARS", "LAMB"]
# End of catalog classes.


def _model_garden_base() -> tuple[type, ...]:
  """Where Model Garden is installed, a subclass of its
  `ExponentialMovingAverage` that runs none of its code (each attribute it
  has of its own and OptimizerV2 has too is OptimizerV2's), so that the
  bridged class passes `isinstance(optimizer, optimization.
  ExponentialMovingAverage)`, which Model Garden's trainer checks before it
  makes the averages, swaps them in for evaluation and writes
  `ema_checkpoints/`. Its class is no ABC: the twin must derive from it."""
  try:
    from official.modeling.optimization import ema_optimizer  # pylint: disable=import-outside-toplevel
  except ImportError:
    return ()
  original = ema_optimizer.ExponentialMovingAverage
  base = _tf_keras.optimizers.legacy.Optimizer

  def on_base(name):
    return next(vars(cls)[name] for cls in base.__mro__ if name in vars(cls))

  return (type("ModelGardenExponentialMovingAverage", (original,), {
      name: on_base(name) for name in vars(original)
      if name not in ("__module__", "__qualname__", "__doc__")
      and hasattr(base, name)}),)


class ExponentialMovingAverage(LegacyWrapper, GardenMovingAverage,
                               LegacyOptimizer, *_model_garden_base(),
                               port=_ports.exponential_moving_average):
  """Model Garden's `ExponentialMovingAverage` wrapper
  (`official.modeling.optimization.ema_optimizer`), around a bridged
  OptimizerV2: one XLA call runs the inner step and the average. Where
  Model Garden is installed, an instance of its class too (its trainer's
  `isinstance` checks pass), running none of its code.

  As Model Garden's: the inner optimizer is the checkpoint dependency
  `ema_base_optimizer` and owns the step count (`iterations`, made in its
  name scope: `Adam/iter`); `variables()` lists the averages then that
  count, `weights` (what `get_weights`, `set_weights` and `.h5` files go by)
  the inner optimizer's only.
  """
  _inner_dependency = "ema_base_optimizer"

  @property
  def iterations(self):
    inner = self._optimizer
    if inner._iterations is None:  # pylint: disable=protected-access
      with _tf.name_scope(inner._name + "/"):  # pylint: disable=protected-access
        return inner.iterations
    return inner.iterations

  @iterations.setter
  def iterations(self, variable):
    self._optimizer.iterations = variable

  def _slot_scope(self, owner):
    if owner is self:
      return super()._slot_scope(owner)
    return _tf.name_scope(owner._name + "/")  # pylint: disable=protected-access

  @property
  def weights(self):
    return self._optimizer.weights

  def variables(self):
    return self._weights + [self.iterations]


_SCHEDULES = _tf_models.schedule_classes(
    _tf_keras.optimizers.schedules, _tf, __name__,
    _tf_keras.saving.register_keras_serializable(package=__name__))
LinearWarmup = _SCHEDULES["LinearWarmup"]
PolynomialWarmUp = _SCHEDULES["PolynomialWarmUp"]
DirectPowerDecay = _SCHEDULES["DirectPowerDecay"]
PowerAndLinearDecay = _SCHEDULES["PowerAndLinearDecay"]
PowerDecayWithOffset = _SCHEDULES["PowerDecayWithOffset"]
StepCosineDecayWithOffset = _SCHEDULES["StepCosineDecayWithOffset"]
PiecewiseConstantDecayWithOffset = _SCHEDULES[
    "PiecewiseConstantDecayWithOffset"]
PolynomialDecayWithOffset = _SCHEDULES["PolynomialDecayWithOffset"]
ExponentialDecayWithOffset = _SCHEDULES["ExponentialDecayWithOffset"]
CosineDecayWithOffset = _SCHEDULES["CosineDecayWithOffset"]


def _placeholder(name: str) -> Any:
  def refuse(**kwargs: Any) -> Any:
    del kwargs
    raise NotImplementedError(
        f"Model Garden's {name!r} optimizer is a placeholder in its public "
        "release (the string \"Unimplemented\"): there is nothing to build.")
  return refuse


# Model Garden's registries, by its optimizer type names, with the bridged
# classes: the OptimizerV2 ones, tf_keras's 2.11+ ones (`tf_bridge.tf_keras`,
# Model Garden's "experimental" and `use_legacy_optimizer=False`), Model
# Garden's own.
SHARED_OPTIMIZERS = {
    "sgd_experimental": _new.SGD, "adam_experimental": _new.Adam,
    "adamw": AdamWeightDecay, "adamw_experimental": _new.AdamW,
    "lamb": LAMB, "lars": LARS, "slide": _placeholder("slide"),
    "adafactor": _placeholder("adafactor"),
    "adafactor_keras": _new.Adafactor,
}
LEGACY_OPTIMIZERS_CLS = {"sgd": _legacy.SGD, "adam": _legacy.Adam,
                         "rmsprop": _legacy.RMSprop,
                         "adagrad": _legacy.Adagrad, **SHARED_OPTIMIZERS}
NEW_OPTIMIZERS_CLS = {"sgd": _new.SGD, "adam": _new.Adam,
                      "rmsprop": _new.RMSprop, "adagrad": _new.Adagrad,
                      **SHARED_OPTIMIZERS}
LR_CLS = {
    "stepwise": PiecewiseConstantDecayWithOffset,
    "polynomial": PolynomialDecayWithOffset,
    "exponential": ExponentialDecayWithOffset,
    "cosine": CosineDecayWithOffset, "power": DirectPowerDecay,
    "power_linear": PowerAndLinearDecay,
    "power_with_offset": PowerDecayWithOffset,
    "step_cosine_with_offset": StepCosineDecayWithOffset,
}
WARMUP_CLS = {"linear": LinearWarmup, "polynomial": PolynomialWarmUp}


def register_optimizer_cls(key: str, optimizer_config_cls: Any,
                           use_legacy_optimizer: bool = True) -> None:
  """Registers an optimizer class under a type name, as Model Garden's
  `register_optimizer_cls` (a name taken raises its ValueError)."""
  registry = (LEGACY_OPTIMIZERS_CLS if use_legacy_optimizer
              else NEW_OPTIMIZERS_CLS)
  if key in registry:
    raise ValueError(
        f"{key} already registered in "
        f"{'LEGACY' if use_legacy_optimizer else 'NEW'}_OPTIMIZERS_CLS.")
  registry[key] = optimizer_config_cls


class OptimizerFactory:
  """Model Garden's `OptimizerFactory` making the bridged classes: an
  `OptimizationConfig` (Model Garden's `official.modeling.optimization.
  configs.optimization_config`, or a dict of its fields, which needs Model
  Garden installed for its defaults) gives the learning rate
  (`build_learning_rate`: a number or the schedules above) and the
  optimizer (`build_optimizer`), wrapped in `ExponentialMovingAverage` when
  the config has `ema`::

    factory = OptimizerFactory({
        "optimizer": {"type": "lars", "lars": {"momentum": 0.9}},
        "learning_rate": {"type": "cosine", "cosine": {
            "initial_learning_rate": 0.1, "decay_steps": 10000}},
        "warmup": {"type": "linear", "linear": {"warmup_steps": 500}}})
    optimizer = factory.build_optimizer(factory.build_learning_rate())

  As Model Garden's, with its errors (a missing optimizer or learning-rate
  type, `decay` or `ema` with `use_legacy_optimizer=False`, a
  `postprocessor` returning no optimizer); `build_optimizer` is not
  registered with gin.
  """

  def __init__(self, config: Any):
    if isinstance(config, Mapping):
      config = _optimization_config(config)
    self._config = config
    self._optimizer_config = config.optimizer.get()
    self._optimizer_type = config.optimizer.type
    self._use_ema = config.ema is not None
    self._ema_config = config.ema
    if self._optimizer_config is None:
      raise ValueError("Optimizer type must be specified")
    self._lr_config = config.learning_rate.get()
    self._lr_type = config.learning_rate.type
    if self._lr_type is None:
      raise ValueError("Learning rate type must be specified")
    self._warmup_config = config.warmup.get()
    self._warmup_type = config.warmup.type

  def build_learning_rate(self) -> Any:
    """The config's learning rate: its number (type "constant") or
    schedule, after its warm-up if it has one."""
    if self._lr_type == "constant":
      rate = self._lr_config.learning_rate
    else:
      rate = LR_CLS[self._lr_type](**self._lr_config.as_dict())
    if self._warmup_config:
      rate = WARMUP_CLS[self._warmup_type](rate,
                                           **self._warmup_config.as_dict())
    return rate

  def build_optimizer(self, lr: Any, gradient_aggregator: Any = None,
                      gradient_transformers: Any = None,
                      postprocessor: Any = None,
                      use_legacy_optimizer: bool = True) -> Any:
    """The config's optimizer with learning rate `lr`: the bridged
    OptimizerV2 class (`use_legacy_optimizer`), else the bridged tf_keras
    2.11+ class, of its type; `gradient_aggregator` and
    `gradient_transformers` as OptimizerV2 takes them; `postprocessor` (an
    optimizer to an optimizer) last."""
    arguments = self._optimizer_config.as_dict()
    for clip in ("clipnorm", "clipvalue", "global_clipnorm"):
      if arguments[clip] is None:
        del arguments[clip]
    arguments["learning_rate"] = lr
    if gradient_aggregator is not None:
      arguments["gradient_aggregator"] = gradient_aggregator
    if gradient_transformers is not None:
      arguments["gradient_transformers"] = gradient_transformers
    if use_legacy_optimizer:
      optimizer = LEGACY_OPTIMIZERS_CLS[self._optimizer_type](**arguments)
    else:
      if "decay" in arguments:
        raise ValueError(
            "`decay` is deprecated in new Keras optimizer, please reflect the "
            "decay logic in `lr` or set `use_legacy_optimizer=True` to use "
            "the legacy optimizer.")
      optimizer = NEW_OPTIMIZERS_CLS[self._optimizer_type](**arguments)
    if self._use_ema:
      if not use_legacy_optimizer:
        raise ValueError(
            "EMA can only work with the legacy optimizer, please set "
            "`use_legacy_optimizer=True`.")
      optimizer = ExponentialMovingAverage(optimizer,
                                           **self._ema_config.as_dict())
    if postprocessor:
      optimizer = postprocessor(optimizer)
    if isinstance(optimizer, (_tf_keras.optimizers.Optimizer,
                              _tf_keras.optimizers.legacy.Optimizer)):
      return optimizer
    raise TypeError("OptimizerFactory.build_optimizer returning a "
                    f"non-optimizer object: {optimizer}")


def _optimization_config(fields: Mapping[str, Any]) -> Any:
  try:
    from official.modeling.optimization.configs import (  # pylint: disable=import-outside-toplevel
        optimization_config)
  except ImportError as error:
    raise ImportError(
        "OptimizerFactory fills a dict's missing fields with Model Garden's "
        "defaults, from official.modeling.optimization (pip install "
        "--no-deps tf-models-official gin-config), which is not installed: "
        "pass an OptimizationConfig, or install it.") from error
  return optimization_config.OptimizationConfig(fields)


__all__ += ["ExponentialMovingAverage", "LEGACY_OPTIMIZERS_CLS",
            "NEW_OPTIMIZERS_CLS", "LR_CLS", "WARMUP_CLS", "OptimizerFactory",
            "register_optimizer_cls", *_SCHEDULES]
