//! Deterministic test data: the same (n, msg_len, seed, bad_frac) always gives the same
//! records. Signing uses `wirespeed_ed25519::SigningKey` (RFC 8032, deterministic: a
//! key is the next 32 bytes of the seeded generator, as ed25519-dalek's `generate` draws
//! it, so the records are the same as those the generator wrote when it signed with
//! ed25519-dalek).

use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use wirespeed_ed25519::SigningKey;

use crate::Record;

/// How many distinct signing keys the generator cycles through (as in a real stream,
/// where many transactions share few keys).
pub const KEYS: usize = 64;

/// Generates `n` records with `msg_len`-byte messages. Each record is corrupted (one bit
/// flipped in the message, R, S or the key) with probability `bad_frac` (0..=1), drawn
/// from the seeded generator, so about `n * bad_frac` of them are, not exactly.
pub fn generate(n: usize, msg_len: usize, seed: u64, bad_frac: f64) -> Vec<Record> {
    generate_marked(n, msg_len, seed, bad_frac)
        .into_iter()
        .map(|(r, _)| r)
        .collect()
}

/// The records of [`generate`] (the same arguments give the same records), each with
/// whether the generator corrupted it: a known answer that does not come from any
/// verifier (a flipped bit in the message, R, S or the key breaks the equation or an
/// encoding rule, so a corrupted record fails in every rule mode).
pub fn generate_marked(n: usize, msg_len: usize, seed: u64, bad_frac: f64) -> Vec<(Record, bool)> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let keys: Vec<SigningKey> = (0..KEYS.min(n.max(1)))
        .map(|_| {
            let mut seed = [0u8; 32];
            rng.fill_bytes(&mut seed);
            SigningKey::from_seed(&seed)
        })
        .collect();
    let bad_frac = if bad_frac.is_finite() {
        bad_frac.clamp(0.0, 1.0)
    } else {
        0.0
    };
    (0..n)
        .map(|i| {
            let sk = &keys[i % keys.len()];
            let mut msg = vec![0u8; msg_len];
            rng.fill_bytes(&mut msg);
            let sig = sk.sign(&msg).to_vec();
            let pk = sk.public_key().to_vec();
            let mut r = Record { msg, sig, pk };
            let corrupted = rng.gen_bool(bad_frac);
            if corrupted {
                corrupt(&mut r, &mut rng);
            }
            (r, corrupted)
        })
        .collect()
}

fn corrupt(r: &mut Record, rng: &mut ChaCha20Rng) {
    let bit = 1u8 << rng.gen_range(0..8);
    match rng.gen_range(0..4) {
        0 if !r.msg.is_empty() => {
            let i = rng.gen_range(0..r.msg.len());
            r.msg[i] ^= bit;
        }
        1 => r.sig[rng.gen_range(0..32)] ^= bit,
        2 => r.sig[rng.gen_range(32..64)] ^= bit,
        _ => r.pk[rng.gen_range(0..32)] ^= bit,
    }
}

/// Which key signs each record of [`generate_keyed`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Keys {
    /// A fresh key for every record (no key repeats: a key cache never hits).
    PerRecord,
    /// `distinct` keys drawn by a Zipf law: the key of rank r (1-based) signs with
    /// probability proportional to 1 / r^`exponent`, as a few accounts (fee payers,
    /// vote accounts) sign much of a real stream.
    Zipf {
        /// Keys to draw from (at least 1).
        distinct: usize,
        /// The law's exponent (1.0 is the classic Zipf law).
        exponent: f64,
    },
}

/// `n` valid records with `msg_len`-byte messages, each signed by the key `keys` picks,
/// from the seeded generator (the same arguments give the same records).
pub fn generate_keyed(n: usize, msg_len: usize, seed: u64, keys: Keys) -> Vec<Record> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let fresh = |rng: &mut ChaCha20Rng| {
        let mut s = [0u8; 32];
        rng.fill_bytes(&mut s);
        SigningKey::from_seed(&s)
    };
    let (pool, cdf): (Vec<SigningKey>, Vec<f64>) = match keys {
        Keys::PerRecord => (vec![], vec![]),
        Keys::Zipf { distinct, exponent } => {
            let distinct = distinct.max(1);
            let pool = (0..distinct).map(|_| fresh(&mut rng)).collect();
            let mut acc = 0.0;
            let mut cdf: Vec<f64> = (1..=distinct)
                .map(|r| {
                    acc += 1.0 / (r as f64).powf(exponent);
                    acc
                })
                .collect();
            cdf.iter_mut().for_each(|c| *c /= acc);
            (pool, cdf)
        }
    };
    (0..n)
        .map(|_| {
            let one;
            let sk = if pool.is_empty() {
                one = fresh(&mut rng);
                &one
            } else {
                let u: f64 = rng.gen();
                &pool[cdf.partition_point(|&c| c < u).min(pool.len() - 1)]
            };
            let mut msg = vec![0u8; msg_len];
            rng.fill_bytes(&mut msg);
            Record {
                sig: sk.sign(&msg).to_vec(),
                pk: sk.public_key().to_vec(),
                msg,
            }
        })
        .collect()
}

#[cfg(test)]
mod keyed_tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn per_record_keys_never_repeat_and_zipf_keys_are_skewed() {
        let cold = generate_keyed(300, 16, 1, Keys::PerRecord);
        let distinct: std::collections::HashSet<_> = cold.iter().map(|r| r.pk.clone()).collect();
        assert_eq!(distinct.len(), 300);
        let hot = generate_keyed(
            3000,
            16,
            1,
            Keys::Zipf {
                distinct: 100,
                exponent: 1.0,
            },
        );
        let mut counts: HashMap<Vec<u8>, usize> = HashMap::new();
        for r in &hot {
            *counts.entry(r.pk.clone()).or_default() += 1;
        }
        let mut c: Vec<usize> = counts.into_values().collect();
        c.sort_unstable_by(|a, b| b.cmp(a));
        // Rank 1 of 100 under Zipf(1) has probability 1/H_100 = 0.19: about 580 of 3000.
        assert!((450..720).contains(&c[0]), "{c:?}");
        assert!(c.len() <= 100);
        for r in hot.iter().take(50) {
            assert!(wirespeed_ed25519::verify(
                &r.msg,
                &r.sig,
                &r.pk,
                wirespeed_ed25519::Mode::Strict
            )
            .is_ok());
        }
    }
}
