"""The command line: compile, run, ref, stats, disasm, asm, rfc8032, and its errors."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(PYTHON_DIR, "examples")
BASE = "58" + "66" * 31
P_ENC = "ed" + "ff" * 30 + "7f"


def cli(*args, stdin=None):
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "wirespeed_trace"] + list(args),
                          input=stdin, capture_output=True, text=True, env=env, timeout=120)


class CommandLine(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def test_compile_run_ref_stats(self):
        src = os.path.join(EXAMPLES, "decode_strict_a.py")
        r = cli("compile", src, "--out", self.path("a.wtp"), "--json", self.path("a.json"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("instructions", r.stdout)
        with open(self.path("in.hex"), "w") as f:
            f.write("# the base point, then p (y >= p: not canonical, y = 0 has order 4)\n")
            f.write(BASE + "\n\n" + P_ENC + "\n")
        run = cli("run", self.path("a.wtp"), "--inputs", self.path("in.hex"))
        self.assertEqual(run.returncode, 0, run.stderr)
        lines = run.stdout.splitlines()
        self.assertEqual(len(lines), 2)
        ok, x, y = lines[0].split()
        self.assertEqual((ok, y), ("01", BASE))
        self.assertEqual(x, "1ad5258f602d56c9b2a7259560c72c695cdcd6fd31e2a4c0fe536ecdd3366921")
        self.assertEqual(lines[1], "00 " + "00" * 32 + " " + "00" * 32)
        ref = cli("ref", src, "--inputs", self.path("in.hex"))
        self.assertEqual(ref.stdout, run.stdout)
        st = cli("stats", self.path("a.wtp"), "--json")
        counts = json.loads(st.stdout)
        with open(self.path("a.json")) as f:
            self.assertEqual(json.load(f)["counts"], counts)
        text = cli("stats", self.path("a.wtp")).stdout
        self.assertIn("registers     %d" % counts["registers"], text)

    def test_two_input_example_and_stdin(self):
        src = os.path.join(EXAMPLES, "sum_of_squares.py")
        r = cli("compile", src, "--out", self.path("s.wtp"))
        self.assertEqual(r.returncode, 0, r.stderr)
        line = "03" + "00" * 31 + " " + "04" + "00" * 31 + "\n"
        run = cli("run", self.path("s.wtp"), "--inputs", "-", stdin=line)
        self.assertEqual(run.stdout.split(), ["19" + "00" * 31, "01", "03" + "00" * 31])

    def test_disasm_asm_round_trip(self):
        self.assertEqual(cli("rfc8032", "--out-dir", self.dir).returncode, 0)
        prog = self.path("decode-zip215-r.wtp")
        dis = cli("disasm", prog)
        with open(self.path("d.json"), "w") as f:
            f.write(dis.stdout)
        self.assertEqual(cli("asm", self.path("d.json"), "--out", self.path("b.wtp")).returncode, 0)
        with open(prog, "rb") as a, open(self.path("b.wtp"), "rb") as b:
            self.assertEqual(a.read(), b.read())

    def test_rfc8032_writes_every_program(self):
        r = cli("rfc8032", "--out-dir", self.dir)
        self.assertEqual(r.returncode, 0, r.stderr)
        files = set(os.listdir(self.dir))
        for mode in ("strict", "zip215", "cofactored-strict", "libsodium"):
            for role in ("a", "r"):
                self.assertIn("decode-%s-%s.wtp" % (mode, role), files)
                self.assertIn("decode-%s-%s.json" % (mode, role), files)
            self.assertIn("checks-%s.wtp" % mode, files)
        self.assertIn("decode-strict-a", r.stdout)

    def test_errors_are_one_line_and_exit_1(self):
        with open(self.path("bad.wtp"), "wb") as f:
            f.write(b"NOPE" + bytes(40))
        with open(self.path("in.hex"), "w") as f:
            f.write("abcd\n")
        cases = [
            ("run", self.path("bad.wtp"), "--inputs", self.path("in.hex")),
            ("stats", self.path("missing.wtp")),
            ("compile", os.path.join(EXAMPLES, "sum_of_squares.py"), "--out",
             self.path("x.wtp"), "--registers", "2"),
            ("compile", os.path.join(EXAMPLES, "sum_of_squares.py"), "--out",
             self.path("x.wtp"), "--function", "nothing"),
        ]
        for args in cases:
            r = cli(*args)
            self.assertEqual(r.returncode, 1, args)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertTrue(r.stderr.startswith("error: "), r.stderr)
        src = os.path.join(EXAMPLES, "decode_strict_a.py")
        cli("compile", src, "--out", self.path("a.wtp"))
        r = cli("run", self.path("a.wtp"), "--inputs", self.path("in.hex"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("line 1: 2 bytes", r.stderr)


if __name__ == "__main__":
    unittest.main()
