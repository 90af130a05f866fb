#!/usr/bin/env python3
"""Each system's time to accuracy against where the data lives: one
`stellatrain run` folder (or several, whose systems are merged) per
label_skew value, the same scenario otherwise (same seeds, same target).
Prints a Markdown table of the median TTA to the main target over the seeds
that reach it ("(n/N)" when only n of N do; "never" and the median best
accuracy when none does), then the median best accuracy, one column per
skew. With --figure PATH it also draws TTA against the skew (log scale):
a hollow marker where only some seeds reach the target, a cross at the
top where none does.

    analysis/label_skew_table.py \\
        0:results/paper-tta/cnn-h100-fluct-115,results/paper-tta/cnn-h100-fluct-115-convergence \\
        0.5:results/paper-tta/cnn-h100-fluct-115-label-skew-half \\
        1:results/paper-tta/cnn-h100-fluct-115-label-skew --figure docs/figures/label-skew-tta.png

docs/paper-tta-label-skew.md shows its output.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tta  # noqa: E402
from tta import InputError, median_or_none  # noqa: E402


def parse_point(text):
    """"SKEW:FOLDER[,FOLDER...]" -> (skew, [folders])."""
    skew, sep, folders = text.partition(":")
    if not sep or not folders:
        raise InputError(f"{text}: expected SKEW:FOLDER[,FOLDER...]")
    try:
        value = float(skew)
    except ValueError:
        raise InputError(f"{text}: the skew '{skew}' is not a number") from None
    if not 0 <= value <= 1:
        raise InputError(f"{text}: the skew {value} is outside [0, 1]")
    return value, folders.split(",")


def load_point(folders, paired):
    """The systems of one skew's folders (label -> seed runs), the first
    folder naming a label winning. `paired` holds the first folder read at
    any skew, and its seeds and target: every folder must share them."""
    systems = {}
    for folder in folders:
        summary = tta.load_summary(folder)
        if not paired:
            paired.update(folder=folder, seeds=summary["seeds"], target=summary["target_accuracy"])
        elif (summary["seeds"], summary["target_accuracy"]) != (paired["seeds"], paired["target"]):
            raise InputError(f"{folder}: seeds {summary['seeds']} and target {summary['target_accuracy']} differ "
                             f"from {paired['folder']}'s ({paired['seeds']}, {paired['target']}): "
                             "not a paired comparison")
        for label in summary["systems"]:
            if label not in systems and not tta.failed(summary["systems"][label]):
                systems[label] = tta.seed_runs(summary, label)
    return systems


def only(points, labels):
    """The points with only `labels`, in that order; a label no folder has is an error."""
    for label in labels:
        if not any(label in systems for _, systems in points):
            raise InputError(f"--systems: no folder has a system '{label}'")
    return [(skew, {label: systems[label] for label in labels if label in systems}) for skew, systems in points]


def cell(runs):
    """(median TTA over the seeds reaching the target or None, reached, seeds, median best accuracy)."""
    ttas = [r.get("tta_s") for r in runs]
    reached = sum(t is not None for t in ttas)
    best = median_or_none([r.get("best_accuracy") for r in runs])
    return median_or_none(ttas), reached, len(runs), best


def format_tta_cell(tta_s, reached, seeds, best):
    if tta_s is None:
        return f"never (best {best * 100:.1f}%)" if best is not None else "never"
    return f"{tta_s:.2f}" + ("" if reached == seeds else f" ({reached}/{seeds})")


def system_labels(points):
    """Every system label of the points, in the order they first appear."""
    labels = []
    for _, systems in points:
        labels += [label for label in systems if label not in labels]
    return labels


def tables(points, labels):
    """Two Markdown tables (TTA, best accuracy) from [(skew, systems)], a row per label."""
    header = "| system | " + " | ".join(f"label_skew {skew:g}" for skew, _ in points) + " |"
    rule = "|---" * (len(points) + 1) + "|"
    tta_rows, accuracy_rows = [header, rule], [header, rule]
    for label in labels:
        cells = [cell(systems[label]) if label in systems else None for _, systems in points]
        tta_rows.append(f"| {label} | " + " | ".join("-" if c is None else format_tta_cell(*c) for c in cells) + " |")
        accuracy_rows.append(f"| {label} | " + " | ".join(
            "-" if c is None or c[3] is None else f"{c[3] * 100:.2f}%" for c in cells) + " |")
    return "\n".join(tta_rows), "\n".join(accuracy_rows)


def draw(points, labels, target, path):
    try:
        import matplotlib
    except ImportError:
        raise InputError("--figure needs matplotlib, which this python3 cannot import: run it with /usr/bin/python3 "
                         "(Debian's python3-matplotlib, scripts/install-deps.sh)") from None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    reached = [c[0] for _, systems in points for c in (cell(r) for r in systems.values()) if c[0] is not None]
    top = max(reached) * 2 if reached else 1
    fig, ax = plt.subplots(figsize=(8.5, 4.5))
    for label in labels:
        xs, ys, partial, never = [], [], [], []
        for skew, systems in points:
            if label not in systems:
                continue
            tta_s, got, seeds, _ = cell(systems[label])
            if tta_s is None:
                never.append(skew)
                continue
            xs.append(skew)
            ys.append(tta_s)
            if got < seeds:
                partial.append((skew, tta_s))
        line = ax.plot(xs, ys, marker="o", label=label)[0]
        if partial:  # hollow: only some seeds reach the target
            ax.scatter(*zip(*partial), s=80, facecolors="white", edgecolors=line.get_color(), zorder=3)
        if never:
            ax.scatter(never, [top] * len(never), marker="x", color=line.get_color())
    ax.set_yscale("log")
    ax.axhline(top, color="grey", linewidth=0.5, linestyle=":")
    ax.text(0.01, top, " never", va="bottom", fontsize=8, color="grey", transform=ax.get_yaxis_transform())
    ax.set_xlabel("label_skew (share of each class at its home cluster)")
    ax.set_ylabel(f"median TTA to {target * 100:g}% (simulated s)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))  # outside: the "never" row stays visible
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("points", nargs="+", help="SKEW:FOLDER[,FOLDER...]")
    parser.add_argument("--figure", help="also draw TTA against the skew into this PNG")
    parser.add_argument("--systems", help="only these system labels, in this order (comma-separated)")
    args = parser.parse_args(argv)
    try:
        parsed = sorted((parse_point(p) for p in args.points), key=lambda p: p[0])
        paired = {}
        points = [(skew, load_point(folders, paired)) for skew, folders in parsed]
        labels = args.systems.split(",") if args.systems else system_labels(points)
        points = only(points, labels)
        seeds, target = paired["seeds"], paired["target"]
        by_tta, by_accuracy = tables(points, labels)
        print(f"Median TTA to {target * 100:g}% (s) over seeds {seeds}:\n\n{by_tta}\n")
        print(f"Median best accuracy:\n\n{by_accuracy}")
        if args.figure:
            draw(points, labels, target, args.figure)
            print(f"\nfigure: {args.figure}")
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
