"""RFC 8032 decoding and the rule modes' point checks, compiled and interpreted, against
the untraced reference and against the independent model in tests/edwards.py."""

import unittest

from wirespeed_trace import Interpreter, compile_function, reference
from wirespeed_trace.rfc8032 import (
    MODE_RULES,
    MODES,
    RFC8032,
    ROLES,
    all_programs,
    checks_program,
    decode_program,
    program_for,
    scalar_program,
)

from . import edwards as E

P = E.p

#: The reference design's figures for point decompression and checks.
REFERENCE_INSTRUCTIONS = 1153
REFERENCE_REGISTERS = 24

_CACHE = {}


def compiled(mode, role):
    key = (mode, role)
    if key not in _CACHE:
        _CACHE[key] = compile_function(program_for(mode, role)).program
    return _CACHE[key]


def enc_int(n):
    return n.to_bytes(32, "little")


def model_outputs(enc, mode, role):
    canonical, reject_small = E.MODE_TABLE[(mode, role)]
    ok, x, y = E.decode(enc, canonical, reject_small)
    return [ok, enc_int(x), enc_int(y)]


def edge_encodings(rng):
    ys = [0, 1, 2, 3, 4, 9, 18, 19, P - 19, P - 2, P - 1, 2**254, 2**255 - 20]
    ys += [P + k for k in range(19)]  # P .. 2^255 - 1: every non-canonical y
    ys += [rng.randrange(2**255) for _ in range(10)]
    out = [enc_int(y | s << 255) for y in ys for s in (0, 1)]
    return out + E.small_order_encodings(rng)


def point_encodings(rng, n):
    """Encodings of [k]B, -[k]B and [k]B + T for small-order T."""
    torsion = [E.from_affine(*pt) for pt in E.small_order_points(rng)]
    out = []
    for i in range(n):
        pt = E.mul(rng.randrange(1, E.L), E.BASE)
        out.append((E.encode(pt), E.affine(pt)))
        out.append((E.encode(E.neg(pt)), E.affine(E.neg(pt))))
        mixed = E.add(pt, torsion[i % 8])
        out.append((E.encode(mixed), E.affine(mixed)))
    return out


class DecodingPrograms(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        rng = E.random_rng(8032)
        cls.points = point_encodings(rng, 8)
        cls.inputs = edge_encodings(rng) + [e for e, _ in cls.points]
        cls.inputs += [rng.randbytes(32) for _ in range(40)]

    def test_every_mode_and_role_matches_reference_and_model(self):
        for mode in MODES:
            for role in ROLES:
                it = Interpreter(compiled(mode, role))
                fn = program_for(mode, role)
                for enc in self.inputs:
                    got = it.run([enc])
                    self.assertEqual(got, reference(fn, [enc]), (mode, role, enc.hex()))
                    self.assertEqual(got, model_outputs(enc, mode, role), (mode, role, enc.hex()))

    def test_rfc8032_as_written(self):
        # Canonical encodings only, small order allowed: here the negative zero and
        # y >= p rules matter on their own.
        fn = decode_program(RFC8032)
        it = Interpreter(compile_function(fn).program)
        for enc in self.inputs:
            ok, x, y = E.decode(enc, True, False)
            want = [ok, enc_int(x), enc_int(y)]
            self.assertEqual(it.run([enc]), want, enc.hex())
            self.assertEqual(reference(fn, [enc]), want, enc.hex())

    def test_valid_points_decode_to_themselves(self):
        for mode in MODES:
            for role in ROLES:
                it = Interpreter(compiled(mode, role))
                for enc, (x, y) in self.points:
                    self.assertEqual(it.run([enc]), [True, enc_int(x), enc_int(y)])

    def test_small_order_encodings(self):
        rng = E.random_rng(8)
        encs = E.small_order_encodings(rng)
        self.assertEqual(len(encs), 14)
        for enc in encs:
            for mode in MODES:
                for role in ROLES:
                    ok = Interpreter(compiled(mode, role)).run([enc])[0]
                    self.assertEqual(ok, mode == "zip215", (mode, role, enc.hex()))

    def test_non_canonical_y_and_negative_zero(self):
        for k in range(2, 19):
            enc = enc_int(P + k)
            decodes = E.recover(k, 0) is not None
            for mode in MODES:
                for role in ROLES:
                    out = Interpreter(compiled(mode, role)).run([enc])
                    accepts = decodes and not E.MODE_TABLE[(mode, role)][0]
                    self.assertEqual(out[0], accepts, (mode, role, k))
                    if accepts:
                        self.assertEqual(out[2], enc_int(k))  # y reduced mod p
        neg_zero = enc_int(1 | 1 << 255)
        for mode in MODES:
            for role in ROLES:
                out = Interpreter(compiled(mode, role)).run([neg_zero])
                want = [True, enc_int(0), enc_int(1)] if mode == "zip215" else \
                    [False, enc_int(0), enc_int(0)]
                self.assertEqual(out, want, (mode, role))

    def test_non_squares_are_rejected_everywhere(self):
        rng = E.random_rng(11)
        found = 0
        while found < 10:
            y = rng.randrange(P)
            if E.recover(y, 0) is not None:
                continue
            found += 1
            for mode in MODES:
                for role in ROLES:
                    out = Interpreter(compiled(mode, role)).run([enc_int(y)])
                    self.assertEqual(out, [False, enc_int(0), enc_int(0)])

    def test_equal_rules_give_identical_programs(self):
        by_rules = {}
        for (mode, role), rules in MODE_RULES.items():
            by_rules.setdefault(rules, set()).add(compiled(mode, role).to_bytes())
        self.assertEqual(len(by_rules), 3)
        for progs in by_rules.values():
            self.assertEqual(len(progs), 1)

    def test_counts_within_reference_design(self):
        for mode in MODES:
            for role in ROLES:
                prog = compiled(mode, role)
                self.assertLessEqual(len(prog.instructions), REFERENCE_INSTRUCTIONS)
                self.assertLessEqual(prog.n_registers, REFERENCE_REGISTERS)


class SignatureChecks(unittest.TestCase):
    def test_scalar_range(self):
        it = Interpreter(compile_function(scalar_program).program)
        rng = E.random_rng(3)
        cases = [0, 1, E.L - 1, E.L, E.L + 1, 2**252, 2**253, 2**255, 2**256 - 1]
        cases += [rng.randrange(2**256) for _ in range(10)]
        for s in cases:
            self.assertEqual(it.run([enc_int(s)]), [s < E.L], s)

    def test_checks_programs_combine_the_point_programs(self):
        rng = E.random_rng(4)
        a_pt = E.encode(E.mul(rng.randrange(E.L), E.BASE))
        r_pt = E.encode(E.mul(rng.randrange(E.L), E.BASE))
        small = E.small_order_encodings(rng)[3]
        non_canon = enc_int(P + 2 | 1 << 255) if E.recover(2, 1) else enc_int(P + 3)
        triples = [(a_pt, r_pt, enc_int(5)), (a_pt, r_pt, enc_int(E.L)),
                   (small, r_pt, enc_int(1)), (a_pt, small, enc_int(1)),
                   (non_canon, r_pt, enc_int(0)), (a_pt, non_canon, enc_int(0))]
        for mode in MODES:
            fn = checks_program(mode)
            it = Interpreter(compile_function(fn, inputs=3).program)
            for a, r, s in triples:
                got = it.run([a, r, s])
                self.assertEqual(got, reference(fn, [a, r, s]))
                ao = model_outputs(a, mode, "A")
                ro = model_outputs(r, mode, "R")
                s_ok = int.from_bytes(s, "little") < E.L
                want = [ao[0] and ro[0] and s_ok, ao[0], ro[0], s_ok] + ao[1:] + ro[1:]
                self.assertEqual(got, want, (mode, a.hex(), r.hex()))

    def test_all_programs_compile_under_unique_names(self):
        names = []
        for stem, fn, n_inputs in all_programs():
            prog = compile_function(fn, inputs=n_inputs).program
            self.assertEqual(prog.n_inputs, n_inputs)
            names.append(stem)
        self.assertEqual(len(names), len(set(names)))
        self.assertIn("decode-strict-a", names)
        self.assertIn("checks-libsodium", names)


if __name__ == "__main__":
    unittest.main()
