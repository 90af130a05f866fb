#!/usr/bin/env python3
"""How much of a bandwidth trace a controller can use when it learns the
link's rate late. A rule that fits each iteration's exchange to its estimate
(the paper's rule: the bytes that the estimate carries in the compute
window, times a safety factor) carries at most min(safety x r(t - d), r(t))
at time t when its estimate is the true rate d seconds ago: where the link
rose since, the plan leaves it idle; where it fell, the link is full. The
share of the trace's bytes that this carries is the bound such a rule meets
with a perfect estimate and a plan that takes effect d seconds after what it
measured; a real estimate is below the rate, and the backlog of an overrun
spills into the next seconds, so measured runs sit around it, not on it.

Markdown on stdout: one row per safety factor, one column per delay.

    analysis/reaction_bound.py traces/fluct-115mbps.csv
    analysis/reaction_bound.py traces/fluct-115mbps.csv --delays 0,1,2 --safety 1,0.9 --step 0.05

The trace is a CSV `time_s,mbps[,...]` (docs/traces.md): `#` lines are
comments, a first row that is not numbers is the header, each rate holds
until the next row's time, and the last for as long as the interval before
it. A row that is neither is an error naming the file and line.
"""
import argparse
import sys


class TraceError(Exception):
    pass


def read_trace(path):
    """[(start_s, end_s, mbps)] per step, validated."""
    times, rates = [], []
    try:
        f = open(path, newline="")
    except OSError as e:
        raise TraceError(f"{path}: cannot read ({e.strerror})")
    with f:
        seen_row = False
        for number, line in enumerate(f, start=1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            cells = [c.strip() for c in text.split(",")]
            try:
                time_s, mbps = float(cells[0]), float(cells[1])
            except (ValueError, IndexError):
                if not seen_row:  # the header
                    seen_row = True
                    continue
                raise TraceError(f"{path}:{number}: expected time_s,mbps, got {text!r}")
            seen_row = True
            if times and time_s <= times[-1]:
                raise TraceError(f"{path}:{number}: time {time_s} does not follow {times[-1]}")
            if mbps < 0:
                raise TraceError(f"{path}:{number}: negative rate {mbps}")
            times.append(time_s)
            rates.append(mbps)
    if len(times) < 2:
        raise TraceError(f"{path}: needs at least two rows, has {len(times)}")
    ends = times[1:] + [times[-1] + (times[-1] - times[-2])]
    return list(zip(times, ends, rates))


def sampled(steps, step_s):
    """The rate at every step_s from the trace's start to its end."""
    rates, index = [], 0
    t = steps[0][0]
    while t < steps[-1][1] - 1e-9:
        while steps[index][1] <= t + 1e-9:
            index += 1
        rates.append(steps[index][2])
        t += step_s
    return rates


def used_share(rates, delay_samples, safety):
    """Bytes carried by min(safety x the rate delay_samples earlier, the
    rate), over the trace's bytes over the same span."""
    later = rates[delay_samples:]
    if not later or sum(later) == 0:
        return None
    carried = sum(min(safety * rates[i - delay_samples], rates[i]) for i in range(delay_samples, len(rates)))
    return carried / sum(later)


def number_list(text, name):
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{name}: expected numbers separated by commas, got {text!r}")
    if any(v < 0 for v in values):
        raise argparse.ArgumentTypeError(f"{name}: negative value in {text!r}")
    return values


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("--delays", default="0,0.5,1,1.5,2,2.5,3",
                        type=lambda t: number_list(t, "--delays"), help="seconds late (default 0 to 3)")
    parser.add_argument("--safety", default="1,0.9", type=lambda t: number_list(t, "--safety"),
                        help="fractions of the known rate planned (default 1,0.9)")
    parser.add_argument("--step", default=0.1, type=float, help="sampling step in s (default 0.1)")
    args = parser.parse_args(argv)
    if args.step <= 0:
        parser.error("--step must be positive")
    try:
        steps = read_trace(args.trace)
    except TraceError as e:
        sys.exit(f"error: {e}")
    rates = sampled(steps, args.step)
    span = steps[-1][1] - steps[0][0]
    mean = sum((end - start) * mbps for start, end, mbps in steps) / span
    print(f"{args.trace}: {span:g} s, mean {mean:.1f} Mbps; share of its bytes a plan carries "
          f"when it knows the rate d seconds late (sampled every {args.step:g} s)\n")
    print("| safety | " + " | ".join(f"d = {d:g} s" for d in args.delays) + " |")
    print("|---|" + "---|" * len(args.delays))
    for safety in args.safety:
        cells = []
        for delay in args.delays:
            share = used_share(rates, int(round(delay / args.step)), safety)
            cells.append("-" if share is None else f"{100 * share:.1f}%")
        print(f"| {safety:g} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
