//! RSASSA-PSS (RFC 8017, sections 8.1 and 9.1) with MGF1 over the same hash and a salt
//! as long as the digest (the common choice, and OpenSSL's default for signing with
//! `RSA_PSS_SALTLEN_DIGEST`). Verification accepts any salt length (the RFC's
//! "auto-detect" as OpenSSL does by default), checking every byte of the encoding.

use rand::RngCore;

use crate::{Hash, PrivateKey, PublicKey, RsaError};

/// MGF1 mask of `len` bytes from `seed`.
fn mgf1(h: Hash, seed: &[u8], len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + h.len());
    let mut counter = 0u32;
    while out.len() < len {
        out.extend_from_slice(&h.digest(&[seed, &counter.to_be_bytes()]));
        counter += 1;
    }
    out.truncate(len);
    out
}

/// EMSA-PSS encoding with the given salt, for a modulus of `mod_bits` bits.
pub fn encode(h: Hash, msg: &[u8], salt: &[u8], mod_bits: usize) -> Result<Vec<u8>, RsaError> {
    let em_bits = mod_bits - 1;
    let em_len = em_bits.div_ceil(8);
    let h_len = h.len();
    if em_len < h_len + salt.len() + 2 {
        return Err(RsaError::MessageTooLong);
    }
    let m_hash = h.digest(&[msg]);
    let hh = h.digest(&[&[0u8; 8], &m_hash, salt]);
    let db_len = em_len - h_len - 1;
    let mut db = vec![0u8; db_len];
    db[db_len - salt.len() - 1] = 1;
    db[db_len - salt.len()..].copy_from_slice(salt);
    for (d, m) in db.iter_mut().zip(mgf1(h, &hh, db_len)) {
        *d ^= m;
    }
    db[0] &= 0xff >> (8 * em_len - em_bits);
    let mut em = db;
    em.extend_from_slice(&hh);
    em.push(0xbc);
    Ok(em)
}

/// Signs `msg` with a random salt of the digest's length.
pub fn sign(
    key: &PrivateKey,
    h: Hash,
    msg: &[u8],
    rng: &mut impl RngCore,
) -> Result<Vec<u8>, RsaError> {
    let mut salt = vec![0u8; h.len()];
    rng.fill_bytes(&mut salt);
    let em = encode(h, msg, &salt, key.public().bits())?;
    key.raw(&em)
}

/// Verifies `sig` on `msg` (any salt length).
pub fn verify(key: &PublicKey, h: Hash, msg: &[u8], sig: &[u8]) -> Result<(), RsaError> {
    verify_salt_len(key, h, msg, sig, None)
}

/// Verifies `sig` on `msg`, requiring the salt to have `salt_len` bytes when given.
pub fn verify_salt_len(
    key: &PublicKey,
    h: Hash,
    msg: &[u8],
    sig: &[u8],
    salt_len: Option<usize>,
) -> Result<(), RsaError> {
    let bad = RsaError::BadSignature;
    if sig.len() != key.size() {
        return Err(bad);
    }
    let m = key.vartime_raw(sig).map_err(|_| RsaError::BadSignature)?;
    let em_bits = key.bits() - 1;
    let em_len = em_bits.div_ceil(8);
    // The integer has k bytes; EM is its last em_len bytes, the rest must be zero.
    let (lead, em) = m.split_at(m.len() - em_len);
    let h_len = h.len();
    if lead.iter().any(|&b| b != 0) || em_len < h_len + 2 || em[em_len - 1] != 0xbc {
        return Err(bad);
    }
    let (masked, rest) = em.split_at(em_len - h_len - 1);
    let hh = &rest[..h_len];
    // The leftmost 8 em_len - em_bits bits of maskedDB must be zero.
    let z = 8 * em_len - em_bits;
    if z > 0 && masked[0] >> (8 - z) != 0 {
        return Err(bad);
    }
    let mut db: Vec<u8> = masked
        .iter()
        .zip(mgf1(h, hh, masked.len()))
        .map(|(a, b)| a ^ b)
        .collect();
    db[0] &= 0xff >> (8 * em_len - em_bits);
    let Some(one) = db.iter().position(|&b| b != 0) else {
        return Err(bad);
    };
    if db[one] != 1 {
        return Err(bad);
    }
    let salt = &db[one + 1..];
    if salt_len.is_some_and(|l| l != salt.len()) {
        return Err(bad);
    }
    let m_hash = h.digest(&[msg]);
    if h.digest(&[&[0u8; 8], &m_hash, salt]) == hh {
        Ok(())
    } else {
        Err(bad)
    }
}
