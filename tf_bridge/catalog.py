"""The catalog: one declaration per optimizer, read by the parity command,
the README table and the tests.

A declaration names the JAX port, its Keras class name and generation, and
the native Keras class that is its ground truth (None for the classic custom
optimizers, which Keras does not ship; their ground truth is the formula).
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any, Callable

import jaxopt_port
from jaxopt_port import legacy

KERAS = "keras"
LEGACY = "legacy"
_NATIVE_MODULES = {KERAS: "keras.optimizers",
                   LEGACY: "tf_keras.optimizers.legacy"}


@dataclasses.dataclass(frozen=True)
class Declaration:
  port: Callable[..., Any]
  class_name: str
  generation: str
  has_native: bool = True
  # The native class updates only the rows a sparse gradient touches: True
  # (the variable's and its slots'), "params" (the variable's only; slots
  # update everywhere), or a function of the constructor's arguments.
  lazy_sparse: bool | str | Callable[[dict[str, Any]], bool] = False
  # The Keras backend whose native result is the ground truth: "jax" where
  # the TensorFlow backend has a defect (DESIGN.md, ScheduleFreeAdamW).
  native_backend: str = "tensorflow"

  @property
  def name(self) -> str:
    """`adam` (Keras 3) or `legacy.adam`: the parity command's names."""
    prefix = "legacy." if self.generation == LEGACY else ""
    return prefix + self.port.__name__

  @property
  def port_path(self) -> str:
    return "jaxopt_port." + self.name

  @property
  def native_path(self) -> str | None:
    if not self.has_native:
      return None
    return f"{_NATIVE_MODULES[self.generation]}.{self.class_name}"

  def native_class(self) -> type:
    """The native Keras optimizer class (imports TensorFlow or Keras)."""
    if not self.has_native:
      raise LookupError(f"{self.name} has no native Keras optimizer.")
    module = importlib.import_module(_NATIVE_MODULES[self.generation])
    return getattr(module, self.class_name)


def keras(port, class_name, *, has_native=True, lazy_sparse=False,
          native_backend="tensorflow") -> Declaration:
  return Declaration(port, class_name, KERAS, has_native, lazy_sparse,
                     native_backend)


def keras_legacy(port, class_name, *, has_native=True, lazy_sparse=False
                 ) -> Declaration:
  return Declaration(port, class_name, LEGACY, has_native, lazy_sparse)


def with_momentum(arguments: dict[str, Any]) -> bool:
  """Legacy SGD and RMSprop take their lazy sparse kernels with momentum."""
  return arguments.get("momentum", 0.0) > 0


CATALOG: tuple[Declaration, ...] = (
    keras(jaxopt_port.sgd, "SGD"),
    keras(jaxopt_port.adam, "Adam"),
    keras(jaxopt_port.adamw, "AdamW"),
    keras(jaxopt_port.adagrad, "Adagrad"),
    keras(jaxopt_port.rmsprop, "RMSprop"),
    keras(jaxopt_port.adamax, "Adamax"),
    keras(jaxopt_port.nadam, "Nadam"),
    keras(jaxopt_port.adadelta, "Adadelta"),
    keras(jaxopt_port.lion, "Lion"),
    keras(jaxopt_port.ftrl, "Ftrl"),
    keras(jaxopt_port.lamb, "Lamb"),
    keras(jaxopt_port.adafactor, "Adafactor"),
    keras(jaxopt_port.muon, "Muon"),
    keras(jaxopt_port.schedule_free_adamw, "ScheduleFreeAdamW",
          native_backend="jax"),
    keras(jaxopt_port.vanilla_sgd, "VanillaSGD", has_native=False),
    keras(jaxopt_port.momentum_sgd, "MomentumSGD", has_native=False),
    keras(jaxopt_port.centered_momentum_sgd, "CenteredMomentumSGD",
          has_native=False),
    keras_legacy(legacy.sgd, "SGD", lazy_sparse=with_momentum),
    keras_legacy(legacy.adam, "Adam"),
    keras_legacy(legacy.adagrad, "Adagrad"),
    keras_legacy(legacy.rmsprop, "RMSprop", lazy_sparse=with_momentum),
    keras_legacy(legacy.adamax, "Adamax", lazy_sparse=True),
    keras_legacy(legacy.adadelta, "Adadelta", lazy_sparse=True),
    keras_legacy(legacy.nadam, "Nadam", lazy_sparse="params"),
    keras_legacy(legacy.ftrl, "Ftrl", lazy_sparse=True),
    keras_legacy(legacy.vanilla_sgd, "VanillaSGD", has_native=False),
    keras_legacy(legacy.momentum_sgd, "MomentumSGD", has_native=False),
    keras_legacy(legacy.centered_momentum_sgd, "CenteredMomentumSGD",
                 has_native=False),
)

BY_NAME: dict[str, Declaration] = {d.name: d for d in CATALOG}


def lookup(name: str) -> Declaration:
  """The declaration called `name` (`adam`, `legacy.adam`, ...)."""
  try:
    return BY_NAME[name]
  except KeyError:
    raise KeyError(
        f"Unknown optimizer {name!r}; known: {', '.join(sorted(BY_NAME))}"
    ) from None


def markdown_table() -> str:
  """The README's optimizer table (a test keeps the README equal to it)."""
  rows: dict[str, dict[str, Any]] = {}
  for declaration in CATALOG:
    row = rows.setdefault(declaration.port.__name__,
                          {KERAS: "-", LEGACY: "-", "truth": []})
    row[declaration.generation] = f"`{declaration.class_name}`"
    if declaration.has_native:
      row["truth"].append(f"`{declaration.native_path}`")
  lines = ["| name | JAX function | Keras 3 class | legacy class | ground truth |",
           "|---|---|---|---|---|"]
  for name, row in rows.items():
    truth = ", ".join(row["truth"]) or "its formula (tests: numpy)"
    lines.append(f"| {name} | `jaxopt_port.{name}` | {row[KERAS]} | "
                 f"{row[LEGACY]} | {truth} |")
  return "\n".join(lines)
