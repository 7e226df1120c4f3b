"""Prime-field elements that compute (concrete) or record (traced).

``Fp(p)`` returns the element class of GF(p); ``Fe25519`` is GF(2^255 - 19) and
``Scalar`` is the field of scalars mod L = 2^252 + 27742317777372353535851937790883648493.
An element is *concrete* (it holds an ``int`` in 0..p-1) or *traced* (it names a node of
a :class:`~wirespeed_trace.trace.Graph`). Operations on concrete elements compute;
an operation with at least one traced operand appends a node (concrete operands become
constant nodes). So the same reference code gives the reference answer on concrete
inputs and the program's graph on traced ones.

Supported: ``+ - *`` (with elements of the same field or ints), unary ``-``,
``** e`` for an integer exponent (negative: of the inverse), ``/``, ``==`` and ``!=``
(a Python bool when concrete, a traced boolean when traced), ``square()``,
``square_n(k)``, ``invert()``, ``is_zero()``, ``is_negative()`` (the low bit of the
canonical value, RFC 8032's sign of x). Field elements are not ordered and have no
truth value.

Exponentiation by a constant is a fixed addition chain: for GF(2^255 - 19) the chains of
``invert`` (x^(p-2)) and ``pow_p58`` (x^((p-5)/8)) are the usual 254/255-step chains
through x^(2^250 - 1) (11 multiplications); any other exponent uses a fixed 4-bit window.
Concrete ``**`` uses Python's ``pow``; the chain methods run their chain in both modes so
the chain itself can be checked against ``pow``.
"""

from __future__ import annotations

from .trace import Bool, Graph, Raw, TraceError, _same_graph

#: Field ids of the program format (docs/trace-format.md).
FIELD_ID_GENERIC = 0
FIELD_ID_25519 = 1
FIELD_ID_SCALAR = 2

P25519 = (1 << 255) - 19
L = (1 << 252) + 27742317777372353535851937790883648493


class FieldElement:
    """Base class of the ``Fp(p)`` classes; use a concrete subclass."""

    __slots__ = ("_v", "_g", "_n")
    MODULUS = None
    FIELD_ID = FIELD_ID_GENERIC
    NAME = "GF(p)"

    def __init__(self, x=0):
        self._g = None
        self._n = None
        self._v = None
        if isinstance(x, FieldElement):
            if type(x) is not type(self):
                raise TraceError("cannot convert %s to %s" % (x.NAME, self.NAME))
            self._v, self._g, self._n = x._v, x._g, x._n
        elif isinstance(x, Raw):
            node = x.load()
            if node is None:
                self._v = 0
            else:
                self._g, self._n = x._g, node
        elif isinstance(x, Bool):
            raise TraceError(
                "a traced boolean is not a field element; use select(cond, F(1), F(0))"
            )
        elif isinstance(x, int):
            self._v = x % self.MODULUS
        else:
            raise TypeError("cannot make a field element from %r" % (x,))

    # -- construction helpers -------------------------------------------------------

    @classmethod
    def _traced(cls, graph, node):
        e = cls.__new__(cls)
        e._v, e._g, e._n = None, graph, node
        return e

    @classmethod
    def _coerce(cls, x):
        if isinstance(x, cls):
            return x
        if isinstance(x, FieldElement):
            raise TraceError("cannot mix %s and %s" % (x.NAME, cls.NAME))
        if isinstance(x, int) and not isinstance(x, bool):
            return cls(x)
        return NotImplemented

    @classmethod
    def from_bytes(cls, b):
        """The element of a little-endian byte string (reduced)."""
        return cls(int.from_bytes(bytes(b), "little"))

    @property
    def traced(self):
        return self._g is not None

    def _node(self, graph):
        return self._n if self._g is not None else graph.const(self._v)

    def value(self):
        """The integer value 0..p-1 of a concrete element."""
        if self._g is not None:
            raise TraceError("a traced field element has no value until the program runs")
        return self._v

    def __int__(self):
        return self.value()

    def to_bytes(self):
        """The canonical 32-byte little-endian encoding of a concrete element."""
        return self.value().to_bytes(32, "little")

    # -- arithmetic -----------------------------------------------------------------

    def _binop(self, other, op, fn):
        o = self._coerce(other)
        if o is NotImplemented:
            return NotImplemented
        cls = type(self)
        if self._g is None and o._g is None:
            return cls(fn(self._v, o._v))
        g = _same_graph(self._g, o._g)
        return cls._traced(g, g.add(op, (self._node(g), o._node(g))))

    def _rbinop(self, other, op, fn):
        o = self._coerce(other)
        if o is NotImplemented:
            return NotImplemented
        return o._binop(self, op, fn)

    def __add__(self, o):
        return self._binop(o, "add", lambda a, b: a + b)

    def __radd__(self, o):
        return self._rbinop(o, "add", lambda a, b: a + b)

    def __sub__(self, o):
        return self._binop(o, "sub", lambda a, b: a - b)

    def __rsub__(self, o):
        return self._rbinop(o, "sub", lambda a, b: a - b)

    def __mul__(self, o):
        return self._binop(o, "mul", lambda a, b: a * b)

    def __rmul__(self, o):
        return self._rbinop(o, "mul", lambda a, b: a * b)

    def __truediv__(self, o):
        o = self._coerce(o)
        if o is NotImplemented:
            return NotImplemented
        return self * o.invert()

    def __rtruediv__(self, o):
        o = self._coerce(o)
        if o is NotImplemented:
            return NotImplemented
        return o * self.invert()

    def _unop(self, op, fn):
        cls = type(self)
        if self._g is None:
            return cls(fn(self._v))
        return cls._traced(self._g, self._g.add(op, (self._n,)))

    def __neg__(self):
        return self._unop("neg", lambda a: -a)

    def __pos__(self):
        return self

    def square(self):
        return self._unop("sqr", lambda a: a * a)

    def square_n(self, k):
        """self^(2^k), as k squarings."""
        x = self
        for _ in range(k):
            x = x.square()
        return x

    def __pow__(self, e, mod=None):
        if mod is not None or isinstance(e, bool) or not isinstance(e, int):
            return NotImplemented
        if e < 0:
            return self.invert() ** (-e)
        if self._g is None:
            return type(self)(pow(self._v, e, self.MODULUS))
        return self._pow_chain(e)

    def _pow_chain(self, e):
        """self^e by the class's fixed chain for e, or a fixed 4-bit window."""
        special = self._special_chain(e)
        if special is not None:
            return special
        return self.pow_window(e)

    def _special_chain(self, e):
        """A dedicated chain for exponent e, or None (a generic field has none)."""
        return None

    def pow_window(self, e, w=4):
        """self^e by left-to-right fixed windows of ``w`` bits (table of x^0..x^(2^w-1))."""
        cls = type(self)
        if e == 0:
            return cls(1)
        table = [cls(1), self]
        for _ in range(2, 1 << w):
            table.append(table[-1] * self)
        digits = []
        while e:
            digits.append(e & ((1 << w) - 1))
            e >>= w
        acc = table[digits[-1]]
        for d in reversed(digits[:-1]):
            acc = acc.square_n(w)
            if d:
                acc = acc * table[d]
        return acc

    def invert(self):
        """self^(p-2): the inverse, 0 for 0."""
        if self._g is None:
            return type(self)(pow(self._v, self.MODULUS - 2, self.MODULUS))
        return self._pow_chain(self.MODULUS - 2)

    # -- predicates -----------------------------------------------------------------

    def _pred(self, op, fn):
        if self._g is None:
            return fn(self._v)
        return Bool(self._g, self._g.add(op, (self._n,)))

    def is_zero(self):
        return self._pred("iszero", lambda a: a == 0)

    def is_negative(self):
        """The low bit of the canonical value (RFC 8032: x is "negative" when odd)."""
        return self._pred("parity", lambda a: a & 1 == 1)

    def __eq__(self, other):
        o = self._coerce(other)
        if o is NotImplemented:
            return NotImplemented
        if self._g is None and o._g is None:
            return self._v == o._v
        g = _same_graph(self._g, o._g)
        return Bool(g, g.add("eq", (self._node(g), o._node(g))))

    def __ne__(self, other):
        r = self.__eq__(other)
        if r is NotImplemented:
            return r
        return ~r if isinstance(r, Bool) else not r

    def __hash__(self):
        if self._g is not None:
            raise TraceError("a traced field element cannot be hashed")
        return hash((self.MODULUS, self._v))

    def __bool__(self):
        raise TraceError(
            "a field element has no truth value: test x.is_zero() or x == y, and choose "
            "with select(cond, a, b)"
        )

    def _unordered(self, other):
        raise TraceError(
            "field elements are not ordered; compare an input encoding (inp < K) or use "
            "is_negative()"
        )

    __lt__ = __le__ = __gt__ = __ge__ = _unordered

    def __repr__(self):
        if self._g is None:
            return "%s(0x%x)" % (type(self).__name__, self._v)
        return "%s(node %d)" % (type(self).__name__, self._n)


class Fe25519(FieldElement):
    """GF(2^255 - 19), with the fixed chains of inversion and square roots."""

    __slots__ = ()
    MODULUS = P25519
    FIELD_ID = FIELD_ID_25519
    NAME = "GF(2^255-19)"

    def _pow22501(self):
        """(x^(2^250 - 1), x^11): the shared head of both chains."""
        t0 = self.square()  # 2
        t1 = t0.square_n(2)  # 8
        t2 = self * t1  # 9
        t3 = t0 * t2  # 11
        t4 = t3.square()  # 22
        t5 = t2 * t4  # 31 = 2^5 - 1
        t7 = t5.square_n(5) * t5  # 2^10 - 1
        t9 = t7.square_n(10) * t7  # 2^20 - 1
        t11 = t9.square_n(20) * t9  # 2^40 - 1
        t13 = t11.square_n(10) * t7  # 2^50 - 1
        t15 = t13.square_n(50) * t13  # 2^100 - 1
        t17 = t15.square_n(100) * t15  # 2^200 - 1
        t19 = t17.square_n(50) * t13  # 2^250 - 1
        return t19, t3

    def invert_chain(self):
        """x^(p-2) = x^(2^255 - 21) by the fixed chain (254 squarings, 11 products)."""
        t19, t3 = self._pow22501()
        return t19.square_n(5) * t3  # (2^250 - 1) 2^5 + 11

    def pow_p58(self):
        """x^((p-5)/8) = x^(2^252 - 3) by the fixed chain (251 squarings, 11 products)."""
        t19, _ = self._pow22501()
        return t19.square_n(2) * self  # (2^250 - 1) 4 + 1

    def _special_chain(self, e):
        if e == self.MODULUS - 2:
            return self.invert_chain()
        if e == (self.MODULUS - 5) // 8:
            return self.pow_p58()
        return None


class Scalar(FieldElement):
    """Scalars mod L, the order of the Ed25519 base point."""

    __slots__ = ()
    MODULUS = L
    FIELD_ID = FIELD_ID_SCALAR
    NAME = "Z/L"


_FIELDS = {P25519: Fe25519, L: Scalar}


def Fp(p):
    """The element class of GF(p) (one class per modulus; p must be a prime > 2)."""
    if not isinstance(p, int) or p < 3 or p >= 1 << 256:
        raise ValueError("the modulus must be an integer in 3..2^256-1")
    cls = _FIELDS.get(p)
    if cls is None:
        cls = type(
            "Fp_%x" % p,
            (FieldElement,),
            {"__slots__": (), "MODULUS": p, "FIELD_ID": FIELD_ID_GENERIC, "NAME": "GF(%d)" % p},
        )
        _FIELDS[p] = cls
    return cls


def field_for_id(field_id, modulus=None):
    """The element class of a program's field id (``modulus`` for the generic id 0)."""
    if field_id == FIELD_ID_25519:
        return Fe25519
    if field_id == FIELD_ID_SCALAR:
        return Scalar
    if field_id == FIELD_ID_GENERIC and modulus is not None:
        return Fp(modulus)
    raise ValueError("unknown field id %d" % field_id)


def new_graph(field, n_inputs):
    """A graph and its ``n_inputs`` traced inputs (each the raw 256 bits of 32 bytes)."""
    g = Graph(field, n_inputs)
    return g, [Raw(g, i) for i in range(n_inputs)]
