#!/usr/bin/env bash
# cmake/build_info.cmake, which names the commit a build compiled in every
# manifest.json (core/util/build_info.h), on throwaway git repositories: a
# clean clone gives its HEAD and modified false; an edit to a tracked file
# gives modified true (an untracked file does not); a folder outside any
# clone gives "unknown", and so does a folder inside another repository
# that is not its top (a copy of the tree dropped into someone's repo must
# not take that repo's commit), unless ST_SOURCE_COMMIT names one; and a
# rerun that would write the same text leaves the file untouched (so the
# build has nothing to recompile). With the built stellatrain, a run's
# manifest.json carries the object.
#
#   bash tests/build_info_test.sh path/to/stellatrain [path/to/cmake]
set -euo pipefail
STELLATRAIN=$(realpath "$1")
SOURCE_DIR=$(cd "$(dirname "$0")/.." && pwd)
SCRIPT="$SOURCE_DIR/cmake/build_info.cmake"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/build_info.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "build_info_test: FAIL: $*" >&2; exit 1; }
command -v git > /dev/null || { echo "build_info_test: no git; skipped"; exit 77; }

CMAKE=${2:-cmake}
generate() { "$CMAKE" -DSOURCE_DIR="$1" -DOUT="$2" -P "$SCRIPT"; }
says() { grep -q -F "$2" "$1" || fail "$1 does not say $2: $(grep 'BuildInfo info' "$1")"; }

repo="$WORK/repo"
mkdir "$repo"
git -C "$repo" init -q
echo one > "$repo/tracked.txt"
git -C "$repo" add tracked.txt
git -C "$repo" -c user.name=t -c user.email=t@t -c commit.gpgsign=false commit -q -m first
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
(cd "$WORK/not-a-clone" && ! git rev-parse --git-dir > /dev/null 2>&1) || { echo "build_info_test: TMPDIR is inside a git repository; skipped"; exit 77; }
generate "$WORK/not-a-clone" "$WORK/unknown.cc"
says "$WORK/unknown.cc" "{\"unknown\", std::nullopt}"
ST_SOURCE_COMMIT=0123abcd generate "$WORK/not-a-clone" "$WORK/named.cc"
says "$WORK/named.cc" "{\"0123abcd\", std::nullopt}"

mkdir "$repo/copy-inside"
generate "$repo/copy-inside" "$WORK/inside.cc"
says "$WORK/inside.cc" "{\"unknown\", std::nullopt}"

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
assert build["modified"] is None or isinstance(build["modified"], bool), build
assert (build["commit"] == "unknown") <= (build["modified"] is None), build
PY
echo "build_info_test: ok"
