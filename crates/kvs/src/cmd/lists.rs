//! The list family: LPUSH/RPUSH[X], LPOP/RPOP [count], LLEN, LRANGE, LINDEX, LSET,
//! LREM, LTRIM, LINSERT, LPOS, LMOVE, RPOPLPUSH.
//!
//! Every list write goes through [`write_on`], which parses the command and changes a
//! store: the handlers call it and log the command (pops with the count they took,
//! LMOVE as a pop and a push), and replay of the log calls it again with what was
//! logged, so the live change and the replayed one are the same code. Blocking pops
//! (BLPOP and the like) are not implemented yet.

use super::strings::rank_range;
use super::{eq, parse_i64, Ctx, NOT_INT, SYNTAX, WRONGTYPE};
use crate::resp::Writer;
use crate::store::Store;
use crate::value::{List, Value};

/// What a list write replies.
#[derive(Debug)]
pub(crate) enum Reply {
    Int(i64),
    Ok,
    Null,
    /// Popped elements; `one`: the command took no count (a bulk reply, not an array).
    Popped {
        items: Vec<Box<[u8]>>,
        one: bool,
    },
}

fn int_arg(a: &[u8]) -> Result<i64, String> {
    parse_i64(a).ok_or_else(|| NOT_INT.to_string())
}

/// Runs the list write `name` (lower case) with `args` (key first) on `store`.
pub(crate) fn write_on(
    store: &mut Store,
    name: &str,
    args: &[&[u8]],
    now: u64,
) -> Result<Reply, String> {
    let key = args[0];
    // The list at `key`: Ok(None) when absent, WRONGTYPE for another type.
    let check = |store: &mut Store| -> Result<bool, String> {
        match store.get(key, now).map(|e| &e.value) {
            None => Ok(false),
            Some(Value::List(_)) => Ok(true),
            Some(_) => Err(WRONGTYPE.to_string()),
        }
    };
    let on_list = |store: &mut Store, f: &mut dyn FnMut(&mut List) -> Reply| -> Reply {
        store
            .update(key, now, |v| match v {
                Value::List(l) => f(l),
                _ => Reply::Null,
            })
            .unwrap_or(Reply::Null)
    };
    match name {
        "lpush" | "rpush" | "lpushx" | "rpushx" => {
            let left = name.starts_with('l');
            let exists = check(store)?;
            if !exists && name.ends_with('x') {
                return Ok(Reply::Int(0));
            }
            if !exists {
                store.put(key, Value::List(Box::default()), 0, now);
            }
            Ok(on_list(store, &mut |l| {
                args[1..].iter().for_each(|v| l.push(left, v));
                Reply::Int(l.len() as i64)
            }))
        }
        "lpop" | "rpop" => {
            let left = name == "lpop";
            let count = match args.get(1) {
                None => None,
                Some(c) => match parse_i64(c) {
                    Some(n) if n >= 0 => Some(n as usize),
                    _ => return Err("ERR value is out of range, must be positive".into()),
                },
            };
            if !check(store)? {
                return Ok(Reply::Popped {
                    items: Vec::new(),
                    one: count.is_none(),
                });
            }
            Ok(on_list(store, &mut |l| {
                let n = count.unwrap_or(1).min(l.len());
                let items = (0..n).filter_map(|_| l.pop(left)).collect();
                Reply::Popped {
                    items,
                    one: count.is_none(),
                }
            }))
        }
        "lset" => {
            let i = int_arg(args[1])?;
            if !check(store)? {
                return Err("ERR no such key".into());
            }
            let r = on_list(store, &mut |l| {
                let len = l.len() as i64;
                let at = if i < 0 { len + i } else { i };
                if at >= 0 && l.set(at as usize, args[2]) {
                    Reply::Ok
                } else {
                    Reply::Null
                }
            });
            match r {
                Reply::Ok => Ok(Reply::Ok),
                _ => Err("ERR index out of range".into()),
            }
        }
        "lrem" => {
            let count = int_arg(args[1])?;
            if !check(store)? {
                return Ok(Reply::Int(0));
            }
            Ok(on_list(store, &mut |l| {
                let want = if count == 0 {
                    usize::MAX
                } else {
                    count.unsigned_abs() as usize
                };
                let mut removed = 0;
                if count >= 0 {
                    let mut i = 0;
                    while i < l.len() && removed < want {
                        if l.get(i) == Some(args[2]) {
                            l.remove(i);
                            removed += 1;
                        } else {
                            i += 1;
                        }
                    }
                } else {
                    let mut i = l.len();
                    while i > 0 && removed < want {
                        i -= 1;
                        if l.get(i) == Some(args[2]) {
                            l.remove(i);
                            removed += 1;
                        }
                    }
                }
                Reply::Int(removed as i64)
            }))
        }
        "ltrim" => {
            let (start, stop) = (int_arg(args[1])?, int_arg(args[2])?);
            if !check(store)? {
                return Ok(Reply::Ok);
            }
            on_list(store, &mut |l| {
                match rank_range(start, stop, l.len()) {
                    Some((s, e)) => l.retain_range(s, e),
                    None => l.retain_range(1, 0),
                }
                Reply::Ok
            });
            Ok(Reply::Ok)
        }
        "linsert" => {
            let before = if eq(args[1], "before") {
                true
            } else if eq(args[1], "after") {
                false
            } else {
                return Err(SYNTAX.into());
            };
            if !check(store)? {
                return Ok(Reply::Int(0));
            }
            Ok(on_list(store, &mut |l| {
                let at = l.iter().position(|x| x == args[2]);
                match at {
                    Some(i) => {
                        l.insert(if before { i } else { i + 1 }, args[3]);
                        Reply::Int(l.len() as i64)
                    }
                    None => Reply::Int(-1),
                }
            }))
        }
        _ => Err(format!("ERR unknown list write '{name}'")),
    }
}

/// Runs a list write for a client: replies, and logs what changed.
fn write(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let name = super::lower(args[0]);
    let now = ctx.now;
    let r = write_on(ctx.keys.store(args[1]), &name, &args[1..], now);
    match r {
        Err(e) => w.error(&e),
        Ok(Reply::Int(n)) => {
            let changed = match name.as_str() {
                "lrem" | "lpushx" | "rpushx" => n > 0,
                "linsert" => n > 0,
                _ => true,
            };
            if changed {
                let mut logged = args.to_vec();
                // LPUSHX/RPUSHX that pushed are LPUSH/RPUSH to replay.
                let plain: &[u8] = if name == "lpushx" { b"LPUSH" } else { b"RPUSH" };
                if name.ends_with('x') {
                    logged[0] = plain;
                }
                ctx.log_cmd(&logged);
            }
            w.int(n)
        }
        Ok(Reply::Ok) => {
            ctx.log_cmd(args);
            w.simple("OK")
        }
        Ok(Reply::Null) => w.null(),
        Ok(Reply::Popped { items, one }) => {
            if !items.is_empty() {
                let n = items.len().to_string();
                ctx.log_cmd(&[args[0], args[1], n.as_bytes()]);
            }
            if one {
                match items.first() {
                    Some(v) => w.bulk(v),
                    None => w.null(),
                }
            } else if items.is_empty() {
                // A count of 0 on a list: an empty array; no list: the null array.
                if ctx.keys.contains(args[1], now) {
                    w.array(0)
                } else {
                    w.null_array()
                }
            } else {
                w.array(items.len());
                items.iter().for_each(|v| w.bulk(v));
            }
        }
    }
}

/// LPUSH / RPUSH / LPUSHX / RPUSHX key element [element ...].
pub fn push(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    write(ctx, args, w)
}

/// LPOP / RPOP key [count].
pub fn pop(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    if args.len() > 3 {
        return super::arity(w, args[0]);
    }
    write(ctx, args, w)
}

/// LSET, LREM, LTRIM, LINSERT.
pub fn edit(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    write(ctx, args, w)
}

/// Applies a logged list write.
pub(crate) fn replay_list(store: &mut Store, name: &str, args: &[&[u8]], now: u64) {
    let _ = write_on(store, name, args, now);
}

/// LLEN key.
pub fn llen(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    match super::read::<List, _>(ctx, args[1], List::len) {
        Ok(n) => w.int(n.unwrap_or(0) as i64),
        Err(e) => w.error(e),
    }
}

/// LRANGE key start stop.
pub fn lrange(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (Some(start), Some(stop)) = (parse_i64(args[2]), parse_i64(args[3])) else {
        return w.error(NOT_INT);
    };
    let items = super::read::<List, _>(ctx, args[1], |l| match rank_range(start, stop, l.len()) {
        Some((s, e)) => l
            .iter()
            .skip(s)
            .take(e - s + 1)
            .map(<[u8]>::to_vec)
            .collect(),
        None => Vec::new(),
    });
    match items {
        Ok(v) => {
            let v = v.unwrap_or_default();
            w.array(v.len());
            v.iter().for_each(|x| w.bulk(x));
        }
        Err(e) => w.error(e),
    }
}

/// LINDEX key index.
pub fn lindex(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let Some(i) = parse_i64(args[2]) else {
        return w.error(NOT_INT);
    };
    let v = super::read::<List, _>(ctx, args[1], |l| {
        let at = if i < 0 { l.len() as i64 + i } else { i };
        (at >= 0)
            .then(|| l.get(at as usize).map(<[u8]>::to_vec))
            .flatten()
    });
    match v {
        Ok(Some(Some(x))) => w.bulk(&x),
        Ok(_) => w.null(),
        Err(e) => w.error(e),
    }
}

/// LPOS key element [RANK rank] [COUNT num] [MAXLEN len].
pub fn lpos(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (mut rank, mut count, mut maxlen) = (1i64, None, 0usize);
    let mut i = 3;
    while i < args.len() {
        if i + 1 >= args.len() {
            return w.error(SYNTAX);
        }
        let Some(v) = parse_i64(args[i + 1]) else {
            return w.error(NOT_INT);
        };
        if eq(args[i], "rank") {
            if v == i64::MIN {
                // Its negation would overflow.
                return w.error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807");
            }
            if v == 0 {
                return w.error("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list");
            }
            rank = v;
        } else if eq(args[i], "count") {
            if v < 0 {
                return w.error("ERR COUNT can't be negative");
            }
            count = Some(v as usize);
        } else if eq(args[i], "maxlen") {
            if v < 0 {
                return w.error("ERR MAXLEN can't be negative");
            }
            maxlen = v as usize;
        } else {
            return w.error(SYNTAX);
        }
        i += 2;
    }
    let want = args[2];
    let found = super::read::<List, _>(ctx, args[1], |l| {
        let len = l.len();
        let limit = if maxlen == 0 { len } else { maxlen.min(len) };
        let wanted = match count {
            Some(0) => usize::MAX,
            Some(c) => c,
            None => 1,
        };
        let mut skip = rank.unsigned_abs() as usize - 1;
        let mut hits = Vec::new();
        let idx: Box<dyn Iterator<Item = usize>> = if rank > 0 {
            Box::new(0..limit)
        } else {
            Box::new((len - limit..len).rev())
        };
        for j in idx {
            if l.get(j) == Some(want) {
                if skip > 0 {
                    skip -= 1;
                    continue;
                }
                hits.push(j as i64);
                if hits.len() >= wanted {
                    break;
                }
            }
        }
        hits
    });
    let hits = match found {
        Ok(h) => h.unwrap_or_default(),
        Err(e) => return w.error(e),
    };
    if count.is_some() {
        w.array(hits.len());
        hits.iter().for_each(|&h| w.int(h));
    } else {
        match hits.first() {
            Some(&h) => w.int(h),
            None => w.null(),
        }
    }
}

/// LMOVE source destination LEFT|RIGHT LEFT|RIGHT, and RPOPLPUSH source destination.
pub fn lmove(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let side = |a: &[u8]| {
        if eq(a, "left") {
            Some(true)
        } else if eq(a, "right") {
            Some(false)
        } else {
            None
        }
    };
    let (from_left, to_left) = if eq(args[0], "rpoplpush") {
        (false, true)
    } else {
        match (side(args[3]), side(args[4])) {
            (Some(a), Some(b)) => (a, b),
            _ => return w.error(SYNTAX),
        }
    };
    let (src, dst, now) = (args[1], args[2], ctx.now);
    ctx.keys.lock_keys([src, dst].into_iter());
    // As Redis: the source first (absent: nil), then the destination's type.
    match super::read::<List, _>(ctx, src, List::len) {
        Err(e) => return w.error(e),
        Ok(None) => return w.null(),
        Ok(Some(_)) => {}
    }
    if let Err(e) = super::read::<List, _>(ctx, dst, |_| ()) {
        return w.error(e);
    }
    let pop_name = if from_left { "lpop" } else { "rpop" };
    let item = match write_on(ctx.keys.store(src), pop_name, &[src], now) {
        Err(e) => return w.error(&e),
        Ok(Reply::Popped { items, .. }) => items.into_iter().next(),
        Ok(_) => None,
    };
    let Some(item) = item else {
        return w.null();
    };
    let push_name = if to_left { "lpush" } else { "rpush" };
    let _ = write_on(ctx.keys.store(dst), push_name, &[dst, &item], now);
    ctx.log_cmd(&[pop_name.as_bytes(), src, b"1"]);
    ctx.log_cmd(&[push_name.as_bytes(), dst, &item]);
    w.bulk(&item);
}
