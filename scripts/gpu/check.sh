#!/usr/bin/env bash
# The GPU check, one command on a machine with a CUDA GPU (docs/gpu.md):
# build against the machine's CUDA LibTorch (scripts/gpu/build.sh), run the
# device tests on the GPU, measure the GPU profile, train the CNN 2 x 2 on
# cuda (real backend, target 85%), run the GPU scenario on ns-3, draw the
# timelines, and pack everything under one folder.
#
#   bash scripts/gpu/check.sh            # every step in turn
#   bash scripts/gpu/check.sh STEP...    # some: build test profile cnn scenario pack
#
# Steps can run in separate calls (a lent machine allows 10 minutes per
# command): the build folder and results stay while the machine does.
# Results: $RESULTS (default results/gpu-check): one log per step,
# steps.tsv (step, status, seconds), machine.txt, the measured profile, the
# runs with their figures and timelines; `pack` writes gpu-check.tar.gz
# there and, when $OUT is set, copies it and the small summaries into $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
RESULTS=${RESULTS:-results/gpu-check}
BUILD_DIR=${BUILD_DIR:-build-gpu}
PROFILE=scenarios/profiles/gpu-measured.yaml
mkdir -p "$RESULTS"
APP="$BUILD_DIR/apps/stellatrain"

say() { echo "gpu-check: $*" | tee -a "$RESULTS/check.log"; }

# Runs step $1 (a function of that name), logging to $RESULTS/$1.log and
# recording its status; a failed step does not stop the later ones (each
# says what it needs), except the build. Call it outside any condition
# (not in `if`, `||` or `!`): bash ignores `set -e` there, also inside the
# step's subshell, and a failing command would go unnoticed.
run_step() {
  local name=$1 start=$SECONDS status
  say "step $name: start"
  ( set -e; "step_$name" ) > "$RESULTS/$name.log" 2>&1
  status=$?
  printf '%s\t%s\t%d\n' "$name" "$([ $status -eq 0 ] && echo ok || echo "FAILED($status)")" $((SECONDS - start)) \
    >> "$RESULTS/steps.tsv"
  if [ $status -eq 0 ]; then say "step $name: ok ($((SECONDS - start)) s)"
  else say "step $name: FAILED ($status), last lines of $RESULTS/$name.log:"; tail -15 "$RESULTS/$name.log"; fi
  return $status
}

load_env() {
  if [ ! -f "$BUILD_DIR/env.sh" ]; then
    echo "no $BUILD_DIR/env.sh: run the build step first (bash scripts/gpu/check.sh build)"; return 1
  fi
  # shellcheck disable=SC1091
  source "$BUILD_DIR/env.sh"
}

step_build() {
  BUILD_DIR="$BUILD_DIR" bash scripts/gpu/build.sh
  {
    echo "date: $(date -u +%FT%TZ)"
    echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 || echo "nvidia-smi: not available"
    python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "devices", torch.cuda.device_count())' 2>&1
    echo "cpu: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  } > "$RESULTS/machine.txt"
  cat "$RESULTS/machine.txt"
}

# The device tests must run, not skip: on a GPU machine a skipped CUDA test
# means the build or the driver is not what this check is for.
step_test() {
  load_env
  "$BUILD_DIR/tests/device_test" --gtest_brief=0 | tee "$RESULTS/device_test.txt"
  if grep -qE '^\[  SKIPPED \] Cuda(Staging|Training)\.' "$RESULTS/device_test.txt"; then
    echo "device_test skipped its CUDA tests: LibTorch sees no GPU here"; return 1
  fi
  ctest --test-dir "$BUILD_DIR" -L unit -j "$(nproc)" --output-on-failure | tail -25
}

gpu_slug() {
  nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-' || true
}

step_profile() {
  load_env
  local name
  name=$(gpu_slug)
  [ -n "$name" ] || name=cuda-gpu
  # At the GPU scenario's input (Fashion-MNIST, 1x28x28, 10 classes).
  # The GPU scenario names its device `gpu-measured` (whatever GPU measured
  # it); which GPU that was goes into the file's header.
  local measured
  measured=$(mktemp)
  "$APP" bench profile --compute-device cuda --models cnn,resnet18 --batch 64 --input 1,28,28,10 --device gpu-measured \
    --out "$measured"
  {
    head -1 "$measured"
    echo "# Measured by scripts/gpu/check.sh (profile step) on $(date -u +%F): $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 || echo "$name")"
    echo "# $(python3 -c 'import torch; print("LibTorch", torch.__version__)' 2>/dev/null), $(nproc)-core host; commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)."
    echo "# Re-running the step on another GPU replaces this file (the GPU scenario reads it: scenarios/gpu/)."
    tail -n +2 "$measured"
  } > "$PROFILE"
  rm -f "$measured"
  cp "$PROFILE" "$RESULTS/"
  cat "$PROFILE"
}

# Best accuracy of every system of a run folder, and whether `need` reached.
check_accuracy() {
  python3 - "$1" "$2" <<'EOF'
import json, sys
summary = json.load(open(sys.argv[1] + "/summary.json"))
need = float(sys.argv[2])
ok = True
for label, s in summary["systems"].items():
    best = s.get("best_accuracy") or 0
    print(f"{label}: best accuracy {best:.4f}, error {s.get('error', 'none')}")
    ok &= best >= need
sys.exit(0 if ok else 1)
EOF
}

step_cnn() {
  load_env
  local out="$RESULTS/cnn-2x2-cuda"
  "$APP" run scenarios/gpu/cnn-2x2-cuda.yaml --timeline --out "$out"
  "$APP" plot "$out" || true
  python3 analysis/plot_timeline.py "$out/stellatrain/timeline.json" --out "$RESULTS/timeline-cnn-stellatrain.png" \
    --title "stellatrain, CNN 2 x 2 on $(gpu_slug) (real backend)" || true
  python3 analysis/plot_timeline.py "$out/ddp/timeline.json" --out "$RESULTS/timeline-cnn-ddp.png" \
    --title "ddp, CNN 2 x 2 on $(gpu_slug) (real backend)" || true
  check_accuracy "$out" 0.85
}

step_scenario() {
  load_env
  # The profile step's own copy wins: a machine that re-sends the working
  # tree before each call (a lent GPU box) resets $PROFILE to the shipped one.
  [ -f "$RESULTS/$(basename "$PROFILE")" ] && cp "$RESULTS/$(basename "$PROFILE")" "$PROFILE"
  [ -f "$PROFILE" ] || { echo "no $PROFILE: run the profile step first"; return 1; }
  local out="$RESULTS/resnet18-fmnist-fluct-115"
  local shorter=()
  [ -n "${SCENARIO_ITERATIONS:-}" ] && shorter=(--iterations "$SCENARIO_ITERATIONS")
  # The three systems side by side (each ns-3 simulation runs on one core).
  "$APP" run scenarios/gpu/resnet18-fmnist-fluct-115.yaml --jobs 3 --timeline --out "$out" "${shorter[@]}"
  "$APP" plot "$out"
  python3 analysis/plot_timeline.py "$out/stellatrain/timeline.json" --out "$RESULTS/timeline-resnet18-stellatrain.png" \
    --title "stellatrain, ResNet-18 2 x 2 on $(gpu_slug), fluct-115 (ns-3)" || true
  cat "$out/report.md" 2>/dev/null | head -40
}

step_pack() {
  # Timelines are large; the figures drawn from them travel instead.
  tar czf "$RESULTS/../gpu-check.tar.gz" --exclude='timeline.json' --exclude='gpu-check.tar.gz' \
    -C "$(dirname "$RESULTS")" "$(basename "$RESULTS")"
  mv "$RESULTS/../gpu-check.tar.gz" "$RESULTS/gpu-check.tar.gz"
  ls -la "$RESULTS/gpu-check.tar.gz"
  if [ -n "${OUT:-}" ]; then
    cp "$RESULTS/gpu-check.tar.gz" "$RESULTS/steps.tsv" "$RESULTS/check.log" "$OUT/" 2>/dev/null || true
    [ -f "$RESULTS/machine.txt" ] && cp "$RESULTS/machine.txt" "$OUT/"
    [ -f "$PROFILE" ] && cp "$PROFILE" "$OUT/"
    ls "$OUT"
  fi
}

steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(build test profile cnn scenario pack)
failed=0
for s in "${steps[@]}"; do
  case $s in
    build|test|profile|cnn|scenario|pack) ;;
    *) echo "gpu-check: unknown step '$s' (steps: build test profile cnn scenario pack)"; exit 2 ;;
  esac
  run_step "$s"
  status=$?
  if [ $status -ne 0 ]; then
    failed=1
    [ "$s" = build ] && { say "the build failed: later steps need it"; break; }
  fi
done
say "steps so far ($RESULTS/steps.tsv):"
column -t "$RESULTS/steps.tsv" 2>/dev/null || cat "$RESULTS/steps.tsv"
exit $failed
