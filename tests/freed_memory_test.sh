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
source "$SOURCE_DIR/tests/e2e_lib.sh"
cd "$WORK"

echo "== an unknown ST_MALLOC is refused"
expect_error "ST_MALLOC=bogus: not one of keep, glibc" env ST_MALLOC=bogus "$BIN" info
echo "ok: $(cat out.txt)"

echo "== the headline, 10 iterations, seed 1, under both settings"
write_quick_headline headline.yaml "$SOURCE_DIR"
run_headline() {  # out folder, then env's arguments for the setting
  local out=$1
  shift
  env "$@" "$BIN" run headline.yaml --systems stellatrain --seeds 1 --iterations 10 --quiet --out "$out" \
    > "$out.log" 2>&1 || { cat "$out.log"; fail "the run into $out"; }
}
run_headline glibc ST_MALLOC=glibc
run_headline default -u ST_MALLOC
for file in iterations.csv eval.csv control.csv link.csv; do
  cmp -s "glibc/stellatrain/$file" "default/stellatrain/$file" || fail "stellatrain/$file differs between the settings"
done
grep -q '"malloc": "glibc"' glibc/stellatrain/host_cost.json || fail "host_cost.json does not say glibc"
grep -q '"malloc": "keep"' default/stellatrain/host_cost.json || fail "host_cost.json does not say keep by default"
echo "ok: identical results; host_cost.json names the setting"
