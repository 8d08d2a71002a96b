"""What programs see of the original libraries' optimizers and their twins,
side by side: each config's keys (TF Addons' optimizers and wrappers,
Hugging Face's `AdamWeightDecay` as `create_optimizer` makes it, Model
Garden's, TF Recommenders' `ClippyAdagrad`), and TF Addons' own
`MovingAverage` program with a weight that is no variable (a
`TextVectorization` layer's, in `model.variables`): what
`assign_average_vars` raises and warns, and the weights it leaves. Prints
them as JSON.

Run by tests/test_drop_in_originals.py through `originals.run` (the
originals import only in a process of their own, with tf_keras as Keras)."""

import inspect
import json
import os
import sys
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # pylint: disable=wrong-import-position
import tensorflow as tf  # pylint: disable=wrong-import-position
import tf_keras  # pylint: disable=wrong-import-position
from official.modeling.optimization import (  # pylint: disable=wrong-import-position
    ema_optimizer, lamb, lars, legacy_adamw)
from tensorflow_recommenders.experimental import optimizers as tfrs  # pylint: disable=wrong-import-position
from transformers import optimization_tf as hf  # pylint: disable=wrong-import-position

import originals  # pylint: disable=wrong-import-position

tfa = originals.import_tensorflow_addons()

import tf_bridge.legacy  # pylint: disable=wrong-import-position
import tf_bridge.legacy.addons  # pylint: disable=wrong-import-position
import tf_bridge.legacy.hf  # pylint: disable=wrong-import-position
import tf_bridge.legacy.tf_models  # pylint: disable=wrong-import-position
import tf_bridge.tf_keras.tfrs  # pylint: disable=wrong-import-position

TFA_REQUIRED = {"AdamW": {"weight_decay": 0.01},
                "SGDW": {"weight_decay": 0.01}}
TFA_WRAPPERS = ("MovingAverage", "SWA", "Lookahead")


def keys(config):
  """A config's keys, and those of the configs it nests (a wrapper's inner
  optimizer's), as `key/inner key`."""
  listed = []
  for key, value in config.items():
    listed.append(key)
    if isinstance(value, dict) and isinstance(value.get("config"), dict):
      listed += [f"{key}/{inner}" for inner in value["config"]]
  return listed


def tfa_pairs():
  pairs = {}
  for name in tf_bridge.legacy.addons.__all__:
    original = getattr(tfa.optimizers, name, None)
    twin = getattr(tf_bridge.legacy.addons, name)
    if not (isinstance(twin, type)
            and issubclass(twin, tf_keras.optimizers.legacy.Optimizer)
            and hasattr(twin, "port")):
      continue
    if name in TFA_WRAPPERS:
      pairs[f"addons.{name}"] = (
          original(tf_keras.optimizers.legacy.SGD(0.1)),
          twin(tf_bridge.legacy.SGD(0.1)))
    else:
      required = dict(TFA_REQUIRED.get(name, {}))
      rate = inspect.signature(original).parameters.get("learning_rate")
      if rate is not None and rate.default is inspect.Parameter.empty:
        required["learning_rate"] = 0.01  # ConditionalGradient's.
      pairs[f"addons.{name}"] = (original(**required), twin(**required))
  return pairs


def pairs():
  made = {
      "hf.create_optimizer": (
          hf.create_optimizer(0.01, 100, 10, weight_decay_rate=0.01)[0],
          tf_bridge.legacy.hf.create_optimizer(0.01, 100, 10,
                                               weight_decay_rate=0.01)[0]),
      "hf.AdamWeightDecay": (hf.AdamWeightDecay(),
                             tf_bridge.legacy.hf.AdamWeightDecay()),
      "tf_models.AdamWeightDecay": (
          legacy_adamw.AdamWeightDecay(),
          tf_bridge.legacy.tf_models.AdamWeightDecay()),
      "tf_models.LARS": (lars.LARS(), tf_bridge.legacy.tf_models.LARS()),
      "tf_models.LAMB": (lamb.LAMB(), tf_bridge.legacy.tf_models.LAMB()),
      "tf_models.ExponentialMovingAverage": (
          ema_optimizer.ExponentialMovingAverage(
              tf_keras.optimizers.legacy.SGD(0.1)),
          tf_bridge.legacy.tf_models.ExponentialMovingAverage(
              tf_bridge.legacy.SGD(0.1))),
      "tfrs.ClippyAdagrad": (tfrs.ClippyAdagrad(),
                             tf_bridge.tf_keras.tfrs.ClippyAdagrad()),
  }
  return {**tfa_pairs(), **made}


def unnamed_weight(module):
  """TFA's `test_no_average_slot` as a program: `fit` with a
  `TextVectorization` layer, then `assign_average_vars(model.variables)`."""
  tf_keras.utils.set_random_seed(0)
  vectorize = tf_keras.layers.TextVectorization(
      max_tokens=50, output_mode="int", output_sequence_length=4)
  vectorize.adapt(["foo", "bar", "baz"])
  model = tf_keras.Sequential([
      tf_keras.Input(shape=(1,), dtype=tf.string), vectorize,
      tf_keras.layers.Embedding(51, 2), tf_keras.layers.Dense(1)])
  optimizer = module.MovingAverage("sgd")
  model.compile(optimizer, loss="mse")
  model.fit(x=np.array(["foo", "bar", "baz"]), y=np.array([0.0, 1.0, 2.0]),
            epochs=2, verbose=0)
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
      optimizer.assign_average_vars(model.variables)
      raised = None
    except Exception as error:  # pylint: disable=broad-except
      raised = f"{type(error).__name__}: {error}"
  return {"raised": raised,
          # The object's address left out.
          "warnings": [str(w.message).split(" object at ")[0] + " ... "
                       + str(w.message).split(" : ", 1)[-1] for w in caught],
          "weights": [w.tolist() for w in model.get_weights()
                      if w.dtype.kind == "f"]}


def main():
  configs = {name: {"original": keys(original.get_config()),
                    "twin": keys(twin.get_config())}
             for name, (original, twin) in pairs().items()}
  print(json.dumps({
      "configs": configs,
      "unnamed_weight": {"tfa": unnamed_weight(tfa.optimizers),
                         "bridge": unnamed_weight(tf_bridge.legacy.addons)}}))


if __name__ == "__main__":
  sys.exit(main())
