//! The set family: SADD, SREM, SCARD, SISMEMBER, SMISMEMBER, SMEMBERS, SRANDMEMBER,
//! SPOP, SMOVE, SINTER/SUNION/SDIFF and their STORE forms, SINTERCARD, SSCAN.
//!
//! Changes are logged as SADD / SREM commands (SPOP as the SREM of what it popped, a
//! STORE as the deletion of the destination and the SADD of its members), which
//! [`replay_set`] applies to a store when the log is read, through the same functions
//! ([`sadd_on`], [`super::remove_members`]).

use super::{glob, parse_i64, Ctx, NOT_INT, SYNTAX, WRONGTYPE};
use crate::resp::Writer;
use crate::store::Store;
use crate::value::{Set, Value};

/// Adds members to the set at `key` (made if absent): how many were new, or WRONGTYPE.
pub(crate) fn sadd_on(
    store: &mut Store,
    key: &[u8],
    members: &[&[u8]],
    now: u64,
) -> Result<usize, &'static str> {
    super::upsert(
        store,
        key,
        now,
        || Value::Set(Box::default()),
        |v| match v {
            Value::Set(s) => Ok(members.iter().filter(|m| s.insert(m)).count()),
            _ => Err(WRONGTYPE),
        },
    )
}

/// Applies a logged SADD or SREM.
pub(crate) fn replay_set(store: &mut Store, name: &str, args: &[&[u8]], now: u64) {
    let _ = match name {
        "sadd" if args.len() >= 2 => sadd_on(store, args[0], &args[1..], now),
        "srem" if args.len() >= 2 => super::remove_members::<Set>(store, args[0], &args[1..], now),
        _ => Ok(0),
    };
}

/// The members of the set at `key` (copies): `Ok(None)` when absent.
fn members(ctx: &mut Ctx, key: &[u8]) -> Result<Option<Vec<Vec<u8>>>, &'static str> {
    match ctx.keys.get(key, ctx.now).map(|e| &e.value) {
        None => Ok(None),
        Some(Value::Set(s)) => Ok(Some(s.iter().map(<[u8]>::to_vec).collect())),
        Some(_) => Err(WRONGTYPE),
    }
}

/// SADD key member [member ...].
pub fn sadd(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let now = ctx.now;
    match sadd_on(ctx.keys.store(args[1]), args[1], &args[2..], now) {
        Ok(n) => {
            if n > 0 {
                ctx.log_cmd(&[&[&b"SADD"[..]][..], &args[1..]].concat());
            }
            w.int(n as i64)
        }
        Err(e) => w.error(e),
    }
}

/// SREM key member [member ...].
pub fn srem(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let now = ctx.now;
    match super::remove_members::<Set>(ctx.keys.store(args[1]), args[1], &args[2..], now) {
        Ok(n) => {
            if n > 0 {
                ctx.log_cmd(&[&[&b"SREM"[..]][..], &args[1..]].concat());
            }
            w.int(n as i64)
        }
        Err(e) => w.error(e),
    }
}

/// SCARD key.
pub fn scard(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    match super::read::<Set, _>(ctx, args[1], Set::len) {
        Ok(n) => w.int(n.unwrap_or(0) as i64),
        Err(e) => w.error(e),
    }
}

/// SISMEMBER key member.
pub fn sismember(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    match super::read::<Set, _>(ctx, args[1], |s| s.contains(args[2])) {
        Ok(b) => w.int(b.unwrap_or(false) as i64),
        Err(e) => w.error(e),
    }
}

/// SMISMEMBER key member [member ...].
pub fn smismember(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let ms = &args[2..];
    match super::read::<Set, _>(ctx, args[1], |s| {
        ms.iter().map(|m| s.contains(m)).collect::<Vec<_>>()
    }) {
        Ok(v) => {
            w.array(ms.len());
            for i in 0..ms.len() {
                w.int(v.as_ref().is_some_and(|v| v[i]) as i64);
            }
        }
        Err(e) => w.error(e),
    }
}

/// SMEMBERS key.
pub fn smembers(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    match members(ctx, args[1]) {
        Ok(m) => {
            let m = m.unwrap_or_default();
            w.set(m.len());
            m.iter().for_each(|x| w.bulk(x));
        }
        Err(e) => w.error(e),
    }
}

/// Indexes of `len` items drawn as SRANDMEMBER / HRANDFIELD draw them: `None` one item
/// (none when empty); a positive count that many distinct ones (all when fewer); a
/// negative count that many draws with repetition. Seeded by the caller.
pub(crate) fn pick(len: usize, count: Option<i64>, seed: u64) -> Vec<usize> {
    // Seeds of calls close in time differ in few bits: mix them (splitmix64) so the
    // first draws of nearby seeds are unrelated.
    // The callers' seeds (time, counters) repeat within a millisecond: a per-thread
    // draw counter makes every call's seed distinct.
    thread_local!(static DRAWS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) });
    let draw = DRAWS.with(|d| {
        d.set(d.get().wrapping_add(1));
        d.get()
    });
    let mut x = (seed ^ draw.rotate_left(32)).wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x = (x ^ (x >> 31)) | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    if len == 0 {
        return Vec::new();
    }
    match count {
        None => vec![(next() % len as u64) as usize],
        Some(c) if c >= 0 => {
            let c = (c as usize).min(len);
            // A partial Fisher-Yates shuffle of the indexes.
            let mut idx: Vec<usize> = (0..len).collect();
            for i in 0..c {
                let j = i + (next() % (len - i) as u64) as usize;
                idx.swap(i, j);
            }
            idx.truncate(c);
            idx
        }
        Some(c) => (0..c.unsigned_abs().min(1 << 24))
            .map(|_| (next() % len as u64) as usize)
            .collect(),
    }
}

/// The `[count [FLAG]]` of SRANDMEMBER (no flag), HRANDFIELD (WITHVALUES) and
/// ZRANDMEMBER (WITHSCORES): the count, and whether the flag was given.
pub(crate) fn rand_args(
    args: &[&[u8]],
    flag: Option<&str>,
) -> Result<(Option<i64>, bool), &'static str> {
    let count = match args.get(2) {
        None => None,
        Some(c) => Some(parse_i64(c).ok_or(NOT_INT)?),
    };
    let with = match (args.get(3), flag) {
        (None, _) => false,
        (Some(a), Some(f)) if super::eq(a, f) && args.len() == 4 => true,
        _ => return Err(SYNTAX),
    };
    // As Redis: a count whose reply length would overflow is refused.
    if count == Some(i64::MIN) {
        return Err("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807");
    }
    if with && count.is_some_and(|c| c < -(i64::MAX / 2)) {
        return Err("ERR value is out of range");
    }
    Ok((count, with))
}

/// SRANDMEMBER key [count].
pub fn srandmember(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let count = match rand_args(args, None) {
        Ok((c, _)) => c,
        Err(e) => return w.error(e),
    };
    let m = match members(ctx, args[1]) {
        Ok(m) => m.unwrap_or_default(),
        Err(e) => return w.error(e),
    };
    let p = pick(m.len(), count, ctx.now ^ ctx.stats.commands.rotate_left(17));
    match count {
        None => match p.first() {
            Some(&i) => w.bulk(&m[i]),
            None => w.null(),
        },
        Some(_) => {
            w.array(p.len());
            p.iter().for_each(|&i| w.bulk(&m[i]));
        }
    }
}

/// SPOP key [count]: logged as the SREM of what was popped.
pub fn spop(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let count = match args.get(2) {
        None => None,
        Some(c) => match parse_i64(c) {
            Some(n) if n >= 0 => Some(n),
            _ => return w.error("ERR value is out of range, must be positive"),
        },
    };
    if args.len() > 3 {
        return w.error(SYNTAX);
    }
    let m = match members(ctx, args[1]) {
        Ok(m) => m.unwrap_or_default(),
        Err(e) => return w.error(e),
    };
    let p = pick(
        m.len(),
        count.or(None),
        ctx.now ^ ctx.stats.commands.rotate_left(29),
    );
    let popped: Vec<&[u8]> = p.iter().map(|&i| &m[i][..]).collect();
    if !popped.is_empty() {
        let now = ctx.now;
        let _ = super::remove_members::<Set>(ctx.keys.store(args[1]), args[1], &popped, now);
        ctx.log_cmd(&[&[&b"SREM"[..], args[1]][..], &popped].concat());
    }
    match count {
        None => match popped.first() {
            Some(v) => w.bulk(v),
            None => w.null(),
        },
        Some(_) => {
            w.set(popped.len());
            popped.iter().for_each(|v| w.bulk(v));
        }
    }
}

/// SMOVE source destination member.
pub fn smove(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (src, dst, m, now) = (args[1], args[2], args[3], ctx.now);
    ctx.keys.lock_keys([src, dst].into_iter());
    let has = match super::read::<Set, _>(ctx, src, |s| s.contains(m)) {
        Ok(h) => h.unwrap_or(false),
        Err(e) => return w.error(e),
    };
    if let Err(e) = super::read::<Set, _>(ctx, dst, |_| ()) {
        return w.error(e);
    }
    if !has {
        return w.int(0);
    }
    if src != dst {
        let _ = super::remove_members::<Set>(ctx.keys.store(src), src, &[m], now);
        let _ = sadd_on(ctx.keys.store(dst), dst, &[m], now);
        ctx.log_cmd(&[b"SREM", src, m]);
        ctx.log_cmd(&[b"SADD", dst, m]);
    }
    w.int(1);
}

/// The members of the sets at `keys` combined by `op` (inter, union, diff).
fn combine(ctx: &mut Ctx, op: &str, keys: &[&[u8]]) -> Result<Vec<Vec<u8>>, &'static str> {
    ctx.keys.lock_keys(keys.iter().copied());
    let mut sets = Vec::with_capacity(keys.len());
    for k in keys {
        sets.push(members(ctx, k)?);
    }
    let mut it = sets.into_iter();
    let first = it.next().flatten().unwrap_or_default();
    let mut acc: std::collections::HashSet<Vec<u8>> = first.into_iter().collect();
    for s in it {
        let s: std::collections::HashSet<Vec<u8>> = s.unwrap_or_default().into_iter().collect();
        match op {
            "inter" => acc.retain(|m| s.contains(m)),
            "union" => acc.extend(s),
            _ => acc.retain(|m| !s.contains(m)),
        }
    }
    Ok(acc.into_iter().collect())
}

fn op_of(name: &[u8]) -> &'static str {
    let n = super::lower(name);
    if n.starts_with("sinter") {
        "inter"
    } else if n.starts_with("sunion") {
        "union"
    } else {
        "diff"
    }
}

/// SINTER / SUNION / SDIFF key [key ...].
pub fn sinter(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    match combine(ctx, op_of(args[0]), &args[1..]) {
        Ok(m) => {
            w.set(m.len());
            m.iter().for_each(|x| w.bulk(x));
        }
        Err(e) => w.error(e),
    }
}

/// SINTERSTORE / SUNIONSTORE / SDIFFSTORE destination key [key ...]: the destination
/// is replaced (deleted when the result is empty); logged as DEL then SADD.
pub fn sinterstore(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (dst, now) = (args[1], ctx.now);
    let mut all: Vec<&[u8]> = args[2..].to_vec();
    all.push(dst);
    ctx.keys.lock_keys(all.iter().copied());
    let m = match combine(ctx, op_of(args[0]), &args[2..]) {
        Ok(m) => m,
        Err(e) => return w.error(e),
    };
    ctx.keys.remove(dst);
    ctx.log_del(dst);
    if !m.is_empty() {
        let refs: Vec<&[u8]> = m.iter().map(Vec::as_slice).collect();
        let _ = sadd_on(ctx.keys.store(dst), dst, &refs, now);
        ctx.log_cmd(&[&[&b"SADD"[..], dst][..], &refs].concat());
    }
    w.int(m.len() as i64);
}

/// SINTERCARD numkeys key [key ...] [LIMIT limit].
pub fn sintercard(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let n = match parse_i64(args[1]) {
        Some(n) if n > 0 => n as usize,
        _ => return w.error("ERR numkeys should be greater than 0"),
    };
    if args.len() < 2 + n {
        return w.error("ERR Number of keys can't be greater than number of args");
    }
    let mut limit = 0usize;
    let rest = &args[2 + n..];
    match rest {
        [] => {}
        [l, v] if super::eq(l, "limit") => match parse_i64(v) {
            Some(x) if x >= 0 => limit = x as usize,
            _ => return w.error("ERR LIMIT can't be negative"),
        },
        _ => return w.error(SYNTAX),
    }
    match combine(ctx, "inter", &args[2..2 + n]) {
        Ok(m) => {
            let c = if limit > 0 {
                m.len().min(limit)
            } else {
                m.len()
            };
            w.int(c as i64)
        }
        Err(e) => w.error(e),
    }
}

/// SCAN-style options of HSCAN / SSCAN: MATCH, COUNT (checked, then ignored: the whole
/// collection comes in one reply) and, for HSCAN, NOVALUES.
pub(crate) struct ScanOptions<'a> {
    pub pattern: Option<&'a [u8]>,
    pub novalues: bool,
}

pub(crate) fn scan_options<'a>(opts: &[&'a [u8]], hash: bool) -> Result<ScanOptions<'a>, String> {
    let mut o = ScanOptions {
        pattern: None,
        novalues: false,
    };
    let mut i = 0;
    while i < opts.len() {
        if hash && super::eq(opts[i], "novalues") {
            o.novalues = true;
            i += 1;
            continue;
        }
        if i + 1 >= opts.len() {
            return Err(SYNTAX.into());
        }
        if super::eq(opts[i], "match") {
            o.pattern = Some(opts[i + 1]);
        } else if super::eq(opts[i], "count") {
            match parse_i64(opts[i + 1]) {
                Some(c) if c >= 1 => {}
                Some(_) => return Err(SYNTAX.into()),
                None => return Err(NOT_INT.into()),
            }
        } else {
            return Err(SYNTAX.into());
        }
        i += 2;
    }
    Ok(o)
}

/// The cursor (`args[2]`, checked to be a number; the whole collection comes in one
/// reply, so it is not otherwise used) and the options after it of HSCAN / SSCAN /
/// ZSCAN.
pub(crate) fn scan_args<'a>(args: &[&'a [u8]], hash: bool) -> Result<ScanOptions<'a>, String> {
    if std::str::from_utf8(args[2])
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .is_none()
    {
        return Err("ERR invalid cursor".into());
    }
    scan_options(&args[3..], hash)
}

/// SSCAN key cursor [MATCH pattern] [COUNT count]: the whole set in one reply.
pub fn sscan(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let opts = match scan_args(args, false) {
        Ok(o) => o,
        Err(e) => return w.error(&e),
    };
    let m = match super::read::<Set, _>(ctx, args[1], |s| {
        s.iter()
            .filter(|m| opts.pattern.is_none_or(|p| glob(p, m)))
            .map(<[u8]>::to_vec)
            .collect::<Vec<_>>()
    }) {
        Ok(m) => m.unwrap_or_default(),
        Err(e) => return w.error(e),
    };
    w.array(2);
    w.bulk(b"0");
    w.array(m.len());
    m.iter().for_each(|x| w.bulk(x));
}
