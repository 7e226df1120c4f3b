//! The folding squaring kernel (long chains, `MontCtx::sqr_n` from `FOLD_MIN` squarings
//! on with IFMA) against num-bigint, on random and extreme moduli of 1024 and 2048 bits
//! and the edge values 0, 1, n - 1; and directly, for short chains, against the
//! Montgomery kernel. Skips (saying so) where the CPU has no AVX-512 IFMA.

#![cfg(target_arch = "x86_64")]

use num_bigint::BigUint;
use rand::{Rng, SeedableRng};
use wirespeed_bigint::fold::Fold;
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
        let fold = Fold::new(&n.0);
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
                let mut out = [0u64; L];
                // SAFETY: IFMA is available (checked above); widths match.
                unsafe { fold.sqr_n(&x.0, k, &mut out) };
                assert_eq!(
                    big(&Uint(out)),
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
