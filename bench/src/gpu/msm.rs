//! The BLS12-377 MSM section of `wirespeed bench gpu`.
//!
//! Checks (GPU against `wirespeed_msm::msm`, sums compared as group elements):
//! - random points and scalars at 1, 2, 100, 4097, 2^16 and 2^18 points (quick: up to
//!   2^16);
//! - skewed scalars: witness-like, a whole batch of 1, of r - 1 and of 5 (one giant
//!   bucket per window), and a mix of window-boundary values;
//! - repeated points, infinity among the points, and sets that cancel to infinity (P and
//!   -P with equal scalars, P with s and r - s); all-zero scalars;
//! - [`GpuMsm`] with K = 1, 3 and 4 groups: three scalar sets against the same points;
//! - memory: the plan for 2^26 points fits the free device memory, and every
//!   [`GpuMsm`] of the benchmarks uses no more device memory than its plan states;
//! - every benchmark size's GPU sum against the CPU's.
//!
//! Benchmarks (milliseconds, medians of `runs` after a warm-up): [`msm`] on the GPU at
//! 2^16 to 2^26 points (everything included: allocation, point and scalar upload,
//! kernels, the host's window combination), with the CPU beside it at 2^16 and 2^20;
//! [`GpuMsm`] per MSM after the points are prepared (K = 1 and 4) and four MSMs of the
//! largest size in a row against one prepared point set. Distinct random points are
//! costly on the CPU, so the benchmark points are 2^16 random points tiled, each tile
//! offset by its own random point ([`tiled_points`]): all distinct, all in G1.

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;
use wirespeed_msm::fr::R;
use wirespeed_msm::{gen, Affine, Jacobian, Scalar};

use super::{median, time_runs, Bench, Check, Options, Report};
use wirespeed_engine::msm::{msm, Prepared as GpuMsm};
use wirespeed_engine::Backend;
use wirespeed_gpu::msm::Plan;
use wirespeed_gpu::runtime::{check_fits, gpu, Gpu, GpuError};

/// Random points per tile of the benchmark points.
const TILE: usize = 1 << 16;

/// Checks, then benchmarks.
pub(super) fn run(
    opts: &Options,
    rng: &mut ChaCha20Rng,
    report: &mut Report,
) -> Result<(), GpuError> {
    let max_log = if opts.quick { 16 } else { 18 };
    let points = gen::points(1 << max_log, rng.gen());
    report.checks.push(random_check(rng, &points)?);
    report.checks.push(skewed_check(rng, &points)?);
    report.checks.push(repeated_check(rng, &points)?);
    report.checks.push(zero_check(&points)?);
    report.checks.push(prepared_check(rng, &points)?);
    drop(points);
    benches(opts, rng, report)
}

/// A check being filled in: cases, mismatches and the first mismatch.
struct Tally {
    name: String,
    cases: usize,
    mismatches: usize,
    detail: Option<String>,
}

impl Tally {
    fn new(name: impl Into<String>) -> Tally {
        Tally {
            name: name.into(),
            cases: 0,
            mismatches: 0,
            detail: None,
        }
    }

    /// One failed case.
    fn fail(&mut self, what: String) {
        self.cases += 1;
        self.mismatches += 1;
        self.detail.get_or_insert(what);
    }

    /// One case: the GPU's sum (or its error) against the CPU's.
    fn compare(&mut self, what: &str, got: Result<Jacobian, GpuError>, want: &Jacobian) {
        match got {
            Ok(p) if p == *want => self.cases += 1,
            Ok(p) => self.fail(format!("{what}: GPU {} != CPU {}", show(&p), show(want))),
            Err(e) => self.fail(format!("{what}: {e}")),
        }
    }

    fn done(self) -> Check {
        Check {
            name: self.name,
            cases: self.cases,
            mismatches: self.mismatches,
            detail: self.detail,
        }
    }
}

/// A short form of a point for a mismatch's detail: the start of x, or "infinity".
fn show(p: &Jacobian) -> String {
    let a = p.to_affine();
    if a.infinity {
        return "infinity".into();
    }
    let b = wirespeed_msm::format::encode_point(&a);
    format!("(x = {}...)", hex::encode(&b[..12]))
}

/// The CPU's sum.
fn cpu(points: &[Affine], scalars: &[Scalar]) -> Result<Jacobian, GpuError> {
    wirespeed_msm::msm_with(
        points,
        scalars,
        wirespeed_msm::Lanes::Auto,
        wirespeed_engine::backend::cpu(),
    )
    .map_err(|e| GpuError::Unsupported(e.to_string()))
}

/// "2^16" for powers of two from 2^10, the number otherwise.
fn size_name(n: usize) -> String {
    if n.is_power_of_two() && n >= 1 << 10 {
        format!("2^{}", n.trailing_zeros())
    } else {
        n.to_string()
    }
}

/// r - s (0 for 0).
pub(crate) fn neg_scalar(s: &Scalar) -> Scalar {
    if s.is_zero() {
        return Scalar::ZERO;
    }
    let (mut out, mut borrow) = ([0u64; 4], false);
    for (i, (r, x)) in R.iter().zip(s.limbs()).enumerate() {
        let (d, b1) = r.overflowing_sub(*x);
        let (d, b2) = d.overflowing_sub(borrow as u64);
        out[i] = d;
        borrow = b1 || b2;
    }
    Scalar::from_limbs(out).expect("r - s is below r for 0 < s < r")
}

/// 2^k for k < 253.
fn pow2(k: u32) -> Scalar {
    let mut l = [0u64; 4];
    l[(k / 64) as usize] = 1 << (k % 64);
    Scalar::from_limbs(l).expect("2^k is below r for k < 253")
}

/// Skewed scalar sets of `n` scalars, named: witness-like (`gen::skewed_scalars`), all
/// 1, all r - 1 and all 5 (each window's digits all in one bucket), and a mix of 0, 1,
/// 2, r - 1, r - 2, 2^k, 2^k - 1 and 2^k + 1 around window edges, small and uniform
/// values.
pub(crate) fn skewed_sets(n: usize, rng: &mut impl Rng) -> Vec<(&'static str, Vec<Scalar>)> {
    let one = Scalar::from_u64(1);
    let r1 = neg_scalar(&one);
    let r2 = neg_scalar(&Scalar::from_u64(2));
    let mix = (0..n)
        .map(|_| match rng.gen_range(0..12) {
            0 => Scalar::ZERO,
            1 => one,
            2 => Scalar::from_u64(2),
            3 => r1,
            4 => r2,
            5 => pow2(rng.gen_range(0..253)),
            6 => neg_scalar(&pow2(rng.gen_range(0..253))),
            7 => Scalar::from_u64((1u64 << rng.gen_range(1..64)) - 1),
            8 => Scalar::from_u64((1u64 << rng.gen_range(0..63)) + 1),
            9 => Scalar::from_u64(rng.gen_range(0..1 << 16)),
            _ => gen::random_scalar(rng),
        })
        .collect();
    vec![
        ("witness-like", gen::skewed_scalars(n, rng.gen())),
        ("all 1", vec![one; n]),
        ("all r - 1", vec![r1; n]),
        ("all 5", vec![Scalar::from_u64(5); n]),
        ("edge mix", mix),
    ]
}

/// A set whose sum is infinity: the points with `scalars`, then either the negated
/// points with the same scalars (`negate_points`) or the same points with r - s.
pub(crate) fn cancelling(
    points: &[Affine],
    scalars: &[Scalar],
    negate_points: bool,
) -> (Vec<Affine>, Vec<Scalar>) {
    let mut p = points.to_vec();
    let mut s = scalars.to_vec();
    if negate_points {
        p.extend(points.iter().map(Affine::neg));
        s.extend_from_slice(scalars);
    } else {
        p.extend_from_slice(points);
        s.extend(scalars.iter().map(neg_scalar));
    }
    (p, s)
}

/// `n` distinct points of G1 made cheaply: `tile` random points, and point i the
/// (i mod tile)-th of them plus the (i / tile)-th of a second set of random points (one
/// mixed addition per point, affine again with one shared inversion per chunk).
pub(crate) fn tiled_points(n: usize, tile: usize, seed: u64) -> Vec<Affine> {
    let tile = tile.max(1);
    let base = gen::points(n.min(tile), seed);
    if n <= tile {
        return base;
    }
    let offsets = gen::points(n.div_ceil(tile), seed.wrapping_add(1));
    let mut out = vec![Affine::INFINITY; n];
    out.par_chunks_mut(4096).enumerate().for_each(|(c, chunk)| {
        let start = c * 4096;
        let jac: Vec<Jacobian> = (start..start + chunk.len())
            .map(|i| Jacobian::from(base[i % tile]).add_affine(&offsets[i / tile]))
            .collect();
        chunk.copy_from_slice(&Jacobian::batch_to_affine(&jac));
    });
    out
}

/// Random scalars at every size up to the points' number.
fn random_check(rng: &mut ChaCha20Rng, points: &[Affine]) -> Result<Check, GpuError> {
    let sizes: Vec<usize> = [1, 2, 100, 4097, 1 << 16, 1 << 18]
        .into_iter()
        .filter(|&n| n <= points.len())
        .collect();
    let names: Vec<String> = sizes.iter().map(|&n| size_name(n)).collect();
    let mut t = Tally::new(format!(
        "msm: random points and scalars, n = {}",
        names.join(", ")
    ));
    let scalars = gen::scalars(points.len(), rng.gen());
    for n in sizes {
        let (p, s) = (&points[..n], &scalars[..n]);
        t.compare(&format!("n = {n}"), msm(Backend::Gpu, p, s), &cpu(p, s)?);
    }
    Ok(t.done())
}

/// Skewed scalar sets at 100, 4097 and 2^16 points.
fn skewed_check(rng: &mut ChaCha20Rng, points: &[Affine]) -> Result<Check, GpuError> {
    let mut t = Tally::new(
        "msm: skewed scalars (witness-like; all 1, all r - 1, all 5: one giant bucket; \
         window-edge mix), n = 100, 4097, 2^16",
    );
    for n in [100, 4097, 1 << 16] {
        let p = &points[..n.min(points.len())];
        for (name, s) in skewed_sets(p.len(), rng) {
            let what = format!("{name}, n = {}", p.len());
            t.compare(&what, msm(Backend::Gpu, p, &s), &cpu(p, &s)?);
        }
    }
    Ok(t.done())
}

/// Repeated points, infinity among the points, and cancelling sets.
fn repeated_check(rng: &mut ChaCha20Rng, points: &[Affine]) -> Result<Check, GpuError> {
    let mut t = Tally::new(
        "msm: repeated points, infinity points, P with -P and s with r - s cancelling \
         (sum infinity), n = 2 to 2^16",
    );
    for n in [1usize, 50, 4097, 1 << 15] {
        let n = n.min(points.len() / 2);
        let p = &points[..n];
        let s = gen::scalars(n, rng.gen());
        let ones = vec![Scalar::from_u64(1); n];
        let mut sets: Vec<(&str, Vec<Affine>, Vec<Scalar>)> = vec![
            ("one point repeated", vec![p[0]; n], s.clone()),
            ("one point repeated, all 1", vec![p[0]; n], ones),
            (
                "seven points repeated",
                (0..n).map(|i| points[i % 7]).collect(),
                s.clone(),
            ),
            (
                "every third point infinity",
                p.iter()
                    .enumerate()
                    .map(|(i, q)| if i % 3 == 0 { Affine::INFINITY } else { *q })
                    .collect(),
                s.clone(),
            ),
        ];
        let (cp, cs) = cancelling(p, &s, true);
        sets.push(("P and -P", cp, cs));
        let (cp, cs) = cancelling(p, &s, false);
        sets.push(("s and r - s", cp, cs));
        for (name, sp, ss) in sets {
            let what = format!("{name}, n = {}", sp.len());
            let want = cpu(&sp, &ss)?;
            let cancels = name == "P and -P" || name == "s and r - s";
            if cancels && !want.is_infinity() {
                t.fail(format!("{what}: the CPU's sum is not infinity"));
                continue;
            }
            t.compare(&what, msm(Backend::Gpu, &sp, &ss), &want);
        }
    }
    Ok(t.done())
}

/// All-zero scalars: the sum is infinity.
fn zero_check(points: &[Affine]) -> Result<Check, GpuError> {
    let mut t = Tally::new("msm: all-zero scalars (sum infinity), n = 1, 100, 4097, 2^16");
    for n in [1, 100, 4097, 1 << 16] {
        let p = &points[..n.min(points.len())];
        let s = vec![Scalar::ZERO; p.len()];
        t.compare(
            &format!("n = {}", p.len()),
            msm(Backend::Gpu, p, &s),
            &Jacobian::INFINITY,
        );
    }
    Ok(t.done())
}

/// GpuMsm with K = 1, 3 and 4: three scalar sets against the same prepared points.
fn prepared_check(rng: &mut ChaCha20Rng, points: &[Affine]) -> Result<Check, GpuError> {
    let mut t = Tally::new(
        "msm: GpuMsm with K = 1, 3, 4, three scalar sets (random, witness-like, random) \
         against the same points, n = 100, 4097, 2^16",
    );
    for n in [100, 4097, 1 << 16] {
        let p = &points[..n.min(points.len())];
        let n = p.len();
        let sets = [
            gen::scalars(n, rng.gen()),
            gen::skewed_scalars(n, rng.gen()),
            gen::scalars(n, rng.gen()),
        ];
        let wants = sets
            .iter()
            .map(|s| cpu(p, s))
            .collect::<Result<Vec<_>, _>>()?;
        for k in [1, 3, 4] {
            let pre = match GpuMsm::new(Backend::Gpu, p, k) {
                Ok(pre) if pre.backend_name() == "gpu" => pre,
                Ok(_) => {
                    t.fail(format!("n = {n}, K = {k}: prepared on the CPU"));
                    continue;
                }
                Err(e) => {
                    t.fail(format!("n = {n}, K = {k}: {e}"));
                    continue;
                }
            };
            for (j, (s, want)) in sets.iter().zip(&wants).enumerate() {
                t.compare(&format!("n = {n}, K = {k}, set {j}"), pre.msm(s), want);
            }
        }
    }
    Ok(t.done())
}

/// Free device memory once freed buffers have gone back to the driver.
fn free_bytes(g: &Gpu) -> Result<usize, GpuError> {
    g.context().synchronize()?;
    Ok(g.memory()?.0)
}

/// Seconds to milliseconds.
fn ms(secs: Vec<f64>) -> Vec<f64> {
    secs.into_iter().map(|s| s * 1e3).collect()
}

/// A benchmark figure from runs in one unit.
fn bench(name: String, size: usize, unit: &str, runs: Vec<f64>, cpu: Option<f64>) -> Bench {
    Bench {
        name,
        size,
        unit: unit.into(),
        median: median(&runs),
        runs,
        cpu_median: cpu,
    }
}

/// Runs for a figure whose warm-up run took `warm` seconds: all of them, but at most 3
/// when a run takes over 2 s, which bounds the section's time on a slower device.
fn runs_for(runs: usize, warm: f64) -> usize {
    if warm > 2.0 {
        runs.min(3)
    } else {
        runs
    }
}

/// A benchmark that failed: recorded as a failed check, and the others still run.
fn failed(report: &mut Report, name: &str, e: GpuError) {
    report.checks.push(Check {
        name: format!("msm benchmark: {name}"),
        cases: 0,
        mismatches: 0,
        detail: Some(e.to_string()),
    });
}

/// The memory plan check, then the timings.
fn benches(opts: &Options, rng: &mut ChaCha20Rng, report: &mut Report) -> Result<(), GpuError> {
    let g = gpu()?;
    let logs: &[u32] = if opts.quick {
        &[16, 20]
    } else {
        &[16, 20, 22, 24, 26]
    };
    let max = 1usize << logs[logs.len() - 1];
    let runs = opts.runs.max(1);

    // The plan for 2^26 points against the free memory, before anything is allocated.
    let free = free_bytes(g)?;
    let mut plans = Tally::new("msm: the plan for 2^26 points (K = 1) fits the free device memory");
    for k in [1, 4] {
        let bytes = Plan::new(1 << 26, k)?.device_bytes();
        report.benches.push(bench(
            format!("msm device bytes at 2^26 points, K = {k} (stated plan)"),
            1 << 26,
            "bytes",
            vec![bytes as f64],
            None,
        ));
        if k == 1 {
            match check_fits("MSM of 2^26 points", bytes, free) {
                Ok(()) => plans.cases += 1,
                Err(e) => plans.fail(e.to_string()),
            }
        }
    }
    report.checks.push(plans.done());

    let how = "points: 2^16 random, tiled with a random offset per tile";
    let points = tiled_points(max, TILE, rng.gen());
    // Four scalar sets: the first for the plain MSMs and every warm-up, all four for
    // the runs against prepared points.
    let sets: Vec<Vec<Scalar>> = (0..4).map(|_| gen::scalars(max, rng.gen())).collect();
    let mut results = Tally::new(format!(
        "msm: benchmark sizes 2^{} to 2^{}, GPU sum against the CPU's",
        logs[0],
        logs[logs.len() - 1]
    ));
    // The CPU's sum of the first set at each benchmarked size.
    let mut wants: Vec<(usize, Jacobian)> = Vec::new();

    // Plain MSMs: every call prepares the points, uploads the scalars and frees all.
    for &log in logs {
        let n = 1usize << log;
        let (p, s) = (&points[..n], &sets[0][..n]);
        if check_fits("", Plan::new(n, 1)?.device_bytes(), free_bytes(g)?).is_err() {
            continue;
        }
        let name = format!("msm 2^{log} points, GPU incl. point and scalar upload ({how})");
        let warm = std::time::Instant::now();
        let got = msm(Backend::Gpu, p, s);
        let runs = runs_for(runs, warm.elapsed().as_secs_f64());
        let timed = got
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|_| time_runs(runs, || msm(Backend::Gpu, p, s).map(|_| ())).map(ms));
        let cpu_runs = if log <= 20 {
            let t = time_runs(runs, || cpu(p, s).map(|_| ()))?;
            Some(median(&ms(t)))
        } else {
            None
        };
        let want = cpu(p, s)?;
        results.compare(&format!("n = 2^{log}"), got, &want);
        wants.push((n, want));
        match timed {
            Ok(t) => report.benches.push(bench(name, n, "ms", t, cpu_runs)),
            Err(e) => failed(report, &name, e),
        }
    }

    // Prepared points: per MSM after init, K = 1 and 4, at 2^24 (quick: 2^20).
    let mut memory = Tally::new(
        "msm: device memory used by GpuMsm (free before and after init) within its stated \
         plan (+5% and 256 MiB)",
    );
    let n: usize = if opts.quick { 1 << 20 } else { 1 << 24 };
    for k in [1, 4] {
        let name = format!(
            "GpuMsm 2^{} points, K = {k}: one MSM with a new scalar set after init, incl. \
             scalar upload ({how})",
            n.trailing_zeros()
        );
        match prepared(
            g,
            &points[..n],
            k,
            &sets,
            runs,
            &wants,
            &mut results,
            &mut memory,
        ) {
            Ok(Some((init, t, used))) => {
                report.benches.push(bench(
                    format!("GpuMsm 2^{} points, K = {k}: init", n.trailing_zeros()),
                    n,
                    "ms",
                    vec![init],
                    None,
                ));
                report.benches.push(bench(name, n, "ms", t, None));
                report.benches.push(bench(
                    format!(
                        "GpuMsm 2^{} points, K = {k}: device bytes used (measured)",
                        n.trailing_zeros()
                    ),
                    n,
                    "bytes",
                    vec![used as f64],
                    None,
                ));
            }
            Ok(None) => {}
            Err(e) => failed(report, &name, e),
        }
    }

    // Four MSMs of the largest size in a row against one prepared point set: the largest
    // K of 4, 2 and 1 whose plan fits.
    let free = free_bytes(g)?;
    if let Some(k) = [4, 2, 1]
        .into_iter()
        .find(|&k| Plan::new(max, k).is_ok_and(|p| check_fits("", p.device_bytes(), free).is_ok()))
    {
        let log = max.trailing_zeros();
        let name = format!(
            "GpuMsm 4 MSMs of 2^{log} points in a row, K = {k}, four scalar sets, after \
             init, incl. scalar upload ({how})"
        );
        let r = four(
            g,
            &points,
            k,
            &sets,
            runs,
            &wants,
            &mut results,
            &mut memory,
        );
        match r {
            Ok(Some((init, t, used))) => {
                report.benches.push(bench(
                    format!("GpuMsm 2^{log} points, K = {k}: init"),
                    max,
                    "ms",
                    vec![init],
                    None,
                ));
                report.benches.push(bench(name, 4 * max, "ms", t, None));
                report.benches.push(bench(
                    format!("GpuMsm 2^{log} points, K = {k}: device bytes used (measured)"),
                    max,
                    "bytes",
                    vec![used as f64],
                    None,
                ));
            }
            Ok(None) => {}
            Err(e) => failed(report, &name, e),
        }
    }
    report.checks.push(results.done());
    report.checks.push(memory.done());
    Ok(())
}

/// Prepares `points` with K groups (None when its plan does not fit), checks its
/// device memory against the plan and its first sum against the CPU's; returns the init
/// milliseconds, the GpuMsm, the device bytes it took and the seconds of its first MSM.
fn prepare(
    g: &Gpu,
    points: &[Affine],
    k: usize,
    sets: &[Vec<Scalar>],
    wants: &[(usize, Jacobian)],
    results: &mut Tally,
    memory: &mut Tally,
) -> Result<Option<(f64, GpuMsm, usize, f64)>, GpuError> {
    let n = points.len();
    let plan = Plan::new(n, k)?.device_bytes();
    let before = free_bytes(g)?;
    if check_fits("", plan, before).is_err() {
        return Ok(None);
    }
    let t = std::time::Instant::now();
    let pre = GpuMsm::new(Backend::Gpu, points, k)?;
    let init = t.elapsed().as_secs_f64() * 1e3;
    if pre.backend_name() != "gpu" {
        return Err(GpuError::Unsupported(
            "GpuMsm was prepared on the CPU".into(),
        ));
    }
    let used = before.saturating_sub(free_bytes(g)?);
    let what = format!("n = 2^{}, K = {k}", n.trailing_zeros());
    if used <= plan + plan / 20 + (256 << 20) {
        memory.cases += 1;
    } else {
        memory.fail(format!("{what}: {used} bytes used, {plan} stated"));
    }
    // Warm-up with the first set, against the CPU's sum where the plain MSMs made one.
    let t = std::time::Instant::now();
    let got = pre.msm(&sets[0][..n]);
    let warm = t.elapsed().as_secs_f64();
    match wants.iter().find(|(m, _)| *m == n) {
        Some((_, want)) => results.compare(&format!("GpuMsm {what}"), got, want),
        None => {
            got?;
        }
    }
    Ok(Some((init, pre, used, warm)))
}

/// [`prepare`], then runs of one MSM each, cycling through the other scalar sets.
fn prepared(
    g: &Gpu,
    points: &[Affine],
    k: usize,
    sets: &[Vec<Scalar>],
    runs: usize,
    wants: &[(usize, Jacobian)],
    results: &mut Tally,
    memory: &mut Tally,
) -> Result<Option<(f64, Vec<f64>, usize)>, GpuError> {
    let n = points.len();
    let Some((init, pre, used, warm)) = prepare(g, points, k, sets, wants, results, memory)? else {
        return Ok(None);
    };
    let mut i = 0;
    let t = time_runs(runs_for(runs, warm), || {
        i += 1;
        pre.msm(&sets[1 + i % (sets.len() - 1)][..n]).map(|_| ())
    })?;
    Ok(Some((init, ms(t), used)))
}

/// [`prepare`], then runs of four MSMs each, one per scalar set.
fn four(
    g: &Gpu,
    points: &[Affine],
    k: usize,
    sets: &[Vec<Scalar>],
    runs: usize,
    wants: &[(usize, Jacobian)],
    results: &mut Tally,
    memory: &mut Tally,
) -> Result<Option<(f64, Vec<f64>, usize)>, GpuError> {
    let Some((init, pre, used, warm)) = prepare(g, points, k, sets, wants, results, memory)? else {
        return Ok(None);
    };
    let t = time_runs(runs_for(runs, 4.0 * warm), || {
        for s in sets.iter().take(4) {
            pre.msm(s)?;
        }
        Ok::<(), GpuError>(())
    })?;
    Ok(Some((init, ms(t), used)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn negation_is_r_minus_s() {
        assert_eq!(neg_scalar(&Scalar::ZERO), Scalar::ZERO);
        let mut r1 = R;
        r1[0] -= 1;
        assert_eq!(neg_scalar(&Scalar::from_u64(1)).limbs(), &r1);
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        for _ in 0..100 {
            let s = gen::random_scalar(&mut rng);
            assert_eq!(neg_scalar(&neg_scalar(&s)), s);
        }
        // 2^64 - 1: a borrow through the low limb.
        let s = Scalar::from_u64(u64::MAX);
        let n = neg_scalar(&s);
        assert_eq!(n.limbs()[0], R[0].wrapping_sub(u64::MAX));
        assert_eq!(n.limbs()[1], R[1] - 1);
        assert_eq!(pow2(252).bits(), 253);
        assert_eq!(pow2(0), Scalar::from_u64(1));
    }

    #[test]
    fn skewed_sets_are_in_range_and_sum_like_their_definition() {
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        let points = gen::points(300, 3);
        let sets = skewed_sets(300, &mut rng);
        assert_eq!(sets.len(), 5);
        for (name, s) in &sets {
            assert_eq!(s.len(), 300, "{name}");
            for x in s {
                assert!(Scalar::from_limbs(*x.limbs()).is_some(), "{name}: {x:?}");
            }
        }
        let sum: Jacobian = points
            .iter()
            .fold(Jacobian::INFINITY, |a, p| a.add_affine(p));
        let get = |name: &str| &sets.iter().find(|(n, _)| *n == name).unwrap().1;
        assert_eq!(cpu(&points, get("all 1")).unwrap(), sum);
        assert_eq!(cpu(&points, get("all 5")).unwrap(), sum.mul_u64(5));
        // (r - 1) P = -P.
        let all_r1 = cpu(&points, get("all r - 1")).unwrap();
        assert!(all_r1.add(&sum).is_infinity());
        // The mix has its edge values and some spread.
        let mix = get("edge mix");
        assert!(mix.iter().any(|s| s.is_zero()));
        assert!(mix.iter().any(|s| s.bits() == 253));
        assert!(mix.iter().any(|s| s.bits() < 64 && s.bits() > 16));
    }

    #[test]
    fn cancelling_sets_sum_to_infinity() {
        let points = gen::points(257, 4);
        let scalars = gen::scalars(257, 5);
        for negate in [true, false] {
            let (p, s) = cancelling(&points, &scalars, negate);
            assert_eq!(p.len(), 514);
            assert_eq!(s.len(), 514);
            assert!(cpu(&p, &s).unwrap().is_infinity(), "negate = {negate}");
            // Half of it does not cancel.
            assert!(!cpu(&p[..257], &s[..257]).unwrap().is_infinity());
        }
        // Infinity points add nothing.
        let mut p = points.clone();
        for q in p.iter_mut().step_by(3) {
            *q = Affine::INFINITY;
        }
        let want = p
            .iter()
            .zip(&scalars)
            .filter(|(q, _)| !q.infinity)
            .fold(Jacobian::INFINITY, |a, (q, s)| {
                a.add(&Jacobian::from(*q).mul_limbs(s.limbs()))
            });
        assert_eq!(cpu(&p, &scalars).unwrap(), want);
    }

    #[test]
    fn tiled_points_are_distinct_points_of_g1() {
        let (tile, n) = (8, 37);
        let p = tiled_points(n, tile, 6);
        assert_eq!(p.len(), n);
        let base = gen::points(tile, 6);
        let offsets = gen::points(n.div_ceil(tile), 7);
        for (i, q) in p.iter().enumerate() {
            assert!(q.is_on_curve() && q.is_in_subgroup() && !q.infinity, "{i}");
            let want = Jacobian::from(base[i % tile]).add_affine(&offsets[i / tile]);
            assert_eq!(Jacobian::from(*q), want, "{i}");
        }
        for i in 0..n {
            for j in 0..i {
                assert_ne!(p[i], p[j], "{i} {j}");
            }
        }
        // Up to one tile: the random points themselves.
        assert_eq!(tiled_points(5, tile, 6), gen::points(5, 6));
    }

    #[test]
    fn size_names() {
        assert_eq!(size_name(1 << 16), "2^16");
        assert_eq!(size_name(4097), "4097");
        assert_eq!(size_name(100), "100");
    }
}
