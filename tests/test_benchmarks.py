"""benchmarks/run.py --smoke (--quick's code on tiny shapes),
benchmarks/sparse.py --smoke and benchmarks/port.py --smoke run and write
valid results (no timing is asserted: benchmarks are not tests)."""

import collections
import functools
import json
import os
import subprocess
import sys

import originals

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIELDS = {"shape", "parameters", "algorithm", "implementation", "device",
          "median_seconds", "min_seconds", "q25_seconds", "q75_seconds",
          "repeats", "first_call_seconds",
          "bytes_moved", "bandwidth_gb_per_s", "roofline_fraction"}


def test_smoke_run_writes_json_markdown_and_plot(tmp_path):
  completed = subprocess.run(
      [sys.executable, os.path.join(ROOT, "benchmarks", "run.py"), "--smoke",
       "--out", str(tmp_path)], capture_output=True, text=True, check=False,
      timeout=900)
  assert completed.returncode == 0, completed.stderr[-3000:]
  with open(tmp_path / "results.json", encoding="utf-8") as f:
    results = json.load(f)
  records = results["records"]
  assert {r["shape"] for r in records} == {"2x1k", "5x100",
                                            "transformer-1x32"}
  for record in records:
    assert set(record) == FIELDS, record
    assert record["median_seconds"] > 0 and record["roofline_fraction"] > 0
  implementations = {(r["shape"], r["algorithm"]): set() for r in records}
  for record in records:
    implementations[record["shape"], record["algorithm"]].add(
        record["implementation"])
  # Every native configuration a user gets (Keras 3 with and without XLA).
  everything = {"roofline", "optax", "jaxopt_port", "jaxopt_port.packed",
                "keras3", "keras3.xla", "tf_keras.legacy", "tf_bridge",
                "tf_bridge.legacy"}
  for shape in ("2x1k", "5x100", "transformer-1x32"):
    assert implementations[shape, "adam"] == everything
    # Lamb: not elementwise, so no packed column; legacy has no Lamb.
    assert implementations[shape, "lamb"] == everything - {
        "jaxopt_port.packed", "tf_keras.legacy"}
  # Adam moves 7 float32 passes over the parameters.
  adam = next(r for r in records if r["algorithm"] == "adam")
  assert adam["bytes_moved"] == 28 * adam["parameters"]
  assert {m["implementation"] for m in results["memory"]} == everything
  assert all(m["peak_mb"] >= m["optimizer_peak_mb"] > 0
             for m in results["memory"])
  defaults = {"keras3", "tf_keras.legacy", "tf_bridge", "tf_bridge.legacy"}
  # The smoke fits its transformer in each host's default configuration.
  assert set(results["fit_transformer"]) == defaults
  assert set(results["fit"]) == defaults | {
      "keras3 jit_compile=True", "keras3 jit_compile=False",
      "tf_bridge jit_compile=True", "tf_bridge jit_compile=False"}
  # What each model compiled with: Keras's "auto" resolves the same for
  # the bridged optimizer as for the native one.
  for host in ("keras3", "tf_bridge"):
    assert results["fit"][f"{host} jit_compile=True"]["jit_compile"] is True
    assert results["fit"][f"{host} jit_compile=False"]["jit_compile"] is False
  for fits in (results["fit"], results["fit_transformer"]):
    assert fits["keras3"]["jit_compile"] == fits["tf_bridge"]["jit_compile"]
  # The transformer's embedding gradients repeat rows: tf_keras sums the
  # duplicates as the bridges do, Keras 3's TensorFlow backend squares each
  # separately (docs/known-differences.md), so only legacy must agree.
  transformer = results["fit_transformer"]
  assert abs(transformer["tf_bridge.legacy"]["final_loss"]
             - transformer["tf_keras.legacy"]["final_loss"]) < 1e-3
  # Bridged and native Adam train the same model to the same loss.
  fit = results["fit"]
  assert abs(fit["tf_bridge"]["final_loss"]
             - fit["keras3"]["final_loss"]) < 1e-3
  assert abs(fit["tf_bridge.legacy"]["final_loss"]
             - fit["tf_keras.legacy"]["final_loss"]) < 1e-3
  with open(tmp_path / "results.png", "rb") as f:
    assert f.read(8) == b"\x89PNG\r\n\x1a\n"
  markdown = (tmp_path / "RESULTS.md").read_text(encoding="utf-8")
  assert "<!-- results:begin -->" in markdown
  assert "| adam | " in markdown and "Targets:" in markdown


def test_sparse_smoke_run_writes_every_column(tmp_path):
  completed = subprocess.run(
      [sys.executable, os.path.join(ROOT, "benchmarks", "sparse.py"),
       "--smoke", "--out", str(tmp_path)], capture_output=True, text=True,
      check=False, timeout=900)
  assert completed.returncode == 0, completed.stderr[-3000:]
  with open(tmp_path / "sparse.json", encoding="utf-8") as f:
    records = json.load(f)["records"]
  assert [r["algorithm"] for r in records] == [
      "sgd-momentum", "adagrad", "ftrl", "lazy_adam"]
  columns = {"native", "tf_bridge.legacy", "jaxopt_port", "roofline",
             "dedup", "dense"}
  for record in records:
    assert (record["rows"], record["width"], record["touched"],
            record["repeats"], record["dense_repeats"]) == (1_000, 8, 16, 2, 1)
    # TF Addons' LazyAdam cannot run beside TensorFlow 2.21: no native.
    expected = columns - ({"native"} if record["algorithm"] == "lazy_adam"
                          else set())
    assert set(record["times"]) == expected, record
    assert all(t > 0 for t in record["times"].values())
  table = (tmp_path / "sparse.md").read_text(encoding="utf-8")
  assert table.count("| 1,000 x 8 | 16 |") == 4


def test_port_smoke_run_writes_every_ratio(tmp_path):
  """benchmarks/port.py --smoke, TF Addons importable as the tests import
  it: every pair's ratios and the one-time conversion."""
  completed = subprocess.run(
      [sys.executable, os.path.join(ROOT, "benchmarks", "port.py"),
       "--smoke", "--json", str(tmp_path / "port.json")],
      capture_output=True, text=True, check=False, timeout=900,
      env={**os.environ, "TF_USE_LEGACY_KERAS": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [
               str(originals.DIRECTORY), os.environ.get("PYTHONPATH")]))})
  assert completed.returncode == 0, completed.stderr[-3000:]
  with open(tmp_path / "port.json", encoding="utf-8") as f:
    results = json.load(f)
  assert (results["variables"], results["floats_per_variable"],
          results["repeats"]) == (3, 100, 3)
  assert set(results["algorithms"]) == {"momentum_sgd", "legacy.adam",
                                        "addons.rectified_adam"}
  for row in results["algorithms"].values():
    assert set(row) == {"conversion_seconds", "port_median_seconds",
                        "catalog_median_seconds", "port_over_catalog",
                        "port_over_catalog_fastest"}
    assert all(value > 0 for value in row.values())
  assert set(results["keras3_momentum_sgd"]) == {
      "adopted_median_seconds", "catalog_median_seconds",
      "adopted_over_catalog", "adopted_over_catalog_fastest"}
  assert "addons.rectified_adam    port/catalog" in completed.stdout


def _benchmark_module(name):
  """A module of benchmarks/ (not a package)."""
  sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
  try:
    return __import__(name)
  finally:
    sys.path.pop(0)


def test_interleaved_rounds_balance_what_runs_before_each_runner():
  # A runner's time can depend on the runner just before it, so over a cycle
  # of rounds every runner must follow every other equally often and take
  # every place equally often. The old rotation of one fixed order gave each
  # runner the same predecessor in every round.
  measure = _benchmark_module("measure")
  for count in range(2, 8):
    calls = []
    runners = {f"r{i}": functools.partial(calls.append, i)
               for i in range(count)}
    cycle = 2 * count if count % 2 else count
    times = measure.time_interleaved(runners, 2 * cycle, warmup=0)
    assert all(len(samples) == 2 * cycle for samples in times.values())
    rounds = [calls[start:start + count]
              for start in range(0, len(calls), count)]
    assert all(sorted(order) == list(range(count)) for order in rounds)
    followed = collections.Counter(
        (order[place - 1], order[place])
        for order in rounds for place in range(1, count))
    assert set(followed) == {(a, b) for a in range(count)
                             for b in range(count) if a != b}, count
    assert len(set(followed.values())) == 1, (count, followed)
    places = collections.Counter(
        (order[place], place) for order in rounds for place in range(count))
    assert len(places) == count * count and len(set(places.values())) == 1
    # Continued from a later round, the same cycle goes on.
    calls.clear()
    measure.time_interleaved(runners, cycle, warmup=0, first_round=1)
    assert calls[:count] == rounds[1]


def test_fit_lines_show_the_fast_mode_and_the_same_configuration():
  # This machine runs a step in one of two modes (26 or 33.5 ms for the
  # transformer, in runs of several steps), so a median of epochs counts
  # fast epochs; the fastest epochs and the bridge against native in the
  # same configuration show what the bridge itself costs.
  report = _benchmark_module("report")

  def fit(epochs, jit_compile):
    return {"steps_per_second": float(sorted(epochs)[len(epochs) // 2]),
            "epoch_steps_per_second": epochs, "first_epoch_seconds": 1.0,
            "final_loss": 0.0, "jit_compile": jit_compile}

  fits = {"keras3": fit([28.0, 25.0, 28.0, 25.0], False),
          "keras3 jit_compile=True": fit([37.0, 37.0, 25.0, 37.0], True),
          "keras3 jit_compile=False": fit([28.0, 28.0, 25.0, 28.0], False),
          "tf_bridge": fit([25.0, 28.0, 25.0, 25.0], False),
          "tf_bridge jit_compile=True": fit([25.0, 38.0, 25.0, 25.0], True),
          "tf_bridge jit_compile=False": fit([28.0, 25.0, 28.0, 28.0],
                                             False)}
  lines = report.fit_target_lines(fits, "transformer")
  assert lines[0] == (
      "- transformer model.fit steps/s tf_bridge (default, jit_compile=False)"
      " / best native (keras3 jit_compile=True), median of paired epochs "
      ">= 1: MISSED, 0.72 (fastest epochs 0.76)")
  assert lines[1] == (
      "- transformer model.fit, the same configuration (not a target): "
      "tf_bridge / keras3 0.95 (fastest epochs 1.00), tf_bridge "
      "jit_compile=True / keras3 jit_compile=True 0.84 (fastest epochs "
      "1.03), tf_bridge jit_compile=False / keras3 jit_compile=False 1.00 "
      "(fastest epochs 1.00)")
