"""A recommender-style embedding trained in a plain JAX loop with TF Addons'
LazyAdam (`jaxopt_port.addons.lazy_adam`) on row-sparse gradients.

The loss reads a few rows of a large table; `jax.grad` with respect to the
looked-up rows (not the table) gives their gradients, and
`jaxopt_port.RowSparse.from_lookup` turns them into the table's gradient.
LazyAdam then reads and writes only those rows of the table and of its two
moments, in place (params and state donated), so a step costs the touched
rows whatever the table's size; the rows no batch touched keep their values
and their moments bit for bit.

    python examples/embedding_lazy_adam.py
"""

import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxopt_port

NUM_ROWS, WIDTH, BATCH, STEPS = 1_000_000, 32, 128, 200


def main():
  rng = np.random.default_rng(0)
  # Users (rows 0-999) and items (rows 1000-2999) share the table; the
  # rating is a user row times an item row, weighted by a dense readout.
  params = {
      "table": jnp.asarray(rng.normal(0, 0.3, (NUM_ROWS, WIDTH)), jnp.float32),
      "readout": jnp.ones((WIDTH,), jnp.float32),
  }
  true_users = rng.normal(0, 1, (1000, 4))
  true_items = rng.normal(0, 1, (2000, 4))
  optimizer = jaxopt_port.addons.lazy_adam(learning_rate=0.02)
  state = optimizer.init(params)
  initial_moment = np.asarray(state.slots.m["table"][5000])

  def loss_of_rows(rows, readout, target):
    users, items = rows[:, 0], rows[:, 1]
    prediction = jnp.sum(users * items * readout, axis=-1)
    return jnp.mean((prediction - target) ** 2)

  def step(params, state, ids, target):
    rows = params["table"][ids]  # (BATCH, 2, WIDTH): only these rows.
    loss, (row_grads, readout_grad) = jax.value_and_grad(
        loss_of_rows, argnums=(0, 1))(rows, params["readout"], target)
    grads = {"table": jaxopt_port.RowSparse.from_lookup(ids, row_grads,
                                                        NUM_ROWS),
             "readout": readout_grad}
    updates, state = optimizer.update(grads, state, params)
    return jaxopt_port.apply_updates(params, updates), state, loss

  step = jax.jit(step, donate_argnums=(0, 1))
  losses = []
  start = None
  for index in range(STEPS):
    users = rng.integers(0, 1000, BATCH)
    items = rng.integers(0, 2000, BATCH)  # Rows 3000+ are never used.
    ids = jnp.asarray(np.stack([users, 1000 + items], axis=1), jnp.int32)
    target = jnp.asarray(np.sum(true_users[users] * true_items[items], -1),
                         jnp.float32)
    params, state, loss = step(params, state, ids, target)
    losses.append(float(loss))
    if index == 0:
      start = time.perf_counter()
  per_step = (time.perf_counter() - start) / (STEPS - 1) * 1e3
  untouched_moment = np.asarray(state.slots.m["table"][5000])
  assert np.array_equal(untouched_moment, initial_moment)
  assert np.mean(losses[-20:]) < np.mean(losses[:20])
  print(f"loss {np.mean(losses[:20]):.4f} -> {np.mean(losses[-20:]):.4f}; "
        f"{per_step:.2f} ms per step on a {NUM_ROWS:,} x {WIDTH} table; "
        "untouched rows and their moments unchanged")


if __name__ == "__main__":
  main()
