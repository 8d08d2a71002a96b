"""The report: roofline fractions, target lines, RESULTS.md's generated
block and the plot."""

from __future__ import annotations

import os

import numpy as np

from measure import device_name
from workloads import (ALGORITHMS, FIT_CONFIGURATIONS, JAX_IMPLEMENTATIONS,
                       NATIVE_TF_IMPLEMENTATIONS, TF_IMPLEMENTATIONS)

BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def with_roofline_fractions(records: list[dict]) -> list[dict]:
  roofline = {(r["shape"], r["algorithm"]): r["median_seconds"]
              for r in records if r["implementation"] == "roofline"}
  for record in records:
    reference = roofline.get((record["shape"], record["algorithm"]))
    if reference is not None and "median_seconds" in record:
      record["roofline_fraction"] = reference / record["median_seconds"]
  return records


def _cell(record: dict | None) -> str:
  if record is None:
    return "-"
  spread = (record["q75_seconds"] - record["q25_seconds"]) / (
      2 * record["median_seconds"])
  return (f"{record['median_seconds'] * 1e3:.1f} ms ±{100 * spread:.0f}% "
          f"({100 * record['roofline_fraction']:.0f}%)")


def _natives(by_key, shape, algorithm) -> list[dict]:
  """The records of the native configurations measured on this cell."""
  return [by_key[shape, algorithm, name] for name in NATIVE_TF_IMPLEMENTATIONS
          if (shape, algorithm, name) in by_key]


def _best_native(by_key, shape, algorithm) -> dict | None:
  """The fastest native configuration's record (by median), or None."""
  return min(_natives(by_key, shape, algorithm),
             key=lambda r: r["median_seconds"], default=None)


def _ratio(by_key, shape, algorithm, numerator, denominator,
           statistic: str = "median_seconds") -> float | None:
  top = by_key.get((shape, algorithm, numerator))
  bottom = (_best_native(by_key, shape, algorithm)
            if denominator == BEST_NATIVE
            else by_key.get((shape, algorithm, denominator)))
  if top is None or bottom is None:
    return None
  return top[statistic] / bottom[statistic]


BEST_NATIVE = "best native"
LARGE_LEAVES = ["100x250k", "transformer-12x768"]


TARGETS = [  # (label, shapes (None: all), numerator, denominator, bound)
    ("tf_bridge / best native (every shape and algorithm)", None,
     "tf_bridge", BEST_NATIVE, 1.0),
    ("tf_bridge.legacy / best native (every shape and algorithm)", None,
     "tf_bridge.legacy", BEST_NATIVE, 1.0),
    ("tf_bridge / best native (2000x10k)", ["2000x10k"], "tf_bridge",
     BEST_NATIVE, 0.75),
    ("jaxopt_port / optax (every shape and algorithm)", None, "jaxopt_port",
     "optax", 1.0),
]


def _status(met: bool) -> str:
  return "met" if met else "MISSED"


def target_lines(records: list[dict]) -> list[str]:
  by_key = {(r["shape"], r["algorithm"], r["implementation"]): r
            for r in records}
  shapes = sorted({r["shape"] for r in records})
  lines = []
  for label, target_shapes, top, bottom, bound in TARGETS:
    ratios = [(s, a, _ratio(by_key, s, a, top, bottom))
              for s in (target_shapes or shapes) for a in ALGORITHMS]
    ratios = [(s, a, r) for s, a, r in ratios if r is not None]
    if not ratios:
      continue
    worst = max(ratios, key=lambda item: item[2])
    lines.append(f"- {label} <= {bound}: {_status(worst[2] <= bound)}, "
                 f"worst {worst[2]:.2f} ({worst[0]}, {worst[1]}; "
                 f"{sum(r <= bound for _, _, r in ratios)} of {len(ratios)} "
                 "cells within)")
  bridged = [r for r in records if r["shape"] in LARGE_LEAVES
             and r["implementation"] in ("tf_bridge", "tf_bridge.legacy")]
  if bridged:
    worst = min(bridged, key=lambda r: r["roofline_fraction"])
    lines.append(
        f"- bridge >= 95% of the roofline kernel's bandwidth on large leaves "
        f"({', '.join(LARGE_LEAVES)}): "
        f"{_status(worst['roofline_fraction'] >= 0.95)}, worst "
        f"{100 * worst['roofline_fraction']:.0f}% ({worst['shape']}, "
        f"{worst['algorithm']}, {worst['implementation']})")
  first_calls = []
  for record in records:
    natives = _natives(by_key, record["shape"], record["algorithm"])
    if record["implementation"] == "tf_bridge" and natives:
      first_calls.append((record["first_call_seconds"] / min(
          n["first_call_seconds"] for n in natives), record))
  if first_calls:
    ratio, worst = max(first_calls, key=lambda item: item[0])
    lines.append(f"- first call tf_bridge / fastest native first call <= "
                 f"1.5: {_status(ratio <= 1.5)}, worst {ratio:.2f} "
                 f"({worst['shape']}, {worst['algorithm']})")
  packed = [r for r in records if r["implementation"] == "jaxopt_port.packed"]
  if packed:
    worst = min(packed, key=lambda r: r["roofline_fraction"])
    lines.append(f"- jaxopt_port.packed >= 80% of roofline bandwidth: "
                 f"{_status(worst['roofline_fraction'] >= 0.8)}, worst "
                 f"{100 * worst['roofline_fraction']:.0f}% "
                 f"({worst['shape']}, {worst['algorithm']})")
  return lines


def fit_target_lines(fits: dict, model: str) -> list[str]:
  """`model.fit` targets: the bridge with the host's default settings
  against the best native configuration, steps/s >= 1x (the median of the
  ratios of epochs run in the same round), first epoch <= 1.5x and peak
  memory <= 1.1x the host's default's. Each speed also as the ratio of the
  fastest epochs (this machine runs a step in one of two modes, so a
  median counts fast epochs), and Keras 3's bridge against native in the
  same configuration."""
  lines = []
  for bridged_fit, natives in (
      ("tf_bridge", ("keras3", "keras3 jit_compile=True",
                     "keras3 jit_compile=False")),
      ("tf_bridge.legacy", ("tf_keras.legacy",))):
    natives = [n for n in natives if n in fits]
    if bridged_fit not in fits or not natives:
      continue
    best = max(natives, key=lambda n: fits[n]["steps_per_second"])
    speed, fastest = _fit_speed_ratios(fits[bridged_fit], fits[best])
    default = ("" if "jit_compile" not in fits[bridged_fit] else
               f", jit_compile={fits[bridged_fit]['jit_compile']}")
    lines.append(f"- {model} model.fit steps/s {bridged_fit} (default"
                 f"{default}) / best native ({best}), median of paired "
                 f"epochs >= 1: {_status(speed >= 1)}, {speed:.2f} "
                 f"(fastest epochs {fastest:.2f})")
    native = natives[0]  # The host's default configuration.
    pairs = [(bridged_fit + suffix, native + suffix)
             for suffix in ("", " jit_compile=True", " jit_compile=False")
             if bridged_fit + suffix in fits and native + suffix in fits]
    if len(pairs) > 1:
      ratios = [(b, n, *_fit_speed_ratios(fits[b], fits[n]))
                for b, n in pairs]
      lines.append(
          f"- {model} model.fit, the same configuration (not a target): "
          + ", ".join(f"{b} / {n} {median:.2f} (fastest epochs "
                      f"{fastest:.2f})" for b, n, median, fastest in ratios))
    first = (fits[bridged_fit]["first_epoch_seconds"]
             / fits[native]["first_epoch_seconds"])
    lines.append(f"- {model} model.fit first epoch {bridged_fit} / {native} "
                 f"<= 1.5: {_status(first <= 1.5)}, {first:.2f}")
    if "peak_mb" not in fits[native]:
      continue  # Measured for the CNN of a full run only.
    peak = fits[bridged_fit]["peak_mb"] / fits[native]["peak_mb"]
    lines.append(f"- peak memory of the {model} training run {bridged_fit} "
                 f"/ {native} <= 1.1: {_status(peak <= 1.1)}, {peak:.2f}")
  return lines


def _fit_speed_ratios(bridged: dict, native: dict) -> tuple[float, float]:
  """Steps/s of `bridged` over `native`: the median of the ratios of epochs
  run in the same round, and the ratio of the fastest epochs."""
  bridged, native = (np.asarray(f["epoch_steps_per_second"])
                     for f in (bridged, native))
  return float(np.median(bridged / native)), float(bridged.max()
                                                   / native.max())


def _fit_table(fits: dict, title: str) -> list[str]:
  if not fits:
    return []
  return ["", f"#### model.fit: {title} (epochs interleaved; the host's "
          "default `jit_compile` unless named, what it resolved to in its "
          "column; peak RSS of a 2-epoch run in a fresh process, 0 where "
          "not measured)", "",
          "| optimizer | jit_compile | steps/s (median) | spread over epochs "
          "| first epoch (s) | final loss | peak RSS (MB) |",
          "|---|---|---|---|---|---|---|"] + [
              f"| {name} | {f.get('jit_compile', '-')} | "
              f"{f['steps_per_second']:.1f} | "
              f"{min(f['epoch_steps_per_second']):.1f}-"
              f"{max(f['epoch_steps_per_second']):.1f} | "
              f"{f['first_epoch_seconds']:.1f} | {f['final_loss']:.4f} | "
              f"{f.get('peak_mb', 0):.0f} |" for name, f in fits.items()
              if name in FIT_CONFIGURATIONS]


def markdown(records, memory, fits, settings,
             transformer_fits=None) -> str:
  transformer_fits = transformer_fits or {}
  by_key = {(r["shape"], r["algorithm"], r["implementation"]): r
            for r in records}
  device = records[0]["device"] if records else device_name()
  shapes = list(dict.fromkeys(r["shape"] for r in records))
  implementations = [i for i in JAX_IMPLEMENTATIONS + TF_IMPLEMENTATIONS
                     if any(r["implementation"] == i for r in records)]
  out = [f"### {device}", "",
         f"Run of {settings['date']} ({settings['mode']}; jax "
         f"{settings['jax']}, optax {settings['optax']}"
         + (f", tensorflow {settings['tensorflow']}"
            if settings.get("tensorflow") else "") + "). Median step time "
         f"of {settings['repeats']} interleaved repeats after 2 warm-up "
         "steps (rounds in balanced orders: each implementation after "
         "every other equally often), ± half the interquartile range "
         "relative to the median, "
         "and in parentheses the fraction of the roofline kernel's "
         "bandwidth (roofline time / step time). The JAX columns are "
         "interleaved in one process, set up once per implementation in "
         "rotated orders and pooled (a JAX column's repeats are those of "
         "every set-up), the TensorFlow ones in another per shape; "
         "`keras3` is Keras 3's `apply_gradients` in a `tf.function`, "
         "`keras3.xla` the same with `jit_compile=True` (as `model.fit` "
         "compiles it by default where TensorFlow sees a GPU), "
         "`tf_keras.legacy` as tf_keras runs it. The best native is the "
         "fastest of the three.", "",
         "Targets:", "", *target_lines(records),
         *fit_target_lines(fits, "CNN"),
         *fit_target_lines(transformer_fits, "transformer"), ""]
  for shape in shapes:
    size = next(r["parameters"] for r in records if r["shape"] == shape)
    out += [f"#### {shape} ({size / 1e6:.1f}M parameters)", "",
            "| algorithm | " + " | ".join(implementations) + " |",
            "|---" * (len(implementations) + 1) + "|"]
    for algorithm in ALGORITHMS:
      cells = [_cell(by_key.get((shape, algorithm, i)))
               for i in implementations]
      if any(cell != "-" for cell in cells):
        out.append(f"| {algorithm} | " + " | ".join(cells) + " |")
    out.append("")
  out += ["#### Ratios (same run; lower is faster)", "",
          "Medians, and in parentheses the ratio of the fastest repeats: "
          "where the two disagree, the machine's noise decided the median.",
          "",
          "| shape | algorithm | port / optax | best native | "
          "bridge / best native | bridge.legacy / best native | "
          "bridge / keras3 | bridge / keras3.xla | bridge.legacy / legacy |",
          "|---|---|---|---|---|---|---|---|---|"]
  pairs = (("jaxopt_port", "optax"), None, ("tf_bridge", BEST_NATIVE),
           ("tf_bridge.legacy", BEST_NATIVE), ("tf_bridge", "keras3"),
           ("tf_bridge", "keras3.xla"),
           ("tf_bridge.legacy", "tf_keras.legacy"))
  for shape in shapes:
    for algorithm in ALGORITHMS:
      cells = []
      for pair in pairs:
        if pair is None:
          best = _best_native(by_key, shape, algorithm)
          cells.append("-" if best is None else best["implementation"])
          continue
        top, bottom = pair
        median = _ratio(by_key, shape, algorithm, top, bottom)
        fastest = _ratio(by_key, shape, algorithm, top, bottom, "min_seconds")
        cells.append("-" if median is None
                     else f"{median:.2f} ({fastest:.2f})")
      if any(cell != "-" for cell in cells):
        out.append(f"| {shape} | {algorithm} | " + " | ".join(cells) + " |")
  out += ["", "#### First call (trace, convert, compile and one step), "
          "seconds", "",
          "| shape | algorithm | " + " | ".join(implementations) + " |",
          "|---|---" + "|---" * len(implementations) + "|"]
  for shape in shapes:
    for algorithm in ALGORITHMS:
      cells = [by_key.get((shape, algorithm, i)) for i in implementations]
      if any(cells):
        out.append(f"| {shape} | {algorithm} | " + " | ".join(
            "-" if c is None else f"{c['first_call_seconds']:.1f}"
            for c in cells) + " |")
  if memory:
    task = memory[0]
    out += ["", f"#### Peak memory: {task['algorithm']} on {task['shape']}, "
            f"{task['steps']} steps in a fresh process", "",
            "| implementation | peak RSS (MB) | rise during the steps (MB) |",
            "|---|---|---|"]
    out += [f"| {m['implementation']} | {m['peak_mb']:.0f} | "
            f"{m['optimizer_peak_mb']:.0f} |" for m in memory]
  out += _fit_table(fits, "small CNN, Adam, batch 32")
  out += _fit_table(transformer_fits, (
      "4-layer transformer encoder over an 8000 x 128 embedding, sequences "
      "of 32, Adam, batch 32"))
  return "\n".join(out) + "\n"


def plot(records, path: str) -> None:
  import matplotlib  # pylint: disable=import-outside-toplevel
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel
  shapes = list(dict.fromkeys(r["shape"] for r in records))
  implementations = [i for i in JAX_IMPLEMENTATIONS + TF_IMPLEMENTATIONS
                     if i != "roofline"
                     and any(r["implementation"] == i for r in records)]
  by_key = {(r["shape"], r["algorithm"], r["implementation"]): r
            for r in records}
  figure, axes = plt.subplots(len(shapes), 1, squeeze=False,
                              figsize=(11, 3.2 * len(shapes)))
  width = 0.8 / len(implementations)
  for axis, shape in zip(axes[:, 0], shapes):
    for index, implementation in enumerate(implementations):
      fractions = [by_key.get((shape, a, implementation), {}).get(
          "roofline_fraction", 0.0) for a in ALGORITHMS]
      axis.bar(np.arange(len(ALGORITHMS)) + index * width, fractions,
               width, label=implementation)
    axis.axhline(1.0, color="black", linewidth=0.8)
    axis.set_xticks(np.arange(len(ALGORITHMS)) + 0.4 - width / 2,
                    ALGORITHMS)
    axis.set_ylabel("fraction of roofline")
    axis.set_title(shape)
  axes[0, 0].legend(ncol=4, fontsize="small")
  figure.suptitle(records[0]["device"])
  figure.tight_layout()
  figure.savefig(path, dpi=90)
  plt.close(figure)


def write_results(path: str, block: str) -> None:
  """Replaces the generated block of RESULTS.md, keeping the text around
  it (the analysis written by hand)."""
  text = ""
  if os.path.exists(path):
    with open(path, encoding="utf-8") as results:
      text = results.read()
  if BEGIN in text and END in text:
    text = (text[:text.index(BEGIN) + len(BEGIN)] + "\n" + block
            + text[text.index(END):])
  else:
    text = (text or "# Benchmark results\n\n") + f"{BEGIN}\n{block}{END}\n"
  with open(path, "w", encoding="utf-8") as results:
    results.write(text)


def report(out: str, results: dict) -> str:
  """Writes the plot and RESULTS.md's generated block; returns the block."""
  plot(results["records"], os.path.join(out, "results.png"))
  block = markdown(results["records"], results["memory"], results["fit"],
                   results["settings"], results.get("fit_transformer"))
  write_results(os.path.join(out, "RESULTS.md"), block)
  return block
