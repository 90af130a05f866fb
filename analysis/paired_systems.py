#!/usr/bin/env python3
"""Compares two systems of one `stellatrain run` results folder seed by
seed: each seed's TTA for both, their ratio (system over baseline: below 1
is faster), the median of those paired ratios with its 95% bootstrap
interval, the ratio of the two median TTAs, and on how many seeds the
system is faster. The seeds are paired (same data order, initialisation
and trace stretch), so a ratio is the systems' difference on one and the
same run; the ratio of medians can read differently when a few pairs
dominate. It also prints the speedup the other way up (baseline over
system), which with ddp as the baseline is what summary.json's
speedup_vs_ddp and speedup_ci95 hold: the same bootstrap, to the digit.
Markdown on stdout (`--json`: one object); reads only summary.json.

`--baseline-from OTHER` takes the baseline from another results folder,
for two systems that live in different scenario files over the same
links (e.g. a file's fixed densities against its convergence file's
controller). Its runs must pair with the folder's: the same seeds, model,
dataset, cluster shape, batch, placement (label_skew), network model and
MTU, and each seed the same trace offset; where both folders keep their
scenario.yaml, its links, eval, budget, dataset, batch, clusters and
compute must agree. Anything else is refused, naming the field.

    analysis/paired_systems.py results/paper-tta/cnn-h100-fluct-115-label-skew-twelve-seeds fixed-0.1 warmup-soonest
    analysis/paired_systems.py FOLDER ddp stellatrain --target 0.8
    analysis/paired_systems.py results/paper-tta/cnn-h100-const-500-convergence-twelve-seeds fixed-0.3 \
        warmup-soonest --baseline-from results/paper-tta/cnn-h100-const-500-twelve-seeds
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tta  # noqa: E402

MASK = (1 << 64) - 1


class SplitMix64:
    """core/data/random.h's generator, draw for draw. Hand-written because
    the interval must match the one apps/seed_statistics.cc writes into
    summary.json, and Python's own generators draw other numbers."""

    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def below(self, bound):
        limit = MASK - MASK % bound
        value = self.next()
        while value >= limit:
            value = self.next()
        return value % bound


RESAMPLES = 10000
BOOT_STREAM = 0x626F6F74  # "boot", as apps/seed_statistics.cc


def bootstrap_median(values):
    """(median, (low, high)) of `values`, the interval from the 2.5th and
    97.5th percentiles of the median over 10,000 resamples drawn from the
    fixed stream (none below two values), as apps/seed_statistics.cc."""
    if not values:
        return None, None
    middle = statistics.median(values)
    if len(values) < 2:
        return middle, None
    draw = SplitMix64(BOOT_STREAM)
    medians = sorted(statistics.median([values[draw.below(len(values))] for _ in values]) for _ in range(RESAMPLES))

    def percentile(p):
        # std::lround rounds halves away from zero; the index is never negative.
        return medians[min(int(p * (RESAMPLES - 1) + 0.5), RESAMPLES - 1)]

    return middle, (percentile(0.025), percentile(0.975))


class FolderError(ValueError):
    """An input error whose message already names the folder or file (main
    prints it as it is)."""


def median_reached(values):
    """The median of per-seed TTAs where None is a seed that never reached
    the target (slower than any that did); None when the median falls on
    such a seed. apps/seed_statistics.cc's median_reached, as summary.json
    takes its median TTAs."""
    reached = sorted(v for v in values if v is not None)
    n = len(values)
    if n == 0 or 2 * len(reached) <= n:
        return None
    if n % 2 == 1:
        return reached[n // 2]
    if n // 2 >= len(reached):
        return None
    return (reached[n // 2 - 1] + reached[n // 2]) / 2


def compare(summary, baseline, system, target, baseline_summary=None, baseline_file=None):
    """The comparison as a dict (see the module's docstring); the baseline
    comes from `baseline_summary` (read from `baseline_file`, and checked
    to pair beforehand by check_pairable) when given, else from `summary`."""
    # A list, not a dict: with --baseline-from both sides may carry one label.
    sides = [(baseline, baseline_summary or summary, baseline_file), (system, summary, None)]
    for label, source, where in sides:
        if label not in source["systems"]:
            systems = ", ".join(source["systems"])
            if where:
                raise FolderError(f"{where}: no system '{label}' (it has: {systems})")
            raise ValueError(f"no system '{label}' in summary.json (it has: {systems})")
    runs = [{run["seed"]: run for run in tta.seed_runs(source, label)} for label, source, _ in sides]
    rows = []
    for seed in summary["seeds"]:
        pair = [side.get(seed) for side in runs]
        if None in pair:
            raise ValueError(f"seed {seed}: no run of '{baseline if pair[0] is None else system}' in summary.json")
        ttas = [seed_tta(run, target) for run in pair]
        ratio = ttas[1] / ttas[0] if None not in ttas and ttas[0] > 0 else None
        rows.append({"seed": seed, "baseline_tta_s": ttas[0], "system_tta_s": ttas[1], "ratio": ratio})
    ratios = [row["ratio"] for row in rows if row["ratio"] is not None]
    speedups = [row["baseline_tta_s"] / row["system_tta_s"] for row in rows
                if row["baseline_tta_s"] is not None and row["system_tta_s"]]
    median_ratio, ratio_ci = bootstrap_median(ratios)
    median_speedup, speedup_ci = bootstrap_median(speedups)
    medians = [median_reached([row[k] for row in rows]) for k in ("baseline_tta_s", "system_tta_s")]
    return {"baseline": baseline, "system": system, "target": target, "seeds": rows, "pairs": len(ratios),
            "median_ratio": median_ratio, "ratio_ci95": ratio_ci,
            "ratio_of_medians": medians[1] / medians[0] if None not in medians else None,
            "system_faster": sum(1 for r in ratios if r < 1), "median_speedup": median_speedup,
            "speedup_ci95": speedup_ci}


# summary.json's fields that two folders' runs must share to pair; absent
# counts as the default (label_skew only appears when skewed, network_model
# only when it is not packets).
PAIRED_FIELDS = ("seeds", "model", "dataset", "nodes", "gpus_per_node", "node_gpus", "batch_per_worker",
                 "label_skew", "network_model", "mtu", "clock")
# The parts of the folders' scenario.yaml that must agree.
PAIRED_SCENARIO_KEYS = ("links", "eval", "budget", "dataset", "batch", "clusters", "compute")


def check_pairable(folder, summary, other_folder, other, fields=PAIRED_FIELDS):
    """Raises FolderError naming the first field on which `other` (the
    baseline's folder) cannot pair with `summary`: of `fields`, the trace
    offset of each seed both hold, and scenario.yaml's PAIRED_SCENARIO_KEYS."""
    for field in fields:
        if summary.get(field) != other.get(field):
            raise FolderError(f"'{field}' is {json.dumps(other.get(field))} in {other_folder} but "
                             f"{json.dumps(summary.get(field))} in {folder}: the runs do not pair")
    offsets = {}
    for source, where in ((summary, folder), (other, other_folder)):
        for label in source["systems"]:
            for run in tta.seed_runs(source, label):
                offset = run.get("trace_offset_s")
                seen = offsets.setdefault(run["seed"], (offset, where))
                if offset is not None and seen[0] is not None and offset != seen[0]:
                    raise FolderError(f"seed {run['seed']}: trace offset {offset} s in {where} but {seen[0]} s in "
                                     f"{seen[1]}: the runs do not pair")
    scenarios = [read_scenario(f) for f in (folder, other_folder)]
    if None in scenarios:
        return
    for key in PAIRED_SCENARIO_KEYS:
        if scenarios[0].get(key) != scenarios[1].get(key):
            raise FolderError(f"scenario.yaml's '{key}' differs between {folder} and {other_folder}: "
                             f"the runs do not pair")


def read_scenario(folder):
    """The folder's scenario.yaml as a dict; None without the file or
    without PyYAML (then only summary.json's fields are compared)."""
    path = os.path.join(folder, "scenario.yaml")
    if not os.path.isfile(path):
        return None
    try:
        import yaml
    except ImportError:
        return None
    with open(path) as f:
        try:
            return yaml.safe_load(f) or {}
        except yaml.YAMLError as e:
            raise FolderError(f"{path}: not YAML ({e})")


def seed_tta(run, target):
    """A run's TTA to `target` (None: not reached); summary.json keys each
    report target as written, e.g. "0.85"."""
    at = run.get("tta_at") or {}
    for candidate in (f"{target:g}", str(target)):
        if candidate in at:
            return at[candidate]
    raise ValueError(f"seed {run['seed']}: no TTA to {target:g} in summary.json (its targets: {', '.join(at)})")


def interval(ci, fmt):
    return "" if ci is None else f" [{format(ci[0], fmt)}, {format(ci[1], fmt)}]"


def markdown(result):
    b, s = result["baseline"], result["system"]
    if result.get("baseline_from"):
        b = f"{b} ({os.path.basename(os.path.normpath(result['baseline_from']))})"
    cell = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
    lines = [f"TTA to {result['target']:g} (s), {s} against {b}, paired by seed:", "",
             f"| seed | {b} | {s} | {s} / {b} |", "|---|---|---|---|"]
    lines += [f"| {row['seed']} | {cell(row['baseline_tta_s'])} | {cell(row['system_tta_s'])} | {cell(row['ratio'])} |"
              for row in result["seeds"]]
    lines.append("")
    if result["median_ratio"] is None:
        lines.append(f"No seed where both reach {result['target']:g}.")
        return "\n".join(lines)
    of_medians = result["ratio_of_medians"]
    lines.append(f"{s} / {b}: {result['median_ratio']:.3f}{interval(result['ratio_ci95'], '.3f')} by the paired median "
                 f"(95% bootstrap over {result['pairs']} pairs), "
                 f"{'-' if of_medians is None else format(of_medians, '.3f')} by the ratio of the medians; "
                 f"{s} faster on {result['system_faster']} of {result['pairs']} seeds.")
    lines.append(f"{b} / {s} (speedup): {result['median_speedup']:.3f}{interval(result['speedup_ci95'], '.3f')}.")
    return "\n".join(lines)


def load(folder):
    summary = tta.read_summary(folder)
    if not isinstance(summary.get("systems"), dict) or not isinstance(summary.get("seeds"), list):
        raise FolderError(f"{os.path.join(folder, 'summary.json')}: no 'systems' object or 'seeds' list: "
                        "not a `stellatrain run` summary")
    return summary


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", help="a `stellatrain run` results folder (its summary.json)")
    parser.add_argument("baseline", help="the system label the other is compared against")
    parser.add_argument("system", help="the system label compared")
    parser.add_argument("--target", type=float, help="the accuracy (default: the summary's target_accuracy)")
    parser.add_argument("--baseline-from", metavar="OTHER",
                        help="take the baseline from this results folder (its runs must pair with FOLDER's)")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of markdown")
    args = parser.parse_args(argv[1:])
    try:
        summary = load(args.folder)
        baseline_summary = load(args.baseline_from) if args.baseline_from else None
        if baseline_summary is not None:
            check_pairable(args.folder, summary, args.baseline_from, baseline_summary)
        target = args.target if args.target is not None else summary.get("target_accuracy")
        if not target:
            raise FolderError(f"{os.path.join(args.folder, 'summary.json')}: no target_accuracy: give --target")
        result = compare(summary, args.baseline, args.system, target, baseline_summary,
                         args.baseline_from and os.path.join(args.baseline_from, "summary.json"))
        result["baseline_from"] = args.baseline_from
    except tta.InputError as e:
        sys.exit(f"paired_systems: {e}")
    except FolderError as e:
        sys.exit(f"paired_systems: {e}")
    except ValueError as e:
        sys.exit(f"paired_systems: {os.path.join(args.folder, 'summary.json')}: {e}")
    print(json.dumps(result) if args.json else markdown(result))


if __name__ == "__main__":
    main(sys.argv)
