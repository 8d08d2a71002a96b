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
  compiled with `optimizer()` (inside `strategy`'s scope, if any; not
  compiled where `optimizer` is None: a custom loop steps it)."""
  _, _, initial = data()
  with strategy.scope() if strategy else contextlib.nullcontext():
    model = library.Sequential([library.Input((6,)),
                                library.layers.Dense(8, activation="tanh"),
                                library.layers.Dense(1)])
    model.set_weights(initial)
    if optimizer is not None:
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


# The sparse fit: an Embedding's gradient is a `tf.IndexedSlices` (repeated
# rows in every batch, most rows untouched), 50 samples in batches of 16
# (the last one partial).
ROWS, IDS, BATCH = 20, 3, 16


def sparse_data():
  rng = np.random.default_rng(1)
  ids = rng.integers(0, ROWS, (50, IDS)).astype(np.int32)
  targets = rng.standard_normal((50, 1)).astype(np.float32)
  initial = [rng.standard_normal(shape).astype(np.float32) * 0.5
             for shape in ((ROWS, 4), (4 * IDS, 1), (1,))]
  return ids, targets, initial


def sparse_model_of(library, optimizer, run_eagerly=False, strategy=None):
  """An Embedding, then a Dense layer, from the seeded start, compiled with
  `optimizer()` (inside `strategy`'s scope, if any)."""
  _, _, initial = sparse_data()
  with strategy.scope() if strategy else contextlib.nullcontext():
    model = library.Sequential([library.Input((IDS,), dtype="int32"),
                                library.layers.Embedding(ROWS, 4),
                                library.layers.Flatten(),
                                library.layers.Dense(1)])
    model.set_weights(initial)
    model.compile(optimizer=optimizer(), loss="mse",
                  run_eagerly=run_eagerly)
  return model


def sparse_fit(model, epochs=2, whole_batches=False):
  """`epochs` of `fit` (not shuffled) on the arrays (a batch dimension
  Keras 3 traces as None), or on a dataset of whole batches only
  (`drop_remainder`: a static one); the final weights."""
  ids, targets, _ = sparse_data()
  if whole_batches:
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    model.fit(tf.data.Dataset.from_tensor_slices((ids, targets)).batch(
        BATCH, drop_remainder=True), epochs=epochs, shuffle=False,
              verbose=0)
  else:
    model.fit(ids, targets, batch_size=BATCH, epochs=epochs, shuffle=False,
              verbose=0)
  return [np.asarray(w) for w in model.get_weights()]


def densifying(cls):
  """`cls` given its sparse gradients densified (its dense hook runs on
  them): what an adoption computed before it ran the sparse hook."""

  class Densifying(cls):

    def apply_gradients(self, grads_and_vars, *args, **kwargs):
      import tensorflow as tf  # pylint: disable=import-outside-toplevel
      return super().apply_gradients(
          [(tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices)
            else g, v) for g, v in grads_and_vars], *args, **kwargs)

  Densifying.__name__ = f"Densifying{cls.__name__}"
  return Densifying
