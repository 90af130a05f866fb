#!/usr/bin/env bash
# Quick start, step 2: the whole test suite through ctest. Installs and
# builds first when needed (both are quick no-ops when up to date).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
cd build
status=0
ctest --output-on-failure -j "$(nproc)" --timeout 900 || status=$?
# A failing test's own lines can sit far up a long log (tables, progress):
# repeat each failure's one-line reason last, where a truncated log keeps it.
if [ "$status" -ne 0 ] && [ -f Testing/Temporary/LastTestsFailed.log ]; then
  echo "== failed tests:"
  cut -d: -f2 Testing/Temporary/LastTestsFailed.log
  echo "== their failure lines (the whole output is above):"
  grep -E '^FAIL|: Failure$|^\[  FAILED  \]' Testing/Temporary/LastTest.log | cut -c1-600 | tail -40 || true
fi
exit "$status"
