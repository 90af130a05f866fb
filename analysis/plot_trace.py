#!/usr/bin/env python3
"""Plots a bandwidth trace CSV (time_s,mbps) as a step curve into a PNG.

usage: plot_trace.py TRACE.csv OUT.png [--title TITLE]

`stellatrain trace plot` calls this with a validated CSV (any input format is
converted first). The rate holds from a row's time to the next row's; the
last row lasts as long as the interval before it (docs/traces.md).
"""
import argparse
import csv
import sys


def read_trace(path):
    times, rates = [], []
    with open(path, newline="") as f:
        for row in csv.reader(line for line in f if not line.lstrip().startswith("#")):
            if not row or not row[0].strip():
                continue
            try:
                times.append(float(row[0]))
                rates.append(float(row[1]))
            except ValueError:
                continue  # the header row
    if not times:
        sys.exit(f"plot_trace.py: {path}: no data rows")
    end = times[-1] + (times[-1] - times[-2] if len(times) > 1 else 1.0)
    return times, rates, end


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("png")
    parser.add_argument("--title", default=None)
    args = parser.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit(f"plot_trace.py: matplotlib is not installed for {sys.executable} "
                 "(Debian: apt-get install python3-matplotlib)")

    times, rates, end = read_trace(args.trace)
    edges = times + [end]
    lengths = [b - a for a, b in zip(edges[:-1], edges[1:])]
    span = end - times[0]
    mean = sum(r * l for r, l in zip(rates, lengths)) / span
    minutes = end > 1200
    scale = 60.0 if minutes else 1.0
    xs = [t / scale for t in edges]

    fig, ax = plt.subplots(figsize=(10, 3.6))
    ax.step(xs, rates + [rates[-1]], where="post", linewidth=0.8, color="tab:blue", label="rate")
    ax.axhline(mean, color="tab:red", linestyle="--", linewidth=1, label=f"mean {mean:.1f} Mbps")
    ax.set_xlim(xs[0], xs[-1])
    ax.set_ylim(bottom=0)
    ax.set_xlabel("time (min)" if minutes else "time (s)")
    ax.set_ylabel("Mbps")
    title = args.title or args.trace
    ax.set_title(f"{title}  (min {min(rates):.1f}, max {max(rates):.1f} Mbps, {span:g} s)", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(args.png, dpi=120)


if __name__ == "__main__":
    main()
