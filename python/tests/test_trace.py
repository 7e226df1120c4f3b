"""Tracing behaviour: the no-branch rule, traced input operations, output kinds."""

import unittest

from wirespeed_trace import (
    Fe25519,
    Interpreter,
    TraceError,
    all_of,
    any_of,
    bit,
    compile_function,
    lnot,
    low_bits,
    reference,
    select,
    trace_function,
)

from .edwards import random_rng


def enc(n):
    return n.to_bytes(32, "little")


class NoBranches(unittest.TestCase):
    def test_if_on_traced_comparison_raises_and_names_select(self):
        def prog(inp):
            x = Fe25519(inp[0])
            if x == 1:
                return x
            return -x

        # Untraced, the Python if is fine.
        self.assertEqual(reference(prog, [enc(1)]), [enc(1)])
        with self.assertRaises(TraceError) as cm:
            trace_function(prog)
        self.assertIn("select(cond, a, b)", str(cm.exception))

    def test_and_or_not_on_traced_values_raise(self):
        g_inputs = []

        def grab(inp):
            g_inputs.append(inp[0])
            return inp[0] < 5

        trace_function(grab)
        raw = g_inputs[0]
        cond = raw < 5
        for bad in (lambda: cond and True, lambda: not cond, lambda: bool(raw),
                    lambda: bool(Fe25519(raw)), lambda: 1 if bit(raw, 3) else 0):
            with self.assertRaisesRegex(TraceError, "select"):
                bad()

    def test_select_written_once_runs_both_ways(self):
        def prog(inp):
            x = Fe25519(inp[0])
            return {"r": select(x == 1, x, -x), "b": select(bit(inp[0], 0), True, x.is_zero())}

        it = Interpreter(compile_function(prog).program)
        for n in (0, 1, 2, 2**255 + 1):
            self.assertEqual(it.run([enc(n)]), reference(prog, [enc(n)]))


class RawInputs(unittest.TestCase):
    def test_bits_masks_and_comparisons(self):
        def prog(inp):
            x = inp[0]
            low = low_bits(x, 100)
            return {
                "b0": bit(x, 0),
                "b255": (x >> 255) & 1,
                "b254": x >> 254 >> 0 & 1,
                "lt": low < 12345,
                "le": low <= 2**99,
                "gt": x > 2**255,
                "ge": low_bits(x, 255) >= 2**255 - 19,
                "eq": low == 7,
                "ne": x != 7,
                "f": Fe25519(low) + Fe25519(x),
                "any": any_of(bit(x, 1), bit(x, 2)),
                "all": all_of(bit(x, 1), bit(x, 2), True),
                "not": lnot(bit(x, 3)),
                "x1": (x >> 255) ^ True,
            }

        it = Interpreter(compile_function(prog).program)
        rng = random_rng(5)
        cases = [0, 1, 6, 7, 8, 12344, 12345, 2**99, 2**99 + 1, 2**255 - 20, 2**255 - 19,
                 2**255, 2**255 + 1, 2**255 + 7, 2**256 - 1, 2**100 + 7]
        cases += [rng.randrange(2**256) for _ in range(20)]
        for n in cases:
            self.assertEqual(it.run([enc(n)]), reference(prog, [enc(n)]), hex(n))

    def test_comparisons_decided_by_width_fold_away(self):
        def prog(inp):
            x = low_bits(inp[0], 8)
            return {"t": x < 256, "f": x > 300, "u": x < 0}

        c = compile_function(prog)
        self.assertEqual([i[0] for i in c.program.instructions].count("rawlt"), 0)
        self.assertEqual(Interpreter(c.program).run([enc(3)]), [True, False, False])

    def test_unsupported_raw_operations_raise(self):
        def shifted_compare(inp):
            return (inp[0] >> 8) < 5

        def odd_mask(inp):
            return Fe25519(inp[0] & 0xF0)

        def float_compare(inp):
            return inp[0] < 2.5

        for fn in (shifted_compare, odd_mask, float_compare):
            with self.assertRaises(TraceError):
                trace_function(fn)

    def test_outputs_must_be_field_elements_or_conditions(self):
        with self.assertRaisesRegex(TraceError, "output"):
            trace_function(lambda inp: 5)
        with self.assertRaisesRegex(TraceError, "output"):
            trace_function(lambda inp: [])

    def test_constant_outputs(self):
        c = compile_function(lambda inp: (Fe25519(9), True, inp[0] < 2**300))
        self.assertEqual(Interpreter(c.program).run([enc(0)]), [enc(9), True, True])


if __name__ == "__main__":
    unittest.main()
