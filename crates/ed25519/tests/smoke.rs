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
