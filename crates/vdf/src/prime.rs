//! Baillie-PSW probable-prime test on integers below 2^128, and the hash-to-prime that
//! draws Wesolowski's challenge l.
//!
//! The test itself is [`wirespeed_bigint::prime`] (one implementation for every width:
//! the RSA accumulator runs it on 256-bit candidates); these are its `u128` entry points.
//! BPSW = trial division by the primes below 64, a strong probable-prime test to base 2
//! (Miller-Rabin) and a strong Lucas probable-prime test with Selfridge's method A
//! parameters (Baillie, Wagstaff, "Lucas pseudoprimes", Math. Comp. 35, 1980; Pomerance,
//! Selfridge, Wagstaff, "The pseudoprimes to 25 10^9", 1980). No composite passing both is
//! known; below 2^64 none exists (Feitsma, Galway).
//!
//! The `_with` forms build the test's Montgomery context for the CPU features they are
//! given (Wesolowski's challenge uses the modulus' features); the plain forms use the
//! detected features. The answers do not depend on them.
//!
//! The whole module is variable time: it only sees public values.

use wirespeed_bigint::{prime, CpuFeatures, Uint};

fn to_uint(v: u128) -> Uint<2> {
    Uint([v as u64, (v >> 64) as u64])
}

/// Baillie-PSW: true for primes, false for composites (no counterexample known; none
/// below 2^64).
pub fn is_probable_prime(n: u128) -> bool {
    is_probable_prime_with(n, CpuFeatures::get())
}

/// [`is_probable_prime`] for a CPU with features `f`.
pub fn is_probable_prime_with(n: u128, f: &CpuFeatures) -> bool {
    prime::is_probable_prime_with(&to_uint(n), f)
}

/// Strong probable-prime test to base 2 for odd n > 2 (false for other n).
pub fn miller_rabin_base2(n: u128) -> bool {
    prime::miller_rabin_base2_with(&to_uint(n), CpuFeatures::get())
}

/// Strong Lucas probable-prime test with Selfridge's method A parameters, for odd n > 2
/// (false for even n, n < 3, perfect squares and u128::MAX).
pub fn strong_lucas(n: u128) -> bool {
    prime::strong_lucas_with(&to_uint(n), CpuFeatures::get())
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
    hash_to_prime_with(n_bytes, x_bytes, y_bytes, t, CpuFeatures::get())
}

/// [`hash_to_prime`] with the primality test run for a CPU with features `f`.
pub fn hash_to_prime_with(
    n_bytes: &[u8],
    x_bytes: &[u8],
    y_bytes: &[u8],
    t: u64,
    f: &CpuFeatures,
) -> u128 {
    let t = t.to_be_bytes();
    hash_fields_to_prime_with(&[CHALLENGE_TAG, n_bytes, x_bytes, y_bytes, &t], f)
}

/// The hash-to-prime of [`hash_to_prime`] over any list of fields (the first should be a
/// domain-separation tag): the first candidate c = (first 16 bytes of SHA-256 of the
/// length-prefixed fields and the counter) | 2^127 | 1 that passes
/// [`is_probable_prime`], tested for a CPU with features `f`.
pub fn hash_fields_to_prime_with(fields: &[&[u8]], f: &CpuFeatures) -> u128 {
    wirespeed_bigint::prime::hashed_candidates(fields)
        .map(|digest| {
            let mut top = [0u8; 16];
            top.copy_from_slice(&digest[..16]);
            u128::from_be_bytes(top) | (1 << 127) | 1
        })
        .find(|&c| is_probable_prime_with(c, f))
        .unwrap_or_else(|| unreachable!("the candidate stream is endless"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers() {
        // The shared helpers at this width.
        assert_eq!(prime::isqrt(&to_uint(u128::MAX)), to_uint(u64::MAX as u128));
        assert!(prime::is_square(&to_uint(
            (u64::MAX as u128) * (u64::MAX as u128)
        )));
        assert!(!prime::is_square(&to_uint(u128::MAX)));
        assert_eq!(prime::jacobi(&to_uint(5), &to_uint(21)), 1);
        assert_eq!(prime::jacobi(&to_uint(2), &to_uint(7)), 1);
        assert_eq!(prime::jacobi(&to_uint(3), &to_uint(7)), -1);
        assert_eq!(prime::jacobi(&to_uint(7), &to_uint(21)), 0);
    }
}
