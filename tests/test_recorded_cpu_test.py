#!/usr/bin/env python3
"""The recorded runs of the validation screen's candidate against ddp on
test data with the CPU's math (docs/results/paper-tta-cpu-test/, made by
scenarios/paper-tta/resnet18-cpu-test-fluct-115.yaml) still give what
docs/paper-tta-resnet18-cpu-test.md quotes: analysis/monotone_tta.py's
report against ddp, the best accuracies to 150 against ddp's, and the
reading the scenario file set before the runs, each bound's verdict
computed here from the runs. Standard library only.

    python3 tests/test_recorded_cpu_test.py [REPO_ROOT]
"""
import json
import os
import statistics
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_recorded_results as recorded  # noqa: E402  (its ROOT reads the same argv)

ROOT = recorded.ROOT
DOC = os.path.join("docs", "paper-tta-resnet18-cpu-test.md")
SCENARIO = os.path.join("scenarios", "paper-tta", "resnet18-cpu-test-fluct-115.yaml")
FOLDER = os.path.join(ROOT, "docs", "results", "paper-tta-cpu-test", "resnet18-cpu-test-fluct-115")
CANDIDATE = "fixed-0.00195-topk-lr-0.2"
SEEDS = (1, 2, 3)
# The acceptance's bounds, as the scenario file's reading states them.
POINTS_BOUND, ITERATIONS_BOUND, SPEEDUP_BOUND = 1.0, 1.5, 104.0


def best_to(run, iteration):
    """A gathered run's best evaluation to `iteration` (which it must reach), in percent."""
    iterations, _, accuracies, _ = recorded.monotone_tta.up_to(run["evaluations"], iteration)
    assert iterations[-1] == iteration, iteration
    return max(accuracies) * 100


def leading_figure(cell):
    """1.00 of "1.00x (0.86-1.25)"."""
    return float(cell.split("x")[0])


class CandidateOnTestData(unittest.TestCase):
    """"The candidate against ddp on test data": the report, the best
    accuracies, and the reading's three bounds."""

    @classmethod
    def setUpClass(cls):
        cls.section = recorded.doc_section(recorded.read(DOC), "## The candidate against ddp on test data")
        cls.text = recorded.flowing(cls.section)
        out = subprocess.run([sys.executable, os.path.join(ROOT, "analysis", "monotone_tta.py"), FOLDER, "--seeds",
                              ",".join(map(str, SEEDS)), "--whole-runs", "--against", "ddp"],
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise AssertionError(out.stderr)
        cls.report = out.stdout
        cls.against = recorded.against_rows(recorded.against_table(cls.report))
        cls.runs = recorded.run_folders.gather([recorded.run_folders.folder_spec(FOLDER)])[0]
        cls.best = {(label, seed): best_to(cls.runs[(label, seed)], 150) for label in ("ddp", CANDIDATE)
                    for seed in SEEDS}
        # Accuracies are whole hundredths of a percent on 2000 samples: the
        # gaps are rounded to them before the median.
        cls.gaps = [round(cls.best[(CANDIDATE, seed)] - cls.best[("ddp", seed)], 2) for seed in SEEDS]

    def test_every_run_is_the_scenario_files(self):
        self.assertEqual(sorted(self.runs), sorted((label, seed) for label in ("ddp", CANDIDATE) for seed in SEEDS))
        # The scenario file's comments may have grown since (its results).
        settings = lambda text: [line for line in text.splitlines() if not line.lstrip().startswith("#")]
        with open(os.path.join(FOLDER, "scenario.yaml")) as f:
            self.assertEqual(settings(f.read()), settings(recorded.read(SCENARIO)))

    def test_the_doc_quotes_the_report(self):
        readings = recorded.run_rows(self.report, ("ddp", CANDIDATE))
        self.assertEqual(len(readings), 2 * len(SEEDS))
        self.assertEqual(recorded.run_rows(self.section, ("ddp", CANDIDATE)), readings)
        self.assertIn("\n".join(recorded.against_table(self.report)), self.section)

    def test_the_best_accuracies_against_ddp(self):
        for seed, gap in zip(SEEDS, self.gaps):
            self.assertIn(f"| {seed} | {self.best[('ddp', seed)]:.2f}% | {self.best[(CANDIDATE, seed)]:.2f}% "
                          f"({gap:+.2f}) |", self.section)
        self.assertIn(f"| median | | {statistics.median(self.gaps):+.2f} |", self.section)

    def test_the_iteration_times(self):
        with open(os.path.join(FOLDER, "summary.json")) as f:
            systems = json.load(f)["systems"]
        ddp, mine = (systems[label]["mean_iteration_s"] for label in ("ddp", CANDIDATE))
        self.assertIn(f"{ddp:.3f} s against {mine * 1000:.1f} ms per iteration by the mean over the three seeds, "
                      f"an iteration-time ratio of {ddp / mine:.1f}x", self.text)

    def test_the_reading_bound_by_bound(self):
        under = -statistics.median(self.gaps)
        iterations = self.against["iterations, monotone"][CANDIDATE]
        speedup = self.against["speedup, monotone"][CANDIDATE]
        verdicts = (
            ("best accuracy", under <= POINTS_BOUND, f"{under:.2f} points under ddp's by the median"),
            ("iterations", leading_figure(iterations) <= ITERATIONS_BOUND, f"{iterations} ddp's iterations"),
            ("speedup", leading_figure(speedup) >= SPEEDUP_BOUND, f"{speedup} ddp's TTA"),
        )
        for name, met, quote in verdicts:
            with self.subTest(name):
                self.assertIn(f"{quote}, {'within' if met else 'outside'} the bound", self.text)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
