"""Bridged classes with their variables on two devices (two logical CPUs,
alternating), no strategy: the step runs once per device's variables
(`tf_bridge._device_groups`). Prints, per class, the largest difference
from its port's trajectory (or the error), and how many per-device steps
its optimizer compiled, as JSON; `--all` runs every bridged class (the long
profile), else the classes whose state lies out differently (slots, leaves
of no variable, factored and per-layer moments, integer counts, empty
leaves, hyperparameters read at run time).

Run as its own process: logical devices are fixed at TensorFlow's start.
"""

import json
import os
import pathlib
import sys

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # pylint: disable=wrong-import-position
import tensorflow as tf  # pylint: disable=wrong-import-position

tf.config.set_logical_device_configuration(
    tf.config.list_physical_devices("CPU")[0],
    [tf.config.LogicalDeviceConfiguration()] * 2)

import keras  # pylint: disable=wrong-import-position

sys.path.insert(0, str(pathlib.Path(__file__).parents[1]))
import bridge_cases  # pylint: disable=wrong-import-position
from tf_bridge import testing  # pylint: disable=wrong-import-position

LAYOUTS = ("Adam", "Nadam", "legacy.Nadam", "tf1.Adam", "Adafactor",
           "AdagradDecay", "Muon", "addons.NovoGrad", "legacy.Ftrl",
           "ScheduleFreeAdamW", "addons.LazyAdam")
STEPS = 6


def two_device_trajectory(optimizer, initial, gradients):
  """The trajectory with variable i on logical CPU i % 2, every step in a
  `tf.function`."""
  keras3 = isinstance(optimizer, keras.optimizers.Optimizer)
  variables = []
  for index, value in enumerate(initial):
    with tf.device(f"/CPU:{index % 2}"):
      variables.append((keras.Variable if keras3 else tf.Variable)(
          value, name=f"variable_{index}"))
  apply = tf.function(lambda grads: testing.apply_gradients(
      optimizer, grads, variables))
  trajectory = []
  for step in gradients:
    apply([tf.constant(g) for g in step])
    trajectory.append([np.array(keras.ops.convert_to_numpy(v))
                       for v in variables])
  return trajectory


def main():
  initial, gradients = testing.seeded_problem(STEPS, 1, 10.0,
                                              bridge_cases.SHAPES)
  report = {}
  for case, name in zip(bridge_cases.ALL_CLASSES, bridge_cases.IDS):
    if "--all" not in sys.argv and name not in LAYOUTS:
      continue
    # Adadelta's default rate, 0.001, barely moves the weights in a few
    # steps (`--all`): a do-nothing step would pass.
    rate = ({"learning_rate": 1.0} if case.declaration.class_name == "Adadelta"
            else {})
    try:
      optimizer = case.make(**rate)
      ours = two_device_trajectory(optimizer, initial, gradients)
      port = testing.transform_trajectory(case.declaration.make_port(**rate),
                                          initial, gradients)
      testing.compare_trajectories(ours, port, rtol=1e-5, atol=1e-6,
                                   actual_name="bridge",
                                   expected_name="port", initial=initial)
      report[name] = {"steps_per_device": sum(
          1 for key in optimizer._fused._steps  # pylint: disable=protected-access
          if key[0] == "tf-device")}
    except Exception as error:  # pylint: disable=broad-except
      report[name] = {"error": f"{type(error).__name__}: {error}"}
  json.dump(report, sys.stdout)


if __name__ == "__main__":
  main()
