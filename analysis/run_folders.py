"""Reading the runs of several `stellatrain run` results folders for
analysis/monotone_tta.py and analysis/paper_tta_table.py: each folder's
summary.json checked, the folders checked to pair (analysis/paired_systems.py),
FOLDER:LABELS arguments, --seeds, and each run's eval.csv. Errors are
tta.InputError naming the folder, file or argument."""
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import paired_systems  # noqa: E402
import tta  # noqa: E402


def read_summary(folder):
    """FOLDER/summary.json, with its systems, seeds and target_accuracy."""
    try:
        summary = paired_systems.load(str(folder))
    except paired_systems.FolderError as e:
        raise tta.InputError(str(e)) from None
    where = f"{folder}/summary.json"
    if not summary["seeds"]:
        raise tta.InputError(f"{where}: 'seeds' is empty")
    check_target(summary.get("target_accuracy"), f"{where}: 'target_accuracy'")
    for label, entry in summary["systems"].items():
        if not isinstance(entry, dict) or not isinstance(entry.get("options", {}), dict):
            raise tta.InputError(f"{where}: system {label} is not an object with an 'options' object")
    return summary


def check_target(value, what):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise tta.InputError(f"{what} is {value!r}: an accuracy in (0, 1] is needed")
    return value


# The folders may hold different seeds; what each seed ran on must agree.
PAIRED_ACROSS_SEEDS = tuple(f for f in paired_systems.PAIRED_FIELDS if f != "seeds")


def check_pairs_with(folder, summary, earlier):
    """Raises InputError unless the folder's runs pair with each earlier
    (folder, summary): the same workload, cluster, network and scenario
    parts (analysis/paired_systems.py), and each seed the same trace offset."""
    for other_folder, other in earlier:
        try:
            paired_systems.check_pairable(folder, summary, other_folder, other, PAIRED_ACROSS_SEEDS)
        except paired_systems.FolderError as e:
            raise tta.InputError(str(e)) from None


def is_fixed_density(options):
    """A StellaTrain system (it has a compressor) with the controller off."""
    return options.get("controller") == "off" and "density" in options and "compressor" in options


def folder_spec(argument):
    """A FOLDER[:LABELS] argument: (the folder, its comma-separated labels
    or None). An existing folder is taken whole, so a folder whose name has
    a ':' in it still reads; otherwise the labels follow the last ':'."""
    if Path(argument).is_dir():
        return Path(argument), None
    folder, colon, labels = argument.rpartition(":")
    if not colon:
        return Path(argument), None  # read_summary names it
    labels = [label.strip() for label in labels.split(",") if label.strip()]
    if not folder or not labels:
        raise tta.InputError(f"{argument}: FOLDER:LABELS needs a folder and at least one system label")
    return Path(folder), labels


def check_folder_labels(folder, summary, labels, only):
    """Raises InputError, naming the folder, where FOLDER:LABELS names a
    system the folder lacks or whose runs failed, or none that --systems
    reads."""
    if labels is None:
        return
    absent = sorted(set(labels) - set(summary["systems"]))
    if absent:
        raise tta.InputError(f"{folder}: no system {', '.join(absent)} (it has: {', '.join(summary['systems'])})")
    failed = [label for label in labels if "error" in summary["systems"][label]]
    if failed:
        raise tta.InputError(f"{folder}: system {failed[0]} failed: {summary['systems'][failed[0]]['error']}")
    if only is not None and not set(labels) & set(only):
        raise tta.InputError(f"{folder}: none of {', '.join(labels)} is among --systems {', '.join(only)}")


def gather(folders, only=None):
    """{(label, seed): run} over the folders (run has folder, fixed,
    density and evaluations: read_evaluations), and the folders'
    (folder, summary) pairs. `folders`: (path, labels) pairs (folder_spec)
    whose labels (None: all) are the systems read from that folder. `only`:
    the system labels to read from every folder (None: all)."""
    runs, summaries = {}, []
    for folder, labels in folders:
        summary = read_summary(folder)
        check_pairs_with(folder, summary, summaries)
        summaries.append((folder, summary))
        check_folder_labels(folder, summary, labels, only)
        for label, entry in summary["systems"].items():
            wanted = (only is None or label in only) and (labels is None or label in labels)
            if "error" in entry or not wanted:
                continue
            options = entry.get("options", {})
            for seed_run in tta.seed_runs(summary, label):
                seed = seed_run.get("seed")
                if isinstance(seed, bool) or not isinstance(seed, int) or not isinstance(seed_run.get("run"), str):
                    raise tta.InputError(f"{folder}/summary.json: system {label}: a run without an integer 'seed' "
                                         "and a 'run' folder")
                if (label, seed) in runs:
                    raise tta.InputError(f"system {label} seed {seed} is in both {runs[(label, seed)]['folder']} "
                                         f"and {folder}: keep one (pass the folders that hold each run once, or "
                                         "name the systems to read from a folder as FOLDER:LABELS)")
                run_dir = Path(folder) / seed_run["run"]
                runs[(label, seed)] = {"folder": folder, "fixed": is_fixed_density(options),
                                       "density": options.get("density"), "evaluations": read_evaluations(run_dir)}
    names = ", ".join(str(folder) for folder, _ in folders)
    if not runs:
        raise tta.InputError("no runs in " + names)
    if only is not None:
        missing = sorted(set(only) - {label for label, _ in runs})
        if missing:
            raise tta.InputError(f"--systems {', '.join(missing)}: no run of it in " + names)
    return runs, summaries


def seed_list(text):
    """--seeds' comma-separated seeds (digits only)."""
    parts = [s.strip() for s in text.split(",") if s.strip()]
    if not all(s.isascii() and s.isdigit() for s in parts):
        raise tta.InputError(f"--seeds {text}: not a comma-separated list of seeds (0, 1, 2, ...)")
    if not parts:
        raise tta.InputError("--seeds: no seed named")
    return [int(s) for s in parts]


def only_seeds(runs, seeds, named):
    """The runs of `seeds`. A seed no folder ran, or a system named by
    --systems or FOLDER:LABELS (`named`) left with no run on them, is an
    error naming it."""
    missing = sorted(set(seeds) - {seed for _, seed in runs})
    if missing:
        raise tta.InputError(f"--seeds {', '.join(map(str, missing))}: no run of that seed in the folders")
    kept = {key: run for key, run in runs.items() if key[1] in seeds}
    gone = sorted(named - {label for label, _ in kept})
    if gone:
        raise tta.InputError(f"--seeds {','.join(map(str, seeds))}: system {', '.join(gone)} has no run on these "
                             "seeds")
    return kept


def read_evaluations(run_dir):
    """A run's eval.csv: (iterations, times, accuracies, samples per
    evaluation), in iteration order. Evaluations run asynchronously and
    are written as they finish, so rows may come out of order (and a run
    stopped by its time budget may evaluate its last iteration twice): they
    are stably sorted by iteration, as apps/run_summary.cc reads them."""
    path = os.path.join(str(run_dir), "eval.csv")
    columns = tta.read_columns(path, (*tta.EVAL_COLUMNS, "samples"))
    rows = sorted(zip((int(i) for i in columns["iteration"]), columns["time_s"], columns["accuracy"],
                      columns["samples"]), key=lambda row: row[0])
    if not rows:
        raise tta.InputError(f"{path}: no evaluation rows")
    if any(row[3] < 1 for row in rows):
        raise tta.InputError(f"{path}: an evaluation with no samples")
    return tuple(list(column) for column in zip(*rows))
