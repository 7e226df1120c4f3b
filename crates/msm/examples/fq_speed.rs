//! Field-multiplication latency and throughput (a quick kernel check).
use std::time::Instant;
use wirespeed_msm::Fq;

fn main() {
    let mut a = Fq::from_u64(7);
    let b = Fq::from_u64(11).vartime_inverse().unwrap_or(Fq::ONE);
    let n = 10_000_000;
    let t = Instant::now();
    for _ in 0..n {
        a = a.mul(&b);
    }
    let ns = t.elapsed().as_secs_f64() * 1e9 / n as f64;
    println!(
        "dependent mul: {ns:.1} ns ({:.0} cycles at 2.6 GHz) {:?}",
        ns * 2.6,
        a.is_zero()
    );
    let mut v = [Fq::from_u64(3); 8];
    let t = Instant::now();
    for _ in 0..n / 8 {
        for x in v.iter_mut() {
            *x = x.mul(&b);
        }
    }
    let ns = t.elapsed().as_secs_f64() * 1e9 / n as f64;
    println!("independent mul: {ns:.1} ns {:?}", v[0].is_zero());
}
