"""`python -m tf_bridge.parity`: table, JSON, plot, exit status."""

import json
import os
import re
import subprocess
import sys

import pytest

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


def test_forced_mismatch_exits_1(parity_here, tmp_path):
  """Zero tolerance: float32 rounding alone is a mismatch."""
  result = parity_here("--optimizer", "legacy.rmsprop", "--steps", "5",
                       "--rtol", "0", "--atol", "0", cwd=tmp_path)
  assert result.returncode == 1, result.stdout + result.stderr
  assert result.stdout.splitlines()[-1].endswith("NO")


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
  assert all(row["within_tolerance"] for row in report["implementations"])
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
    assert row["within_tolerance"] and row["max_abs_diff"] < 1e-6
    assert row["losses"][-1] < row["losses"][0]


def test_a_factory_that_does_not_exist(parity_here, tmp_path):
  result = parity_here("--factory", "my_optimizers:nothing", cwd=tmp_path)
  assert result.returncode == 2
  assert "No module named 'my_optimizers'" in result.stderr
