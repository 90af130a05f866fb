#!/usr/bin/env python3
"""The recorded CPU screen runs of docs/results/paper-tta-cpu-screen/ still
give what docs/paper-tta-resnet18-rates.md quotes: fixed 0.5% at half and
twice its learning rate against it at 0.1 (readings, ratios, accuracies,
the criterion's outcome, the redrawn ranges, equal simulated times, the
early dip) and against ddp, on seeds 1 and 2 and then 3 to 5; best
accuracies against ddp's at 150 iterations; fixed 0.5% at 0.4; and the
summaries of it in docs/paper-tta-findings.md, docs/paper-tta.md and docs/paper-tta-open.md
(with the rule from 0.5% at 0.2's ratio, which
tests/test_recorded_rule_at_0_2.py checks in its own doc).
Standard library only.

    python3 tests/test_recorded_rates.py [REPO_ROOT]
"""
import json
import os
import statistics
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_recorded_results as recorded  # noqa: E402  (its ROOT reads the same argv)

DOC = os.path.join("docs", "paper-tta-resnet18-rates.md")
# Fixed 0.5% at half and twice its rate (0.1) on seeds 1 and 2: each label's folder.
OTHER_RATES = {"fixed-0.005-lr-0.05": "seeds-1-2-200-lr-0.05", "fixed-0.005-lr-0.2": "seeds-1-2-200-lr-0.2"}
SEEDS = (1, 2, 3, 4, 5)
# Per seed, fixed 0.5% at 0.1 (to 250 iterations), at 0.2 (to 200) and ddp (to 150-200).
AT_0_1 = ("250-fixed:fixed-0.005", "seed-2-250:fixed-0.005", "seed-3-250:fixed-0.005", "seed-4-250-fixed:fixed-0.005",
          "seed-5-250:fixed-0.005")
AT_0_2 = ("seeds-1-2-200-lr-0.2", "seeds-1-2-200-lr-0.2", "seeds-3-4-200-lr-0.2", "seeds-3-4-200-lr-0.2",
          "seed-5-200-lr-0.2")
DDP = ("seed-1-200-ddp", "seeds-2-4-150-ddp", "seed-3-150-ddp", "seeds-2-4-150-ddp", "seed-5-150-ddp")
# The rule from 0.5% at 0.2 on seeds 1 and 2, and at 0.1 on the same seeds (to 250 iterations).
RULE = "soonest-0.1-busy-start-0.005"
RULE_0_2 = RULE + "-lr-0.2"
RULE_0_2_FOLDER = "seeds-1-2-200-rule-lr-0.2"
RULE_0_1 = ("seed-1-250-soonest", "seed-2-250:" + RULE)


def unique(folders):
    return tuple(dict.fromkeys(folders))


def fit_to_200(runs, label, seed):
    """(iteration, time_s, evaluations after) of the run's monotone fit at 85%, read to iteration 200, or None."""
    return recorded.reading_of(runs[(label, seed)], "monotone", 200)


def expect_quoted_runs(test, report, labels, runs):
    """The test's section quotes the report's readings of `labels` (`runs`
    rows, as many as it must hold) and its `--against` table, whole."""
    readings = recorded.run_rows(report, labels)
    test.assertEqual(len(readings), runs)
    test.assertEqual(recorded.run_rows(test.section, labels), readings)
    test.assertIn("\n".join(recorded.against_table(report)), test.section)


def expect_quoted_pair(test, labels):
    """The test's section quotes its report's readings of two systems on
    seeds 1 and 2 and its `--against` table, whole."""
    expect_quoted_runs(test, test.report, labels, 4)


def engine(folder, label, seed=None):
    """(commit, modified) of the engine a recorded run's manifest names; `seed` for a folder of several seeds."""
    run = os.path.join(recorded.screen_folder(folder), label, *([f"seed-{seed}"] if seed else []))
    with open(os.path.join(run, "manifest.json")) as f:
        build = json.load(f)["build"]
    return build["commit"][:7], build["modified"]


class OtherRates(unittest.TestCase):
    # Fixed 0.5% at 0.1 on seeds 1 and 2, then the two rates' folders.
    FOLDERS = ("250-fixed:fixed-0.005", "seed-2-200-fixed:fixed-0.005", *OTHER_RATES.values())

    @classmethod
    def setUpClass(cls):
        whole = recorded.doc_section(recorded.read(DOC), "## Fixed 0.5% at other rates")
        cls.section = whole.split("### Seeds 3 to 5")[0]
        cls.text = recorded.flowing(cls.section)
        cls.report = recorded.monotone_report("--up-to", "200", "--noise", "1000", folders=cls.FOLDERS)
        cls.labels = ("fixed-0.005", *OTHER_RATES)
        cls.runs = recorded.gathered(cls.FOLDERS)

    def evaluations(self, label, seed):
        """The run's (iterations, times, accuracies, samples), to iteration 200."""
        return recorded.monotone_tta.up_to(self.runs[(label, seed)]["evaluations"], 200)

    def accuracies(self, label, seed):
        """{iteration: accuracy} of the run, to iteration 200."""
        iterations, _, accuracies, _ = self.evaluations(label, seed)
        return dict(zip(iterations, accuracies))

    def fit(self, label, seed):
        """(iteration, time_s, evaluations after) of the monotone fit's crossing, to iteration 200, or None."""
        return fit_to_200(self.runs, label, seed)

    def test_the_doc_quotes_the_readings_and_the_ratios_to_fixed_0_5(self):
        self.assertIn("Evaluations up to iteration 200; target 85%.", self.report)
        readings = self.report.split("Each run's evaluations redrawn")[0]
        quoted = recorded.run_rows(readings, self.labels)
        self.assertEqual(len(quoted), 6)
        self.assertEqual(recorded.run_rows(self.section, self.labels), quoted)
        against = recorded.against_table(recorded.monotone_report("--up-to", "200", "--against", "fixed-0.005",
                                                              folders=self.FOLDERS))
        self.assertEqual(len(against), 6)
        for line in against[2:]:
            self.assertIn(line, self.section)

    def test_the_doc_quotes_the_accuracies(self):
        for label in self.labels:
            for seed in (1, 2):
                accuracy = self.accuracies(label, seed)
                self.assertIn(f"| {label} | {seed} | {accuracy[50]:.2%} | {accuracy[100]:.2%} | "
                              f"{accuracy[150]:.2%} | {max(accuracy.values()):.2%} |", self.section)

    def test_the_criterion_keeps_0_2(self):
        """Kept: median fit TTA at most 0.95x fixed 0.5%'s with median best
        accuracy at most 0.3 points under, over seeds 1 and 2."""
        median_best = {label: statistics.median(max(self.accuracies(label, seed).values()) for seed in (1, 2))
                       for label in self.labels}
        ratios = {}
        for label in OTHER_RATES:
            fits = [self.fit(label, seed) for seed in (1, 2)]
            if None not in fits:
                ratios[label] = statistics.median(fit[1] / self.fit("fixed-0.005", seed)[1]
                                                  for seed, fit in zip((1, 2), fits))
        kept = [label for label, ratio in ratios.items()
                if ratio <= 0.95 and median_best[label] >= median_best["fixed-0.005"] - 0.003]
        self.assertEqual(kept, ["fixed-0.005-lr-0.2"])
        self.assertNotIn("fixed-0.005-lr-0.05", ratios)  # missed 85% on a seed
        self.assertIn(f"0.2 is kept: by the fit its TTA is {ratios['fixed-0.005-lr-0.2']:.2f}x fixed 0.5%'s at 0.1**",
                      self.text)
        crossings = [[self.fit(label, seed)[0] for seed in (1, 2)] for label in ("fixed-0.005-lr-0.2", "fixed-0.005")]
        self.assertIn("reaching 85% at iterations {} and {} where 0.1 reaches it at {} and {}".format(
            *crossings[0], *crossings[1]), self.text)
        gain = (median_best["fixed-0.005-lr-0.2"] - median_best["fixed-0.005"]) * 100
        self.assertIn(f"best accuracy {gain:.2f} points higher by the medians", self.text)
        under = [(max(self.accuracies("fixed-0.005", seed).values()) -
                  max(self.accuracies("fixed-0.005-lr-0.05", seed).values())) * 100 for seed in (1, 2)]
        self.assertIn(f"its best is {under[0]:.2f} and {under[1]:.2f} points under 0.1's", self.text)

    def test_the_doc_quotes_the_redrawn_ranges(self):
        noise = self.report.split("Each run's evaluations redrawn")[1]
        ranges = {(label, int(seed)): fit.split("90% ")[1].split(",")[0]
                  for label, seed, _, fit in recorded.run_rows(noise, self.labels)}
        self.assertIn("its crossings' 90% ranges are {} and {} iterations, against {} and {} at 0.1".format(
            ranges[("fixed-0.005-lr-0.2", 1)], ranges[("fixed-0.005-lr-0.2", 2)], ranges[("fixed-0.005", 1)],
            ranges[("fixed-0.005", 2)]), self.text)

    def test_every_rate_takes_the_same_simulated_time(self):
        for seed in (1, 2):
            reference = self.evaluations("fixed-0.005", seed)[1]
            for label in OTHER_RATES:
                times = self.evaluations(label, seed)[1]
                self.assertEqual(len(times), len(reference))
                for t, ref in zip(times, reference):
                    self.assertAlmostEqual(t, ref, places=5)
        self.assertIn("Each iteration takes the same simulated time at every rate", self.text)

    def test_the_doc_quotes_where_0_2_dips_and_overtakes(self):
        quoted = []
        for seed in (1, 2):
            fast, slow = self.accuracies("fixed-0.005-lr-0.2", seed), self.accuracies("fixed-0.005", seed)
            low = min((fast[i], i) for i in fast if 40 <= i <= 100)
            last_behind = max(i for i in fast if fast[i] < slow[i])
            quoted.append((low, slow[low[1]], last_behind + 5))
            behind_05 = self.accuracies("fixed-0.005-lr-0.05", seed)
            self.assertTrue(all(behind_05[i] < slow[i] for i in (50, 100, 150)))
        (low_1, slow_1, from_1), (low_2, slow_2, from_2) = quoted
        self.assertIn(f"seed 1 to {low_1[0]:.2%} at iteration {low_1[1]} and seed 2 to {low_2[0]:.2%} at "
                      f"{low_2[1]}, against {slow_1:.2%} and {slow_2:.2%} at 0.1. From iteration {from_1} on "
                      f"(seed 1) and {from_2} on (seed 2) 0.2 is at or ahead of 0.1 at every evaluation", self.text)

    def test_the_doc_quotes_0_2_against_ddp(self):
        table = recorded.against_table(recorded.monotone_report("--seeds", "1,2", "--against", "ddp", "--whole-runs",
                                                            folders=("250-fixed:fixed-0.005", "seed-2-250:fixed-0.005",
                                                                     OTHER_RATES["fixed-0.005-lr-0.2"],
                                                                     "seed-1-200-ddp", "seeds-2-4-150-ddp")))
        for line in table[2:]:
            self.assertIn(line, self.section)
        rows = recorded.against_rows(table)
        iterations, speedup = rows["iterations, monotone"], rows["speedup, monotone"]
        self.assertIn(f"fixed 0.5% at 0.2 needs {iterations['fixed-0.005-lr-0.2']} ddp's iterations by the fit, where "
                      f"at 0.1 it needs {iterations['fixed-0.005']}, at a speedup of {speedup['fixed-0.005-lr-0.2']} "
                      f"over ddp ({speedup['fixed-0.005']} at 0.1)", self.text)



class SeedsThreeToFive(unittest.TestCase):
    LABELS = ("fixed-0.005", "fixed-0.005-lr-0.2")
    # Read to iteration 200, seed 2's fixed 0.5% at 0.1 as the criterion read it.
    TO_200 = ("250-fixed:fixed-0.005", "seed-2-200-fixed:fixed-0.005", *AT_0_1[2:], *unique(AT_0_2))

    @classmethod
    def setUpClass(cls):
        cls.section = recorded.doc_section(recorded.read(DOC), "### Seeds 3 to 5")
        cls.text = recorded.flowing(cls.section)
        cls.report = recorded.monotone_report("--up-to", "200", "--against", "fixed-0.005",
                                              folders=unique((*AT_0_1[2:], *AT_0_2[2:])))
        cls.five_to_200 = recorded.monotone_report("--up-to", "200", "--against", "fixed-0.005", folders=cls.TO_200)
        cls.five = recorded.monotone_report("--against", "ddp", "--whole-runs",
                                            folders=unique((*AT_0_1, *AT_0_2, *DDP)))
        cls.runs = recorded.gathered(unique((*AT_0_1, *AT_0_2, *DDP)))

    def test_the_doc_quotes_the_readings_and_the_ratios_to_0_1(self):
        readings = recorded.run_rows(self.report, self.LABELS)
        self.assertEqual([(label, seed) for label, seed, *_ in readings],
                         [(label, str(seed)) for label in self.LABELS for seed in (3, 4, 5)])
        self.assertEqual(recorded.run_rows(self.section, self.LABELS), readings)
        for report in (self.report, self.five_to_200):
            self.assertIn("\n".join(recorded.against_table(report)), self.section)
        crossings = {label: [int(it.split("it ")[1].split(",")[0]) for lab, _, _, it in readings if lab == label]
                     for label in self.LABELS}
        self.assertIn("{}, {} and {} iterations to 85% on seeds 3 to 5 against {}, {} and {} at 0.1".format(
            *crossings["fixed-0.005-lr-0.2"], *crossings["fixed-0.005"]), self.text)
        speedup = recorded.against_rows(recorded.against_table(self.five_to_200))["speedup, monotone"]
        median, spread = speedup["fixed-0.005-lr-0.2"].split(" ")
        self.assertIn(f"over the five seeds a speedup of {median} ({spread.strip('()')}x per seed) by the fit",
                      self.text)
        self.assertGreater(float(spread.strip("()").split("-")[0]), 1.0)  # faster on every seed

    def test_the_doc_quotes_five_seeds_against_ddp(self):
        self.assertIn("Against ddp on seeds 1, 2, 3, 4, 5", self.five)
        table = recorded.against_table(self.five)
        self.assertIn("\n".join(table), self.section)
        rows = recorded.against_rows(table)
        iterations, speedup = rows["iterations, monotone"], rows["speedup, monotone"]
        ours = speedup["fixed-0.005-lr-0.2"].split(" ")[0]
        first_it, first_tta = (rows[q]["fixed-0.005-lr-0.2"].split(" ")[0] for q in ("iterations, first",
                                                                                    "speedup, first"))
        self.assertIn(f"By the first evaluation it needs {first_it}, at {first_tta}", self.text)
        self.assertIn(f"Over the five seeds it needs {iterations['fixed-0.005-lr-0.2']} ddp's iterations by the fit "
                      f"against {iterations['fixed-0.005']} at 0.1, at {ours} ddp's TTA against "
                      f"{speedup['fixed-0.005'].split(' ')[0]}", self.text)
        fit = lambda label, seed: recorded.monotone_tta.readings(self.runs[(label, seed)]["evaluations"], 0.85)
        above = sum(fit("fixed-0.005-lr-0.2", seed)["monotone"][0] / fit("ddp", seed)["monotone"][0] > 1.5
                    for seed in SEEDS)
        self.assertLessEqual(float(iterations["fixed-0.005-lr-0.2"].split("x")[0]), 1.5)
        seeds = "seed" if above == 1 else "seeds"
        self.assertIn(f"within the 1.5x of ddp's iterations asked by the median ({recorded_words(above)} {seeds} of "
                      "five above it)", self.text)
        past = float(ours.rstrip("x")) / 104
        self.assertIn(f"past the paper's 104x by the median, by {(past - 1) * 100:.0f}%", self.text)


    def test_seed_5_names_the_engine_the_doc_names(self):
        self.assertEqual(engine(AT_0_2[4], "fixed-0.005-lr-0.2"), ("a8548a3", False))
        self.assertIn("the same engine of commit a8548a3 as its manifest records", self.text)


def best_to(runs, label, seed, iteration):
    """The run's best evaluation to `iteration` (which it must reach)."""
    iterations, _, accuracies, _ = recorded.monotone_tta.up_to(runs[(label, seed)]["evaluations"], iteration)
    assert iterations[-1] == iteration, (label, seed, iteration)
    return max(accuracies)


class BestAgainstDdp(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.section = recorded.doc_section(recorded.read(DOC), "### Best accuracy against ddp's, at 150 iterations")
        cls.text = recorded.flowing(cls.section)
        cls.runs = recorded.gathered(unique((*AT_0_1, *AT_0_2, *DDP)))

    @staticmethod
    def gaps(runs):
        """{label: [points against ddp's best to iteration 150, per seed]}."""
        return {label: [(best_to(runs, label, seed, 150) - best_to(runs, "ddp", seed, 150)) * 100 for seed in SEEDS]
                for label in SeedsThreeToFive.LABELS}

    @classmethod
    def median_gaps(cls):
        gaps = cls.gaps(recorded.gathered(unique((*AT_0_1, *AT_0_2, *DDP))))
        return {label: statistics.median(g) for label, g in gaps.items()}

    def test_the_doc_quotes_best_accuracies_against_ddp_at_150_iterations(self):
        gaps = self.gaps(self.runs)
        for i, seed in enumerate(SEEDS):
            cells = [f"{best_to(self.runs, 'ddp', seed, 150):.2%}"]
            cells += [f"{best_to(self.runs, label, seed, 150):.2%} ({gaps[label][i]:+.2f})"
                      for label in SeedsThreeToFive.LABELS]
            self.assertIn(f"| {seed} | " + " | ".join(cells) + " |", self.section)
        medians = {label: statistics.median(g) for label, g in gaps.items()}
        self.assertIn(f"| median | | {medians['fixed-0.005']:+.2f} | {medians['fixed-0.005-lr-0.2']:+.2f} |",
                      self.section)
        closer = sum(a > b for a, b in zip(gaps["fixed-0.005-lr-0.2"], gaps["fixed-0.005"]))
        self.assertIn(f"{-medians['fixed-0.005-lr-0.2']:.2f} points under ddp's by the median where 0.1 is "
                      f"{-medians['fixed-0.005']:.2f} under, closer on {recorded_words(closer)} seeds of five", self.text)
        self.assertTrue(all(gap < -1 for gap in gaps["fixed-0.005-lr-0.2"]))
        self.assertIn("still more than a point under on every seed", self.text)
        to_200 = [best_to(self.runs, "fixed-0.005-lr-0.2", seed, 200) for seed in SEEDS]
        self.assertIn(f"its best to 200 is {min(to_200) * 100:.2f}-{max(to_200):.2%} at 0.2", self.text)
        stopped = sum(self.runs[("ddp", seed)]["evaluations"][0][-1] == 150 for seed in SEEDS)
        self.assertIn(f"ddp's stop there on {recorded_words(stopped)} seeds of five", self.text)


def recorded_words(n):
    return ("none", "one", "two", "three", "four", "five")[n]


class FourTimesTheRate(unittest.TestCase):
    """Fixed 0.5% at 0.4 against 0.2 on seeds 1 and 2, by the criterion
    the screen file set before the runs."""
    FOLDERS = (OTHER_RATES["fixed-0.005-lr-0.2"], "seeds-1-2-200-lr-0.4")
    LABELS = ("fixed-0.005-lr-0.2", "fixed-0.005-lr-0.4")

    @classmethod
    def setUpClass(cls):
        cls.section = recorded.doc_section(recorded.read(DOC), "### Fixed 0.5% at 0.4")
        cls.text = recorded.flowing(cls.section)
        cls.report = recorded.monotone_report("--up-to", "200", "--against", "fixed-0.005-lr-0.2", folders=cls.FOLDERS)
        cls.runs = recorded.gathered(cls.FOLDERS)

    def evaluations(self, label, seed):
        return recorded.monotone_tta.up_to(self.runs[(label, seed)]["evaluations"], 200)

    def test_the_doc_quotes_the_readings_and_the_ratios(self):
        expect_quoted_pair(self, self.LABELS)

    def test_the_criterion(self):
        fits = {(label, seed): fit_to_200(self.runs, label, seed) for label in self.LABELS for seed in (1, 2)}
        best = {label: statistics.median(max(self.evaluations(label, seed)[2]) for seed in (1, 2))
                for label in self.LABELS}
        under = (best["fixed-0.005-lr-0.2"] - best["fixed-0.005-lr-0.4"]) * 100
        if any(fits[("fixed-0.005-lr-0.4", seed)] is None for seed in (1, 2)):
            self.assertIn("**0.4 is not kept: it misses 85% within 200 iterations", self.text)
            return
        ratio = statistics.median(fits[("fixed-0.005-lr-0.4", seed)][1] / fits[("fixed-0.005-lr-0.2", seed)][1]
                                  for seed in (1, 2))
        kept = ratio <= 0.95 and under <= 0.3
        verdict = "kept" if kept else "not kept"
        self.assertIn(f"**0.4 is {verdict}: by the fit its TTA is {ratio:.2f}x fixed 0.5%'s at 0.2** with a median "
                      f"best accuracy {abs(under):.2f} points {'under' if under > 0 else 'over'}", self.text)
        bests = [max(self.evaluations(label, seed)[2]) for label in reversed(self.LABELS) for seed in (1, 2)]
        self.assertIn("({:.2%} and {:.2%} against {:.2%} and {:.2%})".format(*bests), self.text)
        self.assertIn("It reaches 85% at iterations {} and {}, where 0.2 reaches it at {} and {}".format(
            *(fits[(label, seed)][0] for label in reversed(self.LABELS) for seed in (1, 2))), self.text)

    def test_0_2_is_faster_than_0_4_on_each_seed(self):
        for seed in (1, 2):
            fits = [fit_to_200(self.runs, label, seed) for label in self.LABELS]
            self.assertLess(fits[0][1], fits[1][1])
        self.assertIn("on these two seeds it is faster by the fit than both 0.1 and 0.4, each seed alike", self.text)

    def test_the_runs_name_the_engine_the_doc_names(self):
        for seed in (1, 2):
            self.assertEqual(engine(self.FOLDERS[1], "fixed-0.005-lr-0.4", seed), ("a140686", False))
        self.assertIn("with the engine of commit a140686 (as their manifests record", self.text)


class SummaryDocs(unittest.TestCase):
    def test_the_summaries_quote_0_2_and_the_rule(self):
        five = recorded.against_rows(recorded.against_table(recorded.monotone_report(
            "--against", "ddp", "--whole-runs", folders=unique((*AT_0_1, *AT_0_2, *DDP)))))
        iterations, spread = five["iterations, monotone"]["fixed-0.005-lr-0.2"].split(" ")
        tta = float(five["speedup, monotone"]["fixed-0.005-lr-0.2"].split("x")[0])
        first_it = five["iterations, first"]["fixed-0.005-lr-0.2"].split(" ")[0]
        first_tta = float(five["speedup, first"]["fixed-0.005-lr-0.2"].split("x")[0])
        over_0_1 = recorded.against_rows(recorded.against_table(recorded.monotone_report(
            "--up-to", "200", "--against", "fixed-0.005", folders=SeedsThreeToFive.TO_200)))
        gain = over_0_1["speedup, monotone"]["fixed-0.005-lr-0.2"].split(" ")[0]
        runs = recorded.gathered((OTHER_RATES["fixed-0.005-lr-0.2"], RULE_0_2_FOLDER))
        fit_s = lambda label, seed: fit_to_200(runs, label, seed)[1]
        rule_ratio = statistics.median(fit_s(RULE_0_2, seed) / fit_s("fixed-0.005-lr-0.2", seed) for seed in (1, 2))
        open_text = recorded.flowing(recorded.read(os.path.join("docs", "paper-tta-open.md")))
        at_0_1 = five["iterations, monotone"]["fixed-0.005"].split(" ")[0]
        tta_0_1 = float(five["speedup, monotone"]["fixed-0.005"].split("x")[0])
        self.assertIn(f"fixed 0.5% needs {iterations} ddp's iterations by the fit over the five seeds "
                      f"({spread.strip('()')}x per seed), where at 0.1 it needs {at_0_1}, at {tta:.0f}x ddp's TTA "
                      f"({tta_0_1:.0f}x at 0.1)", open_text)
        first_it = five["iterations, first"]["fixed-0.005-lr-0.2"].split(" ")[0]
        self.assertIn(f"by the first evaluation it needs {first_it}, at {first_tta:.0f}x", open_text)
        gain_cell = over_0_1["speedup, monotone"]["fixed-0.005-lr-0.2"].split(" ")
        self.assertIn(f"over the five seeds {gain_cell[0]} ({gain_cell[1].strip('()')}x per seed) by the fit",
                      open_text)
        gaps = BestAgainstDdp.median_gaps()
        self.assertIn(f"At 150 iterations its best accuracy is still {-gaps['fixed-0.005-lr-0.2']:.2f} points under "
                      f"ddp's by the median ({-gaps['fixed-0.005']:.2f} at 0.1", open_text)
        per_seed = [fit_s(RULE_0_2, seed) / fit_s("fixed-0.005-lr-0.2", seed) for seed in (1, 2)]
        self.assertIn(f"took {rule_ratio:.2f}x fixed 0.5%'s TTA at 0.2 on seeds 1 and 2 ({per_seed[0]:.2f}x and "
                      f"{per_seed[1]:.2f}x)", open_text)
        for doc, text in recorded.summary_texts().items():
            with self.subTest(doc=doc):
                self.assertIn(f"fixed 0.5% needs {iterations} ddp's iterations by the fit over the five seeds "
                              f"({spread.strip('()')}x per seed), at {tta:.0f}x ddp's TTA, and is faster than at 0.1 "
                              f"on every seed ({gain} by the fit), though by the first evaluation it needs "
                              f"{first_it}, at {first_tta:.0f}x; the rule from 0.5% at 0.2 takes {rule_ratio:.2f}x "
                              "fixed 0.5%'s TTA at 0.2 on two seeds, just outside the 1.1x", text)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
