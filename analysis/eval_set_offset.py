#!/usr/bin/env python3
"""How far apart a validation target and a test target are: the same
training runs evaluated once on the validation set (a `stellatrain sweep`
point, or a run with `eval.on: validation`) and once on the test set (a
`stellatrain run`), seed by seed.

A target tuned on validation is meant to stand for the same target on
test. When validation accuracy runs above test accuracy (it is drawn from
the training images), a target such as 85% is reached earlier on
validation, at a point of training where other settings matter, e.g.
density (docs/paper-tta-controller.md, "Twelve seeds at 500 Mbps"). For
each pair of system folders (each holding seed-N runs) and each target it
prints the iteration at which each set first reaches it (medians over the
seeds both hold), the median validation-minus-test accuracy over the
evaluations both made in the second half of the runs, and the validation
accuracy at the evaluation where test first reaches the target (on the
straight line between the validation evaluations either side when there
is none at that iteration): the validation target as far into training
as the test target.

The two runs of a seed must have trained identically: the same system,
options, optimizer, seed, iterations, model, data, batch, cluster shape,
network and trace offset in manifest.json, and the same model checksums
at the end; anything else is refused, naming the field. Markdown on
stdout (`--json`: one object).

    analysis/eval_set_offset.py results/paper-tta-sweep/cnn-const-500-soonest-six-seeds/warmup-soonest.as-is \\
        results/paper-tta/cnn-h100-const-500-convergence-twelve-seeds/warmup-soonest
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tta  # noqa: E402

# manifest.json's fields that must agree for two runs to be one training.
SAME_TRAINING = ("system", "options", "optimizer", "seed", "iterations", "model", "dataset", "batch_per_worker",
                 "nodes", "gpus_per_node", "network", "topology", "trace_offset_s")


class Mismatch(Exception):
    """Two runs that are not one training; the message names the field."""


def seed_folders(system_dir):
    """{seed: run folder} of a system folder's seed-N subfolders."""
    if not os.path.isdir(system_dir):
        raise tta.InputError(f"{system_dir}: not a folder")
    seeds = {}
    for name in os.listdir(system_dir):
        match = re.fullmatch(r"seed-(\d+)", name)
        if match and os.path.isdir(os.path.join(system_dir, name)):
            seeds[int(match.group(1))] = os.path.join(system_dir, name)
    if not seeds:
        raise tta.InputError(f"{system_dir}: no seed-N run folders")
    return seeds


def check_same_training(validation_run, test_run):
    """Raises Mismatch unless the two runs trained identically and were
    evaluated on validation and test respectively."""
    manifests = [tta.load_manifest(run) for run in (validation_run, test_run)]
    for run, manifest, split in zip((validation_run, test_run), manifests, ("validation", "test")):
        if not manifest:
            raise Mismatch(f"{run}: no manifest.json")
        evaluated_on = (manifest.get("eval") or {}).get("on", "test")
        if evaluated_on != split:
            raise Mismatch(f"{run}/manifest.json: eval.on is '{evaluated_on}', expected '{split}'")
    for field in SAME_TRAINING:
        if manifests[0].get(field) != manifests[1].get(field):
            raise Mismatch(f"'{field}' differs between {validation_run} and {test_run}: not one training")
    checksums = [(m.get("summary") or {}).get("checksums") for m in manifests]
    if checksums[0] != checksums[1]:
        raise Mismatch(f"the model checksums differ between {validation_run} and {test_run}: the runs trained "
                       "differently")


def first_reaching(evaluation, target):
    """The iteration of the first evaluation at or above target, or None."""
    for iteration, accuracy in zip(evaluation["iteration"], evaluation["accuracy"]):
        if accuracy >= target:
            return int(iteration)
    return None


def accuracy_at(evaluation, iteration):
    """The accuracy at `iteration`: its evaluation's, else the straight line
    between the evaluations either side (the validation runs evaluate
    sparsely once past their targets); None outside the evaluated span."""
    iterations = evaluation["iteration"]
    if not iterations or not iterations[0] <= iteration <= iterations[-1]:
        return None
    return tta.interpolate(iterations, evaluation["accuracy"], iteration)


def seed_row(validation_run, test_run, targets):
    check_same_training(validation_run, test_run)
    validation, test = tta.read_eval(validation_run), tta.read_eval(test_run)
    by_iteration = dict(zip(validation["iteration"], validation["accuracy"]))
    last = max(test["iteration"][-1], validation["iteration"][-1])
    offsets = [by_iteration[it] - acc for it, acc in zip(test["iteration"], test["accuracy"])
               if it in by_iteration and it >= last / 2]
    row = {"offset": tta.median_or_none(offsets), "targets": {}}
    for target in targets:
        on_validation, on_test = first_reaching(validation, target), first_reaching(test, target)
        matched = None if on_test is None else accuracy_at(validation, on_test)
        row["targets"][f"{target:g}"] = {"validation_iteration": on_validation, "test_iteration": on_test,
                                         "validation_accuracy_at_test_iteration": matched}
    return row


def compare(validation_dir, test_dir, targets):
    validation_seeds, test_seeds = seed_folders(validation_dir), seed_folders(test_dir)
    seeds = sorted(set(validation_seeds) & set(test_seeds))
    if not seeds:
        raise Mismatch(f"{validation_dir} and {test_dir} share no seed")
    rows = {seed: seed_row(validation_seeds[seed], test_seeds[seed], targets) for seed in seeds}
    result = {"validation": validation_dir, "test": test_dir, "seeds": seeds,
              "offset": tta.median_or_none(r["offset"] for r in rows.values()), "targets": {}, "per_seed": rows}
    for key in (f"{t:g}" for t in targets):
        cells = [r["targets"][key] for r in rows.values()]
        result["targets"][key] = {name: tta.median_or_none(c[name] for c in cells) for name in cells[0]}
        result["targets"][key]["reached"] = [sum(c[name] is not None for c in cells)
                                             for name in ("validation_iteration", "test_iteration")]
    return result


def markdown(results):
    cell = lambda v, fmt: "-" if v is None else format(v, fmt)  # noqa: E731
    lines = ["| validation | test | seeds | validation - test (second half) | target | iteration reaching it, "
             "validation / test | validation accuracy where test reaches it |", "|---|---|---|---|---|---|---|"]
    for r in results:
        offset = cell(None if r["offset"] is None else 100 * r["offset"], "+.2f")
        for key, t in r["targets"].items():
            lines.append(f"| {r['validation']} | {r['test']} | {len(r['seeds'])} | {offset} points | {float(key):.2%} "
                         "| "
                         f"{cell(t['validation_iteration'], 'g')} / {cell(t['test_iteration'], 'g')} "
                         f"({t['reached'][0]} / {t['reached'][1]} seeds) | "
                         f"{cell(t['validation_accuracy_at_test_iteration'], '.2%')} |")
    return "\n".join(lines)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", metavar="VALIDATION TEST",
                        help="pairs of system folders: the runs evaluated on validation, then on test")
    parser.add_argument("--targets", default="0.85", help="comma-separated accuracies (default 0.85)")
    parser.add_argument("--json", action="store_true", help="one JSON list instead of markdown")
    args = parser.parse_args(argv[1:])
    if len(args.folders) % 2:
        parser.error("give the folders in pairs: VALIDATION TEST [VALIDATION TEST ...]")
    try:
        targets = [float(t) for t in args.targets.split(",")]
    except ValueError:
        parser.error(f"--targets {args.targets}: not a list of numbers")
    if any(not 0 < t <= 1 for t in targets):
        parser.error(f"--targets {args.targets}: accuracies lie in (0, 1]")
    try:
        results = [compare(args.folders[i], args.folders[i + 1], targets) for i in range(0, len(args.folders), 2)]
    except (tta.InputError, Mismatch) as e:
        sys.exit(f"eval_set_offset: {e}")
    print(json.dumps(results) if args.json else markdown(results))


if __name__ == "__main__":
    main(sys.argv)
