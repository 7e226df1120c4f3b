//! Command execution: one request's arguments in, one reply out, against the store and
//! the connection's session. Replies and error texts follow Redis's, so clients and
//! their error handling work unchanged.

use crate::aof::{Effect, Fsync};
use crate::keyspace::Keys;
use crate::limits::OutputLimits;
use crate::resp::{Limits, Proto, Writer};

/// Server-wide settings a command can read or change.
#[derive(Clone, Debug)]
pub struct Config {
    /// `requirepass`: clients must AUTH first when set.
    pub requirepass: Option<Vec<u8>>,
    /// `proto-max-bulk-len`, `proto-max-multibulk-len`, `proto-inline-max-size`.
    pub limits: Limits,
    /// `client-query-buffer-limit`: largest input buffer of one client before it is
    /// disconnected.
    pub max_query_buffer: usize,
    /// Port, for INFO and CLUSTER replies.
    pub port: u16,
    /// Address the server listens on, for CLUSTER replies.
    pub bind: String,
    /// `maxmemory` in bytes of [`crate::store::Store::memory`], summed over the shards
    /// (0: no limit).
    pub maxmemory: usize,
    /// What happens at the limit.
    pub policy: Eviction,
    /// `appendonly` (set at start only).
    pub appendonly: bool,
    /// `appendfsync`: CONFIG SET changes the running log's policy.
    pub appendfsync: Fsync,
    /// Event loops (`threads`, set at start only).
    pub threads: usize,
    /// `client-output-buffer-limit`: pending reply bytes allowed per client class.
    pub output_limits: OutputLimits,
    /// `tcp-backlog`: the listening socket's queue of connections not yet accepted
    /// (set at start only; the kernel caps it at `net.core.somaxconn`).
    pub tcp_backlog: u32,
}

/// The names [`Config::set`] takes while running.
const RUNTIME: &[&str] = &[
    "requirepass",
    "maxmemory",
    "maxmemory-policy",
    "proto-max-bulk-len",
    "proto-max-multibulk-len",
    "proto-inline-max-size",
    "client-query-buffer-limit",
    "client-output-buffer-limit",
    "appendfsync",
];

/// Settings fixed once the server runs (CONFIG GET shows them; CONFIG SET refuses).
const IMMUTABLE: &[&str] = &[
    "port",
    "bind",
    "appendonly",
    "threads",
    "databases",
    "tcp-backlog",
];

impl Config {
    /// Every setting, by its Redis name, with its current value as CONFIG GET shows it.
    pub fn params(&self) -> Vec<(&'static str, String)> {
        let yes_no = |b: bool| if b { "yes" } else { "no" }.to_string();
        vec![
            ("port", self.port.to_string()),
            ("bind", self.bind.clone()),
            (
                "requirepass",
                self.requirepass
                    .as_ref()
                    .map(|p| String::from_utf8_lossy(p).into_owned())
                    .unwrap_or_default(),
            ),
            ("proto-max-bulk-len", self.limits.max_bulk.to_string()),
            (
                "proto-max-multibulk-len",
                self.limits.max_multibulk.to_string(),
            ),
            ("proto-inline-max-size", self.limits.max_inline.to_string()),
            (
                "client-query-buffer-limit",
                self.max_query_buffer.to_string(),
            ),
            ("client-output-buffer-limit", self.output_limits.show()),
            ("maxmemory", self.maxmemory.to_string()),
            ("maxmemory-policy", self.policy.name().into()),
            ("appendonly", yes_no(self.appendonly)),
            ("appendfsync", self.appendfsync.name().into()),
            ("threads", self.threads.to_string()),
            ("tcp-backlog", self.tcp_backlog.to_string()),
            ("save", String::new()),
            ("databases", "1".into()),
        ]
    }

    /// Applies one setting that may change while the server runs. The error is the
    /// reason, for `ERR CONFIG SET failed (possibly related to argument 'NAME') - ...`.
    pub fn set(&mut self, name: &str, value: &[u8]) -> Result<(), String> {
        let text = || String::from_utf8_lossy(value).into_owned();
        let memory =
            |min: usize, what: &str| match std::str::from_utf8(value).ok().and_then(parse_memory) {
                Some(v) if v >= min => Ok(v),
                _ => Err(format!("argument must be {what}")),
            };
        let name = name.to_ascii_lowercase();
        match name.as_str() {
            "requirepass" => self.requirepass = (!value.is_empty()).then(|| value.to_vec()),
            "maxmemory" => self.maxmemory = memory(0, "a memory value")?,
            "maxmemory-policy" => {
                self.policy = text().parse().map_err(|_| "Invalid argument".to_string())?
            }
            "proto-max-bulk-len" => {
                self.limits.max_bulk = memory(1 << 20, "a memory value of at least 1mb")?
            }
            "proto-max-multibulk-len" => {
                self.limits.max_multibulk = memory(1, "a count of at least 1")?
            }
            "proto-inline-max-size" => {
                self.limits.max_inline = memory(1024, "a memory value of at least 1kb")?
            }
            "client-query-buffer-limit" => {
                self.max_query_buffer = memory(1 << 20, "a memory value of at least 1mb")?
            }
            "client-output-buffer-limit" => self.output_limits.set(&text())?,
            "appendfsync" => self.appendfsync = text().parse()?,
            _ if IMMUTABLE.contains(&name.as_str()) => {
                return Err("can't set immutable config".into())
            }
            _ => return Err(format!("unknown setting '{name}'")),
        }
        debug_assert!(RUNTIME.contains(&name.as_str()));
        Ok(())
    }
}

/// `maxmemory-policy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Eviction {
    /// Writes that may add memory get Redis's OOM error.
    #[default]
    NoEviction,
    /// Evict keys by sampled LRU (5 samples) until under the limit.
    AllKeysLru,
}

impl Eviction {
    /// The Redis name.
    pub fn name(self) -> &'static str {
        match self {
            Eviction::NoEviction => "noeviction",
            Eviction::AllKeysLru => "allkeys-lru",
        }
    }
}

impl std::str::FromStr for Eviction {
    type Err = String;
    fn from_str(s: &str) -> Result<Eviction, String> {
        match s.to_ascii_lowercase().as_str() {
            "noeviction" => Ok(Eviction::NoEviction),
            "allkeys-lru" => Ok(Eviction::AllKeysLru),
            _ => Err(format!(
                "maxmemory-policy must be noeviction or allkeys-lru, not '{s}'"
            )),
        }
    }
}

/// A memory size as Redis writes them: `100`, `10k` (1000), `10kb` (1024), `m`/`mb`,
/// `g`/`gb`.
pub fn parse_memory(s: &str) -> Option<usize> {
    let s = s.trim().to_ascii_lowercase();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: usize = num.parse().ok()?;
    let mul: usize = match unit {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1 << 10,
        "m" => 1_000_000,
        "mb" => 1 << 20,
        "g" => 1_000_000_000,
        "gb" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(mul)
}

impl Default for Config {
    fn default() -> Config {
        Config {
            requirepass: None,
            limits: Limits::default(),
            max_query_buffer: 1 << 30,
            port: 6379,
            bind: "127.0.0.1".into(),
            maxmemory: 0,
            policy: Eviction::NoEviction,
            appendonly: false,
            appendfsync: Fsync::EverySec,
            threads: 1,
            output_limits: OutputLimits::default(),
            tcp_backlog: 511,
        }
    }
}

/// Per-connection state.
#[derive(Debug, Default)]
pub struct Session {
    /// Client id (CLIENT ID).
    pub id: u64,
    /// Reply encoding.
    pub proto: Proto,
    /// Passed AUTH (or no password is set).
    pub authed: bool,
    /// CLIENT SETNAME.
    pub name: Option<Vec<u8>>,
    /// QUIT was received: close after the reply.
    pub quit: bool,
}

/// Counters for INFO (a loop's own, until added to the shared ones; the totals).
#[derive(Debug, Default, Clone)]
pub struct Stats {
    /// Commands executed.
    pub commands: u64,
    /// Connections accepted.
    pub connections: u64,
    /// Keys removed by expiry.
    pub expired: u64,
    /// Successful key lookups.
    pub hits: u64,
    /// Failed key lookups.
    pub misses: u64,
    /// Keys evicted by maxmemory.
    pub evicted: u64,
    /// Clients connected now.
    pub connected: u64,
    /// Server start, ms since the epoch.
    pub started_ms: u64,
}

/// Everything a command runs against.
#[derive(Debug)]
pub struct Ctx<'a, 's> {
    /// The keyspace: the shards this command has locked, locking more on first use
    /// (see [`crate::keyspace`]); the server releases them after the command.
    pub keys: &'a mut Keys<'s>,
    /// The loop's copy of the settings (CONFIG SET changes the shared ones and this).
    pub config: &'a mut Config,
    /// The caller's session.
    pub session: &'a mut Session,
    /// The loop's counters, not yet added to the shared ones.
    pub stats: &'a mut Stats,
    /// Current time, ms since the epoch.
    pub now: u64,
    /// Changes made, for the append-only log.
    pub effects: &'a mut Vec<Effect>,
    /// Whether to record effects (false without a log: no copies of values).
    pub logging: bool,
}

impl Ctx<'_, '_> {
    /// Logs `key`'s current state: its value and deadline, or its absence.
    fn log_key(&mut self, key: &[u8]) {
        if !self.logging {
            return;
        }
        let e = match self.keys.get(key, self.now) {
            Some(e) => Effect::Set {
                key: key.to_vec(),
                value: e.value.clone(),
                expires_at: e.expires_at,
            },
            None => Effect::Del { key: key.to_vec() },
        };
        self.effects.push(e);
    }

    fn log_del(&mut self, key: &[u8]) {
        if !self.logging {
            return;
        }
        self.effects.push(Effect::Del { key: key.to_vec() });
    }

    fn log_deadline(&mut self, key: &[u8], at: u64) {
        if !self.logging {
            return;
        }
        self.effects.push(Effect::Deadline {
            key: key.to_vec(),
            at,
        });
    }
}

fn lower(a: &[u8]) -> String {
    String::from_utf8_lossy(a).to_ascii_lowercase()
}

fn eq(a: &[u8], b: &str) -> bool {
    a.eq_ignore_ascii_case(b.as_bytes())
}

fn parse_i64(a: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(a).ok()?;
    if s.is_empty() || s.starts_with('+') || (s.len() > 1 && s.starts_with('0')) {
        return if s == "0" { Some(0) } else { None };
    }
    s.parse().ok()
}

/// Constant-time equality of two byte strings (the length is not secret).
fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";

/// The check of `AUTH [user] pass` and `HELLO ... AUTH user pass`: there is one user,
/// `default` (the name is case-sensitive, as Redis's user names are), whose password
/// is `requirepass`; with no password set it takes any password (Redis's `nopass`).
fn authenticate(config: &Config, user: Option<&[u8]>, pass: &[u8]) -> bool {
    if user.is_some_and(|u| u != b"default") {
        return false;
    }
    match &config.requirepass {
        None => true,
        Some(p) => ct_eq(p, pass),
    }
}

const NOT_INT: &str = "ERR value is not an integer or out of range";
const SYNTAX: &str = "ERR syntax error";

fn arity(w: &mut Writer, name: &[u8]) {
    w.error(&format!(
        "ERR wrong number of arguments for '{}' command",
        lower(name)
    ));
}

/// Runs one command; `args` is non-empty.
pub fn exec(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let name = args[0];
    ctx.stats.commands += 1;
    let needs_auth = ctx.config.requirepass.is_some() && !ctx.session.authed;
    if needs_auth && !(eq(name, "auth") || eq(name, "hello") || eq(name, "quit")) {
        w.error("NOAUTH Authentication required.");
        return;
    }
    let n = args.len();
    if !within_memory(ctx, name) {
        return w.error("OOM command not allowed when used memory > 'maxmemory'.");
    }
    // While the log cannot be written, writes are refused (and PING, as Redis does, so
    // a monitor sees the fault); reads go on. A write already applied when a commit
    // failed keeps its reply until the log holds it (see the server's round).
    if let Some(log) = ctx.keys.shared().log.as_ref().filter(|l| l.failing()) {
        if eq(name, "ping") || WRITE.iter().any(|c| eq(name, c)) {
            if let Some(why) = log.write_error() {
                return w.error(&why);
            }
        }
    }
    // (name, minimum argument count including the name, exact?)
    macro_rules! need {
        ($min:expr) => {
            if n < $min {
                return arity(w, name);
            }
        };
        ($min:expr, exact) => {
            if n != $min {
                return arity(w, name);
            }
        };
    }
    let now = ctx.now;
    // The name in lower case without allocating (longer names are unknown anyway).
    let mut buf = [0u8; 24];
    let lname = if name.len() <= buf.len() {
        for (d, c) in buf.iter_mut().zip(name) {
            *d = c.to_ascii_lowercase();
        }
        std::str::from_utf8(&buf[..name.len()]).unwrap_or("")
    } else {
        ""
    };
    match lname {
        "ping" => match n {
            1 => w.simple("PONG"),
            2 => w.bulk(args[1]),
            _ => arity(w, name),
        },
        "echo" => {
            need!(2, exact);
            w.bulk(args[1]);
        }
        "quit" => {
            ctx.session.quit = true;
            w.simple("OK");
        }
        "auth" => {
            let (user, pass) = match n {
                2 => (None, args[1]),
                3 => (Some(args[1]), args[2]),
                _ => return arity(w, name),
            };
            if user.is_none() && ctx.config.requirepass.is_none() {
                return w.error("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?");
            }
            if authenticate(ctx.config, user, pass) {
                ctx.session.authed = true;
                w.simple("OK");
            } else {
                w.error(WRONGPASS);
            }
        }
        "hello" => hello(ctx, args, w),
        "select" => {
            need!(2, exact);
            match parse_i64(args[1]) {
                Some(0) => w.simple("OK"),
                Some(_) => w.error("ERR DB index is out of range"),
                None => w.error(NOT_INT),
            }
        }
        "command" => {
            if n >= 2 && eq(args[1], "count") {
                w.int(COMMANDS.len() as i64);
            } else if n >= 2 && eq(args[1], "docs") {
                w.map(0);
            } else {
                w.array(0);
            }
        }
        "client" => client(ctx, args, w),
        "dbsize" => w.int(ctx.keys.len() as i64),
        "flushall" | "flushdb" => {
            ctx.keys.clear();
            if ctx.logging {
                ctx.effects.push(Effect::Clear);
            }
            w.simple("OK");
        }
        "get" => {
            need!(2, exact);
            get_reply(ctx, args[1], w);
        }
        "set" => set(ctx, args, w),
        "setnx" => {
            need!(3, exact);
            if ctx.keys.contains(args[1], now) {
                w.int(0);
            } else {
                ctx.keys.set(args[1], args[2].to_vec(), 0, now);
                ctx.log_key(args[1]);
                w.int(1);
            }
        }
        "getdel" => {
            need!(2, exact);
            match ctx.keys.get(args[1], now).is_some() {
                true => {
                    let e = ctx.keys.remove(args[1]);
                    ctx.log_del(args[1]);
                    w.bulk(&e.map(|e| e.value).unwrap_or_default());
                }
                false => w.null(),
            }
        }
        "getex" => getex(ctx, args, w),
        "mget" => {
            need!(2);
            ctx.keys.lock_keys(args[1..].iter().copied());
            w.array(n - 1);
            for k in &args[1..] {
                get_reply(ctx, k, w);
            }
        }
        "mset" => {
            if n < 3 || n.is_multiple_of(2) {
                return arity(w, name);
            }
            // Every shard the keys fall in, locked before the first write: a reader
            // sees all of the MSET or none of it.
            ctx.keys.lock_keys(args[1..].iter().step_by(2).copied());
            for kv in args[1..].chunks(2) {
                ctx.keys.set(kv[0], kv[1].to_vec(), 0, now);
                ctx.log_key(kv[0]);
            }
            w.simple("OK");
        }
        "del" | "unlink" => {
            need!(2);
            ctx.keys.lock_keys(args[1..].iter().copied());
            let mut removed = 0;
            for k in &args[1..] {
                if ctx.keys.contains(k, now) {
                    ctx.keys.remove(k);
                    ctx.log_del(k);
                    removed += 1;
                }
            }
            w.int(removed);
        }
        "exists" => {
            need!(2);
            ctx.keys.lock_keys(args[1..].iter().copied());
            let c = args[1..]
                .iter()
                .filter(|k| ctx.keys.contains(k, now))
                .count();
            w.int(c as i64);
        }
        "type" => {
            need!(2, exact);
            w.simple(if ctx.keys.contains(args[1], now) {
                "string"
            } else {
                "none"
            });
        }
        "incr" | "decr" => {
            need!(2, exact);
            let d = if eq(name, "incr") { 1 } else { -1 };
            incr_by(ctx, args[1], d, w);
        }
        "incrby" | "decrby" => {
            need!(3, exact);
            let Some(d) = parse_i64(args[2]) else {
                return w.error(NOT_INT);
            };
            let d = if eq(name, "incrby") {
                Some(d)
            } else {
                d.checked_neg()
            };
            match d {
                Some(d) => incr_by(ctx, args[1], d, w),
                None => w.error("ERR decrement would overflow"),
            }
        }
        "append" => {
            need!(3, exact);
            let len = match ctx.keys.get(args[1], now) {
                Some(e) => {
                    if e.value.len() + args[2].len() > ctx.config.limits.max_bulk {
                        return w
                            .error("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
                    }
                    let mut v = e.value.clone();
                    v.extend_from_slice(args[2]);
                    let len = v.len();
                    ctx.keys.set_value(args[1], v, now);
                    len
                }
                None => {
                    ctx.keys.set(args[1], args[2].to_vec(), 0, now);
                    args[2].len()
                }
            };
            ctx.log_key(args[1]);
            w.int(len as i64);
        }
        "strlen" => {
            need!(2, exact);
            let l = ctx.keys.get(args[1], now).map_or(0, |e| e.value.len());
            w.int(l as i64);
        }
        "expire" | "pexpire" => {
            need!(3);
            // Redis 7's options: NX (no deadline yet), XX (has one), GT / LT (later /
            // earlier than the current one; no deadline counts as infinite).
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
                return w
                    .error("ERR NX and XX, GT or LT options at the same time are not compatible");
            }
            if gt && lt {
                return w.error("ERR GT and LT options at the same time are not compatible");
            }
            let Some(t) = parse_i64(args[2]) else {
                return w.error(NOT_INT);
            };
            let ms = if eq(name, "expire") {
                t.checked_mul(1000)
            } else {
                Some(t)
            };
            let Some(at) = ms.and_then(|ms| (now as i64).checked_add(ms)) else {
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
        "ttl" | "pttl" => {
            need!(2, exact);
            let r = match ctx.keys.get(args[1], now) {
                None => -2,
                Some(e) if e.expires_at == 0 => -1,
                Some(e) => {
                    let ms = (e.expires_at - now) as i64;
                    if eq(name, "ttl") {
                        (ms + 500) / 1000
                    } else {
                        ms
                    }
                }
            };
            w.int(r);
        }
        "persist" => {
            need!(2, exact);
            let had = ctx
                .keys
                .get(args[1], now)
                .is_some_and(|e| e.expires_at != 0);
            if had {
                ctx.keys.set_deadline(args[1], 0, now);
                ctx.log_deadline(args[1], 0);
            }
            w.int(had as i64);
        }
        "keys" => {
            need!(2, exact);
            let mut keys: Vec<Vec<u8>> = Vec::new();
            ctx.keys.for_each_key(now, |k| {
                if glob(args[1], k) {
                    keys.push(k.to_vec());
                }
            });
            w.array(keys.len());
            for k in keys {
                w.bulk(&k);
            }
        }
        "cluster" => cluster(ctx, args, w),
        "scan" => scan(ctx, args, w),
        "bgrewriteaof" => {
            if ctx.logging {
                ctx.keys
                    .shared()
                    .rewrite_requested
                    .store(true, std::sync::atomic::Ordering::Relaxed);
                w.simple("Background append only file rewriting started");
            } else {
                w.error("ERR the append-only log is off (start the server with --aof FILE)");
            }
        }
        "info" => info(ctx, args, w),
        "config" => config(ctx, args, w),
        _ => unknown(args, w),
    }
}

/// The commands this server knows (for COMMAND COUNT).
const COMMANDS: &[&str] = &[
    "ping",
    "echo",
    "quit",
    "auth",
    "hello",
    "select",
    "command",
    "client",
    "dbsize",
    "flushall",
    "flushdb",
    "get",
    "set",
    "setnx",
    "getdel",
    "getex",
    "mget",
    "mset",
    "del",
    "unlink",
    "exists",
    "type",
    "incr",
    "decr",
    "incrby",
    "decrby",
    "append",
    "strlen",
    "expire",
    "pexpire",
    "ttl",
    "pttl",
    "persist",
    "keys",
    "cluster",
    "info",
    "config",
    "scan",
    "bgrewriteaof",
];

/// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type].
fn scan(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    if args.len() < 2 {
        return arity(w, args[0]);
    }
    let cursor = match std::str::from_utf8(args[1])
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
    {
        Some(c) => c,
        None => return w.error("ERR invalid cursor"),
    };
    let (mut pattern, mut count, mut only_strings) = (None, 10usize, true);
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
            only_strings = eq(args[i + 1], "string");
        } else {
            return w.error(SYNTAX);
        }
        i += 2;
    }
    let mut keys: Vec<Vec<u8>> = Vec::new();
    let next = ctx.keys.scan(cursor, count, ctx.now, |k| {
        if only_strings && pattern.is_none_or(|p| glob(p, k)) {
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

fn info(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let want = |s: &str| {
        args.len() < 2
            || args[1..]
                .iter()
                .any(|a| eq(a, s) || eq(a, "all") || eq(a, "everything") || eq(a, "default"))
    };
    let st = &ctx.keys.shared().stats.total(ctx.stats);
    let mut out = String::new();
    if want("server") {
        out.push_str(&format!(
            "# Server\r\nredis_version:7.2.0\r\nwirespeed_version:{}\r\nredis_mode:standalone\r\nprocess_id:{}\r\ntcp_port:{}\r\nuptime_in_seconds:{}\r\n\r\n",
            env!("CARGO_PKG_VERSION"),
            std::process::id(),
            ctx.config.port,
            ctx.now.saturating_sub(st.started_ms) / 1000
        ));
    }
    if want("clients") {
        out.push_str(&format!(
            "# Clients\r\nconnected_clients:{}\r\n\r\n",
            st.connected
        ));
    }
    if want("memory") {
        let clients = ctx.keys.shared().stats.client_buffers();
        out.push_str(&format!(
            "# Memory\r\nused_memory:{}\r\nused_memory_rss:{}\r\nmem_clients_normal:{clients}\r\nused_memory_dataset:{}\r\nmaxmemory:{}\r\nmaxmemory_policy:{}\r\n\r\n",
            ctx.keys.memory() + clients,
            rss_bytes(),
            ctx.keys.payload_bytes(),
            ctx.config.maxmemory,
            ctx.config.policy.name()
        ));
    }
    if want("persistence") {
        out.push_str(&format!(
            "# Persistence\r\nloading:0\r\naof_enabled:{}\r\naof_last_write_status:{}\r\n\r\n",
            u8::from(ctx.config.appendonly),
            match &ctx.keys.shared().log {
                Some(log) if log.failing() => "err",
                _ => "ok",
            }
        ));
    }
    if want("stats") {
        out.push_str(&format!(
            "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\nexpired_keys:{}\r\nevicted_keys:{}\r\nkeyspace_hits:{}\r\nkeyspace_misses:{}\r\nclient_output_buffer_limit_disconnections:{}\r\n\r\n",
            st.connections, st.commands, st.expired, st.evicted, st.hits, st.misses,
            ctx.keys.shared().stats.output_limit_kills()
        ));
    }
    if want("keyspace") {
        out.push_str("# Keyspace\r\n");
        if !ctx.keys.is_empty() {
            let (expires, avg_ttl) = ctx.keys.volatile(ctx.now);
            out.push_str(&format!(
                "db0:keys={},expires={expires},avg_ttl={avg_ttl}\r\n",
                ctx.keys.len()
            ));
        }
    }
    w.verbatim(out.as_bytes());
}

/// Resident set size of this process in bytes (Linux `/proc/self/status`; 0 where
/// unavailable).
pub fn rss_bytes() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
            let kb: usize = line.split_whitespace().nth(1)?.parse().ok()?;
            kb.checked_mul(1024)
        })
        .unwrap_or(0)
}

/// CONFIG GET/SET over the settings this server has.
fn config(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    if args.len() < 2 {
        return arity(w, args[0]);
    }
    if eq(args[1], "get") && args.len() >= 3 {
        let params = ctx.config.params();
        let hits: Vec<&(&str, String)> = params
            .iter()
            .filter(|(k, _)| {
                args[2..]
                    .iter()
                    .any(|p| glob(&p.to_ascii_lowercase(), k.as_bytes()))
            })
            .collect();
        w.map(hits.len());
        for (k, v) in hits {
            w.bulk(k.as_bytes());
            w.bulk(v.as_bytes());
        }
    } else if eq(args[1], "set") && args.len() >= 4 && args.len().is_multiple_of(2) {
        // Check every pair before applying any (all or nothing, as Redis does), on the
        // shared settings (every loop sees the change from its next round on).
        let applied = ctx.keys.shared().update_config(|next| {
            for kv in args[2..].chunks(2) {
                let name = String::from_utf8_lossy(kv[0]).to_ascii_lowercase();
                if !RUNTIME.contains(&name.as_str()) && !IMMUTABLE.contains(&name.as_str()) {
                    return Err(format!(
                        "ERR Unknown option or number of arguments for CONFIG SET - '{name}'"
                    ));
                }
                if let Err(why) = next.set(&name, kv[1]) {
                    return Err(format!(
                        "ERR CONFIG SET failed (possibly related to argument '{name}') - {why}"
                    ));
                }
            }
            Ok(())
        });
        match applied {
            Ok(next) => {
                *ctx.config = next;
                w.simple("OK");
            }
            Err(e) => w.error(&e),
        }
    } else if eq(args[1], "resetstat") {
        ctx.keys.shared().stats.reset();
        *ctx.stats = Stats::default();
        w.simple("OK");
    } else {
        w.error(&format!(
            "ERR unknown subcommand '{}'. Try CONFIG HELP.",
            String::from_utf8_lossy(args[1])
        ));
    }
}

/// Commands that change the keyspace (Redis's `write` flag, for the commands here).
const WRITE: &[&str] = &[
    "set", "setnx", "getdel", "getex", "mset", "del", "unlink", "incr", "decr", "incrby", "decrby",
    "append", "expire", "pexpire", "persist", "flushall", "flushdb",
];

/// Commands that may add memory (Redis's `denyoom` flag, for the commands here).
const DENY_OOM: &[&str] = &[
    "set", "setnx", "mset", "append", "incr", "decr", "incrby", "decrby",
];

/// Applies maxmemory before a command: false when it must be refused (noeviction);
/// with allkeys-lru, locks every shard and evicts (and logs the evictions) until under
/// the limit.
fn within_memory(ctx: &mut Ctx, name: &[u8]) -> bool {
    let max = ctx.config.maxmemory;
    if max == 0 {
        return true;
    }
    // The clients' buffers count against the limit, as in Redis: what is left for the
    // dataset is the limit less what they hold.
    let clients = ctx.keys.shared().stats.client_buffers();
    let max = max.saturating_sub(clients);
    if ctx.keys.memory() <= max || !DENY_OOM.iter().any(|c| eq(name, c)) {
        return true;
    }
    match ctx.config.policy {
        Eviction::NoEviction => false,
        Eviction::AllKeysLru => {
            ctx.keys.lock_all();
            while ctx.keys.memory() > max {
                match ctx.keys.evict_lru(5) {
                    Some(k) => {
                        ctx.log_del(&k);
                        ctx.stats.evicted += 1;
                    }
                    None => break,
                }
            }
            ctx.keys.memory() <= max
        }
    }
}

fn unknown(args: &[&[u8]], w: &mut Writer) {
    let mut msg = format!(
        "ERR unknown command '{}', with args beginning with: ",
        String::from_utf8_lossy(args[0])
    );
    for a in args.iter().skip(1).take(20) {
        msg.push_str(&format!("'{}' ", String::from_utf8_lossy(a)));
    }
    w.error(&msg);
}

fn get_reply(ctx: &mut Ctx, key: &[u8], w: &mut Writer) {
    match ctx.keys.get(key, ctx.now) {
        Some(e) => {
            ctx.stats.hits += 1;
            w.bulk(&e.value);
        }
        None => {
            ctx.stats.misses += 1;
            w.null();
        }
    }
}

fn incr_by(ctx: &mut Ctx, key: &[u8], d: i64, w: &mut Writer) {
    let now = ctx.now;
    let cur = match ctx.keys.get(key, now) {
        None => 0,
        Some(e) => match parse_i64(&e.value) {
            Some(v) => v,
            None => return w.error(NOT_INT),
        },
    };
    let Some(v) = cur.checked_add(d) else {
        return w.error("ERR increment or decrement would overflow");
    };
    let bytes = v.to_string().into_bytes();
    if !ctx.keys.set_value(key, bytes.clone(), now) {
        ctx.keys.set(key, bytes, 0, now);
    }
    ctx.log_key(key);
    w.int(v);
}

/// Parses an expiry option value (EX/PX/EXAT/PXAT) into an absolute deadline in ms.
fn deadline(opt: &[u8], v: &[u8], now: u64, cmd: &str) -> Result<u64, String> {
    let t = parse_i64(v).ok_or_else(|| NOT_INT.to_string())?;
    let invalid = || format!("ERR invalid expire time in '{cmd}' command");
    if t <= 0 {
        return Err(invalid());
    }
    let at = if eq(opt, "ex") {
        t.checked_mul(1000)
            .and_then(|ms| ms.checked_add(now as i64))
    } else if eq(opt, "px") {
        t.checked_add(now as i64)
    } else if eq(opt, "exat") {
        t.checked_mul(1000)
    } else {
        Some(t)
    };
    at.map(|a| a as u64).ok_or_else(invalid)
}

fn set(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    if args.len() < 3 {
        return arity(w, args[0]);
    }
    let now = ctx.now;
    let (key, value) = (args[1], args[2]);
    let (mut nx, mut xx, mut get, mut keepttl) = (false, false, false, false);
    let mut expires: Option<u64> = None;
    let mut i = 3;
    while i < args.len() {
        let a = args[i];
        if eq(a, "nx") && !xx {
            nx = true;
        } else if eq(a, "xx") && !nx {
            xx = true;
        } else if eq(a, "get") {
            get = true;
        } else if eq(a, "keepttl") && expires.is_none() {
            keepttl = true;
        } else if (eq(a, "ex") || eq(a, "px") || eq(a, "exat") || eq(a, "pxat"))
            && expires.is_none()
            && !keepttl
            && i + 1 < args.len()
        {
            match deadline(a, args[i + 1], now, "set") {
                Ok(d) => expires = Some(d),
                Err(e) => return w.error(&e),
            }
            i += 1;
        } else {
            return w.error(SYNTAX);
        }
        i += 1;
    }
    let old = ctx.keys.get(key, now).cloned();
    if (nx && old.is_some()) || (xx && old.is_none()) {
        return if get {
            match old {
                Some(e) => w.bulk(&e.value),
                None => w.null(),
            }
        } else {
            w.null()
        };
    }
    let at = match (expires, keepttl, &old) {
        (Some(d), _, _) => d,
        (None, true, Some(e)) => e.expires_at,
        _ => 0,
    };
    if at != 0 && at <= now {
        // A deadline already past: the key is gone, as if set and expired at once.
        ctx.keys.remove(key);
    } else {
        ctx.keys.set(key, value.to_vec(), at, now);
    }
    ctx.log_key(key);
    if get {
        match old {
            Some(e) => w.bulk(&e.value),
            None => w.null(),
        }
    } else {
        w.simple("OK");
    }
}

fn getex(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    if args.len() < 2 {
        return arity(w, args[0]);
    }
    let now = ctx.now;
    let mut change: Option<u64> = None;
    let rest = &args[2..];
    match rest {
        [] => {}
        [p] if eq(p, "persist") => change = Some(0),
        [o, v] if eq(o, "ex") || eq(o, "px") || eq(o, "exat") || eq(o, "pxat") => {
            match deadline(o, v, now, "getex") {
                Ok(d) => change = Some(d),
                Err(e) => return w.error(&e),
            }
        }
        _ => return w.error(SYNTAX),
    }
    let Some(value) = ctx.keys.get(args[1], now).map(|e| e.value.clone()) else {
        return w.null();
    };
    match change {
        Some(d) if d != 0 && d <= now => {
            ctx.keys.remove(args[1]);
            ctx.log_del(args[1]);
        }
        Some(d) => {
            ctx.keys.set_deadline(args[1], d, now);
            ctx.log_deadline(args[1], d);
        }
        None => {}
    }
    w.bulk(&value);
}

fn hello(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let mut i = 1;
    let mut proto = ctx.session.proto;
    if args.len() > 1 {
        match parse_i64(args[1]) {
            Some(2) => proto = Proto::Resp2,
            Some(3) => proto = Proto::Resp3,
            _ => return w.error("NOPROTO unsupported protocol version"),
        }
        i = 2;
    }
    while i < args.len() {
        if eq(args[i], "auth") && i + 2 < args.len() {
            if !authenticate(ctx.config, Some(args[i + 1]), args[i + 2]) {
                return w.error(WRONGPASS);
            }
            ctx.session.authed = true;
            i += 3;
        } else if eq(args[i], "setname") && i + 1 < args.len() {
            ctx.session.name = Some(args[i + 1].to_vec());
            i += 2;
        } else {
            return w.error(&format!(
                "ERR Syntax error in HELLO option '{}'",
                String::from_utf8_lossy(args[i])
            ));
        }
    }
    if ctx.config.requirepass.is_some() && !ctx.session.authed {
        return w.error("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time");
    }
    ctx.session.proto = proto;
    // The writer was made before the switch: the reply uses the new encoding.
    let mut out = Vec::new();
    let mut r = Writer::new(&mut out, proto);
    r.map(7);
    r.bulk(b"server");
    r.bulk(b"redis");
    r.bulk(b"version");
    r.bulk(b"7.2.0");
    r.bulk(b"proto");
    r.int(if proto == Proto::Resp3 { 3 } else { 2 });
    r.bulk(b"id");
    r.int(ctx.session.id as i64);
    r.bulk(b"mode");
    r.bulk(b"standalone");
    r.bulk(b"role");
    r.bulk(b"master");
    r.bulk(b"modules");
    r.array(0);
    w.raw(&out);
}

fn client(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    if args.len() < 2 {
        return arity(w, args[0]);
    }
    let sub = args[1];
    if eq(sub, "setname") && args.len() == 3 {
        if args[2].iter().any(|&b| b <= b' ' || b > b'~') {
            return w
                .error("ERR Client names cannot contain spaces, newlines or special characters.");
        }
        ctx.session.name = (!args[2].is_empty()).then(|| args[2].to_vec());
        w.simple("OK");
    } else if eq(sub, "getname") && args.len() == 2 {
        match &ctx.session.name {
            Some(n) => w.bulk(n),
            None => w.null(),
        }
    } else if eq(sub, "id") && args.len() == 2 {
        w.int(ctx.session.id as i64);
    } else if eq(sub, "setinfo") && args.len() == 4 {
        w.simple("OK");
    } else {
        w.error(&format!(
            "ERR unknown subcommand '{}'. Try CLIENT HELP.",
            String::from_utf8_lossy(sub)
        ));
    }
}

/// CRC16/XMODEM of `key`'s hash tag (Redis Cluster's key slot, mod 16384).
pub fn key_slot(key: &[u8]) -> u16 {
    let mut k = key;
    if let Some(open) = key.iter().position(|&b| b == b'{') {
        if let Some(len) = key[open + 1..].iter().position(|&b| b == b'}') {
            if len > 0 {
                k = &key[open + 1..open + 1 + len];
            }
        }
    }
    let mut crc: u16 = 0;
    for &b in k {
        crc ^= (b as u16) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc & 16383
}

fn cluster(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    if args.len() < 2 {
        return arity(w, args[0]);
    }
    let sub = args[1];
    let node_id = "0000000000000000000000000000000000000001";
    if eq(sub, "keyslot") && args.len() == 3 {
        w.int(key_slot(args[2]) as i64);
    } else if eq(sub, "info") {
        w.verbatim(b"cluster_enabled:1\r\ncluster_state:ok\r\ncluster_slots_assigned:16384\r\ncluster_slots_ok:16384\r\ncluster_slots_pfail:0\r\ncluster_slots_fail:0\r\ncluster_known_nodes:1\r\ncluster_size:1\r\ncluster_current_epoch:1\r\ncluster_my_epoch:1\r\n");
    } else if eq(sub, "slots") {
        w.array(1);
        w.array(3);
        w.int(0);
        w.int(16383);
        w.array(3);
        w.bulk(ctx.config.bind.as_bytes());
        w.int(ctx.config.port as i64);
        w.bulk(node_id.as_bytes());
    } else if eq(sub, "shards") {
        w.array(1);
        w.map(2);
        w.bulk(b"slots");
        w.array(2);
        w.int(0);
        w.int(16383);
        w.bulk(b"nodes");
        w.array(1);
        w.map(6);
        for (k, v) in [
            ("id", node_id.to_string()),
            ("endpoint", ctx.config.bind.clone()),
            ("ip", ctx.config.bind.clone()),
            ("role", "master".into()),
            ("health", "online".into()),
        ] {
            w.bulk(k.as_bytes());
            w.bulk(v.as_bytes());
        }
        w.bulk(b"port");
        w.int(ctx.config.port as i64);
    } else {
        w.error(&format!(
            "ERR unknown subcommand '{}'. Try CLUSTER HELP.",
            String::from_utf8_lossy(sub)
        ));
    }
}

/// Redis-style glob: `*`, `?`, `[abc]`, `[^a-z]`, and `\` escapes.
pub fn glob(pat: &[u8], s: &[u8]) -> bool {
    let (mut p, mut i) = (0, 0);
    // Backtracking point for the last `*`: (pattern after it, string position).
    let mut star: Option<(usize, usize)> = None;
    while i < s.len() {
        let step = match pat.get(p) {
            Some(b'*') => {
                star = Some((p + 1, i));
                p += 1;
                continue;
            }
            Some(b'?') => Some(p + 1),
            Some(b'[') => class(pat, p, s[i]),
            Some(b'\\') if p + 1 < pat.len() => (pat[p + 1] == s[i]).then_some(p + 2),
            Some(&c) => (c == s[i]).then_some(p + 1),
            None => None,
        };
        match (step, star) {
            (Some(np), _) => {
                p = np;
                i += 1;
            }
            (None, Some((sp, si))) => {
                p = sp;
                i = si + 1;
                star = Some((sp, si + 1));
            }
            (None, None) => return false,
        }
    }
    pat[p.min(pat.len())..].iter().all(|&c| c == b'*')
}

/// A `[...]` class at `pat[p]` against `c`: the position after it when it matches.
fn class(pat: &[u8], p: usize, c: u8) -> Option<usize> {
    let mut j = p + 1;
    let negate = pat.get(j) == Some(&b'^');
    if negate {
        j += 1;
    }
    let mut hit = false;
    while j < pat.len() && pat[j] != b']' {
        if pat[j] == b'\\' && j + 1 < pat.len() {
            hit |= pat[j + 1] == c;
            j += 2;
        } else if j + 2 < pat.len() && pat[j + 1] == b'-' && pat[j + 2] != b']' {
            let (lo, hi) = (pat[j].min(pat[j + 2]), pat[j].max(pat[j + 2]));
            hit |= (lo..=hi).contains(&c);
            j += 3;
        } else {
            hit |= pat[j] == c;
            j += 1;
        }
    }
    (hit != negate).then_some((j + 1).min(pat.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_slots_match_redis_cluster() {
        // Values from the Redis Cluster specification and `CLUSTER KEYSLOT`.
        assert_eq!(key_slot(b"123456789"), 0x31c3 & 16383);
        assert_eq!(key_slot(b"foo"), 12182);
        assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"user1000"));
        assert_eq!(key_slot(b"foo{}{bar}"), key_slot(b"foo{}{bar}"));
        assert_eq!(key_slot(b"{}x"), key_slot(b"{}x"));
    }

    #[test]
    fn globs_match_like_redis() {
        for (p, s, m) in [
            ("*", "anything", true),
            ("h?llo", "hello", true),
            ("h*llo", "heeeello", true),
            ("h[ae]llo", "hallo", true),
            ("h[ae]llo", "hillo", false),
            ("h[^e]llo", "hallo", true),
            ("h[^e]llo", "hello", false),
            ("h[a-b]llo", "hbllo", true),
            ("a\\*b", "a*b", true),
            ("a\\*b", "axb", false),
            ("*:*", "user:1", true),
            ("user:*", "usr:1", false),
            ("", "", true),
        ] {
            assert_eq!(glob(p.as_bytes(), s.as_bytes()), m, "{p} ~ {s}");
        }
    }
}
