"""A pure-Python interpreter of the program format, one input set at a time.

It is the executable form of the semantics in docs/trace-format.md and serves to check
the compiler: a compiled program run here must agree with the untraced reference code.
Programs are validated when loaded (:meth:`Program.from_bytes` or the constructor), so
this loop never meets an unwritten register or a kind mismatch.
"""

from __future__ import annotations

from .program import FormatError, Program

_MASK = [(1 << n) - 1 for n in range(257)]


class Interpreter:
    """Runs one validated program."""

    def __init__(self, program):
        if isinstance(program, (bytes, bytearray, memoryview)):
            program = Program.from_bytes(program)
        self.program = program
        self.q = program.modulus
        self.consts = program.constants

    def run(self, inputs):
        """Runs on ``n_inputs`` 32-byte encodings; returns the outputs in slot order: a
        field element as its canonical 32-byte little-endian encoding, a boolean as
        ``bool``."""
        p = self.program
        if len(inputs) != p.n_inputs:
            raise FormatError("the program takes %d inputs, %d given" % (p.n_inputs, len(inputs)))
        raw = []
        for enc in inputs:
            enc = bytes(enc)
            if len(enc) != 32:
                raise FormatError("an input must be 32 bytes, not %d" % len(enc))
            raw.append(int.from_bytes(enc, "little"))
        q = self.q
        consts = self.consts
        r = [None] * p.n_registers
        out = [None] * len(p.output_kinds)
        for op, d, a, b, c in p.instructions:
            if op == "sqr":
                r[d] = r[a] * r[a] % q
            elif op == "mul":
                r[d] = r[a] * r[b] % q
            elif op == "add":
                r[d] = (r[a] + r[b]) % q
            elif op == "sub":
                r[d] = (r[a] - r[b]) % q
            elif op == "neg":
                r[d] = -r[a] % q
            elif op == "load":
                r[d] = (raw[a] & _MASK[b]) % q
            elif op == "bit":
                r[d] = (raw[a] >> b) & 1 == 1
            elif op == "rawlt":
                r[d] = (raw[a] & _MASK[c]) < consts[b]
            elif op == "const":
                r[d] = consts[a]
            elif op == "bconst":
                r[d] = a == 1
            elif op == "eq":
                r[d] = r[a] == r[b]
            elif op == "iszero":
                r[d] = r[a] == 0
            elif op == "parity":
                r[d] = r[a] & 1 == 1
            elif op == "and":
                r[d] = r[a] and r[b]
            elif op == "or":
                r[d] = r[a] or r[b]
            elif op == "xor":
                r[d] = r[a] != r[b]
            elif op == "not":
                r[d] = not r[a]
            elif op == "select":
                r[d] = r[b] if r[a] else r[c]
            elif op == "outf":
                out[b] = r[a].to_bytes(32, "little")
            elif op == "outb":
                out[b] = r[a]
            else:  # unreachable: the program was validated
                raise FormatError("unknown op %r" % op)
        return out


def run_program(program, inputs):
    """One-shot :meth:`Interpreter.run`."""
    return Interpreter(program).run(inputs)
