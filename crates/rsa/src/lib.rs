//! RSA signatures on wirespeed's big-integer arithmetic: RSASSA-PKCS1-v1_5 and
//! RSASSA-PSS (RFC 8017) with SHA-256, SHA-384 and SHA-512, for 2048-, 3072- and
//! 4096-bit keys.
//!
//! - [`key`]: key parsing (PKCS#1, PKCS#8; PEM or DER) and the raw operations: the
//!   private one by the CRT in constant time with a fault check, the public one
//!   variable-time. The `_with` constructors take the [`CpuFeatures`] that choose the
//!   Montgomery kernel (the engine passes its own; the plain ones use the detected).
//! - [`pkcs1v15`], [`pss`]: the encodings; verification re-encodes and compares (v1.5)
//!   or runs every RFC 8017 check (PSS).
//! - [`accumulator`]: an RSA accumulator (a set commitment in a group of unknown order):
//!   batch additions, root-factor witnesses for many members at once, verification, and
//!   removal with the trapdoor; its security assumptions are stated there.

#![cfg_attr(not(test), warn(missing_docs))]

pub mod accumulator;
pub mod key;
pub mod pkcs1v15;
pub mod pss;

pub use key::{CrtParams, PrivateKey, PublicKey};
pub use wirespeed_bigint::{CpuFeatures, Kernel};

use sha2::Digest;

/// Why an RSA operation failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RsaError {
    /// The key file could not be parsed.
    Parse(String),
    /// The key is malformed or inconsistent.
    BadKey(&'static str),
    /// Only 2048, 3072 and 4096-bit moduli are supported.
    UnsupportedSize(usize),
    /// An input integer is not below the modulus (or too long).
    OutOfRange,
    /// The key is too small for this hash and padding.
    MessageTooLong,
    /// The signature does not verify.
    BadSignature,
    /// The CRT result failed its check: nothing was released.
    FaultDetected,
}

impl std::fmt::Display for RsaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RsaError::Parse(e) => write!(f, "cannot parse the key: {e}"),
            RsaError::BadKey(why) => write!(f, "bad key: {why}"),
            RsaError::UnsupportedSize(b) => {
                write!(f, "{b}-bit modulus not supported (2048, 3072 or 4096)")
            }
            RsaError::OutOfRange => f.write_str("input integer out of range for the modulus"),
            RsaError::MessageTooLong => f.write_str("key too small for this hash and padding"),
            RsaError::BadSignature => f.write_str("signature does not verify"),
            RsaError::FaultDetected => {
                f.write_str("private-key result failed its check (fault); nothing released")
            }
        }
    }
}

impl std::error::Error for RsaError {}

/// The hash of a signature scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hash {
    /// SHA-256.
    Sha256,
    /// SHA-384.
    Sha384,
    /// SHA-512.
    Sha512,
}

impl Hash {
    /// Digest length in bytes.
    pub fn len(&self) -> usize {
        match self {
            Hash::Sha256 => 32,
            Hash::Sha384 => 48,
            Hash::Sha512 => 64,
        }
    }

    /// Never empty (a digest has a length).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The digest of the concatenated parts.
    pub fn digest(&self, parts: &[&[u8]]) -> Vec<u8> {
        fn run<D: Digest>(parts: &[&[u8]]) -> Vec<u8> {
            let mut h = D::new();
            for p in parts {
                h.update(p);
            }
            h.finalize().to_vec()
        }
        match self {
            Hash::Sha256 => run::<sha2::Sha256>(parts),
            Hash::Sha384 => run::<sha2::Sha384>(parts),
            Hash::Sha512 => run::<sha2::Sha512>(parts),
        }
    }

    /// From a name: sha256, sha384 or sha512.
    pub fn from_name(s: &str) -> Option<Hash> {
        match s.to_ascii_lowercase().replace('-', "").as_str() {
            "sha256" => Some(Hash::Sha256),
            "sha384" => Some(Hash::Sha384),
            "sha512" => Some(Hash::Sha512),
            _ => None,
        }
    }
}

/// Signature padding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Padding {
    /// RSASSA-PKCS1-v1_5.
    Pkcs1v15,
    /// RSASSA-PSS (salt as long as the digest when signing, any when verifying).
    Pss,
}

/// Signs every message, in parallel on the current rayon pool; signatures in input
/// order.
pub fn batch_sign(
    key: &PrivateKey,
    padding: Padding,
    h: Hash,
    msgs: &[Vec<u8>],
) -> Result<Vec<Vec<u8>>, RsaError> {
    use rayon::prelude::*;
    msgs.par_iter()
        .map(|m| match padding {
            Padding::Pkcs1v15 => pkcs1v15::sign(key, h, m),
            Padding::Pss => pss::sign(key, h, m, &mut rand::thread_rng()),
        })
        .collect()
}

/// Verifies every (message, signature) pair, in parallel; one verdict per pair.
pub fn batch_verify(
    key: &PublicKey,
    padding: Padding,
    h: Hash,
    pairs: &[(Vec<u8>, Vec<u8>)],
) -> Vec<bool> {
    use rayon::prelude::*;
    pairs
        .par_iter()
        .map(|(m, s)| match padding {
            Padding::Pkcs1v15 => pkcs1v15::verify(key, h, m, s).is_ok(),
            Padding::Pss => pss::verify(key, h, m, s).is_ok(),
        })
        .collect()
}
