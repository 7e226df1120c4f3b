//! Pippenger's bucket method for sum_i s_i P_i over BLS12-377 G1.
//!
//! 1. Recoding: each scalar (< r < 2^253) is cut into windows of c bits and turned into
//!    signed digits d in [-2^(c-1), 2^(c-1)]: a raw window value above 2^(c-1) becomes
//!    value - 2^c with a carry into the next window. The top window never overflows
//!    (its raw value is below 2^(253 mod c), at most 2^(c-1) with the carry), so
//!    floor(253 / c) + 1 windows suffice and each needs only 2^(c-1) buckets; -P is
//!    free (negate y).
//! 2. Bucket accumulation. [`msm`] maps the points once to the twisted Edwards form of
//!    [`crate::te`] (one shared inversion per 4096 points, about 12M a point) and adds
//!    into extended-coordinate buckets with the 7M mixed addition: no batches, no
//!    conflicts, so skewed digits that pile into one bucket cost the same. The
//!    Weierstrass path ([`msm_weierstrass`], kept as the fallback) uses affine buckets
//!    updated in batches that share one inversion when there are at least 4096 of them
//!    ([`crate::batch`], about 6.5M an addition plus conflict bookkeeping) and XYZZ
//!    buckets (madd-2008-s, 8M + 2S) for narrower windows. Measured on this machine
//!    (BENCHMARKS.md), Edwards wins at every size: 2^16 points 0.29 against 0.30 s,
//!    2^20 points 3.9 against 4.5 s (each at its best window), because the batched
//!    affine addition's arithmetic advantage (6M against 7M) is eaten by its batch
//!    bookkeeping and conflict handling, and the Edwards reduction (9M additions) is
//!    cheaper than XYZZ's (12M + 2S). With AVX-512 IFMA the Edwards buckets run eight
//!    at a time in vector lanes (`src/ifma.rs`): 2^20 points in 2.4 s on two
//!    cores against 3.9 s in 64-bit arithmetic.
//! 3. Bucket reduction: sum_b b B_b by running sums from the top bucket down (two
//!    additions per bucket), stopping at the highest bucket in use.
//! 4. Windows are combined by Horner's rule: c doublings and one addition per window.
//!
//! Window width (cost model, in field multiplications: Edwards buckets, a bucket
//! addition ~ 8 and one bucket's share of the reduction ~ 20; Weierstrass, fitted at
//! 2^18 points, ~ 7 and ~ 24): for each candidate c in 2..=20, sum over the windows j
//! that hold a nonzero digit of (N_j add + 2^(c-1) reduce), where
//! N_j counts the scalars with a bit at or above position j c (from a histogram of
//! scalar lengths), plus 2^c-independent Horner costs; the cheapest c wins. Skewed
//! inputs (zeros, ones, small values) therefore get narrower or fewer windows instead
//! of paying for empty buckets: a zero scalar costs nothing, and a window with no
//! nonzero digit is skipped outright.
//!
//! Fixed bases: [`Precomputed`] trades memory for fewer reductions (see its docs).
//!
//! CPU features: the `_with` entry points ([`msm_with`], [`msm_edwards_with`],
//! [`Precomputed::new_with`]) take the lanes asked for and the CPU's features, as every
//! crate's `_with` entry points do, and choose the bucket arithmetic from the features
//! those lanes allow once (IFMA lanes, `mulx`/`adx` window sums, or portable:
//! `Lanes::Serial`); this module never probes the CPU. The forms without features are convenience wrappers
//! over the process's one detection (`CpuFeatures::get`); the engine calls the `_with`
//! forms. (Inside the scalar path, [`Fq::mul`] still picks its `mulx` row per call from
//! that detection: a per-multiplication twin, not a lane choice.)
//!
//! Parallelism: rayon tasks over (window, slice of points); with fewer windows in use
//! than 2 x threads the points are split too, and the partial window sums (linear in
//! the buckets) are added. Memory: the Edwards points, 144 bytes each (2^20 points:
//! 151 MB), the signed digits, 4 bytes per scalar per window (2^20 scalars, c = 16: 16
//! windows, 64 MiB), plus per running task 2^(c-1) buckets of 192 bytes (c = 16: 6.3
//! MB each; the Weierstrass path's affine buckets with their XYZZ overflow take about
//! 300 bytes each).

use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use crate::batch::AffineBuckets;
use crate::fq::Fq;
use crate::fr::{Scalar, R_BITS};
use crate::g1::{Affine, Jacobian, Xyzz};
use crate::te::{TeExt, TePre};
use wirespeed_util::cpu::CpuFeatures;
use wirespeed_util::lanes::Lanes;

pub use crate::precomputed::Precomputed;

/// The bucket arithmetic a CPU with given features runs, resolved once per entry point:
/// BMI2 + ADX window sums, and the AVX-512 IFMA Edwards lanes. A value is built only by
/// [`Arith::on`] from features the CPU has, so its flags make the kernels safe to call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Arith {
    adx: bool,
    ifma: bool,
}

impl Arith {
    pub(crate) fn on(cpu: &CpuFeatures) -> Arith {
        Arith {
            adx: cfg!(target_arch = "x86_64") && cpu.adx(),
            ifma: cfg!(target_arch = "x86_64") && cpu.ifma_products(),
        }
    }
}

/// Why an MSM cannot run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MsmError {
    /// Points and scalars differ in number.
    LengthMismatch {
        /// Number of points.
        points: usize,
        /// Number of scalars.
        scalars: usize,
    },
}

impl std::fmt::Display for MsmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MsmError::LengthMismatch { points, scalars } => {
                write!(f, "{points} points but {scalars} scalars")
            }
        }
    }
}

impl std::error::Error for MsmError {}

/// Costs of the cost model, in field multiplications.
#[derive(Clone, Copy)]
pub(crate) struct Costs {
    /// A bucket addition.
    pub(crate) add: u64,
    /// One bucket's share of the reduction, halved (it makes two additions).
    pub(crate) reduce: u64,
    /// The widest window worth trying (bucket memory beyond it costs cache misses).
    pub(crate) max: u32,
}

/// Weierstrass buckets: batched affine (about 6.5M an addition); XYZZ reduction
/// (measured ratio to a bucket addition: about 3.4).
const WEIERSTRASS: Costs = Costs {
    add: 7,
    reduce: 12,
    max: MAX_WINDOW,
};
/// Edwards buckets: 7M mixed additions plus the additions around them; 9M reduction
/// additions.
const EDWARDS: Costs = Costs {
    add: 8,
    reduce: 10,
    max: MAX_WINDOW,
};
/// Edwards buckets in IFMA lanes (one unit is still about 100 cycles): an addition
/// costs about 5 units (7 eight-lane products of about 380 cycles, the loads and the
/// transposes, per eight additions); each bucket index of the reduction runs two 9M
/// additions over eight lanes' buckets at once (about 70 units, 35 halved). The eight
/// lanes' buckets take 8 x 2^(c-1) x 256 bytes, 16 MiB at c = 14: wider windows
/// measured slower, their buckets missing the caches.
const EDWARDS_LANES: Costs = Costs {
    add: 5,
    reduce: 35,
    max: 14,
};
/// Widest window considered.
const MAX_WINDOW: u32 = 20;

/// Number of windows of width c.
pub(crate) fn windows(c: u32) -> u32 {
    R_BITS / c + 1
}

/// The window width for these scalars with Edwards buckets (see the module docs).
pub fn choose_window(scalars: &[Scalar]) -> u32 {
    choose_window_on(scalars, Arith::on(CpuFeatures::get()))
}

fn choose_window_on(scalars: &[Scalar], a: Arith) -> u32 {
    window_for(scalars, EdPoints::costs(a))
}

/// The window width for these scalars and bucket costs.
fn window_for(scalars: &[Scalar], k: Costs) -> u32 {
    // hist[b] = number of scalars of bit length b; above[b] = number longer than b.
    let mut hist = [0u64; R_BITS as usize + 1];
    for s in scalars {
        hist[s.bits() as usize] += 1;
    }
    let mut above = [0u64; R_BITS as usize + 2];
    for b in (0..=R_BITS as usize).rev() {
        above[b] = above[b + 1] + if b > 0 { hist[b] } else { 0 };
    }
    // above[b] now counts scalars with bit length >= b (b >= 1).
    let mut best = (u64::MAX, 2);
    for c in 2..=k.max {
        let mut cost = 0u64;
        for j in 0..windows(c) {
            // Scalars whose length exceeds j c can have a nonzero digit in window j
            // (a carry from below needs a bit at or above (j c) - 1).
            let lo = (j * c).saturating_sub(1).max(1) as usize;
            let n_j = above[lo.min(R_BITS as usize + 1)];
            if n_j > 0 {
                cost += n_j * k.add + (1u64 << (c - 1)) * 2 * k.reduce + c as u64 * 8;
            }
        }
        if cost < best.0 {
            best = (cost, c);
        }
    }
    best.1
}

/// Signed digits, window-major: digits[j * n + i] is scalar i's digit in window j.
pub(crate) fn recode(scalars: &[Scalar], c: u32) -> Vec<i32> {
    let n = scalars.len();
    let w = windows(c) as usize;
    let mut digits = vec![0i32; n * w];
    let half = 1i64 << (c - 1);
    for (i, s) in scalars.iter().enumerate() {
        let top = s.bits();
        let mut carry = 0i64;
        for j in 0..w {
            let at = j as u32 * c;
            if at >= top && carry == 0 {
                break;
            }
            let mut d = s.bits_at(at, c) as i64 + carry;
            carry = 0;
            if d > half {
                d -= 1i64 << c;
                carry = 1;
            }
            digits[j * n + i] = d as i32;
        }
    }
    digits
}

/// sum_b b B_b for one window over a slice of points (None when nothing landed): the
/// field arithmetic compiled for BMI2 + ADX (`mulx`) when the CPU has them, else
/// portable; both are the same source and give the same result.
fn window_sum(a: Arith, points: &[Affine], digits: &[i32], c: u32) -> Option<Jacobian> {
    #[cfg(target_arch = "x86_64")]
    if a.adx {
        // SAFETY: the CPU has BMI2 and ADX (`Arith::on` read it from its features).
        return unsafe { window_sum_adx(points, digits, c) };
    }
    window_sum_portable(points, digits, c)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2,adx")]
unsafe fn window_sum_adx(points: &[Affine], digits: &[i32], c: u32) -> Option<Jacobian> {
    window_sum_portable(points, digits, c)
}

/// [`window_sum`] with twisted Edwards buckets; `degenerate` is set when an addition
/// met an exceptional pair (possible only for points outside G1), and the result is
/// then meaningless.
fn window_sum_te(
    a: Arith,
    points: &[TePre],
    digits: &[i32],
    c: u32,
    degenerate: &AtomicBool,
) -> Option<Jacobian> {
    #[cfg(target_arch = "x86_64")]
    if a.adx {
        // SAFETY: the CPU has BMI2 and ADX (`Arith::on` read it from its features).
        return unsafe { window_sum_te_adx(points, digits, c, degenerate) };
    }
    window_sum_te_portable(points, digits, c, degenerate)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2,adx")]
unsafe fn window_sum_te_adx(
    points: &[TePre],
    digits: &[i32],
    c: u32,
    degenerate: &AtomicBool,
) -> Option<Jacobian> {
    window_sum_te_portable(points, digits, c, degenerate)
}

#[inline(always)]
fn window_sum_te_portable(
    points: &[TePre],
    digits: &[i32],
    c: u32,
    degenerate: &AtomicBool,
) -> Option<Jacobian> {
    let mut buckets = vec![TeExt::IDENTITY; 1usize << (c - 1)];
    let mut highest = 0usize;
    let mut bad = false;
    for (i, (p, &d)) in points.iter().zip(digits).enumerate() {
        // The buckets outgrow L2 for wide windows: fetch the next one ahead.
        if let Some(&next) = digits.get(i + 2) {
            prefetch(&buckets[(next.unsigned_abs() as usize).saturating_sub(1)]);
        }
        if d == 0 {
            continue;
        }
        let b = d.unsigned_abs() as usize;
        highest = highest.max(b);
        let bucket = &mut buckets[b - 1];
        if d > 0 {
            bucket.add_pre_assign(p);
        } else {
            bucket.add_pre_assign(&p.neg());
        }
        bad |= bucket.is_degenerate();
    }
    if highest == 0 {
        return None;
    }
    let mut running = TeExt::IDENTITY;
    let mut acc = TeExt::IDENTITY;
    for b in buckets[..highest].iter().rev() {
        running.add_assign(b);
        acc.add_assign(&running);
        bad |= running.is_degenerate() | acc.is_degenerate();
    }
    if bad {
        degenerate.store(true, Ordering::Relaxed);
    }
    Some(acc.to_jacobian())
}

/// Pending additions per batch inversion.
const BATCH: usize = 1024;

/// Where bucket additions go: XYZZ buckets or batched affine ones.
trait BucketSet {
    fn add(&mut self, b: usize, x: &Fq, y: &Fq);
}

impl BucketSet for Vec<Xyzz> {
    #[inline(always)]
    fn add(&mut self, b: usize, x: &Fq, y: &Fq) {
        self[b].add_affine_assign(x, y);
    }
}

impl BucketSet for AffineBuckets {
    #[inline(always)]
    fn add(&mut self, b: usize, x: &Fq, y: &Fq) {
        AffineBuckets::add(self, b, *x, *y);
    }
}

/// Adds +-P_i to bucket |d_i| - 1 for every nonzero digit; returns the highest |d_i|.
#[inline(always)]
fn accumulate(points: &[Affine], digits: &[i32], buckets: &mut impl BucketSet) -> usize {
    let mut highest = 0usize;
    for (p, &d) in points.iter().zip(digits) {
        if d == 0 || p.infinity {
            continue;
        }
        let b = d.unsigned_abs() as usize;
        highest = highest.max(b);
        let y = if d > 0 { p.y } else { p.y.neg() };
        buckets.add(b - 1, &p.x, &y);
    }
    highest
}

#[inline(always)]
fn window_sum_portable(points: &[Affine], digits: &[i32], c: u32) -> Option<Jacobian> {
    let count = 1usize << (c - 1);
    // Few buckets make batches collide: XYZZ buckets then.
    if count < 4 * BATCH {
        let mut buckets = vec![Xyzz::INFINITY; count];
        let highest = accumulate(points, digits, &mut buckets);
        return running_sum(buckets[..highest].iter().rev().copied(), highest).map(Jacobian::from);
    }
    let mut buckets = AffineBuckets::new(count, BATCH);
    let highest = accumulate(points, digits, &mut buckets);
    buckets.finish();
    if highest == 0 {
        return None;
    }
    let mut running = Xyzz::INFINITY;
    let mut acc = Xyzz::INFINITY;
    for b in (0..highest).rev() {
        buckets.add_bucket_to(b, &mut running);
        acc.add_assign(&running);
    }
    Some(Jacobian::from(acc))
}

/// A hint to bring `v` into the cache (nothing off x86-64).
#[inline(always)]
fn prefetch<T>(v: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint and never faults.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((v as *const T).cast());
        _mm_prefetch::<_MM_HINT_T0>((v as *const T).cast::<i8>().add(128));
    }
}

/// sum_b b B_b over buckets given from the top down (None when there are none).
#[inline(always)]
fn running_sum(top_down: impl Iterator<Item = Xyzz>, highest: usize) -> Option<Xyzz> {
    if highest == 0 {
        return None;
    }
    let mut running = Xyzz::INFINITY;
    let mut acc = Xyzz::INFINITY;
    for b in top_down {
        running.add_assign(&b);
        acc.add_assign(&running);
    }
    Some(acc)
}

/// sum_i scalars[i] points[i], with the window width from [`choose_window`].
///
/// Convenience wrapper: [`msm_with`] this process's detected features.
pub fn msm(points: &[Affine], scalars: &[Scalar]) -> Result<Jacobian, MsmError> {
    msm_with(points, scalars, Lanes::Auto, CpuFeatures::get())
}

/// [`msm`] with the bucket arithmetic the CPU features `cpu` allow within `lanes`
/// (`Lanes::Serial`: portable 64-bit arithmetic).
pub fn msm_with(
    points: &[Affine],
    scalars: &[Scalar],
    lanes: Lanes,
    cpu: &CpuFeatures,
) -> Result<Jacobian, MsmError> {
    if points.len() != scalars.len() {
        return Err(MsmError::LengthMismatch {
            points: points.len(),
            scalars: scalars.len(),
        });
    }
    let a = Arith::on(&cpu.limited_to(lanes));
    Ok(edwards_msm(
        points,
        scalars,
        choose_window_on(scalars, a),
        a,
    ))
}

/// [`msm`] with Weierstrass buckets (batched affine, or XYZZ for narrow windows) and
/// the window from their cost model: the path [`msm`] took before Edwards buckets
/// measured faster, kept for comparison and as the fallback.
pub fn msm_weierstrass(points: &[Affine], scalars: &[Scalar]) -> Result<Jacobian, MsmError> {
    if points.len() != scalars.len() {
        return Err(MsmError::LengthMismatch {
            points: points.len(),
            scalars: scalars.len(),
        });
    }
    Ok(msm_with_window(
        points,
        scalars,
        window_for(scalars, WEIERSTRASS),
    ))
}

/// [`msm_weierstrass`] with a given window width c in 2..=20 (clamped).
pub fn msm_with_window(points: &[Affine], scalars: &[Scalar], c: u32) -> Jacobian {
    weierstrass(points, scalars, c, Arith::on(CpuFeatures::get()))
}

pub(crate) fn weierstrass(points: &[Affine], scalars: &[Scalar], c: u32, a: Arith) -> Jacobian {
    let n = points.len().min(scalars.len());
    if n == 0 {
        return Jacobian::INFINITY;
    }
    let c = c.clamp(2, MAX_WINDOW);
    let digits = recode(&scalars[..n], c);
    pippenger(&points[..n], &digits, windows(c) as usize, c, |p, d, c| {
        window_sum(a, p, d, c)
    })
}

/// [`msm_with_window`] with twisted Edwards buckets (what [`msm`] runs): the points
/// are mapped once (one shared inversion per chunk), then every bucket addition is
/// the 7M mixed Edwards addition and the reduction uses 9M additions, in AVX-512 IFMA
/// lanes when the CPU has them. Exact for every input on the curve: points
/// that do not map (none is in G1) are multiplied on the Weierstrass side, and should
/// an addition meet an exceptional pair (only possible outside G1) the whole sum is
/// redone with Weierstrass buckets.
///
/// Convenience wrapper: [`msm_edwards_with`] this process's detected features.
pub fn msm_edwards(points: &[Affine], scalars: &[Scalar], c: u32) -> Jacobian {
    msm_edwards_with(points, scalars, c, Lanes::Auto, CpuFeatures::get())
}

/// [`msm_edwards`] with the bucket arithmetic the CPU features `cpu` allow within
/// `lanes` (IFMA lanes, `mulx`/`adx` window sums; `Lanes::Serial`: portable).
pub fn msm_edwards_with(
    points: &[Affine],
    scalars: &[Scalar],
    c: u32,
    lanes: Lanes,
    cpu: &CpuFeatures,
) -> Jacobian {
    edwards_msm(points, scalars, c, Arith::on(&cpu.limited_to(lanes)))
}

fn edwards_msm(points: &[Affine], scalars: &[Scalar], c: u32, a: Arith) -> Jacobian {
    let n = points.len().min(scalars.len());
    if n == 0 {
        return Jacobian::INFINITY;
    }
    let (points, scalars) = (&points[..n], &scalars[..n]);
    // Points with a zero scalar add nothing: when they are many (skewed inputs), drop
    // them before the mapping, which costs the same for every point.
    let zeros = scalars.iter().filter(|s| s.is_zero()).count();
    let kept: (Vec<Affine>, Vec<Scalar>);
    let (points, scalars) = if zeros * 8 >= n {
        kept = points
            .iter()
            .zip(scalars)
            .filter(|(_, s)| !s.is_zero())
            .map(|(p, s)| (*p, *s))
            .unzip();
        (&kept.0[..], &kept.1[..])
    } else {
        (points, scalars)
    };
    if points.is_empty() {
        return Jacobian::INFINITY;
    }
    let (te, rest) = to_edwards(points, scalars);
    let te = EdPoints::new(te, a);
    let c = c.clamp(2, MAX_WINDOW);
    let digits = recode(scalars, c);
    match edwards(&te, &digits, windows(c) as usize, c, a) {
        Some(sum) => sum.add(&rest),
        None => weierstrass(points, scalars, c, a),
    }
}

/// Edwards points in the form the bucket arithmetic reads.
#[derive(Clone, Debug)]
pub(crate) enum EdPoints {
    Scalar(Vec<TePre>),
    #[cfg(target_arch = "x86_64")]
    Lanes(Vec<crate::ifma::Pre52>),
}

impl EdPoints {
    /// Eight buckets at a time in AVX-512 IFMA lanes where `a` has them (see
    /// `src/ifma.rs`), else one at a time in 64-bit arithmetic.
    pub(crate) fn new(te: Vec<TePre>, a: Arith) -> EdPoints {
        #[cfg(target_arch = "x86_64")]
        if a.ifma {
            return EdPoints::Lanes(te.par_iter().map(crate::ifma::Pre52::new).collect());
        }
        let _ = a;
        EdPoints::Scalar(te)
    }

    /// The cost model's figures for this arithmetic.
    pub(crate) fn costs(a: Arith) -> Costs {
        if a.ifma {
            EDWARDS_LANES
        } else {
            EDWARDS
        }
    }

    pub(crate) fn bytes(&self) -> usize {
        match self {
            EdPoints::Scalar(v) => v.len() * std::mem::size_of::<TePre>(),
            #[cfg(target_arch = "x86_64")]
            EdPoints::Lanes(v) => v.len() * std::mem::size_of::<crate::ifma::Pre52>(),
        }
    }
}

/// The Edwards images of `points`, and sum s_i P_i over the points that do not map.
fn to_edwards(points: &[Affine], scalars: &[Scalar]) -> (Vec<TePre>, Jacobian) {
    let mapped: Vec<(Vec<TePre>, Vec<usize>)> =
        points.par_chunks(MAP_CHUNK).map(TePre::batch).collect();
    let mut te = Vec::with_capacity(points.len());
    let mut rest = Jacobian::INFINITY;
    for (k, (chunk, bad)) in mapped.into_iter().enumerate() {
        for i in bad {
            let i = k * MAP_CHUNK + i;
            rest = rest.add(&Jacobian::from(points[i]).mul_limbs(&scalars[i].0));
        }
        te.extend(chunk);
    }
    (te, rest)
}

/// Pippenger over Edwards points; None when an addition was exceptional.
pub(crate) fn edwards(
    te: &EdPoints,
    digits: &[i32],
    w: usize,
    c: u32,
    a: Arith,
) -> Option<Jacobian> {
    let degenerate = AtomicBool::new(false);
    let r = match te {
        EdPoints::Scalar(te) => pippenger(te, digits, w, c, |p: &[TePre], d: &[i32], c: u32| {
            window_sum_te(a, p, d, c, &degenerate)
        }),
        #[cfg(target_arch = "x86_64")]
        EdPoints::Lanes(te) => pippenger(te, digits, w, c, |p, d: &[i32], c: u32| {
            let mut bad = false;
            // SAFETY: `EdPoints::Lanes` is built only where `a.ifma`, read by
            // `Arith::on` from features this CPU has (AVX-512F and IFMA).
            let r = unsafe { crate::ifma::window_sum(p, d, c, &mut bad) };
            if bad {
                degenerate.store(true, Ordering::Relaxed);
            }
            r.map(|t| t.to_jacobian())
        }),
    };
    (!degenerate.load(Ordering::Relaxed)).then_some(r)
}

/// Points per shared inversion when mapping to Edwards form.
pub(crate) const MAP_CHUNK: usize = 4096;

/// The bucket method over `points` with window-major signed `digits` (w windows of
/// points.len() digits each, window j weighing 2^(j c)).
fn pippenger<P: Sync>(
    points: &[P],
    digits: &[i32],
    w: usize,
    c: u32,
    window_sum: impl Fn(&[P], &[i32], u32) -> Option<Jacobian> + Sync,
) -> Jacobian {
    let n = points.len();
    let used: Vec<usize> = (0..w)
        .filter(|&j| digits[j * n..(j + 1) * n].iter().any(|&d| d != 0))
        .collect();
    // Split points when there are few windows to spread over the threads.
    let threads = rayon::current_num_threads().max(1);
    let split = if used.len() >= 2 * threads {
        1
    } else {
        (2 * threads)
            .div_ceil(used.len().max(1))
            .min(n.div_ceil(1024).max(1))
    };
    let chunk = n.div_ceil(split);
    let tasks: Vec<(usize, usize)> = used
        .iter()
        .flat_map(|&j| (0..split).map(move |k| (j, k)))
        .collect();
    let partial: Vec<(usize, Option<Jacobian>)> = tasks
        .par_iter()
        .map(|&(j, k)| {
            let (lo, hi) = (k * chunk, ((k + 1) * chunk).min(n));
            let d = &digits[j * n..(j + 1) * n];
            (j, window_sum(&points[lo..hi], &d[lo..hi], c))
        })
        .collect();
    let mut sums = vec![Jacobian::INFINITY; w];
    for (j, s) in partial {
        if let Some(s) = s {
            sums[j] = sums[j].add(&s);
        }
    }
    let mut acc = Jacobian::INFINITY;
    for s in sums.iter().rev() {
        for _ in 0..c {
            acc = acc.double();
        }
        acc = acc.add(s);
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recoding_reconstructs_the_scalar() {
        let r_minus_1 = Scalar::from_limbs({
            let mut r = crate::fr::R;
            r[0] -= 1;
            r
        })
        .unwrap_or_else(|| panic!("r - 1 canonical"));
        let cases = [
            Scalar::ZERO,
            Scalar::from_u64(1),
            Scalar::from_u64(u64::MAX),
            r_minus_1,
            Scalar::from_limbs([u64::MAX, u64::MAX, u64::MAX, 0x0fff_ffff_ffff_ffff])
                .unwrap_or_else(|| panic!("below r")),
        ];
        for c in 2..=MAX_WINDOW {
            let digits = recode(&cases, c);
            let n = cases.len();
            for (i, s) in cases.iter().enumerate() {
                // Rebuild sum_j d_j 2^(j c) in i128 pieces: compare limb by limb via a
                // big accumulator of 5 signed 64-bit words.
                let mut acc = [0i128; 6];
                for j in 0..windows(c) as usize {
                    let d = digits[j * n + i] as i128;
                    assert!(d.unsigned_abs() <= 1u128 << (c - 1), "digit range");
                    let bit = j as u32 * c;
                    let (w, sh) = ((bit / 64) as usize, bit % 64);
                    acc[w] += d << sh;
                }
                // Normalise to limbs.
                let mut out = [0u64; 4];
                let mut carry = 0i128;
                for k in 0..6 {
                    let v = acc[k] + carry;
                    if k < 4 {
                        out[k] = v as u64;
                    } else {
                        assert_eq!(v as u64, 0, "no bits above 256");
                    }
                    carry = v >> 64;
                }
                assert_eq!(out, s.0, "c = {c}");
            }
        }
    }
}
