#!/usr/bin/env python3
"""Every reference of the form docs/NAME.md, "Section" (also
docs/NAME.md ("Section") and docs/NAME.md's "Section") in the repository's
text files names a file that exists and a heading or bold paragraph
opening in it. The docs refer to each other by section name, and a section
moved to another file or renamed would otherwise leave the reference
pointing nowhere. A quoted name may wrap over lines, also inside # or //
comments, and its quotes may be escaped (\" in a C++ string, e.g. a
command's help). Standard library only.

    python3 tests/test_doc_references.py [REPO_ROOT]
"""
import os
import re
import sys
import tempfile
import unittest

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
TEXT_SUFFIXES = (".md", ".cc", ".h", ".yaml", ".py", ".sh", ".txt")
SKIPPED_DIRS = {".git", "build", "results", "third_party"}
# Whitespace between the words of a quoted name, with a comment's marker
# where the name wraps inside a comment.
GAP = r"(?:\s+(?:#\s*|//\s*)?)"
REFERENCE = re.compile(r"(docs/[\w.-]+\.md)(?:,|'s)?" + GAP + r"?\(?\\?\"([^\"\\]{3,90}?)\\?\"", re.S)


def sections(doc_text):
    """The names a reference may quote: headings, and bold openings."""
    names = {re.sub(r"^#+\s*", "", line).strip() for line in doc_text.split("\n") if line.startswith("#")}
    names |= {re.sub(r"\s+", " ", bold).strip().rstrip(".:") for bold in re.findall(r"\*\*(.+?)\*\*", doc_text, re.S)}
    return names


def names_a_section(name, names):
    # A bold paragraph's opening often runs on past the name quoted.
    return name in names or any(n.startswith(name) for n in names)


def broken_references(root):
    docs = {}
    broken = []
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = [d for d in subfolders if d not in SKIPPED_DIRS and not d.startswith("build")]
        for file in files:
            if not file.endswith(TEXT_SUFFIXES):
                continue
            path = os.path.join(folder, file)
            if os.path.samefile(path, __file__):  # its own examples
                continue
            with open(path, errors="replace") as f:
                text = f.read()
            for match in REFERENCE.finditer(text):
                doc, name = match.group(1), re.sub(GAP, " ", match.group(2)).strip()
                where = f"{os.path.relpath(path, root)}:{text.count(chr(10), 0, match.start()) + 1}"
                doc_path = os.path.join(root, doc)
                if not os.path.exists(doc_path):
                    broken.append(f"{where}: {doc} does not exist")
                    continue
                if doc not in docs:
                    with open(doc_path) as f:
                        docs[doc] = sections(f.read())
                if not names_a_section(name, docs[doc]):
                    broken.append(f"{where}: {doc} has no section {name!r}")
    return broken


class DocReferences(unittest.TestCase):
    def test_every_reference_in_the_repository_resolves(self):
        broken = broken_references(ROOT)
        self.assertEqual(broken, [], "\n" + "\n".join(broken))

    def test_a_moved_or_renamed_section_is_found(self):
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "docs"))
            with open(os.path.join(root, "docs", "a.md"), "w") as f:
                f.write("# A\n\n## Kept here\n\n**Bold opening.** text\n")
            with open(os.path.join(root, "notes.sh"), "w") as f:
                f.write('# see (docs/a.md, "Kept\n# here") and docs/a.md\'s "Bold opening"\n'
                        '# and docs/a.md ("Moved away") and docs/b.md, "Anything"\n')
            with open(os.path.join(root, "help.cc"), "w") as f:
                f.write('"a flag (docs/a.md, \\"Kept here\\"); another (docs/a.md, \\"Gone\\")"\n')
            broken = broken_references(root)
        self.assertEqual(sorted(broken), ["help.cc:1: docs/a.md has no section 'Gone'",
                                          "notes.sh:3: docs/a.md has no section 'Moved away'",
                                          "notes.sh:3: docs/b.md does not exist"])


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
