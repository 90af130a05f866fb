#!/usr/bin/env python3
"""Tests for analysis/eval_set_offset.py: the same training runs evaluated
on validation and on test. Builds run folders in a temporary folder: the
iterations at which each set reaches a target, the validation accuracy
where test reaches it (interpolated between sparse evaluations), the median offset over the runs' second half,
seeds held by one side only, and refusals of runs that did not train
identically (options, checksums, the evaluated set) or of missing folders.
Standard library only."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "analysis", "eval_set_offset.py")


def write_run(folder, accuracies, on, density=0.1, checksums=(7, 7), iterations=None):
    os.makedirs(folder, exist_ok=True)
    manifest = {"system": "stellatrain", "options": {"density": density}, "optimizer": {"lr": 0.1}, "seed": 1,
                "iterations": iterations[-1] if iterations else 10 * len(accuracies), "model": "cnn",
                "dataset": "fashion-mnist", "eval": {"on": on, "interval": 10},
                "summary": {"checksums": list(checksums)}}
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    with open(os.path.join(folder, "eval.csv"), "w") as f:
        f.write("time_s,iteration,accuracy,loss,samples\n")
        for i, accuracy in enumerate(accuracies, start=1):
            iteration = iterations[i - 1] if iterations else 10 * i
            f.write(f"{0.1 * i:.1f},{iteration},{accuracy},0.5,100\n")


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


class EvalSetOffset(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.validation = os.path.join(self.tmp.name, "sweep", "st.as-is")
        self.test = os.path.join(self.tmp.name, "run", "st")

    def tearDown(self):
        self.tmp.cleanup()

    def result(self, *extra):
        out = run(self.validation, self.test, "--json", *extra)
        self.assertEqual(out.returncode, 0, out.stderr)
        return json.loads(out.stdout)[0]

    def test_validation_reaches_the_target_earlier(self):
        # Validation runs 2 points above test from iteration 30 on; 0.85 is
        # reached at iteration 40 on validation and 60 on test, where
        # validation reads 0.88.
        write_run(os.path.join(self.validation, "seed-1"), [0.5, 0.7, 0.84, 0.85, 0.86, 0.88, 0.88, 0.89], "validation")
        write_run(os.path.join(self.test, "seed-1"), [0.5, 0.7, 0.82, 0.83, 0.84, 0.86, 0.86, 0.87], "test")
        # A seed only the test side holds is left out.
        write_run(os.path.join(self.test, "seed-2"), [0.1] * 8, "test")
        r = self.result("--targets", "0.8,0.85,0.95")
        self.assertEqual(r["seeds"], [1])
        self.assertAlmostEqual(r["offset"], 0.02)
        at = r["targets"]["0.85"]
        self.assertEqual((at["validation_iteration"], at["test_iteration"]), (40, 60))
        self.assertAlmostEqual(at["validation_accuracy_at_test_iteration"], 0.88)
        self.assertEqual(at["reached"], [1, 1])
        self.assertEqual((r["targets"]["0.8"]["validation_iteration"], r["targets"]["0.8"]["test_iteration"]),
                         (30, 30))
        never = r["targets"]["0.95"]
        self.assertEqual((never["validation_iteration"], never["test_iteration"], never["reached"]),
                         (None, None, [0, 0]))
        text = run(self.validation, self.test, "--targets", "0.85")
        self.assertIn("| 1 | +2.00 points | 85.00% | 40 / 60 (1 / 1 seeds) | 88.00% |", text.stdout)

    def test_sparse_validation_evaluations_are_interpolated(self):
        # Validation evaluates at 10, 20, 50 only (sparse past its target):
        # where test reaches 0.85 (iteration 40) it reads two thirds of the
        # way from 0.86 to 0.89.
        write_run(os.path.join(self.validation, "seed-1"), [0.8, 0.86, 0.89], "validation", iterations=[10, 20, 50])
        write_run(os.path.join(self.test, "seed-1"), [0.8, 0.82, 0.84, 0.85, 0.87], "test")
        at = self.result()["targets"]["0.85"]
        self.assertEqual((at["validation_iteration"], at["test_iteration"]), (20, 40))
        self.assertAlmostEqual(at["validation_accuracy_at_test_iteration"], 0.88)

    def test_runs_that_did_not_train_identically_are_refused(self):
        write_run(os.path.join(self.validation, "seed-1"), [0.5, 0.9], "validation")
        write_run(os.path.join(self.test, "seed-1"), [0.5, 0.9], "test", density=0.3)
        self.refused("'options' differs between")
        write_run(os.path.join(self.test, "seed-1"), [0.5, 0.9], "test", checksums=(7, 8))
        self.refused("the model checksums differ")
        write_run(os.path.join(self.test, "seed-1"), [0.5, 0.9], "validation")
        self.refused("eval.on is 'validation', expected 'test'")
        self.refused("not a folder", os.path.join(self.tmp.name, "nowhere"))
        out = run(self.validation)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("in pairs", out.stderr)
        out = run(self.validation, self.test, "--targets", "85")
        self.assertIn("accuracies lie in (0, 1]", out.stderr)

    def refused(self, message, test=None):
        out = run(self.validation, test or self.test)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn(message, out.stderr)
        self.assertNotIn("Traceback", out.stderr)


if __name__ == "__main__":
    unittest.main()
