//! Single-signature verification in a loop, for profiling `verify`:
//! cargo run --release -p wirespeed-ed25519 --example single_loop [-- PASSES]

use ed25519_dalek::{Signer, SigningKey};
use rand::{RngCore, SeedableRng};
use wirespeed_ed25519::{verify, Mode};

fn main() {
    let passes: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let recs: Vec<_> = (0..2048)
        .map(|_| {
            let sk = SigningKey::generate(&mut rng);
            let mut msg = vec![0u8; 128];
            rng.fill_bytes(&mut msg);
            (
                msg.clone(),
                sk.sign(&msg).to_bytes(),
                sk.verifying_key().to_bytes(),
            )
        })
        .collect();
    let t = std::time::Instant::now();
    for _ in 0..passes {
        for (m, s, p) in &recs {
            assert!(verify(m, s, p, Mode::Strict).is_ok());
        }
    }
    let n = (passes * recs.len()) as f64;
    println!("{:.2} us per verify", t.elapsed().as_secs_f64() * 1e6 / n);
}
