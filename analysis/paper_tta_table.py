#!/usr/bin/env python3
"""StellaTrain against ddp in the paper's regime, beside the paper's ratios:
per results folder (one scenario, paired seeds), the iteration-time ratio
(ddp / StellaTrain, medians of the seeds' mean iterations), the
iterations-to-target ratio (StellaTrain / ddp, medians), the paired TTA
speedup at the scenario's target with its 95% interval (summary.json), and
both systems' median best accuracy, StellaTrain's link utilisation
(delivered / configured bandwidth, link.csv) and, where the folder also
ran fixed densities (labels fixed-*), StellaTrain's median TTA over the
best fixed density's. A factor of the TTA ratio is the iteration-time
ratio over the iterations-to-target ratio: the two columns say which one
moves it. Markdown on stdout.

    analysis/paper_tta_table.py FOLDER[:LABEL[:FIXED_FOLDER[,FIXED_FOLDER...]]] ...

LABEL is StellaTrain's system label in that folder (default: stellatrain);
the row names it beside the scenario unless it is stellatrain or
stellatrain-fill-80. FIXED_FOLDER, when given, holds the fixed densities
to compare with (the same workload, link and seeds run from another
scenario file, e.g. a convergence variant's base); otherwise FOLDER's own.
Several, comma-separated, are one sweep run in parts: the best fixed
density is the best over all of them, and a label in two is refused.
A folder whose scenario name has fluct-115, const-100 or const-500 in it is
set beside the paper's 104x, 257.3x or 78.1x.

`--fit` prints instead, per folder, the TTA speedup and the
iterations-to-target ratio read two ways from each run's eval.csv: at the
first evaluation at or above the target (the table's reading, summary.json's
speedup_vs_ddp) and where the monotone (isotonic) fit of the run's
evaluations reaches it (analysis/monotone_tta.py; summary.json's
speedup_vs_ddp_fit), each speedup the median of the per-seed ratios with
apps/seed_statistics.cc's 95% bootstrap interval, and the fewest
evaluations after a fit crossing on each side (over the seeds that reach
the target): one evaluation above the target that the next ones fall back
from no longer decides the row. Each run is read whole, as summary.json
reads it. The arguments are the table's; FIXED_FOLDER is not read.

    analysis/paper_tta_table.py --fit FOLDER[:LABEL[:FIXED_FOLDER...]] ...
"""
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import monotone_tta  # noqa: E402
import paired_systems  # noqa: E402
import run_folders  # noqa: E402
import tta  # noqa: E402
from density_report import best_fixed, median_tta  # noqa: E402
from run_measures import link_utilisation  # noqa: E402
from tta import median_or_none as median  # noqa: E402

PAPER = {"fluct-115": "104x", "const-100": "257.3x", "const-500": "78.1x"}


def load(folder):
    try:
        return tta.read_summary(folder)
    except tta.InputError as e:  # a missing or broken summary.json, named
        sys.exit(f"error: {e}")


def load_with_ddp(folder, label):
    """FOLDER's summary; exits naming the folder unless `label` and ddp
    both ran there without failing."""
    summary = load(folder)
    for name in (label, "ddp"):
        if name not in summary["systems"]:
            sys.exit(f"error: {folder}: no system '{name}' (it has: {', '.join(summary['systems'])})")
        if "error" in summary["systems"][name]:
            sys.exit(f"error: {folder}: system '{name}' failed: {summary['systems'][name]['error']}")
    return summary


def row_argument(argument):
    """FOLDER[:LABEL[:FIXED_FOLDER,...]]: (folder, label, fixed folders)."""
    folder, _, rest = argument.partition(":")
    label, _, fixed_folders = rest.partition(":")
    return folder, label or "stellatrain", [f for f in fixed_folders.split(",") if f]


def row_name(summary, label):
    """The scenario, with StellaTrain's label unless it is the table's own controller."""
    return summary["scenario"] + ("" if label in ("stellatrain", "stellatrain-fill-80") else f" ({label})")


def speedup_text(speedup, ci):
    """"55.7x [37.7, 61.0]", or "-" without a speedup."""
    return (f"{speedup:.1f}x" if speedup else "-") + (f" [{ci[0]:.1f}, {ci[1]:.1f}]" if ci else "")


def row(folder, label, fixed_folders=()):
    summary = load_with_ddp(folder, label)
    target = f"{summary['target_accuracy']:g}"
    st = summary["systems"][label]
    st_seeds, ddp_seeds = tta.seed_runs(summary, label), tta.seed_runs(summary, "ddp")
    iteration_ratio = median(p["mean_iteration_s"] for p in ddp_seeds) / median(
        p["mean_iteration_s"] for p in st_seeds)
    st_its = [p.get("tta_iteration") for p in st_seeds]
    ddp_its = [p.get("tta_iteration") for p in ddp_seeds]
    its_ratio = (f"{median(st_its) / median(ddp_its):.2f}" if None not in st_its + ddp_its else "-")
    at = st["targets"][target]
    speedup = at.get("speedup_vs_ddp")
    ci = at.get("speedup_ci95")
    tta_cell = speedup_text(speedup, ci)
    _, reached, count = median_tta(summary, label, target)
    if reached < count:  # the speedup is over the seeds that reached the target only
        tta_cell += f" ({reached}/{count} seeds reach)"
    paper = next((v for k, v in PAPER.items() if k in summary["scenario"]), "-")
    best = f"{median(p['best_accuracy'] for p in st_seeds):.2%} / {median(p['best_accuracy'] for p in ddp_seeds):.2%}"
    utilisation = median(link_utilisation(Path(folder) / p["run"]) for p in st_seeds)
    utilisation_cell = "-" if utilisation is None else f"{utilisation:.0%}"
    name = row_name(summary, label)
    medians = fixed_medians(folder, summary, fixed_folders, target)
    return (f"| {name} | {len(summary['seeds'])} | {iteration_ratio:.1f}x | {its_ratio} | {tta_cell} | "
            f"{best} | {utilisation_cell} | {against_fixed(summary, label, target, medians)} | {paper} |")


def fixed_medians(folder, summary, fixed_folders, target):
    """Each system's median TTA at `target` over the fixed-density folders
    (FOLDER's own summary without any): label -> median or None."""
    medians, origin = {}, {}
    for fixed_folder in fixed_folders or [None]:
        fixed = load(fixed_folder) if fixed_folder else summary
        if fixed["seeds"] != summary["seeds"]:
            sys.exit(f"{fixed_folder}: seeds {fixed['seeds']} are not {folder}'s {summary['seeds']}")
        for k, entry in fixed["systems"].items():
            if "error" in entry or not k.startswith("fixed-"):
                continue
            if k in medians:
                sys.exit(f"{fixed_folder}: fixed density {k} is also in {origin[k]}; which one to compare with?")
            medians[k], origin[k] = median_tta(fixed, k, target)[0], fixed_folder
    return medians


def against_fixed(summary, label, target, medians):
    """StellaTrain's median TTA over the best fixed density's among `medians` ("-" without any)."""
    best, best_tta = best_fixed(medians)
    if best is None:
        return "-"
    mine = median_tta(summary, label, target)[0]
    return f"{mine / best_tta:.2f} ({best})" if mine is not None else f"not reached ({best})"


def seed_readings(folder, summary, label):
    """{seed: monotone_tta.readings of the run's eval.csv} for one system."""
    target = summary["target_accuracy"]
    return {run["seed"]: monotone_tta.readings(run_folders.read_evaluations(Path(folder) / run["run"]), target)
            for run in tta.seed_runs(summary, label)}


def speedup_by(reading, ddp, st):
    """The median of per-seed ddp / StellaTrain TTAs by `reading` with its
    95% interval, over the seeds where both reach the target (as
    apps/seed_statistics.cc's paired_speedup), and how many those are."""
    ratios = [ddp[seed][reading][1] / st[seed][reading][1] for seed in st
              if ddp[seed][reading] and st[seed][reading] and st[seed][reading][1] > 0]
    return (*paired_systems.bootstrap_median(ratios), len(ratios))


def fit_cells(ddp, st, reading):
    """The speedup cell and the iterations-to-target cell by `reading`."""
    speedup, ci, pairs = speedup_by(reading, ddp, st)
    cell = speedup_text(speedup, ci)
    if pairs < len(st):
        cell += f" ({pairs}/{len(st)} pairs reach)"
    iterations = [[side[seed][reading] for seed in st] for side in (st, ddp)]
    if None in iterations[0] + iterations[1]:
        return cell, "-"
    return cell, f"{median(r[0] for r in iterations[0]) / median(r[0] for r in iterations[1]):.2f}"


def fewest_after(readings):
    """The fewest evaluations after a fit crossing over the seeds that
    reached the target (summary.json's evaluations_after_fit; "-": none did)."""
    after = [r["monotone"][2] for r in readings.values() if r["monotone"]]
    return str(min(after)) if after else "-"


def fit_row(folder, label):
    """The --fit row: both readings' speedups and iterations ratios."""
    summary = load_with_ddp(folder, label)
    st, ddp = (seed_readings(folder, summary, name) for name in (label, "ddp"))
    if set(st) != set(ddp):
        sys.exit(f"error: {folder}: {label} ran seeds {sorted(st)}, ddp {sorted(ddp)}: the speedups pair runs by seed")
    first, fit = fit_cells(ddp, st, "first"), fit_cells(ddp, st, "monotone")
    name = row_name(summary, label)
    return (f"| {name} | {len(st)} | {first[0]} | {fit[0]} | {first[1]} | {fit[1]} | "
            f"{fewest_after(st)} / {fewest_after(ddp)} |")


FIT_HEADER = ("| scenario | seeds | TTA speedup, first evaluation [95% interval] | "
              "TTA speedup, monotone fit [95% interval] | iterations to target, StellaTrain / ddp, first | "
              "iterations to target, monotone fit | evaluations after the fit's crossing, fewest, "
              "StellaTrain / ddp |\n|---|---|---|---|---|---|---|")


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    if argv[1] == "--fit":
        if len(argv) < 3:
            sys.exit(__doc__)
        rows = []  # all read before anything is printed: an error leaves no half table
        for arg in argv[2:]:
            folder, label, _ = row_argument(arg)
            try:
                rows.append(fit_row(folder, label))
            except tta.InputError as e:  # a missing or broken eval.csv, named
                sys.exit(f"error: {e}")
        print("\n".join([FIT_HEADER, *rows]))
        return
    print("| scenario | seeds | iteration time, ddp / StellaTrain | iterations to target, StellaTrain / ddp | "
          "TTA speedup [95% interval] | best accuracy, StellaTrain / ddp | StellaTrain's link utilisation | "
          "StellaTrain's TTA / best fixed density's | paper's TTA speedup |")
    print("|---|---|---|---|---|---|---|---|---|")
    for arg in argv[1:]:
        print(row(*row_argument(arg)))


if __name__ == "__main__":
    main(sys.argv)
