"""Write an optimizer once, as an optax transform, and get its Keras 3 and
OptimizerV2 classes: momentum with bias correction (an EMA of the gradients,
stepping by the bias-corrected average, as in Adam's first moment).

    python examples/custom_optimizer.py [--plot PATH]

checks the classes against the transform with `tf_bridge.testing.
assert_parity`, trains a Keras model with them, and with `--plot` draws the
optimizer's path against plain SGD's on a narrow valley.
"""

import argparse
import os
from typing import Any, NamedTuple

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
# Without TensorFlow's start-up lines (harmless: see the README).
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

# pylint: disable=wrong-import-position
import jax
import jax.numpy as jnp
import optax

import tf_bridge
import tf_bridge.legacy
from tf_bridge import testing


class BiasCorrectedMomentumState(NamedTuple):
  count: jax.Array  # Steps taken, int32.
  momentum: Any  # Like the params.


def bias_corrected_momentum(learning_rate: float = 0.01,
                            momentum: float = 0.9
                            ) -> optax.GradientTransformation:
  """Momentum with bias correction.

      m_t = momentum * m_{t-1} + (1 - momentum) * g_t
      update = -learning_rate * m_t / (1 - momentum ** t)

  Args:
    learning_rate: The step size (a float; the Keras classes feed Keras's
      current learning rate here every step).
    momentum: The EMA's decay, in [0, 1).
  """
  def init_fn(params):
    return BiasCorrectedMomentumState(jnp.zeros([], jnp.int32),
                                      optax.tree.zeros_like(params))

  def update_fn(grads, state, params=None):
    del params
    count = state.count + 1
    new_momentum = jax.tree.map(
        lambda m, g: momentum * m + (1 - momentum) * g, state.momentum, grads)
    correction = 1 - momentum ** count.astype(jnp.float32)
    updates = jax.tree.map(lambda m: -learning_rate * m / correction,
                           new_momentum)
    return updates, BiasCorrectedMomentumState(count, new_momentum)

  return optax.GradientTransformation(init_fn, update_fn)


# One line per Keras generation.
BiasCorrectedMomentum = tf_bridge.keras_optimizer(bias_corrected_momentum)
LegacyBiasCorrectedMomentum = tf_bridge.legacy.keras_optimizer(
    bias_corrected_momentum, name="LegacyBiasCorrectedMomentum")


def train_a_keras_model() -> float:
  import keras  # pylint: disable=import-outside-toplevel
  import numpy as np  # pylint: disable=import-outside-toplevel
  rng = np.random.default_rng(0)
  x = rng.standard_normal((256, 4)).astype(np.float32)
  y = x @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32)
  model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
  model.compile(optimizer=BiasCorrectedMomentum(learning_rate=0.05),
                loss="mse")
  history = model.fit(x, y, batch_size=32, epochs=10, verbose=0)
  return history.history["loss"][-1]


def valley_paths(steps: int = 60):
  """Both optimizers' paths on f(x, y) = x**2 / 20 + 2 * y**2 from (-4, 1)."""
  def loss(p):
    return p[0] ** 2 / 20 + 2 * p[1] ** 2
  paths = {}
  for label, transform in (
      ("SGD (lr 0.2)", optax.sgd(0.2)),
      ("bias-corrected momentum (lr 0.2, 0.9)",
       bias_corrected_momentum(0.2, 0.9))):
    point, path = jnp.array([-4.0, 1.0]), []
    state = transform.init(point)
    for _ in range(steps):
      path.append(point)
      updates, state = transform.update(jax.grad(loss)(point), state, point)
      point = optax.apply_updates(point, updates)
    paths[label] = jnp.stack(path)
  return paths


def plot(path: str) -> None:
  import matplotlib  # pylint: disable=import-outside-toplevel
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel
  import numpy as np  # pylint: disable=import-outside-toplevel
  xs, ys = np.meshgrid(np.linspace(-4.5, 1, 200), np.linspace(-1.3, 1.3, 200))
  figure, axes = plt.subplots(figsize=(7, 3.5))
  axes.contour(xs, ys, xs ** 2 / 20 + 2 * ys ** 2, levels=15, cmap="Greys")
  for label, points in valley_paths().items():
    axes.plot(points[:, 0], points[:, 1], marker=".", label=label)
  axes.set(title="60 steps on x**2/20 + 2*y**2", xlabel="x", ylabel="y")
  axes.legend(fontsize=8)
  figure.tight_layout()
  figure.savefig(path, dpi=100)
  plt.close(figure)


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--plot", help="write the valley plot (PNG) here")
  args = parser.parse_args(argv)
  # The Keras classes compute what the transform computes, step by step.
  testing.assert_parity(bias_corrected_momentum(0.1, 0.8),
                        BiasCorrectedMomentum(0.1, momentum=0.8), steps=50)
  testing.assert_parity(bias_corrected_momentum(0.1, 0.8),
                        LegacyBiasCorrectedMomentum(0.1, momentum=0.8),
                        steps=50)
  loss = train_a_keras_model()
  print(f"parity checked in both Keras generations; Keras model loss {loss:.2e}")
  assert loss < 1e-2
  if args.plot:
    plot(args.plot)
    print(f"plot written to {args.plot}")


if __name__ == "__main__":
  main()
