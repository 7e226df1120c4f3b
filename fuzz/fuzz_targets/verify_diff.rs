//! Verification on arbitrary bytes, split as public key (first 32 bytes), signature (next
//! 64) and message (the rest); shorter inputs give short keys or signatures. No mode may
//! panic; strict must agree with ed25519-dalek `verify_strict`, zip215 with ed25519-zebra,
//! and `verify_many` must return the single verdict in every backend.

#![no_main]

use libfuzzer_sys::fuzz_target;
use wirespeed_ed25519::{verify, verify_many_with, Item, Lanes, Mode};

fn dalek_strict(msg: &[u8], sig: &[u8], pk: &[u8]) -> bool {
    let Ok(pk) = <&[u8; 32]>::try_from(pk) else {
        return false;
    };
    let Ok(sig) = ed25519_dalek::Signature::from_slice(sig) else {
        return false;
    };
    let Ok(vk) = ed25519_dalek::VerifyingKey::from_bytes(pk) else {
        return false;
    };
    vk.verify_strict(msg, &sig).is_ok()
}

fn zebra(msg: &[u8], sig: &[u8], pk: &[u8]) -> bool {
    let Ok(vk) = ed25519_zebra::VerificationKey::try_from(pk) else {
        return false;
    };
    let Ok(sig) = <[u8; 64]>::try_from(sig) else {
        return false;
    };
    vk.verify(&ed25519_zebra::Signature::from_bytes(&sig), msg)
        .is_ok()
}

fuzz_target!(|data: &[u8]| {
    let (pk, rest) = data.split_at(data.len().min(32));
    let (sig, msg) = rest.split_at(rest.len().min(64));

    let verdicts: Vec<_> = Mode::ALL.iter().map(|m| verify(msg, sig, pk, *m)).collect();
    assert_eq!(
        verdicts[0].is_ok(),
        dalek_strict(msg, sig, pk),
        "strict vs ed25519-dalek: ours {:?}",
        verdicts[0]
    );
    assert_eq!(
        verdicts[1].is_ok(),
        zebra(msg, sig, pk),
        "zip215 vs ed25519-zebra: ours {:?}",
        verdicts[1]
    );

    let items = [Item { msg, sig, pk }];
    for (mode, single) in Mode::ALL.iter().zip(&verdicts) {
        for backend in std::iter::once(Lanes::Auto).chain(Lanes::CONCRETE) {
            assert_eq!(verify_many_with(&items, *mode, backend, wirespeed_ed25519::CpuFeatures::get()), vec![*single]);
        }
    }
});
