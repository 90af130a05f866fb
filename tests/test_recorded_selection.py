#!/usr/bin/env python3
"""The recorded CPU screen runs of docs/results/paper-tta-cpu-screen/ that
replace thresholdv16's 16-float blocks by a finer selection still give
what docs/paper-tta-resnet18-selection.md quotes of them: exact top-k at
the same 0.5% ("Exact top-k in place of the blocks": best accuracies
against ddp's, the reading, the report, the bytes) and at the blocks'
bytes ("Exact top-k at the blocks' bytes": the same, thresholdv16 at 1%
read beside it, and the timing runs that price top-k's selection as
measured and at 2.94x and 5x thresholdv16's; then seeds 3 and 4, seed 5,
and the candidate against ddp on all five). thresholdv there is
tests/test_recorded_thresholdv.py's. Standard library only.

    python3 tests/test_recorded_selection.py [REPO_ROOT]
"""
import csv
import json
import os
import statistics
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_recorded_results as recorded  # noqa: E402  (its ROOT reads the same argv)
from test_recorded_accuracy_gap import FIXED_0_2, FIXED_0_5_AT_0_2, expect_gap_table  # noqa: E402
from test_recorded_iterations import summary_entry  # noqa: E402
from test_recorded_rates import AT_0_2, DDP, best_to, expect_quoted_runs, unique  # noqa: E402
from test_recorded_rule_at_0_2 import gaps_to_ddp  # noqa: E402

DOC = os.path.join("docs", "paper-tta-resnet18-selection.md")
# Exact top-k in place of the 16-float blocks, fixed 0.5% at 0.2, seeds 1 and 2 to 150.
TOPK, TOPK_FOLDER = "fixed-0.005-topk-lr-0.2", "seeds-1-2-150-topk-lr-0.2"
# And at the blocks' bytes (0.5% / 2.56).
TOPK_BYTES, TOPK_BYTES_FOLDER = "fixed-0.00195-topk-lr-0.2", "seeds-1-2-150-topk-0.00195-lr-0.2"
# The same on seeds 3 and 4 (seed 5 was stopped for time), then on seed 5.
TOPK_BYTES_3_4_FOLDER = "seeds-3-4-150-topk-0.00195-lr-0.2"
TOPK_BYTES_5_FOLDER = "seed-5-150-topk-0.00195-lr-0.2"
TOPK_BYTES_FOLDERS = (TOPK_BYTES_FOLDER, TOPK_BYTES_3_4_FOLDER, TOPK_BYTES_5_FOLDER)
# Both in timing mode, priced as measured and at 2.94x and 5x for top-k's selection.
PRICING = {"as measured": "resnet18-cpu-topk-pricing", "2.94x": "resnet18-cpu-topk-pricing-2.94x",
           "5x": "resnet18-cpu-topk-pricing-5x"}
# thresholdv16 at 1% at 0.2, recorded for another question.
FIXED_1_AT_0_2, FIXED_1_FOLDER = "fixed-0.01-lr-0.2", "seeds-1-2-200-fixed-0.01-lr-0.2"


def sent_per_iteration(folder, label):
    """(WAN bytes per iteration, simulated ms per iteration) of a recorded system."""
    entry = summary_entry(folder, label)
    return entry["wan_bytes"] / entry["iterations"], entry["mean_iteration_s"] * 1000


class Selection(unittest.TestCase):
    """What every section here shares: its seeds (1 and 2 unless a class
    says otherwise), best accuracies to 150 against ddp's per label,
    medians, the section's text, and its report against fixed 0.5% at 0.2."""

    DOC = DOC
    SEEDS = (1, 2)
    HEADING = ""
    FOLDERS = ()
    LABELS = ()
    # When set, the report of FOLDERS against this label (report_on).
    REPORT_AGAINST = None

    @classmethod
    def setUpClass(cls):
        # Up to its first subsection (seeds 3 and 4 have their own class).
        cls.section = recorded.doc_section(recorded.read(cls.DOC), cls.HEADING).split("\n### ")[0]
        cls.text = recorded.flowing(cls.section)
        cls.runs = recorded.gathered(unique((*cls.FOLDERS, *DDP[:max(cls.SEEDS)])))
        cls.gaps = {label: gaps_to_ddp(cls.runs, label, cls.SEEDS) for label in cls.LABELS}
        cls.median = {label: statistics.median(gaps) for label, gaps in cls.gaps.items()}
        cls.sent = {FIXED_0_5_AT_0_2: sent_per_iteration(FIXED_0_2, FIXED_0_5_AT_0_2)}
        if cls.REPORT_AGAINST:
            cls.report_on(cls.FOLDERS, cls.REPORT_AGAINST)

    @classmethod
    def report_on(cls, folders, against=FIXED_0_5_AT_0_2):
        """Keeps monotone_tta.py's report of `folders` on the class's seeds,
        whole runs, against `against` (fixed 0.5% at 0.2 unless named), as
        cls.report, and the rows of its --against table as cls.against."""
        cls.report = recorded.monotone_report("--seeds", ",".join(map(str, cls.SEEDS)), "--whole-runs", "--against",
                                              against, folders=folders)
        cls.against = recorded.against_rows(recorded.against_table(cls.report))

    def expect_table_quoted(self, first_cells):
        """The section quotes, whole, the report's table whose header starts with `first_cells`."""
        self.assertIn(self.report[self.report.index(first_cells):].split("\n\n")[0], self.section)

    def closer(self, label):
        """Points `label` is closer to ddp than fixed 0.5% at 0.2, by the medians."""
        return self.median[label] - self.median[FIXED_0_5_AT_0_2]

    def bytes_ratio(self, label):
        return self.sent[label][0] / self.sent[FIXED_0_5_AT_0_2][0]


class ExactTopK(Selection):
    """"Exact top-k in place of the blocks": best accuracies to 150 against
    ddp's beside fixed 0.5% at 0.2, the reading set before the runs, the
    report against fixed 0.5% at 0.2 and the bytes each sends."""

    HEADING = "## Exact top-k in place of the blocks"
    FOLDERS = (TOPK_FOLDER, FIXED_0_2)
    REPORT_AGAINST = FIXED_0_5_AT_0_2
    LABELS = (FIXED_0_5_AT_0_2, TOPK)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.iterations = cls.against["iterations, monotone"][TOPK]
        cls.tta = recorded.ratio_table(cls.report)["monotone"][TOPK]  # "1.07x (1.04-1.10)"
        cls.sent[TOPK] = sent_per_iteration(TOPK_FOLDER, TOPK)

    def test_the_table_quotes_best_accuracies_against_ddp(self):
        expect_gap_table(self, (FIXED_0_5_AT_0_2, TOPK))

    def test_the_reading_set_before_the_runs(self):
        blocks_cost = self.closer(TOPK) >= 0.5
        self.assertIn(f"{self.closer(TOPK):+.2f} points against fixed 0.5%'s by the median", self.text)
        self.assertIn("the blocks cost accuracy" if blocks_cost else "the sparsity's part is the density's",
                      self.text)

    def test_the_doc_quotes_the_report(self):
        expect_quoted_runs(self, self.report, (FIXED_0_5_AT_0_2, TOPK), 4)
        self.expect_table_quoted("| reading |")
        median, spread = self.tta.split(" ")
        self.assertIn(f"It reaches 85% in {self.iterations.split(' ')[0]} fixed 0.5%'s iterations by the fit",
                      self.text)
        self.assertIn(f"by the fit it takes {median} fixed 0.5%'s TTA ({spread.strip('()')}x per seed)", self.text)
        self.assertIn(f"{-self.median[TOPK]:.2f} points under ddp's, within the point", self.text)

    def test_what_is_open_and_readme_quote_it(self):
        open_text = recorded.flowing(recorded.read(os.path.join("docs", "paper-tta-open.md")))
        self.assertIn(f"at the same 0.5%, is {-self.median[TOPK]:.2f} points under ddp's best accuracy to 150 by the "
                      f"median, {self.closer(TOPK):.2f} closer than the blocks", open_text)
        self.assertIn(f"exact top-k in place of thresholdv16's blocks brings it to {-self.median[TOPK]:.2f} points "
                      f"at {self.bytes_ratio(TOPK):.2f}x the bytes", recorded.flowing(recorded.read("README.md")))
        self.assertIn(f"in {self.iterations.split(' ')[0]} their iterations, but at {self.bytes_ratio(TOPK):.2f}x the "
                      f"bytes it takes {self.tta.split(' ')[0]} their TTA by the fit", open_text)

    def test_the_bytes(self):
        self.assertIn(f"{self.bytes_ratio(TOPK):.2f}x the WAN bytes per iteration", self.text)
        self.assertIn(f"{self.sent[TOPK][1]:.2f} ms of simulated time per iteration against "
                      f"{self.sent[FIXED_0_5_AT_0_2][1]:.2f}", self.text)


class TopKAtTheBlocksBytes(Selection):
    """"Exact top-k at the blocks' bytes": best accuracies to 150 against
    ddp's beside fixed 0.5% and top-k at 0.5%, the reading set before the
    runs, the report against fixed 0.5% at 0.2, the bytes, and
    thresholdv16 at 1% read beside it."""

    HEADING = "## Exact top-k at the blocks' bytes"
    FOLDERS = (TOPK_BYTES_FOLDER, TOPK_FOLDER, FIXED_0_2, FIXED_1_FOLDER)
    LABELS = (FIXED_0_5_AT_0_2, TOPK, TOPK_BYTES, FIXED_1_AT_0_2)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.report_on((TOPK_BYTES_FOLDER, TOPK_FOLDER, FIXED_0_2))
        cls.ratios = recorded.ratio_table(cls.report)
        for folder, label in ((TOPK_BYTES_FOLDER, TOPK_BYTES), (FIXED_1_FOLDER, FIXED_1_AT_0_2)):
            cls.sent[label] = sent_per_iteration(folder, label)

    def test_the_table_quotes_best_accuracies_against_ddp(self):
        expect_gap_table(self, (FIXED_0_5_AT_0_2, TOPK, TOPK_BYTES))

    def test_the_doc_quotes_the_report(self):
        expect_quoted_runs(self, self.report, (FIXED_0_5_AT_0_2, TOPK, TOPK_BYTES), 6)
        for table in ("| reading |", "| quantity |"):
            self.expect_table_quoted(table)

    def test_the_reading_set_before_the_runs(self):
        wins = self.closer(TOPK_BYTES) >= 0.5
        per_seed = [bytes_ - blocks for bytes_, blocks in zip(self.gaps[TOPK_BYTES], self.gaps[FIXED_0_5_AT_0_2])]
        self.assertIn("At equal bytes the finer selection wins" if wins else "At equal bytes the blocks hold their own",
                      self.text)
        self.assertIn(f"top-k at 0.195% is {self.closer(TOPK_BYTES):+.2f} points against fixed 0.5%'s best accuracy "
                      f"to 150 by the median ({per_seed[0]:+.2f} and {per_seed[1]:+.2f} per seed), "
                      f"{-self.median[TOPK_BYTES]:.2f} points under ddp's", self.text)

    def test_the_bytes_and_the_time(self):
        self.assertIn(f"at {self.bytes_ratio(TOPK_BYTES):.2f}x the WAN bytes per iteration "
                      f"({self.sent[TOPK_BYTES][1]:.2f} ms of simulated time per iteration against "
                      f"{self.sent[FIXED_0_5_AT_0_2][1]:.2f})", self.text)
        iterations = self.against["iterations, monotone"][TOPK_BYTES].split(" ")[0]
        speedup = self.against["speedup, monotone"][TOPK_BYTES]
        self.assertEqual(speedup, self.against["speedup, first"][TOPK_BYTES])
        self.assertIn(f"It reaches 85% in {iterations} fixed 0.5%'s iterations by the fit", self.text)
        self.assertIn(f"a speedup of {speedup} over fixed 0.5% by the fit and by the first evaluation", self.text)
        self.assertIn(f"where exact top-k at 0.5% takes {self.ratios['monotone'][TOPK]} the TTA of top-k at 0.195%",
                      self.text)
        self.assertEqual(self.ratios["monotone"]["best"].split(" ")[0], TOPK_BYTES)

    def test_thresholdv16_at_one_percent_read_beside_it(self):
        best = [f"{best_to(self.runs, FIXED_1_AT_0_2, seed, 150) * 100:.2f}%" for seed in self.SEEDS]
        self.assertIn(f"at {self.bytes_ratio(FIXED_1_AT_0_2):.2f}x the bytes of 0.5%, has a best accuracy to 150 of "
                      f"{best[0]} and {best[1]}, {self.median[FIXED_1_AT_0_2]:+.2f} points against ddp's by the median, "
                      f"where 0.5% is {self.median[FIXED_0_5_AT_0_2]:+.2f}", self.text)


    def test_what_is_open_and_readme_quote_it(self):
        open_text = recorded.flowing(recorded.read(os.path.join("docs", "paper-tta-open.md")))
        iterations = self.against["iterations, monotone"][TOPK_BYTES].split(" ")[0]
        speedup = self.against["speedup, monotone"][TOPK_BYTES].split(" ")[0]
        self.assertIn(f"At the blocks' bytes (0.195%) exact top-k is {-self.median[TOPK_BYTES]:.2f} points under "
                      f"ddp's, {self.closer(TOPK_BYTES):.2f} closer than the blocks, in {iterations} their iterations: "
                      f"a {speedup} speedup over fixed 0.5% by the fit", open_text)
        self.assertIn(f"and at the blocks' bytes to {-self.median[TOPK_BYTES]:.2f} points with a {speedup} speedup "
                      f"over them", recorded.flowing(recorded.read("README.md")))

def end_of_iteration(folder, label, seed, iteration):
    """Simulated seconds at the end of `iteration` (where its evaluation is
    stamped) in a recorded timing run: the next iteration's start on rank 0."""
    path = os.path.join(recorded.CPU_SCREEN, folder, label, f"seed-{seed}", "iterations.csv")
    with open(path) as f:
        return next(float(row["start_s"]) for row in csv.DictReader(f)
                    if row["rank"] == "0" and int(row["iteration"]) == iteration + 1)


class TopKPricing(Selection):
    """The "Priced" bullet of "Exact top-k at the blocks' bytes": timing
    runs priced as the accuracy runs were give their times at the fit's
    iterations, and at 2.94x and 5x top-k's selection the TTA and the
    speedup over fixed 0.5% it quotes."""

    HEADING = "## Exact top-k at the blocks' bytes"
    FOLDERS = (TOPK_BYTES_FOLDER, FIXED_0_2)
    LABELS = (FIXED_0_5_AT_0_2, TOPK_BYTES)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.fit = {(label, seed): recorded.reading_of(cls.runs[(label, seed)], "monotone")
                   for label in cls.LABELS for seed in cls.SEEDS}
        cls.tta = {price: {(label, seed): end_of_iteration(folder, label, seed, cls.fit[(label, seed)][0])
                           for label in cls.LABELS for seed in cls.SEEDS}
                   for price, folder in PRICING.items()}

    def speedups(self, price):
        """Per seed, fixed 0.5%'s TTA over top-k at 0.195%'s at `price`."""
        return [self.tta[price][(FIXED_0_5_AT_0_2, seed)] / self.tta[price][(TOPK_BYTES, seed)]
                for seed in self.SEEDS]

    def test_timing_runs_give_the_accuracy_runs_times(self):
        for key, (_, time_s, _) in self.fit.items():
            # Both files round to the microsecond on their own.
            self.assertLessEqual(abs(self.tta["as measured"][key] - time_s), 1.5e-6, msg=key)

    def test_fixed_density_keeps_its_price(self):
        for price in ("2.94x", "5x"):
            for seed in self.SEEDS:
                key = (FIXED_0_5_AT_0_2, seed)
                self.assertEqual(self.tta[price][key], self.tta["as measured"][key])

    def test_the_doc_quotes_the_repriced_tta(self):
        for price in ("2.94x", "5x"):
            times = [self.tta[price][(TOPK_BYTES, seed)] for seed in self.SEEDS]
            ratios = self.speedups(price)
            self.assertIn(f"at {price} thresholdv16's it reaches 85% at {times[0]:.2f} s and {times[1]:.2f} s, a "
                          f"speedup of {statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f}) over "
                          f"fixed 0.5%", self.text)

    def test_what_is_open_quotes_it(self):
        speedups = [f"{statistics.median(self.speedups(price)):.2f}x" for price in ("2.94x", "5x")]
        self.assertIn(f"and still {speedups[0]} and {speedups[1]} with it priced at 2.94x and 5x theirs",
                      recorded.flowing(recorded.read(os.path.join("docs", "paper-tta-open.md"))))

    def test_the_manifests_say_how_the_selection_was_priced(self):
        for price, folder in PRICING.items():
            for seed in self.SEEDS:
                path = os.path.join(recorded.CPU_SCREEN, folder, TOPK_BYTES, f"seed-{seed}", "manifest.json")
                with open(path) as f:
                    curve = json.load(f)["compute_time_model"]["compress_curve"]
                self.assertEqual(curve, "thresholdv16 (the profile has no curve of topk's)" if price == "as measured"
                                 else "topk", (price, seed))

class TopKAtTheBlocksBytesOnFourSeeds(Selection):
    """"Seeds 3 and 4" of "Exact top-k at the blocks' bytes": the report
    over seeds 1-4 against fixed 0.5% at 0.2, best accuracies to 150
    against ddp's per seed, and how the reading the screen file set for
    seeds 1-5 reads on four (seed 5 was stopped for time)."""

    SEEDS = (1, 2, 3, 4)
    HEADING = "### Seeds 3 and 4"
    FOLDERS = unique((TOPK_BYTES_FOLDER, TOPK_BYTES_3_4_FOLDER, *AT_0_2[:4]))
    REPORT_AGAINST = FIXED_0_5_AT_0_2
    LABELS = (FIXED_0_5_AT_0_2, TOPK_BYTES)

    def test_the_table_quotes_best_accuracies_against_ddp(self):
        expect_gap_table(self, self.LABELS)

    def test_the_doc_quotes_the_report(self):
        expect_quoted_runs(self, self.report, self.LABELS, 8)

    def test_the_reading_on_four_seeds(self):
        closer = self.closer(TOPK_BYTES)
        speedup = self.against["speedup, monotone"][TOPK_BYTES]
        # TTA within 1.1x of fixed 0.5%'s: a speedup of at least 1/1.1 by the per-seed median.
        keeps = closer >= 0.5 and float(speedup.split("x")[0]) >= 1 / 1.1
        self.assertIn(f"{closer:+.2f} points against fixed 0.5%'s best accuracy to 150 by the median over four "
                      f"seeds, {-self.median[TOPK_BYTES]:.2f} points under ddp's", self.text)
        self.assertIn(f"a speedup of {speedup} over fixed 0.5% by the fit", self.text)
        self.assertIn("on four seeds it would stay a candidate" if keeps else "on four seeds it would not stay a "
                      "candidate", self.text)

    def test_what_is_open_and_readme_quote_it(self):
        closer = self.closer(TOPK_BYTES)
        speedup = self.against["speedup, monotone"][TOPK_BYTES].split(" ")[0]
        self.assertIn(f"on seeds 1-4 it is {closer:.2f} points closer than the blocks by the median, "
                      f"{-self.median[TOPK_BYTES]:.2f} under ddp's, and {speedup} faster",
                      recorded.flowing(recorded.read(os.path.join("docs", "paper-tta-open.md"))))
        self.assertIn(f"on two seeds ({speedup} on four); over five seeds", recorded.flowing(recorded.read("README.md")))


class TopKAtTheBlocksBytesOnFiveSeeds(Selection):
    """"Seed 5": the report over seeds 1-5 against fixed 0.5% at 0.2, best
    accuracies to 150 against ddp's per seed, the reading the screen file
    set for seeds 1-5, and the test files listing the candidate."""

    SEEDS = (1, 2, 3, 4, 5)
    HEADING = "### Seed 5"
    FOLDERS = unique((*TOPK_BYTES_FOLDERS, *AT_0_2))
    REPORT_AGAINST = FIXED_0_5_AT_0_2
    LABELS = (FIXED_0_5_AT_0_2, TOPK_BYTES)

    def test_the_table_quotes_best_accuracies_against_ddp(self):
        expect_gap_table(self, self.LABELS)

    def test_the_doc_quotes_the_report(self):
        expect_quoted_runs(self, self.report, self.LABELS, 10)
        self.expect_table_quoted("| reading |")

    def test_the_reading_on_five_seeds(self):
        closer = self.closer(TOPK_BYTES)
        speedup = self.against["speedup, monotone"][TOPK_BYTES]
        iterations = self.against["iterations, monotone"][TOPK_BYTES].split(" ")[0]
        self.assertTrue(closer >= 0.5 and float(speedup.split("x")[0]) >= 1 / 1.1)
        self.assertIn(f"exact top-k at 0.195% is {closer:+.2f} points against fixed 0.5%'s best accuracy to 150 by "
                      f"the median, {-self.median[TOPK_BYTES]:.2f} points under ddp's, and a speedup of {speedup} "
                      f"over fixed 0.5% by the fit, in {iterations} its iterations", self.text)

    def test_what_is_open_and_readme_quote_it(self):
        closer = self.closer(TOPK_BYTES)
        speedup = self.against["speedup, monotone"][TOPK_BYTES].split(" ")[0]
        self.assertIn(f"over five seeds {closer:.2f} closer, {-self.median[TOPK_BYTES]:.2f} under ddp's (on the "
                      f"acceptance's bound, not inside it) and {speedup} faster",
                      recorded.flowing(recorded.read(os.path.join("docs", "paper-tta-open.md"))))
        self.assertIn(f"over five seeds it is {-self.median[TOPK_BYTES]:.2f} points under ddp's, {speedup} faster "
                      f"than the blocks", recorded.flowing(recorded.read("README.md")))

    def test_the_test_files_list_it_as_the_screen_has_it(self):
        screen = recorded.read(os.path.join("scenarios", "paper-tta", "resnet18-cpu-warmup-screen.yaml"))
        entry = next(line for line in screen.splitlines() if f"label: {TOPK_BYTES}," in line)
        for link in ("fluct-115", "const-100", "const-500"):
            self.assertIn(entry, recorded.read(os.path.join("scenarios", "paper-tta", f"resnet18-h100-{link}.yaml")))


class TopKAgainstDdp(Selection):
    """"Against ddp": the monotone report of the candidate against ddp on
    seeds 1-5, and what the section reads off it and its best accuracies."""

    SEEDS = (1, 2, 3, 4, 5)
    HEADING = "### Against ddp"
    FOLDERS = unique((*TOPK_BYTES_FOLDERS, *DDP))
    REPORT_AGAINST = "ddp"
    LABELS = (TOPK_BYTES,)

    def cell(self, quantity):
        return self.against[quantity][TOPK_BYTES]

    def test_the_doc_quotes_the_report(self):
        self.assertEqual(recorded.run_rows(self.section, ("ddp",)), recorded.run_rows(self.report, ("ddp",)))
        self.assertEqual(len(recorded.run_rows(self.section, ("ddp",))), 5)
        self.assertIn("\n".join(recorded.against_table(self.report)), self.section)

    def test_what_it_reads_off_the_report(self):
        spread = lambda cell: cell.split(" ")[1].strip("()")
        self.assertIn(f"it needs {self.cell('iterations, monotone').split(' ')[0]} ddp's iterations to 85% "
                      f"({spread(self.cell('iterations, monotone'))}x per seed; "
                      f"{self.cell('iterations, first').split(' ')[0]} by the first evaluation", self.text)
        self.assertIn(f"at {self.cell('speedup, monotone').split(' ')[0]} ddp's TTA "
                      f"({spread(self.cell('speedup, monotone'))}x per seed; "
                      f"{self.cell('speedup, first').split(' ')[0]} by the first evaluation)", self.text)

    def test_the_bounds(self):
        iterations = float(self.cell("iterations, monotone").split("x")[0])
        speedup = float(self.cell("speedup, monotone").split("x")[0])
        first = float(self.cell("speedup, first").split("x")[0])
        self.assertLessEqual(iterations, 1.5)
        self.assertGreaterEqual(speedup, 104)
        self.assertLess(first, 104)
        gap = -self.median[TOPK_BYTES]
        # On the bound, not inside it: 1.00 as printed, a hair over in floating point.
        self.assertEqual(f"{gap:.2f}", "1.00")
        self.assertIn(f"with its best accuracy {gap:.2f} points under ddp's, on the bound rather than inside it",
                      self.text)
        over = [seed for seed, points in zip(self.SEEDS, self.gaps[TOPK_BYTES]) if points < -1.005]
        self.assertEqual(over, [1, 3])
        self.assertIn("seeds 1 and 3 are more than a point under", self.text)

    def test_what_is_open_and_readme_quote_it(self):
        iterations = self.cell("iterations, monotone")
        speedup, first = self.cell("speedup, monotone").split(" ")[0], self.cell("speedup, first").split(" ")[0]
        self.assertIn(f"it needs {iterations.split(' ')[0]} ddp's iterations ({iterations.split(' ')[1].strip('()')}x) "
                      f"at {speedup} ddp's TTA by the fit ({first} by the first evaluation",
                      recorded.flowing(recorded.read(os.path.join("docs", "paper-tta-open.md"))))
        self.assertIn(f"needs {iterations.split(' ')[0]} ddp's iterations at {speedup} ddp's TTA by the fit",
                      recorded.flowing(recorded.read("README.md")))


def seed_wan_bytes(folder, label, seed):
    entry = summary_entry(folder, label)
    per_seed = {run["seed"]: run["wan_bytes"] for run in entry.get("per_seed", [])}
    return per_seed.get(seed, entry["wan_bytes"])


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
