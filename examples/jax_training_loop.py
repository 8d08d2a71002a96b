"""A JAX training loop with the ports composed with optax: gradient
clipping, a Keras learning-rate schedule, and gradient accumulation with
`optax.MultiSteps`. Trains a small MLP on a seeded regression problem."""

import jax
import jax.numpy as jnp
import jaxopt_port
import numpy as np
import optax


def mlp(params, x):
  hidden = jnp.tanh(x @ params["hidden"]["kernel"] + params["hidden"]["bias"])
  return hidden @ params["out"]["kernel"] + params["out"]["bias"]


def main(steps=200):
  rng = np.random.default_rng(0)
  x = rng.standard_normal((256, 8)).astype(np.float32)
  y = np.sin(x @ rng.standard_normal((8, 1))).astype(np.float32)
  params = {
      "hidden": {"kernel": jnp.asarray(rng.standard_normal((8, 32)) * 0.3,
                                       jnp.float32),
                 "bias": jnp.zeros(32)},
      "out": {"kernel": jnp.asarray(rng.standard_normal((32, 1)) * 0.3,
                                    jnp.float32),
              "bias": jnp.zeros(1)}}

  # Keras's CosineDecay, as a function of the step count.
  schedule = jaxopt_port.schedules.CosineDecay(
      initial_learning_rate=3e-3, decay_steps=steps)
  transform = optax.MultiSteps(
      optax.chain(optax.clip_by_global_norm(1.0),
                  jaxopt_port.adamw(schedule, weight_decay=1e-4)),
      every_k_schedule=2)
  state = transform.init(params)

  def loss_fn(params, x, y):
    return jnp.mean((mlp(params, x) - y) ** 2)

  @jax.jit
  def train_step(params, state, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    updates, state = transform.update(grads, state, params)
    return optax.apply_updates(params, updates), state, loss

  first = None
  for step in range(steps):
    batch = slice((step * 32) % 256, (step * 32) % 256 + 32)
    params, state, loss = train_step(params, state, x[batch], y[batch])
    first = float(loss) if first is None else first
  final = float(loss_fn(params, x, y))
  print(f"loss {first:.4f} -> {final:.4f}")
  assert final < 0.5 * first
  return final


if __name__ == "__main__":
  main()
