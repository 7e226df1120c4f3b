//! The sorted-set family: ZADD (NX XX GT LT CH INCR), ZINCRBY, ZCARD, ZSCORE, ZMSCORE,
//! ZREM, ZRANK/ZREVRANK, ZRANGE (by rank, BYSCORE, BYLEX, REV, LIMIT, WITHSCORES),
//! ZRANGEBYSCORE/ZREVRANGEBYSCORE, ZRANGEBYLEX/ZREVRANGEBYLEX, ZREVRANGE, ZCOUNT,
//! ZLEXCOUNT, ZPOPMIN/ZPOPMAX, ZREMRANGEBYRANK/SCORE/LEX, ZUNION/ZINTER/ZDIFF and
//! their STORE forms (WEIGHTS, AGGREGATE), ZINTERCARD (ZRANGESTORE is in `zstore`, ZRANDMEMBER and ZSCAN in
//! `zscan`).
//!
//! Changes are logged as ZADD (scores written so they parse back to the same double)
//! and ZREM of exactly the members removed (pops and range removals included); a
//! STORE as the deletion of the destination and the ZADD of the result. Scores are
//! replied as Redis 7.0 prints them (`%.17g`; RESP3 doubles).

use super::strings::parse_float;
use super::{eq, parse_i64, Ctx, NOT_INT, SYNTAX, WRONGTYPE};
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
        match super::lower(a).as_str() {
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
    let current = match super::read::<ZSet, _>(ctx, key, |z| {
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
    match super::read::<ZSet, _>(ctx, args[1], ZSet::len) {
        Ok(n) => w.int(n.unwrap_or(0) as i64),
        Err(e) => w.error(e),
    }
}

/// ZSCORE key member.
pub fn zscore(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    match super::read::<ZSet, _>(ctx, args[1], |z| z.score(args[2])) {
        Ok(Some(Some(s))) => reply_score(w, s),
        Ok(_) => w.null(),
        Err(e) => w.error(e),
    }
}

/// ZMSCORE key member [member ...].
pub fn zmscore(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let ms = &args[2..];
    match super::read::<ZSet, _>(ctx, args[1], |z| {
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
    match super::read::<ZSet, _>(ctx, args[1], |z| {
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

/// A score bound: `(1.5` exclusive, `1.5` inclusive, `-inf`, `+inf`.
fn score_bound(a: &[u8]) -> Option<(f64, bool)> {
    let (excl, t) = match a.first() {
        Some(b'(') => (true, &a[1..]),
        _ => (false, a),
    };
    parse_float(t).map(|v| (v, excl))
}

/// A lex bound: `-`, `+`, `[x` inclusive, `(x` exclusive.
#[derive(Clone, Copy)]
enum Lex<'a> {
    Min,
    Max,
    In(&'a [u8]),
    Ex(&'a [u8]),
}

fn lex_bound(a: &[u8]) -> Option<Lex<'_>> {
    match a.first()? {
        b'-' if a.len() == 1 => Some(Lex::Min),
        b'+' if a.len() == 1 => Some(Lex::Max),
        b'[' => Some(Lex::In(&a[1..])),
        b'(' => Some(Lex::Ex(&a[1..])),
        _ => None,
    }
}

fn above(m: &[u8], b: Lex) -> bool {
    match b {
        Lex::Min => true,
        Lex::Max => false,
        Lex::In(x) => m >= x,
        Lex::Ex(x) => m > x,
    }
}

fn below(m: &[u8], b: Lex) -> bool {
    match b {
        Lex::Min => false,
        Lex::Max => true,
        Lex::In(x) => m <= x,
        Lex::Ex(x) => m < x,
    }
}

/// How a range is chosen.
enum By<'a> {
    Rank(i64, i64),
    Score((f64, bool), (f64, bool)),
    Lex(Lex<'a>, Lex<'a>),
}

/// The members (with scores) a range selects, in reply order.
fn select(z: &ZSet, by: &By, rev: bool, limit: Option<(i64, i64)>) -> Vec<(Vec<u8>, f64)> {
    let items: Box<dyn Iterator<Item = (&[u8], f64)>> = if rev {
        Box::new(z.iter().rev())
    } else {
        Box::new(z.iter())
    };
    let picked: Vec<(&[u8], f64)> = match by {
        By::Rank(s, e) => match super::strings::rank_range(*s, *e, z.len()) {
            Some((s, e)) => items.skip(s).take(e - s + 1).collect(),
            None => Vec::new(),
        },
        By::Score((lo, lo_ex), (hi, hi_ex)) => items
            .filter(|(_, s)| {
                (if *lo_ex { s > lo } else { s >= lo }) && (if *hi_ex { s < hi } else { s <= hi })
            })
            .collect(),
        By::Lex(lo, hi) => items
            .filter(|(m, _)| above(m, *lo) && below(m, *hi))
            .collect(),
    };
    let picked = match limit {
        Some((off, count)) if off >= 0 => {
            let it = picked.into_iter().skip(off as usize);
            if count < 0 {
                it.collect()
            } else {
                it.take(count as usize).collect()
            }
        }
        Some(_) => Vec::new(),
        None => picked,
    };
    picked.into_iter().map(|(m, s)| (m.to_vec(), s)).collect()
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

/// A parsed range request: how, which way, LIMIT, WITHSCORES.
pub(crate) struct Range<'a> {
    by: By<'a>,
    rev: bool,
    limit: Option<(i64, i64)>,
    pub(crate) scores: bool,
}

impl Range<'_> {
    /// The members (with scores) the range selects from `z`, in reply order.
    pub(crate) fn select(&self, z: &ZSet) -> Vec<(Vec<u8>, f64)> {
        select(z, &self.by, self.rev, self.limit)
    }
}

/// Parses `min max [options]` of ZRANGE (or one of its older forms named `name`); for
/// ZRANGESTORE, WITHSCORES is a syntax error.
pub(crate) fn parse_range<'a>(name: &str, args: &[&'a [u8]]) -> Result<Range<'a>, &'static str> {
    let full = name == "zrange" || name == "zrangestore";
    let (mut byscore, mut bylex, mut rev) = (
        name.contains("byscore"),
        name.contains("bylex"),
        name.starts_with("zrev"),
    );
    let (mut scores, mut limit) = (false, None);
    let mut i = 2;
    while i < args.len() {
        let a = args[i];
        if eq(a, "withscores") && !bylex && name != "zrangestore" {
            scores = true;
        } else if eq(a, "limit") && i + 2 < args.len() {
            match (parse_i64(args[i + 1]), parse_i64(args[i + 2])) {
                (Some(o), Some(c)) => limit = Some((o, c)),
                _ => return Err(NOT_INT),
            }
            i += 2;
        } else if full && eq(a, "byscore") {
            byscore = true;
        } else if full && eq(a, "bylex") {
            bylex = true;
        } else if full && eq(a, "rev") {
            rev = true;
        } else {
            return Err(SYNTAX);
        }
        i += 1;
    }
    if byscore && bylex {
        return Err(SYNTAX);
    }
    if limit.is_some() && !byscore && !bylex {
        return Err(
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
        );
    }
    if scores && bylex {
        return Err("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
    }
    // REV takes the bounds as max then min in the BY forms.
    let (a, b) = if rev && (byscore || bylex) {
        (args[1], args[0])
    } else {
        (args[0], args[1])
    };
    let by = if byscore {
        match (score_bound(a), score_bound(b)) {
            (Some(lo), Some(hi)) => By::Score(lo, hi),
            _ => return Err("ERR min or max is not a float"),
        }
    } else if bylex {
        match (lex_bound(a), lex_bound(b)) {
            (Some(lo), Some(hi)) => By::Lex(lo, hi),
            _ => return Err("ERR min or max not valid string range item"),
        }
    } else {
        match (parse_i64(a), parse_i64(b)) {
            (Some(s), Some(e)) => By::Rank(s, e),
            _ => return Err(NOT_INT),
        }
    };
    Ok(Range {
        by,
        rev,
        limit,
        scores,
    })
}

/// ZRANGE and its older forms (ZREVRANGE, ZRANGEBYSCORE, ZREVRANGEBYSCORE,
/// ZRANGEBYLEX, ZREVRANGEBYLEX).
pub fn zrange(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let name = super::lower(args[0]);
    let range = match parse_range(&name, &args[2..]) {
        Ok(r) => r,
        Err(e) => return w.error(e),
    };
    match super::read::<ZSet, _>(ctx, args[1], |z| range.select(z)) {
        Ok(items) => reply_members(w, &items.unwrap_or_default(), range.scores),
        Err(e) => w.error(e),
    }
}

/// ZCOUNT key min max, ZLEXCOUNT key min max.
pub fn zcount(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let by = if eq(args[0], "zlexcount") {
        match (lex_bound(args[2]), lex_bound(args[3])) {
            (Some(lo), Some(hi)) => By::Lex(lo, hi),
            _ => return w.error("ERR min or max not valid string range item"),
        }
    } else {
        match (score_bound(args[2]), score_bound(args[3])) {
            (Some(lo), Some(hi)) => By::Score(lo, hi),
            _ => return w.error("ERR min or max is not a float"),
        }
    };
    match super::read::<ZSet, _>(ctx, args[1], |z| select(z, &by, false, None).len()) {
        Ok(n) => w.int(n.unwrap_or(0) as i64),
        Err(e) => w.error(e),
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
        return match super::read::<ZSet, _>(ctx, args[1], |_| ()) {
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
    let items = super::read::<ZSet, _>(ctx, key, |z| select(z, &By::Rank(0, last), max, None))?
        .unwrap_or_default();
    let members: Vec<Vec<u8>> = items.iter().map(|(m, _)| m.clone()).collect();
    let refs: Vec<&[u8]> = members.iter().map(Vec::as_slice).collect();
    let now = ctx.now;
    let _ = super::remove_members::<ZSet>(ctx.keys.store(key), key, &refs, now);
    log_zrem(ctx, key, &members);
    Ok(items)
}

/// ZREMRANGEBYRANK / ZREMRANGEBYSCORE / ZREMRANGEBYLEX key min max.
pub fn zremrange(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let name = super::lower(args[0]);
    let by = if name.ends_with("rank") {
        match (parse_i64(args[2]), parse_i64(args[3])) {
            (Some(s), Some(e)) => By::Rank(s, e),
            _ => return w.error(NOT_INT),
        }
    } else if name.ends_with("score") {
        match (score_bound(args[2]), score_bound(args[3])) {
            (Some(lo), Some(hi)) => By::Score(lo, hi),
            _ => return w.error("ERR min or max is not a float"),
        }
    } else {
        match (lex_bound(args[2]), lex_bound(args[3])) {
            (Some(lo), Some(hi)) => By::Lex(lo, hi),
            _ => return w.error("ERR min or max not valid string range item"),
        }
    };
    let items = match super::read::<ZSet, _>(ctx, args[1], |z| select(z, &by, false, None)) {
        Ok(i) => i.unwrap_or_default(),
        Err(e) => return w.error(e),
    };
    let members: Vec<Vec<u8>> = items.into_iter().map(|(m, _)| m).collect();
    let refs: Vec<&[u8]> = members.iter().map(Vec::as_slice).collect();
    let now = ctx.now;
    let _ = super::remove_members::<ZSet>(ctx.keys.store(args[1]), args[1], &refs, now);
    log_zrem(ctx, args[1], &members);
    w.int(members.len() as i64);
}

/// ZUNION / ZINTER / ZDIFF numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM | MIN |
/// MAX] [WITHSCORES], and the STORE forms (destination first, no WITHSCORES). Plain
/// sets count as members scored 1. ZDIFF takes neither WEIGHTS nor AGGREGATE.
pub fn zcombine(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let name = super::lower(args[0]);
    let store = name.ends_with("store");
    let card = name == "zintercard";
    let op = if card {
        "inter"
    } else {
        &name[1..name.len() - if store { 5 } else { 0 }]
    };
    let (dst, first) = if store { (Some(args[1]), 2) } else { (None, 1) };
    let n = match parse_i64(args[first]) {
        Some(n) if n > 0 => n as usize,
        Some(_) => {
            return w.error(&format!(
                "ERR at least 1 input key is needed for '{name}' command"
            ))
        }
        None => return w.error(NOT_INT),
    };
    if args.len() < first + 1 + n {
        return w.error(SYNTAX);
    }
    let keys = &args[first + 1..first + 1 + n];
    let mut weights = vec![1.0; n];
    let (mut agg, mut scores) = (0u8, false); // 0 sum, 1 min, 2 max
    let mut limit = 0usize;
    let mut i = first + 1 + n;
    while i < args.len() {
        if card && eq(args[i], "limit") && i + 1 < args.len() {
            match parse_i64(args[i + 1]) {
                Some(l) if l >= 0 => limit = l as usize,
                _ => return w.error("ERR LIMIT can't be negative"),
            }
            i += 2;
        } else if card {
            return w.error(SYNTAX);
        } else if op != "diff" && eq(args[i], "weights") && i + n < args.len() {
            for (j, wt) in weights.iter_mut().enumerate() {
                match parse_float(args[i + 1 + j]) {
                    Some(v) => *wt = v,
                    None => return w.error("ERR weight value is not a float"),
                }
            }
            i += 1 + n;
        } else if op != "diff" && eq(args[i], "aggregate") && i + 1 < args.len() {
            agg = match super::lower(args[i + 1]).as_str() {
                "sum" => 0,
                "min" => 1,
                "max" => 2,
                _ => return w.error(SYNTAX),
            };
            i += 2;
        } else if !store && eq(args[i], "withscores") {
            scores = true;
            i += 1;
        } else {
            return w.error(SYNTAX);
        }
    }
    let mut all: Vec<&[u8]> = keys.to_vec();
    all.extend(dst);
    ctx.keys.lock_keys(all.iter().copied());
    let mut inputs: Vec<Vec<(Vec<u8>, f64)>> = Vec::with_capacity(n);
    for k in keys {
        let items = match ctx.keys.get(k, ctx.now).map(|e| &e.value) {
            None => Vec::new(),
            Some(Value::ZSet(z)) => z.iter().map(|(m, s)| (m.to_vec(), s)).collect(),
            Some(Value::Set(s)) => s.iter().map(|m| (m.to_vec(), 1.0)).collect(),
            Some(_) => return w.error(WRONGTYPE),
        };
        inputs.push(items);
    }
    let mut result = combine(&inputs, &weights, agg, op);
    if card {
        let n = result.len();
        return w.int(if limit > 0 { n.min(limit) } else { n } as i64);
    }
    result.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    let Some(dst) = dst else {
        return reply_members(w, &result, scores);
    };
    let now = ctx.now;
    ctx.keys.remove(dst);
    ctx.log_del(dst);
    if !result.is_empty() {
        let refs: Vec<(f64, &[u8])> = result.iter().map(|(m, s)| (*s, &m[..])).collect();
        let _ = add_on(ctx.keys.store(dst), dst, &refs, now);
        log_zadd(ctx, dst, &result);
    }
    w.int(result.len() as i64);
}

/// Union, intersection or difference of weighted inputs (a NaN from inf * 0 or
/// inf - inf counts as 0, as in Redis).
pub(crate) fn combine(
    inputs: &[Vec<(Vec<u8>, f64)>],
    weights: &[f64],
    agg: u8,
    op: &str,
) -> Vec<(Vec<u8>, f64)> {
    let fix = |v: f64| if v.is_nan() { 0.0 } else { v };
    if op == "diff" {
        let others: std::collections::HashSet<&[u8]> = inputs[1..]
            .iter()
            .flat_map(|i| i.iter().map(|(m, _)| &m[..]))
            .collect();
        return inputs[0]
            .iter()
            .filter(|(m, _)| !others.contains(&m[..]))
            .cloned()
            .collect();
    }
    let mut acc: std::collections::HashMap<&[u8], (f64, usize)> = std::collections::HashMap::new();
    for (items, wt) in inputs.iter().zip(weights) {
        for (m, s) in items {
            let v = fix(s * wt);
            acc.entry(m)
                .and_modify(|(cur, seen)| {
                    *cur = match agg {
                        0 => fix(*cur + v),
                        1 => cur.min(v),
                        _ => cur.max(v),
                    };
                    *seen += 1;
                })
                .or_insert((v, 1));
        }
    }
    acc.into_iter()
        .filter(|(_, (_, seen))| op != "inter" || *seen == inputs.len())
        .map(|(m, (s, _))| (m.to_vec(), s))
        .collect()
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
