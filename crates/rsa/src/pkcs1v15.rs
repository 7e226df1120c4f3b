//! RSASSA-PKCS1-v1_5 (RFC 8017, section 8.2): EM = 0x00 0x01 PS 0x00 T with T the DER
//! DigestInfo of the hash and PS at least eight 0xff bytes. Verification rebuilds EM
//! from the message and compares it whole with s^e mod n, so no parser of the padding
//! runs on attacker bytes.

use crate::{Hash, PrivateKey, PublicKey, RsaError};

/// The DER DigestInfo prefix (RFC 8017, section 9.2, note 1).
fn prefix(h: Hash) -> &'static [u8] {
    match h {
        Hash::Sha256 => &[
            0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02,
            0x01, 0x05, 0x00, 0x04, 0x20,
        ],
        Hash::Sha384 => &[
            0x30, 0x41, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02,
            0x02, 0x05, 0x00, 0x04, 0x30,
        ],
        Hash::Sha512 => &[
            0x30, 0x51, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02,
            0x03, 0x05, 0x00, 0x04, 0x40,
        ],
    }
}

/// EMSA-PKCS1-v1_5 encoding of `msg` to `k` bytes.
pub fn encode(h: Hash, msg: &[u8], k: usize) -> Result<Vec<u8>, RsaError> {
    let digest = h.digest(&[msg]);
    let t_len = prefix(h).len() + digest.len();
    if k < t_len + 11 {
        return Err(RsaError::MessageTooLong);
    }
    let mut em = vec![0xffu8; k];
    em[0] = 0;
    em[1] = 1;
    em[k - t_len - 1] = 0;
    em[k - t_len..k - digest.len()].copy_from_slice(prefix(h));
    em[k - digest.len()..].copy_from_slice(&digest);
    Ok(em)
}

/// Signs `msg` (constant-time private operation, fault-checked).
pub fn sign(key: &PrivateKey, h: Hash, msg: &[u8]) -> Result<Vec<u8>, RsaError> {
    key.raw(&encode(h, msg, key.public().size())?)
}

/// Verifies `sig` on `msg`.
pub fn verify(key: &PublicKey, h: Hash, msg: &[u8], sig: &[u8]) -> Result<(), RsaError> {
    if sig.len() != key.size() {
        return Err(RsaError::BadSignature);
    }
    let em = key.vartime_raw(sig).map_err(|_| RsaError::BadSignature)?;
    if em == encode(h, msg, key.size())? {
        Ok(())
    } else {
        Err(RsaError::BadSignature)
    }
}
