#!/usr/bin/env python3
"""Tests for analysis/reaction_bound.py on traces written here: a constant
link loses nothing at any delay, a square wave's share follows from its
period by hand, the safety factor scales what is carried, and bad traces or
options are errors that name the file, line or option. Standard library only.
"""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "analysis", "reaction_bound.py")


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


def row(output, safety):
    """The shares (percent) in the table row of `safety`."""
    for line in output.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells and cells[0] == safety:
            return [float(c.rstrip("%")) for c in cells[1:]]
    raise AssertionError(f"no row for safety {safety} in:\n{output}")


class ReactionBound(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def trace(self, text, name="t.csv"):
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_a_constant_link_is_carried_whole_at_any_delay(self):
        path = self.trace("# constant\ntime_s,mbps\n0,50\n1,50\n2,50\n3,50\n")
        out = run(path, "--delays", "0,1,2", "--safety", "1,0.9")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(row(out.stdout, "1"), [100.0, 100.0, 100.0])
        self.assertEqual(row(out.stdout, "0.9"), [90.0, 90.0, 90.0])
        self.assertIn("mean 50.0 Mbps", out.stdout)

    def test_a_square_wave_loses_what_the_late_plan_misses(self):
        # 100 and 20 Mbps alternating each second, 100 first, 8 seconds.
        # Known one second late, each of seconds 1-7 plans the other level
        # and carries 20: 7 x 20 of the 4 x 20 + 3 x 100 those seconds hold.
        rows = "".join(f"{s},{100 if s % 2 == 0 else 20}\n" for s in range(8))
        path = self.trace("time_s,mbps\n" + rows)
        out = run(path, "--delays", "0,1,2", "--safety", "1")
        self.assertEqual(out.returncode, 0, out.stderr)
        late = 7 * 20 / (4 * 20 + 3 * 100) * 100
        shares = row(out.stdout, "1")
        self.assertEqual(shares[0], 100.0)
        self.assertAlmostEqual(shares[1], late, places=1)
        self.assertEqual(shares[2], 100.0)  # two seconds late is the same level again

    def test_bad_traces_are_named_with_their_line(self):
        cases = {
            "time_s,mbps\n0,10\nzero,10\n": "bad.csv:3: expected time_s,mbps",
            "0,10\n0,20\n": "bad.csv:2: time 0.0 does not follow 0.0",
            "0,10\n1,-5\n": "bad.csv:2: negative rate",
            "time_s,mbps\n0,10\n": "bad.csv: needs at least two rows",
        }
        for text, message in cases.items():
            out = run(self.trace(text, "bad.csv"))
            self.assertNotEqual(out.returncode, 0, text)
            self.assertIn(message, out.stderr, text)
        out = run(os.path.join(self.dir.name, "missing.csv"))
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("missing.csv: cannot read", out.stderr)

    def test_bad_options_are_named(self):
        path = self.trace("0,10\n1,10\n")
        for args, name in ((["--delays", "1,x"], "--delays"), (["--safety", "-1"], "--safety"),
                           (["--step", "0"], "--step")):
            out = run(path, *args)
            self.assertNotEqual(out.returncode, 0, args)
            self.assertIn(name, out.stderr, args)


if __name__ == "__main__":
    unittest.main()
