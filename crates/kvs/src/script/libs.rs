//! The libraries a script sees besides Lua's own: the `redis` helpers that need no
//! command context (`sha1hex`, `log`, the version), `bit` (LuaBitOp's functions on
//! 32-bit integers), `cjson` (JSON encode/decode as lua-cjson does by default),
//! `cmsgpack` ([`super::msgpack`]), and
//! the replacement of `math.random`/`math.randomseed` by a generator of this
//! interpreter's own.
//!
//! Bounds: `cjson` nests at most [`MAX_NESTING`] levels either way (deeper is an error,
//! not a stack overflow), and a sparse array (largest index over twice the element
//! count and over 10) is refused as lua-cjson refuses it, so encoding never fills
//! holes up to a huge index.

use std::cell::Cell;
use std::rc::Rc;

use mlua::{LightUserData, Lua, MultiValue, Table, Value, Variadic};

/// Deepest nesting `cjson` encodes or decodes.
pub const MAX_NESTING: usize = 1000;

/// The most pattern items that make Lua's matcher recurse (captures and the
/// quantifiers `?`, `*`, `+`, `-`) a pattern may hold: the matcher recurses on the
/// thread's stack once per such item, so a pattern of a million of them would overflow
/// it. Lua 5.2 and later refuse such patterns at a depth of 200 ("pattern too
/// complex"); this bound is ten times that, on a count that includes characters
/// inside sets and escapes, so it never refuses a pattern 5.2 runs.
pub const MAX_PATTERN_ITEMS: usize = 2000;

/// `helpers.pattern(p)`: raises "pattern too complex" for a pattern past
/// [`MAX_PATTERN_ITEMS`] (anything not a string is left to the library's own check).
pub(crate) fn pattern_check(lua: &Lua) -> mlua::Result<mlua::Function> {
    lua.create_function(|_, p: Value| {
        if let Value::String(p) = p {
            let bytes = p.as_bytes();
            if bytes.len() > MAX_PATTERN_ITEMS
                && bytes
                    .iter()
                    .filter(|b| matches!(b, b'(' | b')' | b'?' | b'*' | b'+' | b'-'))
                    .count()
                    > MAX_PATTERN_ITEMS
            {
                return Err(mlua::Error::runtime("pattern too complex"));
            }
        }
        Ok(())
    })
}

/// Puts `bit`, `cjson` and the random generator into `globals`.
pub(crate) fn install(lua: &Lua, globals: &Table) -> mlua::Result<()> {
    globals.raw_set("bit", bit(lua)?)?;
    globals.raw_set("cjson", cjson(lua)?)?;
    globals.raw_set("cmsgpack", super::msgpack::cmsgpack(lua)?)?;
    let math: Table = globals.raw_get("math")?;
    let seed = Rc::new(Cell::new(clock_seed()));
    let s = seed.clone();
    math.raw_set(
        "random",
        lua.create_function(move |_, args: Variadic<f64>| {
            let r = next(&s);
            let unit = (r >> 11) as f64 / (1u64 << 53) as f64;
            let (lo, hi) = match args.len() {
                0 => return Ok(unit),
                1 => (1.0, args[0].floor()),
                2 => (args[0].floor(), args[1].floor()),
                _ => return Err(mlua::Error::runtime("wrong number of arguments")),
            };
            if lo > hi {
                return Err(mlua::Error::runtime("interval is empty"));
            }
            Ok((unit * (hi - lo + 1.0)).floor() + lo)
        })?,
    )?;
    math.raw_set(
        "randomseed",
        lua.create_function(move |_, x: f64| {
            seed.set(x.to_bits() ^ 0x9e37_79b9_7f4a_7c15);
            Ok(())
        })?,
    )?;
    Ok(())
}

fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
        | 1
}

/// xorshift64*: the next number of the generator.
fn next(state: &Cell<u64>) -> u64 {
    let mut x = state.get().max(1);
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    state.set(x);
    x.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

/// The `redis` functions written in Rust (the rest are in `prelude.lua`).
pub(crate) fn redis_helpers(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set(
        "sha1hex",
        lua.create_function(|lua, args: MultiValue| {
            match args.into_iter().collect::<Vec<_>>().as_slice() {
                [v @ (Value::String(_) | Value::Number(_) | Value::Integer(_))] => {
                    let s = lua.coerce_string(v.clone())?.map(|s| s.as_bytes().to_vec());
                    Ok(super::sha1_hex(&s.unwrap_or_default()))
                }
                _ => Err(mlua::Error::runtime(
                    "wrong number of arguments or wrong argument type",
                )),
            }
        })?,
    )?;
    t.raw_set(
        "log",
        lua.create_function(|lua, args: MultiValue| {
            let args: Vec<Value> = args.into_iter().collect();
            if args.len() < 2 {
                return Err(mlua::Error::runtime(
                    "redis.log() requires two arguments or more.",
                ));
            }
            let level = match &args[0] {
                Value::Integer(n) => *n as f64,
                Value::Number(n) => *n,
                _ => -1.0,
            };
            if !(0.0..=3.0).contains(&level) {
                return Err(mlua::Error::runtime("Invalid debug level."));
            }
            let mut line = String::new();
            for (i, a) in args[1..].iter().enumerate() {
                if i > 0 {
                    line.push(' ');
                }
                if let Ok(Some(s)) = lua.coerce_string(a.clone()) {
                    line.push_str(&String::from_utf8_lossy(&s.as_bytes()));
                }
            }
            if level >= 2.0 {
                eprintln!("kvs: script: {line}");
            }
            Ok(())
        })?,
    )?;
    t.raw_set("breakpoint", lua.create_function(|_, ()| Ok(false))?)?;
    t.raw_set("debug", lua.create_function(|_, _: MultiValue| Ok(()))?)?;
    t.raw_set("REDIS_VERSION", "7.2.0")?;
    t.raw_set("REDIS_VERSION_NUM", 0x0007_0200)?;
    Ok(t)
}

/// A number as LuaBitOp takes it: rounded, then reduced modulo 2^32 to a signed
/// 32-bit integer.
fn tobit(x: f64) -> i32 {
    if !x.is_finite() {
        return 0;
    }
    x.round_ties_even().rem_euclid(4_294_967_296.0) as u64 as u32 as i32
}

fn bit(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    let unary = |f: fn(i32) -> i32| lua.create_function(move |_, x: f64| Ok(f(tobit(x)) as f64));
    t.raw_set("tobit", unary(|x| x)?)?;
    t.raw_set("bnot", unary(|x| !x)?)?;
    t.raw_set("bswap", unary(|x| x.swap_bytes())?)?;
    let fold = |f: fn(i32, i32) -> i32| {
        lua.create_function(move |_, (first, rest): (f64, Variadic<f64>)| {
            Ok(rest.iter().fold(tobit(first), |a, &b| f(a, tobit(b))) as f64)
        })
    };
    t.raw_set("band", fold(|a, b| a & b)?)?;
    t.raw_set("bor", fold(|a, b| a | b)?)?;
    t.raw_set("bxor", fold(|a, b| a ^ b)?)?;
    let shift = |f: fn(i32, u32) -> i32| {
        lua.create_function(move |_, (x, n): (f64, f64)| {
            Ok(f(tobit(x), tobit(n) as u32 & 31) as f64)
        })
    };
    t.raw_set("lshift", shift(|x, n| ((x as u32) << n) as i32)?)?;
    t.raw_set("rshift", shift(|x, n| ((x as u32) >> n) as i32)?)?;
    t.raw_set("arshift", shift(|x, n| x >> n)?)?;
    t.raw_set("rol", shift(|x, n| (x as u32).rotate_left(n) as i32)?)?;
    t.raw_set("ror", shift(|x, n| (x as u32).rotate_right(n) as i32)?)?;
    t.raw_set(
        "tohex",
        lua.create_function(|_, (x, n): (f64, Option<f64>)| {
            let mut n = n.map_or(8, tobit);
            let upper = n < 0;
            // The smallest integer has no positive twin: taken as 8 digits.
            n = if n == i32::MIN { 8 } else { n.abs().min(8) };
            let v = tobit(x) as u32;
            let full = if upper {
                format!("{v:08X}")
            } else {
                format!("{v:08x}")
            };
            Ok(full[8 - n as usize..].to_string())
        })?,
    )?;
    Ok(t)
}

/// `cjson.null`: a light userdata holding a null pointer, as lua-cjson's.
fn null() -> Value {
    Value::LightUserData(LightUserData(std::ptr::null_mut()))
}

fn cjson(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set(
        "encode",
        lua.create_function(|_, v: Value| {
            let mut out = Vec::new();
            encode(&v, &mut out, 0).map_err(mlua::Error::runtime)?;
            Ok(mlua::BString::from(out))
        })?,
    )?;
    t.raw_set(
        "decode",
        lua.create_function(|lua, s: mlua::String| {
            let bytes = s.as_bytes();
            let mut p = Parser { s: &bytes, at: 0 };
            p.ws();
            let v = p.value(lua, 0)?;
            p.ws();
            if p.at < p.s.len() {
                return Err(p.fail("the end"));
            }
            Ok(v)
        })?,
    )?;
    t.raw_set("null", null())?;
    // lua-cjson's settings: accepted, the defaults kept (what they return is the
    // default of each).
    for (name, default) in [
        ("encode_keep_buffer", Value::Boolean(true)),
        ("encode_max_depth", Value::Integer(MAX_NESTING as i64)),
        ("decode_max_depth", Value::Integer(MAX_NESTING as i64)),
        ("encode_number_precision", Value::Integer(14)),
        ("encode_invalid_numbers", Value::Boolean(false)),
        ("decode_invalid_numbers", Value::Boolean(true)),
    ] {
        t.raw_set(
            name,
            lua.create_function(move |_, _: MultiValue| Ok(default.clone()))?,
        )?;
    }
    t.raw_set(
        "encode_sparse_array",
        lua.create_function(|_, _: MultiValue| Ok((false, 2, 10)))?,
    )?;
    Ok(t)
}

/// A number as lua-cjson writes it (`%.14g`).
pub(crate) fn fmt_number(v: f64) -> String {
    fmt_g(v, 14)
}

/// A number as C's `%.<digits>g` writes it.
pub(crate) fn fmt_g(v: f64, digits: i32) -> String {
    if !v.is_finite() {
        return if v.is_nan() {
            "nan"
        } else if v > 0.0 {
            "inf"
        } else {
            "-inf"
        }
        .into();
    }
    let p = (digits - 1) as usize;
    let sci = format!("{v:.p$e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..digits).contains(&exp) {
        let mant = mant.trim_end_matches('0').trim_end_matches('.');
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mant}e{sign}{:02}", exp.abs());
    }
    let decimals = (digits - 1 - exp).max(0) as usize;
    let fixed = format!("{v:.decimals$}");
    if fixed.contains('.') {
        fixed
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    } else {
        fixed
    }
}

fn encode(v: &Value, out: &mut Vec<u8>, depth: usize) -> Result<(), String> {
    match v {
        Value::Nil => out.extend_from_slice(b"null"),
        Value::LightUserData(p) if p.0.is_null() => out.extend_from_slice(b"null"),
        Value::Boolean(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Integer(n) => out.extend_from_slice(n.to_string().as_bytes()),
        Value::Number(n) => {
            if !n.is_finite() {
                return Err("Cannot serialise number: must not be NaN or Inf".into());
            }
            out.extend_from_slice(fmt_number(*n).as_bytes());
        }
        Value::String(s) => string(&s.as_bytes(), out),
        Value::Table(t) => {
            if depth >= MAX_NESTING {
                return Err(format!(
                    "Cannot serialise, excessive nesting ({})",
                    depth + 1
                ));
            }
            table(t, out, depth + 1)?
        }
        other => {
            return Err(format!(
                "Cannot serialise {}: type not supported",
                other.type_name()
            ))
        }
    }
    Ok(())
}

fn string(s: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    for &c in s {
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'/' => out.extend_from_slice(b"\\/"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            8 => out.extend_from_slice(b"\\b"),
            12 => out.extend_from_slice(b"\\f"),
            c if c < 0x20 || c == 0x7f => out.extend_from_slice(format!("\\u{c:04x}").as_bytes()),
            c => out.push(c),
        }
    }
    out.push(b'"');
}

/// What a table holds, counted one pair at a time (a Rust handle per value held at
/// once would run out of Lua 5.1's 8,000 handle slots on a large table).
pub(crate) struct Shape {
    /// Its pairs.
    pub(crate) pairs: usize,
    /// The largest key when every key is a positive integer (None otherwise, and for
    /// an empty table).
    pub(crate) max_index: Option<f64>,
}

/// The [`Shape`] of `t` (raw: no metamethods run).
pub(crate) fn shape(t: &Table) -> mlua::Result<Shape> {
    let (mut pairs, mut max, mut all_int) = (0usize, 0.0f64, true);
    for pair in t.pairs::<Value, Value>() {
        let (k, _) = pair?;
        pairs += 1;
        match k {
            Value::Integer(n) if n >= 1 => max = max.max(n as f64),
            Value::Number(n) if n >= 1.0 && n.fract() == 0.0 => max = max.max(n),
            _ => all_int = false,
        }
    }
    Ok(Shape {
        pairs,
        max_index: (all_int && pairs > 0).then_some(max),
    })
}

fn table(t: &Table, out: &mut Vec<u8>, depth: usize) -> Result<(), String> {
    let shape = shape(t).map_err(|e| e.to_string())?;
    // An array: every key a positive integer; its length is the largest key.
    if let Some(max) = shape.max_index {
        if max > 2.0 * shape.pairs as f64 && max > 10.0 {
            return Err("Cannot serialise table: excessively sparse array".into());
        }
        out.push(b'[');
        for i in 1..=max as i64 {
            if i > 1 {
                out.push(b',');
            }
            let v = t.raw_get::<Value>(i).map_err(|e| e.to_string())?;
            encode(&v, out, depth)?;
        }
        out.push(b']');
        return Ok(());
    }
    out.push(b'{');
    for (i, pair) in t.pairs::<Value, Value>().enumerate() {
        let (k, v) = pair.map_err(|e| e.to_string())?;
        if i > 0 {
            out.push(b',');
        }
        match &k {
            Value::String(s) => string(&s.as_bytes(), out),
            Value::Integer(n) => string(n.to_string().as_bytes(), out),
            Value::Number(n) => string(fmt_number(*n).as_bytes(), out),
            _ => return Err("Cannot serialise table: table key must be a number or string".into()),
        }
        out.push(b':');
        encode(&v, out, depth)?;
    }
    out.push(b'}');
    Ok(())
}

/// A JSON reader producing Lua values.
struct Parser<'a> {
    s: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn fail(&self, what: &str) -> mlua::Error {
        mlua::Error::runtime(format!(
            "Expected {what} but found invalid token at character {}",
            self.at + 1
        ))
    }

    fn ws(&mut self) {
        while self.s.get(self.at).is_some_and(|c| c.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    fn eat(&mut self, word: &[u8]) -> bool {
        if self.s[self.at..].starts_with(word) {
            self.at += word.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self, lua: &Lua, depth: usize) -> mlua::Result<Value> {
        if depth >= MAX_NESTING {
            return Err(mlua::Error::runtime(format!(
                "Found too many nested data structures ({}) at character {}",
                depth + 1,
                self.at + 1
            )));
        }
        match self.s.get(self.at) {
            Some(b'{') => {
                self.at += 1;
                let t = lua.create_table()?;
                self.ws();
                if self.eat(b"}") {
                    return Ok(Value::Table(t));
                }
                loop {
                    self.ws();
                    if self.s.get(self.at) != Some(&b'"') {
                        return Err(self.fail("object key string"));
                    }
                    let k = self.string()?;
                    self.ws();
                    if !self.eat(b":") {
                        return Err(self.fail("colon"));
                    }
                    self.ws();
                    let v = self.value(lua, depth + 1)?;
                    t.raw_set(lua.create_string(&k)?, v)?;
                    self.ws();
                    if self.eat(b"}") {
                        return Ok(Value::Table(t));
                    }
                    if !self.eat(b",") {
                        return Err(self.fail("comma or object end"));
                    }
                }
            }
            Some(b'[') => {
                self.at += 1;
                let t = lua.create_table()?;
                self.ws();
                if self.eat(b"]") {
                    return Ok(Value::Table(t));
                }
                let mut i = 1;
                loop {
                    self.ws();
                    let v = self.value(lua, depth + 1)?;
                    t.raw_set(i, v)?;
                    i += 1;
                    self.ws();
                    if self.eat(b"]") {
                        return Ok(Value::Table(t));
                    }
                    if !self.eat(b",") {
                        return Err(self.fail("comma or array end"));
                    }
                }
            }
            Some(b'"') => Ok(Value::String(lua.create_string(self.string()?)?)),
            Some(b't') if self.eat(b"true") => Ok(Value::Boolean(true)),
            Some(b'f') if self.eat(b"false") => Ok(Value::Boolean(false)),
            Some(b'n') if self.eat(b"null") => Ok(null()),
            Some(c) if *c == b'-' || c.is_ascii_digit() => {
                let start = self.at;
                while self
                    .s
                    .get(self.at)
                    .is_some_and(|c| c.is_ascii_digit() || b"+-.eExX".contains(c))
                {
                    self.at += 1;
                }
                let text = std::str::from_utf8(&self.s[start..self.at]).unwrap_or("");
                text.parse::<f64>().map(Value::Number).map_err(|_| {
                    self.at = start;
                    self.fail("value")
                })
            }
            _ => Err(self.fail("value")),
        }
    }

    /// A string at `at` (which is `"`), escapes resolved.
    fn string(&mut self) -> mlua::Result<Vec<u8>> {
        self.at += 1;
        let mut out = Vec::new();
        loop {
            let Some(&c) = self.s.get(self.at) else {
                return Err(self.fail("string end"));
            };
            self.at += 1;
            match c {
                b'"' => return Ok(out),
                b'\\' => {
                    let Some(&e) = self.s.get(self.at) else {
                        return Err(self.fail("escape"));
                    };
                    self.at += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'u' => {
                            let mut cp = self.hex4()?;
                            if (0xd800..0xdc00).contains(&cp) && self.eat(b"\\u") {
                                let lo = self.hex4()?;
                                cp = 0x10000
                                    + ((cp - 0xd800) << 10)
                                    + (lo.wrapping_sub(0xdc00) & 0x3ff);
                            }
                            let ch = char::from_u32(cp).unwrap_or('\u{fffd}');
                            let mut b = [0; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut b).as_bytes());
                        }
                        other => out.push(other),
                    }
                }
                c => out.push(c),
            }
        }
    }

    fn hex4(&mut self) -> mlua::Result<u32> {
        let h = self
            .s
            .get(self.at..self.at + 4)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .ok_or_else(|| self.fail("unicode escape"))?;
        self.at += 4;
        Ok(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_as_percent_14g() {
        assert_eq!(fmt_number(1.5), "1.5");
        assert_eq!(fmt_number(3.0), "3");
        assert_eq!(fmt_number(1e20), "1e+20");
        assert_eq!(fmt_number(0.1), "0.1");
        assert_eq!(fmt_number(1.0 / 3.0), "0.33333333333333");
        assert_eq!(fmt_number(1.25e-7), "1.25e-07");
        assert_eq!(fmt_number(9007199254740991.0), "9.007199254741e+15");
        assert_eq!(fmt_g(9007199254740991.0, 17), "9007199254740991");
        assert_eq!(fmt_g(0.1, 17), "0.10000000000000001");
        assert_eq!(fmt_g(3.5, 17), "3.5");
    }

    #[test]
    fn bit_numbers_wrap_to_32_bits() {
        assert_eq!(tobit(4_294_967_295.0), -1);
        assert_eq!(tobit(2_147_483_648.0), i32::MIN);
        assert_eq!(tobit(-1.0), -1);
        assert_eq!(tobit(1.5), 2);
    }
}
