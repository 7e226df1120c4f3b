//! Montgomery arithmetic against num-bigint as the oracle: random odd moduli of every
//! size in use (and extreme ones), random operands and the edge values 0, 1, n - 1.

use num_bigint::BigUint;
use rand::{Rng, SeedableRng};
use wirespeed_bigint::{Kernel, MontCtx, MontError, Uint};

fn big<const L: usize>(a: &Uint<L>) -> BigUint {
    BigUint::from_bytes_be(&a.to_be_bytes())
}

fn from_big<const L: usize>(b: &BigUint) -> Uint<L> {
    Uint::from_be_bytes(&b.to_bytes_be()).unwrap_or_else(|e| panic!("{e}"))
}

fn rand_uint<const L: usize>(rng: &mut impl Rng, bits: usize) -> Uint<L> {
    let mut l = [0u64; L];
    rng.fill(&mut l[..]);
    let mut x = Uint(l);
    if bits < 64 * L {
        x = x.shr(64 * L - bits);
    }
    x
}

fn moduli<const L: usize>(rng: &mut impl Rng) -> Vec<Uint<L>> {
    let top = 64 * L;
    let mut v = vec![
        Uint([u64::MAX; L]),                                  // 2^(64L) - 1
        Uint::<L>::from_u64(3),                               // tiny
        from_big(&((BigUint::from(1u8) << (top - 1)) + 1u8)), // 2^(64L-1) + 1
    ];
    for bits in [top, top - 1, top - 63, top / 2 + 1] {
        for _ in 0..4 {
            let mut n = rand_uint::<L>(rng, bits);
            n.0[0] |= 1;
            if n.bits() > 1 {
                v.push(n);
            }
        }
    }
    v
}

fn check<const L: usize>(seed: u64, per_modulus: usize) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let kernels: Vec<Kernel> = [Kernel::Portable, Kernel::Adx, Kernel::Ifma]
        .into_iter()
        .filter(Kernel::available)
        .collect();
    for (n, kernel) in moduli::<L>(&mut rng)
        .into_iter()
        .flat_map(|n| kernels.iter().map(move |k| (n, *k)))
    {
        let ctx = MontCtx::new(&n)
            .unwrap_or_else(|e| panic!("{e}"))
            .with_kernel(kernel);
        assert_eq!(ctx.kernel(), kernel);
        let nb = big(&n);
        let r = BigUint::from(1u8) << ctx.radix_bits();
        let rinv = r
            .modinv(&nb)
            .unwrap_or_else(|| panic!("R invertible mod odd n"));
        let nm1 = from_big::<L>(&(&nb - 1u8));
        let mut values = vec![Uint::ZERO, Uint::ONE, nm1];
        for _ in 0..per_modulus {
            values.push(from_big(&(big(&rand_uint::<L>(&mut rng, 64 * L)) % &nb)));
        }
        for (i, a) in values.iter().enumerate() {
            let b = &values[(i * 7 + 3) % values.len()];
            let (ab, bb) = (big(a), big(b));
            assert_eq!(
                big(&ctx.mul(a, b)),
                (&ab * &bb * &rinv) % &nb,
                "mul, n = {n:?}"
            );
            assert_eq!(
                big(&ctx.sqr(a)),
                (&ab * &ab * &rinv) % &nb,
                "sqr, n = {n:?}"
            );
            let am = ctx.to_mont(a);
            assert_eq!(big(&am), (&ab * &r) % &nb);
            assert_eq!(ctx.from_mont(&am), *a);
            // A chain of squarings, converted only at the ends.
            let k = 1 + (i as u64 % 40);
            let want = ab.modpow(&(BigUint::from(1u8) << k), &nb);
            assert_eq!(big(&ctx.from_mont(&ctx.sqr_n(&am, k))), want, "2^{k} chain");
            // Public-exponent power.
            let e = [rng.gen::<u64>(), rng.gen::<u64>() >> (i % 64)];
            let eb = BigUint::from(e[0]) + (BigUint::from(e[1]) << 64);
            assert_eq!(
                big(&ctx.from_mont(&ctx.vartime_pow(&am, &e))),
                ab.modpow(&eb, &nb)
            );
            // Longer exponents reach every sliding-window width (up to 6 bits past 672
            // exponent bits); short ones include 0, 1, 2 and 65537.
            let long: Vec<u64> = (0..1 + i % 13).map(|_| rng.gen::<u64>()).collect();
            let short = [[0u64].as_slice(), &[1], &[2], &[65537], &[]][i % 5];
            for e in [long.as_slice(), short] {
                let eb = e
                    .iter()
                    .rev()
                    .fold(BigUint::from(0u8), |acc, &l| (acc << 64usize) + l);
                assert_eq!(
                    big(&ctx.from_mont(&ctx.vartime_pow(&am, e))),
                    ab.modpow(&eb, &nb),
                    "vartime_pow, {} exponent limbs",
                    e.len()
                );
            }
            // Constant-time power over all 64 L exponent bits (one random base per
            // modulus and kernel: each costs 64 L multiplications), alone and paired
            // with a power under another modulus of the same width.
            if i != 3 {
                continue;
            }
            let other_n = from_big::<L>(&((&nb >> 1usize) | BigUint::from(1u8)));
            if other_n.bits() > 1 {
                let other = MontCtx::new(&other_n)
                    .unwrap_or_else(|e| panic!("{e}"))
                    .with_kernel(kernel);
                let onb = big(&other_n);
                let b2 = from_big::<L>(&(&ab % &onb));
                let e2 = rand_uint::<L>(&mut rng, 64 * L);
                let (x, y) = ctx.pow_ct_pair(
                    &am,
                    &rand_uint::<L>(&mut rng, 0),
                    &other,
                    &other.to_mont(&b2),
                    &e2,
                );
                assert_eq!(
                    big(&ctx.from_mont(&x)),
                    BigUint::from(1u8) % &nb,
                    "pair, e = 0"
                );
                assert_eq!(
                    big(&other.from_mont(&y)),
                    big(&b2).modpow(&big(&e2), &onb),
                    "pair, {kernel:?}"
                );
            }
            let ef = rand_uint::<L>(&mut rng, 64 * L - (i % 3) * 17);
            assert_eq!(
                big(&ctx.from_mont(&ctx.pow_ct(&am, &ef))),
                ab.modpow(&big(&ef), &nb),
                "pow_ct, {kernel:?}"
            );
        }
        // Reduction of values >= n.
        let x = rand_uint::<L>(&mut rng, 64 * L);
        assert_eq!(big(&ctx.from_mont(&ctx.reduce_to_mont(&x))), big(&x) % &nb);
    }
}

#[test]
fn one_limb() {
    check::<1>(1, 50);
}

#[test]
fn four_limbs() {
    check::<4>(2, 30);
}

#[test]
fn u1024() {
    check::<16>(3, 12);
}

#[test]
fn u2048() {
    check::<32>(4, 6);
}

#[test]
fn odd_lengths_use_the_remainder_loop() {
    // Limb counts that are not multiples of 4 exercise the kernel's single-limb loop.
    check::<3>(7, 20);
    check::<5>(8, 20);
    check::<7>(9, 10);
}

#[test]
fn u1536_u3072_and_u4096() {
    check::<24>(12, 3);
    check::<48>(5, 2);
    check::<64>(6, 2);
}

#[test]
fn shifts_and_wrapping_mul_match_num_bigint() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let top = BigUint::from(1u8) << 256usize;
    for _ in 0..500 {
        let (a, b) = (rand_uint::<4>(&mut rng, 256), rand_uint::<4>(&mut rng, 256));
        let n = rng.gen_range(0..256usize);
        assert_eq!(big(&a.shl(n)), (big(&a) << n) % &top);
        assert_eq!(big(&a.shr(n)), big(&a) >> n);
        assert_eq!(big(&a.wrapping_mul(&b)), (big(&a) * big(&b)) % &top);
    }
}

#[test]
fn bad_moduli_are_typed_errors() {
    assert_eq!(
        MontCtx::new(&Uint::<4>::from_u64(10)).err(),
        Some(MontError::EvenModulus)
    );
    assert_eq!(
        MontCtx::new(&Uint::<4>::ONE).err(),
        Some(MontError::ModulusOne)
    );
    assert_eq!(
        MontCtx::new(&Uint::<4>::ZERO).err(),
        Some(MontError::EvenModulus)
    );
}

#[test]
fn parsing_round_trips_and_rejects() {
    let x = Uint::<4>::from_hex("0x1234abcdEF").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(x.to_hex(), "1234abcdef");
    assert_eq!(
        Uint::<1>::from_hex("00000000000000000000ff").map(|v| v.0[0]),
        Ok(255)
    );
    assert!(Uint::<1>::from_hex("1ffffffffffffffff").is_err());
    assert!(Uint::<1>::from_hex("12g4").is_err());
    assert!(Uint::<1>::from_hex("").is_err());
    assert!(Uint::<1>::from_be_bytes(&[1; 9]).is_err());
    assert_eq!(
        Uint::<2>::from_be_bytes(&[0, 0, 0, 1, 2]).map(|v| v.0[0]),
        Ok(0x0102)
    );
}

/// Long squaring chains (the VDF shape) agree across kernels and with num-bigint, for
/// every width that has a radix-2^52 IFMA chain and for moduli of many shapes.
fn long_chains<const L: usize>(seed: u64, steps: u64) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    for n in moduli::<L>(&mut rng) {
        let nb = big(&n);
        let x = from_big::<L>(&(big(&rand_uint::<L>(&mut rng, 64 * L)) % &nb));
        let want = big(&x).modpow(&(BigUint::from(1u8) << steps), &nb);
        for kernel in [Kernel::Portable, Kernel::Adx, Kernel::Ifma] {
            if !kernel.available() {
                continue;
            }
            let ctx = MontCtx::new(&n)
                .unwrap_or_else(|e| panic!("{e}"))
                .with_kernel(kernel);
            for edge in [Uint::ZERO, Uint::ONE, from_big(&(&nb - 1u8))] {
                let got = ctx.from_mont(&ctx.sqr_n(&ctx.to_mont(&edge), 9));
                assert_eq!(big(&got), big(&edge).modpow(&BigUint::from(512u16), &nb));
            }
            let got = ctx.from_mont(&ctx.sqr_n(&ctx.to_mont(&x), steps));
            assert_eq!(big(&got), want, "{kernel:?}, n = {n:?}");
        }
    }
}

#[test]
fn long_chains_all_kernels() {
    long_chains::<16>(21, 3000);
    long_chains::<24>(25, 2000);
    long_chains::<32>(22, 1500);
    long_chains::<48>(23, 300);
    long_chains::<64>(24, 200);
}
