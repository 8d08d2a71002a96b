"""The parity command's table, `--all` summary and plot, from its report."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tf_bridge._parity_runs import FEATURES, OUTPUTS


def _compared_with(row: dict[str, Any]) -> str:
  if row["reference"] is None:
    return f"reference: {row['reference_kind']}"
  return f"{row['reference']} [{row['reference_kind']}]"


def _milliseconds(seconds: float | None) -> str:
  return "-" if seconds is None else f"{1000 * seconds:.2f}"


def table(report: dict[str, Any]) -> str:
  rows = report["implementations"]
  name_width = max(len("implementation"), *(len(r["name"]) for r in rows))
  reference_width = max(len("compared with"),
                        *(len(_compared_with(r)) for r in rows))
  header = (f"{'implementation':<{name_width}} "
            f"{'compared with':<{reference_width}} {'max |diff|':>10} "
            f"{'max rel':>9} {'tol used':>8} {'final loss':>11} {'ms/step':>8}"
            "  ok")
  lines = [f"{report['optimizer']}: least squares ({FEATURES}x{OUTPUTS} kernel "
           f"+ bias), {report['steps']} steps, seed {report['seed']}; passes "
           f"within atol {report['atol']:g} + rtol {report['rtol']:g} x "
           f"|reference| + {report['rounding_factor']:g} x the reference's "
           "measured rounding sensitivity", header, "-" * len(header)]
  for row in rows:
    if row["reference"] is None:
      numbers, verdict = f"{'-':>10} {'-':>9} {'-':>8}", " -"
    else:
      numbers = (f"{row['max_abs_diff']:>10.2e} {row['max_rel_diff']:>9.2e} "
                 f"{row['tolerance_used']:>8.3f}")
      verdict = "yes" if row["ok"] else "NO"
    lines.append(
        f"{row['name']:<{name_width}} {_compared_with(row):<{reference_width}} "
        f"{numbers} {row['final_loss']:>11.6f} "
        f"{_milliseconds(row['seconds_per_step']):>8}  {verdict}")
  lines += [f"Cannot fail: {reason}." for reason in report["cannot_fail"]]
  return "\n".join(lines)


def summary(reports: Sequence[dict[str, Any]]) -> str:
  """`--all`: a line per optimizer, with what its references are."""
  width = max(len("optimizer"), *(len(r["optimizer"]) for r in reports))
  lines = [f"{'optimizer':<{width}} {'rows':>4} {'max |diff|':>10} "
           f"{'max rel':>9} {'tol used':>8}  ok   reference"]
  for report in reports:
    compared = [r for r in report["implementations"]
                if r["reference"] is not None]
    kinds = dict.fromkeys(r["reference_kind"] for r in compared)
    lines.append(
        f"{report['optimizer']:<{width}} {len(compared):>4} "
        f"{max(r['max_abs_diff'] for r in compared):>10.2e} "
        f"{max(r['max_rel_diff'] for r in compared):>9.2e} "
        f"{max(r['tolerance_used'] for r in compared):>8.3f}  "
        f"{'yes' if report['ok'] else 'NO ':<3}  {'; '.join(kinds)}")
  lines += [f"Cannot fail: {reason}." for report in reports
            for reason in report["cannot_fail"]]
  failed = sum(not r["ok"] for r in reports)
  lines.append(f"{len(reports)} optimizers, "
               + (f"{failed} with a difference" if failed else
                  "every one within its bound"))
  return "\n".join(lines)


# Line styles and markers that keep coinciding curves apart.
_STYLES = ("-", "--", "-.", ":")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def plot(report: dict[str, Any], path: str) -> None:
  """Loss per step (left) and, per compared run, the |diff| of its worst
  element with that element's pass bound (right), a colour per run."""
  import matplotlib  # pylint: disable=import-outside-toplevel
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel
  rows = report["implementations"]
  figure, (losses, diffs) = plt.subplots(1, 2, figsize=(13, 6.5))
  steps = np.arange(1, report["steps"] + 1)
  colours = plt.get_cmap("tab10").colors
  every = max(report["steps"] // 10, 1)
  for index, row in enumerate(rows):
    colour = colours[index % len(colours)]
    reference = row["reference"] is None
    losses.plot(steps, row["losses"], color=colour,
                linestyle="-" if reference else _STYLES[index % 4],
                linewidth=3.0 if reference else 1.4, alpha=0.6 if reference
                else 1.0, marker=_MARKERS[index % len(_MARKERS)],
                markevery=(index * every // max(len(rows), 1), every),
                markersize=5, label=row["name"])
    if reference:
      continue
    verdict = "pass" if row["ok"] else "FAIL"
    if row["max_abs_diff"] == 0:
      verdict += ", equal at every step (drawn at 1e-12)"
    else:
      verdict += f" ({row['tolerance_used']:.2g} of its bound)"
    diffs.plot(steps, np.maximum(row["worst_diff_per_step"], 1e-12),
               color=colour, marker=_MARKERS[index % len(_MARKERS)],
               markevery=(index * every // max(len(rows), 1), every),
               markersize=4, linewidth=1.4,
               label=f"{row['name']} vs {row['reference']}: {verdict}")
    diffs.plot(steps, row["bound_per_step"], color=colour, linestyle=":",
               linewidth=1.2)
  diffs.plot([], [], color="grey", linestyle=":",
             label=f"its pass bound: atol {report['atol']:g} + rtol "
             f"{report['rtol']:g} x |reference| + "
             f"{report['rounding_factor']:g} x rounding")
  verdict = "all pass" if report["ok"] else "FAILS"
  losses.set(title=f"{report['optimizer']}: training loss\n(curves that "
             "coincide agree)", xlabel="step", ylabel="loss")
  diffs.set(title=f"difference from the reference: {verdict}\n(at the "
            "element nearest its bound, dotted)", xlabel="step",
            ylabel="|value - reference|", yscale="log")
  for axes in (losses, diffs):  # Legends below: the curves fill the axes.
    axes.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12))
    axes.grid(True, which="both", alpha=0.3)
  figure.tight_layout()
  figure.savefig(path, dpi=110, bbox_inches="tight")
  plt.close(figure)
