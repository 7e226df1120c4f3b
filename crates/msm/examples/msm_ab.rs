//! Interleaved A/B timing of bucket forms: `msm_ab [log2 n] [rounds] c1,c2,... [WEL]`; every
//! round runs each window width with Weierstrass (W), twisted Edwards (E) and twisted
//! Edwards buckets in IFMA lanes (L, as E without AVX-512 IFMA), and the medians are
//! printed at the end.
use std::time::Instant;
use wirespeed_msm::{gen, msm};

fn main() {
    let mut args = std::env::args().skip(1);
    let log: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(16);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    let widths: Vec<u32> = args
        .next()
        .unwrap_or_else(|| "12,13".into())
        .split(',')
        .filter_map(|c| c.parse().ok())
        .collect();
    let kinds: Vec<String> = args
        .next()
        .unwrap_or_else(|| "WEL".into())
        .chars()
        .map(String::from)
        .collect();
    let n = 1usize << log;
    let points = gen::points(n, 1);
    let scalars = gen::scalars(n, 2);
    let mut times: Vec<(String, Vec<f64>)> = Vec::new();
    for _ in 0..rounds {
        for &c in &widths {
            for kind in kinds.iter().map(String::as_str) {
                let t = Instant::now();
                let r = match kind {
                    "W" => msm::msm_with_window(&points, &scalars, c),
                    "E" => msm::msm_edwards_with(
                        &points,
                        &scalars,
                        c,
                        wirespeed_msm::Lanes::Serial,
                        wirespeed_msm::CpuFeatures::get(),
                    ),
                    _ => msm::msm_edwards_with(
                        &points,
                        &scalars,
                        c,
                        wirespeed_msm::Lanes::Auto,
                        wirespeed_msm::CpuFeatures::get(),
                    ),
                };
                let s = t.elapsed().as_secs_f64();
                assert!(!r.is_infinity());
                let name = format!("{kind} c={c}");
                match times.iter_mut().find(|(k, _)| *k == name) {
                    Some((_, v)) => v.push(s),
                    None => times.push((name, vec![s])),
                }
            }
        }
    }
    for (name, mut v) in times {
        v.sort_by(f64::total_cmp);
        println!(
            "n = 2^{log} {name}: median {:.3} s over {}",
            v[v.len() / 2],
            v.len()
        );
    }
}
