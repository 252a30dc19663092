"""Tests for promtext_check.py: it accepts well-formed text and names each kind of malformed line.

Run: python3 -m unittest discover -s Tests/Lab
"""

import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
import promtext_check  # noqa: E402

GOOD = (
    b"# HELP a_total Things.\n# TYPE a_total counter\n"
    b'a_total{reason="x",outcome="y"} 3\na_total{reason="x",outcome="z"} 0 1718000000000\n'
    b"# HELP b_seconds Time, with a \\\\ and a \\n.\n# TYPE b_seconds gauge\nb_seconds 1718000000.250\n"
    b'# a comment\n\nc{l="q\\"uo\\\\te\\n",} +Inf\nd NaN\n'
)


class Checker(unittest.TestCase):
    def test_well_formed_text_passes(self):
        self.assertEqual(promtext_check.check(GOOD), (4, 5))

    def test_conventions(self):
        good = b"# HELP a_total A.\n# TYPE a_total counter\na_total 1\n# HELP g G.\n# TYPE g gauge\ng 1\n"
        self.assertEqual(promtext_check.check(good, conventions=True), (2, 2))
        for bad in (
            b"# TYPE a counter\na 1\n",  # no HELP
            b"# HELP a A.\n# TYPE a counter\na 1\n",  # counter without _total
            b"# HELP a_total A.\n# TYPE a_total gauge\na_total 1\n",  # gauge with _total
        ):
            with self.assertRaises(promtext_check.Problem, msg=bad):
                promtext_check.check(bad, conventions=True)

    def test_malformed_text_is_refused(self):
        for bad, why in (
            (b"a 1", "no final line feed"),
            (b"a\n", "no value"),
            (b"a one\n", "not a float"),
            (b"a 1 2.5\n", "fractional timestamp"),
            (b"a 1 2 3\n", "extra token"),
            (b"1a 1\n", "bad metric name"),
            (b'a{1l="x"} 1\n', "bad label name"),
            (b'a{__l="x"} 1\n', "reserved label name"),
            (b'a{l="x",l="y"} 1\n', "repeated label"),
            (b'a{l="x} 1\n', "unterminated value"),
            (b'a{l="\\x"} 1\n', "bad escape"),
            (b'a{l="x" m="y"} 1\n', "no comma"),
            (b'a{l="x"}1\n', "no space before the value"),
            (b"# TYPE a countr\na 1\n", "unknown type"),
            (b"# TYPE a gauge\n# TYPE a gauge\na 1\n", "second TYPE"),
            (b"# HELP a x\n# HELP a y\na 1\n", "second HELP"),
            (b"a 1\n# TYPE a gauge\n", "TYPE after samples"),
            (b"a 1\nb 1\na{l=\"x\"} 1\n", "interleaved families"),
            (b"a 1\na 2\n", "duplicate series"),
            (b"# HELP a bad \\t escape\na 1\n", "bad HELP escape"),
            (b"\xff 1\n", "not UTF-8"),
        ):
            with self.assertRaises(promtext_check.Problem, msg=why):
                promtext_check.check(bad)

    def test_command_line(self):
        script = os.path.join(os.path.dirname(__file__), "promtext_check.py")
        ok = subprocess.run([sys.executable, script, "-"], input=GOOD, capture_output=True)
        self.assertEqual((ok.returncode, ok.stdout), (0, b"ok: 4 families, 5 samples\n"))
        bad = subprocess.run([sys.executable, script, "-"], input=b"a 1\na 1\n", capture_output=True)
        self.assertEqual(bad.returncode, 1)
        self.assertTrue(bad.stdout.startswith(b"line 2: "), bad.stdout)


if __name__ == "__main__":
    unittest.main()
