"""Measurement: interleaved timings, first calls, peak memory and
`model.fit` steps, each TensorFlow or memory measurement in a fresh
interpreter (`benchmarks/run.py --worker`)."""

from __future__ import annotations

import functools
import json
import os
import platform
import re
import subprocess
import sys
import time
from typing import Any, Callable, Iterable

import jax
import numpy as np

from workloads import (FIT_BATCH, FIT_CONFIGURATIONS, FIT_MODELS,
                       JAX_IMPLEMENTATIONS, TF_IMPLEMENTATIONS,
                       bytes_moved, jax_step, tf_problem, tf_step,
                       tree_size)


HERE = os.path.dirname(os.path.abspath(__file__))


def round_orders(count: int) -> list[list[int]]:
  """Orders of `count` runners for successive rounds, balanced for what
  runs just before each: over the returned rounds, every runner takes
  every place equally often and follows every other runner equally often
  (a Williams design; for an odd count the rounds and their mirrors). A
  runner's time can depend on the one before it (a Lion step right after
  the roofline kernel ran 10-15 % faster than right after another Lion
  step: RESULTS.md), and a rotated fixed order gives each runner the same
  predecessor in almost every round."""
  first = [0]
  for place in range(1, count):
    first.append((place + 1) // 2 if place % 2 else count - place // 2)
  rounds = [[(runner + shift) % count for runner in first]
            for shift in range(count)]
  if count % 2 and count > 1:
    rounds += [list(reversed(order)) for order in rounds]
  return rounds


def time_interleaved(runners: dict[str, Callable[[], None]], repeats: int,
                     warmup: int = 2, first_round: int = 0
                     ) -> dict[str, list[float]]:
  """Each runner's step times, taken round by round so that the machine's
  drifts hit every implementation alike, the rounds' orders from
  `round_orders` (from its `first_round`th on, so that calls continuing
  one measurement go on through the balanced orders)."""
  for run in runners.values():
    for _ in range(warmup):
      run()
  names = list(runners)
  orders = round_orders(len(names))
  times = {name: [] for name in runners}
  for round_index in range(first_round, first_round + repeats):
    for position in orders[round_index % len(orders)]:
      name = names[position]
      start = time.perf_counter()
      runners[name]()
      times[name].append(time.perf_counter() - start)
  return times


def _jax_runner(implementation, algorithm, shapes):
  """(run, first call's seconds), or None if `implementation` cannot run
  `algorithm`."""
  made = jax_step(implementation, algorithm, shapes)
  if made is None:
    return None
  step, carry, grads = made
  box = [carry]

  def run():
    box[0] = step(*box[0], grads)
    jax.block_until_ready(box[0])
  start = time.perf_counter()
  run()
  return run, time.perf_counter() - start


def measure_jax(shape_name, shapes, algorithm, repeats, device):
  """The JAX implementations interleaved, set up again once per
  implementation in a rotated order (each set up first once, second once,
  ...), their times pooled: the order of set-up alone moves a runner's
  time by about 15 % (where its buffers land: RESULTS.md), which one fixed
  order would charge to whichever came after the roofline kernel."""
  names = list(JAX_IMPLEMENTATIONS)
  times = {name: [] for name in names}
  first_calls = {}
  rounds = max(3, -(-repeats // len(names)))
  for rotation in range(len(names)):
    runners = {}
    for implementation in names[rotation:] + names[:rotation]:
      made = _jax_runner(implementation, algorithm, shapes)
      if made is not None:
        runners[implementation], first_call = made
        first_calls.setdefault(implementation, first_call)
    for name, samples in time_interleaved(
        runners, rounds, first_round=rotation * rounds).items():
      times[name] += samples
    del runners  # The buffers freed before the next set-up.
  return _records(shape_name, shapes, algorithm, device,
                  {name: samples for name, samples in times.items()
                   if samples}, first_calls)


def _records(shape_name, shapes, algorithm, device, times, first_calls):
  moved = bytes_moved(shapes, algorithm)
  return [{"shape": shape_name, "parameters": tree_size(shapes),
           "algorithm": algorithm,
           "implementation": name, "device": device,
           "median_seconds": float(np.median(samples)),
           "min_seconds": float(np.min(samples)),
           "q25_seconds": float(np.percentile(samples, 25)),
           "q75_seconds": float(np.percentile(samples, 75)),
           "repeats": len(samples),
           "first_call_seconds": first_calls[name], "bytes_moved": moved,
           "bandwidth_gb_per_s": moved / float(np.median(samples)) / 1e9}
          for name, samples in times.items()]


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


# A process that has run TensorFlow optimizers keeps about their state's
# size in memory after they are gone (native Keras as much as the bridge),
# so TF timings run in workers, each with at most this many parameters
# summed over its jobs. One worker per job would cost the quick run a
# minute of TensorFlow imports.
TF_WORKER_PARAMETERS = 30_000_000


def tf_worker_batches(jobs: list[dict]) -> list[list[dict]]:
  batches, size = [], TF_WORKER_PARAMETERS
  for job in jobs:
    job_size = tree_size(job["shapes"])
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


def measure_fit(model: str, samples: int, rounds: int,
                configurations: Iterable[str] = tuple(FIT_CONFIGURATIONS),
                **model_options: Any) -> dict:
  """`model.fit` steps per second of `model` (a key of FIT_MODELS) with
  native and bridged Adam in each of `configurations` (keys of
  FIT_CONFIGURATIONS, all by default): one epoch of each in turn, each
  round starting one configuration later, `rounds` times; the median over
  the epochs after the first (which compiles), and the epochs' steps per
  second by round, so that a ratio can pair epochs run close in time (this
  machine's speed moves between modes from one epoch to the next)."""
  models = {name: FIT_MODELS[model](name, samples, **model_options)
            for name in configurations}
  losses = {}

  def epoch(name):
    fitted, x, y = models[name]
    history = fitted.fit(x, y, batch_size=FIT_BATCH, epochs=1, verbose=0)
    losses[name] = float(history.history["loss"][-1])

  epochs = time_interleaved(
      {name: functools.partial(epoch, name) for name in models}, rounds,
      warmup=0)
  steps = -(-samples // FIT_BATCH)
  return {name: {"steps_per_second": steps / float(np.median(times[1:])),
                 "epoch_steps_per_second": [steps / t for t in times[1:]],
                 "first_epoch_seconds": times[0],
                 "final_loss": losses[name],
                 "jit_compile": bool(models[name][0].jit_compile)}
          for name, times in epochs.items()}


def worker_fit_memory(configuration: str, samples: int) -> dict:
  """Peak resident memory of a two-epoch training run of the CNN."""
  model, x, y = FIT_MODELS["cnn"](configuration, samples)
  model.fit(x, y, batch_size=FIT_BATCH, epochs=2, verbose=0)
  return {"peak_mb": _peak_rss_mb()}


def in_subprocess(task: dict):
  """Runs `task` in a fresh interpreter: peak memory is per process, and
  nothing a measurement leaves behind reaches the next one."""
  output = subprocess.run(
      [sys.executable, os.path.join(HERE, "run.py"), "--worker",
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
    result = [worker_memory(implementation, task["algorithm"],
                            [tuple(s) for s in task["shapes"]], task["steps"])
              for implementation in task["implementations"]]
  else:
    result = worker_fit_memory(task["implementation"], task["samples"])
  print(json.dumps(result))


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
