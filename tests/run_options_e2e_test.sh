#!/usr/bin/env bash
# End-to-end test of the options of `stellatrain run` (docs/runner.md) on
# the tiny scenario of tests/run_e2e_test.sh: --jobs (children give the
# sequential run's files; a failing child is recorded), --seed-list,
# --systems (alone and into an earlier run's folder, which keeps what still
# matches), --summarize, --mtu, --network flow, --stage-sample and
# --label-skew, each also through --jobs's children, and each refused
# value leaving no results folder behind.
#
#   tests/run_options_e2e_test.sh path/to/stellatrain [work dir]
set -euo pipefail

source "$(dirname "$0")/run_e2e_common.sh" "$@"

# The runs the options are compared against.
run_one_seed
run_two_seeds

echo "== --jobs 3: the same runs as child processes, the same results"
JOBS=$WORK/jobs
"$STELLATRAIN" run tiny-low-target.yaml --seeds 2 --jobs 3 --progress-every 0.01 --out "$JOBS" --quiet > jobs.txt 2>&1 \
  || { cat jobs.txt; fail "run --jobs 3"; }
check_results "$JOBS" sim 2
for run in st/seed-1 st/seed-2 ddp/seed-1 ddp/seed-2; do
  for file in eval.csv iterations.csv link.csv; do
    cmp -s "$TWO_SEEDS/$run/$file" "$JOBS/$run/$file" || fail "--jobs: $run/$file differs from the sequential run's"
  done
  [ -s "$JOBS/logs/${run/\//_}.log" ] || fail "--jobs: no output log for $run"
  ! grep -q "node 0: iteration" "$JOBS/logs/${run/\//_}.log" || fail "--jobs --quiet: $run's child was not quiet"
done
! grep -q " finished\] " jobs.txt || { cat jobs.txt; fail "--jobs --quiet: the runner echoed its children's progress"; }
cmp -s "$TWO_SEEDS/summary.json" "$JOBS/summary.json" || fail "--jobs: summary.json differs from the sequential run's"
# A run that fails in its child process: recorded with its message, the
# other runs reported, exit status 1.
sed -e 's/^dataset: synthetic/dataset: fashion-mnist/' tiny.yaml > tiny-fmnist.yaml
rc=0
ST_FASHION_MNIST_DIR="$WORK/no-such-dataset" "$STELLATRAIN" run tiny-fmnist.yaml --jobs 2 --out "$WORK/jobs-fail" --quiet \
  > jobs-fail.txt 2>&1 || rc=$?
[ "$rc" -eq 1 ] || { cat jobs-fail.txt; fail "--jobs with failing runs: exit status $rc, expected 1"; }
python3 - "$WORK/jobs-fail" <<'PY' || { cat jobs-fail.txt; fail "--jobs: failing runs not recorded"; }
import json, sys
systems = json.load(open(sys.argv[1] + "/summary.json"))["systems"]
assert list(systems) == ["st", "ddp"], list(systems)
for label, s in systems.items():
    assert "no-such-dataset" in s.get("error", ""), (label, s)
print("ok: --jobs records each failed run:", systems["st"]["error"][:100])
PY
echo "== --seed-list: exactly the seeds named, each run as in the run of all of them"
# Not quiet, and the runner's progress echo as often as it looks (every
# 0.1 s): the children's logs hold the trainer's progress lines, the
# runner repeats the latest.
"$STELLATRAIN" run tiny-low-target.yaml --seed-list 2 --jobs 2 --progress-every 0.01 --out "$WORK/seed-2" \
  > seed-2.txt 2>&1 || { cat seed-2.txt; fail "run --seed-list 2"; }
for system in st ddp; do
  grep -q "node 0: iteration" "$WORK/seed-2/logs/$system.log" \
    || { cat "$WORK/seed-2/logs/$system.log"; fail "--jobs: $system's log holds no progress line"; }
done
grep -Eq "\[[01] of 2 finished\] (st|ddp) seed 2 \(pid [0-9]+, [0-9]+ wall s\): " seed-2.txt \
  || { cat seed-2.txt; fail "--jobs --progress-every 0.01: no progress line from the runner"; }
for system in st ddp; do
  for file in eval.csv iterations.csv link.csv; do
    cmp -s "$TWO_SEEDS/$system/seed-2/$file" "$WORK/seed-2/$system/$file" \
      || fail "--seed-list 2: $system/$file differs from seed 2 of the two-seed run"
  done
done
python3 -c "import json,sys; s=json.load(open(sys.argv[1])); assert s['seeds'] == [2], s['seeds']" \
  "$WORK/seed-2/summary.json" || fail "--seed-list 2: summary.json's seeds"
# Two seeds through --jobs children: a child that lost the list would write
# ddp/ where its parent reads ddp/seed-N/.
"$STELLATRAIN" run tiny-low-target.yaml --seed-list 2,1 --jobs 2 --systems ddp --out "$WORK/seeds-2-1" --quiet \
  > seeds-2-1.txt 2>&1 || { cat seeds-2-1.txt; fail "run --seed-list 2,1 --jobs 2"; }
for seed in 1 2; do
  cmp -s "$TWO_SEEDS/ddp/seed-$seed/eval.csv" "$WORK/seeds-2-1/ddp/seed-$seed/eval.csv" \
    || fail "--seed-list 2,1: seed $seed differs"
done
python3 -c "import json,sys; s=json.load(open(sys.argv[1])); assert s['seeds'] == [2, 1], s['seeds']" \
  "$WORK/seeds-2-1/summary.json" || fail "--seed-list 2,1: summary.json's seeds"
expect_error "--seed-list: seed 2 is listed twice" "$STELLATRAIN" run tiny.yaml --seed-list 2,2 --out "$WORK/twice"
expect_error "--seeds excludes --seed-list" "$STELLATRAIN" run tiny.yaml --seed-list 2 --seeds 2 --out "$WORK/both"
[ ! -e "$WORK/twice" ] && [ ! -e "$WORK/both" ] || fail "a refused --seed-list must not create the results folder"
echo "== --systems: only the chosen systems, each run as in the whole scenario"
"$STELLATRAIN" run tiny-low-target.yaml --seeds 2 --jobs 2 --systems ddp --out "$WORK/only-ddp" --quiet > only.txt 2>&1 \
  || { cat only.txt; fail "run --systems ddp"; }
python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['systems']; assert list(s) == ['ddp'], list(s)" \
  "$WORK/only-ddp/summary.json" || fail "--systems ddp: summary.json holds other systems"
for run in ddp/seed-1 ddp/seed-2; do
  cmp -s "$TWO_SEEDS/$run/iterations.csv" "$WORK/only-ddp/$run/iterations.csv" || fail "--systems: $run differs"
done
[ ! -e "$WORK/only-ddp/st" ] || fail "--systems ddp: st ran"
echo "== --systems into an earlier run's folder: the others keep their runs when their configuration is unchanged"
KEEP=$WORK/keep
cp -r "$TWO_SEEDS" "$KEEP"
"$STELLATRAIN" run tiny-low-target.yaml --seeds 2 --systems ddp --out "$KEEP" --quiet > keep.txt 2>&1 \
  || { cat keep.txt; fail "run --systems ddp into an earlier run"; }
grep -q "st: kept from the earlier run" keep.txt || { cat keep.txt; fail "--systems: st not kept"; }
# ddp rerun, st kept: the same summary as the whole run's, systems in the file's order.
cmp -s "$TWO_SEEDS/summary.json" "$KEEP/summary.json" || fail "--systems ddp: the kept summary differs from the whole run's"
# st rerun, ddp (the speedup reference) kept: the same again, speedups included.
"$STELLATRAIN" run tiny-low-target.yaml --seeds 2 --systems st --out "$KEEP" --quiet > keep-st.txt 2>&1 \
  || { cat keep-st.txt; fail "run --systems st into an earlier run"; }
grep -q "ddp: kept from the earlier run" keep-st.txt || { cat keep-st.txt; fail "--systems st: ddp not kept"; }
cmp -s "$TWO_SEEDS/summary.json" "$KEEP/summary.json" || fail "--systems st: the kept summary differs from the whole run's"
# A changed density: st's runs no longer match the file, so they are left out.
sed -e 's/label: st, density: 0.05/label: st, density: 0.06/' tiny-low-target.yaml > tiny-new-density.yaml
grep -q "density: 0.06" tiny-new-density.yaml || fail "test setup: tests/e2e_lib.sh's st line changed"
"$STELLATRAIN" run tiny-new-density.yaml --seeds 2 --systems ddp --out "$KEEP" --quiet > keep-density.txt 2>&1 \
  || { cat keep-density.txt; fail "run --systems ddp after a density change"; }
grep -q 'st: not kept in summary.json (.*manifest.json: "options" does not match the scenario)' keep-density.txt \
  || { cat keep-density.txt; fail "--systems: st kept although its density changed"; }
python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['systems']; assert list(s) == ['ddp'], list(s)" \
  "$KEEP/summary.json" || fail "--systems ddp after a density change: st still in summary.json"
# A system's own time budget, which sits under `systems` (not compared in
# the file): the manifest records it, so st's earlier runs are not kept.
sed -e 's/label: st, density: 0.05}/label: st, density: 0.05, budget: {iterations: 20, time_s: 1000}}/' \
  tiny-low-target.yaml > tiny-st-time.yaml
grep -q "time_s: 1000" tiny-st-time.yaml || fail "test setup: tests/e2e_lib.sh's st line changed"
"$STELLATRAIN" run tiny-st-time.yaml --seeds 2 --systems ddp --out "$KEEP" --quiet > keep-time.txt 2>&1 \
  || { cat keep-time.txt; fail "run --systems ddp after st's time budget changed"; }
grep -q 'st: not kept in summary.json (.*manifest.json: "time_budget_s" does not match the scenario)' keep-time.txt \
  || { cat keep-time.txt; fail "--systems: st kept although its time budget changed"; }
# A changed link, which no manifest records: the earlier scenario.yaml
# differs, so nothing is kept (st's runs on disk, at density 0.05, would
# otherwise match this file's st).
sed -e 's/default: {mbps: 50, delay_ms: 10}/default: {mbps: 60, delay_ms: 10}/' tiny-low-target.yaml > tiny-new-link.yaml
grep -q "mbps: 60" tiny-new-link.yaml || fail "test setup: tests/e2e_lib.sh's wan line changed"
"$STELLATRAIN" run tiny-new-link.yaml --seeds 2 --systems ddp --out "$KEEP" --quiet > keep-link.txt 2>&1 \
  || { cat keep-link.txt; fail "run --systems ddp after a link change"; }
grep -q "no system is kept from the earlier run in .*: the scenario differs from its scenario.yaml at links.wan.default.mbps" \
  keep-link.txt || { cat keep-link.txt; fail "--systems: runs kept although the link changed"; }
python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['systems']; assert list(s) == ['ddp'], list(s)" \
  "$KEEP/summary.json" || fail "--systems ddp after a link change: st still in summary.json"
# The evaluation schedule after the targets thins only evaluations past the
# highest report target, so no TTA at a target moves: runs are kept across
# it. The schedule before the targets is compared like any other key.
KEEP_EVAL=$WORK/keep-eval
cp -r "$TWO_SEEDS" "$KEEP_EVAL"
sed -e 's/^eval: {interval: 5, samples: 500}/eval: {interval: 5, interval_after_targets: 10, samples: 500}/' \
  tiny-low-target.yaml > tiny-thinned.yaml
grep -q "interval_after_targets: 10" tiny-thinned.yaml || fail "test setup: tests/e2e_lib.sh's eval line changed"
"$STELLATRAIN" run tiny-thinned.yaml --seeds 2 --systems ddp --out "$KEEP_EVAL" --quiet > keep-thinned.txt 2>&1 \
  || { cat keep-thinned.txt; fail "run --systems ddp after thinning the evaluations"; }
grep -q "st: kept from the earlier run" keep-thinned.txt || { cat keep-thinned.txt; fail "--systems: st not kept across interval_after_targets"; }
python3 - "$TWO_SEEDS/summary.json" "$KEEP_EVAL/summary.json" <<'PY' || fail "--systems: the kept st's TTA moved"
import json, sys
before, after = (json.load(open(p))["systems"]["st"] for p in sys.argv[1:])
assert before["tta_s"] == after["tta_s"] and before["per_seed"] == after["per_seed"], (before, after)
PY
sed -e 's/^eval: {interval: 5, samples: 500}/eval: {interval: 4, samples: 500}/' tiny-low-target.yaml > tiny-every-4.yaml
grep -q "interval: 4," tiny-every-4.yaml || fail "test setup: tests/e2e_lib.sh's eval line changed"
"$STELLATRAIN" run tiny-every-4.yaml --seeds 2 --systems ddp --out "$KEEP_EVAL" --quiet > keep-every-4.txt 2>&1 \
  || { cat keep-every-4.txt; fail "run --systems ddp after an evaluation interval change"; }
grep -q "no system is kept from the earlier run in .*: the scenario differs from its scenario.yaml at eval.interval" \
  keep-every-4.txt || { cat keep-every-4.txt; fail "--systems: runs kept although the evaluation interval changed"; }
expect_error "--systems: tiny.yaml has no system labelled 'nope'" "$STELLATRAIN" run tiny.yaml --systems ddp,nope --out "$WORK/nope"
[ ! -e "$WORK/nope" ] || fail "a refused --systems must not create the results folder"
echo "== --summarize: one summary from runs made apart (another machine's st beside this one's ddp), nothing run"
MERGED=$WORK/merged
cp -r "$WORK/only-ddp" "$MERGED"
cp -r "$TWO_SEEDS/st" "$MERGED/st"
files_of() { (cd "$1" && find . -type f ! -name summary.json -exec md5sum {} + | sort); }
before=$(files_of "$MERGED")
"$STELLATRAIN" run tiny-low-target.yaml --seeds 2 --summarize --out "$MERGED" > merged.txt 2>&1 \
  || { cat merged.txt; fail "run --summarize"; }
grep -q "st: kept from the earlier run" merged.txt || { cat merged.txt; fail "--summarize: st not kept"; }
cmp -s "$TWO_SEEDS/summary.json" "$MERGED/summary.json" || fail "--summarize: the summary differs from the whole run's"
[ "$(files_of "$MERGED")" = "$before" ] || fail "--summarize: files other than summary.json were written or changed"
# A summary that would drop a system the folder's summary.json holds is
# refused (a narrower --systems, or a run that no longer matches, which the
# log names); without that file, --systems names the systems summarised.
expect_error "--summarize: $MERGED/summary.json holds systems ddp that this summary would drop; remove that file first" \
  "$STELLATRAIN" run tiny-low-target.yaml --seeds 2 --summarize --systems st --out "$MERGED"
cmp -s "$TWO_SEEDS/summary.json" "$MERGED/summary.json" || fail "--summarize: a refused summary changed summary.json"
expect_error "holds systems st that this summary would drop" \
  "$STELLATRAIN" run tiny-new-density.yaml --seeds 2 --summarize --out "$MERGED"
grep -q 'st: not kept in summary.json (.*manifest.json: "options" does not match the scenario)' out.txt \
  || { cat out.txt; fail "--summarize: st's changed density not named"; }
rm "$MERGED/summary.json"
"$STELLATRAIN" run tiny-low-target.yaml --seeds 2 --summarize --systems st --out "$MERGED" > merged-st.txt 2>&1 \
  || { cat merged-st.txt; fail "run --summarize --systems st"; }
python3 -c 'import json,sys; assert list(json.load(open(sys.argv[1]))["systems"]) == ["st"]' "$MERGED/summary.json" \
  || fail "--summarize --systems st: summary.json holds other systems"
for flag in --plot "--jobs 2" --timeline; do
  # shellcheck disable=SC2086  # the flag and its value are two words
  expect_error "--summarize runs nothing and writes only summary.json: leave out ${flag%% *}" \
    "$STELLATRAIN" run tiny-low-target.yaml --seeds 2 --summarize $flag --out "$MERGED"
done
expect_error "--summarize: tiny-new-link.yaml does not match the runs' $MERGED/scenario.yaml at links" \
  "$STELLATRAIN" run tiny-new-link.yaml --seeds 2 --summarize --out "$MERGED"
expect_error "--summarize: no system has a matching run for every seed in $MERGED" \
  "$STELLATRAIN" run tiny-low-target.yaml --seeds 3 --summarize --out "$MERGED"
expect_error "--summarize: $WORK/no-such-folder is not a results folder" \
  "$STELLATRAIN" run tiny-low-target.yaml --summarize --out "$WORK/no-such-folder"
[ ! -e "$WORK/no-such-folder" ] || fail "a refused --summarize must not create the results folder"
expect_error "--jobs 2: only the sim backend runs several at once" "$STELLATRAIN" run tiny.yaml --backend real --jobs 2 --out "$WORK/jobs-real"
[ ! -e "$WORK/jobs-real" ] || fail "a refused --jobs must not create the results folder"

echo "== --mtu: the network's MTU in place of the scenario's, also in --jobs's children"
MTU=$WORK/mtu
"$STELLATRAIN" run tiny.yaml --mtu 9000 --jobs 2 --out "$MTU" --quiet > mtu.txt 2>&1 || { cat mtu.txt; fail "run --mtu 9000 --jobs 2"; }
python3 - "$MTU" "$ONE_SEED" <<'PY'
import json, sys
def network(manifest):  # the manifest's object holding the MTU
    stack = [manifest]
    while stack:
        d = stack.pop()
        if isinstance(d, dict):
            if "mtu" in d and "segment_bytes" in d:
                return d
            stack.extend(d.values())
    sys.exit("FAIL: no mtu in the manifest")
mtu, plain = sys.argv[1], sys.argv[2]
for run in ["st", "ddp"]:
    n = network(json.load(open(f"{mtu}/{run}/manifest.json")))
    assert n["mtu"] == 9000 and n["mtu_automatic"] is False and n["segment_bytes"] == 9000 - 52, (run, n)
    p = network(json.load(open(f"{plain}/{run}/manifest.json")))
    assert p["mtu_automatic"] is True and p["mtu"] != 9000, (run, p)
assert json.load(open(f"{mtu}/summary.json"))["mtu"] == 9000
assert json.load(open(f"{plain}/summary.json"))["mtu"] == "auto"
print("ok: --mtu 9000 reached both runs' networks (children of --jobs); the summary names it")
PY
expect_error "--mtu 100: topology: mtu = 100: must be 0 (automatic) or in [576, 65535]" "$STELLATRAIN" run tiny.yaml --mtu 100 --out "$WORK/mtu-small"
expect_error "--mtu 9k: give 'auto' or a number of bytes" "$STELLATRAIN" run tiny.yaml --mtu 9k --out "$WORK/mtu-word"
expect_error "--mtu 0: give 'auto' or a number of bytes" "$STELLATRAIN" run tiny.yaml --mtu 0 --out "$WORK/mtu-zero"
expect_error "--mtu +9000: give 'auto' or a number of bytes" "$STELLATRAIN" run tiny.yaml --mtu +9000 --out "$WORK/mtu-plus"
expect_error "--mtu: the real backend applies no network" "$STELLATRAIN" run tiny.yaml --backend real --mtu 9000 --out "$WORK/mtu-real"
for refused in mtu-small mtu-word mtu-zero mtu-plus mtu-real; do
  [ ! -e "$WORK/$refused" ] || fail "a refused --mtu must not create the results folder ($refused)"
done

echo "== --network flow: the flow-level model in place of the scenario's links.model, also in --jobs's children"
FLOW=$WORK/flow
"$STELLATRAIN" run tiny.yaml --network flow --jobs 2 --out "$FLOW" --quiet > flow.txt 2>&1 || { cat flow.txt; fail "run --network flow --jobs 2"; }
python3 - "$FLOW" <<'PY'
import glob, json, sys
out = sys.argv[1]
manifests = glob.glob(f"{out}/*/manifest.json") + glob.glob(f"{out}/*/*/manifest.json")
assert manifests, "no manifests"
for path in manifests:
    m = json.load(open(path))
    assert m["network"]["model"] == "flow", (path, m["network"])
    assert "flow-level model" in m["simulator"], (path, m["simulator"])
assert json.load(open(f"{out}/summary.json"))["network_model"] == "flow"
print(f"ok: --network flow reached {len(manifests)} runs (children of --jobs); the summary names it")
PY
expect_error "--network flow: the flow-level model is the sim backend's" "$STELLATRAIN" run tiny.yaml --backend real --network flow --out "$WORK/flow-real"
expect_error "--network: fluid not in" "$STELLATRAIN" run tiny.yaml --network fluid --out "$WORK/flow-word"
for refused in flow-real flow-word; do
  [ ! -e "$WORK/$refused" ] || fail "a refused --network must not create the results folder ($refused)"
done

echo "== --stage-sample: CPU stages on layer samples in a timing run, also in --jobs's children"
sed -e '/^target_accuracy:/d' -e '/^eval:/d' \
    -e "s|^compute: {model: profile, |compute: {math: timing, model: profile, |" tiny.yaml > tiny-timing.yaml
SAMPLED=$WORK/sampled
"$STELLATRAIN" run tiny-timing.yaml --stage-sample 0.25 --network flow --jobs 2 --out "$SAMPLED" --quiet > sampled.txt 2>&1 ||
  { cat sampled.txt; fail "run --stage-sample 0.25 --jobs 2"; }
python3 - "$SAMPLED" <<'PY'
import glob, json, sys
out = sys.argv[1]
manifests = glob.glob(f"{out}/*/manifest.json")
assert len(manifests) == 2, manifests
for path in manifests:
    m = json.load(open(path))
    assert m["stage_sample"] == {"fraction": 0.25, "min_elements": 4096}, (path, m.get("stage_sample"))
    assert m["summary"]["stage_sample"] == 0.25, path
print(f"ok: --stage-sample 0.25 reached {len(manifests)} runs (children of --jobs)")
PY
expect_error "--stage-sample 0.5: st: train config: stage_sample samples only timing runs" "$STELLATRAIN" run tiny.yaml --stage-sample 0.5 --out "$WORK/sample-full-math"
expect_error "--stage-sample: Value 2 not in range" "$STELLATRAIN" run tiny-timing.yaml --stage-sample 2 --out "$WORK/sample-two"
sed -e 's|^compute: {math: timing, |compute: {stage_sample: {fraction: 0.1}, |' tiny-timing.yaml > sample-full-math.yaml
expect_error "sample-full-math.yaml: compute.stage_sample (line 9): samples only timing runs" "$STELLATRAIN" run sample-full-math.yaml --out "$WORK/sample-key"
for refused in sample-full-math sample-two sample-key; do
  [ ! -e "$WORK/$refused" ] || fail "a refused --stage-sample must not create the results folder ($refused)"
done

echo "== --label-skew: where every system's data lives, in place of the scenario's, also in --jobs's children"
SKEWED=$WORK/skewed
"$STELLATRAIN" run tiny.yaml --label-skew 0.5 --jobs 2 --out "$SKEWED" --quiet > skewed.txt 2>&1 ||
  { cat skewed.txt; fail "run --label-skew 0.5 --jobs 2"; }
python3 - "$SKEWED" "$WORK/one-seed" <<'PY'
import glob, json, sys
out, even = sys.argv[1], sys.argv[2]
manifests = glob.glob(f"{out}/*/manifest.json")
assert len(manifests) == 2, manifests
for path in manifests:
    assert json.load(open(path))["label_skew"] == 0.5, path
assert json.load(open(f"{out}/summary.json"))["label_skew"] == 0.5, "summary.json does not name the placement"
assert "label_skew" not in json.load(open(f"{even}/summary.json")), "an even placement's summary names a skew"
# The placement changes what ddp trains on: its accuracy path differs from
# the even placement's run of the same seed.
skewed_eval = open(f"{out}/ddp/eval.csv").read()
even_eval = open(f"{even}/ddp/eval.csv").read()
assert skewed_eval != even_eval, "ddp's evaluations did not change with --label-skew 0.5"
print(f"ok: --label-skew 0.5 reached {len(manifests)} runs (children of --jobs) and changed what ddp trained on")
PY
# Keep mode: a rerun of one system at the same placement keeps the other
# system's runs; one without the override does not.
"$STELLATRAIN" run tiny.yaml --label-skew 0.5 --systems st --out "$SKEWED" --quiet > skew-same.txt 2>&1 || { cat skew-same.txt; fail "rerun with --label-skew 0.5"; }
grep -q "ddp: kept" skew-same.txt || { cat skew-same.txt; fail "keep mode left out ddp's runs at the same placement"; }
"$STELLATRAIN" run tiny.yaml --systems st --out "$SKEWED" --quiet > skew-keep.txt 2>&1 || { cat skew-keep.txt; fail "rerun without --label-skew"; }
grep -q "label_skew" skew-keep.txt || { cat skew-keep.txt; fail "keep mode did not name label_skew when leaving out ddp's skewed runs"; }
# The emu backend's node processes are `train --scenario F --scenario-system
# L ... --label-skew S` (apps/backends.cc node_arguments): the flag wins
# over the file's placement.
"$STELLATRAIN" train --scenario tiny.yaml --scenario-system ddp --label-skew 0.5 --iterations 2 --out "$WORK/node-skew" --quiet > node-skew.txt 2>&1 ||
  { cat node-skew.txt; fail "train --scenario --label-skew"; }
python3 -c "import json, sys; m = json.load(open(sys.argv[1])); assert m['label_skew'] == 0.5, m.get('label_skew')" "$WORK/node-skew/manifest.json" ||
  fail "train --scenario --label-skew 0.5 did not reach the manifest"
expect_error "--label-skew: Value 1.5 not in range" "$STELLATRAIN" run tiny.yaml --label-skew 1.5 --out "$WORK/skew-high"
[ ! -e "$WORK/skew-high" ] || fail "a refused --label-skew must not create the results folder"

echo "run_options_e2e_test: all passed"
