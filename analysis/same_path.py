#!/usr/bin/env python3
"""Whether a controller took the same path in two results folders of the
same scenario, seed by seed: typically a GPU run (real forward and
backward) against its timing-mode twin on a CPU (`compute.math: timing`,
synthetic gradients), where only the threshold compressor's message sizes
can differ, since they follow the gradients' values.

For each system and seed in both folders it compares control.csv (the
controller's ticks: the same iterations, the largest difference in
density relative to the first folder's, infinite where one is 0 and the
other not, and the largest difference in tick time, over the ticks both
have) and link.csv (the
bytes delivered in each whole second on each WAN direction; the last
second of a run is partial and left out). Markdown on stdout.

    analysis/same_path.py GPU_FOLDER TIMING_FOLDER [--systems A,B]

Without --systems, every system with control.csv in both folders; a
seed in one folder only is named on stderr and left out. Files with
nothing to compare, different links or different whole seconds are
refused with the file named.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tta  # noqa: E402


def fail(message):
    sys.exit(f"same_path: {message}")


def read_columns(path, numeric, text=()):
    """tta.read_columns: a missing file, column or number is named with its line."""
    try:
        return tta.read_columns(path, numeric, text)
    except tta.InputError as e:
        fail(str(e))


def seeds_of(folder, system):
    base = os.path.join(folder, system)
    if not os.path.isdir(base):
        return []
    return sorted(int(name[len("seed-"):]) for name in os.listdir(base)
                  if name.startswith("seed-") and name[len("seed-"):].isdigit())


def systems_with_control(folder):
    found = []
    for name in sorted(os.listdir(folder)):
        seeds = seeds_of(folder, name)
        if seeds and os.path.isfile(os.path.join(folder, name, f"seed-{seeds[0]}", "control.csv")):
            found.append(name)
    return found


def relative_difference(first, second):
    """|second / first - 1|; a density that is 0 on one side only is infinitely far."""
    if first == 0:
        return 0.0 if second == 0 else float("inf")
    return abs(second / first - 1)


def compare_ticks(first_path, second_path):
    """(same iterations, largest density difference relative to the first's, largest tick time difference in s),
    over the ticks both files have (a tick only one has makes the iterations differ)."""
    first, second = (read_columns(path, ("iteration", "time_s", "density")) for path in (first_path, second_path))
    if not first["iteration"] or not second["iteration"]:
        fail(f"{first_path if not first['iteration'] else second_path}: no controller tick to compare")
    same = first["iteration"] == second["iteration"]
    density = max(relative_difference(a, b) for a, b in zip(first["density"], second["density"]))
    time = max(abs(a - b) for a, b in zip(first["time_s"], second["time_s"]))
    return same, density, time


def per_second_bytes(path):
    """{(second, link): bytes} over the whole seconds (the last second of each link is partial)."""
    columns = read_columns(path, ("second", "delivered_bytes"), ("link",))
    rows = list(zip(columns["second"], columns["link"], columns["delivered_bytes"]))
    last = {}
    for second, link, _ in rows:
        last[link] = max(last.get(link, -1), second)
    return {(int(second), link): int(delivered) for second, link, delivered in rows if second < last[link]}


def compare_link(first_path, second_path):
    """(largest per-second byte difference, the busiest second's bytes, seconds compared)."""
    first, second = per_second_bytes(first_path), per_second_bytes(second_path)
    links = [sorted({link for _, link in seconds}) for seconds in (first, second)]
    if links[0] != links[1]:
        fail(f"{first_path} and {second_path} carry different links ({', '.join(links[0])} against "
             f"{', '.join(links[1])})")
    if set(first) != set(second):
        fail(f"{first_path} and {second_path} cover different whole seconds")
    if not first:
        fail(f"{first_path}: no whole second to compare")
    difference = max(abs(first[key] - second[key]) for key in first)
    busiest = max(first.values())
    return difference, busiest, len(first)


def rows(first, second, systems):
    out = []
    for system in systems:
        in_first, in_second = set(seeds_of(first, system)), set(seeds_of(second, system))
        seeds = sorted(in_first & in_second)
        if not seeds:
            fail(f"{system}: no seed in both {first} and {second}")
        for seed in sorted(in_first ^ in_second):
            print(f"same_path: {system} seed {seed} is in one folder only; left out", file=sys.stderr)
        for seed in seeds:
            runs = [os.path.join(folder, system, f"seed-{seed}") for folder in (first, second)]
            same, density, time = compare_ticks(*(os.path.join(run, "control.csv") for run in runs))
            difference, busiest, seconds = compare_link(*(os.path.join(run, "link.csv") for run in runs))
            share = 100 * difference / busiest if busiest else 0.0
            out.append(f"| `{system}` | {seed} | {'yes' if same else 'no'} | {100 * density:.4f}% | "
                       f"{1000 * time:.3f} ms | {difference} B ({share:.3f}%) over {seconds} |")
    return out


HEADER = ("| system | seed | same tick iterations | largest density difference | largest tick time difference "
          "| largest per-second byte difference (of the busiest second), whole seconds |\n|---|---|---|---|---|---|")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first")
    parser.add_argument("second")
    parser.add_argument("--systems", help="comma-separated labels (default: every one with control.csv in both)")
    args = parser.parse_args()
    for folder in (args.first, args.second):
        if not os.path.isdir(folder):
            fail(f"{folder}: not a results folder")
    in_second = set(systems_with_control(args.second))
    systems = args.systems.split(",") if args.systems else [
        s for s in systems_with_control(args.first) if s in in_second]
    if not systems:
        fail(f"no system with control.csv in both {args.first} and {args.second}")
    print(HEADER)
    print("\n".join(rows(args.first, args.second, systems)))


if __name__ == "__main__":
    main()
