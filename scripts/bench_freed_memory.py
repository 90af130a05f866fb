#!/usr/bin/env python3
"""What keeping freed memory buys (core/runtime/freed_memory.h): the same
short run under ST_MALLOC=glibc and ST_MALLOC=keep, both started at once
(side by side, so both see the same machine load), repeated; prints each
pair's wall, user and kernel CPU seconds, page faults and peak memory, the
glibc / keep ratios, and checks that both runs wrote byte-identical
results (a setting that changed a result would be a bug, not a speed-up).

    scripts/bench_freed_memory.py [--bin build/apps/stellatrain]
        [--scenario FILE] [--systems LABELS] [--iterations N] [--repeat K]

Exit status 1 when the results differ or a run fails. docs/engine.md,
"Freed memory", has the numbers and the command that made them.
"""
import argparse
import filecmp
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SETTINGS = ("glibc", "keep")
COMPARED = ("iterations.csv", "eval.csv", "control.csv", "link.csv")


def start(args, setting, out):
    env = dict(os.environ, ST_MALLOC=setting)
    cmd = [args.bin, "run", args.scenario, "--systems", args.systems, "--seeds", "1",
           "--iterations", str(args.iterations), "--quiet", "--out", str(out)]
    with open(out.with_suffix(".log"), "w") as log:  # the child keeps its own copy
        return subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)


def wait_both(procs, began):
    """Each child's exit status and resource use (its own), and its wall
    time: from the common start to when that child ended."""
    by_pid = {proc.pid: setting for setting, proc in procs.items()}
    measured = {}
    while by_pid:
        pid, status, usage = os.wait4(-1, 0)
        if pid not in by_pid:
            continue
        setting = by_pid.pop(pid)
        procs[setting].returncode = os.waitstatus_to_exitcode(status)
        measured[setting] = {"wall_s": time.monotonic() - began, "user_s": usage.ru_utime,
                             "kernel_s": usage.ru_stime, "page_faults": usage.ru_minflt,
                             "peak_mb": usage.ru_maxrss / 1024}
    return measured


def differing_files(a, b):
    """The result files that differ between two run folders (relative paths)."""
    differ = []
    for path in sorted(a.rglob("*")):
        if path.name in COMPARED:
            other = b / path.relative_to(a)
            if not other.exists() or not filecmp.cmp(path, other, shallow=False):
                differ.append(str(path.relative_to(a)))
    return differ


def one_pair(args, work, k):
    outs = {s: work / f"{s}-{k}" for s in SETTINGS}
    began = time.monotonic()
    procs = {s: start(args, s, outs[s]) for s in SETTINGS}
    measured = wait_both(procs, began)
    for s, proc in procs.items():
        if proc.returncode != 0:
            sys.exit(f"bench_freed_memory: the ST_MALLOC={s} run failed; its log: {outs[s].with_suffix('.log')}")
    if not any(outs["glibc"].rglob("iterations.csv")):
        sys.exit(f"bench_freed_memory: no iterations.csv under {outs['glibc']}")
    return measured, differing_files(outs["glibc"], outs["keep"])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default="build/apps/stellatrain")
    parser.add_argument("--scenario", default="scenarios/paper-tta/cnn-h100-const-100-convergence.yaml")
    parser.add_argument("--systems", default="warmup-soonest-early-probes")
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for path, what in ((args.bin, "--bin"), (args.scenario, "--scenario")):
        if not Path(path).exists():
            sys.exit(f"bench_freed_memory: {what} {path}: no such file")

    columns = ("wall_s", "user_s", "kernel_s", "page_faults", "peak_mb")
    ratios = {c: [] for c in columns}
    identical = True
    print(f"{args.scenario}, {args.systems}, {args.iterations} iterations, seed 1; each pair side by side")
    print("| pair | setting | " + " | ".join(columns) + " |")
    print("|---|---|" + "---|" * len(columns))
    with tempfile.TemporaryDirectory(prefix="st-bench-malloc-") as tmp:
        for k in range(1, args.repeat + 1):
            measured, differ = one_pair(args, Path(tmp), k)
            for s in SETTINGS:
                cells = " | ".join(f"{measured[s][c]:.0f}" if c == "page_faults" else f"{measured[s][c]:.2f}"
                                   for c in columns)
                print(f"| {k} | {s} | {cells} |")
            for c in columns:
                ratios[c].append(measured["glibc"][c] / max(measured["keep"][c], 1e-9))
            if differ:
                identical = False
                print(f"pair {k}: results differ between the settings: {', '.join(differ)}")
    print("results byte-identical in every pair" if identical else "results DIFFER (above)")
    print("glibc / keep, median over pairs [min, max]:")
    for c in columns:
        r = ratios[c]
        print(f"  {c}: {statistics.median(r):.2f}x [{min(r):.2f}, {max(r):.2f}]")
    sys.exit(0 if identical else 1)


if __name__ == "__main__":
    main()
