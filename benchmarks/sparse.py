"""Sparse steps on large embedding tables: what a step costs when a batch
touches a few rows.

    python benchmarks/sparse.py            # 1M x 64 and 10M x 32 tables
    python benchmarks/sparse.py --quick    # a 100k x 16 table, in a minute
    python benchmarks/sparse.py --smoke    # a 1k x 8 table, in one process
    python benchmarks/sparse.py --no-tf    # the JAX columns only

For each table, number of touched rows and algorithm, in the same run:
- `native`: the native tf_keras legacy optimizer applying a
  `tf.IndexedSlices` inside a `tf.function` (LazyAdam has none: TF Addons
  cannot run beside TF 2.21);
- `tf_bridge.legacy`: its bridged class, the same way;
- `jaxopt_port`: the port on a `jaxopt_port.RowSparse` gradient, jitted, params
  and state donated;
- `dense`: optax's same algorithm (FTRL: the port, optax has none) on the
  dense gradient, as JAX users without row-sparse updates run it;
- `roofline`: one jitted kernel moving the bytes the touched rows need
  (a scatter-add in place into the parameter and each slot);
- `dedup`: the duplicate rows summed (`jaxopt_port`'s `unique_rows`: a sort
  of the indices and a scatter-add of the values), which a correct step
  does before it reads a row and the roofline kernel does not need.
Times are medians of interleaved repeats; the JAX columns and the TensorFlow
pair run in a process of their own per cell (TensorFlow keeps memory of
dropped optimizers), except with `--smoke` (tests/test_benchmarks.py: every
measurement's code runs, no figure means anything), which measures every
cell in one process.
Writes `sparse.json` and the markdown table `sparse.md` into `--out`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

# algorithm: (slots, native legacy class, arguments).
ALGORITHMS = {
    "sgd-momentum": (1, "SGD", {"learning_rate": 0.01, "momentum": 0.9}),
    "adagrad": (1, "Adagrad", {"learning_rate": 0.01}),
    "ftrl": (2, "Ftrl", {"learning_rate": 0.01}),
    "lazy_adam": (2, None, {"learning_rate": 0.001}),
}
FULL = {"tables": [(1_000_000, 64), (10_000_000, 32)], "touched": [256, 4096],
        "repeats": 100, "dense_repeats": 5}
QUICK = {"tables": [(100_000, 16)], "touched": [256], "repeats": 10,
         "dense_repeats": 3}
SMOKE = {"tables": [(1_000, 8)], "touched": [16], "repeats": 2,
         "dense_repeats": 1}


def median_times(runners, repeats, warmup=3):
  """Each runner's median step time, its rounds ordered as `run.py`'s
  (`measure.time_interleaved`: every runner after every other equally
  often)."""
  from measure import time_interleaved  # pylint: disable=import-outside-toplevel
  return {name: statistics.median(times) for name, times in
          time_interleaved(runners, repeats, warmup).items()}


def problem(rows, width, touched, seed=0):
  rng = np.random.default_rng(seed)
  indices = rng.integers(0, rows, touched).astype(np.int32)
  values = rng.standard_normal((touched, width)).astype(np.float32)
  return indices, values


def jax_cell(rows, width, touched, algorithm, repeats, dense_repeats):
  import jax  # pylint: disable=import-outside-toplevel
  import jax.numpy as jnp  # pylint: disable=import-outside-toplevel
  import optax  # pylint: disable=import-outside-toplevel
  import jaxopt_port  # pylint: disable=import-outside-toplevel
  from jaxopt_port._row_sparse import unique_rows  # pylint: disable=import-outside-toplevel
  slots, _, arguments = ALGORITHMS[algorithm]
  ports = {"sgd-momentum": lambda: jaxopt_port.legacy.sgd(**arguments),
           "adagrad": lambda: jaxopt_port.legacy.adagrad(**arguments),
           "ftrl": lambda: jaxopt_port.legacy.ftrl(**arguments),
           "lazy_adam": lambda: jaxopt_port.addons.lazy_adam(**arguments)}
  dense = {"sgd-momentum": lambda: optax.sgd(0.01, momentum=0.9),
           "adagrad": lambda: optax.adagrad(0.01),
           "ftrl": lambda: jaxopt_port.legacy.ftrl(**arguments),
           "lazy_adam": lambda: optax.adam(0.001)}
  indices, values = problem(rows, width, touched)
  indices, values = jnp.asarray(indices), jnp.asarray(values)
  times = {}

  def transform_runner(transform, sparse):
    params = {"table": jnp.zeros((rows, width), jnp.float32)}
    grads = {"table": jaxopt_port.RowSparse(indices, values, rows)
             if sparse else jaxopt_port.RowSparse(indices, values,
                                                  rows).todense()}
    state = transform.init(params)

    def step(params, state, grads):
      updates, state = transform.update(grads, state, params)
      return jaxopt_port.apply_updates(params, updates), state

    step = jax.jit(step, donate_argnums=(0, 1))
    box = [params, state]

    def run():
      box[0], box[1] = step(box[0], box[1], grads)
      jax.block_until_ready(box[0])
    return run

  def roofline_runner():
    arrays = [jnp.zeros((rows, width), jnp.float32) for _ in range(1 + slots)]

    def kernel(arrays, indices, values):
      return [a.at[indices].add(values, mode="drop") for a in arrays]

    kernel = jax.jit(kernel, donate_argnums=0)
    box = [arrays]

    def run():
      box[0] = kernel(box[0], indices, values)
      jax.block_until_ready(box[0])
    return run

  def dedup_runner():
    dedup = jax.jit(lambda indices, values: unique_rows(
        jaxopt_port.RowSparse(indices, values, rows)))

    def run():
      jax.block_until_ready(dedup(indices, values))
    return run

  # The dense step on a big table is slow (up to 2 s): fewer repeats, timed
  # alone.
  times.update(median_times({
      "jaxopt_port": transform_runner(ports[algorithm](), True),
      "roofline": roofline_runner(), "dedup": dedup_runner()}, repeats))
  times.update(median_times(
      {"dense": transform_runner(dense[algorithm](), False)},
      dense_repeats, warmup=1))
  return times


def tf_cell(rows, width, touched, algorithm, repeats):
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  import tf_keras  # pylint: disable=import-outside-toplevel
  import tf_bridge.legacy  # pylint: disable=import-outside-toplevel
  _, native_name, arguments = ALGORITHMS[algorithm]
  indices, values = problem(rows, width, touched)
  indices, values = tf.constant(indices), tf.constant(values)
  makers = {"tf_bridge.legacy": (
      lambda: tf_bridge.legacy.addons.LazyAdam(**arguments)
      if native_name is None
      else getattr(tf_bridge.legacy, native_name)(**arguments))}
  if native_name is not None:
    makers["native"] = lambda: getattr(tf_keras.optimizers.legacy,
                                       native_name)(**arguments)
  runners = {}
  for name, make in makers.items():
    variable = tf.Variable(tf.zeros((rows, width)))
    optimizer = make()

    @tf.function
    def step(variable=variable, optimizer=optimizer):
      optimizer.apply_gradients([(tf.IndexedSlices(
          values, indices, tf.constant([rows, width])), variable)])

    runners[name] = step
  return median_times(runners, repeats)


def cells_in_process(tasks):
  """The times of each task (one side of a cell), measured in one fresh
  process."""
  completed = subprocess.run(
      [sys.executable, os.path.abspath(__file__), "--worker",
       json.dumps(tasks)], capture_output=True, text=True, check=False,
      env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
  if completed.returncode != 0:
    raise RuntimeError(completed.stderr[-3000:])
  return json.loads(completed.stdout.strip().splitlines()[-1])


def measured(tasks, one_process):
  """Each task's times in turn, each task in a process of its own or, with
  `one_process`, all of them in one."""
  for batch in [tasks] if one_process else [[task] for task in tasks]:
    yield from cells_in_process(batch)


def markdown(records):
  lines = [
      "| table | touched | algorithm | native | tf_bridge.legacy | bridge / "
      "native | jaxopt_port | roofline | port / roofline | dedup | port / "
      "(roofline + dedup) | dense | dense / port |",
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]

  def ms(value):
    return "-" if value is None else f"{value * 1e3:.3f} ms"

  def ratio(a, b):
    return "-" if a is None or b is None else f"{a / b:.2f}x"

  for r in records:
    t = r["times"]
    floor = (t["roofline"] + t["dedup"] if "roofline" in t and "dedup" in t
             else None)
    lines.append(
        f"| {r['rows']:,} x {r['width']} | {r['touched']} | {r['algorithm']} "
        f"| {ms(t.get('native'))} | {ms(t.get('tf_bridge.legacy'))} | "
        f"{ratio(t.get('tf_bridge.legacy'), t.get('native'))} | "
        f"{ms(t.get('jaxopt_port'))} | {ms(t.get('roofline'))} | "
        f"{ratio(t.get('jaxopt_port'), t.get('roofline'))} | "
        f"{ms(t.get('dedup'))} | {ratio(t.get('jaxopt_port'), floor)} | "
        f"{ms(t.get('dense'))} | {ratio(t.get('dense'), t.get('jaxopt_port'))} |")
  return "\n".join(lines)


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--quick", action="store_true")
  parser.add_argument("--smoke", action="store_true")
  parser.add_argument("--no-tf", action="store_true")
  parser.add_argument("--out", default=None)
  parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
  args = parser.parse_args(argv)
  if args.worker:
    times = []
    for task in json.loads(args.worker):
      kind = task.pop("kind")
      times.append((tf_cell if kind == "tf" else jax_cell)(**task))
    print(json.dumps(times))
    return 0
  settings = SMOKE if args.smoke else QUICK if args.quick else FULL
  out = args.out or os.path.join(
      HERE, "quick" if args.quick or args.smoke else ".")
  os.makedirs(out, exist_ok=True)
  cells = [{"rows": rows, "width": width, "touched": touched,
            "algorithm": algorithm, "repeats": settings["repeats"]}
           for rows, width in settings["tables"]
           for touched in settings["touched"] for algorithm in ALGORITHMS]
  sides = [{"kind": "jax", "dense_repeats": settings["dense_repeats"]}]
  if not args.no_tf:
    sides.append({"kind": "tf"})
  times = measured([{**side, **cell} for cell in cells for side in sides],
                   args.smoke)
  records = []
  for cell in cells:
    records.append({**cell, "dense_repeats": settings["dense_repeats"],
                    "times": {}})
    for _ in sides:
      records[-1]["times"].update(next(times))
    print(markdown(records[-1:]).splitlines()[-1], flush=True)
  with open(os.path.join(out, "sparse.json"), "w", encoding="utf-8") as f:
    json.dump({"records": records}, f, indent=1)
  with open(os.path.join(out, "sparse.md"), "w", encoding="utf-8") as f:
    f.write(markdown(records) + "\n")
  print(markdown(records))
  return 0


if __name__ == "__main__":
  sys.exit(main())
