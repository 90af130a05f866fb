#!/usr/bin/env bash
# Runs one scenario in its faithful mode and in the fast ones, then prints
# analysis/fast_modes_table.py's side-by-side table (docs/sim-speed.md, "Fast
# modes against the faithful one"):
#   packet-full     ns-3's packets, CPU stages at full size (the reference)
#   flow-full       the flow-level WAN (docs/sim-flow.md)
#   packet-sampled  stages on layer samples (timing runs only)
#   flow-sampled    both
# Each mode's `stellatrain run` is timed whole (setup included) into
# OUT/<mode>/wall_s.txt, one mode after another, so the wall times compare.
#
#   scripts/compare_fast_modes.sh SCENARIO OUT [extra `run` arguments, e.g. --iterations 6]
#
# SAMPLE (default 0.03125) is the sampled modes' share of each layer. A
# scenario that measures accuracy runs the two full-stage modes only. MODES
# picks some of them (e.g. MODES="packet-sampled flow-sampled" where the
# faithful run would not fit in memory); the table then compares with
# packet-sampled.
set -euo pipefail
cd "$(dirname "$0")/.."
SCENARIO=${1:?usage: compare_fast_modes.sh SCENARIO OUT [run arguments]}
OUT=${2:?usage: compare_fast_modes.sh SCENARIO OUT [run arguments]}
shift 2
STELLATRAIN=${STELLATRAIN:-build/apps/stellatrain}
SAMPLE=${SAMPLE:-0.03125}
[ -x "$STELLATRAIN" ] || { echo "no $STELLATRAIN: build first (scripts/build.sh)" >&2; exit 1; }
modes="packet-full flow-full"
grep -Eq '^\s*math:\s*timing' "$SCENARIO" && modes="$modes packet-sampled flow-sampled"
modes=${MODES:-$modes}
mkdir -p "$OUT"
for mode in $modes; do
  network=${mode%-*}
  stages=${mode#*-}
  sample=0
  [ "$stages" = sampled ] && sample=$SAMPLE
  sample_args=()
  grep -Eq '^\s*math:\s*timing' "$SCENARIO" && sample_args=(--stage-sample "$sample")
  rm -rf "${OUT:?}/$mode"
  echo "== $mode: $STELLATRAIN run $SCENARIO --network $network ${sample_args[*]} $*"
  start=$(date +%s.%N)
  "$STELLATRAIN" run "$SCENARIO" --network "$network" "${sample_args[@]}" --quiet --out "$OUT/$mode" "$@" > "$OUT/$mode.log" 2>&1 ||
    { tail -20 "$OUT/$mode.log"; echo "failed: $mode (log: $OUT/$mode.log)" >&2; exit 1; }
  end=$(date +%s.%N)
  python3 -c "print(f'{$end - $start:.2f}')" > "$OUT/$mode/wall_s.txt"
  echo "   $(cat "$OUT/$mode/wall_s.txt") s"
done
analysis/fast_modes_table.py "$OUT"
