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
# only the wall time depends on the host):
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
#             8 hours with JOBS=2 on 2 cores), and ResNet-18 on a
#             CUDA GPU (scripts/gpu/paper_tta.sh) when build-gpu/ holds a
#             CUDA build; elsewhere its rows come from results that run left
#             in $OUT/paper-tta-gpu/, or are named as missing
#   paper-tta-sweep  the CNN workload's learning rates for stellatrain,
#             ddp and the baselines, the controller's link_utilization with the density
#             warm-up, and the soonest-target rule's sparsity_cost and
#             variant, decided on the validation set, and the checks of the
#             label-skewed scenarios' rates (three links) and constant,
#             and two convergence changes, the density warm-up's
#             length and two density floors on the skewed placement
#             (about 3.9 hours)
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
#             500 Mbps (504 runs, about 9 hours with JOBS=2 on 2 cores,
#             runs of about 2 minutes two at a time)
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

step_paper() {
  local dirs=()
  for f in resnet152-fluct-115 resnet152-const-100 resnet152-const-500 vit-b16-fluct-115 vit-b16-const-100 \
    vit-b16-const-500; do
    run "$BIN" run "scenarios/paper/$f.yaml" --jobs "$JOBS" --quiet --out "$OUT/paper/$f"
    dirs+=("$OUT/paper/$f")
  done
  run python3 analysis/timing_table.py "${dirs[@]}"
  # The controller's density rules there, with and without the parameter
  # load in the compute window (docs/control-bottleneck.md).
  local link
  for link in fluct-115 const-100 const-500; do
    run "$BIN" run "scenarios/paper/resnet152-$link-controller.yaml" --jobs "$JOBS" --quiet \
      --out "$OUT/paper/resnet152-$link-controller"
    run python3 analysis/density_report.py "$OUT/paper/resnet152-$link-controller"
    run python3 analysis/density_report.py "$OUT/paper/resnet152-$link-controller" --after 10
  done
  # The paper's rule and the soonest target over 100 iterations at the
  # constant links (one seed: a constant link gives every seed the same
  # numbers), and the paper's rule and the soonest target on the trace,
  # three seeds.
  local long_runs=paper-rule,paper-rule-load,paper-rule-load-once,paper-rule-load-once-resume
  long_runs+=,paper-rule-load-once-resume-ceiling,soonest-load-once-resume,soonest-load-once-resume-ceiling
  long_runs+=,paper-rule-load-once-resume-ceiling-start,soonest-load-once-resume-ceiling-start
  long_runs+=,paper-rule-load-once-resume-ceiling-start-skip-lag,soonest-load-once-resume-ceiling-start-skip-lag
  long_runs+=,paper-rule-load-once-resume-ceiling-start-skip-lag-tick-0.5
  long_runs+=,soonest-load-once-resume-ceiling-start-skip-lag-tick-0.5
  long_runs+=,paper-rule-load-once-resume-ceiling-start-skip-lag-tick-0.5-early
  long_runs+=,soonest-load-once-resume-ceiling-start-skip-lag-tick-0.5-early
  long_runs+=,paper-rule-load-once-resume-ceiling-start-pair-tick-0.5
  long_runs+=,soonest-load-once-resume-ceiling-start-pair-tick-0.5
  long_runs+=,paper-rule-load-once-resume-ceiling-start-skip-lag-tick-0.5-switch-next
  long_runs+=,soonest-load-once-resume-ceiling-start-skip-lag-tick-0.5-switch-next
  long_runs+=,paper-rule-load-once-resume-ceiling-start-pair-tick-0.5-switch-fresh
  long_runs+=,soonest-load-once-resume-ceiling-start-pair-tick-0.5-switch-fresh
  long_runs+=,paper-rule-load-once-resume-ceiling-start-pair-tick-0.5-switch-plan
  long_runs+=,soonest-load-once-resume-ceiling-start-pair-tick-0.5-switch-plan
  long_runs+=,paper-rule-load-once-resume-ceiling-start-pair-tick-0.5-switch-fresh-prev
  long_runs+=,soonest-load-once-resume-ceiling-start-pair-tick-0.5-switch-fresh-prev
  long_runs+=,paper-rule-load-once-resume-ceiling-start-pair-tick-0.5-switch-fresh-prev-safety-1-decrease-0.5
  long_runs+=,soonest-load-once-resume-ceiling-start-pair-tick-0.5-switch-fresh-prev-safety-1-decrease-0.5
  long_runs+=,paper-rule-load-once-resume-ceiling-start-pair-tick-0.5-switch-fresh-prev-safety-1-decrease-0.5-drain
  long_runs+=,soonest-load-once-resume-ceiling-start-pair-tick-0.5-switch-fresh-prev-safety-1-decrease-0.5-drain
  for link in const-100 const-500; do
    run "$BIN" run "scenarios/paper/resnet152-$link-controller.yaml" --iterations 100 --seeds 1 --jobs "$JOBS" --quiet \
      --systems "$long_runs" --out "$OUT/paper/resnet152-$link-controller-100it"
    run python3 analysis/density_report.py "$OUT/paper/resnet152-$link-controller-100it" --after 10
  done
  run "$BIN" run scenarios/paper/resnet152-fluct-115-controller.yaml --iterations 100 --jobs "$JOBS" --quiet \
    --systems paper-rule-load-once,paper-rule-load-once-resume,paper-rule-load-once-resume-ceiling,paper-rule-load-once-resume-ceiling-start,soonest-load-once-resume-ceiling,soonest-load-once-resume-ceiling-start \
    --out "$OUT/paper/resnet152-fluct-115-controller-100it"
  run python3 analysis/density_report.py "$OUT/paper/resnet152-fluct-115-controller-100it" --after 10
  # Ten seeds on the trace, where three do not resolve the last three
  # options (docs/control-peer-lag.md, docs/control-reaction.md,
  # docs/control-switch.md, docs/control-rate.md, docs/control-overrun.md).
  local rule ten_seeds=""
  for rule in paper-rule soonest; do
    local chain=$rule-load-once-resume-ceiling-start
    ten_seeds+=,$chain,$chain-skip-lag,$chain-skip-lag-tick-0.5,$chain-skip-lag-tick-0.5-early,$chain-pair-tick-0.5
    ten_seeds+=,$chain-skip-lag-tick-0.5-switch-next,$chain-pair-tick-0.5-switch-fresh,$chain-pair-tick-0.5-switch-plan
    ten_seeds+=,$chain-pair-tick-0.5-switch-fresh-prev,$chain-pair-tick-0.5-switch-fresh-prev-safety-1-decrease-0.5
    ten_seeds+=,$chain-pair-tick-0.5-switch-fresh-prev-safety-1-decrease-0.5-drain
  done
  ten_seeds=${ten_seeds#,}
  run "$BIN" run scenarios/paper/resnet152-fluct-115-controller.yaml --iterations 100 --seeds 10 --jobs "$JOBS" \
    --quiet --systems "$ten_seeds" --out "$OUT/paper/resnet152-fluct-115-controller-10seeds"
  local base
  for base in {paper-rule,soonest}-load-once-resume-ceiling-start{,-skip-lag,-skip-lag-tick-0.5,-pair-tick-0.5-switch-fresh{,-prev,-prev-safety-1-decrease-0.5}}; do
    run python3 analysis/density_report.py "$OUT/paper/resnet152-fluct-115-controller-10seeds" --paired "$base"
    run python3 analysis/density_report.py "$OUT/paper/resnet152-fluct-115-controller-10seeds" --after 10 \
      --paired "$base"
  done
  # The measured rate against the link, tick by tick, and how late plans
  # reach the link.
  run python3 analysis/density_report.py "$OUT/paper/resnet152-fluct-115-controller-10seeds" --after 10 --rates
  run python3 analysis/density_report.py "$OUT/paper/resnet152-fluct-115-controller-10seeds" --after 10 --plan-delay
  # Where the unused link went: after which kind of controller tick.
  run python3 analysis/density_report.py "$OUT/paper/resnet152-fluct-115-controller-10seeds" --after 10 --losses
  # What the transport delivers when it always has bytes to send: ddp on
  # the same ten stretches (six iterations outlast every controller run).
  run "$BIN" run scenarios/paper/resnet152-fluct-115.yaml --systems ddp --iterations 6 --seeds 10 --jobs "$JOBS" \
    --quiet --out "$OUT/paper/resnet152-fluct-115-ddp-10seeds"
  run python3 analysis/density_report.py "$OUT/paper/resnet152-fluct-115-controller-10seeds" --after 10 \
    --backlogged "$OUT/paper/resnet152-fluct-115-ddp-10seeds"
  # What a plan that learns the rate late can carry of the trace at all.
  run python3 analysis/reaction_bound.py traces/fluct-115mbps.csv
}

step_fast() {
  for f in paper/resnet152-fluct-115 paper/resnet152-const-100 paper/resnet152-const-500 paper/vit-b16-fluct-115 \
    paper/vit-b16-const-100 paper/vit-b16-const-500 paper/scale/resnet50-4-clusters; do
    STELLATRAIN="$BIN" run bash scripts/compare_fast_modes.sh "scenarios/$f.yaml" "$OUT/fast/$(basename "$f")"
  done
  MODES="packet-sampled flow-full flow-sampled" STELLATRAIN="$BIN" run bash scripts/compare_fast_modes.sh \
    scenarios/paper/scale/resnet50-16-clusters.yaml "$OUT/fast/resnet50-16-clusters"
  run python3 analysis/fast_modes_table.py --summary "$OUT"/fast/*
}

step_paper_tta_sweep() {
  run "$BIN" sweep scenarios/paper-tta/cnn-h100-fluct-115.yaml --systems stellatrain-fill-80 --lr 0.05,0.1,0.2 \
    --seeds 2 --iterations 200 --eval-interval 10 --quiet --out "$OUT/paper-tta-sweep/cnn-stellatrain"
  run "$BIN" sweep scenarios/paper-tta/cnn-h100-fluct-115.yaml --systems ddp --lr 0.025,0.05,0.1 \
    --seeds 2 --iterations 200 --eval-interval 10 --quiet --out "$OUT/paper-tta-sweep/cnn-ddp"
  # The baselines, two systems at a time (sweep runs one run after another).
  local pair
  for pair in topk-sync,ddp-powersgd local-sgd,cloudless-ma; do
    run "$BIN" sweep scenarios/paper-tta/cnn-h100-fluct-115.yaml --systems "$pair" --lr 0.025,0.05,0.1,0.2 \
      --seeds 2 --iterations 200 --eval-interval 10 --quiet --out "$OUT/paper-tta-sweep/cnn-${pair//,/-}"
  done
  # The controller's link_utilization with the density warm-up, also on
  # the validation set (the scenario sets eval.on: validation).
  run "$BIN" run scenarios/paper-tta/cnn-h100-fluct-115-tune-utilization.yaml --jobs "$JOBS" --quiet \
    --out "$OUT/paper-tta-sweep/cnn-link-utilization"
  run python3 analysis/density_report.py "$OUT/paper-tta-sweep/cnn-link-utilization"
  # The soonest-target rule's constant from fixed densities with the warm-up
  # (the file also runs the rule with it), then the rule's variants at each
  # link, all on the validation set (docs/paper-tta-controller.md, "The soonest target").
  run "$BIN" run scenarios/paper-tta/cnn-h100-fluct-115-tune-sparsity-cost.yaml --jobs "$JOBS" --quiet \
    --out "$OUT/paper-tta-sweep/cnn-sparsity-cost"
  local link
  for link in const-100 const-500; do  # the same fit at the other links
    run "$BIN" sweep "scenarios/paper-tta/cnn-h100-$link-convergence.yaml" --systems warmup-fixed-0.03 \
      --density 0.01,0.1,0.3,0.5 --seeds 2 --quiet --out "$OUT/paper-tta-sweep/cnn-$link-sparsity-cost"
  done
  run python3 analysis/fit_sparsity_cost.py "$OUT/paper-tta-sweep/cnn-sparsity-cost" \
    "$OUT/paper-tta-sweep/cnn-const-100-sparsity-cost" "$OUT/paper-tta-sweep/cnn-const-500-sparsity-cost"
  for link in fluct-115 const-100 const-500; do
    run "$BIN" sweep "scenarios/paper-tta/cnn-h100-$link-convergence.yaml" \
      --systems soonest,warmup-soonest,soonest-slow-start,warmup-soonest-tick-0.25,warmup-soonest-probes --seeds 2 --lr 0.1 --quiet \
      --out "$OUT/paper-tta-sweep/cnn-$link-soonest"
  done
  # Each cluster holding its own classes (label_skew 1,
  # docs/paper-tta-label-skew.md): the even placement's rates checked on
  # this placement's validation set, and sparsity_cost fitted there.
  run "$BIN" sweep scenarios/paper-tta/cnn-h100-fluct-115-label-skew.yaml --systems local-sgd,warmup-soonest,cloudless-ma \
    --lr 0.05,0.1 --seeds 2 --quiet --out "$OUT/paper-tta-sweep/cnn-label-skew"
  run "$BIN" sweep scenarios/paper-tta/cnn-h100-fluct-115-label-skew.yaml --systems warmup-fixed-0.1 \
    --density 0.01,0.03,0.3,0.5 --seeds 2 --quiet --out "$OUT/paper-tta-sweep/cnn-label-skew-sparsity-cost"
  run python3 analysis/fit_sparsity_cost.py "$OUT/paper-tta-sweep/cnn-label-skew-sparsity-cost"
  for link in const-100 const-500; do
    run "$BIN" sweep "scenarios/paper-tta/cnn-h100-$link-label-skew.yaml" --systems warmup-soonest,local-sgd \
      --lr 0.05,0.1 --seeds 2 --quiet --out "$OUT/paper-tta-sweep/cnn-$link-label-skew"
  done
  # Convergence changes against the skewed placement's accuracy lag, on its
  # validation set (neither was kept: docs/paper-tta-label-skew-accuracy.md).
  run "$BIN" run scenarios/paper-tta/cnn-h100-fluct-115-label-skew-tune-convergence.yaml --jobs "$JOBS" --quiet \
    --out "$OUT/paper-tta-sweep/cnn-label-skew-tune-convergence"
  run python3 analysis/density_report.py "$OUT/paper-tta-sweep/cnn-label-skew-tune-convergence"
  # Density warm-up lengths for the picked variant, skewed placement at 100 Mbps.
  run "$BIN" run scenarios/paper-tta/cnn-h100-const-100-label-skew-tune-warmup.yaml --jobs "$JOBS" --quiet \
    --out "$OUT/paper-tta-sweep/cnn-label-skew-100-tune-warmup"
  local variant
  for variant in warmup-soonest-early-probes warmup-25-soonest-early-probes soonest-early-probes; do
    run python3 analysis/paired_systems.py "$OUT/paper-tta-sweep/cnn-label-skew-100-tune-warmup" fixed-0.1 "$variant"
  done
  # Density floors for the picked variant, skewed placement at fluct-115
  # (neither was kept: docs/paper-tta-label-skew-accuracy.md).
  run "$BIN" run scenarios/paper-tta/cnn-h100-fluct-115-label-skew-tune-floor.yaml --jobs "$JOBS" --quiet \
    --out "$OUT/paper-tta-sweep/cnn-label-skew-tune-floor"
  run python3 analysis/density_report.py "$OUT/paper-tta-sweep/cnn-label-skew-tune-floor"
  for variant in warmup-soonest-early-probes-floor-0.05 warmup-soonest-early-probes-floor-0.08; do
    run python3 analysis/paired_systems.py "$OUT/paper-tta-sweep/cnn-label-skew-tune-floor" warmup-soonest-early-probes "$variant"
  done
  # Local gradient clipping for the picked variant, skewed placement at
  # fluct-115 (docs/paper-tta-label-skew-accuracy.md).
  run "$BIN" run scenarios/paper-tta/cnn-h100-fluct-115-label-skew-tune-clipping.yaml --jobs "$JOBS" --quiet \
    --out "$OUT/paper-tta-sweep/cnn-label-skew-tune-clipping"
  run python3 analysis/density_report.py "$OUT/paper-tta-sweep/cnn-label-skew-tune-clipping"
  for variant in warmup-soonest-early-probes-clip-{0.5,1,2,3,4}; do
    run python3 analysis/paired_systems.py "$OUT/paper-tta-sweep/cnn-label-skew-tune-clipping" warmup-soonest-early-probes "$variant"
  done
  echo "paper-tta-sweep: the best learning rates are in $OUT/paper-tta-sweep/*/sweep.json (\"best\");"
  echo "paper-tta-sweep: put them in scenarios/paper-tta/cnn-h100-*.yaml, then: bash scripts/regenerate_results.sh paper-tta"
}

step_paper_tta() {
  local folders=() link
  for link in fluct-115 const-100 const-500; do
    run "$BIN" run "scenarios/paper-tta/cnn-h100-$link.yaml" --jobs "$JOBS" --quiet --out "$OUT/paper-tta/cnn-h100-$link"
    run python3 analysis/density_report.py "$OUT/paper-tta/cnn-h100-$link"
    folders+=("$OUT/paper-tta/cnn-h100-$link:stellatrain-fill-80")
  done
  # The convergence fixes (density warm-up, momentum correction), the link
  # share and the soonest-target rule picked on validation (paper-tta-sweep)
  # on the same workload and links; the table's extra rows hold the warm-up
  # with that share (warmup-fill-0.2) and with the rule (warmup-soonest),
  # against the fixed densities of the base scenario's folder.
  for link in fluct-115 const-100 const-500; do
    run "$BIN" run "scenarios/paper-tta/cnn-h100-$link-convergence.yaml" --jobs "$JOBS" --quiet \
      --out "$OUT/paper-tta/cnn-h100-$link-convergence"
    run python3 analysis/density_report.py "$OUT/paper-tta/cnn-h100-$link-convergence"
    folders+=("$OUT/paper-tta/cnn-h100-$link-convergence:warmup-fill-0.2:$OUT/paper-tta/cnn-h100-$link")
    folders+=("$OUT/paper-tta/cnn-h100-$link-convergence:warmup-soonest:$OUT/paper-tta/cnn-h100-$link")
  done
  # The same workload with each cluster holding its own classes (label_skew
  # 1); fluct-115's warmup-fixed-0.1 is its tuning system, left out.
  for link in fluct-115 const-100 const-500; do
    run "$BIN" run "scenarios/paper-tta/cnn-h100-$link-label-skew.yaml" --jobs "$JOBS" --quiet \
      --systems ddp,warmup-soonest,fixed-0.1,fixed-0.3,topk-sync,ddp-powersgd,local-sgd,cloudless-ma \
      --out "$OUT/paper-tta/cnn-h100-$link-label-skew"
    run python3 analysis/density_report.py "$OUT/paper-tta/cnn-h100-$link-label-skew"
    folders+=("$OUT/paper-tta/cnn-h100-$link-label-skew:warmup-soonest")
  done
  # Half of each class at its home cluster (label_skew 0.5): every system
  # at fluct-115 (its own file).
  run "$BIN" run scenarios/paper-tta/cnn-h100-fluct-115-label-skew-half.yaml --jobs "$JOBS" --quiet \
    --out "$OUT/paper-tta/cnn-h100-fluct-115-label-skew-half"
  run python3 analysis/density_report.py "$OUT/paper-tta/cnn-h100-fluct-115-label-skew-half"
  folders+=("$OUT/paper-tta/cnn-h100-fluct-115-label-skew-half:warmup-soonest")
  # Partial skews from the full-skew files with the run's placement given on
  # the command line, for the systems that tell averaging from co-training:
  # 90% of each class at home (label_skew 0.8) at every link, half at 100
  # and 500 Mbps; then TTA against the skew at those two links.
  local skew skewed_systems=ddp,warmup-soonest,fixed-0.1,fixed-0.3,local-sgd,cloudless-ma
  run "$BIN" run scenarios/paper-tta/cnn-h100-fluct-115-label-skew.yaml --label-skew 0.8 --jobs "$JOBS" --quiet \
    --systems "$skewed_systems" --out "$OUT/paper-tta/cnn-h100-fluct-115-label-skew-0.8"
  for link in const-100 const-500; do
    for skew in 0.5 0.8; do
      run "$BIN" run "scenarios/paper-tta/cnn-h100-$link-label-skew.yaml" --label-skew "$skew" --jobs "$JOBS" --quiet \
        --systems "$skewed_systems" --out "$OUT/paper-tta/cnn-h100-$link-label-skew-$skew"
      run python3 analysis/density_report.py "$OUT/paper-tta/cnn-h100-$link-label-skew-$skew"
    done
    run python3 analysis/label_skew_table.py "0.5:$OUT/paper-tta/cnn-h100-$link-label-skew-0.5" \
      "0.8:$OUT/paper-tta/cnn-h100-$link-label-skew-0.8" "1:$OUT/paper-tta/cnn-h100-$link-label-skew" \
      --systems "$skewed_systems"
  done
  run python3 analysis/label_skew_table.py \
    "0:$OUT/paper-tta/cnn-h100-fluct-115,$OUT/paper-tta/cnn-h100-fluct-115-convergence" \
    "0.5:$OUT/paper-tta/cnn-h100-fluct-115-label-skew-half" "0.8:$OUT/paper-tta/cnn-h100-fluct-115-label-skew-0.8" \
    "1:$OUT/paper-tta/cnn-h100-fluct-115-label-skew" --systems ddp,warmup-soonest,fixed-0.1,local-sgd,cloudless-ma \
    --figure "$OUT/paper-tta/label-skew-tta.png"
  # ResNet-18's forward and backward run on a CUDA GPU (its CPU math is too
  # slow for a 2-core machine); the network and the stages are simulated.
  if [ -x build-gpu/apps/stellatrain ] && nvidia-smi -L > /dev/null 2>&1; then
    RESULTS="$OUT/paper-tta-gpu" run bash scripts/gpu/paper_tta.sh
  fi
  for link in fluct-115 const-100 const-500; do
    if [ -f "$OUT/paper-tta-gpu/resnet18-h100-$link/summary.json" ]; then
      folders+=("$OUT/paper-tta-gpu/resnet18-h100-$link:stellatrain-fill-80")
    else
      echo "paper-tta: no ResNet-18 results at $link ($OUT/paper-tta-gpu/resnet18-h100-$link): run" \
        "scripts/gpu/paper_tta.sh on a CUDA machine and copy its results/paper-tta-gpu here"
    fi
  done
  run python3 analysis/paper_tta_table.py "${folders[@]}" | tee "$OUT/paper-tta/table.md"
}

# Twelve paired seeds where three and six left the rule against the best
# fixed density undecided (the comparisons pair runs across two files with
# paired_systems.py --baseline-from, which checks that they pair).
# One run of the early-tick variant beside BESIDE (labels run but not
# compared; may be empty) and BASELINES (comma-separated labels), then the
# variant paired against each baseline.
variant_run() {  # OUT BESIDE BASELINES SCENARIO [run's other arguments]
  local out=$1 beside=$2 baselines=$3 baseline
  shift 3
  run "$BIN" run "$@" --systems "${beside:+$beside,}warmup-soonest-early-probes,$baselines" --jobs "$JOBS" --quiet \
    --out "$out"
  for baseline in ${baselines//,/ }; do
    run python3 analysis/paired_systems.py "$out" "$baseline" warmup-soonest-early-probes
  done
}

# variant_run beside ddp, for a table row: OUT joins the caller's
# skewed_rows (a local of step_paper_tta_seeds).
skewed_run() {  # OUT BASELINES SCENARIO [run's other arguments]
  variant_run "$1" ddp "${@:2}"
  skewed_rows+=("$1:warmup-soonest-early-probes")
}

step_paper_tta_seeds() {
  local tta="$OUT/paper-tta" sweep="$OUT/paper-tta-sweep/cnn-const-500-density-six-seeds"
  run "$BIN" run scenarios/paper-tta/cnn-h100-const-500.yaml --systems fixed-0.1,fixed-0.3 --seeds 12 \
    --jobs "$JOBS" --quiet --out "$tta/cnn-h100-const-500-twelve-seeds"
  run "$BIN" run scenarios/paper-tta/cnn-h100-const-500-convergence.yaml \
    --systems warmup-soonest,warmup-fixed-0.2,warmup-soonest-early,warmup-soonest-early-probes \
    --seeds 12 --jobs "$JOBS" --quiet --out "$tta/cnn-h100-const-500-convergence-twelve-seeds"
  run "$BIN" sweep scenarios/paper-tta/cnn-h100-const-500-convergence.yaml --systems warmup-fixed-0.03 \
    --density 0.1,0.2,0.3 --seeds 6 --quiet --out "$sweep"
  run python3 analysis/fit_sparsity_cost.py "$sweep"
  local baseline
  for baseline in fixed-0.3 fixed-0.1; do
    run python3 analysis/paired_systems.py "$tta/cnn-h100-const-500-convergence-twelve-seeds" "$baseline" \
      warmup-soonest --baseline-from "$tta/cnn-h100-const-500-twelve-seeds"
  done
  run python3 analysis/paired_systems.py "$tta/cnn-h100-const-500-convergence-twelve-seeds" warmup-fixed-0.2 \
    warmup-soonest
  run python3 analysis/paired_systems.py "$tta/cnn-h100-const-500-twelve-seeds" fixed-0.3 fixed-0.1
  # The rule, with early ticks, and with early ticks and probes every
  # iteration (docs/paper-tta-controller.md, "Early ticks"): the variant chosen on
  # validation seeds at the three links, then the twelve test seeds above.
  # 500 Mbps runs six seeds, to pair with the six-seed density sweep there.
  local link seeds early_sweep system
  for link in const-500 fluct-115 const-100; do
    case "$link" in
      const-500) seeds=6 early_sweep="$OUT/paper-tta-sweep/cnn-$link-early-six-seeds" ;;
      *) seeds=4 early_sweep="$OUT/paper-tta-sweep/cnn-$link-early-four-seeds" ;;
    esac
    run "$BIN" sweep "scenarios/paper-tta/cnn-h100-$link-convergence.yaml" \
      --systems warmup-soonest,warmup-soonest-early,warmup-soonest-early-probes --lr 0.1 --seeds "$seeds" --quiet \
      --out "$early_sweep"
    for system in warmup-soonest-early warmup-soonest-early-probes; do
      run python3 analysis/paired_systems.py "$early_sweep" warmup-soonest.lr-0.1 "$system.lr-0.1"
    done
    [ "$link" = const-500 ] || continue
    for system in warmup-soonest warmup-soonest-early warmup-soonest-early-probes; do
      run python3 analysis/paired_systems.py "$early_sweep" warmup-fixed-0.03.d-0.2 "$system.lr-0.1" --baseline-from "$sweep"
    done
  done
  for system in warmup-soonest-early warmup-soonest-early-probes; do
    for baseline in warmup-soonest warmup-fixed-0.2; do
      run python3 analysis/paired_systems.py "$tta/cnn-h100-const-500-convergence-twelve-seeds" "$baseline" "$system"
    done
    for baseline in fixed-0.3 fixed-0.1; do
      run python3 analysis/paired_systems.py "$tta/cnn-h100-const-500-convergence-twelve-seeds" "$baseline" \
        "$system" --baseline-from "$tta/cnn-h100-const-500-twelve-seeds"
    done
  done
  # The picked variant as the table's rows at every link
  # (docs/paper-tta-controller.md, "Early ticks at every link"): six test seeds against ddp, the base
  # file's fixed density that was best on three seeds (10% at fluct-115
  # and 100 Mbps, ahead of 3%; 30% at 500 Mbps, which ties 10% on twelve)
  # and, at the two links without twelve seeds, the rule.
  local base fixed systems rows=()
  for link in fluct-115 const-100 const-500; do
    base="$tta/cnn-h100-$link"
    case "$link" in
      const-500) fixed=fixed-0.3 systems=ddp,warmup-soonest-early-probes ;;
      *) fixed=fixed-0.1 systems=ddp,warmup-soonest,warmup-soonest-early-probes ;;
    esac
    run "$BIN" run "scenarios/paper-tta/cnn-h100-$link-convergence.yaml" --systems "$systems" --seeds 6 \
      --jobs "$JOBS" --quiet --out "$base-convergence-six-seeds"
    run "$BIN" run "scenarios/paper-tta/cnn-h100-$link.yaml" --systems "$fixed" --seeds 6 --jobs "$JOBS" --quiet \
      --out "$base-six-seeds"
    run python3 analysis/paired_systems.py "$base-convergence-six-seeds" "$fixed" warmup-soonest-early-probes \
      --baseline-from "$base-six-seeds"
    [ "$link" = const-500 ] ||
      run python3 analysis/paired_systems.py "$base-convergence-six-seeds" warmup-soonest warmup-soonest-early-probes
    rows+=("$base-convergence-six-seeds:warmup-soonest-early-probes:$base-six-seeds")
  done
  run python3 analysis/paper_tta_table.py "${rows[@]}" | tee "$tta/table-early-probes-six-seeds.md"
  run python3 analysis/eval_set_offset.py "$sweep/warmup-fixed-0.03.d-0.2" \
    "$tta/cnn-h100-const-500-convergence-twelve-seeds/warmup-fixed-0.2" --targets 0.83,0.85
  run "$BIN" run scenarios/paper-tta/cnn-h100-fluct-115-label-skew.yaml --systems ddp,warmup-soonest,fixed-0.1 \
    --seeds 12 --jobs "$JOBS" --quiet --out "$tta/cnn-h100-fluct-115-label-skew-twelve-seeds"
  run python3 analysis/paper_tta_table.py "$tta/cnn-h100-fluct-115-label-skew-twelve-seeds:warmup-soonest"
  run python3 analysis/paired_systems.py "$tta/cnn-h100-fluct-115-label-skew-twelve-seeds" fixed-0.1 warmup-soonest
  # The picked variant where the data lives (docs/paper-tta-label-skew-controller.md,
  # "Early ticks where the data lives"): each full-skew file over six test
  # seeds, 500 Mbps also with 90% of each class at home (label_skew 0.8,
  # where the rule was 1.19x the best fixed density), and the half-skew
  # file over six seeds (three are its own). Fixed 30% only at 500 Mbps, the one link
  # where it is not far behind 10%.
  local baselines skewed_rows=()
  for link in const-500 fluct-115 const-100; do
    baselines=warmup-soonest,fixed-0.1
    [ "$link" = const-500 ] && baselines+=,fixed-0.3
    skewed_run "$tta/cnn-h100-$link-label-skew-six-seeds" "$baselines" \
      "scenarios/paper-tta/cnn-h100-$link-label-skew.yaml" --seeds 6
  done
  skewed_run "$tta/cnn-h100-const-500-label-skew-0.8-six-seeds" warmup-soonest,fixed-0.1,fixed-0.3 \
    scenarios/paper-tta/cnn-h100-const-500-label-skew.yaml --label-skew 0.8 --seeds 6
  skewed_run "$tta/cnn-h100-fluct-115-label-skew-half-six-seeds" warmup-soonest,fixed-0.1 \
    scenarios/paper-tta/cnn-h100-fluct-115-label-skew-half.yaml --seeds 6
  run python3 analysis/paper_tta_table.py "${skewed_rows[@]}" | tee "$tta/table-early-probes-label-skew.md"
  # Twelve seeds where six left the variant 1.18x fixed 10% (100 Mbps, full skew),
  # at fluct-115 with full skew (six: 1.08x, 1.75 points under ddp), and where
  # six left it at the edge (90% at home, 500 Mbps).
  variant_run "$tta/cnn-h100-const-100-label-skew-twelve-seeds" "" fixed-0.1 \
    scenarios/paper-tta/cnn-h100-const-100-label-skew.yaml --seeds 12
  local noise="$tta/cnn-h100-fluct-115-label-skew-early-probes-twelve-seeds" neighbour
  variant_run "$noise" fixed-0.09,fixed-0.11 fixed-0.1,ddp \
    scenarios/paper-tta/cnn-h100-fluct-115-label-skew.yaml --seeds 12
  # How far a tenth more or less density moves each seed's TTA: the spread
  # that any per-seed ratio carries ("How far a seed's TTA moves").
  for neighbour in fixed-0.09 fixed-0.11; do
    run python3 analysis/paired_systems.py "$noise" fixed-0.1 "$neighbour"
  done
  # The same on the even placement at 500 Mbps, a constant link: fixed 27%
  # and 33% against fixed 30% (docs/paper-tta-controller.md, "How far a
  # seed's TTA moves at 500 Mbps").
  local even="$tta/cnn-h100-const-500-sensitivity"
  run "$BIN" run scenarios/paper-tta/cnn-h100-const-500-sensitivity.yaml --seeds 6 --jobs "$JOBS" --quiet \
    --out "$even"
  for neighbour in fixed-0.27 fixed-0.33; do
    run python3 analysis/paired_systems.py "$even" fixed-0.3 "$neighbour"
  done
  variant_run "$tta/cnn-h100-const-500-label-skew-0.8-twelve-seeds" "" fixed-0.3,fixed-0.1 \
    scenarios/paper-tta/cnn-h100-const-500-label-skew.yaml --label-skew 0.8 --seeds 12
}

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
