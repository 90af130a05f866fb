#!/usr/bin/env bash
# Each recorded GPU folder's summary.json (docs/results/paper-tta-gpu/,
# some put together from two calls on a lent machine: docs/results/README.md)
# is byte for byte what `stellatrain run --summarize` writes from the runs
# the folder holds, by the folder's own scenario.yaml. The copies, and the
# scenario files placed where their relative paths (../profiles,
# ../../traces) resolve, live in a temporary folder.
#
#   bash tests/recorded_summaries_test.sh path/to/stellatrain
set -euo pipefail
STELLATRAIN=$(realpath "$1")
SOURCE_DIR=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/recorded_summaries.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "recorded_summaries_test: FAIL: $*" >&2; exit 1; }

mkdir -p "$WORK/scenarios/paper-tta" "$WORK/runs"
ln -s "$SOURCE_DIR/scenarios/profiles" "$WORK/scenarios/profiles"
ln -s "$SOURCE_DIR/traces" "$WORK/traces"
count=0
for folder in "$SOURCE_DIR"/docs/results/paper-tta-gpu/*/; do
  name=$(basename "$folder")
  copy="$WORK/runs/$name"
  cp -r "$folder" "$copy"
  cp "$folder/scenario.yaml" "$WORK/scenarios/paper-tta/$name.yaml"
  (cd "$WORK" && "$STELLATRAIN" run "scenarios/paper-tta/$name.yaml" --summarize --out "$copy" > "$name.log" 2>&1) \
    || { cat "$WORK/$name.log"; fail "$name: run --summarize"; }
  cmp -s "$folder/summary.json" "$copy/summary.json" \
    || fail "$name: summary.json is not what --summarize writes from its runs (diff $folder/summary.json against a copy)"
  count=$((count + 1))
done
[ "$count" -ge 4 ] || fail "expected the four recorded GPU folders, found $count"
echo "recorded_summaries_test: $count folders' summaries are their runs'"
