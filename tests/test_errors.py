"""Bad arguments and bad inputs get errors that name what is wrong."""

import inspect
import re

import jax
import jax.numpy as jnp
import jaxopt_port
import numpy as np
import optax
import pytest

from tf_bridge import catalog

PARAMS = {"layer": {"kernel": jnp.ones((3, 2)), "bias": jnp.zeros(2)}}


@pytest.mark.parametrize("make,message", [
    (lambda: jaxopt_port.adam(learning_rate=-0.1),
     "`learning_rate` must be in [0, inf]. Received: learning_rate=-0.1"),
    (lambda: jaxopt_port.legacy.sgd(learning_rate=-1.0),
     "`learning_rate` must be in [0, inf]. Received: learning_rate=-1.0"),
    # Keras's own words, where Keras refuses the value.
    (lambda: jaxopt_port.sgd(momentum=1.5),
     "`momentum` must be a float between [0, 1]."),
    (lambda: jaxopt_port.legacy.sgd(momentum=-0.1),
     "`momentum` must be between [0, 1]. Received: momentum=-0.1 (of type "
     "<class 'float'>)."),
    (lambda: jaxopt_port.rmsprop(momentum=2.0),
     "`momentum` must be in [0, 1]. Received: momentum=2.0"),
    (lambda: jaxopt_port.momentum_sgd(momentum=1.0),
     "`momentum` must be in [0, 1). Received: momentum=1.0"),
    (lambda: jaxopt_port.adam(beta_1=1.0),
     "`beta_1` must be in [0, 1). Received: beta_1=1.0"),
    (lambda: jaxopt_port.legacy.adam(beta_2=-0.5),
     "`beta_2` must be in [0, 1). Received: beta_2=-0.5"),
    (lambda: jaxopt_port.adam(epsilon=-1e-7),
     "`epsilon` must be in [0, inf]. Received: epsilon=-1e-07"),
    (lambda: jaxopt_port.rmsprop(rho=1.0),
     "`rho` must be in [0, 1). Received: rho=1.0"),
    (lambda: jaxopt_port.adagrad(initial_accumulator_value=-0.1),
     "`initial_accumulator_value` must be in [0, inf]. Received: "
     "initial_accumulator_value=-0.1"),
    (lambda: jaxopt_port.adamw(weight_decay=None),
     "Argument `weight_decay` must be a float. Received: weight_decay=None"),
    (lambda: jaxopt_port.adam(weight_decay=-0.01),
     "`weight_decay` must be in [0, inf]. Received: weight_decay=-0.01"),
    (lambda: jaxopt_port.adam(gradient_accumulation_steps=1),
     "`gradient_accumulation_steps` must be None or an integer >= 2. "
     "Received: gradient_accumulation_steps=1"),
    (lambda: jaxopt_port.adam(gradient_accumulation_steps=2.5),
     "`gradient_accumulation_steps` must be None or an integer >= 2. "
     "Received: gradient_accumulation_steps=2.5"),
    (lambda: jaxopt_port.adam(use_ema=True, ema_overwrite_frequency=0),
     "`ema_overwrite_frequency` must be None or an integer >= 1. "
     "Received: ema_overwrite_frequency=0"),
    (lambda: jaxopt_port.adam(use_ema=True, ema_momentum=1.5),
     "`ema_momentum` must be in [0, 1]. Received: ema_momentum=1.5"),
    (lambda: jaxopt_port.adam(ema_overwrite_frequency=5),
     "`ema_overwrite_frequency` is set but `use_ema` is False"),
    (lambda: jaxopt_port.sgd(clipnorm=1.0, clipvalue=1.0),
     "Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. "
     "Received: clipnorm=1.0, clipvalue=1.0, global_clipnorm=None"),
    (lambda: jaxopt_port.sgd(clipnorm=0.0),
     "`clipnorm` must be in (0, inf]. Received: clipnorm=0.0"),
    (lambda: jaxopt_port.legacy.sgd(clipvalue=-1.0),
     "`clipvalue` must be in (0, inf]. Received: clipvalue=-1.0"),
    (lambda: jaxopt_port.legacy.adam(clipnorm=1.0, global_clipnorm=1.0),
     "Cannot accept both `clipnorm` and `global_clipnorm`. Received: "
     "clipnorm=1.0, global_clipnorm=1.0"),
    (lambda: jaxopt_port.legacy.adagrad(decay=-0.1),
     "`decay` must be in [0, inf]. Received: decay=-0.1"),
    (lambda: jaxopt_port.adam(loss_scale_factor=0.0),
     "`loss_scale_factor` must be in (0, inf]. Received: loss_scale_factor=0.0"),
    (lambda: jaxopt_port.adafactor(clip_threshold=0.0),
     "`clip_threshold` must be in (0, inf]. Received: clip_threshold=0.0"),
    (lambda: jaxopt_port.muon(ns_steps=-1),
     "`ns_steps` must be None or an integer >= 0. Received: ns_steps=-1"),
    (lambda: jaxopt_port.muon(adam_beta_1=1.0),
     "`adam_beta_1` must be in [0, 1). Received: adam_beta_1=1.0"),
    (lambda: jaxopt_port.schedule_free_adamw(beta_1=0.0),
     "`beta_1` must be in (0, 1). Received: beta_1=0.0"),
    (lambda: jaxopt_port.ftrl(beta=-1.0),
     "`beta` must be in [0, inf]. Received: beta=-1.0"),
    (lambda: jaxopt_port.rmsprop(epsilon=-1.0),
     "`epsilon` must be in [0, inf]. Received: epsilon=-1.0"),
    (lambda: jaxopt_port.adadelta(rho=1.5),
     "`rho` must be in [0, 1]. Received: rho=1.5"),
    (lambda: jaxopt_port.adadelta(epsilon=-1.0),
     "`epsilon` must be in [0, inf]. Received: epsilon=-1.0"),
    (lambda: jaxopt_port.adagrad_decay(0.1, accumulator_decay_step=0),
     "`accumulator_decay_step` must be None or an integer >= 1. Received: "
     "accumulator_decay_step=0"),
    (lambda: jaxopt_port.adagrad_decay(0.1, accumulator_decay_rate=1.5),
     "`accumulator_decay_rate` must be in [0, 1]. Received: "
     "accumulator_decay_rate=1.5"),
    (lambda: jaxopt_port.tf1.adagrad(0.1, initial_accumulator_value=0.0),
     "`initial_accumulator_value` must be in (0, inf]. Received: "
     "initial_accumulator_value=0.0"),
    (lambda: jaxopt_port.tf1.proximal_adagrad(
        0.1, l2_regularization_strength=-1.0),
     "`l2_regularization_strength` must be in [0, inf]. Received: "
     "l2_regularization_strength=-1.0"),
    (lambda: jaxopt_port.tf1.momentum(0.1, momentum=-0.5),
     "`momentum` must be in [0, inf]. Received: momentum=-0.5"),
    (lambda: jaxopt_port.tf1.adam(beta1=1.5),
     "`beta1` must be in [0, 1). Received: beta1=1.5"),
    # TF1 RMSProp's name of its mean-square decay (Keras's `rho`).
    (lambda: jaxopt_port.tf1.rmsprop(0.1, decay=1.5),
     "`decay` must be in [0, 1). Received: decay=1.5"),
    (lambda: jaxopt_port.legacy.nadam(decay=-1.0),
     "`decay` must be in [0, inf]. Received: decay=-1.0"),
    (lambda: jaxopt_port.addons.yogi(activation="relu"),
     "`activation` must be 'sign' or 'tanh'. Received: activation='relu'"),
    (lambda: jaxopt_port.addons.cocob(alpha=0.5),
     "`alpha` must be in [1, inf]. Received: alpha=0.5"),
    (lambda: jaxopt_port.addons.conditional_gradient(0.9, ord="l1"),
     "`ord` must be 'fro' or 'nuclear'. Received: ord='l1'"),
    (lambda: jaxopt_port.addons.lookahead(jaxopt_port.sgd(), sync_period=0),
     "`sync_period` must be None or an integer >= 1. Received: sync_period=0"),
    (lambda: jaxopt_port.addons.lookahead(jaxopt_port.sgd(),
                                          slow_step_size=1.5),
     "`slow_step_size` must be in [0, 1]. Received: slow_step_size=1.5"),
    (lambda: jaxopt_port.addons.swa(jaxopt_port.sgd(), start_averaging=-1),
     "`start_averaging` must be None or an integer >= 0. Received: "
     "start_averaging=-1"),
    (lambda: jaxopt_port.addons.swa(jaxopt_port.sgd(), average_period=0),
     "`average_period` must be None or an integer >= 1. Received: "
     "average_period=0"),
    (lambda: jaxopt_port.addons.moving_average(jaxopt_port.sgd(),
                                               average_decay=1.5),
     "`average_decay` must be in [0, 1]. Received: average_decay=1.5"),
    (lambda: jaxopt_port.schedules.TriangularCyclicalLearningRate(
        0.1, 1.0, 0), "Argument `step_size` must be > 0. Received: "
     "step_size=0"),
])
def test_invalid_hyperparameters_raise_at_construction(make, message):
  with pytest.raises(ValueError, match=re.escape(message)):
    make()


def test_legacy_nadam_refuses_what_tf_keras_would_ignore_or_refuse():
  with pytest.raises(ValueError, match=re.escape(
      "Legacy Nadam's `decay` is its schedule_decay (tf_keras's name for "
      "it); pass one of them. Received: decay=0.1, schedule_decay=0.2")):
    jaxopt_port.legacy.nadam(decay=0.1, schedule_decay=0.2)
  with pytest.raises(ValueError, match=re.escape(
      "The Nadam optimizer does not support "
      "tf.keras.optimizers.LearningRateSchedules as the learning rate")):
    jaxopt_port.legacy.nadam(learning_rate=jaxopt_port.schedules
                             .ExponentialDecay(0.1, 10, 0.5))


def test_legacy_ftrl_refuses_the_lr_alias_tf_keras_drops():
  with pytest.raises(ValueError, match=re.escape(
      "Legacy Ftrl ignores the `lr` alias (tf_keras reads only "
      "`learning_rate`); pass learning_rate=0.05 instead.")):
    jaxopt_port.legacy.ftrl(lr=0.05)


def test_learning_rate_of_wrong_type():
  with pytest.raises(TypeError, match=re.escape(
      "`learning_rate` must be a float, a scalar array, or a schedule (a "
      "callable of the step count). Received: learning_rate='fast'")):
    jaxopt_port.adam(learning_rate="fast")


def _numeric_arguments():
  """(declaration, argument) for every argument a catalog port declares a
  number (`float`, `int`, either or None), base arguments included."""
  for declaration in catalog.CATALOG:
    for name, parameter in inspect.signature(
        declaration.port).parameters.items():
      if parameter.annotation in ("float", "float | None", "int",
                                  "int | None"):
        yield pytest.param(declaration, name,
                           id=f"{declaration.name}.{name}")


@pytest.mark.filterwarnings("ignore:The `lr` argument is deprecated")
@pytest.mark.parametrize("declaration,name", list(_numeric_arguments()))
def test_numeric_arguments_refuse_what_is_no_number(declaration, name):
  """A string would be read as the number it spells (`"0.9"`), a list or a
  vector broadcast against every parameter: refused at construction, by
  name, not deep in a traced step or never."""
  required = dict(declaration.required)
  parameter = inspect.signature(declaration.port).parameters[name]
  refused = ["0.5", [0.5], np.full(2, 0.5), {"x": 0.5}, 0.5j]
  if not parameter.annotation.endswith("| None"):
    refused.append(None)
  for bad in refused:
    try:
      declaration.port(**{**required, name: bad})
    except ValueError as error:
      # The native class's own words, where it refuses the value itself.
      assert name in str(error), error
      continue
    except TypeError as error:
      # (A learning rate's own check says it may be a schedule too.)
      assert re.fullmatch(
          re.escape(f"`{name}` must be a ")
          + r"(number or a scalar array\. |float, a scalar array, or a "
          r"schedule .*)" + re.escape(f"Received: {name}={bad!r}"),
          str(error)), error
      continue
    raise AssertionError(f"{declaration.name}({name}={bad!r}) was taken")
  # What is a number passes this check (range checks aside).
  for good in (np.float32(0.5), np.array(0.5, np.float32), jnp.asarray(1)):
    try:
      declaration.port(**{**required, name: good})
    except ValueError:
      pass


@pytest.mark.parametrize("make,name,bad", [
    (lambda bad: jaxopt_port.addons.lookahead(jaxopt_port.sgd(),
                                              sync_period=bad),
     "sync_period", "2"),
    (lambda bad: jaxopt_port.addons.swa(jaxopt_port.sgd(),
                                        start_averaging=bad),
     "start_averaging", [1]),
    (lambda bad: jaxopt_port.addons.moving_average(jaxopt_port.sgd(),
                                                   average_decay=bad),
     "average_decay", "0.9"),
    (lambda bad: jaxopt_port.addons.moving_average(jaxopt_port.sgd(),
                                                   average_decay=bad),
     "average_decay", None),
    (lambda bad: jaxopt_port.addons.swa(jaxopt_port.sgd(),
                                        average_period=bad),
     "average_period", None),
    (lambda bad: jaxopt_port.addons.lookahead(jaxopt_port.sgd(),
                                              slow_step_size=bad),
     "slow_step_size", None),
    (lambda bad: jaxopt_port.multi_optimizer(jaxopt_port.sgd(),
                                             loss_scale_factor=bad),
     "loss_scale_factor", "2"),
])
def test_wrapper_arguments_refuse_what_is_no_number(make, name, bad):
  with pytest.raises(TypeError, match=re.escape(
      f"`{name}` must be a number or a scalar array. Received: "
      f"{name}={bad!r}")):
    make(bad)


def test_unknown_argument():
  with pytest.raises(TypeError, match="unexpected keyword argument 'decay'"):
    jaxopt_port.adam(decay=0.1)  # `decay` is OptimizerV2's, not Keras 3's.


def test_traced_hyperparameters_are_not_checked():
  """Injected (traced) values cannot be checked and must not break jit."""
  transform = optax.inject_hyperparams(jaxopt_port.adam)(
      learning_rate=0.1, beta_1=0.9, gradient_accumulation_steps=2)
  state = jax.jit(transform.init)(PARAMS)
  jax.jit(transform.update)(PARAMS, state, PARAMS)


@pytest.mark.parametrize("grads,message", [
    ({"layer": {"kernel": jnp.ones((3, 2))}},
     "grads does not match the tree of params: expected a leaf at "
     "['layer']['bias'], found one at ['layer']['kernel'] (1 leaves, "
     "expected 2)."),
    ({"layer": {"kernel": jnp.ones((3, 2)), "bias": jnp.zeros(2),
                "extra": jnp.zeros(1)}},
     "grads does not match the tree of params: expected a leaf at "
     "['layer']['kernel'], found one at ['layer']['extra']"),
    ({"layer": {"kernel": jnp.ones((2, 3)), "bias": jnp.zeros(2)}},
     "grads at ['layer']['kernel'] has shape (2, 3), expected (3, 2) as in "
     "params."),
    ([jnp.ones((3, 2)), jnp.zeros(2)],
     "grads does not match the tree of params: expected a leaf at "
     "['layer']['bias'], found one at [0]"),
])
def test_mismatched_gradients_name_the_path(grads, message):
  for transform in (jaxopt_port.adam(), jaxopt_port.legacy.rmsprop(),
                    jaxopt_port.sgd()):
    with pytest.raises(ValueError, match=re.escape(message)):
      transform.update(grads, transform.init(PARAMS), PARAMS)


def test_mismatched_gradients_without_params_checked_against_state():
  transform = jaxopt_port.adam()
  state = transform.init(PARAMS)
  with pytest.raises(ValueError, match=re.escape(
      "grads at ['layer']['bias'] has shape (3,), expected (2,) as in the "
      "adam state.")):
    transform.update({"layer": {"kernel": jnp.ones((3, 2)),
                                "bias": jnp.zeros(3)}}, state)


def test_state_values_that_are_not_per_parameter_are_not_compared():
  """Nadam's shared momentum-schedule product is a scalar, not params-shaped:
  updates without params check grads against the per-parameter slots only."""
  for transform in (jaxopt_port.nadam(), jaxopt_port.legacy.nadam()):
    updates, _ = transform.update(PARAMS, transform.init(PARAMS))
    assert jax.tree.structure(updates) == jax.tree.structure(PARAMS)
    with pytest.raises(ValueError, match=re.escape(
        "grads at ['layer']['bias'] has shape (3,), expected (2,) as in the "
        "nadam state.")):
      transform.update({"layer": {"kernel": jnp.ones((3, 2)),
                                  "bias": jnp.zeros(3)}},
                       transform.init(PARAMS))


CALL_WITH_PARAMS = ": call update(grads, state, params)."
# What each catalog port that reads the params says when update() gets none
# (at its defaults); every other port updates without them.
NEEDS_PARAMS = {
    "adamw": "adamw with weight_decay or use_ema needs the current params",
    "muon": "muon with weight_decay or use_ema needs the current params",
    "ftrl": "ftrl sets the parameters from its state",
    "legacy.ftrl": "ftrl sets the parameters from its state",
    "tf1.ftrl": "ftrl sets the parameters from its state",
    "lamb": "lamb's trust ratio reads the parameters",
    "adafactor": "adafactor scales its step by the params' RMS",
    "schedule_free_adamw": "schedule_free_adamw recovers its average from "
                           "the params",
    "tf1.adagrad_da": "tf1.adagrad_da sets the params from its accumulators",
    "tf1.proximal_adagrad": "proximal_adagrad sets the params through its "
                            "proximal step",
    "addons.proximal_adagrad": "proximal_adagrad sets the params through its "
                               "proximal step",
    "tf1.proximal_gradient_descent": "proximal_gradient_descent sets the "
                                     "params through its proximal step",
    "addons.adamw": "Decoupled weight decay needs the params",
    "addons.sgdw": "Decoupled weight decay needs the params",
    "addons.conditional_gradient": "conditional_gradient sets the params "
                                   "from them",
    "addons.lamb": "lamb scales its step by the params' norm",
    "tf_models.lars": "lars scales its step by the params' norm",
    "tf_models.lamb": "lamb scales its step by the params' norm",
    "tfrs.clippy_adagrad": "clippy_adagrad bounds its step by the params",
    "tf_keras.adamw": "adamw with weight_decay or use_ema needs the current "
                      "params",
    "tf_keras.ftrl": "ftrl sets the parameters from its state",
    "tf_keras.adafactor": "adafactor scales its step by the params' RMS",
}


@pytest.mark.parametrize("name", sorted({d.name for d in catalog.CATALOG}))
def test_update_without_params_names_why_it_needs_them(name):
  """(Adafactor's factored moments are not param-shaped: without params it
  once failed on their shapes instead of saying it needs the params.)"""
  declaration = catalog.lookup(name)
  transform = declaration.make_port(**declaration.required)
  state = transform.init(PARAMS)
  if name not in NEEDS_PARAMS:
    updates, _ = transform.update(PARAMS, state)
    assert jax.tree.structure(updates) == jax.tree.structure(PARAMS)
    return
  with pytest.raises(ValueError) as error:
    transform.update(PARAMS, state)
  assert str(error.value) == NEEDS_PARAMS[name] + CALL_WITH_PARAMS


@pytest.mark.parametrize("name", ["lookahead", "moving_average", "swa"])
def test_wrappers_without_params_name_why_they_need_them(name):
  """TF Addons' wrappers are not catalog entries of their own."""
  transform = getattr(jaxopt_port.addons, name)(jaxopt_port.sgd())
  with pytest.raises(ValueError) as error:
    transform.update(PARAMS, transform.init(PARAMS))
  assert str(error.value) == f"{name} acts on the params" + CALL_WITH_PARAMS


def test_weight_decay_needs_params():
  transform = jaxopt_port.adamw()
  with pytest.raises(ValueError, match=re.escape(
      "adamw with weight_decay or use_ema needs the current params: call "
      "update(grads, state, params).")):
    transform.update(PARAMS, transform.init(PARAMS))


@pytest.mark.parametrize("dtype", [jnp.int32, jnp.bool_])
def test_non_float_parameter(dtype):
  params = {"table": {"ids": jnp.zeros(3, dtype)}, "w": jnp.ones(2)}
  with pytest.raises(TypeError, match=re.escape(
      f"Parameter ['table']['ids'] has dtype {np.dtype(dtype)}; optimizers "
      "update floating-point parameters only")):
    jaxopt_port.adam().init(params)


def test_tf1_optimizers_require_what_tf1_requires():
  with pytest.raises(TypeError, match="missing a required argument: "
                     "'learning_rate'"):
    jaxopt_port.tf1.gradient_descent()
  with pytest.raises(TypeError, match="missing a required argument: "
                     "'momentum'"):
    jaxopt_port.tf1.momentum(0.1)
  import tf_bridge.addons  # pylint: disable=import-outside-toplevel
  import tf_bridge.tf1  # pylint: disable=import-outside-toplevel
  with pytest.raises(TypeError, match=re.escape(
      "Momentum() missing required argument(s): momentum")):
    tf_bridge.tf1.Momentum(0.1)
  with pytest.raises(TypeError, match=re.escape(
      "AdamW() missing required argument(s): weight_decay")):
    tf_bridge.addons.AdamW()
