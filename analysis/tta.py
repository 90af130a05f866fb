"""Reading a `stellatrain run` results folder and the numbers around TTA.

Pure functions and the standard library only, so that tests/test_tta_tables.py
can check them with any python3 (no matplotlib needed) and plot_run.py keeps
only drawing. Every problem with the input raises InputError with a message
that names the file (and the line or key), which plot_run.py prints without
a traceback: a broken results folder is the user's problem to fix, not a bug.
"""
import csv
import json
import math
import os
import statistics

# sim: simulated seconds; real and emu: wall-clock seconds.
BACKENDS = ("sim", "real", "emu")

# summary.json: per-system keys and whether null is allowed. wan_bytes is
# null on the real backend (no WAN links); speedups are null without TTA.
SYSTEM_KEYS = {
    "tta_s": True,
    "best_accuracy": False,
    "iterations": False,
    "wan_bytes": True,
    "mean_iteration_s": False,
    "speedup_vs_ddp": True,
}
OPTIONAL_SYSTEM_KEYS = ("speedup_vs_ddp_at_least", "cost_to_target", "duration_s", "final_accuracy")
# A timing run (compute math: timing) measures no accuracy: time, traffic and
# throughput only, and the iteration-time ratio to ddp.
TIMING_SYSTEM_KEYS = {
    "iterations": False,
    "wan_bytes": True,
    "mean_iteration_s": False,
    "samples_per_s": False,
    "duration_s": False,
}


class InputError(Exception):
    """A results folder the user has to fix (missing or malformed file)."""


# --- summary.json ------------------------------------------------------------


def _number(value, where, nullable=False):
    """A JSON number (not a bool); None passes only where null is allowed."""
    if value is None and nullable:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        kind = "a number or null" if nullable else "a number"
        raise InputError(f"{where}: expected {kind}, got {json.dumps(value)}")
    return value


def _require(mapping, key, where):
    if key not in mapping:
        raise InputError(f"{where}: missing key '{key}'")
    return mapping[key]


def failed(entry):
    """True for a system whose runs failed: `stellatrain run` then writes
    "error" (a message) instead of the numbers."""
    return "error" in entry


def _check_system(label, entry, where):
    """Validates one systems.LABEL entry in place; returns it."""
    where = f"{where}: systems.{label}"
    if not isinstance(entry, dict):
        raise InputError(f"{where}: expected an object")
    runs = _require(entry, "runs", where)
    if not isinstance(runs, list) or not runs or not all(isinstance(r, str) and r for r in runs):
        raise InputError(f"{where}.runs: expected a non-empty list of folder names")
    if failed(entry):
        if not isinstance(entry["error"], str):
            raise InputError(f"{where}.error: expected a message")
        return entry
    keys = TIMING_SYSTEM_KEYS if entry.get("math") == "timing" else SYSTEM_KEYS
    for key, nullable in keys.items():
        _number(_require(entry, key, where), f"{where}.{key}", nullable)
    for key in OPTIONAL_SYSTEM_KEYS:
        if key in entry:
            _number(entry[key], f"{where}.{key}", nullable=True)
    per_seed = entry.get("per_seed")
    if per_seed is not None and not isinstance(per_seed, list):
        raise InputError(f"{where}.per_seed: expected a list")
    return entry


def check_summary(summary, where="summary.json"):
    """Validates a parsed summary.json; returns it. `where` names the file."""
    if not isinstance(summary, dict):
        raise InputError(f"{where}: expected a JSON object at the top")
    scenario = _require(summary, "scenario", where)
    if not isinstance(scenario, str):
        raise InputError(f"{where}: scenario: expected a string")
    backend = _require(summary, "backend", where)
    if backend not in BACKENDS:
        raise InputError(f"{where}: backend: expected one of {', '.join(BACKENDS)}, got {json.dumps(backend)}")
    target = _number(_require(summary, "target_accuracy", where), f"{where}: target_accuracy")
    if not is_timing(summary) and not 0 < target <= 1:
        raise InputError(f"{where}: target_accuracy: expected a fraction in (0, 1], got {target}")
    reference = summary.get("speedup_reference", "ddp")
    if reference is not None and not isinstance(reference, str):
        raise InputError(f"{where}: speedup_reference: expected a system label or null")
    systems = _require(summary, "systems", where)
    if not isinstance(systems, dict) or not systems:
        raise InputError(f"{where}: systems: expected a non-empty object")
    for label, entry in systems.items():
        _check_system(label, entry, where)
    return summary


def is_timing(summary):
    """True for the results of a timing run (no accuracy, no TTA)."""
    systems = summary.get("systems")
    return isinstance(systems, dict) and any(isinstance(e, dict) and e.get("math") == "timing"
                                             for e in systems.values())


def reference_label(summary):
    """The system speedups are measured against: speedup_reference, else
    "ddp"; None when the scenario has no such system."""
    label = summary.get("speedup_reference", "ddp")
    return label if label in summary["systems"] else None


def load_summary(results_dir):
    """Reads and validates RESULTS_DIR/summary.json."""
    return check_summary(read_summary(results_dir), os.path.join(results_dir, "summary.json"))


def read_summary(results_dir):
    """Reads RESULTS_DIR/summary.json, naming the file when it is missing or
    not JSON; the fields are the caller's to check."""
    path = os.path.join(results_dir, "summary.json")
    if not os.path.isfile(path):
        raise InputError(f"{path}: not found (is {results_dir} a `stellatrain run --out` folder?)")
    try:
        with open(path, encoding="utf-8") as f:
            summary = json.load(f)
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: line {e.lineno}, column {e.colno}: malformed JSON ({e.msg})") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read ({e})") from None
    return summary


def load_manifest(run_dir):
    """RUN_DIR/manifest.json as a dict, or {} when absent (it only adds details)."""
    path = os.path.join(run_dir, "manifest.json")
    if not os.path.isfile(path):
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            manifest = json.load(f)
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: line {e.lineno}, column {e.colno}: malformed JSON ({e.msg})") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot be read ({e})") from None
    if not isinstance(manifest, dict):
        raise InputError(f"{path}: expected a JSON object at the top")
    return manifest


# --- CSV files -----------------------------------------------------------------


def read_columns(path, numeric, text=()):
    """Reads a CSV with a header into {column: list}, numeric columns as floats.

    Only the named columns are kept (extra columns are fine, so the writers can
    grow). A missing column or a value that is not a finite number is an
    InputError naming the file and line.
    """
    if not os.path.isfile(path):
        raise InputError(f"{path}: not found")
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None:
            raise InputError(f"{path}: empty file (expected a header line)")
        header = [h.strip() for h in header]
        missing = [c for c in (*numeric, *text) if c not in header]
        if missing:
            raise InputError(f"{path}: line 1: missing column(s) {', '.join(missing)} (header: {','.join(header)})")
        index = {name: header.index(name) for name in (*numeric, *text)}
        columns = {name: [] for name in index}
        for line_no, row in enumerate(reader, start=2):
            if not row or not "".join(row).strip():
                continue
            if len(row) < len(header):
                raise InputError(f"{path}: line {line_no}: {len(row)} fields, the header has {len(header)}")
            for name in numeric:
                columns[name].append(_float(row[index[name]], path, line_no, name))
            for name in text:
                columns[name].append(row[index[name]].strip())
    return columns


def _float(field, path, line_no, name):
    try:
        value = float(field)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise InputError(f"{path}: line {line_no}: column {name}: not a number: {field!r}")
    return value


EVAL_COLUMNS = ("time_s", "iteration", "accuracy")
ITERATION_COLUMNS = ("start_s", "iteration_ms")
LINK_NUMERIC = ("second", "configured_mbps", "delivered_mbps")


def read_eval(run_dir, allow_empty=False):
    """eval.csv of one run: time_s, iteration, accuracy (at least one row,
    unless allow_empty: a timing run is never evaluated)."""
    path = os.path.join(run_dir, "eval.csv")
    columns = read_columns(path, EVAL_COLUMNS)
    if not columns["time_s"] and not allow_empty:
        raise InputError(f"{path}: no evaluation rows")
    return columns


def read_iterations(run_dir):
    """iterations.csv of one run: start_s and iteration_ms."""
    return read_columns(os.path.join(run_dir, "iterations.csv"), ITERATION_COLUMNS)


def read_links(run_dir):
    """link.csv of one run as {direction: {second, configured_mbps, delivered_mbps}}, or None when absent."""
    path = os.path.join(run_dir, "link.csv")
    if not os.path.isfile(path):
        return None
    columns = read_columns(path, LINK_NUMERIC, ("link",))
    links = {}
    for i, name in enumerate(columns["link"]):
        series = links.setdefault(name, {key: [] for key in LINK_NUMERIC})
        for key in LINK_NUMERIC:
            series[key].append(columns[key][i])
    return links


# --- TTA and curves ------------------------------------------------------------


def time_to_accuracy(times, accuracies, target):
    """First time at which accuracy reaches target (docs/scenarios.md), or None."""
    for t, a in zip(times, accuracies):
        if a >= target:
            return t
    return None


def same_tta(a, b):
    """Two TTAs agree: both None, or equal to 1e-4 relative (CSV rounding)."""
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= 1e-6 + 1e-4 * max(abs(a), abs(b))


def speedup_upper_bound(ddp_tta, duration_s):
    """For a system that ran duration_s without reaching the target: its TTA is
    later than that, so its speedup is below ddp_tta / duration_s."""
    if ddp_tta is None or not duration_s or duration_s <= 0:
        return None
    return ddp_tta / duration_s


def interpolate(xs, ys, x):
    """Linear interpolation in sorted xs (x inside [xs[0], xs[-1]])."""
    lo, hi = 0, len(xs) - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if xs[mid] <= x:
            lo = mid
        else:
            hi = mid
    if xs[hi] == xs[lo] or x <= xs[lo]:
        return ys[lo]
    if x >= xs[hi]:
        return ys[hi]
    return ys[lo] + (ys[hi] - ys[lo]) * (x - xs[lo]) / (xs[hi] - xs[lo])


def mean_band(series):
    """Mean, min and max of several seeds' curves on one grid.

    Each seed evaluates at its own times, so the curves are linearly
    interpolated onto the union of their x values, restricted to the range all
    seeds cover (outside it a mean would silently drop seeds).
    Returns (grid, mean, low, high); a single series comes back unchanged.
    """
    series = [(list(xs), list(ys)) for xs, ys in series if xs]
    if not series:
        return [], [], [], []
    if len(series) == 1:
        xs, ys = series[0]
        return xs, ys, ys, ys
    start = max(xs[0] for xs, _ in series)
    end = min(xs[-1] for xs, _ in series)
    grid = sorted({x for xs, _ in series for x in xs if start <= x <= end})
    mean, low, high = [], [], []
    for x in grid:
        values = [interpolate(xs, ys, x) for xs, ys in series]
        mean.append(sum(values) / len(values))
        low.append(min(values))
        high.append(max(values))
    return grid, mean, low, high


def rolling_median(values, window):
    """Rolling median over `window` points around each one (fewer at the ends).

    Iteration times are spiky (a slow exchange every few steps), and a median
    keeps the level readable where a mean would smear the spikes into it.
    """
    if window <= 1:
        return list(values)
    out = []
    for i in range(len(values)):
        start = max(0, i - window // 2)
        chunk = sorted(values[start:start + window])
        mid = len(chunk) // 2
        out.append(chunk[mid] if len(chunk) % 2 else (chunk[mid - 1] + chunk[mid]) / 2)
    return out


def median_window(count):
    """An even window of about 1/40 of the points, between 1 and 50.

    Even, because pipelined systems alternate short and long iterations (the
    staleness-1 pipeline): an odd window's median flips between the two
    levels at every step, an even one lands between them, steadily.
    """
    window = max(1, min(50, count // 40))
    return window + window % 2 if window > 1 else window


def same_configured_rate(link_sets):
    """True when every run's link.csv shows the same configured rate, second by
    second, per direction (they replay one trace); then one step line serves
    all systems. Runs of different lengths are compared where they overlap."""
    link_sets = [links for links in link_sets if links]
    if len(link_sets) < 2:
        return True
    first = link_sets[0]
    for links in link_sets[1:]:
        if set(links) != set(first):
            return False
        for direction, series in links.items():
            rates = dict(zip(first[direction]["second"], first[direction]["configured_mbps"]))
            for second, rate in zip(series["second"], series["configured_mbps"]):
                if second in rates and abs(rates[second] - rate) > 1e-6 * max(1.0, abs(rate)):
                    return False
    return True


def seed_runs(summary, label):
    """One system's runs, one per seed, as summary.json's per_seed lists them
    (seed, run: its folder in the results, tta_at: TTA per report target,
    tta_iteration, best_accuracy, mean_iteration_s, ...). A one-seed run has
    no per_seed list: its system entry is its only run, and its tta_at comes
    from the entry's targets."""
    entry = summary["systems"][label]
    if entry.get("per_seed"):
        return entry["per_seed"]
    tta_at = {target: at.get("tta_s") for target, at in (entry.get("targets") or {}).items()}
    return [dict(entry, seed=summary["seeds"][0], run=label, tta_at=tta_at)]


def median_or_none(values):
    """The median of the values that are not None; None when none are."""
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None
