"""The optimizers of Hugging Face transformers (TF, 4.57), TF Model Garden
(2.20) and TF Recommenders (0.7.7), run as originals beside their bridged
twins (`tf_bridge.legacy.hf`, `tf_bridge.legacy.tf_models`,
`tf_bridge.tfrs`, `tf_bridge.tf_keras.tfrs`) and their JAX ports,
on the same named variables and gradients (dense, and sparse rows of an
embedding where the original takes them) for 100 steps; Hugging Face's and
Model Garden's schedules step by step (the bridged ones on both hosts);
Model Garden's moving average over legacy Adam, original and bridged, and
the optimizers its factory and the bridged one build from one config; TF
Recommenders' own unit tests of ClippyAdagrad on the bridged tf_keras
class, and Model Garden's own tests of its factory, schedules and LAMB on
the bridged module (each on the original and a mutant too). Prints, per
case, the trajectories (or values) of each side and of a mutant port (one
argument slightly off), what each side raises for a sparse gradient to
LARS, and the unit tests that failed, as JSON.

Run by tests/test_tf_libraries.py through `originals.run` (the originals
import only in a process of their own, with tf_keras as Keras)."""

import contextlib
import json
import os
import sys
import tempfile
import unittest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import jax  # pylint: disable=wrong-import-position
import keras  # pylint: disable=wrong-import-position
import numpy as np  # pylint: disable=wrong-import-position
import tensorflow as tf  # pylint: disable=wrong-import-position
import tf_keras  # pylint: disable=wrong-import-position
from official.modeling.optimization import (  # pylint: disable=wrong-import-position
    ema_optimizer, lamb, lamb_test, lars, legacy_adamw, lr_schedule,
    lr_schedule_test, optimizer_factory, optimizer_factory_test)
from tensorflow_recommenders.experimental import optimizers as tfrs  # pylint: disable=wrong-import-position
from tensorflow_recommenders.experimental.optimizers import (  # pylint: disable=wrong-import-position
    clippy_adagrad, clippy_adagrad_test)
from transformers import optimization_tf as hf  # pylint: disable=wrong-import-position

import jaxopt_port  # pylint: disable=wrong-import-position
import tf_bridge.legacy  # pylint: disable=wrong-import-position
import tf_bridge.legacy.addons  # pylint: disable=wrong-import-position
import tf_bridge.legacy.hf  # pylint: disable=wrong-import-position
import tf_bridge.legacy.tf_models  # pylint: disable=wrong-import-position
import tf_bridge.tf_models  # pylint: disable=wrong-import-position
import tf_bridge.tf_keras.tfrs  # pylint: disable=wrong-import-position
import tf_bridge.tfrs  # pylint: disable=wrong-import-position
from tf_bridge import testing  # pylint: disable=wrong-import-position

import originals  # pylint: disable=wrong-import-position

STEPS = 100
# Names that the originals' name tests tell apart: `LayerNorm` and `bias`
# are excluded by the usual lists; "emb.*ings" is a regular expression
# that finds `embeddings` but is no substring of it.
NAMES = ["dense/kernel", "dense/bias", "LayerNorm/gamma", "embeddings"]
SHAPES = [(4, 3), (3,), (3,), (6, 2)]
RNG = np.random.default_rng(7)
INITIAL = [RNG.standard_normal(shape).astype(np.float32) for shape in SHAPES]


def dense_gradients():
  # Scaled so that the global norm is above 1 (Model Garden's clip bites).
  return [[(0.8 * RNG.standard_normal(shape)).astype(np.float32)
           for shape in SHAPES] for _ in range(STEPS)]


def with_sparse_embeddings(gradients):
  """The embedding's gradient as 3 distinct rows of 6 each step."""
  sparse = []
  for step in gradients:
    rows = np.sort(RNG.choice(6, 3, replace=False)).astype(np.int32)
    sparse.append(step[:3] + [(step[3][rows], rows)])
  return sparse


DENSE = dense_gradients()
SPARSE = with_sparse_embeddings(dense_gradients())


def port_trajectory(transform, gradients):
  """The port on params named as tf_keras names the variables (`:0`)."""
  keys = [f"{name}:0" for name in NAMES]
  params = dict(zip(keys, map(np.asarray, INITIAL)))
  state = transform.init(params)

  @jax.jit
  def step(params, state, grads):
    updates, state = transform.update(grads, state, params)
    return jaxopt_port.apply_updates(params, updates), state

  trajectory = []
  for grads in gradients:
    grads = {key: (jaxopt_port.RowSparse(g[1], g[0], INITIAL[i].shape[0])
                   if isinstance(g, tuple) else g)
             for i, (key, g) in enumerate(zip(keys, grads))}
    params, state = step(params, state, grads)
    trajectory.append([np.asarray(params[key]) for key in keys])
  return trajectory


def listed(trajectory):
  return [[np.asarray(value).tolist() for value in step]
          for step in trajectory]


def case(original, bridged, port, mutant, gradients, names=tuple(NAMES),
         on_tf_keras=None):
  """The trajectories of each side (`on_tf_keras`: the class bridged on
  tf_keras's 2.11+ host, where the original is of that generation)."""
  sides = {"original": (original, names), "bridged": (bridged, names)}
  if on_tf_keras is not None:
    sides["bridged on tf_keras"] = (on_tf_keras, NAMES)
  return {
      **{side: listed(testing.native_trajectory(
          make(), INITIAL, gradients, names=side_names))
         for side, (make, side_names) in sides.items()},
      "port": listed(port_trajectory(port(), gradients)),
      "mutant": listed(port_trajectory(mutant(), gradients)),
  }


def adam_weight_decay_cases():
  """Hugging Face's and Model Garden's AdamWeightDecay: the same arguments
  to the three, the mutant's name test the other library's."""
  cases = {}
  hf_arguments = {"learning_rate": 0.01, "weight_decay_rate": 0.1,
                  "exclude_from_weight_decay": ["LayerNorm", "bias",
                                                "emb.*ings"]}
  for gradients_name, gradients in (("dense", DENSE), ("sparse", SPARSE)):
    cases[f"hf.AdamWeightDecay {gradients_name}"] = case(
        lambda: hf.AdamWeightDecay(**hf_arguments),
        lambda: tf_bridge.legacy.hf.AdamWeightDecay(**hf_arguments),
        lambda: jaxopt_port.hf.adam_weight_decay(**hf_arguments),
        # Model Garden's regular expressions exclude the embeddings.
        lambda: jaxopt_port.tf_models.adam_weight_decay(
            **hf_arguments, gradient_clip_norm=0.0), gradients)
  included = {**hf_arguments, "include_in_weight_decay": ["dense/bias"],
              "amsgrad": True, "epsilon": 1e-6}
  cases["hf.AdamWeightDecay include amsgrad"] = case(
      lambda: hf.AdamWeightDecay(**included),
      lambda: tf_bridge.legacy.hf.AdamWeightDecay(**included),
      lambda: jaxopt_port.hf.adam_weight_decay(**included),
      lambda: jaxopt_port.hf.adam_weight_decay(
          **{**included, "include_in_weight_decay": None}), DENSE)
  garden_arguments = {"learning_rate": 0.01, "weight_decay_rate": 0.1,
                      "exclude_from_weight_decay": ["LayerNorm", "bias$"]}
  for gradients_name, gradients in (("dense", DENSE), ("sparse", SPARSE)):
    cases[f"tf_models.AdamWeightDecay {gradients_name}"] = case(
        lambda: legacy_adamw.AdamWeightDecay(**garden_arguments),
        lambda: tf_bridge.legacy.tf_models.AdamWeightDecay(
            **garden_arguments),
        lambda: jaxopt_port.tf_models.adam_weight_decay(**garden_arguments),
        # Without Model Garden's global clip.
        lambda: jaxopt_port.hf.adam_weight_decay(**garden_arguments),
        gradients)
  return cases


def lars_cases():
  cases = {}
  variants = {
      "classic": {},
      "classic nesterov": {"nesterov": True},
      "popular": {"classic_momentum": False},
      "popular nesterov": {"classic_momentum": False, "nesterov": True},
  }
  for variant, arguments in variants.items():
    arguments = {"learning_rate": 0.1, "momentum": 0.9,
                 "weight_decay_rate": 0.01, "eeta": 0.01,
                 "exclude_from_weight_decay": ["LayerNorm", "bias"],
                 "exclude_from_layer_adaptation": ["embeddings"],
                 **arguments}
    cases[f"tf_models.LARS {variant}"] = case(
        lambda arguments=arguments: lars.LARS(**arguments),
        lambda arguments=arguments: tf_bridge.legacy.tf_models.LARS(
            **arguments),
        lambda arguments=arguments: jaxopt_port.tf_models.lars(**arguments),
        lambda arguments=arguments: jaxopt_port.tf_models.lars(
            **{**arguments, "eeta": arguments["eeta"] * 1.05}), DENSE)
  return cases


def lamb_cases():
  """Model Garden's LAMB, dense and on sparse rows (the mutant's decay rate
  5 % larger), and with an empty `exclude_from_layer_adaptation` (which
  Model Garden reads as "those excluded from weight decay"; the mutant
  excludes nothing)."""
  cases = {}
  arguments = {"learning_rate": 0.01, "weight_decay_rate": 0.05,
               "exclude_from_weight_decay": ["LayerNorm", "bias"],
               "exclude_from_layer_adaptation": ["embeddings"]}
  variants = {
      "dense": (arguments, DENSE, {"weight_decay_rate": 0.0525}),
      "sparse": (arguments, SPARSE, {"weight_decay_rate": 0.0525}),
      "empty adaptation list": (
          {**arguments, "exclude_from_layer_adaptation": []}, DENSE,
          {"exclude_from_layer_adaptation": ["^$"]}),
  }
  # TF Addons registers its own `LAMB` for deserialization: imported after
  # Model Garden's own tests ran (`main`), which deserialize theirs.
  tfa_optimizers = originals.import_tensorflow_addons().optimizers
  tfa_arguments = {**variants["empty adaptation list"][0],
                   "weight_decay": arguments["weight_decay_rate"]}
  del tfa_arguments["weight_decay_rate"]
  # TF Addons' LAMB (Model Garden's was copied from it) reads it so too.
  cases["addons.LAMB empty adaptation list"] = case(
      lambda: tfa_optimizers.LAMB(**tfa_arguments),
      lambda: tf_bridge.legacy.addons.LAMB(**tfa_arguments),
      lambda: jaxopt_port.addons.lamb(**tfa_arguments),
      lambda: jaxopt_port.addons.lamb(
          **{**tfa_arguments, "exclude_from_layer_adaptation": ["^$"]}),
      DENSE)
  for variant, (arguments, gradients, mutated) in variants.items():
    cases[f"tf_models.LAMB {variant}"] = case(
        lambda arguments=arguments: lamb.LAMB(**arguments),
        lambda arguments=arguments: tf_bridge.legacy.tf_models.LAMB(
            **arguments),
        lambda arguments=arguments: jaxopt_port.tf_models.lamb(**arguments),
        lambda arguments=arguments, mutated=mutated:
        jaxopt_port.tf_models.lamb(**{**arguments, **mutated}), gradients)
  return cases


def create_optimizer_cases():
  """`create_optimizer` with weight decay (AdamWeightDecay after a warm-up
  and a decay) and without (tf_keras's Adam of the 2.11+ generation)."""
  cases = {}
  for label, weight_decay_rate in (("weight decay", 0.01), ("adam", 0.0)):
    arguments = {"init_lr": 0.05, "num_train_steps": STEPS,
                 "num_warmup_steps": 10, "min_lr_ratio": 0.1,
                 "weight_decay_rate": weight_decay_rate,
                 "adam_global_clipnorm": 2.0}
    cases[f"hf.create_optimizer {label}"] = case(
        lambda arguments=arguments: hf.create_optimizer(**arguments)[0],
        lambda arguments=arguments: tf_bridge.legacy.hf.create_optimizer(
            **arguments)[0],
        lambda arguments=arguments: jaxopt_port.hf.create_optimizer(
            **arguments),
        lambda arguments=arguments: jaxopt_port.hf.create_optimizer(
            **{**arguments, "num_warmup_steps": 11}), DENSE)
    cases[f"hf.create_optimizer {label}"]["generations"] = [
        generation(hf.create_optimizer(**arguments)[0]),
        generation(tf_bridge.legacy.hf.create_optimizer(**arguments)[0])]
  return cases


def generation(optimizer):
  """The Keras generation of an optimizer: "tf_keras" (2.11+), "legacy"
  (OptimizerV2) or "keras" (Keras 3)."""
  for name, base in (("tf_keras", tf_keras.optimizers.Optimizer),
                     ("legacy", tf_keras.optimizers.legacy.Optimizer),
                     ("keras", keras.optimizers.Optimizer)):
    if isinstance(optimizer, base):
      return name
  return type(optimizer).__name__


def clippy_adagrad_cases():
  """TFRS's ClippyAdagrad (tf_keras's 2.11+ generation) and the Keras 3
  class (Keras 3 names have no "/"), dense and on sparse rows, with its
  options; the mutant's variable threshold 5 % larger."""
  cases = {}
  variants = {
      "dense": ({}, DENSE),
      "sparse": ({}, SPARSE),
      "exported clipped accumulator": (
          {"export_clipping_factors": True, "clip_accumulator_update": True,
           "accumulator_relative_threshold": 0.001}, DENSE),
      "standard accumulator": ({"use_standard_accumulator_update": True},
                               SPARSE),
  }
  names = [name.replace("/", "_") for name in NAMES]
  for variant, (arguments, gradients) in variants.items():
    arguments = {"learning_rate": 0.5, "variable_relative_threshold": 0.05,
                 **arguments}
    cases[f"tfrs.ClippyAdagrad {variant}"] = case(
        lambda arguments=arguments: tfrs.ClippyAdagrad(**arguments),
        lambda arguments=arguments: tf_bridge.tfrs.ClippyAdagrad(**arguments),
        lambda arguments=arguments: jaxopt_port.tfrs.clippy_adagrad(
            **arguments),
        lambda arguments=arguments: jaxopt_port.tfrs.clippy_adagrad(
            **{**arguments, "variable_relative_threshold": 0.0525}),
        gradients, names,
        on_tf_keras=lambda arguments=arguments:
        tf_bridge.tf_keras.tfrs.ClippyAdagrad(**arguments))
  return cases


class MutantClippyAdagrad(tf_bridge.tf_keras.tfrs.ClippyAdagrad):
  """The bridged class with its variable threshold 5 % larger."""

  def __init__(self, *args, variable_relative_threshold=0.1, **kwargs):
    super().__init__(
        *args, variable_relative_threshold=variable_relative_threshold * 1.05,
        **kwargs)


@contextlib.contextmanager
def tfrs_class(optimizer_class):
  """TFRS's tests' `clippy_adagrad.ClippyAdagrad` is `optimizer_class`."""
  original = clippy_adagrad.ClippyAdagrad
  clippy_adagrad.ClippyAdagrad = optimizer_class
  try:
    yield
  finally:
    clippy_adagrad.ClippyAdagrad = original


def tfrs_own_tests():
  """TFRS's `ClippyAdagradTest` (its optimizer tests: one step dense and
  sparse in float32 and float64, clipping, both accumulator updates, in a
  `tf.function`, its config) on the original, the bridged tf_keras class
  and the mutant: how many ran, and the names of those that failed."""
  results = {}
  for side, optimizer_class in (
      ("original", clippy_adagrad.ClippyAdagrad),
      ("bridged", tf_bridge.tf_keras.tfrs.ClippyAdagrad),
      ("mutant", MutantClippyAdagrad)):
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(
        clippy_adagrad_test.ClippyAdagradTest)
    result = unittest.TestResult()
    with tfrs_class(optimizer_class):
      suite.run(result)
    results[side] = {
        "ran": result.testsRun,
        "failed": sorted(test.id().rsplit(".", 1)[-1] for test, _ in
                         result.failures + result.errors)}
  return results


def schedules():
  """Hugging Face's `WarmUp` over a `PolynomialDecay` (power 2), its
  bridged twin and the JAX one, at every step of 120."""
  def make(module, decay):
    return module.WarmUp(0.1, decay(0.1, 90, 0.001, power=2.0), 10,
                         power=1.5)
  steps = np.arange(120)
  original = make(hf, tf_keras.optimizers.schedules.PolynomialDecay)
  bridged = make(tf_bridge.legacy.hf,
                 tf_keras.optimizers.schedules.PolynomialDecay)
  port = make(jaxopt_port.hf, jaxopt_port.schedules.PolynomialDecay)
  return {"original": [float(original(step)) for step in steps],
          "bridged": [float(bridged(step)) for step in steps],
          "port": [float(port(step)) for step in steps]}


def garden_schedules():
  """Each of Model Garden's schedules and the JAX one (and a mutant: one
  argument off), at every step of 300, as (arguments, mutated argument)
  pairs of the same constructor names."""
  decay = {"initial_learning_rate": 0.1, "decay_steps": 200,
           "end_learning_rate": 0.001, "power": 2.0}
  cases = {
      "PolynomialDecayWithOffset": ({**decay, "offset": 30}, {"offset": 31}),
      "ExponentialDecayWithOffset": (
          {"initial_learning_rate": 0.1, "decay_steps": 50,
           "decay_rate": 0.5, "staircase": True, "offset": 20},
          {"decay_rate": 0.55}),
      "CosineDecayWithOffset": (
          {"initial_learning_rate": 0.1, "decay_steps": 200, "alpha": 0.1,
           "offset": 40}, {"alpha": 0.11}),
      "PiecewiseConstantDecayWithOffset": (
          {"boundaries": [50, 150], "values": [0.1, 0.05, 0.01],
           "offset": 25}, {"offset": 24}),
      "DirectPowerDecay": ({"initial_learning_rate": 0.3, "power": -0.5},
                           {"power": -0.52}),
      "PowerAndLinearDecay": (
          {"initial_learning_rate": 0.3, "total_decay_steps": 250,
           "power": -0.5, "linear_decay_fraction": 0.2, "offset": 10},
          {"linear_decay_fraction": 0.21}),
      "PowerDecayWithOffset": (
          {"initial_learning_rate": 0.3, "power": -0.5, "offset": 60,
           "pre_offset_learning_rate": 0.2}, {"offset": 61}),
      "StepCosineDecayWithOffset": (
          {"boundaries": [0, 100, 200], "values": [0.1, 0.05, 0.01],
           "offset": 5}, {"values": [0.1, 0.05, 0.011]}),
  }
  steps = np.arange(300)
  found = {}

  def values(schedule):
    return [float(schedule(step)) for step in steps]

  for name, (arguments, mutated) in cases.items():
    found[name] = {
        "original": values(getattr(lr_schedule, name)(**arguments)),
        "bridged": values(getattr(tf_bridge.legacy.tf_models, name)(
            **arguments)),
        "bridged keras3": values(getattr(tf_bridge.tf_models, name)(
            **arguments)),
        "port": values(getattr(jaxopt_port.tf_models, name)(**arguments)),
        "mutant": values(getattr(jaxopt_port.tf_models, name)(
            **{**arguments, **mutated}))}
  for name, extra, mutated in (
      ("LinearWarmup", {"warmup_learning_rate": 0.01},
       {"warmup_learning_rate": 0.011}),
      ("PolynomialWarmUp", {"power": 2.0}, {"power": 2.1})):
    def make(module, decay_class, **own):
      return getattr(module, name)(
          after_warmup_lr_sched=decay_class(**decay), warmup_steps=40, **own)
    found[name] = {
        "original": values(make(lr_schedule,
                                tf_keras.optimizers.schedules.PolynomialDecay,
                                **extra)),
        "bridged": values(make(tf_bridge.legacy.tf_models,
                               tf_keras.optimizers.schedules.PolynomialDecay,
                               **extra)),
        "bridged keras3": values(make(
            tf_bridge.tf_models, keras.optimizers.schedules.PolynomialDecay,
            **extra)),
        "port": values(make(jaxopt_port.tf_models,
                            jaxopt_port.schedules.PolynomialDecay, **extra)),
        "mutant": values(make(jaxopt_port.tf_models,
                              jaxopt_port.schedules.PolynomialDecay,
                              **mutated))}
  return found


def ema_run(make_optimizer, steps):
  """A tf_keras Dense layer trained by the Model Garden EMA optimizer
  `make_optimizer()` makes (its averages made by `shadow_copy` first): the
  weights and their averages after each step, the optimizer's `variables()`
  and `weights` names and its checkpoint keys."""
  tf_keras.backend.clear_session()
  model = tf_keras.Sequential([tf_keras.Input((4,)), tf_keras.layers.Dense(3)])
  model.set_weights(INITIAL[:2])
  optimizer = make_optimizer()
  optimizer.shadow_copy(model)
  variables = model.trainable_variables

  @tf.function
  def apply(grads):
    optimizer.apply_gradients(zip(grads, variables))

  trajectory = []
  for grads in steps:
    apply([tf.constant(g) for g in grads[:2]])
    trajectory.append(
        [v.numpy().tolist() for v in variables]
        + [optimizer.get_slot(v, "average").numpy().tolist()
           for v in variables])
  with tempfile.TemporaryDirectory() as directory:
    path = tf.train.Checkpoint(model=model, optimizer=optimizer).write(
        os.path.join(directory, "checkpoint"))
    keys = sorted(key for key, _ in tf.train.list_variables(path)
                  if key != "_CHECKPOINTABLE_OBJECT_GRAPH")
  return {"trajectory": trajectory,
          "variables": [v.name for v in optimizer.variables()],
          "weights": [v.name for v in optimizer.weights], "keys": keys}


def garden_moving_averages():
  """Model Garden's ExponentialMovingAverage around tf_keras's legacy Adam
  and the bridged one around the bridged Adam, 60 steps: weights, averages,
  names and checkpoint keys; the JAX wrapper around the legacy Adam port
  (its averages), and a mutant's (the TF Addons average, which starts at
  the params)."""
  found = {}
  steps = DENSE[:60]
  for label, arguments in (("dynamic", {}),
                           ("start_step 5 fixed decay",
                            {"start_step": 5, "dynamic_decay": False,
                             "average_decay": 0.9})):
    def averages(transform):
      params = {"kernel": INITIAL[0], "bias": INITIAL[1]}
      state = transform.init(params)
      update = jax.jit(transform.update)
      trajectory = []
      for grads in steps:
        updates, state = update({"kernel": grads[0], "bias": grads[1]},
                                state, params)
        params = jaxopt_port.apply_updates(params, updates)
        average = jaxopt_port.addons.average_params(state)
        trajectory.append([np.asarray(average["kernel"]).tolist(),
                           np.asarray(average["bias"]).tolist()])
      return trajectory

    found[label] = {
        "original": ema_run(
            lambda arguments=arguments: ema_optimizer.ExponentialMovingAverage(
                tf_keras.optimizers.legacy.Adam(0.05), **arguments), steps),
        "bridged": ema_run(
            lambda arguments=arguments:
            tf_bridge.legacy.tf_models.ExponentialMovingAverage(
                tf_bridge.legacy.Adam(0.05), **arguments), steps),
        "port": averages(jaxopt_port.tf_models.exponential_moving_average(
            jaxopt_port.legacy.adam(0.05), **arguments)),
        "mutant": averages(jaxopt_port.addons.moving_average(
            jaxopt_port.legacy.adam(0.05), **{
                "dynamic_decay": True, **arguments}))}
  return found


def garden_moving_average_configs():
  """Each EMA class made from the other's config: the class made, its inner
  optimizer's class, and its config."""
  original = ema_optimizer.ExponentialMovingAverage(
      tf_keras.optimizers.legacy.Adam(0.05), average_decay=0.9, start_step=3)
  bridged = tf_bridge.legacy.tf_models.ExponentialMovingAverage(
      tf_bridge.legacy.Adam(0.05), average_decay=0.9, start_step=3)

  def described(optimizer):
    config = {key: (float(value) if tf.is_tensor(value) else value)
              for key, value in optimizer.get_config().items()}
    config["optimizer"] = optimizer._optimizer.get_config()  # pylint: disable=protected-access
    return {"class": type(optimizer).__module__,
            "inner": type(optimizer._optimizer).__module__,  # pylint: disable=protected-access
            "config": config}

  return {
      "original": described(original),
      "bridged": described(bridged),
      "bridged from original": described(
          tf_bridge.legacy.tf_models.ExponentialMovingAverage.from_config(
              original.get_config())),
      "original from bridged": described(
          ema_optimizer.ExponentialMovingAverage.from_config(
              bridged.get_config()))}


# LARS with a linear warm-up into a cosine decay, averaged: what Model
# Garden's factory and the bridged one make of it, and of a mutant config.
FACTORY_CONFIG = {
    "optimizer": {"type": "lars", "lars": {
        "momentum": 0.9, "weight_decay_rate": 0.01, "eeta": 0.01,
        "exclude_from_weight_decay": ["bias"]}},
    "learning_rate": {"type": "cosine", "cosine": {
        "initial_learning_rate": 0.1, "decay_steps": 60}},
    "warmup": {"type": "linear", "linear": {
        "warmup_steps": 10, "warmup_learning_rate": 0.01}},
    "ema": {"average_decay": 0.9},
}


def built(factory_module, config):
  factory = factory_module.OptimizerFactory(config)
  return factory.build_optimizer(factory.build_learning_rate())


def garden_factory():
  """The optimizer Model Garden's `OptimizerFactory` builds from
  FACTORY_CONFIG, and the bridged factory's (from the config object and
  from its dict), and the bridged one from a config whose warm-up is a
  step longer: 60 steps of each (`ema_run`)."""
  from official.modeling.optimization.configs import optimization_config  # pylint: disable=import-outside-toplevel
  config = optimization_config.OptimizationConfig(FACTORY_CONFIG)
  mutant = {**FACTORY_CONFIG, "warmup": {"type": "linear", "linear": {
      "warmup_steps": 11, "warmup_learning_rate": 0.01}}}
  steps = DENSE[:60]
  return {
      "original": ema_run(lambda: built(optimizer_factory, config), steps),
      "bridged": ema_run(lambda: built(tf_bridge.legacy.tf_models, config),
                         steps),
      "bridged from a dict": ema_run(
          lambda: built(tf_bridge.legacy.tf_models, FACTORY_CONFIG), steps),
      "mutant": ema_run(lambda: built(tf_bridge.legacy.tf_models, mutant),
                        steps),
      "classes": [type(built(module, config)._optimizer).__module__  # pylint: disable=protected-access
                  for module in (optimizer_factory,
                                 tf_bridge.legacy.tf_models)]}


class MutantLAMB(tf_bridge.legacy.tf_models.LAMB):
  """The bridged LAMB with its beta_1 1 % larger."""

  def __init__(self, *args, beta_1=0.9, **kwargs):
    super().__init__(*args, beta_1=beta_1 * 1.01, **kwargs)


class MutantPowerAndLinearDecay(
    tf_bridge.legacy.tf_models.PowerAndLinearDecay):
  """The bridged schedule with its linear fraction 5 % larger."""

  def __init__(self, *args, linear_decay_fraction=0.1, **kwargs):
    super().__init__(*args, linear_decay_fraction=linear_decay_fraction * 1.05,
                     **kwargs)


class MutantLinearWarmup(tf_bridge.legacy.tf_models.LinearWarmup):
  """The bridged warm-up starting 5 % higher."""

  def __init__(self, after_warmup_lr_sched, warmup_steps,
               warmup_learning_rate, name=None):
    super().__init__(after_warmup_lr_sched, warmup_steps,
                     warmup_learning_rate * 1.05 + 1e-4, name)


@contextlib.contextmanager
def patched(target, name, value):
  """`target`'s attribute (or item) `name` is `value` for a while."""
  if isinstance(target, dict):
    original, target[name] = target[name], value
  else:
    original = getattr(target, name)
    setattr(target, name, value)
  try:
    yield
  finally:
    if isinstance(target, dict):
      target[name] = original
    else:
      setattr(target, name, original)


def garden_own_tests():
  """Model Garden's own tests of its optimization package
  (`optimizer_factory_test`, `lr_schedule_test`, `lamb_test`) on the
  original modules, on the bridged module (`tf_bridge.legacy.tf_models`
  standing for `optimizer_factory`, `lr_schedule` and `lamb`) and on a
  mutant of it (a linear warm-up starting higher in the factory's
  registry, a longer linear decay, a larger beta_1): how many ran, and the
  names of those that failed."""
  ours = tf_bridge.legacy.tf_models
  suites = {"optimizer_factory_test": (optimizer_factory_test,
                                       "optimizer_factory", optimizer_factory),
            "lr_schedule_test": (lr_schedule_test, "lr_schedule",
                                 lr_schedule),
            "lamb_test": (lamb_test, "lamb", lamb)}
  mutants = {
      "optimizer_factory_test": (ours.WARMUP_CLS, "linear",
                                 MutantLinearWarmup),
      "lr_schedule_test": (ours, "PowerAndLinearDecay",
                           MutantPowerAndLinearDecay),
      "lamb_test": (ours, "LAMB", MutantLAMB)}
  results = {}
  for name, (test_module, attribute, original) in suites.items():
    for side, module in (("original", original), ("bridged", ours),
                         ("mutant", ours)):
      mutant = (patched(*mutants[name]) if side == "mutant"
                else contextlib.nullcontext())
      suite = unittest.defaultTestLoader.loadTestsFromModule(test_module)
      result = unittest.TestResult()
      # `test_registry` registers a class for good: each run starts afresh.
      registries = [dict(getattr(module, registry, {})) for registry in
                    ("LEGACY_OPTIMIZERS_CLS", "NEW_OPTIMIZERS_CLS")]
      with patched(test_module, attribute, module), mutant:
        suite.run(result)
      for registry, kept in zip(("LEGACY_OPTIMIZERS_CLS",
                                 "NEW_OPTIMIZERS_CLS"), registries):
        if kept:
          getattr(module, registry).clear()
          getattr(module, registry).update(kept)
      results.setdefault(name, {})[side] = {
          "ran": result.testsRun - len(result.skipped),
          "failed": sorted(test.id().rsplit(".", 1)[-1] for test, _ in
                           result.failures + result.errors)}
  return results


def raised(call):
  try:
    call()
  except Exception as error:  # pylint: disable=broad-except
    return [type(error).__name__, str(error)]
  return None


def first_step(optimizer):
  """`optimizer` made and one step taken (where the original checks its
  arguments then)."""
  variable = tf.Variable(np.ones((2,), np.float32), name="w")
  if isinstance(optimizer, keras.optimizers.Optimizer):
    optimizer.apply([tf.ones((2,))], [variable])
  else:
    optimizer.apply_gradients([(tf.ones((2,)), variable)])


def bad_inputs():
  """What the originals, the bridged classes and the ports raise for bad
  arguments (the original's error, or None where it accepts them)."""
  clippy_both = {"clip_accumulator_update": True,
                 "use_standard_accumulator_update": True}
  cases = {
      "hf unknown keyword": (
          lambda: hf.AdamWeightDecay(beta_3=0.5),
          lambda: tf_bridge.legacy.hf.AdamWeightDecay(beta_3=0.5), None),
      "tfrs both accumulator updates": (
          lambda: tfrs.ClippyAdagrad(**clippy_both),
          lambda: tf_bridge.tfrs.ClippyAdagrad(**clippy_both),
          lambda: jaxopt_port.tfrs.clippy_adagrad(**clippy_both)),
      "tfrs negative threshold": (
          lambda: first_step(tfrs.ClippyAdagrad(
              variable_relative_threshold=-0.1)),
          lambda: tf_bridge.tfrs.ClippyAdagrad(
              variable_relative_threshold=-0.1),
          lambda: jaxopt_port.tfrs.clippy_adagrad(
              variable_relative_threshold=-0.1)),
      "lars negative momentum": (
          lambda: first_step(lars.LARS(momentum=-0.5)),
          lambda: tf_bridge.legacy.tf_models.LARS(momentum=-0.5),
          lambda: jaxopt_port.tf_models.lars(momentum=-0.5)),
      "hf negative weight decay": (
          lambda: first_step(hf.AdamWeightDecay(weight_decay_rate=-0.1)),
          lambda: tf_bridge.legacy.hf.AdamWeightDecay(
              weight_decay_rate=-0.1),
          lambda: jaxopt_port.hf.adam_weight_decay(weight_decay_rate=-0.1)),
  }
  return {name: {"original": raised(original), "bridged": raised(bridged),
                 "port": None if port is None else raised(port)}
          for name, (original, bridged, port) in cases.items()}


def sparse_lars():
  """What LARS does with a sparse gradient, original and bridged."""
  def apply(make):
    variable = tf.Variable(np.ones((4, 2), np.float32), name="embeddings")
    gradient = tf.IndexedSlices(tf.ones((1, 2)), tf.constant([1]),
                                tf.constant([4, 2]))
    optimizer = make()
    return raised(lambda: tf.function(lambda: optimizer.apply_gradients(
        [(gradient, variable)]))())
  return {"original": apply(lars.LARS),
          "bridged": apply(tf_bridge.legacy.tf_models.LARS)}


def every_case():
  return {**adam_weight_decay_cases(), **lars_cases(), **lamb_cases(),
          **create_optimizer_cases(), **clippy_adagrad_cases()}


def main():
  """Prints every result, or with --cases the cases' alone (the quick
  profile's)."""
  if "--cases" in sys.argv:
    print(json.dumps({"cases": every_case()}))
    return
  own_tests = garden_own_tests()  # Before TF Addons is imported.
  cases = every_case()
  print(json.dumps({"cases": cases, "schedules": schedules(),
                    "garden_schedules": garden_schedules(),
                    "garden_moving_averages": garden_moving_averages(),
                    "garden_moving_average_configs":
                        garden_moving_average_configs(),
                    "garden_factory": garden_factory(),
                    "garden_own_tests": own_tests,
                    "sparse_lars": sparse_lars(),
                    "bad_inputs": bad_inputs(),
                    "tfrs_own_tests": tfrs_own_tests()}))


if __name__ == "__main__":
  sys.exit(main())
