#!/usr/bin/env bash
# Regenerates every results table and figure that README.md and docs/ quote,
# from the shipped scenario files, into results/ (and the figures into
# docs/figures/). Each step prints the command it runs; results/MACHINE.txt
# records the machine, the commit and the math-kernel level, which every
# quoted table must name beside its command.
#
#   bash scripts/regenerate_results.sh                 # every step
#   bash scripts/regenerate_results.sh headline paper  # some steps
#   JOBS=4 bash scripts/regenerate_results.sh headline # runs side by side (sim)
#
# Steps and what they cost on the 2-core build machine (simulated results
# are deterministic: the same on any machine under the pinned math level;
# only the wall time depends on the host); the paper-regime steps' code is
# in scripts/regenerate/:
#   sweep     the headline's learning rates, decided on the validation set
#             (about 1 hour): prints the best per system; copy them into
#             scenarios/fluct-115mbps.yaml, then run `headline`
#   headline  README's table and figures: fluct-115mbps, 5 paired seeds,
#             3 systems, evaluations every 2 iterations on the whole test
#             set until 87%: about 100 evaluations of 3-5 s per run, so
#             about 2 hours with JOBS=2 (1 h 39 min on the 2-core Intel Xeon
#             on 2026-11-26 with other work beside it; runs took 580-1030 s)
#   systems   docs/systems.md: every system over the same links, seed 1
#             (about 30 minutes)
#   paper     docs/sim.md's paper-regime table: ResNet-152 and ViT-B/16 in
#             timing mode on three links, and the controller's rules on
#             ResNet-152 there (docs/control.md; about 70 minutes)
#   fast      docs/sim-speed.md's "Fast modes against the faithful one": each
#             paper and scale scenario in the faithful mode and with the
#             flow-level WAN and sampled stages (scripts/compare_fast_modes.sh;
#             about 1 hour, one mode at a time so the wall times compare;
#             the 16-cluster one without its faithful mode, which needs
#             17 GB)
#   paper-tta docs/paper-tta.md's table against the paper: the CNN priced
#             by the H100 profile at three links, every system, three
#             paired seeds, its convergence variants and the same links
#             with each cluster holding its own classes, and fluct-115
#             with half and 90% of each class at home (at 100 and
#             500 Mbps too), then TTA against that skew (399 runs, about
#             8 hours with JOBS=2 on 2 cores), ResNet-18's controller in
#             timing mode at the three links (166 runs of 7-22 s), and
#             ResNet-18 on a
#             CUDA GPU (scripts/gpu/paper_tta.sh) when build-gpu/ holds a
#             CUDA build; elsewhere its rows come from results that run left
#             in $OUT/paper-tta-gpu/, else from the recorded H200 runs in
#             docs/results/paper-tta-gpu/ (docs/results/README.md)
#   paper-tta-sweep  the CNN workload's learning rates for stellatrain,
#             ddp and the baselines, the controller's link_utilization with the density
#             warm-up, and the soonest-target rule's sparsity_cost and
#             variant, decided on the validation set, and the checks of the
#             label-skewed scenarios' rates (three links) and constant,
#             and two convergence changes, the density warm-up's
#             length, two density floors and five gradient-clipping
#             norms on the skewed placement, and the picked norm on the
#             even placement, at the other links and at half skew (about
#             4.5 hours)
#   paper-tta-seeds  docs/paper-tta-controller.md's "Twelve seeds at 500 Mbps" and
#             docs/paper-tta-label-skew.md's "Twelve seeds": the rule
#             against fixed densities over twelve paired seeds, at
#             500 Mbps (and six validation seeds of fixed densities there)
#             and at fluct-115 with each cluster holding its own classes;
#             the early-tick variants on validation at the three links and
#             on the twelve test seeds at 500 Mbps; the picked variant's
#             table rows over six test seeds at every link, and on the
#             label-skewed placements, six seeds on the half file and
#             twelve at fluct-115 and 100 Mbps with full skew and with
#             90% at home at 500 Mbps, with fixed 9% and 11% beside fixed
#             10% at fluct-115 and fixed 27% and 33% beside fixed 30% at
#             500 Mbps, and gradient clipping at the norm picked on
#             validation over the twelve fluct-115 full-skew seeds and
#             six at 100 and 500 Mbps (576 runs, about 10.5 hours with
#             JOBS=2 on 2 cores, runs of about 2 minutes two at a time)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/apps/stellatrain}
JOBS=${JOBS:-$(nproc)}
OUT=${OUT:-results}
[ -x "$BIN" ] || { echo "regenerate_results: $BIN is missing; build first (bash scripts/build.sh)" >&2; exit 2; }
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(headline systems paper fast)  # sweep only when asked: it changes a scenario by hand

run() {  # prints one command on stderr (its stdout stays the command's own) and runs it
  echo "+ $*" >&2
  "$@"
}

record_machine() {
  mkdir -p "$OUT"
  {
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (uncommitted changes)')"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
    echo "cores: $(nproc)"
    echo "math: ST_MATH=${ST_MATH:-avx2} (core/model/math_kernels.h)"
  } > "$OUT/MACHINE.txt"
  cat "$OUT/MACHINE.txt"
}

step_sweep() {
  # Evaluations every 10 iterations on the whole validation set: a ranking
  # needs less resolution than a reported TTA. An edge-best value extends
  # the grid by itself (apps/sweep_grid.h).
  run "$BIN" sweep scenarios/fluct-115mbps.yaml --systems stellatrain --lr 0.05,0.1,0.2 --seeds 2 \
    --eval-interval 10 --quiet --out "$OUT/sweep-stellatrain"
  run "$BIN" sweep scenarios/fluct-115mbps.yaml --systems ddp,topk-sync --lr 0.025,0.05,0.1 --seeds 2 \
    --eval-interval 10 --quiet --out "$OUT/sweep-ddp-topk"
  echo "sweep: the best learning rate per system is in $OUT/sweep-*/sweep.json (\"best\");"
  echo "sweep: put them in scenarios/fluct-115mbps.yaml, then: bash scripts/regenerate_results.sh headline"
}

step_headline() {
  run "$BIN" run scenarios/fluct-115mbps.yaml --jobs "$JOBS" --quiet --out "$OUT/fluct-115mbps"
  run "$BIN" plot "$OUT/fluct-115mbps"
  cp "$OUT/fluct-115mbps/figures/tta.png" docs/figures/fluct-115mbps-tta.png
  [ -f "$OUT/fluct-115mbps/figures/controller.png" ] &&
    cp "$OUT/fluct-115mbps/figures/controller.png" docs/figures/fluct-115mbps-controller.png
  run python3 analysis/seed_table.py "$OUT/fluct-115mbps"
}

step_systems() {
  run "$BIN" run scenarios/systems-115mbps.yaml --jobs "$JOBS" --quiet --out "$OUT/systems-115mbps"
  run "$BIN" plot "$OUT/systems-115mbps"
  cp "$OUT/systems-115mbps/figures/tta.png" docs/figures/systems-115mbps-tta.png
  run python3 analysis/seed_table.py "$OUT/systems-115mbps"
}

# The paper-regime steps, one file per family.
source scripts/regenerate/paper.sh
source scripts/regenerate/paper_tta.sh
source scripts/regenerate/paper_tta_seeds.sh

record_machine
for step in "${steps[@]}"; do
  case "$step" in
    sweep | headline | systems | paper | fast) echo "== $step"; "step_$step" ;;
    paper-tta | paper-tta-sweep | paper-tta-seeds) echo "== $step"; "step_${step//-/_}" ;;
    *) echo "regenerate_results: unknown step '$step' (sweep, headline, systems, paper, fast, paper-tta, paper-tta-sweep, paper-tta-seeds)" >&2
       exit 2 ;;
  esac
done
echo "regenerate_results: done; quote tables with their command and $OUT/MACHINE.txt"
