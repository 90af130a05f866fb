#!/usr/bin/env bash
# Quick start, step 1: install what is missing, build, run the headline job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
echo
echo "headline: compression benchmark on real ResNet-18 and CNN gradients (Fashion-MNIST)"
./build/apps/stellatrain bench compress --density 0.01,0.05 --out build/bench-compress.json
echo
echo "JSON written to build/bench-compress.json; see docs/benchmarks.md for what the columns mean"
