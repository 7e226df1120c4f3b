//! Moduli built for a CPU without features (`CpuFeatures::none()`: the portable
//! Montgomery kernel) and for this CPU (its widest kernel: ADX rows or radix-2^52 IFMA)
//! give the same evaluations, checkpoints and proofs at every working width, verify each
//! other's proofs, and make the same time-lock puzzles from the same random draws. The
//! decoders that build a modulus from bytes (proofs in JSON and binary, saved states,
//! time-lock puzzles, LCS35 texts) build it for the features they are given, and what
//! they decode gives the same verdicts, resumed evaluations and solutions either way.
//! Wesolowski's challenge and the 128-bit primality test answer the same for both.

mod common;

use common::{ok, random_odd};

use rand::{Rng, SeedableRng};
use std::time::Duration;
use wirespeed_bigint::Uint;

use wirespeed_vdf::prime::{hash_to_prime_with, is_probable_prime_with};
use wirespeed_vdf::resume::{self, RunOptions, State};
use wirespeed_vdf::timelock::{self, create_with, Lcs35, Puzzle};
use wirespeed_vdf::{
    eval, prove, CpuFeatures, EvalOptions, Kernel, Modulus, Proof, ProofKind, VdfError, VdfProof,
    U4096,
};

fn input(rng: &mut impl Rng, n: &Modulus) -> U4096 {
    let mut l = [0u64; 64];
    rng.fill(&mut l[..]);
    let mut x = Uint(l).shr(4096 - (n.bits() - 1));
    x.0[0] |= 2;
    x
}

#[test]
fn portable_and_widest_kernels_agree() {
    let widest = CpuFeatures::get();
    let none = CpuFeatures::none();
    let mut rng = rand::rngs::StdRng::seed_from_u64(77);
    let mut moduli = vec![(Modulus::rsa2048_with(&none), Modulus::rsa2048_with(widest))];
    for bits in [1024usize, 1500, 3072, 4096] {
        let n = random_odd(&mut rng, bits);
        moduli.push((
            ok(Modulus::new_with(&n, &none)),
            ok(Modulus::new_with(&n, widest)),
        ));
    }
    for (scalar, wide) in &moduli {
        assert_eq!(scalar.kernel(), Kernel::Portable);
        assert_eq!(wide.kernel(), Kernel::best_on(widest));
        assert_eq!(scalar.features(), &none);
        for t in [1u64, 5, 300, 1025] {
            let what = format!("{} bits, T {t}, {:?}", wide.bits(), wide.kernel());
            let x = input(&mut rng, wide);
            let opts = EvalOptions {
                checkpoint_every: 64,
                progress: None,
            };
            let (ev_s, ev_w) = (ok(eval(scalar, &x, t, &opts)), ok(eval(wide, &x, t, &opts)));
            assert_eq!(ev_s, ev_w, "evaluation, {what}");
            for kind in [
                ProofKind::Wesolowski,
                ProofKind::Pietrzak,
                ProofKind::WesolowskiSegmented,
            ] {
                let (p_s, p_w) = (ok(prove(scalar, &ev_s, kind)), ok(prove(wide, &ev_w, kind)));
                assert_eq!(p_s, p_w, "{kind:?} proof, {what}");
                ok(p_s.verify(wide));
                ok(p_w.verify(scalar));
            }
        }
    }
}

#[test]
fn time_lock_puzzles_agree() {
    let widest = CpuFeatures::get();
    let none = CpuFeatures::none();
    for (bits, t) in [(1024usize, 1000u64), (2048, 77)] {
        let msg = format!("{bits} bits");
        let seed = bits as u64;
        let (mut r_s, mut r_w) = (
            rand::rngs::StdRng::seed_from_u64(seed),
            rand::rngs::StdRng::seed_from_u64(seed),
        );
        let (p_s, w_s) = ok(create_with(bits, t, msg.as_bytes(), &mut r_s, &none));
        let (p_w, w_w) = ok(create_with(bits, t, msg.as_bytes(), &mut r_w, widest));
        assert_eq!(p_s.modulus.kernel(), Kernel::Portable);
        assert_eq!(p_w.modulus.kernel(), Kernel::best_on(widest));
        assert_eq!(p_s, p_w, "{bits} bits");
        assert_eq!(w_s, w_w, "{bits} bits");
    }
}

/// The portable features and this CPU's, with the kernel each gives.
fn both() -> [(CpuFeatures, Kernel); 2] {
    let widest = CpuFeatures::get();
    [
        (CpuFeatures::none(), Kernel::Portable),
        (widest.clone(), Kernel::best_on(widest)),
    ]
}

/// The same proof with one value replaced by 2 (a canonical element, so it still
/// decodes): a proof that must be rejected.
fn tampered(p: &VdfProof) -> VdfProof {
    let mut bad = p.clone();
    match &mut bad.proof {
        Proof::Wesolowski { pi } => *pi = U4096::from_u64(2),
        Proof::Pietrzak { mu } => mu[0] = U4096::from_u64(2),
        Proof::WesolowskiSegmented { pis, .. } => pis[0] = U4096::from_u64(2),
    }
    bad
}

#[test]
fn decoded_proofs_agree() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(78);
    for bits in [1024usize, 2048, 3072] {
        let n = ok(Modulus::new_with(
            &random_odd(&mut rng, bits),
            &CpuFeatures::none(),
        ));
        let x = input(&mut rng, &n);
        let ev = ok(eval(&n, &x, 700, &EvalOptions::default()));
        for kind in [
            ProofKind::Wesolowski,
            ProofKind::Pietrzak,
            ProofKind::WesolowskiSegmented,
        ] {
            let good = ok(prove(&n, &ev, kind));
            for proof in [good.clone(), tampered(&good)] {
                let what = format!("{bits} bits, {kind:?}, valid {}", proof == good);
                let (json, bin) = (proof.to_json(), proof.to_bytes());
                let mut verdicts = vec![];
                for (f, kernel) in both() {
                    for decoded in [
                        ok(VdfProof::from_json_with(&json, &f)),
                        ok(VdfProof::from_bytes_with(&bin, &f)),
                    ] {
                        assert_eq!(decoded.modulus.kernel(), kernel, "{what}");
                        assert_eq!(decoded.modulus.features(), &f, "{what}");
                        assert_eq!(decoded, proof, "{what}");
                        // In the decoded modulus' own group, built for `f`.
                        verdicts.push(decoded.verify(&decoded.modulus));
                    }
                }
                let want = if proof == good {
                    Ok(())
                } else {
                    Err(VdfError::ProofRejected)
                };
                for v in verdicts {
                    assert_eq!(v, want, "{what}");
                }
            }
        }
    }
}

#[test]
fn loaded_states_resume_alike() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(79);
    let n = ok(Modulus::new_with(
        &random_odd(&mut rng, 2048),
        &CpuFeatures::none(),
    ));
    let x = input(&mut rng, &n);
    let (t, k, done) = (1000u64, 64u64, 300u64);
    let direct = ok(eval(
        &n,
        &x,
        t,
        &EvalOptions {
            checkpoint_every: k,
            progress: None,
        },
    ));
    let opts = RunOptions {
        save_every: Duration::from_secs(3600),
        verify_every: 1,
        progress: None,
        on_rollback: None,
    };
    // A sound state, and one whose value at `done` is wrong under a valid checksum (the
    // audit of the loaded state must roll it back to its last checkpoint).
    for faulty in [false, true] {
        let mut s = ok(State::new(n.clone(), x, t, k, Some(ProofKind::Wesolowski)));
        let part = ok(eval(
            &n,
            &x,
            done,
            &EvalOptions {
                checkpoint_every: k,
                progress: None,
            },
        ));
        s.done = done;
        s.value = if faulty { U4096::from_u64(5) } else { part.y };
        s.checkpoints = part.checkpoints;
        let bytes = s.to_bytes();
        for (i, (f, kernel)) in both().into_iter().enumerate() {
            let what = format!("faulty {faulty}, features {i}");
            let from_bytes = ok(State::from_bytes_with(&bytes, &f));
            assert_eq!(from_bytes.modulus.kernel(), kernel, "{what}");
            let dir = std::env::temp_dir().join(format!(
                "wirespeed-vdf-diff-features-{}-{faulty}-{i}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            ok(s.save(&dir));
            let mut loaded = ok(State::load_with(&dir, &f));
            assert_eq!(loaded.modulus.kernel(), kernel, "{what}");
            assert_eq!(loaded.modulus.features(), &f, "{what}");
            assert_eq!(loaded, s, "{what}");
            let audit = ok(resume::audit(&mut loaded.clone()));
            assert_eq!(audit == resume::Audit::Sound, !faulty, "{what}");
            loaded = ok(State::load_with(&dir, &f));
            let ev = ok(resume::run(loaded, &dir, &opts));
            assert_eq!(ev, direct, "{what}");
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

#[test]
fn decoded_puzzles_solve_alike() {
    let opts = EvalOptions::default();
    let mut rng = rand::rngs::StdRng::seed_from_u64(80);
    let (p, w) = ok(create_with(
        1024,
        2000,
        b"the same message",
        &mut rng,
        &CpuFeatures::none(),
    ));
    let json = p.to_json();
    let secret = U4096::from_u64(0x5ec2_e7e5);
    let l = ok(Lcs35::create_with(
        1024,
        1500,
        &secret,
        &mut rng,
        &CpuFeatures::none(),
    ));
    let text = l.to_text();
    for (f, kernel) in both() {
        let q = ok(Puzzle::from_json_with(&json, &f));
        assert_eq!(q.modulus.kernel(), kernel);
        assert_eq!(q, p);
        let solved = ok(timelock::solve(&q, &opts));
        assert_eq!(solved, w);
        assert_eq!(ok(timelock::open(&q, &solved)), b"the same message");
        let m = ok(Lcs35::parse_with(&text, &f));
        assert_eq!(m.modulus.kernel(), kernel);
        assert_eq!(m, l);
        assert_eq!(ok(m.solve(&opts)), secret);
    }
}

#[test]
fn challenges_and_primality_agree() {
    let widest = CpuFeatures::get();
    let none = CpuFeatures::none();
    let mut rng = rand::rngs::StdRng::seed_from_u64(81);
    let mut primes = 0;
    for i in 0..3000 {
        let c: u128 = rng.gen::<u128>() | 1;
        let p = is_probable_prime_with(c, &none);
        assert_eq!(p, is_probable_prime_with(c, widest), "case {i}: {c}");
        primes += p as usize;
    }
    assert!(primes > 20, "{primes} primes");
    for t in 1..40u64 {
        let (n, x, y) = ([0xc5u8; 128], [7u8; 128], t.to_be_bytes());
        let l = hash_to_prime_with(&n, &x, &y, t, &none);
        assert_eq!(l, hash_to_prime_with(&n, &x, &y, t, widest), "T {t}");
        assert!(l >> 127 == 1 && is_probable_prime_with(l, &none), "T {t}");
    }
}
