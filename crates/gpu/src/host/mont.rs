//! mont.cuh against num-bigint: r R = a b (mod m) and r < m, at every limb count the
//! kernels use, on random full-size odd moduli and on the extreme ones.

use num_bigint::BigUint;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

type Op = unsafe extern "C" fn(*mut u32, *const u32, *const u32, *const u32);

extern "C" {
    fn ws_host_mont_mul_1(r: *mut u32, a: *const u32, b: *const u32, m: *const u32);
    fn ws_host_mont_add_1(r: *mut u32, a: *const u32, b: *const u32, m: *const u32);
    fn ws_host_mont_sub_1(r: *mut u32, a: *const u32, b: *const u32, m: *const u32);
    fn ws_host_mont_mul_12(r: *mut u32, a: *const u32, b: *const u32, m: *const u32);
    fn ws_host_mont_add_12(r: *mut u32, a: *const u32, b: *const u32, m: *const u32);
    fn ws_host_mont_sub_12(r: *mut u32, a: *const u32, b: *const u32, m: *const u32);
    fn ws_host_mont_mul_32(r: *mut u32, a: *const u32, b: *const u32, m: *const u32);
    fn ws_host_mont_add_32(r: *mut u32, a: *const u32, b: *const u32, m: *const u32);
    fn ws_host_mont_sub_32(r: *mut u32, a: *const u32, b: *const u32, m: *const u32);
    fn ws_host_mont_mul_64(r: *mut u32, a: *const u32, b: *const u32, m: *const u32);
    fn ws_host_mont_add_64(r: *mut u32, a: *const u32, b: *const u32, m: *const u32);
    fn ws_host_mont_sub_64(r: *mut u32, a: *const u32, b: *const u32, m: *const u32);
}

fn limbs(x: &BigUint, n: usize) -> Vec<u32> {
    let mut v = x.to_u32_digits();
    assert!(v.len() <= n);
    v.resize(n, 0);
    v
}

fn run(op: Op, a: &BigUint, b: &BigUint, m: &BigUint, n: usize) -> BigUint {
    let mut r = vec![0xa5a5_a5a5u32; n];
    let (a, b, m) = (limbs(a, n), limbs(b, n), limbs(m, n));
    // SAFETY: every buffer has n limbs, the count the shim was built for.
    unsafe { op(r.as_mut_ptr(), a.as_ptr(), b.as_ptr(), m.as_ptr()) };
    BigUint::from_slice(&r)
}

fn check(n: usize, ops: [Op; 3], rng: &mut ChaCha20Rng) {
    let bits = 32 * n as u64;
    let top = BigUint::from(1u32) << bits;
    let rand_below = |rng: &mut ChaCha20Rng, m: &BigUint| {
        let words: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
        BigUint::from_slice(&words) % m
    };
    let mut moduli = vec![&top - 1u32, (&top >> 1u32) + 1u32];
    for _ in 0..20 {
        let mut w: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
        w[0] |= 1;
        w[n - 1] |= 1 << 31;
        moduli.push(BigUint::from_slice(&w));
    }
    for m in &moduli {
        let mut pairs = vec![
            (&top % m, &top % m),
            (m - 1u32, m - 1u32),
            (BigUint::from(0u32), m - 1u32),
        ];
        for _ in 0..20 {
            pairs.push((rand_below(rng, m), rand_below(rng, m)));
        }
        for (a, b) in &pairs {
            let r = run(ops[0], a, b, m, n);
            assert!(&r < m, "mul not reduced (n={n})");
            assert_eq!((&r << bits) % m, (a * b) % m, "mul (n={n})");
            assert_eq!(run(ops[1], a, b, m, n), (a + b) % m, "add (n={n})");
            assert_eq!(run(ops[2], a, b, m, n), (a + m - b) % m, "sub (n={n})");
        }
    }
}

#[test]
fn mont_matches_num_bigint_at_every_kernel_width() {
    let mut rng = ChaCha20Rng::seed_from_u64(0x6d6f_6e74);
    check(
        1,
        [ws_host_mont_mul_1, ws_host_mont_add_1, ws_host_mont_sub_1],
        &mut rng,
    );
    check(
        12,
        [
            ws_host_mont_mul_12,
            ws_host_mont_add_12,
            ws_host_mont_sub_12,
        ],
        &mut rng,
    );
    check(
        32,
        [
            ws_host_mont_mul_32,
            ws_host_mont_add_32,
            ws_host_mont_sub_32,
        ],
        &mut rng,
    );
    check(
        64,
        [
            ws_host_mont_mul_64,
            ws_host_mont_add_64,
            ws_host_mont_sub_64,
        ],
        &mut rng,
    );
}
