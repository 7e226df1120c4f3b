use ed25519_dalek::{Signer, SigningKey};
use rand::{RngCore, SeedableRng};
use wirespeed_ed25519::{verify, Mode};

#[test]
fn dalek_signatures_verify_and_bitflips_fail() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    for i in 0..200 {
        let sk = SigningKey::generate(&mut rng);
        let mut msg = vec![0u8; i % 70];
        rng.fill_bytes(&mut msg);
        let sig = sk.sign(&msg).to_bytes();
        let pk = sk.verifying_key().to_bytes();
        for m in Mode::ALL {
            assert_eq!(verify(&msg, &sig, &pk, m), Ok(()), "mode {m} item {i}");
        }
        let mut bad = sig;
        bad[(i * 7) % 64] ^= 1 << (i % 8);
        let theirs = sk
            .verifying_key()
            .verify_strict(&msg, &ed25519_dalek::Signature::from_bytes(&bad))
            .is_ok();
        assert_eq!(
            verify(&msg, &bad, &pk, Mode::Strict).is_ok(),
            theirs,
            "item {i}"
        );
    }
}

#[test]
fn verify_many_backends_agree_with_verify() {
    use wirespeed_ed25519::{verify_many_with, Lanes};
    let recs = records(2, 203, 40, |i| (i % 5 == 0).then_some(i % 64));
    let items = items(&recs);
    for mode in Mode::ALL {
        let want: Vec<_> = items
            .iter()
            .map(|it| verify(it.msg, it.sig, it.pk, mode))
            .collect();
        for b in [
            Lanes::Serial,
            Lanes::Avx2,
            Lanes::Ifma,
            Lanes::Ifma4,
            Lanes::Auto,
        ] {
            assert_eq!(
                verify_many_with(&items, mode, b, wirespeed_ed25519::CpuFeatures::get()),
                want,
                "{mode} {b:?}"
            );
        }
    }
}

/// Small batches and every tail length (short lane groups take the single-signature
/// path): verdicts still equal `verify`'s, from `verify_many_with` and
/// `verify_many_here`, with bad signatures at varying places in the group.
#[test]
fn small_batches_and_tails_agree_with_verify() {
    use wirespeed_ed25519::{verify_many_here, verify_many_with, Lanes};
    let recs = records(3, 24, 33, |i| (i % 3 == 1).then_some((i * 5) % 32));
    let items = items(&recs);
    for n in 1..=items.len() {
        for start in [0, 1] {
            let batch = &items[start..(start + n).min(items.len())];
            let want: Vec<_> = batch
                .iter()
                .map(|it| verify(it.msg, it.sig, it.pk, Mode::Strict))
                .collect();
            assert!(want.iter().any(|v| v.is_ok()) || batch.len() < 2);
            for b in [Lanes::Avx2, Lanes::Ifma, Lanes::Ifma4, Lanes::Auto] {
                let got = verify_many_with(
                    batch,
                    Mode::Strict,
                    b,
                    wirespeed_ed25519::CpuFeatures::get(),
                );
                assert_eq!(got, want, "{b:?} n {n} start {start}");
            }
            let mut here = vec![Ok(()); batch.len()];
            verify_many_here(batch, Mode::Strict, &mut here);
            assert_eq!(here, want, "here n {n} start {start}");
        }
    }
}

/// `n` dalek-signed records (message, signature, key) from `seed`; `flip(i)` names a
/// signature byte to corrupt for record `i`.
fn records(
    seed: u64,
    n: usize,
    msg_len: usize,
    flip: impl Fn(usize) -> Option<usize>,
) -> Vec<(Vec<u8>, [u8; 64], [u8; 32])> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            let sk = SigningKey::generate(&mut rng);
            let mut msg = vec![0u8; msg_len];
            rng.fill_bytes(&mut msg);
            let mut sig = sk.sign(&msg).to_bytes();
            if let Some(b) = flip(i) {
                sig[b] ^= 4;
            }
            (msg, sig, sk.verifying_key().to_bytes())
        })
        .collect()
}

fn items(recs: &[(Vec<u8>, [u8; 64], [u8; 32])]) -> Vec<wirespeed_ed25519::Item<'_>> {
    recs.iter()
        .map(|(m, s, p)| wirespeed_ed25519::Item {
            msg: m,
            sig: s,
            pk: p,
        })
        .collect()
}
