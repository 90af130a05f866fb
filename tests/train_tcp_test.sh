#!/usr/bin/env bash
# A 2-process TCP training run on loopback, end to end, for each engine
# system: both processes finish, and their master copies are bitwise
# identical (checksums in the two manifests). Then stellatrain's controller
# across processes, with and without probes before the first iteration.
# Ends only the processes it started.
set -euo pipefail
BIN=$1
source "$(dirname "$0")/port_lib.sh"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

checksums() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['summary']['checksums'])" "$1"; }

# Runs ranks 1 and 0 of `train ARGS --out OUT/NAME` and checks that both
# finish with equal checksums (MATCH=any: finishing is enough, for the
# asynchronous systems whose clusters end with slightly different models);
# prints them.
run_pair() {  # name, train arguments...
  local name=$1
  shift
  local port=$(free_port)
  local args=(train --transport tcp --nodes 2 --master-port "$port" --model mlp --dataset synthetic
              --eval-interval 0 --peer-timeout 20 --quiet --out "$OUT/$name" "$@")
  "$BIN" "${args[@]}" --rank 1 > "$OUT/$name.rank1.log" 2>&1 &
  local peer=$!
  if ! timeout 120 "$BIN" "${args[@]}" --rank 0 > "$OUT/$name.rank0.log" 2>&1; then
    kill "$peer" 2>/dev/null || true
    echo "FAIL $name: rank 0 failed"; cat "$OUT/$name.rank0.log" "$OUT/$name.rank1.log"; exit 1
  fi
  if ! wait "$peer"; then echo "FAIL $name: rank 1 failed"; cat "$OUT/$name.rank1.log"; exit 1; fi
  local sum0 sum1
  sum0=$(checksums "$OUT/$name/manifest.json")
  sum1=$(checksums "$OUT/$name/rank1/manifest.json")
  if [ "${MATCH:-equal}" = equal ] && [ "$sum0" != "$sum1" ]; then echo "FAIL $name: checksums differ: $sum0 vs $sum1"; exit 1; fi
  echo "ok $name: checksums $sum0"
}

# ddp-gloo is left out of builds against another LibTorch (ST_WITH_DDP_GLOO=OFF).
systems="stellatrain ddp topk-sync"
[ "${ST_WITH_DDP_GLOO:-ON}" = ON ] && systems="$systems ddp-gloo"
for system in $systems; do
  run_pair "$system" --system "$system" --iterations 20
done
# local-sgd ends on an averaging round (20 = 5 x 4): equal models.
run_pair local-sgd --system local-sgd --iterations 20 --averaging-period 4
MATCH=any run_pair cloudless-ma --system cloudless-ma --iterations 20 --averaging-period 4
MATCH=any run_pair cloudless-asgd-ga --system cloudless-asgd-ga --iterations 20 --accumulation-steps 3

# stellatrain's controller across processes: telemetry and plans over TCP,
# every plan applied on both ranks at the same iteration (equal checksums),
# drains of the queue (plans with two settings) included.
run_pair controlled --system stellatrain --iterations 400 --controller --control-interval 0.05 \
  --control-drain-every-ticks 3
plans=$(awk -F, 'NR > 1 && $3 != -1' "$OUT/controlled/control.csv" | wc -l)
if [ "$plans" -lt 1 ]; then echo "FAIL controller: no plan in control.csv"; cat "$OUT/controlled/control.csv"; exit 1; fi
drains=$(grep -c "drain: 4 iterations" "$OUT/controlled/control.csv" || true)
if [ "$drains" -lt 1 ]; then echo "FAIL controller: no drain in control.csv"; cat "$OUT/controlled/control.csv"; exit 1; fi
echo "ok controller over tcp: $plans plan(s), $drains with a drain"

# Probes before the first iteration (--control-probe-at-start): rank 1
# begins only once it has answered them, across processes too.
run_pair probed-at-start --system stellatrain --iterations 100 --controller --control-interval 0.05 \
  --control-probe-at-start
ticks=$(awk 'NR > 1' "$OUT/probed-at-start/control.csv" | wc -l)
if [ "$ticks" -lt 1 ]; then echo "FAIL probe at start: no tick in control.csv"; exit 1; fi
echo "ok controller over tcp with probes at the start: $ticks tick(s)"
