//! The AVX-512 IFMA backends (eight lanes in zmm, four in ymm) against the serial backend.
#![cfg(target_arch = "x86_64")]

use rand::{Rng, SeedableRng};
use wirespeed_field::ifma::{Fe51v, Fe51x4, Fe51x8, IfmaVec};
use wirespeed_field::{Fe51, FieldOps};

fn has(features: &[&str]) -> bool {
    features.iter().all(|f| match *f {
        "avx512f" => std::arch::is_x86_feature_detected!("avx512f"),
        "avx512ifma" => std::arch::is_x86_feature_detected!("avx512ifma"),
        "avx512vl" => std::arch::is_x86_feature_detected!("avx512vl"),
        _ => false,
    })
}

fn rand_fe(rng: &mut impl Rng) -> Fe51 {
    let mut b = [0u8; 32];
    rng.fill(&mut b[..]);
    match rng.gen_range(0..8) {
        0 => b = [0xff; 32],
        1 => b = [0; 32],
        // Limbs at the top of the reduced range.
        2 => {
            return Fe51([
                (1 << 51) + 0x7fff,
                (1 << 51) + 1,
                (1 << 51) - 1,
                (1 << 51) + 0x7fff,
                (1 << 51) - 1,
            ])
        }
        _ => {}
    }
    Fe51::from_bytes(&b)
}

fn same<V: IfmaVec>(a: &Fe51v<V>, b: &[Fe51]) -> bool {
    let mut out = vec![Fe51::ZERO; V::LANES];
    a.unpack_into(&mut out);
    out.iter().zip(b).all(|(x, y)| x.to_bytes() == y.to_bytes())
}

/// # Safety
/// The CPU must have the instruction sets of width V.
unsafe fn check<V: IfmaVec>(seed: u64) {
    let n = V::LANES;
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    for _ in 0..20_000 {
        let a: Vec<Fe51> = (0..n).map(|_| rand_fe(&mut rng)).collect();
        let b: Vec<Fe51> = (0..n).map(|_| rand_fe(&mut rng)).collect();
        // SAFETY: forwarded contract.
        let (va, vb) = unsafe { (Fe51v::<V>::pack(&a), Fe51v::<V>::pack(&b)) };
        let f = |op: &dyn Fn(&Fe51, &Fe51) -> Fe51| -> Vec<Fe51> {
            (0..n).map(|j| op(&a[j], &b[j])).collect()
        };
        assert!(same(&va.mul(&vb), &f(&|x, y| x.mul(y))));
        assert!(same(&va.square(), &f(&|x, _| x.square())));
        assert!(same(&va.add(&vb), &f(&|x, y| x.add(y))));
        assert!(same(&va.sub(&vb), &f(&|x, y| x.sub(y))));
        assert!(same(&va.neg(), &f(&|x, _| x.neg())));
        // Outputs of every op feed every op (all outputs are reduced).
        let s = va.add(&vb).add(&va.sub(&vb));
        let want = f(&|x, y| {
            let s = x.add(y).weak_reduce().add(&x.sub(y)).weak_reduce();
            s.mul(&s.square())
        });
        assert!(same(&s.mul(&s.square()), &want));
        let table = [va, vb];
        let idx: Vec<usize> = (0..n).map(|_| rng.gen_range(0..2)).collect();
        let src = [&a, &b];
        let want: Vec<Fe51> = (0..n).map(|j| src[idx[j]][j]).collect();
        assert!(same(&Fe51v::select(&table, &idx), &want));
    }
}

#[test]
fn zmm_lanes_match_serial() {
    if !has(&["avx512f", "avx512ifma"]) {
        eprintln!("skipping: no AVX-512 IFMA on this CPU");
        return;
    }
    // SAFETY: the features were detected above.
    unsafe { check::<core::arch::x86_64::__m512i>(9) };
    let _: Option<Fe51x8> = None;
}

#[test]
fn ymm_lanes_match_serial() {
    if !has(&["avx512f", "avx512ifma", "avx512vl"]) {
        eprintln!("skipping: no AVX-512 IFMA/VL on this CPU");
        return;
    }
    // SAFETY: the features were detected above.
    unsafe { check::<core::arch::x86_64::__m256i>(10) };
    let _: Option<Fe51x4> = None;
}
