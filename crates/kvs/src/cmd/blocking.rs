//! Pops from the first non-empty of several keys, and their blocking forms: LMPOP,
//! ZMPOP, BLPOP, BRPOP, BLMPOP, BLMOVE, BRPOPLPUSH, BZPOPMIN, BZPOPMAX, BZMPOP.
//!
//! A blocking command that finds every key empty sets [`Ctx::blocked`] (when the
//! context allows it) and writes no reply: the connection registers in the hub's
//! [`crate::hub::Waiting`] and runs nothing more until it is served, times out, or is
//! unblocked. When a write changes a key it waits on, the command is run again, whole,
//! on the writer's loop (as Redis 7.2 does: it checks the keys in order again), with
//! `can_block` false only once it found data; a command that still finds nothing waits
//! again at the head of the queue. Inside MULTI (and for a client re-run) the commands
//! answer at once with the null array, as Redis's do inside a transaction.
//!
//! Timeouts are seconds with a fraction (0: no limit); arguments are checked before
//! the keys are looked at, so a bad timeout is an error whatever the keys hold.

use super::lists;
use super::zsets::{pop_items, reply_score};
use super::{eq, parse_i64, Ctx, SYNTAX};
use crate::resp::{Proto, Writer};
use crate::value::{List, ZSet};

/// A client that waits: the keys (in the command's order) and when it gives up (ms
/// since the epoch; 0: never).
#[derive(Debug, Clone)]
pub struct Blocked {
    /// The keys it waits on.
    pub keys: Vec<Vec<u8>>,
    /// Deadline in ms since the epoch, 0 for none.
    pub deadline: u64,
    /// The command to run again when served, when not the one received (XREAD with
    /// `$` waits for entries after the ID that `$` meant when it blocked).
    pub argv: Option<Vec<Vec<u8>>>,
}

/// The deadline of a timeout argument in seconds, or Redis's error.
fn deadline(a: &[u8], now: u64) -> Result<u64, &'static str> {
    const NOT_FLOAT: &str = "ERR timeout is not a float or out of range";
    let s = std::str::from_utf8(a).map_err(|_| NOT_FLOAT)?;
    if s.is_empty() || s.starts_with(|c: char| c.is_whitespace()) {
        return Err(NOT_FLOAT);
    }
    // As C's strtold: decimal, exponent, inf, and hexadecimal integers (0x...).
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let hex = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X"));
    let t: f64 = match hex {
        Some(h) => {
            let v = u128::from_str_radix(h, 16).map_err(|_| NOT_FLOAT)? as f64;
            if neg {
                -v
            } else {
                v
            }
        }
        None => s.parse().map_err(|_| NOT_FLOAT)?,
    };
    if t.is_nan() {
        return Err(NOT_FLOAT);
    }
    if t < 0.0 {
        return Err("ERR timeout is negative");
    }
    let ms = t * 1000.0;
    if ms > i64::MAX as f64 {
        return Err("ERR timeout is out of range");
    }
    // Whole milliseconds, rounded up (0.0001 s waits 1 ms, not forever).
    let ms = ms.ceil() as u64;
    if ms == 0 {
        return Ok(0);
    }
    if ms > i64::MAX as u64 - now {
        return Err("ERR timeout is out of range");
    }
    Ok(now + ms)
}

/// `name key [key ...] timeout`: the keys and the deadline.
fn keys_then_timeout<'a>(
    args: &'a [&'a [u8]],
    now: u64,
) -> Result<(&'a [&'a [u8]], u64), &'static str> {
    let at = deadline(args[args.len() - 1], now)?;
    Ok((&args[1..args.len() - 1], at))
}

/// Waits on `keys` when the context allows it, else answers the null array.
fn wait(ctx: &mut Ctx, keys: &[&[u8]], deadline: u64, w: &mut Writer) {
    if ctx.can_block {
        ctx.blocked = Some(Blocked {
            keys: keys.iter().map(|k| k.to_vec()).collect(),
            deadline,
            argv: None,
        });
    } else {
        w.null_array();
    }
}

/// The first of `keys` holding a non-empty collection of type `K` (locked in
/// ascending shard order first); WRONGTYPE for a key of another type met before it.
fn first<'k, K: crate::value::Kind>(
    ctx: &mut Ctx,
    keys: &[&'k [u8]],
) -> Result<Option<&'k [u8]>, &'static str> {
    ctx.keys.lock_keys(keys.iter().copied());
    for k in keys {
        if super::read::<K, _>(ctx, k, |_| ())?.is_some() {
            return Ok(Some(k));
        }
    }
    Ok(None)
}

/// BLPOP / BRPOP key [key ...] timeout.
pub fn bpop(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (keys, at) = match keys_then_timeout(args, ctx.now) {
        Ok(p) => p,
        Err(e) => return w.error(e),
    };
    match first::<List>(ctx, keys) {
        Err(e) => w.error(e),
        Ok(Some(k)) => {
            let pop: &[u8] = if eq(args[0], "blpop") {
                b"lpop"
            } else {
                b"rpop"
            };
            w.array(2);
            w.bulk(k);
            lists::pop(ctx, &[pop, k], w);
        }
        Ok(None) => wait(ctx, keys, at, w),
    }
}

/// The arguments of LMPOP/ZMPOP from `numkeys` on: the keys, the side (LEFT/MIN:
/// true), the count.
fn mpop_args<'a>(
    args: &'a [&'a [u8]],
    zset: bool,
) -> Result<(&'a [&'a [u8]], bool, usize), &'static str> {
    let numkeys = match parse_i64(args[0]) {
        Some(n) if n > 0 => n as usize,
        _ => return Err("ERR numkeys should be greater than 0"),
    };
    if numkeys >= args.len() {
        return Err(SYNTAX);
    }
    let keys = &args[1..=numkeys];
    let side = args[numkeys + 1];
    let (a, b) = if zset {
        ("min", "max")
    } else {
        ("left", "right")
    };
    let first_side = if eq(side, a) {
        true
    } else if eq(side, b) {
        false
    } else {
        return Err(SYNTAX);
    };
    let mut count = None;
    let mut i = numkeys + 2;
    while i < args.len() {
        if eq(args[i], "count") && i + 1 < args.len() && count.is_none() {
            match parse_i64(args[i + 1]) {
                Some(n) if n > 0 => count = Some(n as usize),
                _ => return Err("ERR count should be greater than 0"),
            }
            i += 2;
        } else {
            return Err(SYNTAX);
        }
    }
    Ok((keys, first_side, count.unwrap_or(1)))
}

/// LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count], and BLMPOP timeout ....
pub fn lmpop(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    mpop(ctx, args, w, false)
}

/// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count], and BZMPOP timeout ....
pub fn zmpop(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    mpop(ctx, args, w, true)
}

fn mpop(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer, zset: bool) {
    let blocking = args[0]
        .first()
        .is_some_and(|c| c.eq_ignore_ascii_case(&b'b'));
    let (at, rest) = if blocking {
        match deadline(args[1], ctx.now) {
            Ok(t) => (t, &args[2..]),
            Err(e) => return w.error(e),
        }
    } else {
        (0, &args[1..])
    };
    let (keys, first_side, count) = match mpop_args(rest, zset) {
        Ok(p) => p,
        Err(e) => return w.error(e),
    };
    let found = if zset {
        first::<ZSet>(ctx, keys)
    } else {
        first::<List>(ctx, keys)
    };
    let k = match found {
        Err(e) => return w.error(e),
        Ok(Some(k)) => k,
        Ok(None) if blocking => return wait(ctx, keys, at, w),
        Ok(None) => return w.null_array(),
    };
    w.array(2);
    w.bulk(k);
    if zset {
        match pop_items(ctx, k, !first_side, count) {
            Err(e) => w.error(e),
            Ok(items) => {
                w.array(items.len());
                for (m, s) in &items {
                    w.array(2);
                    w.bulk(m);
                    reply_score(w, *s);
                }
            }
        }
    } else {
        let pop: &[u8] = if first_side { b"lpop" } else { b"rpop" };
        let n = count.to_string();
        lists::pop(ctx, &[pop, k, n.as_bytes()], w);
    }
}

/// BZPOPMIN / BZPOPMAX key [key ...] timeout.
pub fn bzpop(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (keys, at) = match keys_then_timeout(args, ctx.now) {
        Ok(p) => p,
        Err(e) => return w.error(e),
    };
    match first::<ZSet>(ctx, keys) {
        Err(e) => w.error(e),
        Ok(Some(k)) => match pop_items(ctx, k, eq(args[0], "bzpopmax"), 1) {
            Err(e) => w.error(e),
            Ok(items) => {
                let Some((m, s)) = items.first() else {
                    return w.null_array();
                };
                w.array(3);
                w.bulk(k);
                w.bulk(m);
                reply_score(w, *s);
            }
        },
        Ok(None) => wait(ctx, keys, at, w),
    }
}

/// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout, and BRPOPLPUSH source
/// destination timeout.
pub fn blmove(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let side = |a: &[u8]| eq(a, "left") || eq(a, "right");
    let rpoplpush = eq(args[0], "brpoplpush");
    if !rpoplpush && (!side(args[3]) || !side(args[4])) {
        return w.error(SYNTAX);
    }
    let at = match deadline(args[args.len() - 1], ctx.now) {
        Ok(t) => t,
        Err(e) => return w.error(e),
    };
    let src = args[1];
    // Both shards now, ascending: the move needs the destination's too.
    ctx.keys.lock_keys([src, args[2]].into_iter());
    match first::<List>(ctx, &[src]) {
        Err(e) => w.error(e),
        Ok(Some(_)) if rpoplpush => lists::lmove(ctx, &[b"rpoplpush", src, args[2]], w),
        Ok(Some(_)) => lists::lmove(ctx, &[b"lmove", src, args[2], args[3], args[4]], w),
        Ok(None) if ctx.can_block => wait(ctx, &[src], at, w),
        // Redis answers a blocking move that cannot wait with a null bulk.
        Ok(None) => w.null(),
    }
}

/// The reply of a blocked client whose time ran out (`*-1`, RESP3 `_`).
pub(crate) fn timed_out(proto: Proto) -> Vec<u8> {
    let mut out = Vec::new();
    Writer::new(&mut out, proto).null_array();
    out
}
