"""The program format: round trips, opcode semantics, and the validator's rejections."""

import json
import struct
import unittest

from wirespeed_trace import FormatError, Interpreter, Program, compile_function
from wirespeed_trace.program import HEADER, INSTR, OPS
from wirespeed_trace.rfc8032 import program_for

P = 2**255 - 19
L = 2**252 + 27742317777372353535851937790883648493


def enc(n):
    return n.to_bytes(32, "little")


def asm(lines, registers=8, inputs=1, outputs=("F",), constants=(), field_id=1):
    from wirespeed_trace.program import parse_instruction

    return Program(field_id, registers, inputs, list(outputs), list(constants),
                   [parse_instruction(t) for t in lines])


class RoundTrip(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.prog = compile_function(program_for("strict", "R")).program

    def test_binary_round_trip(self):
        data = self.prog.to_bytes()
        again = Program.from_bytes(data)
        self.assertEqual(again.to_bytes(), data)
        self.assertEqual(data[:4], b"WSTP")
        n = len(self.prog.instructions)
        self.assertEqual(len(data), HEADER.size + 3 + 32 * len(self.prog.constants) + 8 * n)

    def test_json_round_trip(self):
        text = self.prog.to_json()
        obj = json.loads(text)
        self.assertEqual(obj["version"], 1)
        self.assertEqual(obj["field"], "GF(2^255-19)")
        self.assertEqual([o["name"] for o in obj["outputs"]], ["ok", "x", "y"])
        self.assertEqual(obj["counts"]["instructions"], len(self.prog.instructions))
        again = Program.from_json(text)
        self.assertEqual(again.to_bytes(), self.prog.to_bytes())
        self.assertEqual(again.to_json(), text)

    def test_every_opcode_is_distinct_and_fits_a_byte(self):
        codes = [spec[0] for spec in OPS.values()]
        self.assertEqual(len(codes), len(set(codes)))
        self.assertTrue(all(0 < c < 256 for c in codes))


class Semantics(unittest.TestCase):
    def run1(self, lines, inputs, **kw):
        return Interpreter(asm(lines, **kw)).run([enc(n) for n in inputs])

    def test_load_reduces_masked_bits(self):
        top = 2**256 - 1
        self.assertEqual(self.run1(["load r0, in0, 256", "outf r0, o0"], [top]),
                         [enc(top % P)])
        self.assertEqual(self.run1(["load r0, in0, 255", "outf r0, o0"], [top]),
                         [enc((2**255 - 1) % P)])
        self.assertEqual(self.run1(["load r0, in0, 3", "outf r0, o0"], [0xFF]), [enc(7)])

    def test_bits_and_raw_comparison(self):
        prog = ["bit r0, in0, 255", "rawlt r1, in0, c0, 255", "rawlt r2, in0, c1, 256",
                "outb r0, o0", "outb r1, o1", "outb r2, o2"]
        kw = dict(outputs=("B", "B", "B"), constants=(P, L))
        self.assertEqual(self.run1(prog, [P - 1], **kw), [False, True, False])
        self.assertEqual(self.run1(prog, [P], **kw), [False, False, False])
        self.assertEqual(self.run1(prog, [2**255 + 5], **kw), [True, True, False])
        self.assertEqual(self.run1(prog, [L - 1], **kw), [False, True, True])

    def test_arithmetic_predicates_select(self):
        prog = [
            "load r0, in0, 255", "const r1, c0", "add r2, r0, r1", "sub r3, r0, r1",
            "mul r4, r2, r3", "sqr r5, r0", "neg r6, r5", "eq r7, r4, r6", "not r7, r7",
            "parity r1, r3", "not r1, r1", "xor r1, r1, r7", "bconst r2, 1", "and r2, r2, r1",
            "or r2, r2, r7", "select r6, r2, r6, r4",
            "outf r4, o0", "outf r6, o1", "outb r1, o2", "outb r2, o3",
        ]
        kw = dict(outputs=("F", "F", "B", "B"), constants=(3,))
        for x in (0, 1, 2, 5, P - 3, P - 1):
            prod = (x + 3) * (x - 3) % P
            neg_sq = -x * x % P
            eq = prod == neg_sq
            par_ok = ((x - 3) % P) & 1 == 0
            b1 = par_ok != (not eq)
            b2 = b1 or (not eq)
            self.assertEqual(self.run1(prog, [x], **kw),
                             [enc(prod), enc(neg_sq if b2 else prod), b1, b2], x)

    def test_iszero_is_modular(self):
        prog = ["load r0, in0, 256", "iszero r1, r0", "outb r1, o0"]
        for n, want in ((0, True), (P, True), (2 * P, True), (1, False), (2**256 - 1, False)):
            self.assertEqual(self.run1(prog, [n], outputs=("B",)), [want], n)

    def test_destination_may_be_an_operand(self):
        out = self.run1(["load r0, in0, 255", "mul r0, r0, r0", "outf r0, o0"], [7],
                        registers=1)
        self.assertEqual(out, [enc(49)])

    def test_generic_field_modulus_is_constant_zero(self):
        prog = asm(["load r0, in0, 256", "const r1, c1", "mul r0, r0, r1", "outf r0, o0"],
                   field_id=0, constants=(101, 5))
        self.assertEqual(Interpreter(prog).run([enc(1000)]), [enc(1000 * 5 % 101)])


class Validation(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.data = compile_function(program_for("zip215", "A")).program.to_bytes()

    def patched(self, offset, fmt, value):
        b = bytearray(self.data)
        struct.pack_into(fmt, b, offset, value)
        return bytes(b)

    def reject(self, data, pattern):
        with self.assertRaisesRegex(FormatError, pattern):
            Program.from_bytes(data)

    def first_instr(self):
        return HEADER.size + 3 + 32 * Program.from_bytes(self.data).constants.__len__()

    def test_header_rules(self):
        self.reject(b"XXXX" + self.data[4:], "magic")
        self.reject(self.patched(4, "<H", 2), "version")
        self.reject(self.patched(6, "<H", 9), "field id")
        self.reject(self.patched(8, "<H", 0), "register count")
        self.reject(self.patched(8, "<H", 257), "register count")
        self.reject(self.patched(12, "<H", 0), "length")  # output count 0
        self.reject(self.patched(HEADER.size, "<B", 2), "output kind")
        self.reject(self.data[:10], "truncated")
        self.reject(self.data[:-1], "truncated")
        self.reject(self.data + b"\0", "length")
        self.reject(self.patched(16, "<I", 10**6), "truncated")

    def test_instruction_rules(self):
        base = self.first_instr()
        # Instruction 0 is "load r0, in0, 255".
        self.assertEqual(Program.from_bytes(self.data).instructions[0][:4], ("load", 0, 0, 255))
        self.reject(self.patched(base, "<B", 0xEE), "unknown opcode")
        self.reject(self.patched(base + 1, "<B", 200), "out of range")
        self.reject(self.patched(base + 2, "<H", 1), "input 1 out of range")
        self.reject(self.patched(base + 4, "<H", 0), "bit count")
        self.reject(self.patched(base + 4, "<H", 257), "bit count")
        self.reject(self.patched(base + 6, "<H", 1), "unused field c")
        # Instruction 1 reads r0: make it read r9, never written.
        prog = Program.from_bytes(self.data)
        ins1 = prog.instructions[1]
        self.assertEqual(ins1[0], "sqr")
        unwritten = prog.n_registers - 1
        self.reject(self.patched(base + 8 + 2, "<H", unwritten), "before it is written")
        self.reject(self.patched(base + 8 + 2, "<H", 300), "out of range")

    def test_semantic_rules(self):
        cases = [
            (["load r0, in0, 255", "outb r0, o0"], {"outputs": ("B",)}, "holds a field element"),
            (["load r0, in0, 255"], {}, "never written"),
            (["load r0, in0, 255", "outf r0, o0", "outf r0, o0"], {}, "written twice"),
            (["load r0, in0, 255", "outf r0, o1"], {}, "o1 out of range"),
            (["bit r0, in0, 256", "outb r0, o0"], {"outputs": ("B",)}, "bit index"),
            (["const r0, c0", "outf r0, o0"], {"constants": (P,)}, "below the modulus"),
            (["const r0, c1", "outf r0, o0"], {"constants": (1,)}, "c1 out of range"),
            (["bconst r0, 2", "outb r0, o0"], {"outputs": ("B",)}, "not 0 or 1"),
            (["load r0, in1, 255", "outf r0, o0"], {}, "input 1 out of range"),
            (["load r8, in0, 255", "outf r8, o0"], {}, "out of range"),
            (["bit r0, in0, 1", "select r1, r0, r0, r0", "outf r1, o0"], {}, "holds a boolean"),
            (["load r0, in0, 9", "outf r0, o0"], {"field_id": 0, "constants": (2,)}, "modulus"),
            (["load r0, in0, 9"], {"outputs": ()}, "outputs"),
            (["mul r0, r0, r0", "outf r0, o0"], {}, "before it is written"),
        ]
        for lines, kw, pattern in cases:
            with self.assertRaisesRegex(FormatError, pattern, msg=lines):
                asm(lines, **kw)

    def test_text_parser_rejects_garbage(self):
        from wirespeed_trace.program import parse_instruction

        for bad in ("frob r0, r1", "mul r0, r1", "mul r0, x1, r2", "load r0, in0"):
            with self.assertRaises(FormatError):
                parse_instruction(bad)
        self.assertEqual(parse_instruction("select r1, r2, r3, r4"), ("select", 1, 2, 3, 4))
        self.assertEqual(INSTR.size, 8)


if __name__ == "__main__":
    unittest.main()
