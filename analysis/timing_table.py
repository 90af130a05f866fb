#!/usr/bin/env python3
"""Tabulates timing-mode runs (compute math: timing): per scenario and
system, the mean iteration time, the iteration-time ratio to ddp, WAN bytes,
throughput, and what the simulation cost on the host (host_cost.json:
simulated seconds per wall second). Markdown on stdout.

    analysis/timing_table.py results/paper/resnet152-fluct-115 results/paper/vit-b16-fluct-115 ...
"""
import json
import sys
from pathlib import Path


def rows(run_dir: Path):
    summary = json.loads((run_dir / "summary.json").read_text())
    # Clusters of different sizes list each node's GPUs (node_gpus).
    gpus = sum(summary["node_gpus"]) if "node_gpus" in summary else summary["nodes"] * summary["gpus_per_node"]
    for label, s in summary["systems"].items():
        if "error" in s:
            yield [summary["scenario"], label, "failed: " + s["error"]] + [""] * 7
            continue
        if s.get("math") != "timing":
            raise SystemExit(f"{run_dir}/summary.json: {label} is not a timing run")
        host = json.loads((run_dir / s["runs"][0] / "host_cost.json").read_text())
        yield [summary["scenario"], label, f"{s['mean_iteration_s']:.3f}",
               f"{s.get('iteration_speedup_vs_ddp', float('nan')):.1f}x",
               f"{s['wan_bytes'] / 1e9:.2f}", f"{s['samples_per_s']:.0f}", str(gpus),
               f"{host['simulated_s']:.1f}", f"{host['wall_s']:.1f}", f"{host['simulated_s_per_wall_s']:.2f}"]


def main(argv):
    if len(argv) < 2:
        raise SystemExit(__doc__)
    header = ["scenario", "system", "iteration s", "vs ddp", "WAN GB", "samples/s", "GPUs",
              "simulated s", "host wall s", "sim s per wall s"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for arg in argv[1:]:
        run_dir = Path(arg)
        if not (run_dir / "summary.json").is_file():
            raise SystemExit(f"{run_dir}: no summary.json (run `stellatrain run SCENARIO --out {run_dir}` first)")
        for row in rows(run_dir):
            print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main(sys.argv)
