//! BLS12-377 G1 multi-scalar multiplication on the device (kernels/msm.cu). Every
//! result equals `wirespeed_msm`'s; choosing between the two and falling back is the
//! engine's (crates/engine).
//!
//! Pipeline (see kernels/msm.cuh): signed c-bit window digits, a counting sort of
//! (bucket, point) entries (count, prefix sums, scatter), one thread per bucket adding
//! its points with mixed XYZZ additions, per-window running sums cut into segments, then
//! the window sums come back to the host, which combines them by Horner's rule here with
//! the `wirespeed_msm` types. Points are uploaded in the Montgomery form crates/msm keeps
//! (six 64-bit limbs are twelve 32-bit words with the same bits), so the upload is a copy.
//!
//! [`DeviceMsm`] uploads a point set once, optionally with K - 1 shifted copies
//! `[2^(t g c)] P` (built on the device), which cut the windows to g = ceil(w / K) at the
//! same number of bucket additions, and then runs any number of scalar sets against it
//! from preallocated device buffers and a pinned host buffer for the scalars.
//!
//! Device memory for n points, K groups and windows of c bits (w = 253 / c + 1,
//! g = ceil(w / K), 2^(c-1) buckets per window): the table, 96 n K bytes; per run the
//! scalars (32 n), the entries (at most 4 n w), the buckets (192 g 2^(c-1)) and small
//! count, offset and segment buffers. 2^26 points at K = 1 (c = 16): 6.4 GB of points
//! and 6.5 GB of run buffers (2.1 GB scalars, 4.3 GB entries). [`Plan::device_bytes`] states it; it is checked against the
//! free memory before anything is allocated.

use std::sync::Arc;

use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, LaunchArgs, LaunchConfig, PinnedHostSlice, PushKernelArg,
};
use wirespeed_msm::fq::{batch_inverse, Fq};
use wirespeed_msm::{Affine, Jacobian, Scalar};

use crate::{Gpu, GpuError};

/// 32-bit words per affine point (x, y), per XYZZ point and per scalar.
pub(crate) const AFFINE_WORDS: usize = 24;
pub(crate) const XYZZ_WORDS: usize = 48;
pub(crate) const SCALAR_WORDS: usize = 8;
/// Counts per thread in the scan (MSM_SCAN_CHUNK in msm.cuh).
const SCAN_CHUNK: usize = 256;
/// Bits of the scalar field's modulus.
const SCALAR_BITS: u32 = 253;
/// Most reduction segments per window.
const MAX_SEGS: u32 = 256;
/// Threads per block: the accumulation kernel takes 160 registers a thread (sm_90, no
/// spills), so 128-thread blocks fit three to an SM where 256 would fit one.
const BLOCK: u32 = 128;

/// The shape of a GPU MSM run: the parameters every kernel of msm.cu takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Scalars, and points per group.
    pub n: u32,
    /// Groups of shifted points (1: the points only).
    pub k: u32,
    /// Window bits.
    pub c: u32,
    /// Windows: 253 / c + 1.
    pub w: u32,
    /// Windows run per group: ceil(w / k).
    pub g: u32,
    /// Buckets per window: 2^(c-1).
    pub nb: u32,
    /// Reduction segments per window.
    pub segs: u32,
}

impl Plan {
    /// The plan for `n` scalars against `k` groups, with the window from
    /// [`Plan::window_bits`].
    pub fn new(n: usize, k: usize) -> Result<Plan, GpuError> {
        Plan::with_window(n, k, Plan::window_bits(n.saturating_mul(k.max(1))))
    }

    /// Window bits for a run that adds `entries` points per window: about 8 points per
    /// bucket, 4 to 16 bits.
    pub fn window_bits(entries: usize) -> u32 {
        let log = usize::BITS - 1 - entries.max(1).leading_zeros();
        log.saturating_sub(3).clamp(4, 16)
    }

    /// The plan with c window bits (2 to 20).
    pub fn with_window(n: usize, k: usize, c: u32) -> Result<Plan, GpuError> {
        if !(2..=20).contains(&c) {
            return Err(GpuError::Unsupported(format!("window of {c} bits")));
        }
        let w = SCALAR_BITS / c + 1;
        // More groups than windows would be built and stored but never read.
        let k = k.clamp(1, w as usize);
        let g = w.div_ceil(k as u32);
        let nb = 1u32 << (c - 1);
        // Entries name a point in 31 bits; offsets and counts are 32-bit.
        if n == 0 || n.saturating_mul(k) >= 1 << 31 || n.saturating_mul(w as usize) >= 1 << 31 {
            return Err(GpuError::Unsupported(format!(
                "MSM of {n} points in {k} groups (at most 2^31 entries)"
            )));
        }
        Ok(Plan {
            n: n as u32,
            k: k as u32,
            c,
            w,
            g,
            nb,
            segs: nb.min(MAX_SEGS),
        })
    }

    /// The shape arguments (n, k, c, w, g, nb, segs), in the kernels' order.
    pub fn args(&self) -> [u32; 7] {
        [self.n, self.k, self.c, self.w, self.g, self.nb, self.segs]
    }

    /// Bucket keys: g 2^(c-1).
    pub fn keys(&self) -> usize {
        self.g as usize * self.nb as usize
    }

    /// Scan chunks over the keys.
    pub fn chunks(&self) -> usize {
        self.keys().div_ceil(SCAN_CHUNK)
    }

    /// The most entries a run can write: one per scalar and window.
    pub fn max_entries(&self) -> usize {
        self.n as usize * self.w as usize
    }

    /// Device bytes of the point table (K n affine points).
    pub fn table_bytes(&self) -> usize {
        4 * AFFINE_WORDS * self.n as usize * self.k as usize
    }

    /// Device bytes of one run's buffers.
    pub fn run_bytes(&self) -> usize {
        let keys = self.keys();
        let words = SCALAR_WORDS * self.n as usize  // scalars
            + 3 * keys + 1                          // counts, offsets, cursors
            + self.chunks() + 1                     // chunk sums
            + self.max_entries()                    // entries
            + XYZZ_WORDS * keys                     // buckets
            + XYZZ_WORDS * (self.g * self.segs) as usize  // segment sums
            + XYZZ_WORDS * self.g as usize; // window sums
        4 * words
    }

    /// All device bytes: table and run buffers.
    pub fn device_bytes(&self) -> usize {
        self.table_bytes() + self.run_bytes()
    }
}

/// The twelve Montgomery words of x.
fn fq_words(x: &Fq, out: &mut [u32]) {
    for (i, l) in x.to_mont_limbs().iter().enumerate() {
        out[2 * i] = *l as u32;
        out[2 * i + 1] = (*l >> 32) as u32;
    }
}

/// An element from twelve Montgomery words; an error unless below p.
fn fq_from_words(w: &[u32]) -> Result<Fq, GpuError> {
    let mut l = [0u64; 6];
    for (i, x) in l.iter_mut().enumerate() {
        *x = w[2 * i] as u64 | (w[2 * i + 1] as u64) << 32;
    }
    Fq::from_mont_limbs_checked(l)
        .ok_or_else(|| GpuError::Driver("the device returned an unreduced field element".into()))
}

/// Points as the kernels read them: 24 words each, infinity as (0, 0).
pub(crate) fn point_words(points: &[Affine], out: &mut [u32]) {
    for (p, o) in points.iter().zip(out.chunks_exact_mut(AFFINE_WORDS)) {
        if p.infinity {
            o.fill(0);
        } else {
            fq_words(&p.x, &mut o[..12]);
            fq_words(&p.y, &mut o[12..]);
        }
    }
}

/// Scalars as the kernels read them: eight little-endian words each.
pub(crate) fn scalar_words(scalars: &[Scalar], out: &mut [u32]) {
    for (s, o) in scalars.iter().zip(out.chunks_exact_mut(SCALAR_WORDS)) {
        for (i, l) in s.limbs().iter().enumerate() {
            o[2 * i] = *l as u32;
            o[2 * i + 1] = (*l >> 32) as u32;
        }
    }
}

/// sum_j 2^(j c) W_j for the window sums W_j (48-word XYZZ points) the kernels return.
pub(crate) fn combine(windows: &[u32], c: u32) -> Result<Jacobian, GpuError> {
    let mut pts = Vec::with_capacity(windows.len() / XYZZ_WORDS);
    for w in windows.chunks_exact(XYZZ_WORDS) {
        pts.push([
            fq_from_words(&w[..12])?,
            fq_from_words(&w[12..24])?,
            fq_from_words(&w[24..36])?,
            fq_from_words(&w[36..])?,
        ]);
    }
    // x = X / ZZ and y = Y / ZZZ with one shared inversion of the ZZ ZZZ.
    let mut inv: Vec<Fq> = pts.iter().map(|p| p[2].mul(&p[3])).collect();
    batch_inverse(&mut inv, &mut Vec::new());
    let mut acc = Jacobian::INFINITY;
    for (p, d) in pts.iter().zip(&inv).rev() {
        for _ in 0..c {
            acc = acc.double();
        }
        if !p[2].is_zero() {
            let x = p[0].mul(&d.mul(&p[3]));
            let y = p[1].mul(&d.mul(&p[2]));
            acc = acc.add(&Jacobian::from(Affine::new_unchecked(x, y)));
        }
    }
    Ok(acc)
}

fn length_error(points: usize, scalars: usize) -> GpuError {
    GpuError::Unsupported(format!("{points} points but {scalars} scalars"))
}

/// `sum_i scalars[i] points[i]` on the device (the points uploaded for this one run).
/// The result equals `wirespeed_msm::msm`'s.
pub fn msm(g: &'static Gpu, points: &[Affine], scalars: &[Scalar]) -> Result<Jacobian, GpuError> {
    if points.len() != scalars.len() {
        return Err(length_error(points.len(), scalars.len()));
    }
    if points.is_empty() {
        return Ok(Jacobian::INFINITY);
    }
    DeviceMsm::new(g, points, 1)?.run(scalars)
}

/// The kernels of msm.cu.
struct Kernels {
    count: CudaFunction,
    scan_sum: CudaFunction,
    scan_top: CudaFunction,
    scan_write: CudaFunction,
    scatter: CudaFunction,
    accumulate: CudaFunction,
    reduce: CudaFunction,
    windows: CudaFunction,
}

impl Kernels {
    fn load(g: &Gpu) -> Result<Kernels, GpuError> {
        let f = |name| g.function("msm.cu", name);
        Ok(Kernels {
            count: f("ws_msm_count")?,
            scan_sum: f("ws_msm_scan_sum")?,
            scan_top: f("ws_msm_scan_top")?,
            scan_write: f("ws_msm_scan_write")?,
            scatter: f("ws_msm_scatter")?,
            accumulate: f("ws_msm_accumulate")?,
            reduce: f("ws_msm_reduce")?,
            windows: f("ws_msm_windows")?,
        })
    }
}

/// One block-strided launch of `threads` threads.
fn grid(threads: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((threads as u32).div_ceil(BLOCK).max(1), 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Pushes the shape arguments (n, k, c, w, g, nb, segs).
fn push_shape<'a>(b: &mut LaunchArgs<'a>, shape: &'a [u32; 7]) {
    for a in shape {
        b.arg(a);
    }
}

/// A point set resident on the device (with K - 1 shifted copies) and the buffers of
/// one run, for any number of scalar sets.
pub struct DeviceMsm {
    plan: Plan,
    stream: Arc<CudaStream>,
    k: Kernels,
    table: CudaSlice<u32>,
    host_scalars: PinnedHostSlice<u32>,
    scalars: CudaSlice<u32>,
    counts: CudaSlice<u32>,
    chunk_sums: CudaSlice<u32>,
    offsets: CudaSlice<u32>,
    cursor: CudaSlice<u32>,
    entries: CudaSlice<u32>,
    buckets: CudaSlice<u32>,
    partials: CudaSlice<u32>,
    out: CudaSlice<u32>,
}

impl std::fmt::Debug for DeviceMsm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceMsm")
            .field("plan", &self.plan)
            .finish()
    }
}

impl DeviceMsm {
    /// Uploads the points (at least one), builds the K - 1 shifted copies and allocates
    /// the run buffers (after checking that they fit).
    pub fn new(g: &'static Gpu, points: &[Affine], groups: usize) -> Result<DeviceMsm, GpuError> {
        let plan = Plan::new(points.len(), groups)?;
        g.check_memory(
            &format!("MSM of {} points in {} groups", plan.n, plan.k),
            plan.device_bytes(),
        )?;
        let k = Kernels::load(g)?;
        let stream = g.stream()?;
        let n = plan.n as usize;
        let pw = AFFINE_WORDS * n;
        let mut table = stream.alloc_zeros::<u32>(pw * plan.k as usize)?;
        let mut words = vec![0u32; pw];
        point_words(points, &mut words);
        stream.memcpy_htod(&words, &mut table.slice_mut(..pw))?;
        drop(words);
        if plan.k > 1 {
            let pre = g.function("msm.cu", "ws_msm_precompute")?;
            let (nn, doublings) = (plan.n, plan.g * plan.c);
            for t in 1..plan.k as usize {
                let (lo, mut hi) = table.split_at_mut(t * pw);
                let src = lo.slice((t - 1) * pw..);
                let mut dst = hi.slice_mut(..pw);
                let mut b = stream.launch_builder(&pre);
                b.arg(&src).arg(&mut dst).arg(&nn).arg(&doublings);
                // SAFETY: src and dst hold n points each; the kernel reads and writes
                // only points below n.
                unsafe { b.launch(grid(n)) }?;
            }
        }
        let keys = plan.keys();
        let ctx = g.context();
        // SAFETY: every element is written before the buffer is read (each run fills
        // all n scalars before the copy).
        let host_scalars = unsafe { ctx.alloc_pinned::<u32>(SCALAR_WORDS * n) }?;
        let d = DeviceMsm {
            scalars: stream.alloc_zeros(SCALAR_WORDS * n)?,
            counts: stream.alloc_zeros(keys)?,
            chunk_sums: stream.alloc_zeros(plan.chunks() + 1)?,
            offsets: stream.alloc_zeros(keys + 1)?,
            cursor: stream.alloc_zeros(keys)?,
            entries: stream.alloc_zeros(plan.max_entries())?,
            buckets: stream.alloc_zeros(XYZZ_WORDS * keys)?,
            partials: stream.alloc_zeros(XYZZ_WORDS * (plan.g * plan.segs) as usize)?,
            out: stream.alloc_zeros(XYZZ_WORDS * plan.g as usize)?,
            host_scalars,
            plan,
            stream,
            k,
            table,
        };
        d.stream.synchronize()?;
        Ok(d)
    }

    /// One MSM: the scalars through the pinned buffer, the kernels in order, the window
    /// sums back and combined.
    pub fn run(&mut self, scalars: &[Scalar]) -> Result<Jacobian, GpuError> {
        let p = self.plan;
        if scalars.len() != p.n as usize {
            return Err(length_error(p.n as usize, scalars.len()));
        }
        // Waits for the previous run's copy out of the pinned buffer.
        scalar_words(scalars, self.host_scalars.as_mut_slice()?);
        let s = &self.stream;
        s.memcpy_htod(&self.host_scalars, &mut self.scalars)?;
        s.memset_zeros(&mut self.counts)?;
        let shape = p.args();
        let (n, keys, chunks) = (p.n as usize, p.keys(), p.chunks());
        let (keys32, chunks32) = (keys as u32, chunks as u32);
        // SAFETY: for every launch below, the buffers were sized by this plan in
        // `DeviceMsm::new`, and each kernel touches only the elements the plan gives it
        // (kernels/msm.cuh documents each thread's range).
        unsafe {
            let mut b = s.launch_builder(&self.k.count);
            b.arg(&self.scalars).arg(&mut self.counts);
            push_shape(&mut b, &shape);
            b.launch(grid(n))?;

            let mut b = s.launch_builder(&self.k.scan_sum);
            b.arg(&self.counts)
                .arg(&keys32)
                .arg(&chunks32)
                .arg(&mut self.chunk_sums);
            b.launch(grid(chunks))?;

            let mut b = s.launch_builder(&self.k.scan_top);
            b.arg(&mut self.chunk_sums).arg(&chunks32);
            b.launch(grid(1))?;

            let mut b = s.launch_builder(&self.k.scan_write);
            b.arg(&self.counts)
                .arg(&keys32)
                .arg(&chunks32)
                .arg(&self.chunk_sums)
                .arg(&mut self.offsets)
                .arg(&mut self.cursor);
            b.launch(grid(chunks))?;

            let mut b = s.launch_builder(&self.k.scatter);
            b.arg(&self.scalars)
                .arg(&mut self.cursor)
                .arg(&mut self.entries);
            push_shape(&mut b, &shape);
            b.launch(grid(n))?;

            let mut b = s.launch_builder(&self.k.accumulate);
            b.arg(&self.table)
                .arg(&self.offsets)
                .arg(&self.entries)
                .arg(&mut self.buckets)
                .arg(&keys32);
            b.launch(grid(keys))?;

            let mut b = s.launch_builder(&self.k.reduce);
            b.arg(&self.buckets).arg(&mut self.partials);
            push_shape(&mut b, &shape);
            b.launch(grid((p.g * p.segs) as usize))?;

            let mut b = s.launch_builder(&self.k.windows);
            b.arg(&self.partials).arg(&mut self.out);
            push_shape(&mut b, &shape);
            b.launch(grid(p.g as usize))?;
        }
        let out = s.clone_dtoh(&self.out)?;
        s.synchronize()?;
        combine(&out, p.c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_stay_within_the_kernels_limits() {
        for log in [0, 1, 4, 12, 16, 20, 24, 26] {
            for k in [1, 2, 4] {
                let p = Plan::new(1 << log, k).unwrap();
                assert!((4..=16).contains(&p.c));
                assert_eq!(p.w, 253 / p.c + 1);
                assert!(p.g * p.k >= p.w && (p.g - 1) * p.k < p.w);
                assert_eq!(p.nb % p.segs, 0);
                assert!(p.segs.is_power_of_two());
            }
        }
        let p = Plan::new(1 << 26, 1).unwrap();
        assert_eq!(p.c, 16);
        // Points 6.4 GB, scalars 2.1 GB, entries 4.3 GB: fits an 80 GB device.
        assert!(p.device_bytes() < 13 << 30, "{}", p.device_bytes());
        assert!(Plan::new(0, 1).is_err());
        assert!(Plan::with_window(1 << 28, 16, 16).is_err());
    }
}
