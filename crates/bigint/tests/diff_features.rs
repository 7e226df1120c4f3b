//! The scalar and the widest kernel, chosen only by the CPU features passed in: a
//! context built with `CpuFeatures::none()` (portable rows) and one built with this
//! CPU's features (ADX rows, or radix-2^52 IFMA) give the same results on random
//! moduli and operands, outside Montgomery form (the two radices differ).

use rand::{Rng, SeedableRng};
use wirespeed_bigint::{CpuFeatures, DynMontCtx, Kernel, U4096};

fn random_below_bits(rng: &mut impl Rng, bits: usize) -> U4096 {
    let mut v = U4096::ZERO;
    for (i, l) in v.0.iter_mut().enumerate() {
        if 64 * i < bits {
            *l = rng.gen();
            if bits - 64 * i < 64 {
                *l &= (1u64 << (bits - 64 * i)) - 1;
            }
        }
    }
    v
}

#[test]
fn scalar_and_widest_kernels_agree() {
    let widest = CpuFeatures::get();
    let none = CpuFeatures::none();
    assert_eq!(Kernel::best_on(&none), Kernel::Portable);
    let mut rng = rand::rngs::StdRng::seed_from_u64(18);
    for bits in [521usize, 1024, 1537, 2048, 3072, 4095] {
        let mut n = random_below_bits(&mut rng, bits);
        n.0[0] |= 1;
        n.0[(bits - 1) / 64] |= 1u64 << ((bits - 1) % 64);
        let scalar = DynMontCtx::new_with(&n, &none).unwrap_or_else(|e| panic!("{e}"));
        let wide = DynMontCtx::new_with(&n, widest).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(scalar.kernel(), Kernel::Portable);
        assert_eq!(wide.kernel(), Kernel::best_on(widest));
        for i in 0..6 {
            let a = random_below_bits(&mut rng, bits - 1);
            let b = random_below_bits(&mut rng, bits - 1);
            let e = random_below_bits(&mut rng, 64 * (1 + i));
            let what = format!("{bits} bits, case {i}, {:?}", wide.kernel());
            let prod = |c: &DynMontCtx| c.from_mont(&c.mul(&c.to_mont(&a), &c.to_mont(&b)));
            assert_eq!(prod(&scalar), prod(&wide), "mul, {what}");
            let chain = |c: &DynMontCtx| c.from_mont(&c.sqr_n(&c.to_mont(&a), 17));
            assert_eq!(chain(&scalar), chain(&wide), "sqr_n, {what}");
            assert_eq!(
                scalar.modpow_ct(&a, &e),
                wide.modpow_ct(&a, &e),
                "modpow_ct, {what}"
            );
            assert_eq!(
                scalar.vartime_modpow(&a, &e.0[..1 + i]),
                wide.vartime_modpow(&a, &e.0[..1 + i]),
                "vartime_modpow, {what}"
            );
        }
    }
}
