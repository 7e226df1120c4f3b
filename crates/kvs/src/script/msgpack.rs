//! `cmsgpack`: MessagePack for scripts, with lua-cmsgpack's choices (as Redis embeds
//! it): integers in their smallest encoding, a number that a 32-bit float holds
//! exactly as one, else a double; a table whose keys are exactly 1..n is an array,
//! any other a map; tables nested deeper than [`MAX_NESTING`] (a table that contains
//! itself) are written as nil; functions and other values as nil.
//!
//! Decoding checks every length against the bytes left before it reads or allocates
//! (a count says how many items follow, each at least one byte), and nests at most
//! [`MAX_DECODE_NESTING`] levels; a short or malformed input is an error.

use mlua::{Lua, MultiValue, Table, Value, Variadic};

/// Deepest table nesting written (deeper tables are nil).
pub const MAX_NESTING: usize = 16;
/// Deepest nesting read.
pub const MAX_DECODE_NESTING: usize = 1000;

/// The `cmsgpack` table.
pub(crate) fn cmsgpack(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set(
        "pack",
        lua.create_function(|_, args: Variadic<Value>| {
            if args.is_empty() {
                return Err(mlua::Error::runtime("MessagePack pack needs input."));
            }
            let mut out = Vec::new();
            for v in args.iter() {
                encode(v, &mut out, 0);
            }
            Ok(mlua::BString::from(out))
        })?,
    )?;
    t.raw_set(
        "unpack",
        lua.create_function(|lua, s: mlua::String| {
            let (_, values) = decode_some(lua, &s.as_bytes(), 0, 0)?;
            Ok(MultiValue::from_iter(values))
        })?,
    )?;
    t.raw_set(
        "unpack_one",
        lua.create_function(|lua, (s, offset): (mlua::String, Option<i64>)| {
            limited(lua, &s.as_bytes(), 1, offset.unwrap_or(0))
        })?,
    )?;
    t.raw_set(
        "unpack_limit",
        lua.create_function(
            |lua, (s, limit, offset): (mlua::String, i64, Option<i64>)| {
                limited(
                    lua,
                    &s.as_bytes(),
                    limit.max(0) as usize,
                    offset.unwrap_or(0),
                )
            },
        )?,
    )?;
    Ok(t)
}

/// `unpack_limit`: the offset after what was read (-1 at the end), then the values.
fn limited(lua: &Lua, s: &[u8], limit: usize, offset: i64) -> mlua::Result<MultiValue> {
    let start = usize::try_from(offset)
        .ok()
        .filter(|&o| o <= s.len())
        .ok_or_else(|| mlua::Error::runtime("Start offset greater than input length."))?;
    let (end, values) = decode_some(lua, s, start, limit)?;
    let next = if end >= s.len() { -1 } else { end as i64 };
    let mut out = vec![Value::Integer(next)];
    out.extend(values);
    Ok(MultiValue::from_iter(out))
}

fn encode(v: &Value, out: &mut Vec<u8>, level: usize) {
    match v {
        Value::Boolean(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        Value::Integer(n) => int(*n, out),
        Value::Number(n) => {
            if n.fract() == 0.0 && n.abs() < 9.2e18 {
                int(*n as i64, out)
            } else if (*n as f32) as f64 == *n {
                out.push(0xca);
                out.extend_from_slice(&(*n as f32).to_be_bytes());
            } else {
                out.push(0xcb);
                out.extend_from_slice(&n.to_be_bytes());
            }
        }
        Value::String(s) => {
            let b = s.as_bytes();
            let n = b.len();
            if n < 32 {
                out.push(0xa0 | n as u8);
            } else if n < 256 {
                out.extend_from_slice(&[0xd9, n as u8]);
            } else if n < 65536 {
                out.push(0xda);
                out.extend_from_slice(&(n as u16).to_be_bytes());
            } else {
                out.push(0xdb);
                out.extend_from_slice(&(n as u32).to_be_bytes());
            }
            out.extend_from_slice(&b);
        }
        Value::Table(t) if level < MAX_NESTING => table(t, out, level),
        _ => out.push(0xc0),
    }
}

fn int(n: i64, out: &mut Vec<u8>) {
    if n >= 0 {
        if n < 128 {
            out.push(n as u8);
        } else if n < 256 {
            out.extend_from_slice(&[0xcc, n as u8]);
        } else if n < 65536 {
            out.push(0xcd);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        } else if n < 1 << 32 {
            out.push(0xce);
            out.extend_from_slice(&(n as u32).to_be_bytes());
        } else {
            out.push(0xcf);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    } else if n >= -32 {
        out.push(n as i8 as u8);
    } else if n >= -128 {
        out.extend_from_slice(&[0xd0, n as i8 as u8]);
    } else if n >= -32768 {
        out.push(0xd1);
        out.extend_from_slice(&(n as i16).to_be_bytes());
    } else if n >= -(1 << 31) {
        out.push(0xd2);
        out.extend_from_slice(&(n as i32).to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn header(out: &mut Vec<u8>, n: usize, fix: u8, h16: u8, h32: u8) {
    if n < 16 {
        out.push(fix | n as u8);
    } else if n < 65536 {
        out.push(h16);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(h32);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    }
}

fn table(t: &Table, out: &mut Vec<u8>, level: usize) {
    let Ok(shape) = super::libs::shape(t) else {
        return out.push(0xc0);
    };
    let n = shape.pairs;
    if shape.max_index.is_some_and(|m| m <= n as f64) {
        header(out, n, 0x90, 0xdc, 0xdd);
        for i in 1..=n {
            let v = t.raw_get::<Value>(i).unwrap_or(Value::Nil);
            encode(&v, out, level + 1);
        }
    } else {
        header(out, n, 0x80, 0xde, 0xdf);
        let mut written = 0;
        for (k, v) in t.pairs::<Value, Value>().flatten() {
            encode(&k, out, level + 1);
            encode(&v, out, level + 1);
            written += 1;
        }
        // The count in the header holds: a pair that could not be read is written as
        // nil to nil.
        for _ in written..n {
            out.extend_from_slice(&[0xc0, 0xc0]);
        }
    }
}

/// The most values `cmsgpack.unpack` returns at once.
const MAX_RESULTS: usize = 7_000;

fn missing() -> mlua::Error {
    mlua::Error::runtime("Missing bytes in input.")
}

/// Decodes up to `limit` values (0: all) from `at`; the offset after them.
fn decode_some(
    lua: &Lua,
    s: &[u8],
    mut at: usize,
    limit: usize,
) -> mlua::Result<(usize, Vec<Value>)> {
    let mut values = Vec::new();
    while at < s.len() && (limit == 0 || values.len() < limit) {
        // The values go back as a function's results: more than Lua's stack takes is
        // an error (and each would hold one of Lua's 8,000 handle slots).
        if values.len() >= MAX_RESULTS {
            return Err(mlua::Error::runtime("too many results to unpack"));
        }
        values.push(decode(lua, s, &mut at, 0)?);
    }
    Ok((at, values))
}

fn take<'a>(s: &'a [u8], at: &mut usize, n: usize) -> mlua::Result<&'a [u8]> {
    let end = at
        .checked_add(n)
        .filter(|&e| e <= s.len())
        .ok_or_else(missing)?;
    let b = &s[*at..end];
    *at = end;
    Ok(b)
}

fn be(s: &[u8], at: &mut usize, n: usize) -> mlua::Result<u64> {
    Ok(take(s, at, n)?
        .iter()
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
}

fn decode(lua: &Lua, s: &[u8], at: &mut usize, depth: usize) -> mlua::Result<Value> {
    if depth > MAX_DECODE_NESTING {
        return Err(mlua::Error::runtime("Bad data format in input."));
    }
    let tag = take(s, at, 1)?[0];
    let num = |v: f64| Ok(Value::Number(v));
    let string = |at: &mut usize, n: usize| -> mlua::Result<Value> {
        Ok(Value::String(lua.create_string(take(s, at, n)?)?))
    };
    match tag {
        0x00..=0x7f => num(tag as f64),
        0xe0..=0xff => num((tag as i8) as f64),
        0xa0..=0xbf => string(at, (tag & 0x1f) as usize),
        0x90..=0x9f => array(lua, s, at, (tag & 0x0f) as usize, depth),
        0x80..=0x8f => map(lua, s, at, (tag & 0x0f) as usize, depth),
        0xc0 => Ok(Value::Nil),
        0xc2 => Ok(Value::Boolean(false)),
        0xc3 => Ok(Value::Boolean(true)),
        0xc4 | 0xd9 => {
            let n = be(s, at, 1)? as usize;
            string(at, n)
        }
        0xc5 | 0xda => {
            let n = be(s, at, 2)? as usize;
            string(at, n)
        }
        0xc6 | 0xdb => {
            let n = be(s, at, 4)? as usize;
            string(at, n)
        }
        0xca => num(f32::from_bits(be(s, at, 4)? as u32) as f64),
        0xcb => num(f64::from_bits(be(s, at, 8)?)),
        0xcc => num(be(s, at, 1)? as f64),
        0xcd => num(be(s, at, 2)? as f64),
        0xce => num(be(s, at, 4)? as f64),
        0xcf => num(be(s, at, 8)? as f64),
        0xd0 => num(be(s, at, 1)? as u8 as i8 as f64),
        0xd1 => num(be(s, at, 2)? as u16 as i16 as f64),
        0xd2 => num(be(s, at, 4)? as u32 as i32 as f64),
        0xd3 => num(be(s, at, 8)? as i64 as f64),
        0xdc => {
            let n = be(s, at, 2)? as usize;
            array(lua, s, at, n, depth)
        }
        0xdd => {
            let n = be(s, at, 4)? as usize;
            array(lua, s, at, n, depth)
        }
        0xde => {
            let n = be(s, at, 2)? as usize;
            map(lua, s, at, n, depth)
        }
        0xdf => {
            let n = be(s, at, 4)? as usize;
            map(lua, s, at, n, depth)
        }
        _ => Err(mlua::Error::runtime("Bad data format in input.")),
    }
}

fn array(lua: &Lua, s: &[u8], at: &mut usize, n: usize, depth: usize) -> mlua::Result<Value> {
    if n > s.len() - *at {
        return Err(missing());
    }
    let t = lua.create_table_with_capacity(n, 0)?;
    for i in 1..=n {
        t.raw_set(i, decode(lua, s, at, depth + 1)?)?;
    }
    Ok(Value::Table(t))
}

fn map(lua: &Lua, s: &[u8], at: &mut usize, n: usize, depth: usize) -> mlua::Result<Value> {
    if n.saturating_mul(2) > s.len() - *at {
        return Err(missing());
    }
    let t = lua.create_table_with_capacity(0, n)?;
    for _ in 0..n {
        let k = decode(lua, s, at, depth + 1)?;
        let v = decode(lua, s, at, depth + 1)?;
        if !matches!(k, Value::Nil) {
            t.raw_set(k, v)?;
        }
    }
    Ok(Value::Table(t))
}
