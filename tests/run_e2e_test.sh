#!/usr/bin/env bash
# End-to-end test of `stellatrain run` (docs/runner.md): a tiny scenario
# (MLP on synthetic data, 2 clusters x 1 node x 1 GPU, a few iterations,
# stellatrain and ddp) on the sim backend, once with one seed and once with
# two, and once on the real backend; checks summary.json's shape and values
# against each run's eval.csv and manifest.json, the folder layout, the
# errors for a network the emu backend cannot build, a bad scenario and a
# foreign --out folder, the figures of `stellatrain plot`, and that the
# evaluation schedule leaves the training alone. The runner's options
# (--jobs, --seed-list, --systems, --summarize, --mtu, --network,
# --stage-sample, --label-skew): tests/run_options_e2e_test.sh; emu runs:
# tests/emu_run_test.sh.
#
#   tests/run_e2e_test.sh path/to/stellatrain [work dir]
#
# To add checks, add a step at the end: $ONE_SEED, $TWO_SEEDS and $REAL are
# finished results folders.
set -euo pipefail

source "$(dirname "$0")/run_e2e_common.sh" "$@"

echo "== one seed, sim backend"
run_one_seed
python3 - "$ONE_SEED" <<'PY' || fail "one seed: both TTA branches"
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))["systems"]
# With this target ddp reaches it and stellatrain does not (deterministic under the profile model).
assert s["ddp"]["tta_s"] is not None and s["ddp"]["speedup_vs_ddp"] == 1.0, s["ddp"]
assert s["st"]["tta_s"] is None and s["st"]["speedup_vs_ddp"] is None, s["st"]
PY

echo "== a second run into the same folder replaces it; the same seed gives byte-identical results"
cp "$ONE_SEED/summary.json" first-summary.json
cp "$ONE_SEED/st/eval.csv" first-eval.csv
"$STELLATRAIN" run tiny.yaml --out "$ONE_SEED" --quiet > /dev/null
cmp first-summary.json "$ONE_SEED/summary.json" || fail "summary.json differs between two identical sim runs"
cmp first-eval.csv "$ONE_SEED/st/eval.csv" || fail "eval.csv differs between two identical sim runs"

echo "== two seeds, sim backend (a target both systems reach: speedup computed)"
run_two_seeds
[ -d "$TWO_SEEDS/st/seed-1" ] && [ -d "$TWO_SEEDS/st/seed-2" ] && [ -d "$TWO_SEEDS/ddp/seed-2" ] || fail "seed folders"
# analysis/paired_systems.py's bootstrap is the engine's (apps/seed_statistics.cc):
# its speedup over ddp and interval equal summary.json's to the digit.
python3 "$SOURCE_DIR/analysis/paired_systems.py" "$TWO_SEEDS" ddp st --json > paired.json || fail "paired_systems.py"
python3 - "$TWO_SEEDS/summary.json" paired.json <<'EOF' || fail "paired_systems.py against summary.json"
import json, sys
entry = json.load(open(sys.argv[1]))["systems"]["st"]
paired = json.load(open(sys.argv[2]))
assert entry.get("speedup_vs_ddp") is not None, "the two-seed run has no speedup to compare"
assert paired["median_speedup"] == entry["speedup_vs_ddp"], (paired["median_speedup"], entry["speedup_vs_ddp"])
assert paired["speedup_ci95"] == entry["speedup_ci95"], (paired["speedup_ci95"], entry["speedup_ci95"])
print(f"ok: paired_systems.py's speedup {paired['median_speedup']:.4f} {paired['speedup_ci95']} is summary.json's")
EOF

echo "== real backend (threads, no WAN shaping)"
REAL=$WORK/real
"$STELLATRAIN" run tiny.yaml --backend real --out "$REAL" --quiet
check_results "$REAL" real 1
grep -q '"note": "real backend' "$REAL/summary.json" || fail "real backend note"

echo "== errors"
# LAN delay is not emulated: refused before anything is written (or, in a
# build without the emulation backend, that is the error).
sed -e 's/  lan: {mbps: 10000, delay_ms: 0.05}/  lan: {mbps: 10000, delay_ms: 5}/' tiny.yaml > slow-lan.yaml
if "$STELLATRAIN" info 2>/dev/null | grep -q "^emu backend: libnl"; then
  expect_error "links: the emu backend cannot build this network: emu: lan delay_ms = 5: the emulator does not add LAN delay" \
    "$STELLATRAIN" run slow-lan.yaml --backend emu --out "$WORK/emu"
else
  expect_error "this build has no emulation backend" "$STELLATRAIN" run slow-lan.yaml --backend emu --out "$WORK/emu"
fi
[ ! -e "$WORK/emu" ] || fail "a refused --backend emu must not create the results folder"
expect_error "--backend: warp not in {sim,real,emu}" "$STELLATRAIN" run tiny.yaml --backend warp --out "$WORK/warp"
[ ! -e "$WORK/warp" ] || fail "a refused --backend must not create the results folder"
sed -e 's/^model: mlp/model: mlp\ncolour: red/' tiny.yaml > bad.yaml
expect_error "bad.yaml: colour (line 11): unknown key" "$STELLATRAIN" run bad.yaml --out "$WORK/bad"
mkdir -p foreign && touch foreign/notes.txt
expect_error "holds no earlier \`stellatrain run\` results" "$STELLATRAIN" run tiny.yaml --out foreign
expect_error "cannot read the file" "$STELLATRAIN" run no-such-scenario.yaml

echo "== figures (stellatrain plot) of the sim runs"
for dir in "$ONE_SEED" "$TWO_SEEDS"; do
  "$STELLATRAIN" plot "$dir" > plot.txt 2>&1 || { cat plot.txt; fail "stellatrain plot $dir"; }
  python3 - "$dir" <<'PY'
import os, sys, xml.etree.ElementTree as ET
out = sys.argv[1]
for name in ["tta", "accuracy_vs_iteration", "iteration_time", "wan_throughput", "speedup"]:
    png = os.path.join(out, "figures", name + ".png")
    svg = os.path.join(out, "figures", name + ".svg")
    if not os.path.isfile(png) or open(png, "rb").read(8) != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"FAIL: {png} is missing or not a PNG")
    root = ET.parse(svg).getroot()
    if not root.tag.endswith("svg"):
        sys.exit(f"FAIL: {svg} has no <svg> root")
report = open(os.path.join(out, "report.md")).read()
if "| st |" not in report or "figures/tta.png" not in report:
    sys.exit(f"FAIL: {out}/report.md lacks the table or the figures")
PY
done

echo "== the evaluation schedule does not change the training (sim)"
# The paper-tta files evaluate every 5 iterations to the end so that the
# monotone fit has evaluations after its crossing; that must cost the runs
# nothing but evaluations: each system's iterations.csv, byte for byte.
sed -e 's/^eval: .*/eval: {interval: 1, samples: 500}/' tiny-low-target.yaml > every-iteration.yaml
sed -e 's/^eval: .*/eval: {interval: 2, interval_after_targets: 10, samples: 500}/' tiny-low-target.yaml > thinned.yaml
for schedule in every-iteration thinned; do
  "$STELLATRAIN" run "$schedule.yaml" --out "$WORK/schedule-$schedule" --quiet > /dev/null
done
for system in st ddp; do
  cmp "$WORK/schedule-every-iteration/$system/iterations.csv" "$WORK/schedule-thinned/$system/iterations.csv" ||
    fail "$system: evaluating at another schedule changed iterations.csv"
done
rows=$(($(wc -l < "$WORK/schedule-every-iteration/st/eval.csv") - $(wc -l < "$WORK/schedule-thinned/st/eval.csv")))
[ "$rows" -gt 5 ] || fail "the two schedules should differ by more than 5 evaluations (differ by $rows)"
echo "ok: iterations.csv identical under evaluations every iteration and thinned ones ($rows evaluations apart)"

echo "run_e2e_test: all passed"
