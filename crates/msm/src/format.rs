//! File formats, byte-compatible with arkworks 0.5 `serialize_uncompressed`:
//!
//! - points: `Vec<G1Affine>`: the count as a little-endian u64, then per point x and y,
//!   48 little-endian bytes each; the top two bits of y's last byte are flags (bit 7:
//!   y is the larger of y, -y; bit 6: infinity, written with x = y = 0).
//! - scalars: `Vec<Fr>`: the count as a little-endian u64, then 32 little-endian bytes
//!   per scalar.
//!
//! Decoding is strict where arkworks is (`deserialize_uncompressed`, which validates):
//! every field element canonical (< p or < r), flags not both set, each finite point on
//! the curve and in G1. Like arkworks, an infinity flag yields infinity whatever
//! canonical x and y accompany it, and the sign flag of a finite point is not compared
//! with y. The count must match the length exactly, so nothing is allocated before the
//! length is known to be consistent. Errors name the index of the offending element.

use rayon::prelude::*;

use crate::fq::Fq;
use crate::fr::Scalar;
use crate::g1::Affine;

/// Bytes per encoded point.
pub const POINT_BYTES: usize = 96;
/// Bytes per encoded scalar.
pub const SCALAR_BYTES: usize = 32;

/// A decoding failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FormatError {
    /// Shorter than the 8-byte count.
    MissingCount,
    /// The count does not match the length.
    LengthMismatch {
        /// The count in the header.
        count: u64,
        /// Bytes after the header.
        body: usize,
        /// Bytes per element.
        element: usize,
    },
    /// A coordinate is not below p, or a scalar not below r.
    NonCanonical {
        /// The element's index.
        index: usize,
    },
    /// Both flag bits are set.
    BadFlags {
        /// The element's index.
        index: usize,
    },
    /// The point is not on the curve.
    NotOnCurve {
        /// The element's index.
        index: usize,
    },
    /// The point is on the curve but not in G1.
    NotInSubgroup {
        /// The element's index.
        index: usize,
    },
}

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FormatError::MissingCount => write!(f, "shorter than the 8-byte element count"),
            FormatError::LengthMismatch {
                count,
                body,
                element,
            } => write!(
                f,
                "count {count} does not match {body} bytes of {element}-byte elements"
            ),
            FormatError::NonCanonical { index } => {
                write!(f, "element {index}: not a canonical field element")
            }
            FormatError::BadFlags { index } => {
                write!(f, "element {index}: both flag bits set")
            }
            FormatError::NotOnCurve { index } => {
                write!(f, "element {index}: point not on the curve")
            }
            FormatError::NotInSubgroup { index } => {
                write!(f, "element {index}: point not in the prime-order subgroup")
            }
        }
    }
}

impl std::error::Error for FormatError {}

/// The body after a valid count header for `element`-byte elements.
fn body(bytes: &[u8], element: usize) -> Result<&[u8], FormatError> {
    let (head, body) = bytes
        .split_first_chunk::<8>()
        .ok_or(FormatError::MissingCount)?;
    let count = u64::from_le_bytes(*head);
    let fits = usize::try_from(count)
        .ok()
        .and_then(|c| c.checked_mul(element))
        .is_some_and(|len| len == body.len());
    if !fits {
        return Err(FormatError::LengthMismatch {
            count,
            body: body.len(),
            element,
        });
    }
    Ok(body)
}

/// One encoded point (96 bytes), validated.
pub fn decode_point(b: &[u8; POINT_BYTES], index: usize) -> Result<Affine, FormatError> {
    let mut xb = [0u8; 48];
    let mut yb = [0u8; 48];
    xb.copy_from_slice(&b[..48]);
    yb.copy_from_slice(&b[48..]);
    let flags = yb[47] >> 6;
    yb[47] &= 0x3f;
    if flags == 3 {
        return Err(FormatError::BadFlags { index });
    }
    let x = Fq::from_bytes_le(&xb).ok_or(FormatError::NonCanonical { index })?;
    let y = Fq::from_bytes_le(&yb).ok_or(FormatError::NonCanonical { index })?;
    if flags & 1 == 1 {
        return Ok(Affine::INFINITY);
    }
    let p = Affine::new_unchecked(x, y);
    if !p.is_on_curve() {
        return Err(FormatError::NotOnCurve { index });
    }
    if !p.is_in_subgroup() {
        return Err(FormatError::NotInSubgroup { index });
    }
    Ok(p)
}

/// One point's 96-byte encoding.
pub fn encode_point(p: &Affine) -> [u8; POINT_BYTES] {
    let mut out = [0u8; POINT_BYTES];
    if p.infinity {
        out[95] = 0x40;
        return out;
    }
    out[..48].copy_from_slice(&p.x.to_bytes_le());
    out[48..].copy_from_slice(&p.y.to_bytes_le());
    // Sign flag: y is "negative" when y > -y as integers.
    let ny = p.y.neg().to_limbs();
    let y = p.y.to_limbs();
    if y.iter().rev().cmp(ny.iter().rev()) == std::cmp::Ordering::Greater {
        out[95] |= 0x80;
    }
    out
}

/// Decodes a points file (all points validated, in parallel; the first bad index wins).
pub fn decode_points(bytes: &[u8]) -> Result<Vec<Affine>, FormatError> {
    let body = body(bytes, POINT_BYTES)?;
    body.par_chunks_exact(POINT_BYTES)
        .enumerate()
        .map(|(i, c)| {
            let mut b = [0u8; POINT_BYTES];
            b.copy_from_slice(c);
            decode_point(&b, i)
        })
        .collect()
}

/// Encodes points as a points file.
pub fn encode_points(points: &[Affine]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + points.len() * POINT_BYTES);
    out.extend_from_slice(&(points.len() as u64).to_le_bytes());
    for p in points {
        out.extend_from_slice(&encode_point(p));
    }
    out
}

/// Decodes a scalars file.
pub fn decode_scalars(bytes: &[u8]) -> Result<Vec<Scalar>, FormatError> {
    let body = body(bytes, SCALAR_BYTES)?;
    body.chunks_exact(SCALAR_BYTES)
        .enumerate()
        .map(|(i, c)| {
            let mut b = [0u8; SCALAR_BYTES];
            b.copy_from_slice(c);
            Scalar::from_bytes_le(&b).ok_or(FormatError::NonCanonical { index: i })
        })
        .collect()
}

/// Encodes scalars as a scalars file.
pub fn encode_scalars(scalars: &[Scalar]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + scalars.len() * SCALAR_BYTES);
    out.extend_from_slice(&(scalars.len() as u64).to_le_bytes());
    for s in scalars {
        out.extend_from_slice(&s.to_bytes_le());
    }
    out
}
