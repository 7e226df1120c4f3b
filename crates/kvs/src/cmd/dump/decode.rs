//! Reading one value in Redis's RDB serialization (the body of a DUMP payload, before
//! its version and checksum): the object type byte, then the value.
//!
//! Every type a Redis 5.0 to 7.2 DUMP produces for strings, lists, sets, hashes, sorted
//! sets and streams is read: strings with their integer and LZF encodings; lists as
//! plain lists, ziplists, quicklists of ziplists and quicklists of listpacks (with
//! plain nodes); sets as plain sets, intsets and listpacks; hashes and sorted sets as
//! plain collections (scores as text or binary doubles), ziplists and listpacks;
//! streams in their three forms (see [`super::stream`]). Modules and the zipmap of
//! Redis 2 are refused.
//!
//! The input is untrusted. Every count and length is checked against the bytes left
//! before anything is allocated for it (an element takes at least one byte, so a count
//! larger than the rest cannot be honest), an LZF length against the most that LZF can
//! expand its input, and every packed encoding is walked with bounds checks; a bad
//! input is a [`Malformed`], never a panic. As in Redis, an empty collection, a
//! duplicate member or field, and a NaN score are refused too.

use super::packed::{self, Elem};
use crate::value::{Hash, List, Set, Value, ZSet};

/// The payload does not hold a value this server can load (Redis's "Bad data format").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Malformed;

pub(super) type Res<T> = Result<T, Malformed>;

/// RDB object types (Redis's `RDB_TYPE_*`).
pub(super) mod ty {
    pub const STRING: u8 = 0;
    pub const LIST: u8 = 1;
    pub const SET: u8 = 2;
    pub const ZSET: u8 = 3;
    pub const HASH: u8 = 4;
    pub const ZSET_2: u8 = 5;
    pub const LIST_ZIPLIST: u8 = 10;
    pub const SET_INTSET: u8 = 11;
    pub const ZSET_ZIPLIST: u8 = 12;
    pub const HASH_ZIPLIST: u8 = 13;
    pub const LIST_QUICKLIST: u8 = 14;
    pub const HASH_LISTPACK: u8 = 16;
    pub const ZSET_LISTPACK: u8 = 17;
    pub const LIST_QUICKLIST_2: u8 = 18;
    pub const SET_LISTPACK: u8 = 20;
    pub const STREAM_LISTPACKS: u8 = 15;
    pub const STREAM_LISTPACKS_2: u8 = 19;
    pub const STREAM_LISTPACKS_3: u8 = 21;
}

/// Quicklist 2 node containers: one element, or a listpack of them.
const NODE_PLAIN: usize = 1;
const NODE_PACKED: usize = 2;

/// An RDB length, or the marker of a specially encoded string.
enum Len {
    Plain(u64),
    Special(u8),
}

/// A cursor over the body.
pub(super) struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(super) fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf }
    }

    pub(super) fn take(&mut self, n: usize) -> Res<&'a [u8]> {
        if n > self.buf.len() {
            return Err(Malformed);
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }

    pub(super) fn byte(&mut self) -> Res<u8> {
        Ok(self.take(1)?[0])
    }

    pub(super) fn array<const N: usize>(&mut self) -> Res<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    /// A length (top two bits of the first byte: 6-bit, 14-bit, 32/64-bit big
    /// endian) or a special-encoding marker.
    fn len_or_special(&mut self) -> Res<Len> {
        let b = self.byte()?;
        Ok(match b >> 6 {
            0 => Len::Plain(u64::from(b & 0x3f)),
            1 => Len::Plain(u64::from(b & 0x3f) << 8 | u64::from(self.byte()?)),
            2 => match b {
                0x80 => Len::Plain(u64::from(u32::from_be_bytes(self.array()?))),
                0x81 => Len::Plain(u64::from_be_bytes(self.array()?)),
                _ => return Err(Malformed),
            },
            _ => Len::Special(b & 0x3f),
        })
    }

    /// The bytes left.
    pub(super) fn left(&self) -> usize {
        self.buf.len()
    }

    /// A plain length that must fit in the bytes left: a string's size, or a count of
    /// items each at least one byte long.
    pub(super) fn bounded_len(&mut self) -> Res<usize> {
        match self.len_or_special()? {
            Len::Plain(n) if n <= self.buf.len() as u64 => Ok(n as usize),
            _ => Err(Malformed),
        }
    }

    /// A plain length with no bound (an LZF string's decompressed size, a node
    /// container), checked by its user.
    pub(super) fn any_len(&mut self) -> Res<u64> {
        match self.len_or_special()? {
            Len::Plain(n) => Ok(n),
            Len::Special(_) => Err(Malformed),
        }
    }

    /// A string: raw bytes, a decimal integer stored in 1, 2 or 4 bytes, or LZF.
    pub(super) fn string(&mut self) -> Res<Vec<u8>> {
        let n = match self.len_or_special()? {
            Len::Plain(n) if n <= self.buf.len() as u64 => {
                return Ok(self.take(n as usize)?.to_vec())
            }
            Len::Plain(_) => return Err(Malformed),
            Len::Special(0) => i64::from(i8::from_le_bytes(self.array()?)),
            Len::Special(1) => i64::from(i16::from_le_bytes(self.array()?)),
            Len::Special(2) => i64::from(i32::from_le_bytes(self.array()?)),
            Len::Special(3) => {
                let clen = self.bounded_len()?;
                let ulen = self.any_len()?;
                let data = self.take(clen)?;
                return super::lzf::decompress(data, ulen);
            }
            Len::Special(_) => return Err(Malformed),
        };
        Ok(n.to_string().into_bytes())
    }

    /// A score as text (RDB_TYPE_ZSET): a length byte, with 253..=255 standing for
    /// NaN, +inf and -inf.
    fn text_double(&mut self) -> Res<f64> {
        match self.byte()? {
            253 => Ok(f64::NAN),
            254 => Ok(f64::INFINITY),
            255 => Ok(f64::NEG_INFINITY),
            n => parse_score(self.take(n as usize)?),
        }
    }

    fn binary_double(&mut self) -> Res<f64> {
        Ok(f64::from_le_bytes(self.array()?))
    }

    /// A count of items, each at least one byte: not zero (Redis refuses empty keys),
    /// not more than the bytes left.
    fn count(&mut self) -> Res<usize> {
        match self.bounded_len()? {
            0 => Err(Malformed),
            n => Ok(n),
        }
    }
}

/// A score written as text; NaN is refused by the caller.
fn parse_score(b: &[u8]) -> Res<f64> {
    std::str::from_utf8(b)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .ok_or(Malformed)
}

/// The value of one object: its type byte, then its serialization.
pub(super) fn object(r: &mut Reader) -> Res<Value> {
    let t = r.byte()?;
    value(r, t)
}

/// True for an object type this server reads ([`value`]).
pub(super) fn known(t: u8) -> bool {
    matches!(t, 0..=5 | 10..=21)
}

/// The serialization of one value of object type `t` (the type byte already read).
pub(super) fn value(r: &mut Reader, t: u8) -> Res<Value> {
    match t {
        ty::STRING => Ok(Value::Str(r.string()?)),
        ty::LIST => {
            let mut l = List::default();
            for _ in 0..r.count()? {
                l.push(false, &r.string()?);
            }
            Ok(Value::List(Box::new(l)))
        }
        ty::SET => {
            let mut s = Set::default();
            for _ in 0..r.count()? {
                set_add(&mut s, &r.string()?)?;
            }
            Ok(Value::Set(Box::new(s)))
        }
        ty::ZSET | ty::ZSET_2 => {
            let mut z = ZSet::default();
            for _ in 0..r.count()? {
                let m = r.string()?;
                let score = if t == ty::ZSET_2 {
                    r.binary_double()?
                } else {
                    r.text_double()?
                };
                zset_add(&mut z, &m, score)?;
            }
            Ok(Value::ZSet(Box::new(z)))
        }
        ty::HASH => {
            let mut h = Hash::default();
            for _ in 0..r.count()? {
                let (f, v) = (r.string()?, r.string()?);
                hash_add(&mut h, &f, &v)?;
            }
            Ok(Value::Hash(Box::new(h)))
        }
        ty::LIST_ZIPLIST => {
            let mut l = List::default();
            packed::ziplist(&r.string()?, |e| list_add(&mut l, e))?;
            nonempty(Value::List(Box::new(l)))
        }
        ty::LIST_QUICKLIST | ty::LIST_QUICKLIST_2 => quicklist(r, t == ty::LIST_QUICKLIST_2),
        ty::SET_INTSET => {
            let mut s = Set::default();
            packed::intset(&r.string()?, |i| set_add(&mut s, i.to_string().as_bytes()))?;
            nonempty(Value::Set(Box::new(s)))
        }
        ty::SET_LISTPACK => {
            let mut s = Set::default();
            packed::listpack(&r.string()?, |e| set_add(&mut s, &e.bytes()))?;
            nonempty(Value::Set(Box::new(s)))
        }
        ty::HASH_ZIPLIST | ty::HASH_LISTPACK => {
            let mut h = Hash::default();
            pairs(&r.string()?, t == ty::HASH_LISTPACK, |f, v| {
                hash_add(&mut h, &f.bytes(), &v.bytes())
            })?;
            nonempty(Value::Hash(Box::new(h)))
        }
        ty::ZSET_ZIPLIST | ty::ZSET_LISTPACK => {
            let mut z = ZSet::default();
            pairs(&r.string()?, t == ty::ZSET_LISTPACK, |m, s| {
                let score = match s {
                    Elem::Int(i) => i as f64,
                    Elem::Str(b) => parse_score(b)?,
                };
                zset_add(&mut z, &m.bytes(), score)
            })?;
            nonempty(Value::ZSet(Box::new(z)))
        }
        ty::STREAM_LISTPACKS | ty::STREAM_LISTPACKS_2 | ty::STREAM_LISTPACKS_3 => {
            super::stream::decode(r, t).map(|s| Value::Stream(Box::new(s)))
        }
        _ => Err(Malformed),
    }
}

/// A list of quicklist nodes: ziplists (`v2` false), or in version 2 each node a
/// container kind then a listpack or one plain element. Empty nodes are skipped, as
/// Redis skips them; an empty list is refused.
fn quicklist(r: &mut Reader, v2: bool) -> Res<Value> {
    let mut l = List::default();
    for _ in 0..r.count()? {
        let container = if v2 { r.any_len()? } else { NODE_PACKED as u64 };
        let node = r.string()?;
        if node.is_empty() {
            return Err(Malformed);
        }
        match container as usize {
            NODE_PLAIN if v2 => l.push(false, &node),
            NODE_PACKED if v2 => packed::listpack(&node, |e| list_add(&mut l, e))?,
            NODE_PACKED => packed::ziplist(&node, |e| list_add(&mut l, e))?,
            _ => return Err(Malformed),
        }
    }
    nonempty(Value::List(Box::new(l)))
}

/// The entries of a ziplist or listpack taken two by two (field and value, member and
/// score); an odd count is refused.
fn pairs<'a>(
    blob: &'a [u8],
    listpack: bool,
    mut f: impl FnMut(Elem<'a>, Elem<'a>) -> Res<()>,
) -> Res<()> {
    let mut first: Option<Elem<'a>> = None;
    let mut each = |e: Elem<'a>| match first.take() {
        None => {
            first = Some(e);
            Ok(())
        }
        Some(a) => f(a, e),
    };
    if listpack {
        packed::listpack(blob, &mut each)?;
    } else {
        packed::ziplist(blob, &mut each)?;
    }
    match first {
        None => Ok(()),
        Some(_) => Err(Malformed),
    }
}

fn nonempty(v: Value) -> Res<Value> {
    if v.is_empty_collection() {
        Err(Malformed)
    } else {
        Ok(v)
    }
}

fn list_add(l: &mut List, e: Elem) -> Res<()> {
    l.push(false, &e.bytes());
    Ok(())
}

fn set_add(s: &mut Set, m: &[u8]) -> Res<()> {
    s.insert(m).then_some(()).ok_or(Malformed)
}

fn hash_add(h: &mut Hash, f: &[u8], v: &[u8]) -> Res<()> {
    h.insert(f, v).then_some(()).ok_or(Malformed)
}

fn zset_add(z: &mut ZSet, m: &[u8], score: f64) -> Res<()> {
    if score.is_nan() || z.insert(m, score).is_some() {
        return Err(Malformed);
    }
    Ok(())
}
