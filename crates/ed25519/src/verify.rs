//! Single-signature verification, split into a decode/check/hash step (`prepare`) and the
//! equation (`finish`), so the lane backends can run the double-scalar multiplication of
//! several prepared signatures at once and share everything else.
//!
//! Verification handles only public data and is variable time throughout.

use sha2::{Digest, Sha512};
use wirespeed_field::{Fe51, Scalar};

use crate::halving;
use crate::mode::{Mode, VerifyError};
use crate::point::Extended;
use crate::serial::{self, vartime_decompress};
use std::sync::OnceLock;

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

/// Applies every rule of `mode` except the equation, and hashes.
pub(crate) fn prepare(
    msg: &[u8],
    sig: &[u8],
    pk: &[u8],
    mode: Mode,
) -> Result<Prepared, VerifyError> {
    let (r_bytes, s_bytes, a_bytes) = split(sig, pk)?;
    let s = Scalar::from_canonical_bytes(s_bytes).ok_or(VerifyError::ScalarOutOfRange)?;

    let a = vartime_decompress(a_bytes).ok_or(VerifyError::InvalidPointA)?;
    if mode.requires_canonical_a() && !a.is_canonical() {
        return Err(VerifyError::NonCanonicalA);
    }
    if mode.rejects_small_order() && a.point.is_small_order() {
        return Err(VerifyError::SmallOrderA);
    }

    let r = vartime_decompress(r_bytes).ok_or(VerifyError::InvalidPointR)?;
    if mode.rejects_small_order() && r.point.is_small_order() {
        return Err(VerifyError::SmallOrderR);
    }
    if mode.requires_canonical_r() && !r.is_canonical() {
        return Err(VerifyError::NonCanonicalR);
    }

    let mut h = Sha512::new();
    h.update(r_bytes);
    h.update(a_bytes);
    h.update(msg);
    let k = Scalar::from_bytes_mod_order_wide(&h.finalize().into());

    Ok(Prepared {
        s,
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

/// A four-product routine from a lane backend (see `crate::lanes::four_product_sum`).
type FourProducts = unsafe fn(&[Extended<Fe51>; 4], &[Scalar; 4]) -> Extended<Fe51>;

/// The lane backend for single signatures, chosen once by run-time CPU detection.
fn four_products() -> Option<FourProducts> {
    static F: OnceLock<Option<FourProducts>> = OnceLock::new();
    *F.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            let ifma = std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512ifma");
            if ifma && std::arch::is_x86_feature_detected!("avx512vl") {
                return Some(crate::lanes::four_product_sum_ifma4 as FourProducts);
            }
            if ifma {
                return Some(crate::lanes::four_product_sum_ifma as FourProducts);
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return Some(crate::lanes::four_product_sum_avx2 as FourProducts);
            }
        }
        None
    })
}

/// The equation through scalar halving: Q' = [k2 S]B - [k2]R - [k1]A must be the identity
/// (cofactorless) or have small order (cofactored). None if halving found no pair.
pub(crate) fn equation_halved(p: &Prepared, run: FourProducts) -> Option<Result<(), VerifyError>> {
    let h = halving::vartime_halve(&p.k)?;
    let mut c = h.k2_abs.mul(&p.s);
    if h.k2_neg {
        c = c.neg();
    }
    let c_lo = Scalar([c.0[0], c.0[1], 0, 0]);
    let c_hi = Scalar([c.0[2], c.0[3], 0, 0]);
    let r_term = if h.k2_neg { p.r } else { p.r.neg() };
    let points = [
        serial::basepoint(),
        serial::basepoint_2_128(),
        r_term,
        p.neg_a,
    ];
    // SAFETY: `run` was chosen by `four_products` after detecting its CPU features.
    let q = unsafe { run(&points, &[c_lo, c_hi, h.k2_abs, h.k1]) };
    let ok = if p.cofactored {
        q.mul_by_cofactor().is_identity()
    } else {
        q.is_identity()
    };
    Some(if ok {
        Ok(())
    } else {
        Err(VerifyError::EquationFailed)
    })
}

/// Verifies one signature with minimum latency: scalar halving and the four half-size
/// products in SIMD lanes where the CPU has AVX-512 IFMA or AVX2, else the serial wNAF
/// double-scalar multiplication.
pub fn verify(msg: &[u8], sig: &[u8], pk: &[u8], mode: Mode) -> Result<(), VerifyError> {
    let p = prepare(msg, sig, pk, mode)?;
    if let Some(run) = four_products() {
        if let Some(v) = equation_halved(&p, run) {
            return v;
        }
    }
    verify_prepared_serial(&p)
}

/// The serial wNAF path for a prepared signature.
pub(crate) fn verify_prepared_serial(p: &Prepared) -> Result<(), VerifyError> {
    let q = serial::vartime_double_scalar_mul_basepoint(&p.k, &p.neg_a, &p.s);
    finish(p, &q)
}
