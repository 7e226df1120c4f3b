//! Edwards25519 point formulas, written once over any [`CurveField`] backend.
//!
//! Curve: -x^2 + y^2 = 1 + d x^2 y^2 over GF(2^255-19), d = -121665/121666 (RFC 8032 5.1).
//! Coordinates (Hisil, Wong, Carter, Dawson, "Twisted Edwards curves revisited",
//! ASIACRYPT 2008, with a = -1):
//! - `Extended` (X:Y:Z:T), x = X/Z, y = Y/Z, T = XY/Z.
//! - `Projective` (X:Y:Z), enough for doubling.
//! - `Completed` ((X:Z), (Y:T)), x = X/Z, y = Y/T, the output of one add or double.
//! - `ProjNiels` (Y+X, Y-X, Z, 2dT) and `AffineNiels` (y+x, y-x, 2dxy): cached addends.
//!
//! The addition formulas are complete for a = -1 and non-square d (HWCD section 3.1), so
//! adding the identity or a point to itself is correct; the lane backends rely on this
//! (every lane adds at every step, a zero digit adds the identity).
//!
//! Limb bounds follow [`wirespeed_field::FieldOps`]: every value fed to `mul`/`square` is
//! either reduced or a single `add` of reduced values; every `Completed` coordinate is
//! at most one `add` deep.

use wirespeed_field::FieldOps;

/// A field backend that provides the curve constants.
pub trait CurveField: FieldOps {
    /// 0.
    fn zero() -> Self;
    /// 1.
    fn one() -> Self;
    /// 2d.
    fn d2() -> Self;
}

impl CurveField for wirespeed_field::Fe51 {
    #[inline(always)]
    fn zero() -> Self {
        Self::ZERO
    }
    #[inline(always)]
    fn one() -> Self {
        Self::ONE
    }
    #[inline(always)]
    fn d2() -> Self {
        Self::EDWARDS_D2
    }
}

/// Extended twisted Edwards coordinates (X:Y:Z:T).
#[derive(Clone, Copy, Debug)]
pub struct Extended<F> {
    pub x: F,
    pub y: F,
    pub z: F,
    pub t: F,
}

/// Projective coordinates (X:Y:Z).
#[derive(Clone, Copy, Debug)]
pub struct Projective<F> {
    pub x: F,
    pub y: F,
    pub z: F,
}

/// The "completed" P1xP1 form produced by additions and doublings.
#[derive(Clone, Copy, Debug)]
pub struct Completed<F> {
    pub x: F,
    pub y: F,
    pub z: F,
    pub t: F,
}

/// A cached projective addend (Y+X, Y-X, Z, 2dT).
#[derive(Clone, Copy, Debug)]
pub struct ProjNiels<F> {
    pub y_plus_x: F,
    pub y_minus_x: F,
    pub z: F,
    pub t2d: F,
}

/// A cached affine addend (y+x, y-x, 2dxy).
#[derive(Clone, Copy, Debug)]
pub struct AffineNiels<F> {
    pub y_plus_x: F,
    pub y_minus_x: F,
    pub xy2d: F,
}

impl<F: CurveField> Extended<F> {
    /// The neutral element (0, 1).
    #[inline(always)]
    pub fn identity() -> Self {
        Extended {
            x: F::zero(),
            y: F::one(),
            z: F::one(),
            t: F::zero(),
        }
    }

    /// Drops T.
    #[inline(always)]
    pub fn to_projective(&self) -> Projective<F> {
        Projective {
            x: self.x,
            y: self.y,
            z: self.z,
        }
    }

    /// The cached form of this point.
    #[inline(always)]
    pub fn to_proj_niels(&self) -> ProjNiels<F> {
        ProjNiels {
            y_plus_x: self.y.add(&self.x),
            y_minus_x: self.y.sub(&self.x),
            z: self.z,
            t2d: self.t.mul(&F::d2()),
        }
    }

    /// -P = (-X, Y, Z, -T).
    #[inline(always)]
    pub fn neg(&self) -> Self {
        Extended {
            x: self.x.neg(),
            y: self.y,
            z: self.z,
            t: self.t.neg(),
        }
    }

    /// 2P.
    #[inline(always)]
    pub fn double(&self) -> Self {
        self.to_projective().double().to_extended()
    }

    /// P + Q for a cached Q (HWCD 3.1 "add-2008-hwcd-3" with k = 2d).
    #[inline(always)]
    pub fn add_niels(&self, q: &ProjNiels<F>) -> Completed<F> {
        let pp = self.y.add(&self.x).mul(&q.y_plus_x);
        let mm = self.y.sub(&self.x).mul(&q.y_minus_x);
        let tt2d = self.t.mul(&q.t2d);
        let zz = self.z.mul(&q.z);
        let zz2 = zz.add(&zz);
        Completed {
            x: pp.sub(&mm),
            y: pp.add(&mm),
            z: zz2.add(&tt2d),
            t: zz2.sub(&tt2d),
        }
    }

    /// P - Q for a cached Q.
    #[inline(always)]
    pub fn sub_niels(&self, q: &ProjNiels<F>) -> Completed<F> {
        let pm = self.y.add(&self.x).mul(&q.y_minus_x);
        let mp = self.y.sub(&self.x).mul(&q.y_plus_x);
        let tt2d = self.t.mul(&q.t2d);
        let zz = self.z.mul(&q.z);
        let zz2 = zz.add(&zz);
        Completed {
            x: pm.sub(&mp),
            y: pm.add(&mp),
            z: zz2.sub(&tt2d),
            t: zz2.add(&tt2d),
        }
    }

    /// P + Q for an affine cached Q (madd-2008-hwcd-3).
    #[inline(always)]
    pub fn add_affine(&self, q: &AffineNiels<F>) -> Completed<F> {
        let pp = self.y.add(&self.x).mul(&q.y_plus_x);
        let mm = self.y.sub(&self.x).mul(&q.y_minus_x);
        let txy2d = self.t.mul(&q.xy2d);
        let z2 = self.z.add(&self.z);
        Completed {
            x: pp.sub(&mm),
            y: pp.add(&mm),
            z: z2.add(&txy2d),
            t: z2.sub(&txy2d),
        }
    }

    /// P - Q for an affine cached Q.
    #[inline(always)]
    pub fn sub_affine(&self, q: &AffineNiels<F>) -> Completed<F> {
        let pm = self.y.add(&self.x).mul(&q.y_minus_x);
        let mp = self.y.sub(&self.x).mul(&q.y_plus_x);
        let txy2d = self.t.mul(&q.xy2d);
        let z2 = self.z.add(&self.z);
        Completed {
            x: pm.sub(&mp),
            y: pm.add(&mp),
            z: z2.sub(&txy2d),
            t: z2.add(&txy2d),
        }
    }

    /// [8]P.
    #[inline]
    pub fn mul_by_cofactor(&self) -> Self {
        self.to_projective()
            .double()
            .to_projective()
            .double()
            .to_projective()
            .double()
            .to_extended()
    }
}

impl<F: CurveField> Projective<F> {
    /// 2P (dbl-2008-hwcd): 4 squarings, no multiplications before the conversion.
    #[inline(always)]
    pub fn double(&self) -> Completed<F> {
        let xx = self.x.square();
        let yy = self.y.square();
        let zz = self.z.square();
        let zz2 = zz.add(&zz);
        let xy_sq = self.x.add(&self.y).square();
        let yy_plus_xx = yy.add(&xx);
        let yy_minus_xx = yy.sub(&xx);
        Completed {
            x: xy_sq.sub(&yy_plus_xx),
            y: yy_plus_xx,
            z: yy_minus_xx,
            t: zz2.sub(&yy_minus_xx),
        }
    }
}

impl<F: CurveField> Completed<F> {
    /// 4 multiplications.
    #[inline(always)]
    pub fn to_extended(&self) -> Extended<F> {
        Extended {
            x: self.x.mul(&self.t),
            y: self.y.mul(&self.z),
            z: self.z.mul(&self.t),
            t: self.x.mul(&self.y),
        }
    }

    /// 3 multiplications.
    #[inline(always)]
    pub fn to_projective(&self) -> Projective<F> {
        Projective {
            x: self.x.mul(&self.t),
            y: self.y.mul(&self.z),
            z: self.z.mul(&self.t),
        }
    }
}

impl<F: CurveField> ProjNiels<F> {
    /// The cached identity.
    #[inline(always)]
    pub fn identity() -> Self {
        ProjNiels {
            y_plus_x: F::one(),
            y_minus_x: F::one(),
            z: F::one(),
            t2d: F::zero(),
        }
    }

    /// -Q: swap Y+X and Y-X, negate 2dT.
    #[inline(always)]
    pub fn neg(&self) -> Self {
        ProjNiels {
            y_plus_x: self.y_minus_x,
            y_minus_x: self.y_plus_x,
            z: self.z,
            t2d: self.t2d.neg(),
        }
    }
}

impl<F: CurveField> AffineNiels<F> {
    /// The cached identity.
    #[inline(always)]
    pub fn identity() -> Self {
        AffineNiels {
            y_plus_x: F::one(),
            y_minus_x: F::one(),
            xy2d: F::zero(),
        }
    }

    /// -Q.
    #[inline(always)]
    pub fn neg(&self) -> Self {
        AffineNiels {
            y_plus_x: self.y_minus_x,
            y_minus_x: self.y_plus_x,
            xy2d: self.xy2d.neg(),
        }
    }
}
