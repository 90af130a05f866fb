#!/usr/bin/env bash
# Quick start, step 1: install what is missing, build, run the headline
# experiment (scenarios/fluct-115mbps.yaml on the ns-3 backend) and draw it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
OUT=${OUT:-results/fluct-115mbps}
echo
echo "headline: StellaTrain vs DDP vs top-k over a fluctuating 115 Mbps WAN (ns-3), about 7 minutes"
./build/apps/stellatrain run scenarios/fluct-115mbps.yaml --out "$OUT"
./build/apps/stellatrain plot "$OUT"
echo
echo "summary: $OUT/summary.json"
echo "report:  $OUT/report.md"
echo "figures: $OUT/figures/ (tta, accuracy_vs_iteration, iteration_time, wan_throughput, speedup; PNG and SVG)"
