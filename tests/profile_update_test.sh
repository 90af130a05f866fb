#!/usr/bin/env bash
# `stellatrain bench profile --update FILE` (docs/sim-compute.md, "Profile files"):
# measures the CPU kernels and cores again and keeps everything else of the
# file (its comment lines, models, accelerator); the result is a profile the
# sim reads; a file that is not a profile is refused naming it.
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
import os, sys
def sections(path):
    out, key = {}, None
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        if not line.startswith(" "):
            key, _, rest = line.partition(":")
            out[key] = [rest.strip()] if rest.strip() else []
        else:
            out[key].append(line.strip())
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
                   "compress_ns_per_element_at_density", "optimize_ns_per_index"}, f"cpu keys {sorted(cpu)}")
curve = dict(p.split(": ") for p in cpu.pop("compress_ns_per_element_at_density").strip("{}").split(", "))
check(sorted(float(d) for d in curve) == [0.001, 0.01, 0.05, 0.2, 0.5], f"compress densities {sorted(curve)}")
check(all(float(v) > 0 for v in list(curve.values()) + list(cpu.values())), "every rate positive")
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

printf 'device: x\n' > "$WORK/bad.yaml"
if "$BIN" bench profile --update "$WORK/bad.yaml" > "$WORK/bad.log" 2>&1; then fail "a file without models was accepted"; fi
grep -q "bad.yaml: not a compute profile" "$WORK/bad.log" || { cat "$WORK/bad.log"; fail "the error does not name the file"; }
echo "ok: a file that is not a profile is refused by name"

