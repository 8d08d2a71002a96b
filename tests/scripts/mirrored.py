"""Trains with bridged optimizers on one device and under MirroredStrategy
over two logical CPUs, and with their native twins under MirroredStrategy;
then a model built again under the strategy with a new bridged optimizer,
which shares the first one's compiled step; and tf_keras's Adam, native and
bridged, given gradients of another shape than their variables', which
native broadcasts. Prints the largest weight differences per case, and how
many steps that model converted, as JSON.

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
import tf_bridge.tf_keras  # pylint: disable=wrong-import-position
from tf_bridge import _compiled  # pylint: disable=wrong-import-position

CONVERSIONS = []
_convert = _compiled.to_tensorflow
_compiled.to_tensorflow = lambda *args, **kwargs: (CONVERSIONS.append(1) or
                                                    _convert(*args, **kwargs))


def data():
  rng = np.random.default_rng(0)
  tokens = rng.permutation(128).reshape(32, 4).astype(np.int32)
  targets = rng.standard_normal((32, 1)).astype(np.float32)
  return tokens, targets


def train(make_optimizer, legacy, strategy):
  """Initial and final weights, and the optimizer."""
  layers, models = (tf_keras.layers, tf_keras) if legacy else (keras.layers,
                                                                keras)
  rng = np.random.default_rng(1)
  with strategy.scope():
    model = models.Sequential([
        layers.Input((4,), dtype="int32"), layers.Embedding(128, 4),
        layers.GlobalAveragePooling1D(), layers.Dense(8, activation="tanh"),
        layers.Dense(1)])
    initial = [rng.standard_normal(w.shape).astype(np.float32) * 0.5
               for w in model.get_weights()]
    model.set_weights(initial)
    model.compile(optimizer=make_optimizer(), loss="mse")
  tokens, targets = data()
  model.fit(tokens, targets, batch_size=8, epochs=2, shuffle=False, verbose=0)
  return initial, model.get_weights(), model.optimizer


def largest_difference(a, b):
  return max(float(np.max(np.abs(x - y))) for x, y in zip(a, b))


def sparse_steps(optimizer):
  """How many compiled steps took a sparse gradient row by row."""
  return sum(1 for key in optimizer._fused._steps  # pylint: disable=protected-access
             if key[0] == "tf" and any(key[2]))


def broadcast_steps(make_optimizer, strategy):
  """A (1, 1) kernel and a (1,) bias, each given shape-(1,) gradients that
  differ per replica (tf_keras's own testVariableConstraints gives such a
  kernel gradient), stepped three times; the weights after."""
  with strategy.scope():
    kernel = tf.Variable([[0.5]], name="kernel")
    bias = tf.Variable([0.25], name="bias")
    optimizer = make_optimizer()

  @tf.function
  def step(grad):
    def replica_step():
      replica = tf.distribute.get_replica_context().replica_id_in_sync_group
      scaled = grad * tf.cast(replica + 1, tf.float32)
      optimizer.apply_gradients([(scaled, kernel), (scaled, bias)])
    strategy.run(replica_step)

  for index in range(3):
    step(tf.constant([0.3 + index]))
  return [kernel.numpy(), bias.numpy()]


def main():
  # name: (bridged class, native class, arguments, tf_keras model). The
  # embedding gets tf.IndexedSlices: legacy RMSprop with momentum and Ftrl,
  # Keras 3's and tf_keras's Adagrad take them row by row, the others
  # densify them (one class per host and path: the bridge's fused step is
  # the same code for all; test_bridge_sparse runs every sparse class).
  cases = {
      "keras3.Adam": (tf_bridge.Adam, keras.optimizers.Adam, {}, False),
      "keras3.Adagrad": (tf_bridge.Adagrad, keras.optimizers.Adagrad, {},
                         False),
      "legacy.Adam": (tf_bridge.legacy.Adam, tf_keras.optimizers.legacy.Adam,
                      {}, True),
      "legacy.RMSprop": (tf_bridge.legacy.RMSprop,
                         tf_keras.optimizers.legacy.RMSprop,
                         {"momentum": 0.5}, True),
      "legacy.Ftrl": (tf_bridge.legacy.Ftrl, tf_keras.optimizers.legacy.Ftrl,
                      {}, True),
      "tf_keras.Adam": (tf_bridge.tf_keras.Adam, tf_keras.optimizers.Adam,
                        {"use_ema": True, "ema_momentum": 0.5,
                         "weight_decay": 0.1}, True),
      "tf_keras.Adagrad": (tf_bridge.tf_keras.Adagrad,
                           tf_keras.optimizers.Adagrad, {}, True),
  }
  mirrored = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
  report = {"replicas": mirrored.num_replicas_in_sync}
  for name, (bridged, native, arguments, legacy) in cases.items():
    make = lambda: bridged(0.05, **arguments)  # pylint: disable=cell-var-from-loop
    initial, single, _ = train(make, legacy, tf.distribute.get_strategy())
    _, distributed, optimizer = train(make, legacy, mirrored)
    _, native_distributed, _ = train(
        lambda: native(0.05, **arguments),  # pylint: disable=cell-var-from-loop
        legacy, mirrored)
    converted = len(CONVERSIONS)
    _, again, _ = train(make, legacy, mirrored)
    report[name] = {
        "max_abs_diff": largest_difference(single, distributed),
        "native_max_abs_diff": largest_difference(native_distributed,
                                                  distributed),
        "moved": largest_difference(initial, distributed),
        "sparse_steps": sparse_steps(optimizer),
        "later_model_conversions": len(CONVERSIONS) - converted,
        "later_model_max_abs_diff": largest_difference(distributed, again),
        "variable_types": sorted({
            type(v.value if isinstance(v, keras.Variable) else v).__name__
            for v in (optimizer.variables() if callable(optimizer.variables)
                      else optimizer.variables)}),
    }
  initial = [np.array([[0.5]]), np.array([0.25])]
  native = broadcast_steps(lambda: tf_keras.optimizers.Adam(0.1), mirrored)
  report["tf_keras.Adam broadcast"] = {
      "native_max_abs_diff": largest_difference(native, broadcast_steps(
          lambda: tf_bridge.tf_keras.Adam(0.1), mirrored)),
      "moved": largest_difference(initial, native)}
  json.dump(report, sys.stdout)


if __name__ == "__main__":
  main()
