#!/usr/bin/env bash
# cmake/build_info.cmake, which names the commit a build compiled in every
# manifest.json (core/util/build_info.h), on throwaway git repositories: a
# clean clone gives its HEAD and modified false; an edit to a tracked file
# gives modified true (an untracked file does not); a folder outside any
# clone gives "unknown"; and a rerun that would write the same text leaves
# the file untouched, so a build at the same commit relinks nothing. With
# the built stellatrain, a run's manifest.json carries the object.
#
#   bash tests/build_info_test.sh path/to/stellatrain
set -euo pipefail
STELLATRAIN=$(realpath "$1")
SOURCE_DIR=$(cd "$(dirname "$0")/.." && pwd)
SCRIPT="$SOURCE_DIR/cmake/build_info.cmake"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/build_info.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "build_info_test: FAIL: $*" >&2; exit 1; }
command -v git > /dev/null || { echo "build_info_test: no git; skipped"; exit 77; }

generate() { cmake -DSOURCE_DIR="$1" -DOUT="$2" -P "$SCRIPT"; }
says() { grep -q -F "$2" "$1" || fail "$1 does not say $2: $(grep 'BuildInfo info' "$1")"; }

repo="$WORK/repo"
mkdir "$repo"
git -C "$repo" init -q
echo one > "$repo/tracked.txt"
git -C "$repo" add tracked.txt
git -C "$repo" -c user.name=t -c user.email=t@t commit -q -m first
head=$(git -C "$repo" rev-parse HEAD)

generate "$repo" "$WORK/clean.cc"
says "$WORK/clean.cc" "{\"$head\", false}"

echo untracked > "$repo/new.txt"
generate "$repo" "$WORK/untracked.cc"
says "$WORK/untracked.cc" "{\"$head\", false}"

echo two > "$repo/tracked.txt"
generate "$repo" "$WORK/modified.cc"
says "$WORK/modified.cc" "{\"$head\", true}"

mkdir "$WORK/not-a-clone"
generate "$WORK/not-a-clone" "$WORK/unknown.cc"
says "$WORK/unknown.cc" "{\"unknown\", false}"

touch -d '2000-01-01' "$WORK/clean.cc"
git -C "$repo" checkout -q tracked.txt
generate "$repo" "$WORK/clean.cc"
[ "$(stat -c %Y "$WORK/clean.cc")" = "$(date -d '2000-01-01' +%s)" ] || fail "an unchanged build_info.cc was rewritten"

# The manifest: a 2-iteration run of the smallest model.
(cd "$WORK" && "$STELLATRAIN" train --model mlp --dataset synthetic --iterations 2 --nodes 2 --gpus-per-node 1 \
  --out "$WORK/run" --quiet > "$WORK/run.log" 2>&1) || { cat "$WORK/run.log"; fail "train"; }
python3 - "$WORK/run/manifest.json" <<'PY' || fail "manifest.json's build"
import json, re, sys
build = json.load(open(sys.argv[1]))["build"]
assert re.fullmatch(r"[0-9a-f]{40}|unknown", build["commit"]), build
assert isinstance(build["modified"], bool), build
PY
echo "build_info_test: ok"
