//! Deterministic Solana-format test traffic: legacy transactions with one or two signers
//! (a system transfer, sometimes followed by a memo), signed with
//! `wirespeed_ed25519::SigningKey` (RFC 8032; each key is the next 32 bytes of the
//! seeded generator, as ed25519-dalek's `generate` drew it, so the traffic is the same
//! as before) and encoded with [`crate::solana`]'s own encoder.
//!
//! Each item says what a correct verifier must do with it:
//! - [`Expect::Valid`]: every signature verifies; accept it (once).
//! - [`Expect::BadSignature`]: one bit was flipped after signing, either in one of the
//!   signatures or in the message's recent blockhash; the transaction still parses but a
//!   signature fails; reject it.
//! - [`Expect::Duplicate`]: a byte-for-byte copy of an earlier `Valid` item; drop it (its
//!   id was already accepted).
//!
//! The same `(n, dup_frac, bad_frac, seed)` always gives the same items.

use rand::seq::SliceRandom;
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use wirespeed_ed25519::SigningKey;

use crate::solana::{
    encode_legacy_message, encode_transaction, CompiledInstruction, MessageHeader, HASH_LEN,
    PUBKEY_LEN, SIGNATURE_LEN,
};

/// How many distinct signing keys the generator draws from.
pub const KEYS: usize = 64;

/// The system program's id (all zeros).
pub const SYSTEM_PROGRAM: [u8; PUBKEY_LEN] = [0; PUBKEY_LEN];

/// A stand-in memo program id (any fixed key serves: nothing here executes programs).
pub const MEMO_PROGRAM: [u8; PUBKEY_LEN] = [0x05; PUBKEY_LEN];

/// What a correct verifier does with a generated transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Expect {
    /// All signatures verify: accept.
    Valid,
    /// A signature fails: reject.
    BadSignature,
    /// An exact copy of an earlier valid transaction: drop as a duplicate.
    Duplicate,
}

/// One generated transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generated {
    /// The wire bytes.
    pub bytes: Vec<u8>,
    /// What a verifier must do with it.
    pub expect: Expect,
    /// Its transaction id (first signature), as it appears in `bytes`.
    pub txn_id: [u8; SIGNATURE_LEN],
}

/// How many of `n` items are duplicates and how many corrupted: `round(n * frac)` each,
/// fractions clamped to `0..=1` (non-finite counts as 0), corrupted first, and at least
/// one valid item kept whenever there are duplicates (they copy valid items).
pub fn counts(n: usize, dup_frac: f64, bad_frac: f64) -> (usize, usize) {
    let share = |f: f64| {
        let f = if f.is_finite() {
            f.clamp(0.0, 1.0)
        } else {
            0.0
        };
        ((n as f64) * f).round() as usize
    };
    let bad = share(bad_frac).min(n);
    let mut dup = share(dup_frac).min(n - bad);
    if dup > 0 && dup == n - bad {
        dup -= 1;
    }
    (dup, bad)
}

/// Generates `n` transactions: `counts(n, dup_frac, bad_frac)` duplicates and corrupted
/// ones at random positions, the rest valid. No duplicate comes before the first valid
/// item.
pub fn generate(n: usize, dup_frac: f64, bad_frac: f64, seed: u64) -> Vec<Generated> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let keys: Vec<SigningKey> = (0..KEYS)
        .map(|_| {
            let mut seed = [0u8; 32];
            rng.fill_bytes(&mut seed);
            SigningKey::from_seed(&seed)
        })
        .collect();

    let (dup, bad) = counts(n, dup_frac, bad_frac);
    let mut kinds = vec![Expect::Valid; n - dup - bad];
    kinds.extend(std::iter::repeat_n(Expect::BadSignature, bad));
    kinds.extend(std::iter::repeat_n(Expect::Duplicate, dup));
    kinds.shuffle(&mut rng);
    // Move the first valid item ahead of every duplicate.
    if let (Some(d), Some(v)) = (
        kinds.iter().position(|k| *k == Expect::Duplicate),
        kinds.iter().position(|k| *k == Expect::Valid),
    ) {
        if d < v {
            kinds.swap(d, v);
        }
    }

    let mut out: Vec<Generated> = Vec::with_capacity(n);
    let mut valid: Vec<usize> = Vec::new();
    for kind in kinds {
        let item = match kind {
            Expect::Duplicate => {
                // `valid` is non-empty: the first valid item precedes every duplicate.
                let src = &out[valid[rng.gen_range(0..valid.len())]];
                Generated {
                    bytes: src.bytes.clone(),
                    expect: Expect::Duplicate,
                    txn_id: src.txn_id,
                }
            }
            Expect::Valid => {
                valid.push(out.len());
                signed_transfer(&keys, &mut rng)
            }
            Expect::BadSignature => {
                let mut g = signed_transfer(&keys, &mut rng);
                corrupt(&mut g, &mut rng);
                g
            }
        };
        out.push(item);
    }
    out
}

/// Offset of the recent blockhash inside a message with `nkeys` static keys (< 128).
fn blockhash_offset(nkeys: usize) -> usize {
    3 + 1 + nkeys * PUBKEY_LEN
}

/// A fresh valid transaction.
fn signed_transfer(keys: &[SigningKey], rng: &mut ChaCha20Rng) -> Generated {
    let two = rng.gen_bool(0.5);
    let payer = rng.gen_range(0..keys.len());
    let mut signers = vec![&keys[payer]];
    let mut readonly_signed = 0u8;
    if two {
        // A second, distinct signer, read-only half the time.
        let other = (payer + rng.gen_range(1..keys.len())) % keys.len();
        signers.push(&keys[other]);
        readonly_signed = u8::from(rng.gen_bool(0.5));
    }
    let mut recipient = [0u8; PUBKEY_LEN];
    rng.fill_bytes(&mut recipient);
    let mut blockhash = [0u8; HASH_LEN];
    rng.fill_bytes(&mut blockhash);

    // Keys: signers, then the writable recipient, then the read-only programs.
    let mut account_keys: Vec<[u8; PUBKEY_LEN]> = signers.iter().map(|k| k.public_key()).collect();
    let recipient_ix = account_keys.len() as u8;
    account_keys.push(recipient);
    let system_ix = account_keys.len() as u8;
    account_keys.push(SYSTEM_PROGRAM);
    let memo = rng.gen_bool(0.5);
    let memo_ix = account_keys.len() as u8;
    if memo {
        account_keys.push(MEMO_PROGRAM);
    }

    // System program Transfer: u32 LE instruction tag 2, then u64 LE lamports.
    let mut transfer = [0u8; 12];
    transfer[..4].copy_from_slice(&2u32.to_le_bytes());
    transfer[4..].copy_from_slice(&rng.gen_range(1u64..1_000_000_000).to_le_bytes());
    let mut memo_text = vec![0u8; rng.gen_range(0..=64)];
    for b in &mut memo_text {
        *b = rng.gen_range(b' '..=b'~');
    }
    let transfer_accounts = [0, recipient_ix];
    let signer_accounts: Vec<u8> = (0..signers.len() as u8).collect();
    let mut instructions = vec![CompiledInstruction {
        program_id_index: system_ix,
        accounts: &transfer_accounts,
        data: &transfer,
    }];
    if memo {
        instructions.push(CompiledInstruction {
            program_id_index: memo_ix,
            accounts: &signer_accounts,
            data: &memo_text,
        });
    }
    let header = MessageHeader {
        num_required_signatures: signers.len() as u8,
        num_readonly_signed: readonly_signed,
        num_readonly_unsigned: 1 + u8::from(memo),
    };

    let mut message = Vec::with_capacity(256);
    // Counts are at most 5 keys and 2 instructions: the encoding cannot overflow.
    let _ = encode_legacy_message(
        header,
        &account_keys,
        &blockhash,
        &instructions,
        &mut message,
    );
    let signatures: Vec<[u8; SIGNATURE_LEN]> = signers.iter().map(|k| k.sign(&message)).collect();
    let bytes = encode_transaction(&signatures, &message).unwrap_or_default();
    Generated {
        bytes,
        expect: Expect::Valid,
        txn_id: signatures[0],
    }
}

/// Flips one bit in a signature or in the recent blockhash; updates the id if the first
/// signature changed.
fn corrupt(g: &mut Generated, rng: &mut ChaCha20Rng) {
    // The layout is our own (1 to 2 signatures, under 128 keys): single-byte counts.
    let nsig = usize::from(g.bytes.first().copied().unwrap_or(1)).max(1);
    let bit = 1u8 << rng.gen_range(0..8);
    let i = if rng.gen_bool(0.5) {
        1 + rng.gen_range(0..nsig * SIGNATURE_LEN)
    } else {
        let msg = 1 + nsig * SIGNATURE_LEN;
        let nkeys = usize::from(g.bytes.get(msg + 3).copied().unwrap_or(0));
        msg + blockhash_offset(nkeys) + rng.gen_range(0..HASH_LEN)
    };
    if let Some(b) = g.bytes.get_mut(i) {
        *b ^= bit;
    }
    if let Some(id) = g.bytes.get(1..1 + SIGNATURE_LEN) {
        g.txn_id.copy_from_slice(id);
    }
    g.expect = Expect::BadSignature;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_round_and_clamp() {
        assert_eq!(counts(0, 0.5, 0.5), (0, 0));
        assert_eq!(counts(10, 0.1, 0.2), (1, 2));
        assert_eq!(counts(10, 1.0, 0.0), (9, 0));
        assert_eq!(counts(10, 0.0, 1.0), (0, 10));
        assert_eq!(counts(10, 0.5, 0.6), (3, 6));
        assert_eq!(counts(10, f64::NAN, -1.0), (0, 0));
        assert_eq!(counts(1, 1.0, 0.0), (0, 0));
    }
}
