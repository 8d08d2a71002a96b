"""The bridged classes are real classes: written in their modules (as the
catalog says), each with its own source, docstring and signature, all
derived from one base per Keras generation; package `__init__` files only
re-export."""

import ast
import importlib
import inspect
import pathlib

import jaxopt_port
import pytest

import tf_bridge
import tf_bridge.legacy
import tf_bridge.tf_keras
from tf_bridge import catalog

ROOT = pathlib.Path(__file__).resolve().parent.parent
BASES = {"Keras3Optimizer": tf_bridge.Keras3Optimizer,
         "LegacyOptimizer": tf_bridge.legacy.LegacyOptimizer,
         "LegacyTF1Optimizer": tf_bridge.legacy.LegacyOptimizer,
         "TfKerasOptimizer": tf_bridge.tf_keras.TfKerasOptimizer}


@pytest.mark.parametrize("module", list(catalog.CLASS_MODULES))
def test_class_statements_are_the_catalogs(module):
  with open(catalog.module_file(module), encoding="utf-8") as file:
    source = file.read()
  assert catalog.with_class_statements(source, module) == source, (
      f"{catalog.module_file(module)} differs from tf_bridge/catalog.py: run "
      "`python -m tf_bridge.catalog` to write its class statements.")


CATALOG_CLASSES = [
    (module, declaration) for module, (_, declarations)
    in catalog.CLASS_MODULES.items() for declaration in declarations()]


@pytest.mark.parametrize(
    "module,declaration", CATALOG_CLASSES,
    ids=[f"{m}.{d.class_name}" for m, d in CATALOG_CLASSES])
def test_every_catalog_class_is_a_class_of_its_module(module, declaration):
  base = BASES[catalog.CLASS_MODULES[module][0]]
  optimizer_class = getattr(importlib.import_module(module),
                            declaration.class_name)
  assert issubclass(optimizer_class, base)
  assert optimizer_class.declaration is declaration
  assert optimizer_class.port is declaration.port
  # grep, IDEs and pdoc find its class statement in its module's file.
  source = inspect.getsource(optimizer_class)
  assert source.startswith(f"class {declaration.class_name}(")
  assert inspect.getsourcefile(optimizer_class) == catalog.module_file(module)
  # Its own docstring first, then the port's.
  own = source.split('"""')[1]
  assert optimizer_class.__doc__.startswith(inspect.cleandoc(own))
  assert inspect.getdoc(declaration.port) in optimizer_class.__doc__
  # Its own signature (the port's arguments), not the base's *args.
  parameters = inspect.signature(optimizer_class).parameters
  taken = set(inspect.signature(declaration.port).parameters)
  if base is tf_bridge.tf_keras.TfKerasOptimizer:
    # A Keras 3 port there takes tf_keras's base arguments, not Keras 3's.
    taken -= set(declaration.port.base_arguments) - set(
        optimizer_class._host_arguments)  # pylint: disable=protected-access
  assert taken <= set(parameters) | set(declaration.native_names.values())
  assert "skip_nonfinite" in parameters
  # Reached from the public module too (`tf_bridge.Adam`).
  public = (declaration.legacy_bridge_path
            if issubclass(base, tf_bridge.legacy.LegacyOptimizer)
            else optimizer_class.registered_name.split(">")[0]
            if base is tf_bridge.tf_keras.TfKerasOptimizer
            else declaration.bridge_path)
  assert getattr(importlib.import_module(public),
                 declaration.class_name) is optimizer_class


def test_keras_optimizer_subclasses_the_generation_base():
  keras3 = tf_bridge.keras_optimizer(jaxopt_port.vanilla_sgd, "MySGD",
                                     module="tests.architecture")
  legacy = tf_bridge.legacy.keras_optimizer(jaxopt_port.legacy.vanilla_sgd,
                                            "MySGD",
                                            module="tests.architecture")
  assert keras3.__mro__[1] is tf_bridge.Keras3Optimizer
  assert legacy.__mro__[1] is tf_bridge.legacy.LegacyOptimizer
  assert keras3.registered_name == "tests.architecture>MySGD"
  assert list(inspect.signature(keras3).parameters)[:2] == ["learning_rate",
                                                           "weight_decay"]


def _package_inits():
  for package in ("jaxopt_port", "tf_bridge"):
    yield from sorted((ROOT / package).rglob("__init__.py"))


@pytest.mark.parametrize("path", list(_package_inits()),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_package_inits_only_reexport(path):
  """Imports, `__all__`, a docstring, a constant, and the lazy submodule
  `__getattr__`: no class, no other function."""
  tree = ast.parse(path.read_text(encoding="utf-8"))
  for node in tree.body:
    if isinstance(node, ast.FunctionDef):
      assert node.name == "__getattr__", (path, node.name)
    else:
      assert not isinstance(node, (ast.ClassDef, ast.AsyncFunctionDef,
                                   ast.For, ast.While, ast.With)), (
                                       path, ast.dump(node)[:80])


def test_generation_packages_do_not_import_each_other():
  """`jaxopt_port.addons`, `.legacy` and `.tf1` share update steps through
  the family modules (`jaxopt_port._adam`, ...), never sideways."""
  generations = {f"jaxopt_port.{g}" for g in ("addons", "legacy", "tf1")}
  for generation in generations:
    for path in (ROOT / generation.replace(".", "/")).glob("*.py"):
      for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
          imported = {node.module} | {f"{node.module}.{a.name}"
                                      for a in node.names}
        elif isinstance(node, ast.Import):
          imported = {a.name for a in node.names}
        else:
          continue
        assert not imported & (generations - {generation}), (path, imported)
