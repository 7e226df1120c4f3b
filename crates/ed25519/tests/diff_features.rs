//! Lanes chosen only by the CPU features passed in: single and batch verification with
//! no features (serial) and with this CPU's widest lanes give the same verdicts and
//! reasons on random keys and messages, valid signatures and corrupted ones; a lane
//! width the given features lack runs serially instead of executing its instructions.

use ed25519_dalek::{Signer, SigningKey};
use rand::{Rng, RngCore, SeedableRng};
use wirespeed_ed25519::{
    vartime_decode_checked_many_with, verify_backend_on, verify_many_cached_with,
    verify_many_here_with, verify_many_with, verify_with, CpuFeatures, Item, KeyCache, Lanes, Mode,
    Role,
};

fn records(seed: u64, n: usize) -> Vec<(Vec<u8>, [u8; 64], [u8; 32])> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            let sk = SigningKey::generate(&mut rng);
            let mut msg = vec![0u8; i % 90];
            rng.fill_bytes(&mut msg);
            let mut sig = sk.sign(&msg).to_bytes();
            let mut pk = sk.verifying_key().to_bytes();
            match i % 6 {
                1 => sig[rng.gen_range(0..64)] ^= 1 << rng.gen_range(0..8),
                2 => pk[rng.gen_range(0..32)] ^= 1 << rng.gen_range(0..8),
                3 => rng.fill_bytes(&mut sig),
                _ => {}
            }
            (msg, sig, pk)
        })
        .collect()
}

#[test]
fn serial_and_widest_lanes_give_the_same_verdicts() {
    let none = CpuFeatures::none();
    let widest = CpuFeatures::get();
    assert_eq!(verify_backend_on(&none), Lanes::Serial);
    let recs = records(18, 301);
    let items: Vec<Item<'_>> = recs
        .iter()
        .map(|(m, s, p)| Item {
            msg: m,
            sig: s,
            pk: p,
        })
        .collect();
    for mode in Mode::ALL {
        let serial: Vec<_> = items
            .iter()
            .map(|it| verify_with(it.msg, it.sig, it.pk, mode, &none))
            .collect();
        assert!(serial.iter().any(|r| r.is_ok()) && serial.iter().any(|r| r.is_err()));
        let wide: Vec<_> = items
            .iter()
            .map(|it| verify_with(it.msg, it.sig, it.pk, mode, widest))
            .collect();
        assert_eq!(serial, wide, "verify_with, {mode}");
        assert_eq!(
            verify_many_with(&items, mode, Lanes::Serial, &none),
            serial,
            "verify_many_with serial, {mode}"
        );
        for b in Lanes::ALL {
            assert_eq!(
                verify_many_with(&items, mode, b, widest),
                serial,
                "verify_many_with {b}, {mode}"
            );
            // Features without the lanes: serial, same verdicts.
            assert_eq!(
                verify_many_with(&items, mode, b, &none),
                serial,
                "{b} without features, {mode}"
            );
            let mut out = vec![Ok(()); items.len()];
            verify_many_here_with(&items, mode, b, widest, &mut out);
            assert_eq!(out, serial, "verify_many_here_with {b}, {mode}");
        }
    }
}

#[test]
fn checked_decoding_agrees_across_features() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let encs: Vec<[u8; 32]> = (0..77)
        .map(|i| {
            if i % 3 == 0 {
                SigningKey::generate(&mut rng).verifying_key().to_bytes()
            } else {
                rng.gen()
            }
        })
        .collect();
    for mode in Mode::ALL {
        for role in [Role::A, Role::R] {
            let mut a = vec![None; encs.len()];
            let mut b = vec![None; encs.len()];
            vartime_decode_checked_many_with(
                &encs,
                mode,
                role,
                Lanes::Auto,
                &CpuFeatures::none(),
                &mut a,
            );
            vartime_decode_checked_many_with(
                &encs,
                mode,
                role,
                Lanes::Auto,
                CpuFeatures::get(),
                &mut b,
            );
            assert!(a.iter().any(Option::is_some));
            assert_eq!(a, b, "{mode} {role:?}");
        }
    }
}

/// Repeating keys (eight signers, a sixth of the records with a flipped key bit, so
/// near-duplicate keys that are not points or are other points): the cache, shared by
/// every mode and backend and with and without the features, never changes a verdict.
#[test]
fn key_cache_keeps_every_verdict_on_repeating_keys() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(23);
    let signers: Vec<SigningKey> = (0..8).map(|_| SigningKey::generate(&mut rng)).collect();
    let recs: Vec<(Vec<u8>, [u8; 64], [u8; 32])> = (0..600)
        .map(|i| {
            let sk = &signers[rng.gen_range(0..signers.len())];
            let mut msg = vec![0u8; 40];
            rng.fill_bytes(&mut msg);
            let mut sig = sk.sign(&msg).to_bytes();
            let mut pk = sk.verifying_key().to_bytes();
            match i % 6 {
                1 => sig[rng.gen_range(0..64)] ^= 1 << rng.gen_range(0..8),
                2 => pk[rng.gen_range(0..32)] ^= 1 << rng.gen_range(0..8),
                _ => {}
            }
            (msg, sig, pk)
        })
        .collect();
    let items: Vec<Item<'_>> = recs
        .iter()
        .map(|(m, s, p)| Item {
            msg: m,
            sig: s,
            pk: p,
        })
        .collect();
    let cache = KeyCache::new(1000);
    for mode in Mode::ALL {
        let want = verify_many_with(&items, mode, Lanes::Serial, &CpuFeatures::none());
        assert!(want.iter().any(|r| r.is_ok()) && want.iter().any(|r| r.is_err()));
        for b in Lanes::ALL {
            for cpu in [CpuFeatures::get(), &CpuFeatures::none()] {
                assert_eq!(
                    verify_many_cached_with(&items, mode, b, cpu, &cache),
                    want,
                    "{b}, {mode}"
                );
            }
        }
    }
    let st = cache.stats();
    assert!(st.hits > 10 * st.misses, "{st:?}");
}
