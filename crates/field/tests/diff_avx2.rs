//! The AVX2 four-lane backend against the serial backend, on random elements and on
//! operands at the edge of the documented limb bounds.
#![cfg(target_arch = "x86_64")]

use rand::{Rng, SeedableRng};
use wirespeed_field::avx2::Fe26x4;
use wirespeed_field::{Fe51, FieldOps};

fn rand_fe(rng: &mut impl Rng) -> Fe51 {
    let mut b = [0u8; 32];
    rng.fill(&mut b[..]);
    // Include values >= p and all-ones patterns now and then.
    match rng.gen_range(0..8) {
        0 => b = [0xff; 32],
        1 => b = [0; 32],
        _ => {}
    }
    Fe51::from_bytes(&b)
}

fn same(a: &Fe26x4, b: &[Fe51; 4]) -> bool {
    a.unpack()
        .iter()
        .zip(b)
        .all(|(x, y)| x.to_bytes() == y.to_bytes())
}

#[test]
fn lanes_match_serial() {
    if !std::arch::is_x86_feature_detected!("avx2") {
        eprintln!("skipping: no AVX2 on this CPU");
        return;
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for _ in 0..20_000 {
        let a: [Fe51; 4] = std::array::from_fn(|_| rand_fe(&mut rng));
        let b: [Fe51; 4] = std::array::from_fn(|_| rand_fe(&mut rng));
        let c: [Fe51; 4] = std::array::from_fn(|_| rand_fe(&mut rng));
        // SAFETY: AVX2 was detected above.
        let (va, vb, vc) = unsafe { (Fe26x4::pack(&a), Fe26x4::pack(&b), Fe26x4::pack(&c)) };
        let f = |op: &dyn Fn(&Fe51, &Fe51, &Fe51) -> Fe51| -> [Fe51; 4] {
            std::array::from_fn(|j| op(&a[j], &b[j], &c[j]))
        };
        assert!(same(&va.mul(&vb), &f(&|x, y, _| x.mul(y))));
        assert!(same(&va.square(), &f(&|x, _, _| x.square())));
        assert!(same(&va.sub(&vb), &f(&|x, y, _| x.sub(y))));
        assert!(same(&va.neg(), &f(&|x, _, _| x.neg())));
        // Largest documented inputs: mul of a three-term sum, square of a two-term sum,
        // sub of a two-term sum from a two-term sum.
        let s3 = va.add(&vb).add(&vc);
        let s2 = va.add(&vb);
        assert!(same(
            &s3.mul(&s3),
            &f(&|x, y, z| x.add(y).add(z).mul(&x.add(y).add(z)))
        ));
        assert!(same(&s2.square(), &f(&|x, y, _| x.add(y).square())));
        assert!(same(
            &s2.sub(&vc.add(&va)),
            &f(&|x, y, z| x.add(y).sub(&z.add(x)))
        ));
        let table = [va, vb, vc];
        let idx = [
            rng.gen_range(0..3),
            rng.gen_range(0..3),
            rng.gen_range(0..3),
            rng.gen_range(0..3),
        ];
        let sel = Fe26x4::select(&table, &idx[..]);
        let src = [a, b, c];
        assert!(same(&sel, &std::array::from_fn(|j| src[idx[j]][j])));
    }
}

#[test]
fn max_limbs_do_not_overflow() {
    if !std::arch::is_x86_feature_detected!("avx2") {
        return;
    }
    // Every limb at its reduced maximum, summed three times: the worst case for mul.
    let m = Fe51([(1 << 51) - 1; 5]);
    let a = [m; 4];
    // SAFETY: AVX2 was detected above.
    let v = unsafe { Fe26x4::pack(&a) };
    let s3 = v.add(&v).add(&v);
    let want = m.add(&m).add(&m);
    let want = want.mul(&want);
    assert!(same(&s3.mul(&s3), &[want; 4]));
    let s2 = v.add(&v);
    let w2 = m.add(&m).square();
    assert!(same(&s2.square(), &[w2; 4]));
}
