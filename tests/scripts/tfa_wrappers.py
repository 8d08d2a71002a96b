"""TF Addons 0.23's wrappers (`MovingAverage`, `SWA`, `Lookahead` around
tf_keras's legacy Adam) and their bridged twins (around the bridged Adam)
train the same tf_keras model with `fit` for 8 steps, write a checkpoint,
and train 8 more. Then each side's state is handed to the other side, by
position (`get_weights` into `set_weights`) and by checkpoint
(`tf.train.Checkpoint.read`), and trains those 8 steps there; a fresh
optimizer on the same weights is the control. Prints, per wrapper and side,
what a program sees by name or position (`variables()`, `weights`, config,
`get_weights`) and the weights each run ends at, as JSON.

Run by tests/test_tfa_originals.py through `originals.run` (TFA imports
only in a process of its own)."""

import json
import os
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # pylint: disable=wrong-import-position
import tensorflow as tf  # pylint: disable=wrong-import-position
import tf_keras  # pylint: disable=wrong-import-position

import originals  # pylint: disable=wrong-import-position

tfa = originals.import_tensorflow_addons()

import tf_bridge.legacy  # pylint: disable=wrong-import-position
import tf_bridge.legacy.addons  # pylint: disable=wrong-import-position

WRAPPERS = {"MovingAverage": {"average_decay": 0.9},
            "SWA": {"start_averaging": 2, "average_period": 3},
            "Lookahead": {"sync_period": 3, "slow_step_size": 0.5}}
SIDES = {"tfa": (tfa.optimizers, tf_keras.optimizers.legacy.Adam),
         "bridge": (tf_bridge.legacy.addons, tf_bridge.legacy.Adam)}
RNG = np.random.default_rng(0)
X = RNG.standard_normal((16, 3)).astype(np.float32)
Y = RNG.standard_normal((16, 1)).astype(np.float32)
INITIAL = [RNG.standard_normal(shape).astype(np.float32)
           for shape in [(3, 2), (2,), (2, 1), (1,)]]


def compiled(side, wrapper, weights):
  """A fresh model at `weights` compiled with a fresh `wrapper` of `side`
  (names restart: Keras's name counters are cleared)."""
  tf_keras.backend.clear_session()
  model = tf_keras.Sequential([tf_keras.Input((3,)),
                               tf_keras.layers.Dense(2),
                               tf_keras.layers.Dense(1)])
  model.set_weights([np.asarray(w, np.float32) for w in weights])
  module, adam = SIDES[side]
  optimizer = getattr(module, wrapper)(adam(0.05), **WRAPPERS[wrapper])
  model.compile(optimizer, "mse")
  return model, optimizer


def train(model):
  model.fit(X, Y, batch_size=2, epochs=1, shuffle=False, verbose=0)
  return [w.tolist() for w in model.get_weights()]


def first_run(side, wrapper, checkpoint):
  model, optimizer = compiled(side, wrapper, INITIAL)
  trained = train(model)
  config = optimizer.get_config()
  seen = {"variables": [v.name for v in optimizer.variables()],
          "weights": [v.name for v in optimizer.weights],
          "config": comparable(config),
          "get_weights": [np.asarray(w).tolist()
                          for w in optimizer.get_weights()],
          "trained": trained}
  tf.train.Checkpoint(model=model, optimizer=optimizer).write(checkpoint)
  optimizer_weights = optimizer.get_weights()
  seen["continued"] = train(model)
  return seen, (config, optimizer_weights)


def comparable(config):
  """A wrapper's config without where its inner optimizer's class lives
  (tf_keras, or tf_bridge)."""
  return {**config, "optimizer": {key: config["optimizer"][key]
                                  for key in ("class_name", "config")}}


def handed_over(side, wrapper, trained, config, optimizer_weights,
                checkpoint):
  """`side` continuing from the other side's state: by position, by
  checkpoint, and (the control) with a fresh optimizer; and its class made
  from the other side's config."""
  module, _ = SIDES[side]
  from_config = comparable(
      getattr(module, wrapper).from_config(config).get_config())
  model, optimizer = compiled(side, wrapper, trained)
  optimizer._create_all_weights(model.trainable_variables)  # pylint: disable=protected-access
  optimizer.set_weights(optimizer_weights)
  by_position = train(model)
  model, optimizer = compiled(side, wrapper, INITIAL)
  status = tf.train.Checkpoint(model=model, optimizer=optimizer).read(
      checkpoint)
  by_checkpoint = train(model)
  try:
    status.assert_existing_objects_matched()
    unmatched = None
  except AssertionError as error:
    unmatched = str(error)[:500]
  fresh = train(compiled(side, wrapper, trained)[0])
  return {"by_position": by_position, "by_checkpoint": by_checkpoint,
          "unmatched": unmatched, "fresh": fresh, "from_config": from_config}


def main():
  results = {}
  with tempfile.TemporaryDirectory() as directory:
    for wrapper in WRAPPERS:
      runs, states = {}, {}
      for side in SIDES:
        checkpoint = os.path.join(directory, f"{wrapper}-{side}")
        runs[side], (config, optimizer_weights) = first_run(side, wrapper,
                                                            checkpoint)
        states[side] = (runs[side]["trained"], config, optimizer_weights,
                        checkpoint)
      for source, target in (("tfa", "bridge"), ("bridge", "tfa")):
        runs[f"{source}->{target}"] = handed_over(target, wrapper,
                                                  *states[source])
      results[wrapper] = runs
  json.dump(results, sys.stdout)


if __name__ == "__main__":
  main()
