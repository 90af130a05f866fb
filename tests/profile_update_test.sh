#!/usr/bin/env bash
# `stellatrain bench profile --update FILE` (docs/sim-compute.md, "Profile files"):
# measures the CPU kernels and cores again and keeps everything else of the
# file (its comment lines, models, accelerator); the result is a profile the
# sim reads; a file that is not a profile is refused naming it. With
# --compressors it adds only the curves of the compressors beside
# thresholdv16 and keeps every other figure, and a run with exact top-k is
# then priced by top-k's curve.
# Usage: profile_update_test.sh path/to/stellatrain
set -euo pipefail
BIN=$(realpath "${1:?usage: profile_update_test.sh path/to/stellatrain}")
SOURCE_DIR=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/st-profile-update.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

{ echo "# a comment of the user's"; cat "$SOURCE_DIR/scenarios/profiles/cpu-2core.yaml"; } > "$WORK/p.yaml"
cp "$WORK/p.yaml" "$WORK/before.yaml"
"$BIN" bench profile --update "$WORK/p.yaml" --min-time 0.01 --repetitions 1 > "$WORK/log" 2>&1 ||
  { cat "$WORK/log"; fail "--update failed"; }
python3 - "$WORK/before.yaml" "$WORK/p.yaml" <<'PY' || exit 1
# Reads the profile's simple layout by hand (top-level keys, one level of
# indented entries): the test needs no YAML module.
import os, re, sys
# Lines indented deeper than an entry join it.
def sections(path):
    out, key = {}, None
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        if indent == 0:
            key, _, rest = line.partition(":")
            out[key] = [rest.strip()] if rest.strip() else []
        elif indent == 2:
            out[key].append(line.strip())
        else:
            out[key][-1] += " " + line.strip()
    return out
before, after = sections(sys.argv[1]), sections(sys.argv[2])
text = open(sys.argv[2]).read()
def check(ok, what):
    if not ok:
        sys.exit(f"FAIL: {what}")
check(text.startswith("# a comment of the user's\n"), "the file's comment lines are kept")
for key in ("device", "measured_with", "accelerator", "models"):
    check(after.get(key) == before[key], f"{key} is kept")
check(after["kernels_measured_with"][0].startswith("stellatrain bench profile --update"), "kernels_measured_with")
check(after["cpu_cores"] == [str(len(os.sched_getaffinity(0)))], f"cpu_cores {after['cpu_cores']}")
cpu = dict(entry.split(": ", 1) for entry in after["cpu"])
check(set(cpu) == {"gather_ns_per_element", "copy_ns_per_element", "view_ns_per_element",
                   "compress_ns_per_element_at_density", "compress_ns_per_element_at_density_by_compressor",
                   "optimize_ns_per_index"}, f"cpu keys {sorted(cpu)}")
curves = {"thresholdv16": cpu.pop("compress_ns_per_element_at_density")}
curves.update(re.findall(r"(\w+): (\{[^}]*\})", cpu.pop("compress_ns_per_element_at_density_by_compressor")))
check(sorted(curves) == ["randomk", "thresholdv", "thresholdv16", "topk"], f"compressors {sorted(curves)}")
for name, text in curves.items():
    curve = dict(p.split(": ") for p in text.strip("{}").split(", "))
    check(sorted(float(d) for d in curve) == [0.001, 0.01, 0.05, 0.2, 0.5], f"{name} densities {sorted(curve)}")
    check(all(float(v) > 0 for v in curve.values()), f"{name}: every rate positive")
check(all(float(v) > 0 for v in cpu.values()), "every rate positive")
PY
echo "ok: CPU figures measured again, the rest kept"

# The sim reads it: two iterations of the CNN priced by the updated profile.
sed "s#profiles/cpu-2core.yaml#$WORK/p.yaml#" "$SOURCE_DIR/scenarios/sim-2x2-115mbps.yaml" > "$WORK/sim.yaml"
grep -q "$WORK/p.yaml" "$WORK/sim.yaml" || fail "the sim config does not name the profile"
"$BIN" train --backend sim --sim-config "$WORK/sim.yaml" --system stellatrain --model cnn --iterations 2 \
  --eval-interval 0 --eval-samples 100 --gpus-per-node 2 --quiet --out "$WORK/run" > "$WORK/run.log" 2>&1 ||
  { cat "$WORK/run.log"; fail "a sim run on the updated profile"; }
grep -q '"cpu_cores_from"' "$WORK/run/manifest.json" || fail "the manifest lacks cpu_cores_from"
echo "ok: the sim runs on it"

# --compressors: only the curves beside thresholdv16's, every other figure kept.
cp "$WORK/before.yaml" "$WORK/c.yaml"
"$BIN" bench profile --update "$WORK/c.yaml" --compressors --min-time 0.01 --repetitions 1 > "$WORK/c.log" 2>&1 ||
  { cat "$WORK/c.log"; fail "--update --compressors failed"; }
grep -q "profile: topk against thresholdv16 by density: 0.001: " "$WORK/c.log" || { cat "$WORK/c.log"; fail "no ratio logged"; }
python3 - "$WORK/before.yaml" "$WORK/c.yaml" <<'PY' || exit 1
import sys
def entries(path):
    keep, extra, key = [], [], None
    for line in open(path):
        if line.startswith("compressors_measured_with:"):
            extra.append(line)
        elif line.startswith("  compress_ns_per_element_at_density_by_compressor:") or line.startswith("    "):
            extra.append(line)
        else:
            keep.append(line)
    return keep, extra
before, _ = entries(sys.argv[1])
after, added = entries(sys.argv[2])
# Every other line as it was, the comment lines included.
if before != after:
    sys.exit(f"FAIL: --compressors changed other figures:\n{''.join(before)}\n{''.join(after)}")
names = [l.split(":")[0].strip() for l in added if l.startswith("    ")]
if names != ["thresholdv", "topk", "randomk"] or not added[0].startswith("compressors_measured_with: stellatrain bench profile --update"):
    sys.exit(f"FAIL: added lines {added}")
PY
echo "ok: --compressors adds the curves and keeps every other figure"

# A run with exact top-k is priced by top-k's curve, and its manifest says so.
sed "s#profiles/cpu-2core.yaml#$WORK/c.yaml#" "$SOURCE_DIR/scenarios/sim-2x2-115mbps.yaml" > "$WORK/sim-c.yaml"
"$BIN" train --backend sim --sim-config "$WORK/sim-c.yaml" --system stellatrain --compressor topk --model cnn \
  --iterations 2 --eval-interval 0 --eval-samples 100 --gpus-per-node 2 --quiet --out "$WORK/run-c" > "$WORK/run-c.log" 2>&1 ||
  { cat "$WORK/run-c.log"; fail "a sim run with topk on the profile with its curve"; }
grep -q '"compress_curve": "topk"' "$WORK/run-c/manifest.json" || fail "the manifest does not say topk's curve priced it"
echo "ok: a topk run is priced by topk's curve"

printf 'device: x\n' > "$WORK/bad.yaml"
if "$BIN" bench profile --update "$WORK/bad.yaml" > "$WORK/bad.log" 2>&1; then fail "a file without models was accepted"; fi
grep -q "bad.yaml: not a compute profile" "$WORK/bad.log" || { cat "$WORK/bad.log"; fail "the error does not name the file"; }
echo "ok: a file that is not a profile is refused by name"

