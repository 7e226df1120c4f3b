"""Compiler passes: folding, CSE, DCE, scheduling and register allocation."""

import unittest

from wirespeed_trace import (
    Fe25519,
    Interpreter,
    RegisterFileError,
    bit,
    compile_function,
    lnot,
    reference,
    select,
    trace_function,
)
from wirespeed_trace import backend, passes
from wirespeed_trace.trace import Graph
from wirespeed_trace.rfc8032 import program_for

from .edwards import random_rng


def enc(n):
    return n.to_bytes(32, "little")


def ops(graph):
    return [n.op for n in graph.nodes]


class ConstantFolding(unittest.TestCase):
    def test_identities_fold(self):
        def prog(inp):
            x = Fe25519(inp[0])
            y = x * 1 + 0 - 0  # x
            z = (x - x) * Fe25519(inp[1])  # 0 * ... -> 0
            w = y * 0 + Fe25519(2) * 3  # 6
            c = bit(inp[0], 0)
            minus_y = -y
            return {
                "y": y,
                "z": z + w,
                "n": -minus_y,
                "c": (c & True) | False,
                "d": c | lnot(c),
                "s": select(c, y, y),
                "t": x * -1,
                "e": x == x,
                "k": x * x,
            }

        g = trace_function(prog, inputs=2)
        folded = passes.dce(passes.fold_constants(g))
        names = ops(folded)
        # x*1, +0, -0, (x-x)*..., y*0, -(-y), c&True, |False, c|not c, select(c,y,y),
        # x == x all vanish; x*-1 is a negation, x*x a squaring.
        self.assertEqual(sorted(names), sorted(
            ["load", "const", "bit", "bconst", "neg", "bconst", "sqr"]))
        self.assertLess(len(folded), len(passes.dce(g)))
        out = {name: folded.nodes[n] for _k, n, name in folded.outputs}
        self.assertEqual(out["z"].imm, (6,))
        self.assertEqual(out["d"].imm, (1,))
        self.assertEqual(out["e"].imm, (1,))
        self.assertEqual(out["n"].op, "load")
        self.assertEqual(out["s"].op, "load")
        self.assertEqual(out["c"].op, "bit")

    def test_fully_constant_graph_folds_to_constants(self):
        g = Graph(Fe25519, 0)
        a = g.const(5)
        b = g.const(7)
        m = g.add("mul", (a, b))
        s = g.add("sub", (a, b))
        e = g.add("eq", (m, g.const(35)))
        t = g.add("rawlt", (), (0, 2**8, 8))  # bits 0..7 < 256: always true
        f = g.add("rawlt", (), (0, 0, 8))  # < 0: never
        g.outputs = [("F", m, "m"), ("F", s, "s"), ("B", e, "e"), ("B", t, "t"), ("B", f, "f")]
        folded = passes.dce(passes.fold_constants(g))
        self.assertEqual(set(ops(folded)), {"const", "bconst"})
        vals = [folded.nodes[n].imm[0] for _k, n, _name in folded.outputs]
        self.assertEqual(vals, [35, (5 - 7) % Fe25519.MODULUS, 1, 1, 0])

    def test_select_on_negated_condition_swaps(self):
        def prog(inp):
            x = Fe25519(inp[0])
            return select(lnot(bit(inp[0], 1)), x, -x)

        g = passes.optimize(trace_function(prog))
        self.assertNotIn("not", ops(g))
        it = Interpreter(compile_function(prog).program)
        for n in (0, 1, 2, 3, 6):
            self.assertEqual(it.run([enc(n)]), reference(prog, [enc(n)]), n)


class CommonSubexpressions(unittest.TestCase):
    def test_cse_merges_equal_nodes_commutative_too(self):
        def prog(inp):
            a = Fe25519(inp[0])
            b = Fe25519(inp[1])
            return (a * b + b * a, a * b, Fe25519(inp[0]) + 1, a + 1)

        g = trace_function(prog, inputs=2)
        self.assertEqual(ops(g).count("mul"), 3)
        merged = passes.dce(passes.cse(g))
        self.assertEqual(ops(merged).count("mul"), 1)
        self.assertEqual(ops(merged).count("load"), 2)
        self.assertEqual(ops(merged).count("const"), 1)
        _k, n0, _ = merged.outputs[1]
        _k, n1, _ = merged.outputs[2]
        _k, n2, _ = merged.outputs[3]
        self.assertEqual(merged.nodes[n0].op, "mul")
        self.assertEqual(n1, n2)


class DeadCode(unittest.TestCase):
    def test_dce_removes_unused_nodes(self):
        def prog(inp):
            a = Fe25519(inp[0])
            unused = a.invert()  # ~265 nodes nobody reads
            del unused
            return a + 1

        g = trace_function(prog)
        self.assertGreater(len(g), 260)
        pruned = passes.dce(g)
        self.assertEqual(sorted(ops(pruned)), ["add", "const", "load"])
        pruned.check()
        c = compile_function(prog)
        self.assertEqual(len(c.program.instructions), 4)  # load, const, add, outf

    def test_passes_keep_their_input(self):
        g = trace_function(lambda inp: Fe25519(inp[0]) * 1)
        before = ops(g)
        passes.optimize(g)
        self.assertEqual(ops(g), before)


class SchedulingAndRegisters(unittest.TestCase):
    def test_schedule_is_valid_and_never_worse_than_trace_order(self):
        for fn in (program_for("strict", "A"), program_for("zip215", "R")):
            g = passes.optimize(trace_function(fn))
            order = backend.schedule(g)
            backend.check_schedule(g, order)
            traced_order = backend._graph_order(g)
            self.assertLessEqual(backend.allocate(g, order, None)[1],
                                 backend.allocate(g, traced_order, None)[1])

    def test_reported_registers_fit_and_one_fewer_fails(self):
        fn = program_for("strict", "R")
        c = compile_function(fn)
        used = c.stats["registers"]
        self.assertEqual(c.program.n_registers, used)
        self.assertLessEqual(used, c.stats["register_file"])
        exact = compile_function(fn, registers=used)
        self.assertEqual(exact.program.to_bytes(), c.program.to_bytes())
        with self.assertRaises(RegisterFileError) as cm:
            compile_function(fn, registers=used - 1)
        self.assertEqual(cm.exception.needed, used)
        self.assertIn("needs %d registers" % used, str(cm.exception))

    def test_program_needing_more_than_the_file_fails_cleanly(self):
        n = 40

        def wide(inp):
            xs = [Fe25519(i) for i in inp]
            total = xs[0]
            for x in xs[1:]:
                total = total * x
            return [x * total for x in xs]  # every x stays live until total exists

        with self.assertRaises(RegisterFileError) as cm:
            compile_function(wide, inputs=n)
        self.assertGreater(cm.exception.needed, 32)
        self.assertEqual(cm.exception.available, 32)
        c = compile_function(wide, inputs=n, registers=64)
        self.assertLessEqual(c.program.n_registers, 64)
        rng = random_rng(9)
        inputs = [rng.randbytes(32) for _ in range(n)]
        self.assertEqual(Interpreter(c.program).run(inputs), reference(wide, inputs))

    def test_allocation_never_overlaps_live_values(self):
        g = passes.optimize(trace_function(program_for("libsodium", "A")))
        order = backend.schedule(g)
        reg, used = backend.allocate(g, order, 32)
        holder = {}
        for kind, v in order:
            reads = g.nodes[v].args if kind == "n" else (g.outputs[v][1],)
            for a in reads:
                self.assertEqual(holder[reg[a]], a, "register clobbered before a read")
            if kind == "n":
                holder[reg[v]] = v
        self.assertLessEqual(max(reg.values()) + 1, used)


if __name__ == "__main__":
    unittest.main()
