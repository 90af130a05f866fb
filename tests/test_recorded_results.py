#!/usr/bin/env python3
"""The recorded GPU runs of docs/results/ (kept because remaking them needs
a GPU) still give the rows that README.md and docs/paper-tta.md quote:
analysis/paper_tta_table.py's row for each folder and system is found,
character for character, in the docs' tables. A change to the analysis, to
the recorded folders or to the quoted table that makes them disagree
fails here. Standard library only.

    python3 tests/test_recorded_results.py [REPO_ROOT]
"""
import os
import sys
import unittest

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "analysis"))
import paper_tta_table  # noqa: E402

RECORDED = os.path.join(ROOT, "docs", "results", "paper-tta-gpu")
LINKS = ("fluct-115", "const-100", "const-500")


def read(relative):
    with open(os.path.join(ROOT, relative), encoding="utf-8") as f:
        return f.read()


def recorded(link):
    return os.path.join(RECORDED, f"resnet18-h100-{link}")


def table_row(link, label):
    return paper_tta_table.row(recorded(link), label)


class RecordedGpuRuns(unittest.TestCase):
    def test_every_link_has_a_summary_with_three_seeds(self):
        for link in LINKS:
            summary = paper_tta_table.load(recorded(link))
            self.assertEqual(summary["seeds"], [1, 2, 3], link)
            self.assertEqual(set(summary["systems"]), {"stellatrain-fill-80", "ddp", "warmup-fill-0.2"}, link)

    def test_paper_tta_doc_quotes_the_rows_these_runs_give(self):
        doc = read(os.path.join("docs", "paper-tta.md"))
        for label in ("stellatrain-fill-80", "warmup-fill-0.2"):
            for link in LINKS:
                row = table_row(link, label)
                self.assertIn(row, doc, f"docs/paper-tta.md lacks the row {row}")

    def test_readme_quotes_the_controller_rows(self):
        readme = read("README.md")
        for link in LINKS:
            row = table_row(link, "stellatrain-fill-80")
            self.assertIn(row, readme, f"README.md lacks the row {row}")

    def test_a_quoted_row_that_differs_is_caught(self):
        # The check compares whole rows: one changed digit is not in the doc.
        row = table_row("fluct-115", "stellatrain-fill-80")
        self.assertNotIn(row.replace("55.7x", "55.8x"), read(os.path.join("docs", "paper-tta.md")))

    def test_a_missing_folder_is_named(self):
        # load() exits with the message; nothing is printed before.
        with self.assertRaises(SystemExit) as caught:
            paper_tta_table.load(recorded("const-1000"))
        self.assertIn("resnet18-h100-const-1000", str(caught.exception))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
