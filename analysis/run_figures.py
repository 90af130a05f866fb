"""The figures of a `stellatrain run` results folder, one function each,
for analysis/plot_run.py (which loads the runs, writes report.md and
reads the command line). Each figure function takes the summary, the
loaded runs ({label: [Run]}) and a colour per system, and returns a
matplotlib figure, or None where it has nothing to draw (NOT_DRAWN says
why). matplotlib is imported inside the functions: plot_run.py checks
that it is installed first and names the fix when it is not.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot_control  # noqa: E402  (next to this script)
import report_tables  # noqa: E402
import tta  # noqa: E402

FIGURES = {
    "tta": "Test accuracy against time",
    "accuracy_vs_iteration": "Test accuracy against iteration",
    "iteration_time": "Iteration time",
    "wan_throughput": "WAN throughput: trace rate and delivered",
    "speedup": "TTA speedup over ddp",
    "controller": "Controller: bandwidth estimate, density and batches",
}
# Why a figure may be missing.
NOT_DRAWN = {
    "wan_throughput": "no run folder has a link.csv (the sim backend writes one; real runs do not record the links)",
    "controller": "no system ran with the controller (no control.csv)",
}
# A time or speedup axis spanning more than this ratio goes logarithmic: a
# 100x faster system is otherwise a few pixels against ddp's line.
LOG_RATIO = 20.0


def progress(message):
    """Progress on stderr, like the rest of `stellatrain`."""
    print(f"plot: {message}", file=sys.stderr, flush=True)


# --- figure helpers ------------------------------------------------------------


def colours(labels):
    """One colour per system, the same in every figure."""
    import matplotlib.pyplot as plt
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    return {label: cycle[i % len(cycle)] for i, label in enumerate(labels)}


def time_label(backend):
    """sim runs on ns-3's virtual clock; real and emu on the wall clock."""
    return "simulated time (s)" if backend == "sim" else "wall time (s)"


def maybe_log_x(ax, spans, label):
    """Log x when the runs' lengths differ by more than LOG_RATIO."""
    spans = [s for s in spans if s > 0]
    if spans and max(spans) / min(spans) > LOG_RATIO:
        ax.set_xscale("log")
        label += ", log scale"
    ax.set_xlabel(label)


def plot_seeds(ax, runs, x_key, colour, label):
    """One line per system: the run itself, or with several seeds the mean and
    a shaded min-max band."""
    series = [(run.eval[x_key], run.eval["accuracy"]) for run in runs]
    grid, mean, low, high = tta.mean_band(series)
    if len(runs) > 1:
        ax.fill_between(grid, low, high, color=colour, alpha=0.2, linewidth=0)
        label = f"{label} (mean of {len(runs)} seeds, min-max band)"
    ax.plot(grid, mean, color=colour, marker="o", markersize=3, linewidth=1.4, label=label)


def save(fig, figdir, name, formats):
    """Writes FIGDIR/NAME.FMT for each format; returns the paths."""
    paths = []
    for fmt in formats:
        path = os.path.join(figdir, f"{name}.{fmt}")
        fig.savefig(path, dpi=120, metadata={"Date": None} if fmt == "svg" else None)
        paths.append(path)
    import matplotlib.pyplot as plt
    plt.close(fig)
    progress(f"wrote {', '.join(paths)}")
    return paths


def new_figure(title, summary, size=(9, 5)):
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=size)
    ax.set_title(f"{summary['scenario']} ({summary['backend']}): {title}", fontsize=11)
    ax.grid(alpha=0.3)
    return fig, ax


# --- the figures -----------------------------------------------------------------


def figure_tta(summary, runs, colour):
    """Accuracy against time with the target line, each system's median TTA
    (a star) and, with several seeds, every seed's TTA and their span."""
    fig, ax = new_figure(FIGURES["tta"], summary)
    target = summary["target_accuracy"]
    for i, (label, system_runs) in enumerate(runs.items()):
        plot_seeds(ax, system_runs, "time_s", colour[label], label)
        tta_s = summary["systems"][label]["tta_s"]
        seeds = [s.get("tta_s") for s in summary["systems"][label].get("per_seed") or [] if isinstance(s, dict)]
        reached = [t for t in seeds if isinstance(t, (int, float))]
        if len(reached) > 1:  # the spread over seeds: every seed's TTA, the median starred
            ax.plot([min(reached), max(reached)], [target, target], color=colour[label], linewidth=5, alpha=0.35,
                    solid_capstyle="butt", zorder=4)
            ax.plot(reached, [target] * len(reached), linestyle="none", marker="|", markersize=12,
                    color=colour[label], zorder=4)
        if tta_s is not None:
            ax.plot([tta_s], [target], marker="*", markersize=13, color=colour[label],
                    markeredgecolor="black", zorder=5)
            ax.annotate(f"{tta_s:.1f} s", (tta_s, target), textcoords="offset points", xytext=(6, -14 - 11 * i),
                        fontsize=8, color=colour[label])
    ax.axhline(target, color="black", linestyle="--", linewidth=1, label=f"target {target:g}")
    spans = [run.eval["time_s"][-1] for system_runs in runs.values() for run in system_runs]
    maybe_log_x(ax, spans, time_label(summary["backend"]))
    ax.set_ylabel("test accuracy")
    ax.legend(loc="lower right", fontsize=8)
    return fig


def figure_accuracy_vs_iteration(summary, runs, colour):
    """Accuracy against iteration: separates statistical efficiency (what
    compression and staleness cost per step) from speed."""
    fig, ax = new_figure(FIGURES["accuracy_vs_iteration"], summary)
    for label, system_runs in runs.items():
        plot_seeds(ax, system_runs, "iteration", colour[label], label)
    target = summary["target_accuracy"]
    ax.axhline(target, color="black", linestyle="--", linewidth=1, label=f"target {target:g}")
    ax.set_xlabel("iteration")
    ax.set_ylabel("test accuracy")
    ax.legend(loc="lower right", fontsize=8)
    return fig


def figure_iteration_time(summary, runs, colour):
    """Iteration time over time (first seed), rolling median."""
    fig, ax = new_figure(FIGURES["iteration_time"], summary)
    ratios = []
    for label, system_runs in runs.items():
        data = system_runs[0].iterations
        if not data["start_s"]:
            continue
        window = tta.median_window(len(data["iteration_ms"]))
        smooth = tta.rolling_median(data["iteration_ms"], window)
        ratios += [v for v in smooth if v > 0]
        note = f", median of {window}" if window > 1 else ""
        ax.plot(data["start_s"], smooth, color=colour[label], linewidth=1.2, label=f"{label}{note}")
    if ratios and max(ratios) / min(ratios) > LOG_RATIO:
        ax.set_yscale("log")
    ax.set_xlabel(time_label(summary["backend"]) + ("; first seed" if any(len(r) > 1 for r in runs.values()) else ""))
    ax.set_ylabel("iteration time (ms)")
    ax.legend(loc="upper right", fontsize=8)
    return fig


def step_xy(seconds, values):
    """Per-second values as a step line over [second, second + 1)."""
    if not seconds:
        return [], []
    return list(seconds) + [seconds[-1] + 1], list(values) + [values[-1]]


def figure_wan_throughput(summary, runs, colour):
    """Per WAN direction: the trace rate in force against what each system's
    traffic got delivered (first seed). None when no run has a link.csv."""
    link_sets = {label: system_runs[0].links for label, system_runs in runs.items() if system_runs[0].links}
    if not link_sets:
        return None
    directions = sorted({d for links in link_sets.values() for d in links})
    shared = tta.same_configured_rate(list(link_sets.values()))
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(directions), 1, figsize=(10.5, 3.2 * len(directions) + 0.6), sharex=True,
                             squeeze=False)
    fig.suptitle(f"{summary['scenario']} ({summary['backend']}): {FIGURES['wan_throughput']}", fontsize=11)
    for ax, direction in zip(axes[:, 0], directions):
        draw_direction(ax, direction, link_sets, shared, colour)
    axes[-1, 0].set_xlabel(time_label(summary["backend"]))
    fig.tight_layout()
    return fig


def draw_direction(ax, direction, link_sets, shared, colour):
    """One subplot: configured step line(s) and delivered per system."""
    present = {label: links[direction] for label, links in link_sets.items() if direction in links}
    if shared:
        longest = max(present.values(), key=lambda s: len(s["second"]))
        ax.step(*step_xy(longest["second"], longest["configured_mbps"]), where="post", color="black",
                linewidth=1.6, label="trace rate (configured)")
    for label, series in present.items():
        if not shared:
            ax.step(*step_xy(series["second"], series["configured_mbps"]), where="post", color=colour[label],
                    linestyle="--", linewidth=1, label=f"{label} trace rate")
        ax.step(*step_xy(series["second"], series["delivered_mbps"]), where="post", color=colour[label],
                linewidth=1.2, label=f"{label} delivered")
    ax.set_title(direction, fontsize=10)
    ax.set_ylabel("Mbps")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)


def speedup_bars(summary, runs):
    """(label, height, text, reached) per system; only reached bars are solid.

    A system without TTA gets a bar up to its speedup's upper bound (the
    reference's TTA over its own run length) when that is known, else 1,
    labelled 'no TTA'. When the reference never reached the target, systems
    that did get the summary's lower bound ('>='); a failed system, 'failed'.
    """
    reference = tta.reference_label(summary)
    ref_tta = summary["systems"][reference].get("tta_s") if reference else None
    bars = []
    for label, entry in summary["systems"].items():
        if tta.failed(entry):
            bars.append((label, 1.0, "failed", False))
        elif entry["tta_s"] is None:
            bound = tta.speedup_upper_bound(ref_tta, max(run.duration_s() for run in runs[label]))
            text = "no TTA" + (f"\n(< {report_tables.format_speedup(bound)})" if bound else "")
            bars.append((label, bound or 1.0, text, False))
        elif label == reference:
            bars.append((label, 1.0, "1.0x", True))
        elif entry["speedup_vs_ddp"] is not None:
            speedup = entry["speedup_vs_ddp"]
            bars.append((label, speedup, report_tables.format_speedup(speedup), True))
        elif entry.get("speedup_vs_ddp_at_least") is not None:
            bound = entry["speedup_vs_ddp_at_least"]
            bars.append((label, bound, f">= {report_tables.format_speedup(bound)}\n({reference}: no TTA)", False))
        else:
            bars.append((label, 1.0, f"n/a\n({reference or 'ddp'}: no TTA)" if reference else "n/a", False))
    return bars


def figure_speedup(summary, runs, colour):
    """Bar chart of TTA speedup over ddp (ddp = 1); bounds and failures hatched."""
    fig, ax = new_figure(FIGURES["speedup"], summary, size=(max(5, 1.3 * len(summary["systems"]) + 2), 4.8))
    bars = speedup_bars(summary, runs)
    for i, (label, height, text, reached) in enumerate(bars):
        edge = "grey" if text == "failed" else colour[label]
        ax.bar(i, height, color=colour[label] if reached else "white", edgecolor=edge,
               hatch=None if reached else ("xx" if text == "failed" else "//"), linewidth=1.5)
        ax.annotate(text, (i, height), textcoords="offset points", xytext=(0, 3), ha="center", va="bottom",
                    fontsize=8)
    heights = [b[1] for b in bars if b[1] > 0]
    if max(heights) / min(heights) > LOG_RATIO:
        ax.set_yscale("log")
        ax.set_ylim(min(heights) / 2, max(heights) * 4)  # room for the labels above the bars
    else:
        ax.set_ylim(0, max(heights) * 1.3)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(bars)), [b[0] for b in bars])
    reference = tta.reference_label(summary) or "ddp (none in this scenario)"
    ax.set_ylabel(f"TTA speedup over {reference} (target {summary['target_accuracy']:g})")
    fig.tight_layout()
    return fig


def figure_controller(summary, runs, colour):
    return plot_control.figure_controller(summary, runs, colour, FIGURES["controller"], time_label(summary["backend"]))


ACCURACY_FIGURES = ("tta", "accuracy_vs_iteration", "speedup")

DRAW = {
    "tta": figure_tta,
    "accuracy_vs_iteration": figure_accuracy_vs_iteration,
    "iteration_time": figure_iteration_time,
    "wan_throughput": figure_wan_throughput,
    "speedup": figure_speedup,
    "controller": figure_controller,
}
