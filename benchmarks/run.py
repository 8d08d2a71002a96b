"""Optimizer step benchmarks against a roofline kernel measured in the same run.

An optimizer step is memory-bound: Adam reads params, gradients and two
slots and writes params and slots back, 28 bytes per float32 parameter. The
reference is a jit-compiled elementwise kernel moving the same bytes; every
implementation is reported as the fraction of that kernel's bandwidth it
reaches, and against each other, all from one run on one machine.

    python benchmarks/run.py            # everything; writes benchmarks/RESULTS.md
    python benchmarks/run.py --quick    # small shapes, under 3 minutes on 2 cores

See benchmarks/README.md for what each measurement is. Without TensorFlow
(the GPU machine) the TensorFlow columns are left out.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import platform
import re
import subprocess
import sys
import time
from typing import Any, Callable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import jax  # pylint: disable=wrong-import-position
import numpy as np  # pylint: disable=wrong-import-position
import optax  # pylint: disable=wrong-import-position

import jaxopt_port  # pylint: disable=wrong-import-position

HERE = os.path.dirname(os.path.abspath(__file__))
LEARNING_RATE = 1e-3
WEIGHT_DECAY = 0.004

# Slots per parameter: a step reads params, grads and the slots and writes
# params and slots, (3 + 2 * slots) passes over the params' bytes.
SLOTS = {"sgd-momentum": 1, "adam": 2, "adamw": 2, "rmsprop": 1,
         "adagrad": 1, "lion": 1, "lamb": 2}
ALGORITHMS = list(SLOTS)

JAX_IMPLEMENTATIONS = ["roofline", "optax", "jaxopt_port", "jaxopt_port.packed"]
TF_IMPLEMENTATIONS = ["keras3", "tf_keras.legacy", "tf_bridge",
                      "tf_bridge.legacy"]


# ---------------------------------------------------------------- shapes --

def resnet50_shapes() -> list[tuple[int, ...]]:
  """Trainable parameter shapes of keras.applications.ResNet50 (1000
  classes): convolutions with biases, batch-norm gamma and beta."""
  shapes = []

  def conv(kernel, inputs, filters):
    shapes.extend([(kernel, kernel, inputs, filters), (filters,)])
    shapes.extend([(filters,), (filters,)])  # Its batch norm.

  conv(7, 3, 64)
  inputs = 64
  for width, blocks in ((64, 3), (128, 4), (256, 6), (512, 3)):
    for block in range(blocks):
      if block == 0:
        conv(1, inputs, 4 * width)  # Projection shortcut.
      conv(1, inputs, width)
      conv(3, width, width)
      conv(1, width, 4 * width)
      inputs = 4 * width
  shapes.extend([(2048, 1000), (1000,)])
  return shapes


def transformer_shapes(layers: int = 12, d_model: int = 768,
                       vocabulary: int = 50257, context: int = 1024
                       ) -> list[tuple[int, ...]]:
  """A GPT-2-small-like decoder: token and position embeddings, per layer
  layer norms, fused QKV, output projection and a 4x MLP."""
  shapes = [(vocabulary, d_model), (context, d_model)]
  for _ in range(layers):
    shapes += [(d_model,), (d_model,), (d_model, 3 * d_model), (3 * d_model,),
               (d_model, d_model), (d_model,), (d_model,), (d_model,),
               (d_model, 4 * d_model), (4 * d_model,), (4 * d_model, d_model),
               (d_model,)]
  return shapes + [(d_model,), (d_model,)]


def shape_sets(quick: bool) -> dict[str, list[tuple[int, ...]]]:
  if quick:
    return {"10x250k": [(250_000,)] * 10, "50x10k": [(10_000,)] * 50,
            "transformer-2x256": transformer_shapes(2, 256, 4096, 256)}
  return {"100x250k": [(250_000,)] * 100, "2000x10k": [(10_000,)] * 2000,
          "resnet50": resnet50_shapes(),
          "transformer-12x768": transformer_shapes()}


def _size(shapes) -> int:
  return sum(int(np.prod(shape)) for shape in shapes)


def bytes_moved(shapes, algorithm: str, itemsize: int = 4) -> int:
  return _size(shapes) * itemsize * (3 + 2 * SLOTS[algorithm])


# ---------------------------------------------------------- JAX timings --

# Each algorithm as (optax's transform, the port's), made fresh per call.
TRANSFORMS: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {
    "sgd-momentum": (lambda: optax.sgd(LEARNING_RATE, momentum=0.9),
                     lambda: jaxopt_port.sgd(LEARNING_RATE, momentum=0.9)),
    "adam": (lambda: optax.adam(LEARNING_RATE),
             lambda: jaxopt_port.adam(LEARNING_RATE)),
    "adamw": (lambda: optax.adamw(LEARNING_RATE, weight_decay=WEIGHT_DECAY),
              lambda: jaxopt_port.adamw(LEARNING_RATE,
                                        weight_decay=WEIGHT_DECAY)),
    "rmsprop": (lambda: optax.rmsprop(LEARNING_RATE),
                lambda: jaxopt_port.rmsprop(LEARNING_RATE)),
    "adagrad": (lambda: optax.adagrad(LEARNING_RATE),
                lambda: jaxopt_port.adagrad(LEARNING_RATE)),
    "lion": (lambda: optax.lion(LEARNING_RATE),
             lambda: jaxopt_port.lion(LEARNING_RATE)),
    "lamb": (lambda: optax.lamb(LEARNING_RATE),
             lambda: jaxopt_port.lamb(LEARNING_RATE)),
}


def _fresh(tree):
  """Device copies that own their buffers (donation needs distinct ones)."""
  return jax.tree.map(lambda x: jax.device_put(np.array(x)), tree)


def _params_and_grads(shapes):
  params = {f"p{i:04d}": np.full(shape, 0.1, np.float32)
            for i, shape in enumerate(shapes)}
  grads = {key: np.full(value.shape, 1e-3, np.float32)
           for key, value in params.items()}
  return params, grads


def jax_step(implementation: str, algorithm: str, shapes):
  """(step, carry, grads): `carry = step(*carry, grads)`, jitted with the
  params and state donated. None if the implementation cannot run it."""
  params, grads = _params_and_grads(shapes)
  if implementation == "roofline":
    size = _size(shapes)
    flat = np.full((size,), 0.1, np.float32)

    def roofline(p, slots, g):
      # Reads p, g and each slot, writes p and each slot: the step's bytes.
      return p + g, tuple(s + g for s in slots)
    return (jax.jit(roofline, donate_argnums=(0, 1)),
            _fresh((flat, (flat,) * SLOTS[algorithm])),
            jax.device_put(np.full((size,), 1e-3, np.float32)))
  if implementation == "jaxopt_port.packed":
    try:
      transform = jaxopt_port.packed(TRANSFORMS[algorithm][1]())
    except ValueError:
      return None  # Not elementwise (Lamb's per-layer trust ratio).
    params, grads = jaxopt_port.pack(params), jaxopt_port.pack(grads)
  else:
    make_optax, make_port = TRANSFORMS[algorithm]
    transform = (make_optax if implementation == "optax" else make_port)()

  def step(p, state, g):
    updates, state = transform.update(g, state, p)
    return optax.apply_updates(p, updates), state
  params = _fresh(params)
  return (jax.jit(step, donate_argnums=(0, 1)),
          (params, _fresh(transform.init(params))), _fresh(grads))


def time_interleaved(runners: dict[str, Callable[[], None]], repeats: int,
                     warmup: int = 2) -> dict[str, list[float]]:
  """Each runner's step times, taken round by round so that the machine's
  drifts hit every implementation alike."""
  for run in runners.values():
    for _ in range(warmup):
      run()
  times = {name: [] for name in runners}
  for _ in range(repeats):
    for name, run in runners.items():
      start = time.perf_counter()
      run()
      times[name].append(time.perf_counter() - start)
  return times


def measure_jax(shape_name, shapes, algorithm, repeats, device):
  runners, first_calls = {}, {}
  for implementation in JAX_IMPLEMENTATIONS:
    made = jax_step(implementation, algorithm, shapes)
    if made is None:
      continue
    step, carry, grads = made
    box = [carry]

    def run(step=step, box=box, grads=grads):
      box[0] = step(*box[0], grads)
      jax.block_until_ready(box[0])
    start = time.perf_counter()
    run()
    first_calls[implementation] = time.perf_counter() - start
    runners[implementation] = run
  return _records(shape_name, shapes, algorithm, device,
                  time_interleaved(runners, repeats), first_calls)


def _records(shape_name, shapes, algorithm, device, times, first_calls):
  moved = bytes_moved(shapes, algorithm)
  return [{"shape": shape_name, "parameters": _size(shapes),
           "algorithm": algorithm,
           "implementation": name, "device": device,
           "median_seconds": float(np.median(samples)),
           "min_seconds": float(np.min(samples)), "repeats": len(samples),
           "first_call_seconds": first_calls[name], "bytes_moved": moved,
           "bandwidth_gb_per_s": moved / float(np.median(samples)) / 1e9}
          for name, samples in times.items()]


# ----------------------------------------------------------- TF timings --

def tf_optimizer(implementation: str, algorithm: str):
  """A fresh optimizer, or None where the implementation has no such
  algorithm (tf_keras legacy has no AdamW, Lion or Lamb)."""
  import keras  # pylint: disable=import-outside-toplevel
  import tf_keras  # pylint: disable=import-outside-toplevel
  import tf_bridge  # pylint: disable=import-outside-toplevel
  module = {"keras3": keras.optimizers,
            "tf_keras.legacy": tf_keras.optimizers.legacy,
            "tf_bridge": tf_bridge, "tf_bridge.legacy": tf_bridge.legacy,
            }[implementation]
  class_name, arguments = {
      "sgd-momentum": ("SGD", {"momentum": 0.9}),
      "adam": ("Adam", {}), "adamw": ("AdamW", {"weight_decay": WEIGHT_DECAY}),
      "rmsprop": ("RMSprop", {}), "adagrad": ("Adagrad", {}),
      "lion": ("Lion", {}), "lamb": ("Lamb", {}),
  }[algorithm]
  if not hasattr(module, class_name):
    return None
  return getattr(module, class_name)(learning_rate=LEARNING_RATE, **arguments)


def tf_step(implementation, algorithm, variables, grads):
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  optimizer = tf_optimizer(implementation, algorithm)
  if optimizer is None:
    return None

  @tf.function
  def step():
    optimizer.apply_gradients(zip(grads, variables))
  return lambda: step()  # Returns nothing: the assignments are the work.


def tf_problem(shapes):
  """Fresh variables and constant gradients for `shapes`."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  params, grads = _params_and_grads(shapes)
  return ([tf.Variable(value) for value in params.values()],
          [tf.constant(value) for value in grads.values()])


def measure_tf(shape_name, shapes, algorithm, repeats, device):
  """Runs in a worker process (see `tf_worker_batches`)."""
  # Every implementation updates its own copy of the variables.
  runners, first_calls = {}, {}
  for implementation in TF_IMPLEMENTATIONS:
    run = tf_step(implementation, algorithm, *tf_problem(shapes))
    if run is None:
      continue
    start = time.perf_counter()
    run()
    first_calls[implementation] = time.perf_counter() - start
    runners[implementation] = run
  return _records(shape_name, shapes, algorithm, device,
                  time_interleaved(runners, repeats), first_calls)


# ------------------------------------ subprocesses: TF, memory and fit --

# A process that has run TensorFlow optimizers keeps about their state's
# size in memory after they are gone (native Keras as much as the bridge),
# so TF timings run in workers, each with at most this many parameters
# summed over its jobs. One worker per job would cost the quick run a
# minute of TensorFlow imports.
TF_WORKER_PARAMETERS = 30_000_000


def tf_worker_batches(jobs: list[dict]) -> list[list[dict]]:
  batches, size = [], TF_WORKER_PARAMETERS
  for job in jobs:
    job_size = _size(job["shapes"])
    if size + job_size > TF_WORKER_PARAMETERS:
      batches.append([])
      size = 0
    batches[-1].append(job)
    size += job_size
  return batches


def _status_mb(field: str) -> float:
  """A memory figure of this process from /proc/self/status (Linux).
  VmHWM, not getrusage's ru_maxrss: that one survives exec, so a worker
  would report its parent's peak."""
  with open("/proc/self/status", encoding="ascii") as status:
    kilobytes = re.search(rf"{field}:\s*(\d+) kB", status.read()).group(1)
  return int(kilobytes) / 1024


def _peak_rss_mb() -> float:
  return _status_mb("VmHWM")


def _reset_peak_mb() -> float:
  """Resets the peak to the current resident memory, which it returns (the
  setup's own transient peak must not hide the optimizer's)."""
  with open("/proc/self/clear_refs", "w", encoding="ascii") as clear_refs:
    clear_refs.write("5")
  return _status_mb("VmRSS")


def worker_memory(implementation, algorithm, shapes, steps) -> dict:
  """Peak resident memory of `steps` steps (first call included), and its
  rise over the process's memory once the params and gradients exist."""
  if implementation in JAX_IMPLEMENTATIONS:
    made = jax_step(implementation, algorithm, shapes)
    step, carry, grads = made
    jax.block_until_ready(carry)
    baseline = _reset_peak_mb()
    for _ in range(steps):
      carry = step(*carry, grads)
      jax.block_until_ready(carry)
  else:
    run = tf_step(implementation, algorithm, *tf_problem(shapes))
    baseline = _reset_peak_mb()
    for _ in range(steps):
      run()
  return {"baseline_mb": baseline, "peak_mb": _peak_rss_mb(),
          "optimizer_peak_mb": _peak_rss_mb() - baseline}


def cnn_model(implementation: str, samples: int):
  """A small CNN compiled with `implementation`'s Adam, and seeded synthetic
  28x28 images with labels."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  legacy = implementation in ("tf_keras.legacy", "tf_bridge.legacy")
  if legacy:
    import tf_keras as keras  # pylint: disable=import-outside-toplevel
  else:
    import keras  # pylint: disable=import-outside-toplevel
  tf.random.set_seed(0)
  keras.utils.set_random_seed(0)
  rng = np.random.default_rng(0)
  x = rng.normal(size=(samples, 28, 28, 1)).astype(np.float32)
  y = rng.integers(0, 10, size=(samples,))
  layers = keras.layers
  model = keras.Sequential([
      keras.Input((28, 28, 1)),
      layers.Conv2D(32, 3, activation="relu"), layers.MaxPooling2D(),
      layers.Conv2D(64, 3, activation="relu"), layers.MaxPooling2D(),
      layers.Flatten(), layers.Dense(128, activation="relu"),
      layers.Dense(10)])
  model.compile(optimizer=tf_optimizer(implementation, "adam"),
                loss=keras.losses.SparseCategoricalCrossentropy(
                    from_logits=True))
  return model, x, y


FIT_BATCH = 32


def measure_fit(samples: int, rounds: int) -> dict:
  """`model.fit` steps per second with native and bridged Adam: one epoch
  of each model in turn, `rounds` times; the median over the epochs after
  the first (which compiles)."""
  models = {name: cnn_model(name, samples) for name in TF_IMPLEMENTATIONS}
  epochs = {name: [] for name in models}
  losses = {}
  for _ in range(rounds):
    for name, (model, x, y) in models.items():
      start = time.perf_counter()
      history = model.fit(x, y, batch_size=FIT_BATCH, epochs=1, verbose=0)
      epochs[name].append(time.perf_counter() - start)
      losses[name] = float(history.history["loss"][-1])
  steps = -(-samples // FIT_BATCH)
  return {name: {"steps_per_second": steps / float(np.median(times[1:])),
                 "epoch_steps_per_second": [steps / t for t in times[1:]],
                 "first_epoch_seconds": times[0],
                 "final_loss": losses[name]}
          for name, times in epochs.items()}


def worker_fit_memory(implementation: str, samples: int) -> dict:
  """Peak resident memory of a two-epoch training run."""
  model, x, y = cnn_model(implementation, samples)
  model.fit(x, y, batch_size=FIT_BATCH, epochs=2, verbose=0)
  return {"peak_mb": _peak_rss_mb()}


def in_subprocess(task: dict):
  """Runs `task` in a fresh interpreter: peak memory is per process, and
  nothing a measurement leaves behind reaches the next one."""
  output = subprocess.run(
      [sys.executable, os.path.abspath(__file__), "--worker",
       json.dumps(task)], capture_output=True, text=True, check=False)
  lines = [line for line in output.stdout.splitlines()
           if line.startswith(("{", "["))]
  if output.returncode != 0 or not lines:
    raise RuntimeError(f"benchmark worker {task} failed:\n{output.stderr}")
  return json.loads(lines[-1])


def run_worker(task: dict) -> None:
  if task["kind"] == "tf-timing":
    result = [record for job in task["jobs"] for record in measure_tf(
        job["shape_name"], [tuple(s) for s in job["shapes"]],
        job["algorithm"], task["repeats"], task["device"])]
  elif task["kind"] == "memory":
    result = worker_memory(task["implementation"], task["algorithm"],
                           [tuple(s) for s in task["shapes"]], task["steps"])
  else:
    result = worker_fit_memory(task["implementation"], task["samples"])
  print(json.dumps(result))


# --------------------------------------------------------------- report --

def device_name() -> str:
  device = jax.devices()[0]
  if device.platform == "cpu":
    model = platform.processor() or "CPU"
    try:
      with open("/proc/cpuinfo", encoding="ascii") as cpuinfo:
        model = re.search(r"model name\s*:\s*(.*)", cpuinfo.read()).group(1)
    except (OSError, AttributeError):
      pass
    return f"cpu: {model}, {os.cpu_count()} cores"
  return f"{device.platform}: {device.device_kind}"


def with_roofline_fractions(records: list[dict]) -> list[dict]:
  roofline = {(r["shape"], r["algorithm"]): r["median_seconds"]
              for r in records if r["implementation"] == "roofline"}
  for record in records:
    reference = roofline.get((record["shape"], record["algorithm"]))
    if reference is not None and "median_seconds" in record:
      record["roofline_fraction"] = reference / record["median_seconds"]
  return records


def _cell(record: dict | None) -> str:
  if record is None:
    return "-"
  return (f"{record['median_seconds'] * 1e3:.1f} ms "
          f"({100 * record['roofline_fraction']:.0f}%)")


def _ratio(by_key, shape, algorithm, numerator, denominator,
           statistic: str = "median_seconds") -> float | None:
  top = by_key.get((shape, algorithm, numerator))
  bottom = by_key.get((shape, algorithm, denominator))
  if top is None or bottom is None:
    return None
  return top[statistic] / bottom[statistic]


TARGETS = [  # (label, shapes, algorithms, numerator, denominator, bound)
    ("tf_bridge / keras3 (Adam, 100x250k)", ["100x250k"], ["adam"],
     "tf_bridge", "keras3", 0.75),
    ("tf_bridge / tf_keras.legacy (Adam, 100x250k)", ["100x250k"], ["adam"],
     "tf_bridge", "tf_keras.legacy", 0.75),
    ("tf_bridge / keras3 (Adam, 2000x10k)", ["2000x10k"], ["adam"],
     "tf_bridge", "keras3", 0.5),
    ("tf_bridge / tf_keras.legacy (Adam, 2000x10k)", ["2000x10k"], ["adam"],
     "tf_bridge", "tf_keras.legacy", 0.5),
    ("jaxopt_port / optax (every algorithm and shape)", None, None,
     "jaxopt_port", "optax", 1.05),
]


def target_lines(records: list[dict], fits: dict) -> list[str]:
  by_key = {(r["shape"], r["algorithm"], r["implementation"]): r
            for r in records}
  shapes = sorted({r["shape"] for r in records})
  lines = []
  for label, target_shapes, algorithms, top, bottom, bound in TARGETS:
    ratios = [(s, a, _ratio(by_key, s, a, top, bottom))
              for s in (target_shapes or shapes)
              for a in (algorithms or ALGORITHMS)]
    ratios = [(s, a, r) for s, a, r in ratios if r is not None]
    if not ratios:
      continue
    worst = max(ratios, key=lambda item: item[2])
    status = "met" if worst[2] <= bound else "MISSED"
    lines.append(f"- {label} <= {bound}: {status}, worst {worst[2]:.2f} "
                 f"({worst[0]}, {worst[1]})")
  packed = [r for r in records if r["implementation"] == "jaxopt_port.packed"]
  if packed:
    worst = min(packed, key=lambda r: r["roofline_fraction"])
    status = "met" if worst["roofline_fraction"] >= 0.8 else "MISSED"
    lines.append(f"- jaxopt_port.packed >= 80% of roofline bandwidth: "
                 f"{status}, worst {100 * worst['roofline_fraction']:.0f}% "
                 f"({worst['shape']}, {worst['algorithm']})")
  for native, bridged in (("keras3", "tf_bridge"),
                          ("tf_keras.legacy", "tf_bridge.legacy")):
    if native in fits and bridged in fits:
      speed = (fits[bridged]["steps_per_second"]
               / fits[native]["steps_per_second"])
      lines.append(f"- model.fit steps/s {bridged} / {native} >= 1: "
                   f"{'met' if speed >= 1 else 'MISSED'}, {speed:.2f}")
      if "peak_mb" not in fits[native]:
        continue  # --quick measures no training run's memory.
      peak = fits[bridged]["peak_mb"] / fits[native]["peak_mb"]
      lines.append(f"- peak memory of the training run {bridged} / {native} "
                   f"<= 1.1: {'met' if peak <= 1.1 else 'MISSED'}, "
                   f"{peak:.2f}")
  return lines


def markdown(records, memory, fits, settings) -> str:
  by_key = {(r["shape"], r["algorithm"], r["implementation"]): r
            for r in records}
  device = records[0]["device"] if records else device_name()
  shapes = list(dict.fromkeys(r["shape"] for r in records))
  implementations = [i for i in JAX_IMPLEMENTATIONS + TF_IMPLEMENTATIONS
                     if any(r["implementation"] == i for r in records)]
  out = [f"### {device}", "",
         f"Run of {settings['date']} ({settings['mode']}; jax "
         f"{settings['jax']}, optax {settings['optax']}"
         + (f", tensorflow {settings['tensorflow']}"
            if settings.get("tensorflow") else "") + "). Median step time "
         f"of {settings['repeats']} interleaved repeats after 2 warm-up "
         "steps, and in parentheses the fraction of the roofline kernel's "
         "bandwidth (roofline time / step time).", "",
         "Targets:", "", *target_lines(records, fits), ""]
  for shape in shapes:
    size = next(r["parameters"] for r in records if r["shape"] == shape)
    out += [f"#### {shape} ({size / 1e6:.1f}M parameters)", "",
            "| algorithm | " + " | ".join(implementations) + " |",
            "|---" * (len(implementations) + 1) + "|"]
    for algorithm in ALGORITHMS:
      cells = [_cell(by_key.get((shape, algorithm, i)))
               for i in implementations]
      if any(cell != "-" for cell in cells):
        out.append(f"| {algorithm} | " + " | ".join(cells) + " |")
    out.append("")
  out += ["#### Ratios (same run; lower is faster)", "",
          "Medians, and in parentheses the ratio of the fastest repeats: "
          "where the two disagree, the machine's noise decided the median.",
          "",
          "| shape | algorithm | port / optax | bridge / keras3 | "
          "bridge / legacy | bridge.legacy / legacy |",
          "|---|---|---|---|---|---|"]
  pairs = (("jaxopt_port", "optax"), ("tf_bridge", "keras3"),
           ("tf_bridge", "tf_keras.legacy"),
           ("tf_bridge.legacy", "tf_keras.legacy"))
  for shape in shapes:
    for algorithm in ALGORITHMS:
      cells = []
      for top, bottom in pairs:
        median = _ratio(by_key, shape, algorithm, top, bottom)
        fastest = _ratio(by_key, shape, algorithm, top, bottom, "min_seconds")
        cells.append("-" if median is None
                     else f"{median:.2f} ({fastest:.2f})")
      if any(cell != "-" for cell in cells):
        out.append(f"| {shape} | {algorithm} | " + " | ".join(cells) + " |")
  out += ["", "#### First call (trace, convert, compile and one step), "
          "seconds", "",
          "| shape | algorithm | " + " | ".join(implementations) + " |",
          "|---|---" + "|---" * len(implementations) + "|"]
  for shape in shapes:
    for algorithm in ALGORITHMS:
      cells = [by_key.get((shape, algorithm, i)) for i in implementations]
      if any(cells):
        out.append(f"| {shape} | {algorithm} | " + " | ".join(
            "-" if c is None else f"{c['first_call_seconds']:.1f}"
            for c in cells) + " |")
  if memory:
    task = memory[0]
    out += ["", f"#### Peak memory: {task['algorithm']} on {task['shape']}, "
            f"{task['steps']} steps in a fresh process", "",
            "| implementation | peak RSS (MB) | rise during the steps (MB) |",
            "|---|---|---|"]
    out += [f"| {m['implementation']} | {m['peak_mb']:.0f} | "
            f"{m['optimizer_peak_mb']:.0f} |" for m in memory]
  if fits:
    out += ["", "#### model.fit: small CNN, Adam, batch 32 (epochs "
            "interleaved; peak RSS of a 2-epoch run in a fresh process, 0 "
            "with --quick)", "",
            "| optimizer | steps/s (median) | first epoch (s) | final loss | "
            "peak RSS (MB) |", "|---|---|---|---|---|"]
    out += [f"| {name} | {f['steps_per_second']:.1f} | "
            f"{f['first_epoch_seconds']:.1f} | {f['final_loss']:.4f} | "
            f"{f.get('peak_mb', 0):.0f} |" for name, f in fits.items()]
  return "\n".join(out) + "\n"


def plot(records, path: str) -> None:
  import matplotlib  # pylint: disable=import-outside-toplevel
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel
  shapes = list(dict.fromkeys(r["shape"] for r in records))
  implementations = [i for i in JAX_IMPLEMENTATIONS + TF_IMPLEMENTATIONS
                     if i != "roofline"
                     and any(r["implementation"] == i for r in records)]
  by_key = {(r["shape"], r["algorithm"], r["implementation"]): r
            for r in records}
  figure, axes = plt.subplots(len(shapes), 1, squeeze=False,
                              figsize=(11, 3.2 * len(shapes)))
  width = 0.8 / len(implementations)
  for axis, shape in zip(axes[:, 0], shapes):
    for index, implementation in enumerate(implementations):
      fractions = [by_key.get((shape, a, implementation), {}).get(
          "roofline_fraction", 0.0) for a in ALGORITHMS]
      axis.bar(np.arange(len(ALGORITHMS)) + index * width, fractions,
               width, label=implementation)
    axis.axhline(1.0, color="black", linewidth=0.8)
    axis.set_xticks(np.arange(len(ALGORITHMS)) + 0.4 - width / 2,
                    ALGORITHMS)
    axis.set_ylabel("fraction of roofline")
    axis.set_title(shape)
  axes[0, 0].legend(ncol=4, fontsize="small")
  figure.suptitle(records[0]["device"])
  figure.tight_layout()
  figure.savefig(path, dpi=90)
  plt.close(figure)


BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def write_results(path: str, block: str) -> None:
  """Replaces the generated block of RESULTS.md, keeping the text around
  it (the analysis written by hand)."""
  text = ""
  if os.path.exists(path):
    with open(path, encoding="utf-8") as results:
      text = results.read()
  if BEGIN in text and END in text:
    text = (text[:text.index(BEGIN) + len(BEGIN)] + "\n" + block
            + text[text.index(END):])
  else:
    text = (text or "# Benchmark results\n\n") + f"{BEGIN}\n{block}{END}\n"
  with open(path, "w", encoding="utf-8") as results:
    results.write(text)


# ----------------------------------------------------------------- main --

def has_tensorflow() -> bool:
  return all(importlib.util.find_spec(name) is not None
             for name in ("tensorflow", "tf_keras", "keras"))


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--quick", action="store_true",
                      help="small shapes, Adam and Lamb (< 3 minutes)")
  parser.add_argument("--out", default=None,
                      help="directory for results.json, results.png and "
                      "RESULTS.md (default: benchmarks/, or "
                      "benchmarks/quick/ with --quick)")
  parser.add_argument("--shapes", nargs="*", help="a subset of the shapes")
  parser.add_argument("--algorithms", nargs="*", choices=ALGORITHMS)
  parser.add_argument("--no-tf", action="store_true",
                      help="leave out the TensorFlow columns")
  parser.add_argument("--report", metavar="RESULTS_JSON",
                      help="only write RESULTS.md and the plot from a "
                      "results.json")
  parser.add_argument("--worker", help=argparse.SUPPRESS)
  args = parser.parse_args(argv)
  if args.worker:
    run_worker(json.loads(args.worker))
    return 0
  out = args.out or os.path.join(HERE, "quick" if args.quick else "")
  os.makedirs(out, exist_ok=True)
  if args.report:
    with open(args.report, encoding="utf-8") as f:
      results = json.load(f)
    print(report(out, results))
    return 0
  shapes = shape_sets(args.quick)
  if args.shapes:
    shapes = {name: shapes[name] for name in args.shapes}
  algorithms = args.algorithms or (["adam", "lamb"] if args.quick
                                   else ALGORITHMS)
  repeats = 5 if args.quick else 10
  with_tf = not args.no_tf and has_tensorflow()
  device = device_name()
  records = []
  print(f"{device}; shapes {list(shapes)}; algorithms {algorithms}; "
        f"TensorFlow columns: {with_tf}", flush=True)
  def progress(shape_name, algorithm, new_records):
    print(f"  {shape_name} {algorithm}: " + ", ".join(
        f"{r['implementation']} {r['median_seconds'] * 1e3:.1f} ms"
        for r in new_records), flush=True)
  tf_jobs = []
  for shape_name, shape in shapes.items():
    for algorithm in algorithms:
      new_records = measure_jax(shape_name, shape, algorithm, repeats, device)
      progress(shape_name, algorithm, new_records)
      records += new_records
      # On many small variables the TensorFlow implementations take minutes
      # to trace each (Keras 3's own Adam too): Adam alone stands for them.
      if with_tf and (len(shape) <= 500 or algorithm == "adam"):
        tf_jobs.append({"shape_name": shape_name, "shapes": shape,
                        "algorithm": algorithm})
  for jobs in tf_worker_batches(tf_jobs):
    new_records = in_subprocess({"kind": "tf-timing", "jobs": jobs,
                                 "repeats": repeats, "device": device})
    for job in jobs:
      progress(job["shape_name"], job["algorithm"],
               [r for r in new_records if r["shape"] == job["shape_name"]
                and r["algorithm"] == job["algorithm"]])
    records += new_records
  records = with_roofline_fractions(records)
  memory_shape = next(iter(shapes))
  memory = []
  for implementation in JAX_IMPLEMENTATIONS + (
      TF_IMPLEMENTATIONS if with_tf else []):
    task = {"kind": "memory", "implementation": implementation,
            "algorithm": "adam", "shapes": shapes[memory_shape], "steps": 3}
    memory.append({**in_subprocess(task), "implementation": implementation,
                   "algorithm": "adam", "shape": memory_shape, "steps": 3})
  fits = {}
  if with_tf:
    samples = 512 if args.quick else 2048
    fits = measure_fit(samples, 3 if args.quick else 8)
    for implementation in [] if args.quick else TF_IMPLEMENTATIONS:
      fits[implementation].update(in_subprocess(
          {"kind": "fit", "implementation": implementation,
           "samples": samples}))
  settings = {"date": datetime.date.today().isoformat(),
              "mode": "--quick" if args.quick else "full run",
              "repeats": repeats, "jax": jax.__version__,
              "optax": optax.__version__}
  if with_tf:
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    settings["tensorflow"] = tf.__version__
  results = {"device": device, "settings": settings, "records": records,
             "memory": memory, "fit": fits}
  with open(os.path.join(out, "results.json"), "w", encoding="utf-8") as f:
    json.dump(results, f, indent=1)
  print(report(out, results))
  return 0


def report(out: str, results: dict) -> str:
  """Writes the plot and RESULTS.md's generated block; returns the block."""
  plot(results["records"], os.path.join(out, "results.png"))
  block = markdown(results["records"], results["memory"], results["fit"],
                   results["settings"])
  write_results(os.path.join(out, "RESULTS.md"), block)
  return block


if __name__ == "__main__":
  sys.exit(main())
