"""scripts/demo_model.py: which schemas count as the demo's model (the
Makefile builds the suites, bench rows and example written for the demo's
names only for those). The reference is tests/support/demo/issue.schema.

Run from the repo root: PYTHONPATH=gen python3 -m unittest discover -s gen/tests
"""

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(ROOT, "scripts", "demo_model.py")
REF = os.path.join(ROOT, "tests", "support", "demo", "issue.schema")


def verdict(text):
    """What demo_model.py says of a schema of this text: True for the demo's."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "s.schema")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        out = subprocess.run([sys.executable, SCRIPT, path, REF], check=True,
                             capture_output=True, text=True).stdout
    lines = [ln for ln in out.splitlines() if ln.startswith("DEMO_MODEL :=")]
    assert len(lines) == 1, out
    return lines[0].split(":=", 1)[1].strip() == "yes"


class DefaultGoal(unittest.TestCase):
    def test_make_alone_builds_all(self):
        """demo.mk's rule comes before all's in the Makefile; without
        .DEFAULT_GOAL it was `make`'s goal, which then built nothing else."""
        with open(os.path.join(ROOT, "Makefile"), encoding="utf-8") as f:
            text = f.read()
        goal = [ln for ln in text.splitlines() if ln.startswith(".DEFAULT_GOAL")]
        self.assertEqual(goal, [".DEFAULT_GOAL := all"])
        self.assertLess(text.index(".DEFAULT_GOAL"), text.index("-include $(GEN)/demo.mk"))


class DemoModel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(REF, encoding="utf-8") as f:
            cls.ref = f.read()

    def test_the_reference_is_the_demo(self):
        self.assertTrue(verdict(self.ref))

    def test_comments_spacing_and_optic_order_do_not_count(self):
        lines = self.ref.splitlines()
        optics = [ln for ln in lines if ln.startswith("optic ")]
        rest = [ln for ln in lines if not ln.startswith("optic ")]
        text = "\n".join("# a comment\n" + ln.replace(" ", "   ") for ln in rest)
        text += "\n" + "\n".join(reversed(optics)) + "\n"
        self.assertTrue(verdict(text))

    def test_another_optic_is_fine(self):
        self.assertTrue(verdict(self.ref + "\noptic component = Issue.component\n"))

    def test_a_changed_type_is_not(self):
        self.assertIn("    storyPoints: i32\n", self.ref)
        self.assertFalse(verdict(self.ref.replace("    storyPoints: i32\n", "    storyPoints: i64\n")))
        self.assertFalse(verdict(self.ref.replace("Sev1 Sev2", "Sev2 Sev1")))
        self.assertFalse(verdict(self.ref + "\nenum Extra { A B }\n"))

    def test_a_missing_or_changed_optic_is_not(self):
        lines = self.ref.splitlines()
        no_votes = [ln for ln in lines if not ln.startswith("optic votes ")]
        self.assertEqual(len(no_votes), len(lines) - 1)
        self.assertFalse(verdict("\n".join(no_votes)))
        self.assertFalse(verdict(self.ref.replace("optic detail = Issue.detail raw",
                                                  "optic detail = Issue.detail")))

    def test_another_schema_or_no_file_is_not(self):
        with open(os.path.join(ROOT, "tests", "models", "orders.schema"), encoding="utf-8") as f:
            self.assertFalse(verdict(f.read()))
        self.assertFalse(verdict(""))
        out = subprocess.run([sys.executable, SCRIPT, "/nonexistent.schema", REF], check=True,
                             capture_output=True, text=True).stdout
        self.assertIn("DEMO_MODEL := \n", out)


if __name__ == "__main__":
    unittest.main()
