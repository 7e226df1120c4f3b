//! The string family: GET, SET and its options, SETNX, GETDEL, GETEX, MGET, MSET,
//! INCR/DECR[BY], APPEND, STRLEN. Arity is checked by the table before a handler runs.

use super::{eq, parse_i64, Ctx, NOT_INT, SYNTAX, WRONGTYPE};
use crate::resp::Writer;
use crate::value::Value;

/// GET key.
pub fn get(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    get_reply(ctx, args[1], w);
}

/// SETNX key value.
pub fn setnx(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let now = ctx.now;
    if ctx.keys.contains(args[1], now) {
        w.int(0);
    } else {
        ctx.keys.set(args[1], args[2].to_vec(), 0, now);
        ctx.log_key(args[1]);
        w.int(1);
    }
}

/// GETDEL key.
pub fn getdel(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    match ctx.string(args[1]) {
        Ok(Some(v)) => {
            ctx.keys.remove(args[1]);
            ctx.log_del(args[1]);
            w.bulk(&v);
        }
        Ok(None) => w.null(),
        Err(e) => w.error(e),
    }
}

/// MGET key [key ...].
pub fn mget(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    ctx.keys.lock_keys(args[1..].iter().copied());
    w.array(args.len() - 1);
    for k in &args[1..] {
        get_reply(ctx, k, w);
    }
}

/// MSET key value [key value ...].
pub fn mset(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    if args.len().is_multiple_of(2) {
        return super::arity(w, args[0]);
    }
    // Every shard the keys fall in, locked before the first write: a reader sees all of
    // the MSET or none of it.
    ctx.keys.lock_keys(args[1..].iter().step_by(2).copied());
    for kv in args[1..].chunks(2) {
        ctx.keys.set(kv[0], kv[1].to_vec(), 0, ctx.now);
        ctx.log_key(kv[0]);
    }
    w.simple("OK");
}

/// INCR key.
pub fn incr(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    incr_by(ctx, args[1], 1, w);
}

/// DECR key.
pub fn decr(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    incr_by(ctx, args[1], -1, w);
}

/// INCRBY key increment.
pub fn incrby(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    match parse_i64(args[2]) {
        Some(d) => incr_by(ctx, args[1], d, w),
        None => w.error(NOT_INT),
    }
}

/// DECRBY key decrement.
pub fn decrby(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    match parse_i64(args[2]).map(i64::checked_neg) {
        Some(Some(d)) => incr_by(ctx, args[1], d, w),
        Some(None) => w.error("ERR decrement would overflow"),
        None => w.error(NOT_INT),
    }
}

/// APPEND key value.
pub fn append(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let now = ctx.now;
    let current = match ctx.string(args[1]) {
        Ok(c) => c,
        Err(e) => return w.error(e),
    };
    let len = match current {
        Some(mut v) => {
            if v.len() + args[2].len() > ctx.config.limits.max_bulk {
                return w.error("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
            }
            v.extend_from_slice(args[2]);
            let len = v.len();
            ctx.keys.set_value(args[1], v, now);
            len
        }
        None => {
            ctx.keys.set(args[1], args[2].to_vec(), 0, now);
            args[2].len()
        }
    };
    ctx.log_key(args[1]);
    w.int(len as i64);
}

/// STRLEN key.
pub fn strlen(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    match ctx.string(args[1]) {
        Ok(v) => w.int(v.map_or(0, |v| v.len()) as i64),
        Err(e) => w.error(e),
    }
}

fn get_reply(ctx: &mut Ctx, key: &[u8], w: &mut Writer) {
    match ctx.keys.get(key, ctx.now) {
        Some(e) => {
            ctx.stats.hits += 1;
            match &e.value {
                Value::Str(v) => w.bulk(v),
                _ => w.error(WRONGTYPE),
            }
        }
        None => {
            ctx.stats.misses += 1;
            w.null();
        }
    }
}

fn incr_by(ctx: &mut Ctx, key: &[u8], d: i64, w: &mut Writer) {
    let now = ctx.now;
    let cur = match ctx.string(key) {
        Err(e) => return w.error(e),
        Ok(None) => 0,
        Ok(Some(v)) => match parse_i64(&v) {
            Some(v) => v,
            None => return w.error(NOT_INT),
        },
    };
    let Some(v) = cur.checked_add(d) else {
        return w.error("ERR increment or decrement would overflow");
    };
    let bytes = v.to_string().into_bytes();
    if !ctx.keys.set_value(key, bytes.clone(), now) {
        ctx.keys.set(key, bytes, 0, now);
    }
    ctx.log_key(key);
    w.int(v);
}

/// Parses an expiry option value (EX/PX/EXAT/PXAT) into an absolute deadline in ms.
fn deadline(opt: &[u8], v: &[u8], now: u64, cmd: &str) -> Result<u64, String> {
    let t = parse_i64(v).ok_or_else(|| NOT_INT.to_string())?;
    let invalid = || format!("ERR invalid expire time in '{cmd}' command");
    if t <= 0 {
        return Err(invalid());
    }
    let at = if eq(opt, "ex") {
        t.checked_mul(1000)
            .and_then(|ms| ms.checked_add(now as i64))
    } else if eq(opt, "px") {
        t.checked_add(now as i64)
    } else if eq(opt, "exat") {
        t.checked_mul(1000)
    } else {
        Some(t)
    };
    at.map(|a| a as u64).ok_or_else(invalid)
}

/// SET key value [NX | XX] [GET] [EX | PX | EXAT | PXAT time | KEEPTTL].
pub fn set(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let now = ctx.now;
    let (key, value) = (args[1], args[2]);
    let (mut nx, mut xx, mut get, mut keepttl) = (false, false, false, false);
    let mut expires: Option<u64> = None;
    let mut i = 3;
    while i < args.len() {
        let a = args[i];
        if eq(a, "nx") && !xx {
            nx = true;
        } else if eq(a, "xx") && !nx {
            xx = true;
        } else if eq(a, "get") {
            get = true;
        } else if eq(a, "keepttl") && expires.is_none() {
            keepttl = true;
        } else if (eq(a, "ex") || eq(a, "px") || eq(a, "exat") || eq(a, "pxat"))
            && expires.is_none()
            && !keepttl
            && i + 1 < args.len()
        {
            match deadline(a, args[i + 1], now, "set") {
                Ok(d) => expires = Some(d),
                Err(e) => return w.error(&e),
            }
            i += 1;
        } else {
            return w.error(SYNTAX);
        }
        i += 1;
    }
    // What SET needs of the old entry, without copying its value unless GET asks for it.
    let (existed, old_deadline, old_str) = match ctx.keys.get(key, now) {
        None => (false, 0, None),
        Some(e) => match &e.value {
            Value::Str(v) => (true, e.expires_at, get.then(|| v.clone())),
            // SET ... GET on a key of another type is refused before anything changes.
            _ if get => return w.error(WRONGTYPE),
            _ => (true, e.expires_at, None),
        },
    };
    if (nx && existed) || (xx && !existed) {
        return match old_str {
            Some(v) => w.bulk(&v),
            None => w.null(),
        };
    }
    let at = match (expires, keepttl) {
        (Some(d), _) => d,
        (None, true) => old_deadline,
        _ => 0,
    };
    if at != 0 && at <= now {
        // A deadline already past: the key is gone, as if set and expired at once.
        ctx.keys.remove(key);
    } else {
        ctx.keys.set(key, value.to_vec(), at, now);
    }
    ctx.log_key(key);
    if get {
        match old_str {
            Some(v) => w.bulk(&v),
            None => w.null(),
        }
    } else {
        w.simple("OK");
    }
}

/// GETEX key [EX | PX | EXAT | PXAT time | PERSIST].
pub fn getex(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let now = ctx.now;
    let mut change: Option<u64> = None;
    let rest = &args[2..];
    match rest {
        [] => {}
        [p] if eq(p, "persist") => change = Some(0),
        [o, v] if eq(o, "ex") || eq(o, "px") || eq(o, "exat") || eq(o, "pxat") => {
            match deadline(o, v, now, "getex") {
                Ok(d) => change = Some(d),
                Err(e) => return w.error(&e),
            }
        }
        _ => return w.error(SYNTAX),
    }
    let value = match ctx.string(args[1]) {
        Ok(Some(v)) => v,
        Ok(None) => return w.null(),
        Err(e) => return w.error(e),
    };
    match change {
        Some(d) if d != 0 && d <= now => {
            ctx.keys.remove(args[1]);
            ctx.log_del(args[1]);
        }
        Some(d) => {
            ctx.keys.set_deadline(args[1], d, now);
            ctx.log_deadline(args[1], d);
        }
        None => {}
    }
    w.bulk(&value);
}

/// GETSET key value: SET that replies with the old value and clears the deadline.
pub fn getset(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let old = match ctx.string(args[1]) {
        Ok(old) => old,
        Err(e) => return w.error(e),
    };
    ctx.keys.set(args[1], args[2].to_vec(), 0, ctx.now);
    ctx.log_key(args[1]);
    match old {
        Some(v) => w.bulk(&v),
        None => w.null(),
    }
}

/// MSETNX key value [key value ...]: all set, or none when any exists.
pub fn msetnx(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    if args.len().is_multiple_of(2) {
        return super::arity(w, args[0]);
    }
    let now = ctx.now;
    ctx.keys.lock_keys(args[1..].iter().step_by(2).copied());
    if args[1..]
        .iter()
        .step_by(2)
        .any(|k| ctx.keys.contains(k, now))
    {
        return w.int(0);
    }
    for kv in args[1..].chunks(2) {
        ctx.keys.set(kv[0], kv[1].to_vec(), 0, now);
        ctx.log_key(kv[0]);
    }
    w.int(1);
}

/// Resolves GETRANGE's inclusive, possibly negative range `[start, end]` over `len`
/// bytes (a negative end past the start counts as 0, as in Redis): None when empty.
pub(crate) fn range(start: i64, end: i64, len: usize) -> Option<(usize, usize)> {
    let len = len as i64;
    let fix = |i: i64| if i < 0 { (len + i).max(0) } else { i };
    let (s, e) = (fix(start), fix(end).min(len - 1));
    (len > 0 && s <= e && s < len).then_some((s as usize, e as usize))
}

/// Resolves the inclusive, possibly negative rank range `[start, end]` of LRANGE,
/// LTRIM and ZRANGE over `len` items: a start before the head counts from the head, an
/// end before the head selects nothing. None when empty.
pub(crate) fn rank_range(start: i64, end: i64, len: usize) -> Option<(usize, usize)> {
    let len = len as i64;
    let s = if start < 0 {
        (len + start).max(0)
    } else {
        start
    };
    let e = if end < 0 { len + end } else { end.min(len - 1) };
    (len > 0 && e >= 0 && s <= e && s < len).then_some((s as usize, e as usize))
}

/// GETRANGE key start end (and SUBSTR).
pub fn getrange(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (Some(start), Some(end)) = (parse_i64(args[2]), parse_i64(args[3])) else {
        return w.error(NOT_INT);
    };
    let v = match ctx.string(args[1]) {
        Ok(v) => v,
        Err(e) => return w.error(e),
    };
    match v.as_deref().and_then(|v| {
        // Both ends negative and start after end: empty, as Redis has it.
        if start < 0 && end < 0 && start > end {
            return None;
        }
        range(start, end, v.len()).map(|(s, e)| &v[s..=e])
    }) {
        Some(part) => w.bulk(part),
        None => w.bulk(b""),
    }
}

/// SETRANGE key offset value: overwrites from `offset`, zero-padding a shorter value.
pub fn setrange(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (key, value, now) = (args[1], args[3], ctx.now);
    let Some(offset) = parse_i64(args[2]) else {
        return w.error(NOT_INT);
    };
    if offset < 0 {
        return w.error("ERR offset is out of range");
    }
    let offset = offset as usize;
    let current = match ctx.string(key) {
        Ok(c) => c,
        Err(e) => return w.error(e),
    };
    if value.is_empty() {
        // Nothing to write: the length as it is; no key is made.
        return w.int(current.map_or(0, |v| v.len()) as i64);
    }
    if offset.saturating_add(value.len()) > ctx.config.limits.max_bulk {
        return w.error("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
    }
    let mut v = current.unwrap_or_default();
    if v.len() < offset + value.len() {
        v.resize(offset + value.len(), 0);
    }
    v[offset..offset + value.len()].copy_from_slice(value);
    let len = v.len();
    if !ctx.keys.set_value(key, v.clone(), now) {
        ctx.keys.set(key, v, 0, now);
    }
    ctx.log_key(key);
    w.int(len as i64);
}

/// A float as Redis prints INCRBYFLOAT results: no exponent, no trailing zeros, at most
/// 17 significant digits, and never "-0".
pub(crate) fn format_float(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    // Round to 17 significant digits, then print the shortest form of that value.
    let rounded: f64 = format!("{v:.16e}").parse().unwrap_or(v);
    let s = format!("{rounded}");
    if s.contains('e') {
        format!("{rounded:.17}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    } else {
        s
    }
}

/// A float argument as Redis reads one (no spaces, no NaN).
pub(crate) fn parse_float(a: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(a).ok()?;
    if s.is_empty() || s.trim() != s {
        return None;
    }
    let v: f64 = match s.to_ascii_lowercase().as_str() {
        "inf" | "+inf" | "infinity" | "+infinity" => f64::INFINITY,
        "-inf" | "-infinity" => f64::NEG_INFINITY,
        _ => s.parse().ok()?,
    };
    (!v.is_nan()).then_some(v)
}

/// INCRBYFLOAT key increment.
pub fn incrbyfloat(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (key, now) = (args[1], ctx.now);
    let Some(d) = parse_float(args[2]) else {
        return w.error("ERR value is not a valid float");
    };
    let cur = match ctx.string(key) {
        Err(e) => return w.error(e),
        Ok(None) => 0.0,
        Ok(Some(v)) => match parse_float(&v) {
            Some(v) => v,
            None => return w.error("ERR value is not a valid float"),
        },
    };
    let v = cur + d;
    if !v.is_finite() {
        return w.error("ERR increment would produce NaN or Infinity");
    }
    let bytes = format_float(v).into_bytes();
    if !ctx.keys.set_value(key, bytes.clone(), now) {
        ctx.keys.set(key, bytes.clone(), 0, now);
    }
    ctx.log_key(key);
    w.bulk(&bytes);
}

/// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]: the longest common
/// subsequence of two strings, its length, or the matching ranges.
pub fn lcs(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (mut len_only, mut idx, mut min_len, mut with_len) = (false, false, 0usize, false);
    let mut i = 3;
    while i < args.len() {
        let a = args[i];
        if eq(a, "len") {
            len_only = true;
        } else if eq(a, "idx") {
            idx = true;
        } else if eq(a, "withmatchlen") {
            with_len = true;
        } else if eq(a, "minmatchlen") && i + 1 < args.len() {
            match parse_i64(args[i + 1]) {
                Some(n) => min_len = n.max(0) as usize,
                None => return w.error(NOT_INT),
            }
            i += 1;
        } else {
            return w.error(SYNTAX);
        }
        i += 1;
    }
    if len_only && idx {
        return w.error("ERR If you want both the length and indexes, please just use IDX.");
    }
    ctx.keys.lock_keys([args[1], args[2]].into_iter());
    let (a, b) = match (ctx.string(args[1]), ctx.string(args[2])) {
        (Ok(a), Ok(b)) => (a.unwrap_or_default(), b.unwrap_or_default()),
        (Err(e), _) | (_, Err(e)) => return w.error(e),
    };
    // The table is (|a|+1) x (|b|+1) u32s: bounded as one string is.
    let cells = (a.len() + 1).saturating_mul(b.len() + 1);
    if cells.saturating_mul(4) > ctx.config.limits.max_bulk {
        return w
            .error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
    }
    let cols = b.len() + 1;
    let mut t = vec![0u32; cells];
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            t[i * cols + j] = if a[i - 1] == b[j - 1] {
                t[(i - 1) * cols + j - 1] + 1
            } else {
                t[(i - 1) * cols + j].max(t[i * cols + j - 1])
            };
        }
    }
    let total = t[a.len() * cols + b.len()] as usize;
    if len_only {
        return w.int(total as i64);
    }
    // Walk back from the end, collecting the string and the matching ranges.
    let mut out = vec![0u8; total];
    let mut k = total;
    let mut ranges: Vec<((usize, usize), (usize, usize))> = Vec::new();
    let mut cur: Option<((usize, usize), (usize, usize))> = None;
    let (mut i, mut j) = (a.len(), b.len());
    while i > 0 && j > 0 {
        if a[i - 1] == b[j - 1] {
            k -= 1;
            out[k] = a[i - 1];
            let (ai, bj) = (i - 1, j - 1);
            cur = match cur {
                Some(((a0, a1), (b0, b1))) if a0 == ai + 1 && b0 == bj + 1 => {
                    Some(((ai, a1), (bj, b1)))
                }
                other => {
                    if let Some(r) = other {
                        ranges.push(r);
                    }
                    Some(((ai, ai), (bj, bj)))
                }
            };
            i -= 1;
            j -= 1;
        } else if t[(i - 1) * cols + j] > t[i * cols + j - 1] {
            i -= 1;
        } else {
            j -= 1;
        }
    }
    if let Some(r) = cur {
        ranges.push(r);
    }
    if !idx {
        return w.bulk(&out);
    }
    let ranges: Vec<_> = ranges
        .into_iter()
        .filter(|((a0, a1), _)| a1 - a0 + 1 >= min_len)
        .collect();
    w.map(2);
    w.bulk(b"matches");
    w.array(ranges.len());
    for ((a0, a1), (b0, b1)) in ranges {
        w.array(if with_len { 3 } else { 2 });
        w.array(2);
        w.int(a0 as i64);
        w.int(a1 as i64);
        w.array(2);
        w.int(b0 as i64);
        w.int(b1 as i64);
        if with_len {
            w.int((a1 - a0 + 1) as i64);
        }
    }
    w.bulk(b"len");
    w.int(total as i64);
}

/// TIME: seconds and microseconds.
pub fn time(_ctx: &mut Ctx, _args: &[&[u8]], w: &mut Writer) {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    w.array(2);
    w.bulk(d.as_secs().to_string().as_bytes());
    w.bulk(d.subsec_micros().to_string().as_bytes());
}

/// SETEX key seconds value / PSETEX key milliseconds value.
pub fn setex(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let name = String::from_utf8_lossy(args[0]).to_ascii_lowercase();
    let unit: &[u8] = if name == "setex" { b"ex" } else { b"px" };
    match deadline(unit, args[2], ctx.now, &name) {
        Ok(at) => {
            ctx.keys.set(args[1], args[3].to_vec(), at, ctx.now);
            ctx.log_key(args[1]);
            w.simple("OK");
        }
        Err(e) => w.error(&e),
    }
}

/// Most bits SETBIT/GETBIT address (a 512 MiB string, as Redis).
const MAX_BIT: u64 = (512 << 20) * 8 - 1;

fn bit_offset(a: &[u8]) -> Option<u64> {
    parse_i64(a)
        .filter(|&v| v >= 0 && v as u64 <= MAX_BIT)
        .map(|v| v as u64)
}

/// SETBIT key offset 0|1: the old bit.
pub fn setbit(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let Some(off) = bit_offset(args[2]) else {
        return w.error("ERR bit offset is not an integer or out of range");
    };
    let on = match args[3] {
        b"0" => false,
        b"1" => true,
        _ => return w.error("ERR bit is not an integer or out of range"),
    };
    let key = args[1];
    let byte = (off / 8) as usize;
    if byte + 1 > ctx.config.limits.max_bulk {
        return w.error("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
    }
    let mask = 0x80u8 >> (off % 8);
    let r = super::bits::with_grown_string(ctx, key, byte + 1, |v| {
        let old = v[byte] & mask != 0;
        if on {
            v[byte] |= mask;
        } else {
            v[byte] &= !mask;
        }
        old
    });
    match r {
        Ok((old, grown)) => {
            // Logged (and counted) only when the string changed, as Redis does.
            if grown || old != on {
                ctx.log_key(key);
            }
            w.int(old as i64);
        }
        Err(e) => w.error(e),
    }
}

/// GETBIT key offset.
pub fn getbit(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let Some(off) = bit_offset(args[2]) else {
        return w.error("ERR bit offset is not an integer or out of range");
    };
    let v = match ctx.string(args[1]) {
        Ok(v) => v.unwrap_or_default(),
        Err(e) => return w.error(e),
    };
    let bit = v
        .get((off / 8) as usize)
        .is_some_and(|b| b & (0x80 >> (off % 8)) != 0);
    w.int(bit as i64);
}
