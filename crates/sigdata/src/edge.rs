//! Encodings at the edges of the Ed25519 rules, for differential tests of any verifier
//! (the CPU lanes, the GPU kernels): the small-order points of edwards25519 and every
//! 32-byte string that decodes to each, non-canonical encodings (y + p), and a signer
//! that can publish any key encoding and any R.
//!
//! Built on the project's own point and scalar arithmetic (`wirespeed_ed25519::serial`,
//! `wirespeed_field::Scalar`); decoding accepts what curve25519-dalek's decoder accepts
//! (y >= p reduced, x = 0 with either sign bit). The module was first written on
//! curve25519-dalek; `tests/kat_edge.rs` pins digests, recorded from that version, of the
//! fixed sets and of everything five seeds drive (scalars, [x]B, torsion-shifted points in
//! every encoding, raw signatures), so a change in the shared arithmetic that moved these
//! bytes would fail there rather than silently move the yardstick of the verifier tests.

use sha2::{Digest, Sha512};
use wirespeed_ed25519::point::Extended;
use wirespeed_ed25519::serial::{vartime_basepoint_mul, vartime_decompress};
use wirespeed_field::Fe51;
pub use wirespeed_field::Scalar;

/// A point of edwards25519 (extended coordinates).
pub type Point = Extended<Fe51>;

/// P + Q.
pub fn add(p: &Point, q: &Point) -> Point {
    p.add_niels(&q.to_proj_niels()).to_extended()
}

/// The canonical encoding of `p`.
pub fn encode(p: &Point) -> [u8; 32] {
    p.compress()
}

/// The point `b` decodes to, if any (every encoding the rule modes can meet: y >= p is
/// reduced, x = 0 takes either sign bit).
pub fn decode(b: &[u8; 32]) -> Option<Point> {
    vartime_decompress(b).map(|d| d.point)
}

/// p = 2^255 - 19, little-endian.
pub const P_BYTES: [u8; 32] = [
    0xed, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
];

/// L = 2^252 + 27742317777372353535851937790883648493, little-endian.
pub const L_BYTES: [u8; 32] = [
    0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10,
];

/// y of a point of order 8 (the third entry of libsodium's blocklist; a public constant).
pub const ORDER8_Y: [u8; 32] = [
    0x26, 0xe8, 0x95, 0x8f, 0xc2, 0xb2, 0x27, 0xb0, 0x45, 0xc3, 0xf4, 0x89, 0xf2, 0xef, 0x98, 0xf0,
    0xd5, 0xdf, 0xac, 0x05, 0xd3, 0xc6, 0x33, 0x39, 0xb1, 0x38, 0x02, 0x88, 0x6d, 0x53, 0xfc, 0x05,
];

/// SHA-512(R || A || M) over the bytes exactly as given (k before reduction).
pub fn challenge_hash(r: &[u8], a: &[u8], msg: &[u8]) -> [u8; 64] {
    let mut h = Sha512::new();
    h.update(r);
    h.update(a);
    h.update(msg);
    h.finalize().into()
}

/// k = SHA-512(R || A || M) mod L over the bytes exactly as given.
pub fn challenge(r: &[u8], a: &[u8], msg: &[u8]) -> Scalar {
    Scalar::from_bytes_mod_order_wide(&challenge_hash(r, a, msg))
}

/// A generator of the 8-torsion subgroup.
pub fn order8_point() -> Point {
    let t = decode(&ORDER8_Y).unwrap_or_else(|| unreachable!("the order-8 y is on the curve"));
    debug_assert!(t.mul_by_cofactor().is_identity());
    debug_assert!(!t.double().double().is_identity());
    t
}

/// The 8 small-order points, [i]T8 for i = 0..8.
pub fn torsion() -> [Point; 8] {
    let t = order8_point();
    let mut out = [Point::identity(); 8];
    for i in 1..8 {
        out[i] = add(&out[i - 1], &t);
    }
    out
}

/// p + y for a y below 2^255, little-endian, if it fits in 255 bits (the sum of two
/// numbers below 2^255 cannot carry out of 256 bits).
fn y_plus_p(y: &[u8; 32]) -> Option<[u8; 32]> {
    if y[31] & 0x80 != 0 {
        return None;
    }
    let s = add_le(y, &P_BYTES);
    (s[31] & 0x80 == 0).then_some(s)
}

/// An encoding of a point: the bytes, and whether they are the canonical encoding.
#[derive(Clone, Copy, Debug)]
pub struct Encoding {
    /// The 32 bytes.
    pub bytes: [u8; 32],
    /// True for the point's canonical encoding.
    pub canonical: bool,
}

/// Every 32-byte string that decodes (under [`decode`], which accepts what
/// curve25519-dalek's decoder accepts) to `p`: the canonical one, y + p where that fits in
/// 255 bits, and either sign bit where x = 0.
pub fn all_encodings(p: &Point) -> Vec<Encoding> {
    let canon = encode(p);
    let mut y = canon;
    y[31] &= 0x7f;
    let mut ys = vec![y];
    ys.extend(y_plus_p(&y));
    let mut out = Vec::new();
    for y in ys {
        for sign in [0u8, 0x80] {
            let mut b = y;
            b[31] |= sign;
            if decode(&b).is_some_and(|q| encode(&q) == canon) {
                out.push(Encoding {
                    bytes: b,
                    canonical: b == canon,
                });
            }
        }
    }
    out
}

/// Every encoding of every small-order point (14: 8 canonical, 6 not).
pub fn small_order_encodings() -> Vec<Encoding> {
    torsion().iter().flat_map(all_encodings).collect()
}

/// Non-canonical encodings y + p (both sign bits) of points that are not of small order:
/// y in 2..=18 where a point with that y exists.
pub fn noncanonical_ordinary_encodings() -> Vec<[u8; 32]> {
    let mut out = Vec::new();
    for y in 2u8..=18 {
        let mut small = [0u8; 32];
        small[0] = y;
        let Some(big) = y_plus_p(&small) else {
            continue;
        };
        for sign in [0u8, 0x80] {
            let mut b = big;
            b[31] |= sign;
            if decode(&b).is_some_and(|p| !p.is_small_order()) {
                out.push(b);
            }
        }
    }
    out
}

/// A scalar from 64 random bytes.
pub fn random_scalar<R: rand::RngCore>(rng: &mut R) -> Scalar {
    let mut w = [0u8; 64];
    rng.fill_bytes(&mut w);
    Scalar::from_bytes_mod_order_wide(&w)
}

/// [x]B (variable time: test data only).
pub fn mul_base(x: &Scalar) -> Point {
    vartime_basepoint_mul(x)
}

/// The encoding of [x]B.
pub fn base_encoding(x: &Scalar) -> [u8; 32] {
    encode(&mul_base(x))
}

/// Signs with the raw equation: R is published as `r_bytes`, the key as `pk_bytes`, and
/// S = nonce + k * secret with k over exactly those bytes. Whether it verifies depends
/// on how the published points relate to `nonce` and `secret`.
pub fn sign_raw(
    r_bytes: &[u8; 32],
    pk_bytes: &[u8; 32],
    nonce: &Scalar,
    secret: &Scalar,
    msg: &[u8],
) -> [u8; 64] {
    let k = challenge(r_bytes, pk_bytes, msg);
    let s = nonce.add(&k.mul(secret));
    let mut sig = [0u8; 64];
    sig[..32].copy_from_slice(r_bytes);
    sig[32..].copy_from_slice(&s.to_bytes());
    sig
}

/// 32-byte little-endian addition modulo 2^256 (S + L and the like).
pub fn add_le(a: &[u8; 32], b: &[u8; 32]) -> [u8; 32] {
    let mut out = [0u8; 32];
    let mut carry = 0u16;
    for i in 0..32 {
        let v = a[i] as u16 + b[i] as u16 + carry;
        out[i] = v as u8;
        carry = v >> 8;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_of_the_edge_sets() {
        let so = small_order_encodings();
        assert_eq!(so.len(), 14);
        assert_eq!(so.iter().filter(|e| e.canonical).count(), 8);
        for p in torsion() {
            assert!(p.is_small_order());
        }
        let nc = noncanonical_ordinary_encodings();
        assert!(!nc.is_empty());
        assert!(nc.iter().all(|b| decode(b).is_some()));
    }

    #[test]
    fn y_plus_p_bounds() {
        let mut y = [0u8; 32];
        y[0] = 18;
        assert!(y_plus_p(&y).is_some());
        y[0] = 19; // p + 19 = 2^255
        assert!(y_plus_p(&y).is_none());
    }
}
