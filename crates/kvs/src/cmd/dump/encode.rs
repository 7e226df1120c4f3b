//! Writing one value in Redis's RDB serialization: the object type byte, then the
//! value, in the plain encodings every Redis since 4.0 loads (a string, with a decimal
//! integer that fits 32 bits stored as one and a longer string LZF-compressed when that
//! pays; a list; a set; a hash; a sorted set with binary scores, `ZSET_2`). Redis
//! converts them to its compact forms as it loads them. Streams have no plain form and
//! are written as Redis 7 writes them ([`super::stream`]).

use super::decode::ty;
use crate::value::Value;

/// Appends the type byte and serialization of `v` to `out`; returns the RDB version
/// the payload must declare ([`super::DUMP_VERSION`] but for streams).
pub(super) fn object(out: &mut Vec<u8>, v: &Value) -> u16 {
    match v {
        Value::Str(s) => {
            out.push(ty::STRING);
            string(out, s);
        }
        Value::List(l) => {
            out.push(ty::LIST);
            len(out, l.len() as u64);
            l.iter().for_each(|e| string(out, e));
        }
        Value::Set(s) => {
            out.push(ty::SET);
            len(out, s.len() as u64);
            s.iter().for_each(|m| string(out, m));
        }
        Value::Hash(h) => {
            out.push(ty::HASH);
            len(out, h.len() as u64);
            for (f, v) in h.iter() {
                string(out, f);
                string(out, v);
            }
        }
        Value::Stream(s) => return super::stream::encode(out, s),
        Value::ZSet(z) => {
            out.push(ty::ZSET_2);
            len(out, z.len() as u64);
            for (m, score) in z.iter() {
                string(out, m);
                out.extend_from_slice(&score.to_le_bytes());
            }
        }
    }
    super::DUMP_VERSION
}

/// The RDB version [`object`] declares for `v`, without encoding it.
pub(super) fn version_of(v: &Value) -> u16 {
    match v {
        Value::Stream(s) => super::stream::version(s),
        _ => super::DUMP_VERSION,
    }
}

/// An RDB length: 6 bits, 14 bits, or a marker and 32 or 64 bits big endian.
pub(super) fn len(out: &mut Vec<u8>, n: u64) {
    if n < 1 << 6 {
        out.push(n as u8);
    } else if n < 1 << 14 {
        out.extend_from_slice(&[0x40 | (n >> 8) as u8, n as u8]);
    } else if let Ok(n) = u32::try_from(n) {
        out.push(0x80);
        out.extend_from_slice(&n.to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

/// A string: a decimal integer written exactly as Redis prints it and within 32 bits
/// is stored in 1, 2 or 4 bytes; anything else as its length and bytes.
pub(super) fn string(out: &mut Vec<u8>, s: &[u8]) {
    if let Some(i) = canonical_int(s) {
        if let Ok(b) = i8::try_from(i) {
            out.push(0xc0);
            out.extend_from_slice(&b.to_le_bytes());
            return;
        }
        if let Ok(b) = i16::try_from(i) {
            out.push(0xc1);
            out.extend_from_slice(&b.to_le_bytes());
            return;
        }
        if let Ok(b) = i32::try_from(i) {
            out.push(0xc2);
            out.extend_from_slice(&b.to_le_bytes());
            return;
        }
    }
    // Longer strings are LZF-compressed when that saves at least 4 bytes, as Redis
    // writes them.
    if s.len() > 20 {
        if let Some(c) = super::lzf::compress(s, 4) {
            out.push(0xc3);
            len(out, c.len() as u64);
            len(out, s.len() as u64);
            out.extend_from_slice(&c);
            return;
        }
    }
    len(out, s.len() as u64);
    out.extend_from_slice(s);
}

/// The integer `s` spells, when it spells it the one way Redis prints it (no sign
/// before 0, no leading zeros, no `+`).
fn canonical_int(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() > 11 {
        return None;
    }
    let i: i64 = std::str::from_utf8(s).ok()?.parse().ok()?;
    (i.to_string().as_bytes() == s).then_some(i)
}
