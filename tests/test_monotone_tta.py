#!/usr/bin/env python3
"""Tests for analysis/monotone_tta.py: TTA read at the first evaluation
reaching the target and from the monotone (isotonic) fit of the
evaluations, over runs gathered from several results folders.
Builds results folders in a temporary directory: a lone high evaluation
before the curve reaches the target moves the first reading and not the
monotone one; the best fixed density and each system's paired ratio
follow the reading; `--up-to` cuts the longer run, `--per-seed-horizon`
reads each seed to its own runs' end, `--systems` reads only those named,
`--seeds` only the seeds named (and so reads to their horizon and picks
the best fixed density among those that ran on them),
FOLDER:LABELS only those from that folder; a (system, seed) in
two folders, runs that do not pair, malformed summaries, a target outside
(0, 1], a missing eval.csv and one without samples are clear errors;
evaluations written out of order are read in iteration order; a missed seed counts as slowest; a fixed density
that lacks a seed is no candidate; `--noise` redraws are reproducible and
the first reading errs early; `--against` pairs each system's iterations
and speedup with a baseline's by seed (a seed the baseline misses is left
out and named, a missing baseline is an error), and `--whole-runs` reads
every run to its own end. Standard library only.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "analysis", "monotone_tta.py")
sys.path.insert(0, os.path.join(HERE, "..", "analysis"))
import monotone_tta  # noqa: E402
import run_folders  # noqa: E402

STELLATRAIN = {"compressor": "thresholdv16", "density": 0.05}


def fixed(density):
    return dict(STELLATRAIN, controller="off", density=density)


def write_folder(folder, systems, seed, offset_s=0.0, **fields):
    """systems: label -> (options, [(iteration, time_s, accuracy)]); the
    runs start `offset_s` into the trace; `fields` go into summary.json."""
    os.makedirs(folder, exist_ok=True)
    entries = {}
    for label, (options, evaluations) in systems.items():
        os.makedirs(os.path.join(folder, label), exist_ok=True)
        with open(os.path.join(folder, label, "eval.csv"), "w") as f:
            f.write("time_s,iteration,accuracy,loss,samples\n")
            for iteration, time_s, accuracy in evaluations:
                f.write(f"{time_s},{iteration},{accuracy},1.0,2000\n")
        entries[label] = {"system": "stellatrain", "options": options, "tta_s": None, "best_accuracy": 0.9,
                          "iterations": evaluations[-1][0], "runs": [label], "trace_offset_s": offset_s}
    with open(os.path.join(folder, "summary.json"), "w") as f:
        json.dump(dict({"scenario": "s", "target_accuracy": 0.85, "seeds": [seed], "systems": entries}, **fields), f)


def curve(accuracies, seconds_per_iteration, every=10):
    return [((i + 1) * every, round((i + 1) * every * seconds_per_iteration, 4), a) for i, a in enumerate(accuracies)]


# A lone 0.86 at iteration 20, then 0.84, 0.84, 0.86, 0.87: first 20; the
# fit pools 0.86, 0.84, 0.84 to 0.847 and reaches 85% at 50.
LUCKY = [0.80, 0.86, 0.84, 0.84, 0.86, 0.87]
# Steady: first and monotone both at iteration 30.
STEADY = [0.80, 0.83, 0.85, 0.86, 0.87, 0.88]


def report(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


class IsotonicFitTest(unittest.TestCase):
    def test_pools_violators(self):
        fit = monotone_tta.isotonic_fit([1, 3, 2, 2, 4])
        self.assertEqual(fit, [1, 7 / 3, 7 / 3, 7 / 3, 4])

    def test_keeps_a_rising_curve(self):
        self.assertEqual(monotone_tta.isotonic_fit([0.1, 0.2, 0.3]), [0.1, 0.2, 0.3])

    def test_crossings_match_the_cpp_fit(self):
        """The cases tests/monotone_fit_test.cc asserts of apps/monotone_fit.cc."""
        def crossing(values):
            return monotone_tta.first_reaching(monotone_tta.isotonic_fit(values), 0.85)
        self.assertEqual(crossing([0.80, 0.86, 0.83, 0.82, 0.86, 0.87]), 4)
        self.assertEqual(crossing([0.8, 0.9, 0.8, 0.85]), 1)


class MonotoneTtaTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def folder(self, name):
        return os.path.join(self.root, name)

    def one_run(self, name="a", eval_text=None):
        """A folder with one steady controller run (seed 1); `eval_text`
        replaces its eval.csv. Returns the folder."""
        write_folder(self.folder(name), {"soonest": (STELLATRAIN, curve(STEADY, 0.1))}, 1)
        if eval_text is not None:
            with open(os.path.join(self.folder(name), "soonest", "eval.csv"), "w") as f:
                f.write(eval_text)
        return self.folder(name)

    def refused(self, *args):
        """The report's stderr, after checking that it failed without a traceback."""
        out = report(*args)
        self.assertNotEqual(out.returncode, 0, out.stdout)
        self.assertNotIn("Traceback", out.stderr)
        return out.stderr

    def two_seeds(self, controller_seed_2=STEADY):
        """fixed-0.005 lucky on both seeds (0.1 s per iteration), fixed-0.01
        steady (0.12 s), a controller steady (0.11 s; on seed 2 the given
        curve) and half again slower per iteration on seed 2, so that a
        ratio paired with the wrong seed shows."""
        for seed in (1, 2):
            write_folder(self.folder(f"fixed-{seed}"), {"fixed-0.005": (fixed(0.005), curve(LUCKY, 0.1)),
                                                        "fixed-0.01": (fixed(0.01), curve(STEADY, 0.12))}, seed)
            controller = curve(STEADY, 0.11) if seed == 1 else curve(controller_seed_2, 0.165)
            write_folder(self.folder(f"ctl-{seed}"), {"soonest": (STELLATRAIN, controller)}, seed)
        return [self.folder(f"{kind}-{seed}") for kind in ("fixed", "ctl") for seed in (1, 2)]

    def test_readings_and_paired_ratios(self):
        out = report(*self.two_seeds())
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("| fixed-0.005 | 1 | 2.00 s (it 20, 4 after) | 5.00 s (it 50, 1 after) |", out.stdout)
        self.assertIn("| soonest | 2 | 4.95 s (it 30, 3 after) | 4.95 s (it 30, 3 after) |", out.stdout)
        # First crossing: fixed-0.005 (2.0 s) is best and the controller
        # 1.65x on seed 1, 2.475x on seed 2; monotone: fixed-0.01 (3.6 s) is
        # best, fixed-0.005 5.0 s, the controller 3.3 s and 4.95 s.
        self.assertIn("| first | fixed-0.005 (2.00 s) | 1.00x (1.00-1.00) | 1.80x (1.80-1.80) | 2.06x (1.65-2.48) |",
                      out.stdout)
        self.assertIn("| monotone | fixed-0.01 (3.60 s) | 1.39x (1.39-1.39) | 1.00x (1.00-1.00) | 1.15x (0.92-1.38) |",
                      out.stdout)
        self.assertIn("Evaluations up to iteration 60; target 85%.", out.stdout)

    def test_a_missed_seed_counts_as_slowest(self):
        out = report(*self.two_seeds(controller_seed_2=[0.8] * 6))
        self.assertEqual(out.returncode, 0, out.stderr)
        # Two seeds, one missed: the median is the mean of 1.65 and "slower
        # than any": not reached, and the range says so.
        self.assertIn("| soonest | 2 | not reached | not reached |", out.stdout)
        self.assertIn("| not reached (1.65-not reached), 1 of 2 seeds not reached |", out.stdout)

    def test_a_fixed_density_without_every_seed_is_not_a_candidate(self):
        folders = self.two_seeds()
        write_folder(self.folder("fixed-3"), {"fixed-0.01": (fixed(0.01), curve(STEADY, 0.12))}, 3)
        write_folder(self.folder("ctl-3"), {"soonest": (STELLATRAIN, curve(STEADY, 0.12))}, 3)
        out = report(*folders, self.folder("fixed-3"), self.folder("ctl-3"))
        self.assertEqual(out.returncode, 0, out.stderr)
        # fixed-0.005 lacks seed 3: by the first reading fixed-0.01 is best now.
        self.assertIn("| first | fixed-0.01 (3.60 s) |", out.stdout)
        self.assertIn("on seeds 1, 2, 3", out.stdout)

    def test_no_candidate_is_said(self):
        write_folder(self.folder("a"), {"fixed-0.005": (fixed(0.005), curve([0.8] * 6, 0.1)),
                                        "soonest": (STELLATRAIN, curve(STEADY, 0.1))}, 1)
        out = report(self.folder("a"))
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("| first | no fixed density ran and reached the target on every one of these seeds |",
                      out.stdout)

    def test_up_to_cuts_every_run(self):
        out = report(*self.two_seeds(), "--up-to", "30")
        self.assertEqual(out.returncode, 0, out.stderr)
        # Up to 30, LUCKY fits 0.80, 0.85, 0.85: the monotone fit reaches 85% at 20.
        self.assertIn("| fixed-0.005 | 1 | 2.00 s (it 20, 1 after) | 2.00 s (it 20, 1 after) |", out.stdout)

    def test_the_common_horizon_is_the_shortest_run(self):
        write_folder(self.folder("long"), {"fixed-0.005": (fixed(0.005), curve(LUCKY + [0.9, 0.9], 0.1))}, 1)
        write_folder(self.folder("short"), {"soonest": (STELLATRAIN, curve(STEADY[:4], 0.1))}, 1)
        out = report(self.folder("long"), self.folder("short"))
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("Evaluations up to iteration 40", out.stdout)

    def test_per_seed_horizon_reads_each_seed_to_its_own_runs(self):
        for seed, length in ((1, 8), (2, 4)):
            write_folder(self.folder(f"fixed-{seed}"),
                         {"fixed-0.005": (fixed(0.005), curve((LUCKY + [0.9, 0.9])[:length], 0.1))}, seed)
            write_folder(self.folder(f"ctl-{seed}"), {"soonest": (STELLATRAIN, curve((STEADY + [0.9, 0.9])[:length], 0.1))},
                         seed)
        folders = [self.folder(f"{kind}-{seed}") for kind in ("fixed", "ctl") for seed in (1, 2)]
        out = report(*folders, "--per-seed-horizon")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("Evaluations up to iteration 80 (seed 1) and 40 (seed 2)", out.stdout)
        # Seed 1 read to 80 (three evaluations after the fit's crossing),
        # seed 2 to 40 (the fit of 0.80, 0.86, 0.84, 0.84 stays under 85%).
        self.assertIn("| fixed-0.005 | 1 | 2.00 s (it 20, 6 after) | 5.00 s (it 50, 3 after) |", out.stdout)
        self.assertIn("| fixed-0.005 | 2 | 2.00 s (it 20, 2 after) | not reached |", out.stdout)
        # Without it every run is read to the shortest, 40.
        self.assertIn("Evaluations up to iteration 40;", report(*folders).stdout)
        # One horizon or the other, not both.
        self.assertIn("not allowed with argument", self.refused(*folders, "--per-seed-horizon", "--up-to", "40"))

    def test_systems_reads_only_those_named(self):
        out = report(*self.two_seeds(), "--systems", "fixed-0.01,soonest")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertNotIn("fixed-0.005", out.stdout)
        self.assertIn("| fixed-0.01 | 1 |", out.stdout)
        self.assertIn("--systems fixed-0.02: no run of it",
                      self.refused(*self.two_seeds(), "--systems", "fixed-0.02,soonest"))

    def test_seeds_reads_only_those_named(self):
        """A third seed, shorter (to iteration 40) and without fixed-0.005:
        with it, every run is read to 40 and fixed-0.005 is no candidate;
        --seeds 1,2 reads to 60 and fixed-0.005 (lucky, 2.00 s) is the best."""
        folders = self.two_seeds()
        write_folder(self.folder("fixed-3"), {"fixed-0.01": (fixed(0.01), curve(STEADY[:4], 0.12))}, 3)
        write_folder(self.folder("ctl-3"), {"soonest": (STELLATRAIN, curve(STEADY[:4], 0.11))}, 3)
        folders += [self.folder("fixed-3"), self.folder("ctl-3")]
        every = report(*folders)
        self.assertEqual(every.returncode, 0, every.stderr)
        self.assertIn("Evaluations up to iteration 40;", every.stdout)
        self.assertIn("| first | fixed-0.01 (", every.stdout)
        out = report(*folders, "--seeds", "1,2")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("Evaluations up to iteration 60;", out.stdout)
        self.assertIn("| first | fixed-0.005 (2.00 s) |", out.stdout)
        self.assertIn("Against the best fixed density on seeds 1, 2 (", out.stdout)
        for label in ("fixed-0.01", "soonest"):
            self.assertNotIn(f"| {label} | 3 |", out.stdout)
        # Seed 2 alone: none of seed 1's rows.
        two = report(*folders, "--seeds", "2").stdout
        self.assertIn("| soonest | 2 |", two)
        for label in ("fixed-0.005", "fixed-0.01", "soonest"):
            self.assertNotIn(f"| {label} | 1 |", two)
        self.assertIn("--seeds 4: no run of that seed", self.refused(*folders, "--seeds", "2,4"))
        self.assertIn("--seeds 1;2: not a comma-separated list", self.refused(*folders, "--seeds", "1;2"))
        self.assertIn("not a comma-separated list", self.refused(*folders, "--seeds", "1_0"))
        self.assertIn("--seeds: no seed named", self.refused(*folders, "--seeds", ","))
        # A system named by --systems or FOLDER:LABELS that the seeds leave without a run.
        self.assertIn("--seeds 3: system fixed-0.005 has no run on these seeds",
                      self.refused(*folders, "--systems", "fixed-0.005,soonest", "--seeds", "3"))
        self.assertIn("--seeds 3: system fixed-0.005 has no run on these seeds",
                      self.refused(folders[0] + ":fixed-0.005", *folders[2:], "--seeds", "3"))

    def test_folder_labels_read_only_those_systems_there(self):
        # fixed-0.005 rerun into another folder: its seed 1 is read from there only.
        folders = self.two_seeds()
        write_folder(self.folder("rerun"), {"fixed-0.005": (fixed(0.005), curve(STEADY, 0.1))}, 1)
        fixed_1 = self.folder("fixed-1")
        self.assertIn("system fixed-0.005 seed 1 is in both", self.refused(*folders, self.folder("rerun")))
        picked = [f"{fixed_1}:fixed-0.01" if f == fixed_1 else f for f in folders]
        out = report(*picked, self.folder("rerun"))
        self.assertEqual(out.returncode, 0, out.stderr)
        # The rerun's steady curve, not the lucky one: first and fit at iteration 30.
        self.assertIn("| fixed-0.005 | 1 | 3.00 s (it 30, 3 after) | 3.00 s (it 30, 3 after) |", out.stdout)
        self.assertIn("| fixed-0.01 | 1 |", out.stdout)
        self.assertIn(f"{fixed_1}: no system fixed-0.02 (it has: fixed-0.005, fixed-0.01)",
                      self.refused(f"{fixed_1}:fixed-0.02", *folders[1:]))
        for argument in (f"{fixed_1}:", f"{fixed_1}:,", ":fixed-0.01"):
            self.assertIn(f"{argument}: FOLDER:LABELS needs a folder and at least one system label",
                          self.refused(argument, *folders[1:]))
        # Spaces around a label are dropped; a label --systems leaves out is named.
        self.assertEqual(report(f"{fixed_1}: fixed-0.01", *folders[1:], self.folder("rerun")).returncode, 0)
        self.assertIn(f"{fixed_1}: none of fixed-0.01 is among --systems soonest",
                      self.refused(f"{fixed_1}:fixed-0.01", *folders[1:], "--systems", "soonest"))

    def test_folder_labels_name_a_failed_system(self):
        folders = self.two_seeds()
        with open(os.path.join(folders[0], "summary.json")) as f:
            summary = json.load(f)
        summary["systems"]["fixed-0.01"] = {"error": "out of memory", "options": {}}
        with open(os.path.join(folders[0], "summary.json"), "w") as f:
            json.dump(summary, f)
        self.assertIn(f"{folders[0]}: system fixed-0.01 failed: out of memory",
                      self.refused(f"{folders[0]}:fixed-0.01", *folders[1:]))

    def test_a_folder_with_a_colon_in_its_name_is_read_whole(self):
        folder = self.one_run("with:colon")
        out = report(folder)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("| soonest | 1 |", out.stdout)

    def test_a_run_in_two_folders_is_refused(self):
        self.assertIn("system soonest seed 1 is in both", self.refused(self.one_run("a"), self.one_run("b")))

    def test_runs_that_do_not_pair_are_refused(self):
        write_folder(self.folder("a"), {"fixed-0.005": (fixed(0.005), curve(STEADY, 0.1))}, 1, model="resnet18")
        write_folder(self.folder("b"), {"soonest": (STELLATRAIN, curve(STEADY, 0.1))}, 1, model="cnn")
        self.assertIn("'model' is", self.refused(self.folder("a"), self.folder("b")))
        write_folder(self.folder("b"), {"soonest": (STELLATRAIN, curve(STEADY, 0.1))}, 1, offset_s=7.0,
                     model="resnet18")
        self.assertIn("seed 1: trace offset", self.refused(self.folder("a"), self.folder("b")))

    def test_missing_eval_names_the_file(self):
        folder = self.one_run()
        os.remove(os.path.join(folder, "soonest", "eval.csv"))
        self.assertIn(os.path.join("soonest", "eval.csv") + ": not found", self.refused(folder))

    def test_malformed_summaries_are_named(self):
        path = os.path.join(self.one_run(), "summary.json")
        with open(path) as f:
            good = json.load(f)
        for broken, message in (({"systems": {"soonest": "x"}}, "system soonest is not an object"),
                                ({"seeds": []}, "'seeds' is empty"),
                                ({"target_accuracy": True}, "'target_accuracy' is True"),
                                ({"systems": {"soonest": {"options": {}, "per_seed": [{"seed": 1}]}}},
                                 "a run without an integer 'seed' and a 'run' folder")):
            with open(path, "w") as f:
                json.dump(dict(good, **broken), f)
            stderr = self.refused(self.folder("a"))
            self.assertIn(message, stderr, broken)
            self.assertIn("summary.json", stderr)

    def test_a_target_outside_0_1_is_refused(self):
        self.assertIn("--target is 85.0: an accuracy in (0, 1] is needed",
                      self.refused(self.one_run(), "--target", "85"))

    def test_evaluations_out_of_order_are_read_in_iteration_order(self):
        # Asynchronous evaluations are written as they finish; summary.json
        # (apps/run_summary.cc) sorts them by iteration, and so does the script.
        rows = "time_s,iteration,accuracy,loss,samples\n2,20,0.9,1,2000\n1,10,0.8,1,2000\n3,30,0.7,1,2000\n"
        in_order = run_folders.read_evaluations(os.path.join(self.one_run(eval_text=rows), "soonest"))
        self.assertEqual(in_order, ([10, 20, 30], [1.0, 2.0, 3.0], [0.8, 0.9, 0.7], [2000.0, 2000.0, 2000.0]))

    def test_eval_without_samples_names_the_column(self):
        folder = self.one_run(eval_text="time_s,iteration,accuracy\n1,10,0.9\n")
        self.assertIn("missing column(s) samples", self.refused(folder))

    def test_noise_is_reproducible_and_the_first_reading_errs_early(self):
        write_folder(self.folder("a"), {"fixed-0.005": (fixed(0.005), curve([0.80, 0.84, 0.849, 0.849, 0.849, 0.849,
                                                                            0.851, 0.87], 0.1))}, 1)
        first = report(self.folder("a"), "--noise", "400")
        again = report(self.folder("a"), "--noise", "400")
        self.assertEqual(first.returncode, 0, first.stderr)
        self.assertEqual(first.stdout, again.stdout)
        row = next(line for line in first.stdout.splitlines() if line.startswith("| fixed-0.005 | 1 | median"))
        first_cell, monotone_cell = row.split(" | ")[2:4]
        share_before = lambda text: int(text.split("% before")[0].rsplit(", ", 1)[1])  # noqa: E731
        # A plateau 0.1 points under the target: redraws cross it early on
        # the first reading far more often than on the monotone one.
        self.assertGreater(share_before(first_cell), 70)
        self.assertLess(share_before(monotone_cell), share_before(first_cell))

    def baseline(self, seed_2=STEADY, length=4, seconds=(0.5, 0.6)):
        """ddp on seeds 1 and 2, shorter than the two_seeds runs: steady,
        at 0.5 s per iteration on seed 1 (its TTA 15 s at iteration 30) and
        0.6 s on seed 2 (18 s), so that a ratio paired with the wrong seed
        shows; on seed 2 the given curve."""
        for seed in (1, 2):
            evaluations = curve((STEADY if seed == 1 else seed_2)[:length], seconds[seed - 1])
            write_folder(self.folder(f"ddp-{seed}"), {"ddp": ({}, evaluations)}, seed)
        return [self.folder(f"ddp-{seed}") for seed in (1, 2)]

    def test_against_pairs_iterations_and_speedups_by_seed(self):
        folders = self.two_seeds() + self.baseline()
        out = report(*folders, "--against", "ddp", "--whole-runs")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("Evaluations up to each run's own last evaluation (iteration 40-60)", out.stdout)
        # Monotone: fixed-0.005 at 50 (5.0 s) against ddp's 30 on both
        # seeds (15 s and 18 s); fixed-0.01 at 30 (3.6 s); the controller
        # at 30 (3.3 s on seed 1, 4.95 s on seed 2).
        self.assertIn("| quantity | ddp (median) | fixed-0.005 | fixed-0.01 | soonest |", out.stdout)
        self.assertIn("| iterations, monotone | 30 iterations | 1.67x (1.67-1.67) | 1.00x (1.00-1.00) | "
                      "1.00x (1.00-1.00) |", out.stdout)
        self.assertIn("| iterations, first | 30 iterations | 0.67x (0.67-0.67) |", out.stdout)
        # Speedups 15/5.0 and 18/5.0; 15/3.6 and 18/3.6; 15/3.3 and 18/4.95
        # (paired with the wrong seed the controller's would be 5.45 and 3.03).
        self.assertIn("| speedup, monotone | 16.50 s | 3.30x (3.00-3.60) | 4.58x (4.17-5.00) | 4.09x (3.64-4.55) |",
                      out.stdout)
        # Without --whole-runs every run is read to ddp's 40: fixed-0.005's
        # fit of 0.80, 0.86, 0.84, 0.84 misses, and counts as slowest.
        common = report(*folders, "--against", "ddp")
        self.assertIn("| iterations, monotone | 30 iterations | not reached on any seed (2 of 2) |", common.stdout)
        self.assertIn("| speedup, monotone | 16.50 s | not reached on any seed (2 of 2) |", common.stdout)

    def test_a_seed_the_system_misses_counts_as_slowest_in_both_rows(self):
        folders = self.two_seeds(controller_seed_2=[0.8] * 6) + self.baseline()
        out = report(*folders, "--against", "ddp", "--whole-runs")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("| 1.00x (1.00-1.00) | not reached (1.00-not reached), 1 of 2 seeds not reached |", out.stdout)
        self.assertIn("| 4.58x (4.17-5.00) | not reached (not reached-4.55), 1 of 2 seeds not reached |", out.stdout)

    def test_a_seed_the_baseline_misses_is_left_out_and_named(self):
        out = report(*self.two_seeds(), *self.baseline(seed_2=[0.8] * 4), "--against", "ddp", "--whole-runs")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("| iterations, monotone | 30 iterations | 1.67x |", out.stdout)  # seed 1 alone
        self.assertIn("ddp misses the target on seed(s) 2 by the monotone reading", out.stdout)

    def test_a_baseline_reading_at_0_s_is_said(self):
        out = report(*self.two_seeds(), *self.baseline(seconds=(0.0, 0.0)), "--against", "ddp", "--whole-runs")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("| speedup, monotone | 0.00 s | - (a reading at 0) |", out.stdout)
        self.assertNotIn("Traceback", out.stderr)

    def test_against_a_system_not_read_is_refused(self):
        self.assertIn("--against ddp: no run of it", self.refused(*self.two_seeds(), "--against", "ddp"))
        self.assertIn("not allowed with argument", self.refused(*self.two_seeds(), "--whole-runs", "--up-to", "40"))

    def test_bad_noise_count_is_refused(self):
        self.assertIn("--noise takes a number of replicates >= 1", self.refused(self.one_run(), "--noise", "0"))


if __name__ == "__main__":
    unittest.main()
