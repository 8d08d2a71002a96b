"""Every JAX port as a JAX user builds one: each catalog declaration with its
defaults, again with the base arguments that add state (EMA, accumulators)
or change the step (decay, clipping), with the hyperparameters that add a
slot, and the wrappers around a port.

A case is `(name, factory, kwargs)`: `factory(**kwargs)` is the transform,
and `optax.inject_hyperparams(factory)(**kwargs)` its injected twin. Used by
tests/test_jax_citizen.py and (`SHARDED_CASES`) tests/scripts/sharded.py.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

import jaxopt_port
from jaxopt_port import addons

from tf_bridge import catalog

# Keras 3's base arguments, each of which adds state or changes the step.
KERAS_BASE = {"weight_decay": 0.01, "use_ema": True,
              "ema_overwrite_frequency": 2, "gradient_accumulation_steps": 2,
              "clipnorm": 1.0}
# The ones the first set leaves out (the clipping arguments exclude each
# other in Keras 3).
KERAS_BASE_2 = {"clipvalue": 0.5, "loss_scale_factor": 2.0, "use_ema": True}
# tf_keras's 2.11+ (the clipping arguments go together there; the first
# of clipnorm, global_clipnorm, clipvalue applies).
TF_KERAS_BASE = {"weight_decay": 0.01, "use_ema": True,
                 "ema_overwrite_frequency": 2, "clipnorm": 1.0,
                 "clipvalue": 0.5}
TF_KERAS_BASE_2 = {"global_clipnorm": 1.0, "use_ema": True,
                   "jit_compile": False}
# OptimizerV2's (TF Addons' classes are OptimizerV2 ones).
LEGACY_BASE = {"decay": 0.1, "clipvalue": 0.5, "global_clipnorm": 1.0}
LEGACY_BASE_2 = {"lr": 0.02, "clipnorm": 0.5}

# Hyperparameters that add a slot.
SLOT_VARIANTS = {
    "sgd": {"momentum": 0.9, "nesterov": True},
    "rmsprop": {"momentum": 0.9, "centered": True},
    "adam": {"amsgrad": True},
    "legacy.sgd": {"momentum": 0.9},
    "legacy.rmsprop": {"momentum": 0.9, "centered": True},
    "legacy.adam": {"amsgrad": True},
    "addons.lamb": {"exclude_from_layer_adaptation": ["bias"]},
}


WRAPPERS: list[tuple[str, Callable[..., Any], dict[str, Any]]] = [
    ("skip_nonfinite(adam)", jaxopt_port.skip_nonfinite,
     {"inner": jaxopt_port.adam(0.01)}),
    ("addons.moving_average(sgd)", addons.moving_average,
     {"optimizer": jaxopt_port.sgd(0.1, momentum=0.9), "average_decay": 0.9}),
    ("addons.swa(adam)", addons.swa,
     {"optimizer": jaxopt_port.adam(0.01), "start_averaging": 1,
      "average_period": 2}),
    ("addons.lookahead(yogi)", addons.lookahead,
     {"optimizer": addons.yogi(0.01), "sync_period": 2}),
    ("multi_optimizer(adam, sgd)", jaxopt_port.multi_optimizer,
     {"default_optimizer": jaxopt_port.adam(0.01),
      "optimizer_map": {"dense/bias": jaxopt_port.sgd(0.1, momentum=0.5)}}),
    ("packed(adam)", jaxopt_port.packed, {"transform": jaxopt_port.adam(0.01)}),
    ("addons.decoupled_weight_decay(legacy.adam)",
     addons.decoupled_weight_decay(jaxopt_port.legacy.adam),
     {"weight_decay": 0.01, "learning_rate": 0.01}),
]


def cases() -> list[tuple[str, Callable[..., Any], dict[str, Any]]]:
  found = []
  for declaration in catalog.CATALOG:
    parameters = inspect.signature(declaration.port).parameters
    required = dict(declaration.required)
    found.append((declaration.name, declaration.port, required))
    if "jit_compile" in parameters:
      found.append((declaration.name + "+base", declaration.port,
                    {**required, **TF_KERAS_BASE}))
      found.append((declaration.name + "+base2", declaration.port,
                    {**required, **TF_KERAS_BASE_2}))
    elif "ema_overwrite_frequency" in parameters:
      found.append((declaration.name + "+base", declaration.port,
                    {**required, **KERAS_BASE}))
      found.append((declaration.name + "+base2", declaration.port,
                    {**required, **KERAS_BASE_2}))
    elif "global_clipnorm" in parameters:
      if declaration.name != "legacy.nadam":
        # (Legacy Nadam refuses `decay`: tf_keras overwrites it.)
        found.append((declaration.name + "+base", declaration.port,
                      {**required, **LEGACY_BASE}))
      # (Legacy Ftrl refuses `lr`: tf_keras ignores it there.)
      own = inspect.signature(declaration.port.make_update_step).parameters
      found.append((declaration.name + "+base2", declaration.port,
                    {**required, **{k: v for k, v in LEGACY_BASE_2.items()
                                    if k not in own}}))
    if declaration.name in SLOT_VARIANTS:
      found.append((declaration.name + "+slots", declaration.port,
                    {**required, **SLOT_VARIANTS[declaration.name]}))
  return found + WRAPPERS


CASES = cases()
IDS = [name for name, _, _ in CASES]
# For sharding: every port, the Keras 3 base arguments (EMA, accumulation,
# clipping, decay) and the wrappers; OptimizerV2's base arguments and the
# slot variants add no layout of their own, nor do tf_keras's 2.11+ ports
# (Keras 3's update steps) but for their moving average, which starts as a
# copy of the params (tf_keras.adam+base).
# FTRL's step divides root differences by the learning rate (sigma =
# (sqrt(n') - sqrt(n)) / lr): at the default 0.001 a last-bit difference of
# the sharded clip norm grows a thousandfold (2.4x the project's tolerance on
# some CPUs), so FTRL runs sharded at 0.1.
SHARDED_CASES = [(name, factory,
                  {**kwargs, "learning_rate": 0.1} if name == "ftrl+base"
                  else kwargs)
                 for name, factory, kwargs in CASES
                 if not name.endswith(("+slots", "+base2"))
                 and not (name.endswith("+base") and "." in name
                          and name != "tf_keras.adam+base")
                 and not (name.startswith("tf_keras.") and "+" not in name)]
