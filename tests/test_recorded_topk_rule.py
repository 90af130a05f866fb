#!/usr/bin/env python3
"""The recorded CPU screen runs of the soonest-target rule at learning
rate 0.2 with exact top-k, from 0.195% (docs/results/paper-tta-cpu-screen/),
still give what docs/paper-tta-resnet18-topk-rule.md quotes: the
sparsity_cost fitted on exact top-k's fixed densities, the report
against fixed 0.195% with top-k (the reading the screen file set before
the runs), the densities the rule chose and its best accuracies against
ddp's, on seeds 1 and 2 and then over all five, with the test files
listing it. Standard library only.

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
from test_recorded_rates import expect_quoted_runs, unique  # noqa: E402
from test_recorded_selection import (TOPK, TOPK_BYTES, TOPK_BYTES_FOLDER, TOPK_BYTES_FOLDERS, TOPK_FOLDER,  # noqa: E402
                                     Selection, seed_wan_bytes)

sys.path.insert(0, os.path.join(recorded.ROOT, "analysis"))
from fit_sparsity_cost import fit_pooled  # noqa: E402

DOC = os.path.join("docs", "paper-tta-resnet18-topk-rule.md")
SCREEN = os.path.join("scenarios", "paper-tta", "resnet18-cpu-warmup-screen.yaml")
RULE = "soonest-0.04-busy-start-0.00195-topk-lr-0.2"
RULE_FOLDERS = ("seed-1-150-rule-topk-lr-0.2", "seed-2-150-rule-topk-lr-0.2")
SEEDS = (1, 2)
# Then seeds 3 and 4 side by side, and seed 5.
RULE_FOLDERS_3_5 = ("seeds-3-4-150-rule-topk-lr-0.2", "seed-5-150-rule-topk-lr-0.2")
RULE_SEED_FOLDERS = {1: RULE_FOLDERS[0], 2: RULE_FOLDERS[1], 3: RULE_FOLDERS_3_5[0], 4: RULE_FOLDERS_3_5[0],
                     5: RULE_FOLDERS_3_5[1]}


def rule_against_best(report):
    """The rule's monotone cell of the report's ratio table, "1.01x (0.98-1.05)",
    with its median ratio and the per-seed low and high as text."""
    cell = recorded.ratio_table(report)["monotone"][RULE]
    low, high = cell.split("(")[1].rstrip(")").split("-")
    return cell, float(cell.split("x")[0]), low, high


def densities_to_150(folder, seed):
    """The rule's density at each tick to iteration 150 (control.csv) of a
    recorded run (a folder of several seeds keeps each in seed-N/)."""
    run = os.path.join(recorded.screen_folder(folder), RULE)
    if os.path.isdir(os.path.join(run, f"seed-{seed}")):
        run = os.path.join(run, f"seed-{seed}")
    path = os.path.join(run, "control.csv")
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
    REPORT_AGAINST = TOPK_BYTES

    def test_the_doc_quotes_the_report(self):
        expect_quoted_runs(self, self.report, self.LABELS, 4)

    def test_the_reading_set_before_the_runs(self):
        self.assertEqual(recorded.ratio_table(self.report)["monotone"]["best"].split(" ")[0], TOPK_BYTES)
        cell, ratio, low, high = rule_against_best(self.report)  # the rule's TTA over the best fixed density's
        self.assertNotIn("not reached", cell)
        self.assertIn(f"the rule takes {ratio:.2f}x fixed top-k's TTA at 0.195% by the median of the fit, "
                      f"{'within' if ratio <= 1.1 else 'not within'} the controller's 1.1x ({low}x and {high}x per "
                      f"seed)", self.text)

    def test_the_bytes_against_the_candidate(self):
        sent = [seed_wan_bytes(folder, RULE, seed) for seed, folder in zip(SEEDS, RULE_FOLDERS)]
        fixed = [seed_wan_bytes(TOPK_BYTES_FOLDER, TOPK_BYTES, seed) for seed in SEEDS]
        self.assertIn(f"sending {sent[0] / fixed[0]:.2f}x and {sent[1] / fixed[1]:.2f}x the candidate's WAN bytes "
                      f"({sent[0] / 1e6:.2f} MB and {sent[1] / 1e6:.2f} MB against {fixed[0] / 1e6:.2f} MB and "
                      f"{fixed[1] / 1e6:.2f} MB)", self.text)

    def test_the_doc_quotes_its_densities(self):
        for seed, folder in zip(SEEDS, RULE_FOLDERS):
            densities = densities_to_150(folder, seed)
            self.assertIn(f"seed {seed} {min(densities[2:]):.2%}-{max(densities[2:]):.2%}, "
                          f"{densities[-1]:.2%} at the end", self.text)

    def test_the_table_quotes_best_accuracies_against_ddp(self):
        expect_gap_table(self, self.LABELS)


class RuleWithTopKOnFiveSeeds(Selection):
    """"Seeds 3 to 5": the report against fixed top-k at 0.195% over seeds
    1-5, the reading the screen file set before seeds 3-5 ran, the test
    files listing the rule as the screen has it, the densities and the
    best accuracies against ddp's."""

    DOC = DOC
    SEEDS = (1, 2, 3, 4, 5)
    HEADING = "## Seeds 3 to 5"
    FOLDERS = unique((*RULE_FOLDERS, *RULE_FOLDERS_3_5, *TOPK_BYTES_FOLDERS))
    LABELS = (TOPK_BYTES, RULE)
    REPORT_AGAINST = TOPK_BYTES

    def test_the_doc_quotes_the_report(self):
        expect_quoted_runs(self, self.report, self.LABELS, 10)
        self.expect_table_quoted("| reading |")
        self.expect_table_quoted("| quantity |")

    def test_the_reading_set_before_the_runs(self):
        cell, ratio, low, high = rule_against_best(self.report)
        self.assertNotIn("not reached", cell)
        self.assertLessEqual(ratio, 1.1)
        self.assertIn(f"over five seeds the rule takes {ratio:.2f}x the candidate's TTA by the median of the fit, "
                      f"within the controller's 1.1x ({low}x to {high}x per seed)", self.text)

    def test_what_is_open_and_readme_quote_it(self):
        cell, _, low, high = rule_against_best(self.report)
        self.assertIn(f"took {cell.split(' ')[0]} the candidate's TTA by the fit over five CPU validation seeds "
                      f"({low}x to {high}x;", recorded.flowing(recorded.read(os.path.join("docs", "paper-tta-open.md"))))
        self.assertIn(f"and with exact top-k {cell.split(' ')[0]} the top-k candidate over five",
                      recorded.flowing(recorded.read("README.md")))

    def test_the_test_files_list_it_as_the_screen_has_it(self):
        screen = recorded.read(SCREEN).splitlines()
        at = next(i for i, line in enumerate(screen) if f"label: {RULE}," in line)
        entry = "\n".join(screen[at:at + 3])
        for link in ("fluct-115", "const-100", "const-500"):
            self.assertIn(entry, recorded.read(os.path.join("scenarios", "paper-tta", f"resnet18-h100-{link}.yaml")))

    def test_the_doc_quotes_its_densities(self):
        for seed in (3, 4, 5):
            densities = densities_to_150(RULE_SEED_FOLDERS[seed], seed)
            self.assertIn(f"seed {seed} {min(densities[2:]):.2%}-{max(densities[2:]):.2%}, "
                          f"{densities[-1]:.2%} at the end", self.text)

    def test_the_bytes_against_the_candidate(self):
        ratios = [seed_wan_bytes(RULE_SEED_FOLDERS[seed], RULE, seed) /
                  seed_wan_bytes(TOPK_BYTES_FOLDERS[(seed - 1) // 2], TOPK_BYTES, seed) for seed in self.SEEDS]
        self.assertIn(f"sending {min(ratios):.2f}x to {max(ratios):.2f}x the candidate's WAN bytes", self.text)

    def test_the_table_quotes_best_accuracies_against_ddp(self):
        expect_gap_table(self, self.LABELS)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
