#!/usr/bin/env bash
# The emulator leaves nothing behind (docs/emu.md, "Cleanup"): after a
# normal run, after SIGINT to the launcher, after SIGKILL of one node
# process, and after SIGKILL of the launcher followed by `stellatrain emu
# cleanup`, there is no namespace of the run, no registry record, no node
# process, nothing holding the namespaces, and nothing new in the host's
# own namespace (links, qdiscs, iptables rules). Also: without privileges
# the run fails with an error naming them. Ends only processes it started.
#
#   tests/emu_cleanup_test.sh path/to/stellatrain
#
# Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN); skips (exit 77) otherwise.
set -euo pipefail
source "$(cd "$(dirname "$0")" && pwd)/emu_test_lib.sh"
STELLATRAIN=$(absolute_binary "${1:?usage: emu_cleanup_test.sh path/to/stellatrain}")
require_root
WORK=$(mktemp -d /tmp/emu_cleanup_test.XXXXXX)
chmod 755 "$WORK"  # the unprivileged case reads the scenario as nobody
launcher=""
cleanup() {
  [ -n "$launcher" ] && kill -9 "$launcher" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
cd "$WORK"

# One system, small and quick: MLP on synthetic data, 2 clusters x 1 node.
cat > tiny.yaml <<EOF
name: tiny
clusters:
  - {name: a, nodes: 1}
  - {name: b, nodes: 1}
links:
  wan:
    default: {mbps: 50, delay_ms: 10}
model: mlp
dataset: synthetic
batch: {per_gpu: 16}
systems: [stellatrain]
target_accuracy: 0.9
budget: {iterations: 20}
eval: {interval: 0, samples: 200}
EOF
sed -e 's/iterations: 20/iterations: 10000000/' tiny.yaml > long.yaml

ours() { ls /run/netns 2>/dev/null | grep -E '^st-[a-z0-9]{4}-[rn][0-9]+$' || true; }
host_state() {  # what the host's own namespace has: links, qdiscs, iptables rules
  ip -o link show | sed 's/^[0-9]*: //; s/ .*//' | sort
  tc qdisc show | sort
  iptables-save 2>/dev/null | grep -v '^#' | sort || true
}
host_state > host-before.txt
[ -z "$(ours)" ] || echo "note: namespaces of other emulated runs exist before the test: $(ours | tr '\n' ' ')"
ours > netns-before.txt

# Waits until the run's rank 0 trains (iterations.csv has rows).
wait_training() {
  local dir=$1
  for _ in $(seq 1 600); do
    [ -f "$dir/iterations.csv" ] && [ "$(wc -l < "$dir/iterations.csv")" -gt 3 ] && return 0
    kill -0 "$launcher" 2>/dev/null || { cat launcher.log; fail "the launcher stopped before training"; }
    sleep 0.1
  done
  cat launcher.log; fail "no training after 60 s"
}

# The run's namespaces and their identities (nsfs inodes), while it runs.
record_run() {
  comm -13 netns-before.txt <(ours) > run-netns.txt
  [ -s run-netns.txt ] || fail "no namespace of the run found while it runs"
  : > run-inodes.txt
  while read -r name; do stat -L -c %i "/run/netns/$name" >> run-inodes.txt; done < run-netns.txt
  pgrep -P "$launcher" > run-pids.txt || true
}

# Nothing of the run is left.
check_clean() {
  local what=$1
  local left
  left=$(comm -13 netns-before.txt <(ours))
  [ -z "$left" ] || fail "$what: namespaces left: $left"
  for run in /run/stellatrain/emu/*.json; do
    [ -e "$run" ] || continue
    grep -q "\"owner_pid\": $launcher," "$run" && fail "$what: registry record left: $run"
  done
  while read -r pid; do
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && fail "$what: node process $pid still runs"
  done < run-pids.txt
  # Nothing (a process, a thread, a socket's owner) still in the namespaces.
  while read -r inode; do
    if find /proc/[0-9]*/task/*/ns/net -maxdepth 0 -lname "net:\[$inode\]" 2>/dev/null | grep -q .; then
      fail "$what: a process still holds a namespace of the run (inode $inode)"
    fi
  done < run-inodes.txt
  host_state > host-after.txt
  diff host-before.txt host-after.txt > /dev/null || { diff host-before.txt host-after.txt; fail "$what: the host's own namespace changed"; }
  echo "ok: $what: nothing left ($(wc -l < run-netns.txt) namespaces removed)"
}

echo "== a normal run"
"$STELLATRAIN" run tiny.yaml --backend emu --out normal --quiet > launcher.log 2>&1 &
launcher=$!
wait_training normal/stellatrain
record_run
wait "$launcher" || { cat launcher.log; fail "normal run failed"; }
[ -f normal/stellatrain/link.csv ] || fail "normal run: no link.csv"
check_clean "normal run"

echo "== SIGINT to the launcher"
"$STELLATRAIN" run long.yaml --backend emu --out sigint --quiet > launcher.log 2>&1 &
launcher=$!
wait_training sigint/stellatrain
record_run
kill -INT "$launcher"
rc=0
timeout 30 tail --pid="$launcher" -f /dev/null || fail "SIGINT: the launcher still runs after 30 s"
wait "$launcher" || rc=$?
[ "$rc" -eq 130 ] || { cat launcher.log; fail "SIGINT: exit status $rc, expected 130"; }
grep -q "interrupted by signal 2" launcher.log || { cat launcher.log; fail "SIGINT: no message"; }
grep -q "interrupted by signal 2" sigint/summary.json || fail "SIGINT: summary.json does not record the interruption"
check_clean "SIGINT of the launcher"

echo "== SIGKILL of one node process"
"$STELLATRAIN" run long.yaml --backend emu --out nodekill --quiet > launcher.log 2>&1 &
launcher=$!
wait_training nodekill/stellatrain
record_run
victim=""
for pid in $(cat run-pids.txt); do
  tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q -- "--rank 1 " && victim=$pid
done
[ -n "$victim" ] || fail "node kill: no rank 1 process among the launcher's children"
kill -9 "$victim"
rc=0
timeout 30 tail --pid="$launcher" -f /dev/null || fail "node kill: the launcher still runs 30 s after rank 1 was killed"
wait "$launcher" || rc=$?
[ "$rc" -ne 0 ] || fail "node kill: the run succeeded without rank 1"
grep -q "rank 1 .* ended with signal 9" nodekill/summary.json || { cat nodekill/summary.json; fail "node kill: the error does not name rank 1 and its signal"; }
check_clean "SIGKILL of node process $victim (rank 1)"

echo "== SIGKILL of the launcher, then stellatrain emu cleanup"
"$STELLATRAIN" run long.yaml --backend emu --out launcherkill --quiet > launcher.log 2>&1 &
launcher=$!
wait_training launcherkill/stellatrain
record_run
kill -9 "$launcher"
wait "$launcher" 2>/dev/null || true
# The node processes die with their parent (PR_SET_PDEATHSIG); the
# namespaces stay until cleanup.
for _ in $(seq 1 50); do
  alive=0
  while read -r pid; do kill -0 "$pid" 2>/dev/null && alive=1; done < run-pids.txt
  [ "$alive" -eq 0 ] && break
  sleep 0.1
done
[ "$alive" -eq 0 ] || fail "launcher kill: node processes outlived the launcher"
[ -n "$(comm -13 netns-before.txt <(ours))" ] || fail "launcher kill: expected leftovers before cleanup"
"$STELLATRAIN" emu cleanup > cleanup.log 2>&1 || { cat cleanup.log; fail "emu cleanup failed"; }
grep -q "removed namespace" cleanup.log || { cat cleanup.log; fail "emu cleanup removed nothing"; }
check_clean "SIGKILL of the launcher + emu cleanup"

echo "== without privileges: a clear error"
if command -v setpriv > /dev/null; then
  rc=0
  setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
    "$STELLATRAIN" run tiny.yaml --backend emu --out "$WORK/unprivileged" > unprivileged.log 2>&1 || rc=$?
  [ "$rc" -ne 0 ] || fail "an unprivileged emu run succeeded"
  grep -q "needs CAP_NET_ADMIN and CAP_SYS_ADMIN" unprivileged.log || { cat unprivileged.log; fail "no clear privilege error"; }
  echo "ok: unprivileged: $(grep -o 'the emu backend needs[^:]*' unprivileged.log | head -1)"
else
  echo "note: setpriv not found: the unprivileged case is not checked"
fi
echo "emu_cleanup_test: all passed"
