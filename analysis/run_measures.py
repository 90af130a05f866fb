"""Measures of one `stellatrain run` folder of timing runs, from its CSVs:
link.csv (utilisation over whole seconds, the unused share, against a
backlogged run on the same seconds), iterations.csv (rank 0's iterations
and waits) and control.csv (the controller's ticks: measured rates, plan
delays, the tick in force each second). analysis/density_report.py prints
them as tables; its docstring says what each one means.
"""
import bisect
import csv
import statistics
import sys


def read_link_rows(folder):
    """link.csv's rows, every second and direction."""
    with open(folder / "link.csv") as f:
        return list(csv.DictReader(f))


def counted_link_seconds(folder, after_s=0.0):
    """link.csv's rows (every direction) for the run's whole seconds from
    `after_s` on: its last, partial second left out."""
    link_rows = read_link_rows(folder)
    last_second = max(int(r["second"]) for r in link_rows)
    return [r for r in link_rows if after_s <= int(r["second"]) < last_second]


def link_utilisation(folder, after_s=0.0):
    """Delivered over configured bandwidth, every direction, the seconds
    counted_link_seconds keeps."""
    rows = counted_link_seconds(folder, after_s)
    configured = sum(float(r["configured_mbps"]) for r in rows)
    delivered = sum(float(r["delivered_mbps"]) for r in rows)
    return delivered / configured if configured > 0 else None


def rank0_iterations(folder):
    with open(folder / "iterations.csv") as f:
        return [r for r in csv.DictReader(f) if r["rank"] == "0"]


def run_measures(folder, after_s=0.0, iterations=None):
    """Mean iteration (ms), mean density, WAN bytes per iteration,
    utilisation, over rank 0's iterations starting at `after_s` or later
    (`iterations`: rank0_iterations(folder), when already read)."""
    rows = [r for r in iterations or rank0_iterations(folder) if float(r["start_s"]) >= after_s]
    if not rows:
        sys.exit(f"error: {folder / 'iterations.csv'}: no iteration of rank 0 starts at {after_s:g} s or later")
    iteration_ms = statistics.mean(float(r["iteration_ms"]) for r in rows)
    density = statistics.mean(float(r["density"]) for r in rows)
    sent = statistics.mean(float(r["bytes_sent"]) for r in rows)
    return iteration_ms, density, sent, link_utilisation(folder, after_s)


def idle_while_waiting(folder, iterations, after_s=0.0):
    """The share of the configured bandwidth (the seconds
    counted_link_seconds keeps) left unused while rank 0's forward waited
    for the exchange: each second's unused bandwidth times the part of
    that second rank 0 spent waiting (an iteration waits just before its
    start_s; `iterations`: rank0_iterations(folder)). Unused bandwidth
    while nobody waited is the plan sending less than the link carries;
    while the forwards waited, the bytes were queued and the transport did
    not deliver them (TCP recovering from a loss, or a window still
    opening)."""
    waits = [(float(r["start_s"]) - float(r["wait_ms"]) / 1e3, float(r["start_s"]))
             for r in iterations if float(r["wait_ms"]) > 0]
    configured = idle = 0.0
    for r in counted_link_seconds(folder, after_s):
        second = int(r["second"])
        waited = min(1.0, sum(max(0.0, min(end, second + 1) - max(start, second)) for start, end in waits))
        configured += float(r["configured_mbps"])
        idle += max(0.0, float(r["configured_mbps"]) - float(r["delivered_mbps"])) * waited
    return idle / configured if configured > 0 else None


def timing_measures(folder, after_s):
    """run_measures and idle_while_waiting, iterations.csv read once."""
    iterations = rank0_iterations(folder)
    return run_measures(folder, after_s, iterations) + (idle_while_waiting(folder, iterations, after_s),)


def control_rows(folder):
    """Rank 0's control.csv rows, one per controller tick; none for a run
    without one (controller off)."""
    path = folder / "control.csv"
    if not path.exists():
        return []
    with open(path) as f:
        return list(csv.DictReader(f))


def tick_rates(folder, after_s):
    """Per controller tick from `after_s` on: (R or None, the slowest
    direction's configured rate in the tick's second); and the fastest
    rate any direction was configured to in the run. A run without
    control.csv (controller off) gives no ticks."""
    rows = control_rows(folder)
    if not rows:
        return [], None
    link_rows = read_link_rows(folder)
    configured = {}
    for r in link_rows:
        second, mbps = int(r["second"]), float(r["configured_mbps"])
        configured[second] = min(mbps, configured.get(second, mbps))
    fastest = max(float(r["configured_mbps"]) for r in link_rows)
    ticks = []
    for r in rows:
        t = float(r["time_s"])
        if t >= after_s and int(t) in configured:
            measured = float(r["measured_mbps"]) if r["measured_mbps"] else None
            ticks.append((measured, configured[int(t)]))
    return ticks, fastest


def plan_delays(folder, after_s, early):
    """Per plan from `after_s` on: (seconds from its tick to the start of
    rank 0's first iteration at its density from the plan's effective
    iteration on (`early`, the system's early_density_switch: from the
    tick's next iteration on), iterations after the tick's), or None where
    none ran at it before the next plan's effective iteration. A run
    without control.csv (controller off) has no plans."""
    plans = [(float(r["time_s"]), int(r["iteration"]), int(r["effective_iteration"]), float(r["density"]))
             for r in control_rows(folder) if int(r["effective_iteration"]) >= 0]
    runs = {int(r["iteration"]): (float(r["start_s"]), float(r["density"])) for r in rank0_iterations(folder)}
    delays = []
    for k, (tick_s, tick_iteration, effective, density) in enumerate(plans):
        if tick_s < after_s:
            continue
        until = plans[k + 1][2] if k + 1 < len(plans) else max(runs) + 1
        # Both files print densities to 6 decimals from the same number.
        first = next((t for t in range(tick_iteration + 1 if early else effective, until)
                      if t in runs and abs(runs[t][1] - density) <= 1e-6), None)
        delays.append(None if first is None else (runs[first][0] - tick_s, first - tick_iteration))
    return delays


# The estimator's reasons (core/control/bandwidth_estimator.h), the first
# clause of control.csv's, by the part of the loop they name.
OVERRUN_REASONS = ("overrun", "overrun, decreased already")
KEEPING_REASONS = ("probe", "measured", "older iterations waited, the newest did not",
                   "iterations above the newest plan's density waited",
                   "only iterations above the newest plan's density reported, and they waited")


def loss_class(reason):
    first = reason.split(";")[0].strip()
    if first in OVERRUN_REASONS:
        return "overrun episode"
    return "probe, measured or hold" if first in KEEPING_REASONS else "other"


# A direction that carried this share of its configured rate in a second
# had bytes queued through it.
FULL_SHARE = 0.95


def reverse_full(rows):
    """The (second, link) keys of `rows` whose reverse direction (b->a for
    a->b) carried at least FULL_SHARE of its configured rate in that
    second."""
    full = {(int(r["second"]), r["link"]) for r in rows
            if float(r["delivered_mbps"]) >= FULL_SHARE * float(r["configured_mbps"])}
    reverse = lambda link: "->".join(reversed(link.split("->")))  # noqa: E731
    return {(int(r["second"]), r["link"]) for r in rows if (int(r["second"]), reverse(r["link"])) in full}


def unused_by_tick(folder, after_s):
    """Per counted link second from `after_s` on (every direction):
    (configured Mbps, unused Mbps, the class of the tick in force when the
    second began, whether that tick's estimate was under the configured
    rate, whether the reverse direction was full that second). A run
    without control.csv: every second is "other"."""
    ticks = [(float(r["time_s"]), r["reason"], float(r["estimated_mbps"])) for r in control_rows(folder)]
    times = [t[0] for t in ticks]
    rows = counted_link_seconds(folder, after_s)
    beside_full = reverse_full(rows)
    out = []
    for r in rows:
        configured = float(r["configured_mbps"])
        unused = max(0.0, configured - float(r["delivered_mbps"]))
        second = int(r["second"])
        reverse_was_full = (second, r["link"]) in beside_full
        k = bisect.bisect_right(times, second) - 1
        if k < 0:
            out.append((configured, unused, "other", False, reverse_was_full))
            continue
        _, reason, estimate = ticks[k]
        out.append((configured, unused, loss_class(reason), estimate < configured, reverse_was_full))
    return out


def backlogged_share(folder, reference, after_s):
    """The run's delivered bytes over `reference`'s (a run of the same
    scenario and seed whose exchange keeps the link backlogged, such as
    ddp) on the same whole seconds and directions, and the reference's
    link utilisation there. The reference must cover the run's counted
    seconds at the same configured rates (the same stretch of the trace)."""
    rows = counted_link_seconds(folder, after_s)
    ref = {(int(r["second"]), r["link"]): r for r in counted_link_seconds(reference)}
    for r in rows:
        key = (int(r["second"]), r["link"])
        if key not in ref:
            sys.exit(f"error: {reference / 'link.csv'}: no whole second {key[0]} on {key[1]}, which "
                     f"{folder / 'link.csv'} counts: the backlogged run must last at least as long")
        if abs(float(ref[key]["configured_mbps"]) - float(r["configured_mbps"])) > 1e-3:
            sys.exit(f"error: {reference / 'link.csv'}: second {key[0]} on {key[1]} is configured to "
                     f"{ref[key]['configured_mbps']} Mbps, {folder / 'link.csv'} to {r['configured_mbps']}: "
                     "not the same stretch of the trace (run the same scenario and seed)")
    delivered = sum(float(r["delivered_mbps"]) for r in rows)
    ref_delivered = sum(float(ref[(int(r["second"]), r["link"])]["delivered_mbps"]) for r in rows)
    configured = sum(float(r["configured_mbps"]) for r in rows)
    if ref_delivered <= 0 or configured <= 0:
        return None, None
    return delivered / ref_delivered, ref_delivered / configured


def check_same_stretch(folder, other):
    """Exits unless the two runs' link.csv give every second both hold the
    same configured rate: the same stretch of the trace (a seed replayed on
    two backends)."""
    mine = {(int(r["second"]), r["link"]): r for r in counted_link_seconds(folder)}
    for r in counted_link_seconds(other):
        key = (int(r["second"]), r["link"])
        if key in mine and abs(float(mine[key]["configured_mbps"]) - float(r["configured_mbps"])) > 1e-3:
            sys.exit(f"error: {other / 'link.csv'}: second {key[0]} on {key[1]} is configured to "
                     f"{r['configured_mbps']} Mbps, {folder / 'link.csv'} to {mine[key]['configured_mbps']}: "
                     "not the same stretch of the trace")
