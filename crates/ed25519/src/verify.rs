//! Single-signature verification, split into a decode/check/hash step (`prepare`) and the
//! equation (`finish`), so the lane backends can run the double-scalar multiplication of
//! several prepared signatures at once and share everything else.
//!
//! Verification handles only public data and is variable time throughout.

use sha2::{Digest, Sha512};
use wirespeed_field::{Fe51, Scalar};

use crate::cache::KeyCache;
use crate::halving;
use crate::many::Lanes;
use crate::mode::{Mode, VerifyError};
use crate::point::Extended;
use crate::serial::{self, vartime_decompress, Decoded, DecompressStart};
use wirespeed_field::cpu::CpuFeatures;

/// A signature that passed every encoding rule of its mode and awaits the equation.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Prepared {
    /// S (< L).
    pub s: Scalar,
    /// k = SHA-512(R || A || M) mod L.
    pub k: Scalar,
    /// -A.
    pub neg_a: Extended<Fe51>,
    /// R, decoded.
    pub r: Extended<Fe51>,
    /// Which equation to check.
    pub cofactored: bool,
}

/// R, S and A as fixed-size views of the caller's bytes.
pub(crate) type Parts<'a> = (&'a [u8; 32], &'a [u8; 32], &'a [u8; 32]);

/// Splits and checks lengths.
#[inline]
pub(crate) fn split<'a>(sig: &'a [u8], pk: &'a [u8]) -> Result<Parts<'a>, VerifyError> {
    let sig: &[u8; 64] = sig.try_into().map_err(|_| VerifyError::BadLength)?;
    let pk: &[u8; 32] = pk.try_into().map_err(|_| VerifyError::BadLength)?;
    let (r, s) = sig.split_at(32);
    let r: &[u8; 32] = r.try_into().map_err(|_| VerifyError::BadLength)?;
    let s: &[u8; 32] = s.try_into().map_err(|_| VerifyError::BadLength)?;
    Ok((r, s, pk))
}

/// A signature whose lengths and S passed, before any point is decoded.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Parsed<'a> {
    pub msg: &'a [u8],
    pub r_bytes: &'a [u8; 32],
    pub a_bytes: &'a [u8; 32],
    pub s: Scalar,
}

/// The checks that need no field arithmetic: lengths, then S < L.
#[inline]
pub(crate) fn parse<'a>(
    msg: &'a [u8],
    sig: &'a [u8],
    pk: &'a [u8],
) -> Result<Parsed<'a>, VerifyError> {
    let (r_bytes, s_bytes, a_bytes) = split(sig, pk)?;
    let s = Scalar::from_canonical_bytes(s_bytes).ok_or(VerifyError::ScalarOutOfRange)?;
    Ok(Parsed {
        msg,
        r_bytes,
        a_bytes,
        s,
    })
}

/// Applies every rule of `mode` except the equation, and hashes.
pub(crate) fn prepare(
    msg: &[u8],
    sig: &[u8],
    pk: &[u8],
    mode: Mode,
) -> Result<Prepared, VerifyError> {
    prepare_cached(msg, sig, pk, mode, None)
}

/// [`prepare`], with A's decoding taken from (or added to) `cache` where there is one.
pub(crate) fn prepare_cached(
    msg: &[u8],
    sig: &[u8],
    pk: &[u8],
    mode: Mode,
    cache: Option<&KeyCache>,
) -> Result<Prepared, VerifyError> {
    let p = parse(msg, sig, pk)?;
    let a = match cache {
        None => vartime_decompress(p.a_bytes),
        Some(c) => c.get(p.a_bytes).unwrap_or_else(|| {
            let a = vartime_decompress(p.a_bytes);
            c.insert(p.a_bytes, a);
            a
        }),
    };
    if a.is_none() {
        return Err(VerifyError::InvalidPointA);
    }
    prepare_decoded(&p, a, vartime_decompress(p.r_bytes), mode)
}

/// The rules on decoded A and R (None: not a curve point), in the order A decoding,
/// A canonical, A small order, R decoding, R small order, R canonical; then the hash.
pub(crate) fn prepare_decoded(
    p: &Parsed<'_>,
    a: Option<Decoded>,
    r: Option<Decoded>,
    mode: Mode,
) -> Result<Prepared, VerifyError> {
    let a = a.ok_or(VerifyError::InvalidPointA)?;
    if mode.requires_canonical_a() && !a.is_canonical() {
        return Err(VerifyError::NonCanonicalA);
    }
    if mode.rejects_small_order() && serial::is_small_order_encoding(p.a_bytes) {
        return Err(VerifyError::SmallOrderA);
    }

    let r = r.ok_or(VerifyError::InvalidPointR)?;
    if mode.rejects_small_order() && serial::is_small_order_encoding(p.r_bytes) {
        return Err(VerifyError::SmallOrderR);
    }
    if mode.requires_canonical_r() && !r.is_canonical() {
        return Err(VerifyError::NonCanonicalR);
    }

    let mut h = Sha512::new();
    h.update(p.r_bytes);
    h.update(p.a_bytes);
    h.update(p.msg);
    let k = Scalar::from_bytes_mod_order_wide(&h.finalize().into());

    Ok(Prepared {
        s: p.s,
        k,
        neg_a: a.point.neg(),
        r: r.point,
        cofactored: mode.cofactored(),
    })
}

/// Checks the equation given q = [S]B - [k]A.
#[inline]
pub(crate) fn finish(p: &Prepared, q: &Extended<Fe51>) -> Result<(), VerifyError> {
    let ok = if p.cofactored {
        // [8](q - R) = 0.
        q.sub_niels(&p.r.to_proj_niels())
            .to_extended()
            .mul_by_cofactor()
            .is_identity()
    } else {
        // R is canonical here, so point equality is byte equality of encodings.
        q.equals_affine(&p.r)
    };
    if ok {
        Ok(())
    } else {
        Err(VerifyError::EquationFailed)
    }
}

/// The verdict given a lane backend's result (`crate::lanes::double_scalar_mul`): q =
/// [S]B - [k]A for a cofactorless equation, [8](q - R) for a cofactored one.
#[inline]
pub(crate) fn finish_lanes(p: &Prepared, q: &Extended<Fe51>) -> Result<(), VerifyError> {
    let ok = if p.cofactored {
        q.is_identity()
    } else {
        q.equals_affine(&p.r)
    };
    if ok {
        Ok(())
    } else {
        Err(VerifyError::EquationFailed)
    }
}

/// A four-product routine from a lane backend (see `crate::lanes::four_product_sum`).
type FourProducts = unsafe fn(&[Extended<Fe51>; 4], &[Scalar; 4]) -> Extended<Fe51>;
/// A lane exponentiation x -> x^((p-5)/8) for up to N inputs.
type PowLanes = unsafe fn(&[Fe51], &mut [Fe51]);

/// The lane routines single-signature verification uses.
#[derive(Clone, Copy)]
struct SingleBackend {
    /// Which lane backend this is.
    which: Lanes,
    /// Both square roots (A and R) at once.
    pow: PowLanes,
    /// The four half-size products.
    four: FourProducts,
}

/// The lane backend for single signatures on a CPU with features `cpu`: four-lane IFMA
/// (ymm) where present, else eight-lane IFMA, else AVX2, else none. `cpu` never claims
/// more than this CPU has, so the routines returned are safe to call.
fn single_backend(cpu: &CpuFeatures) -> Option<SingleBackend> {
    #[cfg(target_arch = "x86_64")]
    {
        use crate::lanes::*;
        if cpu.ifma_vl() {
            return Some(SingleBackend {
                which: Lanes::Ifma4,
                pow: pow_p58_ifma4,
                four: four_product_sum_ifma4,
            });
        }
        if cpu.ifma() {
            return Some(SingleBackend {
                which: Lanes::Ifma,
                pow: pow_p58_ifma,
                four: four_product_sum_ifma,
            });
        }
        if cpu.avx2() {
            return Some(SingleBackend {
                which: Lanes::Avx2,
                pow: pow_p58_avx2,
                four: four_product_sum_avx2,
            });
        }
    }
    let _ = cpu;
    None
}

/// A prepared signature's equation rewritten by scalar halving: Q' = [c_lo]B +
/// [c_hi](2^128 B) + [k2](+-R) + [k1](-A), with every scalar below 2^131 (see
/// `crate::halving`), which must be the identity (cofactorless) or of small order
/// (cofactored).
#[derive(Clone, Copy, Debug)]
pub(crate) struct HalvedEq {
    /// The points: B, 2^128 B, +-R, -A.
    pub points: [Extended<Fe51>; 4],
    /// Their scalars: c_lo, c_hi, |k2|, k1.
    pub scalars: [Scalar; 4],
    /// Which equation to check.
    pub cofactored: bool,
}

/// The halved equation of `p`; None if halving found no pair (then the plain
/// double-scalar multiplication decides).
pub(crate) fn halve(p: &Prepared) -> Option<HalvedEq> {
    let h = halving::vartime_halve(&p.k)?;
    let mut c = h.k2_abs.mul(&p.s);
    if h.k2_neg {
        c = c.neg();
    }
    let c_lo = Scalar([c.0[0], c.0[1], 0, 0]);
    let c_hi = Scalar([c.0[2], c.0[3], 0, 0]);
    let r_term = if h.k2_neg { p.r } else { p.r.neg() };
    Some(HalvedEq {
        points: [
            serial::basepoint(),
            serial::basepoint_2_128(),
            r_term,
            p.neg_a,
        ],
        scalars: [c_lo, c_hi, h.k2_abs, h.k1],
        cofactored: p.cofactored,
    })
}

/// The verdict given Q' of a halved equation.
#[inline]
pub(crate) fn finish_halved(cofactored: bool, q: &Extended<Fe51>) -> Result<(), VerifyError> {
    let ok = if cofactored {
        q.mul_by_cofactor().is_identity()
    } else {
        q.is_identity()
    };
    if ok {
        Ok(())
    } else {
        Err(VerifyError::EquationFailed)
    }
}

/// The equation through scalar halving: Q' = [k2 S]B - [k2]R - [k1]A must be the identity
/// (cofactorless) or have small order (cofactored). None if halving found no pair.
pub(crate) fn equation_halved(p: &Prepared, run: FourProducts) -> Option<Result<(), VerifyError>> {
    let h = halve(p)?;
    // SAFETY: every caller passes the `four` routine of `single_backend(cpu)`, which
    // holds only routines whose CPU features `cpu` has (and `cpu` never claims more
    // than this CPU has).
    let q = unsafe { run(&h.points, &h.scalars) };
    Some(finish_halved(h.cofactored, &q))
}

/// Convenience wrapper: [`verify_backend_on`] this process's detected features.
pub fn verify_backend() -> Lanes {
    verify_backend_on(CpuFeatures::get())
}

/// The backend [`verify_with`] runs on a CPU with features `cpu`.
pub fn verify_backend_on(cpu: &CpuFeatures) -> Lanes {
    single_backend(cpu).map_or(Lanes::Serial, |b| b.which)
}

/// Convenience wrapper: [`verify_with`] this process's detected features (the engine
/// and the crates above it call `verify_with`).
pub fn verify(msg: &[u8], sig: &[u8], pk: &[u8], mode: Mode) -> Result<(), VerifyError> {
    verify_with(msg, sig, pk, mode, CpuFeatures::get())
}

/// Verifies one signature with minimum latency. Where the CPU has AVX-512 IFMA or AVX2:
/// both point decodings' square roots run side by side in two SIMD lanes, and the
/// equation runs as four half-size products in four lanes after scalar halving. Else
/// the serial path (wNAF double-scalar multiplication). Both give the same verdicts.
/// The lanes used are those the features `cpu` allow ([`CpuFeatures::none`]: serial).
pub fn verify_with(
    msg: &[u8],
    sig: &[u8],
    pk: &[u8],
    mode: Mode,
    cpu: &CpuFeatures,
) -> Result<(), VerifyError> {
    let Some(be) = single_backend(cpu) else {
        return verify_prepared_serial(&prepare(msg, sig, pk, mode)?);
    };
    let p = parse(msg, sig, pk)?;
    let sa = DecompressStart::new(p.a_bytes);
    let sr = DecompressStart::new(p.r_bytes);
    let mut pw = [Fe51::ZERO; 2];
    // SAFETY: `be` was chosen by `single_backend(cpu)` from features this CPU has.
    unsafe { (be.pow)(&[sa.uv7, sr.uv7], &mut pw) };
    let prep = prepare_decoded(
        &p,
        sa.finish(p.a_bytes, &pw[0]),
        sr.finish(p.r_bytes, &pw[1]),
        mode,
    )?;
    equation_halved(&prep, be.four).unwrap_or_else(|| verify_prepared_serial(&prep))
}

/// The equation of one prepared signature by the fastest single-signature path (what
/// [`verify`] does after decoding the points).
pub(crate) fn equation_single(p: &Prepared, cpu: &CpuFeatures) -> Result<(), VerifyError> {
    single_backend(cpu)
        .and_then(|be| equation_halved(p, be.four))
        .unwrap_or_else(|| verify_prepared_serial(p))
}

/// The serial wNAF path for a prepared signature.
pub(crate) fn verify_prepared_serial(p: &Prepared) -> Result<(), VerifyError> {
    let q = serial::vartime_double_scalar_mul_basepoint(&p.k, &p.neg_a, &p.s);
    finish(p, &q)
}
