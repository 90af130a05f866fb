#!/usr/bin/env bash
# `stellatrain sweep` end to end (docs/scenarios.md, "Validation, not test,
# for tuning"): every point evaluates on the validation set, at the
# --eval-interval grain when given, and sweep.json names the best and says
# how it was evaluated. A small MLP on synthetic data, real backend.
# Usage: sweep_e2e_test.sh path/to/stellatrain
set -euo pipefail
BIN=$(realpath "${1:?usage: sweep_e2e_test.sh path/to/stellatrain}")
WORK=$(mktemp -d /tmp/st-sweep.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
fail() { echo "FAIL: $*"; exit 1; }

cat > tiny.yaml <<YAML
name: tiny
backend: real
clusters:
  - {name: a, nodes: 1}
  - {name: b, nodes: 1}
links:
  wan:
    default: {mbps: 100, delay_ms: 5}
model: mlp
dataset: synthetic
batch: {per_gpu: 16}
systems: [ddp]
target_accuracy: 0.6
budget: {iterations: 20}
eval: {interval: 2, samples: 200}
YAML
"$BIN" sweep tiny.yaml --lr 0.05,0.1 --eval-interval 5 --quiet --out sweep > sweep.log 2>&1 ||
  { cat sweep.log; fail "the sweep failed"; }
python3 - <<'PY'
import csv, json, os, sys
def check(ok, what):
    if not ok:
        sys.exit(f"FAIL: {what}")
result = json.load(open("sweep/sweep.json"))
check(result["evaluated_on"].startswith("validation"), f"evaluated_on {result['evaluated_on']}")
check(result["eval_interval"] == 5, f"eval_interval {result['eval_interval']}")
best = result["systems"]["ddp"]["best"]
check(best["run"] in os.listdir("sweep"), f"best run {best}")
points = result["systems"]["ddp"]["points"]
check(len(points) >= 2, f"{len(points)} points")
runs = [d for d in os.listdir("sweep") if d.startswith("ddp.lr-")]
check(len(runs) >= 2, f"run folders {runs}")
for run in runs:
    manifest = json.load(open(os.path.join("sweep", run, "manifest.json")))
    check("validation" in json.dumps(manifest), f"{run}: the manifest does not say validation")
    iterations = [int(row["iteration"]) for row in csv.DictReader(open(os.path.join("sweep", run, "eval.csv")))]
    check(all(i % 5 == 0 for i in iterations) and 5 in iterations, f"{run}: evaluated at {iterations}")
print(f"ok: {len(points)} points on validation every 5 iterations, best lr {best['lr']}")
PY

# --density: the scenario's own setting (stellatrain's controller) against
# the best fixed density by both readings of TTA (docs/runner.md, "Two
# readings of TTA"), each with its ratio paired by seed.
sed -e 's/^systems: .*/systems: [stellatrain]/' -e 's/^target_accuracy: .*/target_accuracy: 0.3/' tiny.yaml > density.yaml
"$BIN" sweep density.yaml --lr 0.1 --density 0.1,0.5 --seeds 2 --eval-interval 5 --quiet --out density > density.log 2>&1 ||
  { cat density.log; fail "the density sweep failed"; }
python3 - <<'PY'
import json, math, statistics, sys
def check(ok, what):
    if not ok:
        sys.exit(f"FAIL (density): {what}")
result = json.load(open("density/sweep.json"))["systems"]["stellatrain"]
summary = json.load(open("density/summary.json"))["systems"]
points = result["points"]
as_is = next(p for p in points if p["density"] == "as-is")
fixed = [p for p in points if p["density"] != "as-is"]
check(len(fixed) >= 2, f"fixed points {fixed}")
for key, compare in (("tta_s", result["against_fixed"]), ("tta_fit_s", result["against_fixed"]["fit"])):
    reached = [p for p in fixed if p.get(key) is not None]
    check(reached and as_is.get(key) is not None, f"{key}: the as-is run or every fixed density missed 30%: {points}")
    best = min(reached, key=lambda p: p[key])
    check(compare["best_fixed_density"] == best["density"], f"{key}: best fixed {compare['best_fixed_density']} != {best}")
    check(compare["best_fixed_" + key] == best[key] and compare["as_is_" + key] == as_is[key], f"{key}: {compare}")
    check(abs(compare["as_is_over_best_fixed"] - as_is[key] / best[key]) < 1e-9, f"{key}: ratio {compare}")
    # Paired: seed by seed from the runs' own readings in summary.json, a
    # seed where the as-is run missed counting as slowest.
    pairs = [(a.get(key), b.get(key)) for a, b in zip(summary[as_is["run"]]["per_seed"], summary[best["run"]]["per_seed"])
             if b.get(key) is not None]
    ratios = sorted(math.inf if a is None else a / b for a, b in pairs)
    missed = sum(a is None for a, _ in pairs)
    check(compare["pairs"] == len(pairs) == 2 and compare["as_is_missed"] == missed, f"{key}: pairs {compare} vs {pairs}")
    median = statistics.median(ratios)
    check(compare["paired_ratio"] is None if math.isinf(median) else abs(compare["paired_ratio"] - median) < 1e-9,
          f"{key}: paired {compare} vs {ratios}")
    check((compare["paired_ci95"] is None) == (missed > 0), f"{key}: interval {compare['paired_ci95']}")
for p in points:
    check(p.get("tta_fit_s") is None or (p["tta_s"] is not None and p["tta_fit_s"] >= p["tta_s"]),
          f"{p['run']}: the fit reads before the first crossing")
print("ok: against the best fixed density by both readings:",
      result["against_fixed"]["as_is_over_best_fixed"], result["against_fixed"]["fit"]["as_is_over_best_fixed"])
PY
