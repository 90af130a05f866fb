#!/usr/bin/env bash
# SIGINT and SIGTERM of `stellatrain run` and `stellatrain train` (sim and
# real backends): the command stops cleanly, finished systems keep their
# results, the interrupted run is marked incomplete in summary.json and in
# its manifest, no temporary file is left, the exit status is 128 + signal;
# a second SIGINT exits at once; a rerun of some systems keeps the others
# in summary.json when interrupted; `run --jobs` passes the signal to its
# children and leaves none running. Ends only the processes it started.
#
#   tests/interrupt_test.sh path/to/stellatrain
set -euo pipefail

STELLATRAIN=${1:?usage: interrupt_test.sh path/to/stellatrain}
STELLATRAIN=$(cd "$(dirname "$STELLATRAIN")" && pwd)/$(basename "$STELLATRAIN")
SOURCE_DIR=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/st-interrupt-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Waits (bounded) until FILE contains PATTERN while process PID runs.
wait_for_line() {  # file, pattern, seconds, pid
  local deadline=$((SECONDS + $3))
  until grep -q "$2" "$1" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || { cat "$1"; fail "no '$2' in $1 after $3 s"; }
    kill -0 "$4" 2>/dev/null || { cat "$1"; fail "the process ended before '$2' appeared in $1"; }
    sleep 0.1
  done
}

# ddp on a 2 Mbps WAN covers its 300 simulated seconds in a few iterations
# (about a second of host time); stellatrain at 5% density runs thousands
# in the same budget, so it is still running when the signal comes.
cat > two.yaml <<YAML
name: two
clusters:
  - {name: a, nodes: 1, gpus_per_node: 1}
  - {name: b, nodes: 1, gpus_per_node: 1}
links:
  lan: {mbps: 10000, delay_ms: 0.05}
  wan:
    default: {mbps: 2, delay_ms: 10}
compute: {model: profile, profile: $SOURCE_DIR/scenarios/profiles/cpu-2core.yaml}
model: mlp
dataset: synthetic
batch: {global: 32}
systems:
  - ddp
  - {name: stellatrain, density: 0.05, controller: off}
target_accuracy: 0.9
budget: {iterations: 100000, time_s: 300}
eval: {interval: 20, samples: 200}
seeds: [1]
YAML

check_run_interrupted() {  # out dir, signal number
  python3 - "$1" "$2" <<'PY'
import json, os, sys
out, signal = sys.argv[1], int(sys.argv[2])
summary = json.load(open(os.path.join(out, "summary.json")))  # valid JSON, or this fails
systems = summary["systems"]
if "error" in systems["ddp"] or systems["ddp"]["tta_s"] is None and systems["ddp"]["best_accuracy"] <= 0:
    sys.exit(f"FAIL: the finished system lost its results: {systems['ddp']}")
st = systems["stellatrain"]
if f"interrupted by signal {signal}" not in json.dumps(st):
    sys.exit(f"FAIL: the interrupted system is not marked: {st}")
manifest = json.load(open(os.path.join(out, "stellatrain", "manifest.json")))
if manifest["summary"].get("complete") is not False or f"signal {signal}" not in manifest["summary"].get("interrupted", ""):
    sys.exit(f"FAIL: the interrupted run's manifest does not say so: {manifest['summary']}")
leftovers = [os.path.join(d, f) for d, _, files in os.walk(out) for f in files if f.endswith(".tmp")]
if leftovers:
    sys.exit(f"FAIL: temporary files left: {leftovers}")
print(f"ok: ddp kept, stellatrain marked ({manifest['summary']['iterations_completed']} iterations done)")
PY
}

for signal in INT TERM; do
  number=$(kill -l "$signal")
  echo "== run, SIG$signal during the second system"
  "$STELLATRAIN" run two.yaml --out "run-$signal" --quiet > "run-$signal.log" 2>&1 &
  pid=$!
  wait_for_line "run-$signal.log" "\[2/2\]" 120 "$pid"
  # Mid-system: the second system has finished some iterations.
  wait_for_line "run-$signal/stellatrain/iterations.csv" "^[0-9]" 60 "$pid"
  kill -s "$signal" "$pid"
  rc=0
  timeout 60 tail --pid="$pid" -f /dev/null || fail "run still running 60 s after SIG$signal"
  wait "$pid" || rc=$?
  [ "$rc" -eq $((128 + number)) ] || { cat "run-$signal.log"; fail "exit status $rc, expected $((128 + number))"; }
  grep -q "interrupted by signal $number" "run-$signal.log" || { cat "run-$signal.log"; fail "no message"; }
  check_run_interrupted "run-$signal" "$number"
done

echo "== run --systems stellatrain into that folder, SIGTERM: the kept ddp stays in summary.json"
# The rerun replaces stellatrain's folder; without the earlier one, the
# manifest and iterations the checks read can only be the rerun's.
rm -r run-TERM/stellatrain
"$STELLATRAIN" run two.yaml --systems stellatrain --out run-TERM --quiet > run-keep.log 2>&1 &
pid=$!
wait_for_line run-keep.log "ddp: kept from the earlier run" 60 "$pid"
wait_for_line run-keep.log "\[1/1\]" 60 "$pid"
wait_for_line run-TERM/stellatrain/iterations.csv "^[0-9]" 60 "$pid"  # into the rerun's iterations
kill -TERM "$pid"
rc=0
timeout 60 tail --pid="$pid" -f /dev/null || fail "run --systems still running 60 s after SIGTERM"
wait "$pid" || rc=$?
[ "$rc" -eq 143 ] || { cat run-keep.log; fail "run --systems: exit status $rc, expected 143"; }
check_run_interrupted run-TERM 15

# `run --jobs` children have process groups of their own: a failing check
# must not leave them running (their pids are in the runner's log).
jobs_log=""
stop_jobs() {
  [ -n "$jobs_log" ] && [ -f "$jobs_log" ] || return 0
  for p in $(sed -n 's/.*started (pid \([0-9]*\).*/\1/p' "$jobs_log"); do kill -KILL "$p" 2>/dev/null || true; done
}
trap 'stop_jobs; rm -rf "$WORK"' EXIT

# Pids of the children a --jobs runner's log names.
child_pids() { sed -n 's/.*started (pid \([0-9]*\).*/\1/p' "$1"; }

# Waits (bounded) until none of the pids runs.
wait_gone() {  # seconds, pid...
  local deadline=$((SECONDS + $1))
  shift
  for p in "$@"; do
    while kill -0 "$p" 2>/dev/null; do
      [ "$SECONDS" -lt "$deadline" ] || fail "--jobs: child $p still running"
      sleep 0.1
    done
  done
}

# Sends SIGTERM (twice with `twice`) to a --jobs runner and checks it ends
# within `seconds` with 143 and its children end too.
terminate_runner() {  # pid, log, seconds, label[, twice]
  kill -TERM "$1"
  [ "${5:-}" = twice ] && kill -TERM "$1"
  local rc=0
  timeout "$3" tail --pid="$1" -f /dev/null || fail "$4: the runner still runs $3 s after SIGTERM"
  wait "$1" || rc=$?
  [ "$rc" -eq 143 ] || { cat "$2"; fail "$4: exit status $rc, expected 143"; }
  wait_gone 30 $(child_pids "$2")
}

echo "== run --jobs 2, SIGTERM while the children run"
jobs_log=run-jobs.log
"$STELLATRAIN" run two.yaml --jobs 2 --out run-jobs --quiet > run-jobs.log 2>&1 &
pid=$!
wait_for_line run-jobs.log "ddp seed 1: finished" 120 "$pid"
wait_for_line run-jobs/stellatrain/iterations.csv "^[0-9]" 60 "$pid"
terminate_runner "$pid" run-jobs.log 60 "--jobs"
check_run_interrupted run-jobs 15

echo "== run --jobs 2, SIGTERM as the children start: they stop, they are not killed"
jobs_log=run-jobs-early.log
"$STELLATRAIN" run two.yaml --jobs 2 --out run-jobs-early --quiet > run-jobs-early.log 2>&1 &
pid=$!
wait_for_line run-jobs-early.log "stellatrain seed 1: started" 60 "$pid"
terminate_runner "$pid" run-jobs-early.log 60 "--jobs early"
python3 - <<'PY' || { cat run-jobs-early.log; fail "--jobs early: a child was killed instead of stopped"; }
import json
systems = json.load(open("run-jobs-early/summary.json"))["systems"]
for label, s in systems.items():
    text = json.dumps(s)
    assert "without an outcome" not in text, (label, s)
    # Finished before the signal, or stopped by it; never killed.
    assert "error" not in s or "signal 15" in text, (label, s)
print("ok: early SIGTERM:", {label: s.get("error", "finished") for label, s in systems.items()})
PY

echo "== run --jobs 2, two quick SIGTERMs: the runner exits at once, its children stop on their own"
jobs_log=run-jobs-twice.log
"$STELLATRAIN" run two.yaml --jobs 2 --out run-jobs-twice --quiet > run-jobs-twice.log 2>&1 &
pid=$!
wait_for_line run-jobs-twice.log "stellatrain seed 1: started" 60 "$pid"
wait_for_line run-jobs-twice/stellatrain/iterations.csv "^[0-9]" 60 "$pid"
# The runner exits at once; its children read end-of-file on their
# lifeline and stop by themselves.
terminate_runner "$pid" run-jobs-twice.log 10 "--jobs twice" twice
python3 - <<'PY' || fail "--jobs twice: the orphaned run does not record its stop"
import json
s = json.load(open("run-jobs-twice/stellatrain/manifest.json"))["summary"]
assert s["complete"] is False and "interrupted" in s, s
print("ok: the orphaned child stopped:", s["interrupted"])
PY
jobs_log=""

echo "== train (real backend), SIGINT"
"$STELLATRAIN" train --system ddp --model mlp --dataset synthetic --iterations 100000 --eval-interval 0 \
  --out train-int > train-int.log 2>&1 &
pid=$!
wait_for_line train-int.log "training ddp" 60 "$pid"
wait_for_line train-int/iterations.csv "^[0-9]" 60 "$pid"  # some iterations done
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 130 ] || { cat train-int.log; fail "train: exit status $rc, expected 130"; }
python3 - <<'PY' || fail "train: the manifest does not record the interruption"
import json
s = json.load(open("train-int/manifest.json"))["summary"]
assert s["complete"] is False and "signal 2" in s["interrupted"], s
assert s["iterations_completed"] > 0, s
PY
[ -z "$(find train-int -name '*.tmp')" ] || fail "train: temporary files left"
echo "ok: train stopped with 130, manifest marked"

echo "== a second SIGINT exits at once"
"$STELLATRAIN" run two.yaml --out run-twice --quiet > run-twice.log 2>&1 &
pid=$!
wait_for_line run-twice.log "\[1/2\]" 120 "$pid"
# Both signals before the first can be acted on: the process must not wait
# for the current step to end.
kill -INT "$pid"
kill -INT "$pid"
rc=0
timeout 10 tail --pid="$pid" -f /dev/null || fail "still running 10 s after two SIGINTs"
wait "$pid" || rc=$?
[ "$rc" -eq 130 ] || { cat run-twice.log; fail "twice: exit status $rc, expected 130"; }
echo "ok: second SIGINT exited at once"
echo "PASS"
