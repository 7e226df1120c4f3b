//! The hash family: HSET/HMSET, HSETNX, HGET, HMGET, HDEL, HLEN, HSTRLEN, HEXISTS,
//! HKEYS, HVALS, HGETALL, HINCRBY, HINCRBYFLOAT, HRANDFIELD, HSCAN.
//!
//! Changes are logged as HSET / HDEL commands (an increment as the HSET of its result),
//! which [`replay_hash`] applies to a store when the log is read; the same functions
//! ([`hset_on`], [`super::remove_members`]) make the change in both cases.

use super::strings::{format_float, parse_float};
use super::{glob, parse_i64, Ctx, NOT_INT, WRONGTYPE};
use crate::resp::Writer;
use crate::store::Store;
use crate::value::{Hash, Value};

/// Sets field/value pairs on the hash at `key` (made if absent); the number of new
/// fields, or WRONGTYPE.
pub(crate) fn hset_on(
    store: &mut Store,
    key: &[u8],
    pairs: &[&[u8]],
    now: u64,
) -> Result<usize, &'static str> {
    super::upsert(
        store,
        key,
        now,
        || Value::Hash(Box::default()),
        |v| match v {
            Value::Hash(h) => Ok(pairs.chunks(2).filter(|kv| h.insert(kv[0], kv[1])).count()),
            _ => Err(WRONGTYPE),
        },
    )
}

/// Applies a logged HSET or HDEL.
pub(crate) fn replay_hash(store: &mut Store, name: &str, args: &[&[u8]], now: u64) {
    let _ = match name {
        "hset" if args.len() >= 3 && args.len() % 2 == 1 => {
            hset_on(store, args[0], &args[1..], now)
        }
        "hdel" if args.len() >= 2 => super::remove_members::<Hash>(store, args[0], &args[1..], now),
        _ => Ok(0),
    };
}

/// The value of `field` in the hash at `key` (a copy).
fn field_of(ctx: &mut Ctx, key: &[u8], field: &[u8]) -> Result<Option<Vec<u8>>, &'static str> {
    super::read::<Hash, _>(ctx, key, |h| h.get(field).map(<[u8]>::to_vec)).map(Option::flatten)
}

/// Sets one field of the hash at `key` (checked to be a hash or absent) and logs it.
fn set_field(ctx: &mut Ctx, key: &[u8], field: &[u8], value: &[u8]) {
    let now = ctx.now;
    let _ = hset_on(ctx.keys.store(key), key, &[field, value], now);
    ctx.log_cmd(&[b"HSET", key, field, value]);
}

/// HSET key field value [field value ...] (and HMSET, which replies OK).
pub fn hset(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    if args.len() % 2 == 1 {
        return super::arity(w, args[0]);
    }
    let now = ctx.now;
    match hset_on(ctx.keys.store(args[1]), args[1], &args[2..], now) {
        Ok(n) => {
            let mut logged = vec![&b"HSET"[..]];
            logged.extend_from_slice(&args[1..]);
            ctx.log_cmd(&logged);
            if super::eq(args[0], "hmset") {
                w.simple("OK");
            } else {
                w.int(n as i64);
            }
        }
        Err(e) => w.error(e),
    }
}

/// HSETNX key field value.
pub fn hsetnx(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    match super::read::<Hash, _>(ctx, args[1], |h| h.get(args[2]).is_some()) {
        Err(e) => w.error(e),
        Ok(Some(true)) => w.int(0),
        Ok(_) => {
            set_field(ctx, args[1], args[2], args[3]);
            w.int(1);
        }
    }
}

/// HGET key field.
pub fn hget(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    match field_of(ctx, args[1], args[2]) {
        Err(e) => w.error(e),
        Ok(Some(v)) => w.bulk(&v),
        Ok(None) => w.null(),
    }
}

/// HMGET key field [field ...].
pub fn hmget(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let fields = &args[2..];
    let got = super::read::<Hash, _>(ctx, args[1], |h| {
        fields
            .iter()
            .map(|f| h.get(f).map(<[u8]>::to_vec))
            .collect::<Vec<_>>()
    });
    match got {
        Err(e) => w.error(e),
        Ok(vals) => {
            w.array(fields.len());
            for i in 0..fields.len() {
                match vals.as_ref().and_then(|v| v[i].as_ref()) {
                    Some(v) => w.bulk(v),
                    None => w.null(),
                }
            }
        }
    }
}

/// HDEL key field [field ...].
pub fn hdel(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let now = ctx.now;
    match super::remove_members::<Hash>(ctx.keys.store(args[1]), args[1], &args[2..], now) {
        Ok(n) => {
            if n > 0 {
                ctx.log_cmd(args);
            }
            w.int(n as i64);
        }
        Err(e) => w.error(e),
    }
}

/// HLEN key.
pub fn hlen(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    match super::read::<Hash, _>(ctx, args[1], Hash::len) {
        Ok(n) => w.int(n.unwrap_or(0) as i64),
        Err(e) => w.error(e),
    }
}

/// HSTRLEN key field.
pub fn hstrlen(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    match super::read::<Hash, _>(ctx, args[1], |h| h.get(args[2]).map_or(0, <[u8]>::len)) {
        Ok(n) => w.int(n.unwrap_or(0) as i64),
        Err(e) => w.error(e),
    }
}

/// HEXISTS key field.
pub fn hexists(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    match super::read::<Hash, _>(ctx, args[1], |h| h.get(args[2]).is_some()) {
        Ok(b) => w.int(b.unwrap_or(false) as i64),
        Err(e) => w.error(e),
    }
}

/// HKEYS, HVALS, HGETALL key.
pub fn hgetall(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let what = super::lower(args[0]);
    let pairs = super::read::<Hash, _>(ctx, args[1], |h| {
        h.iter()
            .map(|(f, v)| (f.to_vec(), v.to_vec()))
            .collect::<Vec<_>>()
    });
    let pairs = match pairs {
        Ok(p) => p.unwrap_or_default(),
        Err(e) => return w.error(e),
    };
    match what.as_str() {
        "hkeys" => {
            w.array(pairs.len());
            pairs.iter().for_each(|(f, _)| w.bulk(f));
        }
        "hvals" => {
            w.array(pairs.len());
            pairs.iter().for_each(|(_, v)| w.bulk(v));
        }
        _ => {
            w.map(pairs.len());
            for (f, v) in &pairs {
                w.bulk(f);
                w.bulk(v);
            }
        }
    }
}

/// HINCRBY key field increment.
pub fn hincrby(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let Some(d) = parse_i64(args[3]) else {
        return w.error(NOT_INT);
    };
    let cur = match field_of(ctx, args[1], args[2]) {
        Err(e) => return w.error(e),
        Ok(None) => 0,
        Ok(Some(v)) => match parse_i64(&v) {
            Some(n) => n,
            None => return w.error("ERR hash value is not an integer"),
        },
    };
    let Some(v) = cur.checked_add(d) else {
        return w.error("ERR increment or decrement would overflow");
    };
    let text = v.to_string();
    set_field(ctx, args[1], args[2], text.as_bytes());
    w.int(v);
}

/// HINCRBYFLOAT key field increment.
pub fn hincrbyfloat(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let Some(d) = parse_float(args[3]) else {
        return w.error("ERR value is not a valid float");
    };
    let cur = match field_of(ctx, args[1], args[2]) {
        Err(e) => return w.error(e),
        Ok(None) => 0.0,
        Ok(Some(v)) => match parse_float(&v) {
            Some(n) => n,
            None => return w.error("ERR hash value is not a float"),
        },
    };
    let v = cur + d;
    if !v.is_finite() {
        return w.error("ERR increment would produce NaN or Infinity");
    }
    let text = format_float(v);
    set_field(ctx, args[1], args[2], text.as_bytes());
    w.bulk(text.as_bytes());
}

/// HRANDFIELD key [count [WITHVALUES]].
pub fn hrandfield(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (count, with_values) = match super::sets::rand_args(args, Some("withvalues")) {
        Ok(r) => r,
        Err(e) => return w.error(e),
    };
    let pairs = match super::read::<Hash, _>(ctx, args[1], |h| {
        h.iter()
            .map(|(f, v)| (f.to_vec(), v.to_vec()))
            .collect::<Vec<_>>()
    }) {
        Ok(p) => p.unwrap_or_default(),
        Err(e) => return w.error(e),
    };
    let picks = super::sets::pick(pairs.len(), count, ctx.now ^ ctx.stats.commands);
    match (count, picks) {
        (None, p) => match p.first() {
            Some(&i) => w.bulk(&pairs[i].0),
            None => w.null(),
        },
        (Some(_), p) => {
            if with_values {
                // RESP3: an array of [field, value] pairs; RESP2: flat.
                if w.proto() == crate::resp::Proto::Resp3 {
                    w.array(p.len());
                    for i in p {
                        w.array(2);
                        w.bulk(&pairs[i].0);
                        w.bulk(&pairs[i].1);
                    }
                } else {
                    w.array(2 * p.len());
                    for i in p {
                        w.bulk(&pairs[i].0);
                        w.bulk(&pairs[i].1);
                    }
                }
            } else {
                w.array(p.len());
                for i in p {
                    w.bulk(&pairs[i].0);
                }
            }
        }
    }
}

/// HSCAN key cursor [MATCH pattern] [COUNT count] [NOVALUES]: the whole hash in one
/// reply (cursor 0), as Redis does for small hashes; the pattern filters fields.
pub fn hscan(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let opts = match super::sets::scan_args(args, true) {
        Ok(o) => o,
        Err(e) => return w.error(&e),
    };
    let pairs = match super::read::<Hash, _>(ctx, args[1], |h| {
        h.iter()
            .filter(|(f, _)| opts.pattern.is_none_or(|p| glob(p, f)))
            .map(|(f, v)| (f.to_vec(), v.to_vec()))
            .collect::<Vec<_>>()
    }) {
        Ok(p) => p.unwrap_or_default(),
        Err(e) => return w.error(e),
    };
    w.array(2);
    w.bulk(b"0");
    if opts.novalues {
        w.array(pairs.len());
        pairs.iter().for_each(|(f, _)| w.bulk(f));
    } else {
        w.array(2 * pairs.len());
        for (f, v) in &pairs {
            w.bulk(f);
            w.bulk(v);
        }
    }
}
