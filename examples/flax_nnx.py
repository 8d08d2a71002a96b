"""A port in Flax NNX: `nnx.Optimizer(model, jaxopt_port.adamw(...),
wrt=nnx.Param)` trains an MLP; model and optimizer state go to an orbax
checkpoint and are restored onto an abstract target (`nnx.eval_shape`, which
runs the port's `init` on abstract params), and training continues exactly
where the uninterrupted run goes."""

import tempfile

import jax
import jax.numpy as jnp
import jaxopt_port
import numpy as np
import orbax.checkpoint as ocp
from flax import nnx


class MLP(nnx.Module):

  def __init__(self, rngs: nnx.Rngs):
    self.hidden = nnx.Linear(8, 32, rngs=rngs)
    self.out = nnx.Linear(32, 1, rngs=rngs)

  def __call__(self, x):
    return self.out(jnp.tanh(self.hidden(x)))


def make():
  """The model and its optimizer (Keras's AdamW with Keras's EMA)."""
  model = MLP(nnx.Rngs(0))
  transform = jaxopt_port.adamw(3e-3, weight_decay=1e-4, use_ema=True)
  return model, nnx.Optimizer(model, transform, wrt=nnx.Param)


def loss_fn(model, x, y):
  return jnp.mean((model(x) - y) ** 2)


@nnx.jit
def train_step(model, optimizer, x, y):
  loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
  optimizer.update(model, grads)
  return loss


def train(model, optimizer, x, y, steps, start=0):
  for step in range(start, start + steps):
    batch = slice((step * 32) % 256, (step * 32) % 256 + 32)
    train_step(model, optimizer, x[batch], y[batch])


def state_of(model, optimizer):
  return {"model": nnx.state(model), "optimizer": nnx.state(optimizer)}


def main(steps=100):
  rng = np.random.default_rng(0)
  x = rng.standard_normal((256, 8)).astype(np.float32)
  y = np.sin(x @ rng.standard_normal((8, 1))).astype(np.float32)

  model, optimizer = make()
  first = float(loss_fn(model, x, y))
  train(model, optimizer, x, y, steps)
  saved = state_of(model, optimizer)

  with tempfile.TemporaryDirectory() as directory:
    checkpointer = ocp.StandardCheckpointer()
    checkpointer.save(f"{directory}/step", saved)
    checkpointer.wait_until_finished()
    # The restore target: the optimizer's state built from abstract params.
    abstract = state_of(*nnx.eval_shape(make))
    restored = checkpointer.restore(f"{directory}/step", abstract)

  jax.tree.map(np.testing.assert_array_equal, restored, saved)
  resumed_model, resumed_optimizer = make()
  nnx.update(resumed_model, restored["model"])
  nnx.update(resumed_optimizer, restored["optimizer"])
  train(model, optimizer, x, y, steps, start=steps)
  train(resumed_model, resumed_optimizer, x, y, steps, start=steps)
  jax.tree.map(np.testing.assert_array_equal,
               state_of(resumed_model, resumed_optimizer),
               state_of(model, optimizer))

  final = float(loss_fn(model, x, y))
  print(f"loss {first:.4f} -> {final:.4f}; restored onto an abstract target "
        "and resumed: bit-identical to the uninterrupted run")
  assert final < 0.5 * first


if __name__ == "__main__":
  main()
