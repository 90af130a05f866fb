"""The controller figure of `stellatrain plot` (docs/control.md).

For every system whose first run wrote control.csv: above, the WAN trace
rate in force (link.csv, first direction), the controller's bandwidth
estimate, its per-tick measurement and the throughput delivered on that
direction; below, the density it chose and the batch of each GPU.
"""
import os

import tta

CONTROL_NUMERIC = ("time_s", "estimated_mbps", "density")
CONTROL_TEXT = ("measured_mbps", "batch")


def read_control(run_dir):
    """control.csv of one run, or None when the run had no controller."""
    path = os.path.join(run_dir, "control.csv")
    if not os.path.isfile(path):
        return None
    columns = tta.read_columns(path, CONTROL_NUMERIC, CONTROL_TEXT)
    measured = []
    for line_no, text in enumerate(columns["measured_mbps"], start=2):
        measured.append(None if text == "" else tta._float(text, path, line_no, "measured_mbps"))
    columns["measured_mbps"] = measured
    batches = []
    for line_no, text in enumerate(columns["batch"], start=2):
        try:
            batches.append([int(b) for node in text.split("|") for b in node.split(";")])
        except ValueError:
            raise tta.InputError(f"{path}: line {line_no}: column batch: expected '64;64|64;64', got {text!r}") from None
    columns["batch"] = batches
    return columns


def controlled(runs):
    """{label: first run} for the systems whose first run has a control.csv."""
    return {label: system_runs[0] for label, system_runs in runs.items() if system_runs[0].control is not None}


def figure_controller(summary, runs, colour, title, time_label):
    """One column of two panels per controlled system; None when there is none."""
    chosen = controlled(runs)
    if not chosen:
        return None
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(2, len(chosen), figsize=(7.5 * len(chosen), 6.5), sharex="col", squeeze=False)
    fig.suptitle(f"{summary['scenario']} ({summary['backend']}): {title}", fontsize=11)
    for column, (label, run) in enumerate(chosen.items()):
        draw_bandwidth(axes[0, column], label, run, colour[label])
        draw_choices(axes[1, column], run, colour[label])
        axes[1, column].set_xlabel(time_label)
    fig.tight_layout()
    return fig


def draw_bandwidth(ax, label, run, colour):
    c = run.control
    if run.links:
        direction = sorted(run.links)[0]
        series = run.links[direction]
        seconds = list(series["second"]) + [series["second"][-1] + 1] if series["second"] else []
        ax.step(seconds, list(series["configured_mbps"]) + series["configured_mbps"][-1:], where="post",
                color="black", linewidth=1.4, label=f"trace rate ({direction})")
        ax.step(seconds, list(series["delivered_mbps"]) + series["delivered_mbps"][-1:], where="post",
                color=colour, alpha=0.5, linewidth=1, label="delivered")
    ax.step(c["time_s"], c["estimated_mbps"], where="post", color=colour, linewidth=1.6, label="controller estimate")
    points = [(t, m) for t, m in zip(c["time_s"], c["measured_mbps"]) if m is not None]
    if points:
        ax.plot(*zip(*points), ".", color="grey", markersize=3, label="measured (busy rate)")
    ax.set_title(label, fontsize=10)
    ax.set_ylabel("Mbps")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper right")


def draw_choices(ax, run, colour):
    c = run.control
    ax.step(c["time_s"], [100 * d for d in c["density"]], where="post", color=colour, linewidth=1.6,
            label="density (%)")
    ax.set_ylabel("density (%)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    right = ax.twinx()
    gpus = len(c["batch"][0]) if c["batch"] else 0
    for g in range(gpus):
        right.step(c["time_s"], [b[g] for b in c["batch"]], where="post", linewidth=0.9, linestyle="--",
                   label=f"batch GPU {g}")
    right.set_ylabel("batch per GPU")
    right.set_ylim(bottom=0)
    lines = ax.get_legend_handles_labels()
    more = right.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize=7, loc="lower right")
