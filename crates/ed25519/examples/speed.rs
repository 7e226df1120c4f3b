//! Quick single-core speed check: wirespeed `verify` and `verify_many` per backend beside
//! ed25519-dalek `verify_strict` (key parsed inside the loop), in the same run, as the
//! median of interleaved repetitions. The full side-by-side with every peer is
//! `wirespeed bench ed25519`.
//!
//! cargo run --release -p wirespeed-ed25519 --example speed [-- REPS]

use std::time::Instant;

use ed25519_dalek::{Signer, SigningKey};
use rand::{RngCore, SeedableRng};
use wirespeed_ed25519::{verify, verify_many_with, Item, Lanes, Mode};

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let reps: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(9);
    let n = 2048;
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
    let backends: Vec<Lanes> = Lanes::CONCRETE
        .into_iter()
        .filter(Lanes::available)
        .collect();
    let mut names = vec!["verify".to_string(), "dalek verify_strict".to_string()];
    names.extend(backends.iter().map(|b| format!("verify_many/{}", b.name())));
    let mut samples = vec![Vec::new(); names.len()];
    for _ in 0..reps {
        let t = Instant::now();
        for it in &items {
            assert!(verify(it.msg, it.sig, it.pk, Mode::Strict).is_ok());
        }
        samples[0].push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for it in &items {
            let vk = ed25519_dalek::VerifyingKey::from_bytes(it.pk.try_into().unwrap_or(&[0; 32]));
            let sig = ed25519_dalek::Signature::from_slice(it.sig);
            assert!(
                matches!((vk, sig), (Ok(vk), Ok(sig)) if vk.verify_strict(it.msg, &sig).is_ok())
            );
        }
        samples[1].push(t.elapsed().as_secs_f64());
        for (k, b) in backends.iter().enumerate() {
            let t = Instant::now();
            let v = pool.install(|| {
                verify_many_with(
                    &items,
                    Mode::Strict,
                    *b,
                    wirespeed_ed25519::CpuFeatures::get(),
                )
            });
            samples[2 + k].push(t.elapsed().as_secs_f64());
            assert!(v.iter().all(|r| r.is_ok()));
        }
    }
    let med: Vec<f64> = samples.iter_mut().map(|s| median(s)).collect();
    for (name, m) in names.iter().zip(&med) {
        println!(
            "{name:<24} {:>9.0}/s  {:>7.2} us/sig  x{:.2} vs dalek verify_strict",
            n as f64 / m,
            m * 1e6 / n as f64,
            med[1] / m
        );
    }
}
