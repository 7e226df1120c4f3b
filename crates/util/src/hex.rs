//! Hex encoding and decoding of byte strings, written once for every crate that reads or
//! prints bytes as hex (keys, messages, proofs, fingerprints).
//!
//! [`encode`] writes lowercase pairs; [`decode`] takes pairs of either case and nothing
//! else: no prefix, no separators, no sign (a pair such as "+f", which
//! `u8::from_str_radix` would take, is refused). Neither is constant-time: public data.

use std::fmt;

/// Why a string is not hex bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HexError {
    /// An odd number of digits (the length).
    OddLength(usize),
    /// A character that is not a hex digit, at this byte index.
    BadDigit(usize),
}

impl fmt::Display for HexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HexError::OddLength(n) => write!(f, "odd number of hex digits ({n})"),
            HexError::BadDigit(i) => write!(f, "not a hex digit at position {i}"),
        }
    }
}

impl std::error::Error for HexError {}

/// Lowercase hex of `bytes`, two digits a byte.
pub fn encode(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(2 * bytes.len());
    for &b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// The value of one hex digit.
fn digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// The bytes of an even-length hex string (either case; the empty string is no bytes).
pub fn decode(text: &str) -> Result<Vec<u8>, HexError> {
    let t = text.as_bytes();
    if let Some(i) = t.iter().position(|&c| digit(c).is_none()) {
        return Err(HexError::BadDigit(i));
    }
    if !t.len().is_multiple_of(2) {
        return Err(HexError::OddLength(t.len()));
    }
    Ok(t.chunks_exact(2)
        .map(|p| (digit(p[0]).unwrap_or(0) << 4) | digit(p[1]).unwrap_or(0))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_case() {
        let all: Vec<u8> = (0..=255).collect();
        let h = encode(&all);
        assert_eq!(h.len(), 512);
        assert!(h.starts_with("000102") && h.ends_with("fdfeff"));
        assert_eq!(decode(&h), Ok(all.clone()));
        assert_eq!(decode(&h.to_uppercase()), Ok(all));
        assert_eq!(encode(&[]), "");
        assert_eq!(decode(""), Ok(vec![]));
        assert_eq!(decode("0aFf"), Ok(vec![0x0a, 0xff]));
    }

    #[test]
    fn refuses_what_is_not_hex_pairs() {
        assert_eq!(decode("abc"), Err(HexError::OddLength(3)));
        assert_eq!(decode("+f"), Err(HexError::BadDigit(0)));
        assert_eq!(decode("0x00"), Err(HexError::BadDigit(1)));
        assert_eq!(decode("00 11"), Err(HexError::BadDigit(2)));
        assert_eq!(decode("é0"), Err(HexError::BadDigit(0)));
        assert_eq!(
            HexError::BadDigit(4).to_string(),
            "not a hex digit at position 4"
        );
    }
}
