//! Many signatures, one verdict each.

use rayon::prelude::*;

use crate::cache::KeyCache;
#[cfg(target_arch = "x86_64")]
use crate::lanes;
use crate::mode::{Mode, VerifyError};
#[cfg(target_arch = "x86_64")]
use crate::point::Extended;
#[cfg(target_arch = "x86_64")]
use crate::serial::{Decoded, DecompressStart};
#[cfg(target_arch = "x86_64")]
use crate::verify::{equation_single, finish_lanes, parse, prepare_decoded, Prepared};
use crate::verify::{prepare_cached, verify_prepared_serial};
#[cfg(target_arch = "x86_64")]
use wirespeed_field::cpu::CpuFeatures;
use wirespeed_field::Fe51;

/// One signature to verify. Lengths are checked by the verifier, not here.
#[derive(Clone, Copy, Debug)]
pub struct Item<'a> {
    /// The message.
    pub msg: &'a [u8],
    /// The 64-byte signature R || S.
    pub sig: &'a [u8],
    /// The 32-byte public key.
    pub pk: &'a [u8],
}

/// Which arithmetic runs the double-scalar multiplications: the workspace's one lane
/// description (`wirespeed_util::lanes::Lanes`). `Serial` is radix 2^51 one signature
/// at a time; `Avx2` four per AVX2 register; `Ifma` eight per 512-bit register with the
/// 52-bit IFMA multipliers; `Ifma4` four per 256-bit register with IFMA (slower than
/// `Ifma` for batches on the machines measured, BENCHMARKS.md; single verification uses
/// this width for its four products); `Auto` the widest this CPU runs
/// ([`Lanes::resolve`]).
pub use wirespeed_field::cpu::Lanes;

/// Verifies every item; the i-th verdict belongs to the i-th item. Uses the best
/// backend and rayon's global pool.
///
/// Convenience wrapper: [`verify_many_with`] `Auto` on this process's detected features
/// (the engine and the crates above it call `verify_many_with`).
pub fn verify_many(items: &[Item<'_>], mode: Mode) -> Vec<Result<(), VerifyError>> {
    verify_many_with(items, mode, Lanes::Auto, CpuFeatures::get())
}

/// Items per rayon task: large enough to amortize scheduling, small enough to balance.
const CHUNK: usize = 64;

/// [`verify_many`] with an explicit backend, checked against (and `Auto` resolved on)
/// the CPU features `cpu`: a backend `cpu` lacks falls back to serial, never runs an
/// unsupported instruction.
pub fn verify_many_with(
    items: &[Item<'_>],
    mode: Mode,
    backend: Lanes,
    cpu: &CpuFeatures,
) -> Vec<Result<(), VerifyError>> {
    many(items, mode, backend, cpu, None)
}

/// [`verify_many`] with a [`KeyCache`]: a signature whose public key is cached skips
/// decoding it, and keys decoded here are added. The verdicts are those of
/// [`verify_many`] (the cache holds decodings, and every rule still runs).
///
/// Convenience wrapper: [`verify_many_cached_with`] `Auto` on this process's detected
/// features.
pub fn verify_many_cached(
    items: &[Item<'_>],
    mode: Mode,
    cache: &KeyCache,
) -> Vec<Result<(), VerifyError>> {
    verify_many_cached_with(items, mode, Lanes::Auto, CpuFeatures::get(), cache)
}

/// [`verify_many_cached`] with an explicit backend, checked against `cpu` as in
/// [`verify_many_with`].
pub fn verify_many_cached_with(
    items: &[Item<'_>],
    mode: Mode,
    backend: Lanes,
    cpu: &CpuFeatures,
    cache: &KeyCache,
) -> Vec<Result<(), VerifyError>> {
    many(items, mode, backend, cpu, Some(cache))
}

fn many(
    items: &[Item<'_>],
    mode: Mode,
    backend: Lanes,
    cpu: &CpuFeatures,
    cache: Option<&KeyCache>,
) -> Vec<Result<(), VerifyError>> {
    let backend = resolve(backend, cpu);
    let mut out = vec![Ok(()); items.len()];
    out.par_chunks_mut(CHUNK)
        .zip(items.par_chunks(CHUNK))
        .for_each(|(o, it)| verify_chunk(backend, cpu, it, mode, cache, o));
    out
}

/// `backend` resolved on `cpu`, serial where `cpu` lacks it: the one check before the
/// lane backends' `unsafe` functions.
pub(crate) fn resolve(backend: Lanes, cpu: &CpuFeatures) -> Lanes {
    if backend.available_on(cpu) {
        backend.resolve_on(cpu)
    } else {
        Lanes::Serial
    }
}

/// [`verify_many`] on the calling thread only (no thread pool): one verdict per item
/// into `out` (which must be as long as `items`; extra entries are left alone). For
/// callers that own their core, such as a pipeline's verify tiles.
///
/// Convenience wrapper: [`verify_many_here_with`] `Auto` on this process's detected
/// features.
pub fn verify_many_here(items: &[Item<'_>], mode: Mode, out: &mut [Result<(), VerifyError>]) {
    verify_many_here_with(items, mode, Lanes::Auto, CpuFeatures::get(), out);
}

/// [`verify_many_here`] with an explicit backend, checked against (and `Auto` resolved
/// on) the CPU features `cpu` as in [`verify_many_with`].
pub fn verify_many_here_with(
    items: &[Item<'_>],
    mode: Mode,
    backend: Lanes,
    cpu: &CpuFeatures,
    out: &mut [Result<(), VerifyError>],
) {
    here(items, mode, backend, cpu, None, out);
}

/// [`verify_many_here_with`] with a [`KeyCache`] (as [`verify_many_cached`]): for a
/// pipeline's verify tiles, which share one cache.
pub fn verify_many_here_cached_with(
    items: &[Item<'_>],
    mode: Mode,
    backend: Lanes,
    cpu: &CpuFeatures,
    cache: &KeyCache,
    out: &mut [Result<(), VerifyError>],
) {
    here(items, mode, backend, cpu, Some(cache), out);
}

fn here(
    items: &[Item<'_>],
    mode: Mode,
    backend: Lanes,
    cpu: &CpuFeatures,
    cache: Option<&KeyCache>,
    out: &mut [Result<(), VerifyError>],
) {
    let backend = resolve(backend, cpu);
    for (o, it) in out.chunks_mut(CHUNK).zip(items.chunks(CHUNK)) {
        verify_chunk(backend, cpu, it, mode, cache, o);
    }
}

/// One chunk on one backend (`backend` already resolved to one `cpu` has).
fn verify_chunk(
    backend: Lanes,
    cpu: &CpuFeatures,
    it: &[Item<'_>],
    mode: Mode,
    cache: Option<&KeyCache>,
    o: &mut [Result<(), VerifyError>],
) {
    match backend {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `backend` passed `available_on(cpu)` (features this CPU has), so the CPU has AVX2.
        Lanes::Avx2 => unsafe {
            verify_chunk_lanes::<4>(
                it,
                mode,
                cpu,
                cache,
                o,
                lanes::pow_p58_avx2,
                lanes::double_scalar_mul_avx2,
            )
        },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `backend` passed `available_on(cpu)` (features this CPU has): AVX-512F, IFMA and DQ are present.
        Lanes::Ifma => unsafe {
            verify_chunk_lanes::<8>(
                it,
                mode,
                cpu,
                cache,
                o,
                lanes::pow_p58_ifma,
                lanes::double_scalar_mul_ifma,
            )
        },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `backend` passed `available_on(cpu)` (features this CPU has): AVX-512F, IFMA, DQ and VL are present.
        Lanes::Ifma4 => unsafe {
            verify_chunk_lanes::<4>(
                it,
                mode,
                cpu,
                cache,
                o,
                lanes::pow_p58_ifma4,
                lanes::double_scalar_mul_ifma4,
            )
        },
        _ => verify_chunk_serial(it, mode, cache, o),
    }
}

fn verify_chunk_serial(
    items: &[Item<'_>],
    mode: Mode,
    cache: Option<&KeyCache>,
    out: &mut [Result<(), VerifyError>],
) {
    for (o, it) in out.iter_mut().zip(items) {
        *o = prepare_cached(it.msg, it.sig, it.pk, mode, cache)
            .and_then(|p| verify_prepared_serial(&p));
    }
}

/// Where a chunk's A comes from: the cache, or the i-th decoding started in phase 1.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
enum ASource {
    Cached(Option<Decoded>),
    Start(usize),
}

/// Runs a chunk through a lane backend in three phases: (1) per item, the checks that
/// need no field arithmetic and the cheap start of both point decodings; (2) the two
/// square-root exponentiations of every item, N at a time in lanes; (3) per item, the
/// rest of the rules and the hash, then the double-scalar multiplications N at a time.
/// Every rule is applied in the same order as in [`crate::verify`], so the verdicts
/// (and reasons) are identical. With a cache, a cached A skips its decoding (phase 1
/// and 2) and an A decoded here is added to it (phase 3).
///
/// # Safety
/// `pow` and `dsm` must be safe to call on this CPU.
#[cfg(target_arch = "x86_64")]
unsafe fn verify_chunk_lanes<const N: usize>(
    items: &[Item<'_>],
    mode: Mode,
    cpu: &CpuFeatures,
    cache: Option<&KeyCache>,
    out: &mut [Result<(), VerifyError>],
    pow: unsafe fn(&[Fe51], &mut [Fe51]),
    dsm: unsafe fn(&[Prepared], &mut [Extended<Fe51>]),
) {
    // Phase 1.
    let mut parsed = Vec::with_capacity(items.len());
    let mut starts = Vec::with_capacity(2 * items.len());
    for (i, it) in items.iter().enumerate() {
        match parse(it.msg, it.sig, it.pk) {
            Ok(p) => {
                let a = match cache.and_then(|c| c.get(p.a_bytes)) {
                    Some(a) => ASource::Cached(a),
                    None => {
                        starts.push(DecompressStart::new(p.a_bytes));
                        ASource::Start(starts.len() - 1)
                    }
                };
                starts.push(DecompressStart::new(p.r_bytes));
                parsed.push((i, p, a, starts.len() - 1));
            }
            Err(e) => out[i] = Err(e),
        }
    }
    // Phase 2.
    let inputs: Vec<Fe51> = starts.iter().map(|s| s.uv7).collect();
    let mut pows = vec![Fe51::ZERO; inputs.len()];
    for (x, o) in inputs.chunks(N).zip(pows.chunks_mut(N)) {
        // SAFETY: forwarded contract.
        unsafe { pow(x, o) };
    }
    // Phase 3.
    let mut ready: Vec<(usize, Prepared)> = Vec::with_capacity(parsed.len());
    for (i, p, a, r) in &parsed {
        let a = match *a {
            ASource::Cached(a) => a,
            ASource::Start(j) => {
                let a = starts[j].finish(p.a_bytes, &pows[j]);
                if let Some(c) = cache {
                    c.insert(p.a_bytes, a);
                }
                a
            }
        };
        let r = starts[*r].finish(p.r_bytes, &pows[*r]);
        match prepare_decoded(p, a, r, mode) {
            Ok(q) => ready.push((*i, q)),
            Err(e) => out[*i] = Err(e),
        }
    }
    let mut q = [Extended::<Fe51>::identity(); N];
    for group in ready.chunks(N) {
        if group.len() * 8 <= N * 3 {
            // A short group (a small batch, or the tail of one): padding it to N lanes
            // would cost more than taking its few signatures one by one on the
            // single-signature path (about 3/8 of a lane group each on this kind of
            // core), and gives the same verdicts.
            for (i, p) in group {
                out[*i] = equation_single(p, cpu);
            }
            continue;
        }
        // Pad a short last group with copies of its first item; results discarded.
        let batch: [Prepared; N] = std::array::from_fn(|j| group.get(j).unwrap_or(&group[0]).1);
        // SAFETY: forwarded contract.
        unsafe { dsm(&batch, &mut q) };
        for (j, (i, p)) in group.iter().enumerate() {
            out[*i] = finish_lanes(p, &q[j]);
        }
    }
}
