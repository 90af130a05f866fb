#!/usr/bin/env bash
# Quick start, step 2: the whole test suite through ctest. Installs and
# builds first when needed (both are quick no-ops when up to date).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
cd build
ctest --output-on-failure -j "$(nproc)" --timeout 900
