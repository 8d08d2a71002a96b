"""A training step with a bridged optimizer, saved as a SavedModel, trains
where neither JAX nor this project can be imported (the step is one
`XlaCallModule` op in the graph), equal to the saving process. Keras 3's
`tf_bridge.Adam` needs no Keras there at all; tf_keras's
`tf_bridge.legacy.Adam` needs tf_keras, as a native OptimizerV2 does."""

import json
import subprocess
import sys

import keras
import numpy as np
import tensorflow as tf

import tf_bridge
import tf_bridge.legacy
from tf_bridge import testing

STEPS = 3
RNG = np.random.default_rng(0)
X = RNG.standard_normal((8, 2)).astype(np.float32)
Y = RNG.standard_normal((8, 1)).astype(np.float32)

LOADER = """
import json, sys
# This process cannot import JAX, the project, or Keras 3.
for name in ("jax", "jaxlib", "jaxopt_port", "tf_bridge", "keras"):
  sys.modules[name] = None
import numpy as np
import tensorflow as tf
x, y = (np.asarray(a, np.float32) for a in json.loads(sys.argv[2]))
trajectories = {}
for kind in ("keras3", "legacy"):
  trainer = tf.saved_model.load(f"{sys.argv[1]}/{kind}")
  trajectory = []
  for _ in range(int(sys.argv[3])):
    trainer.train(x, y)
    trajectory.append([trainer.w.numpy().tolist(), trainer.b.numpy().tolist()])
  trajectories[kind] = trajectory
assert "jax" not in [m for m in sys.modules if sys.modules[m] is not None]
print(json.dumps(trajectories))
"""


class Trainer(tf.Module):
  """A linear model's training step, with a bridged optimizer."""

  def __init__(self, kind):
    super().__init__()
    variable = keras.Variable if kind == "keras3" else tf.Variable
    self.w = variable(np.ones((2, 1), np.float32))
    self.b = variable(np.zeros(1, np.float32))
    self.kind = kind
    self.optimizer = (tf_bridge.Adam if kind == "keras3"
                      else tf_bridge.legacy.Adam)(0.1)

  @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32),
                                tf.TensorSpec([None, 1], tf.float32)])
  def train(self, x, y):
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean((tf.matmul(x, self.w) + self.b - y) ** 2)
    variables = [self.w, self.b]
    grads = tape.gradient(loss, variables)
    if self.kind == "keras3":
      self.optimizer.apply(grads, variables)
    else:
      self.optimizer.apply_gradients(zip(grads, variables))
    return loss


def test_a_saved_training_step_trains_without_jax_or_the_project(tmp_path):
  expected, initial = {}, {}
  for kind in ("keras3", "legacy"):
    trainer = Trainer(kind)
    trainer.train(X, Y)  # Builds the optimizer's variables: they are saved.
    tf.saved_model.save(trainer, str(tmp_path / kind))
    initial[kind] = [np.asarray(trainer.w), np.asarray(trainer.b)]
    expected[kind] = []
    for _ in range(STEPS):
      trainer.train(X, Y)
      expected[kind].append([np.asarray(trainer.w), np.asarray(trainer.b)])
  result = subprocess.run(
      [sys.executable, "-c", LOADER, str(tmp_path),
       json.dumps([X.tolist(), Y.tolist()]), str(STEPS)],
      capture_output=True, text=True, timeout=600, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  loaded = json.loads(result.stdout.strip().splitlines()[-1])
  for kind in ("keras3", "legacy"):
    testing.compare_trajectories(
        [[np.asarray(v, np.float32) for v in step] for step in loaded[kind]],
        expected[kind], rtol=1e-5, atol=1e-6, initial=initial[kind],
        actual_name=f"{kind} SavedModel without JAX",
        expected_name="the saving process")
