//! Scalars modulo the Ed25519 group order L = 2^252 + 27742317777372353535851937790883648493.
//!
//! Representation: four little-endian u64 limbs, always fully reduced (< L) once built by
//! [`Scalar::from_bytes_mod_order_wide`] or accepted by [`Scalar::from_canonical_bytes`].
//!
//! Wide reduction (512-bit SHA-512 digest -> [0, L)) folds with 2^252 = -c (mod L), where
//! c = L - 2^252 < 2^125 (RFC 8032 section 5.1.7 asks for "interpret as integer, reduce
//! mod L"; this is one way to do it). For x = x0 + 2^252 x1 (x1 < 2^260):
//!   x = x0 - c x1;  c x1 = y0 + 2^252 y1 (y1 < 2^133);  c y1 = z0 + 2^252 z1 (z1 < 2^7),
//! so x = x0 - y0 + z0 - c z1 (mod L), a value in (-2^253, 2^253); adding 4L makes it
//! positive and at most a few subtractions of L finish the job. All steps are exact
//! integer arithmetic on public data (the digest in verification), so the code may branch.
//!
//! Secret scalars (signing: the key's scalar and the nonce) use the `ct_` forms
//! ([`Scalar::ct_from_bytes_mod_order_wide`], [`Scalar::ct_mul`], [`Scalar::ct_add`]):
//! the same folding, whose loops run a fixed number of times, finished by conditional
//! subtractions of 8L, 4L, 2L and L chosen by masks instead of a loop on the value, so
//! no branch or memory index depends on the scalar.

/// L as little-endian u64 limbs.
pub const L: [u64; 4] = [
    0x5812631a5cf5d3ed,
    0x14def9dea2f79cd6,
    0x0000000000000000,
    0x1000000000000000,
];
/// c = L - 2^252.
const C: [u64; 2] = [0x5812631a5cf5d3ed, 0x14def9dea2f79cd6];

/// An integer in [0, L).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scalar(pub [u64; 4]);

fn limbs_from_le(b: &[u8]) -> [u64; 8] {
    let mut w = [0u64; 8];
    for (i, chunk) in b.chunks(8).enumerate() {
        let mut t = [0u8; 8];
        t[..chunk.len()].copy_from_slice(chunk);
        w[i] = u64::from_le_bytes(t);
    }
    w
}

/// Schoolbook product of little-endian limb slices into an 8-limb result (must fit).
fn mul_into(a: &[u64], b: &[u64]) -> [u64; 8] {
    let mut r = [0u64; 8];
    for (i, &ai) in a.iter().enumerate() {
        let mut carry = 0u128;
        for (j, &bj) in b.iter().enumerate() {
            if i + j >= 8 {
                break;
            }
            let t = (ai as u128) * (bj as u128) + r[i + j] as u128 + carry;
            r[i + j] = t as u64;
            carry = t >> 64;
        }
        if i + b.len() < 8 {
            r[i + b.len()] = carry as u64;
        }
    }
    r
}

/// Splits x into (x mod 2^252, x >> 252).
fn split252(x: &[u64; 8]) -> ([u64; 4], [u64; 5]) {
    let lo = [x[0], x[1], x[2], x[3] & ((1u64 << 60) - 1)];
    let mut hi = [0u64; 5];
    for i in 0..5 {
        let a = x[3 + i] >> 60;
        let b = if 4 + i < 8 { x[4 + i] << 4 } else { 0 };
        hi[i] = a | b;
    }
    (lo, hi)
}

fn add4(a: &[u64; 4], b: &[u64; 4]) -> [u64; 4] {
    let mut r = [0u64; 4];
    let mut carry = 0u64;
    for i in 0..4 {
        let (s1, c1) = a[i].overflowing_add(b[i]);
        let (s2, c2) = s1.overflowing_add(carry);
        r[i] = s2;
        carry = (c1 as u64) + (c2 as u64);
    }
    r
}

/// a - b, returning (difference, borrow).
fn sub4(a: &[u64; 4], b: &[u64; 4]) -> ([u64; 4], bool) {
    let mut r = [0u64; 4];
    let mut borrow = 0u64;
    for i in 0..4 {
        let (s1, b1) = a[i].overflowing_sub(b[i]);
        let (s2, b2) = s1.overflowing_sub(borrow);
        r[i] = s2;
        borrow = (b1 as u64) + (b2 as u64);
    }
    (r, borrow != 0)
}

/// m << k for k < 4 (m < 2^253, so nothing is lost).
fn shl4(m: &[u64; 4], k: u32) -> [u64; 4] {
    if k == 0 {
        return *m;
    }
    [
        m[0] << k,
        (m[1] << k) | (m[0] >> (64 - k)),
        (m[2] << k) | (m[1] >> (64 - k)),
        (m[3] << k) | (m[2] >> (64 - k)),
    ]
}

/// a - m where a >= m, else a; chosen by a mask, without a branch on the values.
fn ct_sub_if_geq(a: &[u64; 4], m: &[u64; 4]) -> [u64; 4] {
    let (d, borrow) = sub4(a, m);
    // All ones where a < m (keep a), zero where a >= m (take the difference).
    let keep = 0u64.wrapping_sub(core::hint::black_box(borrow as u64));
    let mut r = [0u64; 4];
    for i in 0..4 {
        r[i] = (a[i] & keep) | (d[i] & !keep);
    }
    r
}

fn geq4(a: &[u64; 4], b: &[u64; 4]) -> bool {
    for i in (0..4).rev() {
        if a[i] != b[i] {
            return a[i] > b[i];
        }
    }
    true
}

impl Scalar {
    /// 0.
    pub const ZERO: Scalar = Scalar([0; 4]);

    /// Reduces a 512-bit little-endian integer (a SHA-512 digest) mod L.
    pub fn from_bytes_mod_order_wide(bytes: &[u8; 64]) -> Scalar {
        Scalar::reduce_limbs(&limbs_from_le(bytes))
    }

    /// Reduces any 512-bit integer given as little-endian limbs mod L.
    fn reduce_limbs(x: &[u64; 8]) -> Scalar {
        let (x0, x1) = split252(x);
        let y = mul_into(&x1, &C);
        let (y0, y1) = split252(&y);
        let z = mul_into(&y1[..3], &C);
        let (z0, z1) = split252(&z);
        let cz1 = mul_into(&z1[..1], &C);
        let cz1 = [cz1[0], cz1[1], cz1[2], cz1[3]];
        // acc = x0 + z0 + 4L - y0 - c z1, all terms < 2^253, so acc in (0, 2^256).
        let four_l = [L[0] << 2, (L[1] << 2) | (L[0] >> 62), L[1] >> 62, L[3] << 2];
        let mut acc = add4(&add4(&x0, &z0), &four_l);
        acc = sub4(&acc, &y0).0;
        acc = sub4(&acc, &cz1).0;
        while geq4(&acc, &L) {
            acc = sub4(&acc, &L).0;
        }
        Scalar(acc)
    }

    /// [`Scalar::reduce_limbs`] in constant time: the folded value (below 2^256 < 16 L)
    /// loses 8L, 4L, 2L and L each where it is at least that large, chosen by a mask.
    fn ct_reduce_limbs(x: &[u64; 8]) -> Scalar {
        let (x0, x1) = split252(x);
        let y = mul_into(&x1, &C);
        let (y0, y1) = split252(&y);
        let z = mul_into(&y1[..3], &C);
        let (z0, z1) = split252(&z);
        let cz1 = mul_into(&z1[..1], &C);
        let cz1 = [cz1[0], cz1[1], cz1[2], cz1[3]];
        let four_l = [L[0] << 2, (L[1] << 2) | (L[0] >> 62), L[1] >> 62, L[3] << 2];
        let mut acc = add4(&add4(&x0, &z0), &four_l);
        acc = sub4(&acc, &y0).0;
        acc = sub4(&acc, &cz1).0;
        for shift in [3u32, 2, 1, 0] {
            acc = ct_sub_if_geq(&acc, &shl4(&L, shift));
        }
        Scalar(acc)
    }

    /// [`Scalar::from_bytes_mod_order_wide`] in constant time (for secret digests: the
    /// signing nonce, the expanded key).
    pub fn ct_from_bytes_mod_order_wide(bytes: &[u8; 64]) -> Scalar {
        Scalar::ct_reduce_limbs(&limbs_from_le(bytes))
    }

    /// [`Scalar::from_bytes_mod_order`] in constant time.
    pub fn ct_from_bytes_mod_order(bytes: &[u8; 32]) -> Scalar {
        let mut wide = [0u8; 64];
        wide[..32].copy_from_slice(bytes);
        Scalar::ct_from_bytes_mod_order_wide(&wide)
    }

    /// (a * b) mod L in constant time.
    pub fn ct_mul(&self, b: &Scalar) -> Scalar {
        Scalar::ct_reduce_limbs(&mul_into(&self.0, &b.0))
    }

    /// (a + b) mod L in constant time (a, b < L).
    pub fn ct_add(&self, b: &Scalar) -> Scalar {
        Scalar(ct_sub_if_geq(&add4(&self.0, &b.0), &L))
    }

    /// Accepts 32 little-endian bytes only if they encode an integer < L (RFC 8032's
    /// "S in range" check).
    pub fn from_canonical_bytes(bytes: &[u8; 32]) -> Option<Scalar> {
        let w = limbs_from_le(bytes);
        let v = [w[0], w[1], w[2], w[3]];
        if geq4(&v, &L) {
            None
        } else {
            Some(Scalar(v))
        }
    }

    /// Interprets 32 bytes as an integer < 2^256 and reduces it mod L.
    pub fn from_bytes_mod_order(bytes: &[u8; 32]) -> Scalar {
        let mut wide = [0u8; 64];
        wide[..32].copy_from_slice(bytes);
        Scalar::from_bytes_mod_order_wide(&wide)
    }

    /// Little-endian encoding.
    pub fn to_bytes(&self) -> [u8; 32] {
        let mut out = [0u8; 32];
        for i in 0..4 {
            out[8 * i..8 * i + 8].copy_from_slice(&self.0[i].to_le_bytes());
        }
        out
    }

    /// (a * b) mod L.
    pub fn mul(&self, b: &Scalar) -> Scalar {
        Scalar::reduce_limbs(&mul_into(&self.0, &b.0))
    }

    /// (a + b) mod L.
    pub fn add(&self, b: &Scalar) -> Scalar {
        let s = add4(&self.0, &b.0); // < 2L < 2^254, no overflow
        if geq4(&s, &L) {
            Scalar(sub4(&s, &L).0)
        } else {
            Scalar(s)
        }
    }

    /// (-a) mod L.
    pub fn neg(&self) -> Scalar {
        if self.0 == [0; 4] {
            *self
        } else {
            Scalar(sub4(&L, &self.0).0)
        }
    }

    /// Bit i (0 = least significant).
    #[inline]
    pub fn bit(&self, i: usize) -> u8 {
        ((self.0[i / 64] >> (i % 64)) & 1) as u8
    }

    /// Width-w non-adjacent form: 256 signed digits, each 0 or odd in (-2^(w-1), 2^(w-1)),
    /// at most one non-zero digit in any w consecutive positions. Variable time.
    pub fn vartime_naf(&self, w: usize) -> [i8; 256] {
        debug_assert!((2..=8).contains(&w));
        let mut naf = [0i8; 256];
        let x = [self.0[0], self.0[1], self.0[2], self.0[3], 0u64];
        let width = 1i64 << w;
        let window_mask = (width - 1) as u64;
        let mut pos = 0usize;
        let mut carry = 0u64;
        while pos < 256 {
            let idx = pos / 64;
            let bit_idx = pos % 64;
            let bit_buf = if bit_idx < 64 - w {
                x[idx] >> bit_idx
            } else {
                (x[idx] >> bit_idx) | (x[idx + 1] << (64 - bit_idx))
            };
            let window = carry + (bit_buf & window_mask);
            if window & 1 == 0 {
                pos += 1;
                continue;
            }
            if window < (width / 2) as u64 {
                carry = 0;
                naf[pos] = window as i8;
            } else {
                carry = 1;
                naf[pos] = (window as i64 - width) as i8;
            }
            pos += w;
        }
        naf
    }

    /// Signed radix-2^w digits d_i in [-2^(w-1), 2^(w-1)) with sum d_i 2^(w i) = self,
    /// `digits.len()` digits (the last digit absorbs the final carry and may reach 2^(w-1)).
    pub fn signed_radix(&self, w: usize, digits: &mut [i8]) {
        let count = digits.len();
        let mut carry = 0i64;
        let mask = (1u64 << w) - 1;
        for i in 0..count {
            let pos = i * w;
            let idx = pos / 64;
            let off = pos % 64;
            let mut raw = if idx < 4 { self.0[idx] >> off } else { 0 };
            if off + w > 64 && idx + 1 < 4 {
                raw |= self.0[idx + 1] << (64 - off);
            }
            let v = (raw & mask) as i64 + carry;
            if i + 1 < count && v >= (1 << (w - 1)) {
                digits[i] = (v - (1 << w)) as i8;
                carry = 1;
            } else {
                digits[i] = v as i8;
                carry = 0;
            }
        }
    }
}
