"""The program format: a versioned binary, its validation, and a JSON disassembly.

The full specification is docs/trace-format.md; this module is its reference reader and
writer. A :class:`Program` built in memory, read from bytes or read from JSON is
validated by :func:`validate`, which enforces every rule of the specification, so a
program that loads here loads in any conforming loader.
"""

from __future__ import annotations

import json
import struct

from .field import FIELD_ID_25519, FIELD_ID_GENERIC, FIELD_ID_SCALAR, L, P25519

MAGIC = b"WSTP"
VERSION = 1
HEADER = struct.Struct("<4sHHHHHHI")  # magic version field regs inputs outputs consts instrs
INSTR = struct.Struct("<BBHHH")  # op dst a b c
MAX_REGISTERS = 256
CONST_BYTES = 32

KIND_FIELD = 0
KIND_BOOL = 1
KIND_NAMES = {KIND_FIELD: "field", KIND_BOOL: "bool"}

FIELD_NAMES = {
    FIELD_ID_GENERIC: "GF(p), p = constant 0",
    FIELD_ID_25519: "GF(2^255-19)",
    FIELD_ID_SCALAR: "Z/L",
}
FIELD_MODULI = {FIELD_ID_25519: P25519, FIELD_ID_SCALAR: L}

# Operand types: rF/rB read a register holding a field element/boolean; "in" an input
# index; "nbits" 1..256; "bitidx" 0..255; "cF" a constant usable as a field element
# (< modulus); "cK" any constant; "imm01" 0 or 1; "oF"/"oB" an output slot of that kind.
#
# name: (opcode, kind of dst or None, [(field, operand type), ...]) in text order.
OPS = {
    "load": (0x01, "F", [("a", "in"), ("b", "nbits")]),
    "bit": (0x02, "B", [("a", "in"), ("b", "bitidx")]),
    "rawlt": (0x03, "B", [("a", "in"), ("b", "cK"), ("c", "nbits")]),
    "const": (0x04, "F", [("a", "cF")]),
    "bconst": (0x05, "B", [("a", "imm01")]),
    "add": (0x10, "F", [("a", "rF"), ("b", "rF")]),
    "sub": (0x11, "F", [("a", "rF"), ("b", "rF")]),
    "mul": (0x12, "F", [("a", "rF"), ("b", "rF")]),
    "sqr": (0x13, "F", [("a", "rF")]),
    "neg": (0x14, "F", [("a", "rF")]),
    "eq": (0x20, "B", [("a", "rF"), ("b", "rF")]),
    "iszero": (0x21, "B", [("a", "rF")]),
    "parity": (0x22, "B", [("a", "rF")]),
    "and": (0x30, "B", [("a", "rB"), ("b", "rB")]),
    "or": (0x31, "B", [("a", "rB"), ("b", "rB")]),
    "xor": (0x32, "B", [("a", "rB"), ("b", "rB")]),
    "not": (0x33, "B", [("a", "rB")]),
    "select": (0x40, "F", [("a", "rB"), ("b", "rF"), ("c", "rF")]),
    "outf": (0x50, None, [("a", "rF"), ("b", "oF")]),
    "outb": (0x51, None, [("a", "rB"), ("b", "oB")]),
}
BY_CODE = {spec[0]: name for name, spec in OPS.items()}
_PREFIX = {"rF": "r", "rB": "r", "in": "in", "cF": "c", "cK": "c", "oF": "o", "oB": "o"}
_FIELD_POS = {"a": 2, "b": 3, "c": 4}


class FormatError(ValueError):
    """A program violates the format specification (docs/trace-format.md)."""


class Program:
    """A validated program.

    ``instructions`` is a list of ``(op_name, dst, a, b, c)``; ``output_kinds`` a list of
    ``"F"``/``"B"``; ``constants`` a list of ints (0..2^256-1). ``output_names`` is
    carried by the JSON form only.
    """

    def __init__(self, field_id, n_registers, n_inputs, output_kinds, constants,
                 instructions, output_names=None, version=VERSION):
        self.version = version
        self.field_id = field_id
        self.n_registers = n_registers
        self.n_inputs = n_inputs
        self.output_kinds = list(output_kinds)
        self.constants = list(constants)
        self.instructions = [tuple(i) for i in instructions]
        self.output_names = list(output_names) if output_names else None
        validate(self)

    @property
    def modulus(self):
        if self.field_id == FIELD_ID_GENERIC:
            return self.constants[0]
        return FIELD_MODULI[self.field_id]

    def __eq__(self, other):
        return isinstance(other, Program) and self.to_bytes() == other.to_bytes()

    __hash__ = None

    # -- binary ---------------------------------------------------------------------

    def to_bytes(self):
        out = [HEADER.pack(MAGIC, self.version, self.field_id, self.n_registers,
                           self.n_inputs, len(self.output_kinds), len(self.constants),
                           len(self.instructions))]
        out.append(bytes(KIND_BOOL if k == "B" else KIND_FIELD for k in self.output_kinds))
        out.extend(c.to_bytes(CONST_BYTES, "little") for c in self.constants)
        for name, dst, a, b, c in self.instructions:
            out.append(INSTR.pack(OPS[name][0], dst, a, b, c))
        return b"".join(out)

    @classmethod
    def from_bytes(cls, data):
        data = bytes(data)
        if len(data) < HEADER.size:
            raise FormatError("truncated: %d bytes, the header alone is %d" % (len(data), HEADER.size))
        magic, version, field_id, regs, n_in, n_out, n_const, n_instr = HEADER.unpack_from(data)
        if magic != MAGIC:
            raise FormatError("bad magic %r (expected %r)" % (magic, MAGIC))
        if version != VERSION:
            raise FormatError("unsupported version %d (this reader knows %d)" % (version, VERSION))
        if field_id not in FIELD_NAMES:
            raise FormatError("unknown field id %d" % field_id)
        want = HEADER.size + n_out + CONST_BYTES * n_const + INSTR.size * n_instr
        if len(data) != want:
            raise FormatError("length %d does not match the counts in the header (%d)"
                              % (len(data), want) + (": truncated" if len(data) < want else ""))
        pos = HEADER.size
        kinds = []
        for k in data[pos:pos + n_out]:
            if k not in KIND_NAMES:
                raise FormatError("output kind %d is neither 0 (field) nor 1 (bool)" % k)
            kinds.append("B" if k == KIND_BOOL else "F")
        pos += n_out
        consts = []
        for _ in range(n_const):
            consts.append(int.from_bytes(data[pos:pos + CONST_BYTES], "little"))
            pos += CONST_BYTES
        instrs = []
        for idx in range(n_instr):
            code, dst, a, b, c = INSTR.unpack_from(data, pos)
            pos += INSTR.size
            if code not in BY_CODE:
                raise FormatError("instruction %d: unknown opcode 0x%02x" % (idx, code))
            instrs.append((BY_CODE[code], dst, a, b, c))
        return cls(field_id, regs, n_in, kinds, consts, instrs, version=version)

    # -- text and JSON ----------------------------------------------------------------

    def instruction_text(self, ins):
        name, dst, a, b, c = ins
        _code, dkind, operands = OPS[name]
        fields = {"a": a, "b": b, "c": c}
        parts = ["r%d" % dst] if dkind else []
        for f, t in operands:
            parts.append(_PREFIX.get(t, "") + str(fields[f]))
        return name + " " + ", ".join(parts)

    def counts(self):
        by_op = {}
        for ins in self.instructions:
            by_op[ins[0]] = by_op.get(ins[0], 0) + 1
        return {
            "instructions": len(self.instructions),
            "registers": self.n_registers,
            "constants": len(self.constants),
            "inputs": self.n_inputs,
            "outputs": len(self.output_kinds),
            "by_op": dict(sorted(by_op.items())),
        }

    def to_json_obj(self):
        names = self.output_names or ["out%d" % i for i in range(len(self.output_kinds))]
        return {
            "format": "wirespeed-trace",
            "version": self.version,
            "field_id": self.field_id,
            "field": FIELD_NAMES[self.field_id],
            "registers": self.n_registers,
            "inputs": self.n_inputs,
            "outputs": [
                {"slot": i, "kind": KIND_NAMES[KIND_BOOL if k == "B" else KIND_FIELD],
                 "name": names[i]}
                for i, k in enumerate(self.output_kinds)
            ],
            "constants": ["0x%064x" % c for c in self.constants],
            "instructions": [self.instruction_text(i) for i in self.instructions],
            "counts": self.counts(),
        }

    def to_json(self):
        return json.dumps(self.to_json_obj(), indent=1) + "\n"

    @classmethod
    def from_json(cls, text):
        """Assembles the JSON disassembly back into a program (``counts`` is ignored)."""
        try:
            obj = json.loads(text) if isinstance(text, str) else text
            if obj.get("format") != "wirespeed-trace":
                raise FormatError("not a wirespeed-trace disassembly")
            kinds = []
            names = []
            for i, o in enumerate(obj["outputs"]):
                if o["slot"] != i or o["kind"] not in ("field", "bool"):
                    raise FormatError("output %d: bad slot or kind" % i)
                kinds.append("B" if o["kind"] == "bool" else "F")
                names.append(o.get("name", "out%d" % i))
            consts = [int(c, 16) for c in obj["constants"]]
            instrs = [parse_instruction(t) for t in obj["instructions"]]
            return cls(obj["field_id"], obj["registers"], obj["inputs"], kinds, consts,
                       instrs, output_names=names, version=obj["version"])
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            if isinstance(e, FormatError):
                raise
            raise FormatError("malformed disassembly: %s" % e) from None


def parse_instruction(text):
    """``"mul r3, r1, r2"`` -> ``("mul", 3, 1, 2, 0)``."""
    head, _, rest = text.strip().partition(" ")
    if head not in OPS:
        raise FormatError("unknown instruction %r" % head)
    _code, dkind, operands = OPS[head]
    toks = [t.strip() for t in rest.split(",")] if rest.strip() else []
    want = len(operands) + (1 if dkind else 0)
    if len(toks) != want:
        raise FormatError("%r: %s takes %d operands" % (text, head, want))
    fields = [head, 0, 0, 0, 0]
    if dkind:
        fields[1] = _operand(toks.pop(0), "r", text)
    for (f, t), tok in zip(operands, toks):
        fields[_FIELD_POS[f]] = _operand(tok, _PREFIX.get(t, ""), text)
    return tuple(fields)


def _operand(tok, prefix, text):
    if not tok.startswith(prefix) or not tok[len(prefix):].isdigit():
        raise FormatError("%r: operand %r should look like %sN" % (text, tok, prefix))
    return int(tok[len(prefix):])


def validate(p):
    """Raises FormatError unless ``p`` obeys every rule of docs/trace-format.md."""
    if p.version != VERSION:
        raise FormatError("unsupported version %d" % p.version)
    if p.field_id not in FIELD_NAMES:
        raise FormatError("unknown field id %d" % p.field_id)
    for name, lim in (("registers", 0xFFFF), ("inputs", 0xFFFF)):
        v = getattr(p, "n_" + name)
        if not isinstance(v, int) or not 0 <= v <= lim:
            raise FormatError("%s count %r out of range" % (name, v))
    if not 1 <= p.n_registers <= MAX_REGISTERS:
        raise FormatError("register count %d not in 1..%d" % (p.n_registers, MAX_REGISTERS))
    if not 1 <= len(p.output_kinds) <= 0xFFFF:
        raise FormatError("a program needs 1..65535 outputs, not %d" % len(p.output_kinds))
    if any(k not in ("F", "B") for k in p.output_kinds):
        raise FormatError("output kinds must be F or B")
    if len(p.constants) > 0xFFFF or len(p.instructions) > 0xFFFFFFFF:
        raise FormatError("too many constants or instructions")
    for c in p.constants:
        if not isinstance(c, int) or not 0 <= c < 1 << 256:
            raise FormatError("constant %r is not a 256-bit unsigned integer" % (c,))
    if p.field_id == FIELD_ID_GENERIC and (not p.constants or p.constants[0] < 3):
        raise FormatError("field id 0 needs the modulus (>= 3) as constant 0")
    q = p.modulus
    kinds = [None] * p.n_registers
    written = [False] * len(p.output_kinds)
    for idx, ins in enumerate(p.instructions):
        _check_instruction(p, idx, ins, q, kinds, written)
    for slot, w in enumerate(written):
        if not w:
            raise FormatError("output %d is never written" % slot)


def _check_instruction(p, idx, ins, q, kinds, written):
    def bad(msg):
        raise FormatError("instruction %d (%s): %s" % (idx, ins[0], msg))

    if len(ins) != 5 or ins[0] not in OPS:
        raise FormatError("instruction %d: unknown op %r" % (idx, ins[0]))
    name, dst, a, b, c = ins
    for v in (dst, a, b, c):
        if not isinstance(v, int) or v < 0:
            bad("fields must be unsigned integers")
    if dst > 0xFF or a > 0xFFFF or b > 0xFFFF or c > 0xFFFF:
        bad("a field does not fit its width")
    _code, dkind, operands = OPS[name]
    fields = {"a": a, "b": b, "c": c}
    used = {f for f, _t in operands}
    for f in ("a", "b", "c"):
        if f not in used and fields[f] != 0:
            bad("unused field %s must be 0" % f)
    if dkind is None and dst != 0:
        bad("unused field dst must be 0")
    for f, t in operands:
        v = fields[f]
        if t in ("rF", "rB"):
            if v >= p.n_registers:
                bad("register r%d out of range (%d registers)" % (v, p.n_registers))
            if kinds[v] is None:
                bad("reads r%d before it is written" % v)
            if kinds[v] != t[1]:
                bad("r%d holds a %s, a %s is needed" % (v, _kname(kinds[v]), _kname(t[1])))
        elif t == "in":
            if v >= p.n_inputs:
                bad("input %d out of range (%d inputs)" % (v, p.n_inputs))
        elif t == "nbits":
            if not 1 <= v <= 256:
                bad("bit count %d not in 1..256" % v)
        elif t == "bitidx":
            if v > 255:
                bad("bit index %d not in 0..255" % v)
        elif t in ("cF", "cK"):
            if v >= len(p.constants):
                bad("constant c%d out of range (%d constants)" % (v, len(p.constants)))
            if t == "cF" and p.constants[v] >= q:
                bad("constant c%d is not below the modulus" % v)
        elif t == "imm01":
            if v > 1:
                bad("boolean constant %d is not 0 or 1" % v)
        elif t in ("oF", "oB"):
            if v >= len(p.output_kinds):
                bad("output o%d out of range (%d outputs)" % (v, len(p.output_kinds)))
            if p.output_kinds[v] != t[1]:
                bad("output o%d is declared %s" % (v, _kname(p.output_kinds[v])))
            if written[v]:
                bad("output o%d is written twice" % v)
            written[v] = True
    if dkind is not None:
        if dst >= p.n_registers:
            bad("register r%d out of range (%d registers)" % (dst, p.n_registers))
        kinds[dst] = dkind


def _kname(k):
    return "field element" if k == "F" else "boolean"
