#!/usr/bin/env bash
# The paper's regime with accuracy over six and twelve paired seeds (step
# paper-tta-seeds): docs/paper-tta-controller.md, docs/paper-tta-label-skew.md,
# docs/paper-tta-label-skew-controller.md, docs/paper-tta-label-skew-accuracy.md and
# docs/paper-tta-label-skew-clipping.md.
# Sourced by scripts/regenerate_results.sh, which defines run, BIN, JOBS
# and OUT; not run on its own.

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
  # Local gradient clipping at the norm picked on validation, with full
  # skew, beside ddp and the variant: the twelve test seeds at fluct-115
  # (docs/paper-tta-label-skew-clipping.md, "Local gradient clipping, on
  # validation") and six at the other links, where validation checked it
  # ("The picked norm on the test seeds at every link").
  local clipped seeds_named
  for link in fluct-115 const-100 const-500; do
    case "$link" in
      fluct-115) seeds=12 seeds_named=twelve ;;
      *) seeds=6 seeds_named=six ;;
    esac
    clipped="$tta/cnn-h100-$link-label-skew-clip-$seeds_named-seeds"
    run "$BIN" run "scenarios/paper-tta/cnn-h100-$link-label-skew.yaml" \
      --systems ddp,warmup-soonest-early-probes,warmup-soonest-early-probes-clip-2 --seeds "$seeds" --jobs "$JOBS" \
      --quiet --out "$clipped"
    run python3 analysis/density_report.py "$clipped"
    for baseline in warmup-soonest-early-probes ddp; do
      run python3 analysis/paired_systems.py "$clipped" "$baseline" warmup-soonest-early-probes-clip-2
    done
    run python3 analysis/paired_systems.py "$clipped" ddp warmup-soonest-early-probes
  done
  # The clipped variant against fixed densities clipped alike and not, six
  # test seeds at each link (docs/paper-tta-label-skew-clipping.md, "The
  # clipped variant against clipped fixed densities"): at fluct-115 beside
  # ddp and the variant in one folder (the loop above ran twelve seeds
  # there), at the constant links paired with the loop's six-seed folders.
  # At 500 Mbps also clipped 20% and 50%, either side of clipped 30%.
  local fixed_systems clip_rows=() from variant_folder
  for link in fluct-115 const-100 const-500; do
    clipped="$tta/cnn-h100-$link-label-skew-clip-fixed-six-seeds"
    fixed_systems=fixed-0.1,fixed-0.1-clip-2
    [ "$link" = const-500 ] && fixed_systems+=,fixed-0.3,fixed-0.3-clip-2,fixed-0.2-clip-2,fixed-0.5-clip-2
    if [ "$link" = fluct-115 ]; then
      systems=ddp,warmup-soonest-early-probes-clip-2,$fixed_systems variant_folder=$clipped from=()
      clip_rows+=("$clipped:warmup-soonest-early-probes-clip-2")
    else
      systems=$fixed_systems variant_folder="$tta/cnn-h100-$link-label-skew-clip-six-seeds"
      from=(--baseline-from "$clipped")
      clip_rows+=("$variant_folder:warmup-soonest-early-probes-clip-2:$clipped")
    fi
    run "$BIN" run "scenarios/paper-tta/cnn-h100-$link-label-skew.yaml" --systems "$systems" --seeds 6 \
      --jobs "$JOBS" --quiet --out "$clipped"
    # Clipping at each fixed density that ran both ways.
    for system in ${fixed_systems//,/ }; do
      if [[ $system == *-clip-2 && ,$fixed_systems, == *,${system%-clip-2},* ]]; then
        run python3 analysis/paired_systems.py "$clipped" "${system%-clip-2}" "$system"
      fi
    done
    for system in ${fixed_systems//,/ }; do
      run python3 analysis/paired_systems.py "$variant_folder" "$system" warmup-soonest-early-probes-clip-2 "${from[@]}"
    done
  done
  run python3 analysis/paper_tta_table.py "${clip_rows[@]}" | tee "$tta/table-clipped-label-skew.md"
}
