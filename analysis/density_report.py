#!/usr/bin/env python3
"""The controller against fixed densities: one `stellatrain run` results
folder whose systems are StellaTrain variants (the controller in its forms,
and fixed densities with the controller off) beside a reference (ddp), over
paired seeds. Per system: the median TTA at each report target (seeds
reaching it), the median iteration reaching the main target, the median best
accuracy, the mean iteration time, the mean density, the WAN bytes per
iteration and the link's utilisation (delivered / configured bandwidth,
both directions, whole seconds of the run from link.csv). Then each
controller variant's median TTA over the best fixed density's at the main
target. Markdown on stdout.

A folder of timing runs (`compute.math: timing`, no accuracy: e.g.
scenarios/paper/resnet152-fluct-115-controller.yaml) gets the measures
only: per system the median over seeds of the mean iteration, mean
density, WAN bytes per iteration, link utilisation and the share of the
link left idle while rank 0 waited for the exchange, each with its range
over the seeds.

`--after S` measures only what starts at simulated second S or later
(iterations and whole seconds of link.csv): the controller's steady state
without its start-up. `--paired LABEL` (timing runs) adds each system's
link utilisation per seed, and against system LABEL on the same seed (the
same stretch of the trace) the median difference in points, its range,
and on how many seeds the system used more of the link. `--rates`
(timing runs) adds, per system over its seeds' controller ticks (rank 0's
control.csv, from `--after` on), how its measured rate R compares with
the link: the ticks that measured one, R over the link's configured rate
in the tick's second (the slowest direction; median and 10th-90th
percentiles), the largest R, and the ticks whose R is above the fastest
rate the link was configured to at all. `--plan-delay` (timing runs)
adds, per system over its seeds' plans (control.csv ticks with an
effective iteration, from `--after` on), how long a plan took to reach
the link: the seconds from its tick to the start of rank 0's first
iteration at the plan's density from its effective iteration on (with
`early_density_switch`, from the tick's next iteration on; a plan with a
drain: after the drain),
and how many iterations after the tick's that was; a plan whose density
never ran before the next plan took effect (or the run ended) is counted
apart. `--losses` (timing runs) splits, per system over its seeds, the
link's unused share (configured less delivered, every direction, the
seconds link utilisation counts) by the controller tick in force when
the second began (rank 0's latest control.csv tick at or before it): a
tick of an overrun episode ("overrun", "overrun, decreased already"), a
tick that raised or kept the estimate ("probe", "measured", a hold), and
any other (slow start, no samples, before the first tick); and how much
of it went unused while that tick's estimate was under the second's
configured rate, and while the reverse direction (b->a for a->b) carried
95% or more of its configured rate that second (the exchange's bytes
queued one way while the other way idled). `--backlogged FOLDER` (timing
runs) compares, per system and seed, the bytes the link delivered with
what it delivered on the same whole seconds in FOLDER, a run of the same
scenario and seeds whose system (`--backlogged-system`, ddp by default)
keeps the link backlogged both ways: the share of what the transport
carries when it always has bytes to send (ns-3's TCP with both directions
loaded delivers under the configured rate), and that run's utilisation on
those seconds. `--versus FOLDER` (timing runs) pairs every system and seed
with the same system and seed in FOLDER, a run of the same scenario on
another backend (the emulator's kernel TCP against ns-3's): link
utilisation and mean iteration on each, and the paired difference, over
every seed and over the seeds whose host kept up (neither run's
manifest lists host.fell_behind: a hypervisor that stole CPU, a delay
line or paced compute that ran late; docs/emu.md).

The measures are read by analysis/run_measures.py.

    analysis/density_report.py results/paper-tta/cnn-h100-fluct-115-controller
    analysis/density_report.py results/paper/resnet152-fluct-115-controller --after 10
    analysis/density_report.py results/paper/resnet152-fluct-115-controller-10seeds --after 10 \
        --paired paper-rule-load-once-resume-ceiling-start
    analysis/density_report.py results/paper/resnet152-fluct-115-controller-10seeds --after 10 --rates
    analysis/density_report.py results/paper/resnet152-fluct-115-controller-10seeds --after 10 --plan-delay
    analysis/density_report.py results/paper/resnet152-fluct-115-controller-10seeds --after 10 --losses
    analysis/density_report.py results/paper/resnet152-fluct-115-controller-10seeds --after 10 \
        --backlogged results/paper/resnet152-fluct-115-ddp-10seeds
    analysis/density_report.py results/emu-drain/emu --after 10 --versus results/emu-drain/sim
"""
import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tta  # noqa: E402
from run_measures import (backlogged_share, check_same_stretch, link_utilisation, plan_delays, run_measures,  # noqa: E402
                          tick_rates, timing_measures, unused_by_tick)
from tta import median_or_none  # noqa: E402


def median_tta(summary, label, target):
    """A system's median TTA at `target` (a summary key such as "0.85") over
    its seeds, None unless every seed reached it; then how many did, of how
    many."""
    values = [p["tta_at"].get(target) for p in tta.seed_runs(summary, label)]
    reached = sum(v is not None for v in values)
    return (median_or_none(values) if reached == len(values) else None), reached, len(values)


def best_fixed(medians):
    """The fixed density (label fixed-*) with the lowest median TTA among
    `medians` (label -> median or None), and that TTA; (None, None) without
    one that every seed reached."""
    fixed = {k: v for k, v in medians.items() if k.startswith("fixed-") and v is not None}
    if not fixed:
        return None, None
    label = min(fixed, key=fixed.get)
    return label, fixed[label]


def cell(value, fmt):
    return "-" if value is None else format(value, fmt)


def is_timing(summary):
    """Whether every system that ran is a timing run (no accuracy)."""
    entries = [e for e in summary["systems"].values() if "error" not in e]
    return bool(entries) and all(e.get("math") == "timing" for e in entries)


def spread(values, fmt):
    """The median over seeds, with the range when there is more than one."""
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    median = format(statistics.median(values), fmt)
    return median if len(values) == 1 else f"{median} ({format(min(values), fmt)}-{format(max(values), fmt)})"


def print_timing_table(root, summary, after_s):
    print("| system | mean iteration (ms) | mean density | WAN bytes per iteration | link utilisation | "
          "link idle while waiting |")
    print("|---" * 6 + "|")
    for label, entry in summary["systems"].items():
        if "error" in entry:
            print(f"| {label} | failed: {entry['error'][:80]} |")
            continue
        measures = [timing_measures(root / p["run"], after_s) for p in tta.seed_runs(summary, label)]
        columns = [spread([m[0] for m in measures], ".1f"), spread([m[1] for m in measures], ".4f"),
                   spread([m[2] for m in measures], ",.0f"), spread([m[3] for m in measures], ".0%"),
                   spread([m[4] for m in measures], ".0%")]
        print(f"| {label} | {' | '.join(columns)} |")
    print("\n(Timing runs: no accuracy. Medians over the seeds, their range in parentheses. Link idle while "
          "waiting: the share of the configured bandwidth unused while rank 0's forward waited for the exchange; "
          "the rest of the unused share went unused while nobody waited.)")


def print_paired_utilisation(root, summary, after_s, base):
    """Per system, link utilisation per seed, and against `base` on the
    same seed: the median difference in points (range) and the seeds
    where the system used more of the link."""
    per_seed = {label: {p["seed"]: link_utilisation(root / p["run"], after_s) for p in tta.seed_runs(summary, label)}
                for label in systems_that_ran(summary)}
    if base not in per_seed:
        sys.exit(f"error: --paired {base}: no such system in {root / 'summary.json'} "
                 f"(systems: {', '.join(per_seed)})")
    seeds = sorted(per_seed[base])
    print_table_head(f"Link utilisation per seed, and paired against {base} (same seed, same stretch of the trace):",
                     ["system", *(f"seed {s}" for s in seeds), "difference: median (range)", "seeds above"])
    for label, values in per_seed.items():
        cells = [cell(values.get(s), ".0%") for s in seeds]
        paired = [(values[s] - per_seed[base][s]) * 100 for s in seeds
                  if values.get(s) is not None and per_seed[base][s] is not None]
        if label == base or not paired:
            print(f"| {label} | {' | '.join(cells)} | - | - |")
            continue
        above = sum(d > 0 for d in paired)
        print(f"| {label} | {' | '.join(cells)} | {statistics.median(paired):+.1f} ({min(paired):+.1f} to "
              f"{max(paired):+.1f}) | {above} of {len(paired)} |")


def print_versus(root, summary, after_s, other_root):
    """Per system, link utilisation and mean iteration per seed here and in
    `other_root` (the same scenario, systems and seeds on another backend:
    the emulator against the sim), paired on the seed: each seed replays
    the same stretch of its trace on both. The last column pairs only the
    seeds whose host kept up in both runs (host_fell_behind) and names
    the seeds it leaves out, those that only one folder ran included."""
    other = summary_or_exit(other_root, "--versus")
    print_table_head(f"Against {other_root} ({other.get('backend', '?')} backend), same system and seed:",
                     ["system", "link utilisation here", "there", "paired difference, points: median (range)",
                      "seeds higher here", "mean iteration here / there (ms)",
                      "paired, seeds whose host kept up: median (seeds left out)"])
    for label in systems_that_ran(summary):
        if label not in systems_that_ran(other):
            print(f"| {label} | not in {other_root} |")
            continue
        runs_here = {p["seed"]: p["run"] for p in tta.seed_runs(summary, label)}
        runs_there = {p["seed"]: p["run"] for p in tta.seed_runs(other, label)}
        seeds = sorted(set(runs_here) & set(runs_there))
        if not seeds:
            print(f"| {label} | no seed in common with {other_root} |")
            continue
        here = {s: run_measures(root / runs_here[s], after_s) for s in seeds}
        there = {s: run_measures(other_root / runs_there[s], after_s) for s in seeds}
        for s in seeds:
            check_same_stretch(root / runs_here[s], other_root / runs_there[s])
        paired = {s: (here[s][3] - there[s][3]) * 100 for s in seeds}
        higher = sum(d > 0 for d in paired.values())
        # Both manifests are read, so a broken one is reported either way.
        behind = [s for s in seeds
                  if any([host_fell_behind(root / runs_here[s]), host_fell_behind(other_root / runs_there[s])])]
        kept_up = [paired[s] for s in seeds if s not in behind]
        print(f"| {label} | {spread([here[s][3] for s in seeds], '.1%')} | {spread([there[s][3] for s in seeds], '.1%')} "
              f"| {statistics.median(paired.values()):+.1f} ({min(paired.values()):+.1f} to {max(paired.values()):+.1f}) | "
              f"{higher} of {len(seeds)} | {statistics.median(here[s][0] for s in seeds):.0f} / "
              f"{statistics.median(there[s][0] for s in seeds):.0f} | "
              f"{f'{statistics.median(kept_up):+.1f} over {len(kept_up)}' if kept_up else 'no seed'} "
              f"({seeds_left_out(behind, set(runs_here) ^ set(runs_there))}) |")


def seeds_left_out(behind, in_one_folder_only):
    """"host fell behind on seeds 1, 3; seed 4 in one folder only", or "none"."""
    def seed_list(seeds):
        return f"seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, sorted(seeds)))}"
    parts = [f"host fell behind on {seed_list(behind)}"] if behind else []
    if in_one_folder_only:
        parts.append(f"{seed_list(in_one_folder_only)} in one folder only")
    return "; ".join(parts) or "none"


def host_fell_behind(run_dir):
    """What the run's manifest lists in host.fell_behind: the emulator's
    reasons that the host, not the network, set some of the run's times
    (docs/emu.md). A run without a manifest (made before runs wrote one),
    or whose manifest has no host check (the sim backend's: virtual time
    has no host to fall behind), lists nothing; a manifest that cannot be
    read, or whose host check is not an object with a list, is an error
    naming it."""
    path = run_dir / "manifest.json"
    try:
        manifest = tta.load_manifest(str(run_dir))
    except tta.InputError as e:
        sys.exit(f"error: {path}: cannot read the run's manifest ({str(e).removeprefix(f'{path}: ')})")
    if "host" not in manifest:
        return []
    host = manifest["host"]
    reasons = host.get("fell_behind", []) if isinstance(host, dict) else None
    if not isinstance(reasons, list):
        sys.exit(f"error: {path}: host must be an object whose fell_behind is a list of reasons")
    return reasons


def percentile(values, q):
    """The value at fraction q of the sorted values (nearest rank below)."""
    ordered = sorted(values)
    return ordered[int(q * (len(ordered) - 1))]


def median_and_band(values):
    """The median and its 10th-90th percentiles, as "0.85 (0.64-0.93)"."""
    return f"{statistics.median(values):.2f} ({percentile(values, 0.1):.2f}-{percentile(values, 0.9):.2f})"


def print_table_head(title, columns):
    print(f"\n{title}\n")
    print("| " + " | ".join(columns) + " |")
    print("|---" * len(columns) + "|")


def systems_that_ran(summary):
    """The summary's system labels, less those whose runs failed."""
    return [label for label, entry in summary["systems"].items() if "error" not in entry]


def print_rate_table(root, summary, after_s):
    """Per system, its ticks' measured rate against the link (--rates)."""
    print_table_head("The controller's measured rate R against the link, every tick of every seed:",
                     ["system", "ticks with an R", "R / link, median (10th-90th percentile)", "largest R (Mbps)",
                      "ticks above the fastest link rate"])
    for label in systems_that_ran(summary):
        ticks, measured, ratios, above = 0, [], [], 0
        for p in tta.seed_runs(summary, label):
            run_ticks, fastest = tick_rates(root / p["run"], after_s)
            ticks += len(run_ticks)
            for m, configured in run_ticks:
                if m is None:
                    continue
                measured.append(m)
                above += m > fastest
                if configured > 0:
                    ratios.append(m / configured)
        if not ratios:
            print(f"| {label} | {len(ratios)} of {ticks} | - | - | - |")
            continue
        print(f"| {label} | {len(ratios)} of {ticks} | {median_and_band(ratios)} | {max(measured):.0f} | {above} |")


def print_plan_delay_table(root, summary, after_s):
    """Per system, how long its plans took to reach rank 0 (--plan-delay)."""
    print_table_head("From a plan's tick to rank 0's first iteration at its density, every plan of every seed:",
                     ["system", "plans", "took effect", "seconds, median (10th-90th percentile)",
                      "iterations after the tick's, median (range)"])
    for label in systems_that_ran(summary):
        entry = summary["systems"][label]
        early = bool(entry.get("options", {}).get("controller", {}).get("early_density_switch"))
        delays = [d for p in tta.seed_runs(summary, label) for d in plan_delays(root / p["run"], after_s, early)]
        taken = [d for d in delays if d is not None]
        if not taken:
            print(f"| {label} | {len(delays)} | 0 | - | - |")
            continue
        seconds, iterations = [d[0] for d in taken], [d[1] for d in taken]
        print(f"| {label} | {len(delays)} | {len(taken)} | {median_and_band(seconds)} | "
              f"{statistics.median(iterations):g} ({min(iterations)}-{max(iterations)}) |")


def print_loss_table(root, summary, after_s):
    """Per system, its unused link split by the tick in force (--losses)."""
    classes = ["overrun episode", "probe, measured or hold", "other"]
    print_table_head("The link's unused share, by the controller tick in force when each second began "
                     "(points of the configured bandwidth, every seed):",
                     ["system", "unused", *(f"after: {c}" for c in classes), "with the estimate under the link",
                      "with the reverse direction full"])
    for label in systems_that_ran(summary):
        seconds = [s for p in tta.seed_runs(summary, label) for s in unused_by_tick(root / p["run"], after_s)]
        configured = sum(s[0] for s in seconds)
        if configured <= 0:
            print(f"| {label} | - |" + " - |" * (len(classes) + 2))
            continue
        points = lambda keep: f"{100 * sum(s[1] for s in seconds if keep(s)) / configured:.1f}"  # noqa: E731
        cells = [points(lambda s, c=c: s[2] == c) for c in classes]
        print(f"| {label} | {points(lambda s: True)} | {' | '.join(cells)} | {points(lambda s: s[3])} | "
              f"{points(lambda s: s[4])} |")


def summary_or_exit(root, flag=""):
    """ROOT/summary.json, or exit naming the missing or broken file (and
    the option that named the folder)."""
    try:
        return tta.read_summary(str(root))
    except tta.InputError as e:
        sys.exit(f"error: {flag + ': ' if flag else ''}{e}")


def print_backlogged_table(root, summary, after_s, reference_root, reference_label):
    """Per system, its link use against a backlogged run's on the same
    seeds and seconds (--backlogged)."""
    reference = summary_or_exit(reference_root, "--backlogged")
    if reference_label not in systems_that_ran(reference):
        sys.exit(f"error: --backlogged: no system {reference_label} ran in {reference_root / 'summary.json'} "
                 f"(systems: {', '.join(systems_that_ran(reference))})")
    runs = {p["seed"]: reference_root / p["run"] for p in tta.seed_runs(reference, reference_label)}
    print_table_head(f"Link use against {reference_label}'s, which keeps the link backlogged, on the same seeds "
                     "and seconds:", ["system", "delivered / backlogged run's: median (range)",
                                      f"{reference_label}'s link utilisation there: median (range)"])
    for label in systems_that_ran(summary):
        shares = []
        for p in tta.seed_runs(summary, label):
            if p["seed"] not in runs:
                sys.exit(f"error: --backlogged: {reference_root / 'summary.json'} has no seed {p['seed']} "
                         f"of {reference_label}, which {label} ran")
            shares.append(backlogged_share(root / p["run"], runs[p["seed"]], after_s))
        print(f"| {label} | {spread([s[0] for s in shares], '.1%')} | {spread([s[1] for s in shares], '.1%')} |")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", help="a `stellatrain run --out` folder")
    parser.add_argument("--after", type=float, default=0.0, metavar="S",
                        help="measure only iterations and whole link seconds from simulated second S on")
    parser.add_argument("--paired", metavar="LABEL",
                        help="timing runs: link utilisation per seed, and against system LABEL on the same seed")
    parser.add_argument("--rates", action="store_true",
                        help="timing runs: the controller's measured rate against the link, per system")
    parser.add_argument("--plan-delay", action="store_true",
                        help="timing runs: from each plan's tick to rank 0's first iteration at its density")
    parser.add_argument("--losses", action="store_true",
                        help="timing runs: the link's unused share by the controller tick in force")
    parser.add_argument("--backlogged", metavar="FOLDER",
                        help="timing runs: link use against a backlogged run's (FOLDER, a run of the same scenario "
                             "and seeds) on the same seconds")
    parser.add_argument("--versus", metavar="FOLDER",
                        help="timing runs: link utilisation and iteration against the same systems and seeds in "
                             "FOLDER (another backend's run of the scenario), paired on the seed")
    parser.add_argument("--backlogged-system", metavar="LABEL", default="ddp",
                        help="the system of --backlogged's folder that keeps the link backlogged (default ddp)")
    args = parser.parse_args(argv[1:])
    if args.after < 0:
        parser.error("--after takes a number of simulated seconds >= 0")
    root, after_s = Path(args.folder), args.after
    summary = summary_or_exit(root)
    if is_timing(summary):
        span = f", from simulated second {after_s:g} on" if after_s > 0 else ""
        print(f"{root} ({summary['scenario']}, seeds {summary['seeds']}, timing runs{span})\n")
        print_timing_table(root, summary, after_s)
        if args.paired:
            print_paired_utilisation(root, summary, after_s, args.paired)
        if args.rates:
            print_rate_table(root, summary, after_s)
        if args.plan_delay:
            print_plan_delay_table(root, summary, after_s)
        if args.losses:
            print_loss_table(root, summary, after_s)
        if args.backlogged:
            print_backlogged_table(root, summary, after_s, Path(args.backlogged), args.backlogged_system)
        if args.versus:
            print_versus(root, summary, after_s, Path(args.versus))
        return
    if args.paired or args.rates or args.plan_delay or args.losses or args.backlogged or args.versus:
        sys.exit(f"error: --paired, --rates, --plan-delay, --losses, --backlogged and --versus read timing runs; "
                 f"{root} holds accuracy runs")
    targets = summary["report_targets"] or [summary["target_accuracy"]]
    main_target = f"{summary['target_accuracy']:g}"
    span = f"; measures from simulated second {after_s:g} on" if after_s > 0 else ""
    print(f"{root} ({summary['scenario']}, seeds {summary['seeds']}{span})\n")
    head = " | ".join(f"TTA to {t:.0%} (s)" for t in targets)
    print(f"| system | {head} | iteration reaching {float(main_target):.0%} | best accuracy | "
          "mean iteration (ms) | mean density | WAN bytes per iteration | link utilisation |")
    print("|---" * (len(targets) + 7) + "|")
    medians = {}
    for label, entry in summary["systems"].items():
        if "error" in entry:
            print(f"| {label} | failed: {entry['error'][:80]} |")
            continue
        seeds = tta.seed_runs(summary, label)
        tta_cells = []
        for t in targets:
            m, reached, count = median_tta(summary, label, f"{t:g}")
            if f"{t:g}" == main_target:
                medians[label] = m
            tta_cells.append(f"{cell(m, '.2f')} ({reached}/{count})")
        measures = [run_measures(root / p["run"], after_s) for p in seeds]
        best = median_or_none([p["best_accuracy"] for p in seeds])
        reach = median_or_none([p.get("tta_iteration") for p in seeds])
        print(f"| {label} | {' | '.join(tta_cells)} | {cell(reach, '.0f')} | {cell(best, '.2%')} | "
              f"{statistics.median(m[0] for m in measures):.1f} | {statistics.median(m[1] for m in measures):.4f} | "
              f"{statistics.median(m[2] for m in measures):,.0f} | "
              f"{cell(median_or_none([m[3] for m in measures]), '.0%')} |")
    best_label, best_tta = best_fixed(medians)
    if best_label:
        print(f"\nBest fixed density at {float(main_target):.0%}: {best_label} ({best_tta:.2f} s, median).")
        for label, m in medians.items():
            if label.startswith("stellatrain"):
                ratio = "target not reached by every seed" if m is None else f"{m / best_tta:.2f}x"
                print(f"* {label}: {ratio} the best fixed density's median TTA")


if __name__ == "__main__":
    main(sys.argv)
