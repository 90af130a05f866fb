#!/usr/bin/env bash
# A timing run on the emulator (docs/emu.md, "Timing runs"): its node
# processes skip the forward and backward math and pace every compute task
# by the scenario's analytic model (core/runtime/paced_executor.h), run
# their CPU stages on a 2% sample, and pad each message to its full size on
# the wire (core/comm/frame.h, padding frames), so real kernel TCP carries
# the full model's bytes. ResNet-18 priced by an RTX 3090, 2 clusters x 1
# node, 100 Mbps constant, 20 ms one way, 8 iterations, against the sim
# backend's flow-level network (docs/sim-flow.md) on the same scenario:
# * stellatrain at a fixed 5% (compute-bound): median iteration time within
#   5% of the sim's, and never more than 1% under it (pacing never lets a
#   task end early);
# * ddp (network-bound, 47 MB per iteration each way): median iteration time
#   within 10%, and WAN bytes within 3% of the sim's (unpadded, the sampled
#   payloads would be a fiftieth of that);
# * the manifests say the compute was paced, with the pacing's late tasks,
#   and host.fell_behind names late pacing exactly when a rank ran over 1%
#   of its tasks late;
# * the first iteration starts at the emulator's time 0 (its clock and trace
#   start with training, not with the nodes' setup);
# * a run whose pacing cannot hold (full-size CPU stages priced at a tenth
#   of the RTX 3090's times) is listed in host.fell_behind and warned about.
#
#   tests/emu_timing_test.sh path/to/stellatrain [work dir]
#
# Timing-sensitive: ctest runs it alone (RUN_SERIAL), and a disagreement gets
# up to two more emulator attempts (about 60 s each), as emu_compare_test.sh
# does. Needs root and the sim backend; skips (exit 77) otherwise.
set -euo pipefail
SOURCE_DIR=$(cd "$(dirname "$0")/.." && pwd)
source "$SOURCE_DIR/tests/emu_test_lib.sh"
STELLATRAIN=$(absolute_binary "${1:?usage: emu_timing_test.sh path/to/stellatrain [work dir]}")
require_root
require_sim_backend "$STELLATRAIN" "it also builds the compute-time models"
enter_work_dir emu_timing_test "${2:-}"

cat > paced.yaml <<'SCENARIO'
name: paced
clusters:
  - {name: a, nodes: 1, gpus_per_node: 1}
  - {name: b, nodes: 1, gpus_per_node: 1}
links:
  wan:
    default: {mbps: 100, delay_ms: 20, buffer_bdp: 2}
compute: {model: analytic, math: timing, device_tflops: 35.6, device_gbps: 936, cpu_gbps: 5, h2d_gbps: 25,
          stage_sample: {fraction: 0.02}}
model: resnet18
dataset: {name: synthetic, shape: [3, 224, 224], classes: 100}
optimizer: {name: sgd, lr: 0.1, momentum: 0.9}
batch: {per_gpu: 64}
systems: [ddp, {name: stellatrain, controller: off}]
budget: {iterations: 8}
SCENARIO

"$STELLATRAIN" run paced.yaml --backend sim --network flow --out sim --quiet > sim.log 2>&1 ||
  { cat sim.log; fail "sim run"; }

# Pacing that cannot hold: the same network, the CPU stages at full size and
# every price a tenth of the RTX 3090's, so no host's real compression fits
# in its price (11.7M floats priced at 500 GB/s, under 0.1 ms; a CPU takes
# milliseconds to select from them). The launcher must say so (host.fell_behind, and its warning).
sed -e 's/device_tflops: 35.6, device_gbps: 936, cpu_gbps: 5, h2d_gbps: 25/device_tflops: 356, device_gbps: 9360, cpu_gbps: 500, h2d_gbps: 250/' \
    -e 's/stage_sample: {fraction: 0.02}/stage_sample: {fraction: 1}/' -e 's/iterations: 8/iterations: 4/' \
    -e 's/^systems: .*/systems: [{name: stellatrain, controller: off}]/' paced.yaml > late.yaml
grep -q "fraction: 1}" late.yaml && grep -q "cpu_gbps: 500" late.yaml || fail "late.yaml did not get its prices"
"$STELLATRAIN" run late.yaml --backend emu --out late --quiet > late.log 2>&1 || { cat late.log; fail "late pacing run"; }
python3 - <<'PY' || { cat late.log; fail "late pacing was not reported"; }
import json, sys
manifest = json.load(open("late/stellatrain/manifest.json"))
share = manifest["summary"]["pacing"]["late_share"]
behind = manifest["host"]["fell_behind"]
print(f"late pacing: rank 0 ended {100 * share:.1f}% of its tasks late; host.fell_behind: {behind}")
if share <= 0.01 or not any(reason.startswith("paced compute ran late on rank") for reason in behind):
    sys.exit("FAIL: the launcher did not list the late pacing")
PY
grep -q "the host fell behind: .*paced compute ran late" late.log || { cat late.log; fail "no warning for late pacing"; }

check_agreement() {
python3 - <<'PY'
import csv, json, os, statistics, sys

WARMUP = 2  # connection start-up
failed = []
def iterations(folder, system):
    return [float(r["iteration_ms"]) for r in csv.DictReader(open(f"{folder}/{system}/iterations.csv"))]
for system, within in (("stellatrain", 0.05), ("ddp", 0.10)):
    sim_manifest = json.load(open(f"sim/{system}/manifest.json"))
    emu_manifest = json.load(open(f"emu/{system}/manifest.json"))
    summary = emu_manifest["summary"]
    if emu_manifest.get("compute_paced") is not True:
        failed.append(f"{system}: the emulated node's manifest does not say its compute was paced")
    pacing = summary.get("pacing")
    if not pacing or pacing["tasks"] == 0:
        failed.append(f"{system}: no pacing statistics in the manifest")
        continue
    # The launcher lists late pacing among host.fell_behind exactly when a
    # rank's paced compute ran over 1% of its tasks late (emu/host_check.h).
    ranks = [summary] + [json.load(open(f"emu/{system}/rank{r}/manifest.json"))["summary"]
                         for r in range(1, emu_manifest["nodes"])]
    any_late = any((rank.get("pacing") or {}).get("late_share", 0) > 0.01 for rank in ranks)
    listed = any("paced compute ran late" in reason for reason in emu_manifest["host"]["fell_behind"])
    if any_late != listed:
        failed.append(f"{system}: a rank's pacing late over 1% is {any_late} but host.fell_behind lists it: {listed}")
    host = emu_manifest["host"].get("cpu_over_run") or {}
    print(f"{system}: paced tasks {pacing['tasks']}, late {pacing['late_tasks']} (worst {pacing['worst_late_ms']:.1f} ms); "
          f"host CPU over the run busy {host.get('busy', float('nan')):.2f} steal {host.get('steal', float('nan')):.3f}")
    # The emulator's clock and trace start with training, as the sim's do
    # (core/train/run/training_clock.h), after seconds of setup.
    first = next(csv.DictReader(open(f"emu/{system}/iterations.csv")))
    if float(first["start_s"]) > 1.0:
        failed.append(f"{system}: the first iteration starts at {first['start_s']} s: the clock counts setup")
    if os.path.exists(f"emu/{system}/.training_started"):
        failed.append(f"{system}: the launcher left rank 0's start mark behind")
    sim, emu = iterations("sim", system), iterations("emu", system)
    print(f"  iteration ms, sim (flow): {[round(x) for x in sim]}")
    print(f"  iteration ms, emu:        {[round(x) for x in emu]}")
    sim_median, emu_median = statistics.median(sim[WARMUP:]), statistics.median(emu[WARMUP:])
    ratio = emu_median / sim_median
    print(f"  median after {WARMUP}: sim {sim_median:.1f} ms, emu {emu_median:.1f} ms, emu/sim {ratio:.3f}")
    if abs(ratio - 1) > within:
        failed.append(f"{system}: iteration time emu/sim {ratio:.3f}, outside 1 +- {within}")
    if system == "stellatrain" and ratio < 0.99:
        failed.append(f"stellatrain: paced iterations {ratio:.3f} of the model's: a task ended before its price")
    if system == "ddp":
        bytes_ratio = summary["wan_bytes"] / sim_manifest["summary"]["wan_bytes"]
        print(f"  WAN bytes: sim {sim_manifest['summary']['wan_bytes']}, emu {summary['wan_bytes']}, emu/sim {bytes_ratio:.4f}")
        if abs(bytes_ratio - 1) > 0.03:
            failed.append(f"ddp: WAN bytes emu/sim {bytes_ratio:.4f}: the padding did not carry the full size")
if failed:
    sys.exit("FAIL: " + "; ".join(failed))
print("emu_timing_test: all passed")
PY
}

run_emulator() {
  rm -rf emu
  "$STELLATRAIN" run paced.yaml --backend emu --out emu --quiet > emu.log 2>&1 || { cat emu.log; fail "emu run"; }
}
attempt_until_agreed 3 emu_timing_test run_emulator check_agreement
