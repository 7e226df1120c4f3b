"""An independent model of Edwards25519 for the tests: extended-coordinate arithmetic
(RFC 8032 5.1.4's complete formulas), square roots by the (p+3)/8 method, point decoding
by the rules of crates/ed25519/src/mode.rs, and the 8 points of small order found as
[L]P for random points P. Shares no code with wirespeed_trace."""

import random

p = 2**255 - 19
L = 2**252 + 27742317777372353535851937790883648493
d = -121665 * pow(121666, p - 2, p) % p
SQRT_M1 = pow(2, (p - 1) // 4, p)
IDENTITY = (0, 1, 1, 0)


def inv(a):
    return pow(a, p - 2, p)


def sqrt(a):
    """A square root of a mod p, or None."""
    a %= p
    x = pow(a, (p + 3) // 8, p)
    if x * x % p != a:
        x = x * SQRT_M1 % p
    return x if x * x % p == a else None


def from_affine(x, y):
    return (x % p, y % p, 1, x * y % p)


def add(P, Q):
    X1, Y1, Z1, T1 = P
    X2, Y2, Z2, T2 = Q
    A = (Y1 - X1) * (Y2 - X2) % p
    B = (Y1 + X1) * (Y2 + X2) % p
    C = T1 * 2 * d * T2 % p
    D = Z1 * 2 * Z2 % p
    E, F, G, H = B - A, D - C, D + C, B + A
    return (E * F % p, G * H % p, F * G % p, E * H % p)


def neg(P):
    X, Y, Z, T = P
    return (-X % p, Y, Z, -T % p)


def mul(k, P):
    R = IDENTITY
    while k:
        if k & 1:
            R = add(R, P)
        P = add(P, P)
        k >>= 1
    return R


def affine(P):
    X, Y, Z, _T = P
    zi = inv(Z)
    return X * zi % p, Y * zi % p


def is_identity(P):
    X, Y, Z, _T = P
    return X % p == 0 and (Y - Z) % p == 0


def encode(P):
    x, y = affine(P)
    return (y | (x & 1) << 255).to_bytes(32, "little")


def recover(y, sign):
    """The point with this y (reduced) and sign of x, RFC style; None if there is none."""
    y %= p
    x = sqrt((y * y - 1) * inv(d * y * y + 1))
    if x is None:
        return None
    if x & 1 != sign:
        x = -x % p
    return x, y


BASE = from_affine(*recover(4 * inv(5), 0))


def decode(enc, canonical, reject_small):
    """(ok, x, y) with x = y = 0 when not ok: the mode rules' model."""
    n = int.from_bytes(enc, "little")
    y_raw, sign = n & (2**255 - 1), n >> 255
    pt = recover(y_raw, sign)
    if pt is None:
        return False, 0, 0
    x, y = pt
    negative_zero = x == 0 and sign == 1
    if canonical and (y_raw >= p or negative_zero):
        return False, 0, 0
    if reject_small and is_identity(mul(8, from_affine(x, y))):
        return False, 0, 0
    return True, x, y


# (mode, role) -> (canonical required, small order rejected), read off mode.rs:
# requires_canonical_a: cofactored-strict, libsodium; requires_canonical_r: all but
# zip215; rejects_small_order: all but zip215.
MODE_TABLE = {}
for _mode in ("strict", "zip215", "cofactored-strict", "libsodium"):
    MODE_TABLE[(_mode, "A")] = (_mode in ("cofactored-strict", "libsodium"), _mode != "zip215")
    MODE_TABLE[(_mode, "R")] = (_mode != "zip215", _mode != "zip215")


def small_order_points(rng):
    """The 8 points of order dividing 8 (affine), as torsion parts [L]P of random P."""
    found = {}
    while len(found) < 8:
        pt = recover(rng.randrange(p), rng.randrange(2))
        if pt is None:
            continue
        T = mul(L, from_affine(*pt))
        found[affine(T)] = True
    return sorted(found)


def small_order_encodings(rng):
    """Every 32-byte encoding of a small-order point: both signs, y and y + p."""
    out = set()
    for _x, y in small_order_points(rng):
        for yy in (y, y + p):
            if yy < 2**255:
                for s in (0, 1):
                    out.add((yy | s << 255).to_bytes(32, "little"))
    return sorted(out)


def random_rng(seed):
    return random.Random(seed)
