"""TF Addons 0.23's LazyAdam through `tf_bridge.port` given RowSparse
gradients (tests/test_port_sparse.py; TFA imported in this process of its
own, by `originals.run`): the port against LazyAdam given the same
IndexedSlices, and against a 1 % mutant of it and against TFA's own
non-lazy parent, Keras's legacy Adam, which must both fail. Prints what
failed (None where nothing did) as JSON."""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import tf_keras  # pylint: disable=wrong-import-position

import tf_bridge  # pylint: disable=wrong-import-position
from tf_bridge import testing  # pylint: disable=wrong-import-position

import originals  # pylint: disable=wrong-import-position
import port_sparse_cases as cases  # pylint: disable=wrong-import-position

tfa = originals.import_tensorflow_addons()


def main():
  initial, gradients = cases.problem()
  native, mutant, dense = testing.native_trajectories(
      [tfa.optimizers.LazyAdam(0.01), tfa.optimizers.LazyAdam(0.0101),
       tf_keras.optimizers.legacy.Adam(0.01)], initial, gradients)
  ported, = cases.port_trajectories(
      [tf_bridge.port(tfa.optimizers.LazyAdam(0.01))], initial, gradients)
  json.dump({"port": cases.failure(ported, native, initial, "LazyAdam"),
             "mutant": cases.failure(ported, mutant, initial, "mutant"),
             "dense": cases.failure(ported, dense, initial, "legacy.Adam")},
            sys.stdout)


if __name__ == "__main__":
  main()
