"""The catalog: one declaration per optimizer, read by the parity command,
the README table and the tests.

A declaration names the JAX port, its Keras class name and generation, and
the native Keras class that is its ground truth (None for the classic custom
optimizers, which Keras does not ship; their ground truth is the formula).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from typing import Any, Callable

import jaxopt_port
from jaxopt_port import legacy
from tf_bridge import _arguments, _native_methods

KERAS = "keras"
LEGACY = "legacy"
TF1 = "tf1"
ADDONS = "addons"
HF = "hf"
TF_MODELS = "tf_models"
TFRS = "tfrs"
TF_KERAS = "tf_keras"
# The libraries beside Keras of OptimizerV2's time whose optimizers the
# catalog holds: their classes are in `tf_bridge.<library>` and
# `tf_bridge.legacy.<library>`. TF Recommenders' optimizers are of tf_keras's
# 2.11+ generation: their classes are in `tf_bridge.tf_keras.tfrs` (and, for
# Keras 3, `tf_bridge.tfrs`).
LIBRARIES = (ADDONS, HF, TF_MODELS)
_NATIVE_MODULES = {KERAS: "keras.optimizers",
                   LEGACY: "tf_keras.optimizers.legacy",
                   TF1: "tensorflow.compat.v1.train",
                   TF_KERAS: "tf_keras.optimizers"}
# Where the generation's ports and bridged classes live, below `jaxopt_port`,
# `tf_bridge` and `tf_bridge.legacy`.
_PREFIXES = {KERAS: "", LEGACY: "legacy.", TF1: "tf1.", ADDONS: "addons.",
             HF: "hf.", TF_MODELS: "tf_models.", TFRS: "tfrs.",
             TF_KERAS: "tf_keras."}


@dataclasses.dataclass(frozen=True)
class Declaration:
  port: Callable[..., Any]
  class_name: str
  generation: str
  has_native: bool = True
  # The Keras backend whose native result is the ground truth: "jax" where
  # the TensorFlow backend has a defect (ScheduleFreeAdamW, docs/known-differences.md);
  # "eager" where native's step traced into a `tf.function` has one (tf_keras
  # Nadam counts its momentum product in Python, at tracing).
  native_backend: str = "tensorflow"
  # Values for the arguments the optimizer requires (TF1's learning rate),
  # used wherever the catalog makes an instance (parity command, tests).
  required: dict[str, Any] = dataclasses.field(default_factory=dict)
  # The order its native class creates slots in, where it is not its
  # generation's (`keras_optimizer`'s `slots_by_variable`).
  slots_by_variable: bool | None = None
  # Keras 3 classes that make their slots in more than one
  # `add_optimizer_variables` call (Adam's `velocity_hat` after every
  # variable's `momentum` and `velocity`): the slot names of each call, in
  # order.
  slot_groups: tuple[tuple[str, ...], ...] = ()
  # Names the native class has for arguments the port names otherwise
  # (TFA Yogi's hyperparameter `beta_1` for its argument `beta1`, LAMB's old
  # `weight_decay_rate`): the bridged class takes them too, as constructor
  # keywords, attributes and in `_get_hyper`/`_set_hyper`.
  native_names: dict[str, str] = dataclasses.field(default_factory=dict)
  # The native class's warnings for its deprecated argument names (of
  # `native_names`): name -> (warning class, message), raised as it does.
  deprecated_names: dict[str, tuple[type[Warning], str]] = dataclasses.field(
      default_factory=dict)
  # OptimizerV2 hyperparameters the native step does not read (it reads the
  # constructor's value): checkpointed, never fed to the step.
  unread_hyperparameters: tuple[str, ...] = ()
  # Public methods of the native class beyond Keras's `Optimizer`, as
  # classes the bridged class also derives from (`_native_methods`).
  methods: tuple[type, ...] = ()
  # Native attributes holding a slot of the port's state under another
  # name (`state_from_keras`; the tf_keras 2.11+ classes keep their slots
  # there too): per-variable lists (Keras 3 Adafactor's factored moments,
  # tf_keras Adam's `_momentums`) and shared scalars; by default `_<slot>`.
  native_attributes: dict[str, str] = dataclasses.field(default_factory=dict)
  # Arguments with which the optimizer keeps every slot it can (Adam's
  # `amsgrad`, RMSprop's `centered`): `tf_bridge.checkpoints` tells which
  # optimizers a file's slots point to by them, and TF1 Saver files number a
  # variable's slots in the order the native class creates them all.
  every_slot_arguments: dict[str, Any] = dataclasses.field(
      default_factory=dict)
  # tf_keras's 2.11+ classes: the names their slot variables take
  # (`m/<variable>` for the port's `momentum`), where not the port's.
  slot_names: dict[str, str] = dataclasses.field(default_factory=dict)
  # tf_keras's 2.11+ classes: the slots made as variables of the optimizer
  # for variables of rank 2 and more only, a scalar placeholder outside its
  # variables for the others (Adafactor's factored moments).
  factored_slots: tuple[str, ...] = ()
  # The optimizers of other generations whose state means what this one's
  # does, by name, with their slot names mapped to this one's
  # (`tf_bridge.checkpoints.restore`: legacy Adam's `m` is Keras 3 Adam's
  # `momentum`). TF1 Momentum is not Keras 3 SGD's: its accumulator leaves
  # the learning rate out.
  same_state: dict[str, dict[str, str]] = dataclasses.field(
      default_factory=dict)
  # Arguments made afresh for each native instance (TF1 AdagradDA's
  # `global_step`, which `testing.native_trajectory` advances).
  native_arguments: Callable[[], dict[str, Any]] | None = None
  # The original class of a library that no longer installs with its
  # dependencies beside TensorFlow 2.21, or whose TF code left its current
  # releases (`tests/originals.txt`): the tests run it as the ground truth
  # in a process of their own (tests/test_tf_libraries.py).
  original: str | None = None
  # The `original`'s OptimizerV2 hyperparameters (`_hyper`), by name, as
  # `optimizer_v2_hyperparameters` reads a native class's: the original
  # does not import here (Model Garden's AdamWeightDecay, a legacy Adam,
  # checkpoints `beta_1` and `beta_2`).
  original_hyperparameters: tuple[str, ...] = ()
  # Arguments the native or original class takes but leaves out of its
  # config (tf_keras Adam's `adaptive_epsilon`, Hugging Face's weight decay
  # lists): its twin of that generation leaves them out too, so each loads
  # the other's config, and `from_config` rebuilds them at their defaults,
  # as the original's does. (Keras 3 hosts of other generations' algorithms
  # keep them: no original has their config.)
  config_omits: tuple[str, ...] = ()

  @property
  def name(self) -> str:
    """`adam` (Keras 3), `legacy.adam`, `tf1.adam`, `addons.lazy_adam`: the
    parity command's names."""
    return _PREFIXES[self.generation] + self.port.__name__

  @property
  def bridge_path(self) -> str:
    """The module of its own class: `tf_bridge` (Keras 3),
    `tf_bridge.legacy` (OptimizerV2), `tf_bridge.tf1`, `tf_bridge.addons`."""
    return ("tf_bridge." + _PREFIXES[self.generation]).rstrip(".")

  @property
  def legacy_bridge_path(self) -> str:
    """The module of its OptimizerV2 class, where `legacy_hosted` lists it:
    `tf_bridge.legacy`, `tf_bridge.legacy.tf1`, `tf_bridge.legacy.addons`."""
    own = "" if self.generation in (KERAS, LEGACY) else _PREFIXES[
        self.generation]
    return ("tf_bridge.legacy." + own).rstrip(".")

  def sparse_rows(self, **kwargs: Any) -> str:
    """How the port (and so the bridged class) applies a sparse gradient
    made with these arguments, as its native class does: "rows" (only the
    touched rows of the variable and its slots), "params" (slots on every
    row, the variable on touched rows) or "dense". The port declares it
    (`sparse_rows=` of its `with_*_arguments` declaration)."""
    return jaxopt_port.sparse_mode(self.make_port(**kwargs))

  def make_port(self, **kwargs: Any) -> Any:
    return self.port(**{**self.required, **kwargs})

  def make_native(self, **kwargs: Any) -> Any:
    """A native optimizer with these arguments (and `native_arguments`)."""
    fresh = {} if self.native_arguments is None else self.native_arguments()
    return self.native_class()(**{**self.required, **fresh, **kwargs})

  def optimizer_v2_hyperparameters(self) -> tuple[str, ...]:
    """The algorithm's hyperparameters that its native OptimizerV2 class
    keeps as OptimizerV2 hyperparameters (`_hyper`: variables once built,
    checkpointed), by their native names, read from a native instance; ()
    without one. OptimizerV2's own `decay` is left to OptimizerV2 unless
    the algorithm takes it (legacy Nadam's schedule decay). An `original`'s
    are its `original_hyperparameters`."""
    if self.original is not None:
      return self.original_hyperparameters
    if self.generation != LEGACY or not self.has_native:
      return ()
    own = {"learning_rate"} | ({"decay"} - set(self.native_names))
    return tuple(sorted(set(self.make_native()._hyper) - own))  # pylint: disable=protected-access

  def native_positional(self) -> tuple[str, ...]:
    """The arguments a Keras 3 or tf_keras native class takes positionally,
    in its order (Muon's own follow Keras's base arguments and `name`,
    legacy Ftrl's last two follow `name`), read from the installed class;
    () for the other generations, whose bridged classes follow the port's
    order."""
    if (self.generation not in (KERAS, LEGACY, TF_KERAS)
        or not self.has_native):
      return ()
    parameters = inspect.signature(self.native_class()).parameters.values()
    return tuple(p.name for p in parameters
                 if p.kind == p.POSITIONAL_OR_KEYWORD)

  @property
  def port_path(self) -> str:
    return "jaxopt_port." + self.name

  @property
  def native_path(self) -> str | None:
    if not self.has_native:
      return None
    return f"{_NATIVE_MODULES[self.generation]}.{self._native_class_name}"

  @property
  def _native_class_name(self) -> str:
    suffix = "Optimizer" if self.generation == TF1 else ""
    return self.class_name + suffix

  def native_class(self) -> type:
    """The native optimizer class (imports TensorFlow or Keras)."""
    if not self.has_native:
      raise LookupError(f"{self.name} has no native Keras optimizer.")
    module = importlib.import_module(_NATIVE_MODULES[self.generation])
    return getattr(module, self._native_class_name)


def keras(port, class_name, **options) -> Declaration:
  return Declaration(port, class_name, KERAS, **options)


def keras_legacy(port, class_name, **options) -> Declaration:
  return Declaration(port, class_name, LEGACY, **options)


def addons(port, class_name, **options) -> Declaration:
  return Declaration(port, class_name, ADDONS, has_native=False, **options)


def hf(port, class_name, **options) -> Declaration:
  return Declaration(port, class_name, HF, has_native=False,
                     original=f"transformers.optimization_tf.{class_name}",
                     **options)


def tfrs(port, class_name, **options) -> Declaration:
  return Declaration(
      port, class_name, TFRS, has_native=False,
      original=("tensorflow_recommenders.experimental.optimizers."
                + class_name), **options)


def tf_models(port, class_name, module, **options) -> Declaration:
  return Declaration(
      port, class_name, TF_MODELS, has_native=False,
      original=f"official.modeling.optimization.{module}.{class_name}",
      **options)


def tf_keras(port, class_name, **options) -> Declaration:
  return Declaration(port, class_name, TF_KERAS, **options)


def _global_step() -> dict[str, Any]:
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  return {"global_step": tf.Variable(0, dtype=tf.int64)}


def tf1(port, class_name, **options) -> Declaration:
  return Declaration(port, class_name, TF1, required={"learning_rate": 0.01, **options.pop(
                         "required", {})}, **options)


# tf_keras's Adam and AdamW: their slots' names and attributes.
_TF_KERAS_ADAM = dict(
    slot_groups=(("momentum", "velocity"), ("velocity_hat",)),
    slot_names={"momentum": "m", "velocity": "v", "velocity_hat": "vhat"},
    native_attributes={"momentum": "_momentums", "velocity": "_velocities",
                       "velocity_hat": "_velocity_hats"})

# Model Garden's LARS and LAMB leave their name lists out of their configs.
_GARDEN_LAYER_ADAPTATION = ("exclude_from_layer_adaptation",
                            "exclude_from_weight_decay")

CATALOG: tuple[Declaration, ...] = (
    keras(jaxopt_port.sgd, "SGD", every_slot_arguments={"momentum": 0.9},
          same_state={"legacy.sgd": {"momentum": "momentum"}}),
    keras(jaxopt_port.adam, "Adam", every_slot_arguments={"amsgrad": True},
          same_state={"legacy.adam": {"m": "momentum", "v": "velocity",
                                      "vhat": "velocity_hat"},
                      "tf1.adam": {"m": "momentum", "v": "velocity"}},
          slot_groups=(("momentum", "velocity"), ("velocity_hat",))),
    keras(jaxopt_port.adamw, "AdamW", every_slot_arguments={"amsgrad": True},
          slot_groups=(("momentum", "velocity"), ("velocity_hat",))),
    keras(jaxopt_port.adagrad, "Adagrad", same_state={
        "legacy.adagrad": {"accumulator": "accumulator"},
        "tf1.adagrad": {"accumulator": "accumulator"}}),
    keras(jaxopt_port.rmsprop, "RMSprop",
          every_slot_arguments={"momentum": 0.5, "centered": True},
          same_state={name: {"rms": "velocity", "mg": "average_gradient",
                             "momentum": "momentum"}
                      for name in ("legacy.rmsprop", "tf1.rmsprop")},
          slot_groups=(
              ("velocity",), ("momentum",), ("average_gradient",))),
    keras(jaxopt_port.adamax, "Adamax", same_state={
        "legacy.adamax": {"m": "momentum", "v": "norm"}}),
    keras(jaxopt_port.nadam, "Nadam", same_state={
        "legacy.nadam": {"m": "momentum", "v": "velocity",
                         "momentum_cache": "u_product"}}),
    keras(jaxopt_port.adadelta, "Adadelta", same_state={
        "legacy.adadelta": {"accum_grad": "accumulated_grad",
                            "accum_var": "accumulated_delta_var"},
        "tf1.adadelta": {"accum": "accumulated_grad",
                         "accum_update": "accumulated_delta_var"}}),
    keras(jaxopt_port.lion, "Lion"),
    keras(jaxopt_port.ftrl, "Ftrl", same_state={
        "legacy.ftrl": {"accumulator": "accumulator", "linear": "linear"},
        "tf1.ftrl": {"accum": "accumulator", "linear": "linear"}}),
    keras(jaxopt_port.lamb, "Lamb"),
    keras(jaxopt_port.adafactor, "Adafactor",
          native_attributes={"row_moments": "_r", "column_moments": "_c"}),
    keras(jaxopt_port.muon, "Muon", methods=(_native_methods.MuonMethods,)),
    keras(jaxopt_port.schedule_free_adamw, "ScheduleFreeAdamW",
          native_backend="jax"),
    keras(jaxopt_port.vanilla_sgd, "VanillaSGD", has_native=False),
    keras(jaxopt_port.momentum_sgd, "MomentumSGD", has_native=False,
          every_slot_arguments={"momentum": 0.9}),
    keras(jaxopt_port.centered_momentum_sgd, "CenteredMomentumSGD",
          has_native=False, every_slot_arguments={"momentum": 0.9}),
    keras_legacy(legacy.sgd, "SGD", every_slot_arguments={"momentum": 0.9}),
    keras_legacy(legacy.adam, "Adam", every_slot_arguments={"amsgrad": True}),
    keras_legacy(legacy.adagrad, "Adagrad"),
    keras_legacy(legacy.rmsprop, "RMSprop",
                 every_slot_arguments={"momentum": 0.5, "centered": True}),
    keras_legacy(legacy.adamax, "Adamax"),
    keras_legacy(legacy.adadelta, "Adadelta"),
    # tf_keras keeps the schedule decay as its `decay` hyperparameter, and
    # its step reads the constructor's value.
    keras_legacy(legacy.nadam, "Nadam",
                 native_names={"decay": "schedule_decay"},
                 unread_hyperparameters=("decay",),
                 native_attributes={"momentum_cache": "_m_cache"}),
    keras_legacy(legacy.ftrl, "Ftrl", slots_by_variable=True),
    keras_legacy(legacy.vanilla_sgd, "VanillaSGD", has_native=False),
    keras_legacy(legacy.momentum_sgd, "MomentumSGD", has_native=False,
                 every_slot_arguments={"momentum": 0.9}),
    keras_legacy(legacy.centered_momentum_sgd, "CenteredMomentumSGD",
                 has_native=False, every_slot_arguments={"momentum": 0.9}),
    keras(jaxopt_port.adagrad_decay, "AdagradDecay", has_native=False,
          required={"learning_rate": 0.1}),
    keras_legacy(legacy.adagrad_decay, "AdagradDecay", has_native=False,
                 required={"learning_rate": 0.1}),
    tf1(jaxopt_port.tf1.gradient_descent, "GradientDescent"),
    tf1(jaxopt_port.tf1.momentum, "Momentum", required={"momentum": 0.9}),
    tf1(jaxopt_port.tf1.adam, "Adam"),
    tf1(jaxopt_port.tf1.adagrad, "Adagrad"),
    tf1(jaxopt_port.tf1.adagrad_da, "AdagradDA",
        native_arguments=_global_step),
    tf1(jaxopt_port.tf1.adadelta, "Adadelta"),
    tf1(jaxopt_port.tf1.rmsprop, "RMSProp",
        every_slot_arguments={"centered": True}),
    tf1(jaxopt_port.tf1.ftrl, "Ftrl"),
    tf1(jaxopt_port.tf1.proximal_adagrad, "ProximalAdagrad"),
    tf1(jaxopt_port.tf1.proximal_gradient_descent, "ProximalGradientDescent"),
    # Google BERT's (TF1 code that no longer runs: its formula is the truth).
    tf1(jaxopt_port.tf1.adam_weight_decay, "AdamWeightDecay",
        has_native=False),
    # TF Addons itself cannot run beside TF 2.21: its sparse paths are
    # declared on the ports (AdamW decays only the touched rows and moves
    # all of them: "touched").
    addons(jaxopt_port.addons.adamw, "AdamW", required={"weight_decay": 0.01},
           every_slot_arguments={"amsgrad": True}),
    addons(jaxopt_port.addons.sgdw, "SGDW", required={"weight_decay": 0.01},
           every_slot_arguments={"momentum": 0.9}),
    addons(jaxopt_port.addons.lazy_adam, "LazyAdam",
           every_slot_arguments={"amsgrad": True}),
    addons(jaxopt_port.addons.rectified_adam, "RectifiedAdam",
           every_slot_arguments={"amsgrad": True}),
    addons(jaxopt_port.addons.adabelief, "AdaBelief",
           every_slot_arguments={"amsgrad": True}),
    addons(jaxopt_port.addons.yogi, "Yogi",
           native_names={"beta_1": "beta1", "beta_2": "beta2"}),
    addons(jaxopt_port.addons.novograd, "NovoGrad",
           every_slot_arguments={"amsgrad": True},
           config_omits=("amsgrad", "decay")),
    addons(jaxopt_port.addons.cocob, "COCOB",
           config_omits=("decay", "learning_rate", "use_locking")),
    addons(jaxopt_port.addons.conditional_gradient, "ConditionalGradient",
           required={"learning_rate": 0.9}, config_omits=("decay",)),
    addons(jaxopt_port.addons.proximal_adagrad, "ProximalAdagrad",
           config_omits=("decay",)),
    addons(jaxopt_port.addons.lamb, "LAMB",
           methods=(_native_methods.LambNameMethods,),
           native_names={"weight_decay_rate": "weight_decay"},
           deprecated_names={"weight_decay_rate": (
               DeprecationWarning, "weight_decay_rate has been renamed to "
               "weight_decay,and will be deprecated in Addons 0.18.")}),
    hf(jaxopt_port.hf.adam_weight_decay, "AdamWeightDecay",
       every_slot_arguments={"amsgrad": True},
       config_omits=("exclude_from_weight_decay", "include_in_weight_decay")),
    tf_models(jaxopt_port.tf_models.adam_weight_decay, "AdamWeightDecay",
              "legacy_adamw", every_slot_arguments={"amsgrad": True},
              original_hyperparameters=("beta_1", "beta_2"),
              config_omits=("exclude_from_weight_decay", "gradient_clip_norm",
                            "include_in_weight_decay")),
    tf_models(jaxopt_port.tf_models.lars, "LARS", "lars",
              config_omits=_GARDEN_LAYER_ADAPTATION),
    tf_models(jaxopt_port.tf_models.lamb, "LAMB", "lamb",
              methods=(_native_methods.LambNameMethods,),
              original_hyperparameters=("beta_1", "beta_2",
                                        "weight_decay_rate"),
              config_omits=_GARDEN_LAYER_ADAPTATION),
    tfrs(jaxopt_port.tfrs.clippy_adagrad, "ClippyAdagrad",
         every_slot_arguments={"export_clipping_factors": True},
         config_omits=("use_standard_accumulator_update",),
         native_attributes={"accumulator": "_accumulators",
                            "clipping_factor": "clipping_factors"}),
    tf_keras(jaxopt_port.tf_keras.sgd, "SGD",
             every_slot_arguments={"momentum": 0.9},
             slot_names={"momentum": "m"},
             native_attributes={"momentum": "momentums"}),
    tf_keras(jaxopt_port.tf_keras.adam, "Adam",
             every_slot_arguments={"amsgrad": True},
             config_omits=("adaptive_epsilon",), **_TF_KERAS_ADAM),
    tf_keras(jaxopt_port.tf_keras.adamw, "AdamW",
             every_slot_arguments={"amsgrad": True}, **_TF_KERAS_ADAM),
    tf_keras(jaxopt_port.tf_keras.adagrad, "Adagrad",
             native_attributes={"accumulator": "_accumulators"}),
    tf_keras(jaxopt_port.tf_keras.rmsprop, "RMSprop",
             every_slot_arguments={"momentum": 0.5, "centered": True},
             slot_groups=(("velocity",), ("momentum",), ("average_gradient",)),
             native_attributes={"velocity": "_velocities",
                                "momentum": "_momentums",
                                "average_gradient": "_average_gradients"}),
    tf_keras(jaxopt_port.tf_keras.adamax, "Adamax",
             slot_names={"momentum": "m", "norm": "u"},
             native_attributes={"momentum": "_m", "norm": "_u"}),
    # Traced into a `tf.function` (as `fit` runs it), tf_keras's Nadam
    # multiplies its momentum product once per variable and step: eager
    # runs, Keras 3's numbers, are the ground truth (README, Known
    # differences).
    tf_keras(jaxopt_port.tf_keras.nadam, "Nadam", native_backend="eager",
             slot_names={"momentum": "m", "velocity": "v"},
             native_attributes={"momentum": "_momentums",
                                "velocity": "_velocities"}),
    tf_keras(jaxopt_port.tf_keras.adadelta, "Adadelta", native_attributes={
        "accumulated_grad": "_accumulated_grads",
        "accumulated_delta_var": "_accumulated_delta_vars"}),
    tf_keras(jaxopt_port.tf_keras.lion, "Lion", slot_names={"momentum": "m"},
             native_attributes={"momentum": "momentums"}),
    tf_keras(jaxopt_port.tf_keras.ftrl, "Ftrl",
             native_attributes={"accumulator": "_accumulators",
                                "linear": "_linears"}),
    tf_keras(jaxopt_port.tf_keras.adafactor, "Adafactor",
             slot_names={"row_moments": "r", "column_moments": "c",
                         "velocity": "v"},
             native_attributes={"row_moments": "_r", "column_moments": "_c",
                                "velocity": "_v"},
             factored_slots=("row_moments", "column_moments")),
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


def legacy_hosted(generation: str = LEGACY) -> list[Declaration]:
  """The declarations with an OptimizerV2 class in `tf_bridge.legacy` (or
  `tf_bridge.legacy.tf1`, `.addons`): the legacy ports, plus the Keras 3
  algorithms legacy lacks (with Keras 3 numerics; a Keras 3 port never
  stands in for a legacy class of the same name). None for tf_keras's
  2.11+ generation and TF Recommenders', of that generation."""
  if generation in (TF_KERAS, TFRS):
    return []
  if generation != LEGACY:
    return [d for d in CATALOG if d.generation == generation]
  legacy = [d for d in CATALOG if d.generation == LEGACY]
  names = {d.class_name for d in legacy}
  return legacy + [d for d in CATALOG
                   if d.generation == KERAS and d.class_name not in names]


def markdown_table() -> str:
  """The README's optimizer table (a test keeps the README equal to it)."""
  hosted = {id(d) for generation in (LEGACY, TF1, *LIBRARIES)
            for d in legacy_hosted(generation)}
  rows: dict[str, dict[str, list[str]]] = {}
  for declaration in CATALOG:
    key = declaration.name.removeprefix("legacy.").removeprefix("tf_keras.")
    row = rows.setdefault(key, {"ports": [], "keras": [], "legacy": [],
                                "tf_keras": [], "truth": []})
    row["ports"].append(f"`{declaration.port_path}`")
    column = {LEGACY: None, TF_KERAS: "tf_keras"}.get(declaration.generation,
                                                      "keras")
    if column is not None:
      row[column].append(
          f"`{declaration.bridge_path}.{declaration.class_name}`")
    if id(declaration) in hosted:
      row["legacy"].append(
          f"`{declaration.legacy_bridge_path}.{declaration.class_name}`")
    if declaration.has_native:
      truth = f"`{declaration.native_path}`"
      if declaration.native_backend != "tensorflow":
        truth += f" ({declaration.native_backend} backend)"
      row["truth"].append(truth)
    elif declaration.original is not None:
      row["truth"].append(f"`{declaration.original}`")
  lines = ["| name | JAX function | Keras 3 class | legacy class "
           "| tf_keras class | ground truth |",
           "|---|---|---|---|---|---|"]
  for name, row in rows.items():
    cells = [", ".join(row[column]) or "-"
             for column in ("ports", "keras", "legacy", "tf_keras")]
    truth = ", ".join(row["truth"]) or "its formula (tests: numpy)"
    lines.append(f"| {name} | {' | '.join(cells)} | {truth} |")
  return "\n".join(lines)


# The modules holding the catalog's classes, with each module's base class
# and the declarations it has a class for.
CLASS_MODULES: dict[str, tuple[str, Callable[[], list[Declaration]]]] = {
    "tf_bridge.optimizers": ("Keras3Optimizer", lambda: _generation(KERAS)),
    "tf_bridge.tf1": ("Keras3Optimizer", lambda: _generation(TF1)),
    "tf_bridge.addons": ("Keras3Optimizer", lambda: _generation(ADDONS)),
    "tf_bridge.legacy.optimizers": ("LegacyOptimizer", legacy_hosted),
    "tf_bridge.legacy.tf1": ("LegacyTF1Optimizer",
                             lambda: legacy_hosted(TF1)),
    "tf_bridge.legacy.addons": ("LegacyOptimizer",
                                lambda: legacy_hosted(ADDONS)),
    "tf_bridge.hf": ("Keras3Optimizer", lambda: _generation(HF)),
    "tf_bridge.legacy.hf": ("LegacyOptimizer", lambda: legacy_hosted(HF)),
    "tf_bridge.tf_models": ("Keras3Optimizer",
                           lambda: _generation(TF_MODELS)),
    "tf_bridge.legacy.tf_models": ("LegacyOptimizer",
                                   lambda: legacy_hosted(TF_MODELS)),
    "tf_bridge.tfrs": ("Keras3Optimizer", lambda: _generation(TFRS)),
    "tf_bridge.tf_keras.optimizers": ("TfKerasOptimizer",
                                      lambda: _generation(TF_KERAS)),
    "tf_bridge.tf_keras.tfrs": ("TfKerasOptimizer",
                                lambda: _generation(TFRS)),
}
GENERATED_BEGIN = ("# Catalog classes, written by `python -m tf_bridge.catalog` "
                   "from CATALOG.\n")
GENERATED_END = "# End of catalog classes.\n"


def _generation(generation: str) -> list[Declaration]:
  return [d for d in CATALOG if d.generation == generation]


def class_statements(module: str) -> str:
  """The class statements of `module`'s catalog classes and its `__all__`
  (a module of `CLASS_MODULES`), as `python -m tf_bridge.catalog` writes
  them between the module's markers; a test keeps each module equal to
  them. A class's keywords name its declaration, from which its base class
  reads everything else; its constructor's signature (the class's own,
  read from the imported module where the class exists) is written for
  static analysis (IDEs) only."""
  base, declarations = CLASS_MODULES[module]
  signatures = _signatures(module)
  legacy = base.startswith("Legacy")
  blocks = []
  for d in declarations():
    bases = [m.__name__ for m in d.methods]
    if _arguments.is_decoupled(d.port):
      bases.append(("Legacy" if legacy else "Keras3")
                   + "DecoupledWeightDecay")
    if d.has_native:
      origin = f"`{d.native_path}`"
    elif d.original is not None:
      origin = f"`{d.original}`"
    elif d.generation == ADDONS:
      origin = f"TF Addons' `tfa.optimizers.{d.class_name}`"
    else:
      origin = f"`{d.port_path}`"
    host = ("an OptimizerV2" if legacy
            else "a tf_keras optimizer" if base == "TfKerasOptimizer"
            else "a Keras 3 optimizer")
    head = f"class {d.class_name}("
    arguments = [*bases, base, f'algorithm="{d.name}"']
    line = head + ", ".join(arguments) + "):"
    if len(line) > 79:
      line = head + (",\n" + " " * len(head)).join(arguments) + "):"
    block = [line, *_wrapped(f'  """{origin}, bridged as {host}."""', 79,
                             2)]
    if d.class_name in signatures:
      block += ["  if TYPE_CHECKING:  # The constructor, for static analysis.",
                *_call_lines("    def __init__(", signatures[d.class_name],
                             ") -> None: ...")]
    blocks.append("\n".join(block) + "\n")
  names = ", ".join(f'"{d.class_name}"' for d in declarations())
  return (GENERATED_BEGIN + "\n\n" + "\n\n".join(blocks) + "\n\n"
          + "\n".join(_wrapped(f"__all__ = [{names}]")) + "\n"
          + GENERATED_END)


def _signatures(module: str) -> dict[str, list[str]]:
  """`self` and the parameters of each catalog class `module` has now (none if
  it cannot be imported yet), defaults as their reprs."""
  try:
    imported = importlib.import_module(module)
  except (ImportError, AttributeError, NameError):  # Classes not yet written.
    return {}
  found = {}
  for name in getattr(imported, "__all__", ()):
    value = getattr(imported, name, None)
    if getattr(value, "declaration", None) is None:
      continue
    parameters, keyword_only = ["self"], False
    for parameter in inspect.signature(value).parameters.values():
      if parameter.kind == parameter.KEYWORD_ONLY and not keyword_only:
        parameters.append("*")
        keyword_only = True
      parameters.append(
          parameter.name if parameter.default is parameter.empty
          else f"{parameter.name}={parameter.default!r}")
    found[name] = parameters
  return found


def _call_lines(head: str, parameters: list[str], tail: str) -> list[str]:
  """`head` + the parameters + `tail`, broken between parameters (inside
  the parentheses) to fit 79 columns, continued under the first one."""
  lines, line = [], head
  for index, parameter in enumerate(parameters):
    piece = parameter + (tail if index == len(parameters) - 1 else ",")
    if len(line) + len(piece) > 79 and line.strip() != head.strip():
      lines.append(line.rstrip())
      line = " " * len(head)
    line += piece + ("" if index == len(parameters) - 1 else " ")
  return lines + [line]


def _wrapped(line: str, width: int = 79, indent: int | None = None
             ) -> list[str]:
  """A long line split after spaces, continued `indent` columns in (by
  default under its first `[`)."""
  lines = []
  margin = " " * (line.index("[") + 1 if indent is None else indent)
  while len(line) > width:
    cut = line.rindex(" ", 0, width)
    lines.append(line[:cut].rstrip())
    line = margin + line[cut + 1:]
  return lines + [line]


def module_file(module: str) -> str:
  """The source file of a `CLASS_MODULES` module (without importing it)."""
  import pathlib  # pylint: disable=import-outside-toplevel
  root = pathlib.Path(__file__).resolve().parent.parent
  return str(root.joinpath(*module.split(".")).with_suffix(".py"))


def with_class_statements(source: str, module: str) -> str:
  """`source` with its generated section replaced by `class_statements`."""
  begin = source.index(GENERATED_BEGIN)
  end = source.index(GENERATED_END) + len(GENERATED_END)
  return source[:begin] + class_statements(module) + source[end:]


def _write_class_statements() -> bool:
  """Writes every `CLASS_MODULES` module's class statements; whether one
  changed (a new class's signature is known once its module imports it)."""
  changed = False
  for name in CLASS_MODULES:
    path = module_file(name)
    with open(path, encoding="utf-8") as file:
      text = file.read()
    new = with_class_statements(text, name)
    if new != text:
      changed = True
      with open(path, "w", encoding="utf-8") as file:
        file.write(new)
  return changed


if __name__ == "__main__":
  import subprocess  # pylint: disable=import-outside-toplevel
  import sys  # pylint: disable=import-outside-toplevel
  if _write_class_statements() and "--again" not in sys.argv:
    # Once more in a fresh process, which imports the classes just written.
    subprocess.run([sys.executable, "-m", "tf_bridge.catalog", "--again"],
                   check=True)
