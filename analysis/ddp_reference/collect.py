"""Pieces of run_reference.sh: merge one delay's measurements, print the table.

    python3 collect.py run DIR DELAY_MS SCENARIO RUN_ID > run.json
    python3 collect.py results OUT.json COMMAND DIR/run-*.json
    python3 collect.py table OUT.json

`run` reads DIR's files (iperf3's JSON per direction, the RTT probe, rank
0's JSON line, the uptime lines) into one object; `results` puts the runs
and the host under one file; `table` prints delay, compute, allreduce and
DDP iteration times from it.
"""

import datetime
import json
import os
import platform
import statistics
import sys


def read_text(path):
    with open(path) as f:
        return f.read().strip()


def iperf_summary(path):
    with open(path) as f:
        d = json.load(f)
    end = d["end"]
    return {
        "seconds": d["start"]["test_start"]["duration"],
        "received_mbps": end["sum_received"]["bits_per_second"] / 1e6,
        "sent_mbps": end["sum_sent"]["bits_per_second"] / 1e6,
        "retransmits": end["sum_sent"].get("retransmits"),
    }


def iperf_bidir_summary(path):
    """iperf3 --bidir: the client (node 0, cluster a) sends a->b and
    receives b->a at the same time, as the ranks' ring allreduce does."""
    with open(path) as f:
        end = json.load(f)["end"]
    return {
        "a->b_received_mbps": end["sum_received"]["bits_per_second"] / 1e6,
        "b->a_received_mbps": end["sum_received_bidir_reverse"]["bits_per_second"] / 1e6,
    }


def run(directory, delay_ms, scenario, run_id):
    p = lambda name: os.path.join(directory, name)
    configured = 115.0
    a_b = iperf_summary(p("iperf-a-b.json"))
    b_a = iperf_summary(p("iperf-b-a.json"))
    for x in (a_b, b_a):
        x["received_of_configured"] = x["received_mbps"] / configured
    with open(p("rank0.json")) as f:
        bench = json.loads(f.read().strip().splitlines()[-1])
    return {
        "delay_ms": float(delay_ms),
        "configured_mbps": configured,
        "scenario": scenario,
        "emu_run_id": run_id,
        "uptime_before": read_text(p("uptime-before.txt")),
        "uptime_after": read_text(p("uptime-after.txt")),
        "load_wait": read_text(p("load-wait.txt")),
        # %CPU (averaged over each process's life), elapsed seconds, command.
        "busiest_processes_before": read_text(p("top-before.txt")).splitlines(),
        "rtt_probe": json.loads(read_text(p("rtt.json"))),
        "iperf3_goodput": {"a->b": a_b, "b->a": b_a, "both_at_once": iperf_bidir_summary(p("iperf-bidir.json"))},
        "bench": bench,
    }


def results(out, command, run_files):
    runs = []
    for path in run_files:
        with open(path) as f:
            runs.append(json.load(f))
    doc = {
        "what": "real PyTorch DDP (Gloo, CPU) for resnet18 over an emulated 115 Mbps WAN; analysis/ddp_reference/README.md",
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "command": command,
        "host": {"nproc": os.cpu_count(), "kernel": platform.release(), "python": platform.python_version()},
        "runs": runs,
    }
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def rank_medians(run_doc, phase, key):
    return [r["phases"][phase][key]["median_ms"] for r in run_doc["bench"]["ranks"] if phase in r["phases"]]


def table(path):
    with open(path) as f:
        doc = json.load(f)
    print("| delay (ms) | compute fwd+bwd (ms, rank 0 / 1) | SGD step (ms) | allreduce 44.7 MB (ms) "
          "| DDP iteration median (ms) | DDP iteration mean (ms) | buckets | DDP forward CPU share "
          "| goodput a->b / b->a alone (Mbps) | goodput a->b / b->a at once (Mbps) "
          "| RTT (ms) | load 1-min before / after |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in doc["runs"]:
        ranks = r["bench"]["ranks"]
        compute = rank_medians(r, "compute", "forward_backward")
        step = rank_medians(r, "compute", "optimizer_step")
        allreduce = rank_medians(r, "allreduce", "all_reduce")
        ddp_median = rank_medians(r, "ddp", "iteration")
        ddp_mean = [x["phases"]["ddp"]["iteration"]["mean_ms"] for x in ranks]
        buckets = ranks[0]["phases"]["ddp"]["buckets"]
        g = r["iperf3_goodput"]
        both = g["both_at_once"]
        share = statistics.median(s for x in ranks for s in x["phases"]["ddp"]["forward_cpu_share"])
        load = lambda s: s.split("load average:")[1].split(",")[0].strip()
        print(f"| {r['delay_ms']:g} | {compute[0]:.0f} / {compute[1]:.0f} | {statistics.fmean(step):.0f} "
              f"| {statistics.fmean(allreduce):.0f} | {statistics.fmean(ddp_median):.0f} "
              f"| {statistics.fmean(ddp_mean):.0f} | {buckets} | {share:.2f} "
              f"| {g['a->b']['received_mbps']:.1f} / {g['b->a']['received_mbps']:.1f} "
              f"| {both['a->b_received_mbps']:.1f} / {both['b->a_received_mbps']:.1f} "
              f"| {r['rtt_probe']['rtt_median_ms']:.2f} | {load(r['uptime_before'])} / {load(r['uptime_after'])} |")
    print("(compute: medians per rank; step, allreduce and DDP: the mean of the two ranks' medians or means;")
    print(" DDP forward CPU share: the median over both ranks' measured iterations, about 1 when uncontended)")


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "run":
        print(json.dumps(run(*sys.argv[2:6])))
    elif len(sys.argv) >= 4 and sys.argv[1] == "results":
        results(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif len(sys.argv) == 3 and sys.argv[1] == "table":
        table(sys.argv[2])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
