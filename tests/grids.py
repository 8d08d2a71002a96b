"""Hyperparameter grids for the parity tests, keyed by catalog name.

Every cataloged optimizer with a native counterpart needs an entry (a test
checks it). A grid point other than `{}` must change the native trajectory
(checked too), unless listed in `SAME_TRAJECTORY_AS_DEFAULT` with the reason.
AMSGrad points use beta_2=0.9: with i.i.d. gradients and
beta_2=0.999, `v` only grows over 100 steps and its running maximum never
binds. A schedule is written `("ClassName", {arguments})` and built on each side from
its own schedules module.
"""

import pytest

FTRL = [{}, {"learning_rate": 0.1, "l1_regularization_strength": 0.01,
             "l2_regularization_strength": 0.1},
        {"learning_rate_power": -0.25, "beta": 0.5, "learning_rate": 0.05},
        {"l2_shrinkage_regularization_strength": 0.1,
         "initial_accumulator_value": 0.5}]

# An epsilon as large as the moments, at a rate where a change of it by
# 1e-3 shows (the mutants of tests/test_native_parity.py and
# tests/test_bridge_mutants.py).
EPSILON_BINDS = {"epsilon": 1.0, "learning_rate": 0.1}

RMSPROP = [{}, {"centered": True}, {"momentum": 0.9},
           {"momentum": 0.9, "centered": True},
           {"rho": 0.5, "epsilon": 1e-3, "momentum": 0.5}, EPSILON_BINDS]

OWN = {
    "sgd": [{}, {"momentum": 0.9}, {"momentum": 0.9, "nesterov": True},
            {"momentum": 0.5, "nesterov": True, "learning_rate": 0.1}],
    "adam": [{}, {"amsgrad": True, "beta_2": 0.9},
             {"beta_1": 0.5, "beta_2": 0.9, "epsilon": 1e-3},
             {"amsgrad": True, "epsilon": 1e-2, "learning_rate": 0.01}],
    "adamw": [{}, {"weight_decay": 0.1, "amsgrad": True, "beta_2": 0.9},
              {"epsilon": 1e-3, "learning_rate": 0.01}],
    "adagrad": [{}, {"initial_accumulator_value": 0.0, "epsilon": 1e-3},
                {"learning_rate": 0.1, "initial_accumulator_value": 1.0},
                EPSILON_BINDS],
    "rmsprop": RMSPROP,
    "adamax": [{}, {"beta_1": 0.5, "beta_2": 0.9, "epsilon": 1e-3},
               EPSILON_BINDS],
    "nadam": [{}, {"beta_1": 0.5, "beta_2": 0.9, "epsilon": 1e-3},
              EPSILON_BINDS],
    "adadelta": [{}, {"rho": 0.5, "epsilon": 1e-3, "learning_rate": 1.0}],
    "ftrl": FTRL,
    "lamb": [{}, {"beta_1": 0.5, "beta_2": 0.9, "epsilon": 1e-3,
                  "learning_rate": 0.01},
             # Epsilon near sqrt(v), where the trust ratio does not cancel
             # it (tests/test_bridge_mutants.py).
             {"epsilon": 0.3, "learning_rate": 0.01}],
    "legacy.ftrl": FTRL,
    "lion": [{}, {"beta_1": 0.5, "beta_2": 0.9, "learning_rate": 0.01}],
    "adafactor": [{}, {"beta_2_decay": -0.5, "epsilon_2": 0.1,
                       "clip_threshold": 0.1, "learning_rate": 0.01},
                  {"epsilon_1": 1e-3}, {"relative_step": False},
                  # Both epsilons bind: g**2 ~ 1 and the variables' RMS < 10.
                  {"epsilon_1": 1.0, "epsilon_2": 10.0,
                   "learning_rate": 0.01}],
    "muon": [{}, {"nesterov": False, "rms_rate": None, "momentum": 0.5},
             {"adam_beta_1": 0.5, "adam_beta_2": 0.9, "epsilon": 1e-3,
              "adam_lr_ratio": 0.5},
             {"exclude_layers": ["variable_2"]},
             {"weight_decay": 0.1, "adam_weight_decay": None,
              "learning_rate": 0.01},
             {"ns_steps": 2, "muon_a": 2.0, "muon_b": -1.5, "muon_c": 0.5},
             {**EPSILON_BINDS, "adam_weight_decay": 0.5}],
    "schedule_free_adamw": [{}, {"warmup_steps": 10, "beta_1": 0.5,
                                 "beta_2": 0.9},
                            {"epsilon": 1e-3, "learning_rate": 0.01}],
    "legacy.sgd": [{}, {"momentum": 0.9}, {"momentum": 0.9, "nesterov": True}],
    "legacy.adam": [{}, {"amsgrad": True, "beta_2": 0.9},
                    {"beta_1": 0.5, "beta_2": 0.9, "epsilon": 1e-3},
                    {"epsilon": 0.0}],
    "legacy.adagrad": [{}, {"initial_accumulator_value": 0.0, "epsilon": 1e-3},
                       {"epsilon": 0.0}],
    "legacy.rmsprop": RMSPROP + [{"epsilon": 0.0}],
    "legacy.adamax": [{}, {"beta_1": 0.5, "beta_2": 0.9, "epsilon": 1e-3},
                      {"epsilon": 0.0}],
    "legacy.adadelta": [{}, {"rho": 0.5, "epsilon": 1e-3,
                             "learning_rate": 1.0}, {"epsilon": 0.0}],
    "legacy.nadam": [{}, {"beta_1": 0.5, "beta_2": 0.9, "epsilon": 1e-3},
                     {"schedule_decay": 0.1},
                     # Binds in 50 steps (tests/test_bridge_mutants.py).
                     {"schedule_decay": 0.1, "learning_rate": 0.01},
                     EPSILON_BINDS],
    # TF1 optimizers require `learning_rate`: the catalog supplies 0.01.
    "tf1.gradient_descent": [{}, {"learning_rate": 0.1}],
    "tf1.momentum": [{}, {"use_nesterov": True},
                     {"momentum": 0.5, "learning_rate": 0.1}],
    "tf1.adam": [{}, {"beta1": 0.5, "beta2": 0.9, "epsilon": 1e-3},
                 {"learning_rate": 0.1}, EPSILON_BINDS],
    "tf1.adagrad": [{}, {"initial_accumulator_value": 1.0,
                         "learning_rate": 0.1}],
    "tf1.adagrad_da": [{}, {"l1_regularization_strength": 0.01,
                            "l2_regularization_strength": 0.1},
                       {"initial_gradient_squared_accumulator_value": 1.0}],
    "tf1.adadelta": [{}, {"rho": 0.5, "epsilon": 1e-3, "learning_rate": 1.0}],
    "tf1.rmsprop": [{}, {"momentum": 0.5, "centered": True},
                    {"decay": 0.5, "epsilon": 1e-3}, EPSILON_BINDS],
    "tf1.ftrl": FTRL,
    "tf1.proximal_adagrad": [{}, {"l1_regularization_strength": 0.01,
                                  "l2_regularization_strength": 0.1,
                                  "learning_rate": 0.1},
                             {"initial_accumulator_value": 1.0}],
    "tf1.proximal_gradient_descent": [{}, {"l1_regularization_strength": 0.01,
                                           "l2_regularization_strength": 0.1}],
}

# tf_keras's 2.11+ classes step as Keras 3's: Keras 3's grids, and their
# own arguments.
OWN.update({
    f"tf_keras.{name}": OWN[name] + extra for name, extra in (
        ("sgd", []), ("adam", [{"adaptive_epsilon": True, **EPSILON_BINDS}]),
        ("adamw", []), ("adagrad", []), ("rmsprop", []), ("adamax", []),
        ("nadam", []), ("adadelta", []), ("lion", []), ("ftrl", []),
        ("adafactor", []))})

# Legacy optimizers replace a zero epsilon by 1e-7, the default: the point
# checks that rule (a port using 0 leaves the native trajectory at scale 1e-4).
SAME_TRAJECTORY_AS_DEFAULT = [{"epsilon": 0.0},
                              # Keras 3.15's Adafactor caps the step by
                              # 1/sqrt(t) whatever relative_step says.
                              {"relative_step": False}]

# Optimizers whose step does not depend on the gradients' scale (Lion steps
# by a sign, Adafactor divides g by its RMS): `loss_scale_factor` cannot
# change their trajectory.
SCALE_INVARIANT = {"lion", "adafactor"}
LOSS_SCALE_POINT = {"loss_scale_factor": 1e4}

KERAS_BASE = [
    {"weight_decay": 0.05},
    {"clipnorm": 0.5},
    {"clipvalue": 0.3},
    {"global_clipnorm": 0.7},
    {"use_ema": True, "ema_momentum": 0.9, "ema_overwrite_frequency": 3},
    LOSS_SCALE_POINT,
    {"gradient_accumulation_steps": 3},
    {"gradient_accumulation_steps": 2, "use_ema": True,
     "ema_overwrite_frequency": 2, "weight_decay": 0.1, "clipnorm": 0.5},
    {"learning_rate": ("ExponentialDecay",
                       {"initial_learning_rate": 0.05, "decay_steps": 10,
                        "decay_rate": 0.5, "staircase": True})},
    {"learning_rate": ("PiecewiseConstantDecay",
                       {"boundaries": [20, 50], "values": [0.05, 0.01, 0.002]}),
     "gradient_accumulation_steps": 2},
]

# tf_keras's base class: it takes several clipping arguments (the first of
# clipnorm, global_clipnorm, clipvalue applies), and its moving average
# starts from the initial values.
TF_KERAS_BASE = [
    {"weight_decay": 0.05},
    {"clipnorm": 0.5},
    {"clipvalue": 0.3},
    {"global_clipnorm": 0.7},
    {"clipvalue": 0.3, "clipnorm": 0.5},
    {"clipvalue": 0.2, "global_clipnorm": 0.5},
    {"use_ema": True, "ema_momentum": 0.9, "ema_overwrite_frequency": 3},
    {"use_ema": True, "weight_decay": 0.1, "clipnorm": 0.5},
    {"learning_rate": ("ExponentialDecay",
                       {"initial_learning_rate": 0.05, "decay_steps": 10,
                        "decay_rate": 0.5, "staircase": True})},
]

# Legacy Nadam takes `decay` as its schedule decay, which tf_keras's
# constructor ignores, and refuses learning-rate schedules (as tf_keras
# does): tests/test_drop_in.py, tests/test_errors.py.
NO_LEARNING_RATE_DECAY = {"legacy.nadam"}
# Legacy Ftrl refuses the `lr` alias, which tf_keras's Ftrl silently drops.
NO_LR_ALIAS = {"legacy.ftrl"}

LEGACY_BASE = [
    {"decay": 0.05},
    {"clipnorm": 0.5},
    {"clipvalue": 0.3},
    {"global_clipnorm": 0.7},
    {"clipvalue": 0.3, "clipnorm": 0.5},
    {"clipvalue": 0.2, "global_clipnorm": 0.5},
    {"lr": 0.05},
    {"learning_rate": ("InverseTimeDecay",
                       {"initial_learning_rate": 0.05, "decay_steps": 7,
                        "decay_rate": 0.5}),
     "decay": 0.01},
]

GRAD_SCALES = (1.0, 1e-4)


def build(kwargs, schedules):
  """`kwargs` with schedule placeholders built from `schedules` (a module)."""
  built = dict(kwargs)
  rate = built.get("learning_rate")
  if isinstance(rate, tuple):
    class_name, arguments = rate
    built["learning_rate"] = getattr(schedules, class_name)(**arguments)
  return built


def label(kwargs):
  return ",".join(f"{key}={value[0] if isinstance(value, tuple) else value}"
                  for key, value in kwargs.items()) or "defaults"


def grouped(group, *values, case_id):
  """A parameter set run on the worker of xdist group `group` (README's
  test command runs `--dist loadgroup`), so the optimizer's cases there
  share the native trajectories that worker cached."""
  return pytest.param(*values, id=case_id,
                      marks=pytest.mark.xdist_group(group))
