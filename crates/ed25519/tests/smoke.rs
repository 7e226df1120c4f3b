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
    use wirespeed_ed25519::{verify_many_with, Backend, Item};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
    let mut recs = Vec::new();
    for i in 0..203 {
        let sk = SigningKey::generate(&mut rng);
        let mut msg = vec![0u8; 40];
        rng.fill_bytes(&mut msg);
        let mut sig = sk.sign(&msg).to_bytes();
        if i % 5 == 0 {
            sig[i % 64] ^= 4;
        }
        recs.push((msg, sig, sk.verifying_key().to_bytes()));
    }
    let items: Vec<Item> = recs
        .iter()
        .map(|(m, s, p)| Item {
            msg: m,
            sig: s,
            pk: p,
        })
        .collect();
    for mode in Mode::ALL {
        let want: Vec<_> = items
            .iter()
            .map(|it| verify(it.msg, it.sig, it.pk, mode))
            .collect();
        for b in [
            Backend::Serial,
            Backend::Avx2,
            Backend::Ifma,
            Backend::Ifma4,
            Backend::Auto,
        ] {
            assert_eq!(verify_many_with(&items, mode, b), want, "{mode} {b:?}");
        }
    }
}
