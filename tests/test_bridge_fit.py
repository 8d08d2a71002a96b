"""`model.fit` with every bridged class, saving and loading the model, and
checkpoints: the runs equal native's and resume exactly."""

import re

import keras
import numpy as np
import pytest
import tensorflow as tf
import tf_keras

import tf_bridge
import tf_bridge.legacy
from tf_bridge import catalog

import sampling

from bridge_cases import (ALL_CLASSES, IDS, fit_data, make_model, fit,
                          optimizer_values)


FIT_ARGUMENTS = {"SGD": {"momentum": 0.9}, "RMSprop": {"momentum": 0.5},
                 "Adadelta": {"learning_rate": 1.0}}


# tf_keras's Nadam keeps its momentum product outside its variables, so
# model files do not hold it, native's neither: a loaded model continues
# from a fresh product (tf.train.Checkpoint holds it:
# tests/test_tf_keras.py).
OUTSIDE_FILES = {"tf_keras.nadam"}


def saved_and_loaded(model, legacy, directory):
  # tf_keras restores optimizer slots from `.keras` files only at the next
  # step; HDF5 restores them at load.
  path = str(directory / ("model.h5" if legacy else "model.keras"))
  model.save(path)
  return (tf_keras.models.load_model(path) if legacy
          else keras.models.load_model(path))


@pytest.mark.filterwarnings("ignore:You are saving your model as an HDF5")
@pytest.mark.parametrize("case", range(len(ALL_CLASSES)), ids=IDS)
def test_every_class_fits_saves_and_loads(case, tmp_path):
  """`model.fit` on a model with an Embedding; `model.save` then
  `load_model` restores the optimizer's state bit for bit. Every sixth
  class (`sampling`; every class in the long profile) also: the fit equals
  the native class's (same generation, where one exists; test_programs
  compares every class's fit of a dense model with native's, and
  test_bridge_sparse the sparse steps), and training continues identically
  after the load."""
  declaration, _, on_tf_keras = ALL_CLASSES[case]
  kwargs = {"learning_rate": 0.05,
            **FIT_ARGUMENTS.get(declaration.class_name, {})}
  if declaration.sparse_rows() == "refused":
    # Model Garden's LARS fails so on the embedding's sparse gradients.
    with pytest.raises(NotImplementedError, match=re.escape(
        "Applying sparse gradients is not implemented.")):
      fit(ALL_CLASSES[case].make(**kwargs), on_tf_keras, epochs=1)
    return
  model = fit(ALL_CLASSES[case].make(**kwargs), on_tf_keras, epochs=1)
  whole = sampling.whole(case)
  native_host = {catalog.KERAS: False, catalog.LEGACY: True,
                 catalog.TF_KERAS: True}.get(declaration.generation)
  if (whole and declaration.has_native and native_host == on_tf_keras
      and declaration.native_backend == "tensorflow"):
    native = fit(declaration.make_native(**kwargs), on_tf_keras, epochs=1)
    for got, want in zip(model.get_weights(), native.get_weights()):
      np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
  loaded = saved_and_loaded(model, on_tf_keras, tmp_path)
  assert type(loaded.optimizer) is type(model.optimizer)
  saved, restored = (optimizer_values(m.optimizer) for m in (model, loaded))
  assert len(saved) == len(restored) >= 1
  for a, b in zip(saved, restored):
    np.testing.assert_array_equal(a, b)
  if declaration.name in OUTSIDE_FILES or not whole:
    return
  tokens, targets = fit_data()
  for m in (model, loaded):
    m.fit(tokens, targets, batch_size=16, epochs=1, shuffle=False, verbose=0)
  for a, b in zip(model.get_weights(), loaded.get_weights()):
    np.testing.assert_array_equal(a, b)


def test_model_fit_with_jit_compile():
  bridged = fit(tf_bridge.Adam(0.05), legacy=False, jit_compile=True)
  native = fit(keras.optimizers.Adam(0.05), legacy=False, jit_compile=True)
  for got, want in zip(bridged.get_weights(), native.get_weights()):
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("legacy", [False, True], ids=["keras3", "legacy"])
def test_learning_rate_callbacks(legacy):
  callbacks_module = tf_keras.callbacks if legacy else keras.callbacks

  def callbacks():
    return [callbacks_module.LearningRateScheduler(
        lambda epoch, rate: rate * 0.5 if epoch else rate),
            callbacks_module.ReduceLROnPlateau(monitor="loss", factor=0.1,
                                               patience=0, min_delta=10.0)]

  module = tf_bridge.legacy if legacy else tf_bridge
  native_module = tf_keras.optimizers.legacy if legacy else keras.optimizers
  bridged = fit(module.Adam(0.05), legacy, callbacks(), epochs=4)
  native = fit(native_module.Adam(0.05), legacy, callbacks(), epochs=4)
  rate = float(keras.ops.convert_to_numpy(bridged.optimizer.learning_rate))
  assert rate == pytest.approx(float(keras.ops.convert_to_numpy(
      native.optimizer.learning_rate)))
  assert rate < 0.05 * 0.5 ** 3  # Both callbacks acted.
  for got, want in zip(bridged.get_weights(), native.get_weights()):
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


def test_get_config_round_trips():
  optimizer = tf_bridge.RMSprop(0.01, momentum=0.5, centered=True,
                                clipnorm=2.0, use_ema=True)
  config = optimizer.get_config()
  assert config["momentum"] == 0.5 and config["centered"] is True
  assert config["clipnorm"] == 2.0 and config["use_ema"] is True
  clone = keras.optimizers.deserialize(keras.optimizers.serialize(optimizer))
  assert type(clone) is tf_bridge.RMSprop
  assert clone.get_config() == config
  legacy = tf_bridge.legacy.Adam(0.01, amsgrad=True, decay=0.1, clipvalue=1.0)
  clone = tf_bridge.legacy.Adam.from_config(legacy.get_config())
  assert clone.get_config() == legacy.get_config()


def test_bad_constructor_arguments():
  with pytest.raises(ValueError, match=re.escape(
      "Argument(s) not recognized: {'betta_1': 0.9}")):
    tf_bridge.Adam(betta_1=0.9)
  with pytest.raises(ValueError, match=r"`beta_1` must be in \[0, 1\)"):
    tf_bridge.legacy.Adam(beta_1=1.5)


@pytest.mark.parametrize("legacy", [False, True], ids=["keras3", "legacy"])
def test_checkpoint_resume_equals_uninterrupted(legacy, tmp_path):
  module = tf_bridge.legacy if legacy else tf_bridge
  layers, models = ((tf_keras.layers, tf_keras) if legacy
                    else (keras.layers, keras))
  tokens, targets = fit_data()

  def compiled(seed=0):
    model = make_model(layers, models, seed)
    model.compile(optimizer=module.Adam(0.05, amsgrad=True), loss="mse")
    return model

  def train(model):
    model.fit(tokens, targets, batch_size=16, epochs=1, shuffle=False,
              verbose=0)

  straight = compiled()
  train(straight)
  train(straight)

  first = compiled()
  train(first)
  path = tf.train.Checkpoint(model=first, optimizer=first.optimizer).save(
      str(tmp_path / "ckpt"))
  resumed = compiled(seed=1)  # Other weights, to be overwritten.
  # Restored into the optimizer before it is built: its slots take their
  # values when the first step creates them (TensorFlow's deferred restore).
  tf.train.Checkpoint(model=resumed, optimizer=resumed.optimizer).restore(
      path).expect_partial()
  train(resumed)
  for a, b in zip(straight.get_weights(), resumed.get_weights()):
    np.testing.assert_array_equal(a, b)
