#!/usr/bin/env bash
# A 2-process TCP training run on loopback, end to end, for each engine
# system: both processes finish, and their master copies are bitwise
# identical (checksums in the two manifests). Ends only the processes it
# started.
set -euo pipefail
BIN=$1
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
for system in stellatrain ddp topk-sync ddp-gloo; do
  PORT=$(( 20000 + (RANDOM % 20000) ))
  args=(train --system "$system" --transport tcp --nodes 2 --master-port "$PORT" --model mlp --dataset synthetic
        --iterations 20 --eval-interval 0 --peer-timeout 20 --quiet --out "$OUT/$system")
  "$BIN" "${args[@]}" --rank 1 > "$OUT/$system.rank1.log" 2>&1 &
  peer=$!
  if ! timeout 120 "$BIN" "${args[@]}" --rank 0 > "$OUT/$system.rank0.log" 2>&1; then
    kill "$peer" 2>/dev/null || true
    echo "FAIL $system: rank 0 failed"; cat "$OUT/$system.rank0.log" "$OUT/$system.rank1.log"; exit 1
  fi
  if ! wait "$peer"; then echo "FAIL $system: rank 1 failed"; cat "$OUT/$system.rank1.log"; exit 1; fi
  sum0=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['summary']['checksums'])" "$OUT/$system/manifest.json")
  sum1=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['summary']['checksums'])" "$OUT/$system/rank1/manifest.json")
  if [ "$sum0" != "$sum1" ]; then echo "FAIL $system: checksums differ: $sum0 vs $sum1"; exit 1; fi
  echo "ok $system: checksums $sum0"
done

# stellatrain's controller across processes: telemetry and plans over TCP,
# every plan applied on both ranks at the same iteration (equal checksums).
PORT=$(( 20000 + (RANDOM % 20000) ))
args=(train --system stellatrain --transport tcp --nodes 2 --master-port "$PORT" --model mlp --dataset synthetic
      --iterations 400 --eval-interval 0 --peer-timeout 20 --quiet --controller --control-interval 0.05
      --out "$OUT/controlled")
"$BIN" "${args[@]}" --rank 1 > "$OUT/controlled.rank1.log" 2>&1 &
peer=$!
if ! timeout 120 "$BIN" "${args[@]}" --rank 0 > "$OUT/controlled.rank0.log" 2>&1; then
  kill "$peer" 2>/dev/null || true
  echo "FAIL controller: rank 0 failed"; cat "$OUT/controlled.rank0.log" "$OUT/controlled.rank1.log"; exit 1
fi
if ! wait "$peer"; then echo "FAIL controller: rank 1 failed"; cat "$OUT/controlled.rank1.log"; exit 1; fi
sum0=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['summary']['checksums'])" "$OUT/controlled/manifest.json")
sum1=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['summary']['checksums'])" "$OUT/controlled/rank1/manifest.json")
if [ "$sum0" != "$sum1" ]; then echo "FAIL controller: checksums differ: $sum0 vs $sum1"; exit 1; fi
plans=$(awk -F, 'NR > 1 && $3 != -1' "$OUT/controlled/control.csv" | wc -l)
if [ "$plans" -lt 1 ]; then echo "FAIL controller: no plan in control.csv"; cat "$OUT/controlled/control.csv"; exit 1; fi
echo "ok controller over tcp: $plans plan(s), checksums $sum0"
