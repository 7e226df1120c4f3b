//! Baillie-PSW against known primes, pseudoprimes and Carmichael numbers, against
//! trial division (num-bigint) for every odd number below 100,000, and against a
//! many-base Miller-Rabin (num-bigint) on random 128-bit numbers; hash-to-prime shape.

use num_bigint::BigUint;
use rand::{Rng, SeedableRng};
use wirespeed_vdf::prime::{hash_to_prime, is_probable_prime, miller_rabin_base2, strong_lucas};

/// Strong pseudoprimes to base 2 (OEIS A001262), with larger ones that are strong
/// pseudoprimes to every prime base up to 23, 37 and 41.
const SPSP2: &[u128] = &[
    2047,
    3277,
    4033,
    4681,
    8321,
    15841,
    29341,
    42799,
    49141,
    52633,
    65281,
    74665,
    80581,
    85489,
    88357,
    90751,
    3825123056546413051,
    318665857834031151167461,
    3317044064679887385961981,
];

/// Strong Lucas pseudoprimes with Selfridge's parameters (OEIS A217255).
const SLPSP: &[u128] = &[
    5459, 5777, 10877, 16109, 18971, 22499, 24569, 25199, 40309, 58519, 75077, 97439,
];

/// Carmichael numbers (OEIS A002997).
const CARMICHAEL: &[u128] = &[
    561, 1105, 1729, 2465, 2821, 6601, 8911, 10585, 15841, 29341, 41041, 46657, 52633, 62745,
    63973, 75361, 101101, 115921, 126217, 162401, 172081, 188461, 252601, 278545, 294409, 314821,
    334153, 340561, 399001, 410041, 449065, 488881, 512461,
];

const PRIMES: &[u128] = &[
    2,
    3,
    5,
    61,
    67,
    4093,
    4099,
    (1 << 31) - 1,
    (1 << 61) - 1,
    (1 << 89) - 1,
    (1 << 127) - 1,
    u64::MAX as u128 - 58, // 2^64 - 59
    (1u128 << 64) + 13,    // smallest prime above 2^64
    u128::MAX - 158,       // 2^128 - 159, largest prime below 2^128
];

#[test]
fn known_primes() {
    for &p in PRIMES {
        assert!(is_probable_prime(p), "{p}");
    }
}

#[test]
fn base2_pseudoprimes_are_caught_by_lucas() {
    for &n in SPSP2 {
        assert!(
            miller_rabin_base2(n),
            "{n} is a strong pseudoprime to base 2"
        );
        assert!(!strong_lucas(n), "{n}");
        assert!(!is_probable_prime(n), "{n}");
    }
}

#[test]
fn lucas_pseudoprimes_are_caught_by_base2() {
    for &n in SLPSP {
        assert!(strong_lucas(n), "{n} is a strong Lucas pseudoprime");
        assert!(!miller_rabin_base2(n), "{n}");
        assert!(!is_probable_prime(n), "{n}");
    }
}

#[test]
fn carmichael_and_other_composites() {
    for &n in CARMICHAEL {
        assert!(!is_probable_prime(n), "{n}");
    }
    let p64 = u64::MAX as u128 - 58;
    let composites = [
        0,
        1,
        4,
        9,
        25,
        4087, // 61 * 67
        u128::MAX,
        u128::MAX - 1,
        p64 * ((1 << 61) - 1),
        3 * ((1 << 89) - 1),
        (1 << 127) + 1,
        ((1u128 << 63) - 25) * ((1u128 << 63) - 25), // a square
    ];
    for n in composites {
        assert!(!is_probable_prime(n), "{n}");
    }
}

/// Trial division with num-bigint by every odd d with d^2 <= n.
fn trial_division(n: u32) -> bool {
    if n < 2 {
        return false;
    }
    if n.is_multiple_of(2) {
        return n == 2;
    }
    let big = BigUint::from(n);
    let zero = BigUint::from(0u8);
    let mut d = BigUint::from(3u8);
    while &d * &d <= big {
        if &big % &d == zero {
            return false;
        }
        d += 2u8;
    }
    true
}

#[test]
fn every_odd_number_below_100000_matches_trial_division() {
    let mut primes = 0;
    for n in (1..100_000u32).step_by(2) {
        let expect = trial_division(n);
        assert_eq!(is_probable_prime(n as u128), expect, "{n}");
        primes += expect as u32;
    }
    assert_eq!(primes, 9591); // pi(10^5) = 9592, less the even prime 2
    assert!(is_probable_prime(2) && !is_probable_prime(100_000));
}

/// Miller-Rabin with 24 random bases (error below 4^-24) via num-bigint modpow.
fn mr_oracle(n: u128, rng: &mut impl Rng) -> bool {
    if n < 4 {
        return n > 1;
    }
    if n.is_multiple_of(2) {
        return false;
    }
    let nb = BigUint::from(n);
    let one = BigUint::from(1u8);
    let nm1 = &nb - &one;
    let s = (n - 1).trailing_zeros();
    let d = BigUint::from((n - 1) >> s);
    'bases: for _ in 0..24 {
        let a = BigUint::from(rng.gen_range(2..n - 1));
        let mut x = a.modpow(&d, &nb);
        if x == one || x == nm1 {
            continue;
        }
        for _ in 1..s {
            x = &x * &x % &nb;
            if x == nm1 {
                continue 'bases;
            }
        }
        return false;
    }
    true
}

#[test]
fn random_numbers_match_many_base_miller_rabin() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut primes = 0;
    for i in 0..3000 {
        let bits = 40 + (i % 89);
        let n: u128 = (rng.gen::<u128>() >> (128 - bits)) | 1 | (1 << (bits - 1));
        let expect = mr_oracle(n, &mut rng);
        assert_eq!(is_probable_prime(n), expect, "{n}");
        primes += expect as u32;
    }
    assert!(primes > 30, "{primes}");
}

#[test]
fn hash_to_prime_is_a_deterministic_128_bit_prime() {
    let l = hash_to_prime(b"N", b"x", b"y", 10);
    assert_eq!(l, hash_to_prime(b"N", b"x", b"y", 10));
    assert_eq!(l >> 127, 1);
    assert!(is_probable_prime(l));
    assert_ne!(l, hash_to_prime(b"N", b"x", b"y", 11));
    assert_ne!(l, hash_to_prime(b"N", b"x", b"z", 10));
    // Length prefixes separate fields: moving a byte between fields changes l.
    assert_ne!(
        hash_to_prime(b"Nx", b"", b"y", 10),
        hash_to_prime(b"N", b"x", b"y", 10)
    );
}
