//! Baillie-PSW probable-prime test on `Uint<L>` (any width a [`MontCtx`] accepts): one
//! implementation for the VDF's 128-bit challenges (`Uint<2>`) and the RSA accumulator's
//! 256-bit element primes (`Uint<4>`).
//!
//! BPSW = trial division by the primes below 64, a strong probable-prime test to base 2
//! (Miller-Rabin) and a strong Lucas probable-prime test with Selfridge's method A
//! parameters: the first D in 5, -7, 9, -11, 13, ... with Jacobi (D/n) = -1, P = 1,
//! Q = (1 - D)/4 (Baillie, Wagstaff, "Lucas pseudoprimes", Math. Comp. 35, 1980;
//! Pomerance, Selfridge, Wagstaff, "The pseudoprimes to 25 10^9", 1980). No composite
//! passing both is known; below 2^64 none exists (Feitsma, Galway).
//!
//! Arithmetic: residues mod n in Montgomery form with `MontCtx<L>` (n odd), plus modular
//! add, subtract and halve below (each input < n, output < n). The Lucas ladder doubles
//! with U_2k = U_k V_k, V_2k = V_k^2 - 2 Q^k and steps with U_k+1 = (P U_k + V_k)/2,
//! V_k+1 = (D U_k + P V_k)/2 (Crandall, Pomerance, "Prime numbers: a computational
//! perspective", section 3.6). The Jacobi symbol uses the binary algorithm (shifts and
//! subtractions only), the square test a bit-by-bit integer square root.
//!
//! The Montgomery context modulo n is built for the CPU features the `_with` forms are
//! given ([`is_probable_prime_with`], ...; the kernel does not change any answer); the
//! plain forms use the detected features.
//!
//! The whole module is variable time: it is meant for public values (challenges, hashed
//! candidates), not for secret primes.

use sha2::{Digest, Sha256};

use wirespeed_util::cpu::CpuFeatures;

use crate::mont::MontCtx;
use crate::uint::Uint;

/// Primes below 64, for trial division.
const SMALL_PRIMES: [u64; 18] = [
    2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61,
];

/// Baillie-PSW: true for primes, false for composites (no counterexample known; none
/// below 2^64).
///
/// Convenience wrapper: [`is_probable_prime_with`] this process's detected features.
pub fn is_probable_prime<const L: usize>(n: &Uint<L>) -> bool {
    is_probable_prime_with(n, CpuFeatures::get())
}

/// [`is_probable_prime`] with the context modulo n built for a CPU with features `f`.
pub fn is_probable_prime_with<const L: usize>(n: &Uint<L>, f: &CpuFeatures) -> bool {
    for p in SMALL_PRIMES {
        if *n == Uint::from_u64(p) {
            return true;
        }
        if n.rem_u64(p) == 0 {
            return false;
        }
    }
    if n.bits() <= 12 {
        // n < 4096 = 64^2 with no prime factor below 64: prime (and 0, 1 are not).
        return *n > Uint::ONE;
    }
    let Ok(ctx) = MontCtx::new_with(n, f) else {
        return false;
    };
    mr_base2(&ctx) && lucas(&ctx)
}

/// Strong probable-prime test to base 2 for odd n > 2 (false for other n).
///
/// Convenience wrapper: [`miller_rabin_base2_with`] this process's detected features.
pub fn miller_rabin_base2<const L: usize>(n: &Uint<L>) -> bool {
    miller_rabin_base2_with(n, CpuFeatures::get())
}

/// [`miller_rabin_base2`] with the context modulo n built for a CPU with features `f`.
pub fn miller_rabin_base2_with<const L: usize>(n: &Uint<L>, f: &CpuFeatures) -> bool {
    if *n < Uint::from_u64(3) || !n.is_odd() {
        return false;
    }
    match MontCtx::new_with(n, f) {
        Ok(ctx) => mr_base2(&ctx),
        Err(_) => false,
    }
}

/// Strong Lucas probable-prime test with Selfridge's method A parameters, for odd n > 2
/// (false for even n, n < 3, perfect squares and the all-ones value 2^(64 L) - 1).
///
/// Convenience wrapper: [`strong_lucas_with`] this process's detected features.
pub fn strong_lucas<const L: usize>(n: &Uint<L>) -> bool {
    strong_lucas_with(n, CpuFeatures::get())
}

/// [`strong_lucas`] with the context modulo n built for a CPU with features `f`.
pub fn strong_lucas_with<const L: usize>(n: &Uint<L>, f: &CpuFeatures) -> bool {
    if *n < Uint::from_u64(3) || !n.is_odd() {
        return false;
    }
    match MontCtx::new_with(n, f) {
        Ok(ctx) => lucas(&ctx),
        Err(_) => false,
    }
}

/// Miller-Rabin to base 2 modulo the context's odd n >= 3.
fn mr_base2<const L: usize>(ctx: &MontCtx<L>) -> bool {
    let n = ctx.modulus();
    let (nm1, _) = n.overflowing_sub(&Uint::ONE);
    let s = trailing_zeros(&nm1);
    let d = nm1.shr(s);
    let two = ctx.reduce_to_mont(&Uint::from_u64(2));
    let one = ctx.one();
    let minus_one = sub_mod(&Uint::ZERO, &one, n);
    let mut x = ctx.vartime_pow(&two, &d.0);
    if x == one || x == minus_one {
        return true;
    }
    for _ in 1..s {
        x = ctx.sqr(&x);
        if x == minus_one {
            return true;
        }
        if x == one {
            return false;
        }
    }
    false
}

/// v mod n for a small v.
fn small_mod<const L: usize>(v: u64, n: &Uint<L>) -> Uint<L> {
    if n.bits() <= 64 {
        Uint::from_u64(v % n.0[0])
    } else {
        Uint::from_u64(v)
    }
}

/// The strong Lucas test modulo the context's odd n >= 3.
fn lucas<const L: usize>(ctx: &MontCtx<L>) -> bool {
    let m = ctx.modulus();
    let (np1, carry) = m.overflowing_add(&Uint::ONE);
    if carry {
        // n = 2^(64 L) - 1 is divisible by 3 (64 L is even): composite.
        return false;
    }
    // Selfridge: D = 5, -7, 9, -11, ... until (D/n) = -1.
    let mut abs_d: u64 = 5;
    let mut negative = false;
    let mut d_val;
    loop {
        let r = small_mod(abs_d, m);
        d_val = if negative {
            sub_mod(&Uint::ZERO, &r, m)
        } else {
            r
        };
        match jacobi(&d_val, m) {
            -1 => break,
            // gcd(D, n) > 1: composite unless n is |D| itself.
            0 => return *m == Uint::from_u64(abs_d),
            _ => {}
        }
        abs_d += 2;
        negative = !negative;
        // A square n has (D/n) >= 0 for every D: test for one once the search runs
        // longer than it does for almost all non-squares.
        if abs_d == 21 && is_square(m) {
            return false;
        }
        if abs_d > 1 << 20 {
            // Unreachable for non-squares (some small D has (D/n) = -1).
            return false;
        }
    }
    // Q = (1 - D)/4, exact: 1 - 5 = -4, 1 + 7 = 8, ...
    let q_abs = if negative {
        (abs_d + 1) / 4
    } else {
        (abs_d - 1) / 4
    };
    let q_r = small_mod(q_abs, m);
    let q_val = if negative {
        q_r
    } else {
        sub_mod(&Uint::ZERO, &q_r, m)
    };
    let d_m = ctx.to_mont(&d_val);
    let q_m = ctx.to_mont(&q_val);
    // n + 1 = d 2^s, d odd.
    let s = trailing_zeros(&np1);
    let d = np1.shr(s);
    // Ladder over d's bits from the top: (U_1, V_1, Q^1) = (1, P, Q) with P = 1.
    let mut u = ctx.one();
    let mut v = ctx.one();
    let mut qk = q_m;
    for i in (0..d.bits() - 1).rev() {
        u = ctx.mul(&u, &v);
        v = sub_mod(&ctx.sqr(&v), &add_mod(&qk, &qk, m), m);
        qk = ctx.sqr(&qk);
        if d.bit(i) {
            let du = ctx.mul(&d_m, &u);
            let new_u = half_mod(&add_mod(&u, &v, m), m);
            v = half_mod(&add_mod(&du, &v, m), m);
            u = new_u;
            qk = ctx.mul(&qk, &q_m);
        }
    }
    if u.is_zero() {
        return true;
    }
    for r in 0..s {
        if v.is_zero() {
            return true;
        }
        if r + 1 < s {
            v = sub_mod(&ctx.sqr(&v), &add_mod(&qk, &qk, m), m);
            qk = ctx.sqr(&qk);
        }
    }
    false
}

/// Number of trailing zero bits (the width for zero).
fn trailing_zeros<const L: usize>(x: &Uint<L>) -> usize {
    for (i, &l) in x.0.iter().enumerate() {
        if l != 0 {
            return 64 * i + l.trailing_zeros() as usize;
        }
    }
    Uint::<L>::BITS
}

/// a + b mod m for a, b < m.
fn add_mod<const L: usize>(a: &Uint<L>, b: &Uint<L>, m: &Uint<L>) -> Uint<L> {
    let (s, carry) = a.overflowing_add(b);
    let (t, borrow) = s.overflowing_sub(m);
    if carry || !borrow {
        t
    } else {
        s
    }
}

/// a - b mod m for a, b < m.
fn sub_mod<const L: usize>(a: &Uint<L>, b: &Uint<L>, m: &Uint<L>) -> Uint<L> {
    let (d, borrow) = a.overflowing_sub(b);
    if borrow {
        d.overflowing_add(m).0
    } else {
        d
    }
}

/// a / 2 mod m for a < m, m odd: a/2 if a is even, else (a + m)/2 (a sum one bit wider
/// than the type).
fn half_mod<const L: usize>(a: &Uint<L>, m: &Uint<L>) -> Uint<L> {
    if !a.is_odd() {
        return a.shr(1);
    }
    let (s, carry) = a.overflowing_add(m);
    let mut h = s.shr(1);
    if carry {
        h.0[L - 1] |= 1 << 63;
    }
    h
}

/// Jacobi symbol (a/n) for odd n > 0 and any a (binary algorithm: a is reduced by
/// subtracting n, never divided).
pub fn jacobi<const L: usize>(a: &Uint<L>, n: &Uint<L>) -> i32 {
    let (mut a, mut n) = (*a, *n);
    if !n.is_odd() {
        return 0;
    }
    let mut result = 1;
    loop {
        if a.is_zero() {
            return if n == Uint::ONE { result } else { 0 };
        }
        let tz = trailing_zeros(&a);
        a = a.shr(tz);
        let n8 = n.0[0] & 7;
        if tz % 2 == 1 && (n8 == 3 || n8 == 5) {
            result = -result;
        }
        // a and n odd: (a/n) = (a - n / n) for a >= n; otherwise swap by reciprocity.
        if a < n {
            if a.0[0] & 3 == 3 && n.0[0] & 3 == 3 {
                result = -result;
            }
            std::mem::swap(&mut a, &mut n);
        }
        a = a.overflowing_sub(&n).0;
    }
}

/// floor(sqrt(n)), bit by bit (shifts, additions and comparisons only).
pub fn isqrt<const L: usize>(n: &Uint<L>) -> Uint<L> {
    let mut rem = *n;
    let mut root = Uint::<L>::ZERO;
    // The highest power of 4 not above n.
    let top = n.bits().saturating_sub(1) & !1;
    if n.is_zero() {
        return root;
    }
    let mut bit = Uint::<L>::ONE.shl(top);
    loop {
        let (cand, _) = root.overflowing_add(&bit);
        root = root.shr(1);
        if rem >= cand {
            rem = rem.overflowing_sub(&cand).0;
            root = root.overflowing_add(&bit).0;
        }
        if bit == Uint::ONE {
            return root;
        }
        bit = bit.shr(2);
    }
}

/// True when n is a perfect square.
pub fn is_square<const L: usize>(n: &Uint<L>) -> bool {
    // Squares are 0, 1, 4 or 9 mod 16: most non-squares leave here.
    if !matches!(n.0.first().map_or(0, |l| l & 15), 0 | 1 | 4 | 9) {
        return false;
    }
    let r = isqrt(n);
    let (sq, _) = r.wrapping_mul(&r).overflowing_sub(n);
    // r^2 <= n < 2^(64 L), so the wrapping product is exact.
    sq.is_zero()
}

/// The candidate stream of a hash-to-prime: for counter = 0, 1, 2, ..., the SHA-256 of
/// `fields` and the counter, every field preceded by its length (8 bytes big-endian),
/// the counter 8 bytes big-endian. The first field is the caller's domain tag. Callers
/// shape each digest (top and low bits set) and keep the first prime.
pub fn hashed_candidates(fields: &[&[u8]]) -> impl Iterator<Item = [u8; 32]> + use<> {
    let mut h = Sha256::new();
    for field in fields {
        h.update((field.len() as u64).to_be_bytes());
        h.update(field);
    }
    (0u64..).map(move |counter| {
        let mut hc = h.clone();
        hc.update(8u64.to_be_bytes());
        hc.update(counter.to_be_bytes());
        hc.finalize().into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(v: u128) -> Uint<2> {
        Uint([v as u64, (v >> 64) as u64])
    }

    #[test]
    fn helpers() {
        assert_eq!(isqrt(&u(u128::MAX)), u(u64::MAX as u128));
        assert_eq!(isqrt(&u(0)), u(0));
        assert_eq!(isqrt(&u(1)), u(1));
        assert_eq!(isqrt(&u(15)), u(3));
        assert_eq!(isqrt(&u(16)), u(4));
        for v in 0..2000u128 {
            let r = isqrt(&u(v));
            let r = r.0[0] as u128;
            assert!(r * r <= v && (r + 1) * (r + 1) > v, "{v}");
            assert_eq!(is_square(&u(v)), r * r == v, "{v}");
        }
        assert!(is_square(&u((u64::MAX as u128) * (u64::MAX as u128))));
        assert!(!is_square(&u(u128::MAX)));
        assert_eq!(jacobi(&u(5), &u(21)), 1);
        assert_eq!(jacobi(&u(2), &u(7)), 1);
        assert_eq!(jacobi(&u(3), &u(7)), -1);
        assert_eq!(jacobi(&u(7), &u(21)), 0);
        assert_eq!(jacobi(&u(0), &u(1)), 1);
        assert_eq!(jacobi(&u(30), &u(7)), jacobi(&u(2), &u(7)));
        let m = u(u128::MAX - 158); // odd
        let a = u(u128::MAX - 200);
        let h = half_mod(&a, &m);
        assert_eq!(add_mod(&h, &h, &m), a);
        assert_eq!(sub_mod(&add_mod(&a, &h, &m), &h, &m), a);
        assert_eq!(trailing_zeros(&u(1 << 100)), 100);
        assert_eq!(trailing_zeros(&u(0)), 128);
    }

    /// Jacobi by Euler's criterion for small odd primes p: a^((p-1)/2) mod p.
    #[test]
    fn jacobi_matches_euler_criterion() {
        for p in [3u64, 5, 7, 11, 13, 61, 65537] {
            for a in 0..200u64 {
                let mut r = 1u64;
                for _ in 0..(p - 1) / 2 {
                    r = r * (a % p) % p;
                }
                let expect = match r {
                    0 => 0,
                    1 => 1,
                    _ => -1,
                };
                assert_eq!(
                    jacobi(&Uint::<4>::from_u64(a), &Uint::from_u64(p)),
                    expect,
                    "({a}/{p})"
                );
            }
        }
    }
}
