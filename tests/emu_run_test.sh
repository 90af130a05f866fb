#!/usr/bin/env bash
# `stellatrain run --backend emu` end to end (docs/emu.md):
#
# 1. All four systems (stellatrain, topk-sync, ddp, ddp-gloo) over a WAN
#    whose trace drops to 0 Mbps for 10 s: every run completes (no peer
#    timeout), the results show the stall (an iteration of at least 9 s,
#    link.csv at 0 in the outage), summary.json agrees with the runs'
#    files, the manifests record the backend, the host's CPUs and load, and
#    `stellatrain plot` draws the emu runs like sim runs.
# 2. The headline scenario, scenarios/fluct-115mbps.yaml, on the emu backend
#    with a short budget (--iterations; its 700 iterations would take about
#    half an hour of wall clock on 2 cores), and its figures.
#
#   tests/emu_run_test.sh path/to/stellatrain [work dir]
#
# Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN); skips (exit 77) otherwise.
set -euo pipefail
SOURCE_DIR=$(cd "$(dirname "$0")/.." && pwd)
source "$SOURCE_DIR/tests/emu_test_lib.sh"
STELLATRAIN=$(absolute_binary "${1:?usage: emu_run_test.sh path/to/stellatrain [work dir]}")
require_root
enter_work_dir emu_run_test "${2:-}"

# 115 Mbps, then nothing from 3 s to 13 s of network time, then 115 Mbps.
# Network time 0 is when rank 0 is about to connect. The runs train through
# 3 s: ddp and ddp-gloo move 0.8 MB per iteration (60 iterations), the
# sparse systems far less (300 iterations).
cat > outage.csv <<'TRACE'
time_s,mbps
0,115
3,0
13,115
120,115
TRACE
write_scenario() {  # name, systems, iterations, eval interval
  cat > "$1.yaml" <<SCENARIO
name: $1
clusters:
  - {name: a, nodes: 1, gpus_per_node: 1}
  - {name: b, nodes: 1, gpus_per_node: 1}
links:
  trace_offset: 0   # the outage must come where the test expects it, whatever the seed
  wan:
    default: {trace: outage.csv, delay_ms: 20, buffer_bdp: 2}
model: mlp
dataset: synthetic
batch: {per_gpu: 32}
systems: $2
target_accuracy: 0.5
budget: {iterations: $3}
eval: {interval: $4, samples: 500}
SCENARIO
}
write_scenario outage-sparse "[{name: stellatrain, label: st}, topk-sync]" 300 100
write_scenario outage-dense "[ddp, ddp-gloo]" 60 20

check_figures() {
  python3 - "$1" <<'PY'
import os, sys, xml.etree.ElementTree as ET
out = sys.argv[1]
for name in ["tta", "accuracy_vs_iteration", "iteration_time", "wan_throughput", "speedup"]:
    png = os.path.join(out, "figures", name + ".png")
    if not os.path.isfile(png) or open(png, "rb").read(8) != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"FAIL: {png} is missing or not a PNG")
    if not ET.parse(os.path.join(out, "figures", name + ".svg")).getroot().tag.endswith("svg"):
        sys.exit(f"FAIL: {name}.svg has no <svg> root")
report = open(os.path.join(out, "report.md")).read()
if "figures/wan_throughput.png" not in report:
    sys.exit(f"FAIL: {out}/report.md lacks the WAN figure")
print(f"ok: figures of {out}")
PY
}

echo "== four systems over a 10 s outage"
for name in outage-sparse outage-dense; do
  "$STELLATRAIN" run "$name.yaml" --backend emu --out "$name" --quiet > "$name.log" 2>&1 || {
    cat "$name.log"; fail "$name: the run failed"; }
  python3 - "$name" <<'PY'
import csv, json, math, os, sys
out = sys.argv[1]
summary = json.load(open(os.path.join(out, "summary.json")))
def check(ok, what):
    if not ok:
        sys.exit(f"FAIL ({out}): {what}")
check(summary["backend"] == "emu" and summary["clock"] == "wall seconds", "backend and clock")
check(summary["wan_shaping"] is True and "emu backend" in summary["note"], "wan_shaping and note")
expected = ["st", "topk-sync"] if out == "outage-sparse" else ["ddp", "ddp-gloo"]
check(list(summary["systems"]) == expected, f"systems {list(summary['systems'])}")
budget = 300 if out == "outage-sparse" else 60
for label, entry in summary["systems"].items():
    check("error" not in entry, f"{label} failed: {entry.get('error')}")
    run = os.path.join(out, label)
    for name in ("manifest.json", "iterations.csv", "eval.csv", "link.csv", "logs/rank0.log", "logs/rank1.log"):
        check(os.path.isfile(os.path.join(run, name)), f"{label}/{name} exists")
    manifest = json.load(open(os.path.join(run, "manifest.json")))
    check(manifest["backend"] == "emu", f"{label}: manifest backend")
    host = manifest["host"]["at_start"]
    check(host["cpus"] >= 1 and len(host["load_average"]) == 3, f"{label}: host cpus and load")
    check(manifest["emulation"]["peer_timeout_s"] >= 50, f"{label}: peer timeout raised for the outage")
    s = manifest["summary"]
    check(len(s["checksums"]) == 2 and s["checksums"][0] == s["checksums"][1], f"{label}: ranks agree {s['checksums']}")
    check(entry["iterations"] == budget, f"{label}: {budget} iterations, got {entry['iterations']}")
    check(entry["wan_bytes"] == s["wan_bytes"] and entry["wan_bytes"] > 0, f"{label}: wan_bytes")
    rows = sorted(csv.DictReader(open(os.path.join(run, "eval.csv"))), key=lambda r: int(r["iteration"]))
    reached = [r for r in rows if float(r["accuracy"]) >= summary["target_accuracy"]]
    tta = float(reached[0]["time_s"]) if reached else None
    check((tta is None and entry["tta_s"] is None) or math.isclose(tta, entry["tta_s"], rel_tol=1e-9),
          f"{label}: tta_s vs eval.csv")
    # The stall: one iteration waited out the outage.
    iterations = list(csv.DictReader(open(os.path.join(run, "iterations.csv"))))
    longest = max(float(r["iteration_ms"]) for r in iterations)
    check(longest >= 9000, f"{label}: no iteration shows the 10 s stall (longest {longest:.0f} ms)")
    links = list(csv.DictReader(open(os.path.join(run, "link.csv"))))
    outage = [r for r in links if 4 <= int(r["second"]) <= 11]
    check(outage and all(float(r["configured_mbps"]) == 0 and float(r["delivered_mbps"]) < 0.05 for r in outage),
          f"{label}: link.csv shows the outage")
    print(f"ok: {label}: rode out the outage, longest iteration {longest / 1000:.1f} s, "
          f"mean {entry['mean_iteration_s'] * 1000:.0f} ms, {entry['wan_bytes'] / 1e6:.1f} MB on the WAN")
PY
  "$STELLATRAIN" plot "$name" > plot.log 2>&1 || { cat plot.log; fail "stellatrain plot $name"; }
  check_figures "$name"
done

echo "== the headline scenario on the emu backend, short budget"
if ! dpkg -s dataset-fashion-mnist > /dev/null 2>&1; then
  echo "SKIP part 2: Fashion-MNIST (dataset-fashion-mnist) is not installed"
else
  # Its first seed (the file has five), as it is otherwise.
  "$STELLATRAIN" run "$SOURCE_DIR/scenarios/fluct-115mbps.yaml" --backend emu --iterations 20 --seeds 1 --out headline --quiet \
    > headline.log 2>&1 || { cat headline.log; fail "fluct-115mbps on emu failed"; }
  python3 - headline <<'PY'
import json, os, sys
summary = json.load(open(os.path.join(sys.argv[1], "summary.json")))
for label, entry in summary["systems"].items():
    if "error" in entry or entry["iterations"] != 20:
        sys.exit(f"FAIL: headline {label}: {entry}")
    print(f"ok: headline {label}: 20 iterations, mean {entry['mean_iteration_s'] * 1000:.0f} ms, "
          f"best accuracy {entry['best_accuracy']:.3f}")
PY
  "$STELLATRAIN" plot headline > plot.log 2>&1 || { cat plot.log; fail "stellatrain plot headline"; }
  check_figures headline
fi
echo "emu_run_test: all passed"
