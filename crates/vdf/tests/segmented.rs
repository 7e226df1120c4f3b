//! Segmented Wesolowski proofs: valid proofs verify for T from 1 to 5000 (T not a
//! multiple of the segment count, T below it, segments of one squaring), the proof built
//! beside the evaluation equals the one built afterwards, tampering with any intermediate
//! value, any segment proof, any length, T, x or y is rejected, the layouts fit T, and each
//! segment's challenge changes with every field of the statement and of its place.

mod common;

use common::{ok, random_modulus};

use rand::SeedableRng;
use wirespeed_vdf::segmented::{segment_challenge, segment_lengths, MAX_SEGMENTS, SEGMENT_WEIGHTS};
use wirespeed_vdf::{
    eval, eval_segmented, prove, EvalOptions, Evaluation, Modulus, Proof, ProofKind, VdfError,
    VdfProof, U4096,
};

fn opts(k: u64) -> EvalOptions<'static> {
    EvalOptions {
        checkpoint_every: k,
        progress: None,
    }
}

fn segmented(n: &Modulus, x: &U4096, t: u64, k: u64) -> (Evaluation, VdfProof) {
    ok(eval_segmented(n, x, t, &opts(k)))
}

fn parts(p: &VdfProof) -> (&Vec<u64>, &Vec<U4096>, &Vec<U4096>) {
    match &p.proof {
        Proof::WesolowskiSegmented { lengths, mids, pis } => (lengths, mids, pis),
        other => panic!("not segmented: {other:?}"),
    }
}

#[test]
fn layouts_fit_t() {
    for t in (1..300).chain([1000, 4097, 1 << 20, (1 << 24) + 7, u64::MAX >> 1]) {
        for k in [1, 2, 3, 7, 64, 1000, 1 << 20, u64::MAX] {
            let l = segment_lengths(t, k);
            assert!(
                !l.is_empty() && l.len() <= SEGMENT_WEIGHTS.len(),
                "T {t} k {k}"
            );
            assert_eq!(l.iter().sum::<u64>(), t, "T {t} k {k}: {l:?}");
            assert!(l.iter().all(|&x| x > 0));
            // Boundaries on checkpoints, the last segment holding T mod k.
            let mut at = 0;
            for &x in &l[..l.len() - 1] {
                at += x;
                assert_eq!(at % k.max(1), 0, "T {t} k {k}: {l:?}");
            }
        }
    }
    // The default layout at T = 2^24: 18 segments, the last about T / 831.
    let l = segment_lengths(1 << 24, (1u64 << 24).div_ceil(16383));
    assert_eq!(l.len(), 18);
    assert!(*l.last().unwrap() < (1 << 24) / 750, "{l:?}");
}

#[test]
fn valid_proofs_verify_and_match_the_after_the_fact_prover() {
    let n = Modulus::rsa2048();
    let x = U4096::from_u64(5);
    for t in (1..=20).chain([127, 128, 129, 255, 1000, 1024, 4097, 5000]) {
        for k in [0, 1, 3, 64] {
            let (ev, p) = segmented(&n, &x, t, k);
            assert_eq!(ev, ok(eval(&n, &x, t, &opts(k))), "T {t} k {k}");
            assert_eq!(p.y, ev.output);
            ok(p.verify(&n));
            assert_eq!(p.kind(), ProofKind::WesolowskiSegmented);
            let after = ok(prove(&n, &ev, ProofKind::WesolowskiSegmented));
            assert_eq!(after, p, "T {t} k {k}");
            let (lengths, mids, pis) = parts(&p);
            assert_eq!(lengths.iter().sum::<u64>(), t);
            assert_eq!((mids.len() + 1, pis.len()), (lengths.len(), lengths.len()));
        }
    }
    // Other widths.
    let mut rng = rand::rngs::StdRng::seed_from_u64(24);
    for bits in [1024, 1536, 3072, 4096] {
        let m = random_modulus(&mut rng, bits);
        let (_, p) = segmented(&m, &x, 3000, 0);
        ok(p.verify(&m));
    }
}

#[test]
fn tampering_is_rejected() {
    let n = Modulus::rsa2048();
    let (_, good) = segmented(&n, &U4096::from_u64(7), 2000, 16);
    let s = parts(&good).0.len();
    assert!(s >= 8, "{s} segments");
    let rejected = |p: &VdfProof, what: &str| match p.verify(&n) {
        Err(VdfError::ProofRejected | VdfError::SegmentLayout(_)) => {}
        other => panic!("{what}: {other:?}"),
    };
    let canon = |v: U4096| n.canonical(&v);
    // Every intermediate value and every segment proof.
    for j in 0..s {
        let mut p = good.clone();
        if let Proof::WesolowskiSegmented { pis, .. } = &mut p.proof {
            pis[j] = canon(pis[j].overflowing_add(&U4096::ONE).0);
        }
        rejected(&p, &format!("pi {j}"));
        if j + 1 < s {
            let mut p = good.clone();
            if let Proof::WesolowskiSegmented { mids, .. } = &mut p.proof {
                mids[j] = canon(mids[j].overflowing_add(&U4096::ONE).0);
            }
            rejected(&p, &format!("mid {j}"));
        }
    }
    // Swapped proofs, moved boundaries (same total), T, x and y.
    let mut p = good.clone();
    if let Proof::WesolowskiSegmented { pis, .. } = &mut p.proof {
        pis.swap(0, 1);
    }
    rejected(&p, "swapped pis");
    let mut p = good.clone();
    if let Proof::WesolowskiSegmented { lengths, .. } = &mut p.proof {
        lengths[0] += 1;
        lengths[1] -= 1;
    }
    rejected(&p, "moved boundary");
    let mut p = good.clone();
    if let Proof::WesolowskiSegmented { lengths, .. } = &mut p.proof {
        let last = lengths.len() - 1;
        lengths[last] += 1;
    }
    p.t += 1;
    rejected(&p, "T + 1 with the last segment longer");
    let mut p = good.clone();
    p.t -= 1;
    assert!(matches!(p.verify(&n), Err(VdfError::SegmentLayout(_))));
    let mut p = good.clone();
    p.x = U4096::from_u64(8);
    rejected(&p, "x");
    let mut p = good.clone();
    p.y = canon(p.y.overflowing_add(&U4096::ONE).0);
    rejected(&p, "y");
    // The first segment proof of another chain spliced onto this one (the short
    // segments' proofs are 1 in every chain: q = 0 below 128 squarings).
    let (_, other) = segmented(&n, &U4096::from_u64(11), 2000, 16);
    let mut p = good.clone();
    if let (Proof::WesolowskiSegmented { pis, .. }, Proof::WesolowskiSegmented { pis: o, .. }) =
        (&mut p.proof, &other.proof)
    {
        assert_ne!(pis[0], o[0]);
        pis[0] = o[0];
    }
    rejected(&p, "foreign segment proof");
    // -y (not canonical) and out-of-range values are refused before any check.
    let mut p = good.clone();
    p.y = n.value().overflowing_sub(&good.y).0;
    assert_eq!(p.verify(&n), Err(VdfError::OutputOutOfRange));
    let mut p = good.clone();
    if let Proof::WesolowskiSegmented { mids, .. } = &mut p.proof {
        mids[0] = n.value().overflowing_sub(&mids[0]).0;
    }
    assert_eq!(p.verify(&n), Err(VdfError::ProofValueOutOfRange));
    ok(good.verify(&n));
}

/// Changes a segmented proof's lengths, intermediate values and proofs.
type Edit = dyn Fn(&mut Vec<u64>, &mut Vec<U4096>, &mut Vec<U4096>);

#[test]
fn malformed_layouts_are_typed_errors() {
    let n = Modulus::rsa2048();
    let (_, good) = segmented(&n, &U4096::from_u64(7), 300, 10);
    let layout = |f: &Edit| {
        let mut p = good.clone();
        if let Proof::WesolowskiSegmented { lengths, mids, pis } = &mut p.proof {
            f(lengths, mids, pis);
        }
        match p.verify(&n) {
            Err(VdfError::SegmentLayout(why)) => why,
            other => panic!("{other:?}"),
        }
    };
    layout(&|l, m, p| {
        l.clear();
        m.clear();
        p.clear();
    });
    layout(&|_, m, _| {
        m.pop();
    });
    layout(&|_, _, p| {
        p.pop();
    });
    layout(&|l, _, _| {
        l[0] = 0;
        l[1] += l[0];
    });
    layout(&|l, _, _| {
        l[0] = u64::MAX;
    });
    layout(&|l, m, p| {
        *l = vec![1; MAX_SEGMENTS + 1];
        *m = vec![U4096::ONE; MAX_SEGMENTS];
        *p = vec![U4096::ONE; MAX_SEGMENTS + 1];
    });
}

#[test]
fn runs_beside_a_progress_callback() {
    let n = Modulus::rsa2048();
    let last = std::cell::Cell::new(0u64);
    let tick = |d: u64| {
        assert!(d >= last.get());
        last.set(d);
    };
    let o = EvalOptions {
        checkpoint_every: 0,
        progress: Some(&tick),
    };
    let (_, p) = ok(eval_segmented(&n, &U4096::from_u64(3), 70_000, &o));
    assert_eq!(last.get(), 70_000);
    ok(p.verify(&n));
}

#[test]
fn each_challenge_binds_the_whole_statement_and_its_place() {
    let n = Modulus::rsa2048();
    let (x, t, s, j, start, len) = (U4096::from_u64(3), 1000u64, 5usize, 2usize, 400u64, 200u64);
    let (from, to) = (U4096::from_u64(12345), U4096::from_u64(67890));
    let base = segment_challenge(&n, &x, t, s, j, start, len, &from, &to);
    let other = U4096::from_u64(4);
    let variants = [
        segment_challenge(&n, &other, t, s, j, start, len, &from, &to),
        segment_challenge(&n, &x, t + 1, s, j, start, len, &from, &to),
        segment_challenge(&n, &x, t, s + 1, j, start, len, &from, &to),
        segment_challenge(&n, &x, t, s, j + 1, start, len, &from, &to),
        segment_challenge(&n, &x, t, s, j, start + 1, len, &from, &to),
        segment_challenge(&n, &x, t, s, j, start, len + 1, &from, &to),
        segment_challenge(&n, &x, t, s, j, start, len, &other, &to),
        segment_challenge(&n, &x, t, s, j, start, len, &from, &other),
    ];
    for (i, v) in variants.iter().enumerate() {
        assert_ne!(*v, base, "field {i} is not bound");
    }
    assert!(base >> 127 == 1 && base & 1 == 1);
    assert!(wirespeed_vdf::prime::is_probable_prime(base));
    // Not the single proof's challenge for the same segment statement.
    assert_ne!(
        base,
        wirespeed_vdf::wesolowski::challenge(&n, &from, &to, len)
    );
}
