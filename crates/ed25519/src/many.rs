//! Many signatures, one verdict each.

use rayon::prelude::*;

use crate::mode::{Mode, VerifyError};
use crate::serial;
use crate::verify::{finish, prepare};

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
}

impl Backend {
    /// The CLI name.
    pub fn name(&self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Serial => "serial",
            Backend::Avx2 => "avx2",
        }
    }

    /// True if this CPU can run the backend.
    pub fn available(&self) -> bool {
        match self {
            Backend::Auto | Backend::Serial => true,
            Backend::Avx2 => avx2_available(),
        }
    }

    /// Auto resolved to a concrete backend.
    pub fn resolve(&self) -> Backend {
        match self {
            Backend::Auto => {
                if avx2_available() {
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
            Backend::Avx2 => verify_chunk_lanes(it, mode, o),
            _ => verify_chunk_serial(it, mode, o),
        });
    out
}

fn verify_chunk_serial(items: &[Item<'_>], mode: Mode, out: &mut [Result<(), VerifyError>]) {
    for (o, it) in out.iter_mut().zip(items) {
        *o = crate::verify(it.msg, it.sig, it.pk, mode);
    }
}

fn verify_chunk_lanes(items: &[Item<'_>], mode: Mode, out: &mut [Result<(), VerifyError>]) {
    // Placeholder until the lane backend lands: serial per item.
    for (o, it) in out.iter_mut().zip(items) {
        *o = match prepare(it.msg, it.sig, it.pk, mode) {
            Ok(p) => finish(
                &p,
                &serial::vartime_double_scalar_mul_basepoint(&p.k, &p.neg_a, &p.s),
            ),
            Err(e) => Err(e),
        };
    }
}
