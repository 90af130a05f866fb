#!/usr/bin/env bash
# The paper's regime in timing mode (steps paper and fast): docs/sim.md's
# table, the controller's rules on ResNet-152 (docs/control-utilisation.md)
# and the fast modes against the faithful one (docs/sim-speed.md).
# Sourced by scripts/regenerate_results.sh, which defines run, BIN, JOBS
# and OUT; not run on its own.

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
