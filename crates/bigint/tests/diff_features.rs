//! The scalar and the widest kernel, chosen only by the CPU features passed in: a
//! context built with `CpuFeatures::none()` (portable rows) and one built with this
//! CPU's features (ADX rows, or radix-2^52 IFMA) give the same results on random
//! moduli and operands, outside Montgomery form (the two radices differ); and the
//! Baillie-PSW test and its two halves give the same answers built for either.

use rand::{Rng, SeedableRng};
use wirespeed_bigint::prime::{is_probable_prime_with, miller_rabin_base2_with, strong_lucas_with};
use wirespeed_bigint::{CpuFeatures, DynMontCtx, Kernel, Uint, U4096};

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

/// The primality answers on `n` for the features `f`.
fn prime_answers<const L: usize>(n: &Uint<L>, f: &CpuFeatures) -> [bool; 3] {
    [
        is_probable_prime_with(n, f),
        miller_rabin_base2_with(n, f),
        strong_lucas_with(n, f),
    ]
}

/// `cases` random odd numbers of exactly 64 L bits: the same answers for no features and
/// for this CPU's; returns how many are prime.
fn primality_agrees<const L: usize>(rng: &mut impl Rng, cases: usize) -> usize {
    let widest = CpuFeatures::get();
    let none = CpuFeatures::none();
    let mut primes = 0;
    for i in 0..cases {
        let mut n = Uint::<L>([0; L]);
        n.0.iter_mut().for_each(|l| *l = rng.gen());
        n.0[L - 1] |= 1 << 63;
        n.0[0] |= 1;
        let answers = prime_answers(&n, &none);
        assert_eq!(answers, prime_answers(&n, widest), "{L} limbs, case {i}");
        primes += answers[0] as usize;
    }
    primes
}

#[test]
fn primality_tests_agree() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(19);
    // About 1 in 44 odd 128-bit numbers is prime, 1 in 89 at 256 bits, 1 in 355 at 1024
    // (where IFMA runs radix 2^52): primes and composites both seen at every width.
    assert!(primality_agrees::<2>(&mut rng, 3000) > 20);
    assert!(primality_agrees::<4>(&mut rng, 3000) > 10);
    assert!(primality_agrees::<16>(&mut rng, 400) > 0);
    // 2^521 - 1 (a Mersenne prime) and 2^523 - 1 (composite; it passes base 2, as every
    // Mersenne number does, and fails Lucas).
    let mersenne = |p: usize| {
        let mut m = Uint::<16>([0; 16]);
        for b in 0..p {
            m.0[b / 64] |= 1 << (b % 64);
        }
        m
    };
    for f in [CpuFeatures::none(), CpuFeatures::get().clone()] {
        assert_eq!(prime_answers(&mersenne(521), &f), [true, true, true]);
        assert_eq!(prime_answers(&mersenne(523), &f), [false, true, false]);
    }
}
