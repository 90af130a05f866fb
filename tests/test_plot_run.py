#!/usr/bin/env python3
"""Tests for `stellatrain plot` (apps/plot_command.cc, analysis/plot_run.py).

usage: test_plot_run.py PATH/TO/stellatrain   (ctest passes it)

Builds a small fake `stellatrain run` results tree (tests/fake_results.py)
in a temporary folder (ddp with TTA, stellatrain with three seeds,
topk-sync that never reaches the target and has no link.csv), runs the
command on it and checks every figure
(PNG magic bytes, SVG parses with an <svg> root), the report's table and
the error messages for broken folders. The helpers behind it (tta.py,
report_tables.py) are tested directly in tests/test_tta_tables.py. Needs
only the standard library; the command finds its own python with
matplotlib (skipped when there is none).
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from fake_results import fake_results, read, write  # noqa: E402

STELLATRAIN = None  # set from argv
FIGURES = ("tta", "accuracy_vs_iteration", "iteration_time", "wan_throughput", "speedup", "controller")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def plot(*args):
    return subprocess.run([STELLATRAIN, "plot", *args], capture_output=True, text=True, timeout=300)


def skip_without_matplotlib(result):
    if "needs matplotlib" in result.stderr or "needs python3" in result.stderr:
        raise unittest.SkipTest(result.stderr.strip())


# --- end to end ------------------------------------------------------------------------


class PlotCommandTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="plot-test-")
        cls.root = cls.tmp.name
        fake_results(cls.root)
        cls.result = plot(cls.root)
        skip_without_matplotlib(cls.result)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_exits_zero_with_progress(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)
        self.assertIn("plot: wrote", self.result.stderr)
        self.assertIn("report.md", self.result.stdout)
        self.assertNotIn("warning", self.result.stderr)  # the fake summary agrees with its eval.csv files

    def test_every_figure_is_a_valid_png_and_svg(self):
        for name in FIGURES:
            with self.subTest(figure=name):
                check_png(self, os.path.join(self.root, "figures", f"{name}.png"))
                check_svg(self, os.path.join(self.root, "figures", f"{name}.svg"))

    def test_report_table_has_the_summary_numbers(self):
        report = read(os.path.join(self.root, "report.md"))
        self.assertTrue(report.startswith("# fake-2x2 (sim backend)"), report[:80])
        self.assertIn("| system | TTA (s) | best accuracy | iterations | WAN GB | mean iteration (ms) | speedup vs ddp |",
                      report)
        self.assertIn("| ddp | 28.00 | 0.8500 | 200 | 1.500 | 200.0 | 1.0x | 1 |", report)
        self.assertIn("| stellatrain | 1.60 | 0.9123 | 200 | 0.045 | 10.5 | 17.5x | 3 |", report)
        self.assertIn("| topk-sync | no TTA | 0.6951 | 200 | 0.090 | 50.0 | - | 1 |", report)
        self.assertIn("| broken | failed | - | - | - | - | - | 1 |", report)
        self.assertIn("broken failed and is left out of the figures: seed 1: out of memory", report)
        self.assertIn("| stellatrain | 2 | 1.60 | 0.9100 |", report)  # per-seed table

    def test_report_embeds_each_figure_by_relative_link(self):
        report = read(os.path.join(self.root, "report.md"))
        for name in FIGURES:
            self.assertIn(f"(figures/{name}.png)", report)


class PlotOptionsTest(unittest.TestCase):
    def test_real_backend_without_links(self):
        """wan_bytes null, no link.csv, ddp without TTA: the rest is drawn,
        the WAN figure is left out with a note, speedups are lower bounds."""
        with tempfile.TemporaryDirectory(prefix="plot-test-") as root:
            summary = fake_results(root)
            summary["backend"] = "real"
            summary["systems"]["ddp"].update(tta_s=None, speedup_vs_ddp=None)
            summary["systems"]["stellatrain"].update(speedup_vs_ddp=None, speedup_vs_ddp_at_least=25.0)
            for label, entry in summary["systems"].items():
                entry["wan_bytes"] = None
                for run in entry["runs"]:
                    if os.path.exists(os.path.join(root, run, "link.csv")):
                        os.remove(os.path.join(root, run, "link.csv"))
            write(os.path.join(root, "summary.json"), json.dumps(summary))
            result = plot(root, "--format", "png")
            skip_without_matplotlib(result)
            self.assertEqual(result.returncode, 0, result.stderr)
            for name in FIGURES:
                exists = os.path.exists(os.path.join(root, "figures", f"{name}.png"))
                self.assertEqual(exists, name != "wan_throughput", name)
            report = read(os.path.join(root, "report.md"))
            self.assertTrue(report.startswith("# fake-2x2 (real backend)"))
            self.assertIn("| ddp | no TTA | 0.8500 | 200 | - | 200.0 | - | 1 |", report)
            self.assertIn("| stellatrain | 1.60 | 0.9123 | 200 | - | 10.5 | >= 25.0x | 3 |", report)
            self.assertIn("not drawn, no run folder has a link.csv", report)
            self.assertNotIn("wan_throughput.png", report)
            # ddp's eval.csv does reach the target, so the stated null is flagged
            self.assertIn("warning: ddp: summary.json gives no TTA for ddp", result.stderr)

    def test_timing_run_has_no_accuracy_figures(self):
        """A timing run (compute math: timing): eval.csv has no rows, the
        summary no TTA; the report says so and draws only time figures."""
        with tempfile.TemporaryDirectory(prefix="plot-test-") as root:
            summary = fake_results(root)
            summary["target_accuracy"] = 0.0
            for label, entry in summary["systems"].items():
                for key in ("tta_s", "best_accuracy", "speedup_vs_ddp", "speedup_vs_ddp_at_least",
                            "final_accuracy", "per_seed"):
                    entry.pop(key, None)
                entry.update(math="timing", samples_per_s=1000.0, duration_s=2.0,
                             iteration_speedup_vs_ddp=2.0 if label == "stellatrain" else 1.0)
                for run in entry["runs"]:
                    write(os.path.join(root, run, "eval.csv"), "time_s,iteration,accuracy,loss,samples\n")
            write(os.path.join(root, "summary.json"), json.dumps(summary))
            result = plot(root, "--format", "png")
            skip_without_matplotlib(result)
            self.assertEqual(result.returncode, 0, result.stderr)
            for name in ("tta", "accuracy_vs_iteration", "speedup"):
                self.assertFalse(os.path.exists(os.path.join(root, "figures", f"{name}.png")), name)
            self.assertTrue(os.path.exists(os.path.join(root, "figures", "iteration_time.png")))
            report = read(os.path.join(root, "report.md"))
            self.assertIn("timing run", report)
            self.assertIn("never accuracy", report)
            self.assertIn("| stellatrain | 200 | 10.5 | 2.00x |", report)

    def test_tta_disagreeing_with_eval_csv_is_noted(self):
        with tempfile.TemporaryDirectory(prefix="plot-test-") as root:
            summary = fake_results(root)
            summary["systems"]["ddp"]["tta_s"] = 40.0
            write(os.path.join(root, "summary.json"), json.dumps(summary))
            result = plot(root, "--format", "png")
            skip_without_matplotlib(result)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertIn("warning: ddp: summary.json gives TTA 40.00 s for ddp", result.stderr)
            report = read(os.path.join(root, "report.md"))
            self.assertIn("eval.csv gives TTA 28.00 s", report)
            self.assertIn("no link.csv for topk-sync", report)

    def test_out_and_format(self):
        with tempfile.TemporaryDirectory(prefix="plot-test-") as root:
            fake_results(root)
            figdir = os.path.join(root, "elsewhere", "figs")
            result = plot(root, "--out", figdir, "--format", "svg")
            skip_without_matplotlib(result)
            self.assertEqual(result.returncode, 0, result.stderr)
            for name in FIGURES:
                check_svg(self, os.path.join(figdir, f"{name}.svg"))
                self.assertFalse(os.path.exists(os.path.join(figdir, f"{name}.png")))
            report = read(os.path.join(root, "report.md"))
            self.assertIn("(elsewhere/figs/tta.svg)", report)


def check_png(test, path):
    test.assertTrue(os.path.isfile(path), f"{path} missing")
    with open(path, "rb") as f:
        test.assertEqual(f.read(8), PNG_MAGIC, f"{path} is not a PNG")


def check_svg(test, path):
    test.assertTrue(os.path.isfile(path), f"{path} missing")
    root = ET.parse(path).getroot()
    test.assertEqual(root.tag.rsplit("}", 1)[-1], "svg", f"{path}: root is {root.tag}")


# --- errors ------------------------------------------------------------------------------


class PlotErrorTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="plot-test-")
        self.root = self.tmp.name
        fake_results(self.root)

    def tearDown(self):
        self.tmp.cleanup()

    def expect_error(self, args, *fragments):
        result = plot(*args)
        skip_without_matplotlib(result)
        self.assertNotEqual(result.returncode, 0)
        self.assertNotIn("Traceback", result.stderr)
        for fragment in fragments:
            self.assertIn(fragment, result.stderr)

    def test_missing_dir(self):
        missing = os.path.join(self.root, "nope")
        self.expect_error([missing], missing, "no such directory")

    def test_missing_summary(self):
        os.remove(os.path.join(self.root, "summary.json"))
        self.expect_error([self.root], os.path.join(self.root, "summary.json"), "not found")

    def test_malformed_summary(self):
        write(os.path.join(self.root, "summary.json"), '{"scenario": "x",\n "backend": }')
        self.expect_error([self.root], "summary.json: line 2", "malformed JSON")

    def test_summary_missing_key(self):
        summary = json.loads(read(os.path.join(self.root, "summary.json")))
        del summary["systems"]["ddp"]["runs"]
        write(os.path.join(self.root, "summary.json"), json.dumps(summary))
        self.expect_error([self.root], "summary.json: systems.ddp: missing key 'runs'")

    def test_run_without_eval_csv(self):
        path = os.path.join(self.root, "stellatrain-s2", "eval.csv")
        os.remove(path)
        self.expect_error([self.root], path, "not found")

    def test_bad_value_names_file_and_line(self):
        path = os.path.join(self.root, "ddp", "eval.csv")
        lines = read(path).splitlines()
        lines[3] = "4.0,60,abc,0.5,200"
        write(path, "\n".join(lines) + "\n")
        self.expect_error([self.root], f"{path}: line 4: column accuracy")

    def test_bad_format(self):
        self.expect_error([self.root, "--format", "png,jpg"], "--format")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    STELLATRAIN = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
