//! `DynMontCtx` against num-bigint as the oracle: moduli of many sizes, word-aligned and
//! not (odd bit lengths and odd limb counts inside each working width: 67, 521, 1023,
//! 1025, 1537, 2047, 2049, 3001, 3073, 4095 bits and the full widths), every available
//! kernel, random operands and the edge values 0, 1 and n - 1: Montgomery form in and
//! out, mul, sqr, chains of squarings, public-exponent and constant-time powers, and
//! the same results through `with_width!` on the inner fixed-width context.

use num_bigint::BigUint;
use rand::{Rng, SeedableRng};
use wirespeed_bigint::{with_width, DynMontCtx, Kernel, Uint, U4096};

fn big(a: &U4096) -> BigUint {
    a.to_biguint()
}

fn from_big(b: &BigUint) -> U4096 {
    U4096::try_from_biguint(b).unwrap_or_else(|e| panic!("{e}"))
}

/// A random odd modulus of exactly `bits` bits.
fn modulus(rng: &mut impl Rng, bits: usize) -> BigUint {
    let bytes: Vec<u8> = (0..bits.div_ceil(8)).map(|_| rng.gen()).collect();
    let v = BigUint::from_bytes_be(&bytes) % (BigUint::from(1u8) << (bits - 1));
    (v + (BigUint::from(1u8) << (bits - 1))) | BigUint::from(1u8)
}

fn below(rng: &mut impl Rng, n: &BigUint) -> BigUint {
    let bytes: Vec<u8> = (0..n.to_bytes_be().len() + 8).map(|_| rng.gen()).collect();
    BigUint::from_bytes_be(&bytes) % n
}

fn check(seed: u64, sizes: &[usize], per_modulus: usize) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let kernels: Vec<Kernel> = [Kernel::Portable, Kernel::Adx, Kernel::Ifma]
        .into_iter()
        .filter(Kernel::available)
        .collect();
    for &bits in sizes {
        let nb = modulus(&mut rng, bits);
        for &kernel in &kernels {
            let ctx = DynMontCtx::from_biguint(&nb)
                .unwrap_or_else(|e| panic!("{e}"))
                .with_kernel(kernel);
            assert_eq!(ctx.kernel(), kernel);
            assert_eq!(ctx.bits(), bits);
            assert_eq!(Some(ctx.limbs()), DynMontCtx::limbs_for(bits));
            assert_eq!(big(&ctx.modulus()), nb);
            let r = BigUint::from(1u8) << ctx.radix_bits();
            let rinv = r.modinv(&nb).unwrap_or_else(|| panic!("R invertible"));
            assert_eq!(big(&ctx.one()), &r % &nb, "one, {bits} bits");
            let mut values = vec![BigUint::ZERO, BigUint::from(1u8), &nb - 1u8];
            values.extend((0..per_modulus).map(|_| below(&mut rng, &nb)));
            for (i, ab) in values.iter().enumerate() {
                let bb = &values[(i * 7 + 3) % values.len()];
                let (a, b) = (from_big(ab), from_big(bb));
                let what = format!("{bits} bits, {kernel:?}, value {i}");
                assert_eq!(big(&ctx.mul(&a, &b)), ab * bb * &rinv % &nb, "mul, {what}");
                assert_eq!(big(&ctx.sqr(&a)), ab * ab * &rinv % &nb, "sqr, {what}");
                let am = ctx.to_mont(&a);
                assert_eq!(big(&am), ab * &r % &nb, "to_mont, {what}");
                assert_eq!(ctx.from_mont(&am), a, "from_mont, {what}");
                let k = 1 + (i as u64 % 20);
                assert_eq!(
                    big(&ctx.from_mont(&ctx.sqr_n(&am, k))),
                    ab.modpow(&(BigUint::from(1u8) << k), &nb),
                    "sqr_n({k}), {what}"
                );
                // Public exponents: empty, small, and long enough for every window.
                let long: Vec<u64> = (0..1 + i % 12).map(|_| rng.gen()).collect();
                for e in [&[][..], &[1], &[65537], long.as_slice()] {
                    let eb = e
                        .iter()
                        .rev()
                        .fold(BigUint::ZERO, |acc, &l| (acc << 64usize) + l);
                    let want = ab.modpow(&eb, &nb);
                    assert_eq!(
                        big(&ctx.from_mont(&ctx.vartime_pow(&am, e))),
                        want,
                        "vartime_pow, {what}"
                    );
                    assert_eq!(big(&ctx.vartime_modpow(&a, e)), want, "modpow, {what}");
                }
                // Constant-time powers over the whole working width (one value a
                // modulus: each costs 64 L multiplications).
                if i == 3 {
                    let top = BigUint::from(1u8) << (64 * ctx.limbs());
                    let e = below(&mut rng, &top);
                    let want = ab.modpow(&e, &nb);
                    let ef = from_big(&e);
                    assert_eq!(
                        big(&ctx.from_mont(&ctx.pow_ct(&am, &ef))),
                        want,
                        "pow_ct, {what}"
                    );
                    assert_eq!(big(&ctx.modpow_ct(&a, &ef)), want, "modpow_ct, {what}");
                }
                // The inner fixed-width context gives the same product.
                let inner = with_width!(&ctx, c => {
                    c.mul(&a.resize(), &b.resize()).resize::<64>()
                });
                assert_eq!(inner, ctx.mul(&a, &b), "with_width, {what}");
            }
        }
    }
}

#[test]
fn small_and_1024_bit_moduli() {
    check(1, &[3, 67, 521, 1023, 1024], 8);
}

#[test]
fn moduli_up_to_2048_bits() {
    check(2, &[1025, 1537, 2047, 2048], 5);
}

#[test]
fn moduli_up_to_4096_bits() {
    check(3, &[2049, 3001, 3072, 3073, 4095, 4096], 3);
}

#[test]
fn values_travel_as_u4096_with_zero_high_limbs() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(4);
    let nb = modulus(&mut rng, 1537);
    let ctx = DynMontCtx::from_biguint(&nb).unwrap_or_else(|e| panic!("{e}"));
    let a = from_big(&below(&mut rng, &nb));
    for v in [ctx.to_mont(&a), ctx.sqr(&a), ctx.one(), ctx.modulus()] {
        assert!(v.0[ctx.limbs()..].iter().all(|&l| l == 0));
    }
    assert_eq!(Uint::<64>::ZERO, ctx.mul(&a, &U4096::ZERO));
}
