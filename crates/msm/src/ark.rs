//! Conversions from and to arkworks 0.5 (`ark-bls12-377`) and an arkworks-shaped MSM:
//! [`msm_ark`] takes `G1Affine` points and `Fr` scalars and returns a `G1Projective`,
//! so a caller of `VariableBaseMSM::msm` can swap it in.

use ark_bls12_377::{Fq as ArkFq, Fr as ArkFr, G1Affine, G1Projective};
use ark_ff::PrimeField;

use crate::fq::Fq;
use crate::fr::Scalar;
use crate::g1::{Affine, Jacobian};
use crate::msm::MsmError;

/// From an arkworks base-field element.
pub fn fq_from_ark(x: &ArkFq) -> Fq {
    let l = x.into_bigint().0;
    // Canonical by construction.
    Fq::from_limbs(l).unwrap_or(Fq::ZERO)
}

/// To an arkworks base-field element.
pub fn fq_to_ark(x: &Fq) -> ArkFq {
    ArkFq::from_le_bytes_mod_order(&x.to_bytes_le())
}

/// From an arkworks scalar.
pub fn scalar_from_ark(s: &ArkFr) -> Scalar {
    let l = s.into_bigint().0;
    Scalar::from_limbs(l).unwrap_or(Scalar::ZERO)
}

/// To an arkworks scalar.
pub fn scalar_to_ark(s: &Scalar) -> ArkFr {
    ArkFr::from_le_bytes_mod_order(&s.to_bytes_le())
}

/// From an arkworks affine point (trusted to be valid, as arkworks types are).
pub fn affine_from_ark(p: &G1Affine) -> Affine {
    if p.infinity {
        Affine::INFINITY
    } else {
        Affine::new_unchecked(fq_from_ark(&p.x), fq_from_ark(&p.y))
    }
}

/// To an arkworks affine point.
pub fn affine_to_ark(p: &Affine) -> G1Affine {
    if p.infinity {
        G1Affine::identity()
    } else {
        G1Affine::new_unchecked(fq_to_ark(&p.x), fq_to_ark(&p.y))
    }
}

/// To an arkworks projective point.
pub fn jacobian_to_ark(p: &Jacobian) -> G1Projective {
    affine_to_ark(&p.to_affine()).into()
}

/// From an arkworks projective point.
pub fn jacobian_from_ark(p: &G1Projective) -> Jacobian {
    let a: G1Affine = (*p).into();
    Jacobian::from(affine_from_ark(&a))
}

/// sum_i s_i P_i in the shape of arkworks' `VariableBaseMSM::msm`.
pub fn msm_ark(points: &[G1Affine], scalars: &[ArkFr]) -> Result<G1Projective, MsmError> {
    let p: Vec<Affine> = points.iter().map(affine_from_ark).collect();
    let s: Vec<Scalar> = scalars.iter().map(scalar_from_ark).collect();
    crate::msm::msm(&p, &s).map(|r| jacobian_to_ark(&r))
}
