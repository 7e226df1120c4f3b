//! The AVX-512 IFMA eight-lane backend against the serial backend.
#![cfg(target_arch = "x86_64")]

use rand::{Rng, SeedableRng};
use wirespeed_field::ifma::Fe51x8;
use wirespeed_field::{Fe51, FieldOps};

fn has_ifma() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512ifma")
}

fn rand_fe(rng: &mut impl Rng) -> Fe51 {
    let mut b = [0u8; 32];
    rng.fill(&mut b[..]);
    match rng.gen_range(0..8) {
        0 => b = [0xff; 32],
        1 => b = [0; 32],
        _ => {}
    }
    // Limbs at the top of the reduced range now and then.
    let fe = Fe51::from_bytes(&b);
    if rng.gen_range(0..8) == 0 {
        Fe51([
            (1 << 51) + 0x7fff,
            (1 << 51) + 1,
            (1 << 51) - 1,
            (1 << 51) + 0x7fff,
            (1 << 51) - 1,
        ])
    } else {
        fe
    }
}

fn same(a: &Fe51x8, b: &[Fe51; 8]) -> bool {
    a.unpack()
        .iter()
        .zip(b)
        .all(|(x, y)| x.to_bytes() == y.to_bytes())
}

#[test]
fn lanes_match_serial() {
    if !has_ifma() {
        eprintln!("skipping: no AVX-512 IFMA on this CPU");
        return;
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(9);
    for _ in 0..20_000 {
        let a: [Fe51; 8] = std::array::from_fn(|_| rand_fe(&mut rng));
        let b: [Fe51; 8] = std::array::from_fn(|_| rand_fe(&mut rng));
        // SAFETY: AVX-512F and IFMA were detected above.
        let (va, vb) = unsafe { (Fe51x8::pack(&a), Fe51x8::pack(&b)) };
        let f = |op: &dyn Fn(&Fe51, &Fe51) -> Fe51| -> [Fe51; 8] {
            std::array::from_fn(|j| op(&a[j], &b[j]))
        };
        assert!(same(&va.mul(&vb), &f(&|x, y| x.mul(y))));
        assert!(same(&va.square(), &f(&|x, _| x.square())));
        assert!(same(&va.add(&vb), &f(&|x, y| x.add(y))));
        assert!(same(&va.sub(&vb), &f(&|x, y| x.sub(y))));
        assert!(same(&va.neg(), &f(&|x, _| x.neg())));
        // Outputs of every op feed every op (all outputs are reduced).
        let s = va.add(&vb).add(&va.sub(&vb));
        assert!(same(
            &s.mul(&s.square()),
            &f(&|x, y| {
                let s = x.add(y).weak_reduce().add(&x.sub(y)).weak_reduce();
                s.mul(&s.square())
            })
        ));
        let table = [va, vb];
        let idx: [usize; 8] = std::array::from_fn(|_| rng.gen_range(0..2));
        let src = [a, b];
        assert!(same(
            &Fe51x8::select(&table, &idx),
            &std::array::from_fn(|j| src[idx[j]][j])
        ));
    }
}
