//! HyperLogLog: PFADD, PFCOUNT, PFMERGE, PFDEBUG, PFSELFTEST, in Redis's sparse and dense
//! representations.
//!
//! A HyperLogLog is an ordinary string value, byte for byte the one Redis 7 keeps, so
//! DUMP/RESTORE, replication and GET/SET carry it between the two servers unchanged:
//!
//! - a 16-byte header: `HYLL`, the encoding (0 dense, 1 sparse), three unused bytes,
//!   then the last cardinality computed as a little-endian u64 whose top bit set means
//!   "stale, count again";
//! - dense: 16384 registers of 6 bits packed from the low bit of each byte up
//!   (register `i` starts at bit `6 i`), 12288 bytes, so the value is 12304 bytes;
//! - sparse: a run-length code over the registers: `00xxxxxx` is 1..64 zero registers,
//!   `01xxxxxx yyyyyyyy` is 1..16384 zero registers (14-bit length less one), and
//!   `1vvvvvxx` is 1..4 registers holding the value 1..32. The runs must cover exactly
//!   16384 registers.
//!
//! An element is hashed with MurmurHash64A (seed `0xadc83b19`); the low 14 bits pick the
//! register, and the position of the lowest set bit of the other 50 (plus one, at most
//! 51) is the value the register is raised to. A sparse value turns dense when a
//! register needs more than 32 or when an edit would make it longer than
//! `hll-sparse-max-bytes`. The sparse edits follow Redis's exactly (the same split of a
//! run, the same merge of neighbouring equal runs, the same promotion test), because the
//! bytes are visible to GET and DUMP and must match.
//!
//! The estimate is Ertl's ("New cardinality estimation algorithms for HyperLogLog
//! sketches", arXiv:1702.01284, the sigma/tau form Redis 7 uses) over the histogram of
//! register values, in f64 and in Redis's order of operations, rounded half away from
//! zero; an estimate out of the i64 range comes out as i64::MIN, as Redis's `llroundl`
//! gives on x86-64.
//!
//! The values are untrusted (SET or SETRANGE can write any bytes): every walk over a
//! sparse value stops at its end and as soon as it covers more than 16384 registers, a
//! run is never written past the register array, and a broken value gets Redis's
//! `INVALIDOBJ` error, never a panic.

use super::{eq, Ctx, WRONGTYPE};
use crate::resp::Writer;
use crate::value::Value;

/// Bits of the hash that pick the register.
const P: u32 = 14;
/// The rest of the hash, whose trailing zeros are counted.
const Q: usize = 64 - P as usize;
/// Number of registers.
const REGISTERS: usize = 1 << P;
/// Header bytes.
const HEADER: usize = 16;
/// Length of a dense value.
const DENSE_SIZE: usize = HEADER + REGISTERS * 6 / 8;
/// Encoding byte of a dense value.
const DENSE: u8 = 0;
/// Encoding byte of a sparse value.
const SPARSE: u8 = 1;
/// Redis's MurmurHash64A seed.
const SEED: u64 = 0xadc8_3b19;
/// Largest value a sparse VAL run holds.
const VAL_MAX: u8 = 32;
/// Longest VAL run.
const VAL_MAX_RUN: usize = 4;
/// Longest one-byte ZERO run.
const ZERO_MAX_RUN: usize = 64;
/// `hll-sparse-max-bytes` when not set.
const DEFAULT_SPARSE_MAX: usize = 3000;
/// 0.5 / ln 2, the estimator's constant for an infinite number of registers (the
/// double nearest 0.72134752044448170368, Redis's literal).
const ALPHA_INF: f64 = 0.721_347_520_444_481_7;

/// Reply to a value whose registers do not decode.
pub(crate) const INVALID: &str = "INVALIDOBJ Corrupted HLL object detected";
/// Reply to a string that is not a HyperLogLog.
pub(crate) const NOT_HLL: &str = "WRONGTYPE Key is not a valid HyperLogLog string value.";

/// Why a HyperLogLog operation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HllError {
    /// The key holds another type than a string.
    WrongType,
    /// A string that is not a HyperLogLog (header or length).
    NotHll,
    /// A sparse value whose runs do not cover the registers exactly.
    Corrupt,
}

impl HllError {
    /// The reply, Redis's text.
    pub fn text(self) -> &'static str {
        match self {
            HllError::WrongType => WRONGTYPE,
            HllError::NotHll => NOT_HLL,
            HllError::Corrupt => INVALID,
        }
    }
}

/// MurmurHash64A as Redis computes it (the 8-byte blocks read little-endian on every
/// machine).
pub fn murmur64a(data: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ (data.len() as u64).wrapping_mul(M);
    let mut blocks = data.chunks_exact(8);
    for b in &mut blocks {
        let mut k = b
            .iter()
            .rev()
            .fold(0u64, |acc, &byte| (acc << 8) | byte as u64);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= (b as u64) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// The register `element` falls in and the value it raises it to (1..=51).
fn pattern(element: &[u8]) -> (usize, u8) {
    let hash = murmur64a(element, SEED);
    let index = hash as usize & (REGISTERS - 1);
    // The sentinel bit bounds the count at Q + 1.
    let rest = (hash >> P) | (1u64 << Q);
    (index, rest.trailing_zeros() as u8 + 1)
}

/// Register `i` of the packed 6-bit array `regs` (a byte past the end reads as 0).
fn dense_get(regs: &[u8], i: usize) -> u8 {
    let (byte, shift) = (i * 6 / 8, (i * 6) & 7);
    let lo = regs.get(byte).copied().unwrap_or(0) as u16;
    let hi = regs.get(byte + 1).copied().unwrap_or(0) as u16;
    (((lo >> shift) | (hi << (8 - shift))) & 63) as u8
}

/// Sets register `i` of `regs` to `v` (below 64).
fn dense_put(regs: &mut [u8], i: usize, v: u8) {
    let (byte, shift) = (i * 6 / 8, (i * 6) & 7);
    let v = (v & 63) as u16;
    if let Some(b) = regs.get_mut(byte) {
        *b = (*b & !((63u16 << shift) as u8)) | (v << shift) as u8;
    }
    if let Some(b) = regs.get_mut(byte + 1) {
        *b = (*b & !((63u16 >> (8 - shift)) as u8)) | (v >> (8 - shift)) as u8;
    }
}

/// Raises register `i` to `v`; true when it was lower.
fn dense_raise(regs: &mut [u8], i: usize, v: u8) -> bool {
    if v > dense_get(regs, i) {
        dense_put(regs, i, v);
        true
    } else {
        false
    }
}

/// Calls `f(i, value)` for every register of a dense register array, 4 per 3 bytes.
fn dense_each(regs: &[u8], mut f: impl FnMut(usize, u8)) {
    for (k, b) in regs.chunks_exact(3).take(REGISTERS / 4).enumerate() {
        let w = b[0] as u32 | (b[1] as u32) << 8 | (b[2] as u32) << 16;
        for j in 0..4 {
            f(4 * k + j, ((w >> (6 * j)) & 63) as u8);
        }
    }
}

/// The sparse opcode at `s[p]` (`p` in range): registers it covers, their value (0 for
/// the zero runs) and its length in bytes. An XZERO cut by the end reads its second
/// byte as 0, as Redis does (its strings end in a NUL). Redis splitting such a cut run
/// leaves the new run's low byte past its string's end, where a later read finds it:
/// this server reads 0 again, the one way a (corrupt) value can come out different.
fn op_at(s: &[u8], p: usize) -> (usize, u8, usize) {
    let b = s[p];
    if b & 0xc0 == 0 {
        ((b & 0x3f) as usize + 1, 0, 1)
    } else if b & 0x80 == 0 {
        let lo = s.get(p + 1).copied().unwrap_or(0) as usize;
        ((((b & 0x3f) as usize) << 8 | lo) + 1, 0, 2)
    } else {
        ((b & 3) as usize + 1, ((b >> 2) & 0x1f) + 1, 1)
    }
}

/// A VAL opcode: `run` (1..=4) registers holding `v` (1..=32).
fn val_op(v: u8, run: usize) -> u8 {
    0x80 | ((v - 1) << 2) | (run as u8 - 1)
}

/// Writes a zero run of `len` (1..=16384) registers at `out`; its length in bytes.
fn zero_op(out: &mut [u8], len: usize) -> usize {
    let l = len - 1;
    if len > ZERO_MAX_RUN {
        out[0] = 0x40 | (l >> 8) as u8 & 0x3f;
        out[1] = l as u8;
        2
    } else {
        out[0] = l as u8;
        1
    }
}

/// A new, empty HyperLogLog: sparse, one run of 16384 zeros, cached cardinality 0.
pub fn empty() -> Vec<u8> {
    let mut s = Vec::with_capacity(64);
    s.extend_from_slice(b"HYLL");
    s.extend_from_slice(&[SPARSE, 0, 0, 0]);
    s.extend_from_slice(&[0; 8]);
    s.extend_from_slice(&[0x7f, 0xff]);
    s
}

/// Checks that `s` is a HyperLogLog (header, encoding, a dense value's exact length).
pub fn check(s: &[u8]) -> Result<(), HllError> {
    let ok = s.len() >= HEADER
        && &s[..4] == b"HYLL"
        && s[4] <= SPARSE
        && (s[4] != DENSE || s.len() == DENSE_SIZE);
    if ok {
        Ok(())
    } else {
        Err(HllError::NotHll)
    }
}

fn invalidate(s: &mut [u8]) {
    s[HEADER - 1] |= 0x80;
}

/// Calls `f(first, run, value)` for each run of the sparse value `s`; false when the
/// runs do not cover exactly the registers. It stops before a run that would pass the
/// last register (Redis since its fix for CVE-2025-32023 refuses such a value too), so
/// `f` only sees registers in range.
fn each_run(s: &[u8], mut f: impl FnMut(usize, usize, u8)) -> bool {
    let (mut idx, mut p) = (0usize, HEADER);
    while p < s.len() {
        let (run, v, len) = op_at(s, p);
        if idx + run > REGISTERS {
            return false;
        }
        f(idx, run, v);
        idx += run;
        p += len;
    }
    idx == REGISTERS
}

/// The dense form of the sparse value `s` (header kept, encoding changed); None when
/// its runs do not cover the registers exactly.
fn sparse_to_dense(s: &[u8]) -> Option<Vec<u8>> {
    let mut d = vec![0u8; DENSE_SIZE];
    d[..HEADER].copy_from_slice(s.get(..HEADER)?);
    d[4] = DENSE;
    let regs = &mut d[HEADER..];
    let whole = each_run(s, |first, run, v| {
        if v != 0 {
            (first..first + run).for_each(|i| dense_put(regs, i, v));
        }
    });
    whole.then_some(d)
}

/// Raises register `index` of the sparse value `s` to `count` in place, splitting the
/// run that holds it, or turns `s` dense first (see the module note). Ok(true) when the
/// register changed; Corrupt when the runs do not reach the register, or do not decode
/// when a promotion needs them to.
fn sparse_set(
    s: &mut Vec<u8>,
    index: usize,
    count: u8,
    max_bytes: usize,
) -> Result<bool, HllError> {
    if count > VAL_MAX {
        return promote(s, index, count);
    }
    // Find the opcode covering `index`.
    let end = s.len();
    let (mut p, mut first, mut prev) = (HEADER, 0usize, None);
    let (mut span, mut value, mut oplen) = (0usize, 0u8, 1usize);
    while p < end {
        (span, value, oplen) = op_at(s, p);
        if index < first + span {
            break;
        }
        prev = Some(p);
        p += oplen;
        first += span;
    }
    if span == 0 || p >= end {
        return Err(HllError::Corrupt);
    }
    let is_val = value != 0;
    if is_val && value >= count {
        return Ok(false);
    }
    if span == 1 && oplen == 1 {
        // A single register (VAL or ZERO): rewritten in place.
        s[p] = val_op(count, 1);
    } else {
        // Split the run into up to three: before, the register, after.
        let last = first + span - 1;
        let mut seq = [0u8; 5];
        let mut n = 0;
        if index != first {
            n += if is_val {
                seq[n] = val_op(value, index - first);
                1
            } else {
                zero_op(&mut seq[n..], index - first)
            };
        }
        seq[n] = val_op(count, 1);
        n += 1;
        if index != last {
            n += if is_val {
                seq[n] = val_op(value, last - index);
                1
            } else {
                zero_op(&mut seq[n..], last - index)
            };
        }
        let grow = n as isize - oplen as isize;
        if grow > 0 && end + grow as usize > max_bytes {
            return promote(s, index, count);
        }
        // An XZERO cut by the end keeps Redis's length: the string ends where the
        // longer run would have ended less its missing byte.
        s.splice(p..(p + oplen).min(end), seq[..n].iter().copied());
        s.truncate((end as isize + grow) as usize);
    }
    merge_runs(s, prev.unwrap_or(HEADER));
    invalidate(s);
    Ok(true)
}

/// Joins neighbouring VAL runs of equal value (up to 4 registers), scanning at most 5
/// opcodes from `p`.
fn merge_runs(s: &mut Vec<u8>, mut p: usize) {
    let mut budget = 5;
    while p < s.len() && budget > 0 {
        budget -= 1;
        let b = s[p];
        if b & 0xc0 == 0x40 {
            p += 2;
            continue;
        }
        if b & 0xc0 == 0 {
            p += 1;
            continue;
        }
        if let Some(&next) = s.get(p + 1) {
            let run = (b & 3) as usize + (next & 3) as usize + 2;
            if next & 0x80 != 0 && (b >> 2) & 0x1f == (next >> 2) & 0x1f && run <= VAL_MAX_RUN {
                s[p + 1] = val_op(((b >> 2) & 0x1f) + 1, run);
                s.remove(p);
                continue;
            }
        }
        p += 1;
    }
}

/// Turns the sparse `s` dense, then raises register `index` to `count`.
fn promote(s: &mut Vec<u8>, index: usize, count: u8) -> Result<bool, HllError> {
    *s = sparse_to_dense(s).ok_or(HllError::Corrupt)?;
    Ok(dense_raise(&mut s[HEADER..], index, count))
}

/// Raises register `index` of the HyperLogLog `s` (checked) to `count`.
fn set_register(
    s: &mut Vec<u8>,
    index: usize,
    count: u8,
    max_bytes: usize,
) -> Result<bool, HllError> {
    match s[4] {
        DENSE => Ok(dense_raise(&mut s[HEADER..], index, count)),
        SPARSE => sparse_set(s, index, count, max_bytes),
        _ => Err(HllError::Corrupt),
    }
}

/// Adds one element to the HyperLogLog `s` (checked); true when a register changed.
pub fn add(s: &mut Vec<u8>, element: &[u8], max_bytes: usize) -> Result<bool, HllError> {
    let (index, count) = pattern(element);
    set_register(s, index, count, max_bytes)
}

/// Adds `elements` to the string `s`: whether a register changed, and the error that
/// stopped it (the registers raised before stay raised, as in Redis). The cached
/// cardinality is marked stale when something changed.
fn add_all(s: &mut Vec<u8>, elements: &[&[u8]], max_bytes: usize) -> (bool, Option<HllError>) {
    if let Err(e) = check(s) {
        return (false, Some(e));
    }
    let mut changed = false;
    for e in elements {
        match add(s, e, max_bytes) {
            Ok(c) => changed |= c,
            Err(e) => return (changed, Some(e)),
        }
    }
    if changed {
        invalidate(s);
    }
    (changed, None)
}

/// Histogram of register values of the HyperLogLog `s` (checked).
fn histogram(s: &[u8]) -> Result<[u32; 64], HllError> {
    let mut h = [0u32; 64];
    if s[4] == DENSE {
        dense_each(&s[HEADER..], |_, v| h[v as usize] += 1);
        return Ok(h);
    }
    if each_run(s, |_, run, v| h[v as usize] += run as u32) {
        Ok(h)
    } else {
        Err(HllError::Corrupt)
    }
}

/// Ertl's sigma(x), the series for the registers at 0.
fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let (mut y, mut z) = (1.0, x);
    loop {
        x *= x;
        let before = z;
        z += x * y;
        y += y;
        if z == before {
            return z;
        }
    }
}

/// Ertl's tau(x), the series for the registers at their maximum.
fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let (mut y, mut z) = (1.0, 1.0 - x);
    loop {
        x = x.sqrt();
        let before = z;
        y *= 0.5;
        z -= (1.0 - x) * (1.0 - x) * y;
        if z == before {
            return z / 3.0;
        }
    }
}

/// The cardinality estimate from a histogram of register values. Values above Q + 1
/// (only a hand-made dense value has them) are counted by nothing, as in Redis.
pub fn estimate(h: &[u32; 64]) -> i64 {
    let m = REGISTERS as f64;
    let mut z = m * tau((m - h[Q + 1] as f64) / m);
    for j in (1..=Q).rev() {
        z += h[j] as f64;
        z *= 0.5;
    }
    z += m * sigma(h[0] as f64 / m);
    let e = (ALPHA_INF * m * m / z).round();
    // Out of range (an infinite estimate from a hand-made value): x86-64's answer.
    let i64_range = i64::MIN as f64..-(i64::MIN as f64);
    if i64_range.contains(&e) {
        e as i64
    } else {
        i64::MIN
    }
}

/// The cardinality of the HyperLogLog `s` (checked), computed afresh.
pub fn count(s: &[u8]) -> Result<i64, HllError> {
    histogram(s).map(|h| estimate(&h))
}

/// The cached cardinality of `s` (checked) when fresh, else computed and cached: the
/// count and whether the value changed.
fn cached_count(s: &mut [u8]) -> Result<(i64, bool), HllError> {
    check(s)?;
    let mut card = [0u8; 8];
    card.copy_from_slice(&s[8..HEADER]);
    if card[7] & 0x80 == 0 {
        return Ok((u64::from_le_bytes(card) as i64, false));
    }
    let n = count(s)?;
    s[8..HEADER].copy_from_slice(&(n as u64).to_le_bytes());
    Ok((n, true))
}

/// Raises `max[i]` to register `i` of the HyperLogLog `s` (checked), for each `i`.
fn merge_into(max: &mut [u8], s: &[u8]) -> Result<(), HllError> {
    if s[4] == DENSE {
        dense_each(&s[HEADER..], |i, v| max[i] = max[i].max(v));
        return Ok(());
    }
    let whole = each_run(s, |first, run, v| {
        for m in &mut max[first..first + run] {
            *m = (*m).max(v);
        }
    });
    if whole {
        Ok(())
    } else {
        Err(HllError::Corrupt)
    }
}

/// Writes the registers `max` into the HyperLogLog `s` (checked), dense first when
/// `dense`; the cache is marked stale.
fn store_merged(
    s: &mut Vec<u8>,
    max: &[u8],
    dense: bool,
    max_bytes: usize,
) -> Result<(), HllError> {
    if dense && s[4] == SPARSE {
        *s = sparse_to_dense(s).ok_or(HllError::Corrupt)?;
    }
    for (i, &v) in max.iter().enumerate() {
        if v != 0 {
            // A sparse destination decoded above (it was merged): nothing to fail.
            let _ = set_register(s, i, v, max_bytes);
        }
    }
    invalidate(s);
    Ok(())
}

/// PFDEBUG DECODE's text for the sparse value `s`.
fn decode(s: &[u8]) -> String {
    let mut out = String::new();
    let mut p = HEADER;
    while p < s.len() {
        let (run, v, len) = op_at(s, p);
        let op = match (v, len) {
            (0, 1) => format!("z:{run} "),
            (0, _) => format!("Z:{run} "),
            _ => format!("v:{v},{run} "),
        };
        out.push_str(&op);
        p += len;
    }
    out.trim_matches(' ').to_string()
}

/// `hll-sparse-max-bytes`.
fn sparse_max_bytes(ctx: &Ctx) -> usize {
    ctx.config
        .compat
        .get("hll-sparse-max-bytes")
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_SPARSE_MAX)
}

/// PFADD key [element ...]: 1 when a register changed or the key was made.
pub fn pfadd(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (key, elements, now) = (args[1], &args[2..], ctx.now);
    let max_bytes = sparse_max_bytes(ctx);
    let done = ctx.keys.update(key, now, |v| match v {
        Value::Str(s) => add_all(s, elements, max_bytes),
        _ => (false, Some(HllError::WrongType)),
    });
    let (changed, error) = done.unwrap_or_else(|| {
        let mut s = empty();
        let _ = add_all(&mut s, elements, max_bytes);
        invalidate(&mut s);
        ctx.keys.set(key, s, 0, now);
        (true, None)
    });
    if changed {
        ctx.log_key(key);
    }
    match error {
        Some(e) => w.error(e.text()),
        None => w.int(changed as i64),
    }
}

/// Runs `f` on each of `keys` that exists, as a checked HyperLogLog: the first error.
fn each_hll(
    ctx: &mut Ctx,
    keys: &[&[u8]],
    mut f: impl FnMut(&[u8]) -> Result<(), HllError>,
) -> Result<(), HllError> {
    ctx.keys.lock_keys(keys.iter().copied());
    let now = ctx.now;
    for key in keys {
        match ctx.keys.get(key, now).map(|e| &e.value) {
            None => {}
            Some(Value::Str(s)) => {
                check(s)?;
                f(s)?;
            }
            Some(_) => return Err(HllError::WrongType),
        }
    }
    Ok(())
}

/// PFCOUNT key [key ...]: one key's cached (or now cached) cardinality, or the
/// cardinality of the union of several.
pub fn pfcount(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let now = ctx.now;
    if args.len() > 2 {
        let mut max = vec![0u8; REGISTERS];
        if let Err(e) = each_hll(ctx, &args[1..], |s| merge_into(&mut max, s)) {
            return w.error(e.text());
        }
        let mut h = [0u32; 64];
        max.iter().for_each(|&v| h[v as usize & 63] += 1);
        return w.int(estimate(&h));
    }
    let key = args[1];
    let done = ctx.keys.update(key, now, |v| match v {
        Value::Str(s) => cached_count(s),
        _ => Err(HllError::WrongType),
    });
    match done {
        None => w.int(0),
        Some(Err(e)) => w.error(e.text()),
        Some(Ok((n, cached))) => {
            if cached {
                // The cache is part of the value: replicas and the log get it too.
                ctx.log_key(key);
            }
            w.int(n)
        }
    }
}

/// PFMERGE destkey [sourcekey ...]: the destination's registers raised to the maximum
/// over all the keys.
pub fn pfmerge(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (key, now) = (args[1], ctx.now);
    let mut max = vec![0u8; REGISTERS];
    let mut dense = false;
    let merged = each_hll(ctx, &args[1..], |s| {
        dense |= s[4] == DENSE;
        merge_into(&mut max, s)
    });
    if let Err(e) = merged {
        return w.error(e.text());
    }
    let max_bytes = sparse_max_bytes(ctx);
    let done = ctx.keys.update(key, now, |v| match v {
        Value::Str(s) => store_merged(s, &max, dense, max_bytes),
        _ => Err(HllError::WrongType),
    });
    let done = done.unwrap_or_else(|| {
        let mut s = empty();
        let r = store_merged(&mut s, &max, dense, max_bytes);
        ctx.keys.set(key, s, 0, now);
        r
    });
    ctx.log_key(key);
    match done {
        Ok(()) => w.simple("OK"),
        Err(e) => w.error(e.text()),
    }
}

/// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key.
pub fn pfdebug(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (sub, key, now) = (args[1], args[2], ctx.now);
    let encoding = match ctx.keys.get(key, now).map(|e| &e.value) {
        None => return w.error("ERR The specified key does not exist"),
        Some(Value::Str(s)) => match check(s) {
            Ok(()) => s[4],
            Err(e) => return w.error(e.text()),
        },
        Some(_) => return w.error(WRONGTYPE),
    };
    let (getreg, todense) = (eq(sub, "getreg"), eq(sub, "todense"));
    if getreg || todense {
        if encoding == SPARSE {
            let converted = ctx.keys.update(key, now, |v| match v {
                Value::Str(s) => sparse_to_dense(s).map(|d| *s = d).is_some(),
                _ => false,
            });
            if converted != Some(true) {
                return w.error(INVALID);
            }
            ctx.log_key(key);
        }
        if todense {
            return w.int((encoding == SPARSE) as i64);
        }
        let Some(Value::Str(s)) = ctx.keys.get(key, now).map(|e| &e.value) else {
            return w.error(INVALID);
        };
        w.array(REGISTERS);
        dense_each(&s[HEADER..], |_, v| w.int(v as i64));
    } else if eq(sub, "decode") {
        if encoding != SPARSE {
            return w.error("ERR HLL encoding is not sparse");
        }
        if let Some(Value::Str(s)) = ctx.keys.get(key, now).map(|e| &e.value) {
            w.bulk(decode(s).as_bytes());
        }
    } else if eq(sub, "encoding") {
        w.simple(if encoding == DENSE { "dense" } else { "sparse" });
    } else {
        w.error(&format!(
            "ERR Unknown PFDEBUG subcommand '{}'",
            String::from_utf8_lossy(sub)
        ));
    }
}

/// PFSELFTEST: the register packing and the estimator checked from inside.
pub fn pfselftest(ctx: &mut Ctx, _args: &[&[u8]], w: &mut Writer) {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    match selftest(sparse_max_bytes(ctx), seed) {
        Ok(()) => w.simple("OK"),
        Err(e) => w.error(&e),
    }
}

/// Redis's self test: random register values read back unchanged, then 10^7 elements
/// added to a dense and a sparse HyperLogLog, which must agree and stay within 6
/// standard errors at every power of ten.
fn selftest(max_bytes: usize, seed: u64) -> Result<(), String> {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let mut regs = vec![0u8; DENSE_SIZE - HEADER];
    let mut bytes = vec![0u8; REGISTERS];
    for _ in 0..1000 {
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (next() >> 32) as u8 & 63;
            dense_put(&mut regs, i, *b);
        }
        for (i, &b) in bytes.iter().enumerate() {
            let v = dense_get(&regs, i);
            if v != b {
                return Err(format!("TESTFAILED Register {i} should be {b} but is {v}"));
            }
        }
    }
    let mut dense = vec![0u8; DENSE_SIZE];
    dense[..4].copy_from_slice(b"HYLL");
    let mut sparse = empty();
    let relerr = 1.04 / (REGISTERS as f64).sqrt();
    let salt = next();
    let mut checkpoint: u64 = 1;
    for j in 1..=10_000_000u64 {
        let ele = (j ^ salt).to_le_bytes();
        let (i, c) = pattern(&ele);
        dense_raise(&mut dense[HEADER..], i, c);
        add(&mut sparse, &ele, max_bytes).map_err(|e| e.text().to_string())?;
        if j != checkpoint {
            continue;
        }
        if (j as usize) < max_bytes / 2 && sparse[4] != SPARSE {
            return Err("TESTFAILED sparse encoding not used".into());
        }
        let card = count(&dense).map_err(|e| e.text().to_string())?;
        if Ok(card) != count(&sparse) {
            return Err("TESTFAILED dense/sparse disagree".into());
        }
        let abserr = (checkpoint as i64).abs_diff(card);
        let maxerr = if j == 10 {
            1
        } else {
            (relerr * 6.0 * checkpoint as f64).ceil() as u64
        };
        if abserr > maxerr {
            return Err(format!(
                "TESTFAILED Too big error. card:{checkpoint} abserr:{abserr}"
            ));
        }
        checkpoint *= 10;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` elements "0", "1", ... added one by one, then counted (the cache written),
    /// as `PFADD` and `PFCOUNT` leave them.
    fn filled(n: usize, max_bytes: usize) -> Vec<u8> {
        let mut s = empty();
        for i in 0..n {
            add(&mut s, i.to_string().as_bytes(), max_bytes).unwrap();
        }
        cached_count(&mut s).unwrap();
        s
    }

    fn sha1(b: &[u8]) -> String {
        sha1_smol::Sha1::from(b).digest().to_string()
    }

    fn merged(sources: &[&[u8]]) -> Vec<u8> {
        let (mut max, mut dense) = (vec![0u8; REGISTERS], false);
        for s in sources {
            dense |= s[4] == DENSE;
            merge_into(&mut max, s).unwrap();
        }
        let mut d = empty();
        store_merged(&mut d, &max, dense, DEFAULT_SPARSE_MAX).unwrap();
        d
    }

    // The registers Redis 7 sets for single elements (PFDEBUG DECODE after one PFADD).
    #[test]
    fn hash_picks_the_registers_redis_picks() {
        let want: &[(&[u8], usize, u8)] = &[
            (b"a", 12711, 2),
            (b"b", 15780, 1),
            (b"c", 8436, 1),
            (b"hello", 9216, 1),
            (b"", 5938, 2),
            (b"foo", 7348, 5),
            (b"bar", 10007, 1),
            (b"1", 7527, 1),
            (b"2", 15371, 4),
            (b"3", 10973, 1),
        ];
        for &(e, i, v) in want {
            assert_eq!(pattern(e), (i, v), "{e:?}");
            let mut s = empty();
            assert_eq!(add(&mut s, e, 3000), Ok(true));
            assert_eq!(decode(&s), format!("Z:{i} v:{v},1 Z:{}", REGISTERS - 1 - i));
        }
    }

    // GET after `PFADD h a b c` and `PFCOUNT h` on Redis 7.
    #[test]
    fn sparse_bytes_equal_redis() {
        let mut s = empty();
        let (changed, err) = add_all(&mut s, &[b"a", b"b", b"c"], 3000);
        assert!(changed && err.is_none());
        assert_eq!(s[15], 0x80);
        assert_eq!(cached_count(&mut s), Ok((3, true)));
        assert_eq!(cached_count(&mut s), Ok((3, false)));
        let mut want = b"HYLL\x01\0\0\0\x03\0\0\0\0\0\0\0".to_vec();
        want.extend_from_slice(b"\x60\xf3\x80\x50\xb1\x84\x4b\xfb\x80\x42\x5a");
        assert_eq!(s, want);
    }

    // PFCOUNT, encoding, length and SHA1 of the value on Redis 7 after adding "0".."n-1".
    #[test]
    fn counts_and_bytes_equal_redis() {
        let want = [
            (1, 1, 21, "7f3f06b6f9e93dc7c695e22d0d28c9eb505d1d3a"),
            (10, 10, 48, "c52b437994b58f7ceafcac4e964963979aaec487"),
            (100, 100, 287, "bd7a67f7bb0d666dfbc43a5e6be0eece01238c3d"),
            (200, 201, 507, "744267d5f216b4566adc708d7d24c63cfa6e2fd3"),
            (500, 503, 1061, "8ce5bfb1fbd98ecc98476231c30a1ec9b8bfb4be"),
            (1000, 1001, 1923, "056844b23674733cdc7948ceec9b35608aef10d1"),
            (
                2000,
                2007,
                DENSE_SIZE,
                "3bed5e7faba5c63c291c36f35c4ab7526bf181a5",
            ),
            (
                5000,
                4985,
                DENSE_SIZE,
                "f9b87ee26d83c37a30be2996606b03633370805f",
            ),
            (
                10000,
                9987,
                DENSE_SIZE,
                "0100d7c90cd0c4a8d2b778575b7ee39ebc0cd7e0",
            ),
            (
                100000,
                99565,
                DENSE_SIZE,
                "34aa9fd8ef04422ffc0020bcca95202aa1f3757a",
            ),
            (
                1000000,
                1009972,
                DENSE_SIZE,
                "8aa50037e71693a4ac1f3f470d5d97e039139ee4",
            ),
        ];
        let mut kept = Vec::new();
        for (n, card, len, digest) in want {
            let s = filled(n, DEFAULT_SPARSE_MAX);
            assert_eq!(count(&s), Ok(card), "n={n}");
            assert_eq!((s.len(), sha1(&s).as_str()), (len, digest), "n={n}");
            kept.push((n, s));
        }
        let get = |n| {
            kept.iter()
                .find(|(k, _)| *k == n)
                .map(|(_, s)| s.as_slice())
                .unwrap()
        };
        // Unions: PFCOUNT of several keys, and PFMERGE into a new key.
        let union = |keys: &[usize]| {
            let mut max = vec![0u8; REGISTERS];
            keys.iter()
                .for_each(|&n| merge_into(&mut max, get(n)).unwrap());
            let mut h = [0u32; 64];
            max.iter().for_each(|&v| h[v as usize] += 1);
            estimate(&h)
        };
        assert_eq!(union(&[100, 1000]), 1001);
        assert_eq!(union(&[5000, 100000, 200]), 99565);
        let m = merged(&[get(200), get(500)]);
        assert_eq!(sha1(&m), "2fe4a760c9d79ee10ea72e5ae0dee1ab55cd4cdb");
        let m2 = merged(&[get(1000), get(10000)]);
        assert_eq!(sha1(&m2), "07b3e1fddaf19bb10a41329cd37b92e1bcf1e5ff");
        assert_eq!(count(&m2), Ok(9987));
    }

    /// Registers of any HyperLogLog, via its dense form.
    fn registers(s: &[u8]) -> Vec<u8> {
        let d = if s[4] == DENSE {
            s.to_vec()
        } else {
            sparse_to_dense(s).unwrap()
        };
        (0..REGISTERS).map(|i| dense_get(&d[HEADER..], i)).collect()
    }

    #[test]
    fn sparse_turns_dense_at_the_limit_and_keeps_the_registers() {
        for max_bytes in [0, 30, 100, 500, 3000, 9000] {
            let mut s = empty();
            let mut d = sparse_to_dense(&empty()).unwrap();
            let mut promoted_at = None;
            for i in 0..20_000u32 {
                let e = format!("x{i}");
                let before = s.len();
                let a = add(&mut s, e.as_bytes(), max_bytes).unwrap();
                let b = add(&mut d, e.as_bytes(), max_bytes).unwrap();
                assert_eq!(a, b, "max {max_bytes} element {i}");
                if s[4] == SPARSE {
                    assert!(s.len() <= max_bytes.max(before), "{max_bytes}: {}", s.len());
                } else if promoted_at.is_none() {
                    promoted_at = Some(i);
                    assert_eq!(s.len(), DENSE_SIZE);
                }
                if i % 997 == 0 || promoted_at == Some(i) {
                    assert_eq!(registers(&s), registers(&d), "max {max_bytes} element {i}");
                    assert_eq!(count(&s), count(&d));
                }
            }
            assert!(promoted_at.is_some(), "max {max_bytes} never turned dense");
        }
    }

    #[test]
    fn dense_registers_keep_their_neighbours() {
        let mut regs = vec![0u8; REGISTERS * 6 / 8];
        for i in 0..REGISTERS {
            dense_put(&mut regs, i, (i % 64) as u8);
        }
        for i in (0..REGISTERS).step_by(7) {
            dense_put(&mut regs, i, 63 - (i % 64) as u8);
        }
        for i in 0..REGISTERS {
            let want = if i % 7 == 0 { 63 - i % 64 } else { i % 64 };
            assert_eq!(dense_get(&regs, i) as usize, want, "{i}");
        }
        let mut seen = 0;
        dense_each(&regs, |i, v| {
            assert_eq!(v, dense_get(&regs, i));
            seen += 1;
        });
        assert_eq!(seen, REGISTERS);
    }

    #[test]
    fn estimator_edges_match_redis() {
        let mut h = [0u32; 64];
        h[0] = REGISTERS as u32;
        assert_eq!(estimate(&h), 0);
        // Every register at 63 or at 51: Redis answers -9223372036854775808.
        for v in [63, 51] {
            let mut h = [0u32; 64];
            h[v] = REGISTERS as u32;
            assert_eq!(estimate(&h), i64::MIN);
        }
        let mut d = sparse_to_dense(&empty()).unwrap();
        d[HEADER..].fill(0xff);
        invalidate(&mut d);
        assert_eq!(cached_count(&mut d), Ok((i64::MIN, true)));
        assert_eq!(d[15], 0x80, "an estimate with the top bit set stays stale");
    }

    #[test]
    fn headers_are_checked() {
        let s = empty();
        assert_eq!(check(&s), Ok(()));
        assert_eq!(check(&s[..15]), Err(HllError::NotHll));
        let mut bad = s.clone();
        bad[0] = b'h';
        assert_eq!(check(&bad), Err(HllError::NotHll));
        bad = s.clone();
        bad[4] = 2;
        assert_eq!(check(&bad), Err(HllError::NotHll));
        bad = s.clone();
        bad[4] = DENSE;
        assert_eq!(check(&bad), Err(HllError::NotHll));
        let mut tail = filled(3, 3000);
        tail.extend_from_slice(b"hello");
        assert_eq!(check(&tail), Ok(()));
        assert_eq!(count(&tail), Err(HllError::Corrupt));
    }

    #[test]
    fn corrupt_sparse_values_are_refused() {
        let with = |body: &[u8]| {
            let mut s = empty();
            s.truncate(HEADER);
            s.extend_from_slice(body);
            s
        };
        // Too few registers, too many, an XZERO cut by the end, no runs at all.
        for body in [&[0x7f, 0xfe][..], &[0x7f, 0xff, 0x00], &[0x7f], &[]] {
            let mut s = with(body);
            assert_eq!(count(&s), Err(HllError::Corrupt), "{body:?}");
            assert_eq!(
                merge_into(&mut [0u8; REGISTERS], &s),
                Err(HllError::Corrupt)
            );
            assert!(sparse_to_dense(&s).is_none());
            let _ = add(&mut s, b"a", 3000);
            let _ = add(&mut s, b"b", 0);
            let _ = decode(&s);
        }
        // VAL runs past the registers: refused everywhere (as the Redis 7.0.15 of
        // Debian, with the fix for CVE-2025-32023, does), though a register the runs
        // already hold high enough is left as it is.
        let mut vals = with(&[0xff; 5000]);
        assert_eq!(count(&vals), Err(HllError::Corrupt));
        assert_eq!(
            merge_into(&mut [0u8; REGISTERS], &vals),
            Err(HllError::Corrupt)
        );
        assert!(sparse_to_dense(&vals).is_none());
        assert_eq!(add(&mut vals, b"a", 3000), Ok(false));
        // Runs past the registers stop at once, however long the value.
        let mut long = with(&[0x7f, 0xff].repeat(1 << 16));
        assert_eq!(count(&long), Err(HllError::Corrupt));
        assert_eq!(add(&mut long, b"a", 3000), Err(HllError::Corrupt));
        // A register past the runs: nothing to raise.
        assert_eq!(add(&mut with(&[0x00]), b"b", 3000), Err(HllError::Corrupt));
    }

    #[test]
    fn random_damage_never_panics() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            x.wrapping_mul(0x2545_f491_4f6c_dd1d)
        };
        let seeds = [
            filled(0, 3000),
            filled(40, 3000),
            filled(1200, 3000),
            filled(3000, 3000),
        ];
        for round in 0..3000 {
            let mut s = seeds[round % seeds.len()].clone();
            for _ in 0..1 + next() % 5 {
                let at = HEADER + (next() as usize) % (s.len() - HEADER + 1);
                match next() % 4 {
                    0 if at < s.len() => s[at] = next() as u8,
                    1 => s.insert(at, next() as u8),
                    2 if at < s.len() => {
                        s.remove(at);
                    }
                    _ => s.truncate(at.max(HEADER)),
                }
            }
            if check(&s).is_err() {
                continue;
            }
            let _ = count(&s);
            let _ = merge_into(&mut [0u8; REGISTERS], &s);
            let _ = decode(&s);
            let _ = cached_count(&mut s.clone());
            let mut max = vec![0u8; REGISTERS];
            max[(next() as usize) % REGISTERS] = 40;
            let _ = store_merged(&mut s.clone(), &max, false, 3000);
            for e in 0..20u32 {
                let _ = add(&mut s, &e.to_le_bytes(), (next() % 4000) as usize);
            }
        }
    }

    #[test]
    fn self_test_passes() {
        assert_eq!(selftest(3000, 12345), Ok(()));
    }
}
