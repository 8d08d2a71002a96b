"""Runs tests/test_addons.py's grid in float64 (jax_enable_x64 is read at
start-up, so in a process of its own); prints [label, max |port - numpy|]
per grid point as JSON."""

import json
import pathlib
import sys

import jax

jax.config.update("jax_enable_x64", True)
sys.path.insert(0, str(pathlib.Path(__file__).parent.parent))

import numpy as np  # pylint: disable=wrong-import-position

import test_addons  # pylint: disable=wrong-import-position
from tf_bridge import testing  # pylint: disable=wrong-import-position


def main():
  results = []
  for name, kwargs, scale in test_addons.GRID:
    port, numpy_step, learning_rate, _ = test_addons.CASES[name]
    initial, gradients = testing.seeded_problem(test_addons.STEPS, 2, scale)
    initial = [x.astype(np.float64) for x in initial]
    gradients = [[g.astype(np.float64) for g in step] for step in gradients]
    expected = test_addons.numpy_trajectory(numpy_step(**kwargs),
                                            learning_rate, initial, gradients)
    actual = testing.transform_trajectory(
        port(**kwargs, learning_rate=learning_rate), initial, gradients)
    assert actual[0][0].dtype == np.float64
    difference = max(float(np.max(np.abs(a - e)))
                     for got, want in zip(actual, expected)
                     for a, e in zip(got, want))
    results.append([f"{name} {kwargs} {scale}", difference])
  json.dump(results, sys.stdout)


if __name__ == "__main__":
  main()
