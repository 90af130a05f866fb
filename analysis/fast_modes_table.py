#!/usr/bin/env python3
"""Side by side: one scenario run in its faithful mode (ns-3 packets, CPU
stages at full size) and in the fast ones (the flow-level WAN, stages on
layer samples), as scripts/compare_fast_modes.sh lays them out:
OUT/<network>-<stages>/ with summary.json and wall_s.txt (the `run`
command's whole wall time, setup included). Per system: mean iteration time
and, for runs that measure accuracy, time to accuracy (median over seeds),
each with its ratio to the faithful mode's; then what each mode cost the
host. The reference is the faithful mode, or where it was not run (it
may not fit in memory) the packet mode with sampled stages, which the
table then names. Markdown on stdout.

    analysis/fast_modes_table.py results/fast/resnet152-fluct-115
    analysis/fast_modes_table.py --summary results/fast/*   # one row per scenario and system
"""
import json
import sys
from pathlib import Path

MODES = [("packet-full", "packet, full stages"), ("flow-full", "flow, full stages"),
         ("packet-sampled", "packet, sampled stages"), ("flow-sampled", "flow, sampled stages")]
REFERENCES = ["packet-full", "packet-sampled"]


def load(out: Path):
    runs = {}
    for folder, title in MODES:
        summary = out / folder / "summary.json"
        if summary.is_file():
            wall = out / folder / "wall_s.txt"
            runs[folder] = (title, json.loads(summary.read_text()),
                            float(wall.read_text()) if wall.is_file() else float("nan"))
    reference = next((m for m in REFERENCES if m in runs), None)
    if reference is None:
        raise SystemExit(f"{out}: neither packet-full/ nor packet-sampled/ holds a summary.json to compare with "
                         f"(scripts/compare_fast_modes.sh makes them)")
    return runs, reference


def ratio(value, reference):
    if value is None or reference in (None, 0):
        return "-"
    return f"{value / reference:.3f}"


def system_table(runs, reference):
    modes = [reference] + [m for m, _ in MODES if m in runs and m != reference]
    name = "faithful" if reference == "packet-full" else runs[reference][0]
    header = ["system", "measure"] + [runs[m][0] for m in modes] + [f"{runs[m][0]} / {name}" for m in modes[1:]]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    faithful = runs[reference][1]["systems"]
    for label in faithful:
        measures = [("mean iteration s", "mean_iteration_s")]
        if faithful[label].get("tta_s") is not None:
            measures.append(("TTA s (median)", "tta_s"))
        for name, key in measures:
            values = [runs[m][1]["systems"].get(label, {}).get(key) for m in modes]
            cells = [f"{v:.4g}" if v is not None else "-" for v in values]
            ratios = [ratio(v, values[0]) for v in values[1:]]
            lines.append("| " + " | ".join([label, name] + cells + ratios) + " |")
    return lines


def cost_table(runs):
    header = ["mode", "simulated s (all systems)", "wall s (whole `run`)", "simulated s per wall s"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for folder, _ in MODES:
        if folder not in runs:
            continue
        title, summary, wall = runs[folder]
        seeds = max(1, len(summary.get("seeds", [1])))
        simulated = sum(s.get("duration_s", 0) * seeds for s in summary["systems"].values())
        lines.append(f"| {title} | {simulated:.1f} | {wall:.1f} | {simulated / wall:.2f} |")
    return lines


def simulated_and_wall(runs, mode):
    _, summary, wall = runs[mode]
    seeds = max(1, len(summary.get("seeds", [1])))
    return sum(s.get("duration_s", 0) * seeds for s in summary["systems"].values()), wall


def summary_tables(outs):
    """Every scenario's ratios in one table, and each one's speed."""
    header = ["scenario", "system", "reference iteration s"] + [f"{title} / reference" for _, title in MODES[1:]]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    speed = ["| scenario | reference: simulated s / wall s | ratio | flow, sampled stages: simulated s / wall s | ratio |",
             "|---|---|---|---|---|"]
    for out in outs:
        runs, reference = load(out)
        name = out.name if reference == "packet-full" else f"{out.name} (reference: packet, sampled stages)"
        for label, system in runs[reference][1]["systems"].items():
            base = system["mean_iteration_s"]
            cells = []
            for mode, _ in MODES[1:]:
                if mode == reference:
                    cells.append("(reference)")
                elif mode in runs:
                    cells.append(ratio(runs[mode][1]["systems"].get(label, {}).get("mean_iteration_s"), base))
                else:
                    cells.append("-")
            lines.append("| " + " | ".join([name, label, f"{base:.3f}"] + cells) + " |")
        if "flow-sampled" in runs:
            (s1, w1), (s2, w2) = simulated_and_wall(runs, reference), simulated_and_wall(runs, "flow-sampled")
            speed.append(f"| {name} | {s1:.1f} / {w1:.1f} | {s1 / w1:.2f} | {s2:.1f} / {w2:.1f} | {s2 / w2:.2f} |")
    return lines + [""] + speed


def main(argv):
    if len(argv) >= 3 and argv[1] == "--summary":
        print("\n".join(summary_tables([Path(a) for a in argv[2:] if (Path(a)).is_dir()])))
        return
    if len(argv) != 2:
        raise SystemExit(__doc__)
    runs, reference = load(Path(argv[1]))
    print("\n".join(system_table(runs, reference)))
    print()
    print("\n".join(cost_table(runs)))


if __name__ == "__main__":
    main(sys.argv)
