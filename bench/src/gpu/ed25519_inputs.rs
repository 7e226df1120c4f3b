//! The inputs of the Ed25519 section of `wirespeed bench gpu`: random records of every
//! message length around the SHA-512 block boundaries (a share corrupted), honest
//! records, mixed batches, and the edge cases of the rules (small-order A and R in every
//! encoding, non-canonical encodings, S >= L, wrong lengths, points off the curve,
//! mixed-order keys), all deterministic in their seeds.

use rand::{Rng, RngCore};
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;
use wirespeed_ed25519::Item;
use wirespeed_sigdata::edge::{
    add, add_le, all_encodings, base_encoding, decode, encode, mul_base,
    noncanonical_ordinary_encodings, random_scalar, sign_raw, small_order_encodings, torsion,
    Scalar, L_BYTES,
};
use wirespeed_sigdata::Record;

/// Message lengths of the random records, one per block of 4096: around the SHA-512
/// block boundaries of R || A || M (M of 47/48 and 111/112 bytes), up to 4 KiB.
pub(super) const MSG_LENS: [usize; 16] = [
    0, 1, 31, 47, 48, 63, 64, 111, 112, 127, 128, 200, 255, 256, 1000, 4096,
];

/// Records generated per block (one message length, one seed).
pub(super) const BLOCK: usize = 4096;

/// Blocks of `BLOCK` records made in parallel, block `b` by `make(b, seed + b)`.
pub(super) fn blocks(
    n: usize,
    seed: u64,
    make: impl Fn(usize, usize, u64) -> Vec<Record> + Sync,
) -> Vec<Record> {
    let parts: Vec<Vec<Record>> = (0..n.div_ceil(BLOCK))
        .into_par_iter()
        .map(|b| make(b, BLOCK.min(n - b * BLOCK), seed.wrapping_add(b as u64)))
        .collect();
    parts.concat()
}

/// `n` records of every message length in [`MSG_LENS`], 30% corrupted (one bit flipped
/// in the message, R, S or the key).
pub(super) fn random_records(n: usize, seed: u64) -> Vec<Record> {
    blocks(n, seed, |b, k, s| {
        wirespeed_sigdata::gen::generate(k, MSG_LENS[b % MSG_LENS.len()], s, 0.3)
    })
}

/// `n` honest records with `msg_len`-byte messages.
pub(super) fn honest_records(n: usize, msg_len: usize, seed: u64) -> Vec<Record> {
    blocks(n, seed, |_, k, s| {
        wirespeed_sigdata::gen::generate(k, msg_len, s, 0.0)
    })
}

/// `n` items cycling through the records.
pub(super) fn tile(recs: &[Record], n: usize) -> Vec<Item<'_>> {
    (0..n).map(|i| recs[i % recs.len()].item()).collect()
}

/// A batch of `n`: every fourth item (from the second on) an edge case, taken in turn,
/// the others random records from `off` on. Both lists are used cyclically.
pub(super) fn mixed<'a>(
    edges: &'a [Record],
    pool: &'a [Record],
    n: usize,
    off: usize,
) -> Vec<Item<'a>> {
    (0..n)
        .map(|i| {
            if i % 4 == 1 {
                edges[(off + i / 4) % edges.len()].item()
            } else {
                pool[(off + i) % pool.len()].item()
            }
        })
        .collect()
}

pub(super) fn rec(msg: &[u8], sig: &[u8], pk: &[u8]) -> Record {
    Record {
        msg: msg.to_vec(),
        sig: sig.to_vec(),
        pk: pk.to_vec(),
    }
}

/// 32 bytes that are no point's encoding (no x for that y).
pub(super) fn off_curve(rng: &mut ChaCha20Rng) -> [u8; 32] {
    loop {
        let b: [u8; 32] = rng.gen();
        if decode(&b).is_none() {
            return b;
        }
    }
}

/// The edge cases of the rules (several hundred records), deterministic in `rng`.
pub(super) fn edge_cases(rng: &mut ChaCha20Rng) -> Vec<Record> {
    let mut out = Vec::new();
    let msg = |rng: &mut ChaCha20Rng| {
        let mut m = vec![0u8; rng.gen_range(0..100)];
        rng.fill_bytes(&mut m);
        m
    };
    let small: Vec<[u8; 32]> = small_order_encodings().iter().map(|e| e.bytes).collect();
    for e in &small {
        // Small-order A: R = [r]B and S = r satisfy the equation (zip215 accepts).
        for _ in 0..2 {
            let m = msg(rng);
            let nonce = random_scalar(rng);
            let sig = sign_raw(&base_encoding(&nonce), e, &nonce, &Scalar::ZERO, &m);
            out.push(rec(&m, &sig, e));
            let mut bad = sig;
            bad[32] ^= 1;
            out.push(rec(&m, &bad, e));
        }
        // Small-order R with an honest key: S = k a.
        for _ in 0..2 {
            let a = random_scalar(rng);
            let m = msg(rng);
            let sig = sign_raw(e, &base_encoding(&a), &Scalar::ZERO, &a, &m);
            out.push(rec(&m, &sig, &base_encoding(&a)));
        }
        // Both of small order, S = 0.
        for f in &small {
            let mut sig = f.to_vec();
            sig.extend_from_slice(&[0u8; 32]);
            out.push(rec(b"pair", &sig, e));
        }
    }
    // y >= p for points of large order, as A (R = [r]B, S = r) and as R (honest key).
    for enc in noncanonical_ordinary_encodings() {
        let m = msg(rng);
        let nonce = random_scalar(rng);
        let sig = sign_raw(&base_encoding(&nonce), &enc, &nonce, &Scalar::ZERO, &m);
        out.push(rec(&m, &sig, &enc));
        let a = random_scalar(rng);
        let pk = base_encoding(&a);
        out.push(rec(&m, &sign_raw(&enc, &pk, &Scalar::ZERO, &a, &m), &pk));
    }
    // Mixed-order keys A = [a]B + T signed honestly with a, in every encoding: the
    // cofactored modes accept, the cofactorless ones only when [k]T = 0. And mixed-order
    // R = [r]B + T with an honest key.
    let t = torsion();
    for ti in 1..8 {
        for _ in 0..4 {
            let a = random_scalar(rng);
            let nonce = random_scalar(rng);
            let m = msg(rng);
            let big_a = add(&mul_base(&a), &t[ti]);
            for enc in all_encodings(&big_a).iter().map(|e| e.bytes) {
                let sig = sign_raw(&base_encoding(&nonce), &enc, &nonce, &a, &m);
                out.push(rec(&m, &sig, &enc));
            }
            let b = random_scalar(rng);
            let pk = base_encoding(&b);
            let r = encode(&add(&mul_base(&nonce), &t[ti]));
            out.push(rec(&m, &sign_raw(&r, &pk, &nonce, &b, &m), &pk));
        }
    }
    // Honest signatures over messages of interesting lengths, then variants of them.
    let mut honest = Vec::new();
    for (i, len) in [0usize, 1, 47, 48, 111, 112, 127, 128, 239, 240, 1024, 4096]
        .into_iter()
        .enumerate()
    {
        honest.extend(wirespeed_sigdata::gen::generate(
            2,
            len,
            rng.gen::<u64>() ^ i as u64,
            0.0,
        ));
    }
    for (i, r) in honest.iter().enumerate() {
        out.push(r.clone());
        let s: [u8; 32] = r.sig[32..].try_into().expect("64-byte signature");
        // S >= L in several ways, and S = L - 1 (in range, wrong).
        let mut lm1 = L_BYTES;
        lm1[0] -= 1;
        let mut top = s;
        top[31] |= 0xe0;
        for v in [add_le(&s, &L_BYTES), L_BYTES, [0xff; 32], lm1, top] {
            let mut sig = r.sig.clone();
            sig[32..].copy_from_slice(&v);
            out.push(rec(&r.msg, &sig, &r.pk));
        }
        // The sign bit of R or of A flipped (another point, or none).
        let mut sig = r.sig.clone();
        sig[31] ^= 0x80;
        out.push(rec(&r.msg, &sig, &r.pk));
        let mut pk = r.pk.clone();
        pk[31] ^= 0x80;
        out.push(rec(&r.msg, &r.sig, &pk));
        // A or R off the curve.
        out.push(rec(&r.msg, &r.sig, &off_curve(rng)));
        let mut sig = r.sig.clone();
        sig[..32].copy_from_slice(&off_curve(rng));
        out.push(rec(&r.msg, &sig, &r.pk));
        // Wrong lengths (answered on the host) on every other record.
        if i % 2 == 0 {
            let (sig, pk) = (&r.sig, &r.pk);
            out.push(rec(&r.msg, &sig[..63], pk));
            out.push(rec(&r.msg, &[&sig[..], &[0u8]].concat(), pk));
            out.push(rec(&r.msg, &[], pk));
            out.push(rec(&r.msg, sig, &pk[..31]));
            out.push(rec(&r.msg, sig, &[&pk[..], &[0u8]].concat()));
            out.push(rec(&r.msg, sig, &[]));
        }
    }
    // The identity as both A and R with S = 0 over an empty message, and an all-zero
    // record.
    let mut id = [0u8; 32];
    id[0] = 1;
    out.push(rec(&[], &[&id[..], &[0u8; 32]].concat(), &id));
    out.push(rec(&[], &[0u8; 64], &[0u8; 32]));
    out
}

// ---------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------
