//! Baillie-PSW probable-prime test on integers below 2^128, and the hash-to-prime that
//! draws Wesolowski's challenge l.
//!
//! BPSW = trial division by the primes below 64, a strong probable-prime test to base 2
//! (Miller-Rabin) and a strong Lucas probable-prime test with Selfridge's method A
//! parameters: the first D in 5, -7, 9, -11, 13, ... with Jacobi (D/n) = -1, P = 1,
//! Q = (1 - D)/4 (Baillie, Wagstaff, "Lucas pseudoprimes", Math. Comp. 35, 1980; Pomerance,
//! Selfridge, Wagstaff, "The pseudoprimes to 25 10^9", 1980). No composite passing both is
//! known; below 2^64 none exists (Feitsma, Galway).
//!
//! Arithmetic: residues mod n in Montgomery form with `MontCtx<2>` (n < 2^128, odd), plus
//! modular add, subtract and halve on `Uint<2>` below (each input < n, output < n). The
//! Lucas ladder doubles with U_2k = U_k V_k, V_2k = V_k^2 - 2 Q^k and steps with
//! U_k+1 = (P U_k + V_k)/2, V_k+1 = (D U_k + P V_k)/2 (Crandall, Pomerance, "Prime
//! numbers: a computational perspective", section 3.6).
//!
//! The whole module is variable time: it only sees public values.

use sha2::{Digest, Sha256};
use wirespeed_bigint::{MontCtx, Uint};

type U128 = Uint<2>;

fn to_uint(v: u128) -> U128 {
    Uint([v as u64, (v >> 64) as u64])
}

/// Primes below 64, for trial division.
const SMALL_PRIMES: [u128; 18] = [
    2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61,
];

/// Baillie-PSW: true for primes, false for composites (no counterexample known; none
/// below 2^64).
pub fn is_probable_prime(n: u128) -> bool {
    for p in SMALL_PRIMES {
        if n == p {
            return true;
        }
        if n.is_multiple_of(p) {
            return false;
        }
    }
    if n < 64 * 64 {
        // No prime factor below 64 and below 64^2: prime (and 0, 1 are not).
        return n > 1;
    }
    miller_rabin_base2(n) && strong_lucas(n)
}

/// Strong probable-prime test to base 2 for odd n > 2 (false for other n).
pub fn miller_rabin_base2(n: u128) -> bool {
    if n < 3 || n.is_multiple_of(2) {
        return false;
    }
    let Ok(ctx) = MontCtx::new(&to_uint(n)) else {
        return false;
    };
    let s = (n - 1).trailing_zeros();
    let d = (n - 1) >> s;
    let two = ctx.reduce_to_mont(&Uint::from_u64(2));
    let one = ctx.one();
    let minus_one = sub_mod(&Uint::ZERO, &one, ctx.modulus());
    let mut x = ctx.vartime_pow(&two, &[d as u64, (d >> 64) as u64]);
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

/// Strong Lucas probable-prime test with Selfridge's method A parameters, for odd n > 2
/// (false for even n, n < 3 and perfect squares).
pub fn strong_lucas(n: u128) -> bool {
    if n < 3 || n.is_multiple_of(2) || n == u128::MAX || is_square(n) {
        return false;
    }
    // Selfridge: D = 5, -7, 9, -11, ... until (D/n) = -1.
    let mut abs_d: u128 = 5;
    let mut negative = false;
    loop {
        let d_mod = if negative {
            (n - abs_d % n) % n
        } else {
            abs_d % n
        };
        match jacobi(d_mod, n) {
            -1 => break,
            // gcd(D, n) > 1: composite unless n is |D| itself (then prime, see module
            // docs: a composite meets its smallest factor first).
            0 => return n == abs_d,
            _ => {}
        }
        abs_d += 2;
        negative = !negative;
        if abs_d > 1 << 20 {
            // Unreachable for non-squares (some small D has (D/n) = -1).
            return false;
        }
    }
    let Ok(ctx) = MontCtx::new(&to_uint(n)) else {
        return false;
    };
    let m = ctx.modulus();
    // D and Q = (1 - D) / 4 mod n, in Montgomery form.
    let d_val = if negative {
        sub_mod(&Uint::ZERO, &to_uint(abs_d % n), m)
    } else {
        to_uint(abs_d % n)
    };
    // 1 - D = 1 - 5 = -4, 1 + 7 = 8, ...: Q = (1 - D)/4, exact.
    let q_signed: i128 = if negative {
        (1 + abs_d as i128) / 4
    } else {
        (1 - abs_d as i128) / 4
    };
    let q_val = if q_signed < 0 {
        sub_mod(&Uint::ZERO, &to_uint(q_signed.unsigned_abs() % n), m)
    } else {
        to_uint(q_signed as u128 % n)
    };
    let d_m = ctx.to_mont(&d_val);
    let q_m = ctx.to_mont(&q_val);
    // n + 1 = d 2^s, d odd.
    let np1 = n + 1;
    let s = np1.trailing_zeros();
    let d = np1 >> s;
    // Ladder over d's bits from the top: (U_1, V_1, Q^1) = (1, P, Q) with P = 1.
    let mut u = ctx.one();
    let mut v = ctx.one();
    let mut qk = q_m;
    let bits = 128 - d.leading_zeros();
    for i in (0..bits - 1).rev() {
        u = ctx.mul(&u, &v);
        v = sub_mod(&ctx.sqr(&v), &add_mod(&qk, &qk, m), m);
        qk = ctx.sqr(&qk);
        if (d >> i) & 1 == 1 {
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

/// a + b mod m for a, b < m.
fn add_mod(a: &U128, b: &U128, m: &U128) -> U128 {
    let (s, carry) = a.overflowing_add(b);
    let (t, borrow) = s.overflowing_sub(m);
    if carry || !borrow {
        t
    } else {
        s
    }
}

/// a - b mod m for a, b < m.
fn sub_mod(a: &U128, b: &U128, m: &U128) -> U128 {
    let (d, borrow) = a.overflowing_sub(b);
    if borrow {
        d.overflowing_add(m).0
    } else {
        d
    }
}

/// a / 2 mod m for a < m, m odd: a/2 if a is even, else (a + m)/2 (129-bit sum).
fn half_mod(a: &U128, m: &U128) -> U128 {
    if !a.is_odd() {
        return a.shr(1);
    }
    let (s, carry) = a.overflowing_add(m);
    let mut h = s.shr(1);
    if carry {
        h.0[1] |= 1 << 63;
    }
    h
}

/// Jacobi symbol (a/n) for odd n > 0.
fn jacobi(mut a: u128, mut n: u128) -> i32 {
    a %= n;
    let mut result = 1;
    while a != 0 {
        let tz = a.trailing_zeros();
        a >>= tz;
        if tz % 2 == 1 && (n % 8 == 3 || n % 8 == 5) {
            result = -result;
        }
        if a % 4 == 3 && n % 4 == 3 {
            result = -result;
        }
        std::mem::swap(&mut a, &mut n);
        a %= n;
    }
    if n == 1 {
        result
    } else {
        0
    }
}

/// True when n is a perfect square.
fn is_square(n: u128) -> bool {
    let r = isqrt(n);
    r.checked_mul(r) == Some(n)
}

/// floor(sqrt(n)).
fn isqrt(n: u128) -> u128 {
    if n < 2 {
        return n;
    }
    // Newton from above: x0 = 2^ceil(bits/2) >= sqrt(n); x decreases to floor(sqrt(n)).
    let bits = 128 - n.leading_zeros();
    let mut x: u128 = 1 << bits.div_ceil(2);
    loop {
        let y = (x + n / x) / 2;
        if y >= x {
            return x;
        }
        x = y;
    }
}

/// Domain-separation tag of Wesolowski's challenge.
const CHALLENGE_TAG: &[u8] = b"wirespeed-vdf/v1/wesolowski-challenge";

/// Wesolowski's challenge l = hash_to_prime(N, x, y, T): the first 128-bit candidate
/// that passes [`is_probable_prime`], candidate c = (first 16 bytes of SHA-256(tag, N, x,
/// y, T, counter), big-endian) with the top bit and the low bit set, counter = 0, 1, ...
/// Every field is length-prefixed (8-byte big-endian length); N, x and y are big-endian
/// of N's byte length, T and the counter 8 bytes big-endian. About 44 candidates are
/// tried on average.
pub fn hash_to_prime(n_bytes: &[u8], x_bytes: &[u8], y_bytes: &[u8], t: u64) -> u128 {
    let mut h = Sha256::new();
    for field in [CHALLENGE_TAG, n_bytes, x_bytes, y_bytes, &t.to_be_bytes()] {
        h.update((field.len() as u64).to_be_bytes());
        h.update(field);
    }
    let mut counter = 0u64;
    loop {
        let mut hc = h.clone();
        hc.update(8u64.to_be_bytes());
        hc.update(counter.to_be_bytes());
        let digest = hc.finalize();
        let mut top = [0u8; 16];
        top.copy_from_slice(&digest[..16]);
        let c = u128::from_be_bytes(top) | (1 << 127) | 1;
        if is_probable_prime(c) {
            return c;
        }
        counter = counter.wrapping_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers() {
        assert_eq!(isqrt(u128::MAX), u64::MAX as u128);
        assert!(is_square((u64::MAX as u128) * (u64::MAX as u128)));
        assert!(!is_square(u128::MAX));
        assert_eq!(jacobi(5, 21), 1);
        assert_eq!(jacobi(2, 7), 1);
        assert_eq!(jacobi(3, 7), -1);
        assert_eq!(jacobi(7, 21), 0);
        let m = to_uint(u128::MAX - 158); // odd
        let a = to_uint(u128::MAX - 200);
        let h = half_mod(&a, &m);
        assert_eq!(add_mod(&h, &h, &m), a);
    }
}
