#!/usr/bin/env python3
"""Time to accuracy read two ways, and every system against the best fixed
density, over runs gathered from several `stellatrain run` results folders
(e.g. one folder per seed, or fixed densities and controllers run apart).

A run's TTA is the first evaluation at or above the target
(docs/scenarios.md). Where the accuracy curve is flat near the target, one
evaluation's noise moves that first crossing by tens of iterations: 2000
samples at 85% carry about 0.8 points of standard error, and ResNet-18
gains about a point per 20 iterations there. Any upward excursion counts,
so the first crossing errs early more often than late, and the best fixed
density of a sweep, the lowest of several such readings, is the one that
erred earliest. Beside the first crossing this reads the monotone TTA: the
first evaluation at which the least-squares non-decreasing fit of the
run's evaluations (isotonic regression) reaches the target. The fit pools
a high evaluation with the lower ones after it, so one lucky evaluation no
longer decides; an accuracy that rises steadily reads the same both ways.
It uses the evaluations after the crossing, so a crossing near the end of
a run rests on fewer of them: the tables say how many follow it.

Runs are (system label, seed) pairs; a pair found in two folders is an
error naming both. The folders may hold different seeds but must pair as
analysis/paired_systems.py's `--baseline-from` checks (the same model,
dataset, cluster, batch, network model and scenario parts; each seed the
same trace offset), or the report is refused naming the field. Every
run is read up to the same iteration (`--up-to`, default the last
evaluation common to all runs), so a longer run's later evaluations do
not steady its fit; `--per-seed-horizon` reads each seed's runs to the
last evaluation common to that seed's (each ratio pairs the runs of one
seed, so both sides of it still share a horizon), for when some seeds ran
longer than others. `--systems` reads only the systems named, and
FOLDER:LABELS only those systems from that folder (e.g. one density of a
folder whose other runs were rerun longer into another). `--seeds`
reads only the seeds named (e.g. the seeds on which a new density ran,
so that it is a candidate for the best fixed density on them).
Fixed densities are the StellaTrain systems (those with a compressor)
with `controller: off`. The best fixed density, per reading, is the one
with the lowest median TTA over the comparison's seeds (every seed some
other system ran), among those that ran on all of them and reached the
target on every one; each other system's TTA is then divided by its TTA
on the same seed (paired: the same trace stretch, data order and initial
weights), and the median of those ratios taken with a seed that missed
the target counting as slower than any that reached it, as summary.json
counts it. Markdown on stdout.

`--noise N` shows how far an evaluation's sampling noise alone moves each
reading: it redraws each run's evaluations N times, taking the monotone
fit as the true accuracy and adding normal noise of the binomial's spread
for the evaluation's sample count (eval.csv's `samples`), and gives per
run and reading the median iteration, its 90% range and the share of
redraws that read earlier than the fit's own crossing. The fit is a step
curve, flatter than the truth near its plateaus, so this errs towards
more noise. Each run's generator is seeded by its system and seed, so
the report repeats and a run's redraws do not depend on the other
folders read.

`--against LABEL` adds each system's iterations to the target over
LABEL's and LABEL's TTA over the system's (its speedup), paired by seed,
by both readings: e.g. `--against ddp`, for how many more iterations a
sparse system needs than dense training on the same seeds. A seed where
LABEL misses the target is left out of those ratios and named. Where
LABEL ran shorter than the rest (ddp reaching the target in half
the iterations), `--whole-runs` reads every run to its own last
evaluation in place of a common horizon; say so beside its readings.

A crossing near the end of the runs read rests on the few evaluations
after it: the fit can move it later only by pooling with those, and more
evaluations could only move it later still. Read with a horizon well
past every crossing (`--up-to`, longer runs), or say so.

    analysis/monotone_tta.py results/paper-tta/resnet18-cpu-warmup-screen-250-fixed \\
        results/paper-tta/resnet18-cpu-warmup-screen-200-soonest --up-to 200
"""
import argparse
import math
import os
import random
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import paired_systems  # noqa: E402
import run_folders  # noqa: E402
import tta  # noqa: E402

READINGS = ("first", "monotone")
RUN_TABLE_HEAD = ("| system | seed | first evaluation reaching the target | monotone fit reaching it |\n"
                  "|---|---|---|---|")
MISSED = math.inf  # a run that misses the target, sorted after every run that reaches it


def isotonic_fit(values):
    """The least-squares non-decreasing fit of `values` (pool adjacent
    violators). Written out because the analysis needs only the standard
    library: Debian 12's SciPy (1.10) predates scipy.optimize.isotonic_regression,
    and scikit-learn would be a dependency for these few lines."""
    blocks = []  # [mean, count]
    for value in values:
        blocks.append([value, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            mean, count = blocks.pop()
            before_mean, before_count = blocks.pop()
            total = count + before_count
            blocks.append([(mean * count + before_mean * before_count) / total, total])
    return [mean for mean, count in blocks for _ in range(count)]


def first_reaching(accuracies, target):
    """Index of the first accuracy at or above target, or None."""
    return next((i for i, a in enumerate(accuracies) if a >= target), None)


def horizons(runs, up_to_iteration, per_seed):
    """{seed: the last iteration read}: `up_to_iteration` when given; else
    the last evaluation common to every run, or, `per_seed`, to every run of
    that seed (each ratio pairs runs of one seed, so each pair still shares
    its horizon)."""
    seeds = sorted({seed for _, seed in runs})
    if up_to_iteration is not None:
        return {seed: up_to_iteration for seed in seeds}
    last = {seed: min(run["evaluations"][0][-1] for (_, s), run in runs.items() if s == seed) for seed in seeds}
    return last if per_seed else {seed: min(last.values()) for seed in seeds}


def whole_run_horizons(runs):
    """{(label, seed): the run's own last evaluated iteration} (`--whole-runs`)."""
    return {key: run["evaluations"][0][-1] for key, run in runs.items()}


def whole_runs_text(last):
    """"each run to its own last evaluation (iterations 150-250)"."""
    low, high = min(last.values()), max(last.values())
    return "each run's own last evaluation (iteration " + (f"{low})" if low == high else f"{low}-{high})")


def horizon_text(last):
    """"iteration 200", or per seed "iteration 250 (seeds 1, 2) and 200 (seed 3)"."""
    by_iteration = {}
    for seed, iteration in sorted(last.items()):
        by_iteration.setdefault(iteration, []).append(seed)
    if len(by_iteration) == 1:
        return f"iteration {next(iter(by_iteration))}"
    parts = [f"{iteration} ({'seeds' if len(seeds) > 1 else 'seed'} {', '.join(map(str, seeds))})"
             for iteration, seeds in sorted(by_iteration.items(), reverse=True)]
    return "iteration " + ", ".join(parts[:-1]) + " and " + parts[-1]


def up_to(evaluations, last_iteration):
    """The evaluations at or before `last_iteration` (None when there are none)."""
    keep = sum(1 for it in evaluations[0] if it <= last_iteration)
    return tuple(column[:keep] for column in evaluations) if keep else None


# --- The two readings ---------------------------------------------------------------


def readings(evaluations, target):
    """{reading: (iteration, time_s, evaluations after it) or None}."""
    iterations, times, accuracies, _ = evaluations
    out = {}
    for name, curve in (("first", accuracies), ("monotone", isotonic_fit(accuracies))):
        i = first_reaching(curve, target)
        out[name] = None if i is None else (iterations[i], times[i], len(curve) - 1 - i)
    return out


def best_fixed(runs, seeds, reading):
    """The fixed density with the lowest median TTA over `seeds` by
    `reading`, among those that ran on and reached the target on each: its
    label, or None."""
    medians = {}
    for label in sorted({label for (label, _), run in runs.items() if run["fixed"]}):
        values = [runs[(label, seed)]["readings"][reading] if (label, seed) in runs else None for seed in seeds]
        if all(v is not None for v in values):
            medians[label] = statistics.median(v[1] for v in values)
    return min(medians, key=medians.get) if medians else None


def paired_ratios(runs, label, reference, seeds, reading, index=1):
    """The system's reading over the reference system's, seed by seed
    (index 1: TTA, 0: iterations), over the seeds both ran and the
    reference reached the target on (None: the system missed it; NaN: the
    reference's reading is 0)."""
    ratios = []
    for seed in seeds:
        base = runs[(reference, seed)]["readings"][reading] if (reference, seed) in runs else None
        if base is None or (label, seed) not in runs:
            continue
        own = runs[(label, seed)]["readings"][reading]
        ratios.append(None if own is None else own[index] / base[index] if base[index] > 0 else math.nan)
    return ratios


def ratio_text(value, unit="x"):
    return "not reached" if value is None or value == MISSED else f"{value:.2f}{unit}"


def ratio_cell(ratios, speedup=False, at_zero="the best fixed density reached the target at 0 s"):
    """The median ratio (a miss counting as slowest, as summary.json takes
    its medians: paired_systems.median_reached) and the range over seeds;
    `speedup`: the same ratios inverted (the reference's reading over the
    system's), a miss counting as the lowest."""
    if not ratios:
        return "not run"
    if any(r is not None and (math.isnan(r) or (speedup and r == 0)) for r in ratios):
        return f"- ({at_zero})"
    if all(r is None for r in ratios):
        return f"not reached on any seed ({len(ratios)} of {len(ratios)})"
    # Ordered slowest last: a ratio as it is, a speedup negated.
    keys = [None if r is None else -1 / r if speedup else r for r in ratios]
    shown = (lambda key: key if key == MISSED else -key) if speedup else (lambda key: key)
    median = paired_systems.median_reached(keys)
    text = ratio_text(None if median is None else shown(median))
    if len(ratios) > 1:
        ordered = sorted(MISSED if k is None else k for k in keys)
        low, high = (ordered[-1], ordered[0]) if speedup else (ordered[0], ordered[-1])
        text += f" ({ratio_text(shown(low), '')}-{ratio_text(shown(high), '')})"
    missed = sum(r is None for r in ratios)
    return text + (f", {missed} of {len(ratios)} seeds not reached" if missed else "")


def cell(reading):
    return "not reached" if reading is None else f"{reading[1]:.2f} s (it {reading[0]}, {reading[2]} after)"


def ordered_labels(runs):
    """The systems' labels: fixed densities first, sparsest first, then the rest by name."""
    kinds = {label: (not run["fixed"], run["density"] if run["fixed"] else 0, label) for (label, _), run in runs.items()}
    return sorted(kinds, key=kinds.get)


def runs_in_order(runs):
    """(label, seed, run) by ordered_labels, then seed."""
    order = {label: i for i, label in enumerate(ordered_labels(runs))}
    return [(label, seed, runs[(label, seed)]) for label, seed in sorted(runs, key=lambda k: (order[k[0]], k[1]))]


def print_report(runs, target, horizon):
    labels = ordered_labels(runs)
    print(f"Evaluations up to {horizon}; target {target:.0%}.\n")
    print(RUN_TABLE_HEAD)
    for label, seed, run in runs_in_order(runs):
        print(f"| {label} | {seed} | {cell(run['readings']['first'])} | {cell(run['readings']['monotone'])} |")
    seeds = sorted({seed for (label, seed), run in runs.items() if not run["fixed"]}) or \
        sorted({seed for _, seed in runs})
    print(f"\nAgainst the best fixed density on seeds {', '.join(map(str, seeds))} (paired by seed; median ratio, "
          "a miss counting as slowest, and range):\n")
    print("| reading | best fixed density (median TTA) | " + " | ".join(labels) + " |")
    print("|---" * (len(labels) + 2) + "|")
    for reading in READINGS:
        best = best_fixed(runs, seeds, reading)
        if best is None:
            print(f"| {reading} | no fixed density ran and reached the target on every one of these seeds | " +
                  " | ".join("-" for _ in labels) + " |")
            continue
        best_median = statistics.median(runs[(best, s)]["readings"][reading][1] for s in seeds)
        cells = [ratio_cell(paired_ratios(runs, label, best, seeds, reading)) for label in labels]
        print(f"| {reading} | {best} ({best_median:.2f} s) | " + " | ".join(cells) + " |")


def print_against(runs, baseline):
    """Each system's iterations to the target over `baseline`'s and its
    speedup over it (`--against`), paired by seed, by both readings."""
    labels = [label for label in ordered_labels(runs) if label != baseline]
    seeds = sorted({seed for label, seed in runs if label == baseline})
    print(f"\nAgainst {baseline} on seeds {', '.join(map(str, seeds))} (paired by seed; median ratio, a miss "
          "counting as slowest, and range):\n")
    print(f"| quantity | {baseline} (median) | " + " | ".join(labels) + " |")
    print("|---" * (len(labels) + 2) + "|")
    # (row, the reading's field: 0 iterations, 1 TTA, the baseline's median shown as)
    for quantity, index, median_format in (("iterations", 0, "{:g} iterations"), ("speedup", 1, "{:.2f} s")):
        for reading in READINGS:
            reached = [runs[(baseline, s)]["readings"][reading] for s in seeds]
            reached = [r for r in reached if r is not None]
            if not reached:
                print(f"| {quantity}, {reading} | not reached on any seed | " + " | ".join("-" for _ in labels) + " |")
                continue
            median = median_format.format(statistics.median(r[index] for r in reached))
            cells = [ratio_cell(paired_ratios(runs, label, baseline, seeds, reading, index), speedup=index == 1,
                                at_zero="a reading at 0") for label in labels]
            print(f"| {quantity}, {reading} | {median} | " + " | ".join(cells) + " |")
    for reading in READINGS:
        missed = [s for s in seeds if runs[(baseline, s)]["readings"][reading] is None]
        if missed:
            print(f"\n{baseline} misses the target on seed(s) {', '.join(map(str, missed))} by the {reading} "
                  "reading: those seeds are left out of its ratios.")


# --- How far sampling noise moves each reading -----------------------------------------


def redrawn_crossings(evaluations, target, replicates, rng):
    """Per reading, the iterations at which `replicates` redraws of the
    evaluations reach the target (None: not reached). Each redraw takes the
    monotone fit as the true accuracy and adds an evaluation's sampling
    noise, normal with the binomial's spread for its sample count."""
    iterations, _, accuracies, samples = evaluations
    truth = isotonic_fit(accuracies)
    spread = [math.sqrt(max(p * (1 - p), 0.0) / n) for p, n in zip(truth, samples)]
    out = {name: [] for name in READINGS}
    for _ in range(replicates):
        drawn = [p + rng.gauss(0, sd) for p, sd in zip(truth, spread)]
        for name, curve in (("first", drawn), ("monotone", isotonic_fit(drawn))):
            i = first_reaching(curve, target)
            out[name].append(None if i is None else iterations[i])
    return out


def describe_crossings(values, fitted):
    """Median and 90% range of the redraws' crossings (a miss counting as
    slowest, shown as never), the share of all redraws before the fit's
    own crossing, and how many never reached."""
    ordered = sorted(MISSED if v is None else v for v in values)
    shown = lambda v: "never" if v is None or v == MISSED else f"{v:g}"  # noqa: E731
    low, high = ordered[int(0.05 * (len(ordered) - 1))], ordered[int(0.95 * (len(ordered) - 1))]
    text = f"median {shown(paired_systems.median_reached(values))}, 90% {shown(low)}-{shown(high)}"
    if fitted is not None:
        text += f", {sum(v < fitted for v in ordered) / len(ordered):.0%} before the fit's {fitted}"
    missed = sum(v is None for v in values)
    return text + (f", {missed} of {len(values)} never" if missed else "")


def print_noise(runs, target, replicates):
    """How far one evaluation's sampling noise moves each reading: the runs'
    evaluations redrawn `replicates` times about their monotone fit."""
    print(f"\nEach run's evaluations redrawn {replicates} times about its monotone fit (the evaluation's "
          "sampling noise only): the iteration each reading gives.\n")
    print(RUN_TABLE_HEAD)
    for label, seed, run in runs_in_order(runs):
        # One generator per run, seeded by its name: a run's redraws do not
        # depend on which other folders are read, or in what order.
        rng = random.Random(f"{label}/{seed}")
        fitted = run["readings"]["monotone"]
        crossings = redrawn_crossings(run["evaluations"], target, replicates, rng)
        cells = [describe_crossings(crossings[name], fitted and fitted[0]) for name in READINGS]
        print(f"| {label} | {seed} | " + " | ".join(cells) + " |")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", metavar="FOLDER[:LABELS]",
                        help="`stellatrain run --out` folders; LABELS (comma-separated): read only these "
                             "systems from that folder")
    parser.add_argument("--target", type=float, help="the accuracy to reach (default: the first folder's target)")
    horizon = parser.add_mutually_exclusive_group()
    horizon.add_argument("--up-to", type=int, metavar="ITERATION",
                         help="read evaluations up to this iteration (default: the last one every run has)")
    horizon.add_argument("--per-seed-horizon", action="store_true",
                         help="read each seed's runs up to the last evaluation they all have")
    horizon.add_argument("--whole-runs", action="store_true",
                         help="read every run up to its own last evaluation (for --against a shorter baseline)")
    parser.add_argument("--systems", metavar="LABELS",
                        help="comma-separated system labels to read (default: every system of the folders)")
    parser.add_argument("--seeds", metavar="SEEDS",
                        help="comma-separated seeds to read (default: every seed of the folders)")
    parser.add_argument("--against", metavar="LABEL",
                        help="also each system's iterations to the target over LABEL's and its speedup over it")
    parser.add_argument("--noise", type=int, metavar="REPLICATES",
                        help="also redraw each run's evaluations this many times (see above)")
    args = parser.parse_args(argv[1:])
    if args.noise is not None and args.noise < 1:
        parser.error("--noise takes a number of replicates >= 1")
    try:
        if args.target is not None:
            run_folders.check_target(args.target, "--target")
        only = None if args.systems is None else [label for label in args.systems.split(",") if label]
        specs = [run_folders.folder_spec(f) for f in args.folders]
        runs, summaries = run_folders.gather(specs, only)
        if args.seeds is not None:
            named = set(only or []) | {label for _, labels in specs for label in labels or []}
            runs = run_folders.only_seeds(runs, run_folders.seed_list(args.seeds), named)
        target = args.target if args.target is not None else summaries[0][1]["target_accuracy"]
        if args.against is not None and not any(label == args.against for label, _ in runs):
            raise tta.InputError(f"--against {args.against}: no run of it among the systems read")
        if args.whole_runs:
            last = whole_run_horizons(runs)
            horizon = whole_runs_text(last)
        else:
            by_seed = horizons(runs, args.up_to, args.per_seed_horizon)
            last = {key: by_seed[key[1]] for key in runs}
            horizon = horizon_text(by_seed)
        for (label, seed), run in runs.items():
            run["evaluations"] = up_to(run["evaluations"], last[(label, seed)])
            if run["evaluations"] is None:
                raise tta.InputError(f"system {label} seed {seed}: no evaluation at or before iteration "
                                     f"{last[(label, seed)]}")
            run["readings"] = readings(run["evaluations"], target)
        print_report(runs, target, horizon)
        if args.against is not None:
            print_against(runs, args.against)
        if args.noise:
            print_noise(runs, target, args.noise)
    except tta.InputError as e:
        sys.exit(f"error: {e}")


if __name__ == "__main__":
    main(sys.argv)
