//! Many signatures, one verdict each.

use rayon::prelude::*;

#[cfg(target_arch = "x86_64")]
use crate::lanes;
use crate::mode::{Mode, VerifyError};
#[cfg(target_arch = "x86_64")]
use crate::point::Extended;
#[cfg(target_arch = "x86_64")]
use crate::verify::{finish, Prepared};
use crate::verify::{prepare, verify_prepared_serial};
#[cfg(target_arch = "x86_64")]
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

/// Which arithmetic backend runs the double-scalar multiplications.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Backend {
    /// The fastest backend this CPU supports (detected at run time).
    #[default]
    Auto,
    /// One signature at a time, radix 2^51 (always available).
    Serial,
    /// Four signatures per AVX2 register (x86-64 with AVX2 only).
    Avx2,
    /// Eight signatures per AVX-512 register, 52-bit IFMA multipliers (x86-64 with
    /// AVX-512F and AVX-512 IFMA only).
    Ifma,
}

impl Backend {
    /// The CLI name.
    pub fn name(&self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Serial => "serial",
            Backend::Avx2 => "avx2",
            Backend::Ifma => "ifma",
        }
    }

    /// True if this CPU can run the backend.
    pub fn available(&self) -> bool {
        match self {
            Backend::Auto | Backend::Serial => true,
            Backend::Avx2 => avx2_available(),
            Backend::Ifma => ifma_available(),
        }
    }

    /// Auto resolved to a concrete backend.
    pub fn resolve(&self) -> Backend {
        match self {
            Backend::Auto => {
                if ifma_available() {
                    Backend::Ifma
                } else if avx2_available() {
                    Backend::Avx2
                } else {
                    Backend::Serial
                }
            }
            b => *b,
        }
    }
}

fn avx2_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

fn ifma_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512ifma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

impl Backend {
    /// Every concrete backend (not `Auto`).
    pub const CONCRETE: [Backend; 3] = [Backend::Serial, Backend::Avx2, Backend::Ifma];
}

impl std::str::FromStr for Backend {
    type Err = String;
    fn from_str(s: &str) -> Result<Backend, String> {
        [Backend::Auto, Backend::Serial, Backend::Avx2, Backend::Ifma]
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| format!("unknown backend '{s}' (expected auto, serial, avx2 or ifma)"))
    }
}

/// Verifies every item; the i-th verdict belongs to the i-th item. Uses the best
/// backend and rayon's global pool.
pub fn verify_many(items: &[Item<'_>], mode: Mode) -> Vec<Result<(), VerifyError>> {
    verify_many_with(items, mode, Backend::Auto)
}

/// Items per rayon task: large enough to amortize scheduling, small enough to balance.
const CHUNK: usize = 64;

/// [`verify_many`] with an explicit backend. An unavailable backend falls back to serial.
pub fn verify_many_with(
    items: &[Item<'_>],
    mode: Mode,
    backend: Backend,
) -> Vec<Result<(), VerifyError>> {
    let backend = if backend.available() {
        backend.resolve()
    } else {
        Backend::Serial
    };
    let mut out = vec![Ok(()); items.len()];
    out.par_chunks_mut(CHUNK)
        .zip(items.par_chunks(CHUNK))
        .for_each(|(o, it)| match backend {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `backend` passed `available()`, so the CPU has AVX2.
            Backend::Avx2 => unsafe {
                verify_chunk_lanes::<4>(it, mode, o, lanes::double_scalar_mul_avx2)
            },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `backend` passed `available()`, so the CPU has AVX-512F and IFMA.
            Backend::Ifma => unsafe {
                verify_chunk_lanes::<8>(it, mode, o, lanes::double_scalar_mul_ifma)
            },
            _ => verify_chunk_serial(it, mode, o),
        });
    out
}

fn verify_chunk_serial(items: &[Item<'_>], mode: Mode, out: &mut [Result<(), VerifyError>]) {
    for (o, it) in out.iter_mut().zip(items) {
        *o = prepare(it.msg, it.sig, it.pk, mode).and_then(|p| verify_prepared_serial(&p));
    }
}

/// Prepares every item serially, then runs the double-scalar multiplications N at a time.
///
/// # Safety
/// `dsm` must be safe to call on this CPU.
#[cfg(target_arch = "x86_64")]
unsafe fn verify_chunk_lanes<const N: usize>(
    items: &[Item<'_>],
    mode: Mode,
    out: &mut [Result<(), VerifyError>],
    dsm: unsafe fn(&[Prepared], &mut [Extended<Fe51>]),
) {
    let mut ready: Vec<(usize, Prepared)> = Vec::with_capacity(items.len());
    for (i, it) in items.iter().enumerate() {
        match prepare(it.msg, it.sig, it.pk, mode) {
            Ok(p) => ready.push((i, p)),
            Err(e) => out[i] = Err(e),
        }
    }
    let mut q = [Extended::<Fe51>::identity(); N];
    for group in ready.chunks(N) {
        // Pad a short last group with copies of its first item; results discarded.
        let batch: [Prepared; N] = std::array::from_fn(|j| group.get(j).unwrap_or(&group[0]).1);
        // SAFETY: forwarded contract.
        unsafe { dsm(&batch, &mut q) };
        for (j, (i, p)) in group.iter().enumerate() {
            out[*i] = finish(p, &q[j]);
        }
    }
}
