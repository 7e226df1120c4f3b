//! The string family: GET, SET and its options, SETNX, GETDEL, GETEX, MGET, MSET,
//! INCR/DECR[BY], APPEND, STRLEN. Arity is checked by the table before a handler runs.

use super::{eq, parse_i64, Ctx, NOT_INT, SYNTAX};
use crate::resp::Writer;

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
    if ctx.keys.get(args[1], ctx.now).is_some() {
        let e = ctx.keys.remove(args[1]);
        ctx.log_del(args[1]);
        w.bulk(&e.map(|e| e.value).unwrap_or_default());
    } else {
        w.null();
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
    let len = match ctx.keys.get(args[1], now) {
        Some(e) => {
            if e.value.len() + args[2].len() > ctx.config.limits.max_bulk {
                return w.error("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
            }
            let mut v = e.value.clone();
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
    let l = ctx.keys.get(args[1], ctx.now).map_or(0, |e| e.value.len());
    w.int(l as i64);
}

fn get_reply(ctx: &mut Ctx, key: &[u8], w: &mut Writer) {
    match ctx.keys.get(key, ctx.now) {
        Some(e) => {
            ctx.stats.hits += 1;
            w.bulk(&e.value);
        }
        None => {
            ctx.stats.misses += 1;
            w.null();
        }
    }
}

fn incr_by(ctx: &mut Ctx, key: &[u8], d: i64, w: &mut Writer) {
    let now = ctx.now;
    let cur = match ctx.keys.get(key, now) {
        None => 0,
        Some(e) => match parse_i64(&e.value) {
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
    let old = ctx.keys.get(key, now).cloned();
    if (nx && old.is_some()) || (xx && old.is_none()) {
        return if get {
            match old {
                Some(e) => w.bulk(&e.value),
                None => w.null(),
            }
        } else {
            w.null()
        };
    }
    let at = match (expires, keepttl, &old) {
        (Some(d), _, _) => d,
        (None, true, Some(e)) => e.expires_at,
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
        match old {
            Some(e) => w.bulk(&e.value),
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
    let Some(value) = ctx.keys.get(args[1], now).map(|e| e.value.clone()) else {
        return w.null();
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
