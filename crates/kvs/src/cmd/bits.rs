//! Bit operations on strings: BITCOUNT, BITPOS, BITOP, BITFIELD and BITFIELD_RO, with
//! Redis's replies, errors and their order (a missing key is an endless run of zero
//! bits; ranges in bytes or, with `BIT`, in bits, negative from the end; BITFIELD's
//! signed and unsigned fields of 1 to 64 bits (63 unsigned) at any bit offset, `#N`
//! offsets in units of the field's width, and `OVERFLOW WRAP|SAT|FAIL` computed as
//! Redis computes it, to the last quirk).
//!
//! Bits are numbered from the most significant bit of the first byte, as SETBIT and
//! GETBIT number them. A write grows the string with zero bytes up to the last bit it
//! touches, bounded by `proto-max-bulk-len` like SETBIT.

use super::{eq, parse_i64, Ctx, NOT_INT, SYNTAX, WRONGTYPE};
use crate::resp::Writer;
use crate::value::Value;

const BIT_OFFSET: &str = "ERR bit offset is not an integer or out of range";
const BAD_TYPE: &str =
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.";

/// The string at `key` (None when absent), or WRONGTYPE; `f` reads it in place.
fn with_string<R>(
    ctx: &mut Ctx,
    key: &[u8],
    f: impl FnOnce(Option<&[u8]>) -> R,
) -> Result<R, &'static str> {
    match ctx.keys.get(key, ctx.now).map(|e| &e.value) {
        None => Ok(f(None)),
        Some(Value::Str(v)) => Ok(f(Some(v))),
        Some(_) => Err(WRONGTYPE),
    }
}

/// A range of bits `[lo, hi]` of a string of `len` bytes, from Redis's start/end
/// arguments (bytes, or bits with `bits`), negative counting from the end and clamped
/// to the string; None when it is empty.
fn bit_range(len: u64, start: i64, end: i64, bits: bool) -> Option<(u64, u64)> {
    let total = if bits { len as i128 * 8 } else { len as i128 };
    let (mut s, mut e) = (start as i128, end as i128);
    if s < 0 {
        s += total;
    }
    if e < 0 {
        e += total;
    }
    s = s.max(0);
    e = e.max(0);
    if e >= total {
        e = total - 1;
    }
    if s > e {
        return None;
    }
    Some(if bits {
        (s as u64, e as u64)
    } else {
        (s as u64 * 8, e as u64 * 8 + 7)
    })
}

/// Set bits of `p`, four 64-bit words at a time (the compiler vectorizes this where
/// the target features allow: VPOPCNTQ with AVX-512, a nibble table with AVX2).
#[inline(always)]
fn popcount_words(p: &[u8]) -> u64 {
    let (words, rest) = p.as_chunks::<32>();
    let mut acc = [0u64; 4];
    for w in words {
        for (i, a) in acc.iter_mut().enumerate() {
            let mut b = [0u8; 8];
            b.copy_from_slice(&w[i * 8..i * 8 + 8]);
            *a += u64::from(u64::from_ne_bytes(b).count_ones());
        }
    }
    acc.iter().sum::<u64>() + rest.iter().map(|b| u64::from(b.count_ones())).sum::<u64>()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vpopcntdq")]
fn popcount_avx512(p: &[u8]) -> u64 {
    popcount_words(p)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
fn popcount_avx2(p: &[u8]) -> u64 {
    popcount_words(p)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn popcount_popcnt(p: &[u8]) -> u64 {
    popcount_words(p)
}

/// Set bits of `p`: the widest kernel this CPU has, chosen once (each is the same
/// code compiled for its features; the portable one serves every other CPU).
fn popcount(p: &[u8]) -> u64 {
    static KERNEL: std::sync::OnceLock<fn(&[u8]) -> u64> = std::sync::OnceLock::new();
    let f = KERNEL.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            if has!("avx512f") && has!("avx512vpopcntdq") {
                // SAFETY: the features were detected on this CPU.
                return |p| unsafe { popcount_avx512(p) };
            }
            if has!("avx2") && has!("popcnt") {
                // SAFETY: as above.
                return |p| unsafe { popcount_avx2(p) };
            }
            if has!("popcnt") {
                // SAFETY: as above.
                return |p| unsafe { popcount_popcnt(p) };
            }
        }
        popcount_words
    });
    f(p)
}

/// Set bits of `p` in the bit range `[lo, hi]` (within `p`).
fn count_bits(p: &[u8], lo: u64, hi: u64) -> u64 {
    let (first, last) = ((lo / 8) as usize, (hi / 8) as usize);
    let mut n = popcount(&p[first..=last]);
    // The bits of the edge bytes outside the range.
    let head = (0xffu16 << (8 - lo % 8)) as u8;
    let tail = (1u16 << (7 - hi % 8)) as u8 - 1;
    n -= (p[first] & head).count_ones() as u64;
    n -= (p[last] & tail).count_ones() as u64;
    n
}

/// The first bit equal to `bit` in `[lo, hi]` of `p` (within `p`).
fn find_bit(p: &[u8], lo: u64, hi: u64, bit: bool) -> Option<u64> {
    let skip = if bit { 0u8 } else { 0xff };
    let mut i = lo;
    while i <= hi {
        let byte = p[(i / 8) as usize];
        if i.is_multiple_of(8) && hi - i >= 7 {
            // Whole bytes: runs of the other bit 32 bytes at a time.
            let (mut b, end) = ((i / 8) as usize, ((hi + 1) / 8) as usize);
            while b + 32 <= end && p[b..b + 32] == [skip; 32] {
                b += 32;
            }
            while b < end && p[b] == skip {
                b += 1;
            }
            i = b as u64 * 8;
            if b < end {
                let x = if bit { p[b] } else { !p[b] };
                return Some(i + x.leading_zeros() as u64);
            }
            continue;
        }
        if (byte >> (7 - i % 8)) & 1 == u8::from(bit) {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// `BYTE` or `BIT`: true for bits; None for anything else.
fn unit(a: &[u8]) -> Option<bool> {
    if eq(a, "bit") {
        Some(true)
    } else if eq(a, "byte") {
        Some(false)
    } else {
        None
    }
}

/// BITCOUNT key [start end [BYTE|BIT]].
pub fn bitcount(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let r = with_string(ctx, args[1], |v| {
        let Some(v) = v else {
            return Ok(0);
        };
        let len = v.len() as u64;
        let range = match args.len() {
            2 => (len > 0).then(|| (0, len * 8 - 1)),
            4 | 5 => {
                let (Some(start), Some(end)) = (parse_i64(args[2]), parse_i64(args[3])) else {
                    return Err(NOT_INT);
                };
                if start < 0 && end < 0 && start > end {
                    return Ok(0);
                }
                let bits = match args.get(4) {
                    None => false,
                    Some(a) => unit(a).ok_or(SYNTAX)?,
                };
                bit_range(len, start, end, bits)
            }
            _ => return Err(SYNTAX),
        };
        Ok(range.map_or(0, |(lo, hi)| count_bits(v, lo, hi)))
    });
    match r {
        Ok(Ok(n)) => w.int(n as i64),
        Ok(Err(e)) | Err(e) => w.error(e),
    }
}

/// BITPOS key bit [start [end [BYTE|BIT]]].
pub fn bitpos(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let bit = match parse_i64(args[2]) {
        None => return w.error(NOT_INT),
        Some(0) => false,
        Some(1) => true,
        Some(_) => return w.error("ERR The bit argument must be 1 or 0."),
    };
    let r = with_string(ctx, args[1], |v| {
        let Some(v) = v else {
            // An endless run of zeros.
            return Ok(if bit { -1 } else { 0 });
        };
        let len = v.len() as u64;
        let (range, end_given) = match args.len() {
            3 => ((len > 0).then(|| (0, len * 8 - 1)), false),
            4..=6 => {
                let start = parse_i64(args[3]).ok_or(NOT_INT)?;
                let bits = match args.get(5) {
                    None => false,
                    Some(a) => unit(a).ok_or(SYNTAX)?,
                };
                let end = match args.get(4) {
                    Some(a) => parse_i64(a).ok_or(NOT_INT)?,
                    None => -1,
                };
                (bit_range(len, start, end, bits), args.len() >= 5)
            }
            _ => return Err(SYNTAX),
        };
        let Some((lo, hi)) = range else {
            return Ok(-1);
        };
        Ok(match find_bit(v, lo, hi, bit) {
            Some(i) => i as i64,
            // Looking for a clear bit with no end given: the zeros past the string.
            None if !bit && !end_given => hi as i64 + 1,
            None => -1,
        })
    });
    match r {
        Ok(Ok(n)) => w.int(n),
        Ok(Err(e)) | Err(e) => w.error(e),
    }
}

/// BITOP AND|OR|XOR|NOT destkey key [key ...]: the result's length (the longest
/// source's; a missing source is zeros). An empty result deletes destkey.
pub fn bitop(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    #[derive(PartialEq)]
    enum Op {
        And,
        Or,
        Xor,
        Not,
    }
    let op = match args[1] {
        a if eq(a, "and") => Op::And,
        a if eq(a, "or") => Op::Or,
        a if eq(a, "xor") => Op::Xor,
        a if eq(a, "not") => Op::Not,
        _ => return w.error(SYNTAX),
    };
    if op == Op::Not && args.len() != 4 {
        return w.error("ERR BITOP NOT must be called with a single source key.");
    }
    let (dest, now) = (args[2], ctx.now);
    let mut out: Vec<u8> = Vec::new();
    let mut first = true;
    for key in &args[3..] {
        let r = with_string(ctx, key, |v| {
            let v = v.unwrap_or(&[]);
            if first {
                out = match op {
                    Op::Not => v.iter().map(|b| !b).collect(),
                    _ => v.to_vec(),
                };
                return;
            }
            if out.len() < v.len() {
                out.resize(v.len(), 0);
            }
            match op {
                // Bytes past a shorter source AND with its zeros.
                Op::And => {
                    for (i, o) in out.iter_mut().enumerate() {
                        *o &= v.get(i).copied().unwrap_or(0);
                    }
                }
                Op::Or => out.iter_mut().zip(v).for_each(|(o, b)| *o |= b),
                Op::Xor => out.iter_mut().zip(v).for_each(|(o, b)| *o ^= b),
                Op::Not => {}
            }
        });
        if let Err(e) = r {
            return w.error(e);
        }
        first = false;
    }
    let len = out.len();
    if len == 0 {
        if ctx.keys.remove(dest).is_some() {
            ctx.log_del(dest);
        }
    } else {
        if out.len() > ctx.config.limits.max_bulk {
            return w.error("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
        }
        ctx.keys.set(dest, out, 0, now);
        ctx.log_key(dest);
    }
    w.int(len as i64);
}

/// Runs `f` on the string at `key` grown with zero bytes to at least `need` bytes
/// (made when absent), in place: `f`'s result and whether the string was made or
/// grown; WRONGTYPE when the key holds another type. SETBIT's and BITFIELD's way to
/// the bits they write.
pub(crate) fn with_grown_string<R>(
    ctx: &mut Ctx,
    key: &[u8],
    need: usize,
    f: impl FnOnce(&mut Vec<u8>) -> R,
) -> Result<(R, bool), &'static str> {
    let now = ctx.now;
    match ctx.keys.get(key, now).map(|e| &e.value) {
        Some(Value::Str(_)) => {}
        Some(_) => return Err(WRONGTYPE),
        None => {
            ctx.keys.set(key, Vec::new(), 0, now);
        }
    }
    ctx.keys
        .update(key, now, |v| {
            let Value::Str(p) = v else {
                return Err(WRONGTYPE);
            };
            let grown = p.len() < need;
            if grown {
                p.resize(need, 0);
            }
            Ok((f(p), grown))
        })
        .unwrap_or(Err(WRONGTYPE))
}

/// How BITFIELD's SET and INCRBY treat a value that does not fit.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Overflow {
    Wrap,
    Sat,
    Fail,
}

/// One BITFIELD operation.
struct FieldOp {
    kind: FieldKind,
    signed: bool,
    bits: u32,
    offset: u64,
    value: i64,
    overflow: Overflow,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum FieldKind {
    Get,
    Set,
    IncrBy,
}

/// `i1`..`i64` or `u1`..`u63`: (signed, bits).
fn field_type(a: &[u8]) -> Option<(bool, u32)> {
    let signed = match a.first()? {
        b'i' => true,
        b'u' => false,
        _ => return None,
    };
    let bits = parse_i64(&a[1..])?;
    let max = if signed { 64 } else { 63 };
    (1..=max).contains(&bits).then_some((signed, bits as u32))
}

/// A field's bit offset: `N`, or `#N` for N fields of `bits` bits; below
/// `max_bulk` bytes.
fn field_offset(a: &[u8], bits: u32, max_bulk: usize) -> Option<u64> {
    let (hash, digits) = match a.first() {
        Some(b'#') => (true, &a[1..]),
        _ => (false, a),
    };
    let mut off = parse_i64(digits)?;
    if hash {
        off = off.checked_mul(i64::from(bits))?;
    }
    (off >= 0 && ((off >> 3) as u64) < max_bulk as u64).then_some(off as u64)
}

/// The `bits`-bit unsigned field at bit `offset` of `p` (bits past its end read as 0).
fn get_unsigned(p: &[u8], offset: u64, bits: u32) -> u64 {
    let mut v = 0u64;
    for j in 0..u64::from(bits) {
        let i = offset + j;
        let bit = p
            .get((i / 8) as usize)
            .map_or(0, |b| (b >> (7 - i % 8)) & 1);
        v = (v << 1) | u64::from(bit);
    }
    v
}

/// The `bits`-bit signed field at bit `offset` of `p`.
fn get_signed(p: &[u8], offset: u64, bits: u32) -> i64 {
    let v = get_unsigned(p, offset, bits);
    if bits < 64 && v & (1 << (bits - 1)) != 0 {
        (v | (u64::MAX << bits)) as i64
    } else {
        v as i64
    }
}

/// Writes the low `bits` bits of `v` at bit `offset` of `p` (long enough).
fn set_field(p: &mut [u8], offset: u64, bits: u32, v: u64) {
    for j in 0..u64::from(bits) {
        let bit = (v >> (u64::from(bits) - 1 - j)) & 1;
        let i = offset + j;
        let b = &mut p[(i / 8) as usize];
        let mask = 1u8 << (7 - i % 8);
        if bit != 0 {
            *b |= mask;
        } else {
            *b &= !mask;
        }
    }
}

/// Whether `value + incr` fits an unsigned field of `bits` bits: 0, or 1 (over) / -1
/// (under) with the value to store instead (WRAP, SAT). Redis's arithmetic, including
/// how it compares in signed 64-bit terms.
fn unsigned_overflow(value: u64, incr: i64, bits: u32, how: Overflow) -> (i32, u64) {
    let max = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let max_incr = max.wrapping_sub(value) as i64;
    let min_incr = (value as i64).wrapping_neg();
    let wrapped = || value.wrapping_add(incr as u64) & !(u64::MAX << bits);
    if value > max || (incr > 0 && incr > max_incr) {
        let limit = match how {
            Overflow::Wrap => wrapped(),
            Overflow::Sat => max,
            Overflow::Fail => 0,
        };
        (1, limit)
    } else if incr < 0 && incr < min_incr {
        let limit = match how {
            Overflow::Wrap => wrapped(),
            _ => 0,
        };
        (-1, limit)
    } else {
        (0, 0)
    }
}

/// [`unsigned_overflow`] for a signed field.
fn signed_overflow(value: i64, incr: i64, bits: u32, how: Overflow) -> (i32, i64) {
    let max = if bits == 64 {
        i64::MAX
    } else {
        (1i64 << (bits - 1)) - 1
    };
    let min = -max - 1;
    let max_incr = (max as u64).wrapping_sub(value as u64) as i64;
    let min_incr = min.wrapping_sub(value);
    let wrapped = || {
        let mut c = (value as u64).wrapping_add(incr as u64);
        if bits < 64 {
            let mask = u64::MAX << bits;
            if c & (1 << (bits - 1)) != 0 {
                c |= mask;
            } else {
                c &= !mask;
            }
        }
        c as i64
    };
    let limit = |sat: i64| match how {
        Overflow::Wrap => wrapped(),
        Overflow::Sat => sat,
        Overflow::Fail => 0,
    };
    if value > max || (bits != 64 && incr > max_incr) || (value >= 0 && incr > 0 && incr > max_incr)
    {
        (1, limit(max))
    } else if value < min
        || (bits != 64 && incr < min_incr)
        || (value < 0 && incr < 0 && incr < min_incr)
    {
        (-1, limit(min))
    } else {
        (0, 0)
    }
}

/// Reads BITFIELD's operations from `args[2..]`; the first error as Redis gives it.
fn field_ops(args: &[&[u8]], max_bulk: usize) -> Result<Vec<FieldOp>, &'static str> {
    let mut ops = Vec::new();
    let mut overflow = Overflow::Wrap;
    let mut j = 2;
    while j < args.len() {
        let left = args.len() - j - 1;
        let kind = match args[j] {
            a if eq(a, "get") && left >= 2 => FieldKind::Get,
            a if eq(a, "set") && left >= 3 => FieldKind::Set,
            a if eq(a, "incrby") && left >= 3 => FieldKind::IncrBy,
            a if eq(a, "overflow") && left >= 1 => {
                overflow = match args[j + 1] {
                    t if eq(t, "wrap") => Overflow::Wrap,
                    t if eq(t, "sat") => Overflow::Sat,
                    t if eq(t, "fail") => Overflow::Fail,
                    _ => return Err("ERR Invalid OVERFLOW type specified"),
                };
                j += 2;
                continue;
            }
            _ => return Err(SYNTAX),
        };
        let (signed, bits) = field_type(args[j + 1]).ok_or(BAD_TYPE)?;
        let offset = field_offset(args[j + 2], bits, max_bulk).ok_or(BIT_OFFSET)?;
        let value = if kind == FieldKind::Get {
            0
        } else {
            parse_i64(args[j + 3]).ok_or(NOT_INT)?
        };
        ops.push(FieldOp {
            kind,
            signed,
            bits,
            offset,
            value,
            overflow,
        });
        j += if kind == FieldKind::Get { 3 } else { 4 };
    }
    Ok(ops)
}

/// Runs one SET or INCRBY on `p`: the reply (None: FAIL overflow, nothing written) and
/// whether the field changed.
fn write_field(p: &mut [u8], op: &FieldOp) -> (Option<i64>, bool) {
    let incr = op.kind == FieldKind::IncrBy;
    if op.signed {
        let old = get_signed(p, op.offset, op.bits);
        let (over, limit) = if incr {
            signed_overflow(old, op.value, op.bits, op.overflow)
        } else {
            signed_overflow(op.value, 0, op.bits, op.overflow)
        };
        if over != 0 && op.overflow == Overflow::Fail {
            return (None, false);
        }
        let new = match (over != 0, incr) {
            (true, _) => limit,
            (false, true) => old.wrapping_add(op.value),
            (false, false) => op.value,
        };
        set_field(p, op.offset, op.bits, new as u64);
        (Some(if incr { new } else { old }), old != new)
    } else {
        let old = get_unsigned(p, op.offset, op.bits);
        let (over, limit) = if incr {
            unsigned_overflow(old, op.value, op.bits, op.overflow)
        } else {
            unsigned_overflow(op.value as u64, 0, op.bits, op.overflow)
        };
        if over != 0 && op.overflow == Overflow::Fail {
            return (None, false);
        }
        let new = match (over != 0, incr) {
            (true, _) => limit,
            (false, true) => old.wrapping_add(op.value as u64),
            (false, false) => op.value as u64,
        };
        set_field(p, op.offset, op.bits, new);
        (Some(if incr { new as i64 } else { old as i64 }), old != new)
    }
}

/// BITFIELD key [GET type offset] [SET type offset value] [INCRBY type offset incr]
/// [OVERFLOW WRAP|SAT|FAIL] ...
pub fn bitfield(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    bitfield_generic(ctx, args, w, false);
}

/// BITFIELD_RO key [GET type offset] ...
pub fn bitfield_ro(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    bitfield_generic(ctx, args, w, true);
}

fn bitfield_generic(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer, read_only: bool) {
    let ops = match field_ops(args, ctx.config.limits.max_bulk) {
        Ok(ops) => ops,
        Err(e) => return w.error(e),
    };
    let key = args[1];
    let writes = ops.iter().any(|o| o.kind != FieldKind::Get);
    if !writes {
        let r = with_string(ctx, key, |v| {
            let v = v.unwrap_or(&[]);
            ops.iter()
                .map(|o| {
                    if o.signed {
                        get_signed(v, o.offset, o.bits)
                    } else {
                        get_unsigned(v, o.offset, o.bits) as i64
                    }
                })
                .collect::<Vec<i64>>()
        });
        return match r {
            Err(e) => w.error(e),
            Ok(vals) => {
                w.array(vals.len());
                for v in vals {
                    w.int(v);
                }
            }
        };
    }
    if read_only {
        return w.error("ERR BITFIELD_RO only supports the GET subcommand");
    }
    // The string grows (with zeros) to hold the farthest bit written.
    let last_bit = ops
        .iter()
        .filter(|o| o.kind != FieldKind::Get)
        .map(|o| o.offset + u64::from(o.bits) - 1)
        .max()
        .unwrap_or(0);
    let need = (last_bit / 8 + 1) as usize;
    let r = with_grown_string(ctx, key, need, |p| {
        let mut replies: Vec<Option<i64>> = Vec::with_capacity(ops.len());
        let mut changed = false;
        for op in &ops {
            if op.kind == FieldKind::Get {
                replies.push(Some(if op.signed {
                    get_signed(p, op.offset, op.bits)
                } else {
                    get_unsigned(p, op.offset, op.bits) as i64
                }));
                continue;
            }
            let (reply, differs) = write_field(p, op);
            changed |= differs;
            replies.push(reply);
        }
        (replies, changed)
    });
    let (replies, changed) = match r {
        Ok(((replies, changed), grown)) => (replies, changed || grown),
        Err(e) => return w.error(e),
    };
    if changed {
        ctx.log_key(key);
    }
    w.array(replies.len());
    for r in replies {
        match r {
            Some(v) => w.int(v),
            None => w.null(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_clamp_as_redis_does() {
        // "foobar": 6 bytes, 48 bits.
        assert_eq!(bit_range(6, 0, -1, false), Some((0, 47)));
        assert_eq!(bit_range(6, 1, 1, false), Some((8, 15)));
        assert_eq!(bit_range(6, -2, -1, false), Some((32, 47)));
        assert_eq!(bit_range(6, 5, 30, true), Some((5, 30)));
        assert_eq!(bit_range(6, 3, 1, false), None);
        assert_eq!(bit_range(6, -100, 100, true), Some((0, 47)));
        assert_eq!(bit_range(0, 0, -1, false), None);
    }

    #[test]
    fn counts_and_positions_agree_with_a_bit_by_bit_reading() {
        let p: Vec<u8> = (0u32..40).map(|i| (i * 37 % 251) as u8).collect();
        let bit = |i: u64| (p[(i / 8) as usize] >> (7 - i % 8)) & 1;
        for lo in (0..320).step_by(7) {
            for hi in (lo..320).step_by(11) {
                let slow = (lo..=hi).filter(|&i| bit(i) == 1).count() as u64;
                assert_eq!(count_bits(&p, lo, hi), slow, "{lo}..{hi}");
                for b in [false, true] {
                    let slow = (lo..=hi).find(|&i| bit(i) == u8::from(b));
                    assert_eq!(find_bit(&p, lo, hi, b), slow, "{lo}..{hi} {b}");
                }
            }
        }
    }

    #[test]
    fn positions_past_long_runs() {
        for (fill, bit) in [(0u8, true), (0xff, false)] {
            let mut p = vec![fill; 300];
            assert_eq!(find_bit(&p, 0, 2399, bit), None);
            p[257] ^= 0x10;
            assert_eq!(find_bit(&p, 0, 2399, bit), Some(257 * 8 + 3));
            assert_eq!(find_bit(&p, 5, 2059, bit), Some(257 * 8 + 3));
            assert_eq!(find_bit(&p, 5, 2058, bit), None);
            assert_eq!(find_bit(&p, 2060, 2399, bit), None);
        }
    }

    #[test]
    fn every_popcount_kernel_agrees_with_the_portable_one() {
        let p: Vec<u8> = (0u32..1000)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        for len in [0, 1, 7, 31, 32, 33, 64, 100, 999, 1000] {
            let want: u64 = p[..len].iter().map(|b| u64::from(b.count_ones())).sum();
            assert_eq!(popcount_words(&p[..len]), want);
            assert_eq!(popcount(&p[..len]), want);
            #[cfg(target_arch = "x86_64")]
            {
                use std::arch::is_x86_feature_detected as has;
                if has!("avx512f") && has!("avx512vpopcntdq") {
                    // SAFETY: detected.
                    assert_eq!(unsafe { popcount_avx512(&p[..len]) }, want);
                }
                if has!("avx2") && has!("popcnt") {
                    // SAFETY: detected.
                    assert_eq!(unsafe { popcount_avx2(&p[..len]) }, want);
                }
                if has!("popcnt") {
                    // SAFETY: detected.
                    assert_eq!(unsafe { popcount_popcnt(&p[..len]) }, want);
                }
            }
        }
    }

    #[test]
    fn fields_round_trip_at_odd_offsets() {
        let mut p = vec![0u8; 16];
        set_field(&mut p, 5, 13, 0x1abc);
        assert_eq!(get_unsigned(&p, 5, 13), 0x1abc);
        set_field(&mut p, 3, 64, (-2i64) as u64);
        assert_eq!(get_signed(&p, 3, 64), -2);
        set_field(&mut p, 70, 8, 0x80);
        assert_eq!(get_signed(&p, 70, 8), -128);
        // Past the end reads zeros.
        assert_eq!(get_unsigned(&[0xff], 4, 8), 0xf0);
    }

    #[test]
    fn overflow_follows_redis() {
        // u8: 250 + 10 wraps to 4, saturates at 255; 5 - 10 wraps to 251, saturates at 0.
        assert_eq!(unsigned_overflow(250, 10, 8, Overflow::Wrap), (1, 4));
        assert_eq!(unsigned_overflow(250, 10, 8, Overflow::Sat), (1, 255));
        assert_eq!(unsigned_overflow(5, -10, 8, Overflow::Wrap), (-1, 251));
        assert_eq!(unsigned_overflow(5, -10, 8, Overflow::Sat), (-1, 0));
        assert_eq!(unsigned_overflow(5, 10, 8, Overflow::Sat).0, 0);
        // SET u8 -1: the value as unsigned 64 bits is past the field.
        assert_eq!(unsigned_overflow(u64::MAX, 0, 8, Overflow::Wrap), (1, 255));
        // i8: 120 + 10 wraps to -126; -120 - 10 saturates at -128.
        assert_eq!(signed_overflow(120, 10, 8, Overflow::Wrap), (1, -126));
        assert_eq!(signed_overflow(-120, -10, 8, Overflow::Sat), (-1, -128));
        assert_eq!(
            signed_overflow(i64::MAX, 1, 64, Overflow::Wrap),
            (1, i64::MIN)
        );
        assert_eq!(
            signed_overflow(i64::MIN, -1, 64, Overflow::Sat),
            (-1, i64::MIN)
        );
        assert_eq!(signed_overflow(3, 4, 64, Overflow::Sat).0, 0);
    }

    #[test]
    fn types_and_offsets_parse_as_redis_does() {
        assert_eq!(field_type(b"i64"), Some((true, 64)));
        assert_eq!(field_type(b"u63"), Some((false, 63)));
        assert_eq!(field_type(b"u64"), None);
        assert_eq!(field_type(b"i0"), None);
        assert_eq!(field_type(b"I8"), None);
        assert_eq!(field_type(b"u"), None);
        assert_eq!(field_offset(b"#3", 8, 1 << 29), Some(24));
        assert_eq!(field_offset(b"-1", 8, 1 << 29), None);
        assert_eq!(field_offset(b"4294967296", 8, 1 << 29), None);
        assert_eq!(field_offset(b"#9223372036854775807", 8, 1 << 29), None);
    }
}
