//! `Uint<L>`: unsigned integers of exactly `L` 64-bit limbs, least significant first.
//! Arithmetic wraps or reports the carry explicitly; nothing allocates. Comparisons and
//! the carry-returning operations run in time independent of the values (no early
//! exit), so they may be used on secrets; parsing and printing may not.

use std::cmp::Ordering;
use std::fmt;

/// An unsigned integer of `L` little-endian 64-bit limbs.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Uint<const L: usize>(pub [u64; L]);

/// Why a byte string or hex string is not a `Uint<L>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// More significant bytes than the type holds (after leading zeros).
    TooLong {
        /// Bytes the value needs.
        needed: usize,
        /// Bytes the type holds.
        capacity: usize,
    },
    /// A character that is not a hex digit, at this index.
    BadHexDigit(usize),
    /// The empty string.
    Empty,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::TooLong { needed, capacity } => {
                write!(
                    f,
                    "number needs {needed} bytes but at most {capacity} are allowed"
                )
            }
            ParseError::BadHexDigit(i) => write!(f, "not a hex digit at position {i}"),
            ParseError::Empty => f.write_str("empty number"),
        }
    }
}

impl std::error::Error for ParseError {}

impl<const L: usize> Default for Uint<L> {
    fn default() -> Self {
        Self::ZERO
    }
}

impl<const L: usize> Uint<L> {
    /// 0.
    pub const ZERO: Self = Uint([0; L]);
    /// 1.
    pub const ONE: Self = {
        let mut l = [0u64; L];
        l[0] = 1;
        Uint(l)
    };
    /// Width in bits.
    pub const BITS: usize = 64 * L;

    /// From a small value.
    pub const fn from_u64(v: u64) -> Self {
        let mut l = [0u64; L];
        l[0] = v;
        Uint(l)
    }

    /// Big-endian bytes, at most `8 L` significant ones (leading zero bytes are allowed
    /// beyond that).
    pub fn from_be_bytes(b: &[u8]) -> Result<Self, ParseError> {
        let first = b.iter().position(|&x| x != 0).unwrap_or(b.len());
        let b = &b[first..];
        if b.len() > 8 * L {
            return Err(ParseError::TooLong {
                needed: b.len(),
                capacity: 8 * L,
            });
        }
        let mut out = [0u64; L];
        for (i, &byte) in b.iter().rev().enumerate() {
            out[i / 8] |= (byte as u64) << (8 * (i % 8));
        }
        Ok(Uint(out))
    }

    /// Exactly `8 L` big-endian bytes.
    pub fn to_be_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 * L);
        for limb in self.0.iter().rev() {
            out.extend_from_slice(&limb.to_be_bytes());
        }
        out
    }

    /// Minimal big-endian bytes (empty for 0).
    pub fn to_be_bytes_trimmed(&self) -> Vec<u8> {
        let b = self.to_be_bytes();
        let first = b.iter().position(|&x| x != 0).unwrap_or(b.len());
        b[first..].to_vec()
    }

    /// Parses hex (an optional `0x` prefix, either case, no separators).
    pub fn from_hex(s: &str) -> Result<Self, ParseError> {
        let s = s.strip_prefix("0x").unwrap_or(s);
        if s.is_empty() {
            return Err(ParseError::Empty);
        }
        let digits = s.trim_start_matches('0');
        if digits.len() > 16 * L {
            return Err(ParseError::TooLong {
                needed: digits.len().div_ceil(2),
                capacity: 8 * L,
            });
        }
        let offset = s.len() - digits.len();
        let mut out = [0u64; L];
        for (i, c) in digits.bytes().rev().enumerate() {
            let v = (c as char)
                .to_digit(16)
                .ok_or(ParseError::BadHexDigit(offset + digits.len() - 1 - i))?;
            out[i / 16] |= (v as u64) << (4 * (i % 16));
        }
        Ok(Uint(out))
    }

    /// Lowercase hex without leading zeros ("0" for zero).
    pub fn to_hex(&self) -> String {
        let mut s = String::with_capacity(16 * L);
        for limb in self.0.iter().rev() {
            s.push_str(&format!("{limb:016x}"));
        }
        let t = s.trim_start_matches('0');
        if t.is_empty() {
            "0".to_string()
        } else {
            t.to_string()
        }
    }

    /// Number of significant bits (0 for zero).
    pub fn bits(&self) -> usize {
        for i in (0..L).rev() {
            if self.0[i] != 0 {
                return 64 * i + 64 - self.0[i].leading_zeros() as usize;
            }
        }
        0
    }

    /// Bit i (false beyond the width).
    pub fn bit(&self, i: usize) -> bool {
        i < Self::BITS && (self.0[i / 64] >> (i % 64)) & 1 == 1
    }

    /// True for zero.
    pub fn is_zero(&self) -> bool {
        self.0.iter().fold(0, |a, &l| a | l) == 0
    }

    /// True for odd values.
    pub fn is_odd(&self) -> bool {
        L > 0 && self.0[0] & 1 == 1
    }

    /// self + b and the carry out.
    #[inline]
    pub fn overflowing_add(&self, b: &Self) -> (Self, bool) {
        let mut out = [0u64; L];
        let mut carry = 0u64;
        for i in 0..L {
            let s = self.0[i] as u128 + b.0[i] as u128 + carry as u128;
            out[i] = s as u64;
            carry = (s >> 64) as u64;
        }
        (Uint(out), carry != 0)
    }

    /// self - b and the borrow out.
    #[inline]
    pub fn overflowing_sub(&self, b: &Self) -> (Self, bool) {
        let mut out = [0u64; L];
        let mut borrow = 0u64;
        for i in 0..L {
            let d = (self.0[i] as u128)
                .wrapping_sub(b.0[i] as u128)
                .wrapping_sub(borrow as u128);
            out[i] = d as u64;
            borrow = ((d >> 64) as u64) & 1;
        }
        (Uint(out), borrow != 0)
    }

    /// `a` if `choice` is 0, `b` if it is 1, by masking (no branch on `choice`).
    #[inline]
    pub fn select(a: &Self, b: &Self, choice: u64) -> Self {
        let mask = (choice & 1).wrapping_neg();
        let mut out = [0u64; L];
        for i in 0..L {
            out[i] = a.0[i] ^ ((a.0[i] ^ b.0[i]) & mask);
        }
        Uint(out)
    }

    /// Remainder modulo a small odd or even divisor d > 0 (variable time: public d, and
    /// used on candidates that are discarded or whose remainder is not secret).
    pub fn rem_u64(&self, d: u64) -> u64 {
        let mut r = 0u128;
        for limb in self.0.iter().rev() {
            r = ((r << 64) | *limb as u128) % d as u128;
        }
        r as u64
    }

    /// Shift left by one bit, returning the bit shifted out.
    pub fn shl1(&self) -> (Self, bool) {
        let mut out = [0u64; L];
        let mut carry = 0u64;
        for i in 0..L {
            out[i] = (self.0[i] << 1) | carry;
            carry = self.0[i] >> 63;
        }
        (Uint(out), carry != 0)
    }

    /// Shift left by `n` bits (n < 64 L); bits shifted past the top are dropped.
    pub fn shl(&self, n: usize) -> Self {
        let (w, b) = (n / 64, n % 64);
        let mut out = [0u64; L];
        for i in w..L {
            out[i] = self.0[i - w] << b;
            if b != 0 && i > w {
                out[i] |= self.0[i - w - 1] >> (64 - b);
            }
        }
        Uint(out)
    }

    /// self * b mod 2^(64 L).
    pub fn wrapping_mul(&self, b: &Self) -> Self {
        let mut r = [0u64; L];
        for i in 0..L {
            let mut carry = 0u128;
            for j in 0..L - i {
                let t = (self.0[i] as u128) * (b.0[j] as u128) + r[i + j] as u128 + carry;
                r[i + j] = t as u64;
                carry = t >> 64;
            }
        }
        Uint(r)
    }

    /// Shift right by `n` bits (n < 64 L).
    pub fn shr(&self, n: usize) -> Self {
        let (w, b) = (n / 64, n % 64);
        let mut out = [0u64; L];
        for i in 0..L.saturating_sub(w) {
            out[i] = self.0[i + w] >> b;
            if b != 0 && i + w + 1 < L {
                out[i] |= self.0[i + w + 1] << (64 - b);
            }
        }
        Uint(out)
    }

    /// Widens or narrows to `M` limbs (narrowing drops high limbs).
    pub fn resize<const M: usize>(&self) -> Uint<M> {
        let mut out = [0u64; M];
        let n = L.min(M);
        out[..n].copy_from_slice(&self.0[..n]);
        Uint(out)
    }
}

impl<const L: usize> Ord for Uint<L> {
    fn cmp(&self, other: &Self) -> Ordering {
        // Constant-time in the values: the borrow of self - other and zero-ness of the
        // difference decide.
        let (d, borrow) = self.overflowing_sub(other);
        if borrow {
            Ordering::Less
        } else if d.is_zero() {
            Ordering::Equal
        } else {
            Ordering::Greater
        }
    }
}

impl<const L: usize> PartialOrd for Uint<L> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<const L: usize> fmt::Debug for Uint<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Uint<{}>(0x{})", L, self.to_hex())
    }
}

impl<const L: usize> fmt::Display for Uint<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.to_hex())
    }
}
