//! BLS12-377 G1: y^2 = x^3 + 1 over Fq, the subgroup of prime order r.
//!
//! Forms:
//! - [`Affine`] (x, y) or infinity: inputs, outputs and the arkworks encoding.
//! - [`Jacobian`] (X, Y, Z), x = X/Z^2, y = Y/Z^3: scalar multiplication and checks.
//! - [`Xyzz`] (X, Y, ZZ, ZZZ), x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2: Pippenger buckets.
//!   Adding an affine point costs 8M + 2S (madd-2008-s), and the formulas need no Z^3.
//!
//! Formulas from the Explicit-Formulas Database (Bernstein, Lange): dbl-2009-l and
//! add-2007-bl (Jacobian, a = 0); madd-2008-s, add-2008-s and dbl-2008-s-1
//! (XYZZ). Every addition checks the exceptional cases (equal points,
//! opposite points, infinity on either side), so duplicates and P with -P are exact.
//!
//! The MSM buckets use the twisted Edwards form that BLS12-377 admits ([`crate::te`]);
//! these forms serve the Weierstrass path, scalar multiplication and the checks.
//!
//! Subgroup membership uses the GLV endomorphism phi(x, y) = (beta x, y): on this curve a
//! point P of E(Fq) lies in G1 exactly when phi(P) = [-z^2] P, z = 0x8508c00000000001 the
//! BLS parameter (Scott, "A note on group membership tests for G1, G2 and GT on BLS
//! pairing-friendly curves", 2021); two multiplications by the sparse 64-bit z, about
//! 126 doublings and 12 additions, instead of a multiplication by the 253-bit r.
//! `tests/diff_ark.rs` checks it against arkworks' check by [r], on and off the subgroup.

use crate::fq::Fq;

/// The curve constant b = 1.
const B: Fq = Fq::ONE;

/// beta: a primitive cube root of unity in Fq (Montgomery form), the one for which
/// phi(P) = [-z^2] P on G1 (arkworks' `ENDO_COEFFS[0]`).
const BETA: Fq = Fq::from_mont_limbs([
    0x2c766f925a7b8727,
    0x03d7f6b0253d58b5,
    0x838ec0deec122131,
    0xbd5eb3e9f658bb10,
    0x6942bd126ed3e52e,
    0x01673786dd04ed6a,
]);

/// The BLS parameter z (positive for BLS12-377).
const Z: u64 = 0x8508c00000000001;

/// A point in affine coordinates, or infinity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Affine {
    /// x (meaningless when `infinity`).
    pub x: Fq,
    /// y (meaningless when `infinity`).
    pub y: Fq,
    /// The point at infinity.
    pub infinity: bool,
}

/// A point in Jacobian coordinates; Z = 0 is infinity.
#[derive(Clone, Copy, Debug)]
pub struct Jacobian {
    x: Fq,
    y: Fq,
    z: Fq,
}

/// A point in XYZZ coordinates; ZZ = 0 is infinity.
#[derive(Clone, Copy, Debug)]
pub struct Xyzz {
    x: Fq,
    y: Fq,
    zz: Fq,
    zzz: Fq,
}

impl Affine {
    /// The point at infinity.
    pub const INFINITY: Affine = Affine {
        x: Fq::ZERO,
        y: Fq::ZERO,
        infinity: true,
    };

    /// The standard generator of G1 (arkworks' `G1Affine::generator()`).
    pub fn generator() -> Affine {
        Affine {
            x: Fq::from_mont_limbs([
                0x260f33b9772451f4,
                0xc54dd773169d5658,
                0x5c1551c469a510dd,
                0x761662e4425e1698,
                0xc97d78cc6f065272,
                0x00a41206b361fd4d,
            ]),
            y: Fq::from_mont_limbs([
                0x8193961fb8cb81f3,
                0x00638d4c5f44adb8,
                0xfafaf3dad4daf54a,
                0xc27849e2d655cd18,
                0x2ec3ddb401d52814,
                0x007da93326303c71,
            ]),
            infinity: false,
        }
    }

    /// A finite point from coordinates (not checked: see [`Affine::is_on_curve`]).
    pub fn new_unchecked(x: Fq, y: Fq) -> Affine {
        Affine {
            x,
            y,
            infinity: false,
        }
    }

    /// y^2 = x^3 + 1 (infinity counts as on the curve).
    pub fn is_on_curve(&self) -> bool {
        self.infinity || self.y.square() == self.x.square().mul(&self.x).add(&B)
    }

    /// In the prime-order subgroup, for a point on the curve (see the module docs).
    pub fn is_in_subgroup(&self) -> bool {
        if self.infinity {
            return true;
        }
        // [-z^2] P = -(z (z P)); compare with phi(P) = (beta x, y) without inverting:
        // X = beta x Z^2 and Y = -y Z^3.
        let zp = Jacobian::from(*self).mul_u64(Z).mul_u64(Z);
        if zp.is_infinity() {
            return false;
        }
        let z2 = zp.z.square();
        let z3 = z2.mul(&zp.z);
        zp.x == BETA.mul(&self.x).mul(&z2) && zp.y == self.y.neg().mul(&z3)
    }

    /// -P.
    pub fn neg(&self) -> Affine {
        Affine {
            y: self.y.neg(),
            ..*self
        }
    }
}

impl From<Affine> for Jacobian {
    fn from(p: Affine) -> Jacobian {
        if p.infinity {
            Jacobian::INFINITY
        } else {
            Jacobian {
                x: p.x,
                y: p.y,
                z: Fq::ONE,
            }
        }
    }
}

impl Jacobian {
    /// The point at infinity.
    pub const INFINITY: Jacobian = Jacobian {
        x: Fq::ONE,
        y: Fq::ONE,
        z: Fq::ZERO,
    };

    /// From raw coordinates (crate-internal: the caller guarantees the curve equation).
    pub(crate) fn from_xyz(x: Fq, y: Fq, z: Fq) -> Jacobian {
        Jacobian { x, y, z }
    }

    /// True for infinity.
    pub fn is_infinity(&self) -> bool {
        self.z.is_zero()
    }

    /// 2P (dbl-2009-l).
    pub fn double(&self) -> Jacobian {
        if self.is_infinity() || self.y.is_zero() {
            return Jacobian::INFINITY;
        }
        let a = self.x.square();
        let b = self.y.square();
        let c = b.square();
        let d = self.x.add(&b).square().sub(&a).sub(&c).double();
        let e = a.double().add(&a);
        let f = e.square();
        let x3 = f.sub(&d.double());
        let y3 = e.mul(&d.sub(&x3)).sub(&c.double().double().double());
        let z3 = self.y.mul(&self.z).double();
        Jacobian {
            x: x3,
            y: y3,
            z: z3,
        }
    }

    /// P + Q for affine Q (madd-2007-bl), with the exceptional cases.
    pub fn add_affine(&self, q: &Affine) -> Jacobian {
        if q.infinity {
            return *self;
        }
        if self.is_infinity() {
            return Jacobian::from(*q);
        }
        let z1z1 = self.z.square();
        let u2 = q.x.mul(&z1z1);
        let s2 = q.y.mul(&self.z).mul(&z1z1);
        let h = u2.sub(&self.x);
        let r = s2.sub(&self.y).double();
        if h.is_zero() {
            return if r.is_zero() {
                self.double()
            } else {
                Jacobian::INFINITY
            };
        }
        let hh = h.square();
        let i = hh.double().double();
        let j = h.mul(&i);
        let v = self.x.mul(&i);
        let x3 = r.square().sub(&j).sub(&v.double());
        let y3 = r.mul(&v.sub(&x3)).sub(&self.y.mul(&j).double());
        let z3 = self.z.add(&h).square().sub(&z1z1).sub(&hh);
        Jacobian {
            x: x3,
            y: y3,
            z: z3,
        }
    }

    /// P + Q (add-2007-bl), with the exceptional cases.
    pub fn add(&self, q: &Jacobian) -> Jacobian {
        if q.is_infinity() {
            return *self;
        }
        if self.is_infinity() {
            return *q;
        }
        let z1z1 = self.z.square();
        let z2z2 = q.z.square();
        let u1 = self.x.mul(&z2z2);
        let u2 = q.x.mul(&z1z1);
        let s1 = self.y.mul(&q.z).mul(&z2z2);
        let s2 = q.y.mul(&self.z).mul(&z1z1);
        let h = u2.sub(&u1);
        let r = s2.sub(&s1).double();
        if h.is_zero() {
            return if r.is_zero() {
                self.double()
            } else {
                Jacobian::INFINITY
            };
        }
        let i = h.double().square();
        let j = h.mul(&i);
        let v = u1.mul(&i);
        let x3 = r.square().sub(&j).sub(&v.double());
        let y3 = r.mul(&v.sub(&x3)).sub(&s1.mul(&j).double());
        let z3 = self.z.add(&q.z).square().sub(&z1z1).sub(&z2z2).mul(&h);
        Jacobian {
            x: x3,
            y: y3,
            z: z3,
        }
    }

    /// [k] P for a public 64-bit k (double and add, variable time).
    pub fn mul_u64(&self, k: u64) -> Jacobian {
        let mut acc = Jacobian::INFINITY;
        for bit in (0..64 - k.leading_zeros()).rev() {
            acc = acc.double();
            if (k >> bit) & 1 == 1 {
                acc = acc.add(self);
            }
        }
        acc
    }

    /// [k] P for public little-endian scalar limbs (variable time).
    pub fn mul_limbs(&self, k: &[u64]) -> Jacobian {
        let mut acc = Jacobian::INFINITY;
        for &limb in k.iter().rev() {
            for bit in (0..64).rev() {
                acc = acc.double();
                if (limb >> bit) & 1 == 1 {
                    acc = acc.add(self);
                }
            }
        }
        acc
    }

    /// The affine form (one inversion).
    pub fn to_affine(&self) -> Affine {
        match self.z.vartime_inverse() {
            None => Affine::INFINITY,
            Some(zi) => {
                let zi2 = zi.square();
                Affine::new_unchecked(self.x.mul(&zi2), self.y.mul(&zi2).mul(&zi))
            }
        }
    }

    /// Affine forms of many points with one shared inversion.
    pub fn batch_to_affine(points: &[Jacobian]) -> Vec<Affine> {
        let mut zs: Vec<Fq> = points.iter().map(|p| p.z).collect();
        crate::fq::batch_inverse(&mut zs, &mut Vec::new());
        points
            .iter()
            .zip(zs)
            .map(|(p, zi)| {
                if p.is_infinity() {
                    Affine::INFINITY
                } else {
                    let zi2 = zi.square();
                    Affine::new_unchecked(p.x.mul(&zi2), p.y.mul(&zi2).mul(&zi))
                }
            })
            .collect()
    }
}

impl PartialEq for Jacobian {
    fn eq(&self, o: &Jacobian) -> bool {
        match (self.is_infinity(), o.is_infinity()) {
            (true, true) => true,
            (false, false) => {
                let (z1z1, z2z2) = (self.z.square(), o.z.square());
                self.x.mul(&z2z2) == o.x.mul(&z1z1)
                    && self.y.mul(&z2z2).mul(&o.z) == o.y.mul(&z1z1).mul(&self.z)
            }
            _ => false,
        }
    }
}

impl From<Xyzz> for Jacobian {
    /// No inversion: Z = ZZ ZZZ, X_J = x Z^2 = X ZZ ZZZ^2, Y_J = y Z^3 = Y ZZ^3 ZZZ^2.
    fn from(p: Xyzz) -> Jacobian {
        if p.is_infinity() {
            return Jacobian::INFINITY;
        }
        let z = p.zz.mul(&p.zzz);
        let zzz2 = p.zzz.square();
        let x = p.x.mul(&p.zz).mul(&zzz2);
        let y = p.y.mul(&zzz2).mul(&p.zz.square().mul(&p.zz));
        Jacobian { x, y, z }
    }
}

impl Xyzz {
    /// The point at infinity.
    pub const INFINITY: Xyzz = Xyzz {
        x: Fq::ONE,
        y: Fq::ONE,
        zz: Fq::ZERO,
        zzz: Fq::ZERO,
    };

    /// True for infinity.
    #[inline(always)]
    pub fn is_infinity(&self) -> bool {
        self.zz.is_zero()
    }

    /// Q as an XYZZ point (ZZ = ZZZ = 1).
    #[inline]
    fn from_affine(q: &Affine) -> Xyzz {
        Xyzz {
            x: q.x,
            y: q.y,
            zz: Fq::ONE,
            zzz: Fq::ONE,
        }
    }

    /// 2P (dbl-2008-s-1, a = 0).
    #[inline]
    pub fn double(&self) -> Xyzz {
        if self.is_infinity() || self.y.is_zero() {
            return Xyzz::INFINITY;
        }
        let u = self.y.double();
        let v = u.square();
        let w = u.mul(&v);
        let s = self.x.mul(&v);
        let xx = self.x.square();
        let m = xx.double().add(&xx);
        let x3 = m.square().sub(&s.double());
        let y3 = m.mul(&s.sub(&x3)).sub(&w.mul(&self.y));
        Xyzz {
            x: x3,
            y: y3,
            zz: v.mul(&self.zz),
            zzz: w.mul(&self.zzz),
        }
    }

    /// P += Q for finite affine Q given as (x, y) (madd-2008-s), exceptional cases included.
    #[inline(always)]
    pub fn add_affine_assign(&mut self, qx: &Fq, qy: &Fq) {
        if self.is_infinity() {
            *self = Xyzz::from_affine(&Affine::new_unchecked(*qx, *qy));
            return;
        }
        let p = qx.mul(&self.zz).sub(&self.x);
        let r = qy.mul(&self.zzz).sub(&self.y);
        if p.is_zero() {
            *self = if r.is_zero() {
                Xyzz::from_affine(&Affine::new_unchecked(*qx, *qy)).double()
            } else {
                Xyzz::INFINITY
            };
            return;
        }
        let pp = p.square();
        let ppp = p.mul(&pp);
        let q = self.x.mul(&pp);
        let x3 = r.square().sub(&ppp).sub(&q.double());
        let y3 = r.mul(&q.sub(&x3)).sub(&self.y.mul(&ppp));
        self.x = x3;
        self.y = y3;
        self.zz = self.zz.mul(&pp);
        self.zzz = self.zzz.mul(&ppp);
    }

    /// P += Q (add-2008-s), exceptional cases included.
    #[inline(always)]
    pub fn add_assign(&mut self, q: &Xyzz) {
        if q.is_infinity() {
            return;
        }
        if self.is_infinity() {
            *self = *q;
            return;
        }
        let u1 = self.x.mul(&q.zz);
        let u2 = q.x.mul(&self.zz);
        let s1 = self.y.mul(&q.zzz);
        let s2 = q.y.mul(&self.zzz);
        let p = u2.sub(&u1);
        let r = s2.sub(&s1);
        if p.is_zero() {
            *self = if r.is_zero() {
                self.double()
            } else {
                Xyzz::INFINITY
            };
            return;
        }
        let pp = p.square();
        let ppp = p.mul(&pp);
        let qq = u1.mul(&pp);
        let x3 = r.square().sub(&ppp).sub(&qq.double());
        let y3 = r.mul(&qq.sub(&x3)).sub(&s1.mul(&ppp));
        self.x = x3;
        self.y = y3;
        self.zz = self.zz.mul(&q.zz).mul(&pp);
        self.zzz = self.zzz.mul(&q.zzz).mul(&ppp);
    }
}
