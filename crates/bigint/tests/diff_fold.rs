//! The folding kernel against num-bigint: squaring chains (`MontCtx::sqr_n` from
//! `FOLD_MIN` squarings on with IFMA, and the kernel directly on short chains) and the
//! constant-time pair power, on random and extreme moduli of 1024, 1536 and 2048 bits and
//! the edge values 0, 1, n - 1. Skips (saying so) where the CPU has no AVX-512 IFMA.

#![cfg(target_arch = "x86_64")]

use num_bigint::BigUint;
use rand::{Rng, SeedableRng};
use wirespeed_bigint::fold::{digits_for, Fold};
use wirespeed_bigint::mont::FOLD_MIN;
use wirespeed_bigint::{Kernel, MontCtx, Uint};

fn big<const L: usize>(a: &Uint<L>) -> BigUint {
    BigUint::from_bytes_be(&a.to_be_bytes())
}

fn from_big<const L: usize>(b: &BigUint) -> Uint<L> {
    Uint::from_be_bytes(&b.to_bytes_be()).unwrap_or_else(|e| panic!("{e}"))
}

fn rand_below<const L: usize>(rng: &mut impl Rng, n: &BigUint) -> Uint<L> {
    let mut l = [0u64; L];
    rng.fill(&mut l[..]);
    from_big(&(big(&Uint(l)) % n))
}

fn moduli<const L: usize>(rng: &mut impl Rng) -> Vec<Uint<L>> {
    let top = 64 * L;
    let one = BigUint::from(1u8);
    let mut v = vec![
        Uint([u64::MAX; L]),
        Uint::<L>::from_u64(3),
        from_big(&((&one << (top - 1)) + 1u8)),
        from_big(&((&one << (top / 2)) - 1u8)),
    ];
    for bits in [top, top - 1, top - 52, top - 53] {
        for _ in 0..3 {
            let mut l = [0u64; L];
            rng.fill(&mut l[..]);
            let mut n = Uint(l).shr(top - bits);
            n.0[0] |= 1;
            n = from_big(&(big(&n) | (&one << (bits - 1))));
            v.push(n);
        }
    }
    v
}

/// Little-endian limbs as a number.
fn wide(limbs: &[u64]) -> BigUint {
    limbs
        .iter()
        .rev()
        .fold(BigUint::default(), |a, &w| (a << 64u32) + w)
}

/// x^(2^k) mod n by k squarings in num-bigint.
fn chain(x: &BigUint, k: u64, n: &BigUint) -> BigUint {
    let mut y = x.clone();
    for _ in 0..k {
        y = &y * &y % n;
    }
    y
}

fn check<const L: usize>(seed: u64) {
    if !Kernel::Ifma.available() {
        eprintln!("skipped: this CPU has no AVX-512 IFMA");
        return;
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    for n in moduli::<L>(&mut rng) {
        let nb = big(&n);
        let ctx = MontCtx::new(&n)
            .unwrap_or_else(|e| panic!("{e}"))
            .with_kernel(Kernel::Ifma);
        let fold = Fold::new(&n.0).expect("an odd modulus of a supported width");
        let mut xs = vec![Uint::<L>::ZERO, Uint::<L>::ONE, from_big(&(&nb - 1u8))];
        xs.extend((0..3).map(|_| rand_below::<L>(&mut rng, &nb)));
        for x in xs {
            let xb = big(&x);
            // Through MontCtx, at and past the threshold.
            for k in [FOLD_MIN, FOLD_MIN + 1, 1000] {
                let got = ctx.from_mont(&ctx.sqr_n(&ctx.to_mont(&x), k));
                assert_eq!(
                    big(&got),
                    chain(&xb, k, &nb),
                    "n = {nb:x}, x = {xb:x}, k = {k}"
                );
            }
            // The kernel itself, on short chains.
            for k in [0, 1, 2, 3, 17] {
                let mut out = vec![0u64; L + 2];
                // SAFETY: IFMA is available (checked above); widths match.
                unsafe { fold.sqr_n(&x.0, k, &mut out) };
                let got = wide(&out);
                assert!(got.bits() <= 52 * digits_for(L) as u64, "{got:x} too wide");
                assert_eq!(
                    got % &nb,
                    chain(&xb, k, &nb),
                    "n = {nb:x}, x = {xb:x}, k = {k}"
                );
            }
        }
    }
}

#[test]
fn folding_chains_agree_with_num_bigint_1024() {
    check::<16>(1);
}

#[test]
fn folding_chains_agree_with_num_bigint_2048() {
    check::<32>(2);
}

#[test]
fn the_largest_digits_survive_a_long_chain() {
    // x = n - 1 squares to 1 and stays there; x = 2 runs through every bit pattern the
    // modulus allows: checked against num-bigint over 5,000 squarings.
    if !Kernel::Ifma.available() {
        eprintln!("skipped: this CPU has no AVX-512 IFMA");
        return;
    }
    let n = Uint::<32>([u64::MAX; 32]);
    let nb = big(&n);
    let ctx = MontCtx::new(&n).unwrap_or_else(|e| panic!("{e}"));
    let x = Uint::<32>::from_u64(2);
    let got = ctx.from_mont(&ctx.sqr_n(&ctx.to_mont(&x), 5000));
    assert_eq!(big(&got), chain(&big(&x), 5000, &nb));
}

#[test]
fn folding_chains_agree_with_num_bigint_1536() {
    check::<24>(3);
}

/// The constant-time pair power against num-bigint's modpow: edge bases (0, 1, n - 1),
/// edge exponents (0, 1, all ones) and random ones, under two moduli at once.
fn pair<const L: usize>(seed: u64) {
    if !Kernel::Ifma.available() {
        eprintln!("skipped: this CPU has no AVX-512 IFMA");
        return;
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let ms = moduli::<L>(&mut rng);
    for w in ms.windows(2) {
        let (n1, n2) = (big(&w[0]), big(&w[1]));
        let (f1, f2) = (
            Fold::new(&w[0].0).expect("supported"),
            Fold::new(&w[1].0).expect("supported"),
        );
        let bases: Vec<(BigUint, BigUint)> = vec![
            (BigUint::default(), BigUint::from(1u8)),
            (&n1 - 1u8, &n2 - 1u8),
            (
                big(&rand_below::<L>(&mut rng, &n1)),
                big(&rand_below::<L>(&mut rng, &n2)),
            ),
        ];
        let exps: Vec<Uint<L>> = vec![
            Uint::ZERO,
            Uint::ONE,
            Uint([u64::MAX; L]),
            rand_below::<L>(&mut rng, &n1),
        ];
        for (b1, b2) in &bases {
            for (i, e1) in exps.iter().enumerate() {
                let e2 = &exps[(i + 1) % exps.len()];
                let (mut o1, mut o2) = (vec![0u64; L + 2], vec![0u64; L + 2]);
                let (x1, x2): (Uint<L>, Uint<L>) = (from_big(b1), from_big(b2));
                // SAFETY: IFMA is available (checked above); widths match.
                unsafe {
                    f1.pow_ct_pair(
                        &f2,
                        (&x1.0, &x2.0),
                        (&e1.0, &e2.0),
                        64 * L,
                        (&mut o1, &mut o2),
                    )
                };
                assert_eq!(
                    wide(&o1) % &n1,
                    b1.modpow(&big(e1), &n1),
                    "first, n = {n1:x}"
                );
                assert_eq!(
                    wide(&o2) % &n2,
                    b2.modpow(&big(e2), &n2),
                    "second, n = {n2:x}"
                );
            }
        }
    }
}

#[test]
fn constant_time_pair_powers_agree_with_num_bigint() {
    pair::<16>(4);
    pair::<24>(5);
    pair::<32>(6);
}

#[test]
fn unsupported_moduli_get_no_kernel() {
    assert!(Fold::new(&[4u64; 16]).is_none(), "even");
    let mut one = [0u64; 16];
    one[0] = 1;
    assert!(Fold::new(&one).is_none(), "one");
    assert!(Fold::new(&[3u64; 48]).is_none(), "3072-bit width");
    assert!(Fold::new(&[3u64; 16]).is_some());
}
