//! Ranges of a sorted set: by rank, score (`(1.5`, `-inf`) or lex (`[a`, `-`), either
//! way, with LIMIT: ZRANGE and its older forms, ZCOUNT/ZLEXCOUNT, ZREMRANGEBY*, and
//! ZRANGESTORE (the range ZRANGE would reply, WITHSCORES refused, stored as a new sorted
//! set at `dst`; logged as the deletion of `dst` and the ZADD of the stored members, like
//! the STORE forms of ZUNION/ZINTER/ZDIFF, so a restart from the log rebuilds the same
//! set; an empty range deletes `dst`).

use super::*;

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
pub(super) enum Lex<'a> {
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
pub(super) enum By<'a> {
    Rank(i64, i64),
    Score((f64, bool), (f64, bool)),
    Lex(Lex<'a>, Lex<'a>),
}

/// The ranks `lo..hi` (lowest score first) a range covers, found in O(log n); `None`
/// for a lex range of a set whose scores differ, where the members in the range need
/// not be adjacent (Redis's answer is unspecified there; ours is every member between
/// the bounds).
fn ranks(z: &ZSet, by: &By, rev: bool) -> Option<(usize, usize)> {
    let (lo, hi) = match by {
        By::Rank(s, e) => match crate::cmd::strings::rank_range(*s, *e, z.len()) {
            // Ranks of the reversed order count from the highest score.
            Some((s, e)) if rev => (z.len() - 1 - e, z.len() - s),
            Some((s, e)) => (s, e + 1),
            None => (0, 0),
        },
        // Scores are never NaN and the bounds are not NaN: each test holds for a
        // prefix of the order.
        By::Score((lo, lo_ex), (hi, hi_ex)) => (
            z.rank_where(|_, s| if *lo_ex { s <= *lo } else { s < *lo }),
            z.rank_where(|_, s| if *hi_ex { s < *hi } else { s <= *hi }),
        ),
        // With one score the order is the members' order.
        By::Lex(lo, hi) if one_score(z) => (
            z.rank_where(|m, _| !above(m, *lo)),
            z.rank_where(|m, _| below(m, *hi)),
        ),
        By::Lex(..) => return None,
    };
    Some((lo, hi.max(lo)))
}

/// How many members a range by score or lex holds: O(log n).
fn count(z: &ZSet, by: &By) -> usize {
    match ranks(z, by, false) {
        Some((lo, hi)) => hi - lo,
        None => select(z, by, false, None).len(),
    }
}

/// The members (with scores) a range selects, in reply order: the range is found in
/// O(log n) and read in O(its length).
pub(super) fn select(
    z: &ZSet,
    by: &By,
    rev: bool,
    limit: Option<(i64, i64)>,
) -> Vec<(Vec<u8>, f64)> {
    let (lo, hi) = match (ranks(z, by, rev), by) {
        (Some(r), _) => r,
        (None, By::Lex(lo, hi)) => return lex_filtered(z, *lo, *hi, rev, limit),
        (None, _) => (0, 0),
    };
    let (skip, take) = window(hi - lo, limit);
    if rev {
        z.by_ranks(hi - skip - take, hi - skip)
            .rev()
            .map(|(m, s)| (m.to_vec(), s))
            .collect()
    } else {
        z.by_ranks(lo + skip, lo + skip + take)
            .map(|(m, s)| (m.to_vec(), s))
            .collect()
    }
}

/// A lex range of a set whose scores differ: every member between the bounds, in
/// reply order (O(n)).
fn lex_filtered(
    z: &ZSet,
    lo: Lex,
    hi: Lex,
    rev: bool,
    limit: Option<(i64, i64)>,
) -> Vec<(Vec<u8>, f64)> {
    let items: Box<dyn Iterator<Item = (&[u8], f64)>> = if rev {
        Box::new(z.iter().rev())
    } else {
        Box::new(z.iter())
    };
    let picked: Vec<(&[u8], f64)> = items
        .filter(|(m, _)| above(m, lo) && below(m, hi))
        .collect();
    let (skip, take) = window(picked.len(), limit);
    picked[skip..skip + take]
        .iter()
        .map(|(m, s)| (m.to_vec(), *s))
        .collect()
}

/// Of `n` members in reply order, how many LIMIT skips and how many it takes.
fn window(n: usize, limit: Option<(i64, i64)>) -> (usize, usize) {
    match limit {
        None => (0, n),
        Some((off, count)) if off >= 0 => {
            let skip = usize::try_from(off).unwrap_or(usize::MAX).min(n);
            let take = match usize::try_from(count) {
                Ok(c) => c.min(n - skip),
                Err(_) => n - skip,
            };
            (skip, take)
        }
        Some(_) => (0, 0),
    }
}

/// True when all members have the same score (the lowest is the highest).
fn one_score(z: &ZSet) -> bool {
    match (
        z.by_rank(0),
        z.len().checked_sub(1).and_then(|i| z.by_rank(i)),
    ) {
        (Some((_, a)), Some((_, b))) => a.total_cmp(&b).is_eq(),
        _ => true,
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
    let name = crate::cmd::lower(args[0]);
    let range = match parse_range(&name, &args[2..]) {
        Ok(r) => r,
        Err(e) => return w.error(e),
    };
    match crate::cmd::read::<ZSet, _>(ctx, args[1], |z| range.select(z)) {
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
    match crate::cmd::read::<ZSet, _>(ctx, args[1], |z| count(z, &by)) {
        Ok(n) => w.int(n.unwrap_or(0) as i64),
        Err(e) => w.error(e),
    }
}

/// ZREMRANGEBYRANK / ZREMRANGEBYSCORE / ZREMRANGEBYLEX key min max.
pub fn zremrange(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let name = crate::cmd::lower(args[0]);
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
    let items = match crate::cmd::read::<ZSet, _>(ctx, args[1], |z| select(z, &by, false, None)) {
        Ok(i) => i.unwrap_or_default(),
        Err(e) => return w.error(e),
    };
    let members: Vec<Vec<u8>> = items.into_iter().map(|(m, _)| m).collect();
    let refs: Vec<&[u8]> = members.iter().map(Vec::as_slice).collect();
    let now = ctx.now;
    let _ = crate::cmd::remove_members::<ZSet>(ctx.keys.store(args[1]), args[1], &refs, now);
    log_zrem(ctx, args[1], &members);
    w.int(members.len() as i64);
}

/// ZRANGESTORE dst src min max [options].
pub fn zrangestore(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (dst, src) = (args[1], args[2]);
    let range = match parse_range("zrangestore", &args[3..]) {
        Ok(r) => r,
        Err(e) => return w.error(e),
    };
    ctx.keys.lock_keys([dst, src].into_iter());
    let items = match ctx.keys.get(src, ctx.now).map(|e| &e.value) {
        None => Vec::new(),
        Some(Value::ZSet(z)) => range.select(z),
        Some(_) => return w.error(WRONGTYPE),
    };
    let now = ctx.now;
    ctx.keys.remove(dst);
    ctx.log_del(dst);
    if !items.is_empty() {
        let refs: Vec<(f64, &[u8])> = items.iter().map(|(m, s)| (*s, &m[..])).collect();
        let _ = add_on(ctx.keys.store(dst), dst, &refs, now);
        log_zadd(ctx, dst, &items);
    }
    w.int(items.len() as i64);
}
