"""Multi-process JAX with a port: 2 processes on this machine (CPU, 2
devices each) join with `jax.distributed.initialize`, shard the params
over the 4 devices of both, and train with `jaxopt_port.lamb` (whose trust
ratio is a reduction across the shards); the state is sharded like the
params. The result equals the same training in one process.

Run it as it is: it starts the two processes and the one-process reference
itself, on free ports of 127.0.0.1.
"""

import json
import os
import socket
import subprocess
import sys
import tempfile

STEPS = 20


def train(mesh):
  """The params after `STEPS` steps, their mesh layout kept, and whether
  every state leaf that mirrors a parameter has its sharding."""
  import jax  # pylint: disable=import-outside-toplevel
  import jax.numpy as jnp  # pylint: disable=import-outside-toplevel
  import jaxopt_port  # pylint: disable=import-outside-toplevel
  import numpy as np  # pylint: disable=import-outside-toplevel
  import optax  # pylint: disable=import-outside-toplevel
  from jax.sharding import NamedSharding, PartitionSpec as P  # pylint: disable=import-outside-toplevel

  rng = np.random.default_rng(0)
  x = rng.standard_normal((64, 16)).astype(np.float32)
  y = np.tanh(x @ rng.standard_normal((16, 4))).astype(np.float32)
  params = {"kernel": (rng.standard_normal((16, 4)) * 0.1).astype(np.float32),
            "bias": np.zeros(4, np.float32)}
  shardings = {"kernel": NamedSharding(mesh, P("devices", None)),
               "bias": NamedSharding(mesh, P())}
  # Every process holds the same host arrays; each device takes its part.
  params = jax.tree.map(
      lambda value, sharding: jax.make_array_from_callback(
          value.shape, sharding, lambda index: value[index]),
      params, shardings)
  transform = jaxopt_port.lamb(0.01, weight_decay=0.01)

  def loss_fn(params):
    return jnp.mean((jnp.tanh(x @ params["kernel"] + params["bias"]) - y) ** 2)

  @jax.jit
  def step(params, state):
    grads = jax.grad(loss_fn)(params)
    updates, state = transform.update(grads, state, params)
    return optax.apply_updates(params, updates), state

  with jax.set_mesh(mesh):  # jax.make_mesh's axes are Explicit.
    state = jax.jit(transform.init)(params)
    for _ in range(STEPS):
      params, state = step(params, state)
  alike = all(
      m.sharding.is_equivalent_to(shardings[key], m.ndim)
      for slot in (state.slots.momentum, state.slots.velocity)
      for key, m in slot.items())
  return params, alike


def worker(process_id, port, out):
  os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
  import jax  # pylint: disable=import-outside-toplevel
  from jax.experimental import multihost_utils  # pylint: disable=import-outside-toplevel
  jax.distributed.initialize(f"127.0.0.1:{port}", num_processes=2,
                             process_id=process_id)
  mesh = jax.make_mesh((4,), ("devices",))
  params, alike = train(mesh)
  gathered = multihost_utils.process_allgather(params, tiled=True)
  if process_id == 0:
    with open(out, "w", encoding="utf-8") as file:
      json.dump({"processes": jax.process_count(),
                 "devices": jax.device_count(),
                 "state_sharded_like_params": alike,
                 "params": {k: v.tolist() for k, v in gathered.items()}},
                file)
  jax.distributed.shutdown()


def reference(out):
  """The same training in one process, on one device."""
  import jax  # pylint: disable=import-outside-toplevel
  params, _ = train(jax.make_mesh((1,), ("devices",)))
  with open(out, "w", encoding="utf-8") as file:
    json.dump({k: jax.device_get(v).tolist() for k, v in params.items()},
              file)


def free_port():
  with socket.socket() as sock:
    sock.bind(("127.0.0.1", 0))
    return sock.getsockname()[1]


def main():
  import numpy as np  # pylint: disable=import-outside-toplevel
  with tempfile.TemporaryDirectory() as directory:
    out, single = f"{directory}/multi.json", f"{directory}/single.json"
    port = str(free_port())
    workers = [subprocess.Popen([sys.executable, __file__, "worker", str(i),
                                 port, out]) for i in range(2)]
    codes = [w.wait(timeout=600) for w in workers]
    assert codes == [0, 0], f"workers exited with {codes}"
    subprocess.run([sys.executable, __file__, "reference", single],
                   check=True, timeout=600)
    with open(out, encoding="utf-8") as file:
      multi = json.load(file)
    with open(single, encoding="utf-8") as file:
      one = json.load(file)
  assert multi["processes"] == 2 and multi["devices"] == 4
  assert multi["state_sharded_like_params"]
  difference = max(float(np.max(np.abs(np.asarray(multi["params"][k])
                                       - np.asarray(one[k]))))
                   for k in one)
  print(f"2 processes x 2 devices vs one process: max |diff| "
        f"{difference:.2e} after {STEPS} Lamb steps; state sharded like the "
        "params")
  assert difference <= 1e-6


if __name__ == "__main__":
  if len(sys.argv) > 1 and sys.argv[1] == "worker":
    worker(int(sys.argv[2]), sys.argv[3], sys.argv[4])
  elif len(sys.argv) > 1 and sys.argv[1] == "reference":
    reference(sys.argv[2])
  else:
    main()
