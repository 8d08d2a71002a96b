"""An adopted class (`tf_bridge.adopt(tf_keras.optimizers.legacy.Adam)`, an
OptimizerV2 class whose step is TF's fused `ResourceApplyAdam`) training a
Keras 3 model under `tf.distribute.MirroredStrategy` over two logical CPUs
and under the `mixed_float16` policy (Keras wraps it in a
`LossScaleOptimizer` at `compile`), against Keras 3's own Adam under the
same setting; a mutant (learning rate 1 % off) against it too. Prints, per
setting, the largest weight difference of the adopted class and of the
mutant from Keras's Adam, and the weights' movement, as JSON.

Run as its own process: logical devices are fixed at TensorFlow's start,
and the dtype policy is global.
"""

import json
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # pylint: disable=wrong-import-position
import tensorflow as tf  # pylint: disable=wrong-import-position

tf.config.set_logical_device_configuration(
    tf.config.list_physical_devices("CPU")[0],
    [tf.config.LogicalDeviceConfiguration()] * 2)

import keras  # pylint: disable=wrong-import-position
import tf_keras  # pylint: disable=wrong-import-position

import tf_bridge  # pylint: disable=wrong-import-position

RTOL, ATOL = 1e-5, 1e-6
Adam = tf_bridge.adopt(tf_keras.optimizers.legacy.Adam)


def trained(optimizer, strategy):
  """A small model's initial and final weights after 2 epochs of `fit`."""
  rng = np.random.default_rng(1)
  with strategy.scope():
    model = keras.Sequential([keras.Input((5,)),
                              keras.layers.Dense(8, activation="tanh"),
                              keras.layers.Dense(1)])
    initial = [rng.standard_normal(w.shape).astype(np.float32) * 0.5
               for w in model.get_weights()]
    model.set_weights(initial)
    model.compile(optimizer=optimizer(), loss="mse")
  x = rng.standard_normal((32, 5)).astype(np.float32)
  y = rng.standard_normal((32, 1)).astype(np.float32)
  model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
  return initial, [np.asarray(w) for w in model.get_weights()], model


def compared(strategy):
  initial, expected, model = trained(
      lambda: keras.optimizers.Adam(learning_rate=0.01), strategy)
  _, adopted, adopted_model = trained(lambda: Adam(learning_rate=0.01),
                                      strategy)
  _, mutant, _ = trained(lambda: Adam(learning_rate=0.0101), strategy)

  def within(actual):
    return all(np.allclose(a, e, rtol=RTOL, atol=ATOL)
               for a, e in zip(actual, expected))

  def largest(actual):
    return max(float(np.max(np.abs(a - e))) for a, e in zip(actual, expected))

  return {"within": within(adopted), "mutant_within": within(mutant),
          "difference": largest(adopted), "mutant_difference": largest(mutant),
          "movement": max(float(np.max(np.abs(e - i)))
                          for e, i in zip(expected, initial)),
          "optimizer": type(model.optimizer).__name__,
          "adopted_optimizer": type(adopted_model.optimizer).__name__,
          "replicas": strategy.num_replicas_in_sync}


def main():
  results = {"mirrored": compared(tf.distribute.MirroredStrategy(
      ["/cpu:0", "/cpu:1"]))}
  keras.mixed_precision.set_global_policy("mixed_float16")
  results["mixed_float16"] = compared(tf.distribute.get_strategy())
  json.dump(results, sys.stdout)


if __name__ == "__main__":
  main()
