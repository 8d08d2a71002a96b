"""`python -m tf_bridge.parity`: table, JSON, plot, exit status."""

import dataclasses
import json
import os
import re
import subprocess
import sys

import pytest

import jaxopt_port
from tf_bridge import catalog
from tf_bridge import parity as parity_command


def parity(*arguments, cwd, env=None):
  return subprocess.run(
      [sys.executable, "-m", "tf_bridge.parity", *arguments],
      capture_output=True, text=True, cwd=cwd, timeout=600, check=False,
      env=env)


@pytest.fixture
def parity_here(monkeypatch, capsys):
  """The command's `main` run in this process from a directory, as
  `parity` runs it in a process of its own (whose Python and TensorFlow
  start-up would cost as much as the run): its exit status, stdout and
  stderr. README's command and a user's factory module run as processes
  of their own (`parity`)."""

  def run(*arguments, cwd):
    monkeypatch.chdir(cwd)
    try:
      status = parity_command.main(list(arguments))
    except SystemExit as exit_:
      status = exit_.code
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(arguments, status, out, err)
  return run


# One worker runs the tests that read the Adam report (README runs pytest
# with --dist loadgroup), so its command runs once.
ADAM_REPORT_GROUP = pytest.mark.xdist_group("parity_adam_report")


@pytest.fixture(scope="module")
def adam_report(tmp_path_factory):
  """README's main command as a user runs it: TF_CPP_MIN_LOG_LEVEL unset."""
  directory = tmp_path_factory.mktemp("parity")
  env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
  result = parity("--optimizer", "adam", "--steps", "30", "--json",
                  "report.json", "--plot", "parity.png", cwd=directory,
                  env=env)
  return result, directory


@ADAM_REPORT_GROUP
def test_starts_without_tensorflows_start_up_lines(adam_report):
  """TensorFlow's C++ lines on a machine without a GPU ("failed call to
  cuInit: ... CUDA error") read as a failure: the command starts clean."""
  result, _ = adam_report
  assert result.returncode == 0, result.stderr
  assert not [line for line in result.stderr.splitlines()
              if re.match(r"[IWEF]\d{4} ", line)
              or "absl::InitializeLog" in line], result.stderr


@ADAM_REPORT_GROUP
def test_adam_table(adam_report):
  result, _ = adam_report
  assert result.returncode == 0, result.stderr
  lines = result.stdout.splitlines()
  assert lines[0].startswith("adam: least squares (8x4 kernel + bias), 30 steps")
  rows = {line.split()[0]: line.split() for line in lines[3:]
          if not line.startswith("plot")}
  assert set(rows) == {"keras.optimizers.Adam", "jaxopt_port.adam",
                       "tf_bridge.Adam", "tf_keras.optimizers.legacy.Adam",
                       "jaxopt_port.legacy.adam", "tf_bridge.legacy.Adam"}
  for name in ("jaxopt_port.adam", "jaxopt_port.legacy.adam",
               "tf_bridge.Adam", "tf_bridge.legacy.Adam"):
    assert rows[name][-1] == "yes"
    assert float(rows[name][-6]) < 1e-6  # max |diff| column.


@ADAM_REPORT_GROUP
def test_adam_json_and_plot(adam_report):
  _, directory = adam_report
  report = json.loads((directory / "report.json").read_text())
  assert report["optimizer"] == "adam" and report["steps"] == 30
  assert report["reference"] == "keras.optimizers.Adam (native)"
  names = [row["name"] for row in report["implementations"]]
  assert names == ["keras.optimizers.Adam (native)", "jaxopt_port.adam",
                   "tf_bridge.Adam", "tf_keras.optimizers.legacy.Adam (native)",
                   "jaxopt_port.legacy.adam", "tf_bridge.legacy.Adam"]
  for row in report["implementations"]:
    assert set(row) >= {"name", "final_loss", "max_abs_diff", "max_rel_diff",
                        "losses"}
    assert len(row["losses"]) == 30
    assert row["losses"][-1] < row["losses"][0]  # It trains.
  native = report["implementations"][0]
  for port_or_bridge in report["implementations"][1:3]:
    assert port_or_bridge["reference"] == "keras.optimizers.Adam (native)"
    assert 0 < port_or_bridge["max_abs_diff"] < 1e-6
    assert abs(port_or_bridge["final_loss"] - native["final_loss"]) < 1e-4
  png = (directory / "parity.png").read_bytes()
  assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def _one_percent_slow_sgd(learning_rate=0.01, momentum=0.0, nesterov=False):
  return jaxopt_port.sgd(0.99 * learning_rate, momentum, nesterov)


def test_a_wrong_port_exits_1(parity_here, tmp_path, monkeypatch):
  """A port whose learning rate is 1% off fails its row (and only its
  row), in the table, the JSON and the exit status."""
  _one_percent_slow_sgd.__name__ = "sgd"
  monkeypatch.setitem(catalog.BY_NAME, "sgd", dataclasses.replace(
      catalog.lookup("sgd"), port=_one_percent_slow_sgd))
  result = parity_here("--optimizer", "sgd", "--steps", "5", "--json",
                       "r.json", cwd=tmp_path)
  assert result.returncode == 1, result.stdout + result.stderr
  verdicts = {line.split()[0]: line.split()[-1]
              for line in result.stdout.splitlines()[3:]}
  assert verdicts == {
      "keras.optimizers.SGD": "-", "jaxopt_port.sgd": "NO",
      "tf_bridge.SGD": "yes", "tf_keras.optimizers.legacy.SGD": "-",
      "jaxopt_port.legacy.sgd": "yes", "tf_bridge.legacy.SGD": "yes"}
  report = json.loads((tmp_path / "r.json").read_text())
  assert not report["ok"]
  assert [row["ok"] for row in report["implementations"]] == [
      True, False, True, True, True, True]


def test_keras3_only_algorithm_gets_the_legacy_bridge(parity_here, tmp_path):
  result = parity_here("--optimizer", "adamw", "--steps", "5", cwd=tmp_path)
  assert result.returncode == 0, result.stderr
  names = [line.split()[0] for line in result.stdout.splitlines()[3:]]
  assert names == ["keras.optimizers.AdamW", "jaxopt_port.adamw",
                   "tf_bridge.AdamW", "tf_bridge.legacy.AdamW"]


def test_unknown_optimizer(parity_here, tmp_path):
  result = parity_here("--optimizer", "adamm", cwd=tmp_path)
  assert result.returncode == 2
  message = result.stderr.strip().splitlines()[-1]
  assert "Unknown optimizer 'adamm'; known: " in message
  known = message.split("known: ")[1].split(", ")
  assert {"adam", "legacy.adam", "rmsprop"} <= set(known)
  assert known == sorted(known)


@pytest.mark.parametrize("name,expected", [
    ("momentum_sgd", ["jaxopt_port.momentum_sgd", "tf_bridge.MomentumSGD",
                      "jaxopt_port.legacy.momentum_sgd",
                      "tf_bridge.legacy.MomentumSGD"]),
    ("tf1.momentum", ["tensorflow.compat.v1.train.MomentumOptimizer",
                      "jaxopt_port.tf1.momentum", "tf_bridge.tf1.Momentum",
                      "tf_bridge.legacy.tf1.Momentum"]),
    ("schedule_free_adamw", ["keras.optimizers.ScheduleFreeAdamW",
                             "jaxopt_port.schedule_free_adamw",
                             "tf_bridge.ScheduleFreeAdamW",
                             "tf_bridge.legacy.ScheduleFreeAdamW"]),
])
def test_every_kind_of_name(name, expected, parity_here, tmp_path):
  """Without a native optimizer the port is the reference; TF1's names run
  TF1's class; ScheduleFreeAdamW's reference is Keras's JAX backend."""
  result = parity_here("--optimizer", name, "--steps", "10", "--json",
                       "r.json", cwd=tmp_path)
  assert result.returncode == 0, result.stdout + result.stderr
  report = json.loads((tmp_path / "r.json").read_text())
  assert [row["name"].split(" (")[0] for row in report["implementations"]] \
      == expected
  assert report["ok"] and all(row["ok"] for row in report["implementations"])
  if name == "schedule_free_adamw":
    assert report["reference"] == ("keras.optimizers.ScheduleFreeAdamW (jax "
                                   "backend, native)")


FACTORY = """
import optax


def sign_momentum(learning_rate=0.01, momentum=0.9):
  return optax.chain(optax.ema(momentum, debias=False), optax.scale_by_sign(),
                     optax.scale_by_learning_rate(learning_rate))
"""


def test_a_users_factory(tmp_path):
  (tmp_path / "my_optimizers.py").write_text(FACTORY)
  result = parity("--factory", "my_optimizers:sign_momentum", "--steps", "8",
                  "--json", "report.json", cwd=tmp_path)
  assert result.returncode == 0, result.stderr
  names = [line.split()[0] for line in result.stdout.splitlines()[3:]]
  assert names == [
      "my_optimizers:sign_momentum",
      "tf_bridge.keras_optimizer(my_optimizers:sign_momentum)",
      "tf_bridge.legacy.keras_optimizer(my_optimizers:sign_momentum)"]
  report = json.loads((tmp_path / "report.json").read_text())
  assert report["reference"] == "my_optimizers:sign_momentum (JAX)"
  for row in report["implementations"][1:]:
    assert row["ok"] and row["max_abs_diff"] < 1e-6
    assert row["losses"][-1] < row["losses"][0]


def test_a_factory_that_does_not_exist(parity_here, tmp_path):
  result = parity_here("--factory", "my_optimizers:nothing", cwd=tmp_path)
  assert result.returncode == 2
  assert "No module named 'my_optimizers'" in result.stderr


def test_list(parity_here, tmp_path):
  result = parity_here("--list", cwd=tmp_path)
  assert result.returncode == 0
  names = result.stdout.split()
  assert names == [d.name for d in catalog.CATALOG]
  assert {"adam", "legacy.adam", "tf1.adam", "addons.lazy_adam",
          "tf_keras.nadam"} <= set(names)


def test_help_gives_every_option_its_default(parity_here, tmp_path):
  result = parity_here("--help", cwd=tmp_path)
  assert result.returncode == 0
  for option, default in [("--optimizer", "adam"), ("--steps", "100"),
                          ("--seed", "0"), ("--rtol", "1e-05"),
                          ("--atol", "1e-06"),
                          ("--arguments", "the optimizer's own defaults")]:
    help_text = result.stdout.split(f"\n  {option} ", 1)[-1].split(
        "\n  -")[0]
    assert f"default: {default})" in " ".join(help_text.split()), option
  for option in ("--all", "--list", "--factory", "--json", "--plot"):
    assert option in result.stdout


def test_arguments_set_every_implementation(parity_here, tmp_path):
  """The hyperparameters reach native, port and bridge alike: all agree,
  and the run differs from the default one."""
  runs = {}
  for arguments in ("{}", '{"learning_rate": 0.01, "rho": 0.8}'):
    result = parity_here("--optimizer", "rmsprop", "--steps", "5",
                         "--arguments", arguments, "--json", "r.json",
                         cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    runs[arguments] = json.loads((tmp_path / "r.json").read_text())
  changed = runs['{"learning_rate": 0.01, "rho": 0.8}']["implementations"]
  default = runs["{}"]["implementations"]
  assert len(changed) == 6
  for before, after in zip(default, changed):
    assert after["ok"] and after["losses"][-1] < before["losses"][-1] - 1e-3
  assert len({round(row["final_loss"], 5) for row in changed}) == 1


@pytest.mark.parametrize("arguments,message", [
    ('{"beta_3": 0.5}', "--arguments: jaxopt_port.adam takes no argument "
     "'beta_3'; it takes learning_rate, beta_1, beta_2, epsilon, amsgrad, "),
    ('{"beta_1": 1.5}', "--arguments: jaxopt_port.adam: `beta_1` must be "
     "in [0, 1). Received: beta_1=1.5"),
    ("[1]", "a JSON object of hyperparameters is expected"),
    ("{learning_rate: 1}", "not JSON"),
])
def test_bad_arguments(arguments, message, parity_here, tmp_path):
  result = parity_here("--optimizer", "adam", "--arguments", arguments,
                       cwd=tmp_path)
  assert result.returncode == 2
  assert message in result.stderr, result.stderr


@pytest.mark.parametrize("name,kind", [
    ("addons.lazy_adam", "the port: no native class runs here"),
    ("hf.adam_weight_decay", "the port: no native class runs here"),
    ("tf_keras.nadam", "native class, run eagerly"),
])
def test_each_row_says_what_it_is_compared_with(name, kind, parity_here,
                                                tmp_path):
  """Where no native class runs, the rows say that the port is the
  reference; tf_keras's Nadam runs eagerly (its traced step has a defect),
  which once crashed the command (KERAS_BACKEND=eager)."""
  result = parity_here("--optimizer", name, "--steps", "3", "--json",
                       "r.json", cwd=tmp_path)
  assert result.returncode == 0, result.stdout + result.stderr
  report = json.loads((tmp_path / "r.json").read_text())
  lines = result.stdout.splitlines()[3:]
  assert lines[0].startswith(report["reference"])
  assert f"reference: {kind}" in lines[0]
  for line in lines[1:]:
    assert f"{report['reference']} [{kind}]" in line
  assert set(report) >= {"optimizer", "steps", "ok", "implementations"}
  for row in report["implementations"]:
    assert set(row) >= {"name", "reference", "ok", "final_loss",
                        "max_abs_diff", "max_rel_diff", "losses"}
    assert row["reference_kind"] == kind
    assert row["reference"] in (None, report["reference"])


# The command's path for every entry `--all` runs, at few steps (the long
# profile runs `--all` at its defaults). 10 steps: in 3, Adadelta at its
# default learning rate moves 4 tolerances, and the command refuses a
# comparison that cannot fail.
@pytest.mark.parametrize("name", parity_command.catalog_names(merged=True))
def test_every_catalog_entry(name, parity_here, tmp_path):
  result = parity_here("--optimizer", name, "--steps", "10", "--json",
                       "r.json", cwd=tmp_path)
  assert result.returncode == 0, result.stdout + result.stderr
  report = json.loads((tmp_path / "r.json").read_text())
  assert report["ok"] and len(report["implementations"]) >= 2


def test_all_summary(parity_here, tmp_path, monkeypatch):
  """`--all`'s summary and JSON, on a few entries."""
  monkeypatch.setattr(parity_command, "catalog_names",
                      lambda merged=False: ["sgd", "addons.sgdw"])
  result = parity_here("--all", "--steps", "3", "--json", "all.json",
                       cwd=tmp_path)
  assert result.returncode == 0, result.stdout + result.stderr
  lines = result.stdout.splitlines()
  assert lines[1].split()[:2] == ["sgd", "4"] and "native class" in lines[1]
  assert lines[2].split()[:2] == ["addons.sgdw", "2"]
  assert lines[2].endswith("the port: no native class runs here")
  assert lines[-1] == "2 optimizers, every one within its bound"
  reports = json.loads((tmp_path / "all.json").read_text())
  assert [r["optimizer"] for r in reports] == ["sgd", "addons.sgdw"]
