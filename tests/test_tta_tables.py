#!/usr/bin/env python3
"""Tests for the analysis helpers behind `stellatrain plot` and the README's
tables: analysis/tta.py and analysis/report_tables.py directly, and
analysis/seed_table.py and analysis/paper_tta_table.py as commands on small
summaries and a fake results tree (tests/fake_results.py).

usage: test_tta_tables.py [REPO_ROOT]   (ctest runs it; standard library only;
the repository is the one holding this file, so REPO_ROOT is accepted and
not needed, as the recorded-run tests take it)
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "analysis"))
import report_tables  # noqa: E402
import tta  # noqa: E402
from fake_results import fake_run, read, write  # noqa: E402


class TtaTest(unittest.TestCase):
    def test_time_to_accuracy_is_first_reaching_time(self):
        self.assertEqual(tta.time_to_accuracy([1, 2, 3, 4], [0.5, 0.8, 0.7, 0.9], 0.8), 2)
        self.assertIsNone(tta.time_to_accuracy([1, 2], [0.5, 0.6], 0.8))

    def test_seed_runs_of_several_seeds_and_of_one(self):
        several = {"seeds": [1, 2], "systems": {"s": {"per_seed": [
            {"seed": 1, "run": "s/seed-1", "tta_at": {"0.85": 2.0}},
            {"seed": 2, "run": "s/seed-2", "tta_at": {"0.85": None}}]}}}
        self.assertEqual([r["run"] for r in tta.seed_runs(several, "s")], ["s/seed-1", "s/seed-2"])
        # One seed: no per_seed list; the system entry is the run, in its folder.
        one = {"seeds": [7], "systems": {"s": {"best_accuracy": 0.9, "tta_iteration": 40,
                                               "targets": {"0.85": {"tta_s": 3.0}, "0.87": {"tta_s": None}}}}}
        [run] = tta.seed_runs(one, "s")
        self.assertEqual((run["seed"], run["run"], run["tta_at"], run["best_accuracy"], run["tta_iteration"]),
                         (7, "s", {"0.85": 3.0, "0.87": None}, 0.9, 40))
        self.assertEqual(tta.median_or_none([None, 3, 1]), 2)
        self.assertIsNone(tta.median_or_none([None]))

    def test_speedup_bound(self):
        self.assertEqual(tta.speedup_upper_bound(40.0, 10.0), 4.0)
        self.assertIsNone(tta.speedup_upper_bound(None, 10.0))

    def test_mean_band_interpolates_on_the_common_range(self):
        grid, mean, low, high = tta.mean_band([([0, 2, 4], [0, 2, 4]), ([1, 3, 5], [2, 4, 6])])
        self.assertEqual(grid, [1, 2, 3, 4])
        self.assertEqual(mean, [1.5, 2.5, 3.5, 4.5])
        self.assertEqual(low, [1, 2, 3, 4])
        self.assertEqual(high, [2, 3, 4, 5])

    def test_mean_band_single_series_unchanged(self):
        self.assertEqual(tta.mean_band([([1, 2], [0.1, 0.2])]), ([1, 2], [0.1, 0.2], [0.1, 0.2], [0.1, 0.2]))

    def test_rolling_median_even_window_steadies_alternation(self):
        values = [2, 20] * 10
        smooth = tta.rolling_median(values, tta.median_window(80))  # window 2
        self.assertEqual(set(smooth[1:-1]), {11.0})
        self.assertEqual(tta.rolling_median([5, 1, 9], 1), [5, 1, 9])
        self.assertEqual(tta.median_window(10), 1)
        self.assertEqual(tta.median_window(200), 6)
        self.assertEqual(tta.median_window(100000), 50)

    def test_same_configured_rate(self):
        a = {"a->b": {"second": [0, 1], "configured_mbps": [10, 20], "delivered_mbps": [1, 2]}}
        b = {"a->b": {"second": [0], "configured_mbps": [10], "delivered_mbps": [5]}}
        c = {"a->b": {"second": [0, 1], "configured_mbps": [10, 30], "delivered_mbps": [1, 2]}}
        self.assertTrue(tta.same_configured_rate([a, b]))
        self.assertFalse(tta.same_configured_rate([a, c]))

    def test_check_summary_rejects_bad_values(self):
        good = {"scenario": "s", "backend": "sim", "target_accuracy": 0.85, "systems": {
            "ddp": {"tta_s": None, "best_accuracy": 0.5, "iterations": 10, "wan_bytes": 0,
                    "mean_iteration_s": 0.1, "speedup_vs_ddp": None, "runs": ["ddp"]}}}
        tta.check_summary(good)
        for path, value, message in ((("backend",), "gpu", "backend"),
                                     (("target_accuracy",), 85, "target_accuracy"),
                                     (("systems", "ddp", "best_accuracy"), None, "systems.ddp.best_accuracy"),
                                     (("systems", "ddp", "iterations"), "10", "systems.ddp.iterations"),
                                     (("systems", "ddp", "runs"), [], "systems.ddp.runs")):
            bad = json.loads(json.dumps(good))
            node = bad
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = value
            with self.assertRaisesRegex(tta.InputError, message):
                tta.check_summary(bad)

    def test_table_rows(self):
        summary = {"systems": {"ddp": {"tta_s": 100.0, "best_accuracy": 0.9, "iterations": 5, "wan_bytes": 2e9,
                                       "mean_iteration_s": 1.0, "speedup_vs_ddp": None, "runs": ["a", "b"]},
                               "x": {"tta_s": 1.0, "best_accuracy": 0.9, "iterations": 5, "wan_bytes": 0,
                                     "mean_iteration_s": 0.001, "speedup_vs_ddp": 104.2, "runs": ["c"]}}}
        self.assertEqual(report_tables.table_rows(summary), [
            ["ddp", "100.00", "0.9000", "5", "2.000", "1000.0", "1.0x", "2"],
            ["x", "1.00", "0.9000", "5", "0.000", "1.0", "104x", "1"]])
        self.assertEqual(report_tables.format_count(1000000), "1000000")
        self.assertEqual(report_tables.format_count(150.5), "150.5")


class SeedTableTest(unittest.TestCase):
    """analysis/seed_table.py: README's table from a summary with report targets."""

    def test_rows_per_target_with_interval_and_width(self):
        summary = {"scenario": "s", "clock": "simulated seconds", "seeds": [1, 2, 3], "target_accuracy": 0.85,
                   "systems": {
                       "ddp": {"best_accuracy": 0.88, "wan_bytes": 1e9, "mean_iteration_s": 0.18,
                               "targets": {"0.8": {"tta_s": 20.0, "seeds_reaching": 3, "speedup_vs_ddp": 1.0,
                                                   "speedup_ci95": [1.0, 1.0]},
                                           "0.85": {"tta_s": None, "seeds_reaching": 1}}},
                       "st": {"best_accuracy": 0.885, "wan_bytes": 1.5e8, "mean_iteration_s": 0.037,
                              "targets": {"0.8": {"tta_s": 4.0, "seeds_reaching": 3, "speedup_vs_ddp": 5.0,
                                                  "speedup_ci95": [4.25, 6.0]},
                                          "0.85": {"tta_s": 5.5, "seeds_reaching": 3, "speedup_vs_ddp": None}}},
                       "broken": {"error": "seed 2: boom"}}}
        with tempfile.TemporaryDirectory() as out:
            with open(os.path.join(out, "summary.json"), "w") as f:
                json.dump(summary, f)
            text = subprocess.run([sys.executable, os.path.join(HERE, "..", "analysis", "seed_table.py"), out],
                                  check=True, capture_output=True, text=True).stdout
        lines = [line for line in text.splitlines() if line.startswith("| ")]
        self.assertEqual(lines[1], "| ddp | 80% | 20.00 | 3/3 | 1.00x [1.00, 1.00] (width 0.00) | 88.0% | 1.000 | 180.0 |")
        self.assertEqual(lines[2], "|  | 85% | - | 1/3 | - |  |  |  |")
        self.assertEqual(lines[3], "| st | 80% | 4.00 | 3/3 | 5.00x [4.25, 6.00] (width 1.75) | 88.5% | 0.150 | 37.0 |")
        self.assertEqual(lines[4], "|  | 85% | 5.50 | 3/3 | - |  |  |  |")
        self.assertTrue(lines[5].startswith("| broken | failed: seed 2: boom |"))

    def test_a_folder_without_summary_is_named(self):
        with tempfile.TemporaryDirectory() as out:
            result = subprocess.run([sys.executable, os.path.join(HERE, "..", "analysis", "seed_table.py"), out],
                                    capture_output=True, text=True)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("summary.json: missing", result.stderr)


class PaperTtaTableTest(unittest.TestCase):
    """analysis/paper_tta_table.py: one row per results folder, its ratios
    from the per-seed runs, the link's utilisation from link.csv, the TTA
    over the best fixed density's, and the seeds reaching when not all do."""

    @staticmethod
    def seed(label, seed, tta, iteration, mean_iteration_s, best=0.88):
        return {"seed": seed, "run": f"{label}/seed-{seed}", "tta_s": tta, "tta_iteration": iteration,
                "tta_at": {"0.85": tta}, "best_accuracy": best, "mean_iteration_s": mean_iteration_s}

    def folder(self, root, st_ttas):
        systems = {}
        per_system = {"ddp": ([20.0, 22.0, 24.0], 0.2), "st": (st_ttas, 0.02), "fixed-0.1": ([2.0, 2.2, 2.4], 0.02),
                      "fixed-0.3": ([None, 3.0, 3.0], 0.03)}
        for label, (ttas, mean_s) in per_system.items():
            runs = [self.seed(label, i + 1, t, None if t is None else int(t / mean_s), mean_s)
                    for i, t in enumerate(ttas)]
            for run in runs:
                fake_run(os.path.join(root, run["run"]), mean_s, 1.0, 0.9, iterations=150)
            systems[label] = {"per_seed": runs, "targets": {"0.85": {"speedup_vs_ddp": 9.5,
                                                                     "speedup_ci95": [8.0, 11.0]}}}
        summary = {"scenario": "cnn-h100-const-100", "seeds": [1, 2, 3], "target_accuracy": 0.85,
                   "systems": systems}
        write(os.path.join(root, "summary.json"), json.dumps(summary))

    def table(self, *folders):
        return subprocess.run([sys.executable, os.path.join(HERE, "..", "analysis", "paper_tta_table.py"), *folders],
                              check=True, capture_output=True, text=True).stdout.splitlines()

    def test_a_row_with_its_factors_and_the_best_fixed_density(self):
        with tempfile.TemporaryDirectory() as root:
            self.folder(root, [2.2, 2.4, 2.6])
            lines = self.table(f"{root}:st")
        self.assertEqual(len(lines), 3)
        # Iterations 0.2 / 0.02 s; to target 120 / 110; link.csv delivers 60% of its rate; the best
        # fixed density every seed reaches is 10% (2.2 s), 30% misses on one seed.
        self.assertEqual(lines[2], "| cnn-h100-const-100 (st) | 3 | 10.0x | 1.09 | 9.5x [8.0, 11.0] | 88.00% / 88.00% | "
                                   "60% | 1.09 (fixed-0.1) | 257.3x |")

    def test_seeds_that_miss_the_target_are_counted(self):
        with tempfile.TemporaryDirectory() as root:
            self.folder(root, [2.2, None, 2.6])
            row = self.table(f"{root}:st")[2]
        self.assertIn("| 9.5x [8.0, 11.0] (2/3 seeds reach) |", row)
        self.assertIn("| - |", row)  # no iterations ratio without every seed
        self.assertIn("| not reached (fixed-0.1) |", row)

    def keep_systems(self, folder, keep, ttas=None):
        """Leaves only the systems `keep` accepts in FOLDER's summary; `ttas`
        (label -> per-seed TTAs) replaces theirs."""
        summary_path = os.path.join(folder, "summary.json")
        summary = json.loads(read(summary_path))
        summary["systems"] = {k: v for k, v in summary["systems"].items() if keep(k)}
        for label, values in (ttas or {}).items():
            for run, value in zip(summary["systems"][label]["per_seed"], values):
                run["tta_s"], run["tta_at"] = value, {"0.85": value}
        write(summary_path, json.dumps(summary))

    def test_fixed_densities_from_another_folder(self):
        with tempfile.TemporaryDirectory() as variant, tempfile.TemporaryDirectory() as base:
            self.folder(variant, [2.2, 2.4, 2.6])
            self.folder(base, [2.2, 2.4, 2.6])
            # The variant's folder has no fixed densities of its own; its label is named in the row.
            self.keep_systems(variant, lambda k: not k.startswith("fixed-"))
            alone = self.table(f"{variant}:st")[2]
            beside = self.table(f"{variant}:st:{base}")[2]
        self.assertTrue(alone.startswith("| cnn-h100-const-100 (st) |"), alone)
        self.assertIn("| - | 257.3x |", alone)
        self.assertIn("| 1.09 (fixed-0.1) | 257.3x |", beside)

    def test_fixed_densities_from_several_folders(self):
        with tempfile.TemporaryDirectory() as variant, tempfile.TemporaryDirectory() as part, \
                tempfile.TemporaryDirectory() as other_part:
            for folder in (variant, part, other_part):
                self.folder(folder, [2.2, 2.4, 2.6])
            self.keep_systems(variant, lambda k: not k.startswith("fixed-"))
            self.keep_systems(part, lambda k: k == "fixed-0.1")
            # The other part's fixed 30% reaches on every seed, faster than fixed 10%.
            self.keep_systems(other_part, lambda k: k == "fixed-0.3", {"fixed-0.3": [1.4, 1.5, 1.6]})
            row = self.table(f"{variant}:st:{part},{other_part}")[2]
            self.assertIn("| 1.60 (fixed-0.3) | 257.3x |", row)  # 2.4 over fixed 30%'s median 1.5
            only_part = self.table(f"{variant}:st:{part}")[2]
            self.assertIn("| 1.09 (fixed-0.1) | 257.3x |", only_part)
            # A fixed density in two parts is ambiguous: refused, naming both folders.
            twice = subprocess.run([sys.executable, os.path.join(HERE, "..", "analysis", "paper_tta_table.py"),
                                    f"{variant}:st:{part},{part}"], capture_output=True, text=True)
        self.assertNotEqual(twice.returncode, 0)
        self.assertIn("fixed-0.1 is also in", twice.stderr)
        self.assertIn(part, twice.stderr)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
