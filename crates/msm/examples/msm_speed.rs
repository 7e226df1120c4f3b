//! MSM timing on generated inputs, for profiling:
//! `msm_speed [log2 n] [reps] [window|auto] [weierstrass|edwards] [uniform|skewed]`.
use std::time::Instant;
use wirespeed_msm::{gen, msm};

fn main() {
    let mut args = std::env::args().skip(1);
    let log: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(16);
    let reps: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let window: Option<u32> = args.next().and_then(|a| a.parse().ok());
    let edwards = args.next().as_deref() == Some("edwards");
    let skewed = args.next().as_deref() == Some("skewed");
    let n = 1usize << log;
    let points = gen::points(n, 1);
    let scalars = if skewed {
        gen::skewed_scalars(n, 2)
    } else {
        gen::scalars(n, 2)
    };
    for _ in 0..reps {
        let t = Instant::now();
        let r = match (window, edwards) {
            (Some(c), true) => wirespeed_msm::msm::msm_edwards(&points, &scalars, c),
            (Some(c), false) => wirespeed_msm::msm::msm_with_window(&points, &scalars, c),
            (None, _) => msm(&points, &scalars).unwrap_or_else(|e| panic!("{e}")),
        };
        let s = t.elapsed().as_secs_f64();
        println!(
            "n = 2^{log}: {s:.3} s, {:.2} us/point ({})",
            s * 1e6 / n as f64,
            !r.is_infinity()
        );
    }
}
