//! The signer against ed25519-dalek on random seeds and messages (lengths 0 to 300):
//! the same public key and the same signature, byte for byte (Ed25519 is
//! deterministic), and every signature verifies here in every mode.

use ed25519_dalek::Signer;
use rand::{Rng, RngCore, SeedableRng};
use wirespeed_ed25519::{verify, Mode, SigningKey};

#[test]
fn signatures_equal_dalek_on_random_keys_and_messages() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(8032);
    for i in 0..300 {
        let seed: [u8; 32] = rng.gen();
        let mut msg = vec![0u8; (i * 7) % 301];
        rng.fill_bytes(&mut msg);
        let ours = SigningKey::from_seed(&seed);
        let theirs = ed25519_dalek::SigningKey::from_bytes(&seed);
        assert_eq!(
            ours.public_key(),
            theirs.verifying_key().to_bytes(),
            "key {i}"
        );
        let sig = ours.sign(&msg);
        assert_eq!(sig, theirs.sign(&msg).to_bytes(), "signature {i}");
        for mode in Mode::ALL {
            assert_eq!(
                verify(&msg, &sig, &ours.public_key(), mode),
                Ok(()),
                "{mode} {i}"
            );
        }
    }
}
