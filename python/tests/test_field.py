"""Field classes: concrete arithmetic against Python ints, the fixed chains, and traced
programs against the untraced reference on random and edge inputs."""

import unittest

from wirespeed_trace import (
    L,
    P25519,
    Fe25519,
    Fp,
    Interpreter,
    Scalar,
    TraceError,
    bit,
    compile_function,
    lnot,
    low_bits,
    reference,
    select,
)

from .edwards import random_rng

P = P25519

EDGE_INTS = [
    0, 1, 2, 19, P - 2, P - 1, P, P + 1, P + 18, 2**255 - 1, 2**255, 2**255 + 1,
    2**255 + P - 1, 2**256 - 1, L - 1, L, L + 1, 2**128, 2**252,
]


def enc(n):
    return n.to_bytes(32, "little")


def kitchen_sink(field):
    """A reference function using every traced operation (two inputs)."""

    def program(inp):
        a = field(inp[0])  # all 256 bits, reduced
        b = field(low_bits(inp[1], 255))
        c = a * b - a ** 3 + (b - 7) * (11 + a) - (-b)
        inv = c.invert()
        w = a ** 1000003
        small = inp[0] < 2**200
        top = bit(inp[1], 255)
        m = small ^ top
        eq5 = inp[0] == 5
        sel_bool = select(top, small, lnot(small))
        return {
            "c": c,
            "inv": inv,
            "w": select(m, w, -inv),
            "sq": c.square_n(3),
            "z": (a == b) | c.is_zero() | (a != 3) & top,
            "neg": c.is_negative(),
            "eq5": eq5,
            "gt": (inp[1] > 2**254) & (inp[0] >= 2**255) | (inp[1] <= 77),
            "selb": sel_bool,
            "div": c / (a + 1) if field.MODULUS > 2**64 else c,
        }

    return program


class ConcreteArithmetic(unittest.TestCase):
    def test_ops_match_ints(self):
        rng = random_rng(1)
        for field in (Fe25519, Scalar, Fp(1000003)):
            q = field.MODULUS
            for _ in range(50):
                x, y = rng.randrange(q), rng.randrange(q)
                a, b = field(x), field(y)
                self.assertEqual(int(a + b), (x + y) % q)
                self.assertEqual(int(a - b), (x - y) % q)
                self.assertEqual(int(a * b), x * y % q)
                self.assertEqual(int(-a), -x % q)
                self.assertEqual(int(a ** 5), pow(x, 5, q))
                self.assertEqual(int(3 - a), (3 - x) % q)
                self.assertEqual(a == b, x == y)
                self.assertEqual(a.is_negative(), x & 1 == 1)
                if x:
                    self.assertEqual(int(a.invert() * a), 1)
                    self.assertEqual(int(a ** -2 * a * a), 1)

    def test_fixed_chains_match_pow(self):
        rng = random_rng(2)
        for x in [0, 1, 2, P - 1] + [rng.randrange(P) for _ in range(8)]:
            a = Fe25519(x)
            self.assertEqual(int(a.invert_chain()), pow(x, P - 2, P))
            self.assertEqual(int(a.pow_p58()), pow(x, (P - 5) // 8, P))
            e = rng.randrange(2**256)
            self.assertEqual(int(a.pow_window(e)), pow(x, e, P))

    def test_chain_lengths(self):
        # The chains are fixed: count the nodes a traced run appends.
        def prog(inp):
            return {"inv": Fe25519(inp[0]).invert(), "p58": Fe25519(inp[0]) ** ((P - 5) // 8)}

        c = compile_function(prog)
        ops = c.program.counts()["by_op"]
        # invert: 254 squarings + 11 products; pow_p58: 251 + 11. They share x^(2^250-1)
        # (249 squarings, 10 products) and then p58's 2 squarings are invert's first 2.
        self.assertEqual(ops["sqr"], 254)
        self.assertEqual(ops["mul"], 11 + 1)

    def test_not_ordered_no_truth_value(self):
        a = Fe25519(3)
        with self.assertRaises(TraceError):
            _ = a < Fe25519(4)
        with self.assertRaisesRegex(TraceError, "select"):
            bool(a)

    def test_mixing_fields_is_an_error(self):
        with self.assertRaises(TraceError):
            Fe25519(1) + Scalar(1)

    def test_fp_is_one_class_per_modulus(self):
        self.assertIs(Fp(P), Fe25519)
        self.assertIs(Fp(L), Scalar)
        self.assertIs(Fp(101), Fp(101))
        with self.assertRaises(ValueError):
            Fp(2)


class TracedAgainstUntraced(unittest.TestCase):
    def check_field(self, field, n_random):
        fn = kitchen_sink(field)
        compiled = compile_function(fn, inputs=2, field=field)
        it = Interpreter(compiled.program)
        rng = random_rng(field.MODULUS % 1000)
        cases = [(enc(a), enc(b)) for a in EDGE_INTS for b in (0, 5, P - 1, 2**256 - 1)]
        cases += [(enc(5), enc(a)) for a in EDGE_INTS]
        cases += [(rng.randbytes(32), rng.randbytes(32)) for _ in range(n_random)]
        for case in cases:
            self.assertEqual(it.run(list(case)), reference(fn, list(case), field), case)
        return compiled

    def test_fe25519(self):
        self.check_field(Fe25519, 40)

    def test_scalar_field(self):
        self.check_field(Scalar, 20)

    def test_generic_prime_field(self):
        compiled = self.check_field(Fp(1000003), 40)
        self.assertEqual(compiled.program.field_id, 0)
        self.assertEqual(compiled.program.constants[0], 1000003)

    def test_small_field_exhaustive_on_low_bits(self):
        field = Fp(13)

        def prog(inp):
            a = field(low_bits(inp[0], 4))
            return {"sq": a * a + 1, "inv": a.invert(), "odd": a.is_negative()}

        it = Interpreter(compile_function(prog, field=field).program)
        for n in range(16):
            self.assertEqual(it.run([enc(n)]), reference(prog, [enc(n)], field))


if __name__ == "__main__":
    unittest.main()
