#!/usr/bin/env python3
"""Tabulates a `stellatrain run` results folder as README quotes it: per
system the median TTA over seeds at each target (the scenario's
report_targets, else its target), the seeds that reached it, the median
paired speedup over ddp with its 95% bootstrap interval and the interval's
width, the mean best accuracy, WAN bytes and iteration time. Markdown on
stdout; reads only summary.json (docs/runner.md).

    analysis/seed_table.py results/fluct-115mbps
"""
import json
import sys
from pathlib import Path


def number(value, fmt, scale=1.0):
    return "-" if value is None else format(value * scale, fmt)


def speedup(entry):
    """'4.8x [4.1, 5.6] (w 1.5)' from an entry with the speedup keys."""
    median = entry.get("speedup_vs_ddp")
    if median is None:
        return "-"
    text = f"{median:.2f}x"
    ci = entry.get("speedup_ci95")
    if ci:
        text += f" [{ci[0]:.2f}, {ci[1]:.2f}] (width {ci[1] - ci[0]:.2f})"
    return text


def target_entries(summary, s):
    """(target, entry with tta_s / seeds_reaching / speedup keys) per target."""
    targets = s.get("targets")
    if targets:
        return [(float(key), entry) for key, entry in targets.items()]
    entry = {"tta_s": s.get("tta_s"), "seeds_reaching": s.get("seeds_reaching_target"),
             "speedup_vs_ddp": s.get("speedup_vs_ddp"), "speedup_ci95": s.get("speedup_ci95")}
    return [(summary["target_accuracy"], entry)]


def main(argv):
    if len(argv) != 2:
        raise SystemExit(__doc__)
    path = Path(argv[1]) / "summary.json"
    if not path.is_file():
        raise SystemExit(f"{path}: missing (run `stellatrain run SCENARIO --out {argv[1]}` first)")
    summary = json.loads(path.read_text())
    seeds = len(summary["seeds"])
    print(f"{summary['scenario']}: {seeds} paired seed(s) {summary['seeds']}, {summary['clock']}, "
          f"medians over seeds; speedup = median of per-seed ddp TTA / system TTA, 95% bootstrap interval\n")
    header = ["system", "target", "TTA s (median)", "seeds reaching", "speedup vs ddp",
              "best accuracy (mean)", "WAN GB (mean)", "iteration ms (mean)"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for label, s in summary["systems"].items():
        if "error" in s:
            print(f"| {label} | failed: {s['error']} |" + " |" * (len(header) - 2))
            continue
        for i, (target, entry) in enumerate(target_entries(summary, s)):
            first = i == 0
            print("| " + " | ".join([
                label if first else "",
                f"{100 * target:.0f}%",
                number(entry.get("tta_s"), ".2f"),
                f"{entry.get('seeds_reaching', '-')}/{seeds}",
                speedup(entry),
                number(s.get("best_accuracy"), ".1f", 100) + "%" if first else "",
                number(s.get("wan_bytes"), ".3f", 1e-9) if first else "",
                number(s.get("mean_iteration_s"), ".1f", 1e3) if first else "",
            ]) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
