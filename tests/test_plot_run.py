#!/usr/bin/env python3
"""Tests for `stellatrain plot` (apps/plot_command.cc, analysis/plot_run.py,
analysis/tta.py, analysis/report_tables.py).

usage: test_plot_run.py PATH/TO/stellatrain   (ctest passes it)

Builds a small fake `stellatrain run` results tree in a temporary folder
(ddp with TTA, stellatrain with three seeds, topk-sync that never reaches the
target and has no link.csv), runs the command on it and checks every figure
(PNG magic bytes, SVG parses with an <svg> root), the report's table and
the error messages for broken folders. The tta.py and report_tables.py
helpers are tested directly. Needs only the standard library; the command finds its own python
with matplotlib (skipped when there is none).
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "analysis"))
import report_tables  # noqa: E402
import tta  # noqa: E402

STELLATRAIN = None  # set from argv
FIGURES = ("tta", "accuracy_vs_iteration", "iteration_time", "wan_throughput", "speedup", "controller")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
TARGET = 0.8


# --- the fake results tree -------------------------------------------------------


def read(path):
    with open(path) as f:
        return f.read()


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def fake_control(folder, duration):
    """control.csv as core/train/run/results.cc writes it: a tick every 0.25 s."""
    rows = []
    for tick in range(1, int(duration * 4)):
        second = tick * 0.25
        density = 0.05 + 0.01 * (tick % 4)
        measured = "" if tick % 5 == 0 else f"{90 + tick % 7:.3f}"
        rows.append(f"{second:.6f},{tick * 10},{tick * 10 + 3},{100 + tick:.3f},{measured},20.000,0.0100,"
                    f"36.000,14.400,{density:.6f},{64 + tick % 2};{64 - tick % 2}|64;64,95.000,\"measured\"")
    write(os.path.join(folder, "control.csv"),
          "time_s,iteration,effective_iteration,estimated_mbps,measured_mbps,latency_ms,wait_fraction,compute_ms,"
          "budget_ms,density,batch,delivered_mbps,reason\n" + "\n".join(rows) + "\n")


def fake_run(folder, iteration_s, tau_s, ceiling, links=True, iterations=200, eval_every=20, control=False):
    """One run folder: accuracy rises as ceiling * (1 - exp(-t / tau))."""
    header = ("rank,iteration,start_s,iteration_ms,wait_ms,forward_ms,backward_ms,gather_ms,compress_ms,"
              "exchange_ms,optimize_ms,pipeline_ms,bytes_sent,bytes_received,loss\n")
    rows = [f"0,{i},{i * iteration_s:.6f},{iteration_s * 1e3 * (1.5 if i % 2 else 0.5):.3f},0,1,1,0,0,1,0,0,100,100,1.0"
            for i in range(iterations)]
    write(os.path.join(folder, "iterations.csv"), header + "\n".join(rows) + "\n")
    evals = []
    for it in range(eval_every, iterations + 1, eval_every):
        t = it * iteration_s
        evals.append(f"{t:.6f},{it},{ceiling * (1 - math.exp(-t / tau_s)):.6f},0.5,200")
    write(os.path.join(folder, "eval.csv"), "time_s,iteration,accuracy,loss,samples\n" + "\n".join(evals) + "\n")
    duration = iterations * iteration_s
    write(os.path.join(folder, "manifest.json"),
          json.dumps({"system": os.path.basename(folder), "backend": "sim", "summary": {"duration_s": duration}}))
    if links:
        rows = []
        for direction, base in (("a->b", 100.0), ("b->a", 120.0)):
            for second in range(int(math.ceil(duration))):
                rate = base + 10 * (second % 3)
                rows.append(f"{second},{direction},{rate:.3f},{rate * 0.6:.3f},{int(rate * 0.6e6 / 8)}")
        write(os.path.join(folder, "link.csv"),
              "second,link,configured_mbps,delivered_mbps,delivered_bytes\n" + "\n".join(rows) + "\n")
    if control:
        fake_control(folder, duration)


def fake_results(root):
    """ddp (TTA), stellatrain (3 seeds, TTA), topk-sync (no TTA, no link.csv),
    broken (failed). The shape follows apps/run_summary.cc."""
    fake_run(os.path.join(root, "ddp"), 0.2, 12.0, 0.9)
    for seed in (1, 2, 3):
        fake_run(os.path.join(root, f"stellatrain-s{seed}"), 0.01, 0.5 + 0.1 * seed, 0.92, control=True)
    fake_run(os.path.join(root, "topk-sync"), 0.05, 5.0, 0.7, links=False)
    summary = {
        "scenario": "fake-2x2", "backend": "sim", "clock": "simulated seconds", "target_accuracy": TARGET,
        "seeds": [1, 2, 3], "speedup_reference": "ddp",
        "systems": {
            "ddp": {"tta_s": 28.0, "best_accuracy": 0.85, "iterations": 200, "wan_bytes": 1_500_000_000,
                    "mean_iteration_s": 0.2, "speedup_vs_ddp": 1.0, "runs": ["ddp"]},
            "stellatrain": {"tta_s": 1.6, "best_accuracy": 0.9123, "iterations": 200, "wan_bytes": 45_000_000,
                            "mean_iteration_s": 0.0105, "speedup_vs_ddp": 17.5,
                            "runs": ["stellatrain-s1", "stellatrain-s2", "stellatrain-s3"],
                            "per_seed": [{"seed": s, "run": f"stellatrain-s{s}", "tta_s": 1.2 + 0.2 * s,
                                          "best_accuracy": 0.91} for s in (1, 2, 3)]},
            "topk-sync": {"tta_s": None, "best_accuracy": 0.6951, "iterations": 200, "wan_bytes": 90_000_000,
                          "mean_iteration_s": 0.05, "speedup_vs_ddp": None, "runs": ["topk-sync"]},
            "broken": {"system": "topk-sync", "error": "seed 1: out of memory", "runs": ["broken"]},
        },
    }
    write(os.path.join(root, "summary.json"), json.dumps(summary, indent=1))
    return summary


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


# --- tta.py and report_tables.py -------------------------------------------------------


class TtaTest(unittest.TestCase):
    def test_time_to_accuracy_is_first_reaching_time(self):
        self.assertEqual(tta.time_to_accuracy([1, 2, 3, 4], [0.5, 0.8, 0.7, 0.9], 0.8), 2)
        self.assertIsNone(tta.time_to_accuracy([1, 2], [0.5, 0.6], 0.8))

    def test_seed_runs_of_several_seeds_and_of_one(self):
        several = {"seeds": [1, 2], "systems": {"s": {"per_seed": [
            {"seed": 1, "run": "s/seed-1", "tta_at": {"0.85": 2.0}},
            {"seed": 2, "run": "s/seed-2", "tta_at": {"0.85": None}}]}}}
        self.assertEqual([r["run"] for r in tta.seed_runs(several, "s")], ["s/seed-1", "s/seed-2"])
        # One seed: no per_seed list; the system entry is the run, in its folder.
        one = {"seeds": [7], "systems": {"s": {"best_accuracy": 0.9, "tta_iteration": 40,
                                               "targets": {"0.85": {"tta_s": 3.0}, "0.87": {"tta_s": None}}}}}
        [run] = tta.seed_runs(one, "s")
        self.assertEqual((run["seed"], run["run"], run["tta_at"], run["best_accuracy"], run["tta_iteration"]),
                         (7, "s", {"0.85": 3.0, "0.87": None}, 0.9, 40))
        self.assertEqual(tta.median_or_none([None, 3, 1]), 2)
        self.assertIsNone(tta.median_or_none([None]))

    def test_speedup_bound(self):
        self.assertEqual(tta.speedup_upper_bound(40.0, 10.0), 4.0)
        self.assertIsNone(tta.speedup_upper_bound(None, 10.0))

    def test_mean_band_interpolates_on_the_common_range(self):
        grid, mean, low, high = tta.mean_band([([0, 2, 4], [0, 2, 4]), ([1, 3, 5], [2, 4, 6])])
        self.assertEqual(grid, [1, 2, 3, 4])
        self.assertEqual(mean, [1.5, 2.5, 3.5, 4.5])
        self.assertEqual(low, [1, 2, 3, 4])
        self.assertEqual(high, [2, 3, 4, 5])

    def test_mean_band_single_series_unchanged(self):
        self.assertEqual(tta.mean_band([([1, 2], [0.1, 0.2])]), ([1, 2], [0.1, 0.2], [0.1, 0.2], [0.1, 0.2]))

    def test_rolling_median_even_window_steadies_alternation(self):
        values = [2, 20] * 10
        smooth = tta.rolling_median(values, tta.median_window(80))  # window 2
        self.assertEqual(set(smooth[1:-1]), {11.0})
        self.assertEqual(tta.rolling_median([5, 1, 9], 1), [5, 1, 9])
        self.assertEqual(tta.median_window(10), 1)
        self.assertEqual(tta.median_window(200), 6)
        self.assertEqual(tta.median_window(100000), 50)

    def test_same_configured_rate(self):
        a = {"a->b": {"second": [0, 1], "configured_mbps": [10, 20], "delivered_mbps": [1, 2]}}
        b = {"a->b": {"second": [0], "configured_mbps": [10], "delivered_mbps": [5]}}
        c = {"a->b": {"second": [0, 1], "configured_mbps": [10, 30], "delivered_mbps": [1, 2]}}
        self.assertTrue(tta.same_configured_rate([a, b]))
        self.assertFalse(tta.same_configured_rate([a, c]))

    def test_check_summary_rejects_bad_values(self):
        good = {"scenario": "s", "backend": "sim", "target_accuracy": 0.85, "systems": {
            "ddp": {"tta_s": None, "best_accuracy": 0.5, "iterations": 10, "wan_bytes": 0,
                    "mean_iteration_s": 0.1, "speedup_vs_ddp": None, "runs": ["ddp"]}}}
        tta.check_summary(good)
        for path, value, message in ((("backend",), "gpu", "backend"),
                                     (("target_accuracy",), 85, "target_accuracy"),
                                     (("systems", "ddp", "best_accuracy"), None, "systems.ddp.best_accuracy"),
                                     (("systems", "ddp", "iterations"), "10", "systems.ddp.iterations"),
                                     (("systems", "ddp", "runs"), [], "systems.ddp.runs")):
            bad = json.loads(json.dumps(good))
            node = bad
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = value
            with self.assertRaisesRegex(tta.InputError, message):
                tta.check_summary(bad)

    def test_table_rows(self):
        summary = {"systems": {"ddp": {"tta_s": 100.0, "best_accuracy": 0.9, "iterations": 5, "wan_bytes": 2e9,
                                       "mean_iteration_s": 1.0, "speedup_vs_ddp": None, "runs": ["a", "b"]},
                               "x": {"tta_s": 1.0, "best_accuracy": 0.9, "iterations": 5, "wan_bytes": 0,
                                     "mean_iteration_s": 0.001, "speedup_vs_ddp": 104.2, "runs": ["c"]}}}
        self.assertEqual(report_tables.table_rows(summary), [
            ["ddp", "100.00", "0.9000", "5", "2.000", "1000.0", "1.0x", "2"],
            ["x", "1.00", "0.9000", "5", "0.000", "1.0", "104x", "1"]])
        self.assertEqual(report_tables.format_count(1000000), "1000000")
        self.assertEqual(report_tables.format_count(150.5), "150.5")


class SeedTableTest(unittest.TestCase):
    """analysis/seed_table.py: README's table from a summary with report targets."""

    def test_rows_per_target_with_interval_and_width(self):
        summary = {"scenario": "s", "clock": "simulated seconds", "seeds": [1, 2, 3], "target_accuracy": 0.85,
                   "systems": {
                       "ddp": {"best_accuracy": 0.88, "wan_bytes": 1e9, "mean_iteration_s": 0.18,
                               "targets": {"0.8": {"tta_s": 20.0, "seeds_reaching": 3, "speedup_vs_ddp": 1.0,
                                                   "speedup_ci95": [1.0, 1.0]},
                                           "0.85": {"tta_s": None, "seeds_reaching": 1}}},
                       "st": {"best_accuracy": 0.885, "wan_bytes": 1.5e8, "mean_iteration_s": 0.037,
                              "targets": {"0.8": {"tta_s": 4.0, "seeds_reaching": 3, "speedup_vs_ddp": 5.0,
                                                  "speedup_ci95": [4.25, 6.0]},
                                          "0.85": {"tta_s": 5.5, "seeds_reaching": 3, "speedup_vs_ddp": None}}},
                       "broken": {"error": "seed 2: boom"}}}
        with tempfile.TemporaryDirectory() as out:
            with open(os.path.join(out, "summary.json"), "w") as f:
                json.dump(summary, f)
            text = subprocess.run([sys.executable, os.path.join(HERE, "..", "analysis", "seed_table.py"), out],
                                  check=True, capture_output=True, text=True).stdout
        lines = [line for line in text.splitlines() if line.startswith("| ")]
        self.assertEqual(lines[1], "| ddp | 80% | 20.00 | 3/3 | 1.00x [1.00, 1.00] (width 0.00) | 88.0% | 1.000 | 180.0 |")
        self.assertEqual(lines[2], "|  | 85% | - | 1/3 | - |  |  |  |")
        self.assertEqual(lines[3], "| st | 80% | 4.00 | 3/3 | 5.00x [4.25, 6.00] (width 1.75) | 88.5% | 0.150 | 37.0 |")
        self.assertEqual(lines[4], "|  | 85% | 5.50 | 3/3 | - |  |  |  |")
        self.assertTrue(lines[5].startswith("| broken | failed: seed 2: boom |"))

    def test_a_folder_without_summary_is_named(self):
        with tempfile.TemporaryDirectory() as out:
            result = subprocess.run([sys.executable, os.path.join(HERE, "..", "analysis", "seed_table.py"), out],
                                    capture_output=True, text=True)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("summary.json: missing", result.stderr)


class PaperTtaTableTest(unittest.TestCase):
    """analysis/paper_tta_table.py: one row per results folder, its ratios
    from the per-seed runs, the link's utilisation from link.csv, the TTA
    over the best fixed density's, and the seeds reaching when not all do."""

    @staticmethod
    def seed(label, seed, tta, iteration, mean_iteration_s, best=0.88):
        return {"seed": seed, "run": f"{label}/seed-{seed}", "tta_s": tta, "tta_iteration": iteration,
                "tta_at": {"0.85": tta}, "best_accuracy": best, "mean_iteration_s": mean_iteration_s}

    def folder(self, root, st_ttas):
        systems = {}
        per_system = {"ddp": ([20.0, 22.0, 24.0], 0.2), "st": (st_ttas, 0.02), "fixed-0.1": ([2.0, 2.2, 2.4], 0.02),
                      "fixed-0.3": ([None, 3.0, 3.0], 0.03)}
        for label, (ttas, mean_s) in per_system.items():
            runs = [self.seed(label, i + 1, t, None if t is None else int(t / mean_s), mean_s)
                    for i, t in enumerate(ttas)]
            for run in runs:
                fake_run(os.path.join(root, run["run"]), mean_s, 1.0, 0.9, iterations=150)
            systems[label] = {"per_seed": runs, "targets": {"0.85": {"speedup_vs_ddp": 9.5,
                                                                     "speedup_ci95": [8.0, 11.0]}}}
        summary = {"scenario": "cnn-h100-const-100", "seeds": [1, 2, 3], "target_accuracy": 0.85,
                   "systems": systems}
        write(os.path.join(root, "summary.json"), json.dumps(summary))

    def table(self, *folders):
        return subprocess.run([sys.executable, os.path.join(HERE, "..", "analysis", "paper_tta_table.py"), *folders],
                              check=True, capture_output=True, text=True).stdout.splitlines()

    def test_a_row_with_its_factors_and_the_best_fixed_density(self):
        with tempfile.TemporaryDirectory() as root:
            self.folder(root, [2.2, 2.4, 2.6])
            lines = self.table(f"{root}:st")
        self.assertEqual(len(lines), 3)
        # Iterations 0.2 / 0.02 s; to target 120 / 110; link.csv delivers 60% of its rate; the best
        # fixed density every seed reaches is 10% (2.2 s), 30% misses on one seed.
        self.assertEqual(lines[2], "| cnn-h100-const-100 (st) | 3 | 10.0x | 1.09 | 9.5x [8.0, 11.0] | 88.00% / 88.00% | "
                                   "60% | 1.09 (fixed-0.1) | 257.3x |")

    def test_seeds_that_miss_the_target_are_counted(self):
        with tempfile.TemporaryDirectory() as root:
            self.folder(root, [2.2, None, 2.6])
            row = self.table(f"{root}:st")[2]
        self.assertIn("| 9.5x [8.0, 11.0] (2/3 seeds reach) |", row)
        self.assertIn("| - |", row)  # no iterations ratio without every seed
        self.assertIn("| not reached (fixed-0.1) |", row)

    def keep_systems(self, folder, keep, ttas=None):
        """Leaves only the systems `keep` accepts in FOLDER's summary; `ttas`
        (label -> per-seed TTAs) replaces theirs."""
        summary_path = os.path.join(folder, "summary.json")
        summary = json.loads(open(summary_path).read())
        summary["systems"] = {k: v for k, v in summary["systems"].items() if keep(k)}
        for label, values in (ttas or {}).items():
            for run, value in zip(summary["systems"][label]["per_seed"], values):
                run["tta_s"], run["tta_at"] = value, {"0.85": value}
        write(summary_path, json.dumps(summary))

    def test_fixed_densities_from_another_folder(self):
        with tempfile.TemporaryDirectory() as variant, tempfile.TemporaryDirectory() as base:
            self.folder(variant, [2.2, 2.4, 2.6])
            self.folder(base, [2.2, 2.4, 2.6])
            # The variant's folder has no fixed densities of its own; its label is named in the row.
            self.keep_systems(variant, lambda k: not k.startswith("fixed-"))
            alone = self.table(f"{variant}:st")[2]
            beside = self.table(f"{variant}:st:{base}")[2]
        self.assertTrue(alone.startswith("| cnn-h100-const-100 (st) |"), alone)
        self.assertIn("| - | 257.3x |", alone)
        self.assertIn("| 1.09 (fixed-0.1) | 257.3x |", beside)

    def test_fixed_densities_from_several_folders(self):
        with tempfile.TemporaryDirectory() as variant, tempfile.TemporaryDirectory() as part, \
                tempfile.TemporaryDirectory() as other_part:
            for folder in (variant, part, other_part):
                self.folder(folder, [2.2, 2.4, 2.6])
            self.keep_systems(variant, lambda k: not k.startswith("fixed-"))
            self.keep_systems(part, lambda k: k == "fixed-0.1")
            # The other part's fixed 30% reaches on every seed, faster than fixed 10%.
            self.keep_systems(other_part, lambda k: k == "fixed-0.3", {"fixed-0.3": [1.4, 1.5, 1.6]})
            row = self.table(f"{variant}:st:{part},{other_part}")[2]
            self.assertIn("| 1.60 (fixed-0.3) | 257.3x |", row)  # 2.4 over fixed 30%'s median 1.5
            only_part = self.table(f"{variant}:st:{part}")[2]
            self.assertIn("| 1.09 (fixed-0.1) | 257.3x |", only_part)
            # A fixed density in two parts is ambiguous: refused, naming both folders.
            twice = subprocess.run([sys.executable, os.path.join(HERE, "..", "analysis", "paper_tta_table.py"),
                                    f"{variant}:st:{part},{part}"], capture_output=True, text=True)
        self.assertNotEqual(twice.returncode, 0)
        self.assertIn("fixed-0.1 is also in", twice.stderr)
        self.assertIn(part, twice.stderr)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    STELLATRAIN = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
