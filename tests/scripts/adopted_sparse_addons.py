"""TF Addons 0.23's LazyAdam adopted (`tf_bridge.adopt`,
`tf_bridge.legacy.adopt`) training a model with an Embedding, whose
gradient is a `tf.IndexedSlices`, for tests/test_adopt_hosts.py (TFA
imported in this process of its own, by `originals.run`). Ground truth:
LazyAdam itself in tf_keras's `fit` on the same data. Runs: Keras 3 on the
arrays (a batch dimension traced as None, the last batch partial), eagerly
(`run_eagerly=True`) and on whole batches only (a static batch shape); the
OptimizerV2 adoption in tf_keras; a mutant of each adoption (learning rate
1 % off); LazyAdam given its sparse gradients densified (its dense hook,
Adam's); then the Keras 3 model saved after its fit and loaded
(`keras.models.load_model`): its optimizer's class and variables, and one
more epoch of each. `python adopted_sparse_addons.py DIRECTORY` prints the
final weights (and the loaded optimizer's) as JSON.
"""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # pylint: disable=wrong-import-position
import numpy as np  # pylint: disable=wrong-import-position
import tf_keras  # pylint: disable=wrong-import-position

import adopt_fits as fits  # pylint: disable=wrong-import-position
import originals  # pylint: disable=wrong-import-position
import tf_bridge  # pylint: disable=wrong-import-position
import tf_bridge.legacy  # pylint: disable=wrong-import-position

LazyAdam = originals.import_tensorflow_addons().optimizers.LazyAdam
RATE = 0.01


def weights(model, **options):
  return [w.tolist() for w in fits.sparse_fit(model, **options)]


def main():
  adopted = tf_bridge.adopt(LazyAdam)
  legacy = tf_bridge.legacy.adopt(LazyAdam)
  keras3 = fits.sparse_model_of(keras, lambda: adopted(RATE))
  runs = {
      "native": weights(fits.sparse_model_of(tf_keras,
                                             lambda: LazyAdam(RATE))),
      "native whole batches": weights(
          fits.sparse_model_of(tf_keras, lambda: LazyAdam(RATE)),
          whole_batches=True),
      "densified": weights(fits.sparse_model_of(
          tf_keras, lambda: fits.densifying(LazyAdam)(RATE))),
      "keras": weights(keras3),
      "keras mutant": weights(fits.sparse_model_of(
          keras, lambda: adopted(RATE * 1.01))),
      "keras eager": weights(fits.sparse_model_of(
          keras, lambda: adopted(RATE), run_eagerly=True)),
      "keras whole batches": weights(
          fits.sparse_model_of(keras, lambda: adopted(RATE)),
          whole_batches=True),
      "legacy": weights(fits.sparse_model_of(tf_keras,
                                             lambda: legacy(RATE))),
      "legacy mutant": weights(fits.sparse_model_of(
          tf_keras, lambda: legacy(RATE * 1.01))),
  }
  path = os.path.join(sys.argv[1], "lazy_adam.keras")
  keras3.save(path)
  loaded = keras.models.load_model(path)
  runs["loaded"] = {
      "class": type(loaded.optimizer).__name__,
      "adopted": type(loaded.optimizer) is adopted,
      "variables": [np.asarray(a).tolist() == np.asarray(b).tolist()
                    for a, b in zip(loaded.optimizer.variables,
                                    keras3.optimizer.variables)],
      "continued": weights(loaded, epochs=1),
      "written continued": weights(keras3, epochs=1)}
  json.dump(runs, sys.stdout)


if __name__ == "__main__":
  main()
