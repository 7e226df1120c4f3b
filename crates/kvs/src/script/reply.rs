//! The two conversions between replies and Lua values, as Redis defines them for
//! scripts.
//!
//! Reply to Lua ([`to_lua`], what `redis.call` returns): an integer is a number, a
//! bulk string a string, the null bulk and the null array `false`, an array a table
//! (1-based), a status `{ok=...}`, an error `{err=...}`; the RESP3 types (after
//! `redis.setresp(3)`) map to `{map=...}`, `{set=...}`, `{double=...}`,
//! `{big_number=...}`, booleans, and `nil`. The reader takes one reply from the
//! buffer a handler wrote, which this server produced itself, so a malformed reply is
//! a bug; it is still answered with an error value rather than a panic, and nesting
//! deeper than [`MAX_DEPTH`] is refused before it can exhaust the stack.
//!
//! Lua to reply ([`write_value`], what a script returns): a number is an integer
//! (truncated toward zero; NaN and values outside the 64-bit range give the smallest
//! integer, as Redis's cast does on x86-64), a string a bulk, `true` 1 (RESP3: true),
//! `false` and `nil` the null (RESP3: false and null), a table with a string `err`
//! field an error, with a string `ok` field a status, with `double`/`map`/`set` those
//! RESP3 replies, and any other table an array of its elements `1..n` up to the first
//! nil. Tables are read raw (no metamethods run), so a table whose metatable raises
//! converts like an empty one, and nesting past [`MAX_DEPTH`] is an error reply.

use mlua::{Lua, Table, Value};

use crate::resp::{number, Proto, Writer};

/// Deepest nesting converted either way.
pub const MAX_DEPTH: usize = 256;

/// One reply read back from the bytes a handler wrote.
#[derive(Debug, PartialEq)]
pub(crate) enum Reply {
    Status(Vec<u8>),
    Error(Vec<u8>),
    Int(i64),
    Bulk(Vec<u8>),
    Null,
    Array(Vec<Reply>),
    Map(Vec<(Reply, Reply)>),
    Set(Vec<Reply>),
    Double(f64),
    Bool(bool),
    BigNumber(Vec<u8>),
    Verbatim(Vec<u8>, Vec<u8>),
}

/// Reads the first reply in `buf` (`None`: not a reply this server writes).
pub(crate) fn read(buf: &[u8]) -> Option<Reply> {
    let mut at = 0;
    read_at(buf, &mut at, 0)
}

fn line(buf: &[u8], at: &mut usize) -> Option<Vec<u8>> {
    let rest = buf.get(*at..)?;
    let end = rest.windows(2).position(|w| w == b"\r\n")?;
    let v = rest[..end].to_vec();
    *at += end + 2;
    Some(v)
}

fn int(buf: &[u8], at: &mut usize) -> Option<i64> {
    let (v, next) = number(buf, *at).ok()??;
    *at = next;
    Some(v)
}

fn payload(buf: &[u8], at: &mut usize, len: i64) -> Option<Vec<u8>> {
    let len = usize::try_from(len).ok()?;
    let v = buf.get(*at..at.checked_add(len)?)?.to_vec();
    *at += len + 2;
    Some(v)
}

fn read_at(buf: &[u8], at: &mut usize, depth: usize) -> Option<Reply> {
    if depth > MAX_DEPTH {
        return None;
    }
    let tag = *buf.get(*at)?;
    *at += 1;
    let items = |at: &mut usize, n: i64| -> Option<Vec<Reply>> {
        (0..n).map(|_| read_at(buf, at, depth + 1)).collect()
    };
    Some(match tag {
        b'+' => Reply::Status(line(buf, at)?),
        b'-' => Reply::Error(line(buf, at)?),
        b':' => Reply::Int(int(buf, at)?),
        b'$' => match int(buf, at)? {
            n if n < 0 => Reply::Null,
            n => Reply::Bulk(payload(buf, at, n)?),
        },
        b'*' => match int(buf, at)? {
            n if n < 0 => Reply::Null,
            n => Reply::Array(items(at, n)?),
        },
        b'~' => {
            let n = int(buf, at)?;
            Reply::Set(items(at, n)?)
        }
        b'%' => {
            let n = int(buf, at)?;
            let flat = items(at, n.checked_mul(2)?)?;
            let mut pairs = Vec::with_capacity(flat.len() / 2);
            let mut it = flat.into_iter();
            while let (Some(k), Some(v)) = (it.next(), it.next()) {
                pairs.push((k, v));
            }
            Reply::Map(pairs)
        }
        b'_' => {
            line(buf, at)?;
            Reply::Null
        }
        b',' => {
            let l = line(buf, at)?;
            let s = String::from_utf8(l).ok()?;
            Reply::Double(match s.as_str() {
                "inf" => f64::INFINITY,
                "-inf" => f64::NEG_INFINITY,
                "nan" => f64::NAN,
                s => s.parse().ok()?,
            })
        }
        b'#' => Reply::Bool(line(buf, at)? == b"t"),
        b'(' => Reply::BigNumber(line(buf, at)?),
        b'=' => {
            let n = int(buf, at)?;
            let v = payload(buf, at, n)?;
            let (fmt, text) = v.split_at(v.len().min(4));
            Reply::Verbatim(
                fmt.strip_suffix(b":").unwrap_or(fmt).to_vec(),
                text.to_vec(),
            )
        }
        _ => return None,
    })
}

/// The Lua value of a reply, as `redis.call` returns it.
pub(crate) fn to_lua(lua: &Lua, r: Reply) -> mlua::Result<Value> {
    let tagged = |k: &str, v: Value| -> mlua::Result<Value> {
        let t = lua.create_table()?;
        t.raw_set(k, v)?;
        Ok(Value::Table(t))
    };
    Ok(match r {
        Reply::Status(s) => tagged("ok", Value::String(lua.create_string(s)?))?,
        Reply::Error(e) => tagged("err", Value::String(lua.create_string(e)?))?,
        Reply::Int(n) => Value::Number(n as f64),
        Reply::Bulk(b) => Value::String(lua.create_string(b)?),
        Reply::Null => Value::Boolean(false),
        Reply::Array(items) => {
            let t = lua.create_table_with_capacity(items.len(), 0)?;
            for (i, item) in items.into_iter().enumerate() {
                t.raw_set(i + 1, to_lua(lua, item)?)?;
            }
            Value::Table(t)
        }
        Reply::Set(items) => {
            let t = lua.create_table()?;
            for item in items {
                t.raw_set(to_lua(lua, item)?, true)?;
            }
            tagged("set", Value::Table(t))?
        }
        Reply::Map(pairs) => {
            let t = lua.create_table()?;
            for (k, v) in pairs {
                t.raw_set(to_lua(lua, k)?, to_lua(lua, v)?)?;
            }
            tagged("map", Value::Table(t))?
        }
        Reply::Double(d) => tagged("double", Value::Number(d))?,
        Reply::Bool(b) => Value::Boolean(b),
        Reply::BigNumber(b) => tagged("big_number", Value::String(lua.create_string(b)?))?,
        Reply::Verbatim(fmt, text) => {
            let t = lua.create_table()?;
            t.raw_set("format", lua.create_string(fmt)?)?;
            t.raw_set("string", lua.create_string(text)?)?;
            tagged("verbatim_string", Value::Table(t))?
        }
    })
}

/// A Lua number as Redis turns it into an integer reply.
pub(crate) fn lua_int(n: f64) -> i64 {
    // 2^63: the first value past the largest integer; -2^63 is the smallest.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if n.is_nan() || !(-LIMIT..LIMIT).contains(&n) {
        i64::MIN
    } else {
        n.trunc() as i64
    }
}

fn field(t: &Table, k: &str) -> Option<mlua::String> {
    match t.raw_get::<Value>(k) {
        Ok(Value::String(s)) => Some(s),
        _ => None,
    }
}

/// Writes what a script returned as the reply to its caller.
pub(crate) fn write_value(v: &Value, w: &mut Writer, depth: usize) {
    if depth > MAX_DEPTH {
        return w.error("ERR reached lua stack limit");
    }
    match v {
        Value::Nil => w.null(),
        Value::Boolean(b) => match (w.proto(), b) {
            (Proto::Resp3, b) => w.raw(if *b { b"#t\r\n" } else { b"#f\r\n" }),
            (Proto::Resp2, true) => w.int(1),
            (Proto::Resp2, false) => w.null(),
        },
        Value::Integer(n) => w.int(*n),
        Value::Number(n) => w.int(lua_int(*n)),
        Value::String(s) => w.bulk(&s.as_bytes()),
        Value::Table(t) => write_table(t, w, depth),
        // Functions, threads, userdata: what Redis answers for any other type.
        _ => w.null(),
    }
}

fn write_table(t: &Table, w: &mut Writer, depth: usize) {
    if let Some(e) = field(t, "err") {
        return w.error(&String::from_utf8_lossy(&e.as_bytes()));
    }
    if let Some(s) = field(t, "ok") {
        return w.simple(&String::from_utf8_lossy(&s.as_bytes()));
    }
    if let Ok(Value::Number(d)) = t.raw_get::<Value>("double") {
        return write_double(d, w);
    }
    if let Ok(Value::Integer(d)) = t.raw_get::<Value>("double") {
        return write_double(d as f64, w);
    }
    if let Some(b) = field(t, "big_number") {
        return match w.proto() {
            Proto::Resp3 => {
                w.raw(b"(");
                w.raw(&b.as_bytes());
                w.raw(b"\r\n");
            }
            Proto::Resp2 => w.bulk(&b.as_bytes()),
        };
    }
    for (name, is_map) in [("map", true), ("set", false)] {
        if let Ok(Value::Table(inner)) = t.raw_get::<Value>(name) {
            // Counted, then written, one pair at a time (see `libs::shape`).
            let n = super::libs::shape(&inner).map_or(0, |s| s.pairs);
            if is_map {
                w.map(n);
            } else {
                w.set(n);
            }
            let mut written = 0;
            for (k, v) in inner.pairs::<Value, Value>().flatten().take(n) {
                write_value(&k, w, depth + 1);
                if is_map {
                    write_value(&v, w, depth + 1);
                }
                written += 1;
            }
            for _ in written..n {
                w.null();
                if is_map {
                    w.null();
                }
            }
            return;
        }
    }
    // The array stops at its first nil: counted, then written, one value at a time.
    let mut n = 0;
    while !matches!(t.raw_get::<Value>(n + 1), Ok(Value::Nil) | Err(_)) {
        n += 1;
    }
    w.array(n);
    for i in 1..=n {
        let v = t.raw_get::<Value>(i).unwrap_or(Value::Nil);
        write_value(&v, w, depth + 1);
    }
}

fn write_double(d: f64, w: &mut Writer) {
    let text = if d.is_nan() {
        "nan".to_string()
    } else if d.is_infinite() {
        if d > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        format!("{}", d)
    };
    match w.proto() {
        Proto::Resp3 => {
            w.raw(b",");
            w.raw(text.as_bytes());
            w.raw(b"\r\n");
        }
        Proto::Resp2 => w.bulk(text.as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_read_back_as_written() {
        let mut out = Vec::new();
        let mut w = Writer::new(&mut out, Proto::Resp2);
        w.array(5);
        w.int(-3);
        w.bulk(b"a\r\nb");
        w.null();
        w.simple("OK");
        w.error("ERR no");
        assert_eq!(
            read(&out),
            Some(Reply::Array(vec![
                Reply::Int(-3),
                Reply::Bulk(b"a\r\nb".to_vec()),
                Reply::Null,
                Reply::Status(b"OK".to_vec()),
                Reply::Error(b"ERR no".to_vec()),
            ]))
        );
        assert_eq!(read(b"*2\r\n:1\r\n"), None, "cut short");
        assert_eq!(read(b"?x\r\n"), None);
        let deep = "*1\r\n".repeat(MAX_DEPTH + 2);
        assert_eq!(read(deep.as_bytes()), None, "too deep");
    }

    #[test]
    fn numbers_truncate_as_redis_casts() {
        assert_eq!(lua_int(100.5), 100);
        assert_eq!(lua_int(-2.5), -2);
        assert_eq!(lua_int(1e20), i64::MIN);
        assert_eq!(lua_int(f64::NAN), i64::MIN);
        assert_eq!(lua_int(-9.2e18), -9_200_000_000_000_000_000);
    }
}
