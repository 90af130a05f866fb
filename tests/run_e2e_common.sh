# Shared by tests/run_e2e_test.sh and tests/run_options_e2e_test.sh, sourced
# with their arguments (path/to/stellatrain [work dir]): sets STELLATRAIN,
# SOURCE_DIR and WORK (a temporary folder, removed on exit, unless the
# caller named one), enters WORK, writes the tiny scenarios tiny.yaml and
# tiny-low-target.yaml, and defines check_results. The helpers fail and
# expect_error come from tests/e2e_lib.sh.

STELLATRAIN=${1:?usage: $(basename "$0") path/to/stellatrain [work dir]}
STELLATRAIN=$(cd "$(dirname "$STELLATRAIN")" && pwd)/$(basename "$STELLATRAIN")
SOURCE_DIR=$(cd "$(dirname "$0")/.." && pwd)
WORK=${2:-}
if [ -z "$WORK" ]; then
  WORK=$(mktemp -d "/tmp/$(basename "$0" .sh).XXXXXX")
  trap 'rm -rf "$WORK"' EXIT  # kept only when the caller named it (to look at after a failure)
fi
mkdir -p "$WORK"
cd "$WORK"

source "$SOURCE_DIR/tests/e2e_lib.sh"

# A target that ddp's plain SGD reaches within 20 iterations here and
# stellatrain (5% density, staleness 1) does not: both branches of TTA.
write_tiny_scenario tiny.yaml "$SOURCE_DIR"
sed -e 's/^target_accuracy: .*/target_accuracy: 0.2/' tiny.yaml > tiny-low-target.yaml

# Checks one results folder: summary.json against the runs' own files.
# Arguments: results dir, expected backend, expected seed count.
check_results() {
  ANALYSIS_DIR="$SOURCE_DIR/analysis" python3 - "$@" <<'PY'
import csv, json, math, os, statistics, sys

# The monotone fit's reading as analysis/monotone_tta.py takes it: the two
# implementations (C++ in summary.json, Python in the analysis) must agree.
sys.path.insert(0, os.environ["ANALYSIS_DIR"])
import monotone_tta

out, backend, seeds = sys.argv[1], sys.argv[2], int(sys.argv[3])
summary = json.load(open(os.path.join(out, "summary.json")))

def check(ok, what):
    if not ok:
        sys.exit(f"FAIL ({out}): {what}")

def close(a, b):
    return a is None and b is None or (a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9))

def mean(values):
    return None if any(v is None for v in values) else sum(values) / len(values)

check(summary["scenario"] == "tiny", "scenario name")
check(summary["backend"] == backend, f"backend {summary['backend']}")
check(summary["target_accuracy"] in (0.9, 0.2), "target_accuracy")
check(os.path.isfile(os.path.join(out, "scenario.yaml")), "scenario.yaml copied")
check(list(summary["systems"]) == ["st", "ddp"], f"systems in scenario order: {list(summary['systems'])}")
check(summary["speedup_reference"] == "ddp", "speedup reference")
check(math.isclose(summary["cost_per_hour"], 3), "cost_per_hour: 2 + 1")
check(len(summary["seeds"]) == seeds, "seeds listed")
target = summary["target_accuracy"]

def run_numbers(run):
    """TTA etc. recomputed from the run folder's eval.csv and manifest.json."""
    folder = os.path.join(out, run)
    for name in ("manifest.json", "eval.csv", "iterations.csv"):
        check(os.path.isfile(os.path.join(folder, name)), f"{run}/{name} exists")
    check(os.path.isfile(os.path.join(folder, "link.csv")) == (backend == "sim"), f"{run}/link.csv only on sim")
    rows = sorted(csv.DictReader(open(os.path.join(folder, "eval.csv"))), key=lambda r: int(r["iteration"]))
    check(rows, f"{run}/eval.csv has evaluations")
    reached = [r for r in rows if float(r["accuracy"]) >= target]
    manifest = json.load(open(os.path.join(folder, "manifest.json")))["summary"]
    fit = monotone_tta.first_reaching(monotone_tta.isotonic_fit([float(r["accuracy"]) for r in rows]), target)
    return {
        "tta_s": float(reached[0]["time_s"]) if reached else None,
        "tta_fit_s": float(rows[fit]["time_s"]) if fit is not None else None,
        "best_accuracy": max(float(r["accuracy"]) for r in rows),
        "iterations": int(rows[-1]["iteration"]),
        "wan_bytes": manifest.get("wan_bytes"),
    }

for label, entry in summary["systems"].items():
    check("error" not in entry, f"{label} failed: {entry.get('error')}")
    for key in ("tta_s", "best_accuracy", "iterations", "wan_bytes", "mean_iteration_s", "speedup_vs_ddp", "runs"):
        check(key in entry, f"{label}: key {key}")
    expected_runs = [label] if seeds == 1 else [f"{label}/seed-{s}" for s in summary["seeds"]]
    check(entry["runs"] == expected_runs, f"{label}: runs {entry['runs']} != {expected_runs}")
    numbers = [run_numbers(run) for run in entry["runs"]]
    check(close(entry["tta_s"], mean([n["tta_s"] for n in numbers])), f"{label}: tta_s {entry['tta_s']} vs eval.csv")
    check(close(entry["best_accuracy"], mean([n["best_accuracy"] for n in numbers])), f"{label}: best_accuracy")
    fits = [n["tta_fit_s"] for n in numbers]
    if seeds == 1:
        check(close(entry["tta_fit_s"], fits[0]), f"{label}: tta_fit_s {entry['tta_fit_s']} vs monotone_tta.py's {fits[0]}")
    check(entry["tta_fit_s"] is None or (entry["tta_s"] is not None and entry["tta_fit_s"] >= entry["tta_s"]),
          f"{label}: the fit reads before the first crossing")
    check(close(entry["iterations"], mean([n["iterations"] for n in numbers])), f"{label}: iterations")
    check(entry["iterations"] == 20, f"{label}: 20 iterations")
    check(entry["mean_iteration_s"] > 0, f"{label}: mean_iteration_s")
    if backend == "sim":
        check(entry["wan_bytes"] > 0 and close(entry["wan_bytes"], mean([n["wan_bytes"] for n in numbers])), f"{label}: wan_bytes")
    else:
        check(entry["wan_bytes"] is None, f"{label}: wan_bytes null without WAN links")
    if entry["tta_s"] is None:
        check(entry.get("cost_to_target") is None, f"{label}: no cost without TTA")
    else:
        check(close(entry["cost_to_target"], 3 * entry["tta_s"] / 3600), f"{label}: cost_to_target")
    if seeds > 1:
        per_seed = entry["per_seed"]
        check([p["run"] for p in per_seed] == entry["runs"], f"{label}: per_seed runs")
        for p, n in zip(per_seed, numbers):
            check(close(p["tta_s"], n["tta_s"]) and close(p["best_accuracy"], n["best_accuracy"]), f"{label}: per_seed {p['run']}")
            check(close(p["tta_fit_s"], n["tta_fit_s"]), f"{label}: per_seed {p['run']} tta_fit_s vs monotone_tta.py")
    else:
        check("per_seed" not in entry, f"{label}: no per_seed with one seed")

ddp = summary["systems"]["ddp"]["tta_s"]
for label, entry in summary["systems"].items():
    expected = ddp / entry["tta_s"] if ddp is not None and entry["tta_s"] is not None else None
    check(close(entry["speedup_vs_ddp"], expected), f"{label}: speedup_vs_ddp {entry['speedup_vs_ddp']} != {expected}")
    if ddp is None and entry["tta_s"] is not None:
        check(entry["speedup_vs_ddp_at_least"] > 0, f"{label}: lower bound when ddp never reached")
# The fit's speedup: the median of ddp's fit reading over the system's, seed by seed.
def fit_readings(entry):
    return [p["tta_fit_s"] for p in entry["per_seed"]] if seeds > 1 else [entry["tta_fit_s"]]
for label, entry in summary["systems"].items():
    ratios = [d / t for d, t in zip(fit_readings(summary["systems"]["ddp"]), fit_readings(entry))
              if d is not None and t is not None]
    expected = statistics.median(ratios) if ratios else None
    check(close(entry["speedup_vs_ddp_fit"], expected) and entry["speedup_fit_pairs"] == len(ratios),
          f"{label}: speedup_vs_ddp_fit {entry['speedup_vs_ddp_fit']} != {expected}")
# analysis/paper_tta_table.py --fit reads both speedups again from the runs'
# eval.csv: its cells are summary.json's, interval and all.
import paper_tta_table
for label, entry in summary["systems"].items():
    row = [c.strip() for c in paper_tta_table.fit_row(out, label).strip().strip("|").split("|")]
    for cell, key, ci_key, pairs_key in ((row[2], "speedup_vs_ddp", "speedup_ci95", "speedup_pairs"),
                                         (row[3], "speedup_vs_ddp_fit", "speedup_fit_ci95", "speedup_fit_pairs")):
        value, ci = entry[key], entry.get(ci_key)
        want = paper_tta_table.speedup_text(value, ci)
        pairs = entry[pairs_key]
        if pairs < seeds:
            want += f" ({pairs}/{seeds} pairs reach)"
        check(cell == want, f"{label}: paper_tta_table --fit reads {cell}, summary.json {want}")
print(f"ok: {out}: " + ", ".join(f"{l} TTA {e['tta_s']} speedup {e['speedup_vs_ddp']}" for l, e in summary["systems"].items()))
PY
}

# The one-seed and two-seed sim runs both tests compare against.
run_one_seed() {
  ONE_SEED=$WORK/one-seed
  "$STELLATRAIN" run tiny.yaml --out "$ONE_SEED" --quiet
  check_results "$ONE_SEED" sim 1
}
run_two_seeds() {
  TWO_SEEDS=$WORK/two-seeds
  "$STELLATRAIN" run tiny-low-target.yaml --seeds 2 --out "$TWO_SEEDS" --quiet
  check_results "$TWO_SEEDS" sim 2
}
