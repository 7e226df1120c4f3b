//! Wesolowski and Pietrzak proofs: valid proofs verify for T from 1 to 4097 and several
//! checkpoint intervals, the checkpoint provers agree with the simple ones, single bit
//! flips in y, the proof, x, T or N are rejected, -y with -pi is rejected, provers run on
//! another thread beside an evaluation, and the verification time is printed.

mod common;

use common::{ok, random_modulus};

use std::time::Instant;

use rand::{Rng, SeedableRng};
use wirespeed_bigint::Uint;
use wirespeed_vdf::pietrzak::proof_len;
use wirespeed_vdf::{
    eval, prove, prove_pietrzak, prove_wesolowski, prove_wesolowski_simple, verify_pietrzak,
    verify_wesolowski, EvalOptions, Evaluation, Modulus, Proof, ProofKind, VdfError, VdfProof,
    U4096,
};

const DELAYS: [u64; 8] = [1, 2, 3, 5, 100, 1000, 1024, 4097];

fn random_input(rng: &mut impl Rng, n: &Modulus) -> U4096 {
    let mut l = [0u64; 64];
    rng.fill(&mut l[..]);
    // Below N: keep fewer bits than N has, and at least 2.
    let mut x = Uint(l).shr(4096 - (n.bits() - 1));
    x.0[0] |= 2;
    x
}

fn evaluate(n: &Modulus, x: &U4096, t: u64, k: u64) -> Evaluation {
    let opts = EvalOptions {
        checkpoint_every: k,
        progress: None,
    };
    ok(eval(n, x, t, &opts))
}

fn flip(v: &U4096, bit: usize) -> U4096 {
    let mut w = *v;
    w.0[bit / 64] ^= 1 << (bit % 64);
    w
}

#[test]
fn valid_proofs_verify_and_provers_agree() {
    let n = Modulus::rsa2048();
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    for t in DELAYS {
        let x = random_input(&mut rng, &n);
        let ev = evaluate(&n, &x, t, 0);
        let pi = ok(prove_wesolowski(&n, &ev));
        assert_eq!(
            pi,
            ok(prove_wesolowski_simple(&n, &x, t, &ev.output)),
            "T {t}"
        );
        ok(verify_wesolowski(&n, &x, t, &ev.output, &pi));
        let mu = ok(prove_pietrzak(&n, &ev));
        assert_eq!(mu.len(), proof_len(t));
        ok(verify_pietrzak(&n, &x, t, &ev.output, &mu));
        if t < 128 {
            assert_eq!(pi, U4096::ONE); // q = floor(2^T / l) = 0
        }
    }
    assert_eq!(proof_len(1), 0);
    assert_eq!(proof_len(2), 1);
    assert_eq!(proof_len(4097), 13);
    assert_eq!(proof_len(1 << 40), 40);
    assert_eq!(proof_len(1 << 63), 63);
    assert_eq!(proof_len((1 << 63) - 1), 63);
}

/// At the largest T (2^63, and the odd 2^63 - 1 whose halving rounds up) the verifiers
/// run their arithmetic without overflowing and reject a made-up proof.
#[test]
fn verifiers_reject_made_up_proofs_at_the_largest_delay() {
    let n = Modulus::rsa2048();
    let x = U4096::from_u64(3);
    let y = U4096::from_u64(5);
    for t in [wirespeed_vdf::MAX_DELAY, wirespeed_vdf::MAX_DELAY - 1] {
        assert_eq!(
            verify_wesolowski(&n, &x, t, &y, &U4096::from_u64(7)),
            Err(VdfError::ProofRejected)
        );
        let mu = vec![U4096::from_u64(7); proof_len(t)];
        assert_eq!(
            verify_pietrzak(&n, &x, t, &y, &mu),
            Err(VdfError::ProofRejected)
        );
    }
}

#[test]
fn checkpoint_intervals_do_not_change_proofs() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(4);
    let n = random_modulus(&mut rng, 1024);
    for t in [129u64, 1000, 4097] {
        let x = random_input(&mut rng, &n);
        let reference = evaluate(&n, &x, t, 0);
        let pi = ok(prove_wesolowski_simple(&n, &x, t, &reference.output));
        let mu = ok(prove_pietrzak(&n, &reference));
        for k in [1u64, 2, 7, 64, 100, 1000, t - 1, t, t + 5] {
            let ev = evaluate(&n, &x, t, k);
            assert_eq!(ev.output, reference.output);
            assert_eq!(ok(prove_wesolowski(&n, &ev)), pi, "T {t} k {k}");
            assert_eq!(ok(prove_pietrzak(&n, &ev)), mu, "T {t} k {k}");
        }
    }
}

#[test]
fn every_width_proves_and_verifies() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    for bits in [1024, 1536, 3072, 4096] {
        let n = random_modulus(&mut rng, bits);
        let x = random_input(&mut rng, &n);
        let ev = evaluate(&n, &x, 300, 16);
        for kind in [
            ProofKind::Wesolowski,
            ProofKind::Pietrzak,
            ProofKind::WesolowskiSegmented,
        ] {
            let p = ok(prove(&n, &ev, kind));
            assert_eq!(p.kind(), kind);
            ok(p.verify(&p.modulus));
        }
    }
}

/// Every bit position of a value of `bits` bits in `samples` spread positions, plus the
/// lowest and highest.
fn sample_bits(rng: &mut impl Rng, bits: usize, samples: usize) -> Vec<usize> {
    let mut v = vec![0, bits - 1];
    v.extend((0..samples).map(|_| rng.gen_range(0..bits)));
    v
}

#[test]
fn single_bit_flips_are_rejected() {
    let n = Modulus::rsa2048();
    let mut rng = rand::rngs::StdRng::seed_from_u64(6);
    for t in DELAYS {
        let x = random_input(&mut rng, &n);
        let ev = evaluate(&n, &x, t, 0);
        for kind in [
            ProofKind::Wesolowski,
            ProofKind::Pietrzak,
            ProofKind::WesolowskiSegmented,
        ] {
            let good = ok(prove(&n, &ev, kind));
            ok(good.verify(&good.modulus));
            let mut rejected = 0;
            let mut check = |p: VdfProof, what: &str| {
                assert!(
                    p.verify(&p.modulus).is_err(),
                    "{kind:?} T {t}: flip in {what} verified"
                );
                rejected += 1;
            };
            for b in sample_bits(&mut rng, 2048, 4) {
                check(
                    VdfProof {
                        y: flip(&good.y, b),
                        ..good.clone()
                    },
                    "y",
                );
                check(
                    VdfProof {
                        x: flip(&good.x, b),
                        ..good.clone()
                    },
                    "x",
                );
                let mut p = good.clone();
                match &mut p.proof {
                    Proof::Wesolowski { pi } => *pi = flip(pi, b),
                    Proof::Pietrzak { mu } if !mu.is_empty() => {
                        let i = rng.gen_range(0..mu.len());
                        mu[i] = flip(&mu[i], b);
                    }
                    Proof::Pietrzak { .. } => continue, // T = 1: no values to flip
                    Proof::WesolowskiSegmented { mids, pis, .. } => {
                        let i = rng.gen_range(0..pis.len());
                        pis[i] = flip(&pis[i], b);
                        if !mids.is_empty() {
                            let i = rng.gen_range(0..mids.len());
                            mids[i] = flip(&mids[i], b);
                        }
                    }
                }
                check(p, "proof");
                if let Ok(m) = Modulus::new(&flip(n.value(), b)) {
                    check(
                        VdfProof {
                            modulus: m,
                            ..good.clone()
                        },
                        "N",
                    );
                }
            }
            for b in 0..12 {
                check(
                    VdfProof {
                        t: t ^ (1 << b),
                        ..good.clone()
                    },
                    "T",
                );
            }
            assert!(rejected >= 12);
        }
    }
}

#[test]
fn negated_output_and_proof_are_rejected() {
    // In (Z/NZ)* the pair (-y, -pi) would pass pi^l x^r = y; canonical forms refuse it.
    let n = Modulus::rsa2048();
    let x = U4096::from_u64(5);
    let ev = evaluate(&n, &x, 1000, 0);
    let neg = |v: &U4096| n.value().overflowing_sub(v).0;
    let pi = ok(prove_wesolowski(&n, &ev));
    assert_eq!(
        verify_wesolowski(&n, &x, 1000, &neg(&ev.output), &neg(&pi)),
        Err(VdfError::OutputOutOfRange)
    );
    assert_eq!(
        verify_wesolowski(&n, &x, 1000, &ev.output, &neg(&pi)),
        Err(VdfError::ProofValueOutOfRange)
    );
    let mu = ok(prove_pietrzak(&n, &ev));
    let mut bad = mu.clone();
    bad[3] = neg(&bad[3]);
    assert_eq!(
        verify_pietrzak(&n, &x, 1000, &ev.output, &bad),
        Err(VdfError::ProofValueOutOfRange)
    );
    assert_eq!(
        verify_pietrzak(&n, &x, 1000, &ev.output, &mu[1..]),
        Err(VdfError::ProofLength {
            expected: mu.len(),
            got: mu.len() - 1
        })
    );
    // A wrong but canonical output is rejected by the equation.
    let other = n.canonical(&ev.output.overflowing_add(&U4096::ONE).0);
    assert_eq!(
        verify_wesolowski(&n, &x, 1000, &other, &pi),
        Err(VdfError::ProofRejected)
    );
}

#[test]
fn inconsistent_evaluations_are_refused() {
    let n = Modulus::rsa2048();
    let ev = evaluate(&n, &U4096::from_u64(3), 50, 10);
    let mut a = ev.clone();
    a.checkpoints.pop();
    let mut b = ev.clone();
    b.checkpoints[2].0 += 1;
    let mut c = ev.clone();
    c.checkpoint_every = 0;
    let mut d = ev.clone();
    d.output = n.value().overflowing_sub(&d.output).0;
    let mut e = ev.clone();
    e.checkpoints[0].1 = U4096::from_u64(4);
    for bad in [a, b, c, d, e] {
        assert!(matches!(
            prove_wesolowski(&n, &bad),
            Err(VdfError::InconsistentEvaluation(_))
        ));
        assert!(matches!(
            prove_pietrzak(&n, &bad),
            Err(VdfError::InconsistentEvaluation(_))
        ));
    }
    // An evaluation from another modulus.
    let mut rng = rand::rngs::StdRng::seed_from_u64(8);
    let other = random_modulus(&mut rng, 1024);
    assert!(prove_wesolowski(&other, &ev).is_err());
}

#[test]
fn proving_runs_beside_an_evaluation() {
    let n = Modulus::rsa2048();
    let first = evaluate(&n, &U4096::from_u64(7), 3000, 0);
    let (proof, second) = std::thread::scope(|s| {
        let prover = s.spawn(|| prove(&n, &first, ProofKind::Wesolowski));
        // The next segment continues from the first output while the proof is built.
        let second = evaluate(&n, &first.output, 3000, 0);
        (
            prover.join().unwrap_or_else(|_| panic!("prover panicked")),
            second,
        )
    });
    ok(ok(proof).verify(&n));
    ok(ok(prove(&n, &second, ProofKind::Pietrzak)).verify(&n));
}

#[test]
fn verification_time_at_2048_bits() {
    let n = Modulus::rsa2048();
    let x = U4096::from_u64(11);
    let t = 4097;
    let ev = evaluate(&n, &x, t, 0);
    let w = ok(prove(&n, &ev, ProofKind::Wesolowski));
    let p = ok(prove(&n, &ev, ProofKind::Pietrzak));
    let time = |proof: &VdfProof| {
        let reps = 20;
        let start = Instant::now();
        for _ in 0..reps {
            ok(proof.verify(&proof.modulus));
        }
        start.elapsed().as_secs_f64() * 1e3 / reps as f64
    };
    let (tw, tp) = (time(&w), time(&p));
    eprintln!(
        "verify at 2048 bits, T = {t}: Wesolowski {tw:.3} ms, Pietrzak ({} values) {tp:.3} ms",
        proof_len(t)
    );
}

#[test]
fn larger_delay_with_default_checkpoints() {
    // T = 2^16 + 3 with the default interval k = ceil(T / (DEFAULT_CHECKPOINTS - 1)) > 1:
    // the windowed prover uses several windows per block and Pietrzak's tree starts from
    // checkpoints off its leaves.
    let mut rng = rand::rngs::StdRng::seed_from_u64(12);
    let n = random_modulus(&mut rng, 1024);
    let x = random_input(&mut rng, &n);
    let t = (1 << 16) + 3;
    let start = Instant::now();
    let ev = evaluate(&n, &x, t, 0);
    let t_eval = start.elapsed();
    let k = t.div_ceil(wirespeed_vdf::eval::DEFAULT_CHECKPOINTS - 1);
    assert!(k > 1);
    assert_eq!(ev.checkpoint_every, k);
    let start = Instant::now();
    let w = ok(prove(&n, &ev, ProofKind::Wesolowski));
    let t_w = start.elapsed();
    let start = Instant::now();
    let p = ok(prove(&n, &ev, ProofKind::Pietrzak));
    let t_p = start.elapsed();
    let Proof::Wesolowski { pi } = &w.proof else {
        unreachable!()
    };
    assert_eq!(*pi, ok(prove_wesolowski_simple(&n, &x, t, &ev.output)));
    let Proof::Pietrzak { mu } = &p.proof else {
        unreachable!()
    };
    assert_eq!(*mu, ok(prove_pietrzak(&n, &evaluate(&n, &x, t, t + 1))));
    ok(w.verify(&w.modulus));
    ok(p.verify(&p.modulus));
    eprintln!(
        "1024 bits, T = {t}: eval {:.1} ms, Wesolowski prover {:.1} ms, Pietrzak prover {:.1} ms",
        t_eval.as_secs_f64() * 1e3,
        t_w.as_secs_f64() * 1e3,
        t_p.as_secs_f64() * 1e3
    );
}

#[test]
fn a_proof_verifies_only_in_the_group_the_caller_trusts() {
    let rsa = Modulus::rsa2048();
    let x = U4096::from_u64(7);
    let ev = evaluate(&rsa, &x, 500, 0);
    let proof = prove(&rsa, &ev, ProofKind::Wesolowski).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(proof.verify(&rsa), Ok(()));
    // The same statement about another odd 2048-bit N is not the trusted group's.
    let other = Modulus::new(
        &U4096::from_hex(&format!("{}{}", "f".repeat(511), "7")).unwrap_or_else(|e| panic!("{e}")),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let ev2 = evaluate(&other, &x, 500, 0);
    let foreign = prove(&other, &ev2, ProofKind::Pietrzak).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(foreign.verify(&other), Ok(()));
    assert_eq!(
        foreign.verify(&rsa),
        Err(VdfError::UntrustedModulus {
            proof: other.fingerprint(),
            trusted: rsa.fingerprint(),
        })
    );
    assert_ne!(other.fingerprint(), rsa.fingerprint());
    assert_eq!(rsa.fingerprint().len(), 16);
}
