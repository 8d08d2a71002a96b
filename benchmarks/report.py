"""The report: roofline fractions, target lines, RESULTS.md's generated
block and the plot."""

from __future__ import annotations

import os

import numpy as np

from measure import device_name
from workloads import ALGORITHMS, JAX_IMPLEMENTATIONS, TF_IMPLEMENTATIONS

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
  return (f"{record['median_seconds'] * 1e3:.1f} ms "
          f"({100 * record['roofline_fraction']:.0f}%)")


def _ratio(by_key, shape, algorithm, numerator, denominator,
           statistic: str = "median_seconds") -> float | None:
  top = by_key.get((shape, algorithm, numerator))
  bottom = by_key.get((shape, algorithm, denominator))
  if top is None or bottom is None:
    return None
  return top[statistic] / bottom[statistic]


TARGETS = [  # (label, shapes, algorithms, numerator, denominator, bound)
    ("tf_bridge / keras3 (Adam, 100x250k)", ["100x250k"], ["adam"],
     "tf_bridge", "keras3", 0.75),
    ("tf_bridge / tf_keras.legacy (Adam, 100x250k)", ["100x250k"], ["adam"],
     "tf_bridge", "tf_keras.legacy", 0.75),
    ("tf_bridge / keras3 (Adam, 2000x10k)", ["2000x10k"], ["adam"],
     "tf_bridge", "keras3", 0.5),
    ("tf_bridge / tf_keras.legacy (Adam, 2000x10k)", ["2000x10k"], ["adam"],
     "tf_bridge", "tf_keras.legacy", 0.5),
    ("jaxopt_port / optax (every algorithm and shape)", None, None,
     "jaxopt_port", "optax", 1.05),
]


def target_lines(records: list[dict], fits: dict) -> list[str]:
  by_key = {(r["shape"], r["algorithm"], r["implementation"]): r
            for r in records}
  shapes = sorted({r["shape"] for r in records})
  lines = []
  for label, target_shapes, algorithms, top, bottom, bound in TARGETS:
    ratios = [(s, a, _ratio(by_key, s, a, top, bottom))
              for s in (target_shapes or shapes)
              for a in (algorithms or ALGORITHMS)]
    ratios = [(s, a, r) for s, a, r in ratios if r is not None]
    if not ratios:
      continue
    worst = max(ratios, key=lambda item: item[2])
    status = "met" if worst[2] <= bound else "MISSED"
    lines.append(f"- {label} <= {bound}: {status}, worst {worst[2]:.2f} "
                 f"({worst[0]}, {worst[1]})")
  packed = [r for r in records if r["implementation"] == "jaxopt_port.packed"]
  if packed:
    worst = min(packed, key=lambda r: r["roofline_fraction"])
    status = "met" if worst["roofline_fraction"] >= 0.8 else "MISSED"
    lines.append(f"- jaxopt_port.packed >= 80% of roofline bandwidth: "
                 f"{status}, worst {100 * worst['roofline_fraction']:.0f}% "
                 f"({worst['shape']}, {worst['algorithm']})")
  for native, bridged in (("keras3", "tf_bridge"),
                          ("tf_keras.legacy", "tf_bridge.legacy")):
    if native in fits and bridged in fits:
      speed = (fits[bridged]["steps_per_second"]
               / fits[native]["steps_per_second"])
      lines.append(f"- model.fit steps/s {bridged} / {native} >= 1: "
                   f"{'met' if speed >= 1 else 'MISSED'}, {speed:.2f}")
      if "peak_mb" not in fits[native]:
        continue  # --quick measures no training run's memory.
      peak = fits[bridged]["peak_mb"] / fits[native]["peak_mb"]
      lines.append(f"- peak memory of the training run {bridged} / {native} "
                   f"<= 1.1: {'met' if peak <= 1.1 else 'MISSED'}, "
                   f"{peak:.2f}")
  return lines


def markdown(records, memory, fits, settings) -> str:
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
         "steps, and in parentheses the fraction of the roofline kernel's "
         "bandwidth (roofline time / step time).", "",
         "Targets:", "", *target_lines(records, fits), ""]
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
          "| shape | algorithm | port / optax | bridge / keras3 | "
          "bridge / legacy | bridge.legacy / legacy |",
          "|---|---|---|---|---|---|"]
  pairs = (("jaxopt_port", "optax"), ("tf_bridge", "keras3"),
           ("tf_bridge", "tf_keras.legacy"),
           ("tf_bridge.legacy", "tf_keras.legacy"))
  for shape in shapes:
    for algorithm in ALGORITHMS:
      cells = []
      for top, bottom in pairs:
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
  if fits:
    out += ["", "#### model.fit: small CNN, Adam, batch 32 (epochs "
            "interleaved; peak RSS of a 2-epoch run in a fresh process, 0 "
            "with --quick)", "",
            "| optimizer | steps/s (median) | first epoch (s) | final loss | "
            "peak RSS (MB) |", "|---|---|---|---|---|"]
    out += [f"| {name} | {f['steps_per_second']:.1f} | "
            f"{f['first_epoch_seconds']:.1f} | {f['final_loss']:.4f} | "
            f"{f.get('peak_mb', 0):.0f} |" for name, f in fits.items()]
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
                   results["settings"])
  write_results(os.path.join(out, "RESULTS.md"), block)
  return block
