#!/usr/bin/env bash
# Quick start, step 1: install what is missing, build, run the headline
# experiment (scenarios/fluct-115mbps.yaml on the ns-3 backend) and draw it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
OUT=${OUT:-results/fluct-115mbps}
# SEEDS=1 for a first look (3 runs); by default the scenario's five paired seeds.
seeds=()
[ -n "${SEEDS:-}" ] && seeds=(--seeds "$SEEDS")
echo
echo "headline: StellaTrain vs DDP vs top-k over a fluctuating 115 Mbps WAN (ns-3): 3 systems x ${SEEDS:-5} seeds,"
echo "each evaluated on the whole test set every 2 iterations (about 2 hours on 2 cores for 5 seeds; SEEDS=1 for a first look)"
./build/apps/stellatrain run scenarios/fluct-115mbps.yaml --jobs "$(nproc)" "${seeds[@]}" --out "$OUT"
./build/apps/stellatrain plot "$OUT"
echo
echo "summary: $OUT/summary.json"
echo "report:  $OUT/report.md"
echo "figures: $OUT/figures/ (tta, accuracy_vs_iteration, iteration_time, wan_throughput, speedup; PNG and SVG)"
