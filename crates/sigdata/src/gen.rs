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
            if rng.gen_bool(bad_frac) {
                corrupt(&mut r, &mut rng);
            }
            r
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
