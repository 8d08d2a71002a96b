"""Model Garden's own code around its optimizers, run once with the
originals and once with the bridged twins (`tf_bridge.legacy.tf_models`):
its trainer (`official.core.base_trainer.Trainer`, with `orbit`) training
and evaluating a model with `ExponentialMovingAverage`, then its eval
actions (`official.core.actions.get_eval_actions`, which writes
`ema_checkpoints/`); and the checkpoints of a model trained by
`AdamWeightDecay`, `LAMB` and `LARS`. Prints, per side, what the program observes: the
trainer's `isinstance` check, the validation loss (on the averages), the
weights after evaluation, the EMA checkpoint's keys with their values,
and each optimizer's checkpoint's keys with their shapes and dtypes, as
JSON.

Run by tests/test_tf_models_programs.py through `originals.run`."""

import json
import os
import sys
import tempfile
import types

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# `official.core` imports TensorFlow Datasets, which its TFDS readers alone
# use (not installed beside the originals: none of them runs here).
sys.modules.setdefault("tensorflow_datasets",
                       types.ModuleType("tensorflow_datasets"))

# pylint: disable=wrong-import-position
import numpy as np
import tensorflow as tf
import tf_keras
from official.core import actions, base_task, base_trainer
from official.core import config_definitions
from official.modeling import optimization
from official.modeling.optimization import lamb, lars, legacy_adamw

import tf_bridge.legacy
import tf_bridge.legacy.tf_models

RNG = np.random.default_rng(3)
FEATURES = RNG.standard_normal((32, 4)).astype(np.float32)
LABELS = RNG.standard_normal((32, 3)).astype(np.float32)
INITIAL = [RNG.standard_normal((4, 3)).astype(np.float32),
           RNG.standard_normal(3).astype(np.float32)]


def dense_model():
  model = tf_keras.Sequential([tf_keras.Input((4,)),
                               tf_keras.layers.Dense(3)])
  model.set_weights(INITIAL)
  return model


class Regression(base_task.Task):
  """A least-squares task on a fixed dataset, with Model Garden's default
  training and validation steps."""

  def build_model(self):
    return dense_model()

  def build_inputs(self, params, input_context=None):
    del params, input_context
    return tf.data.Dataset.from_tensor_slices(
        (FEATURES, LABELS)).batch(8).repeat()

  def build_losses(self, labels, model_outputs, aux_losses=None):
    del aux_losses
    return tf.reduce_mean(tf.square(labels - model_outputs))


def listed(path, with_values):
  """A checkpoint's keys with their values (`with_values` keys) or their
  shapes and dtypes."""
  found = {}
  for key, shape in tf.train.list_variables(path):
    if key == "_CHECKPOINTABLE_OBJECT_GRAPH":
      continue
    value = tf.train.load_variable(path, key)
    found[key] = (value.tolist() if with_values(key)
                  else [shape, str(value.dtype)])
  return found


def trained_with_ema(make_optimizer, model_dir):
  """Model Garden's trainer (under a strategy, as its `train_lib` runs it)
  training 12 steps and evaluating 4, then its eval actions."""
  tf_keras.backend.clear_session()
  with tf.distribute.OneDeviceStrategy("/cpu:0").scope():
    config = config_definitions.ExperimentConfig()
    task = Regression(config.task)
    model = task.build_model()
    optimizer = make_optimizer()
    dataset = task.build_inputs(None)
    trainer = base_trainer.Trainer(config, task, model, optimizer,
                                   train_dataset=dataset,
                                   validation_dataset=dataset)
    trainer.train(tf.constant(12))
    logs = trainer.evaluate(tf.constant(4))
    for action in actions.get_eval_actions(config, trainer, model_dir):
      action(logs)
  directory = os.path.join(model_dir, "ema_checkpoints")
  path = (tf.train.latest_checkpoint(directory)
          if os.path.isdir(directory) else None)
  return {
      "isinstance": isinstance(optimizer,
                               optimization.ExponentialMovingAverage),
      "validation_loss": float(logs["validation_loss"]),
      "weights": [w.tolist() for w in model.get_weights()],
      "ema_checkpoint": path and listed(
          path, lambda key: key.startswith("model/"))}


def checkpoint_keys(optimizer, directory):
  """The keys of a checkpoint of a model that `optimizer` trained 3
  steps."""
  tf_keras.backend.clear_session()
  model = dense_model()
  for _ in range(3):
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean(tf.square(LABELS - model(FEATURES)))
    optimizer.apply_gradients(zip(
        tape.gradient(loss, model.trainable_variables),
        model.trainable_variables))
  path = tf.train.Checkpoint(model=model, optimizer=optimizer).write(
      os.path.join(directory, "checkpoint"))
  return listed(path, lambda key: False)


def main():
  with tempfile.TemporaryDirectory() as directory:
    found = {
        side: {
            "trainer": trained_with_ema(
                lambda average=average, inner=inner: average(
                    inner(0.05), average_decay=0.9),
                os.path.join(directory, side)),
            "checkpoints": {
                name: checkpoint_keys(
                    getattr(module, name)(learning_rate=0.05,
                                          weight_decay_rate=0.01),
                    os.path.join(directory, side, name))
                for name, module in zip(
                    ("AdamWeightDecay", "LAMB", "LARS"), modules)}}
        for side, average, inner, modules in (
            ("original", optimization.ExponentialMovingAverage,
             tf_keras.optimizers.legacy.Adam, (legacy_adamw, lamb, lars)),
            ("bridged", tf_bridge.legacy.tf_models.ExponentialMovingAverage,
             tf_bridge.legacy.Adam, (tf_bridge.legacy.tf_models,) * 3))}
  print(json.dumps(found))


if __name__ == "__main__":
  main()
