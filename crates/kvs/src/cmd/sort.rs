//! SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC | DESC] [ALPHA]
//! [STORE destination], and SORT_RO (the same without STORE).
//!
//! The elements of a list, set or sorted set are ordered by their own value or by the
//! value a BY pattern names (`weight_*` a string key, `h_*->field` a hash field), as
//! numbers unless ALPHA (a value that is not a number is the error Redis gives; a
//! missing BY value weighs 0, or sorts first with ALPHA). Equal numeric weights fall
//! back to the elements' bytes, so the order is total. A BY pattern without `*` keeps
//! the stored order (a sorted set's, reversed by DESC). GET replaces each element by
//! the values its patterns name (`#` is the element itself, a missing value is null).
//!
//! The keys the patterns name are only known while sorting, so a command with patterns
//! locks every shard. STORE writes the result as a list (missing values as empty
//! strings), replies its length and deletes the destination when the result is empty;
//! it is logged as the destination's new state (deletion, then its content).

use super::strings::parse_float;
use super::{eq, parse_i64, Ctx, NOT_INT, SYNTAX, WRONGTYPE};
use crate::resp::Writer;
use crate::value::{List, Value};
use std::cmp::Ordering;

const NOT_DOUBLE: &str = "ERR One or more scores can't be converted into double";

/// The parsed options.
struct Opts<'a> {
    by: Option<&'a [u8]>,
    nosort: bool,
    limit: Option<(i64, i64)>,
    gets: Vec<&'a [u8]>,
    desc: bool,
    alpha: bool,
    store: Option<&'a [u8]>,
}

fn parse<'a>(args: &[&'a [u8]], ro: bool) -> Result<Opts<'a>, &'static str> {
    let mut o = Opts {
        by: None,
        nosort: false,
        limit: None,
        gets: Vec::new(),
        desc: false,
        alpha: false,
        store: None,
    };
    let mut i = 2;
    while i < args.len() {
        let a = args[i];
        let left = args.len() - i - 1;
        if eq(a, "asc") {
            o.desc = false;
        } else if eq(a, "desc") {
            o.desc = true;
        } else if eq(a, "alpha") {
            o.alpha = true;
        } else if eq(a, "limit") && left >= 2 {
            match (parse_i64(args[i + 1]), parse_i64(args[i + 2])) {
                (Some(s), Some(c)) => o.limit = Some((s, c)),
                _ => return Err(NOT_INT),
            }
            i += 2;
        } else if eq(a, "store") && left >= 1 && !ro {
            o.store = Some(args[i + 1]);
            i += 1;
        } else if eq(a, "by") && left >= 1 {
            let p = args[i + 1];
            o.nosort = !p.contains(&b'*');
            o.by = Some(p);
            i += 1;
        } else if eq(a, "get") && left >= 1 {
            o.gets.push(args[i + 1]);
            i += 1;
        } else {
            return Err(SYNTAX);
        }
        i += 1;
    }
    Ok(o)
}

/// A BY or GET pattern, split once per command (not once per element): `#`, or the
/// key's text before and after the first `*` and the hash field after `->`. None for
/// a pattern without `*` (it names nothing).
enum Pattern<'a> {
    Elem,
    Key {
        pre: &'a [u8],
        post: &'a [u8],
        field: Option<&'a [u8]>,
    },
}

impl<'a> Pattern<'a> {
    fn parse(pattern: &'a [u8]) -> Option<Pattern<'a>> {
        if pattern == b"#" {
            return Some(Pattern::Elem);
        }
        let star = pattern.iter().position(|&b| b == b'*')?;
        let rest = &pattern[star + 1..];
        let (post, field) = match rest.windows(2).position(|w| w == b"->") {
            Some(f) if f + 2 < rest.len() => (&rest[..f], Some(&rest[f + 2..])),
            _ => (rest, None),
        };
        Some(Pattern::Key {
            pre: &pattern[..star],
            post,
            field,
        })
    }
}

/// The value `pattern` names for `elem`: the element itself for `#`; the string at the
/// key made by replacing the first `*` with `elem`, or with `key->field`, that hash
/// field. None when there is no such key, or a value of another type. `key` is a
/// buffer reused across calls.
fn lookup(
    ctx: &mut Ctx,
    pattern: &Option<Pattern>,
    elem: &[u8],
    key: &mut Vec<u8>,
) -> Option<Vec<u8>> {
    let (pre, post, field) = match pattern.as_ref()? {
        Pattern::Elem => return Some(elem.to_vec()),
        Pattern::Key { pre, post, field } => (pre, post, field),
    };
    key.clear();
    key.extend_from_slice(pre);
    key.extend_from_slice(elem);
    key.extend_from_slice(post);
    match (&ctx.keys.get(key, ctx.now)?.value, field) {
        (Value::Str(s), None) => Some(s.clone()),
        (Value::Hash(h), Some(f)) => h.get(f).map(<[u8]>::to_vec),
        _ => None,
    }
}

/// An element and what it is sorted by.
struct Item {
    elem: Vec<u8>,
    score: f64,
    text: Option<Vec<u8>>,
}

/// BY with a pattern and GET name keys known only while sorting: as in Redis, the ACLs
/// allow them only to a user that may read every key with this command
/// (`crate::acl`). The error names the first such option.
fn denied_patterns(ctx: &mut Ctx, args: &[&[u8]]) -> Option<&'static str> {
    let cmd = super::table::lookup(args[0])?;
    if crate::acl::reads_every_key(ctx, cmd, args) {
        return None;
    }
    let mut i = 2;
    while i + 1 < args.len() {
        if eq(args[i], "by") && args[i + 1].contains(&b'*') {
            return Some("ERR BY option of SORT denied due to insufficient ACL permissions.");
        }
        if eq(args[i], "get") {
            return Some("ERR GET option of SORT denied due to insufficient ACL permissions.");
        }
        i += if eq(args[i], "limit") {
            3
        } else if eq(args[i], "by") || eq(args[i], "store") {
            2
        } else {
            1
        };
    }
    None
}

/// SORT / SORT_RO.
pub fn sort(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let ro = eq(args[0], "sort_ro");
    let mut o = match parse(args, ro) {
        Ok(o) => o,
        Err(e) => return w.error(e),
    };
    if o.by.is_some_and(|_| !o.nosort) || !o.gets.is_empty() {
        if let Some(e) = denied_patterns(ctx, args) {
            return w.error(e);
        }
    }
    let key = args[1];
    let patterns = o.by.is_some_and(|_| !o.nosort) || o.gets.iter().any(|g| *g != b"#");
    if patterns {
        ctx.keys.lock_all();
    } else {
        ctx.keys.lock_keys([key].into_iter().chain(o.store));
    }
    let mut zset = false;
    let elems: Vec<Vec<u8>> = match ctx.keys.get(key, ctx.now).map(|e| &e.value) {
        None => Vec::new(),
        Some(Value::List(l)) => l.iter().map(<[u8]>::to_vec).collect(),
        Some(Value::Set(s)) => s.iter().map(<[u8]>::to_vec).collect(),
        Some(Value::ZSet(z)) => {
            zset = true;
            z.iter().map(|(m, _)| m.to_vec()).collect()
        }
        Some(_) => return w.error(WRONGTYPE),
    };
    // A set has no order of its own: a stored result is sorted so it is reproducible.
    if o.nosort && o.store.is_some() && !zset && !elems.is_empty() {
        if let Some(Value::Set(_)) = ctx.keys.get(key, ctx.now).map(|e| &e.value) {
            o.nosort = false;
            o.by = None;
            o.alpha = true;
        }
    }
    let by = o.by.map(Pattern::parse);
    let gets: Vec<Option<Pattern>> = o.gets.iter().map(|g| Pattern::parse(g)).collect();
    let mut key = Vec::new();
    let mut items = Vec::with_capacity(elems.len());
    for elem in elems {
        let mut item = Item {
            elem,
            score: 0.0,
            text: None,
        };
        if !o.nosort {
            let by = match &by {
                Some(p) => lookup(ctx, p, &item.elem, &mut key),
                None => Some(item.elem.clone()),
            };
            if o.alpha {
                item.text = by;
            } else if let Some(v) = by {
                match parse_float(&v) {
                    Some(s) => item.score = s,
                    None => return w.error(NOT_DOUBLE),
                }
            }
        }
        items.push(item);
    }
    if !o.nosort {
        items.sort_by(|a, b| {
            let c = if o.alpha {
                match (&a.text, &b.text) {
                    (Some(x), Some(y)) => x.cmp(y),
                    (x, y) => x.is_some().cmp(&y.is_some()),
                }
            } else {
                a.score
                    .partial_cmp(&b.score)
                    .unwrap_or(Ordering::Equal)
                    .then_with(|| a.elem.cmp(&b.elem))
            };
            if o.desc {
                c.reverse()
            } else {
                c
            }
        });
    } else if zset && o.desc {
        items.reverse();
    }
    let n = items.len() as i64;
    let (start, count) = match o.limit {
        None => (0, n),
        Some((s, c)) => {
            let s = s.max(0);
            if s >= n {
                (0, 0)
            } else {
                (s, if c < 0 { n - s } else { c.min(n - s) })
            }
        }
    };
    let picked = &items[start as usize..(start + count) as usize];
    let mut out: Vec<Option<Vec<u8>>> = Vec::with_capacity(picked.len() * o.gets.len().max(1));
    for item in picked {
        if o.gets.is_empty() {
            out.push(Some(item.elem.clone()));
        }
        for g in &gets {
            out.push(lookup(ctx, g, &item.elem, &mut key));
        }
    }
    let Some(dst) = o.store else {
        w.array(out.len());
        for v in &out {
            match v {
                Some(v) => w.bulk(v),
                None => w.null(),
            }
        }
        return;
    };
    let now = ctx.now;
    ctx.keys.remove(dst);
    if !out.is_empty() {
        let mut list = List::default();
        for v in &out {
            list.push(false, v.as_deref().unwrap_or_default());
        }
        ctx.keys
            .store(dst)
            .put(dst, Value::List(Box::new(list)), 0, now);
    }
    ctx.log_key(dst);
    w.int(out.len() as i64);
}
