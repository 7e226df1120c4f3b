//! Scalars of BLS12-377 G1 (the field Fr, r: 253 bits). An MSM only needs each scalar's
//! integer value, so a [`Scalar`] is the canonical integer in [0, r) as four little-endian
//! limbs, with no arithmetic beyond what recoding needs.

/// r, little-endian limbs.
pub const R: [u64; 4] = [
    0x0a11800000000001,
    0x59aa76fed0000001,
    0x60b44d1e5c37b001,
    0x12ab655e9a2ca556,
];

/// Bits in r.
pub const R_BITS: u32 = 253;

/// A scalar: the canonical integer in [0, r).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Scalar(pub(crate) [u64; 4]);

impl Scalar {
    /// 0.
    pub const ZERO: Scalar = Scalar([0; 4]);

    /// From little-endian limbs; None unless the value is below r.
    pub fn from_limbs(l: [u64; 4]) -> Option<Scalar> {
        for i in (0..4).rev() {
            if l[i] != R[i] {
                return (l[i] < R[i]).then_some(Scalar(l));
            }
        }
        None // equal to r
    }

    /// From 32 little-endian bytes (the arkworks encoding); None unless below r.
    pub fn from_bytes_le(b: &[u8; 32]) -> Option<Scalar> {
        let mut l = [0u64; 4];
        for (i, x) in l.iter_mut().enumerate() {
            let mut w = [0u8; 8];
            w.copy_from_slice(&b[8 * i..8 * i + 8]);
            *x = u64::from_le_bytes(w);
        }
        Scalar::from_limbs(l)
    }

    /// 32 little-endian bytes.
    pub fn to_bytes_le(&self) -> [u8; 32] {
        let mut out = [0u8; 32];
        for (i, l) in self.0.iter().enumerate() {
            out[8 * i..8 * i + 8].copy_from_slice(&l.to_le_bytes());
        }
        out
    }

    /// A small scalar.
    pub fn from_u64(v: u64) -> Scalar {
        Scalar([v, 0, 0, 0])
    }

    /// The little-endian limbs.
    pub fn limbs(&self) -> &[u64; 4] {
        &self.0
    }

    /// True for 0.
    pub fn is_zero(&self) -> bool {
        self.0 == [0; 4]
    }

    /// Bit length (0 for 0).
    pub fn bits(&self) -> u32 {
        for i in (0..4).rev() {
            if self.0[i] != 0 {
                return 64 * i as u32 + 64 - self.0[i].leading_zeros();
            }
        }
        0
    }

    /// `width` bits starting at bit `at` (width <= 32).
    #[inline]
    pub fn bits_at(&self, at: u32, width: u32) -> u64 {
        let (w, s) = ((at / 64) as usize, at % 64);
        if w >= 4 {
            return 0;
        }
        let mut v = self.0[w] >> s;
        if s + width > 64 && w + 1 < 4 {
            v |= self.0[w + 1] << (64 - s);
        }
        v & ((1u64 << width) - 1)
    }
}
