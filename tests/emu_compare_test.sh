#!/usr/bin/env bash
# The two backends agree (docs/emu.md, "Measured acceptance", its sim vs
# emu row): one scenario (CNN, 2 clusters x 1 node, constant 115 Mbps,
# 20 ms one way, 2-BDP buffer, 60 iterations) run on ns-3 and on the emulator (stellatrain at its fixed 5%
# density: the controller off, so both backends exchange the same bytes). Per system (ddp,
# stellatrain), the median exchange time per iteration (iterations.csv's
# exchange_ms, first 15 iterations left out: connection start-up) is within
# 10% between backends, and so is the flow-level model's (docs/sim-flow.md,
# the sim backend's `--network flow`) against the emulator's; and ddp-gloo's
# median iteration time is within 10%
# of ddp's on one emulated link (115 Mbps, 2 ms one way; at 20 ms it is
# printed, not checked: gloo's ring pays about one more one-way delay per
# allreduce than the engine's, measured in docs/emu.md). Prints the
# per-iteration comparison. A batch of 8 keeps the runs network-bound, so
# the ranks' real compute (and the host's load) hardly moves the exchange.
#
# On the emulator the two ranks' compute is real and never in perfect step,
# and each rank's exchange_ms includes waiting for its peer; the sim's ranks
# are in step, so there rank 0 is every rank. What takes the skew out:
# * ddp (a ring allreduce: no rank finishes before the last one arrived):
#   the rank that arrives last measures the network alone, i.e. the smaller
#   of the two ranks' times;
# * stellatrain (per layer, one allgather step: each rank waits for its
#   peer's chunk): a late rank finds the chunk waiting (L - skew) while its
#   peer waits L + skew, so the mean of the two is the network time L
#   (exactly, for a skew below L).
#
#   tests/emu_compare_test.sh path/to/stellatrain [work dir]
#
# Timing-sensitive: ctest runs it alone (RUN_SERIAL), and a disagreement gets
# up to two more emulator attempts (below). Needs root and the
# sim backend; skips (exit 77) otherwise.
set -euo pipefail
SOURCE_DIR=$(cd "$(dirname "$0")/.." && pwd)
source "$SOURCE_DIR/tests/emu_test_lib.sh"
STELLATRAIN=$(absolute_binary "${1:?usage: emu_compare_test.sh path/to/stellatrain [work dir]}")
require_root
require_sim_backend "$STELLATRAIN" "the test compares with it"
enter_work_dir emu_compare_test "${2:-}"

write_scenario() {  # name, systems, one-way delay (ms), iterations
  cat > "$1.yaml" <<SCENARIO
name: $1
clusters:
  - {name: a, nodes: 1, gpus_per_node: 1}
  - {name: b, nodes: 1, gpus_per_node: 1}
links:
  wan:
    default: {mbps: 115, delay_ms: $3, buffer_bdp: 2}
compute: {model: profile, profile: $SOURCE_DIR/scenarios/profiles/cpu-2core.yaml}
model: cnn
dataset: synthetic
batch: {per_gpu: 8}
systems: $2
target_accuracy: 0.9
budget: {iterations: $4}
eval: {interval: 0, samples: 200}
SCENARIO
}
write_scenario compare "[ddp, {name: stellatrain, controller: off}]" 20 60
write_scenario compare-emu "[ddp, {name: stellatrain, controller: off}, ddp-gloo]" 20 60
write_scenario gloo "[ddp, ddp-gloo]" 2 50

"$STELLATRAIN" run compare.yaml --backend sim --out sim --quiet > sim.log 2>&1 || { cat sim.log; echo "FAIL: sim run"; exit 1; }
"$STELLATRAIN" run compare.yaml --backend sim --network flow --out flow --quiet > flow.log 2>&1 || { cat flow.log; echo "FAIL: sim run (flow)"; exit 1; }
run_emulator() {
  rm -rf emu gloo
  "$STELLATRAIN" run compare-emu.yaml --backend emu --out emu --quiet > emu.log 2>&1 || { cat emu.log; echo "FAIL: emu run"; exit 1; }
  "$STELLATRAIN" run gloo.yaml --backend emu --out gloo --quiet > gloo.log 2>&1 || { cat gloo.log; echo "FAIL: gloo run"; exit 1; }
}

check_agreement() {
python3 - <<'PY'
import csv, json, statistics, sys

def column(path, name):
    return [float(r[name]) for r in csv.DictReader(open(path))]

# Left out of every median: connection start-up. Linux's Cubic leaves slow
# start early (HyStart) and grows its window more slowly than ns-3's
# (docs/emu.md), so ddp's emu/sim falls from 1.8x to 1.0x only by the
# seventh to tenth iteration on this build machine; a CI machine once took
# longer than the 3 iterations that used to be left out.
WARMUP = 15
failed = []
# How the host held up: an emulated run's timing is real, so a host busy or
# stolen from (a shared CI machine) or a delay line released late explains
# an attempt that disagrees (emu/host_check.h, emu/delay_line.h).
for folder, system in (("emu", "ddp"), ("emu", "stellatrain"), ("emu", "ddp-gloo"), ("gloo", "ddp"), ("gloo", "ddp-gloo")):
    manifest = json.load(open(f"{folder}/{system}/manifest.json"))
    host, links = manifest["host"], manifest["summary"]["wan_links"]
    use = host.get("cpu_over_run") or {}
    late = ", ".join(f"{name} {link.get('delay_late_packets', '-')} of {link['packets']} "
                     f"(worst {link.get('delay_worst_late_ms', float('nan')):.1f} ms)" for name, link in links.items())
    print(f"emu host, {folder}/{system}: load at the start {[round(x, 2) for x in host['at_start']['load_average']]}, "
          f"CPU over the run busy {use.get('busy', float('nan')):.2f} steal {use.get('steal', float('nan')):.3f}; "
          f"delay line, packets released >= 1 ms late: {late}")
for (system, model) in (("ddp", "sim"), ("stellatrain", "sim"), ("ddp", "flow"), ("stellatrain", "flow")):
    sim = column(f"{model}/{system}/iterations.csv", "exchange_ms")
    rank0 = column(f"emu/{system}/iterations.csv", "exchange_ms")
    rank1 = column(f"emu/{system}/rank1/iterations.csv", "exchange_ms")
    emu = [min(a, b) if system == "ddp" else (a + b) / 2 for a, b in zip(rank0, rank1)]
    network = "ns-3" if model == "sim" else "flow-level model"
    print(f"\n{system}: exchange time per iteration (ms), sim ({network}) vs emu (namespaces, HTB, NFQUEUE delay)")
    print(f"{'iteration':>9} {'sim':>9} {'emu':>9} {'emu/sim':>8} {'rank 0':>9} {'rank 1':>9}")
    for i, (s, e) in enumerate(zip(sim, emu)):
        print(f"{i:>9} {s:>9.1f} {e:>9.1f} {e / s if s else float('nan'):>8.2f} {rank0[i]:>9.1f} {rank1[i]:>9.1f}")
    sim_median, emu_median = statistics.median(sim[WARMUP:]), statistics.median(emu[WARMUP:])
    ratio = emu_median / sim_median
    print(f"{system} ({network}): median after {WARMUP} iterations: sim {sim_median:.1f} ms, emu {emu_median:.1f} ms, "
          f"emu/sim {ratio:.3f}")
    if abs(ratio - 1) > 0.10:
        by_iteration = " ".join(f"{e / s:.2f}" if s else "nan" for s, e in zip(sim, emu))
        failed.append(f"{system} ({network}): exchange time emu/sim = {ratio:.3f}, outside 1 +- 0.10 "
                      f"(emu/sim by iteration: {by_iteration})")
for folder, delay, checked in (("emu", 20, False), ("gloo", 2, True)):
    ddp = column(f"{folder}/ddp/iterations.csv", "iteration_ms")
    gloo = column(f"{folder}/ddp-gloo/iterations.csv", "iteration_ms")
    ddp_median, gloo_median = statistics.median(ddp[WARMUP:]), statistics.median(gloo[WARMUP:])
    ratio = gloo_median / ddp_median
    print(f"\nemu, 115 Mbps, {delay} ms one way: iteration time (ms), median after {WARMUP}: ddp {ddp_median:.1f}, "
          f"ddp-gloo {gloo_median:.1f}, ddp-gloo/ddp {ratio:.3f}{'' if checked else ' (not checked)'}")
    if checked and abs(ratio - 1) > 0.10:
        failed.append(f"ddp-gloo/ddp iteration time at {delay} ms = {ratio:.3f}, outside 1 +- 0.10")
if failed:
    sys.exit("FAIL: " + "; ".join(failed))
print("emu_compare_test: all passed")
PY
}

# Timing on a shared machine: up to two fresh emulator attempts (new
# namespaces, new connections) when the first disagrees; every attempt is
# printed with how its host held up. A CI host once failed two attempts in a
# row (each emulated exchange up to 5x the sim's, easing over 40
# iterations; this machine agrees within 3% run after run). The sim runs are
# deterministic and are not repeated.
attempt_until_agreed 3 emu_compare_test run_emulator check_agreement
