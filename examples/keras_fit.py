"""`model.compile`/`fit` with a bridged optimizer and Keras callbacks:
`ReduceLROnPlateau` sets the learning rate the JAX transform reads each
step, `ModelCheckpoint` saves the model with the optimizer's state, and
`load_model` brings both back (no `custom_objects`: the classes are
registered)."""

import os
import sys
import tempfile

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
# Without TensorFlow's start-up lines (harmless: see the README); tf_bridge,
# imported before Keras, also holds back those TensorFlow writes before it
# reads the variable.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

# pylint: disable=wrong-import-position
import tf_bridge  # pylint: disable=wrong-import-order

import keras
import numpy as np


def main(directory):
  rng = np.random.default_rng(0)
  x = rng.standard_normal((512, 10)).astype(np.float32)
  y = (x[:, :3].sum(axis=1) > 0).astype(np.int32)
  keras.utils.set_random_seed(0)
  model = keras.Sequential([
      keras.Input((10,)), keras.layers.Dense(32, activation="relu"),
      keras.layers.Dense(2)])
  model.compile(
      optimizer=tf_bridge.AdamW(3e-3, weight_decay=1e-3, clipnorm=1.0),
      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
      metrics=["accuracy"])
  path = os.path.join(directory, "model.keras")
  history = model.fit(x, y, batch_size=32, epochs=6, verbose=0,
                      validation_split=0.25, callbacks=[
                          keras.callbacks.ReduceLROnPlateau(
                              monitor="val_loss", factor=0.5, patience=1),
                          keras.callbacks.ModelCheckpoint(path)])
  accuracy = history.history["accuracy"][-1]
  print(f"accuracy {accuracy:.3f}, learning rate "
        f"{float(model.optimizer.learning_rate.numpy()):.2e}")
  assert accuracy > 0.85

  loaded = keras.models.load_model(path)
  assert type(loaded.optimizer) is tf_bridge.AdamW
  for saved, restored in zip(model.optimizer.variables,
                             loaded.optimizer.variables):
    np.testing.assert_array_equal(saved.numpy(), restored.numpy())
  loaded.fit(x, y, batch_size=32, epochs=1, verbose=0)  # Training goes on.


if __name__ == "__main__":
  with tempfile.TemporaryDirectory() as temporary:
    main(sys.argv[1] if len(sys.argv) > 1 else temporary)
