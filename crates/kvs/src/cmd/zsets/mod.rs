//! The sorted-set family: ZADD (NX XX GT LT CH INCR), ZINCRBY, ZCARD, ZSCORE, ZMSCORE,
//! ZREM, ZRANK/ZREVRANK, ZRANGE (by rank, BYSCORE, BYLEX, REV, LIMIT, WITHSCORES),
//! ZRANGEBYSCORE/ZREVRANGEBYSCORE, ZRANGEBYLEX/ZREVRANGEBYLEX, ZREVRANGE, ZCOUNT,
//! ZLEXCOUNT, ZPOPMIN/ZPOPMAX, ZREMRANGEBYRANK/SCORE/LEX, ZUNION/ZINTER/ZDIFF and
//! their STORE forms (WEIGHTS, AGGREGATE), ZINTERCARD, ZRANGESTORE, ZRANDMEMBER and ZSCAN
//! (the whole set in one reply, cursor 0). Ranges (ZRANGE and its forms, ZCOUNT,
//! ZREMRANGE*, ZRANGESTORE) are in `range`; ZUNION/ZINTER/ZDIFF in `combine`.
//!
//! Changes are logged as ZADD (scores written so they parse back to the same double)
//! and ZREM of exactly the members removed (pops and range removals included); a
//! STORE as the deletion of the destination and the ZADD of the result. Scores are
//! replied as Redis 7.0 prints them (`%.17g`; RESP3 doubles).

mod combine;
mod range;

pub use combine::zcombine;
use range::{select, By};
pub use range::{zcount, zrange, zrangestore, zremrange};

use super::{eq, glob, parse_i64, Ctx, NOT_INT, SYNTAX, WRONGTYPE};
use crate::cmd::strings::parse_float;
use crate::resp::{Proto, Writer};
use crate::store::Store;
use crate::value::{Value, ZSet};

const NOT_FLOAT: &str = "ERR value is not a valid float";

/// A score as the log writes it: the shortest text that parses back to the same value.
pub fn score_text(v: f64) -> String {
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    format!("{v}")
}

/// A score as Redis 7.0 replies it (C's `%.17g`).
pub(crate) fn g17(v: f64) -> String {
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let e = format!("{v:.16e}");
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let x: i32 = exp.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if !(-4..17).contains(&x) {
        let sign = if x < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mant), x.abs())
    } else {
        trim(&format!("{v:.*}", (16 - x) as usize))
    }
}

pub(crate) fn reply_score(w: &mut Writer, v: f64) {
    if w.proto() == Proto::Resp3 {
        w.raw(format!(",{}\r\n", g17(v)).as_bytes());
    } else {
        w.bulk(g17(v).as_bytes());
    }
}

/// Applies logged ZADD (score member pairs) or ZREM to a store.
pub(crate) fn replay_zset(store: &mut Store, name: &str, args: &[&[u8]], now: u64) {
    match name {
        "zadd" if args.len() >= 3 && args.len() % 2 == 1 => {
            let pairs: Option<Vec<(f64, &[u8])>> = args[1..]
                .chunks(2)
                .map(|p| parse_float(p[0]).map(|s| (s, p[1])))
                .collect();
            if let Some(pairs) = pairs {
                let _ = add_on(store, args[0], &pairs, now);
            }
        }
        "zrem" => {
            let _ = super::remove_members::<ZSet>(store, args[0], &args[1..], now);
        }
        _ => {}
    }
}

/// Sets scores (made if absent); the number of new members.
pub(crate) fn add_on(
    store: &mut Store,
    key: &[u8],
    pairs: &[(f64, &[u8])],
    now: u64,
) -> Result<usize, &'static str> {
    super::upsert(
        store,
        key,
        now,
        || Value::ZSet(Box::default()),
        |v| match v {
            Value::ZSet(z) => Ok(pairs
                .iter()
                .filter(|(s, m)| z.insert(m, *s).is_none())
                .count()),
            _ => Err(WRONGTYPE),
        },
    )
}

pub(crate) fn log_zadd(ctx: &mut Ctx, key: &[u8], items: &[(Vec<u8>, f64)]) {
    if items.is_empty() || !ctx.logging {
        return;
    }
    let texts: Vec<String> = items.iter().map(|(_, s)| score_text(*s)).collect();
    let mut argv: Vec<&[u8]> = vec![b"ZADD", key];
    for ((m, _), t) in items.iter().zip(&texts) {
        argv.push(t.as_bytes());
        argv.push(m);
    }
    ctx.log_cmd(&argv);
}

fn log_zrem(ctx: &mut Ctx, key: &[u8], members: &[Vec<u8>]) {
    if members.is_empty() {
        return;
    }
    let mut argv: Vec<&[u8]> = vec![b"ZREM", key];
    argv.extend(members.iter().map(Vec::as_slice));
    ctx.log_cmd(&argv);
}

/// ZADD key [NX | XX] [GT | LT] [CH] [INCR] score member [score member ...], and
/// ZINCRBY key increment member.
pub fn zadd(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let incrby = eq(args[0], "zincrby");
    let (mut nx, mut xx, mut gt, mut lt, mut ch, mut incr) =
        (false, false, false, false, false, incrby);
    let mut i = 2;
    while !incrby && i < args.len() {
        let a = args[i];
        match crate::cmd::lower(a).as_str() {
            "nx" => nx = true,
            "xx" => xx = true,
            "gt" => gt = true,
            "lt" => lt = true,
            "ch" => ch = true,
            "incr" => incr = true,
            _ => break,
        }
        i += 1;
    }
    let rest = &args[i..];
    if rest.is_empty() || rest.len() % 2 == 1 {
        return w.error(SYNTAX);
    }
    if nx && xx {
        return w.error("ERR XX and NX options at the same time are not compatible");
    }
    if (gt && lt) || (nx && (gt || lt)) {
        return w.error("ERR GT, LT, and/or NX options at the same time are not compatible");
    }
    if incr && rest.len() != 2 {
        return w.error("ERR INCR option supports a single increment-element pair");
    }
    let mut pairs = Vec::with_capacity(rest.len() / 2);
    for p in rest.chunks(2) {
        match parse_float(p[0]) {
            Some(s) => pairs.push((s, p[1])),
            None => return w.error(NOT_FLOAT),
        }
    }
    let key = args[1];
    let current = match crate::cmd::read::<ZSet, _>(ctx, key, |z| {
        pairs.iter().map(|(_, m)| z.score(m)).collect::<Vec<_>>()
    }) {
        Ok(c) => c.unwrap_or_else(|| vec![None; pairs.len()]),
        Err(e) => return w.error(e),
    };
    let (mut added, mut changed) = (0, 0);
    let mut writes: Vec<(Vec<u8>, f64)> = Vec::new();
    let mut incr_result = None;
    for ((score, m), old) in pairs.iter().zip(current) {
        if (nx && old.is_some()) || (xx && old.is_none()) {
            continue;
        }
        let new = if incr {
            old.unwrap_or(0.0) + score
        } else {
            *score
        };
        if new.is_nan() {
            return w.error("ERR resulting score is not a number (NaN)");
        }
        if let Some(o) = old {
            if (gt && new <= o) || (lt && new >= o) {
                continue;
            }
            if new != o {
                changed += 1;
                writes.push((m.to_vec(), new));
            }
        } else {
            added += 1;
            writes.push((m.to_vec(), new));
        }
        incr_result = Some(new);
    }
    if !writes.is_empty() {
        let now = ctx.now;
        let refs: Vec<(f64, &[u8])> = writes.iter().map(|(m, s)| (*s, &m[..])).collect();
        let _ = add_on(ctx.keys.store(key), key, &refs, now);
        log_zadd(ctx, key, &writes);
    }
    if incr {
        match incr_result {
            Some(v) => reply_score(w, v),
            None => w.null(),
        }
    } else {
        w.int(if ch { added + changed } else { added });
    }
}

/// ZCARD key.
pub fn zcard(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    match crate::cmd::read::<ZSet, _>(ctx, args[1], ZSet::len) {
        Ok(n) => w.int(n.unwrap_or(0) as i64),
        Err(e) => w.error(e),
    }
}

/// ZSCORE key member.
pub fn zscore(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    match crate::cmd::read::<ZSet, _>(ctx, args[1], |z| z.score(args[2])) {
        Ok(Some(Some(s))) => reply_score(w, s),
        Ok(_) => w.null(),
        Err(e) => w.error(e),
    }
}

/// ZMSCORE key member [member ...].
pub fn zmscore(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let ms = &args[2..];
    match crate::cmd::read::<ZSet, _>(ctx, args[1], |z| {
        ms.iter().map(|m| z.score(m)).collect::<Vec<_>>()
    }) {
        Ok(v) => {
            w.array(ms.len());
            for i in 0..ms.len() {
                match v.as_ref().and_then(|v| v[i]) {
                    Some(s) => reply_score(w, s),
                    None => w.null(),
                }
            }
        }
        Err(e) => w.error(e),
    }
}

/// ZREM key member [member ...].
pub fn zrem(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let now = ctx.now;
    match super::remove_members::<ZSet>(ctx.keys.store(args[1]), args[1], &args[2..], now) {
        Ok(n) => {
            if n > 0 {
                ctx.log_cmd(args);
            }
            w.int(n as i64)
        }
        Err(e) => w.error(e),
    }
}

/// ZRANK / ZREVRANK key member [WITHSCORE] (WITHSCORE as Redis 7.2: the rank and the
/// score, or a null array when the member is absent).
pub fn zrank(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let rev = eq(args[0], "zrevrank");
    if args.len() > 4 {
        return super::arity(w, args[0]);
    }
    let withscore = match args.get(3) {
        None => false,
        Some(a) if eq(a, "withscore") => true,
        Some(_) => return w.error(SYNTAX),
    };
    match crate::cmd::read::<ZSet, _>(ctx, args[1], |z| {
        z.rank(args[2]).map(|r| {
            let s = z.score(args[2]).unwrap_or(0.0);
            (if rev { z.len() - 1 - r } else { r }, s)
        })
    }) {
        Ok(Some(Some((r, s)))) if withscore => {
            w.array(2);
            w.int(r as i64);
            reply_score(w, s)
        }
        Ok(Some(Some((r, _)))) => w.int(r as i64),
        Ok(_) if withscore => w.null_array(),
        Ok(_) => w.null(),
        Err(e) => w.error(e),
    }
}

pub(crate) fn reply_members(w: &mut Writer, items: &[(Vec<u8>, f64)], scores: bool) {
    if scores && w.proto() == Proto::Resp3 {
        w.array(items.len());
        for (m, s) in items {
            w.array(2);
            w.bulk(m);
            reply_score(w, *s);
        }
    } else {
        w.array(if scores { 2 * items.len() } else { items.len() });
        for (m, s) in items {
            w.bulk(m);
            if scores {
                reply_score(w, *s);
            }
        }
    }
}

/// ZPOPMIN / ZPOPMAX key [count]: logged as the ZREM of what was popped.
pub fn zpop(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let max = eq(args[0], "zpopmax");
    let count = match args.get(2) {
        None => None,
        Some(c) => match parse_i64(c) {
            Some(n) if n >= 0 => Some(n as usize),
            _ => return w.error("ERR value is out of range, must be positive"),
        },
    };
    if args.len() > 3 {
        return w.error(SYNTAX);
    }
    let n = count.unwrap_or(1) as i64;
    if n == 0 {
        // A count of 0 takes nothing (By::Rank(0, -1) would be everything), but a key
        // of another type is still an error.
        return match crate::cmd::read::<ZSet, _>(ctx, args[1], |_| ()) {
            Ok(_) => w.array(0),
            Err(e) => w.error(e),
        };
    }
    let items = match pop_items(ctx, args[1], max, n as usize) {
        Ok(i) => i,
        Err(e) => return w.error(e),
    };
    if count.is_none() && w.proto() == Proto::Resp3 {
        // Without a count RESP3 gets one flat [member, score] pair, as RESP2 does.
        w.array(2 * items.len());
        for (m, s) in &items {
            w.bulk(m);
            reply_score(w, *s);
        }
    } else {
        reply_members(w, &items, true);
    }
}

/// Removes and returns up to `n` (at least 1) members of the sorted set at `key` with
/// the lowest scores (highest: `max`), logged; empty when the key is absent.
pub(crate) fn pop_items(
    ctx: &mut Ctx,
    key: &[u8],
    max: bool,
    n: usize,
) -> Result<Vec<(Vec<u8>, f64)>, &'static str> {
    let last = (n as i64).saturating_sub(1);
    let items =
        crate::cmd::read::<ZSet, _>(ctx, key, |z| select(z, &By::Rank(0, last), max, None))?
            .unwrap_or_default();
    let members: Vec<Vec<u8>> = items.iter().map(|(m, _)| m.clone()).collect();
    let refs: Vec<&[u8]> = members.iter().map(Vec::as_slice).collect();
    let now = ctx.now;
    let _ = super::remove_members::<ZSet>(ctx.keys.store(key), key, &refs, now);
    log_zrem(ctx, key, &members);
    Ok(items)
}

/// ZRANDMEMBER key [count [WITHSCORES]].
pub fn zrandmember(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (count, scores) = match crate::cmd::sets::rand_args(args, Some("withscores")) {
        Ok(r) => r,
        Err(e) => return w.error(e),
    };
    let seed = ctx.now ^ ctx.stats.commands.rotate_left(7);
    let items = match crate::cmd::read::<ZSet, _>(ctx, args[1], |z| {
        let p = crate::cmd::sets::pick(z.len(), count, seed);
        if p.len() >= z.len() / 8 {
            // Many draws: one walk of the set is cheaper than a descent per draw.
            let all: Vec<(&[u8], f64)> = z.iter().collect();
            p.iter().map(|&i| (all[i].0.to_vec(), all[i].1)).collect()
        } else {
            p.iter()
                .filter_map(|&i| z.by_rank(i))
                .map(|(m, s)| (m.to_vec(), s))
                .collect::<Vec<_>>()
        }
    }) {
        Ok(i) => i.unwrap_or_default(),
        Err(e) => return w.error(e),
    };
    match count {
        None => match items.first() {
            Some((m, _)) => w.bulk(m),
            None => w.null(),
        },
        Some(_) => reply_members(w, &items, scores),
    }
}

/// ZSCAN key cursor [MATCH pattern] [COUNT count]: the whole set in one reply.
pub fn zscan(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let opts = match crate::cmd::sets::scan_args(args, false) {
        Ok(o) => o,
        Err(e) => return w.error(&e),
    };
    let items = match crate::cmd::read::<ZSet, _>(ctx, args[1], |z| {
        z.iter()
            .filter(|(m, _)| opts.pattern.is_none_or(|p| glob(p, m)))
            .map(|(m, s)| (m.to_vec(), s))
            .collect::<Vec<_>>()
    }) {
        Ok(i) => i.unwrap_or_default(),
        Err(e) => return w.error(e),
    };
    w.array(2);
    w.bulk(b"0");
    w.array(2 * items.len());
    for (m, s) in &items {
        w.bulk(m);
        w.bulk(g17(*s).as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_print_as_redis_does() {
        for (v, s) in [
            (0.1, "0.10000000000000001"),
            (1.5, "1.5"),
            (3.0, "3"),
            (1e20, "1e+20"),
            (1e-5, "1.0000000000000001e-05"),
            (123456789012345678.0, "1.2345678901234568e+17"),
            (0.30000000000000004, "0.30000000000000004"),
            (f64::INFINITY, "inf"),
            (-2.5, "-2.5"),
            (0.0, "0"),
        ] {
            assert_eq!(g17(v), s);
        }
        for v in [0.1, 1e300, -7.25, 1.0 / 3.0] {
            assert_eq!(parse_float(score_text(v).as_bytes()), Some(v));
        }
    }
}
