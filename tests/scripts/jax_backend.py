"""Keras 3 on its JAX backend: `model.fit` with bridged optimizers.

Prints the final weights per optimizer as JSON, and whether TensorFlow was
imported. Run as its own process: KERAS_BACKEND is read when Keras starts.
"""

import json
import os
import sys

os.environ["KERAS_BACKEND"] = sys.argv[1] if len(sys.argv) > 1 else "jax"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # pylint: disable=wrong-import-position
import numpy as np  # pylint: disable=wrong-import-position

import tf_bridge  # pylint: disable=wrong-import-position

OPTIMIZERS = {
    "Adam": lambda: tf_bridge.Adam(0.05, amsgrad=True),
    "RMSprop": lambda: tf_bridge.RMSprop(0.01, momentum=0.5, centered=True,
                                         clipnorm=1.0),
    "AdamW": lambda: tf_bridge.AdamW(0.05, use_ema=True,
                                     ema_overwrite_frequency=3),
}


def train(make_optimizer):
  rng = np.random.default_rng(0)
  inputs = rng.standard_normal((64, 6)).astype(np.float32)
  targets = rng.standard_normal((64, 1)).astype(np.float32)
  model = keras.Sequential([keras.layers.Input((6,)),
                            keras.layers.Dense(8, activation="tanh"),
                            keras.layers.Dense(1)])
  model.set_weights([rng.standard_normal(w.shape).astype(np.float32) * 0.5
                     for w in model.get_weights()])
  model.compile(optimizer=make_optimizer(), loss="mse")
  model.fit(inputs, targets, batch_size=16, epochs=3, shuffle=False, verbose=0)
  return [w.tolist() for w in model.get_weights()]


def main():
  report = {"backend": keras.backend.backend(),
            "weights": {name: train(make) for name, make in OPTIMIZERS.items()},
            "tensorflow_imported": "tensorflow" in sys.modules}
  json.dump(report, sys.stdout)


if __name__ == "__main__":
  main()
