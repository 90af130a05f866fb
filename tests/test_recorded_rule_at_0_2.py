#!/usr/bin/env python3
"""The recorded CPU screen runs at learning rate 0.2
(docs/results/paper-tta-cpu-screen/) still give what
docs/paper-tta-resnet18-rule-0.2.md quotes: the soonest-target rule from
0.5% at 0.2 against fixed 0.5% at 0.2 (its criterion), against itself at
0.1 (the same density path) and against ddp; fixed 0.3% and 1% at 0.2,
their readings and ratios against fixed 0.5% at 0.2, the best fixed
density at 0.2 by the criterion the screen file set before the runs, the
rule against it, each density against itself at 0.1 and against ddp
(iterations, TTA, best accuracy at 150 iterations), and 0.3% on seeds 3
and 4; and the summaries of them in docs/paper-tta-findings.md, docs/paper-tta.md and
docs/paper-tta-open.md. The rule at the sparsity_cost fitted on those
densities: tests/test_recorded_fitted_cost.py. Standard library
only.

    python3 tests/test_recorded_rule_at_0_2.py [REPO_ROOT]
"""
import csv
import os
import statistics
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_recorded_results as recorded  # noqa: E402  (its ROOT reads the same argv)
from test_recorded_rates import (OTHER_RATES, RULE, RULE_0_1, RULE_0_2, RULE_0_2_FOLDER, best_to, engine,  # noqa: E402
                                 expect_quoted_pair, expect_quoted_runs, fit_to_200)

DOC = os.path.join("docs", "paper-tta-resnet18-rule-0.2.md")

SEEDS = (1, 2)
# Fixed 0.5%, 1% and 0.3% at 0.2 on seeds 1 and 2: each label's folder.
AT_0_2 = {"fixed-0.005-lr-0.2": "seeds-1-2-200-lr-0.2", "fixed-0.01-lr-0.2": "seeds-1-2-200-fixed-0.01-lr-0.2",
          "fixed-0.003-lr-0.2": "seeds-1-2-200-fixed-0.003-lr-0.2"}
NEW = ("fixed-0.01-lr-0.2", "fixed-0.003-lr-0.2")
# The same densities at 0.1 on seeds 1 and 2 (runs to 200 or 250 iterations).
AT_0_1 = ("250-fixed:fixed-0.005,fixed-0.01", "seed-2-200-fixed", "seeds-1-3-5-250-fixed-0.003",
          "seeds-2-4-250-fixed-0.003")
DDP = ("seed-1-200-ddp", "seeds-2-4-150-ddp:ddp")


PERCENT = {"fixed-0.003-lr-0.2": "0.3%", "fixed-0.005-lr-0.2": "0.5%", "fixed-0.01-lr-0.2": "1%"}
SECTION = "## Fixed 0.3% and 1% at 0.2"
SUBSECTION = "### Against themselves at 0.1, and against ddp"
FOUR_SEEDS = "### Seeds 3 and 4"
# The rule from 0.5% at 0.2 at the sparsity_cost fitted there (tests/test_recorded_fitted_cost.py).
FITTED = "soonest-0.04-busy-start-0.005-lr-0.2"
FITTED_FOLDERS = ("seeds-1-2-200-rule-0.04-lr-0.2", "seeds-3-5-200-rule-0.04-lr-0.2")


def paired_ratios(runs, label, against="fixed-0.005-lr-0.2", seeds=SEEDS):
    """Per seed, `label`'s monotone-fit TTA to iteration 200 over `against`'s."""
    return [fit_to_200(runs, label, seed)[1] / fit_to_200(runs, against, seed)[1] for seed in seeds]


def median_fit_s(runs, label):
    """Median over seeds 1 and 2 of the fit's TTA to iteration 200; a miss is infinitely slow."""
    return statistics.median(fit[1] if fit else float("inf") for fit in (fit_to_200(runs, label, s) for s in SEEDS))


def best_at_0_2(runs):
    """The criterion's best fixed density at 0.2: the lowest median fit TTA."""
    return min(AT_0_2, key=lambda label: median_fit_s(runs, label))


def gaps_to_ddp(runs, label, seeds=SEEDS):
    """Per seed, points of `label`'s best accuracy to iteration 150 against ddp's."""
    return [(best_to(runs, label, seed, 150) - best_to(runs, "ddp", seed, 150)) * 100 for seed in seeds]


def cuts_at_0_2(runs, density):
    """Per seed, the percent fewer iterations to 85% (whole runs' monotone fit) at 0.2 than at 0.1."""
    at = lambda label, seed: recorded.reading_of(runs[(label, seed)], "monotone")[0]
    return [round((1 - at(f"fixed-{density}-lr-0.2", seed) / at(f"fixed-{density}", seed)) * 100) for seed in SEEDS]


class RuleAtTwiceTheRate(unittest.TestCase):
    FOLDERS = (OTHER_RATES["fixed-0.005-lr-0.2"], RULE_0_2_FOLDER)

    @classmethod
    def setUpClass(cls):
        cls.section = recorded.doc_section(recorded.read(DOC), "## The rule from 0.5% at 0.2")
        cls.text = recorded.flowing(cls.section)
        cls.labels = ("fixed-0.005-lr-0.2", RULE_0_2)
        cls.report = recorded.monotone_report("--up-to", "200", "--against", "fixed-0.005-lr-0.2",
                                              folders=cls.FOLDERS)
        cls.runs = recorded.gathered((*cls.FOLDERS, *RULE_0_1))

    def fit(self, label, seed):
        return fit_to_200(self.runs, label, seed)

    def test_the_doc_quotes_the_readings_and_the_ratios(self):
        expect_quoted_pair(self, self.labels)

    def test_the_runs_name_the_engine_the_doc_names(self):
        for seed in (1, 2):
            self.assertEqual(engine(RULE_0_2_FOLDER, RULE_0_2, seed), ("a8548a3", False))
        self.assertIn("with the engine of commit a8548a3 (as their manifests record)", self.text)

    def test_the_criterion(self):
        """Within 1.1x: the median over seeds 1 and 2 of the rule's fit TTA
        over fixed 0.5%'s, both at 0.2 and read to iteration 200."""
        fits = [(self.fit(RULE_0_2, seed), self.fit("fixed-0.005-lr-0.2", seed)) for seed in (1, 2)]
        if any(rule is None for rule, _ in fits):
            self.assertIn("misses 85% within 200 iterations", self.text)
            return
        ratios = [rule[1] / fixed[1] for rule, fixed in fits]
        ratio = statistics.median(ratios)
        verdict = "within" if ratio <= 1.1 else "not within"
        self.assertIn(f"**By the fit the rule at 0.2 takes {ratio:.2f}x fixed 0.5%'s TTA at 0.2 by the median of "
                      f"seeds 1 and 2, {verdict} the 1.1x** ({ratios[0]:.2f}x and {ratios[1]:.2f}x per seed; "
                      f"{ratio:.3f} unrounded)", self.text)
        self.assertIn("reaches 85% at iterations {} and {} where fixed 0.5% at 0.2 reaches it at {} and {}".format(
            *(rule[0] for rule, _ in fits), *(fixed[0] for _, fixed in fits)), self.text)
        best = {(label, seed): max(recorded.monotone_tta.up_to(self.runs[(label, seed)]["evaluations"], 200)[2])
                for label in self.labels for seed in (1, 2)}
        self.assertIn("Its best accuracies to iteration 200, {:.2%} and {:.2%}, are at or above fixed 0.5%'s at 0.2 "
                      "({:.2%} and {:.2%})".format(*(best[(label, seed)] for label in (RULE_0_2, "fixed-0.005-lr-0.2")
                                                     for seed in (1, 2))), self.text)
        self.assertTrue(all(best[(RULE_0_2, seed)] >= best[("fixed-0.005-lr-0.2", seed)] for seed in (1, 2)))

    def test_the_doc_quotes_the_redrawn_ranges(self):
        noise = recorded.monotone_report("--up-to", "200", "--noise", "1000", folders=self.FOLDERS)
        noise = noise.split("Each run's evaluations redrawn")[1]
        ranges = {(label, int(seed)): fit.split("90% ")[1].split(",")[0]
                  for label, seed, _, fit in recorded.run_rows(noise, self.labels)}
        self.assertIn("its crossings' 90% ranges are {} and {} iterations, against {} and {} for fixed 0.5% at "
                      "0.2".format(ranges[(RULE_0_2, 1)], ranges[(RULE_0_2, 2)], ranges[("fixed-0.005-lr-0.2", 1)],
                                   ranges[("fixed-0.005-lr-0.2", 2)]), self.text)

    def test_its_density_path_is_the_rule_s_at_0_1(self):
        """The rule's controller reads times, not values: at 0.2 it chose
        every density it chose at 0.1 on the same seed at the same
        iteration, to iteration 200, at simulated times within 2 us and
        measured rates within 0.01 Mbps (the bytes differ by a few)."""
        for seed, at_0_1 in zip((1, 2), RULE_0_1):
            paths = []
            for folder, label in ((at_0_1.split(":")[0], RULE), (RULE_0_2_FOLDER, RULE_0_2)):
                path = os.path.join(recorded.screen_folder(folder), label)
                if os.path.isdir(os.path.join(path, f"seed-{seed}")):
                    path = os.path.join(path, f"seed-{seed}")
                with open(os.path.join(path, "control.csv")) as f:
                    paths.append([row for row in csv.DictReader(f) if int(row["iteration"]) <= 200])
            at_0_1_rows, at_0_2_rows = paths
            self.assertGreater(len(at_0_2_rows), 3)
            self.assertEqual(len(at_0_1_rows), len(at_0_2_rows))
            for a, b in zip(at_0_1_rows, at_0_2_rows):
                self.assertEqual((a["iteration"], a["density"]), (b["iteration"], b["density"]))
                self.assertAlmostEqual(float(a["time_s"]), float(b["time_s"]), delta=2e-6)
                for rate in ("estimated_mbps", "measured_mbps"):
                    if a[rate] or b[rate]:
                        self.assertAlmostEqual(float(a[rate]), float(b[rate]), delta=0.01)
        self.assertIn("chose the same densities at the same iterations as at 0.1", self.text)

    def test_the_doc_quotes_it_against_the_rule_at_0_1_and_ddp(self):
        against_0_1 = recorded.monotone_report("--up-to", "200", "--against", RULE, folders=(*RULE_0_1, RULE_0_2_FOLDER))
        self.assertIn("\n".join(recorded.against_table(against_0_1)), self.section)
        rows = recorded.against_rows(recorded.against_table(against_0_1))
        self.assertIn(f"needs {rows['iterations, monotone'][RULE_0_2].split(' ')[0]} the iterations, a speedup of "
                      f"{rows['speedup, monotone'][RULE_0_2].split(' ')[0]} over itself at 0.1 by the fit", self.text)
        against_ddp = recorded.monotone_report("--seeds", "1,2", "--against", "ddp", "--whole-runs", folders=(
            *RULE_0_1, RULE_0_2_FOLDER, OTHER_RATES["fixed-0.005-lr-0.2"], "seed-1-200-ddp", "seeds-2-4-150-ddp"))
        table = recorded.against_table(against_ddp)
        self.assertIn("\n".join(table), self.section)
        it, tta = recorded.fit_figures(recorded.against_rows(table))
        self.assertIn(f"it needs {it[RULE_0_2]} ddp's iterations by the fit** ({it[RULE]} at 0.1, "
                      f"{it['fixed-0.005-lr-0.2']} for fixed 0.5% at 0.2), at {tta[RULE_0_2]} ddp's TTA ({tta[RULE]} at "
                      "0.1)", self.text)


class DensitiesAtTwiceTheRate(unittest.TestCase):
    FOLDERS = tuple(AT_0_2.values())

    @classmethod
    def setUpClass(cls):
        whole = recorded.doc_section(recorded.read(DOC), SECTION)
        cls.section, cls.subsection = whole.split(SUBSECTION)
        cls.subsection = cls.subsection.split(FOUR_SEEDS)[0]  # seeds 1 and 2; FixedPointThreeOnFourSeeds reads the rest
        cls.text, cls.subtext = recorded.flowing(cls.section), recorded.flowing(cls.subsection)
        cls.report = recorded.monotone_report("--up-to", "200", "--against", "fixed-0.005-lr-0.2", "--noise", "1000",
                                              folders=cls.FOLDERS)
        cls.runs = recorded.gathered((*cls.FOLDERS, RULE_0_2_FOLDER, *AT_0_1, *DDP))

    def fit(self, label, seed):
        return fit_to_200(self.runs, label, seed)

    def test_the_doc_quotes_the_readings_and_the_ratios(self):
        expect_quoted_runs(self, self.report.split("Each run's evaluations redrawn")[0], tuple(AT_0_2), 6)

    def test_the_runs_name_the_engine_the_doc_names(self):
        for label in NEW:
            for seed in SEEDS:
                self.assertEqual(engine(AT_0_2[label], label, seed), ("a140686", False))
        self.assertIn("with the engine of commit a140686 (as their manifests record", self.text)

    def test_the_criterion_names_the_best_fixed_density_at_0_2(self):
        best = best_at_0_2(self.runs)
        self.assertIn(f"**The best fixed density at 0.2 is {PERCENT[best]}**, by the criterion", self.text)
        for label in NEW:
            fits = [self.fit(label, seed) for seed in SEEDS]
            self.assertNotIn(None, fits)
            per_seed = paired_ratios(self.runs, label)
            self.assertIn(f"fixed {PERCENT[label]} at 0.2 takes {statistics.median(per_seed):.2f}x", self.text)
            self.assertIn(f"({per_seed[0]:.2f}x and {per_seed[1]:.2f}x per seed), reaching 85% at iterations "
                          f"{fits[0][0]} and {fits[1][0]}", self.text)
        crossings = [self.fit("fixed-0.005-lr-0.2", seed)[0] for seed in SEEDS]
        self.assertIn("where fixed 0.5% reaches it at {} and {}".format(*crossings), self.text)

    def test_the_doc_quotes_the_iterations_and_their_length(self):
        rows = recorded.against_rows(recorded.against_table(self.report))
        ratio = lambda quantity, label: float(rows[quantity][label].split("x")[0])
        first = ratio("speedup, first", "fixed-0.003-lr-0.2")
        self.assertIn(f"By the first evaluation fixed 0.3% is {1 / first:.2f}x, the closer of the two", self.text)
        self.assertLess(1 / first, 1 / ratio("speedup, first", "fixed-0.01-lr-0.2"))
        # Each iteration's length against 0.5%'s: the TTA ratio over the iterations ratio.
        self.assertIn("Fixed 1% needs {:.2f}x 0.5%'s iterations by the fit, each about {:.1f}x as long; fixed 0.3% "
                      "needs {:.2f}x, each about {:.1f}x as long".format(
                          ratio("iterations, monotone", "fixed-0.01-lr-0.2"),
                          1 / ratio("speedup, monotone", "fixed-0.01-lr-0.2") /
                          ratio("iterations, monotone", "fixed-0.01-lr-0.2"),
                          ratio("iterations, monotone", "fixed-0.003-lr-0.2"),
                          1 / ratio("speedup, monotone", "fixed-0.003-lr-0.2") /
                          ratio("iterations, monotone", "fixed-0.003-lr-0.2")), self.text)

    def test_the_doc_states_the_criterion_as_the_screen_file_does(self):
        screen = recorded.flowing(recorded.read(os.path.join("scenarios", "paper-tta",
                                                             "resnet18-cpu-warmup-screen.yaml")).replace("#", " "))
        criterion = ("the best fixed density at 0.2 is the one of 0.3%, 0.5% and 1% with the lowest median "
                     "monotone-fit TTA to 85% over seeds 1 and 2")
        self.assertIn(criterion, screen)
        self.assertIn(criterion, self.text)
        self.assertIn("(commit bc96a7e, in the screen file)", self.text)

    def test_the_doc_quotes_the_redrawn_ranges(self):
        noise = self.report.split("Each run's evaluations redrawn")[1]
        ranges = {(label, int(seed)): fit.split("90% ")[1].split(",")[0]
                  for label, seed, _, fit in recorded.run_rows(noise, tuple(AT_0_2))}
        self.assertIn("0.3%'s crossings' 90% ranges are {} and {} iterations, against {} and {} for fixed 0.5%".format(
            ranges[("fixed-0.003-lr-0.2", 1)], ranges[("fixed-0.003-lr-0.2", 2)],
            ranges[("fixed-0.005-lr-0.2", 1)], ranges[("fixed-0.005-lr-0.2", 2)]), self.text)
        span = lambda label, seed: tuple(int(x) for x in ranges[(label, seed)].split("-"))
        apart = [span("fixed-0.005-lr-0.2", seed)[1] < span("fixed-0.003-lr-0.2", seed)[0] for seed in SEEDS]
        self.assertEqual(apart, [True, False])
        self.assertIn("By the fit 0.5% is ahead of 0.3% beyond one seed's noise on seed 1 and within it on seed 2",
                      self.text)

    def test_the_rule_at_0_2_against_the_best_fixed_density_there(self):
        best = best_at_0_2(self.runs)
        per_seed = paired_ratios(self.runs, RULE_0_2, best)
        ratio = statistics.median(per_seed)
        verdict = "within" if ratio <= 1.1 else "not within"
        self.assertIn(f"takes {ratio:.2f}x its TTA ({per_seed[0]:.2f}x and {per_seed[1]:.2f}x per seed), "
                      f"{verdict} the 1.1x", self.text)
        if best == "fixed-0.005-lr-0.2":
            self.assertIn("the test files keep fixed 0.5% as their one fixed density at 0.2", self.text)

    def test_each_density_against_itself_at_0_1(self):
        labels = ("fixed-0.003", "fixed-0.003-lr-0.2", "fixed-0.005", "fixed-0.005-lr-0.2", "fixed-0.01",
                  "fixed-0.01-lr-0.2")
        report = recorded.monotone_report("--seeds", "1,2", "--whole-runs", folders=(*AT_0_1, *self.FOLDERS))
        quoted = recorded.run_rows(report, labels)
        self.assertEqual(len(quoted), 12)
        self.assertEqual(recorded.run_rows(self.subsection, labels), quoted)
        fit = lambda label, seed: recorded.reading_of(self.runs[(label, seed)], "monotone")[0]
        cuts = []
        for density, percent in (("0.003", "0.3%"), ("0.005", "0.5%"), ("0.01", "1%")):
            at = [[fit(f"fixed-{density}{rate}", seed) for seed in SEEDS] for rate in ("-lr-0.2", "")]
            self.assertRegex(self.subtext, r"fixed {} (reaches 85% )?at {} and {} against {} and {}\b".format(
                percent, *at[0], *at[1]).replace(".", r"\."))
            cuts.append(sorted(cuts_at_0_2(self.runs, density)))
        self.assertIn("cuts of {}-{}%, {}-{}% and {}% on these two seeds".format(*cuts[0], *cuts[1], cuts[2][0]),
                      self.subtext)
        self.assertEqual(cuts[2][0], cuts[2][1])

    def test_the_doc_quotes_them_against_ddp(self):
        table = recorded.against_table(recorded.monotone_report("--seeds", "1,2", "--against", "ddp", "--whole-runs",
                                                                folders=(*self.FOLDERS, *DDP)))
        self.assertIn("\n".join(table), self.subsection)
        rows = recorded.against_rows(table)
        order = ("fixed-0.003-lr-0.2", "fixed-0.005-lr-0.2", "fixed-0.01-lr-0.2")
        iterations = [rows["iterations, monotone"][label].split(" ")[0] for label in order]
        tta = [rows["speedup, monotone"][label].split(" ")[0] for label in order]
        self.assertIn("need {}, {} and {} ddp's iterations by the fit, at {}, {} and {} ddp's TTA".format(
            *iterations, *tta), self.subtext)

    def test_best_accuracy_against_ddp_at_150_iterations(self):
        self.assertIn("ddp's ({:.2%} and {:.2%})".format(*(best_to(self.runs, "ddp", seed, 150) for seed in SEEDS)),
                      self.subtext)
        medians = {}
        for label in AT_0_2:
            gaps = gaps_to_ddp(self.runs, label)
            medians[label] = statistics.median(gaps)
            self.assertIn(f"| {label} | {gaps[0]:+.2f} | {gaps[1]:+.2f} | {medians[label]:+.2f} |", self.subsection)
        self.assertTrue(all(gap < -1 for gap in medians.values()))
        ranked = sorted(AT_0_2, key=medians.get, reverse=True)
        self.assertIn("No density at 0.2 brings the best accuracy at 150 iterations within a point of ddp's: "
                      "{} is {:.2f} points under by the median, {} {:.2f}, {} {:.2f}".format(
                          *(x for label in ranked for x in (PERCENT[label], -medians[label]))), self.subtext)


class FixedPointThreeOnFourSeeds(unittest.TestCase):
    """Fixed 0.3% at 0.2 on seeds 3 and 4, and over seeds 1 to 4 against
    fixed 0.5% at 0.2 by the criterion the screen file set before the
    runs; the rule at cost 0.04 against the best fixed density there."""
    NEW = "seeds-3-4-200-fixed-0.003-lr-0.2"
    FOLDERS = ("seeds-1-2-200-lr-0.2", "seeds-3-4-200-lr-0.2", AT_0_2["fixed-0.003-lr-0.2"], NEW,
               *FITTED_FOLDERS)
    SEEDS = (1, 2, 3, 4)

    @classmethod
    def setUpClass(cls):
        cls.section = recorded.doc_section(recorded.read(DOC), FOUR_SEEDS)
        cls.text = recorded.flowing(cls.section)
        cls.runs = recorded.gathered(cls.FOLDERS)

    def ratios(self, label):
        return paired_ratios(self.runs, label, seeds=self.SEEDS)

    def test_the_doc_quotes_seeds_3_and_4(self):
        report = recorded.monotone_report("--up-to", "200", "--against", "fixed-0.005-lr-0.2",
                                          folders=("seeds-3-4-200-lr-0.2", self.NEW))
        labels = ("fixed-0.005-lr-0.2", "fixed-0.003-lr-0.2")
        readings = recorded.run_rows(report, labels)
        self.assertEqual(len(readings), 4)
        self.assertEqual(recorded.run_rows(self.section, labels), readings)

    def test_the_runs_name_the_engine_the_doc_names(self):
        for seed in (3, 4):
            self.assertEqual(engine(self.NEW, "fixed-0.003-lr-0.2", seed), ("a140686", False))
        self.assertIn("with the engine of commit a140686 (as their manifests record)", self.text)

    def test_the_criterion(self):
        self.assertTrue(all(fit_to_200(self.runs, "fixed-0.003-lr-0.2", s) for s in self.SEEDS))
        ratios = self.ratios("fixed-0.003-lr-0.2")
        median = statistics.median(ratios)
        self.assertGreaterEqual(median, 1.0, "0.3% would be the best fixed density at 0.2: the doc says otherwise")
        self.assertIn(f"**0.5% stays the best fixed density at 0.2: over seeds 1 to 4 fixed 0.3% takes {median:.2f}x "
                      "its TTA by the fit**, {:.2f}x and {:.2f}x on seeds 3 and 4 after {:.2f}x and {:.2f}x on seeds 1 "
                      "and 2".format(*ratios[2:], *ratios[:2]), self.text)
        at = {(label, s): fit_to_200(self.runs, label, s)[0] for label in ("fixed-0.003-lr-0.2", "fixed-0.005-lr-0.2")
              for s in (3, 4)}
        self.assertIn("85% at iteration {} against {}, each iteration shorter; on seed 4 it reaches it at {} against "
                      "{}".format(at[("fixed-0.003-lr-0.2", 3)], at[("fixed-0.005-lr-0.2", 3)],
                                  at[("fixed-0.003-lr-0.2", 4)], at[("fixed-0.005-lr-0.2", 4)]), self.text)

    def test_the_doc_quotes_the_table_over_four_seeds(self):
        report = recorded.monotone_report("--seeds", "1,2,3,4", "--up-to", "200", "--against", "fixed-0.005-lr-0.2",
                                          folders=self.FOLDERS)
        start = report.index("| reading |")
        table = report[start:].split("\n\n")[0]
        self.assertIn(table, self.section)
        rule = self.ratios(FITTED)
        self.assertIn("against the best by median over seeds 1 to 4 it is {:.2f}x by the fit ({:.2f}x-{:.2f}x per "
                      "seed)".format(statistics.median(rule), min(rule), max(rule)), self.text)

    def test_the_doc_quotes_seed_4_s_misses_when_redrawn(self):
        noise = recorded.monotone_report("--up-to", "200", "--noise", "1000", folders=("seeds-3-4-200-lr-0.2", self.NEW))
        noise = noise.split("Each run's evaluations redrawn")[1]
        [fit] = [fit for label, seed, _, fit in recorded.run_rows(noise, ("fixed-0.003-lr-0.2",)) if seed == "4"]
        never = fit.split(", ")[-1].split(" of 1000 never")[0]
        self.assertIn(f"0.3%'s crossing on seed 4 misses 85% by iteration 200 in {never} of 1000 draws", self.text)

    def test_paper_tta_open_quotes_it(self):
        open_text = recorded.flowing(recorded.read(os.path.join("docs", "paper-tta-open.md")))
        self.assertIn(f"Fixed 0.3% at 0.2, run on seeds 3 and 4 too, took "
                      f"{statistics.median(self.ratios('fixed-0.003-lr-0.2')):.2f}x fixed 0.5%'s TTA over seeds 1 to 4, "
                      "so 0.5% stays the best fixed density at 0.2", open_text)


class SummaryDocs(unittest.TestCase):
    def test_the_summaries_and_paper_tta_open_quote_the_best_fixed_density_at_0_2(self):
        runs = recorded.gathered((*DensitiesAtTwiceTheRate.FOLDERS, *AT_0_1, *DDP))
        ratios = {label: statistics.median(paired_ratios(runs, label)) for label in NEW}
        self.assertEqual(best_at_0_2(runs), "fixed-0.005-lr-0.2")
        for doc, text in recorded.summary_texts().items():
            with self.subTest(doc=doc):
                self.assertIn("fixed 0.5% stays the best of 0.3%, 0.5% and 1% at 0.2 on those seeds (0.3% at "
                              f"{ratios['fixed-0.003-lr-0.2']:.2f}x its TTA, 1% at {ratios['fixed-0.01-lr-0.2']:.2f}x)",
                              text)
        open_text = recorded.flowing(recorded.read(os.path.join("docs", "paper-tta-open.md")))
        self.assertIn(f"fixed 0.3% and 1% at 0.2 took {ratios['fixed-0.003-lr-0.2']:.2f}x and "
                      f"{ratios['fixed-0.01-lr-0.2']:.2f}x its TTA by the fit", open_text)
        medians = [statistics.median(gaps_to_ddp(runs, label)) for label in AT_0_2]
        self.assertTrue(all(m < -1 for m in medians))
        self.assertIn(f"none of the three at 0.2 came within a point of ddp's best accuracy at 150 iterations "
                      f"({-max(medians):.2f}-{-min(medians):.2f} points under by the medians)", open_text)
        cuts = {d: cuts_at_0_2(runs, d) for d in ("0.003", "0.005", "0.01")}
        low = sorted(cuts["0.003"] + cuts["0.005"])
        self.assertIn(f"cut the iterations to 85% by {low[0]}-{low[-1]}% at 0.3% and 0.5% and by "
                      f"{cuts['0.01'][0]}% at 1%", open_text)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
