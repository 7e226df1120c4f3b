//! Quick single-core speed check: wirespeed verify / verify_many per backend beside
//! ed25519-dalek verify_strict, in the same run. Full side-by-side: `wirespeed bench ed25519`.
//!
//! cargo run --release -p wirespeed-ed25519 --example speed

use std::time::Instant;

use ed25519_dalek::{Signer, SigningKey};
use rand::{RngCore, SeedableRng};
use wirespeed_ed25519::{verify, verify_many_with, Backend, Item, Mode};

fn main() {
    let n = 4096;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let recs: Vec<_> = (0..n)
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
    let items: Vec<Item> = recs
        .iter()
        .map(|(m, s, p)| Item {
            msg: m,
            sig: s,
            pk: p,
        })
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    if std::env::var("ONLY_VERIFY").is_ok() {
        let t = Instant::now();
        for _ in 0..5 {
            for it in &items {
                assert!(verify(it.msg, it.sig, it.pk, Mode::Strict).is_ok());
            }
        }
        println!(
            "verify only: {:.2} us",
            t.elapsed().as_secs_f64() * 1e6 / (5 * n) as f64
        );
        return;
    }
    for round in 0..3 {
        let t = Instant::now();
        for it in &items {
            assert!(verify(it.msg, it.sig, it.pk, Mode::Strict).is_ok());
        }
        let ours = t.elapsed().as_secs_f64();
        let t = Instant::now();
        for it in &items {
            let vk = ed25519_dalek::VerifyingKey::from_bytes(it.pk.try_into().unwrap_or(&[0; 32]));
            let sig = ed25519_dalek::Signature::from_slice(it.sig);
            assert!(
                matches!((vk, sig), (Ok(vk), Ok(sig)) if vk.verify_strict(it.msg, &sig).is_ok())
            );
        }
        let dalek = t.elapsed().as_secs_f64();
        let mut line = format!(
            "round {round}: verify {:.0}/s ({:.2} us), dalek verify_strict {:.0}/s, ratio {:.2}",
            n as f64 / ours,
            ours * 1e6 / n as f64,
            n as f64 / dalek,
            dalek / ours
        );
        for b in [
            Backend::Serial,
            Backend::Avx2,
            Backend::Ifma,
            Backend::Ifma8,
        ] {
            let t = Instant::now();
            let v = pool.install(|| verify_many_with(&items, Mode::Strict, b));
            let s = t.elapsed().as_secs_f64();
            assert!(v.iter().all(|r| r.is_ok()));
            line += &format!(", many/{} {:.0}/s", b.name(), n as f64 / s);
        }
        println!("{line}");
    }
}
