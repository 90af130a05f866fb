#!/usr/bin/env python3
"""Checks that a change left the simulated results as they were.

Runs every shipped scenario that the sim backend can run here (scenarios/,
the GPU ones left out on a machine without CUDA) for its first N iterations
(default 20), every system at the scenario's first seed, with two
`stellatrain` programs, and compares the two output trees:

* every CSV file (iterations, eval, link, control) byte for byte;
* every JSON file (manifest.json, summary.json, the runs' own) as values,
  leaving out only what describes the host rather than the run (the wall
  time the host took, the program's own path), the commit each program
  was built from (manifest.json's `build`), and the keys named with
  --ignore-key.

    scripts/same_results.py --reference-rev HEAD~3            # builds HEAD~3 in build-ref/
    scripts/same_results.py --reference build-ref/apps/stellatrain --candidate build/apps/stellatrain
    scripts/same_results.py --reference-rev main --only scenarios/fluct-115mbps.yaml

A reference revision is checked out in a git worktree (.same-results/ref)
and built there with scripts/build.sh (BUILD_DIR build); both trees' runs
go to .same-results/{reference,candidate}/. Exit status 0 when everything
matches, 1 when something differs (each difference is printed), 2 on a
usage error.
"""
import argparse
import filecmp
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".same-results"

# Keys that describe the host, not the simulated run: wall-clock costs.
HOST_KEYS = {"host_wall_s", "wall_s_host", "host_cost"}
# Paths that name the program, not the run: the commit each was built
# from (manifest.json's `build`, core/util/build_info.h), which differs
# between the two programs by design.
PROGRAM_PATHS = ["manifest.json:/build"]


def scenario_files(only):
    if only:
        return [Path(p).resolve() for p in only]
    files = sorted((ROOT / "scenarios").rglob("*.yaml"))
    # Profiles and sim configs (`train --sim-config`, no systems list) are not scenarios.
    return [f for f in files if "profiles" not in f.parts and is_scenario(f)]


def is_scenario(path):
    return any(line.startswith("systems:") for line in path.read_text().splitlines())


def needs_gpu(path):
    text = path.read_text()
    return "compute_device: cuda" in text


def runs_on_real_backend(path):
    for line in path.read_text().splitlines():
        if line.strip().startswith("backend:"):
            return line.split(":", 1)[1].strip() != "sim"
    return False


def build_reference(rev):
    tree = WORK / "ref"
    if tree.exists():
        subprocess.run(["git", "-C", str(tree), "checkout", "--detach", "-q", rev], check=True)
    else:
        WORK.mkdir(exist_ok=True)
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), rev], check=True)
    print(f"same_results: building {rev} in {tree}", flush=True)
    subprocess.run(["cmake", "-S", str(tree), "-B", str(tree / "build"), "-DCMAKE_BUILD_TYPE=Release"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", str(tree / "build"), "-j", str(os.cpu_count() or 2),
                    "--target", "stellatrain"], check=True)
    return tree / "build" / "apps" / "stellatrain"


def run_all(program, out_root, scenarios, iterations):
    """Runs each scenario into out_root/<path>; returns {scenario: error or None}."""
    failures = {}
    out_root.mkdir(parents=True, exist_ok=True)  # a run that fails at once writes nothing there
    for scenario in scenarios:
        rel = scenario.relative_to(ROOT / "scenarios").with_suffix("")
        out = out_root / rel
        cmd = [str(program), "run", str(scenario), "--backend", "sim", "--iterations", str(iterations),
               "--seeds", "1", "--quiet", "--out", str(out)]
        started = time.monotonic()
        result = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        took = time.monotonic() - started
        print(f"  {rel}: exit {result.returncode} in {took:.0f} s", flush=True)
        (out_root / f"{str(rel).replace('/', '_')}.log").write_text(result.stdout)
        if result.returncode != 0:
            failures[str(rel)] = result.stdout.strip().splitlines()[-1:] or ["(no output)"]
    return failures


def strip_host(value):
    if isinstance(value, dict):
        return {k: strip_host(v) for k, v in value.items() if k not in HOST_KEYS}
    if isinstance(value, list):
        return [strip_host(v) for v in value]
    return value


def drop_keys(value, keys):
    if isinstance(value, dict):
        return {k: drop_keys(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [drop_keys(v, keys) for v in value]
    return value


def drop_path(value, parts):
    """Removes the entry at a JSON path (segments; '*' matches every key)."""
    if not parts or not isinstance(value, dict):
        return value
    head, rest = parts[0], parts[1:]
    out = {}
    for k, v in value.items():
        if head in ("*", k):
            if rest:
                out[k] = drop_path(v, rest)
        else:
            out[k] = v
    return out


def drop_paths(value, file_name, paths):
    for spec in paths:
        name, _, path = spec.partition(":")
        if name == file_name:
            value = drop_path(value, [p for p in path.split("/") if p])
    return value


def json_differences(a, b, path=""):
    if type(a) is not type(b):
        return [f"{path or '/'}: {json.dumps(a)[:80]} != {json.dumps(b)[:80]}"]
    if isinstance(a, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k not in a:
                out.append(f"{path}/{k}: only in the candidate")
            elif k not in b:
                out.append(f"{path}/{k}: only in the reference")
            else:
                out.extend(json_differences(a[k], b[k], f"{path}/{k}"))
        return out
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items != {len(b)} items"]
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out.extend(json_differences(x, y, f"{path}[{i}]"))
        return out
    return [] if a == b else [f"{path}: {json.dumps(a)[:80]} != {json.dumps(b)[:80]}"]


def compare_trees(ref, cand, ignore_keys, ignore_paths):
    problems = []
    compared = 0
    ref_files = {p.relative_to(ref) for p in ref.rglob("*") if p.is_file() and p.suffix in (".csv", ".json")}
    cand_files = {p.relative_to(cand) for p in cand.rglob("*") if p.is_file() and p.suffix in (".csv", ".json")}
    for rel in sorted(ref_files - cand_files):
        if rel.name == "failures.json":
            continue
        problems.append(f"{rel}: missing in the candidate's output")
    for rel in sorted(cand_files - ref_files):
        problems.append(f"{rel}: only in the candidate's output")
    for rel in sorted(ref_files & cand_files):
        if rel.name in ("host_cost.json", "timeline.json", "failures.json"):
            continue
        compared += 1
        a, b = ref / rel, cand / rel
        if rel.suffix == ".csv":
            if not filecmp.cmp(a, b, shallow=False):
                problems.append(f"{rel}: CSV differs")
            continue
        ja = drop_paths(drop_keys(strip_host(json.loads(a.read_text())), ignore_keys), rel.name, ignore_paths)
        jb = drop_paths(drop_keys(strip_host(json.loads(b.read_text())), ignore_keys), rel.name, ignore_paths)
        for d in json_differences(ja, jb)[:20]:
            problems.append(f"{rel}: {d}")
    return compared, problems


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reference", help="the reference stellatrain program")
    parser.add_argument("--reference-rev", help="a git revision to build as the reference")
    parser.add_argument("--candidate", default=str(ROOT / "build" / "apps" / "stellatrain"),
                        help="the program to check (default: build/apps/stellatrain)")
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--only", nargs="*", help="these scenario files instead of every shipped one")
    parser.add_argument("--ignore-key", action="append", default=[],
                        help="a JSON key left out of the comparison wherever it appears (repeatable)")
    parser.add_argument("--ignore", action="append", default=[],
                        help="FILE:/a/b/c, a JSON path left out of FILE (e.g. manifest.json:/options, "
                             "summary.json:/systems/*/options; '*' matches any key); repeatable")
    parser.add_argument("--reuse-reference", action="store_true",
                        help="compare against .same-results/reference as an earlier call left it")
    parser.add_argument("--reference-only", action="store_true",
                        help="only run the reference (into .same-results/reference), for a later --reuse-reference")
    args = parser.parse_args()
    if bool(args.reference) == bool(args.reference_rev) and not args.reuse_reference:
        parser.error("give one of --reference PROGRAM, --reference-rev REV or --reuse-reference")
    candidate = Path(args.candidate)
    if not candidate.exists() and not args.reference_only:
        parser.error(f"--candidate {candidate}: no such program (build first: bash scripts/build.sh)")

    scenarios = []
    for s in scenario_files(args.only):
        if needs_gpu(s):
            print(f"same_results: leaving out {s.relative_to(ROOT)} (compute_device: cuda; this check runs on the CPU)")
        elif runs_on_real_backend(s):
            print(f"same_results: leaving out {s.relative_to(ROOT)} (not a sim scenario)")
        else:
            scenarios.append(s)

    ref_out, cand_out = WORK / "reference", WORK / "candidate"
    if not args.reuse_reference:
        reference = Path(args.reference) if args.reference else build_reference(args.reference_rev)
        print(f"same_results: reference {reference}, {len(scenarios)} scenarios, {args.iterations} iterations",
              flush=True)
        subprocess.run(["rm", "-rf", str(ref_out)], check=True)
        ref_failures = run_all(reference.resolve(), ref_out, scenarios, args.iterations)
        if args.reference_only:
            (ref_out / "failures.json").write_text(json.dumps(ref_failures))
            print(f"same_results: reference runs in {ref_out}")
            return 0
    else:
        failures_file = ref_out / "failures.json"
        ref_failures = json.loads(failures_file.read_text()) if failures_file.exists() else {}
    print(f"same_results: candidate {candidate}", flush=True)
    rels = [s.relative_to(ROOT / "scenarios").with_suffix("") for s in scenarios]
    for rel in rels:
        subprocess.run(["rm", "-rf", str(cand_out / rel)], check=True)
    cand_failures = run_all(candidate.resolve(), cand_out, scenarios, args.iterations)

    problems = []
    names = {str(rel) for rel in rels}
    for name in sorted((set(ref_failures) | set(cand_failures)) & names):
        if ref_failures.get(name) != cand_failures.get(name):
            problems.append(f"{name}: reference {ref_failures.get(name)} vs candidate {cand_failures.get(name)}")
    compared = 0
    ignore_paths = PROGRAM_PATHS + args.ignore
    for rel in rels:
        if not (ref_out / rel).exists():
            problems.append(f"{rel}: no reference output (run the reference first)")
            continue
        n, differences = compare_trees(ref_out / rel, cand_out / rel, set(args.ignore_key), ignore_paths)
        compared += n
        problems.extend(f"{rel}/{d}" for d in differences)
    print(f"same_results: {compared} files compared over {len(scenarios)} scenarios")
    for p in problems:
        print(f"  DIFFERS {p}")
    if problems:
        print(f"same_results: {len(problems)} difference(s)")
        return 1
    print("same_results: identical (CSV byte for byte, JSON as values without host times)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
