#!/usr/bin/env python3
"""Tests for analysis/label_skew_table.py: TTA and best accuracy against
label_skew from one results folder (or several, merged) per skew. Builds
summary.json files in a temporary folder: medians over the seeds that
reach the target, "(n/N)" when only some do, "never" with the best
accuracy when none does, "-" where a skew lacks the system, merged
folders (the first naming a label wins), --systems picking and ordering
rows, and clear errors for a bad argument, an unknown system and folders
whose seeds differ. Standard library only.
"""
import json
import os
import subprocess
import sys
import tempfile
import importlib.util
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "analysis", "label_skew_table.py")


def system(ttas, bests):
    runs = [{"seed": i + 1, "tta_s": t, "best_accuracy": b} for i, (t, b) in enumerate(zip(ttas, bests))]
    reached = [t for t in ttas if t is not None]
    return {"runs": [f"seed-{i + 1}" for i in range(len(ttas))], "tta_s": min(reached) if reached else None,
            "best_accuracy": max(bests), "iterations": 250, "wan_bytes": 1, "mean_iteration_s": 0.01,
            "speedup_vs_ddp": None, "per_seed": runs}


def write(folder, systems, seeds=(1, 2, 3)):
    os.makedirs(folder)
    with open(os.path.join(folder, "summary.json"), "w") as f:
        json.dump({"scenario": "s", "backend": "sim", "target_accuracy": 0.85, "seeds": list(seeds),
                   "systems": systems}, f)


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


def row(output, label, table=0):
    """The cells of `label`'s row in the table-th table of the output."""
    rows = [line for line in output.splitlines() if line.startswith(f"| {label} |")]
    return [c.strip() for c in rows[table].strip("|").split("|")][1:]


class LabelSkewTableTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.even = os.path.join(self.dir.name, "even")
        self.extra = os.path.join(self.dir.name, "extra")
        self.full = os.path.join(self.dir.name, "full")
        write(self.even, {"ddp": system([20, 24, 30], [0.87, 0.88, 0.86]),
                          "ma": system([0.2, 0.3, 0.1], [0.86, 0.86, 0.85])})
        write(self.extra, {"st": system([2, 3, 4], [0.86, 0.87, 0.87]),
                           "ddp": system([99, 99, 99], [0.5, 0.5, 0.5])})
        write(self.full, {"ddp": system([21, 25, 31], [0.87, 0.87, 0.88]),
                          "st": system([3, None, 5], [0.86, 0.84, 0.86]),
                          "ma": system([None, None, None], [0.40, 0.50, 0.45])})

    def tearDown(self):
        self.dir.cleanup()

    def test_medians_partial_never_and_missing_cells(self):
        out = run(f"1:{self.full}", f"0:{self.even},{self.extra}")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("| system | label_skew 0 | label_skew 1 |", out.stdout)  # sorted by skew
        self.assertEqual(row(out.stdout, "ddp"), ["24.00", "25.00"])  # the first folder's ddp wins
        self.assertEqual(row(out.stdout, "st"), ["3.00", "4.00 (2/3)"])  # median over the seeds reaching it
        self.assertEqual(row(out.stdout, "ma"), ["0.20", "never (best 45.0%)"])
        self.assertEqual(row(out.stdout, "ddp", table=1), ["87.00%", "87.00%"])
        self.assertEqual(row(out.stdout, "st", table=1), ["87.00%", "86.00%"])

    def test_systems_pick_and_order_the_rows(self):
        out = run(f"0:{self.even}", f"1:{self.full}", "--systems", "st,ddp")
        self.assertEqual(out.returncode, 0, out.stderr)
        labels = [line.split("|")[1].strip() for line in out.stdout.splitlines() if line.startswith("| ")]
        self.assertEqual(labels, ["system", "st", "ddp", "system", "st", "ddp"])
        self.assertEqual(row(out.stdout, "st"), ["-", "4.00 (2/3)"])
        out = run(f"0:{self.even}", "--systems", "nope")
        self.assertEqual(out.returncode, 1)
        self.assertIn("--systems: no folder has a system 'nope'", out.stderr)

    def test_bad_arguments_and_unpaired_folders_are_clear_errors(self):
        for arg, message in [(self.even, "expected SKEW:FOLDER"), (f"x:{self.even}", "the skew 'x' is not a number"),
                             (f"1.5:{self.even}", "outside [0, 1]"),
                             (f"0:{self.dir.name}/none", "summary.json: not found")]:
            out = run(arg)
            self.assertEqual(out.returncode, 1, arg)
            self.assertIn(message, out.stderr, arg)
        other = os.path.join(self.dir.name, "other-seeds")
        write(other, {"ddp": system([1, 2], [0.9, 0.9])}, seeds=(4, 5))
        out = run(f"0:{self.even}", f"1:{other}")
        self.assertEqual(out.returncode, 1)
        self.assertIn("not a paired comparison", out.stderr)
        out = run(f"0:{self.even},{other}")
        self.assertEqual(out.returncode, 1)
        self.assertIn("not a paired comparison", out.stderr)

    @unittest.skipUnless(importlib.util.find_spec("matplotlib"), "needs matplotlib (python3-matplotlib)")
    def test_figure_is_a_png(self):
        figure = os.path.join(self.dir.name, "skew.png")
        out = run(f"0:{self.even}", f"1:{self.full}", "--figure", figure)
        self.assertEqual(out.returncode, 0, out.stderr)
        with open(figure, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")


if __name__ == "__main__":
    unittest.main()
