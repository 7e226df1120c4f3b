//! Pippenger's bucket method for sum_i s_i P_i over BLS12-377 G1.
//!
//! 1. Recoding: each scalar (< r < 2^253) is cut into windows of c bits and turned into
//!    signed digits d in [-2^(c-1), 2^(c-1)]: a raw window value above 2^(c-1) becomes
//!    value - 2^c with a carry into the next window. The top window never overflows
//!    (its raw value is below 2^(253 mod c), at most 2^(c-1) with the carry), so
//!    floor(253 / c) + 1 windows suffice and each needs only 2^(c-1) buckets; -P is
//!    free (negate y).
//! 2. Bucket accumulation: for each window, bucket |d| gets +-P_i. With at least 4096
//!    buckets they are affine and updated in batches that share one inversion
//!    ([`crate::batch`], about 6.5M an addition; an addition that meets a bucket already
//!    in the batch goes to that bucket's XYZZ overflow); with fewer buckets (small
//!    windows, where batches would collide) XYZZ buckets take the affine point by
//!    madd-2008-s (8M + 2S).
//! 3. Bucket reduction: sum_b b B_b by running sums from the top bucket down (two XYZZ
//!    additions per bucket, 2 x (12M + 2S)), stopping at the highest bucket in use.
//! 4. Windows are combined by Horner's rule: c doublings and one addition per window.
//!
//! Window width (cost model, in field multiplications; fitted on this code at 2^18
//! points: a bucket addition ~ 7, one bucket's share of the reduction ~ 24): for each
//! candidate c in 2..=20, sum over the windows j that hold a nonzero digit of
//! (N_j 7 + 2^(c-1) 24), where
//! N_j counts the scalars with a bit at or above position j c (from a histogram of
//! scalar lengths), plus 2^c-independent Horner costs; the cheapest c wins. Skewed
//! inputs (zeros, ones, small values) therefore get narrower or fewer windows instead
//! of paying for empty buckets: a zero scalar costs nothing, and a window with no
//! nonzero digit is skipped outright.
//!
//! Fixed bases: [`Precomputed`] trades memory for fewer reductions (see its docs).
//!
//! Parallelism: rayon tasks over (window, slice of points); with fewer windows in use
//! than 2 x threads the points are split too, and the partial window sums (linear in
//! the buckets) are added. Memory: the signed digits, 4 bytes per scalar per window
//! (2^20 scalars, c = 16: 16 windows, 64 MiB), plus per running task 2^(c-1) buckets
//! of about 300 bytes (affine value, XYZZ overflow, flags; c = 16: 10 MiB each).

use rayon::prelude::*;

use crate::batch::AffineBuckets;
use crate::fq::Fq;
use crate::fr::{Scalar, R_BITS};
use crate::g1::{Affine, Jacobian, Xyzz};

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

/// Relative cost of a bucket addition (batched affine, about 6.5M), in multiplications.
const MIXED_ADD: u64 = 7;
/// Relative cost of one bucket's share of the reduction, halved (measured ratio to a
/// bucket addition: about 3.4).
const FULL_ADD: u64 = 12;
/// Widest window considered.
const MAX_WINDOW: u32 = 20;

/// Number of windows of width c.
fn windows(c: u32) -> u32 {
    R_BITS / c + 1
}

/// The window width for these scalars (see the module docs).
pub fn choose_window(scalars: &[Scalar]) -> u32 {
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
    for c in 2..=MAX_WINDOW {
        let mut cost = 0u64;
        for j in 0..windows(c) {
            // Scalars whose length exceeds j c can have a nonzero digit in window j
            // (a carry from below needs a bit at or above (j c) - 1).
            let lo = (j * c).saturating_sub(1).max(1) as usize;
            let n_j = above[lo.min(R_BITS as usize + 1)];
            if n_j > 0 {
                cost += n_j * MIXED_ADD + (1u64 << (c - 1)) * 2 * FULL_ADD + c as u64 * 8;
            }
        }
        if cost < best.0 {
            best = (cost, c);
        }
    }
    best.1
}

/// Signed digits, window-major: digits[j * n + i] is scalar i's digit in window j.
fn recode(scalars: &[Scalar], c: u32) -> Vec<i32> {
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
fn window_sum(points: &[Affine], digits: &[i32], c: u32) -> Option<Xyzz> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("bmi2") && std::arch::is_x86_feature_detected!("adx") {
        // SAFETY: the CPU has BMI2 and ADX (checked just above).
        return unsafe { window_sum_adx(points, digits, c) };
    }
    window_sum_portable(points, digits, c)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2,adx")]
unsafe fn window_sum_adx(points: &[Affine], digits: &[i32], c: u32) -> Option<Xyzz> {
    window_sum_portable(points, digits, c)
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
fn window_sum_portable(points: &[Affine], digits: &[i32], c: u32) -> Option<Xyzz> {
    let count = 1usize << (c - 1);
    // Few buckets make batches collide: XYZZ buckets then.
    if count < 4 * BATCH {
        let mut buckets = vec![Xyzz::INFINITY; count];
        let highest = accumulate(points, digits, &mut buckets);
        return running_sum(buckets[..highest].iter().rev().copied(), highest);
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
    Some(acc)
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
pub fn msm(points: &[Affine], scalars: &[Scalar]) -> Result<Jacobian, MsmError> {
    if points.len() != scalars.len() {
        return Err(MsmError::LengthMismatch {
            points: points.len(),
            scalars: scalars.len(),
        });
    }
    Ok(msm_with_window(points, scalars, choose_window(scalars)))
}

/// [`msm`] with a given window width c in 2..=20 (clamped).
pub fn msm_with_window(points: &[Affine], scalars: &[Scalar], c: u32) -> Jacobian {
    let n = points.len().min(scalars.len());
    if n == 0 {
        return Jacobian::INFINITY;
    }
    let c = c.clamp(2, MAX_WINDOW);
    let digits = recode(&scalars[..n], c);
    pippenger(&points[..n], &digits, windows(c) as usize, c)
}

/// The bucket method over `points` with window-major signed `digits` (w windows of
/// points.len() digits each, window j weighing 2^(j c)).
fn pippenger(points: &[Affine], digits: &[i32], w: usize, c: u32) -> Jacobian {
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
    let partial: Vec<(usize, Option<Xyzz>)> = tasks
        .par_iter()
        .map(|&(j, k)| {
            let (lo, hi) = (k * chunk, ((k + 1) * chunk).min(n));
            let d = &digits[j * n..(j + 1) * n];
            (j, window_sum(&points[lo..hi], &d[lo..hi], c))
        })
        .collect();
    let mut sums = vec![Xyzz::INFINITY; w];
    for (j, s) in partial {
        if let Some(s) = s {
            sums[j].add_assign(&s);
        }
    }
    let mut acc = Jacobian::INFINITY;
    for s in sums.iter().rev() {
        for _ in 0..c {
            acc = acc.double();
        }
        acc = acc.add(&Jacobian::from(*s));
    }
    acc
}

/// Fixed bases prepared once for many MSMs (the `multi_scalar_mult_init` /
/// `multi_scalar_mult` shape).
///
/// With K groups, the table holds [2^(t g c)] P_i for t in 0..K, where the W windows of
/// width c are cut into K groups of g = ceil(W / K): the digit of window t g + j' of
/// scalar i then multiplies table point (t, i) in window j' < g, so an MSM runs g windows
/// over n K points: the same n W bucket additions, but g instead of W bucket reductions
/// and Horner steps, which also lets the window widen. Memory: n K affine points of 104
/// bytes (2^20 points, K = 4: 436 MB), plus the digits of each call (4 n W bytes).
#[derive(Clone, Debug)]
pub struct Precomputed {
    table: Vec<Affine>,
    n: usize,
    k: usize,
    c: u32,
}

impl Precomputed {
    /// Prepares `points` with K = `groups` (1 to 64; 1 keeps only the points).
    pub fn new(points: &[Affine], groups: usize) -> Precomputed {
        let n = points.len();
        let k = groups.clamp(1, 64);
        // Window from the cost model for uniform scalars, with g reductions.
        let mut best = (u64::MAX, 2);
        for c in 2..=MAX_WINDOW {
            let w = windows(c) as u64;
            let g = w.div_ceil(k as u64);
            let cost =
                w * n as u64 * MIXED_ADD + g * ((1u64 << (c - 1)) * 2 * FULL_ADD + 8 * c as u64);
            if cost < best.0 {
                best = (cost, c);
            }
        }
        let c = best.1;
        let g = (windows(c) as usize).div_ceil(k);
        let mut table = Vec::with_capacity(n * k);
        table.extend_from_slice(points);
        let mut current: Vec<Jacobian> = points.iter().map(|p| Jacobian::from(*p)).collect();
        for _ in 1..k {
            current.par_iter_mut().for_each(|p| {
                for _ in 0..g as u32 * c {
                    *p = p.double();
                }
            });
            table.extend(Jacobian::batch_to_affine(&current));
        }
        Precomputed { table, n, k, c }
    }

    /// Number of base points.
    pub fn len(&self) -> usize {
        self.n
    }

    /// True when there are no base points.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Bytes held by the table.
    pub fn table_bytes(&self) -> usize {
        self.table.len() * std::mem::size_of::<Affine>()
    }

    /// sum_i scalars[i] P_i over the prepared points.
    pub fn msm(&self, scalars: &[Scalar]) -> Result<Jacobian, MsmError> {
        if scalars.len() != self.n {
            return Err(MsmError::LengthMismatch {
                points: self.n,
                scalars: scalars.len(),
            });
        }
        let (n, k, c) = (self.n, self.k, self.c);
        if n == 0 {
            return Ok(Jacobian::INFINITY);
        }
        let digits = recode(scalars, c);
        let w = windows(c) as usize;
        let g = w.div_ceil(k);
        // Window j' of table point (t, i) carries digit (t g + j', i).
        let mut vd = vec![0i32; g * n * k];
        for j in 0..g {
            for t in 0..k {
                let src = t * g + j;
                if src < w {
                    let dst = j * n * k + t * n;
                    vd[dst..dst + n].copy_from_slice(&digits[src * n..(src + 1) * n]);
                }
            }
        }
        Ok(pippenger(&self.table, &vd, g, c))
    }
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
