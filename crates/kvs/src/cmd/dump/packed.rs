//! The packed encodings inside RDB values, walked entry by entry with every offset
//! checked against the blob: ziplist (Redis before 7), listpack (Redis 7) and intset.
//!
//! Ziplist: `zlbytes` (u32 LE, the blob's size), `zltail` (u32 LE, offset of the last
//! entry), `zllen` (u16 LE, 65535 when not counted), entries, then 0xFF. An entry is
//! the previous entry's size (one byte below 254, else 254 and a u32 LE), an encoding
//! (string lengths of 6, 14 or 32 bits; integers of 8, 16, 24, 32, 64 bits; 0..=12 in
//! the encoding byte itself) and the data.
//!
//! Listpack: total bytes (u32 LE), element count (u16 LE, 65535 when not counted),
//! entries, then 0xFF. An entry is an encoding (7-bit unsigned, 13, 16, 24, 32, 64-bit
//! signed integers; strings with 6, 12 or 32-bit lengths), the data, and the size of
//! those two written backwards in 1 to 5 bytes of 7 bits ("backlen").
//!
//! Intset: the width of its integers (u32 LE: 2, 4 or 8), their count (u32 LE), then
//! the integers, little endian.
//!
//! Listpacks are also written, for the nodes of streams ([`ListpackWriter`]).

use std::borrow::Cow;

use super::decode::{Malformed, Res};

/// One packed entry: a string (borrowed from the blob) or an integer.
#[derive(Debug, Clone, Copy)]
pub(super) enum Elem<'a> {
    Str(&'a [u8]),
    Int(i64),
}

impl<'a> Elem<'a> {
    /// The entry as Redis shows it: the string, or the integer in decimal.
    pub(super) fn bytes(&self) -> Cow<'a, [u8]> {
        match *self {
            Elem::Str(s) => Cow::Borrowed(s),
            Elem::Int(i) => Cow::Owned(i.to_string().into_bytes()),
        }
    }
}

fn slice(b: &[u8], at: usize, n: usize) -> Res<&[u8]> {
    b.get(at..at.checked_add(n).ok_or(Malformed)?)
        .ok_or(Malformed)
}

fn le(b: &[u8]) -> u64 {
    b.iter().rev().fold(0, |acc, &x| acc << 8 | u64::from(x))
}

/// A little-endian signed integer of `n` bytes at `at`.
fn int_at(b: &[u8], at: usize, n: usize) -> Res<i64> {
    let raw = le(slice(b, at, n)?);
    let shift = 64 - 8 * n as u32;
    Ok(((raw << shift) as i64) >> shift)
}

/// Calls `f` on each ziplist entry, in order.
pub(super) fn ziplist<'a>(b: &'a [u8], mut f: impl FnMut(Elem<'a>) -> Res<()>) -> Res<()> {
    const HEADER: usize = 10;
    if b.len() < HEADER + 1 || le(&b[..4]) != b.len() as u64 || b[b.len() - 1] != 0xff {
        return Err(Malformed);
    }
    if le(&b[4..8]) >= b.len() as u64 {
        return Err(Malformed);
    }
    let declared = le(&b[8..10]);
    let (mut at, mut prev, mut n) = (HEADER, 0usize, 0u64);
    while b[at] != 0xff {
        let start = at;
        let prevlen = match b[at] {
            254 => {
                let v = le(slice(b, at + 1, 4)?) as usize;
                at += 5;
                v
            }
            x => {
                at += 1;
                usize::from(x)
            }
        };
        if prevlen != prev {
            return Err(Malformed);
        }
        let enc = *b.get(at).ok_or(Malformed)?;
        at += 1;
        let e = match enc >> 6 {
            0 => str_at(b, &mut at, usize::from(enc & 0x3f))?,
            1 => {
                let n = usize::from(enc & 0x3f) << 8 | usize::from(*b.get(at).ok_or(Malformed)?);
                at += 1;
                str_at(b, &mut at, n)?
            }
            2 if enc == 0x80 => {
                let n = u32::from_be_bytes(slice(b, at, 4)?.try_into().map_err(|_| Malformed)?);
                at += 4;
                str_at(b, &mut at, n as usize)?
            }
            2 => return Err(Malformed),
            _ => {
                let width = match enc {
                    0xc0 => 2,
                    0xd0 => 4,
                    0xe0 => 8,
                    0xf0 => 3,
                    0xfe => 1,
                    0xf1..=0xfd => 0,
                    _ => return Err(Malformed),
                };
                let v = if width == 0 {
                    i64::from(enc & 0x0f) - 1
                } else {
                    int_at(b, at, width)?
                };
                at += width;
                Elem::Int(v)
            }
        };
        f(e)?;
        n += 1;
        prev = at - start;
        if at >= b.len() {
            return Err(Malformed);
        }
    }
    if at != b.len() - 1 || (declared != 0xffff && declared != n) {
        return Err(Malformed);
    }
    Ok(())
}

/// The string of `n` bytes at `*at`, moving past it.
fn str_at<'a>(b: &'a [u8], at: &mut usize, n: usize) -> Res<Elem<'a>> {
    let s = slice(b, *at, n)?;
    *at += n;
    Ok(Elem::Str(s))
}

/// The bytes a listpack entry of `len` bytes (encoding and data) ends with: its size,
/// 7 bits a byte, the last byte the low bits, every byte but the first marked.
fn backlen(len: usize) -> ([u8; 5], usize) {
    let n = match len {
        0..=127 => 1,
        128..=16382 => 2,
        16383..=2097150 => 3,
        2097151..=268435454 => 4,
        _ => 5,
    };
    let mut out = [0u8; 5];
    for (i, o) in out.iter_mut().take(n).enumerate() {
        let shift = 7 * (n - 1 - i);
        let bits = ((len as u64 >> shift) & 127) as u8;
        *o = if i == 0 {
            (len as u64 >> shift) as u8
        } else {
            bits | 128
        };
    }
    (out, n)
}

/// Calls `f` on each listpack entry, in order.
pub(super) fn listpack<'a>(b: &'a [u8], mut f: impl FnMut(Elem<'a>) -> Res<()>) -> Res<()> {
    let mut lp = Listpack::new(b)?;
    while let Some(e) = lp.next()? {
        f(e)?;
    }
    Ok(())
}

/// A listpack read one entry at a time, each entry checked (encoding, bounds, backlen)
/// as it is reached and the end (the 0xFF in the last byte, the declared count) when
/// it is reached.
pub(super) struct Listpack<'a> {
    b: &'a [u8],
    at: usize,
    n: u64,
    declared: u64,
}

impl<'a> Listpack<'a> {
    /// Checks the header: the total size and the end byte.
    pub(super) fn new(b: &'a [u8]) -> Res<Listpack<'a>> {
        const HEADER: usize = 6;
        if b.len() < HEADER + 1 || le(&b[..4]) != b.len() as u64 || b[b.len() - 1] != 0xff {
            return Err(Malformed);
        }
        Ok(Listpack {
            b,
            at: HEADER,
            n: 0,
            declared: le(&b[4..6]),
        })
    }

    /// The next entry; None at the end, once the end is checked.
    pub(super) fn next(&mut self) -> Res<Option<Elem<'a>>> {
        let b = self.b;
        let mut at = self.at;
        if b[at] == 0xff {
            if at != b.len() - 1 || (self.declared != 0xffff && self.declared != self.n) {
                return Err(Malformed);
            }
            return Ok(None);
        }
        let start = at;
        let enc = b[at];
        at += 1;
        let e = if enc & 0x80 == 0 {
            Elem::Int(i64::from(enc))
        } else if enc & 0xc0 == 0x80 {
            str_at(b, &mut at, usize::from(enc & 0x3f))?
        } else if enc & 0xe0 == 0xc0 {
            let raw = i64::from(enc & 0x1f) << 8 | i64::from(*b.get(at).ok_or(Malformed)?);
            at += 1;
            // 13-bit two's complement.
            Elem::Int(if raw >= 1 << 12 { raw - (1 << 13) } else { raw })
        } else if enc & 0xf0 == 0xe0 {
            let len = usize::from(enc & 0x0f) << 8 | usize::from(*b.get(at).ok_or(Malformed)?);
            at += 1;
            str_at(b, &mut at, len)?
        } else if enc == 0xf0 {
            let len = le(slice(b, at, 4)?) as usize;
            at += 4;
            str_at(b, &mut at, len)?
        } else {
            let width = match enc {
                0xf1 => 2,
                0xf2 => 3,
                0xf3 => 4,
                0xf4 => 8,
                _ => return Err(Malformed),
            };
            let v = int_at(b, at, width)?;
            at += width;
            Elem::Int(v)
        };
        finish(b, start, &mut at)?;
        self.at = at;
        self.n += 1;
        Ok(Some(e))
    }
}

/// Checks the backlen of the entry that began at `start` and whose data ends at
/// `*at`, moving past it; the next byte must exist.
fn finish(b: &[u8], start: usize, at: &mut usize) -> Res<()> {
    let (want, n) = backlen(*at - start);
    if slice(b, *at, n)? != &want[..n] {
        return Err(Malformed);
    }
    *at += n;
    if *at >= b.len() {
        return Err(Malformed);
    }
    Ok(())
}

/// The integer a listpack stores for `s` instead of the string: when `s` spells it the
/// one way Redis prints it (at most 20 characters, no `+`, no leading zero, no `-0`),
/// as Redis's `lpStringToInt64` decides.
pub(super) fn lp_int(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    let v: i64 = std::str::from_utf8(s).ok()?.parse().ok()?;
    (v.to_string().as_bytes() == s).then_some(v)
}

/// Writes a listpack as Redis lays one out: each integer (and each string that
/// [`lp_int`] takes for one) in the smallest integer encoding, other strings with a 6,
/// 12 or 32-bit length, every entry followed by its backlen; the count in the header
/// is 65535 (not counted) from 65535 entries on.
pub(super) struct ListpackWriter {
    out: Vec<u8>,
    n: u64,
}

impl ListpackWriter {
    pub(super) fn new() -> ListpackWriter {
        ListpackWriter {
            out: vec![0; 6],
            n: 0,
        }
    }

    /// Appends an integer.
    pub(super) fn int(&mut self, v: i64) {
        let start = self.out.len();
        let o = &mut self.out;
        if (0..=127).contains(&v) {
            o.push(v as u8);
        } else if (-4096..=4095).contains(&v) {
            let u = (v & 0x1fff) as u16;
            o.extend([0xc0 | (u >> 8) as u8, u as u8]);
        } else if let Ok(x) = i16::try_from(v) {
            o.push(0xf1);
            o.extend(x.to_le_bytes());
        } else if (-(1 << 23)..1 << 23).contains(&v) {
            o.push(0xf2);
            o.extend(&(v as i32).to_le_bytes()[..3]);
        } else if let Ok(x) = i32::try_from(v) {
            o.push(0xf3);
            o.extend(x.to_le_bytes());
        } else {
            o.push(0xf4);
            o.extend(v.to_le_bytes());
        }
        self.end_entry(start);
    }

    /// Appends a string (as an integer when it spells one).
    pub(super) fn string(&mut self, s: &[u8]) {
        if let Some(v) = lp_int(s) {
            return self.int(v);
        }
        let start = self.out.len();
        let o = &mut self.out;
        let n = s.len();
        if n < 64 {
            o.push(0x80 | n as u8);
        } else if n < 4096 {
            o.extend([0xe0 | (n >> 8) as u8, n as u8]);
        } else {
            o.push(0xf0);
            o.extend((n as u32).to_le_bytes());
        }
        o.extend_from_slice(s);
        self.end_entry(start);
    }

    fn end_entry(&mut self, start: usize) {
        let (bl, k) = backlen(self.out.len() - start);
        self.out.extend_from_slice(&bl[..k]);
        self.n += 1;
    }

    /// The listpack: the header filled in and the end byte added.
    pub(super) fn finish(mut self) -> Vec<u8> {
        self.out.push(0xff);
        let total = self.out.len() as u32;
        self.out[..4].copy_from_slice(&total.to_le_bytes());
        let count = self.n.min(0xffff) as u16;
        self.out[4..6].copy_from_slice(&count.to_le_bytes());
        self.out
    }
}

/// Calls `f` on each intset integer.
pub(super) fn intset(b: &[u8], mut f: impl FnMut(i64) -> Res<()>) -> Res<()> {
    if b.len() < 8 {
        return Err(Malformed);
    }
    let width = le(&b[..4]);
    let count = le(&b[4..8]);
    if !matches!(width, 2 | 4 | 8) || count.checked_mul(width) != Some(b.len() as u64 - 8) {
        return Err(Malformed);
    }
    for c in b[8..].chunks_exact(width as usize) {
        f(int_at(c, 0, c.len())?)?;
    }
    Ok(())
}

/// A listpack holding `items` (for tests: the packed forms Redis writes).
#[cfg(test)]
pub(super) fn build_listpack(items: &[Elem]) -> Vec<u8> {
    let mut body = Vec::new();
    for e in items {
        let start = body.len();
        match *e {
            Elem::Int(i) if (0..128).contains(&i) => body.push(i as u8),
            Elem::Int(i) if (-4096..4096).contains(&i) => {
                let u = (i & 0x1fff) as u16;
                body.extend([0xc0 | (u >> 8) as u8, u as u8]);
            }
            Elem::Int(i) => {
                body.push(0xf4);
                body.extend(i.to_le_bytes());
            }
            Elem::Str(s) if s.len() < 64 => {
                body.push(0x80 | s.len() as u8);
                body.extend(s);
            }
            Elem::Str(s) if s.len() < 4096 => {
                body.extend([0xe0 | (s.len() >> 8) as u8, s.len() as u8]);
                body.extend(s);
            }
            Elem::Str(s) => {
                body.push(0xf0);
                body.extend((s.len() as u32).to_le_bytes());
                body.extend(s);
            }
        }
        let (bl, n) = backlen(body.len() - start);
        body.extend(&bl[..n]);
    }
    let mut out = ((body.len() + 7) as u32).to_le_bytes().to_vec();
    out.extend((items.len() as u16).to_le_bytes());
    out.extend(body);
    out.push(0xff);
    out
}
