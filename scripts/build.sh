#!/usr/bin/env bash
# Configures (Release by default) and builds into ./build. Extra arguments
# go to CMake's configure step, e.g. -DST_WITH_SIM=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" "$@" > "$BUILD_DIR.configure.log" 2>&1 || {
  cat "$BUILD_DIR.configure.log"; exit 1; }
grep -E "stellatrain:" "$BUILD_DIR.configure.log" | sed 's/^-- //'
echo "build: compiling with $JOBS jobs (LibTorch translation units take a while)"
cmake --build "$BUILD_DIR" -j "$JOBS"
