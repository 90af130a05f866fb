#!/usr/bin/env python3
"""The recorded CPU screen runs of docs/results/paper-tta-cpu-screen/ still
give what docs/paper-tta-resnet18-iterations.md quotes: ddp's readings on
the screen's seeds and every system's iterations and speedup against it
(analysis/monotone_tta.py --against ddp --whole-runs), the norms the
never-binding clip recorded, that it evaluates as no clipping does, and
the clipped runs' readings, clipped shares and best accuracies.
Standard library only.

    python3 tests/test_recorded_iterations.py [REPO_ROOT]
"""
import csv
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_recorded_results as recorded  # noqa: E402  (its ROOT reads the same argv)

DOC = os.path.join("docs", "paper-tta-resnet18-iterations.md")
# The folders the doc's ddp command reads, in its order.
AGAINST_DDP = ("250-fixed", "250:stellatrain-fill-80", "250-busy:fill-85-busy", "seed-1-250-soonest", "seed-3-250",
               "seed-3-200-fixed:fixed-0.01", "seed-5-250", "seed-5-250-fixed-0.01", "seeds-1-3-5-250-fixed-0.003",
               "seed-1-200-ddp",
               "seed-3-150-ddp", "seed-5-150-ddp")
CLIPPED = ("250-fixed:fixed-0.005", "seed-1-250-clip")
CLIP_LABELS = ("fixed-0.005-clip-2", "fixed-0.005-clip-3")


def screen(folder):
    return os.path.join(recorded.CPU_SCREEN, "resnet18-cpu-warmup-screen-" + folder)


def rows_of(text, labels):
    """(label, seed, first, monotone) rows of a run table for `labels`."""
    rows = []
    for line in text.splitlines():
        cells = recorded.table_cells(line) if line.startswith("| ") else []
        if len(cells) == 4 and cells[0].strip("`") in labels and cells[1].isdigit():
            rows.append((cells[0].strip("`"), *cells[1:]))
    return rows


def section(doc, heading):
    """From `heading` to the next ## heading."""
    start = doc.index(heading)
    following = doc.find("\n## ", start + 1)
    return doc[start:following if following >= 0 else len(doc)]


def evaluations(folder, label):
    with open(os.path.join(screen(folder), label, "eval.csv")) as f:
        return list(csv.DictReader(f))


def clipping(folder, label):
    with open(os.path.join(screen(folder), label, "manifest.json")) as f:
        return json.load(f)["summary"]["system_stats"]["clipping"]


class AgainstDdp(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        report = recorded.monotone_report("--against", "ddp", "--whole-runs", "--noise", "1000", folders=AGAINST_DDP)
        cls.report, cls.noise = report.split("Each run's evaluations redrawn")
        cls.section = section(recorded.read(DOC), "## ddp on the same seeds")

    def test_the_doc_quotes_ddp_s_readings_and_redraws(self):
        readings, redraws = rows_of(self.report, ("ddp",)), rows_of(self.noise, ("ddp",))
        self.assertEqual([r[1] for r in readings], ["1", "3", "5"])
        self.assertEqual(rows_of(self.section, ("ddp",)), readings + redraws)

    def test_the_prose_quotes_the_table(self):
        table = self.report[self.report.index("| quantity |"):]
        header = recorded.table_cells(table.splitlines()[0])
        row = dict(zip(header, recorded.table_cells(next(l for l in table.splitlines()
                                                             if l.startswith("| iterations, monotone |")))))
        text = recorded.flowing(self.section)
        for label, quoted in (("fixed-0.005", "fixed 0.5% needs {m} ddp's iterations ({r}x per seed)"),
                              ("soonest-0.1-busy-start-0.005", "the rule from 0.5% {m} ({r}x)"),
                              ("fixed-0.01", "fixed 1% needs {m} ({r}x)")):
            median, low_high = row[label].split(" ")
            self.assertIn(quoted.format(m=median, r=low_high.strip("()")), text)

    def test_the_doc_quotes_the_table_against_ddp(self):
        table = self.report[self.report.index("| quantity |"):].split("\n\n")[0].splitlines()
        self.assertEqual(len(table), 6)
        for line in table:
            self.assertIn(line, self.section)


    def test_the_summaries_quote_the_iterations_against_ddp(self):
        table = self.report[self.report.index("| quantity |"):].splitlines()
        header = recorded.table_cells(table[0])
        fit = dict(zip(header, recorded.table_cells(next(l for l in table if l.startswith("| iterations, monotone |")))))
        half, rule = (fit[label].split(" ") for label in ("fixed-0.005", "soonest-0.1-busy-start-0.005"))
        quoted = (f"fixed 0.5% needs {half[0]} ddp's iterations by the fit ({half[1].strip('()')}x per seed) and the "
                  f"rule from 0.5% {rule[0]} ({rule[1].strip('()')}x)")
        rows = {recorded.table_cells(l)[0]: dict(zip(header, recorded.table_cells(l))) for l in table[2:6]}
        whole = lambda quantity, reading, label: rows[f"{quantity}, {reading}"][label].split(" ")[0]
        rule_label = "soonest-0.1-busy-start-0.005"
        speedups = (f"at speedups of {float(whole('speedup', 'monotone', 'fixed-0.005')[:-1]):.0f}x and "
                    f"{float(whole('speedup', 'monotone', rule_label)[:-1]):.0f}x over ddp")
        first = (f"by the first evaluation they need {whole('iterations', 'first', 'fixed-0.005')} and "
                 f"{whole('iterations', 'first', rule_label)}, at "
                 f"{float(whole('speedup', 'first', 'fixed-0.005')[:-1]):.0f}x and "
                 f"{float(whole('speedup', 'first', rule_label)[:-1]):.0f}x")
        for doc, text in recorded.summary_texts().items():
            self.assertIn(quoted, text, doc)
            self.assertIn(speedups, text, doc)
            self.assertIn(first, text, doc)
        self.assertIn(f"fixed 0.5% needs {half[0]} ddp's iterations ({half[1].strip('()')}x per seed) and the rule "
                      f"from 0.5% {rule[0]}", recorded.flowing(recorded.read(os.path.join("docs", "paper-tta-open.md"))))


    def test_the_doc_quotes_best_accuracy_under_ddp_s(self):
        def best(folder, label):
            with open(os.path.join(screen(folder), "summary.json")) as f:
                return json.load(f)["systems"][label]["best_accuracy"]
        ddp = [best(f, "ddp") for f in ("seed-1-200-ddp", "seed-3-150-ddp", "seed-5-150-ddp")]
        rule = "soonest-0.1-busy-start-0.005"
        half = [best("250-fixed", "fixed-0.005"), best("seed-3-250", "fixed-0.005"), best("seed-5-250", "fixed-0.005")]
        rules = [best("seed-1-250-soonest", rule), best("seed-3-250", rule), best("seed-5-250", rule)]
        under = lambda ours: [f"{(d - o) * 100:.2f}" for o, d in zip(ours, ddp)]
        a, b = under(half), under(rules)
        self.assertIn(f"fixed 0.5% is {a[0]}, {a[1]} and {a[2]} points under ddp's on seeds 1, 3 and 5, the rule "
                      f"{b[0]}, {b[1]} and {b[2]}", recorded.flowing(self.section))


class Clipping(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.doc = recorded.read(DOC)
        cls.section = section(cls.doc, "## Local gradient clipping")

    def test_the_norms_table_is_the_never_binding_run_s(self):
        stats = clipping("seed-1-20-clip-1000", "fixed-0.005-clip-1000")
        self.assertEqual(stats["clipped_share"], 0.0)
        largest_means = sorted(stats["tensors"].items(), key=lambda kv: -kv[1]["mean_norm"])[:5]
        for name, tensor in largest_means:
            self.assertIn(f"| `{name}` | {tensor['mean_norm']:.2f} | {tensor['largest_norm']:.2f} |", self.section)

    def test_a_norm_that_never_binds_evaluates_as_no_clipping(self):
        clipped = evaluations("seed-1-20-clip-1000", "fixed-0.005-clip-1000")
        unclipped = evaluations("seed-1-20-fixed", "fixed-0.005")
        self.assertEqual(clipped, unclipped)
        longer = {r["iteration"]: r for r in evaluations("250-fixed", "fixed-0.005")}
        self.assertEqual([r["accuracy"] for r in clipped[:3]], [longer[r["iteration"]]["accuracy"] for r in clipped[:3]])
        last = float(clipped[-1]["accuracy"]), float(longer[clipped[-1]["iteration"]]["accuracy"])
        self.assertNotEqual(*last)  # the run's last evaluation, after its in-flight updates
        self.assertIn(f"Both read {last[0]:.2%} at iteration 20, where the 250-iteration run of fixed 0.5% read "
                      f"{last[1]:.2%}", recorded.flowing(self.section))
        self.assertIn(f"read {last[0]:.2%} at the end of a 20-iteration run and {last[1]:.2%} at iteration 20",
                      recorded.flowing(recorded.read(os.path.join("docs", "scenarios.md"))))

    def test_the_doc_quotes_the_clipped_runs(self):
        report = recorded.monotone_report(folders=CLIPPED)
        self.assertIn("Evaluations up to iteration 250; target 85%.", report)
        quoted = rows_of(report, ("fixed-0.005", *CLIP_LABELS))
        self.assertEqual(len(quoted), 3)
        self.assertEqual(rows_of(self.section, ("fixed-0.005", *CLIP_LABELS)), quoted)
        # Norm 2 against no clipping by the fit, unrounded, from the script's own readings.
        runs, _ = recorded.monotone_tta.gather([recorded.monotone_tta.folder_spec(screen(f)) for f in CLIPPED])
        fit = {label: recorded.monotone_tta.readings(runs[(label, 1)]["evaluations"], 0.85)["monotone"]
               for label in ("fixed-0.005", "fixed-0.005-clip-2")}
        ratio, iterations = (fit["fixed-0.005-clip-2"][i] / fit["fixed-0.005"][i] for i in (1, 0))
        self.assertIn(f"{ratio:.3f}x fixed 0.5%'s", recorded.flowing(self.section))
        self.assertIn(f"by iterations {fit['fixed-0.005-clip-2'][0]} against {fit['fixed-0.005'][0]}, {iterations:.3f}x)",
                      recorded.flowing(self.section))
        self.assertGreater(ratio, 0.95)  # the criterion's bound: not kept
        for label in CLIP_LABELS:
            stats = clipping("seed-1-250-clip", label)
            fc = stats["tensors"]["fc.weight"]
            with open(os.path.join(screen("seed-1-250-clip"), "summary.json")) as f:
                best = json.load(f)["systems"][label]["best_accuracy"]
            self.assertIn(f"| `{label}` | {stats['clipped_share']:.1%} | {fc['clipped_share']:.0%} | "
                          f"{fc['mean_norm']:.2f} | {fc['largest_norm']:.2f} | {best:.2%} |", self.section)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
