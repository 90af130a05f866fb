#!/usr/bin/env python3
"""analysis/same_path.py: a folder against itself is the same path, a
changed density, tick time or second's bytes is found and sized, and bad
input (a missing folder or file, seconds that differ) is named. Reads a
recorded GPU run (docs/results/paper-tta-gpu/) and copies of it in a
temporary folder. Standard library only.

    python3 tests/test_same_path.py [REPO_ROOT]
"""
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
SCRIPT = os.path.join(ROOT, "analysis", "same_path.py")
RECORDED = os.path.join(ROOT, "docs", "results", "paper-tta-gpu", "resnet18-h100-const-100")
SYSTEM = "fill-85-busy"


def same_path(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


def rewrite(path, change):
    """Rewrite a CSV file with change(rows) applied to its rows."""
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        fields, rows = reader.fieldnames, list(reader)
    change(rows)
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


class SamePath(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="st-same-path-")
        self.copy = os.path.join(self.tmp, "copy")
        shutil.copytree(os.path.join(RECORDED, SYSTEM), os.path.join(self.copy, SYSTEM))
        self.run_folder = os.path.join(self.copy, SYSTEM, "seed-1")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def rows(self, out):
        self.assertEqual(out.returncode, 0, out.stderr)
        return [line for line in out.stdout.splitlines() if line.startswith(f"| `{SYSTEM}` |")]

    def test_a_folder_against_its_copy_is_the_same_path(self):
        rows = self.rows(same_path(RECORDED, self.copy))
        self.assertEqual(len(rows), 3)  # three seeds, only the system both hold
        for row in rows:
            self.assertIn("| yes | 0.0000% | 0.000 ms | 0 B (0.000%) over", row)

    def test_a_changed_density_and_tick_time_are_found(self):
        def change(rows):
            rows[3]["density"] = repr(float(rows[3]["density"]) * 2)  # doubling is exact in binary
            rows[5]["time_s"] = f"{float(rows[5]['time_s']) + 0.002:.6f}"
        rewrite(os.path.join(self.run_folder, "control.csv"), change)
        first = self.rows(same_path(RECORDED, self.copy, "--systems", SYSTEM))[0]
        self.assertIn("| 1 | yes | 100.0000% |", first)
        self.assertIn("| 2.000 ms |", first)

    def test_a_changed_seconds_bytes_are_found(self):
        def change(rows):
            rows[2]["delivered_bytes"] = str(int(rows[2]["delivered_bytes"]) + 1000)
        rewrite(os.path.join(self.run_folder, "link.csv"), change)
        first = self.rows(same_path(RECORDED, self.copy))[0]
        self.assertIn("| 1000 B (", first)

    def test_a_missing_tick_is_not_the_same_path(self):
        rewrite(os.path.join(self.run_folder, "control.csv"), lambda rows: rows.pop())
        self.assertIn("| 1 | no |", self.rows(same_path(RECORDED, self.copy))[0])

    def test_bad_input_is_named(self):
        out = same_path(RECORDED, os.path.join(self.tmp, "absent"))
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("absent: not a results folder", out.stderr)
        os.remove(os.path.join(self.run_folder, "link.csv"))
        out = same_path(RECORDED, self.copy)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn(os.path.join("seed-1", "link.csv") + ": not found", out.stderr)
        out = same_path(RECORDED, self.copy, "--systems", "no-such-system")
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("no-such-system: no seed in both", out.stderr)

    def test_nothing_to_compare_is_refused(self):
        control = os.path.join(self.run_folder, "control.csv")
        rewrite(control, lambda rows: rows.clear())
        out = same_path(RECORDED, self.copy)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn(f"{control}: no controller tick to compare", out.stderr)

    def test_a_missing_column_is_named(self):
        with open(os.path.join(self.run_folder, "link.csv"), "w", encoding="utf-8") as f:
            f.write("second,delivered_bytes\n0,5\n")
        out = same_path(RECORDED, self.copy)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("link.csv: line 1: missing column(s) link", out.stderr)

    def test_a_density_from_zero_is_infinitely_far(self):
        rewrite(os.path.join(self.run_folder, "control.csv"), lambda rows: rows[2].update(density="0"))
        self.assertIn("| 1 | yes | inf% |", self.rows(same_path(self.copy, RECORDED))[0])

    def test_other_links_are_named(self):
        def rename(rows):
            for row in rows:
                row["link"] = row["link"].replace("a->b", "a->c")
        rewrite(os.path.join(self.run_folder, "link.csv"), rename)
        out = same_path(RECORDED, self.copy)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("carry different links (a->b, b->a against a->c, b->a)", out.stderr)

    def test_a_seed_in_one_folder_only_is_named(self):
        shutil.rmtree(os.path.join(self.copy, SYSTEM, "seed-3"))
        out = same_path(RECORDED, self.copy)
        self.assertEqual(len(self.rows(out)), 2)
        self.assertIn(f"same_path: {SYSTEM} seed 3 is in one folder only; left out", out.stderr)

    def test_different_seconds_are_refused(self):
        rewrite(os.path.join(self.run_folder, "link.csv"), lambda rows: rows.pop(0))
        out = same_path(RECORDED, self.copy)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("cover different whole seconds", out.stderr)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
