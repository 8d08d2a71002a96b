"""Trains with bridged optimizers in a fresh process and prints, as JSON,
the programs JAX compiled meanwhile (the bridge only traces and exports
JAX; every step runs in TensorFlow) and how far each bridged run ended from
its native twin. A fresh process: JAX caches what it compiled once."""

import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import jax  # pylint: disable=wrong-import-position
import keras  # pylint: disable=wrong-import-position
import numpy as np  # pylint: disable=wrong-import-position
import tf_keras  # pylint: disable=wrong-import-position

import tf_bridge  # pylint: disable=wrong-import-position
import tf_bridge.legacy  # pylint: disable=wrong-import-position

compiled = []


def record(event, duration, **kwargs):
  del duration
  if event == "/jax/core/compile/backend_compile_duration":
    compiled.append(str(kwargs.get("fun_name", "?")))


jax.monitoring.register_event_duration_secs_listener(record)

rng = np.random.default_rng(0)
ids = rng.integers(0, 50, (64, 3))
targets = rng.standard_normal((64, 1)).astype(np.float32)


def train(layers, optimizer, embedding):
  # The embedding's gradients are sparse (duplicated rows summed where
  # Keras 3's Adam would not: docs/known-differences.md).
  first = (layers.layers.Embedding(50, 4) if embedding
           else layers.layers.Dense(4))
  model = layers.Sequential([layers.Input((3,)), first,
                             layers.layers.Flatten(),
                             layers.layers.Dense(1)])
  initial = [np.random.default_rng(1).standard_normal(w.shape).astype(
      np.float32) for w in model.get_weights()]
  model.set_weights(initial)
  model.compile(optimizer=optimizer, loss="mse")
  model.fit(ids, targets, batch_size=16, epochs=2, verbose=0, shuffle=False)
  return initial, model.get_weights()


runs = {
    "keras3-adam": (keras, False, tf_bridge.Adam(0.01),
                    keras.optimizers.Adam(0.01)),
    "keras3-sgd-embedding": (keras, True, tf_bridge.SGD(0.1),
                             keras.optimizers.SGD(0.1)),
    "legacy-adagrad-embedding": (tf_keras, True,
                                 tf_bridge.legacy.Adagrad(0.1),
                                 tf_keras.optimizers.legacy.Adagrad(0.1)),
}
report = {"differences": {}, "moved": {}}
for name, (layers, embedding, bridged, native) in runs.items():
  initial, got = train(layers, bridged, embedding)
  _, expected = train(layers, native, embedding)
  report["differences"][name] = max(
      float(np.max(np.abs(g - e))) for g, e in zip(got, expected))
  report["moved"][name] = max(
      float(np.max(np.abs(e - i))) for e, i in zip(expected, initial))
report["compiled"] = compiled
print(json.dumps(report))
