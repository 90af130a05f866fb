#!/usr/bin/env bash
# A peer killed mid-run (SIGKILL: no goodbye on the wire) makes the other
# rank exit non-zero, within its --peer-timeout, with an error naming the
# lost rank. Both directions: the worker rank dies, then the master rank
# (which also hosts the rendezvous store). Ends only processes it started.
set -euo pipefail
BIN=$1
source "$(dirname "$0")/port_lib.sh"
OUT=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$OUT"
}
trap cleanup EXIT
PEER_TIMEOUT=5

# $1: the rank to kill; the other one must notice.
run_case() {
  local victim=$1 survivor=$(( 1 - $1 ))
  local dir="$OUT/kill$victim" port=$(free_port)
  local args=(train --system stellatrain --transport tcp --nodes 2 --master-port "$port" --model mlp
              --dataset synthetic --iterations 1000000 --eval-interval 0 --peer-timeout "$PEER_TIMEOUT"
              --quiet --out "$dir")
  "$BIN" "${args[@]}" --rank 0 > "$OUT/rank0.log" 2>&1 & local p0=$!
  "$BIN" "${args[@]}" --rank 1 > "$OUT/rank1.log" 2>&1 & local p1=$!
  pids+=("$p0" "$p1")
  # Wait until training runs: rank 0 has written iteration rows.
  for _ in $(seq 1 600); do
    [ -f "$dir/iterations.csv" ] && [ "$(wc -l < "$dir/iterations.csv")" -gt 5 ] && break
    kill -0 "$p0" 2>/dev/null || { echo "FAIL: rank 0 stopped before training"; cat "$OUT/rank0.log"; exit 1; }
    sleep 0.1
  done
  local victim_pid=$p0 survivor_pid=$p1
  if [ "$victim" -eq 1 ]; then victim_pid=$p1; survivor_pid=$p0; fi
  kill -9 "$victim_pid"
  local start=$SECONDS rc=0
  # The survivor must be gone within the peer timeout (plus start-up slack).
  for _ in $(seq 1 $(( (PEER_TIMEOUT + 5) * 10 ))); do
    kill -0 "$survivor_pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$survivor_pid" 2>/dev/null; then
    echo "FAIL: rank $survivor still running $(( SECONDS - start )) s after rank $victim was killed"
    cat "$OUT/rank$survivor.log"; exit 1
  fi
  wait "$survivor_pid" || rc=$?
  wait "$victim_pid" 2>/dev/null || true
  if [ "$rc" -eq 0 ]; then echo "FAIL: rank $survivor exited 0 after losing rank $victim"; exit 1; fi
  if ! grep -q "rank $victim" "$OUT/rank$survivor.log"; then
    echo "FAIL: rank $survivor's error does not name rank $victim:"; cat "$OUT/rank$survivor.log"; exit 1
  fi
  echo "ok: killed rank $victim; rank $survivor exited rc=$rc after $(( SECONDS - start )) s: $(tail -1 "$OUT/rank$survivor.log")"
}

run_case 1
run_case 0
