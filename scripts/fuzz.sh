#!/usr/bin/env bash
# Runs every libFuzzer target (fuzz/) for FUZZ_SECONDS each (default 60),
# two at a time, from the seed corpora: fuzz/corpus/<target>/ plus the files
# the repository ships for that format (scenarios, traces). First replays
# fuzz/regressions/<target>/ (inputs that once crashed). Fails on any crash,
# leak, timeout (FUZZ_TIMEOUT seconds on one input, default 10) or
# out-of-memory; prints executions and coverage per target and writes them
# to $FUZZ_OUT/summary.txt. Builds build-asan first (scripts/sanitize.sh).
#   FUZZ_SECONDS=600 scripts/fuzz.sh [target ...]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_TIMEOUT=${FUZZ_TIMEOUT:-10}
FUZZ_OUT=${FUZZ_OUT:-$root/build-asan/fuzz-out}
JOBS=${JOBS:-$(nproc)}
source scripts/clang-build.sh
configure_clang build-asan address,undefined -DST_FUZZ=ON
echo "fuzz: building the fuzz targets in build-asan"
cmake --build build-asan -j "$JOBS" --target fuzz_targets > "$FUZZ_OUT.build.log" 2>&1 || {
  tail -40 "$FUZZ_OUT.build.log"; exit 1; }

targets=("$@")
[ ${#targets[@]} -eq 0 ] && read -r -a targets <<< "$(tr ';' ' ' < build-asan/fuzz/targets.txt)"

# The files the repository ships in each format are seeds too.
shipped_seeds() {
  case "$1" in
    fuzz_trace_csv) ls traces/*.csv ;;
    fuzz_scenario) find scenarios -name '*.yaml' ! -path '*/profiles/*' ;;
    fuzz_sim_config) ls scenarios/sim-*.yaml ;;
  esac
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

fuzz_one() {
  local t=$1 bin=build-asan/fuzz/$1 work=$FUZZ_OUT/$1
  rm -rf "$work"; mkdir -p "$work/corpus" "$work/seeds" "$work/artifacts"
  cp fuzz/corpus/"$t"/* "$work/seeds/" 2>/dev/null || true
  local f; for f in $(shipped_seeds "$t"); do cp "$f" "$work/seeds/$(echo "$f" | tr / _)"; done
  if compgen -G "fuzz/regressions/$t/*" > /dev/null; then
    "$bin" -timeout="$FUZZ_TIMEOUT" fuzz/regressions/"$t"/* > "$work/regressions.log" 2>&1 || {
      echo "fuzz: $t: a regression input fails again:"; tail -30 "$work/regressions.log"; return 1; }
  fi
  # Relative paths in the seeds resolve against the fuzz target's folder of
  # choice (see fuzz/*.cc); run from the work folder so nothing lands elsewhere.
  (cd "$work" && "$root/$bin" -max_total_time="$FUZZ_SECONDS" -timeout="$FUZZ_TIMEOUT" -rss_limit_mb=2560 \
      -max_len=65536 -print_final_stats=1 -artifact_prefix="$work/artifacts/" corpus seeds) > "$work/fuzz.log" 2>&1
}

summary() {  # target -> one line: executions, coverage, corpus, result
  local t=$1 log=$FUZZ_OUT/$1/fuzz.log status=$2
  local execs cov ft corp
  execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | awk '{print $2}' | tail -1)
  cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -1 | awk '{print $2}')
  ft=$(grep -Eo 'ft: [0-9]+' "$log" | tail -1 | awk '{print $2}')
  corp=$(grep -Eo 'corp: [0-9]+' "$log" | tail -1 | awk '{print $2}')
  printf '%-16s %10s execs %6s edges %6s features %5s inputs  %s\n' "$t" "${execs:-?}" "${cov:-?}" "${ft:-?}" \
    "${corp:-?}" "$status"
}

mkdir -p "$FUZZ_OUT"
echo "fuzz: ${#targets[@]} targets, ${FUZZ_SECONDS} s each, $JOBS at a time (logs in $FUZZ_OUT)"
declare -A pid_of
failed=()
: > "$FUZZ_OUT/summary.txt"
run_batch() {
  local t
  for t in "$@"; do fuzz_one "$t" & pid_of[$t]=$!; done
  for t in "$@"; do
    if wait "${pid_of[$t]}"; then summary "$t" ok | tee -a "$FUZZ_OUT/summary.txt"
    else
      summary "$t" FAILED | tee -a "$FUZZ_OUT/summary.txt"; failed+=("$t")
      grep -E "ERROR|SUMMARY|Test unit written|==[0-9]+==" "$FUZZ_OUT/$t/fuzz.log" | head -20 || true
    fi
  done
}
for ((i = 0; i < ${#targets[@]}; i += JOBS)); do run_batch "${targets[@]:i:JOBS}"; done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (the inputs are in $FUZZ_OUT/<target>/artifacts/)"
  exit 1
fi
echo "fuzz: no crashes, leaks or timeouts"
