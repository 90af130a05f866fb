#!/usr/bin/env bash
# Keeping freed memory (core/runtime/freed_memory.h) changes no result: a
# short run of the headline under ST_MALLOC=glibc and under the default
# (keep) writes byte-identical results, and host_cost.json says which
# setting each ran with; an unknown ST_MALLOC is refused, naming it.
# The speed-up is measured by scripts/bench_freed_memory.py, not here.
# Usage: freed_memory_test.sh path/to/stellatrain
set -euo pipefail
BIN=$(realpath "${1:?usage: freed_memory_test.sh path/to/stellatrain}")
SOURCE_DIR=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/st-freed-memory.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$SOURCE_DIR"
fail() { echo "FAIL: $*"; exit 1; }

echo "== an unknown ST_MALLOC is refused"
if ST_MALLOC=bogus "$BIN" info > "$WORK/bogus.log" 2>&1; then fail "ST_MALLOC=bogus was accepted"; fi
grep -q "ST_MALLOC=bogus: not one of keep, glibc" "$WORK/bogus.log" || { cat "$WORK/bogus.log"; fail "no message naming ST_MALLOC=bogus"; }
echo "ok: $(cat "$WORK/bogus.log")"

echo "== the headline, 10 iterations, seed 1, under both settings"
sed -e 's/^eval: .*/eval: {interval: 5, samples: 2000}/' scenarios/fluct-115mbps.yaml > "$WORK/headline.yaml"
sed -i "s#\.\./traces/#$SOURCE_DIR/traces/#; s#profiles/cpu-2core.yaml#$SOURCE_DIR/scenarios/profiles/cpu-2core.yaml#" "$WORK/headline.yaml"
grep -q '^eval: {interval: 5' "$WORK/headline.yaml" || fail "could not set the evaluation of the copy"
for setting in glibc default; do
  if [ "$setting" = default ]; then env -u ST_MALLOC "$BIN" run "$WORK/headline.yaml" --systems stellatrain --seeds 1 \
      --iterations 10 --quiet --out "$WORK/$setting" > "$WORK/$setting.log" 2>&1
  else ST_MALLOC=$setting "$BIN" run "$WORK/headline.yaml" --systems stellatrain --seeds 1 --iterations 10 --quiet \
      --out "$WORK/$setting" > "$WORK/$setting.log" 2>&1
  fi || { cat "$WORK/$setting.log"; fail "the run with ST_MALLOC $setting"; }
done
for file in iterations.csv eval.csv control.csv link.csv; do
  cmp -s "$WORK/glibc/stellatrain/$file" "$WORK/default/stellatrain/$file" || fail "stellatrain/$file differs between the settings"
done
grep -q '"malloc": "glibc"' "$WORK/glibc/stellatrain/host_cost.json" || fail "host_cost.json does not say glibc"
grep -q '"malloc": "keep"' "$WORK/default/stellatrain/host_cost.json" || fail "host_cost.json does not say keep by default"
echo "ok: identical results; host_cost.json names the setting"
