//! Moduli built for a CPU without features (`CpuFeatures::none()`: the portable
//! Montgomery kernel) and for this CPU (its widest kernel: ADX rows or radix-2^52 IFMA)
//! give the same evaluations, checkpoints and proofs at every working width, verify each
//! other's proofs, and make the same time-lock puzzles from the same random draws.

mod common;

use common::{ok, random_odd};

use rand::{Rng, SeedableRng};
use wirespeed_bigint::Uint;
use wirespeed_vdf::timelock::create_with;
use wirespeed_vdf::{eval, prove, CpuFeatures, EvalOptions, Kernel, Modulus, ProofKind, U4096};

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
            for kind in [ProofKind::Wesolowski, ProofKind::Pietrzak] {
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
