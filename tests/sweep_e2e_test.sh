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
