"""The fit tests/test_adopt_hosts.py and its script (tests/scripts/
adopted_elsewhere.py) train adopted classes and the classes themselves
with: one seeded model, data and start for Keras 3 and tf_keras."""

import contextlib

import numpy as np


def data():
  rng = np.random.default_rng(0)
  inputs = rng.standard_normal((64, 6)).astype(np.float32)
  targets = rng.standard_normal((64, 1)).astype(np.float32)
  initial = [rng.standard_normal(shape).astype(np.float32) * 0.5
             for shape in ((6, 8), (8,), (8, 1), (1,))]
  return inputs, targets, initial


def model_of(library, optimizer, strategy=None):
  """A small `library` (keras or tf_keras) model from the seeded start,
  compiled with `optimizer()` (inside `strategy`'s scope, if any)."""
  _, _, initial = data()
  with strategy.scope() if strategy else contextlib.nullcontext():
    model = library.Sequential([library.Input((6,)),
                                library.layers.Dense(8, activation="tanh"),
                                library.layers.Dense(1)])
    model.set_weights(initial)
    model.compile(optimizer=optimizer(), loss="mse")
  return model


def fit(model, epochs=3):
  """`epochs` of `fit` (batches of 16, not shuffled); the final weights."""
  inputs, targets, _ = data()
  model.fit(inputs, targets, batch_size=16, epochs=epochs, shuffle=False,
            verbose=0)
  return [np.asarray(w) for w in model.get_weights()]


def trained(library, optimizer, strategy=None):
  return [w.tolist() for w in fit(model_of(library, optimizer, strategy))]
