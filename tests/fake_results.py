"""A small fake `stellatrain run` results tree for the tests of the
analysis scripts (tests/test_plot_run.py, tests/test_tta_tables.py): run
folders whose accuracy rises as ceiling * (1 - exp(-t / tau)), with the
files core/train/run/results.cc writes, and a summary shaped as
apps/run_summary.cc writes it. Standard library only.
"""
import json
import math
import os

TARGET = 0.8


def read(path):
    with open(path) as f:
        return f.read()


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def fake_control(folder, duration):
    """control.csv as core/train/run/results.cc writes it: a tick every 0.25 s."""
    rows = []
    for tick in range(1, int(duration * 4)):
        second = tick * 0.25
        density = 0.05 + 0.01 * (tick % 4)
        measured = "" if tick % 5 == 0 else f"{90 + tick % 7:.3f}"
        rows.append(f"{second:.6f},{tick * 10},{tick * 10 + 3},{100 + tick:.3f},{measured},20.000,0.0100,"
                    f"36.000,14.400,{density:.6f},{64 + tick % 2};{64 - tick % 2}|64;64,95.000,\"measured\"")
    write(os.path.join(folder, "control.csv"),
          "time_s,iteration,effective_iteration,estimated_mbps,measured_mbps,latency_ms,wait_fraction,compute_ms,"
          "budget_ms,density,batch,delivered_mbps,reason\n" + "\n".join(rows) + "\n")


def fake_run(folder, iteration_s, tau_s, ceiling, links=True, iterations=200, eval_every=20, control=False):
    """One run folder: accuracy rises as ceiling * (1 - exp(-t / tau))."""
    header = ("rank,iteration,start_s,iteration_ms,wait_ms,forward_ms,backward_ms,gather_ms,compress_ms,"
              "exchange_ms,optimize_ms,pipeline_ms,bytes_sent,bytes_received,loss\n")
    rows = [f"0,{i},{i * iteration_s:.6f},{iteration_s * 1e3 * (1.5 if i % 2 else 0.5):.3f},0,1,1,0,0,1,0,0,100,100,1.0"
            for i in range(iterations)]
    write(os.path.join(folder, "iterations.csv"), header + "\n".join(rows) + "\n")
    evals = []
    for it in range(eval_every, iterations + 1, eval_every):
        t = it * iteration_s
        evals.append(f"{t:.6f},{it},{ceiling * (1 - math.exp(-t / tau_s)):.6f},0.5,200")
    write(os.path.join(folder, "eval.csv"), "time_s,iteration,accuracy,loss,samples\n" + "\n".join(evals) + "\n")
    duration = iterations * iteration_s
    write(os.path.join(folder, "manifest.json"),
          json.dumps({"system": os.path.basename(folder), "backend": "sim", "summary": {"duration_s": duration}}))
    if links:
        rows = []
        for direction, base in (("a->b", 100.0), ("b->a", 120.0)):
            for second in range(int(math.ceil(duration))):
                rate = base + 10 * (second % 3)
                rows.append(f"{second},{direction},{rate:.3f},{rate * 0.6:.3f},{int(rate * 0.6e6 / 8)}")
        write(os.path.join(folder, "link.csv"),
              "second,link,configured_mbps,delivered_mbps,delivered_bytes\n" + "\n".join(rows) + "\n")
    if control:
        fake_control(folder, duration)


def fake_results(root):
    """ddp (TTA), stellatrain (3 seeds, TTA), topk-sync (no TTA, no link.csv),
    broken (failed). The shape follows apps/run_summary.cc."""
    fake_run(os.path.join(root, "ddp"), 0.2, 12.0, 0.9)
    for seed in (1, 2, 3):
        fake_run(os.path.join(root, f"stellatrain-s{seed}"), 0.01, 0.5 + 0.1 * seed, 0.92, control=True)
    fake_run(os.path.join(root, "topk-sync"), 0.05, 5.0, 0.7, links=False)
    summary = {
        "scenario": "fake-2x2", "backend": "sim", "clock": "simulated seconds", "target_accuracy": TARGET,
        "seeds": [1, 2, 3], "speedup_reference": "ddp",
        "systems": {
            "ddp": {"tta_s": 28.0, "best_accuracy": 0.85, "iterations": 200, "wan_bytes": 1_500_000_000,
                    "mean_iteration_s": 0.2, "speedup_vs_ddp": 1.0, "runs": ["ddp"]},
            "stellatrain": {"tta_s": 1.6, "best_accuracy": 0.9123, "iterations": 200, "wan_bytes": 45_000_000,
                            "mean_iteration_s": 0.0105, "speedup_vs_ddp": 17.5,
                            "runs": ["stellatrain-s1", "stellatrain-s2", "stellatrain-s3"],
                            "per_seed": [{"seed": s, "run": f"stellatrain-s{s}", "tta_s": 1.2 + 0.2 * s,
                                          "best_accuracy": 0.91} for s in (1, 2, 3)]},
            "topk-sync": {"tta_s": None, "best_accuracy": 0.6951, "iterations": 200, "wan_bytes": 90_000_000,
                          "mean_iteration_s": 0.05, "speedup_vs_ddp": None, "runs": ["topk-sync"]},
            "broken": {"system": "topk-sync", "error": "seed 1: out of memory", "runs": ["broken"]},
        },
    }
    write(os.path.join(root, "summary.json"), json.dumps(summary, indent=1))
    return summary
