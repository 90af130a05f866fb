#!/usr/bin/env python3
"""Fit the controller's sparsity_cost from runs at fixed densities.

The soonest-target rule (core/control/soonest_density.h, docs/control.md
"The soonest target") models the iterations a density d needs to reach the
target as N(d) = N1 x (1 + k / sqrt(d)). This reads `stellatrain run` or
`stellatrain sweep` results folders whose systems include StellaTrain at
fixed densities (`controller: off`), takes every seed's iteration reaching
the main target, and fits N = N1 (1 + k / sqrt(d)) by least squares over
those points. Each folder gets its own fit; with several (e.g. one per
link), one more fit pools them, each folder with its own N1 and one k
shared: k is the workload's, N1 may differ with the link. Run it on validation runs (`eval.on: validation`,
or `sweep`), never on the test runs the rule is then judged on. Seeds that
miss the target are listed and left out of the fit (they would only raise
k). The fixed densities of one fit must differ in their density only: a
folder that also holds, say, the same densities with clipping is refused,
naming two systems and the options they differ in; `--systems` picks the
ones to fit. Markdown on stdout, then the line `sparsity_cost: K` (the
pooled k with several folders).

    analysis/fit_sparsity_cost.py results/paper-tta/cnn-h100-fluct-115-tune-sparsity-cost
    analysis/fit_sparsity_cost.py FOLDER_AT_LINK_1 FOLDER_AT_LINK_2 ...
    analysis/fit_sparsity_cost.py FOLDER --systems warmup-fixed-0.03-clip-2,warmup-fixed-0.1-clip-2,...
"""
import argparse
import json
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tta  # noqa: E402


def fixed_density_points(summary, labels=None):
    """(density, label, [iterations to the target per seed, None = missed])
    for each StellaTrain system with the controller off (of `labels` only,
    when given). Refuses systems that differ in more than their density."""
    points, settings = [], {}
    for label, system in summary["systems"].items():
        options = system.get("options", {})
        if labels is not None and label not in labels:
            continue
        if options.get("controller") != "off" or "density" not in options:
            continue
        if "compressor" not in options:  # not StellaTrain
            continue
        # A one-seed run has no per_seed list: its entry is its only run.
        iterations = [seed.get("tta_iteration") for seed in tta.seed_runs(summary, label)]
        points.append((float(options["density"]), label, iterations))
        settings[label] = {k: v for k, v in options.items() if k != "density"}
    check_one_setting(settings)
    return sorted(points)


def check_one_setting(settings):
    """Raises unless every system's options (label -> options without the
    density) are the same: a fit over two settings would mix two curves."""
    labels = sorted(settings)
    for label in labels[1:]:
        differ = sorted(k for k in set(settings[label]) | set(settings[labels[0]])
                        if settings[label].get(k) != settings[labels[0]].get(k))
        if differ:
            raise ValueError(f"{labels[0]} and {label} differ in more than their density ({', '.join(differ)}); "
                             "fit one setting at a time with --systems")


def reached_points(points):
    """(x = 1 / sqrt(d), N) for every seed that reached the target."""
    return [(1 / math.sqrt(density), float(n)) for density, _, iterations in points for n in iterations
            if n is not None]


def fit_pooled(groups):
    """Least squares of N = a_g + b_g x with b_g = k a_g: one k, an N1 = a_g
    per group. For a fixed k the best a_g is closed form (N = a_g (1 + k x)),
    so k is found by a golden-section search on the squared error, over
    [0, 100]. Returns ([a_g], k)."""
    data = [reached_points(points) for points in groups]
    for points, pairs in zip(groups, data):
        if len({x for x, _ in pairs}) < 2:
            raise ValueError("need seeds reaching the target at two densities or more")

    def intercepts(k):
        return [sum(n * (1 + k * x) for x, n in pairs) / sum((1 + k * x) ** 2 for x, _ in pairs) for pairs in data]

    def error(k):
        return sum((n - a * (1 + k * x)) ** 2 for a, pairs in zip(intercepts(k), data) for x, n in pairs)

    lo, hi = 0.0, 100.0
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(200):
        m1, m2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        if error(m1) <= error(m2):
            hi = m2
        else:
            lo = m1
    k = (lo + hi) / 2
    a = intercepts(k)
    if min(a) <= 0:
        raise ValueError("the fit's dense limit N1 is not positive: the model does not fit these runs")
    return a, k


def load(folder):
    summary_path = Path(folder) / "summary.json"
    try:
        return json.loads(summary_path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{summary_path}: {e}")


def print_folder(folder, summary, points, a, k):
    target = summary.get("target_accuracy")
    print(f"{summary.get('scenario', Path(folder).name)} ({folder}): iterations to {target} per fixed density, "
          f"fitted N(d) = {a:.1f} x (1 + {k:.3f} / sqrt(d))\n")
    print("| system | density | iterations per seed | median | fitted |")
    print("|---|---|---|---|---|")
    for density, label, iterations in points:
        reached = [n for n in iterations if n is not None]
        shown = ", ".join("missed" if n is None else str(n) for n in iterations)
        median = statistics.median(reached) if reached else None
        print(f"| {label} | {density:g} | {shown} | {'-' if median is None else f'{median:g}'} | "
              f"{a * (1 + k / math.sqrt(density)):.0f} |")
    print()


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser(description="Fit the controller's sparsity_cost from fixed-density runs.")
    parser.add_argument("folders", nargs="+", help="`stellatrain run` or `sweep` results folders")
    parser.add_argument("--systems", help="comma-separated labels: fit only these fixed densities")
    args = parser.parse_args(argv[1:])
    labels = None if args.systems is None else set(args.systems.split(","))
    groups = []
    try:
        for folder in args.folders:
            summary = load(folder)
            try:
                points = fixed_density_points(summary, labels)
                a, k = fit_pooled([points])
            except ValueError as e:
                raise ValueError(f"{folder}: {e}")
            print_folder(folder, summary, points, a[0], k)
            print(f"sparsity_cost of {folder}: {k:.3f}\n")
            groups.append(points)
        if len(groups) > 1:  # one folder's fit is already the answer
            a, k = fit_pooled(groups)
            print("pooled over the folders, one k and an N1 per folder: "
                  + ", ".join(f"N1 {n1:.1f}" for n1 in a) + "\n")
    except ValueError as e:
        print(f"fit_sparsity_cost: {e}", file=sys.stderr)
        return 1
    print(f"sparsity_cost: {k:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
