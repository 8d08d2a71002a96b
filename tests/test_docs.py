"""docs/keras-hooks.md states the installed Keras hooks' real signatures;
docs/migrating.md the installed defaults of the ports and optax; the
README's API-reference command builds; the README's and the guides' links
lead somewhere, and the documents state the project's contracts in their
own words."""

import inspect
import pathlib
import re
import subprocess
import sys

import keras
import pytest
import tf_keras

DOC = (pathlib.Path(__file__).resolve().parents[1] / "docs"
       / "keras-hooks.md").read_text()
SECTIONS = DOC.split("## OptimizerV2")
ROWS = ([(keras.optimizers.Optimizer, row)
         for row in re.findall(r"^\| `\w+` \| `(\w+\(.*?\))` \|", SECTIONS[0],
                               flags=re.M)]
        + [(tf_keras.optimizers.legacy.Optimizer, row)
           for row in re.findall(r"^\| `\w+` \| `(\w+\(.*?\))` \|",
                                 SECTIONS[1], flags=re.M)])


def test_the_tables_list_the_hooks_the_issue_names():
  named = {row.split("(")[0] for _, row in ROWS}
  assert {"build", "update_step", "apply_gradients", "get_config",
          "_backend_update_step", "_create_slots", "_resource_apply_dense",
          "_resource_apply_sparse", "_set_hyper", "_get_hyper",
          "_prepare_local", "_distributed_apply"} <= named
  assert len(ROWS) == 22


@pytest.mark.parametrize("cls,row", ROWS, ids=[row.split("(")[0] + (
    "-legacy" if cls is tf_keras.optimizers.legacy.Optimizer else "")
                                               for cls, row in ROWS])
def test_signature_matches_installed(cls, row):
  name, arguments = row.split("(", 1)
  assert f"({arguments}" == str(inspect.signature(getattr(cls, name)))


MIGRATING = (pathlib.Path(__file__).resolve().parents[1] / "docs"
             / "migrating.md").read_text()
OPTAX_NAMES = {"epsilon": "eps", "beta_1": "b1", "beta_2": "b2",
               "rho": "decay"}


def _optax_function(name):
  import optax  # pylint: disable=import-outside-toplevel
  if name == "schedule_free_adamw":
    return optax.contrib.schedule_free_adamw
  return getattr(optax, name)


DEFAULT_ROWS = re.findall(
    r"^\| `(\w+)` \| (\w+: .*) \|$",
    MIGRATING[MIGRATING.index("## From optax"):MIGRATING.index("Formulas:")],
    flags=re.M)


@pytest.mark.parametrize("port,cells", DEFAULT_ROWS,
                         ids=[port for port, _ in DEFAULT_ROWS])
def test_migrating_defaults_are_the_installed_ones(port, cells):
  import jaxopt_port  # pylint: disable=import-outside-toplevel
  ours = inspect.signature(getattr(jaxopt_port, port)).parameters
  theirs = inspect.signature(_optax_function(port)).parameters
  for cell in cells.split("; "):
    argument, values = cell.split(": ")
    name = argument.split(" (")[0]
    optax_name = (argument.split("(")[1].rstrip(")") if "(" in argument
                  else name)
    if optax_name not in theirs and name == "rho":
      optax_name = OPTAX_NAMES[name]
    keras_value, optax_value = values.split(" / ")

    def shown(parameter):
      if parameter.default is inspect.Parameter.empty:
        return "required"
      return repr(parameter.default)
    assert shown(ours[name]) == keras_value, (port, name)
    assert shown(theirs[optax_name]) == optax_value, (port, optax_name)


def test_migrating_lists_every_optax_namesake():
  assert {port for port, _ in DEFAULT_ROWS} == {
      "sgd", "adam", "adamw", "rmsprop", "adagrad", "adadelta", "adamax",
      "nadam", "lion", "lamb", "schedule_free_adamw"}


def test_the_documented_api_command_builds_the_reference(tmp_path):
  readme = (pathlib.Path(__file__).resolve().parents[1] / "README.md"
            ).read_text()
  command = readme.split("<!-- api-command -->\n```bash\n")[1].split("\n")[0]
  arguments = command.split()
  assert arguments[:3] == [".venv/bin/python", "-m", "pdoc"]
  arguments[arguments.index("-o") + 1] = str(tmp_path)
  result = subprocess.run([sys.executable, *arguments[1:]],
                          capture_output=True, text=True, timeout=600,
                          check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  for page, text in [("jaxopt_port.html", "skip_nonfinite"),
                     ("tf_bridge/testing.html", "assert_parity"),
                     ("tf_bridge.html", "state_from_keras"),
                     ("tf_bridge/legacy.html", "keras_optimizer")]:
    assert text in (tmp_path / page).read_text(), page


def test_architecture_names_real_files_and_methods():
  """Every file and every `Class.method` docs/architecture.md names
  exists, so the page cannot drift from the code unnoticed."""
  import tf_bridge  # pylint: disable=import-outside-toplevel
  from jaxopt_port import _base  # pylint: disable=import-outside-toplevel
  from tf_bridge import _bridge, _fused, _layout  # pylint: disable=import-outside-toplevel
  from tf_bridge.legacy import _optimizer  # pylint: disable=import-outside-toplevel
  root = pathlib.Path(__file__).resolve().parents[1]
  text = (root / "docs" / "architecture.md").read_text()
  packages = ["tf_bridge", "tf_bridge/legacy", "jaxopt_port"]
  files = set(re.findall(r"[\w/]+\.py", text))
  assert len(files) >= 20
  missing = [name for name in files
             if not (root / name).exists()
             and not any((root / package / name).exists()
                         for package in packages)]
  assert not missing
  classes = {"Keras3Optimizer": tf_bridge.Keras3Optimizer,
             "LegacyOptimizer": _optimizer.LegacyOptimizer,
             "BridgedOptimizer": _bridge.BridgedOptimizer,
             "FusedTransform": _fused.FusedTransform,
             "StateLayout": _layout.StateLayout}
  named = [(c, m) for c, m in re.findall(r"`(\w+)\.(\w+)`", text)
           if c in classes]
  assert len(named) >= 8
  assert [(c, m) for c, m in named if not hasattr(classes[c], m)] == []
  for hook in ("_default_positional", "_class_signature", "_register",
               "_package_of", "_native_positional"):
    assert hook in text and hasattr(_bridge.BridgedOptimizer, hook)
  assert hasattr(_base, "keras_transform") and hasattr(_base,
                                                       "legacy_transform")


# `tfa.optimizers` 0.23's public names (its `__init__`; TFA cannot be
# installed beside TensorFlow 2.21).
TFA_NAMES = {
    "AdaBelief", "AdamW", "AveragedOptimizerWrapper", "COCOB",
    "ConditionalGradient", "CyclicalLearningRate",
    "DecoupledWeightDecayExtension", "ExponentialCyclicalLearningRate",
    "KerasLegacyOptimizer", "LAMB", "LazyAdam", "Lookahead", "MovingAverage",
    "MultiOptimizer", "NovoGrad", "ProximalAdagrad", "RectifiedAdam", "SGDW",
    "SWA", "Triangular2CyclicalLearningRate",
    "TriangularCyclicalLearningRate", "Yogi",
    "extend_with_decoupled_weight_decay"}


def test_migrating_table_covers_every_tfa_name():
  """docs/migrating.md's TF Addons table: one row per TFA name, and every
  replacement it names exists (in `tf_bridge.addons`,
  `tf_bridge.legacy.addons`, `jaxopt_port.addons`, or by full path)."""
  import importlib  # pylint: disable=import-outside-toplevel
  import tf_bridge.addons  # pylint: disable=import-outside-toplevel
  import tf_bridge.legacy.addons  # pylint: disable=import-outside-toplevel
  from jaxopt_port import addons  # pylint: disable=import-outside-toplevel
  text = (pathlib.Path(__file__).resolve().parents[1] / "docs"
          / "migrating.md").read_text()
  rows = re.findall(r"^\| `(\w+)` \| (.*?) \| (.*?) \| (.*?) \| .* \|$",
                    text.split("## From TensorFlow Addons")[1].split("\n## ")[0],
                    flags=re.M)
  assert {row[0] for row in rows} == TFA_NAMES
  assert len(rows) == len(TFA_NAMES)
  # A drop-in: every TFA name under its own name on the OptimizerV2 side.
  assert [name for name, _, legacy, _ in rows
          if legacy != f"`{name}`"] == []
  modules = (tf_bridge.addons, tf_bridge.legacy.addons, addons)
  for name, *cells in rows:
    for module, cell in zip(modules, cells):
      if cell == "-":
        continue
      replacement = cell.strip("`")
      if "." in replacement:
        module_path, attribute = replacement.rsplit(".", 1)
        assert hasattr(importlib.import_module(module_path), attribute), (
            name, replacement)
      else:
        assert hasattr(module, replacement), (name, module.__name__,
                                              replacement)


ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _anchors(path):
  """GitHub's anchors of a Markdown file's headings (outside code blocks)."""
  text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
  anchors = set()
  for heading in re.findall(r"^#+ (.*)$", text, flags=re.M):
    slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
    anchors.add(slug)
  return anchors


@pytest.mark.parametrize("document", DOCUMENTS,
                         ids=[str(d.relative_to(ROOT)) for d in DOCUMENTS])
def test_links_lead_to_files_and_headings_that_exist(document):
  text = re.sub(r"```.*?```", "", document.read_text(), flags=re.S)
  broken = []
  for target in re.findall(r"\]\(([^)\s]+)\)", text):
    if re.match(r"[a-z]+:", target):
      continue  # A web address.
    path, _, anchor = target.partition("#")
    linked = (document.parent / path).resolve() if path else document
    if not linked.exists():
      broken.append(target)
    elif anchor and anchor not in _anchors(linked):
      broken.append(target)
  assert broken == []


def test_the_documents_state_the_contracts_themselves():
  """Users have the README and docs/, nothing behind them to refer to."""
  assert [str(d.relative_to(ROOT)) for d in DOCUMENTS
          if "DESIGN" in d.read_text()] == []
