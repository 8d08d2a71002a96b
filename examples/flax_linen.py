"""A port in a Flax linen `TrainState` loop, checkpointed with orbax and
restored onto an abstract target built by `jax.eval_shape` (the port's
`init` on abstract params), then continued: bit-identical to the run that
was never interrupted."""

import tempfile

import jax
import jax.numpy as jnp
import jaxopt_port
import numpy as np
import optax
import orbax.checkpoint as ocp
from flax import linen as nn
from flax.training import train_state


class MLP(nn.Module):

  @nn.compact
  def __call__(self, x):
    return nn.Dense(1)(jnp.tanh(nn.Dense(32)(x)))


def create_state(transform):
  model = MLP()
  params = model.init(jax.random.PRNGKey(0), jnp.zeros((1, 8)))["params"]
  return train_state.TrainState.create(apply_fn=model.apply, params=params,
                                       tx=transform)


def loss_fn(params, apply_fn, x, y):
  return jnp.mean((apply_fn({"params": params}, x) - y) ** 2)


@jax.jit
def train_step(state, x, y):
  grads = jax.grad(loss_fn)(state.params, state.apply_fn, x, y)
  return state.apply_gradients(grads=grads)


def train(state, x, y, steps, start=0):
  for step in range(start, start + steps):
    batch = slice((step * 32) % 256, (step * 32) % 256 + 32)
    state = train_step(state, x[batch], y[batch])
  return state


def main(steps=100):
  rng = np.random.default_rng(0)
  x = rng.standard_normal((256, 8)).astype(np.float32)
  y = np.sin(x @ rng.standard_normal((8, 1))).astype(np.float32)
  # Keras's Nadam with Keras's gradient accumulation, chained with optax.
  transform = optax.chain(
      optax.clip_by_global_norm(1.0),
      jaxopt_port.nadam(3e-3, gradient_accumulation_steps=2))

  state = create_state(transform)
  first = float(loss_fn(state.params, state.apply_fn, x, y))
  state = train(state, x, y, steps)

  with tempfile.TemporaryDirectory() as directory:
    checkpointer = ocp.StandardCheckpointer()
    checkpointer.save(f"{directory}/step", state)
    checkpointer.wait_until_finished()
    abstract = jax.eval_shape(lambda: create_state(transform))
    restored = checkpointer.restore(f"{directory}/step", abstract)

  def contents(state):
    return state.step, state.params, state.opt_state

  jax.tree.map(np.testing.assert_array_equal, contents(restored),
               contents(state))
  assert int(restored.opt_state[1].iterations) == steps
  continued = train(state, x, y, steps, start=steps)
  resumed = train(restored, x, y, steps, start=steps)
  jax.tree.map(np.testing.assert_array_equal, contents(resumed),
               contents(continued))

  final = float(loss_fn(continued.params, state.apply_fn, x, y))
  print(f"loss {first:.4f} -> {final:.4f}; restored onto an abstract target "
        "and resumed: bit-identical to the uninterrupted run")
  assert final < 0.5 * first


if __name__ == "__main__":
  main()
