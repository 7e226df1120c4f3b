//! GF(2^255 - 19) in radix 2^51: five unsigned 64-bit limbs, value = sum a_i 2^(51 i).
//!
//! Limb bounds (the contract every caller relies on):
//! - A *reduced* element has every limb < 2^51 + 2^15 ("< 2^52" is what callers assume).
//!   `mul`, `square`, `sub`, `neg`, `from_bytes` and the constants return reduced elements.
//! - `add` does not reduce: the sum of two reduced elements has limbs < 2^53.
//! - `mul` and `square` accept limbs < 2^54 (so one `add` of `add`s is fine), `sub`
//!   accepts a subtrahend with limbs < 2^55.
//! - Only `to_bytes` produces the canonical representative in [0, p).
//!
//! Multiplication uses 64x64->128-bit products and folds 2^255 = 19 (mod p), as in the
//! "ref10"/curve25519-dalek serial u64 backend (Bernstein, Duif, Lange, Schwabe, Yang,
//! "High-speed high-security signatures", 2011, section 3). The largest column sum is
//! 5 * 2^54 * 19 * 2^54 < 2^115, so u128 never overflows; c4 carries no factor 19, so
//! the final carry c4 >> 51 < 2^60 and 19 * carry < 2^64.
//!
//! Nothing here branches on the value of an element except `vartime_*` functions and the
//! comparisons, which are only used on public data (signature verification).

use crate::FieldOps;

const MASK51: u64 = (1u64 << 51) - 1;

/// An element of GF(2^255-19) in radix 2^51 (see module docs for bounds).
#[derive(Clone, Copy, Debug)]
pub struct Fe51(pub [u64; 5]);

#[inline(always)]
fn m(a: u64, b: u64) -> u128 {
    (a as u128) * (b as u128)
}

impl Fe51 {
    /// 0.
    pub const ZERO: Fe51 = Fe51([0; 5]);
    /// 1.
    pub const ONE: Fe51 = Fe51([1, 0, 0, 0, 0]);
    /// Edwards d = -121665/121666.
    pub const EDWARDS_D: Fe51 = Fe51::from_bytes_const(&hex32(
        "a3785913ca4deb75abd841414d0a700098e879777940c78c73fe6f2bee6c0352",
    ));
    /// 2d.
    pub const EDWARDS_D2: Fe51 = Fe51::from_bytes_const(&hex32(
        "59f1b226949bd6eb56b183829a14e00030d1f3eef2808e19e7fcdf56dcd90624",
    ));
    /// sqrt(-1) = 2^((p-1)/4).
    pub const SQRT_M1: Fe51 = Fe51::from_bytes_const(&hex32(
        "b0a00e4a271beec478e42fad0618432fa7d7fb3d99004d2b0bdfc14f8024832b",
    ));

    /// Loads 32 little-endian bytes, ignoring bit 255. The value may be in [p, 2^255):
    /// it is not reduced, but every limb is < 2^51, so it is a valid (reduced-bounds) input.
    pub const fn from_bytes_const(b: &[u8; 32]) -> Fe51 {
        let mut w = [0u64; 4];
        let mut i = 0;
        while i < 4 {
            let mut j = 0;
            while j < 8 {
                w[i] |= (b[8 * i + j] as u64) << (8 * j);
                j += 1;
            }
            i += 1;
        }
        Fe51([
            w[0] & MASK51,
            ((w[0] >> 51) | (w[1] << 13)) & MASK51,
            ((w[1] >> 38) | (w[2] << 26)) & MASK51,
            ((w[2] >> 25) | (w[3] << 39)) & MASK51,
            (w[3] >> 12) & MASK51,
        ])
    }

    /// See [`Fe51::from_bytes_const`].
    #[inline]
    pub fn from_bytes(b: &[u8; 32]) -> Fe51 {
        Fe51::from_bytes_const(b)
    }

    /// Canonical little-endian encoding of the value mod p (bit 255 clear).
    pub fn to_bytes(&self) -> [u8; 32] {
        // Carry so every limb < 2^51 and the value is < 2^255 + small, then subtract p
        // if value >= p by computing q = floor((v + 19) / 2^255).
        let mut l = Fe51::carry(self.0).0;
        let mut q = (l[0] + 19) >> 51;
        q = (l[1] + q) >> 51;
        q = (l[2] + q) >> 51;
        q = (l[3] + q) >> 51;
        q = (l[4] + q) >> 51;
        l[0] += 19 * q;
        l[1] += l[0] >> 51;
        l[0] &= MASK51;
        l[2] += l[1] >> 51;
        l[1] &= MASK51;
        l[3] += l[2] >> 51;
        l[2] &= MASK51;
        l[4] += l[3] >> 51;
        l[3] &= MASK51;
        l[4] &= MASK51;
        let w = [
            l[0] | (l[1] << 51),
            (l[1] >> 13) | (l[2] << 38),
            (l[2] >> 26) | (l[3] << 25),
            (l[3] >> 39) | (l[4] << 12),
        ];
        let mut out = [0u8; 32];
        for i in 0..4 {
            out[8 * i..8 * i + 8].copy_from_slice(&w[i].to_le_bytes());
        }
        out
    }

    /// One carry pass: limbs in, limbs < 2^51 + 2^15 out (for inputs < 2^64).
    #[inline(always)]
    fn carry(mut l: [u64; 5]) -> Fe51 {
        let c0 = l[0] >> 51;
        let c1 = l[1] >> 51;
        let c2 = l[2] >> 51;
        let c3 = l[3] >> 51;
        let c4 = l[4] >> 51;
        l[0] &= MASK51;
        l[1] &= MASK51;
        l[2] &= MASK51;
        l[3] &= MASK51;
        l[4] &= MASK51;
        l[0] += c4 * 19;
        l[1] += c0;
        l[2] += c1;
        l[3] += c2;
        l[4] += c3;
        Fe51(l)
    }

    #[inline(always)]
    fn reduce_wide(c: [u128; 5]) -> Fe51 {
        let mut c = c;
        c[1] += c[0] >> 51;
        c[2] += c[1] >> 51;
        c[3] += c[2] >> 51;
        c[4] += c[3] >> 51;
        let carry = (c[4] >> 51) as u64;
        let mut l = [
            c[0] as u64 & MASK51,
            c[1] as u64 & MASK51,
            c[2] as u64 & MASK51,
            c[3] as u64 & MASK51,
            c[4] as u64 & MASK51,
        ];
        l[0] += carry * 19;
        l[1] += l[0] >> 51;
        l[0] &= MASK51;
        Fe51(l)
    }

    /// One carry pass: any limbs < 2^63 in, reduced limbs (< 2^51 + 2^15) out.
    #[inline(always)]
    pub fn weak_reduce(&self) -> Fe51 {
        Fe51::carry(self.0)
    }

    /// True iff the canonical value is odd ("negative" in RFC 8032 terms).
    pub fn is_negative(&self) -> bool {
        self.to_bytes()[0] & 1 == 1
    }

    /// True iff the value is 0 mod p.
    pub fn is_zero(&self) -> bool {
        self.to_bytes() == [0u8; 32]
    }

    /// Equality mod p.
    pub fn equals(&self, other: &Fe51) -> bool {
        self.to_bytes() == other.to_bytes()
    }

    /// self^(2^k).
    #[inline]
    pub fn square_n(&self, k: u32) -> Fe51 {
        crate::square_n(self, k)
    }

    /// self^(p-2) = 1/self (0 maps to 0).
    pub fn invert(&self) -> Fe51 {
        let (t19, t3) = crate::pow22501(self);
        t19.square_n(5).mul(&t3) // 2^255 - 32 + 11 = p - 2
    }

    /// Given u, v with v != 0, returns (true, +sqrt(u/v)) if u/v is a square, (true, 0) if
    /// u = 0, and (false, garbage) otherwise. The root returned is the non-negative one.
    /// Method: RFC 8032 section 5.1.3 step 2-3 (x = u v^3 (u v^7)^((p-5)/8)).
    pub fn sqrt_ratio(u: &Fe51, v: &Fe51) -> (bool, Fe51) {
        let (uv3, uv7) = Fe51::sqrt_ratio_start(u, v);
        Fe51::sqrt_ratio_finish(u, v, &uv3, &crate::pow_p58(&uv7))
    }

    /// The cheap first step of [`Fe51::sqrt_ratio`]: (u v^3, u v^7). The caller raises
    /// u v^7 to (p-5)/8 (possibly many at once in SIMD lanes) and calls
    /// [`Fe51::sqrt_ratio_finish`].
    pub fn sqrt_ratio_start(u: &Fe51, v: &Fe51) -> (Fe51, Fe51) {
        let v3 = v.square().mul(v);
        let v7 = v3.square().mul(v);
        (u.mul(&v3), u.mul(&v7))
    }

    /// The last step of [`Fe51::sqrt_ratio`], given pow = (u v^7)^((p-5)/8).
    pub fn sqrt_ratio_finish(u: &Fe51, v: &Fe51, uv3: &Fe51, pow: &Fe51) -> (bool, Fe51) {
        let mut r = uv3.mul(pow);
        let check = v.mul(&r.square());
        let neg_u = u.neg();
        let correct = check.equals(u);
        let flipped = check.equals(&neg_u);
        if flipped {
            r = r.mul(&Fe51::SQRT_M1);
        }
        if r.is_negative() {
            r = r.neg();
        }
        (correct || flipped, r)
    }
}

impl FieldOps for Fe51 {
    #[inline(always)]
    fn add(&self, b: &Fe51) -> Fe51 {
        let a = &self.0;
        let b = &b.0;
        Fe51([
            a[0] + b[0],
            a[1] + b[1],
            a[2] + b[2],
            a[3] + b[3],
            a[4] + b[4],
        ])
    }

    #[inline(always)]
    fn sub(&self, b: &Fe51) -> Fe51 {
        // Add 16p so every limb stays non-negative for subtrahends < 2^55.
        let a = &self.0;
        let b = &b.0;
        Fe51::carry([
            (a[0] + 36028797018963664u64) - b[0],
            (a[1] + 36028797018963952u64) - b[1],
            (a[2] + 36028797018963952u64) - b[2],
            (a[3] + 36028797018963952u64) - b[3],
            (a[4] + 36028797018963952u64) - b[4],
        ])
    }

    #[inline(always)]
    fn neg(&self) -> Fe51 {
        Fe51::ZERO.sub(self)
    }

    #[inline(always)]
    fn mul(&self, b: &Fe51) -> Fe51 {
        let a = &self.0;
        let b = &b.0;
        let b1 = b[1] * 19;
        let b2 = b[2] * 19;
        let b3 = b[3] * 19;
        let b4 = b[4] * 19;
        Fe51::reduce_wide([
            m(a[0], b[0]) + m(a[4], b1) + m(a[3], b2) + m(a[2], b3) + m(a[1], b4),
            m(a[1], b[0]) + m(a[0], b[1]) + m(a[4], b2) + m(a[3], b3) + m(a[2], b4),
            m(a[2], b[0]) + m(a[1], b[1]) + m(a[0], b[2]) + m(a[4], b3) + m(a[3], b4),
            m(a[3], b[0]) + m(a[2], b[1]) + m(a[1], b[2]) + m(a[0], b[3]) + m(a[4], b4),
            m(a[4], b[0]) + m(a[3], b[1]) + m(a[2], b[2]) + m(a[1], b[3]) + m(a[0], b[4]),
        ])
    }

    #[inline(always)]
    fn square(&self) -> Fe51 {
        let a = &self.0;
        let a3_19 = a[3] * 19;
        let a4_19 = a[4] * 19;
        let d0 = 2 * a[0];
        let d1 = 2 * a[1];
        let d2 = 2 * a[2];
        Fe51::reduce_wide([
            m(a[0], a[0]) + m(d1, a4_19) + m(d2, a3_19),
            m(a[3], a3_19) + m(d0, a[1]) + m(d2, a4_19),
            m(a[1], a[1]) + m(d0, a[2]) + m(2 * a[4], a3_19),
            m(a[4], a4_19) + m(d0, a[3]) + m(d1, a[2]),
            m(a[2], a[2]) + m(d0, a[4]) + m(d1, a[3]),
        ])
    }
}

/// Parses 64 hex digits at compile time (little-endian byte order as written).
pub const fn hex32(s: &str) -> [u8; 32] {
    let b = s.as_bytes();
    let mut out = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        out[i] = (nib(b[2 * i]) << 4) | nib(b[2 * i + 1]);
        i += 1;
    }
    out
}

const fn nib(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => panic!("bad hex digit"),
    }
}
