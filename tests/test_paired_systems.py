#!/usr/bin/env python3
"""Tests for analysis/paired_systems.py: two systems of one results folder
compared seed by seed. Builds summary.json files in a temporary folder:
the per-seed ratios and their median, the ratio of the medians, the count
of faster seeds, a seed where one side misses the target (no pair), the
bootstrap's determinism and bounds, --target picking another report
target, and clear errors for an unknown system, a target the runs lack and
a missing folder; and --baseline-from, the baseline from another folder,
refused where the two folders' runs would not pair. That its interval equals the engine's (summary.json's
speedup_ci95) is checked on real runs by tests/run_e2e_test.sh. Standard
library only.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "analysis", "paired_systems.py")


def system(ttas, ttas_80=None):
    ttas_80 = ttas_80 or [t and t / 2 for t in ttas]
    runs = [{"seed": i + 1, "run": f"x/seed-{i + 1}", "tta_s": t, "tta_at": {"0.8": t80, "0.85": t},
             "trace_offset_s": 0.0, "best_accuracy": 0.86} for i, (t, t80) in enumerate(zip(ttas, ttas_80))]
    return {"runs": [r["run"] for r in runs], "per_seed": runs, "tta_s": None, "best_accuracy": 0.86}


def write(folder, systems, seeds=(1, 2, 3, 4), **top):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "summary.json"), "w") as f:
        json.dump(dict({"scenario": "s", "target_accuracy": 0.85, "report_targets": [0.8, 0.85],
                        "seeds": list(seeds), "systems": systems}, **top), f)


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


class PairedSystems(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.folder = os.path.join(self.tmp.name, "r")

    def tearDown(self):
        self.tmp.cleanup()

    def result(self, *extra):
        out = run(self.folder, "base", "new", "--json", *extra)
        self.assertEqual(out.returncode, 0, out.stderr)
        return json.loads(out.stdout)

    def test_ratios_medians_and_wins(self):
        write(self.folder, {"base": system([2.0, 4.0, 3.0, 10.0]), "new": system([1.0, 4.4, 2.7, 5.0])})
        r = self.result()
        self.assertEqual([row["ratio"] for row in r["seeds"]], [0.5, 4.4 / 4.0, 0.9, 0.5])
        self.assertAlmostEqual(r["median_ratio"], (0.5 + 0.9) / 2)
        self.assertEqual(r["pairs"], 4)
        self.assertEqual(r["system_faster"], 3)
        # Medians 3.5 and 3.55: the ratio of medians reads 1.014 where the
        # paired median reads 0.7.
        self.assertAlmostEqual(r["ratio_of_medians"], ((2.7 + 4.4) / 2) / ((3.0 + 4.0) / 2))
        low, high = r["ratio_ci95"]
        self.assertLessEqual(low, r["median_ratio"])
        self.assertGreaterEqual(high, r["median_ratio"])
        self.assertGreaterEqual(low, 0.5)
        self.assertLessEqual(high, 1.1)
        self.assertEqual(self.result(), r, "the bootstrap draws from a fixed stream")
        text = run(self.folder, "base", "new")
        self.assertIn("| 2 | 4.00 | 4.40 | 1.10 |", text.stdout)
        self.assertIn("new faster on 3 of 4 seeds", text.stdout)

    def test_a_seed_that_misses_the_target_makes_no_pair(self):
        write(self.folder, {"base": system([2.0, 4.0, None, 10.0]), "new": system([1.0, 4.4, 2.7, 5.0])})
        r = self.result()
        self.assertIsNone(r["seeds"][2]["ratio"])
        self.assertEqual(r["pairs"], 3)
        self.assertAlmostEqual(r["median_ratio"], 0.5)
        # The miss counts as slower than every reached seed, as in
        # summary.json's medians: (4 + 10) / 2 against (2.7 + 4.4) / 2.
        self.assertAlmostEqual(r["ratio_of_medians"], 3.55 / 7.0)
        self.assertIn("| 3 | - | 2.70 | - |", run(self.folder, "base", "new").stdout)
        # Half the seeds missing: no median, so no ratio of medians.
        write(self.folder, {"base": system([2.0, None, None, 10.0]), "new": system([1.0, 4.4, 2.7, 5.0])})
        self.assertIsNone(self.result()["ratio_of_medians"])

    def test_one_pair_has_no_interval(self):
        write(self.folder, {"base": system([2.0]), "new": system([1.0])}, seeds=(1,))
        r = self.result()
        self.assertEqual(r["median_ratio"], 0.5)
        self.assertIsNone(r["ratio_ci95"])

    def test_another_report_target(self):
        write(self.folder, {"base": system([2.0, 4.0], [1.0, 1.0]), "new": system([1.0, 4.4], [3.0, 3.0])},
              seeds=(1, 2))
        self.assertEqual(self.result("--target", "0.8")["median_ratio"], 3.0)

    def test_errors_name_what_is_wrong(self):
        write(self.folder, {"base": system([2.0]), "new": system([1.0])}, seeds=(1,))
        unknown = run(self.folder, "base", "newer")
        self.assertNotEqual(unknown.returncode, 0)
        self.assertIn("no system 'newer' in summary.json (it has: base, new)", unknown.stderr)
        target = run(self.folder, "base", "new", "--target", "0.9")
        self.assertNotEqual(target.returncode, 0)
        self.assertIn("seed 1: no TTA to 0.9 in summary.json (its targets: 0.8, 0.85)", target.stderr)
        missing = run(os.path.join(self.tmp.name, "nowhere"), "base", "new")
        self.assertNotEqual(missing.returncode, 0)
        self.assertIn("nowhere/summary.json: not found", missing.stderr)
        self.assertNotIn("Traceback", unknown.stderr + target.stderr + missing.stderr)


class BaselineFromAnotherFolder(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.folder = os.path.join(self.tmp.name, "controller")
        self.other = os.path.join(self.tmp.name, "fixed")

    def tearDown(self):
        self.tmp.cleanup()

    def test_pairs_seed_by_seed_across_folders(self):
        write(self.folder, {"new": system([1.0, 4.4, 2.7, 5.0])}, model="cnn")
        write(self.other, {"base": system([2.0, 4.0, 3.0, 10.0]), "new": system([9.0, 9.0, 9.0, 9.0])}, model="cnn")
        out = run(self.folder, "base", "new", "--baseline-from", self.other, "--json")
        self.assertEqual(out.returncode, 0, out.stderr)
        r = json.loads(out.stdout)
        self.assertEqual([row["ratio"] for row in r["seeds"]], [0.5, 4.4 / 4.0, 0.9, 0.5])
        self.assertEqual(r["baseline_from"], self.other)
        # One label on both sides: this folder's runs against the other's.
        same = json.loads(run(self.folder, "new", "new", "--baseline-from", self.other, "--json").stdout)
        self.assertEqual([row["baseline_tta_s"] for row in same["seeds"]], [9.0] * 4)
        self.assertEqual([row["system_tta_s"] for row in same["seeds"]], [1.0, 4.4, 2.7, 5.0])
        self.assertIn("| seed | new (fixed) | new | new / new (fixed) |",
                      run(self.folder, "new", "new", "--baseline-from", self.other).stdout)

    def refused(self, *extra):
        out = run(self.folder, "base", "new", "--baseline-from", self.other, *extra)
        self.assertNotEqual(out.returncode, 0)
        self.assertNotIn("Traceback", out.stderr)
        return out.stderr

    def test_runs_that_would_not_pair_are_refused(self):
        write(self.folder, {"new": system([1.0, 4.4])}, seeds=(1, 2))
        write(self.other, {"base": system([2.0, 4.0, 3.0])}, seeds=(1, 2, 3))
        self.assertIn("'seeds' is [1, 2, 3] in " + self.other, self.refused())
        write(self.other, {"base": system([2.0, 4.0])}, seeds=(1, 2), label_skew=0.5)
        self.assertIn("'label_skew' is 0.5 in " + self.other + " but null in " + self.folder, self.refused())
        shifted = system([2.0, 4.0])
        shifted["per_seed"][1]["trace_offset_s"] = 12.5
        write(self.other, {"base": shifted}, seeds=(1, 2))
        self.assertIn("seed 2: trace offset", self.refused())
        write(self.other, {"base": system([2.0, 4.0])}, seeds=(1, 2))
        for folder, mbps in ((self.folder, 500), (self.other, 100)):
            with open(os.path.join(folder, "scenario.yaml"), "w") as f:
                f.write(f"links:\n  wan:\n    default: {{mbps: {mbps}, delay_ms: 20}}\neval: {{interval: 5}}\n")
        self.assertIn("scenario.yaml's 'links' differs between", self.refused())
        with open(os.path.join(self.other, "scenario.yaml"), "w") as f:
            f.write("links:\n  wan:\n    default: {mbps: 500, delay_ms: 20}\neval: {interval: 5}\n")
        out = run(self.folder, "base", "new", "--baseline-from", self.other, "--json")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn(f"{self.other}/summary.json: no system 'fixed-0.3' (it has: base)",
                      run(self.folder, "fixed-0.3", "new", "--baseline-from", self.other).stderr)
        self.assertIn("nowhere/summary.json: not found", run(self.folder, "base", "new", "--baseline-from",
                                                               os.path.join(self.tmp.name, "nowhere")).stderr)


if __name__ == "__main__":
    unittest.main()
