"""The report's tables of a `stellatrain run` results folder: summary.json
(read and validated by tta.py) as rows of text cells, and rows as a
markdown table. plot_run.py writes them into report.md; like tta.py, pure
functions and the standard library only, so tests/test_tta_tables.py checks
them with any python3.
"""
import json

from tta import failed, reference_label


def timing_table(summary):
    """(header, rows) of a timing run's report: no accuracy, no TTA."""
    reference = reference_label(summary) or "ddp"
    header = ["system", "iterations", "mean iteration (ms)", f"iteration speedup vs {reference}", "WAN GB", "samples/s"]
    rows = []
    for label, entry in summary["systems"].items():
        if failed(entry):
            rows.append([label, "failed"] + ["-"] * 4)
            continue
        speedup = entry.get("iteration_speedup_vs_ddp")
        rows.append([label, format_count(entry["iterations"]), f"{entry['mean_iteration_s'] * 1e3:.1f}",
                     f"{speedup:.2f}x" if isinstance(speedup, (int, float)) else "-",
                     format_optional(entry["wan_bytes"], ".3f", 1e-9), f"{entry['samples_per_s']:.0f}"])
    return header, rows


def format_tta(tta_s):
    return "no TTA" if tta_s is None else f"{tta_s:.2f}"


def format_speedup(value):
    if value is None:
        return "-"
    return f"{value:.1f}x" if value < 100 else f"{value:.0f}x"


def format_count(value):
    """Iterations are a mean over seeds: whole numbers stay whole."""
    return str(int(value)) if value == int(value) else f"{value:.1f}"


def format_optional(value, fmt, scale=1.0):
    return "-" if value is None else format(value * scale, fmt)


def format_interval(ci):
    """A 95% interval [lo, hi] as ' (lo-hi)', or '' when there is none."""
    if not isinstance(ci, list) or len(ci) != 2:
        return ""
    return f" ({format_speedup(ci[0])}-{format_speedup(ci[1])})"


def speedup_cell(label, entry, reference):
    """The median paired speedup with its 95% interval over seeds; the
    reference is 1.0x when it has a TTA; '>= N x' when only a lower bound is
    known (the reference never reached the target)."""
    if label == reference and entry["tta_s"] is not None:
        return "1.0x"
    if entry["speedup_vs_ddp"] is None and entry.get("speedup_vs_ddp_at_least") is not None:
        return ">= " + format_speedup(entry["speedup_vs_ddp_at_least"])
    return format_speedup(entry["speedup_vs_ddp"]) + format_interval(entry.get("speedup_ci95"))


def targets_rows(summary):
    """Rows (system, then per report target: median TTA and speedup with its
    interval) when summary.json reports several targets; [] otherwise."""
    targets = [f"{t:g}" for t in summary.get("report_targets") or []]
    if len(targets) < 2:
        return [], []
    header = ["system"] + [f"{t}: TTA (s), speedup" for t in targets]
    rows = []
    reference = reference_label(summary)
    for label, entry in summary["systems"].items():
        if failed(entry) or "targets" not in entry:
            continue
        row = [label]
        for t in targets:
            at = entry["targets"].get(t) or {}
            tta_s = at.get("tta_s")
            speedup = "1.0x" if label == reference and tta_s is not None else (
                format_speedup(at.get("speedup_vs_ddp")) + format_interval(at.get("speedup_ci95")))
            row.append(f"{format_tta(tta_s)}, {speedup}")
        rows.append(row)
    return header, rows


def table_header(summary):
    header = ["system", "TTA (s)", "best accuracy", "iterations", "WAN GB", "mean iteration (ms)",
              f"speedup vs {reference_label(summary) or 'ddp'}", "seeds"]
    return header + (["cost to target ($)"] if has_cost(summary) else [])


def has_cost(summary):
    return any("cost_to_target" in entry for entry in summary["systems"].values())


def table_rows(summary):
    """One row of report cells per system, in summary order; a failed system
    says so in the TTA column (its message goes to the report's notes)."""
    reference = reference_label(summary)
    rows = []
    for label, entry in summary["systems"].items():
        if failed(entry):
            row = [label, "failed"] + ["-"] * 5 + [str(len(entry["runs"]))]
        else:
            row = [
                label,
                format_tta(entry["tta_s"]),
                f"{entry['best_accuracy']:.4f}",
                format_count(entry["iterations"]),
                format_optional(entry["wan_bytes"], ".3f", 1e-9),
                f"{entry['mean_iteration_s'] * 1e3:.1f}",
                speedup_cell(label, entry, reference),
                str(len(entry["runs"])),
            ]
        if has_cost(summary):
            row.append(format_optional(entry.get("cost_to_target"), ".2f"))
        rows.append(row)
    return rows


def markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def per_seed_rows(summary):
    """Rows (system, seed, TTA, best accuracy, trace offset) for systems with
    per_seed lists of objects; entries that are not objects are shown as they
    are."""
    rows = []
    for label, entry in summary["systems"].items():
        for i, seed in enumerate(entry.get("per_seed") or []):
            if isinstance(seed, dict) and "error" in seed:
                rows.append([label, str(seed.get("seed", i)), f"failed: {seed['error']}", "-", "-"])
            elif isinstance(seed, dict):
                tta = seed.get("tta_s")
                best = seed.get("best_accuracy")
                offset = seed.get("trace_offset_s")
                rows.append([label, str(seed.get("seed", i)),
                             format_tta(tta) if tta is None or isinstance(tta, (int, float)) else str(tta),
                             f"{best:.4f}" if isinstance(best, (int, float)) else "-",
                             f"{offset:.3f}" if isinstance(offset, (int, float)) else "-"])
            else:
                rows.append([label, str(i), json.dumps(seed), "-", "-"])
    return rows
