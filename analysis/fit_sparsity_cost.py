#!/usr/bin/env python3
"""Fit the controller's sparsity_cost from runs at fixed densities.

The soonest-target rule (core/control/soonest_density.h, docs/control.md
"The soonest target") models the iterations a density d needs to reach the
target as N(d) = N1 x (1 + k / sqrt(d)). This reads one `stellatrain run`
results folder whose systems include StellaTrain at fixed densities
(`controller: off`), takes every seed's iteration reaching the main target,
and fits N = a + b / sqrt(d) by least squares over those points (linear in
a and b): k = b / a. Run it on a validation sweep (`eval.on: validation`),
never on the test runs the rule is then judged on. Seeds that miss the
target are listed and left out of the fit (they would only raise k).
Markdown on stdout, then the line `sparsity_cost: K`.

    analysis/fit_sparsity_cost.py results/paper-tta/cnn-h100-fluct-115-tune-sparsity-cost
"""
import json
import math
import statistics
import sys
from pathlib import Path


def fixed_density_points(summary):
    """(density, label, [iterations to the target per seed, None = missed])
    for each StellaTrain system with the controller off."""
    points = []
    for label, system in summary["systems"].items():
        options = system.get("options", {})
        if options.get("controller") != "off" or "density" not in options:
            continue
        if "compressor" not in options:  # not StellaTrain
            continue
        iterations = [seed.get("tta_iteration") for seed in system["per_seed"]]
        points.append((float(options["density"]), label, iterations))
    return sorted(points)


def fit(points):
    """Least squares of N = a + b x, x = 1 / sqrt(d), over every seed that
    reached the target; (a, b, k = b / a)."""
    xs, ns = [], []
    for density, _, iterations in points:
        for n in iterations:
            if n is not None:
                xs.append(1 / math.sqrt(density))
                ns.append(float(n))
    if len(set(xs)) < 2:
        raise ValueError("need seeds reaching the target at two densities or more")
    mean_x, mean_n = statistics.fmean(xs), statistics.fmean(ns)
    b = sum((x - mean_x) * (n - mean_n) for x, n in zip(xs, ns)) / sum((x - mean_x) ** 2 for x in xs)
    a = mean_n - b * mean_x
    if a <= 0:
        raise ValueError(f"the fit's dense limit N1 = {a:.1f} is not positive: the model does not fit these runs")
    return a, b, b / a


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    folder = Path(argv[1])
    summary_path = folder / "summary.json"
    try:
        summary = json.loads(summary_path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        print(f"fit_sparsity_cost: {summary_path}: {e}", file=sys.stderr)
        return 1
    points = fixed_density_points(summary)
    try:
        a, b, k = fit(points)
    except ValueError as e:
        print(f"fit_sparsity_cost: {folder}: {e}", file=sys.stderr)
        return 1
    target = summary.get("target_accuracy")
    print(f"{summary.get('scenario', folder.name)}: iterations to {target} per fixed density, "
          f"fitted N(d) = {a:.1f} x (1 + {k:.3f} / sqrt(d))\n")
    print("| system | density | iterations per seed | median | fitted |")
    print("|---|---|---|---|---|")
    for density, label, iterations in points:
        reached = [n for n in iterations if n is not None]
        shown = ", ".join("missed" if n is None else str(n) for n in iterations)
        median = statistics.median(reached) if reached else None
        print(f"| {label} | {density:g} | {shown} | {'-' if median is None else f'{median:g}'} | "
              f"{a + b / math.sqrt(density):.0f} |")
    print(f"\nsparsity_cost: {k:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
