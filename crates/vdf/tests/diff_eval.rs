//! Evaluation against num-bigint's modpow(x, 2^T, N) for random moduli of every working
//! width, the checkpoints, the input and modulus rules, and the RSA-2048 constant.

mod common;

use common::random_odd;

use std::cell::RefCell;

use num_bigint::BigUint;
use rand::{Rng, SeedableRng};
use wirespeed_bigint::Uint;
use wirespeed_vdf::eval::{checkpoint_interval, MAX_CHECKPOINTS};
use wirespeed_vdf::{eval, EvalOptions, Modulus, VdfError, U4096};

fn big(v: &U4096) -> BigUint {
    BigUint::from_bytes_be(&v.to_be_bytes())
}

fn from_big(b: &BigUint) -> U4096 {
    U4096::from_be_bytes(&b.to_bytes_be()).unwrap_or_else(|e| panic!("{e}"))
}

fn random_below(rng: &mut impl Rng, n: &U4096) -> U4096 {
    let nb = big(n);
    let mut bytes = vec![0u8; nb.to_bytes_be().len() + 8];
    rng.fill(&mut bytes[..]);
    from_big(&(BigUint::from_bytes_be(&bytes) % &nb))
}

fn oracle(x: &U4096, t: u64, n: &U4096) -> BigUint {
    big(x).modpow(&(BigUint::from(1u8) << t), &big(n))
}

#[test]
fn eval_matches_modpow_at_every_width() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    for bits in [1024, 1025, 2048, 2100, 3072, 4096] {
        let nv = random_odd(&mut rng, bits);
        let n = Modulus::new(&nv).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(n.bits(), bits);
        let expected_limbs = match bits {
            0..=1024 => 16,
            1025..=2048 => 32,
            2049..=3072 => 48,
            _ => 64,
        };
        assert_eq!(n.limbs(), expected_limbs);
        let nb = big(&nv);
        for t in [1u64, 2, 3, 17, 64, 200] {
            let x = random_below(&mut rng, &nv);
            let ev = eval(&n, &x, t, &EvalOptions::default()).unwrap_or_else(|e| panic!("{e}"));
            let y = oracle(&x, t, &nv);
            assert_eq!(big(&ev.y), y, "bits {bits} T {t}");
            let neg = &nb - &y;
            assert_eq!(big(&ev.output), y.clone().min(neg), "canonical output");
            assert_eq!(ev.t, t);
            assert_eq!(ev.checkpoint_every, 1); // T < 4095: every squaring
            assert_eq!(ev.checkpoints.len() as u64, t + 1);
        }
    }
}

#[test]
fn checkpoints_hold_intermediate_powers() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(2);
    let nv = random_odd(&mut rng, 2048);
    let n = Modulus::new(&nv).unwrap_or_else(|e| panic!("{e}"));
    let x = random_below(&mut rng, &nv);
    for (t, k) in [(100u64, 7u64), (100, 100), (100, 101), (64, 8), (150, 0)] {
        let calls = RefCell::new(Vec::new());
        let progress = |d: u64| calls.borrow_mut().push(d);
        let opts = EvalOptions {
            checkpoint_every: k,
            progress: Some(&progress),
        };
        let ev = eval(&n, &x, t, &opts).unwrap_or_else(|e| panic!("{e}"));
        let k = if k == 0 { 1 } else { k };
        assert_eq!(ev.checkpoint_every, k);
        assert_eq!(ev.checkpoints.len() as u64, t / k + 1);
        for (j, (pos, v)) in ev.checkpoints.iter().enumerate() {
            assert_eq!(*pos, j as u64 * k);
            assert_eq!(big(v), oracle(&x, *pos, &nv), "position {pos}");
        }
        assert!(ev.check(&n).is_ok());
        let calls = calls.into_inner();
        assert_eq!(calls.last(), Some(&t));
        assert!(calls.windows(2).all(|w| w[0] < w[1]));
    }
}

#[test]
fn default_interval_keeps_at_most_the_default_number_of_checkpoints() {
    let d = wirespeed_vdf::eval::DEFAULT_CHECKPOINTS;
    for t in [
        1u64,
        d - 2,
        d - 1,
        d,
        d + 1,
        100_000,
        1 << 30,
        1 << 40,
        79_685_186_856_218, // LCS35
        wirespeed_vdf::MAX_DELAY,
    ] {
        let (k, count) = checkpoint_interval(t, 0).unwrap_or_else(|e| panic!("{e}"));
        assert!(count <= d, "T {t}: {count}");
        assert_eq!(count, t / k + 1);
    }
    assert_eq!(
        checkpoint_interval(1 << 20, 1),
        Err(VdfError::TooManyCheckpoints {
            count: (1 << 20) + 1,
            max: MAX_CHECKPOINTS
        })
    );
    assert!(checkpoint_interval(MAX_CHECKPOINTS - 1, 1).is_ok());
}

#[test]
fn trivial_and_out_of_range_inputs_are_refused() {
    let n = Modulus::rsa2048();
    let nv = *n.value();
    let one = U4096::ONE;
    let nm1 = nv.overflowing_sub(&one).0;
    let opts = EvalOptions::default();
    for x in [U4096::ZERO, one, nm1] {
        assert_eq!(eval(&n, &x, 10, &opts), Err(VdfError::TrivialInput));
    }
    for x in [nv, nv.overflowing_add(&one).0, Uint([u64::MAX; 64])] {
        assert_eq!(eval(&n, &x, 10, &opts), Err(VdfError::InputOutOfRange));
    }
    let two = U4096::from_u64(2);
    for t in [0, (1 << 63) + 1, u64::MAX] {
        assert_eq!(
            eval(&n, &two, t, &opts),
            Err(VdfError::DelayOutOfRange { t })
        );
    }
    // Edge inputs that are accepted: 2, N - 2, (N - 1)/2, (N + 1)/2.
    let half = nv.shr(1);
    for x in [
        two,
        nm1.overflowing_sub(&one).0,
        half,
        half.overflowing_add(&one).0,
    ] {
        let ev = eval(&n, &x, 5, &opts).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(big(&ev.y), oracle(&x, 5, &nv));
    }
    // x and N - x give the same output (the group is taken modulo {1, -1}).
    let a = eval(&n, &two, 3, &opts).unwrap_or_else(|e| panic!("{e}"));
    let b = eval(&n, &nm1.overflowing_sub(&one).0, 3, &opts).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a.output, b.output);
    assert_eq!(a.y, U4096::from_u64(256));
}

#[test]
fn modulus_rules() {
    let pow2 = |b: usize| from_big(&(BigUint::from(1u8) << b));
    let odd = |v: U4096| {
        let mut v = v;
        v.0[0] |= 1;
        v
    };
    assert_eq!(
        Modulus::new(&odd(pow2(1022))).err(),
        Some(VdfError::ModulusSize { bits: 1023 })
    );
    assert!(Modulus::new(&odd(pow2(1023))).is_ok());
    assert!(Modulus::new(&Uint([u64::MAX; 64])).is_ok());
    assert_eq!(Modulus::new(&pow2(2000)).err(), Some(VdfError::EvenModulus));
    assert_eq!(
        Modulus::new(&U4096::ZERO).err(),
        Some(VdfError::ModulusSize { bits: 0 })
    );
    let mut too_long = vec![0u8; 513];
    too_long[0] = 1;
    too_long[512] = 1;
    assert!(matches!(
        Modulus::from_be_bytes(&too_long),
        Err(VdfError::ModulusSize { .. })
    ));
    too_long[0] = 0;
    too_long[1] = 0x80;
    assert_eq!(
        Modulus::from_be_bytes(&too_long).map(|m| m.bits()),
        Ok(4096)
    );
}

const RSA_2048_DECIMAL: &str = "\
25195908475657893494027183240048398571429282126204032027777137836043662020707595556264018525\
88078440691829064124951508218929855914917618450280848912007284499268739280728777673597141834\
72702618963750149718246911650776133798590957000973304597488084284017974291006424586918171951\
18746121515172654632282216869987549182422433637259085141865462043576798423387184774447920739\
93423658482382428119816381501067481045166037730605620161967625613384414360383390441495263443\
21901146575444541784240209246165157233507787077498171257724679629263863563732899121548314381\
67899885040445364023527381951378636564391212010397122822120720357";

#[test]
fn rsa2048_constant_is_the_challenge_number() {
    let n = Modulus::rsa2048();
    assert_eq!(n.bits(), 2048);
    assert!(n.value().is_odd());
    assert_eq!(n.byte_len(), 256);
    let dec = big(n.value()).to_str_radix(10);
    assert_eq!(dec.len(), 617);
    assert_eq!(dec, RSA_2048_DECIMAL);
    assert!(dec.starts_with("2519590847") && dec.ends_with("2120720357"));
}
