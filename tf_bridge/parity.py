"""Parity report: one optimizer, natively and as the JAX port and bridges.

    python -m tf_bridge.parity [--optimizer NAME | --all | --list |
                                --factory MODULE:FUNCTION |
                                --native MODULE:CLASS]
                               [--arguments JSON] [--steps N] [--seed N]
                               [--rtol R] [--atol A] [--json PATH]
                               [--plot PATH]

Every implementation trains the same seeded least-squares problem (a 8x4
kernel and a bias, 64 samples) from the same start, each computing its own
gradients (TensorFlow's GradientTape or `jax.grad`). The rows come in
comparisons, each a reference and the implementations checked against it:
the native optimizer of a generation (Keras 3, tf_keras legacy or 2.11+,
TF1; ScheduleFreeAdamW on Keras's JAX backend, in a process of its own)
against its JAX port and bridged Keras classes (`tf_bridge.<Name>`,
`tf_bridge.legacy.<Name>`, `tf_bridge.tf1.<Name>`, ...); where no native
class runs here (the classic custom optimizers, TF Addons', Hugging Face's,
...), the port against the bridged classes only. NAME is any cataloged name
(`--list`): `adam` (Keras 3; its legacy namesake runs too), `legacy.adam`,
`tf1.adam`, `addons.lazy_adam`, ... `--factory my_module:my_factory` runs a
user's own transform factory: its JAX run is the reference of its Keras 3
and OptimizerV2 classes. `--native my_module:MyOptimizer` runs a user's own
TensorFlow optimizer class against its port and its adoption.

A value passes when `|value - reference| <= atol + rtol * |reference| +
ROUNDING_FACTOR * rounding`, where `rounding` is the reference's own
measured sensitivity to float32 rounding by that step: how far it moves
from itself on the problem moved one float32 ulp (`rounding_sensitivity`).
Where steps keep shrinking it is far below the tolerance; where they do not
(RMSprop near the optimum, whose steps stay about the learning rate; COCOB)
float32 runs of one formula part by rounding alone, and this term is what
lets them agree, while a 1% wrong hyperparameter still parts in the first
steps, before rounding is amplified. A reference that moves less than
`testing.POWER` tolerances from its start fails its rows: a comparison
that cannot fail proves nothing. The exit status is 1 when a row fails.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect
import json
import os
import sys
from typing import Any, Callable, Sequence

import numpy as np

from tf_bridge import catalog, testing
from tf_bridge._parity_runs import (Problem, Run, make_problem, run_keras,
                                    run_port)

# How many times the reference's measured rounding sensitivity a value may
# part from the reference beyond `atol + rtol * |reference|`: where rounding
# is amplified, port and native part by up to about 1x (legacy RMSprop
# 0.1 of this bound), a 1% wrong hyperparameter by far more in its first
# steps (tests/test_parity_rounding.py).
ROUNDING_FACTOR = 10.0


@dataclasses.dataclass
class Comparison:
  """A reference and the implementations checked against it: a source of
  the table's rows (the catalog's, a user's factory)."""
  reference: Run
  # What the reference is, for the table: "native class", ...
  kind: str
  # The reference's trajectory on another problem (the same one moved by
  # an ulp): how its rounding sensitivity is measured.
  rerun: Callable[[Problem], list[list[np.ndarray]]]
  runs: list[Run]


NATIVE = "native class"
NATIVE_EAGER = "native class, run eagerly"
NATIVE_ELSEWHERE = "native class on Keras's {backend} backend, own process"
PORT_ONLY = "the port: no native class runs here"
FACTORY = "your factory, in JAX"
USERS_CLASS = "your class, in TensorFlow"


def run_native(declaration: catalog.Declaration, problem: Problem,
               steps: int, arguments: dict[str, Any]) -> Run:
  """The native optimizer; on Keras's JAX backend, in a process of its own,
  where that is the ground truth (ScheduleFreeAdamW)."""
  optimizer = declaration.make_native(**arguments)
  if declaration.native_backend in ("tensorflow", "eager"):
    # `run_keras` steps eagerly: "eager" (tf_keras Nadam) needs no more.
    return run_keras(optimizer, problem, steps,
                     f"{declaration.native_path} (native)")
  import keras  # pylint: disable=import-outside-toplevel
  from tf_bridge import _other_backend  # pylint: disable=import-outside-toplevel
  trajectory, losses = _other_backend.run(
      declaration.native_backend, keras.optimizers.serialize(optimizer),
      list(problem.initial), inputs=problem.inputs, targets=problem.targets,
      steps=steps)
  return Run(f"{declaration.native_path} ({declaration.native_backend} "
             "backend, native)", trajectory, losses, None)


def _native_kind(declaration: catalog.Declaration) -> str:
  if declaration.native_backend == "tensorflow":
    return NATIVE
  if declaration.native_backend == "eager":
    return NATIVE_EAGER
  return NATIVE_ELSEWHERE.format(backend=declaration.native_backend)


def bridged_classes(declaration: catalog.Declaration
                    ) -> list[tuple[str, type]]:
  """The Keras classes wrapping the port: its own generation's, the
  OptimizerV2 one for a Keras 3 algorithm that legacy lacks or a TF1 one,
  and the tf_keras 2.11+ one of a library of that generation (TFRS)."""
  modules = ([] if declaration.generation == catalog.LEGACY
             else [declaration.bridge_path])
  legacy_twin = ("legacy." + declaration.name) in catalog.BY_NAME
  if any(d is declaration for d in catalog.legacy_hosted(
      declaration.generation)) and not legacy_twin:
    modules.append(declaration.legacy_bridge_path)
  if f"tf_bridge.tf_keras.{declaration.generation}" in catalog.CLASS_MODULES:
    modules.append(f"tf_bridge.tf_keras.{declaration.generation}")
  return [(f"{module}.{declaration.class_name}", getattr(
      importlib.import_module(module), declaration.class_name))
          for module in modules]


def catalog_reference(declaration: catalog.Declaration, problem: Problem,
                      steps: int, arguments: dict[str, Any]) -> Comparison:
  """A cataloged optimizer's reference, nothing compared with it yet: its
  native class where one runs here, else its port."""
  if declaration.has_native:
    return Comparison(
        run_native(declaration, problem, steps, arguments),
        _native_kind(declaration), lambda moved: run_native(
            declaration, moved, steps, arguments).trajectory, [])
  transform = declaration.make_port(**arguments)
  port = run_port(transform, problem, steps, declaration.port_path)
  return Comparison(port, PORT_ONLY, lambda moved: run_port(
      transform, moved, steps, port.name).trajectory, [])


def catalog_comparison(declaration: catalog.Declaration, problem: Problem,
                       steps: int, arguments: dict[str, Any]) -> Comparison:
  """A cataloged optimizer: its native class (where one runs here) against
  its port and bridged classes, or else its port against the bridges."""
  comparison = catalog_reference(declaration, problem, steps, arguments)
  if declaration.has_native:
    comparison.runs.append(run_port(declaration.make_port(**arguments),
                                    problem, steps, declaration.port_path))
  comparison.runs += [
      run_keras(cls(**{**declaration.required, **arguments}), problem, steps,
                name) for name, cls in bridged_classes(declaration)]
  return comparison


def declarations_for(name: str) -> list[catalog.Declaration]:
  """The declarations `--optimizer name` runs: Keras 3 and its legacy twin."""
  declaration = catalog.lookup(name)
  found = [declaration]
  twin = catalog.BY_NAME.get("legacy." + name)
  if declaration.generation == catalog.KERAS and twin is not None:
    found.append(twin)
  return found


def load_factory(spec: str, flag: str = "--factory",
                 kind: str = "MODULE:FUNCTION") -> Any:
  """`module:function` (or `module:Class`), imported (never evaluated) from
  the current directory or the installed packages."""
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


def factory_comparison(spec: str, problem: Problem, steps: int,
                       arguments: dict[str, Any]) -> Comparison:
  """A user's transform factory: its JAX run against its Keras 3 and
  OptimizerV2 classes (`keras_optimizer(factory)` of each)."""
  import tf_bridge  # pylint: disable=import-outside-toplevel
  import tf_bridge.legacy  # pylint: disable=import-outside-toplevel
  factory = load_factory(spec)
  runs = []
  for module in (tf_bridge, tf_bridge.legacy):
    optimizer_class = module.keras_optimizer(
        factory, module="tf_bridge.parity.factory")
    runs.append(run_keras(optimizer_class(**arguments), problem, steps,
                          f"{module.__name__}.keras_optimizer({spec})"))
  transform = factory(**arguments)
  reference = run_port(transform, problem, steps, f"{spec} (JAX)")
  return Comparison(reference, FACTORY, lambda moved: run_port(
      transform, moved, steps, reference.name).trajectory, runs)


def native_class_comparison(spec: str, problem: Problem, steps: int,
                            arguments: dict[str, Any]) -> Comparison:
  """A user's own TensorFlow optimizer class (`tf_bridge.port` takes its
  kind), built with `arguments`: the class itself on its own generation is
  the reference of its port (JAX) and its adoption (`tf_bridge.adopt`,
  Keras 3)."""
  import tf_bridge  # pylint: disable=import-outside-toplevel
  cls = load_factory(spec, flag="--native", kind="MODULE:CLASS")
  rerun = lambda moved: run_keras(cls(**arguments), moved, steps,  # pylint: disable=unnecessary-lambda-assignment
                                  spec).trajectory
  return Comparison(
      run_keras(cls(**arguments), problem, steps, f"{spec} (native)"),
      USERS_CLASS, rerun, [
          run_port(tf_bridge.port(cls(**arguments)), problem, steps,
                   f"tf_bridge.port({spec})"),
          run_keras(tf_bridge.adopt(cls)(**arguments), problem, steps,
                    f"tf_bridge.adopt({spec})")])


def rounding_sensitivity(comparison: Comparison, problem: Problem
                         ) -> np.ndarray:
  """Per step, the most any element of the reference moves from itself on
  the problem moved one float32 ulp up or down (its inputs, targets and
  start), the largest so far: what float32 rounding alone does to the run
  by then, a rounding difference in every step's gradient as two
  implementations have. Where steps shrink it stays near an ulp; where
  they do not it grows as fast in one element as in the others that the
  loss couples it with, so one bound serves the whole step."""
  reference = comparison.reference.trajectory
  sensitivity = np.zeros(len(reference))
  for direction in (np.inf, -np.inf):
    ulp = lambda values: np.nextafter(values, np.float32(direction))  # pylint: disable=cell-var-from-loop,unnecessary-lambda-assignment
    moved = comparison.rerun(Problem(
        ulp(problem.inputs), ulp(problem.targets),
        tuple(ulp(value) for value in problem.initial)))
    for index, (got, want) in enumerate(zip(moved, reference)):
      for value, start in zip(got, want):
        apart = np.abs(np.asarray(value, np.float64) - start)
        sensitivity[index] = max(sensitivity[index], float(np.max(apart)))
  return np.maximum.accumulate(sensitivity)


def differences(run: Run, reference: Run, rounding: np.ndarray, rtol: float,
                atol: float) -> dict[str, np.ndarray]:
  """Per step: the largest |diff|; the largest |diff| / |reference| where
  the relative term dominates the tolerance (|reference| > atol / rtol);
  the share of the bound used, max |diff| / bound (<= 1 passes), the bound
  `atol + rtol * |reference| + ROUNDING_FACTOR * rounding`; and the |diff|
  and bound of the element where that share is largest."""
  columns: dict[str, list[float]] = {
      "abs": [], "rel": [], "used": [], "worst_diff": [], "worst_bound": []}
  for got_values, want_values, sens in zip(
      run.trajectory, reference.trajectory, rounding):
    step = dict.fromkeys(columns, 0.0)
    step["worst_bound"] = np.inf
    for got, want in zip(got_values, want_values):
      want = np.asarray(want, np.float64)
      diff = np.abs(np.asarray(got, np.float64) - want)
      large = np.abs(want) > (atol / rtol if rtol > 0 else max(atol, 0.0))
      large &= want != 0
      step["abs"] = max(step["abs"], float(np.max(diff)))
      if np.any(large):
        step["rel"] = max(step["rel"],
                          float(np.max(diff[large] / np.abs(want[large]))))
      bound = atol + rtol * np.abs(want) + ROUNDING_FACTOR * sens
      with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(diff == 0, 0.0, diff / bound)
      share = np.nan_to_num(share, nan=np.inf)  # A NaN value fails.
      worst = np.unravel_index(np.argmax(share), share.shape)
      if share[worst] > step["used"] or step["worst_bound"] == np.inf:
        step.update(used=float(share[worst]), worst_diff=float(diff[worst]),
                    worst_bound=float(bound[worst]))
    for key, value in step.items():
      columns[key].append(value)
  return {key: np.array(value) for key, value in columns.items()}


def report(title: str, comparisons: Sequence[Comparison], problem: Problem,
           steps: int, seed: int, rtol: float, atol: float
           ) -> dict[str, Any]:
  """The report as plain data: a row per run, each saying what its
  reference is and whether it stays within its bound."""
  rows, still = [], []
  for comparison in comparisons:
    reference = comparison.reference
    rounding = rounding_sensitivity(comparison, problem)
    moves = testing.movement(reference.trajectory, problem.initial,
                             rtol=rtol, atol=atol)
    if not moves >= testing.POWER:
      still.append(f"{reference.name} moves at most {moves:.3g} tolerances "
                   "from its start: an implementation that does nothing "
                   "would pass (compare more steps or a larger learning "
                   "rate)")
    rows.append(_row(reference, None, comparison.kind, None))
    for run in comparison.runs:
      row = _row(run, reference, comparison.kind, differences(
          run, reference, rounding, rtol, atol))
      row["ok"] &= moves >= testing.POWER
      rows.append(row)
  return {"optimizer": title, "steps": steps, "seed": seed, "rtol": rtol,
          "atol": atol, "rounding_factor": ROUNDING_FACTOR,
          "ok": all(row["ok"] for row in rows), "cannot_fail": still,
          "reference": comparisons[0].reference.name,
          "implementations": rows}


def _row(run: Run, reference: Run | None, kind: str,
         diff: dict[str, np.ndarray] | None) -> dict[str, Any]:
  """A run's row; `reference` None for the reference itself (`kind` says
  what it is)."""
  row = {"name": run.name,
         "reference": None if reference is None else reference.name,
         "reference_kind": kind, "ok": True, "final_loss": run.losses[-1],
         "max_abs_diff": 0.0, "max_rel_diff": 0.0, "tolerance_used": 0.0,
         "seconds_per_step": run.seconds_per_step, "losses": run.losses}
  if diff is not None:
    row.update(ok=bool(diff["used"].max() <= 1.0),
               max_abs_diff=float(diff["abs"].max()),
               max_rel_diff=float(diff["rel"].max()),
               tolerance_used=float(diff["used"].max()),
               abs_diff_per_step=diff["abs"].tolist(),
               worst_diff_per_step=diff["worst_diff"].tolist(),
               bound_per_step=diff["worst_bound"].tolist())
  return row


def catalog_names(*, merged: bool = False) -> list[str]:
  """Every cataloged name; `merged`: without the legacy twins that
  `--optimizer` runs with their Keras 3 namesake (`--all`'s rows)."""
  return [d.name for d in catalog.CATALOG
          if not (merged and d.generation == catalog.LEGACY
                  and d.name.removeprefix("legacy.") in catalog.BY_NAME)]


def check_arguments(declarations: Sequence[catalog.Declaration],
                    arguments: dict[str, Any]) -> None:
  """Raises ValueError naming an argument a port does not take, or the
  port's own error for a value it refuses."""
  for declaration in declarations:
    accepted = inspect.signature(declaration.port).parameters
    unknown = sorted(set(arguments) - set(accepted))
    if unknown:
      raise ValueError(
          f"--arguments: {declaration.port_path} takes no argument "
          f"{', '.join(map(repr, unknown))}; it takes "
          f"{', '.join(accepted)}")
    try:
      declaration.make_port(**arguments)
    except (TypeError, ValueError) as error:
      raise ValueError(f"--arguments: {declaration.port_path}: {error}"
                       ) from None


def _parse_arguments(text: str) -> dict[str, Any]:
  try:
    arguments = json.loads(text)
  except json.JSONDecodeError as error:
    raise argparse.ArgumentTypeError(f"not JSON ({error})") from None
  if not isinstance(arguments, dict):
    raise argparse.ArgumentTypeError(
        f"a JSON object of hyperparameters is expected, like "
        f"'{{\"learning_rate\": 0.01}}'; got {text}")
  return arguments


def _parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(
      prog="python -m tf_bridge.parity",
      description="Train one optimizer natively in Keras, as its JAX port "
      "and as its bridged Keras classes on the same problem, and report "
      "how far each is from its reference at every step.",
      epilog="A value passes within atol + rtol * |reference| + "
      f"{ROUNDING_FACTOR:g} x the reference's own measured sensitivity to "
      "float32 rounding at that step. Each row says what its reference is: "
      "a native class (in this process, or on another Keras backend in a "
      "process of its own), or, where no native class runs here, the port "
      "itself (then only the bridges are checked). Exit status: 0 when "
      "every row passes, 1 when one does not, 2 for bad input.")
  which = parser.add_mutually_exclusive_group()
  which.add_argument("--optimizer", default="adam", metavar="NAME",
                     help="a cataloged optimizer: adam (Keras 3, with its "
                     "tf_keras legacy namesake), legacy.rmsprop, tf1.momentum, "
                     "addons.lazy_adam, momentum_sgd, ... (see --list; "
                     "default: %(default)s)")
  which.add_argument("--all", action="store_true",
                     help="every cataloged optimizer, one summary row each")
  which.add_argument("--list", action="store_true",
                     help="print the cataloged names and exit")
  which.add_argument("--factory", metavar="MODULE:FUNCTION",
                     help="your own transform factory instead: its JAX run "
                     "against its Keras 3 and OptimizerV2 classes")
  which.add_argument("--native", metavar="MODULE:CLASS",
                     help="your own TensorFlow optimizer class instead "
                     "(OptimizerV2, TF1, tf_keras 2.11+): it against its "
                     "port and its adoption")
  parser.add_argument("--arguments", metavar="JSON", type=_parse_arguments,
                      default={}, help="hyperparameters for every "
                      "implementation in the run, e.g. "
                      "'{\"learning_rate\": 0.01}' (default: the "
                      "optimizer's own defaults)")
  parser.add_argument("--steps", type=int, default=100, metavar="N",
                      help="training steps, at least 2 (default: "
                      "%(default)s)")
  parser.add_argument("--seed", type=int, default=0, metavar="N",
                      help="seeds the problem and the starting point "
                      "(default: %(default)s)")
  parser.add_argument("--rtol", type=float, default=1e-5, metavar="R",
                      help="relative tolerance (default: %(default)g)")
  parser.add_argument("--atol", type=float, default=1e-6, metavar="A",
                      help="absolute tolerance (default: %(default)g)")
  parser.add_argument("--json", metavar="PATH",
                      help="write the report as JSON here (a list of "
                      "reports with --all)")
  parser.add_argument("--plot", metavar="PATH",
                      help="write the loss and difference curves (PNG) here")
  return parser


@dataclasses.dataclass(frozen=True)
class RowSource:
  """Where a run's comparisons come from (the catalog, a user's factory):
  `check(arguments)` raises ValueError for input it refuses, before
  anything runs; `comparisons(problem, steps, arguments)` gives them, per
  report title."""
  check: Callable[[dict[str, Any]], None]
  comparisons: Callable[[Problem, int, dict[str, Any]],
                        dict[str, list[Comparison]]]


def catalog_source(names: Sequence[str]) -> RowSource:
  """Cataloged optimizers, a report each (KeyError for an unknown name)."""
  chosen = {name: declarations_for(name) for name in names}

  def check(arguments):
    for declarations in chosen.values():
      check_arguments(declarations, arguments)

  return RowSource(check, lambda problem, steps, arguments: {
      name: [catalog_comparison(d, problem, steps, arguments)
             for d in declarations] for name, declarations in chosen.items()})


def factory_source(spec: str) -> RowSource:
  """A user's factory (`--factory`): its arguments are checked when it is
  called."""
  return RowSource(lambda arguments: None,
                   lambda problem, steps, arguments: {spec: [
                       factory_comparison(spec, problem, steps, arguments)]})


def check_class_arguments(spec: str, arguments: dict[str, Any]) -> None:
  """Refuses (ValueError) an argument that the user's class, its port or
  its adoption (`tf_bridge.adopt`, Keras 3) does not take, naming what
  all three take, and a required one not given."""
  from tf_bridge import _adopt  # pylint: disable=import-outside-toplevel
  from tf_bridge._keras3 import Keras3Optimizer  # pylint: disable=import-outside-toplevel
  cls = load_factory(spec, flag="--native", kind="MODULE:CLASS")
  own, through_kwargs = _adopt.constructor_arguments(cls)
  try:
    adopted = _adopt.adopted_arguments(cls, Keras3Optimizer)
  except TypeError as error:
    raise ValueError(str(error)) from None
  every = [name for name in own + through_kwargs if name in adopted]
  taken = ", ".join(own) + (
      f" (and through **kwargs its base's {', '.join(through_kwargs)})"
      if through_kwargs else "")
  unknown = [name for name in arguments if name not in own + through_kwargs]
  if unknown:
    raise ValueError(
        f"--arguments: {spec} takes no argument {', '.join(unknown)}; it "
        f"takes {taken}.")
  unadopted = [name for name in arguments if name not in adopted]
  if unadopted:
    raise ValueError(
        f"--arguments: tf_bridge.adopt({spec}), a Keras 3 class, takes no "
        f"{', '.join(unadopted)} (an argument of the class's base that "
        f"Keras 3's lacks); the class, its port and its adoption all take "
        f"{', '.join(every)}.")
  parameters = inspect.signature(cls.__init__).parameters
  missing = [name for name in own if name not in arguments
             and parameters[name].default is inspect.Parameter.empty]
  if missing:
    raise ValueError(f"--arguments: {spec} needs {', '.join(missing)}, "
                     "which has no default.")


def native_class_source(spec: str) -> RowSource:
  """A user's TensorFlow optimizer class (`--native`): its arguments are
  checked against its constructor's and its adoption's."""
  return RowSource(lambda arguments: check_class_arguments(spec, arguments),
                   lambda problem, steps, arguments: {spec: [
                       native_class_comparison(spec, problem, steps,
                                               arguments)]})


def main(argv: Sequence[str] | None = None) -> int:
  parser = _parser()
  args = parser.parse_args(argv)
  if args.list:
    print("\n".join(catalog_names()))
    return 0
  if args.steps < 2:
    parser.error("--steps must be at least 2")
  if args.all and args.plot:
    parser.error("--plot draws one optimizer: not with --all")
  if "keras" not in sys.modules:
    os.environ["KERAS_BACKEND"] = "tensorflow"
  try:
    if args.native:
      source = native_class_source(args.native)
    elif args.factory:
      source = factory_source(args.factory)
    else:
      source = catalog_source(catalog_names(merged=True) if args.all
                              else [args.optimizer])
    source.check(args.arguments)
  except KeyError as error:
    parser.error(error.args[0])
  except (ImportError, ValueError) as error:
    parser.error(str(error))  # ImportError: the user's module (--native).
  problem = make_problem(args.seed)
  try:
    runs = source.comparisons(problem, args.steps, args.arguments)
  except (ImportError, TypeError, ValueError) as error:
    if not (args.factory or args.native):
      raise
    parser.error(str(error))  # The user's module, class or arguments.
  reports = [report(name, comparisons, problem, args.steps, args.seed,
                    args.rtol, args.atol)
             for name, comparisons in runs.items()]
  from tf_bridge import _parity_output  # pylint: disable=import-outside-toplevel
  if args.all:
    print(_parity_output.summary(reports))
  else:
    print(_parity_output.table(reports[0]))
  if args.json:
    with open(args.json, "w", encoding="utf-8") as file:
      json.dump(reports if args.all else reports[0], file, indent=1)
  if args.plot:
    _parity_output.plot(reports[0], args.plot)
    print(f"plot written to {args.plot}")
  return 0 if all(r["ok"] for r in reports) else 1


if __name__ == "__main__":
  sys.exit(main())
