//! Serial (one signature at a time) Edwards25519 operations on [`Fe51`]: decoding,
//! encoding, small-order tests, base-point tables and the variable-time double-scalar
//! multiplication [a]A + [b]B used by verification.
//!
//! Double-scalar multiplication: width-5 NAF for the variable point (8 cached odd
//! multiples A, 3A, ..., 15A) and width-8 NAF for the base point (64 affine odd multiples
//! B, ..., 127B, built once). One shared chain of ~253 doublings; on average 253/6 variable
//! additions and 253/9 base additions (Moller's interleaving, "Algorithms for
//! multi-exponentiation", SAC 2001; the usual choice in ref10 and curve25519-dalek).
//! Variable time: only for public inputs (verification).

use std::sync::OnceLock;

use wirespeed_field::{Fe51, FieldOps, Scalar};

use crate::point::{AffineNiels, CurveField, Extended, ProjNiels, Projective};

/// The standard base point encoding (y = 4/5, x even).
pub const BASEPOINT_BYTES: [u8; 32] = [
    0x58, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
    0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
];

/// p = 2^255 - 19, little-endian.
const P_BYTES: [u8; 32] = [
    0xed, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
];

/// A decoded point with the facts the rule modes need about its encoding.
#[derive(Clone, Copy, Debug)]
pub struct Decoded {
    /// The point.
    pub point: Extended<Fe51>,
    /// y (bits 0..254 of the encoding) was >= p.
    pub y_non_canonical: bool,
    /// x = 0 but the sign bit was set ("negative zero").
    pub negative_zero: bool,
}

impl Decoded {
    /// The encoding is the unique canonical one for the point.
    pub fn is_canonical(&self) -> bool {
        !self.y_non_canonical && !self.negative_zero
    }
}

/// Every 32-byte string that decodes to a point of small order (order dividing 8): the
/// eight torsion points, each y also as y + p where that fits in 255 bits, each with
/// either sign bit (x = 0 with the sign bit set decodes as a "negative zero"). Built
/// once from the torsion subgroup and kept only where [`vartime_decompress`] and
/// `is_small_order` agree, so the list cannot drift from the decoder (14 encodings).
fn small_order_encodings() -> &'static [[u8; 32]] {
    static SET: OnceLock<Vec<[u8; 32]>> = OnceLock::new();
    SET.get_or_init(|| {
        // A torsion point of order 8: [L]Q for points Q until one has order 8 (Q = P + T
        // with P of order L, so [L]Q = [L]T).
        let l_minus_1 = Scalar([1, 0, 0, 0]).neg();
        let mut t = Extended::<Fe51>::identity();
        for i in 2u8..=255 {
            let mut b = [0u8; 32];
            b[0] = i;
            let Some(q) = vartime_decompress(&b) else {
                continue;
            };
            let lq = vartime_double_scalar_mul_basepoint(&l_minus_1, &q.point, &Scalar::ZERO)
                .add_niels(&q.point.to_proj_niels())
                .to_extended();
            let t4 = lq.double().double();
            if !t4.is_identity() {
                t = lq;
                break;
            }
        }
        let mut set = Vec::new();
        let mut m = Extended::<Fe51>::identity();
        for _ in 0..8 {
            let c = m.compress();
            let mut ys = vec![c];
            // y + p, for the y below 19 (2^255 - p).
            let mut y = c;
            y[31] &= 0x7f;
            if y[1..].iter().all(|&v| v == 0) && y[0] < 19 {
                let mut yp = P_BYTES;
                let mut carry = y[0] as u16;
                for byte in yp.iter_mut() {
                    let v = *byte as u16 + carry;
                    *byte = v as u8;
                    carry = v >> 8;
                }
                yp[31] |= c[31] & 0x80;
                ys.push(yp);
            }
            for e in ys {
                for sign in [0u8, 0x80] {
                    let mut b = e;
                    b[31] = (b[31] & 0x7f) | sign;
                    let small = vartime_decompress(&b).is_some_and(|d| d.point.is_small_order());
                    if small && !set.contains(&b) {
                        set.push(b);
                    }
                }
            }
            m = m.add_niels(&t.to_proj_niels()).to_extended();
        }
        set
    })
}

/// True iff `b` decodes to a point of small order: a comparison with the 14 such
/// encodings in place of three doublings of the decoded point. For a `b` that does not
/// decode it is false.
pub fn is_small_order_encoding(b: &[u8; 32]) -> bool {
    small_order_encodings().iter().any(|e| e == b)
}

/// True iff bits 0..254 of `b`, read as an integer, are >= p.
pub fn y_is_non_canonical(b: &[u8; 32]) -> bool {
    for i in (0..32).rev() {
        let v = if i == 31 { b[i] & 0x7f } else { b[i] };
        if v != P_BYTES[i] {
            return v > P_BYTES[i];
        }
    }
    true
}

/// Decodes a point as curve25519-dalek, ed25519-zebra and RFC 8032 5.1.3 do, except that
/// y >= p is reduced rather than rejected (the caller decides by mode) and x = 0 with the
/// sign bit set is accepted as x = 0 (also reported). Returns None if y^2 - 1 over
/// d y^2 + 1 is not a square (no point has that y). Variable time.
pub fn vartime_decompress(b: &[u8; 32]) -> Option<Decoded> {
    let st = DecompressStart::new(b);
    st.finish(b, &wirespeed_field::pow_p58(&st.uv7))
}

/// The cheap first part of [`vartime_decompress`]; the expensive exponentiation
/// (u v^7)^((p-5)/8) is left to the caller so that SIMD lanes can run many at once.
#[derive(Clone, Copy, Debug)]
pub struct DecompressStart {
    y: Fe51,
    u: Fe51,
    v: Fe51,
    uv3: Fe51,
    /// u v^7: raise this to (p-5)/8 and pass the result to [`DecompressStart::finish`].
    pub uv7: Fe51,
}

impl DecompressStart {
    /// u = y^2 - 1, v = d y^2 + 1 and the products the square root needs.
    pub fn new(b: &[u8; 32]) -> DecompressStart {
        let y = Fe51::from_bytes(b);
        let yy = y.square();
        let u = yy.sub(&Fe51::ONE);
        let v = yy.mul(&Fe51::EDWARDS_D).add(&Fe51::ONE);
        let (uv3, uv7) = Fe51::sqrt_ratio_start(&u, &v);
        DecompressStart { y, u, v, uv3, uv7 }
    }

    /// Completes decoding of `b` given pow = uv7^((p-5)/8).
    pub fn finish(&self, b: &[u8; 32], pow: &Fe51) -> Option<Decoded> {
        let (is_square, x_abs) = Fe51::sqrt_ratio_finish(&self.u, &self.v, &self.uv3, pow);
        if !is_square {
            return None;
        }
        let sign = b[31] >> 7 == 1;
        let x = if sign { x_abs.neg() } else { x_abs };
        let negative_zero = sign && x_abs.is_zero();
        let y = self.y;
        Some(Decoded {
            point: Extended {
                x,
                y,
                z: Fe51::ONE,
                t: x.mul(&y),
            },
            y_non_canonical: y_is_non_canonical(b),
            negative_zero,
        })
    }
}

impl Extended<Fe51> {
    /// Canonical encoding (one inversion).
    pub fn compress(&self) -> [u8; 32] {
        let zi = self.z.invert();
        let x = self.x.mul(&zi);
        let y = self.y.mul(&zi);
        let mut out = y.to_bytes();
        out[31] |= (x.is_negative() as u8) << 7;
        out
    }

    /// True iff this is the neutral element (X = 0 and Y = Z).
    pub fn is_identity(&self) -> bool {
        self.x.is_zero() && self.y.equals(&self.z)
    }

    /// True iff [8]P is the neutral element.
    pub fn is_small_order(&self) -> bool {
        self.mul_by_cofactor().is_identity()
    }

    /// Projective equality with an affine point (Z = 1): X = x Z and Y = y Z.
    /// Replaces "encode and compare bytes" when the other point's encoding is canonical.
    pub fn equals_affine(&self, other: &Extended<Fe51>) -> bool {
        self.x.equals(&other.x.mul(&self.z)) && self.y.equals(&other.y.mul(&self.z))
    }

    /// Affine cached form (one inversion).
    pub fn to_affine_niels(&self) -> AffineNiels<Fe51> {
        let zi = self.z.invert();
        let x = self.x.mul(&zi);
        let y = self.y.mul(&zi);
        AffineNiels {
            y_plus_x: y.add(&x),
            y_minus_x: y.sub(&x),
            xy2d: x.mul(&y).mul(&Fe51::EDWARDS_D2),
        }
    }
}

/// The base point B.
pub fn basepoint() -> Extended<Fe51> {
    static B: OnceLock<Extended<Fe51>> = OnceLock::new();
    *B.get_or_init(|| {
        vartime_decompress(&BASEPOINT_BYTES)
            .map(|d| d.point)
            .unwrap_or_else(|| unreachable!("the base point encoding is valid"))
    })
}

/// 2^128 B, the base of the high half in the halved verification equation.
pub fn basepoint_2_128() -> Extended<Fe51> {
    static B: OnceLock<Extended<Fe51>> = OnceLock::new();
    *B.get_or_init(|| {
        let mut p = basepoint().to_projective();
        for _ in 0..127 {
            p = p.double().to_projective();
        }
        p.double().to_extended()
    })
}

/// Odd multiples [1]P, [3]P, ..., [2n-1]P of an extended point.
pub fn odd_multiples<const N: usize>(p: &Extended<Fe51>) -> [Extended<Fe51>; N] {
    let p2 = p.double().to_proj_niels();
    let mut out = [*p; N];
    for i in 1..N {
        out[i] = out[i - 1].add_niels(&p2).to_extended();
    }
    out
}

/// Affine odd multiples B, 3B, ..., 127B for the width-8 NAF of the base scalar.
pub fn base_naf_table() -> &'static [AffineNiels<Fe51>; 64] {
    static T: OnceLock<[AffineNiels<Fe51>; 64]> = OnceLock::new();
    T.get_or_init(|| {
        let m: [Extended<Fe51>; 64] = odd_multiples(&basepoint());
        let mut t = [AffineNiels::identity(); 64];
        for i in 0..64 {
            t[i] = m[i].to_affine_niels();
        }
        t
    })
}

/// [a]A + [b]B, variable time in a, A and b.
pub fn vartime_double_scalar_mul_basepoint(
    a: &Scalar,
    pa: &Extended<Fe51>,
    b: &Scalar,
) -> Extended<Fe51> {
    let a_naf = a.vartime_naf(5);
    let b_naf = b.vartime_naf(8);
    let multiples: [Extended<Fe51>; 8] = odd_multiples(pa);
    let mut a_table = [ProjNiels::<Fe51>::identity(); 8];
    for i in 0..8 {
        a_table[i] = multiples[i].to_proj_niels();
    }
    let b_table = base_naf_table();

    let mut i = 255usize;
    while i > 0 && a_naf[i] == 0 && b_naf[i] == 0 {
        i -= 1;
    }
    let mut r = Projective {
        x: Fe51::zero(),
        y: Fe51::one(),
        z: Fe51::one(),
    };
    loop {
        let mut t = r.double();
        let da = a_naf[i];
        let db = b_naf[i];
        if da > 0 {
            t = t.to_extended().add_niels(&a_table[(da / 2) as usize]);
        } else if da < 0 {
            t = t.to_extended().sub_niels(&a_table[(-da / 2) as usize]);
        }
        if db > 0 {
            t = t.to_extended().add_affine(&b_table[(db / 2) as usize]);
        } else if db < 0 {
            t = t.to_extended().sub_affine(&b_table[(-db / 2) as usize]);
        }
        if i == 0 {
            return t.to_extended();
        }
        r = t.to_projective();
        i -= 1;
    }
}

/// [b]B, variable time (used by tests and key derivation checks).
pub fn vartime_basepoint_mul(b: &Scalar) -> Extended<Fe51> {
    vartime_double_scalar_mul_basepoint(&Scalar::ZERO, &Extended::identity(), b)
}

#[cfg(test)]
mod small_order_tests {
    use super::*;

    #[test]
    fn fourteen_small_order_encodings() {
        let set = small_order_encodings();
        assert_eq!(set.len(), 14, "{set:?}");
        // The eight canonical encodings of the torsion points are among them.
        assert!(set.contains(&Extended::<Fe51>::identity().compress()));
    }

    #[test]
    fn byte_check_agrees_with_the_point_check() {
        // Every y below 64 and its y + p twin (the small-order y = 0, 1 live here), with
        // both sign bits, and a sweep of byte patterns; then the listed encodings with
        // one bit flipped.
        let mut cases: Vec<[u8; 32]> = Vec::new();
        for y in 0u8..64 {
            let mut b = [0u8; 32];
            b[0] = y;
            cases.push(b);
            let mut yp = P_BYTES;
            let (v, c) = yp[0].overflowing_add(y);
            yp[0] = v;
            if c {
                yp[1] = yp[1].wrapping_add(1);
            }
            cases.push(yp);
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..3000 {
            let mut b = [0u8; 32];
            for chunk in b.chunks_mut(8) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                chunk.copy_from_slice(&x.to_le_bytes());
            }
            cases.push(b);
        }
        for e in small_order_encodings() {
            for bit in 0..256 {
                let mut b = *e;
                b[bit / 8] ^= 1 << (bit % 8);
                cases.push(b);
            }
        }
        let mut decoded = 0;
        for b in cases {
            for sign in [0u8, 0x80] {
                let mut b = b;
                b[31] = (b[31] & 0x7f) | sign;
                if let Some(d) = vartime_decompress(&b) {
                    decoded += 1;
                    assert_eq!(
                        is_small_order_encoding(&b),
                        d.point.is_small_order(),
                        "{b:?}"
                    );
                }
            }
        }
        assert!(decoded > 3000, "{decoded}");
    }
}
