#!/usr/bin/env python3
"""Tests for analysis/fit_sparsity_cost.py: the soonest-target rule's
constant fitted from fixed-density runs (docs/control.md, "The soonest
target"). Builds summary.json files in a temporary folder: iterations that
follow N(d) = 80 (1 + 0.25 / sqrt(d)) exactly give k = 0.25; a missed seed
is shown and left out; the controller's and ddp's rows are not points; two
folders with N1 80 and 100 pool to k = 0.25 with an N1 each; a folder
without summary.json, or with one density only, is a clear error; fixed
densities in two settings are refused unless --systems picks one; a one-seed
run (no per_seed list) is read from its system entries.
Standard library only.
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "analysis", "fit_sparsity_cost.py")


def system(options, iterations):
    return {"options": options, "per_seed": [{"seed": i + 1, "tta_iteration": n} for i, n in enumerate(iterations)]}


def fixed(density, iterations):
    return system({"compressor": "thresholdv16", "controller": "off", "density": density}, iterations)


def run(folder):
    return subprocess.run([sys.executable, SCRIPT, folder], capture_output=True, text=True)


class FitSparsityCostTest(unittest.TestCase):
    def write(self, folder, systems):
        with open(os.path.join(folder, "summary.json"), "w") as f:
            json.dump({"scenario": "tune", "target_accuracy": 0.85, "systems": systems}, f)

    def test_recovers_the_constant_and_skips_what_is_not_a_fixed_density(self):
        def n(d):
            return 80 * (1 + 0.25 / math.sqrt(d))

        with tempfile.TemporaryDirectory() as folder:
            self.write(folder, {
                "fixed-0.01": fixed(0.01, [n(0.01), None]),
                "fixed-0.1": fixed(0.1, [n(0.1), n(0.1)]),
                "fixed-0.4": fixed(0.4, [n(0.4), n(0.4)]),
                "controller": system({"compressor": "thresholdv16", "controller": {"interval_s": 1}, "density": 0.05},
                                     [10, 10]),
                "ddp": system({"fp16": False}, [130, 130]),
            })
            result = run(folder)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertIn("sparsity_cost: 0.250", result.stdout)
            self.assertIn("N(d) = 80.0 x (1 + 0.250 / sqrt(d))", result.stdout)
            self.assertIn("| fixed-0.01 | 0.01 | 280.0, missed | 280 | 280 |", result.stdout)
            self.assertNotIn("controller", result.stdout.split("|---|")[1])
            self.assertNotIn("ddp", result.stdout)

    def test_pools_folders_with_one_constant_and_an_intercept_each(self):
        def n(n1, d):
            return n1 * (1 + 0.25 / math.sqrt(d))

        with tempfile.TemporaryDirectory() as root:
            folders = []
            for n1 in (80, 100):
                folder = os.path.join(root, f"link-{n1}")
                os.makedirs(folder)
                self.write(folder, {f"fixed-{d}": fixed(d, [n(n1, d), n(n1, d)]) for d in (0.01, 0.1, 0.3)})
                folders.append(folder)
            result = subprocess.run([sys.executable, SCRIPT, *folders], capture_output=True, text=True)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertIn(f"sparsity_cost of {folders[1]}: 0.250", result.stdout)
            self.assertIn("one k and an N1 per folder: N1 80.0, N1 100.0", result.stdout)
            self.assertTrue(result.stdout.rstrip().endswith("sparsity_cost: 0.250"), result.stdout)

    def test_reads_a_one_seed_run(self):
        # `stellatrain run` writes no per_seed list for one seed: the
        # system's own entry is that seed's run.
        def one_seed(density, n):
            return {"options": {"compressor": "thresholdv16", "controller": "off", "density": density},
                    "tta_iteration": n}

        with tempfile.TemporaryDirectory() as folder:
            with open(os.path.join(folder, "summary.json"), "w") as f:
                json.dump({"scenario": "screen", "target_accuracy": 0.85, "seeds": [2],
                           "systems": {f"fixed-{d}": one_seed(d, 80 * (1 + 0.25 / math.sqrt(d)))
                                       for d in (0.01, 0.1)}}, f)
            result = run(folder)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertIn("sparsity_cost: 0.250", result.stdout)

    def test_names_the_folder_when_it_cannot_fit(self):
        with tempfile.TemporaryDirectory() as folder:
            missing = run(folder)
            self.assertEqual(missing.returncode, 1)
            self.assertIn(os.path.join(folder, "summary.json"), missing.stderr)
            self.write(folder, {"fixed-0.1": fixed(0.1, [150, 155])})
            one_density = run(folder)
            self.assertEqual(one_density.returncode, 1)
            self.assertIn("two densities", one_density.stderr)

    def test_refuses_two_settings_and_fits_the_systems_named(self):
        def n(d):
            return 80 * (1 + 0.25 / math.sqrt(d))

        def clipped(density, iterations):
            entry = fixed(density, iterations)
            entry["options"]["clip_norm"] = 2.0
            return entry

        with tempfile.TemporaryDirectory() as folder:
            self.write(folder, {
                "fixed-0.1": fixed(0.1, [150, 150]),  # another setting: its own curve
                "fixed-0.01-clip": clipped(0.01, [n(0.01), n(0.01)]),
                "fixed-0.1-clip": clipped(0.1, [n(0.1), n(0.1)]),
                "fixed-0.4-clip": clipped(0.4, [n(0.4), n(0.4)]),
            })
            mixed = run(folder)
            self.assertEqual(mixed.returncode, 1)
            self.assertIn(folder, mixed.stderr)
            self.assertIn("fixed-0.01-clip and fixed-0.1 differ in more than their density (clip_norm)", mixed.stderr)
            named = subprocess.run([sys.executable, SCRIPT, folder, "--systems",
                                    "fixed-0.01-clip,fixed-0.1-clip,fixed-0.4-clip"], capture_output=True, text=True)
            self.assertEqual(named.returncode, 0, named.stderr)
            self.assertIn("sparsity_cost: 0.250", named.stdout)
            self.assertNotIn("| fixed-0.1 |", named.stdout)


if __name__ == "__main__":
    unittest.main()
