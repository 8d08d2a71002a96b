"""Trains with bridged optimizers on one device and under MirroredStrategy
over two logical CPUs; prints the largest weight difference per case as JSON.

Run as its own process: logical devices are fixed at TensorFlow's start.
"""

import json
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # pylint: disable=wrong-import-position
import tensorflow as tf  # pylint: disable=wrong-import-position

tf.config.set_logical_device_configuration(
    tf.config.list_physical_devices("CPU")[0],
    [tf.config.LogicalDeviceConfiguration()] * 2)

import keras  # pylint: disable=wrong-import-position
import tf_keras  # pylint: disable=wrong-import-position

import tf_bridge  # pylint: disable=wrong-import-position
import tf_bridge.legacy  # pylint: disable=wrong-import-position


def data():
  rng = np.random.default_rng(0)
  tokens = rng.permutation(128).reshape(32, 4).astype(np.int32)
  targets = rng.standard_normal((32, 1)).astype(np.float32)
  return tokens, targets


def train(make_optimizer, legacy, strategy):
  layers, models = (tf_keras.layers, tf_keras) if legacy else (keras.layers,
                                                                keras)
  rng = np.random.default_rng(1)
  with strategy.scope():
    model = models.Sequential([
        layers.Input((4,), dtype="int32"), layers.Embedding(128, 4),
        layers.GlobalAveragePooling1D(), layers.Dense(8, activation="tanh"),
        layers.Dense(1)])
    model.set_weights([rng.standard_normal(w.shape).astype(np.float32) * 0.5
                       for w in model.get_weights()])
    model.compile(optimizer=make_optimizer(), loss="mse")
  tokens, targets = data()
  model.fit(tokens, targets, batch_size=8, epochs=2, shuffle=False, verbose=0)
  return model.get_weights(), model.optimizer


def main():
  cases = {
      "keras3.Adam": (lambda: tf_bridge.Adam(0.05), False),
      "keras3.SGD": (lambda: tf_bridge.SGD(0.05, momentum=0.9), False),
      "legacy.Adam": (lambda: tf_bridge.legacy.Adam(0.05), True),
      "legacy.RMSprop": (lambda: tf_bridge.legacy.RMSprop(0.05, momentum=0.5),
                         True),
  }
  mirrored = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
  report = {"replicas": mirrored.num_replicas_in_sync}
  for name, (make, legacy) in cases.items():
    single, _ = train(make, legacy, tf.distribute.get_strategy())
    distributed, optimizer = train(make, legacy, mirrored)
    report[name] = {
        "max_abs_diff": max(float(np.max(np.abs(a - b)))
                            for a, b in zip(single, distributed)),
        "moved": max(float(np.max(np.abs(a))) for a in single),
        "variable_types": sorted({
            type(v).__name__ for v in optimizer.variables()} if legacy else {
                type(v.value).__name__ for v in optimizer.variables}),
    }
  json.dump(report, sys.stdout)


if __name__ == "__main__":
  main()
