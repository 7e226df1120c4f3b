//! Conversions between [`Uint<L>`] and num-bigint's `BigUint`, and fixed-width
//! big-endian bytes, for the crates that load keys and moduli with num-bigint and
//! compute with `Uint`. Written once here rather than in each caller.
//!
//! None of these is constant-time in the value's length (a `BigUint` drops leading zero
//! limbs): use them on public values, or on secrets only once per key, as key loading
//! does.

use num_bigint::BigUint;

use crate::uint::{ParseError, Uint};

impl<const L: usize> Uint<L> {
    /// The value of `b`, which must fit `L` limbs ([`ParseError::TooLong`] otherwise).
    pub fn try_from_biguint(b: &BigUint) -> Result<Self, ParseError> {
        let needed = (b.bits() as usize).div_ceil(8);
        if needed > 8 * L {
            return Err(ParseError::TooLong {
                needed,
                capacity: 8 * L,
            });
        }
        Ok(Self::from_biguint_wrapping(b))
    }

    /// The low `64 L` bits of `b` (b mod 2^(64 L)): for callers that hold b below a
    /// modulus of this width.
    pub fn from_biguint_wrapping(b: &BigUint) -> Self {
        let mut out = [0u64; L];
        for (o, d) in out.iter_mut().zip(b.iter_u64_digits()) {
            *o = d;
        }
        Uint(out)
    }

    /// The value as a `BigUint`.
    pub fn to_biguint(&self) -> BigUint {
        let mut bytes = Vec::with_capacity(8 * L);
        for limb in &self.0 {
            bytes.extend_from_slice(&limb.to_le_bytes());
        }
        BigUint::from_bytes_le(&bytes)
    }
}

/// Big-endian bytes of `v`, left-padded with zeros to `len` bytes; a `v` of more than
/// `len` bytes keeps its low `len` bytes (callers hold v below 2^(8 len)).
pub fn biguint_to_be_bytes_padded(v: &BigUint, len: usize) -> Vec<u8> {
    let b = v.to_bytes_be();
    let mut out = vec![0u8; len.saturating_sub(b.len())];
    out.extend_from_slice(&b[b.len().saturating_sub(len)..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_bounds() {
        let x = Uint::<4>([1, 2, 3, u64::MAX]);
        let b = x.to_biguint();
        assert_eq!(b.to_u64_digits(), vec![1, 2, 3, u64::MAX]);
        assert_eq!(Uint::<4>::try_from_biguint(&b), Ok(x));
        assert_eq!(
            Uint::<3>::try_from_biguint(&b),
            Err(ParseError::TooLong {
                needed: 32,
                capacity: 24
            })
        );
        assert_eq!(Uint::<3>::from_biguint_wrapping(&b), Uint([1, 2, 3]));
        assert_eq!(Uint::<2>::try_from_biguint(&BigUint::ZERO), Ok(Uint::ZERO));
        assert_eq!(Uint::<2>::ZERO.to_biguint(), BigUint::ZERO);
    }

    #[test]
    fn padded_bytes() {
        let v = BigUint::from(0x0102u32);
        assert_eq!(biguint_to_be_bytes_padded(&v, 4), vec![0, 0, 1, 2]);
        assert_eq!(biguint_to_be_bytes_padded(&v, 1), vec![2]);
        assert_eq!(biguint_to_be_bytes_padded(&BigUint::ZERO, 2), vec![0, 0]);
    }
}
