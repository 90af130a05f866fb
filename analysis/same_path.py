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
import csv
import os
import sys


def fail(message):
    sys.exit(f"same_path: {message}")


def read_csv(path):
    try:
        with open(path, newline="", encoding="utf-8") as f:
            return list(csv.DictReader(f))
    except FileNotFoundError:
        fail(f"{path}: not found")


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


def field(row, name, path, convert=float):
    try:
        return convert(row[name])
    except (KeyError, TypeError, ValueError):
        fail(f"{path}: field {name!r} missing or not a number in {row}")


def relative_difference(first, second):
    """|second / first - 1|; a density that is 0 on one side only is infinitely far."""
    if first == 0:
        return 0.0 if second == 0 else float("inf")
    return abs(second / first - 1)


def compare_ticks(first_path, second_path):
    """(same iterations, largest density difference relative to the first's, largest tick time difference in s),
    over the ticks both files have (a tick only one has makes the iterations differ)."""
    first, second = read_csv(first_path), read_csv(second_path)
    if not first or not second:
        fail(f"{first_path if not first else second_path}: no controller tick to compare")
    same = ([field(row, "iteration", first_path, int) for row in first] ==
            [field(row, "iteration", second_path, int) for row in second])
    density = max(relative_difference(field(a, "density", first_path), field(b, "density", second_path))
                  for a, b in zip(first, second))
    time = max(abs(field(a, "time_s", first_path) - field(b, "time_s", second_path)) for a, b in zip(first, second))
    return same, density, time


def per_second_bytes(path):
    """{(second, link): bytes} over the whole seconds (the last second of each link is partial)."""
    rows = read_csv(path)
    last = {}
    for row in rows:
        link = field(row, "link", path, str)
        last[link] = max(last.get(link, -1), field(row, "second", path, int))
    return {(field(row, "second", path, int), row["link"]): field(row, "delivered_bytes", path, int)
            for row in rows if field(row, "second", path, int) < last[row["link"]]}


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
    systems = args.systems.split(",") if args.systems else [
        s for s in systems_with_control(args.first) if s in systems_with_control(args.second)]
    if not systems:
        fail(f"no system with control.csv in both {args.first} and {args.second}")
    print(HEADER)
    print("\n".join(rows(args.first, args.second, systems)))


if __name__ == "__main__":
    main()
