//! Baillie-PSW on 256-bit integers (`Uint<4>`): known primes (curve field primes and
//! group orders), composite Mersenne numbers (strong pseudoprimes to base 2), a 254-bit
//! Carmichael number, products of two 128-bit primes, and agreement with a many-base
//! Miller-Rabin (num-bigint) on ranges and on random numbers; the same answers at
//! every width.

use num_bigint::BigUint;
use rand::{Rng, SeedableRng};
use wirespeed_bigint::prime::{is_probable_prime, is_square, miller_rabin_base2, strong_lucas};
use wirespeed_bigint::Uint;

type U256 = Uint<4>;

fn from_big(b: &BigUint) -> U256 {
    U256::from_be_bytes(&b.to_bytes_be()).expect("fits in 256 bits")
}

fn hex(s: &str) -> U256 {
    U256::from_hex(s).expect("hex")
}

fn pow2(k: u32) -> BigUint {
    BigUint::from(1u8) << k
}

/// Miller-Rabin with `rounds` random bases via num-bigint modpow (error below
/// 4^-rounds), after trial division by the primes below 50.
fn mr_oracle(n: &BigUint, rounds: usize, rng: &mut impl Rng) -> bool {
    let one = BigUint::from(1u8);
    for p in [2u32, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47] {
        if *n == BigUint::from(p) {
            return true;
        }
        if (n % p) == BigUint::from(0u8) {
            return false;
        }
    }
    if *n < BigUint::from(2500u32) {
        return *n > one;
    }
    let nm1 = n - &one;
    let s = nm1.trailing_zeros().expect("n > 1");
    let d = &nm1 >> s;
    let bytes = n.to_bytes_be().len();
    'bases: for _ in 0..rounds {
        let mut buf = vec![0u8; bytes + 8];
        rng.fill(buf.as_mut_slice());
        let a = BigUint::from_bytes_be(&buf) % (n - 3u8) + 2u8;
        let mut x = a.modpow(&d, n);
        if x == one || x == nm1 {
            continue;
        }
        for _ in 1..s {
            x = &x * &x % n;
            if x == nm1 {
                continue 'bases;
            }
        }
        return false;
    }
    true
}

/// Primes of 255 and 256 bits: 2^255 - 19, secp256k1's p and n, P-256's p and n,
/// BLS12-381's r, the order of Ed25519's base point, 2^256 - 189 (the largest prime
/// below 2^256) and 2^255 + 95 (the smallest above 2^255).
const PRIMES_256: &[&str] = &[
    "7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffed",
    "fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f",
    "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141",
    "ffffffff00000001000000000000000000000000ffffffffffffffffffffffff",
    "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551",
    "73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001",
    "1000000000000000000000000000000014def9dea2f79cd65812631a5cf5d3ed",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff43",
    "800000000000000000000000000000000000000000000000000000000000005f",
];

#[test]
fn known_256_bit_primes() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    for h in PRIMES_256 {
        let n = hex(h);
        assert!(is_probable_prime(&n), "{h}");
        assert!(miller_rabin_base2(&n) && strong_lucas(&n), "{h}");
        let big = BigUint::parse_bytes(h.as_bytes(), 16).expect("hex");
        assert!(mr_oracle(&big, 32, &mut rng), "{h}");
    }
    // Mersenne primes that fit.
    for p in [61, 89, 107, 127] {
        assert!(is_probable_prime(&from_big(&(pow2(p) - 1u8))), "2^{p} - 1");
    }
}

/// Prime exponents p in 128..256 for which 2^p - 1 is composite. A composite 2^p - 1 with
/// p prime is a strong pseudoprime to base 2: 2 has order p there and p divides
/// (2^p - 2)/2, so 2^((n-1)/2) = 1.
const COMPOSITE_MERSENNE: &[u32] = &[
    131, 137, 139, 149, 151, 157, 163, 167, 173, 179, 181, 191, 193, 197, 199, 211, 223, 227, 229,
    233, 239, 241, 251,
];

#[test]
fn composite_mersenne_numbers_pass_base_2_and_fail_lucas() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(2);
    for &p in COMPOSITE_MERSENNE {
        let big = pow2(p) - 1u8;
        assert!(!mr_oracle(&big, 16, &mut rng), "2^{p} - 1 is composite");
        let n = from_big(&big);
        assert!(
            miller_rabin_base2(&n),
            "2^{p} - 1 is a base-2 strong pseudoprime"
        );
        assert!(!strong_lucas(&n), "2^{p} - 1");
        assert!(!is_probable_prime(&n), "2^{p} - 1");
    }
}

#[test]
fn carmichael_number_of_254_bits() {
    // Chernick's form (6k+1)(12k+1)(18k+1) with all three factors prime, k = 2^81 + 38169:
    // a Carmichael number (Korselt's criterion below), so it passes Fermat to base 2.
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    let k = pow2(81) + 0x9519u32;
    let f = [&k * 6u8 + 1u8, &k * 12u8 + 1u8, &k * 18u8 + 1u8];
    for x in &f {
        assert!(mr_oracle(x, 32, &mut rng));
    }
    let n = &f[0] * &f[1] * &f[2];
    assert_eq!(n.bits(), 254);
    let nm1 = &n - 1u8;
    for x in &f {
        assert_eq!(&nm1 % (x - 1u8), BigUint::from(0u8), "Korselt");
    }
    assert_eq!(
        BigUint::from(2u8).modpow(&nm1, &n),
        BigUint::from(1u8),
        "Fermat pseudoprime"
    );
    assert!(!is_probable_prime(&from_big(&n)));
    // Small Carmichael numbers (OEIS A002997) at this width.
    for c in [
        561u64, 1105, 1729, 2465, 2821, 6601, 8911, 41041, 62745, 512461,
    ] {
        assert!(!is_probable_prime(&U256::from_u64(c)), "{c}");
    }
}

#[test]
fn pseudoprime_lists_at_256_bits() {
    // Strong pseudoprimes to base 2 (OEIS A001262 and larger ones strong to many bases):
    // Lucas catches them.
    for v in [
        2047u128,
        3277,
        4033,
        4681,
        8321,
        3825123056546413051,
        318665857834031151167461,
        3317044064679887385961981,
    ] {
        let n = U256::from_be_bytes(&v.to_be_bytes()).expect("fits");
        assert!(miller_rabin_base2(&n), "{v}");
        assert!(!strong_lucas(&n) && !is_probable_prime(&n), "{v}");
    }
    // Strong Lucas pseudoprimes with Selfridge's parameters (OEIS A217255): base 2
    // catches them.
    for v in [
        5459u64, 5777, 10877, 16109, 18971, 22499, 24569, 25199, 40309, 58519,
    ] {
        let n = U256::from_u64(v);
        assert!(strong_lucas(&n), "{v}");
        assert!(!miller_rabin_base2(&n) && !is_probable_prime(&n), "{v}");
    }
}

#[test]
fn products_and_squares_of_128_bit_primes() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(4);
    // 2^128 - 159, - 173, - 233 and 2^127 - 1 are prime.
    let p = [
        pow2(128) - 159u8,
        pow2(128) - 173u8,
        pow2(128) - 233u8,
        pow2(127) - 1u8,
    ];
    for x in &p {
        assert!(mr_oracle(x, 32, &mut rng));
        assert!(is_probable_prime(&from_big(x)));
    }
    for i in 0..p.len() {
        for j in i..p.len() {
            let n = &p[i] * &p[j];
            if n.bits() > 256 {
                continue;
            }
            let u = from_big(&n);
            assert!(!is_probable_prime(&u), "p{i} p{j}");
            assert_eq!(is_square(&u), i == j, "p{i} p{j}");
        }
    }
    // Squares are refused by Lucas (no D has (D/n) = -1).
    let sq = from_big(&(&p[3] * &p[3]));
    assert!(!strong_lucas(&sq));
}

#[test]
fn ranges_above_2_255_and_below_2_256_match_miller_rabin() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let mut primes = 0;
    for i in (1..600u32).step_by(2) {
        for big in [pow2(255) + i, pow2(256) - i] {
            let expect = mr_oracle(&big, 20, &mut rng);
            assert_eq!(is_probable_prime(&from_big(&big)), expect, "{big:x}");
            primes += expect as u32;
        }
    }
    assert!(primes >= 4, "{primes}");
}

#[test]
fn random_256_bit_numbers_match_miller_rabin() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(6);
    let (mut primes, mut tested) = (0, 0);
    while primes < 40 {
        let mut l = [0u64; 4];
        for x in l.iter_mut() {
            *x = rng.gen();
        }
        l[3] |= 1 << 63;
        l[0] |= 1;
        let n = Uint(l);
        let big = BigUint::from_bytes_be(&n.to_be_bytes());
        let expect = mr_oracle(&big, 20, &mut rng);
        assert_eq!(is_probable_prime(&n), expect, "{n:?}");
        primes += expect as u32;
        tested += 1;
    }
    assert!(tested > 400, "{tested}");
}

#[test]
fn every_width_agrees() {
    // The same verdicts for u128 values at 2, 4 and 8 limbs, each test separately.
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for i in 0..4000u32 {
        let bits = 20 + (i % 108);
        let v: u128 = (rng.gen::<u128>() >> (128 - bits)) | 1;
        let a = Uint::<2>([v as u64, (v >> 64) as u64]);
        let (b, c) = (a.resize::<4>(), a.resize::<8>());
        let p = is_probable_prime(&a);
        assert_eq!(p, is_probable_prime(&b), "{v}");
        assert_eq!(p, is_probable_prime(&c), "{v}");
        assert_eq!(miller_rabin_base2(&a), miller_rabin_base2(&b), "{v}");
        assert_eq!(strong_lucas(&a), strong_lucas(&c), "{v}");
    }
}
