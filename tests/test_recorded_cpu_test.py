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
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_recorded_results as recorded  # noqa: E402  (its ROOT reads the same argv)
from test_recorded_accuracy_gap import expect_gap_table  # noqa: E402
from test_recorded_rates import expect_quoted_runs  # noqa: E402
from test_recorded_rule_at_0_2 import gaps_to_ddp  # noqa: E402

ROOT = recorded.ROOT
DOC = os.path.join("docs", "paper-tta-resnet18-cpu-test.md")
SCENARIO = os.path.join("scenarios", "paper-tta", "resnet18-cpu-test-fluct-115.yaml")
FOLDER = os.path.join(ROOT, "docs", "results", "paper-tta-cpu-test", "resnet18-cpu-test-fluct-115")
CANDIDATE = "fixed-0.00195-topk-lr-0.2"
SEEDS = (1, 2, 3)
# The acceptance's bounds, as the scenario file's reading states them.
POINTS_BOUND, ITERATIONS_BOUND, SPEEDUP_BOUND = 1.0, 1.5, 104.0


def leading_figure(cell):
    """1.00 of "1.00x (0.86-1.25)"."""
    return float(cell.split("x")[0])


class CandidateOnTestData(unittest.TestCase):
    """"The candidate against ddp on test data": the report, the best
    accuracies, and the reading's three bounds."""

    SEEDS = SEEDS  # expect_gap_table reads the class's seeds, runs, gaps and medians

    @classmethod
    def setUpClass(cls):
        cls.section = recorded.doc_section(recorded.read(DOC), "## The candidate against ddp on test data")
        cls.text = recorded.flowing(cls.section)
        cls.report = recorded.monotone_report_at([FOLDER], "--seeds", ",".join(map(str, SEEDS)), "--whole-runs",
                                                 "--against", "ddp")
        cls.against = recorded.against_rows(recorded.against_table(cls.report))
        cls.runs = recorded.gathered_at([FOLDER])
        cls.gaps = {CANDIDATE: gaps_to_ddp(cls.runs, CANDIDATE, SEEDS)}
        cls.median = {CANDIDATE: statistics.median(cls.gaps[CANDIDATE])}

    def test_every_run_is_the_scenario_files(self):
        self.assertEqual(sorted(self.runs), sorted((label, seed) for label in ("ddp", CANDIDATE) for seed in SEEDS))
        # The scenario file's comments may have grown since (its results).
        settings = lambda text: [line for line in text.splitlines() if not line.lstrip().startswith("#")]
        with open(os.path.join(FOLDER, "scenario.yaml")) as f:
            self.assertEqual(settings(f.read()), settings(recorded.read(SCENARIO)))

    def test_the_doc_quotes_the_report(self):
        expect_quoted_runs(self, self.report, ("ddp", CANDIDATE), 2 * len(SEEDS))

    def test_the_best_accuracies_against_ddp(self):
        expect_gap_table(self, (CANDIDATE,))

    def test_the_iteration_times(self):
        with open(os.path.join(FOLDER, "summary.json")) as f:
            systems = json.load(f)["systems"]
        ddp, mine = (systems[label]["mean_iteration_s"] for label in ("ddp", CANDIDATE))
        self.assertIn(f"{ddp:.3f} s against {mine * 1000:.1f} ms per iteration by the mean over the three seeds, "
                      f"an iteration-time ratio of {ddp / mine:.1f}x", self.text)

    def test_the_reading_bound_by_bound(self):
        under = -self.median[CANDIDATE]
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
