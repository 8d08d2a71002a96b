"""Parity report: one optimizer, natively in Keras and as the JAX port.

    python -m tf_bridge.parity [--optimizer NAME | --all] [--steps N] [--seed N]
                               [--rtol R] [--atol A] [--json PATH] [--plot PATH]

Every implementation trains the same seeded least-squares problem (a 8x4
kernel and a bias, 64 samples) from the same start, each computing its own
gradients (TensorFlow's GradientTape or `jax.grad`): the native Keras
optimizer, the JAX port, and the bridged Keras class (`tf_bridge.<Name>`,
`tf_bridge.legacy.<Name>`). Each is compared with the native optimizer of its
Keras generation at every step: the report
gives the largest absolute and relative parameter difference, the final loss
and the time per step. NAME is `adam` (Keras 3; its legacy namesake runs too
when there is one) or `legacy.adam` (OptimizerV2 only). The exit status is 1
when a port differs from its native optimizer beyond `atol + rtol * |native|`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from typing import Any, Sequence

import numpy as np

from tf_bridge import catalog

SAMPLES, FEATURES, OUTPUTS = 64, 8, 4


@dataclasses.dataclass(frozen=True)
class Problem:
  inputs: np.ndarray
  targets: np.ndarray
  initial: tuple[np.ndarray, np.ndarray]  # kernel, bias


def make_problem(seed: int) -> Problem:
  rng = np.random.default_rng(seed)
  inputs = rng.standard_normal((SAMPLES, FEATURES)).astype(np.float32)
  true_kernel = rng.standard_normal((FEATURES, OUTPUTS)).astype(np.float32)
  targets = (inputs @ true_kernel + 0.1 * rng.standard_normal(
      (SAMPLES, OUTPUTS))).astype(np.float32)
  kernel = (0.1 * rng.standard_normal((FEATURES, OUTPUTS))).astype(np.float32)
  bias = np.zeros(OUTPUTS, np.float32)
  return Problem(inputs, targets, (kernel, bias))


@dataclasses.dataclass
class Run:
  """One implementation's training run."""
  name: str
  reference: str | None  # The run it is compared with; None for a native one.
  trajectory: list[list[np.ndarray]]  # Parameters after each step.
  losses: list[float]  # Loss after each step.
  seconds_per_step: float


def _timed_loop(step, steps: int) -> tuple[list[Any], float]:
  """Runs `step()` `steps` times; the time excludes the first (build) call."""
  results = [step()]
  start = time.perf_counter()
  results += [step() for _ in range(steps - 1)]
  return results, (time.perf_counter() - start) / max(steps - 1, 1)


def run_keras(optimizer: Any, problem: Problem, steps: int, name: str,
              reference: str | None) -> Run:
  """Trains with a Keras optimizer of either generation, native or bridged."""
  import keras  # pylint: disable=import-outside-toplevel
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  inputs, targets = tf.constant(problem.inputs), tf.constant(problem.targets)
  make = (keras.Variable if isinstance(optimizer, keras.optimizers.Optimizer)
          else tf.Variable)
  variables = [make(value, name=label) for value, label in
               zip(problem.initial, ("kernel", "bias"))]

  def loss_value():
    kernel, bias = variables
    return tf.reduce_mean(tf.square(tf.matmul(inputs, kernel) + bias - targets))

  def step():
    with tf.GradientTape() as tape:
      loss = loss_value()
    gradients = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(gradients, variables))
    return [np.array(v.numpy()) for v in variables], float(loss_value())

  results, seconds = _timed_loop(step, steps)
  return Run(name, reference, [r[0] for r in results], [r[1] for r in results],
             seconds)


def bridged_runs(declaration: catalog.Declaration, problem: Problem,
                 steps: int, reference: str) -> list[Run]:
  """The Keras classes wrapping the port: its own generation's, and the
  OptimizerV2 one for a Keras 3 algorithm that legacy lacks."""
  import tf_bridge  # pylint: disable=import-outside-toplevel
  import tf_bridge.legacy  # pylint: disable=import-outside-toplevel
  name = declaration.class_name
  if declaration.generation == catalog.LEGACY:
    return [run_keras(getattr(tf_bridge.legacy, name)(), problem, steps,
                      f"tf_bridge.legacy.{name}", reference)]
  runs = [run_keras(getattr(tf_bridge, name)(), problem, steps,
                    f"tf_bridge.{name}", reference)]
  if ("legacy." + declaration.name not in catalog.BY_NAME
      and hasattr(tf_bridge.legacy, name)):
    runs.append(run_keras(getattr(tf_bridge.legacy, name)(), problem, steps,
                          f"tf_bridge.legacy.{name}", reference))
  return runs


def run_port(declaration: catalog.Declaration, problem: Problem, steps: int,
             reference: str | None) -> Run:
  import jax  # pylint: disable=import-outside-toplevel
  import jax.numpy as jnp  # pylint: disable=import-outside-toplevel
  import optax  # pylint: disable=import-outside-toplevel
  transform = declaration.port()
  inputs, targets = jnp.asarray(problem.inputs), jnp.asarray(problem.targets)

  def loss_fn(params):
    kernel, bias = params
    return jnp.mean(jnp.square(inputs @ kernel + bias - targets))

  @jax.jit
  def train_step(params, state):
    gradients = jax.grad(loss_fn)(params)
    updates, state = transform.update(gradients, state, params)
    params = optax.apply_updates(params, updates)
    return params, state, loss_fn(params)

  params = [jnp.asarray(value) for value in problem.initial]
  state = transform.init(params)

  def step():
    nonlocal params, state
    params, state, loss = train_step(params, state)
    return [np.asarray(p) for p in params], float(loss)

  results, seconds = _timed_loop(step, steps)
  return Run(declaration.port_path, reference, [r[0] for r in results],
             [r[1] for r in results], seconds)


def differences(run: Run, reference: Run, rtol: float, atol: float
                ) -> dict[str, np.ndarray]:
  """Per step: the largest |diff|; the largest |diff| / |native| where the
  relative term dominates the tolerance (|native| > atol / rtol); and the
  tolerance used, max |diff| / (atol + rtol * |native|) (<= 1 passes)."""
  absolute, relative, used = [], [], []
  for got_values, want_values in zip(run.trajectory, reference.trajectory):
    step_abs = step_rel = step_used = 0.0
    for got, want in zip(got_values, want_values):
      want = want.astype(np.float64)
      diff = np.abs(got.astype(np.float64) - want)
      large = np.abs(want) > (atol / rtol if rtol > 0 else max(atol, 0.0))
      large &= want != 0
      step_abs = max(step_abs, float(np.max(diff)))
      if np.any(large):
        step_rel = max(step_rel, float(np.max(diff[large] / np.abs(want[large]))))
      allowed = atol + rtol * np.abs(want)
      ratio = np.where(diff == 0, 0.0,
                       diff / np.where(allowed > 0, allowed, np.inf))
      ratio[(diff > 0) & (allowed == 0)] = np.inf
      step_used = max(step_used, float(np.max(ratio)))
    absolute.append(step_abs)
    relative.append(step_rel)
    used.append(step_used)
  return {"abs": np.array(absolute), "rel": np.array(relative),
          "used": np.array(used)}


def _progress(index: int, total: int, label: str) -> None:
  if not sys.stderr.isatty():
    return
  width = 24
  done = int(width * index / total)
  sys.stderr.write(f"\r[{'#' * done}{'.' * (width - done)}] {index}/{total} "
                   f"{label[:60]:<60}")
  if index == total:
    sys.stderr.write("\n")
  sys.stderr.flush()


def groups_for(name: str) -> list[catalog.Declaration]:
  """The declarations `--optimizer name` runs: Keras 3 and its legacy twin."""
  declaration = catalog.lookup(name)
  found = [declaration]
  twin = catalog.BY_NAME.get("legacy." + name)
  if declaration.generation == catalog.KERAS and twin is not None:
    found.append(twin)
  missing = [d.name for d in found if not d.has_native]
  if missing:
    raise SystemExit(
        f"{', '.join(missing)} has no native Keras optimizer to compare with "
        "(its ground truth is its formula, checked by the test suite).")
  return found


def compare(name: str, steps: int, seed: int, rtol: float, atol: float,
            show_progress: bool = True) -> dict[str, Any]:
  """Runs every implementation of `name`; returns the report as plain data."""
  problem = make_problem(seed)
  declarations = groups_for(name)
  total = 3 * len(declarations)
  rows = []
  for index, declaration in enumerate(declarations):
    if show_progress:
      _progress(3 * index, total, declaration.native_path)
    native_name = f"{declaration.native_path} (native)"
    native = run_keras(declaration.native_class()(), problem, steps,
                       native_name, None)
    if show_progress:
      _progress(3 * index + 1, total, declaration.port_path)
    port = run_port(declaration, problem, steps, native_name)
    if show_progress:
      _progress(3 * index + 2, total, "tf_bridge " + declaration.class_name)
    for run in [native, port] + bridged_runs(declaration, problem, steps,
                                             native_name):
      diff = differences(run, native, rtol, atol)
      rows.append({
          "name": run.name,
          "reference": run.reference,
          "final_loss": run.losses[-1],
          "max_abs_diff": float(diff["abs"].max()),
          "max_rel_diff": float(diff["rel"].max()),
          "tolerance_used": float(diff["used"].max()),
          "within_tolerance": bool(diff["used"].max() <= 1.0),
          "seconds_per_step": run.seconds_per_step,
          "losses": run.losses,
          "abs_diff_per_step": diff["abs"].tolist(),
      })
  if show_progress:
    _progress(total, total, "done")
  return {"optimizer": name, "steps": steps, "seed": seed, "rtol": rtol,
          "atol": atol, "reference": rows[0]["name"], "implementations": rows}


def format_table(report: dict[str, Any]) -> str:
  header = (f"{'implementation':<44} {'compared with':<42} {'max |diff|':>10} "
            f"{'max rel':>9} {'tol used':>8} {'final loss':>11} {'ms/step':>8}"
            "  ok")
  lines = [f"{report['optimizer']}: least squares ({FEATURES}x{OUTPUTS} kernel "
           f"+ bias), {report['steps']} steps, seed {report['seed']}, "
           f"rtol {report['rtol']:g}, atol {report['atol']:g}", header,
           "-" * len(header)]
  for row in report["implementations"]:
    reference = row["reference"] or "(reference)"
    lines.append(
        f"{row['name']:<44} {reference:<42} {row['max_abs_diff']:>10.2e} "
        f"{row['max_rel_diff']:>9.2e} {row['tolerance_used']:>8.3f} "
        f"{row['final_loss']:>11.6f} "
        f"{1000 * row['seconds_per_step']:>8.2f}  "
        f"{'yes' if row['within_tolerance'] else 'NO'}")
  return "\n".join(lines)


def plot(report: dict[str, Any], path: str) -> None:
  import matplotlib  # pylint: disable=import-outside-toplevel
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel
  figure, (losses, diffs) = plt.subplots(1, 2, figsize=(12, 4.5))
  steps = np.arange(1, report["steps"] + 1)
  for row in report["implementations"]:
    native = row["reference"] is None
    losses.plot(steps, row["losses"], label=row["name"],
                linestyle="-" if native else "--",
                linewidth=2.5 if native else 1.2)
    if not native:
      diffs.plot(steps, np.maximum(row["abs_diff_per_step"], 1e-12),
                 label=f"{row['name']} vs native")
  losses.set(title=f"{report['optimizer']}: training loss", xlabel="step",
             ylabel="loss", yscale="log")
  diffs.axhline(report["atol"], color="grey", linestyle=":",
                label=f"atol {report['atol']:g}")
  diffs.set(title="largest parameter difference from native", xlabel="step",
            ylabel="max |diff|", yscale="log")
  for axes in (losses, diffs):
    axes.legend(fontsize=7)
    axes.grid(True, which="both", alpha=0.3)
  figure.tight_layout()
  figure.savefig(path, dpi=110)
  plt.close(figure)


def main(argv: Sequence[str] | None = None) -> int:
  parser = argparse.ArgumentParser(
      prog="python -m tf_bridge.parity",
      description="Train one optimizer natively in Keras and as its JAX port "
      "and report the per-step differences.")
  parser.add_argument("--optimizer", default="adam",
                      help="adam, legacy.rmsprop, ... (default: adam)")
  parser.add_argument("--all", action="store_true",
                      help="every cataloged optimizer with a native "
                      "counterpart, one summary row each")
  parser.add_argument("--steps", type=int, default=100)
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--rtol", type=float, default=1e-5)
  parser.add_argument("--atol", type=float, default=1e-6)
  parser.add_argument("--json", help="write the report as JSON here")
  parser.add_argument("--plot", help="write loss and difference curves "
                      "(PNG) here")
  args = parser.parse_args(argv)
  if args.steps < 2:
    parser.error("--steps must be at least 2")
  try:
    names = ([d.name for d in catalog.CATALOG
              if d.has_native and d.generation == catalog.KERAS]
             if args.all else [args.optimizer])
    for name in names:
      catalog.lookup(name)
  except KeyError as error:
    parser.error(error.args[0])
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
  if "keras" not in sys.modules:
    os.environ["KERAS_BACKEND"] = "tensorflow"

  reports = [compare(name, args.steps, args.seed, args.rtol, args.atol,
                     show_progress=not args.all) for name in names]
  if args.all:
    print(f"{'optimizer':<16} {'implementations':>15} {'max |diff|':>11} "
          f"{'max rel':>9}  ok")
    for report in reports:
      rows = report["implementations"]
      print(f"{report['optimizer']:<16} {len(rows):>15} "
            f"{max(r['max_abs_diff'] for r in rows):>11.2e} "
            f"{max(r['max_rel_diff'] for r in rows):>9.2e}  "
            f"{'yes' if all(r['within_tolerance'] for r in rows) else 'NO'}")
  else:
    print(format_table(reports[0]))
  if args.json:
    with open(args.json, "w", encoding="utf-8") as file:
      json.dump(reports if args.all else reports[0], file, indent=1)
  if args.plot:
    plot(reports[0], args.plot)
    print(f"plot written to {args.plot}")
  passed = all(row["within_tolerance"] for report in reports
               for row in report["implementations"])
  return 0 if passed else 1


if __name__ == "__main__":
  sys.exit(main())
