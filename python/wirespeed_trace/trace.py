"""Tracing: the SSA graph that reference code builds when it runs on traced values.

Reference code is written once and runs two ways:

* untraced, on plain Python values: every input is an ``int`` (the 32-byte little-endian
  encoding read as an integer), field elements are concrete (they hold an ``int``), and
  the result is the reference answer;
* traced, on :class:`Raw` inputs: every operation on a traced value appends a node to a
  :class:`Graph` instead of computing, and the result is the program's graph.

The helpers in this module (:func:`select`, :func:`lnot`, :func:`bit`, :func:`low_bits`)
accept both kinds of value, so one function serves both runs. A Python ``if``, ``and``,
``or`` or ``not`` on a traced boolean raises :class:`TraceError`: a traced program has no
branches, so choices are written with :func:`select`.

Graph nodes (``Node.op``) and their kinds (``F``: field element, ``B``: boolean):

=========  =====================  ====  ===============================================
op         args                   kind  imm
=========  =====================  ====  ===============================================
load       -                      F     (input, nbits): bits 0..nbits-1 mod the modulus
bit        -                      B     (input, index): one bit of the raw encoding
rawlt      -                      B     (input, K, nbits): bits 0..nbits-1 < K
const      -                      F     (value,)  reduced mod the modulus
bconst     -                      B     (0 or 1,)
add sub    F F                    F
mul        F F                    F
sqr neg    F                      F
eq         F F                    B
iszero     F                      B
parity     F                      B     low bit of the canonical value
and or xor B B                    B
not        B                      B
select     B F F                  F     args[0] ? args[1] : args[2]
=========  =====================  ====  ===============================================
"""

from __future__ import annotations

F = "F"
B = "B"

#: Result kind and argument kinds of every graph op.
SIGNATURES = {
    "load": (F, ()),
    "bit": (B, ()),
    "rawlt": (B, ()),
    "const": (F, ()),
    "bconst": (B, ()),
    "add": (F, (F, F)),
    "sub": (F, (F, F)),
    "mul": (F, (F, F)),
    "sqr": (F, (F,)),
    "neg": (F, (F,)),
    "eq": (B, (F, F)),
    "iszero": (B, (F,)),
    "parity": (B, (F,)),
    "and": (B, (B, B)),
    "or": (B, (B, B)),
    "xor": (B, (B, B)),
    "not": (B, (B,)),
    "select": (F, (B, F, F)),
}

#: Ops whose two arguments may be swapped.
COMMUTATIVE = frozenset(["add", "mul", "eq", "and", "or", "xor"])

BOOL_HINT = (
    "use select(cond, a, b) for a branch-free choice, and &, |, ^, lnot() to combine "
    "conditions"
)


class TraceError(Exception):
    """Reference code did something a traced program cannot express."""


class Node:
    """One SSA value: ``op`` applied to earlier nodes ``args`` with immediates ``imm``."""

    __slots__ = ("op", "args", "imm", "kind")

    def __init__(self, op, args=(), imm=()):
        if op not in SIGNATURES:
            raise ValueError("unknown op %r" % (op,))
        self.op = op
        self.args = tuple(args)
        self.imm = tuple(imm)
        self.kind = SIGNATURES[op][0]

    def __repr__(self):
        return "Node(%s, %r, %r)" % (self.op, self.args, self.imm)


class Graph:
    """A straight-line SSA program: nodes in definition order and the outputs.

    ``outputs`` is a list of ``(kind, node, name)``; ``field`` is the field class whose
    elements the ``F`` nodes hold.
    """

    def __init__(self, field, n_inputs=0):
        self.field = field
        self.n_inputs = n_inputs
        self.nodes = []
        self.outputs = []

    @property
    def modulus(self):
        return self.field.MODULUS

    def add(self, op, args=(), imm=()):
        """Appends a node (after checking its argument kinds) and returns its index."""
        node = Node(op, args, imm)
        want = SIGNATURES[op][1]
        if len(args) != len(want):
            raise ValueError("%s takes %d arguments" % (op, len(want)))
        for a, k in zip(node.args, want):
            if not 0 <= a < len(self.nodes) or self.nodes[a].kind != k:
                raise ValueError("%s: argument %d is not an earlier %s node" % (op, a, k))
        self.nodes.append(node)
        return len(self.nodes) - 1

    def const(self, value):
        return self.add("const", (), (value % self.modulus,))

    def bconst(self, value):
        return self.add("bconst", (), (1 if value else 0,))

    def __len__(self):
        return len(self.nodes)

    def check(self):
        """Asserts the SSA invariants (arguments defined earlier, kinds match)."""
        for i, n in enumerate(self.nodes):
            for a, k in zip(n.args, SIGNATURES[n.op][1]):
                if not 0 <= a < i or self.nodes[a].kind != k:
                    raise AssertionError("node %d (%s) has a bad argument %d" % (i, n.op, a))
        for kind, n, _name in self.outputs:
            if not 0 <= n < len(self.nodes) or self.nodes[n].kind != kind:
                raise AssertionError("output refers to a bad node %d" % n)


def _same_graph(*graphs):
    found = None
    for g in graphs:
        if g is None:
            continue
        if found is not None and g is not found:
            raise TraceError("values from two different traces were combined")
        found = g
    return found


class Bool:
    """A traced boolean (a graph node of kind B). It has no Python truth value."""

    __slots__ = ("_g", "_n")

    def __init__(self, graph, node):
        self._g = graph
        self._n = node

    def __bool__(self):
        raise TraceError(
            "a traced boolean has no Python truth value (if, while, and, or, not, bool()): "
            "the program is branch-free; " + BOOL_HINT
        )

    __hash__ = None

    def _binop(self, other, op):
        o = _bool_operand(other)
        if o is None:
            return NotImplemented
        g = _same_graph(self._g, o._g if isinstance(o, Bool) else None)
        return Bool(g, g.add(op, (self._n, _bool_node(g, o))))

    def __and__(self, other):
        return self._binop(other, "and")

    def __or__(self, other):
        return self._binop(other, "or")

    def __xor__(self, other):
        return self._binop(other, "xor")

    __rand__ = __and__
    __ror__ = __or__
    __rxor__ = __xor__

    def __invert__(self):
        return Bool(self._g, self._g.add("not", (self._n,)))

    def __eq__(self, other):
        r = self._binop(other, "xor")
        return r if r is NotImplemented else ~r

    def __ne__(self, other):
        return self._binop(other, "xor")

    def __repr__(self):
        return "Bool(node %d)" % self._n


def _bool_operand(x):
    """A Bool, or a Python bool for the constants True/False/1/0, or None."""
    if isinstance(x, Bool):
        return x
    if isinstance(x, Raw):
        return x._as_bool()
    if isinstance(x, bool):
        return x
    if isinstance(x, int) and x in (0, 1):
        return bool(x)
    return None


def _bool_node(graph, b):
    return b._n if isinstance(b, Bool) else graph.bconst(b)


class Raw:
    """A traced input: the raw bits of a 32-byte little-endian encoding.

    ``Raw`` mirrors the ``int`` that the untraced run receives, for the operations the
    program format can express:

    * ``x & (2**k - 1)`` keeps the low ``k`` bits;
    * ``x >> k`` drops the low ``k`` bits; ``(x >> k) & 1`` (or ``bit(x, k)``) is bit k;
    * ``x < K``, ``<=``, ``>``, ``>=``, ``==``, ``!=`` against an integer constant K
      compare the (masked, unshifted) integer, giving a traced boolean;
    * ``Field(x)`` is the field element of the (masked, unshifted) integer.
    """

    __slots__ = ("_g", "input", "lo", "width")

    def __init__(self, graph, input_index, lo=0, width=256):
        self._g = graph
        self.input = input_index
        self.lo = lo
        self.width = width

    def __bool__(self):
        raise TraceError("a traced input has no Python truth value; " + BOOL_HINT)

    __hash__ = None

    def __rshift__(self, k):
        if not isinstance(k, int) or k < 0:
            raise TraceError("a traced input can only be shifted by a constant")
        k = min(k, self.width)
        return Raw(self._g, self.input, self.lo + k, self.width - k)

    def __and__(self, mask):
        if isinstance(mask, bool) or not isinstance(mask, int):
            if isinstance(mask, (Bool, Raw)):
                return self._as_bool() & mask
            return NotImplemented
        if mask == 1:
            return self._bit()
        if mask >= 0 and mask & (mask + 1) == 0:  # 2^k - 1
            k = mask.bit_length()
            self._unshifted("masked")
            return Raw(self._g, self.input, 0, min(self.width, k))
        raise TraceError(
            "a traced input can be masked only with 1 (a bit test) or 2**k - 1 (low bits)"
        )

    __rand__ = __and__

    def _bit(self):
        if self.width == 0:
            return False
        return Bool(self._g, self._g.add("bit", (), (self.input, self.lo)))

    def _as_bool(self):
        if self.width != 1:
            raise TraceError(
                "only a single bit of a traced input is a boolean; write (x >> k) & 1"
            )
        return self._bit()

    def __or__(self, other):
        return self._as_bool() | other

    def __xor__(self, other):
        return self._as_bool() ^ other

    __ror__ = __or__
    __rxor__ = __xor__

    def _unshifted(self, what):
        if self.lo != 0:
            raise TraceError(
                "a shifted traced input cannot be %s; mask its low bits instead" % what
            )

    def _lt(self, k):
        """Traced ``self < k`` (Python bool when it is decided by the width alone)."""
        if isinstance(k, bool) or not isinstance(k, int):
            raise TraceError("a traced input can only be compared with an integer constant")
        self._unshifted("compared")
        if k <= 0:
            return False
        if k >= 1 << self.width:
            return True
        return Bool(self._g, self._g.add("rawlt", (), (self.input, k, self.width)))

    def __lt__(self, k):
        return self._lt(k)

    def __le__(self, k):
        return self._lt(k + 1)

    def __gt__(self, k):
        return lnot(self._lt(k + 1))

    def __ge__(self, k):
        return lnot(self._lt(k))

    def __eq__(self, k):
        if not isinstance(k, int):
            return NotImplemented
        return self._lt(k + 1) & lnot(self._lt(k))

    def __ne__(self, k):
        if not isinstance(k, int):
            return NotImplemented
        return lnot(self == k)

    def load(self):
        """The LOAD node of this input's low ``width`` bits (for the field constructors)."""
        self._unshifted("read as a field element")
        if self.width == 0:
            return None
        return self._g.add("load", (), (self.input, self.width))

    def __repr__(self):
        return "Raw(input %d, bits %d..%d)" % (self.input, self.lo, self.lo + self.width)


def lnot(c):
    """Logical not of a condition: a Python bool/0/1, or a traced boolean."""
    o = _bool_operand(c)
    if o is None:
        raise TraceError("lnot() takes a condition, not %r" % (c,))
    if isinstance(o, Bool):
        return ~o
    return not o


def bit(x, i):
    """Bit ``i`` of an input encoding (an int untraced, a traced boolean when traced)."""
    return (x >> i) & 1


def low_bits(x, k):
    """The low ``k`` bits of an input encoding."""
    return x & ((1 << k) - 1)


def all_of(*conds):
    """The conjunction of conditions (True for none)."""
    acc = True
    for c in conds:
        acc = c & acc if isinstance(c, (Bool, Raw)) else (acc & bool(c))
    return acc


def any_of(*conds):
    """The disjunction of conditions (False for none)."""
    acc = False
    for c in conds:
        acc = c | acc if isinstance(c, (Bool, Raw)) else (acc | bool(c))
    return acc


def select(cond, a, b):
    """``a`` if ``cond`` else ``b``, without a branch when ``cond`` is traced.

    ``a`` and ``b`` are both field elements (ints are lifted to the other's field) or
    both conditions. Untraced (``cond`` a bool or 0/1), this is plain ``a if cond else b``.
    """
    from .field import FieldElement  # the field module imports this one

    c = _bool_operand(cond)
    if c is None:
        raise TraceError("select() needs a condition as its first argument, not %r" % (cond,))
    fa = isinstance(a, FieldElement)
    fb = isinstance(b, FieldElement)
    if fa or fb:
        cls = type(a) if fa else type(b)
        a = cls._coerce(a)
        b = cls._coerce(b)
        if a is NotImplemented or b is NotImplemented:
            raise TraceError("select() arguments are not elements of one field")
        if not isinstance(c, Bool):
            return a if c else b
        g = _same_graph(c._g, a._g, b._g)
        return cls._traced(g, g.add("select", (c._n, a._node(g), b._node(g))))
    ba = _bool_operand(a)
    bb = _bool_operand(b)
    if ba is None or bb is None:
        raise TraceError("select() takes two field elements or two conditions")
    if not isinstance(c, Bool):
        return ba if c else bb
    return (c & ba) | (~c & bb)
