"""Parity report: one optimizer, natively and as the JAX port and bridges.

    python -m tf_bridge.parity [--optimizer NAME | --all | --factory M:F]
                               [--steps N] [--seed N] [--rtol R] [--atol A]
                               [--json PATH] [--plot PATH]

Every implementation trains the same seeded least-squares problem (a 8x4
kernel and a bias, 64 samples) from the same start, each computing its own
gradients (TensorFlow's GradientTape or `jax.grad`): the native optimizer
(Keras 3, tf_keras legacy or TF1; ScheduleFreeAdamW on Keras's JAX backend,
in a subprocess), the JAX port, and the bridged Keras classes
(`tf_bridge.<Name>`, `tf_bridge.legacy.<Name>`, `tf_bridge.tf1.<Name>`, ...).
Each is compared with the native optimizer of its generation at every step
(an optimizer Keras does not ship, like `momentum_sgd`, with its JAX port):
the report gives the largest absolute and relative parameter difference, the
final loss and the time per step. NAME is any cataloged name: `adam` (Keras
3; its legacy namesake runs too), `legacy.adam`, `tf1.adam`,
`centered_momentum_sgd`, ... The exit status is 1 when an implementation
differs from its reference beyond `atol + rtol * |reference|`.
`--factory my_module:my_factory` runs a user's own transform factory instead:
its JAX run is then the reference of its Keras 3 and OptimizerV2 classes.
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

from tf_bridge import catalog, testing

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
  seconds_per_step: float | None  # None: not timed (another process).


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
    testing.apply_gradients(optimizer, tape.gradient(loss, variables),
                            variables)
    return [np.array(v.numpy()) for v in variables], float(loss_value())

  results, seconds = _timed_loop(step, steps)
  return Run(name, reference, [r[0] for r in results], [r[1] for r in results],
             seconds)


def bridged_runs(declaration: catalog.Declaration, problem: Problem,
                 steps: int, reference: str) -> list[Run]:
  """The Keras classes wrapping the port: its own generation's, the
  OptimizerV2 one for a Keras 3 algorithm that legacy lacks or a TF1 one,
  and the tf_keras 2.11+ one of a library of that generation (TFRS)."""
  import importlib  # pylint: disable=import-outside-toplevel
  modules = ([] if declaration.generation == catalog.LEGACY
             else [declaration.bridge_path])
  legacy_twin = ("legacy." + declaration.name) in catalog.BY_NAME
  if any(d is declaration for d in catalog.legacy_hosted(
      declaration.generation)) and not legacy_twin:
    modules.append(declaration.legacy_bridge_path)
  if f"tf_bridge.tf_keras.{declaration.generation}" in catalog.CLASS_MODULES:
    modules.append(f"tf_bridge.tf_keras.{declaration.generation}")
  runs = []
  for module in modules:
    optimizer_class = getattr(importlib.import_module(module),
                              declaration.class_name)
    runs.append(run_keras(optimizer_class(**declaration.required), problem,
                          steps, f"{module}.{declaration.class_name}",
                          reference))
  return runs


def run_native(declaration: catalog.Declaration, problem: Problem,
               steps: int) -> Run:
  """The native optimizer; on Keras's JAX backend, in a subprocess, where
  that is the ground truth (ScheduleFreeAdamW)."""
  name = f"{declaration.native_path} (native)"
  if declaration.native_backend == "tensorflow":
    return run_keras(declaration.make_native(), problem, steps, name, None)
  import keras  # pylint: disable=import-outside-toplevel
  from tf_bridge import _other_backend  # pylint: disable=import-outside-toplevel
  trajectory, losses = _other_backend.run(
      declaration.native_backend,
      keras.optimizers.serialize(declaration.make_native()),
      list(problem.initial), inputs=problem.inputs, targets=problem.targets,
      steps=steps)
  return Run(f"{declaration.native_path} ({declaration.native_backend} "
             "backend, native)", None, trajectory, losses, None)


def run_port(declaration: catalog.Declaration, problem: Problem, steps: int,
             reference: str | None) -> Run:
  import jax  # pylint: disable=import-outside-toplevel
  import jax.numpy as jnp  # pylint: disable=import-outside-toplevel
  import optax  # pylint: disable=import-outside-toplevel
  transform = declaration.make_port()
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
  return found


def compare(name: str, steps: int, seed: int, rtol: float, atol: float,
            show_progress: bool = True) -> dict[str, Any]:
  """Runs every implementation of `name`; returns the report as plain data.

  Each generation's native optimizer is the reference of its port and
  bridged classes; an optimizer Keras does not ship (the classic ones) is
  compared with its JAX port, whose formula the test suite checks.
  """
  problem = make_problem(seed)
  declarations = groups_for(name)
  total = 3 * len(declarations)
  rows = []
  for index, declaration in enumerate(declarations):
    if show_progress:
      _progress(3 * index, total, declaration.native_path
                or declaration.port_path)
    runs = []
    if declaration.has_native:
      runs.append(run_native(declaration, problem, steps))
    reference_name = runs[0].name if runs else None
    if show_progress:
      _progress(3 * index + 1, total, declaration.port_path)
    runs.append(run_port(declaration, problem, steps, reference_name))
    reference, reference_name = runs[0], runs[0].name
    if show_progress:
      _progress(3 * index + 2, total, "tf_bridge " + declaration.class_name)
    runs += bridged_runs(declaration, problem, steps, reference_name)
    rows += [_row(run, reference, rtol, atol) for run in runs]
  if show_progress:
    _progress(total, total, "done")
  return {"optimizer": name, "steps": steps, "seed": seed, "rtol": rtol,
          "atol": atol, "reference": rows[0]["name"], "implementations": rows}


def _row(run: Run, reference: Run, rtol: float, atol: float
         ) -> dict[str, Any]:
  diff = differences(run, reference, rtol, atol)
  return {"name": run.name, "reference": run.reference,
          "final_loss": run.losses[-1],
          "max_abs_diff": float(diff["abs"].max()),
          "max_rel_diff": float(diff["rel"].max()),
          "tolerance_used": float(diff["used"].max()),
          "within_tolerance": bool(diff["used"].max() <= 1.0),
          "seconds_per_step": run.seconds_per_step, "losses": run.losses,
          "abs_diff_per_step": diff["abs"].tolist()}


def load_factory(spec: str, flag: str = "--factory",
                 kind: str = "MODULE:FUNCTION") -> Any:
  """`module:function` (or `module:Class`), imported (never evaluated) from
  the current directory or the installed packages."""
  import importlib  # pylint: disable=import-outside-toplevel
  module_name, _, function_name = spec.partition(":")
  if not module_name or not function_name.isidentifier():
    raise ValueError(f"{flag} takes {kind}, got {spec!r}")
  if "" not in sys.path:
    sys.path.insert(0, "")
  factory = getattr(importlib.import_module(module_name), function_name,
                    None)
  if not callable(factory):
    raise ValueError(f"{spec!r}: {module_name} has no function "
                     f"{function_name!r}")
  return factory


def compare_factory(spec: str, steps: int, seed: int, rtol: float,
                    atol: float) -> dict[str, Any]:
  """A user's transform factory: its JAX run is the reference of its Keras
  3 and OptimizerV2 classes (`keras_optimizer(factory)` of each)."""
  import tf_bridge  # pylint: disable=import-outside-toplevel
  import tf_bridge.legacy  # pylint: disable=import-outside-toplevel
  factory = load_factory(spec)
  problem = make_problem(seed)
  declaration = catalog.Declaration(factory, factory.__name__, catalog.KERAS,
                                    has_native=False)
  reference = run_port(declaration, problem, steps, None)
  reference.name = f"{spec} (JAX)"
  runs = [reference]
  for module in (tf_bridge, tf_bridge.legacy):
    optimizer_class = module.keras_optimizer(
        factory, module="tf_bridge.parity.factory")
    runs.append(run_keras(optimizer_class(), problem, steps,
                          f"{module.__name__}.keras_optimizer({spec})",
                          reference.name))
  rows = [_row(run, reference, rtol, atol) for run in runs]
  return {"optimizer": spec, "steps": steps, "seed": seed, "rtol": rtol,
          "atol": atol, "reference": reference.name, "implementations": rows}


def compare_native(spec: str, steps: int, seed: int, rtol: float,
                   atol: float) -> dict[str, Any]:
  """A user's own TensorFlow optimizer class (`tf_bridge.port` takes its
  kind), built with its defaults: the class itself on its own generation is
  the reference of its port (JAX) and its adoption (`tf_bridge.adopt`,
  Keras 3)."""
  import tf_bridge  # pylint: disable=import-outside-toplevel
  cls = load_factory(spec, flag="--native", kind="MODULE:CLASS")
  problem = make_problem(seed)
  native = run_keras(cls(), problem, steps, f"{spec} (native)", None)

  def ported():
    return tf_bridge.port(cls())

  declaration = catalog.Declaration(ported, cls.__name__, catalog.KERAS,
                                    has_native=False)
  port_run = run_port(declaration, problem, steps, native.name)
  port_run.name = f"tf_bridge.port({spec})"
  adopted = run_keras(tf_bridge.adopt(cls)(), problem, steps,
                      f"tf_bridge.adopt({spec})", native.name)
  rows = [_row(run, native, rtol, atol) for run in (native, port_run, adopted)]
  return {"optimizer": spec, "steps": steps, "seed": seed, "rtol": rtol,
          "atol": atol, "reference": native.name, "implementations": rows}


def summary_names() -> list[str]:
  """`--all`: every cataloged name, a legacy twin inside its Keras 3 row."""
  return [d.name for d in catalog.CATALOG
          if not (d.generation == catalog.LEGACY
                  and d.name.removeprefix("legacy.") in catalog.BY_NAME)]


def _milliseconds(seconds: float | None) -> str:
  return "-" if seconds is None else f"{1000 * seconds:.2f}"


def format_table(report: dict[str, Any]) -> str:
  rows = report["implementations"]
  name_width = max(len("implementation"), *(len(r["name"]) for r in rows))
  reference_width = max(len("compared with"), len("(reference)"),
                        *(len(r["reference"] or "") for r in rows))
  header = (f"{'implementation':<{name_width}} "
            f"{'compared with':<{reference_width}} {'max |diff|':>10} "
            f"{'max rel':>9} {'tol used':>8} {'final loss':>11} {'ms/step':>8}"
            "  ok")
  lines = [f"{report['optimizer']}: least squares ({FEATURES}x{OUTPUTS} kernel "
           f"+ bias), {report['steps']} steps, seed {report['seed']}, "
           f"rtol {report['rtol']:g}, atol {report['atol']:g}", header,
           "-" * len(header)]
  for row in rows:
    reference = row["reference"] or "(reference)"
    lines.append(
        f"{row['name']:<{name_width}} {reference:<{reference_width}} "
        f"{row['max_abs_diff']:>10.2e} "
        f"{row['max_rel_diff']:>9.2e} {row['tolerance_used']:>8.3f} "
        f"{row['final_loss']:>11.6f} "
        f"{_milliseconds(row['seconds_per_step']):>8}  "
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
                      help="adam, legacy.rmsprop, tf1.momentum, "
                      "momentum_sgd, ... (default: adam)")
  parser.add_argument("--all", action="store_true",
                      help="every cataloged optimizer, one summary row each")
  parser.add_argument("--factory", metavar="MODULE:FUNCTION",
                      help="your own transform factory instead: its JAX "
                      "run against its Keras 3 and OptimizerV2 classes")
  parser.add_argument("--native", metavar="MODULE:CLASS",
                      help="your own TensorFlow optimizer class instead "
                      "(OptimizerV2, TF1, tf_keras 2.11+): it against its "
                      "port and its adoption")
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
    names = summary_names() if args.all else [args.optimizer]
    for name in names:
      catalog.lookup(name)
  except KeyError as error:
    parser.error(error.args[0])
  if "keras" not in sys.modules:
    os.environ["KERAS_BACKEND"] = "tensorflow"

  if args.native:
    try:
      reports = [compare_native(args.native, args.steps, args.seed,
                                args.rtol, args.atol)]
    except (ImportError, ValueError) as error:
      parser.error(str(error))
  elif args.factory:
    try:
      reports = [compare_factory(args.factory, args.steps, args.seed,
                                 args.rtol, args.atol)]
    except (ImportError, ValueError) as error:
      parser.error(str(error))
  else:
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
