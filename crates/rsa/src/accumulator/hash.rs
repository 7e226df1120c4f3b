//! Hash to prime ([`hash_to_prime`]: SHA-256 candidates, a sieve by the odd primes below
//! 256, then Baillie-PSW) and the default base ([`derive_base`]: a hashed square that
//! nobody chose). Deterministic and variable-time: the inputs are public.

use std::sync::OnceLock;

use num_bigint::BigUint;
use sha2::{Digest, Sha256};
use wirespeed_bigint::{prime, CpuFeatures};

#[cfg(doc)]
use super::PRIME_BITS;
use super::U256;

/// Domain-separation tag of [`hash_to_prime`].
const PRIME_TAG: &[u8] = b"wirespeed-rsa/v1/accumulator/hash-to-prime";
/// Domain-separation tag of [`derive_base`].
const BASE_TAG: &[u8] = b"wirespeed-rsa/v1/accumulator/base";

/// Odd primes below 256 grouped so that each group's product fits in a u64: one
/// remainder per group sieves a candidate before the probable-prime test.
fn sieve_groups() -> &'static [(u64, Vec<u64>)] {
    static GROUPS: OnceLock<Vec<(u64, Vec<u64>)>> = OnceLock::new();
    GROUPS.get_or_init(|| {
        let primes = (3u64..256).filter(|&p| (2..p).take_while(|d| d * d <= p).all(|d| p % d != 0));
        let mut groups: Vec<(u64, Vec<u64>)> = vec![];
        for p in primes {
            match groups.last_mut() {
                Some((prod, ps)) if prod.checked_mul(p).is_some() => {
                    *prod *= p;
                    ps.push(p);
                }
                _ => groups.push((p, vec![p])),
            }
        }
        groups
    })
}

/// True when no odd prime below 256 divides c (c above 256).
fn passes_sieve(c: &U256) -> bool {
    sieve_groups().iter().all(|(prod, ps)| {
        let r = c.rem_u64(*prod);
        ps.iter().all(|p| !r.is_multiple_of(*p))
    })
}

/// The prime that represents `element`: the first candidate that passes Baillie-PSW
/// ([`wirespeed_bigint::prime::is_probable_prime`]), candidate = SHA-256(tag, element,
/// counter) read big-endian with the top bit and the low bit set, counter = 0, 1, ...
/// Every field is length-prefixed (8-byte big-endian length); the tag is
/// `wirespeed-rsa/v1/accumulator/hash-to-prime`, the counter 8 bytes big-endian. The
/// result has exactly [`PRIME_BITS`] bits; about 89 candidates are drawn on average (most
/// leave at a sieve by the primes below 256). Deterministic; variable time (public data).
///
/// Convenience wrapper: [`hash_to_prime_with`] this process's detected features (an
/// accumulator uses its group's, [`super::RsaGroup::features`]).
pub fn hash_to_prime(element: &[u8]) -> U256 {
    hash_to_prime_with(element, CpuFeatures::get())
}

/// [`hash_to_prime`] with the primality test's context built for a CPU with features `f`
/// (the prime does not depend on them).
pub fn hash_to_prime_with(element: &[u8], f: &CpuFeatures) -> U256 {
    prime::hashed_candidates(&[PRIME_TAG, element])
        .map(|digest| {
            let mut c = U256::from_be_bytes(&digest).unwrap_or(U256::ZERO);
            c.0[3] |= 1 << 63;
            c.0[0] |= 1;
            c
        })
        .find(|c| passes_sieve(c) && prime::is_probable_prime_with(c, f))
        .unwrap_or_else(|| unreachable!("the candidate stream is endless"))
}

/// The default base for modulus n: h^2 mod n, with h = SHA-256 blocks of (tag, n, block
/// counter) over n's byte length plus 16 bytes, reduced mod n (every field length-prefixed,
/// the tag `wirespeed-rsa/v1/accumulator/base`). A quadratic residue that nobody chose;
/// a draw that is not a unit, or whose square is 0, 1 or n - 1, moves on to the next
/// attempt counter (never seen in practice).
pub fn derive_base(n: &BigUint) -> BigUint {
    let nb = n.to_bytes_be();
    let want = nb.len() + 16;
    let one = BigUint::from(1u8);
    for attempt in 0u64.. {
        let mut bytes = Vec::with_capacity(want + 32);
        let mut block = 0u64;
        while bytes.len() < want {
            let mut h = Sha256::new();
            for field in [BASE_TAG, &nb, &attempt.to_be_bytes(), &block.to_be_bytes()] {
                h.update((field.len() as u64).to_be_bytes());
                h.update(field);
            }
            bytes.extend_from_slice(&h.finalize());
            block += 1;
        }
        bytes.truncate(want);
        let h = BigUint::from_bytes_be(&bytes) % n;
        let g = &h * &h % n;
        if g > one && g != n - &one && h.modinv(n).is_some() {
            return g;
        }
    }
    unreachable!("the attempt counter does not run out")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sieve_groups_cover_the_odd_primes_below_256() {
        let all: Vec<u64> = sieve_groups()
            .iter()
            .flat_map(|(_, ps)| ps.clone())
            .collect();
        assert_eq!(all.len(), 53); // pi(256) = 54, less 2
        for (prod, ps) in sieve_groups() {
            assert_eq!(ps.iter().product::<u64>(), *prod);
        }
    }
}
