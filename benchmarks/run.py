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
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import jax  # pylint: disable=wrong-import-position
import optax  # pylint: disable=wrong-import-position

from measure import (device_name, in_subprocess, measure_fit,  # pylint: disable=wrong-import-position
                     measure_jax, run_worker, tf_worker_batches)
from report import report, with_roofline_fractions  # pylint: disable=wrong-import-position
from workloads import (ALGORITHMS, FIT_CONFIGURATIONS,  # pylint: disable=wrong-import-position
                       JAX_IMPLEMENTATIONS, TF_IMPLEMENTATIONS, shape_sets)

HERE = os.path.dirname(os.path.abspath(__file__))


def has_tensorflow() -> bool:
  return all(importlib.util.find_spec(name) is not None
             for name in ("tensorflow", "tf_keras", "keras"))


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--quick", action="store_true",
                      help="small shapes, Adam and Lamb (< 3 minutes)")
  parser.add_argument("--smoke", action="store_true",
                      help="--quick on tiny shapes and short fits: every "
                      "measurement's code runs, no figure means anything "
                      "(tests/test_benchmarks.py)")
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
  args.quick = args.quick or args.smoke
  out = args.out or os.path.join(HERE, "quick" if args.quick else "")
  os.makedirs(out, exist_ok=True)
  if args.report:
    with open(args.report, encoding="utf-8") as f:
      results = json.load(f)
    print(report(out, results))
    return 0
  shapes = shape_sets("smoke" if args.smoke else "quick" if args.quick
                      else "full")
  if args.shapes:
    shapes = {name: shapes[name] for name in args.shapes}
  algorithms = args.algorithms or (["adam", "lamb"] if args.quick
                                   else ALGORITHMS)
  repeats = 2 if args.smoke else 5 if args.quick else 10
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
  frameworks = [JAX_IMPLEMENTATIONS] + ([TF_IMPLEMENTATIONS] if with_tf
                                        else [])
  # A process of its own per implementation; a smoke run's figures mean
  # nothing, so it measures them all in one process.
  batches = [sum(frameworks, [])] if args.smoke else [
      [implementation] for framework in frameworks
      for implementation in framework]
  for batch in batches:
    task = {"kind": "memory", "implementations": batch, "algorithm": "adam",
            "shapes": shapes[memory_shape], "steps": 3}
    memory += [{**measured, "implementation": implementation,
                "algorithm": "adam", "shape": memory_shape, "steps": 3}
               for implementation, measured in zip(batch,
                                                   in_subprocess(task))]
  fits, transformer_fits = {}, {}
  if with_tf:
    samples = 64 if args.smoke else 512 if args.quick else 2048
    rounds = 2 if args.smoke else 3 if args.quick else 8
    fits = measure_fit("cnn", samples, rounds)
    # A smoke run fits a 1-layer transformer, in each host's default
    # configuration only (the CNN's fits run the others' code).
    smoke_transformer = {"layers": 1, "configurations": [
        name for name, (_, jit_compile) in FIT_CONFIGURATIONS.items()
        if jit_compile is None]}
    transformer_fits = measure_fit(
        "transformer", 64 if args.smoke else 256 if args.quick else 1024,
        rounds, **(smoke_transformer if args.smoke else {}))
    for configuration in [] if args.quick else FIT_CONFIGURATIONS:
      fits[configuration].update(in_subprocess(
          {"kind": "fit", "implementation": configuration,
           "samples": samples}))
  settings = {"date": datetime.date.today().isoformat(),
              "mode": ("--smoke" if args.smoke else "--quick" if args.quick
                       else "full run"),
              "repeats": repeats, "jax": jax.__version__,
              "optax": optax.__version__}
  if with_tf:
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    settings["tensorflow"] = tf.__version__
  results = {"device": device, "settings": settings, "records": records,
             "memory": memory, "fit": fits,
             "fit_transformer": transformer_fits}
  with open(os.path.join(out, "results.json"), "w", encoding="utf-8") as f:
    json.dump(results, f, indent=1)
  print(report(out, results))
  return 0


if __name__ == "__main__":
  sys.exit(main())
