"""Ed25519 point decoding (RFC 8032, section 5.1.3) and the rule modes' point checks,
written once as reference code that runs untraced (the reference answer) or traced (the
program).

RFC 8032 5.1.3, as transcribed in :func:`decode`:

1. The encoding is 32 bytes, little-endian. Bit 255 is x_0, the sign of x; bits 0..254
   are y. If y >= p, decoding fails.
2. x^2 = u / v with u = y^2 - 1 and v = d y^2 + 1 (v is never 0: d is not a square).
   The candidate root is x = u v^3 (u v^7)^((p-5)/8).
3. If v x^2 = u, x is a root. If v x^2 = -u, x * 2^((p-1)/4) is. Otherwise no point
   has this y: decoding fails.
4. If x = 0 and x_0 = 1, decoding fails. If x_0 differs from the low bit of x, x = p - x.

The rule modes (docs/ed25519-rules.md, crates/ed25519/src/mode.rs) relax steps 1 and 4:
y >= p is reduced mod p (and the encoding called non-canonical), x = 0 with x_0 = 1
decodes to x = 0 (also non-canonical), and each mode then decides with :class:`Rules`:

* ``canonical``: reject y >= p and x = 0 with x_0 = 1 (the RFC's own step 1 and 4
  failures);
* ``reject_small_order``: reject points P with [8]P = 0.

Small order is decided from y alone. On the curve -x^2 + y^2 = 1 + d x^2 y^2, the points
of order 1 and 2 are those with x = 0 (y^2 = 1, i.e. u = 0), those of order 4 have y = 0,
and those of order 8 are those whose double has y = 0: x^2 = -y^2, which with the curve
equation is d y^4 + 2 y^2 - 1 = 0, i.e. y^2 (v + 1) = 1. So P has small order iff
y u = 0 or y^2 (v + 1) = 1.

The four modes and two point roles (A: the public key, R: the signature's first half):

=================  =====================  =====================
mode               A                      R
=================  =====================  =====================
strict             small order rejected   canonical, small order rejected
zip215             decodes                decodes
cofactored-strict  canonical, small order  canonical, small order
libsodium          canonical, small order  canonical, small order
=================  =====================  =====================

Equal rules give byte-identical programs: there are three distinct decoding programs,
``strict`` A, ``zip215`` (A and R), and "canonical, small order rejected" (strict R and
both points of cofactored-strict and libsodium). The libsodium A check tests y < p and
its encoding blocklist; a decodable A with x = 0 has small order, so also rejecting the
negative zero, as the Rust mode does, gives the same verdict.
"""

from __future__ import annotations

from dataclasses import dataclass

from .field import L, P25519, Fe25519
from .trace import bit, lnot, low_bits, select

P = P25519
#: The Edwards curve constant d = -121665/121666.
D = -121665 * pow(121666, P - 2, P) % P
#: 2^((p-1)/4), a square root of -1.
SQRT_M1 = pow(2, (P - 1) // 4, P)

MODES = ("strict", "zip215", "cofactored-strict", "libsodium")
ROLES = ("A", "R")


@dataclass(frozen=True)
class Rules:
    """What a point encoding must satisfy besides decoding."""

    canonical: bool
    reject_small_order: bool

    @property
    def name(self):
        if self.canonical and self.reject_small_order:
            return "canonical-no-small-order"
        if self.canonical:
            return "canonical"
        return "no-small-order" if self.reject_small_order else "decodes"


#: RFC 8032 as written: canonical encodings, small order allowed.
RFC8032 = Rules(canonical=True, reject_small_order=False)
_CANONICAL_NO_SMALL = Rules(canonical=True, reject_small_order=True)

#: (mode, role) -> rules, matching crates/ed25519/src/mode.rs.
MODE_RULES = {
    ("strict", "A"): Rules(canonical=False, reject_small_order=True),
    ("strict", "R"): _CANONICAL_NO_SMALL,
    ("zip215", "A"): Rules(canonical=False, reject_small_order=False),
    ("zip215", "R"): Rules(canonical=False, reject_small_order=False),
    ("cofactored-strict", "A"): _CANONICAL_NO_SMALL,
    ("cofactored-strict", "R"): _CANONICAL_NO_SMALL,
    ("libsodium", "A"): _CANONICAL_NO_SMALL,
    ("libsodium", "R"): _CANONICAL_NO_SMALL,
}


def decompress(enc):
    """RFC 8032 5.1.3 without its failures: returns ``(has_root, x, y, y_canonical,
    negative_zero, parts)``. y is reduced mod p; x has the sign x_0 (x = 0 when x_0 = 1
    and the root is 0); ``parts`` = (y, y^2, u, v) for :func:`has_small_order`."""
    y_raw = low_bits(enc, 255)
    x_0 = bit(enc, 255)
    y_canonical = y_raw < P  # step 1's check, left to the rules
    y = Fe25519(y_raw)  # reduced mod p
    # Step 2.
    yy = y.square()
    u = yy - 1
    v = D * yy + 1
    v3 = v.square() * v
    v7 = v3.square() * v
    uv3 = u * v3
    x = uv3 * (u * v7).pow_p58()
    # Step 3.
    vxx = v * x.square()
    root = vxx == u
    flipped = vxx == -u
    x = select(flipped, x * SQRT_M1, x)
    has_root = root | flipped
    # Step 4: "x = 0 and x_0 = 1" is a failure in the RFC, a rule here.
    negative_zero = x.is_zero() & x_0
    x = select(x.is_negative() ^ x_0, -x, x)
    return has_root, x, y, y_canonical, negative_zero, (y, yy, u, v)


def has_small_order(y, yy, u, v):
    """[8]P = 0 for a decoded point, from y (see the module note): y u = 0 (x = 0 or
    y = 0) or y^2 (v + 1) = 1 (order 8)."""
    return (y * u).is_zero() | (yy * (v + 1) == 1)


def decode(enc, rules):
    """Decodes one point encoding under ``rules``. Returns ``{"ok", "x", "y"}``: ok is
    true iff the encoding decodes and passes the rules; x and y are the affine
    coordinates (y reduced mod p), both 0 when not ok."""
    has_root, x, y, y_canonical, negative_zero, parts = decompress(enc)
    ok = has_root
    if rules.canonical:  # a Python if on a compile-time rule, not on a traced value
        ok = ok & y_canonical & lnot(negative_zero)
    if rules.reject_small_order:
        ok = ok & lnot(has_small_order(*parts))
    return {"ok": ok, "x": select(ok, x, 0), "y": select(ok, y, 0)}


def decode_program(rules):
    """The reference function (one input) decoding under ``rules``."""

    def program(inp):
        return decode(inp[0], rules)

    program.__name__ = "decode_" + rules.name.replace("-", "_")
    return program


def program_for(mode, role):
    """The reference function decoding point ``role`` ("A" or "R") under ``mode``."""
    return decode_program(MODE_RULES[(mode, role)])


def scalar_program(inp):
    """S < L on the full 256-bit encoding (every mode requires it)."""
    return {"ok": inp[0] < L}


def checks_program(mode):
    """All of a mode's encoding checks on one signature: inputs (A, R, S); outputs the
    three verdicts, their conjunction and the decoded A and R."""

    def program(inp):
        a = decode(inp[0], MODE_RULES[(mode, "A")])
        r = decode(inp[1], MODE_RULES[(mode, "R")])
        s_ok = inp[2] < L
        return {
            "ok": a["ok"] & r["ok"] & s_ok,
            "a_ok": a["ok"],
            "r_ok": r["ok"],
            "s_ok": s_ok,
            "ax": a["x"],
            "ay": a["y"],
            "rx": r["x"],
            "ry": r["y"],
        }

    program.__name__ = "checks_" + mode.replace("-", "_")
    return program


def all_programs():
    """(file stem, reference function, input count) of every program this module
    defines: per (mode, role) decoding, S < L, per-mode signature checks."""
    out = []
    for mode in MODES:
        for role in ROLES:
            out.append(("decode-%s-%s" % (mode, role.lower()), program_for(mode, role), 1))
    out.append(("scalar-range", scalar_program, 1))
    for mode in MODES:
        out.append(("checks-%s" % mode, checks_program(mode), 3))
    return out
