#!/usr/bin/env python3
"""Figures and report.md for a `stellatrain run --out DIR` results folder.

usage: plot_run.py DIR [--out FIGDIR] [--format png,svg]

`stellatrain plot DIR` runs this with a python3 that has matplotlib
(docs/analysis.md). It reads DIR/summary.json and each system's run folders
(eval.csv, iterations.csv, link.csv, manifest.json) and writes into FIGDIR
(default DIR/figures): tta, accuracy_vs_iteration, iteration_time,
wan_throughput, speedup and controller (plot_control.py), each in every
requested format, then DIR/report.md.
Exit status 2 with one message naming the file for a broken results folder.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot_control  # noqa: E402  (next to this script)
import report_tables  # noqa: E402
import tta  # noqa: E402
from tta import InputError  # noqa: E402

FORMATS = ("png", "svg")
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


# --- loading -----------------------------------------------------------------


class Run:
    """One run folder (one seed of one system)."""

    def __init__(self, results_dir, name, timing=False):
        self.name = name
        self.path = os.path.join(results_dir, name)
        if not os.path.isdir(self.path):
            raise InputError(f"{self.path}: run folder listed in summary.json not found")
        self.eval = tta.read_eval(self.path, allow_empty=timing)
        self.iterations = tta.read_iterations(self.path)
        self.links = tta.read_links(self.path)
        self.control = plot_control.read_control(self.path)
        self.manifest = tta.load_manifest(self.path)

    def duration_s(self):
        """The run's length in its clock: manifest, else the last evaluation."""
        summary = self.manifest.get("summary")
        value = summary.get("duration_s") if isinstance(summary, dict) else None
        return value if isinstance(value, (int, float)) else self.eval["time_s"][-1]


def stated_ttas(entry):
    """{run folder: TTA} as summary.json states it: the system's own for one
    run, else per_seed entries that name their run."""
    if len(entry["runs"]) == 1:
        return {entry["runs"][0]: entry["tta_s"]}
    stated = {}
    for seed in entry.get("per_seed") or []:
        if isinstance(seed, dict) and seed.get("run") in entry["runs"] and "tta_s" in seed:
            stated[seed["run"]] = seed["tta_s"]
    return stated


def describe_tta(tta_s):
    return "no TTA" if tta_s is None else f"TTA {tta_s:.2f} s"


def check_tta(summary, runs):
    """Notes where a TTA in summary.json disagrees with the run's eval.csv
    (the figures draw the summary's value; a mismatch means the two writers
    disagree on the definition or a file changed since)."""
    notes = []
    target = summary["target_accuracy"]
    for label, system_runs in runs.items():
        stated = stated_ttas(summary["systems"][label])
        for run in system_runs:
            if run.name not in stated:
                continue
            computed = tta.time_to_accuracy(run.eval["time_s"], run.eval["accuracy"], target)
            if not tta.same_tta(stated[run.name], computed):
                notes.append(f"{label}: summary.json gives {describe_tta(stated[run.name])} for {run.name}, "
                             f"{run.path}/eval.csv gives {describe_tta(computed)}; the figures use summary.json.")
    for note in notes:
        progress(f"warning: {note}")
    return notes


def summary_notes(summary):
    """The summary's own note (e.g. the real backend's) and failed systems."""
    notes = [summary["note"]] if isinstance(summary.get("note"), str) else []
    for label, entry in summary["systems"].items():
        if tta.failed(entry):
            notes.append(f"{label} failed and is left out of the figures: {entry['error']}")
    return notes


def missing_links(summary, runs):
    """Notes for the WAN figure: sim systems whose first run has no link.csv."""
    if summary["backend"] != "sim":
        return []
    absent = [label for label, system_runs in runs.items() if system_runs[0].links is None]
    have = len(absent) < len(runs)
    return [f"{FIGURES['wan_throughput']}: no link.csv for {', '.join(absent)}."] if absent and have else []


def load_runs(results_dir, summary):
    """{label: [Run, ...]} in summary order; failed systems are left out."""
    runs = {}
    for label, entry in summary["systems"].items():
        if tta.failed(entry):
            progress(f"skipping {label}: it failed ({entry['error']})")
            continue
        progress(f"reading {label}: {', '.join(entry['runs'])}")
        runs[label] = [Run(results_dir, name, entry.get("math") == "timing") for name in entry["runs"]]
    return runs


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


# --- report ------------------------------------------------------------------------


def report_head(summary):
    """report.md's title, what the numbers mean, and the summary table."""
    clock = "simulated seconds (ns-3 virtual time)" if summary["backend"] == "sim" else "wall-clock seconds"
    if tta.is_timing(summary):
        header, rows = report_tables.timing_table(summary)
        return [f"# {summary['scenario']} ({summary['backend']} backend, timing run)", "",
                "A timing run (compute math: timing) skips the forward and backward math and trains on synthetic "
                "gradients: it measures iteration time, WAN bytes and throughput, never accuracy, so there is "
                f"no TTA. Times are {clock}.", "", report_tables.markdown_table(header, rows), ""]
    return [f"# {summary['scenario']} ({summary['backend']} backend)", "",
            f"Target accuracy {summary['target_accuracy']:g}; times are {clock}. "
            "TTA is the first evaluation at or above the target, the median over seeds (none when half or more "
            f"of the seeds never reached it); speedup is the median over seeds of "
            f"{tta.reference_label(summary) or 'ddp'}'s TTA over the system's in the same seed (same data order, "
            "initialisation and stretch of the traces), with its 95% interval from a bootstrap over seeds in "
            "brackets.", "",
            report_tables.markdown_table(report_tables.table_header(summary), report_tables.table_rows(summary)),
            ""]


def report_text(summary, figures, results_dir, notes):
    """report.md: title, summary table, per-seed table, figures by relative link."""
    lines = report_head(summary)
    header, rows = ([], []) if tta.is_timing(summary) else report_tables.targets_rows(summary)
    if rows:
        lines += ["## At each target", "", "How much the comparison depends on the target: median TTA and the median "
                  "paired speedup (95% interval) at every report target.", "",
                  report_tables.markdown_table(header, rows), ""]
    seeds = [] if tta.is_timing(summary) else report_tables.per_seed_rows(summary)
    if seeds:
        lines += ["## Per seed", "",
                  report_tables.markdown_table(["system", "seed", "TTA (s)", "best accuracy", "trace offset (s)"],
                                               seeds), ""]
    lines += ["## Figures", ""]
    for name, paths in figures.items():
        embed = next((p for p in paths if p.endswith(".png")), paths[0])
        link = os.path.relpath(embed, results_dir).replace(os.sep, "/")
        lines += [f"### {FIGURES[name]}", "", f"![{FIGURES[name]}]({link})", ""]
    if notes:
        lines += ["## Notes", ""] + [f"- {note}" for note in notes]
    return "\n".join(lines).rstrip() + "\n"


# --- main ------------------------------------------------------------------------------


def parse_formats(text):
    formats = [f.strip().lower() for f in text.split(",") if f.strip()]
    bad = [f for f in formats if f not in FORMATS]
    if not formats or bad:
        raise InputError(f"--format: expected a comma-separated list of {', '.join(FORMATS)}, got {text!r}")
    return list(dict.fromkeys(formats))


def import_matplotlib():
    try:
        import matplotlib
        matplotlib.use("Agg")
        matplotlib.rcParams["svg.hashsalt"] = "stellatrain"  # stable SVG ids between runs
        import matplotlib.pyplot  # noqa: F401
    except ImportError:
        raise InputError(f"matplotlib is not installed for {sys.executable} "
                         "(Debian: apt-get install python3-matplotlib)") from None


def draw_figures(summary, runs, figdir, formats, timing=False):
    """Draws and saves every figure that has data; returns ({name: paths}, notes).
    A timing run has no accuracy: its accuracy and TTA figures are not drawn."""
    if not runs:
        return {}, ["No figures: every system failed."]
    import_matplotlib()
    os.makedirs(figdir, exist_ok=True)
    colour = colours(list(summary["systems"]))
    figures, notes = {}, []
    for name, draw in DRAW.items():
        if timing and name in ACCURACY_FIGURES:
            notes.append(f"{FIGURES[name]}: not drawn, this is a timing run (compute math: timing): "
                         "no accuracy is measured, so there is no TTA.")
            continue
        fig = draw(summary, runs, colour)
        if fig is None:
            notes.append(f"{FIGURES[name]}: not drawn, {NOT_DRAWN[name]}.")
            progress(f"skipped {name}: {NOT_DRAWN[name]}")
            continue
        figures[name] = save(fig, figdir, name, formats)
    return figures, notes


def make_all(results_dir, figdir, formats):
    """Reads everything first (so a broken folder fails before any figure),
    then draws and writes DIR/report.md; returns the report's path."""
    if not os.path.isdir(results_dir):
        raise InputError(f"{results_dir}: no such directory")
    summary = tta.load_summary(results_dir)
    runs = load_runs(results_dir, summary)
    timing = tta.is_timing(summary)
    notes = summary_notes(summary) + ([] if timing else check_tta(summary, runs)) + missing_links(summary, runs)
    figures, figure_notes = draw_figures(summary, runs, figdir, formats, timing)
    report = os.path.join(results_dir, "report.md")
    with open(report, "w", encoding="utf-8") as f:
        f.write(report_text(summary, figures, results_dir, notes + figure_notes))
    return report


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", help="results folder of `stellatrain run --out DIR`")
    parser.add_argument("--out", help="figure folder (default DIR/figures)")
    parser.add_argument("--format", default="png,svg", help="comma-separated: png, svg (default png,svg)")
    args = parser.parse_args(argv)
    try:
        formats = parse_formats(args.format)
        report = make_all(args.dir, args.out or os.path.join(args.dir, "figures"), formats)
    except InputError as e:
        print(f"stellatrain plot: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"stellatrain plot: error: {e.filename or ''}: {e.strerror}", file=sys.stderr)
        return 2
    print(f"wrote {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
