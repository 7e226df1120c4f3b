//! The contenders of `wirespeed bench ed25519`: wirespeed's calls and each peer's, with
//! how each verifies one item or a dataset (keys parsed inside the timed loop unless the
//! contender says otherwise).

use rayon::prelude::*;
use wirespeed_ed25519::{verify_many_with, verify_with, Item, Lanes, Mode};
use wirespeed_engine::backend::cpu;

use super::Dataset;

/// One implementation (and calling convention) being timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Contender {
    /// `wirespeed_ed25519::verify_with(.., Mode::Strict, cpu)` per item.
    WsVerify,
    /// `wirespeed_ed25519::verify_many_with(.., Mode::Strict, Lanes::Auto, cpu)`.
    WsVerifyMany,
    /// `verify_many_with(.., Mode::Strict, Lanes::Serial)`.
    WsVerifyManySerial,
    /// ed25519-dalek `VerifyingKey::from_bytes` + `verify` per item.
    DalekVerify,
    /// ed25519-dalek `VerifyingKey::from_bytes` + `verify_strict` per item.
    DalekVerifyStrict,
    /// ed25519-dalek `verify` with keys parsed before the timed loop.
    DalekVerifyPreparsed,
    /// ed25519-dalek `verify_strict` with keys parsed before the timed loop.
    DalekVerifyStrictPreparsed,
    /// ed25519-dalek `verify_batch` over batches of [`DALEK_BATCH`] (keys parsed inside).
    DalekVerifyBatch,
    /// ed25519-zebra `VerificationKey::try_from(bytes)?.verify(..)` (ZIP-215 rules).
    Zebra,
    /// ring `UnparsedPublicKey::new(&ED25519, pk).verify(..)`.
    Ring,
    /// OpenSSL `PKey::public_key_from_raw_bytes` + `Verifier::verify_oneshot`.
    Openssl,
}

/// Signatures per `ed25519_dalek::verify_batch` call.
pub const DALEK_BATCH: usize = 64;

impl Contender {
    /// Every contender of the throughput table, wirespeed first.
    pub const ALL: [Contender; 11] = [
        Contender::WsVerify,
        Contender::WsVerifyMany,
        Contender::WsVerifyManySerial,
        Contender::DalekVerify,
        Contender::DalekVerifyStrict,
        Contender::DalekVerifyPreparsed,
        Contender::DalekVerifyStrictPreparsed,
        Contender::DalekVerifyBatch,
        Contender::Zebra,
        Contender::Ring,
        Contender::Openssl,
    ];

    /// The contenders of the latency table (one signature per call, key as bytes).
    pub const LATENCY: [Contender; 5] = [
        Contender::WsVerify,
        Contender::DalekVerifyStrict,
        Contender::Zebra,
        Contender::Ring,
        Contender::Openssl,
    ];

    /// The label used in tables.
    pub fn label(&self) -> &'static str {
        match self {
            Contender::WsVerify => "wirespeed verify (strict)",
            Contender::WsVerifyMany => "wirespeed verify_many (strict, auto)",
            Contender::WsVerifyManySerial => "wirespeed verify_many (strict, serial)",
            Contender::DalekVerify => "ed25519-dalek 2 verify",
            Contender::DalekVerifyStrict => "ed25519-dalek 2 verify_strict",
            Contender::DalekVerifyPreparsed => "ed25519-dalek 2 verify (keys pre-parsed)",
            Contender::DalekVerifyStrictPreparsed => {
                "ed25519-dalek 2 verify_strict (keys pre-parsed)"
            }
            Contender::DalekVerifyBatch => "ed25519-dalek 2 verify_batch (64)",
            Contender::Zebra => "ed25519-zebra 4 verify",
            Contender::Ring => "ring 0.17 verify",
            Contender::Openssl => "OpenSSL verify_oneshot",
        }
    }

    /// A short stable name for JSON output.
    pub fn key(&self) -> &'static str {
        match self {
            Contender::WsVerify => "wirespeed-verify",
            Contender::WsVerifyMany => "wirespeed-verify-many",
            Contender::WsVerifyManySerial => "wirespeed-verify-many-serial",
            Contender::DalekVerify => "dalek-verify",
            Contender::DalekVerifyStrict => "dalek-verify-strict",
            Contender::DalekVerifyPreparsed => "dalek-verify-preparsed",
            Contender::DalekVerifyStrictPreparsed => "dalek-verify-strict-preparsed",
            Contender::DalekVerifyBatch => "dalek-verify-batch",
            Contender::Zebra => "zebra-verify",
            Contender::Ring => "ring-verify",
            Contender::Openssl => "openssl-verify",
        }
    }

    /// True for wirespeed's own entry points.
    pub fn is_wirespeed(&self) -> bool {
        matches!(
            self,
            Contender::WsVerify | Contender::WsVerifyMany | Contender::WsVerifyManySerial
        )
    }

    /// How many of the dataset's signatures this contender accepts, using the current
    /// rayon pool (call it inside `ThreadPool::install`).
    pub fn count_valid(&self, data: &Dataset<'_>) -> usize {
        let items = &data.items;
        match self {
            Contender::WsVerifyMany => {
                count_ok(&verify_many_with(items, Mode::Strict, Lanes::Auto, cpu()))
            }
            Contender::WsVerifyManySerial => {
                count_ok(&verify_many_with(items, Mode::Strict, Lanes::Serial, cpu()))
            }
            Contender::DalekVerifyPreparsed | Contender::DalekVerifyStrictPreparsed => {
                let strict = *self == Contender::DalekVerifyStrictPreparsed;
                items
                    .par_iter()
                    .zip(data.dalek_keys.par_iter())
                    .filter(|(it, vk)| match vk {
                        Some(vk) => dalek_preparsed(vk, it, strict),
                        None => false,
                    })
                    .count()
            }
            Contender::DalekVerifyBatch => items
                .par_chunks(DALEK_BATCH)
                .map(|chunk| if dalek_batch(chunk) { chunk.len() } else { 0 })
                .sum(),
            c => items.par_iter().filter(|it| c.verify_one(it)).count(),
        }
    }

    /// Verifies one signature from bytes, parsing the key as part of the call. The
    /// batch and pre-parsed dalek variants verify the item on its own the same way.
    pub fn verify_one(&self, it: &Item<'_>) -> bool {
        match self {
            Contender::WsVerify | Contender::WsVerifyMany | Contender::WsVerifyManySerial => {
                verify_with(it.msg, it.sig, it.pk, Mode::Strict, cpu()).is_ok()
            }
            Contender::DalekVerify | Contender::DalekVerifyPreparsed => dalek(it, false),
            Contender::DalekVerifyStrict | Contender::DalekVerifyStrictPreparsed => dalek(it, true),
            Contender::DalekVerifyBatch => dalek_batch(std::slice::from_ref(it)),
            Contender::Zebra => zebra(it),
            Contender::Ring => ring_verify(it),
            Contender::Openssl => openssl_verify(it),
        }
    }
}

fn count_ok<E>(v: &[Result<(), E>]) -> usize {
    v.iter().filter(|r| r.is_ok()).count()
}

pub(super) fn dalek_key(pk: &[u8]) -> Option<ed25519_dalek::VerifyingKey> {
    ed25519_dalek::VerifyingKey::from_bytes(pk.try_into().ok()?).ok()
}

fn dalek_sig(sig: &[u8]) -> Option<ed25519_dalek::Signature> {
    Some(ed25519_dalek::Signature::from_bytes(sig.try_into().ok()?))
}

fn dalek(it: &Item<'_>, strict: bool) -> bool {
    match dalek_key(it.pk) {
        Some(vk) => dalek_preparsed(&vk, it, strict),
        None => false,
    }
}

fn dalek_preparsed(vk: &ed25519_dalek::VerifyingKey, it: &Item<'_>, strict: bool) -> bool {
    use ed25519_dalek::Verifier;
    let Some(sig) = dalek_sig(it.sig) else {
        return false;
    };
    if strict {
        vk.verify_strict(it.msg, &sig).is_ok()
    } else {
        vk.verify(it.msg, &sig).is_ok()
    }
}

fn dalek_batch(chunk: &[Item<'_>]) -> bool {
    let mut msgs = Vec::with_capacity(chunk.len());
    let mut sigs = Vec::with_capacity(chunk.len());
    let mut keys = Vec::with_capacity(chunk.len());
    for it in chunk {
        let (Some(sig), Some(vk)) = (dalek_sig(it.sig), dalek_key(it.pk)) else {
            return false;
        };
        msgs.push(it.msg);
        sigs.push(sig);
        keys.push(vk);
    }
    ed25519_dalek::verify_batch(&msgs, &sigs, &keys).is_ok()
}

fn zebra(it: &Item<'_>) -> bool {
    let Ok(vk) = ed25519_zebra::VerificationKey::try_from(it.pk) else {
        return false;
    };
    let Ok(sig) = <[u8; 64]>::try_from(it.sig) else {
        return false;
    };
    vk.verify(&ed25519_zebra::Signature::from_bytes(&sig), it.msg)
        .is_ok()
}

fn ring_verify(it: &Item<'_>) -> bool {
    use ring::signature::{UnparsedPublicKey, ED25519};
    UnparsedPublicKey::new(&ED25519, it.pk)
        .verify(it.msg, it.sig)
        .is_ok()
}

fn openssl_verify(it: &Item<'_>) -> bool {
    use openssl::pkey::{Id, PKey};
    use openssl::sign::Verifier;
    let Ok(pkey) = PKey::public_key_from_raw_bytes(it.pk, Id::ED25519) else {
        return false;
    };
    let Ok(mut v) = Verifier::new_without_digest(&pkey) else {
        return false;
    };
    v.verify_oneshot(it.sig, it.msg).unwrap_or(false)
}
