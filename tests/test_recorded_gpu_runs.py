#!/usr/bin/env python3
"""The recorded GPU runs of docs/results/paper-tta-gpu/ (kept because
remaking them needs a GPU) still give what the docs quote:
analysis/paper_tta_table.py's row for each folder and system is found,
character for character, in README.md's, docs/paper-tta.md's and
docs/paper-tta-resnet18.md's tables, and the per-seed TTAs, the rise of
the monotone fits after iteration 200 and the learning-rate pick that
docs/paper-tta-resnet18.md quotes are these runs'. Standard library only.

    python3 tests/test_recorded_gpu_runs.py [REPO_ROOT]
"""
import os
import statistics
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# Its ROOT reads the same argv.
from test_recorded_results import FINDINGS, ROOT, flowing, read, table_cells  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "analysis"))
import monotone_tta  # noqa: E402
import paper_tta_table  # noqa: E402
import run_folders  # noqa: E402

RECORDED = os.path.join(ROOT, "docs", "results", "paper-tta-gpu")
LINKS = ("fluct-115", "const-100", "const-500")
# The H200's systems, then the three run later on an H100 into the same folders.
H200_SYSTEMS = ("stellatrain-fill-80", "ddp", "warmup-fill-0.2")
H100_SYSTEMS = ("fill-85-busy", "soonest-0.1-busy", "soonest-0.1-busy-start-0.005")
STELLATRAIN = ("stellatrain-fill-80", *H100_SYSTEMS)
RESNET18_DOC = os.path.join("docs", "paper-tta-resnet18.md")
TUNE_LR = os.path.join(RECORDED, "resnet18-h100-fluct-115-tune-lr")


def recorded(link):
    return os.path.join(RECORDED, f"resnet18-h100-{link}")


# The three StellaTrain settings of ResNet-18's rows in README.md's table.
RESNET18_LABELS = ("stellatrain-fill-80", "fill-85-busy", "soonest-0.1-busy-start-0.005")


def table_row(link, label):
    return paper_tta_table.row(recorded(link), label)


def per_seed(folder, label):
    """summary.json's per-seed entries of `label` in a recorded folder."""
    return paper_tta_table.load(folder)["systems"][label]["per_seed"]


def per_seed_cell(link, label):
    """'5.91 (155), 6.21 (165), 7.28 (190)': each seed's TTA to 85% in simulated s (iteration)."""
    runs = per_seed(recorded(link), label)
    return ", ".join(f"{run['tta_s']:.2f} ({run['tta_iteration']})" for run in runs)


def best_range(link, label):
    runs = per_seed(recorded(link), label)
    best = [100 * run["best_accuracy"] for run in runs]
    return f"{min(best):.1f}-{max(best):.1f}%"


def per_seed_row(link):
    return f"| {link} | " + " | ".join(f"{per_seed_cell(link, label)}; best {best_range(link, label)}"
                                       for label in H100_SYSTEMS) + " |"


def fit_rise(link, label, seed, since=200):
    """How far the monotone fit of a run's evaluations (percent) rises from iteration `since` to its last."""
    iterations, _, accuracies, _ = run_folders.read_evaluations(os.path.join(recorded(link), label, f"seed-{seed}"))
    fitted = monotone_tta.isotonic_fit([100 * accuracy for accuracy in accuracies])
    return fitted[-1] - dict(zip(iterations, fitted))[since]


def rise_range(labels):
    rises = [fit_rise(link, label, seed) for link in LINKS for label in labels for seed in (1, 2, 3)]
    return f"{min(rises):.1f}-{max(rises):.1f}"


def validation_tta(label):
    """'5.40 s (iterations 135 and 145)': the median validation TTA of a tune-lr run and its seeds' iterations."""
    runs = per_seed(TUNE_LR, label)
    iterations = " and ".join(str(run["tta_iteration"]) for run in runs)
    return f"{statistics.median(run['tta_s'] for run in runs):.2f} s (iterations {iterations})"


class RecordedGpuRuns(unittest.TestCase):
    def test_every_link_has_a_summary_with_three_seeds(self):
        for link in LINKS:
            summary = paper_tta_table.load(recorded(link))
            self.assertEqual(summary["seeds"], [1, 2, 3], link)
            self.assertEqual(list(summary["systems"]), [*H200_SYSTEMS, *H100_SYSTEMS], link)

    def test_paper_tta_doc_quotes_the_rows_these_runs_give(self):
        doc = read(os.path.join("docs", "paper-tta.md"))
        for label in ("stellatrain-fill-80", "warmup-fill-0.2", *H100_SYSTEMS):
            for link in LINKS:
                row = table_row(link, label)
                self.assertIn(row, doc, f"docs/paper-tta.md lacks the row {row}")

    def test_readme_quotes_the_controller_rows(self):
        readme = read("README.md")
        for label in RESNET18_LABELS:
            for link in LINKS:
                row = table_row(link, label)
                self.assertIn(row, readme, f"README.md lacks the row {row}")

    def test_readme_s_short_version_spans_the_resnet18_rows(self):
        """README.md's "What the table says" quotes the span of ResNet-18's
        iterations ratios and of its best-accuracy gaps over its nine rows."""
        ratios, gaps = [], []
        for label in RESNET18_LABELS:
            for link in LINKS:
                cells = table_cells(table_row(link, label))
                ratios.append(float(cells[3]))
                ours, theirs = (float(a.rstrip("%")) for a in cells[5].split(" / "))
                gaps.append(theirs - ours)
        readme = flowing(read("README.md"))
        self.assertIn(f"StellaTrain needs {min(ratios):.2f}-{max(ratios):.2f}x ddp's iterations there", readme)
        self.assertIn(f"ResNet-18's are {min(gaps):.1f}-{max(gaps):.1f} points under", readme)

    def test_a_quoted_row_that_differs_is_caught(self):
        # The check compares whole rows: one changed digit is not in the doc.
        row = table_row("fluct-115", "stellatrain-fill-80")
        self.assertNotIn(row.replace("55.7x", "55.8x"), read(os.path.join("docs", "paper-tta.md")))

    def test_a_missing_folder_is_named(self):
        # load() exits with the message; nothing is printed before.
        with self.assertRaises(SystemExit) as caught:
            paper_tta_table.load(recorded("const-1000"))
        self.assertIn("resnet18-h100-const-1000", str(caught.exception))


class RecordedGpuRunsReadByTheFit(unittest.TestCase):
    """paper_tta_table.py --fit on the same folders: docs/paper-tta-resnet18.md
    quotes its rows, its first-evaluation speedup is the table's, and the
    fit's speedups are the ones docs/paper-tta-findings.md and docs/paper-tta.md quote."""

    def test_the_doc_quotes_the_fit_rows(self):
        doc = read(RESNET18_DOC)
        self.assertIn(paper_tta_table.FIT_HEADER, doc)
        for label in STELLATRAIN:
            for link in LINKS:
                row = paper_tta_table.fit_row(recorded(link), label)
                self.assertIn(row, doc, f"docs/paper-tta-resnet18.md lacks the row {row}")

    def test_the_first_reading_is_the_tables(self):
        for label in STELLATRAIN:
            for link in LINKS:
                fit = table_cells(paper_tta_table.fit_row(recorded(link), label))
                table = table_cells(table_row(link, label))
                self.assertEqual(fit[2], table[4], (link, label))  # the TTA speedup with its interval
                self.assertEqual(fit[4], table[3], (link, label))  # the iterations ratio

    def test_the_summaries_fit_speedup_is_the_scripts(self):
        # The summaries, rewritten by the H100's runs into these folders,
        # carry speedup_vs_ddp_fit; the script reads each eval.csv itself.
        for label in STELLATRAIN:
            for link in LINKS:
                cell = table_cells(paper_tta_table.fit_row(recorded(link), label))[3].split()[0]
                fit = paper_tta_table.load(recorded(link))["systems"][label]["speedup_vs_ddp_fit"]
                self.assertEqual(cell, f"{fit:.1f}x", (link, label))

    def test_the_quoted_fit_speedups(self):
        speedups = [table_cells(paper_tta_table.fit_row(recorded(link), "stellatrain-fill-80"))[3].split()[0]
                    for link in LINKS]
        self.assertEqual(speedups, ["61.0x", "59.8x", "21.3x"])
        self.assertIn("55.7x at fluct-115 (61.0x read by the monotone fit", flowing(read(FINDINGS)))
        self.assertIn("later at every link, 61.0x, 59.8x and 21.3x with 1.55-1.63x ddp's",
                      flowing(read(os.path.join("docs", "paper-tta.md"))))


class BusierControllerAndRuleOnH100(unittest.TestCase):
    """docs/paper-tta-resnet18.md, "The busier controller and the soonest-target rule, on an H100"."""

    def setUp(self):
        self.doc = read(RESNET18_DOC)
        self.flowed = flowing(self.doc)

    def test_the_per_seed_rows(self):
        for link in LINKS:
            self.assertIn(per_seed_row(link), self.doc)

    def test_three_seeds_of_250_iterations_each(self):
        for link in LINKS:
            for label in H100_SYSTEMS:
                runs = per_seed(recorded(link), label)
                self.assertEqual([run["seed"] for run in runs], [1, 2, 3], (link, label))
                self.assertEqual({run["iterations"] for run in runs}, {250}, (link, label))

    def test_the_accuracy_lag_is_quoted_from_the_fits(self):
        self.assertIn(f"still rises by {rise_range(STELLATRAIN)} points between iterations 200 and 250 "
                      f"(ddp's by {rise_range(('ddp',))};", self.flowed)
        # Every StellaTrain run still rises: the gap at 250 is no plateau.
        rises = [fit_rise(link, label, seed) for link in LINKS for label in STELLATRAIN for seed in (1, 2, 3)]
        self.assertGreater(min(rises), 0)

    def test_the_quoted_best_accuracies(self):
        medians = {label: table_cells(table_row("fluct-115", label))[5].split(" / ") for label in STELLATRAIN}
        self.assertEqual({ddp for _, ddp in medians.values()}, {"89.29%"})
        lows = sorted(float(own.rstrip("%")) for own, _ in medians.values())
        self.assertIn(f"(medians {lows[0]:.2f}-{lows[-1]:.2f}% against 89.29%)", self.flowed)
        rule = table_cells(table_row("const-500", "soonest-0.1-busy-start-0.005"))[5]
        self.assertEqual(rule, "88.48% / 89.26%")

    def test_the_prose_numbers(self):
        # Each figure the section's bullets quote, from the rows and summaries.
        cells = {(link, label): table_cells(table_row(link, label)) for link in LINKS for label in STELLATRAIN}
        speedup = {key: float(c[4].split("x")[0]) for key, c in cells.items()}
        ratio = speedup[("const-100", "fill-85-busy")] / speedup[("const-100", "stellatrain-fill-80")]
        self.assertIn(f"{ratio:.2f}x better at 100 Mbps", self.flowed)
        rule = "soonest-0.1-busy-start-0.005"
        use = ", ".join(cells[(link, rule)][6] for link in LINKS[:2]) + " and " + cells[(LINKS[2], rule)][6]
        self.assertIn(f"at {use} of the link", self.flowed)
        iteration_ratio = float(cells[("fluct-115", rule)][2].rstrip("x"))
        self.assertIn(f"at its {iteration_ratio:.0f}x iteration-time ratio 104x needs about "
                      f"{iteration_ratio / 104:.2f}x ddp's iterations, and it needs "
                      f"{cells[('fluct-115', rule)][3]}x", self.flowed)
        rule_its = [run["tta_iteration"] for run in per_seed(recorded("fluct-115"), rule)]
        ddp_its = [run["tta_iteration"] for run in per_seed(recorded("fluct-115"), "ddp")]
        self.assertIn(f"({min(rule_its)}-{max(rule_its)} against {min(ddp_its)}-{max(ddp_its)})", self.flowed)
        gaps = [float(own.rstrip("%")) for own, _ in (cells[("const-100", label)][5].split(" / ") for label in STELLATRAIN)]
        ddp_best = float(cells[("const-100", rule)][5].split(" / ")[1].rstrip("%"))
        self.assertIn(f"{ddp_best - max(gaps):.1f}-{ddp_best - min(gaps):.1f} at 100 Mbps", self.flowed)
        means = [run["mean_iteration_s"] * 1000 for link in LINKS for label in H100_SYSTEMS
                 for run in per_seed(recorded(link), label)]
        self.assertIn(f"150 more cost the three H100 systems {0.15 * min(means):.1f}-{0.15 * max(means):.1f} "
                      f"simulated seconds (at their {min(means):.1f}-{max(means):.1f} ms iterations)", self.flowed)
        ddp_tta = [run["tta_s"] for link in LINKS for run in per_seed(recorded(link), "ddp")]
        self.assertIn(f"against ddp's {min(ddp_tta):.0f}-{max(ddp_tta):.0f} s to 85%", self.flowed)

    def test_the_readme_quotes_the_rules_speedup(self):
        cell = table_cells(table_row("fluct-115", "soonest-0.1-busy-start-0.005"))[4]
        self.assertEqual(cell, "73.9x [69.1, 75.3]")
        for doc in ("README.md", FINDINGS):
            self.assertIn(f"73.9x [69.1, 75.3] at fluct-115, short of 104x by its 2.00x ddp's iterations",
                          flowing(read(doc)), doc)

    def test_what_is_open_quotes_these_rows(self):
        open_doc = flowing(read(os.path.join("docs", "paper-tta-open.md")))
        for label in ("fill-85-busy", "soonest-0.1-busy-start-0.005"):
            first, second, third = (table_cells(table_row(link, label))[4].split()[0] for link in LINKS)
            self.assertIn(f"{first}, {second} and {third}", open_doc, label)
        own, ddp = (float(cell.rstrip("%")) for cell in
                    table_cells(table_row("fluct-115", "soonest-0.1-busy-start-0.005"))[5].split(" / "))
        self.assertIn(f"its best accuracy is {ddp - own:.2f} points under ddp's by the medians", open_doc)


class LearningRateOnValidation(unittest.TestCase):
    """The busier controller's two rates on the validation set (the tune-lr file, seeds 1 and 2)."""

    def test_the_folder_ran_on_validation(self):
        with open(os.path.join(TUNE_LR, "scenario.yaml"), encoding="utf-8") as f:
            self.assertIn("eval: {on: validation", f.read())
        self.assertEqual(paper_tta_table.load(TUNE_LR)["seeds"], [1, 2])

    def test_the_pick_and_its_quote(self):
        runs = paper_tta_table.load(TUNE_LR)["systems"]
        fast = statistics.median(run["tta_s"] for run in runs["fill-85-busy"]["per_seed"])
        slow = statistics.median(run["tta_s"] for run in runs["fill-85-busy-lr-0.05"]["per_seed"])
        self.assertLess(fast, slow)  # 0.1, the test files' rate, stays
        self.assertIn(f"reached 85% in {validation_tta('fill-85-busy')} at the test files' 0.1 against "
                      f"{validation_tta('fill-85-busy-lr-0.05')} at 0.05", flowing(read(RESNET18_DOC)))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
