"""TF1 programs under `tf.compat.v1.disable_v2_behavior()` (which holds
for the process: a process of its own), each run with a native
`tf.compat.v1.train` optimizer and with its bridged twin
(`tf_bridge.legacy.tf1`), on reference variables (TF1's default there) and
on resource variables (`use_resource=True`). Prints, per variable kind and
class, as JSON: the graph's global variables (name, kind) after
`minimize`, the trainable weights after each of 6 steps, a Saver file
written by each side after 3 steps restored by the other and continued 3
steps, and, for the runs named on the command line ("reference/tf1.adam":
its kind of variable and its class), the controls: the bridged class's
steps with a 1 % larger learning rate (a mutant) and its last 3 steps
from a fresh start.

Run by tests/test_tf1_graphs.py."""

import json
import os
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # pylint: disable=wrong-import-position
import tensorflow as tf  # pylint: disable=wrong-import-position

tf.compat.v1.disable_v2_behavior()

import tf_bridge.legacy.tf1  # pylint: disable=wrong-import-position
from tf_bridge import catalog  # pylint: disable=wrong-import-position

STEPS, SAVED = 6, 3
# Arguments that give each class all its slots and shared scalars.
ARGUMENTS = {
    "tf1.gradient_descent": {"learning_rate": 0.1},
    "tf1.momentum": {"learning_rate": 0.1, "momentum": 0.9,
                     "use_nesterov": True},
    "tf1.adam": {"learning_rate": 0.1},
    "tf1.adagrad": {"learning_rate": 0.1},
    "tf1.adagrad_da": {"learning_rate": 0.1,
                       "l1_regularization_strength": 0.01,
                       "l2_regularization_strength": 0.01},
    "tf1.adadelta": {"learning_rate": 1.0},
    "tf1.rmsprop": {"learning_rate": 0.1, "momentum": 0.5, "centered": True},
    "tf1.ftrl": {"learning_rate": 0.1, "l2_shrinkage_regularization_strength":
                 0.01},
    "tf1.proximal_adagrad": {"learning_rate": 0.1,
                             "l1_regularization_strength": 0.01},
    "tf1.proximal_gradient_descent": {"learning_rate": 0.1,
                                      "l1_regularization_strength": 0.01},
}


def program(make_optimizer, resource):
  """A TF1 graph: two variables (an embedding looked up: a sparse
  gradient), a loss, `minimize` with the global step (AdagradDA's TF1 class
  takes it too)."""
  graph = tf.Graph()
  with graph.as_default():
    tf.compat.v1.set_random_seed(0)
    kernel = tf.compat.v1.get_variable(
        "dense/kernel", initializer=np.linspace(-1, 1, 6, dtype=np.float32)
        .reshape(3, 2), use_resource=resource)
    embedding = tf.compat.v1.get_variable(
        "embedding", initializer=np.linspace(0.5, -0.5, 8, dtype=np.float32)
        .reshape(4, 2), use_resource=resource)
    step = tf.compat.v1.train.get_or_create_global_step()
    inputs = tf.constant([[1.0, -2.0, 0.5], [0.3, 0.8, -1.0]])
    rows = tf.nn.embedding_lookup(embedding, tf.constant([1, 3]))
    loss = tf.reduce_sum((tf.matmul(inputs, kernel) - rows) ** 2)
    train = make_optimizer(step).minimize(loss, global_step=step)
    saver = tf.compat.v1.train.Saver()
  return graph, train, saver, [kernel, embedding]


def makers(name, scale=1.0):
  declaration = catalog.lookup(name)
  arguments = dict(ARGUMENTS[name])
  arguments["learning_rate"] *= scale
  bridged = getattr(tf_bridge.legacy.tf1, declaration.class_name)

  def native(step):
    extra = {"global_step": step} if name == "tf1.adagrad_da" else {}
    return declaration.native_class()(**arguments, **extra)

  return native, lambda step: bridged(**arguments)


def run(make, resource, steps, restore=None, save_at=None, directory=None):
  """The weights after each step; a Saver file after `save_at` steps; the
  file `restore` restored before the first."""
  graph, train, saver, weights = program(make, resource)
  trajectory, saved = [], None
  with tf.compat.v1.Session(graph=graph) as session:
    session.run(tf.compat.v1.global_variables_initializer())
    if restore is not None:
      saver.restore(session, restore)
    for index in range(steps):
      session.run(train)
      trajectory.append([w.tolist() for w in session.run(weights)])
      if save_at == index + 1:
        saved = saver.save(session, os.path.join(directory, "model.ckpt"))
    listed = sorted([v.op.name, type(v).__name__]
                    for v in graph.get_collection(
                        tf.compat.v1.GraphKeys.GLOBAL_VARIABLES))
  return trajectory, saved, listed


def runs(name, resource, controls):
  native, bridged = makers(name)
  with tempfile.TemporaryDirectory() as directory:
    sides = {}
    for side, make in (("native", native), ("bridged", bridged)):
      folder = os.path.join(directory, side)
      os.makedirs(folder)
      trajectory, saved, listed = run(make, resource, STEPS, save_at=SAVED,
                                      directory=folder)
      sides[side] = {"trajectory": trajectory, "variables": listed,
                     "saved": saved}
    for reader, writer in (("bridged", "native"), ("native", "bridged")):
      make = bridged if reader == "bridged" else native
      sides[reader]["from " + writer] = run(
          make, resource, STEPS - SAVED, restore=sides[writer]["saved"])[0]
    if controls:
      sides["bridged"]["fresh"] = run(bridged, resource, STEPS - SAVED)[0]
      sides["mutant"] = {
          "trajectory": run(makers(name, 1.01)[1], resource, STEPS)[0]}
    for side in ("native", "bridged"):
      del sides[side]["saved"]
  return sides


def main():
  print(json.dumps({
      mode: {name: runs(name, mode == "resource",
                        controls=f"{mode}/{name}" in sys.argv[1:])
             for name in ARGUMENTS}
      for mode in ("resource", "reference")}))


if __name__ == "__main__":
  sys.exit(main())
