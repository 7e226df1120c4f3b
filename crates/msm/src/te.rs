//! BLS12-377 G1 in twisted Edwards form, for bucket accumulation.
//!
//! The Weierstrass curve W: y^2 = x^3 + 1 has the rational 2-torsion point (-1, 0),
//! so it is birational to a Montgomery curve and from there to the twisted Edwards
//! curve E: -x^2 + y^2 = 1 + d x^2 y^2 (a = -1). With s = 1/sqrt(3) and
//! alpha = sqrt(-(2 - 3s)/s) in Fq (both exist for this p):
//!
//! - W -> E: x_e = alpha (x + 1) / y, y_e = (s (x + 1) - 1) / (s (x + 1) + 1);
//! - E -> W: with u = (1 + y_e) / (1 - y_e), x = u / s - 1, y = alpha u / (s x_e).
//!
//! The map is a group isomorphism from W minus its exceptional points onto E. The
//! points that do not map are those with y = 0 (the 2-torsion point) and those with
//! s (x + 1) = -1; none of them lies in G1 (they have even order). [`TePre::batch`]
//! reports them and the MSM adds them on the Weierstrass side instead.
//!
//! Coordinates: extended (X : Y : Z : T) with x = X/Z, y = Y/Z, T = X Y / Z (Hisil,
//! Wong, Carter, Dawson, "Twisted Edwards curves revisited", 2008). Formulas
//! (a = -1, k = 2d): add-2008-hwcd-3 (9M) and its mixed form against a stored
//! (y - x, y + x, k x y) (7M, no squaring), dbl-2008-hwcd (4M + 4S). Negation is
//! free: -(x, y) = (-x, y), which swaps y - x with y + x and negates k x y.
//!
//! Exceptions: d is a square in Fq, so the unified formulas are not complete on all
//! of E(Fq); their exceptional pairs (P, Q) have P - Q or P + Q of even order, which
//! never happens inside a subgroup of odd order such as G1 (where P = Q and P = -Q are
//! handled by the same formula). Results are therefore exact for points of G1, which
//! is what every decoder in this crate admits (they check the subgroup).

use crate::fq::Fq;
use crate::g1::{Affine, Jacobian};

/// s = 1/sqrt(3) (Montgomery form).
const S: Fq = Fq::from_mont_limbs([
    0x6de9ca9ad831a0a2,
    0xa8aff4220eb51c8e,
    0x5a76e6c593607959,
    0x57f38956d3806339,
    0xc50636f4a0c6fe30,
    0x018f4652f52bfd14,
]);

/// alpha = sqrt(-(2 - 3s)/s): scales the Edwards x so that a = -1.
const ALPHA: Fq = Fq::from_mont_limbs([
    0xfb7c0ab8ead605e4,
    0x363b93d1e2752c7a,
    0xd2246835144be536,
    0xeb8bf6dd429f2077,
    0x3a9efda20234d423,
    0x013c7943ba0c72a4,
]);

/// The Edwards d.
pub const D: Fq = Fq::from_mont_limbs([
    0x7925bf4222538363,
    0xf57011bac07d547d,
    0x07a6be793f79c7d2,
    0x2acb84bee2f95d93,
    0x45fb60ee86cad49f,
    0x00bc23017dffb145,
]);

/// k = 2d.
pub(crate) const K: Fq = Fq::from_mont_limbs([
    0xf24b7e8444a706c6,
    0xeae0237580faa8fa,
    0x0f4d7cf27ef38fa5,
    0x5597097dc5f2bb26,
    0x8bf6c1dd0d95a93e,
    0x01784602fbff628a,
]);

/// An affine Edwards point stored for mixed addition: (y - x, y + x, k x y).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TePre {
    ymx: Fq,
    ypx: Fq,
    kt: Fq,
}

/// A point in extended coordinates (X : Y : Z : T).
#[derive(Clone, Copy, Debug)]
pub struct TeExt {
    x: Fq,
    y: Fq,
    z: Fq,
    t: Fq,
}

impl TePre {
    /// The identity (0, 1).
    pub const IDENTITY: TePre = TePre {
        ymx: Fq::ONE,
        ypx: Fq::ONE,
        kt: Fq::ZERO,
    };

    /// From Edwards affine coordinates (not checked to be on the curve).
    fn from_xy(x: &Fq, y: &Fq) -> TePre {
        TePre {
            ymx: y.sub(x),
            ypx: y.add(x),
            kt: K.mul(&x.mul(y)),
        }
    }

    /// Edwards images of Weierstrass points, with one shared inversion: infinity maps
    /// to the identity. Points that do not map (see the module docs; none is in G1)
    /// become the identity too and their indices are returned, for the caller to add
    /// on the Weierstrass side.
    pub fn batch(points: &[Affine]) -> (Vec<TePre>, Vec<usize>) {
        // den = y (s (x + 1) + 1); both factors are recovered from its inverse.
        let mut u = Vec::with_capacity(points.len());
        let mut den = Vec::with_capacity(points.len());
        for p in points {
            let x1 = p.x.add(&Fq::ONE);
            let ui = S.mul(&x1);
            u.push(ui);
            den.push(if p.infinity {
                Fq::ZERO
            } else {
                p.y.mul(&ui.add(&Fq::ONE))
            });
        }
        crate::fq::batch_inverse(&mut den, &mut Vec::new());
        let mut bad = Vec::new();
        let out = points
            .iter()
            .enumerate()
            .map(|(i, p)| {
                if p.infinity {
                    return TePre::IDENTITY;
                }
                if den[i].is_zero() {
                    bad.push(i);
                    return TePre::IDENTITY;
                }
                let up1 = u[i].add(&Fq::ONE);
                let inv_y = den[i].mul(&up1);
                let inv_up1 = den[i].mul(&p.y);
                let x = ALPHA.mul(&p.x.add(&Fq::ONE)).mul(&inv_y);
                let y = u[i].sub(&Fq::ONE).mul(&inv_up1);
                TePre::from_xy(&x, &y)
            })
            .collect();
        (out, bad)
    }

    /// (y - x, y + x, k x y).
    pub(crate) fn parts(&self) -> (&Fq, &Fq, &Fq) {
        (&self.ymx, &self.ypx, &self.kt)
    }

    /// -P.
    #[inline(always)]
    pub fn neg(&self) -> TePre {
        TePre {
            ymx: self.ypx,
            ypx: self.ymx,
            kt: self.kt.neg(),
        }
    }
}

impl TeExt {
    /// The identity (0 : 1 : 1 : 0).
    pub const IDENTITY: TeExt = TeExt {
        x: Fq::ZERO,
        y: Fq::ONE,
        z: Fq::ONE,
        t: Fq::ZERO,
    };

    /// self += q for a stored affine point (7M).
    #[inline(always)]
    pub fn add_pre_assign(&mut self, q: &TePre) {
        let a = self.y.sub(&self.x).mul(&q.ymx);
        let b = self.y.add(&self.x).mul(&q.ypx);
        let c = self.t.mul(&q.kt);
        let d = self.z.double();
        self.finish(a, b, c, d);
    }

    /// self += q (9M).
    #[inline(always)]
    pub fn add_assign(&mut self, q: &TeExt) {
        let a = self.y.sub(&self.x).mul(&q.y.sub(&q.x));
        let b = self.y.add(&self.x).mul(&q.y.add(&q.x));
        let c = self.t.mul(&K).mul(&q.t);
        let d = self.z.mul(&q.z).double();
        self.finish(a, b, c, d);
    }

    /// The common tail of both additions: E = B - A, F = D - C, G = D + C, H = B + A.
    #[inline(always)]
    fn finish(&mut self, a: Fq, b: Fq, c: Fq, d: Fq) {
        let (e, f, g, h) = (b.sub(&a), d.sub(&c), d.add(&c), b.add(&a));
        self.x = e.mul(&f);
        self.y = g.mul(&h);
        self.t = e.mul(&h);
        self.z = f.mul(&g);
    }

    /// 2 self (4M + 4S).
    pub fn double(&self) -> TeExt {
        let a = self.x.square();
        let b = self.y.square();
        let c = self.z.square().double();
        let e = self.x.add(&self.y).square().sub(&a).sub(&b);
        let g = b.sub(&a);
        let f = g.sub(&c);
        let h = a.neg().sub(&b);
        TeExt {
            x: e.mul(&f),
            y: g.mul(&h),
            t: e.mul(&h),
            z: f.mul(&g),
        }
    }

    /// From extended coordinates (crate-internal: the caller guarantees the curve
    /// equation and T Z = X Y).
    pub(crate) fn from_coords(x: Fq, y: Fq, z: Fq, t: Fq) -> TeExt {
        TeExt { x, y, z, t }
    }

    /// Z = 0: an addition met an exceptional pair (see the module docs) and this is
    /// not a point.
    #[inline(always)]
    pub fn is_degenerate(&self) -> bool {
        self.z.is_zero()
    }

    /// The extended form of a stored point.
    pub fn from_pre(p: &TePre) -> TeExt {
        let mut r = TeExt::IDENTITY;
        r.add_pre_assign(p);
        r
    }

    /// True when (x, y) = X/Z, Y/Z satisfies -x^2 + y^2 = 1 + d x^2 y^2 and T Z = X Y.
    pub fn is_on_curve(&self) -> bool {
        let (x2, y2, z2) = (self.x.square(), self.y.square(), self.z.square());
        !self.z.is_zero()
            && y2.sub(&x2).mul(&z2) == z2.square().add(&D.mul(&x2).mul(&y2))
            && self.t.mul(&self.z) == self.x.mul(&self.y)
    }

    /// The Weierstrass point, in Jacobian coordinates without an inversion: with
    /// den = s (Z - Y) X, x = X ((Z + Y) - s (Z - Y)) / den and
    /// y = alpha (Z + Y) Z / den.
    pub fn to_jacobian(&self) -> Jacobian {
        if self.x.is_zero() {
            // (0, 1) is the identity; (0, -1) is the image of (-1, 0).
            return if self.y == self.z {
                Jacobian::INFINITY
            } else {
                Jacobian::from(Affine::new_unchecked(Fq::ONE.neg(), Fq::ZERO))
            };
        }
        let zmy = self.z.sub(&self.y);
        let zpy = self.z.add(&self.y);
        let szmy = S.mul(&zmy);
        let den = szmy.mul(&self.x);
        let nx = self.x.mul(&zpy.sub(&szmy));
        let ny = ALPHA.mul(&zpy).mul(&self.z);
        Jacobian::from_xyz(nx.mul(&den), ny.mul(&den.square()), den)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g_multiples(n: u64) -> Vec<Affine> {
        let g = Jacobian::from(Affine::generator());
        (1..=n).map(|k| g.mul_u64(k * 7919).to_affine()).collect()
    }

    #[test]
    fn constants_have_their_definitions() {
        let three = Fq::from_u64(3);
        assert_eq!(three.mul(&S.square()), Fq::ONE, "s^2 = 1/3");
        // alpha^2 = -(a_M) with a_M = (A + 2)/B, A = -3s, B = s.
        let s_inv = S.vartime_inverse().unwrap_or_else(|| panic!("s != 0"));
        let a_m = Fq::from_u64(2).sub(&three.mul(&S)).mul(&s_inv);
        assert_eq!(ALPHA.square(), a_m.neg());
        // d = -d_M / a_M with d_M = (A - 2)/B.
        let d_m = three.mul(&S).neg().sub(&Fq::from_u64(2)).mul(&s_inv);
        let a_m_inv = a_m.vartime_inverse().unwrap_or_else(|| panic!("a != 0"));
        assert_eq!(D, d_m.neg().mul(&a_m_inv));
        assert_eq!(K, D.double());
    }

    #[test]
    fn round_trip_and_curve_membership() {
        let pts = g_multiples(40);
        let (te, bad) = TePre::batch(&pts);
        assert!(bad.is_empty());
        for (p, q) in pts.iter().zip(&te) {
            let e = TeExt::from_pre(q);
            assert!(e.is_on_curve());
            assert_eq!(e.to_jacobian().to_affine(), *p);
        }
        let (te, bad) = TePre::batch(&[Affine::INFINITY]);
        assert!(bad.is_empty());
        assert_eq!(te[0], TePre::IDENTITY);
        assert!(TeExt::from_pre(&te[0]).to_jacobian().is_infinity());
    }

    #[test]
    fn unmappable_points_are_reported() {
        let two_torsion = Affine::new_unchecked(Fq::ONE.neg(), Fq::ZERO);
        let pts = [Affine::generator(), two_torsion, Affine::generator()];
        let (te, bad) = TePre::batch(&pts);
        assert_eq!(bad, vec![1]);
        assert_eq!(te[1], TePre::IDENTITY);
        assert_eq!(
            TeExt::from_pre(&te[2]).to_jacobian().to_affine(),
            Affine::generator()
        );
    }

    #[test]
    fn additions_agree_with_weierstrass() {
        let pts = g_multiples(12);
        let (te, _) = TePre::batch(&pts);
        for i in 0..pts.len() {
            for j in 0..pts.len() {
                let want = Jacobian::from(pts[i]).add_affine(&pts[j]);
                let mut mixed = TeExt::from_pre(&te[i]);
                mixed.add_pre_assign(&te[j]);
                assert_eq!(mixed.to_jacobian(), want, "mixed {i} {j}");
                let mut full = TeExt::from_pre(&te[i]);
                full.add_assign(&TeExt::from_pre(&te[j]));
                assert_eq!(full.to_jacobian(), want, "full {i} {j}");
                let mut minus = TeExt::from_pre(&te[i]);
                minus.add_pre_assign(&te[j].neg());
                let want_minus = Jacobian::from(pts[i]).add_affine(&pts[j].neg());
                assert_eq!(minus.to_jacobian(), want_minus, "minus {i} {j}");
            }
            let e = TeExt::from_pre(&te[i]);
            assert_eq!(e.double().to_jacobian(), Jacobian::from(pts[i]).double());
            let mut zero = e;
            zero.add_pre_assign(&te[i].neg());
            assert!(zero.to_jacobian().is_infinity(), "P + (-P)");
        }
    }
}
