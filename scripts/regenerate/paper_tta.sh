#!/usr/bin/env bash
# The paper's regime with accuracy (steps paper-tta-sweep and paper-tta):
# the choices made on validation data, then docs/paper-tta.md's table.
# Sourced by scripts/regenerate_results.sh, which defines run, BIN, JOBS
# and OUT; not run on its own.

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
  # fluct-115 (docs/paper-tta-label-skew-clipping.md).
  run "$BIN" run scenarios/paper-tta/cnn-h100-fluct-115-label-skew-tune-clipping.yaml --jobs "$JOBS" --quiet \
    --out "$OUT/paper-tta-sweep/cnn-label-skew-tune-clipping"
  run python3 analysis/density_report.py "$OUT/paper-tta-sweep/cnn-label-skew-tune-clipping"
  for variant in warmup-soonest-early-probes-clip-{0.5,1,2,3,4}; do
    run python3 analysis/paired_systems.py "$OUT/paper-tta-sweep/cnn-label-skew-tune-clipping" warmup-soonest-early-probes "$variant"
  done
  # The picked norm on the even placement's validation set: a check that it
  # does not hurt where every node holds every class.
  run "$BIN" run scenarios/paper-tta/cnn-h100-fluct-115-label-skew-tune-clipping.yaml --label-skew 0 \
    --systems ddp,warmup-soonest-early-probes,warmup-soonest-early-probes-clip-2 --seeds 2 --jobs "$JOBS" --quiet \
    --out "$OUT/paper-tta-sweep/cnn-even-tune-clipping"
  run python3 analysis/density_report.py "$OUT/paper-tta-sweep/cnn-even-tune-clipping"
  run python3 analysis/paired_systems.py "$OUT/paper-tta-sweep/cnn-even-tune-clipping" warmup-soonest-early-probes \
    warmup-soonest-early-probes-clip-2
  # ... and where it was not picked, with full skew at the constant links
  # and with half of each class at home at fluct-115 (checks, not picks).
  local check
  for link in const-100 const-500; do
    check="$OUT/paper-tta-sweep/cnn-$link-label-skew-check-clipping"
    run "$BIN" run "scenarios/paper-tta/cnn-h100-$link-label-skew-check-clipping.yaml" --jobs "$JOBS" --quiet \
      --out "$check"
    run python3 analysis/paired_systems.py "$check" warmup-soonest-early-probes warmup-soonest-early-probes-clip-2
  done
  check="$OUT/paper-tta-sweep/cnn-half-skew-check-clipping"
  run "$BIN" run scenarios/paper-tta/cnn-h100-fluct-115-label-skew-tune-clipping.yaml --label-skew 0.5 \
    --systems ddp,warmup-soonest-early-probes,warmup-soonest-early-probes-clip-2 --jobs "$JOBS" --quiet --out "$check"
  run python3 analysis/density_report.py "$check"
  run python3 analysis/paired_systems.py "$check" warmup-soonest-early-probes warmup-soonest-early-probes-clip-2
  # sparsity_cost refitted with clipping on the same validation set, and
  # the refit checked at the three links beside the current constant
  # (docs/paper-tta-label-skew-clipping.md, "The rule's constant with clipping").
  local fit="$OUT/paper-tta-sweep/cnn-label-skew-sparsity-cost-clipping" fit_scenario
  local clipped_fixed=warmup-fixed-0.01-clip-2,warmup-fixed-0.03-clip-2,warmup-fixed-0.1-clip-2,warmup-fixed-0.3-clip-2,warmup-fixed-0.5-clip-2
  fit_scenario=scenarios/paper-tta/cnn-h100-fluct-115-label-skew-tune-sparsity-cost-clipping.yaml
  run "$BIN" run "$fit_scenario" --systems "warmup-fixed-0.1,$clipped_fixed" --jobs "$JOBS" --quiet --out "$fit"
  run python3 analysis/fit_sparsity_cost.py "$fit" --systems "$clipped_fixed"
  run "$BIN" run "$fit_scenario" --systems warmup-soonest-early-probes-clip-2,warmup-soonest-early-probes-clip-2-cost-0.223 \
    --seeds 4 --jobs "$JOBS" --quiet --out "$fit-check"
  run python3 analysis/paired_systems.py "$fit-check" warmup-soonest-early-probes-clip-2 \
    warmup-soonest-early-probes-clip-2-cost-0.223
  for link in const-100 const-500; do  # the check files above ran the refit too
    run python3 analysis/paired_systems.py "$OUT/paper-tta-sweep/cnn-$link-label-skew-check-clipping" \
      warmup-soonest-early-probes-clip-2 warmup-soonest-early-probes-clip-2-cost-0.223
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
  # ResNet-18's controller in timing mode: the math skipped, and for the
  # table's controller the GPU runs' path (docs/paper-tta-resnet18.md,
  # "Keeping the link busy"), so no GPU is needed to see how much of each
  # link each setting uses.
  for link in fluct-115 const-100 const-500; do
    run "$BIN" run "scenarios/paper-tta/resnet18-h100-$link-controller.yaml" --jobs "$JOBS" --quiet \
      --out "$OUT/paper-tta/resnet18-h100-$link-controller"
    # Each file's ddp keeps the link backlogged: what the transport carries.
    run python3 analysis/density_report.py "$OUT/paper-tta/resnet18-h100-$link-controller" \
      --backlogged "$OUT/paper-tta/resnet18-h100-$link-controller"
  done
  run "$BIN" run scenarios/paper-tta/resnet18-h100-fluct-115-controller.yaml --seeds 10 --jobs "$JOBS" --quiet \
    --systems stellatrain-fill-80,fill-85-busy,fill-85-busy-growth-1.1,fill-85-busy-no-early,ddp \
    --out "$OUT/paper-tta/resnet18-h100-fluct-115-controller-10-seeds"
  run python3 analysis/density_report.py "$OUT/paper-tta/resnet18-h100-fluct-115-controller-10-seeds" \
    --paired stellatrain-fill-80 --backlogged "$OUT/paper-tta/resnet18-h100-fluct-115-controller-10-seeds"
  # ResNet-18's forward and backward run on a CUDA GPU (its CPU math is too
  # slow for a 2-core machine); the network and the stages are simulated.
  if [ -x build-gpu/apps/stellatrain ] && nvidia-smi -L > /dev/null 2>&1; then
    RESULTS="$OUT/paper-tta-gpu" run bash scripts/gpu/paper_tta.sh
  fi
  # Without a GPU run of its own, the recorded one (docs/results/README.md).
  local gpu_folder gpu_folders=()
  for link in fluct-115 const-100 const-500; do
    gpu_folder="$OUT/paper-tta-gpu/resnet18-h100-$link"
    if [ ! -f "$gpu_folder/summary.json" ] && [ -f "docs/results/paper-tta-gpu/resnet18-h100-$link/summary.json" ]; then
      gpu_folder="docs/results/paper-tta-gpu/resnet18-h100-$link"
      echo "paper-tta: ResNet-18 at $link from the recorded GPU runs in $gpu_folder"
    fi
    if [ -f "$gpu_folder/summary.json" ]; then
      gpu_folders+=("$gpu_folder")
    else
      echo "paper-tta: no ResNet-18 results at $link ($gpu_folder): run" \
        "scripts/gpu/paper_tta.sh on a CUDA machine and copy its results/paper-tta-gpu here"
    fi
  done
  # The controller filling the link at every link, then the warm-up, the
  # busier controller and the soonest-target rules where they ran.
  for gpu_folder in "${gpu_folders[@]}"; do folders+=("$gpu_folder:stellatrain-fill-80"); done
  local label
  for label in warmup-fill-0.2 fill-85-busy soonest-0.1-busy soonest-0.1-busy-start-0.005; do
    for gpu_folder in "${gpu_folders[@]}"; do
      if grep -q "\"$label\"" "$gpu_folder/summary.json"; then folders+=("$gpu_folder:$label"); fi
    done
  done
  run python3 analysis/paper_tta_table.py "${folders[@]}" | tee "$OUT/paper-tta/table.md"
  # The same rows' speedups and iterations ratios read both ways, at the
  # first evaluation and from the monotone fit.
  run python3 analysis/paper_tta_table.py --fit "${folders[@]}" | tee "$OUT/paper-tta/table-fit.md"
}
