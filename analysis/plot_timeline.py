#!/usr/bin/env python3
"""Draws a run's timeline.json (written by `stellatrain run --timeline` or
`train --timeline`; format in core/runtime/timeline.h) as one row per node
and lane: each worker's forward and backward, the node CPU's per-layer
gather (on a GPU: the device-to-host copy and the sum), compress and
optimize, and the node's sends. The per-layer pipeline's overlap with
backward is what to look for.

    python3 analysis/plot_timeline.py RUN_DIR/timeline.json --out timeline.png [--from-ms 0 --to-ms 200]
"""
import argparse
import json
import sys

COLOURS = {
    "forward": "#4c72b0", "backward": "#dd8452", "gather": "#55a868", "compress": "#c44e52",
    "optimize": "#8172b3", "optimize_dense": "#8172b3", "compress_gpu": "#c44e52", "send": "#937860",
    "evaluate": "#bbbbbb", "powersgd": "#da8bc3",
}


def load(path):
    try:
        with open(path) as f:
            trace = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"{path}: cannot read the timeline: {e}")
    if "traceEvents" not in trace:
        sys.exit(f"{path}: no traceEvents (not a timeline written by stellatrain)")
    names = {}
    spans = []
    for e in trace["traceEvents"]:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
        elif e.get("ph") == "X":
            spans.append(e)
    return spans, names


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("timeline")
    parser.add_argument("--out", required=True, help="PNG or SVG to write")
    parser.add_argument("--from-ms", type=float, default=None, help="window start (default: the first span)")
    parser.add_argument("--to-ms", type=float, default=None, help="window end (default: start + 3 iterations' worth)")
    parser.add_argument("--title", default=None)
    args = parser.parse_args()

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    spans, names = load(args.timeline)
    if not spans:
        sys.exit(f"{args.timeline}: the timeline has no spans")
    start = args.from_ms if args.from_ms is not None else min(e["ts"] for e in spans) / 1000
    if args.to_ms is not None:
        end = args.to_ms
    else:  # about three iterations: three forward starts of one worker
        starts = sorted(e["ts"] / 1000 for e in spans if e["cat"] == "forward" and e["pid"] == spans[0]["pid"]
                        and e["tid"] == min(s["tid"] for s in spans if s["cat"] == "forward"))
        end = starts[3] if len(starts) > 3 else max((e["ts"] + e["dur"]) / 1000 for e in spans)
    lanes = sorted({(e["pid"], e["tid"]) for e in spans})
    row = {lane: i for i, lane in enumerate(lanes)}
    fig, ax = plt.subplots(figsize=(12, 0.45 * len(lanes) + 1.5))
    seen = set()
    for e in spans:
        a, d = e["ts"] / 1000, e["dur"] / 1000
        if a + d < start or a > end:
            continue
        colour = COLOURS.get(e["cat"], "#777777")
        label = e["cat"] if e["cat"] not in seen else None
        seen.add(e["cat"])
        ax.barh(row[(e["pid"], e["tid"])], max(d, (end - start) / 2000), left=a, height=0.7, color=colour,
                edgecolor="black", linewidth=0.2, label=label)
    ax.set_yticks(range(len(lanes)))
    ax.set_yticklabels([f"node {p}: {names.get((p, t), t)}" for p, t in lanes])
    ax.invert_yaxis()
    ax.set_xlim(start, end)
    ax.set_xlabel("time on the run's clock (ms)")
    ax.set_title(args.title or args.timeline)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12 - 0.02 * len(lanes) / 4), ncol=8, fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out, dpi=130)
    print(f"timeline: {args.out} ({start:.1f}-{end:.1f} ms, {len(lanes)} lanes)")


if __name__ == "__main__":
    main()
