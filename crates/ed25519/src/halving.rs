//! Scalar halving for single-signature verification.
//!
//! The check Q = [S]B - R - [k]A = 0 costs a 253-bit double-scalar multiplication. Given
//! integers (k1, k2) with k1 = k2 k (mod 8L), k2 odd and |k1|, |k2| < 2^131, we instead
//! test Q' = [k2 S mod L]B - [k2]R - [k1]A = [k2]Q. Because the group has order 8L and
//! gcd(k2, 8L) = 1, [k2] is a bijection, so Q' = 0 iff Q = 0 and [8]Q' = 0 iff [8]Q = 0:
//! the rewrite is exact for the cofactorless and the cofactored equation alike, even when
//! A or R has a small-order component (which a reduction mod L alone would get wrong).
//! Splitting k2 S mod L = c_lo + 2^128 c_hi with a table for 2^128 B leaves four products
//! of at most 131 bits, which share one chain of ~130 doublings instead of ~253; the
//! lane backends run the four products in four lanes at once.
//!
//! The pair comes from the extended Euclidean algorithm on (8L, k), stopped at the first
//! remainder r_i < 2^128: r_i = t_i k (mod 8L) and |t_i| <= 8L / r_(i-1) < 2^127 (the
//! "half-GCD" view of a reduced basis of the lattice {(x, y): x = y k mod 8L}; Pornin,
//! "Optimized lattice basis reduction in dimension 2, and fast Schnorr and EdDSA
//! signature verification", 2020, shows the 2-dimensional reduction view). Consecutive
//! t_i are coprime, so one of the neighbouring candidates has t odd; if no candidate fits
//! 131 bits the caller falls back to the plain double-scalar multiplication.
//!
//! Variable time: public data only.

use wirespeed_bigint::Uint;
use wirespeed_field::Scalar;

type U256 = Uint<4>;

/// 8L as little-endian limbs.
const EIGHT_L: U256 = Uint([
    0xc09318d2e7ae9f68,
    0xa6f7cef517bce6b2,
    0x0000000000000000,
    0x8000000000000000,
]);

/// (a / b, a mod b) for b != 0, by shift-and-subtract (quotients are almost always a
/// few bits in Euclid's algorithm).
fn divrem(a: &U256, b: &U256) -> (U256, U256) {
    if a < b {
        return (Uint::ZERO, *a);
    }
    // Quotients 1..=4 cover about 70% of Euclid steps (Gauss-Kuzmin); subtract directly.
    let mut r = a.overflowing_sub(b).0;
    for q in 1..=4u64 {
        if r < *b {
            return (Uint::from_u64(q), r);
        }
        r = r.overflowing_sub(b).0;
    }
    let shift = a.bits() - b.bits();
    let mut r = *a;
    let mut q = Uint::ZERO;
    for i in (0..=shift).rev() {
        let bs = b.shl(i);
        if r >= bs {
            r = r.overflowing_sub(&bs).0;
            q.0[i / 64] |= 1 << (i % 64);
        }
    }
    (q, r)
}

/// The matrix of a run of Euclid steps on leading words: r0' = A r0 + B r1 and
/// r1' = C r0 + D r1, where A and B (C and D) have opposite signs or one is zero; kept
/// as magnitudes a..d and the signs of B and D.
struct Cosequence {
    a: u64,
    b: u64,
    c: u64,
    d: u64,
    b_pos: bool,
    d_pos: bool,
    steps: u32,
}

/// Knuth's Algorithm L inner loop on leading words a_hat >= b_hat; stops before the
/// estimated remainder falls below 2^stop_bits (in units of the shifted words). None
/// when not even one step is certain.
fn lehmer_run(mut x: u64, mut y: u64, stop_bits: usize) -> Option<Cosequence> {
    // Signed cosequences in i128 (magnitudes stay below 2^64).
    let (mut a, mut b, mut c, mut d) = (1i128, 0i128, 0i128, 1i128);
    let mut steps = 0u32;
    let stop = if stop_bits >= 64 {
        u64::MAX
    } else {
        1u64 << stop_bits
    };
    loop {
        let (yc, yd) = (y as i128 + c, y as i128 + d);
        if yc == 0 || yd == 0 {
            break;
        }
        let q = (x as i128 + a) / yc;
        let q2 = (x as i128 + b) / yd;
        if q != q2 {
            break;
        }
        let r = x as i128 - q * y as i128;
        if r < 0 || (r as u64) < stop {
            break;
        }
        let (nc, nd) = (a - q * c, b - q * d);
        if nc.unsigned_abs() > u64::MAX as u128 || nd.unsigned_abs() > u64::MAX as u128 {
            // Keep the matrix within words (Lehmer's bounds make this unreachable).
            break;
        }
        (a, b, c, d) = (c, d, nc, nd);
        (x, y) = (y, r as u64);
        steps += 1;
    }
    if steps == 0 || b == 0 {
        return None;
    }
    Some(Cosequence {
        a: a.unsigned_abs() as u64,
        b: b.unsigned_abs() as u64,
        c: c.unsigned_abs() as u64,
        d: d.unsigned_abs() as u64,
        b_pos: b > 0,
        d_pos: d > 0,
        steps,
    })
}

/// x * m for a one-word m (mod 2^256).
fn mul_u64(x: &U256, m: u64) -> U256 {
    let mut out = [0u64; 4];
    let mut carry = 0u128;
    for (o, &w) in out.iter_mut().zip(&x.0) {
        let t = w as u128 * m as u128 + carry;
        *o = t as u64;
        carry = t >> 64;
    }
    Uint(out)
}

/// |p r0 - q r1| with the sign given: `neg` false computes p r0 - q r1, true q r1 - p r0
/// (Euclid's remainders are never negative).
fn comb(r0: &U256, p: u64, r1: &U256, q: u64, neg: bool) -> U256 {
    let (x, y) = (mul_u64(r0, p), mul_u64(r1, q));
    if neg {
        y.overflowing_sub(&x).0
    } else {
        x.overflowing_sub(&y).0
    }
}

/// The halved form of k: k1 = k2 k (mod 8L), k2 odd, magnitudes below 2^131.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Halved {
    /// k1 (non-negative).
    pub k1: Scalar,
    /// |k2|.
    pub k2_abs: Scalar,
    /// k2 < 0.
    pub k2_neg: bool,
}

/// Largest magnitude (bits) the four-product path takes: 33 signed radix-16 digits cover
/// values below 2^131 with the top digit at most 8.
const LIMIT_BITS: usize = 131;

/// Finds (k1, k2) for k (an integer in [0, L)), or None in the rare case no candidate
/// fits (the caller then uses the unhalved path).
pub(crate) fn vartime_halve(k: &Scalar) -> Option<Halved> {
    // Remainders r and cofactor magnitudes t; sign(t_i) = (-1)^(i+1) for i >= 1.
    let (mut r0, mut r1) = (EIGHT_L, Uint(k.0));
    let (mut t0, mut t1) = (U256::ZERO, U256::ONE);
    let mut i = 1u32; // index of (r1, t1)
                      // Lehmer's steps: while the remainders are long, run Euclid on their leading 64
                      // bits (with Collins' exactness test, so every quotient taken is the true one) and
                      // apply the accumulated 2x2 matrix to the full numbers once per run, stopping the
                      // run early enough (an estimated remainder of 2^130) that the exact steps below
                      // find the first remainder under 2^128.
    while r1.bits() > 132 {
        let shift = r0.bits() - 64;
        let (a_hat, b_hat) = (r0.shr(shift).0[0], r1.shr(shift).0[0]);
        let Some(m) = lehmer_run(a_hat, b_hat, 130usize.saturating_sub(shift)) else {
            // No certain step on the leading words (a large quotient): one exact step.
            let (q, r2) = divrem(&r0, &r1);
            let t2 = t0.overflowing_add(&q.wrapping_mul(&t1)).0;
            (r0, r1) = (r1, r2);
            (t0, t1) = (t1, t2);
            i += 1;
            continue;
        };
        (r0, r1) = (
            comb(&r0, m.a, &r1, m.b, m.b_pos),
            comb(&r0, m.c, &r1, m.d, m.d_pos),
        );
        (t0, t1) = (
            mul_u64(&t0, m.a).overflowing_add(&mul_u64(&t1, m.b)).0,
            mul_u64(&t0, m.c).overflowing_add(&mul_u64(&t1, m.d)).0,
        );
        i += m.steps;
    }
    while r1.bits() > 128 {
        if r1.is_zero() {
            return None;
        }
        let (q, r2) = divrem(&r0, &r1);
        let t2 = t0.overflowing_add(&q.wrapping_mul(&t1)).0;
        (r0, r1) = (r1, r2);
        (t0, t1) = (t1, t2);
        i += 1;
    }
    let mk = |r: U256, t: U256, idx: u32| -> Option<Halved> {
        if !t.is_odd() || r.bits() > LIMIT_BITS || t.bits() > LIMIT_BITS {
            return None;
        }
        Some(Halved {
            k1: Scalar(r.0),
            k2_abs: Scalar(t.0),
            k2_neg: idx.is_multiple_of(2),
        })
    };
    if let Some(h) = mk(r1, t1, i) {
        return Some(h);
    }
    if !r1.is_zero() {
        let (q, r2) = divrem(&r0, &r1);
        let t2 = t0.overflowing_add(&q.wrapping_mul(&t1)).0;
        if let Some(h) = mk(r2, t2, i + 1) {
            return Some(h);
        }
    }
    mk(r0, t0, i - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (a + b) mod 8L for a, b < 8L (8L < 2^256, so a + b < 2^257: use the carry).
    fn add_mod(a: &U256, b: &U256) -> U256 {
        let (s, carry) = a.overflowing_add(b);
        if carry || s >= EIGHT_L {
            s.overflowing_sub(&EIGHT_L).0
        } else {
            s
        }
    }

    /// Checks k1 = k2 k (mod 8L) exactly, by Horner over the bits of k2.
    fn holds(k: &Scalar, h: &Halved) -> bool {
        let k = Uint(k.0);
        let mut acc = U256::ZERO;
        for bit in (0..256).rev() {
            acc = add_mod(&acc, &acc);
            if (h.k2_abs.0[bit / 64] >> (bit % 64)) & 1 == 1 {
                acc = add_mod(&acc, &k);
            }
        }
        let prod = if h.k2_neg && !acc.is_zero() {
            EIGHT_L.overflowing_sub(&acc).0
        } else {
            acc
        };
        prod.0 == h.k1.0
    }

    #[test]
    fn eight_l_is_eight_times_l() {
        let l = wirespeed_field::scalar::L;
        assert_eq!(EIGHT_L, Uint(l).shl(3));
    }

    #[test]
    fn halves_random_scalars() {
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut found = 0;
        for n in 0..5000 {
            let mut b = [0u8; 64];
            for c in b.chunks_mut(8) {
                c.copy_from_slice(&next().to_le_bytes());
            }
            let k = if n == 0 {
                Scalar([1, 0, 0, 0])
            } else {
                Scalar::from_bytes_mod_order_wide(&b)
            };
            if let Some(h) = vartime_halve(&k) {
                found += 1;
                assert!(holds(&k, &h), "relation fails for {k:?}");
                assert_eq!(h.k2_abs.0[0] & 1, 1);
                assert!(Uint(h.k1.0).bits() <= LIMIT_BITS && Uint(h.k2_abs.0).bits() <= LIMIT_BITS);
                // The four-product path's 33 signed radix-16 digits must stay in [-8, 8]
                // (its table range) and represent the value exactly.
                for v in [h.k1, h.k2_abs] {
                    let mut d = [0i8; 33];
                    v.signed_radix(4, &mut d);
                    assert!(
                        d.iter().all(|x| (-8..=8).contains(x)),
                        "digit out of range for {v:?}"
                    );
                    let mut acc = U256::ZERO;
                    for x in d.iter().rev() {
                        acc = acc.shl(4);
                        let m = U256::from_u64(x.unsigned_abs() as u64);
                        acc = if *x >= 0 {
                            acc.overflowing_add(&m).0
                        } else {
                            acc.overflowing_sub(&m).0
                        };
                    }
                    assert_eq!(acc.0, v.0);
                }
            }
        }
        assert!(found > 4900, "halving fell back too often: {found}/5000");
    }
}
