#!/usr/bin/env python3
"""analysis/paper_tta_table.py --fit: the TTA speedup and iterations ratio
read at the first evaluation at the target and from the monotone fit of
each run's eval.csv, on folders whose curves are written here so that
every cell can be worked out by hand. Standard library only.

    python3 tests/test_paper_tta_fit.py
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "analysis", "paper_tta_table.py")
EVALUATED = range(10, 201, 10)  # every 10 iterations to 200: 20 evaluations


def rising(slope):
    """Accuracy 0.5 + slope * iteration at each evaluation."""
    return [0.5 + slope * it for it in EVALUATED]


def spiking(slope, at, value):
    """`rising`, but one evaluation at iteration `at` reads `value`."""
    return [value if it == at else a for it, a in zip(EVALUATED, rising(slope))]


def write_run(folder, accuracies, seconds_per_iteration):
    os.makedirs(folder, exist_ok=True)
    rows = [f"{it * seconds_per_iteration:.6f},{it},{a:.6f},0.5,2000" for it, a in zip(EVALUATED, accuracies)]
    with open(os.path.join(folder, "eval.csv"), "w") as f:
        f.write("time_s,iteration,accuracy,loss,samples\n" + "\n".join(rows) + "\n")


def write_folder(root, curves):
    """curves: label -> (seconds per iteration, one accuracy list per seed)."""
    systems = {}
    for label, (seconds, per_seed) in curves.items():
        runs = []
        for seed, accuracies in enumerate(per_seed, start=1):
            run = f"{label}/seed-{seed}"
            write_run(os.path.join(root, run), accuracies, seconds)
            runs.append({"seed": seed, "run": run})
        systems[label] = {"per_seed": runs}
    summary = {"scenario": "resnet18-h100-fluct-115", "seeds": [1, 2, 3], "target_accuracy": 0.85,
               "systems": systems}
    with open(os.path.join(root, "summary.json"), "w") as f:
        json.dump(summary, f)


def edit_summary(root, change):
    """Applies `change` to ROOT/summary.json's systems in place."""
    path = os.path.join(root, "summary.json")
    with open(path) as f:
        summary = json.load(f)
    change(summary["systems"])
    with open(path, "w") as f:
        json.dump(summary, f)


def fit_table(*args):
    return subprocess.run([sys.executable, SCRIPT, "--fit", *args], capture_output=True, text=True)


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


# ddp (1 s per iteration) rises to 85% at iteration 90 (0.5 + 0.004 * 90 = 0.86);
# a spike to 86% at iteration 50 is a first crossing the next evaluations fall
# back from (0.74, 0.78, 0.82): the fit pools 50-70 to 0.793, keeps 80 at
# 0.82, and crosses at 90.
DDP_CLEAN, DDP_SPIKE = rising(0.004), spiking(0.004, 50, 0.86)
# StellaTrain (0.1 s per iteration) reaches 85% at iteration 120 (0.5 + 0.003 * 120 = 0.86).
ST_CLEAN, ST_MISSES = rising(0.003), rising(0.001)


class FitReadings(unittest.TestCase):
    def test_a_spike_moves_the_first_reading_and_not_the_fit(self):
        with tempfile.TemporaryDirectory() as root:
            write_folder(root, {"ddp": (1.0, [DDP_SPIKE, DDP_SPIKE, DDP_CLEAN]),
                                "st": (0.1, [ST_CLEAN, ST_CLEAN, ST_CLEAN])})
            out = fit_table(f"{root}:st")
        self.assertEqual(out.returncode, 0, out.stderr)
        lines = out.stdout.splitlines()
        self.assertEqual(len(lines), 3)
        row = cells(lines[2])
        self.assertEqual(row[:2], ["resnet18-h100-fluct-115 (st)", "3"])
        # First: ddp 50, 50, 90 s over 12 s each: 4.17, 4.17, 7.5; a resample's
        # median is 4.17 with probability 20/27 (about 74%), else 7.5.
        self.assertEqual(row[2], "4.2x [4.2, 7.5]")
        # Fit: ddp 90 s on every seed: 7.5 each.
        self.assertEqual(row[3], "7.5x [7.5, 7.5]")
        # Iterations: 120 over ddp's median 50 at the first reading, 90 by the fit.
        self.assertEqual(row[4:6], ["2.40", "1.33"])
        # After the fit's crossing: StellaTrain's at 120 has 8 evaluations after it, ddp's at 90 has 11.
        self.assertEqual(row[6], "8 / 11")

    def test_a_seed_that_misses_is_left_out_of_the_pairs(self):
        with tempfile.TemporaryDirectory() as root:
            write_folder(root, {"ddp": (1.0, [DDP_CLEAN, DDP_SPIKE, DDP_CLEAN]),
                                "stellatrain": (0.1, [ST_CLEAN, ST_CLEAN, ST_MISSES])})
            out = fit_table(root)
        self.assertEqual(out.returncode, 0, out.stderr)
        row = cells(out.stdout.splitlines()[2])
        self.assertEqual(row[0], "resnet18-h100-fluct-115")  # the default label is not named
        # Seeds 1 and 2 pair: 90 / 12 and 50 / 12 at the first reading; 7.5 twice by the fit.
        self.assertEqual(row[2], "5.8x [4.2, 7.5] (2/3 pairs reach)")
        self.assertEqual(row[3], "7.5x [7.5, 7.5] (2/3 pairs reach)")
        # No iterations ratio where a seed missed; the fewest evaluations
        # after the fit's crossing over the seeds that reached (as summary.json).
        self.assertEqual(row[4:7], ["-", "-", "8 / 11"])

    def test_a_seed_ddp_misses_is_left_out_too(self):
        with tempfile.TemporaryDirectory() as root:
            write_folder(root, {"ddp": (1.0, [DDP_CLEAN, ST_MISSES, DDP_CLEAN]),
                                "st": (0.1, [ST_CLEAN, ST_CLEAN, ST_CLEAN])})
            row = cells(fit_table(f"{root}:st").stdout.splitlines()[2])
        self.assertEqual(row[2:4], ["7.5x [7.5, 7.5] (2/3 pairs reach)"] * 2)
        self.assertEqual(row[4:7], ["-", "-", "8 / 11"])

    def test_one_seed(self):
        # A one-seed run has no per_seed list: its system entry is its run, in FOLDER/LABEL.
        with tempfile.TemporaryDirectory() as root:
            write_run(os.path.join(root, "ddp"), DDP_CLEAN, 1.0)
            write_run(os.path.join(root, "st"), ST_CLEAN, 0.1)
            summary = {"scenario": "resnet18-h100-const-500", "seeds": [1], "target_accuracy": 0.85,
                       "systems": {"ddp": {}, "st": {}}}
            with open(os.path.join(root, "summary.json"), "w") as f:
                json.dump(summary, f)
            out = fit_table(f"{root}:st")
        self.assertEqual(out.returncode, 0, out.stderr)
        # 90 s over 12 s, no interval from one pair; 120 iterations over 90.
        self.assertEqual(cells(out.stdout.splitlines()[2])[1:], ["1", "7.5x", "7.5x", "1.33", "1.33", "8 / 11"])

    def test_a_failed_system_is_named(self):
        with tempfile.TemporaryDirectory() as root:
            write_folder(root, {"ddp": (1.0, [DDP_CLEAN] * 3), "st": (0.1, [ST_CLEAN] * 3)})
            edit_summary(root, lambda systems: systems.update(ddp={"error": "out of memory"}))
            out = fit_table(f"{root}:st")
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("system 'ddp' failed: out of memory", out.stderr)
        self.assertEqual(out.stdout, "")  # no half table

    def test_seeds_that_do_not_pair_are_refused(self):
        with tempfile.TemporaryDirectory() as root:
            write_folder(root, {"ddp": (1.0, [DDP_CLEAN] * 3), "st": (0.1, [ST_CLEAN] * 3)})
            edit_summary(root, lambda systems: systems["ddp"]["per_seed"].pop())
            out = fit_table(f"{root}:st")
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("st ran seeds [1, 2, 3], ddp [1, 2]: the speedups pair runs by seed", out.stderr)

    def test_the_table_s_arguments_are_taken(self):
        # FOLDER:LABEL:FIXED_FOLDER, as the table takes it: the fixed folders are not read.
        with tempfile.TemporaryDirectory() as root:
            write_folder(root, {"ddp": (1.0, [DDP_CLEAN] * 3), "st": (0.1, [ST_CLEAN] * 3)})
            plain, with_fixed = fit_table(f"{root}:st"), fit_table(f"{root}:st:{root}/no-such-folder")
        self.assertEqual(with_fixed.returncode, 0, with_fixed.stderr)
        self.assertEqual(with_fixed.stdout, plain.stdout)

    def test_a_missing_eval_file_is_named(self):
        with tempfile.TemporaryDirectory() as root:
            write_folder(root, {"ddp": (1.0, [DDP_CLEAN] * 3), "st": (0.1, [ST_CLEAN] * 3)})
            os.remove(os.path.join(root, "st", "seed-2", "eval.csv"))
            out = fit_table(f"{root}:st")
        self.assertNotEqual(out.returncode, 0)
        self.assertIn(os.path.join("st", "seed-2", "eval.csv"), out.stderr)
        self.assertNotIn("Traceback", out.stderr)

    def test_a_missing_label_is_named(self):
        with tempfile.TemporaryDirectory() as root:
            write_folder(root, {"ddp": (1.0, [DDP_CLEAN] * 3), "st": (0.1, [ST_CLEAN] * 3)})
            out = fit_table(f"{root}:nosuch")
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("nosuch", out.stderr)
        self.assertNotIn("Traceback", out.stderr)

    def test_no_folder_prints_the_usage(self):
        out = fit_table()
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("--fit FOLDER", out.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
