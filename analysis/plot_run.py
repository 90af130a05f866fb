#!/usr/bin/env python3
"""Figures and report.md for a `stellatrain run --out DIR` results folder.

usage: plot_run.py DIR [--out FIGDIR] [--format png,svg]

`stellatrain plot DIR` runs this with a python3 that has matplotlib
(docs/analysis.md). It reads DIR/summary.json and each system's run folders
(eval.csv, iterations.csv, link.csv, manifest.json) and writes into FIGDIR
(default DIR/figures): tta, accuracy_vs_iteration, iteration_time,
wan_throughput, speedup and controller (drawn by run_figures.py and
plot_control.py), each in every requested format, then DIR/report.md.
Exit status 2 with one message naming the file for a broken results folder.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot_control  # noqa: E402  (next to this script)
import report_tables  # noqa: E402
import tta  # noqa: E402
from run_figures import ACCURACY_FIGURES, DRAW, FIGURES, NOT_DRAWN, colours, progress, save  # noqa: E402
from tta import InputError  # noqa: E402

FORMATS = ("png", "svg")


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
