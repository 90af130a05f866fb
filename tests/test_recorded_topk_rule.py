#!/usr/bin/env python3
"""The recorded CPU screen runs of the soonest-target rule at learning
rate 0.2 with exact top-k, from 0.195% (docs/results/paper-tta-cpu-screen/),
still give what docs/paper-tta-resnet18-topk-rule.md quotes: the
sparsity_cost fitted on exact top-k's fixed densities, the report
against fixed 0.195% with top-k (the reading the screen file set before
the runs), the densities the rule chose and its best accuracies against
ddp's. Standard library only.

    python3 tests/test_recorded_topk_rule.py [REPO_ROOT]
"""
import csv
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_recorded_results as recorded  # noqa: E402  (its ROOT reads the same argv)
from test_recorded_accuracy_gap import expect_gap_table  # noqa: E402
from test_recorded_rates import expect_quoted_runs  # noqa: E402
from test_recorded_selection import (TOPK, TOPK_BYTES, TOPK_BYTES_FOLDER, TOPK_FOLDER, Selection,  # noqa: E402
                                     seed_wan_bytes)

sys.path.insert(0, os.path.join(recorded.ROOT, "analysis"))
from fit_sparsity_cost import fit_pooled  # noqa: E402

DOC = os.path.join("docs", "paper-tta-resnet18-topk-rule.md")
SCREEN = os.path.join("scenarios", "paper-tta", "resnet18-cpu-warmup-screen.yaml")
RULE = "soonest-0.04-busy-start-0.00195-topk-lr-0.2"
RULE_FOLDERS = ("seed-1-150-rule-topk-lr-0.2", "seed-2-150-rule-topk-lr-0.2")
SEEDS = (1, 2)


def densities_to_150(folder, seed):
    """The rule's density at each tick to iteration 150 (control.csv) of a recorded run."""
    path = os.path.join(recorded.screen_folder(folder), RULE, "control.csv")
    with open(path) as f:
        return [float(row["density"]) for row in csv.DictReader(f) if int(row["iteration"]) <= 150]


class TopKCost(unittest.TestCase):
    """The cost the rule runs at: the model N(d) = N1 (1 + k / sqrt(d))
    fitted over top-k's first crossings at 0.5% and 0.195%, as the
    thresholdv16 densities' was."""

    @classmethod
    def setUpClass(cls):
        cls.runs = recorded.gathered((TOPK_FOLDER, TOPK_BYTES_FOLDER))
        cls.text = recorded.flowing(recorded.read(DOC))
        cls.screen = recorded.flowing(recorded.read(SCREEN).replace("#", " "))

    def fit(self, reading):
        points = [(density, label, [recorded.reading_of(self.runs[(label, seed)], reading, 150)[0] for seed in SEEDS])
                  for density, label in ((0.005, TOPK), (0.00195, TOPK_BYTES))]
        (n1,), k = fit_pooled([points])
        return points, n1, k

    def test_the_cost_by_the_first_crossings(self):
        points, n1, k = self.fit("first")
        self.assertAlmostEqual(k, 0.04, delta=0.005)
        crossings = " and ".join(", ".join(str(i) for i in its) for _, _, its in points)
        self.assertIn(f"({crossings} iterations) gives k = {k:.3f}", self.screen)
        self.assertIn(f"gives k = {k:.3f} (N1 = {n1:.0f} iterations)", self.text)

    def test_and_by_the_fits_crossings(self):
        points, _, k = self.fit("monotone")
        crossings = " and ".join(", ".join(str(i) for i in its) for _, _, its in points)
        self.assertIn(f"({k:.3f} by the fit's crossings, {crossings})", self.screen)
        self.assertIn(f"{k:.3f} by the fit's crossings", self.text)


class RuleWithTopK(Selection):
    """"Seeds 1 and 2": the report against fixed top-k at 0.195%, the
    reading set before the runs, the bytes, the densities and the best
    accuracies against ddp's."""

    DOC = DOC
    HEADING = "## Seeds 1 and 2"
    FOLDERS = (*RULE_FOLDERS, TOPK_BYTES_FOLDER)
    LABELS = (TOPK_BYTES, RULE)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.report_on(cls.FOLDERS, TOPK_BYTES)

    def test_the_doc_quotes_the_report(self):
        expect_quoted_runs(self, self.report, self.LABELS, 4)

    def test_the_reading_set_before_the_runs(self):
        ratios = recorded.ratio_table(self.report)["monotone"]
        self.assertEqual(ratios["best"].split(" ")[0], TOPK_BYTES)
        cell = ratios[RULE]  # "1.01x (0.98-1.05)": the rule's TTA over the best fixed density's, per seed
        self.assertNotIn("not reached", cell)
        ratio = float(cell.split("x")[0])
        low, high = cell.split("(")[1].rstrip(")").split("-")
        self.assertIn(f"the rule takes {ratio:.2f}x fixed top-k's TTA at 0.195% by the median of the fit, "
                      f"{'within' if ratio <= 1.1 else 'not within'} the controller's 1.1x ({low}x and {high}x per "
                      f"seed)", self.text)

    def test_the_bytes_against_the_candidate(self):
        sent = [seed_wan_bytes(folder, RULE, seed) for seed, folder in zip(SEEDS, RULE_FOLDERS)]
        fixed = [seed_wan_bytes(TOPK_BYTES_FOLDER, TOPK_BYTES, seed) for seed in SEEDS]
        self.assertIn(f"sending {sent[0] / fixed[0]:.2f}x and {sent[1] / fixed[1]:.2f}x the candidate's WAN bytes "
                      f"({sent[0] / 1e6:.2f} MB and {sent[1] / 1e6:.2f} MB against {fixed[0] / 1e6:.2f} MB and "
                      f"{fixed[1] / 1e6:.2f} MB)", self.text)

    def test_what_is_open_and_readme_quote_it(self):
        cell = recorded.ratio_table(self.report)["monotone"][RULE]
        low, high = cell.split("(")[1].rstrip(")").split("-")
        self.assertIn(f"took {cell.split(' ')[0]} the candidate's TTA by the fit on two CPU validation seeds "
                      f"({low}x and {high}x;", recorded.flowing(recorded.read(os.path.join("docs", "paper-tta-open.md"))))
        self.assertIn(f"and with exact top-k {cell.split(' ')[0]} the top-k candidate on two",
                      recorded.flowing(recorded.read("README.md")))

    def test_the_doc_quotes_its_densities(self):
        for seed, folder in zip(SEEDS, RULE_FOLDERS):
            densities = densities_to_150(folder, seed)
            self.assertIn(f"seed {seed} {min(densities[2:]):.2%}-{max(densities[2:]):.2%}, "
                          f"{densities[-1]:.2%} at the end", self.text)

    def test_the_table_quotes_best_accuracies_against_ddp(self):
        expect_gap_table(self, self.LABELS)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
