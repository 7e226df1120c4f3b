//! The bucket arithmetic chosen only by the CPU features passed in: an MSM with no
//! features (portable 64-bit buckets) and one with this CPU's (IFMA lanes where present,
//! `mulx`/`adx` window sums) give the same point on random and skewed inputs, one-shot
//! and against precomputed bases.

use wirespeed_msm::{gen, msm_with, CpuFeatures, Lanes, Precomputed};

#[test]
fn scalar_and_widest_arithmetic_agree() {
    let cpu = CpuFeatures::get();
    for (n, seed) in [(1usize, 1u64), (37, 2), (600, 3), (3000, 4)] {
        let points = gen::points(n, seed);
        for scalars in [
            gen::scalars(n, seed + 10),
            gen::skewed_scalars(n, seed + 20),
        ] {
            let a =
                msm_with(&points, &scalars, Lanes::Serial, cpu).unwrap_or_else(|e| panic!("{e}"));
            let b = msm_with(&points, &scalars, Lanes::Auto, cpu).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(a.to_affine(), b.to_affine(), "n = {n}");
            for k in [1, 3] {
                let p = Precomputed::new_with(&points, k, Lanes::Serial, cpu)
                    .msm(&scalars)
                    .unwrap_or_else(|e| panic!("{e}"));
                let q = Precomputed::new_with(&points, k, Lanes::Auto, cpu)
                    .msm(&scalars)
                    .unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(
                    p.to_affine(),
                    a.to_affine(),
                    "precomputed, n = {n}, K = {k}"
                );
                assert_eq!(
                    q.to_affine(),
                    a.to_affine(),
                    "precomputed, n = {n}, K = {k}"
                );
            }
        }
    }
}
