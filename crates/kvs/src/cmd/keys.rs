//! The generic key family: DEL/UNLINK, EXISTS, TYPE, EXPIRE/PEXPIRE/EXPIREAT/PEXPIREAT,
//! TTL/PTTL, EXPIRETIME/PEXPIRETIME, PERSIST, KEYS, SCAN, RENAME/RENAMENX, COPY, TOUCH,
//! RANDOMKEY, OBJECT. Arity is checked by the table before a handler runs.

use super::{eq, glob, lower, parse_i64, Ctx, NOT_INT, SYNTAX};
use crate::resp::Writer;
use crate::value::Value;

/// DEL key [key ...] and UNLINK (the same here: values are freed at once).
pub fn del(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let now = ctx.now;
    ctx.keys.lock_keys(args[1..].iter().copied());
    // UNLINK (and DEL with `lazyfree-lazy-user-del yes`) frees big values in the
    // background.
    let lazy = eq(args[0], "unlink")
        || ctx
            .config
            .compat
            .get("lazyfree-lazy-user-del")
            .is_some_and(|v| v == "yes");
    let mut removed = 0;
    for k in &args[1..] {
        if ctx.keys.contains(k, now) {
            if let Some(e) = ctx.keys.remove(k) {
                if lazy {
                    crate::lazyfree::free_value(e.value);
                }
            }
            ctx.log_del(k);
            removed += 1;
        }
    }
    w.int(removed);
}

/// EXISTS key [key ...]: how many of the keys exist (a key named twice counts twice).
pub fn exists(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let now = ctx.now;
    ctx.keys.lock_keys(args[1..].iter().copied());
    let c = args[1..]
        .iter()
        .filter(|k| ctx.keys.contains(k, now))
        .count();
    w.int(c as i64);
}

/// TYPE key.
pub fn type_(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let t = ctx
        .keys
        .get_quiet(args[1], ctx.now)
        .map_or("none", |e| e.value.type_name());
    w.simple(t);
}

/// EXPIRE / PEXPIRE / EXPIREAT / PEXPIREAT key time [NX | XX | GT | LT].
pub fn expire(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (name, now) = (args[0], ctx.now);
    // Redis 7's options: NX (no deadline yet), XX (has one), GT / LT (later / earlier
    // than the current one; no deadline counts as infinite).
    let (mut nx, mut xx, mut gt, mut lt) = (false, false, false, false);
    for a in &args[3..] {
        match lower(a).as_str() {
            "nx" => nx = true,
            "xx" => xx = true,
            "gt" => gt = true,
            "lt" => lt = true,
            _ => {
                return w.error(&format!(
                    "ERR Unsupported option {}",
                    String::from_utf8_lossy(a)
                ))
            }
        }
    }
    if nx && (xx || gt || lt) {
        return w.error("ERR NX and XX, GT or LT options at the same time are not compatible");
    }
    if gt && lt {
        return w.error("ERR GT and LT options at the same time are not compatible");
    }
    let Some(t) = parse_i64(args[2]) else {
        return w.error(NOT_INT);
    };
    // EXPIRE and EXPIREAT take seconds; EXPIREAT and PEXPIREAT an absolute time.
    let ms = if eq(name, "expire") || eq(name, "expireat") {
        t.checked_mul(1000)
    } else {
        Some(t)
    };
    let absolute = eq(name, "expireat") || eq(name, "pexpireat");
    let at = if absolute {
        ms
    } else {
        ms.and_then(|ms| (now as i64).checked_add(ms))
    };
    let Some(at) = at else {
        return w.error(&format!(
            "ERR invalid expire time in '{}' command",
            lower(name)
        ));
    };
    let Some(cur) = ctx.keys.get(args[1], now).map(|e| e.expires_at as i64) else {
        return w.int(0);
    };
    if (nx && cur != 0)
        || (xx && cur == 0)
        || (gt && (cur == 0 || at <= cur))
        || (lt && cur != 0 && at >= cur)
    {
        return w.int(0);
    }
    if at <= now as i64 {
        ctx.keys.remove(args[1]);
        ctx.log_del(args[1]);
    } else {
        ctx.keys.set_deadline(args[1], at as u64, now);
        ctx.log_deadline(args[1], at as u64);
    }
    w.int(1);
}

/// TTL / PTTL key: -2 no key, -1 no deadline.
pub fn ttl(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let now = ctx.now;
    let r = match ctx.keys.get_quiet(args[1], now) {
        None => -2,
        Some(e) if e.expires_at == 0 => -1,
        Some(e) => {
            let ms = (e.expires_at - now) as i64;
            if eq(args[0], "ttl") {
                (ms + 500) / 1000
            } else {
                ms
            }
        }
    };
    w.int(r);
}

/// PERSIST key.
pub fn persist(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let had = ctx
        .keys
        .get(args[1], ctx.now)
        .is_some_and(|e| e.expires_at != 0);
    if had {
        ctx.keys.set_deadline(args[1], 0, ctx.now);
        ctx.log_deadline(args[1], 0);
    }
    w.int(had as i64);
}

/// KEYS pattern.
pub fn keys(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let mut keys: Vec<Vec<u8>> = Vec::new();
    ctx.keys.for_each_key(ctx.now, |k| {
        if glob(args[1], k) {
            keys.push(k.to_vec());
        }
    });
    w.array(keys.len());
    for k in keys {
        w.bulk(&k);
    }
}

/// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type].
pub fn scan(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let cursor = match std::str::from_utf8(args[1])
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
    {
        Some(c) => c,
        None => return w.error("ERR invalid cursor"),
    };
    let (mut pattern, mut count, mut only_type) = (None, 10usize, None);
    let mut i = 2;
    while i < args.len() {
        if i + 1 >= args.len() {
            return w.error(SYNTAX);
        }
        if eq(args[i], "match") {
            pattern = Some(args[i + 1]);
        } else if eq(args[i], "count") {
            match parse_i64(args[i + 1]) {
                Some(c) if c >= 1 => count = (c as usize).min(1 << 20),
                Some(_) => return w.error(SYNTAX),
                None => return w.error(NOT_INT),
            }
        } else if eq(args[i], "type") {
            only_type = Some(lower(args[i + 1]));
        } else {
            return w.error(SYNTAX);
        }
        i += 2;
    }
    let mut keys: Vec<Vec<u8>> = Vec::new();
    let next = ctx.keys.scan(cursor, count, ctx.now, |k, e| {
        let type_ok = only_type
            .as_deref()
            .is_none_or(|t| t == e.value.type_name());
        if type_ok && pattern.is_none_or(|p| glob(p, k)) {
            keys.push(k.to_vec());
        }
    });
    w.array(2);
    w.bulk(next.to_string().as_bytes());
    w.array(keys.len());
    for k in keys {
        w.bulk(&k);
    }
}

/// EXPIRETIME / PEXPIRETIME key: the absolute deadline; -2 no key, -1 no deadline.
pub fn expiretime(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let r = match ctx.keys.get_quiet(args[1], ctx.now) {
        None => -2,
        Some(e) if e.expires_at == 0 => -1,
        Some(e) if eq(args[0], "expiretime") => (e.expires_at / 1000) as i64,
        Some(e) => e.expires_at as i64,
    };
    w.int(r);
}

/// RENAME / RENAMENX key newkey: the value and its deadline move.
pub fn rename(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (from, to, now) = (args[1], args[2], ctx.now);
    let nx = eq(args[0], "renamenx");
    ctx.keys.lock_keys([from, to].into_iter());
    let Some(e) = ctx.keys.get(from, now).cloned() else {
        return w.error("ERR no such key");
    };
    if from == to {
        return if nx { w.int(0) } else { w.simple("OK") };
    }
    if nx && ctx.keys.contains(to, now) {
        return w.int(0);
    }
    ctx.keys.remove(from);
    ctx.log_del(from);
    ctx.keys.put(to, e.value, e.expires_at, now);
    ctx.log_key(to);
    if nx {
        w.int(1)
    } else {
        w.simple("OK")
    }
}

/// TOUCH key [key ...]: how many exist (each marked as used).
pub fn touch(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let now = ctx.now;
    ctx.keys.lock_keys(args[1..].iter().copied());
    let n = args[1..]
        .iter()
        .filter(|k| ctx.keys.get(k, now).is_some())
        .count();
    w.int(n as i64);
}

/// RANDOMKEY.
pub fn randomkey(ctx: &mut Ctx, _args: &[&[u8]], w: &mut Writer) {
    let seed = ctx.now ^ (ctx.stats.commands.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    match ctx.keys.random_key(ctx.now, seed) {
        Some(k) => w.bulk(&k),
        None => w.null(),
    }
}

/// OBJECT ENCODING | REFCOUNT | FREQ | HELP.
pub fn object(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let sub = args[1];
    if eq(sub, "help") && args.len() == 2 {
        let lines = [
            "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "ENCODING <key>",
            "    Return the kind of internal representation used in order to store the value",
            "    associated with a <key>.",
            "FREQ <key>",
            "    Return the access frequency index of the <key>. The returned integer is",
            "    proportional to the logarithm of the recent access frequency of the key.",
            "REFCOUNT <key>",
            "    Return the number of references of the value associated with the specified",
            "    <key>.",
        ];
        super::help(w, &lines);
        return;
    }
    let known = ["encoding", "refcount", "freq", "idletime", "help"];
    let Some(subname) = known.iter().find(|k| eq(sub, k)) else {
        return w.error(&format!(
            "ERR unknown subcommand '{}'. Try OBJECT HELP.",
            String::from_utf8_lossy(sub)
        ));
    };
    if args.len() != 3 {
        return w.error(&format!(
            "ERR wrong number of arguments for 'object|{subname}' command"
        ));
    }
    let idle_since = ctx
        .keys
        .store(args[2])
        .peek(args[2])
        .map_or(ctx.now, |e| e.used_ms());
    // Redis's OBJECT does not count as a use of the key (LRU, LFU).
    let Some(e) = ctx.keys.get_quiet(args[2], ctx.now) else {
        return w.null();
    };
    let lfu = ctx.config.policy.is_lfu();
    if eq(sub, "encoding") {
        // Redis's encodings: for a string a decimal integer, a short string or a long
        // one; for a collection its compact form while small, else a hash table.
        let enc = match &e.value {
            Value::Str(v) if v.len() <= 20 && parse_i64(v).is_some() => "int",
            Value::Str(v) if v.len() <= 44 => "embstr",
            Value::Str(_) => "raw",
            Value::Hash(h)
                if h.len() <= 128 && h.iter().all(|(f, v)| f.len() <= 64 && v.len() <= 64) =>
            {
                "listpack"
            }
            Value::Set(s) if s.len() <= 512 && s.iter().all(|m| parse_i64(m).is_some()) => "intset",
            Value::Set(s) if s.len() <= 128 && s.iter().all(|m| m.len() <= 64) => "listpack",
            Value::List(l) if l.len() <= 128 && l.iter().all(|m| m.len() <= 64) => "listpack",
            Value::List(_) => "quicklist",
            Value::ZSet(z) if z.len() <= 128 && z.iter().all(|(m, _)| m.len() <= 64) => "listpack",
            Value::ZSet(_) => "skiplist",
            Value::Stream(_) => "stream",
            _ => "hashtable",
        };
        w.bulk(enc.as_bytes());
    } else if eq(sub, "refcount") {
        w.int(1);
    } else if eq(sub, "freq") {
        if !lfu {
            return w.error("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.");
        }
        w.int(e.freq(ctx.config.lfu(), ctx.now) as i64);
    } else if lfu {
        w.error("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.");
    } else {
        // IDLETIME: seconds since the key was last read or written (this lookup
        // aside: it was read from the entry before the lookup marked it used).
        w.int((ctx.now.saturating_sub(idle_since) / 1000) as i64);
    }
}
