#!/usr/bin/env python3
"""Tests for analysis/density_report.py on results folders built here: a
folder of accuracy runs (TTA per target, best accuracy, the controller over
the best fixed density) and a folder of timing runs (no accuracy: the
measures only, median and range over the seeds), `--after` leaving the
start-up out, `--paired` comparing seed by seed, `--rates` comparing the
controller's measured rate with the link, `--plan-delay` timing each plan
from its tick to rank 0's first iteration at its density, `--losses`
splitting the unused link by the tick in force, `--backlogged` comparing
each seed's link use with a backlogged run's on the same seconds, `--versus`
pairing each seed with the same seed on another backend (also over the
seeds whose host kept up), and a clear error
for a missing folder. Standard library only.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "analysis", "density_report.py")


def write_run(folder, iteration_ms, density, sent, delivered_mbps):
    """A run's iterations.csv (rank 0, three iterations starting at 0, 1
    and 2 s, the first at 5% density, the last after 400 ms of waiting)
    and link.csv (the start-up second at 10 Mbps, two whole seconds at
    `delivered_mbps` and a partial one, which the report leaves out)."""
    os.makedirs(folder)
    with open(os.path.join(folder, "iterations.csv"), "w") as f:
        f.write("rank,iteration,start_s,iteration_ms,wait_ms,density,bytes_sent\n")
        for i in range(3):
            d = 0.05 if i == 0 else density
            wait_ms = 400 if i == 2 else 0
            f.write(f"0,{i},{i},{iteration_ms},{wait_ms},{d},{sent}\n1,{i},{i},999,900,0.9,1\n")
    with open(os.path.join(folder, "link.csv"), "w") as f:
        f.write("second,link,configured_mbps,delivered_mbps,delivered_bytes\n")
        for second in range(4):
            delivered = 10 if second == 0 else delivered_mbps if second < 3 else 0
            f.write(f"{second},a->b,100,{delivered},0\n")


def write_folder(root, systems, timing):
    """systems: label -> per-seed (iteration_ms, density, sent, delivered, tta)."""
    summary = {"scenario": "s", "seeds": [1, 2, 3], "target_accuracy": 0.0 if timing else 0.85,
               "report_targets": [] if timing else [0.85], "systems": {}}
    for label, seeds in systems.items():
        per_seed = []
        for seed, (iteration_ms, density, sent, delivered, tta_s) in enumerate(seeds, start=1):
            run = f"{label}/seed-{seed}"
            write_run(os.path.join(root, run), iteration_ms, density, sent, delivered)
            entry = {"seed": seed, "run": run, "best_accuracy": None if timing else 0.87,
                     "tta_iteration": None if timing else 100, "tta_s": tta_s}
            if not timing:
                entry["tta_at"] = {"0.85": tta_s}
            per_seed.append(entry)
        summary["systems"][label] = {"system": "stellatrain", "per_seed": per_seed,
                                     **({"math": "timing"} if timing else {})}
    with open(os.path.join(root, "summary.json"), "w") as f:
        json.dump(summary, f)


def write_emu_and_sim(emu, sim):
    """The same timing runs of system `rule` on two backends: link use 40,
    60 and 80 Mbps of 100 on seeds 1-3 in `emu`, 50 on each in `sim`."""
    write_folder(emu, {"rule": [(420, 0.01, 1000, delivered, None) for delivered in (40, 60, 80)]}, timing=True)
    write_folder(sim, {"rule": [(400, 0.01, 1000, 50, None)] * 3}, timing=True)


def write_manifest(root, seed, manifest):
    """System `rule`'s manifest.json on `seed`: a dict as JSON, or text as it is."""
    with open(os.path.join(root, f"rule/seed-{seed}/manifest.json"), "w") as f:
        f.write(manifest if isinstance(manifest, str) else json.dumps(manifest))


def write_control(root, label, header, lines_by_seed):
    """System `label`'s control.csv on each seed: `header`, then the lines."""
    for seed, lines in lines_by_seed.items():
        with open(os.path.join(root, f"{label}/seed-{seed}/control.csv"), "w") as f:
            f.write(header + "\n")
            f.writelines(line + "\n" for line in lines)


def report(root, *args):
    return subprocess.run([sys.executable, SCRIPT, root, *args], capture_output=True, text=True)


class DensityReport(unittest.TestCase):
    def test_timing_runs_get_the_measures_with_their_range(self):
        with tempfile.TemporaryDirectory() as root:
            write_folder(root, {"rule": [(400, 0.01, 1000, 30, None), (500, 0.02, 3000, 50, None),
                                         (450, 0.03, 2000, 40, None)]}, timing=True)
            out = report(root)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("timing runs", out.stdout)
        # Idle while waiting: 0.4 s of second 1 at 70, 50 and 60 Mbps unused, of 300 configured.
        self.assertIn("| rule | 450.0 (400.0-500.0) | 0.0300 (0.0233-0.0367) | 2,000 (1,000-3,000) | 30% (23%-37%) "
                      "| 8% (7%-9%) |", out.stdout)
        self.assertNotIn("TTA", out.stdout)

    def test_after_leaves_the_start_up_out(self):
        with tempfile.TemporaryDirectory() as root:
            write_folder(root, {"rule": [(400, 0.01, 1000, 30, None)]}, timing=True)
            out = report(root, "--after", "1")
            late = report(root, "--after", "9")
            negative = report(root, "--after", "-1")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("from simulated second 1 on", out.stdout)
        self.assertIn("| rule | 400.0 | 0.0100 | 1,000 | 30% | 14% |", out.stdout)  # 0.4 x 70 of 200
        self.assertNotEqual(late.returncode, 0)
        self.assertIn("no iteration of rank 0 starts at 9 s or later", late.stderr)
        self.assertNotEqual(negative.returncode, 0)

    def test_paired_compares_each_seed_with_the_same_seed_of_the_base(self):
        with tempfile.TemporaryDirectory() as root:
            write_folder(root, {"base": [(400, 0.01, 1000, 30, None), (400, 0.01, 1000, 50, None),
                                         (400, 0.01, 1000, 40, None)],
                                "variant": [(400, 0.01, 1000, 40, None), (400, 0.01, 1000, 45, None),
                                            (400, 0.01, 1000, 60, None)]}, timing=True)
            out = report(root, "--after", "1", "--paired", "base")
            unknown = report(root, "--paired", "nobody")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("| base | 30% | 50% | 40% | - | - |", out.stdout)
        self.assertIn("| variant | 40% | 45% | 60% | +10.0 (-5.0 to +20.0) | 2 of 3 |", out.stdout)
        self.assertNotEqual(unknown.returncode, 0)
        self.assertIn("--paired nobody: no such system", unknown.stderr)

    def test_rates_compare_each_tick_with_the_link(self):
        # Ticks (time_s, R): the first before --after, one without an R,
        # one above the link's 100 Mbps; the fixed density has no control.csv.
        ticks = {1: [(0.5, "50"), (1.5, ""), (2.5, "150")], 2: [(1.5, "80")], 3: [(2.2, "90")]}
        with tempfile.TemporaryDirectory() as root:
            write_folder(root, {"rule": [(400, 0.01, 1000, 30, None)] * 3,
                                "fixed": [(400, 0.01, 1000, 30, None)] * 3}, timing=True)
            write_control(root, "rule", "time_s,estimated_mbps,measured_mbps",
                          {seed: [f"{t},100,{r}" for t, r in rows] for seed, rows in ticks.items()})
            out = report(root, "--after", "1", "--rates")
            whole = report(root, "--rates")
        with tempfile.TemporaryDirectory() as accuracy_root:
            write_folder(accuracy_root, {"fixed": [(15, 0.1, 100, 50, 2.0)] * 3}, timing=False)
            accuracy = report(accuracy_root, "--rates")
        self.assertEqual(out.returncode, 0, out.stderr)
        # R / link: 1.5, 0.8 and 0.9; 150 Mbps is above the fastest rate, 100.
        self.assertIn("| rule | 3 of 4 | 0.90 (0.80-0.90) | 150 | 1 |", out.stdout)
        self.assertIn("| fixed | 0 of 0 | - | - | - |", out.stdout)
        self.assertIn("| rule | 4 of 5 | 0.85 (0.50-0.90) | 150 | 1 |", whole.stdout)
        self.assertNotEqual(accuracy.returncode, 0)
        self.assertIn("--backlogged and --versus read timing runs", accuracy.stderr)

    def test_plan_delay_times_each_plan_from_its_tick(self):
        # Plans (time_s, iteration, effective_iteration, density) on runs
        # whose rank 0 runs iterations 1 and 2 (at 1 and 2 s) at 1%: a
        # hold, a plan at 2% that never runs before the next takes effect,
        # plans at 1%. "rule" counts from each plan's effective iteration,
        # "early" (early_density_switch) from the tick's next iteration.
        plans = {1: [(0.4, 0, 2, 0.01), (0.6, 0, -1, 0.01)],
                 2: [(0.2, 0, 2, 0.02), (1.5, 1, 2, 0.01)],
                 3: [(0.1, 0, 2, 0.01)]}
        with tempfile.TemporaryDirectory() as root:
            write_folder(root, {label: [(400, 0.01, 1000, 30, None)] * 3 for label in ("rule", "early", "fixed")},
                         timing=True)
            with open(os.path.join(root, "summary.json")) as f:
                summary = json.load(f)
            summary["systems"]["early"]["options"] = {"controller": {"early_density_switch": True}}
            with open(os.path.join(root, "summary.json"), "w") as f:
                json.dump(summary, f)
            for label in ("rule", "early"):
                write_control(root, label, "time_s,iteration,effective_iteration,density",
                              {seed: [f"{t},{i},{e},{d}" for t, i, e, d in rows] for seed, rows in plans.items()})
            whole = report(root, "--plan-delay")
            late = report(root, "--after", "0.3", "--plan-delay")
        self.assertEqual(whole.returncode, 0, whole.stderr)
        # From the effective iteration: 1.6 s (iteration 2), none, 0.5 s (2), 1.9 s (2).
        self.assertIn("| rule | 4 | 3 | 1.60 (0.50-1.60) | 2 (1-2) |", whole.stdout)
        # From the tick's next iteration: 0.6 s (iteration 1), none, 0.5 s (2), 0.9 s (1).
        self.assertIn("| early | 4 | 3 | 0.60 (0.50-0.60) | 1 (1-1) |", whole.stdout)
        self.assertIn("| fixed | 0 | 0 | - | - |", whole.stdout)
        self.assertIn("| rule | 2 | 2 | 1.05 (0.50-0.50) | 1.5 (1-2) |", late.stdout)

    def test_losses_split_the_unused_link_by_the_tick_in_force(self):
        # Ticks (time_s, reason, estimate); each second (0, 1 and 2 at
        # 100 Mbps, 90, 70 and 70 unused) takes the last tick at or before
        # its start. The fixed density has no control.csv: all "other".
        ticks = {1: [(0.5, "probe; hold", 120), (1.0, "overrun; density 0.1 -> 0.05", 50), (2.5, "probe; hold", 90)],
                 2: [(0.0, "slow start; hold", 200), (1.5, "older iterations waited, the newest did not; hold; hold", 150)],
                 3: [(0.2, "measured; density 0.05 -> 0.08", 80), (1.2, "overrun, decreased already; hold", 60)]}
        with tempfile.TemporaryDirectory() as root:
            write_folder(root, {"rule": [(400, 0.01, 1000, 30, None)] * 3,
                                "fixed": [(400, 0.01, 1000, 30, None)] * 3}, timing=True)
            write_control(root, "rule", "time_s,estimated_mbps,reason",
                          {seed: [f'{t},{e},"{r}"' for t, r, e in rows] for seed, rows in ticks.items()})
            whole = report(root, "--losses")
            late = report(root, "--after", "1", "--losses")
        self.assertEqual(whole.returncode, 0, whole.stderr)
        # Of 900 Mbps-seconds: 690 unused; 210 after overrun ticks, 140
        # after probe, measured or held ticks, 340 otherwise; 280 under.
        self.assertIn("| rule | 76.7 | 23.3 | 15.6 | 37.8 | 31.1 | 0.0 |", whole.stdout)
        self.assertIn("| fixed | 76.7 | 0.0 | 0.0 | 76.7 | 0.0 | 0.0 |", whole.stdout)
        self.assertIn("| rule | 70.0 | 35.0 | 23.3 | 11.7 | 46.7 | 0.0 |", late.stdout)

    def test_losses_count_what_went_unused_beside_a_full_reverse_direction(self):
        # Both directions, 100 Mbps each (second 3 is the partial last):
        # second 0: a->b 50 unused while b->a was full; second 1: b->a 60
        # unused while a->b carried 96 (of 95 needed), a->b 4 beside a
        # b->a at 40; second 2: 70 unused each way, neither full.
        link = ("second,link,configured_mbps,delivered_mbps,delivered_bytes\n"
                "0,a->b,100,50,0\n0,b->a,100,100,0\n1,a->b,100,96,0\n1,b->a,100,40,0\n"
                "2,a->b,100,30,0\n2,b->a,100,30,0\n3,a->b,100,0,0\n3,b->a,100,0,0\n")
        with tempfile.TemporaryDirectory() as root:
            write_folder(root, {"rule": [(400, 0.01, 1000, 30, None)] * 3}, timing=True)
            for seed in (1, 2, 3):
                with open(os.path.join(root, f"rule/seed-{seed}/link.csv"), "w") as f:
                    f.write(link)
            out = report(root, "--losses")
        self.assertEqual(out.returncode, 0, out.stderr)
        # Of 600 Mbps-seconds: 254 unused, 110 of it beside a full reverse.
        self.assertIn("| rule | 42.3 | 0.0 | 0.0 | 42.3 | 0.0 | 18.3 |", out.stdout)

    def test_backlogged_compares_each_seed_with_a_backlogged_run_on_the_same_seconds(self):
        with tempfile.TemporaryDirectory() as root, tempfile.TemporaryDirectory() as ddp:
            write_folder(root, {"rule": [(400, 0.01, 1000, 30, None), (400, 0.01, 1000, 60, None),
                                         (400, 0.01, 1000, 80, None)]}, timing=True)
            write_folder(ddp, {"ddp": [(20000, 1, 1e8, 80, None)] * 3}, timing=True)
            whole = report(root, "--backlogged", ddp)
            late = report(root, "--after", "1", "--backlogged", ddp)
            unknown = report(root, "--backlogged", ddp, "--backlogged-system", "allreduce")
            with open(os.path.join(ddp, "ddp/seed-2/link.csv"), "a") as f:
                f.write("0,b->a,100,10,0\n")  # a direction the run does not have: ignored
            with open(os.path.join(ddp, "ddp/seed-3/link.csv")) as f:
                text = f.read()
            with open(os.path.join(ddp, "ddp/seed-3/link.csv"), "w") as f:
                f.write(text.replace("1,a->b,100,", "1,a->b,90,"))
            other_stretch = report(root, "--backlogged", ddp)
            with open(os.path.join(ddp, "ddp/seed-1/link.csv"), "w") as f:
                f.write("second,link,configured_mbps,delivered_mbps,delivered_bytes\n0,a->b,100,10,0\n"
                        "1,a->b,100,80,0\n2,a->b,100,80,0\n")  # second 2 is now its partial last
            shorter = report(root, "--backlogged", ddp)
        self.assertEqual(whole.returncode, 0, whole.stderr)
        # Seconds 0-2 (the partial second 3 left out): the run delivered
        # 10 + 2 x {30, 60, 80} Mbps-seconds, ddp 170 of 300.
        self.assertIn("| rule | 76.5% (41.2%-100.0%) | 56.7% (56.7%-56.7%) |", whole.stdout)
        self.assertIn("| rule | 75.0% (37.5%-100.0%) | 80.0% (80.0%-80.0%) |", late.stdout)
        self.assertNotEqual(unknown.returncode, 0)
        self.assertIn("no system allreduce ran", unknown.stderr)
        self.assertNotEqual(other_stretch.returncode, 0)
        self.assertIn("ddp/seed-3/link.csv: second 1 on a->b is configured to 90 Mbps", other_stretch.stderr)
        self.assertIn("not the same stretch of the trace", other_stretch.stderr)
        self.assertNotEqual(shorter.returncode, 0)
        self.assertIn("ddp/seed-1/link.csv: no whole second 2 on a->b", shorter.stderr)
        self.assertIn("must last at least as long", shorter.stderr)

    def test_versus_pairs_each_seed_with_the_same_seed_on_another_backend(self):
        with tempfile.TemporaryDirectory() as emu, tempfile.TemporaryDirectory() as sim:
            write_emu_and_sim(emu, sim)
            out = report(emu, "--after", "1", "--versus", sim)
            with open(os.path.join(sim, "rule/seed-2/link.csv")) as f:
                text = f.read()
            with open(os.path.join(sim, "rule/seed-2/link.csv"), "w") as f:
                f.write(text.replace("1,a->b,100,", "1,a->b,90,"))
            other_stretch = report(emu, "--versus", sim)
            missing = report(emu, "--versus", os.path.join(sim, "nowhere"))
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("| rule | 60.0% (40.0%-80.0%) | 50.0% (50.0%-50.0%) | +10.0 (-10.0 to +30.0) | 2 of 3 | 420 / 400 "
                      "| +10.0 over 3 (none) |", out.stdout)
        self.assertNotEqual(other_stretch.returncode, 0)
        self.assertIn("rule/seed-2/link.csv: second 1 on a->b is configured to 90 Mbps", other_stretch.stderr)
        self.assertIn("not the same stretch of the trace", other_stretch.stderr)
        self.assertNotEqual(missing.returncode, 0)
        self.assertIn("--versus", missing.stderr)

    def test_versus_also_pairs_only_the_seeds_whose_host_kept_up(self):
        with tempfile.TemporaryDirectory() as emu, tempfile.TemporaryDirectory() as sim:
            write_emu_and_sim(emu, sim)
            write_manifest(emu, 3, {"host": {"fell_behind": ["paced compute ran late on rank 0"]}})
            write_manifest(sim, 1, {"backend": "sim"})  # no host check: kept up
            out = report(emu, "--after", "1", "--versus", sim)
            write_manifest(sim, 2, {"host": {"fell_behind": ["the hypervisor took 12% of the host's CPU time"]}})
            both = report(emu, "--after", "1", "--versus", sim)
            write_manifest(emu, 1, {"host": {"fell_behind": ["late"]}})
            none_kept_up = report(emu, "--after", "1", "--versus", sim)
            write_manifest(emu, 2, "{not json")
            unreadable = report(emu, "--after", "1", "--versus", sim)
            write_manifest(emu, 2, {"host": "fine"})
            malformed = report(emu, "--after", "1", "--versus", sim)
        self.assertEqual(out.returncode, 0, out.stderr)
        # Seed 3 (+30 points) is left out: the median of -10 and +10.
        self.assertIn("| +10.0 (-10.0 to +30.0) | 2 of 3 | 420 / 400 | +0.0 over 2 (host fell behind on seed 3) |",
                      out.stdout)
        # A host that fell behind in the other folder's run counts too.
        self.assertIn("| -10.0 over 1 (host fell behind on seeds 2, 3) |", both.stdout)
        self.assertIn("| no seed (host fell behind on seeds 1, 2, 3) |", none_kept_up.stdout)
        self.assertNotEqual(unreadable.returncode, 0)
        self.assertIn("rule/seed-2/manifest.json: cannot read the run's manifest", unreadable.stderr)
        self.assertNotEqual(malformed.returncode, 0)
        self.assertIn("rule/seed-2/manifest.json: host must be an object", malformed.stderr)

    def test_versus_names_the_seeds_only_one_folder_ran(self):
        with tempfile.TemporaryDirectory() as emu, tempfile.TemporaryDirectory() as sim:
            write_emu_and_sim(emu, sim)
            with open(os.path.join(sim, "summary.json")) as f:
                summary = json.load(f)
            summary["systems"]["rule"]["per_seed"] = summary["systems"]["rule"]["per_seed"][:2]
            with open(os.path.join(sim, "summary.json"), "w") as f:
                json.dump(summary, f)
            out = report(emu, "--after", "1", "--versus", sim)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("| +0.0 (-10.0 to +10.0) | 1 of 2 | 420 / 400 | +0.0 over 2 (seed 3 in one folder only) |",
                      out.stdout)

    def test_accuracy_runs_compare_the_controller_with_the_best_fixed_density(self):
        with tempfile.TemporaryDirectory() as root:
            write_folder(root, {"fixed-0.1": [(15, 0.1, 100, 50, 2.0)] * 3,
                                "stellatrain": [(15, 0.08, 90, 45, 2.2)] * 3}, timing=False)
            out = report(root)
        self.assertEqual(out.returncode, 0, out.stderr)
        # The first iteration ran at 5% and the first second at 10 Mbps.
        self.assertIn("| fixed-0.1 | 2.00 (3/3) | 100 | 87.00% | 15.0 | 0.0833 | 100 | 37% |", out.stdout)
        self.assertIn("* stellatrain: 1.10x the best fixed density's median TTA", out.stdout)

    def test_a_missing_folder_is_named(self):
        out = report("/nonexistent/results")
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("/nonexistent/results", out.stderr)


if __name__ == "__main__":
    unittest.main()
