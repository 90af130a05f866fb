#!/usr/bin/env python3
"""Compares two `stellatrain run` results folders of the same scenario and
seeds run two ways (e.g. `--network flow` against ns-3's packets): per
system and report target, each seed's TTA ratio (second / first), their
median and range, and the ratio of the median TTAs; per system, the mean
iteration time's ratio. The seeds are paired (same data order,
initialisation and trace stretch), so a ratio is the second way's effect on
one and the same run. Markdown on stdout; reads only summary.json.

    analysis/paired_runs_table.py results/fast/headline-packet results/fast/headline-flow
"""
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tta  # noqa: E402


def load(folder):
    return json.loads((Path(folder) / "summary.json").read_text())


def per_seed_tta(summary, label, target):
    return {run["seed"]: run["tta_at"].get(target) for run in tta.seed_runs(summary, label)}


def ratio_cell(ratios):
    if not ratios:
        return "-", "-"
    return f"{statistics.median(ratios):.3f}", f"{min(ratios):.3f} - {max(ratios):.3f}"


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    first, second = load(argv[1]), load(argv[2])
    a, b = first["systems"], second["systems"]
    if first["scenario"] != second["scenario"] or first["seeds"] != second["seeds"]:
        sys.exit(f"{argv[1]} and {argv[2]}: not the same scenario and seeds")
    targets = [t for t in first["report_targets"]] or [first["target_accuracy"]]
    print(f"{argv[2]} against {argv[1]} ({first['scenario']}, seeds {first['seeds']})\n")
    print("| system | target | seeds reaching (first / second) | TTA ratio per seed, median | range | "
          "ratio of median TTAs | mean iteration ratio |")
    print("|---|---|---|---|---|---|---|")
    for label, entry in a.items():
        if label not in b or "error" in entry or "error" in b[label]:
            print(f"| {label} | - | failed or missing in one of them | | | | |")
            continue
        iteration = b[label]["mean_iteration_s"] / entry["mean_iteration_s"]
        for target in targets:
            key = f"{target:g}"
            x, y = per_seed_tta(first, label, key), per_seed_tta(second, label, key)
            ratios = [y[s] / x[s] for s in x if x[s] is not None and y.get(s) is not None]
            reached_x = sum(v is not None for v in x.values())
            reached_y = sum(v is not None for v in y.values())
            ta = [v for v in x.values() if v is not None]
            tb = [v for v in y.values() if v is not None]
            of_medians = (f"{statistics.median(tb) / statistics.median(ta):.3f}"
                          if ta and tb and reached_x == len(x) and reached_y == len(y) else "-")
            median, spread = ratio_cell(ratios)
            print(f"| {label} | {target:.0%} | {reached_x} / {reached_y} | {median} | {spread} | {of_medians} | "
                  f"{iteration:.3f} |")


if __name__ == "__main__":
    main(sys.argv)
