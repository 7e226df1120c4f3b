//! The commands as ACL rules name them: every row of the command table, and the
//! subcommands of its containers (`client|kill`, `config|get`, ...), each with an id
//! (its bit in a selector's command set) and Redis 7.2's ACL categories.
//!
//! A row's id is its row number in [`table::COMMANDS`]; the subcommands of the
//! containers the table has follow. Categories are the ones Redis gives each command
//! and subcommand (explicit, plus the implicit ones its flags bring: `@write`,
//! `@read`, `@admin` and `@dangerous`, `@pubsub`, `@fast` or `@slow`, `@blocking`); a
//! row Redis does not have gets the implicit ones from its own flags.

use std::sync::OnceLock;

use crate::cmd::table::{self, Command};

/// `@keyspace`.
pub const KEYSPACE: u32 = 1 << 0;
/// `@read`.
pub const READ: u32 = 1 << 1;
/// `@write`.
pub const WRITE: u32 = 1 << 2;
/// `@set`.
pub const SET: u32 = 1 << 3;
/// `@sortedset`.
pub const SORTEDSET: u32 = 1 << 4;
/// `@list`.
pub const LIST: u32 = 1 << 5;
/// `@hash`.
pub const HASH: u32 = 1 << 6;
/// `@string`.
pub const STRING: u32 = 1 << 7;
/// `@bitmap`.
pub const BITMAP: u32 = 1 << 8;
/// `@hyperloglog`.
pub const HYPERLOGLOG: u32 = 1 << 9;
/// `@geo`.
pub const GEO: u32 = 1 << 10;
/// `@stream`.
pub const STREAM: u32 = 1 << 11;
/// `@pubsub`.
pub const PUBSUB: u32 = 1 << 12;
/// `@admin`.
pub const ADMIN: u32 = 1 << 13;
/// `@fast`.
pub const FAST: u32 = 1 << 14;
/// `@slow`.
pub const SLOW: u32 = 1 << 15;
/// `@blocking`.
pub const BLOCKING: u32 = 1 << 16;
/// `@dangerous`.
pub const DANGEROUS: u32 = 1 << 17;
/// `@connection`.
pub const CONNECTION: u32 = 1 << 18;
/// `@transaction`.
pub const TRANSACTION: u32 = 1 << 19;
/// `@scripting`.
pub const SCRIPTING: u32 = 1 << 20;

/// The category names in Redis's order (ACL CAT, COMMAND INFO): bit `i` is `NAMES[i]`.
pub const NAMES: [&str; 21] = [
    "keyspace",
    "read",
    "write",
    "set",
    "sortedset",
    "list",
    "hash",
    "string",
    "bitmap",
    "hyperloglog",
    "geo",
    "stream",
    "pubsub",
    "admin",
    "fast",
    "slow",
    "blocking",
    "dangerous",
    "connection",
    "transaction",
    "scripting",
];

/// The category named `name` (any case, without the `@`).
pub fn category(name: &[u8]) -> Option<u32> {
    NAMES
        .iter()
        .position(|n| n.as_bytes().eq_ignore_ascii_case(name))
        .map(|i| 1 << i)
}

/// The names of the categories in `cats`, in Redis's order.
pub fn names(cats: u32) -> impl Iterator<Item = &'static str> {
    NAMES
        .iter()
        .enumerate()
        .filter(move |(i, _)| cats & (1 << i) != 0)
        .map(|(_, n)| *n)
}

/// Words of a selector's command set (ids below `WORDS * 64`).
pub const WORDS: usize = 8;

/// One command or subcommand.
#[derive(Debug)]
pub struct Entry {
    /// The full name, lower case: `get`, `client|kill`.
    pub name: String,
    /// Redis's arity (a subcommand's counts the container's name).
    pub arity: i32,
    /// Its categories.
    pub cats: u32,
    /// For a subcommand, its container's id.
    pub container: Option<u16>,
    /// For a container, the ids of its subcommands.
    pub subs: std::ops::Range<u16>,
}

/// Every command and subcommand, by id.
#[derive(Debug)]
pub struct Catalog {
    entries: Vec<Entry>,
}

/// The catalog (built on first use).
pub fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(Catalog::build)
}

/// The categories a row has from its own flags (a command Redis does not have).
fn implicit(cmd: &Command) -> u32 {
    let mut c = 0;
    if cmd.has(table::WRITE) {
        c |= WRITE;
    }
    if cmd.has(table::READONLY) {
        c |= READ;
    }
    if cmd.has(table::ADMIN) {
        c |= ADMIN | DANGEROUS;
    }
    if cmd.has(table::PUBSUB) {
        c |= PUBSUB;
    }
    if cmd.has(table::BLOCKING) {
        c |= BLOCKING;
    }
    c | if cmd.has(table::FAST) { FAST } else { SLOW }
}

impl Catalog {
    fn build() -> Catalog {
        let known = |name: &str| DATA.binary_search_by(|(n, _, _)| n.cmp(&name)).ok();
        let mut entries: Vec<Entry> = table::COMMANDS
            .iter()
            .map(|c| Entry {
                name: c.name.to_string(),
                arity: c.arity,
                cats: known(c.name).map_or_else(|| implicit(c), |i| DATA[i].2),
                container: None,
                subs: 0..0,
            })
            .collect();
        for row in 0..table::COMMANDS.len() {
            let prefix = format!("{}|", table::COMMANDS[row].name);
            let start = entries.len() as u16;
            for (name, arity, cats) in DATA.iter().filter(|(n, _, _)| n.starts_with(&prefix)) {
                entries.push(Entry {
                    name: name.to_string(),
                    arity: *arity,
                    cats: *cats,
                    container: Some(row as u16),
                    subs: 0..0,
                });
            }
            entries[row].subs = start..entries.len() as u16;
        }
        assert!(
            entries.len() < WORDS * 64,
            "the ACL command set is too small"
        );
        Catalog { entries }
    }

    /// Every entry, by id.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The entry of `id`.
    pub fn entry(&self, id: u16) -> &Entry {
        &self.entries[id as usize]
    }

    /// The subcommand `sub` (any case) of the container `id`.
    fn sub_of(&self, id: u16, sub: &[u8]) -> Option<u16> {
        let plen = self.entries[id as usize].name.len() + 1;
        self.entries[id as usize]
            .subs
            .clone()
            .find(|&s| self.entries[s as usize].name.as_bytes()[plen..].eq_ignore_ascii_case(sub))
    }

    /// The id a rule names (any case): a command, or `container|subcommand`.
    pub fn find(&self, name: &[u8]) -> Option<u16> {
        let mut parts = name.splitn(2, |&b| b == b'|');
        let first = parts.next()?;
        let cmd = table::lookup(first)?;
        let id = table::row(cmd) as u16;
        match parts.next() {
            None => Some(id),
            Some(sub) => self.sub_of(id, sub),
        }
    }

    /// What a call of `cmd` with `args` (name first) runs as: the subcommand for a
    /// container whose subcommand is known, else the command itself; true when it is a
    /// subcommand.
    pub fn call(&self, cmd: &Command, args: &[&[u8]]) -> (u16, bool) {
        let id = table::row(cmd) as u16;
        if self.entries[id as usize].subs.is_empty() {
            return (id, false);
        }
        match args.get(1).and_then(|s| self.sub_of(id, s)) {
            Some(s) => (s, true),
            None => (id, false),
        }
    }
}

/// Every command and subcommand of Redis 7.2 with its arity and categories, sorted by
/// name (rows of the command table and subcommands of its containers are taken).
#[rustfmt::skip]
const DATA: &[(&str, i32, u32)] = &[
    ("acl", -2, SLOW),
    ("acl|cat", -2, SLOW),
    ("acl|deluser", -3, ADMIN | SLOW | DANGEROUS),
    ("acl|dryrun", -4, ADMIN | SLOW | DANGEROUS),
    ("acl|genpass", -2, SLOW),
    ("acl|getuser", 3, ADMIN | SLOW | DANGEROUS),
    ("acl|help", 2, SLOW),
    ("acl|list", 2, ADMIN | SLOW | DANGEROUS),
    ("acl|load", 2, ADMIN | SLOW | DANGEROUS),
    ("acl|log", -2, ADMIN | SLOW | DANGEROUS),
    ("acl|save", 2, ADMIN | SLOW | DANGEROUS),
    ("acl|setuser", -3, ADMIN | SLOW | DANGEROUS),
    ("acl|users", 2, ADMIN | SLOW | DANGEROUS),
    ("acl|whoami", 2, SLOW),
    ("append", 3, WRITE | STRING | FAST),
    ("asking", 1, FAST | CONNECTION),
    ("auth", -2, FAST | CONNECTION),
    ("bgrewriteaof", 1, ADMIN | SLOW | DANGEROUS),
    ("bgsave", -1, ADMIN | SLOW | DANGEROUS),
    ("bitcount", -2, READ | BITMAP | SLOW),
    ("bitfield", -2, WRITE | BITMAP | SLOW),
    ("bitfield_ro", -2, READ | BITMAP | FAST),
    ("bitop", -4, WRITE | BITMAP | SLOW),
    ("bitpos", -3, READ | BITMAP | SLOW),
    ("blmove", 6, WRITE | LIST | SLOW | BLOCKING),
    ("blmpop", -5, WRITE | LIST | SLOW | BLOCKING),
    ("blpop", -3, WRITE | LIST | SLOW | BLOCKING),
    ("brpop", -3, WRITE | LIST | SLOW | BLOCKING),
    ("brpoplpush", 4, WRITE | LIST | SLOW | BLOCKING),
    ("bzmpop", -5, WRITE | SORTEDSET | SLOW | BLOCKING),
    ("bzpopmax", -3, WRITE | SORTEDSET | FAST | BLOCKING),
    ("bzpopmin", -3, WRITE | SORTEDSET | FAST | BLOCKING),
    ("client", -2, SLOW),
    ("client|caching", 3, SLOW | CONNECTION),
    ("client|getname", 2, SLOW | CONNECTION),
    ("client|getredir", 2, SLOW | CONNECTION),
    ("client|help", 2, SLOW | CONNECTION),
    ("client|id", 2, SLOW | CONNECTION),
    ("client|info", 2, SLOW | CONNECTION),
    ("client|kill", -3, ADMIN | SLOW | DANGEROUS | CONNECTION),
    ("client|list", -2, ADMIN | SLOW | DANGEROUS | CONNECTION),
    ("client|no-evict", 3, ADMIN | SLOW | DANGEROUS | CONNECTION),
    ("client|no-touch", 3, SLOW | CONNECTION),
    ("client|pause", -3, ADMIN | SLOW | DANGEROUS | CONNECTION),
    ("client|reply", 3, SLOW | CONNECTION),
    ("client|setinfo", 4, SLOW | CONNECTION),
    ("client|setname", 3, SLOW | CONNECTION),
    ("client|tracking", -3, SLOW | CONNECTION),
    ("client|trackinginfo", 2, SLOW | CONNECTION),
    ("client|unblock", -3, ADMIN | SLOW | DANGEROUS | CONNECTION),
    ("client|unpause", 2, ADMIN | SLOW | DANGEROUS | CONNECTION),
    ("cluster", -2, SLOW),
    ("cluster|addslots", -3, ADMIN | SLOW | DANGEROUS),
    ("cluster|addslotsrange", -4, ADMIN | SLOW | DANGEROUS),
    ("cluster|bumpepoch", 2, ADMIN | SLOW | DANGEROUS),
    ("cluster|count-failure-reports", 3, ADMIN | SLOW | DANGEROUS),
    ("cluster|countkeysinslot", 3, SLOW),
    ("cluster|delslots", -3, ADMIN | SLOW | DANGEROUS),
    ("cluster|delslotsrange", -4, ADMIN | SLOW | DANGEROUS),
    ("cluster|failover", -2, ADMIN | SLOW | DANGEROUS),
    ("cluster|flushslots", 2, ADMIN | SLOW | DANGEROUS),
    ("cluster|forget", 3, ADMIN | SLOW | DANGEROUS),
    ("cluster|getkeysinslot", 4, SLOW),
    ("cluster|help", 2, SLOW),
    ("cluster|info", 2, SLOW),
    ("cluster|keyslot", 3, SLOW),
    ("cluster|links", 2, SLOW),
    ("cluster|meet", -4, ADMIN | SLOW | DANGEROUS),
    ("cluster|myid", 2, SLOW),
    ("cluster|myshardid", 2, SLOW),
    ("cluster|nodes", 2, SLOW),
    ("cluster|replicas", 3, ADMIN | SLOW | DANGEROUS),
    ("cluster|replicate", 3, ADMIN | SLOW | DANGEROUS),
    ("cluster|reset", -2, ADMIN | SLOW | DANGEROUS),
    ("cluster|saveconfig", 2, ADMIN | SLOW | DANGEROUS),
    ("cluster|set-config-epoch", 3, ADMIN | SLOW | DANGEROUS),
    ("cluster|setslot", -4, ADMIN | SLOW | DANGEROUS),
    ("cluster|shards", 2, SLOW),
    ("cluster|slaves", 3, ADMIN | SLOW | DANGEROUS),
    ("cluster|slots", 2, SLOW),
    ("command", -1, SLOW | CONNECTION),
    ("command|count", 2, SLOW | CONNECTION),
    ("command|docs", -2, SLOW | CONNECTION),
    ("command|getkeys", -3, SLOW | CONNECTION),
    ("command|getkeysandflags", -3, SLOW | CONNECTION),
    ("command|help", 2, SLOW | CONNECTION),
    ("command|info", -2, SLOW | CONNECTION),
    ("command|list", -2, SLOW | CONNECTION),
    ("config", -2, SLOW),
    ("config|get", -3, ADMIN | SLOW | DANGEROUS),
    ("config|help", 2, SLOW),
    ("config|resetstat", 2, ADMIN | SLOW | DANGEROUS),
    ("config|rewrite", 2, ADMIN | SLOW | DANGEROUS),
    ("config|set", -4, ADMIN | SLOW | DANGEROUS),
    ("copy", -3, KEYSPACE | WRITE | SLOW),
    ("dbsize", 1, KEYSPACE | READ | FAST),
    ("debug", -2, ADMIN | SLOW | DANGEROUS),
    ("decr", 2, WRITE | STRING | FAST),
    ("decrby", 3, WRITE | STRING | FAST),
    ("del", -2, KEYSPACE | WRITE | SLOW),
    ("discard", 1, FAST | TRANSACTION),
    ("dump", 2, KEYSPACE | READ | SLOW),
    ("echo", 2, FAST | CONNECTION),
    ("eval", -3, SLOW | SCRIPTING),
    ("eval_ro", -3, SLOW | SCRIPTING),
    ("evalsha", -3, SLOW | SCRIPTING),
    ("evalsha_ro", -3, SLOW | SCRIPTING),
    ("exec", 1, SLOW | TRANSACTION),
    ("exists", -2, KEYSPACE | READ | FAST),
    ("expire", -3, KEYSPACE | WRITE | FAST),
    ("expireat", -3, KEYSPACE | WRITE | FAST),
    ("expiretime", 2, KEYSPACE | READ | FAST),
    ("failover", -1, ADMIN | SLOW | DANGEROUS),
    ("fcall", -3, SLOW | SCRIPTING),
    ("fcall_ro", -3, SLOW | SCRIPTING),
    ("flushall", -1, KEYSPACE | WRITE | SLOW | DANGEROUS),
    ("flushdb", -1, KEYSPACE | WRITE | SLOW | DANGEROUS),
    ("function", -2, SLOW),
    ("function|delete", 3, WRITE | SLOW | SCRIPTING),
    ("function|dump", 2, SLOW | SCRIPTING),
    ("function|flush", -2, WRITE | SLOW | SCRIPTING),
    ("function|help", 2, SLOW | SCRIPTING),
    ("function|kill", 2, SLOW | SCRIPTING),
    ("function|list", -2, SLOW | SCRIPTING),
    ("function|load", -3, WRITE | SLOW | SCRIPTING),
    ("function|restore", -3, WRITE | SLOW | SCRIPTING),
    ("function|stats", 2, SLOW | SCRIPTING),
    ("geoadd", -5, WRITE | GEO | SLOW),
    ("geodist", -4, READ | GEO | SLOW),
    ("geohash", -2, READ | GEO | SLOW),
    ("geopos", -2, READ | GEO | SLOW),
    ("georadius", -6, WRITE | GEO | SLOW),
    ("georadius_ro", -6, READ | GEO | SLOW),
    ("georadiusbymember", -5, WRITE | GEO | SLOW),
    ("georadiusbymember_ro", -5, READ | GEO | SLOW),
    ("geosearch", -7, READ | GEO | SLOW),
    ("geosearchstore", -8, WRITE | GEO | SLOW),
    ("get", 2, READ | STRING | FAST),
    ("getbit", 3, READ | BITMAP | FAST),
    ("getdel", 2, WRITE | STRING | FAST),
    ("getex", -2, WRITE | STRING | FAST),
    ("getrange", 4, READ | STRING | SLOW),
    ("getset", 3, WRITE | STRING | FAST),
    ("hdel", -3, WRITE | HASH | FAST),
    ("hello", -1, FAST | CONNECTION),
    ("hexists", 3, READ | HASH | FAST),
    ("hget", 3, READ | HASH | FAST),
    ("hgetall", 2, READ | HASH | SLOW),
    ("hincrby", 4, WRITE | HASH | FAST),
    ("hincrbyfloat", 4, WRITE | HASH | FAST),
    ("hkeys", 2, READ | HASH | SLOW),
    ("hlen", 2, READ | HASH | FAST),
    ("hmget", -3, READ | HASH | FAST),
    ("hmset", -4, WRITE | HASH | FAST),
    ("hrandfield", -2, READ | HASH | SLOW),
    ("hscan", -3, READ | HASH | SLOW),
    ("hset", -4, WRITE | HASH | FAST),
    ("hsetnx", 4, WRITE | HASH | FAST),
    ("hstrlen", 3, READ | HASH | FAST),
    ("hvals", 2, READ | HASH | SLOW),
    ("incr", 2, WRITE | STRING | FAST),
    ("incrby", 3, WRITE | STRING | FAST),
    ("incrbyfloat", 3, WRITE | STRING | FAST),
    ("info", -1, SLOW | DANGEROUS),
    ("keys", 2, KEYSPACE | READ | SLOW | DANGEROUS),
    ("lastsave", 1, ADMIN | FAST | DANGEROUS),
    ("latency", -2, SLOW),
    ("latency|doctor", 2, ADMIN | SLOW | DANGEROUS),
    ("latency|graph", 3, ADMIN | SLOW | DANGEROUS),
    ("latency|help", 2, SLOW),
    ("latency|histogram", -2, ADMIN | SLOW | DANGEROUS),
    ("latency|history", 3, ADMIN | SLOW | DANGEROUS),
    ("latency|latest", 2, ADMIN | SLOW | DANGEROUS),
    ("latency|reset", -2, ADMIN | SLOW | DANGEROUS),
    ("lcs", -3, READ | STRING | SLOW),
    ("lindex", 3, READ | LIST | SLOW),
    ("linsert", 5, WRITE | LIST | SLOW),
    ("llen", 2, READ | LIST | FAST),
    ("lmove", 5, WRITE | LIST | SLOW),
    ("lmpop", -4, WRITE | LIST | SLOW),
    ("lolwut", -1, READ | FAST),
    ("lpop", -2, WRITE | LIST | FAST),
    ("lpos", -3, READ | LIST | SLOW),
    ("lpush", -3, WRITE | LIST | FAST),
    ("lpushx", -3, WRITE | LIST | FAST),
    ("lrange", 4, READ | LIST | SLOW),
    ("lrem", 4, WRITE | LIST | SLOW),
    ("lset", 4, WRITE | LIST | SLOW),
    ("ltrim", 4, WRITE | LIST | SLOW),
    ("memory", -2, SLOW),
    ("memory|doctor", 2, SLOW),
    ("memory|help", 2, SLOW),
    ("memory|malloc-stats", 2, SLOW),
    ("memory|purge", 2, SLOW),
    ("memory|stats", 2, SLOW),
    ("memory|usage", -3, READ | SLOW),
    ("mget", -2, READ | STRING | FAST),
    ("migrate", -6, KEYSPACE | WRITE | SLOW | DANGEROUS),
    ("monitor", 1, ADMIN | SLOW | DANGEROUS),
    ("move", 3, KEYSPACE | WRITE | FAST),
    ("mset", -3, WRITE | STRING | SLOW),
    ("msetnx", -3, WRITE | STRING | SLOW),
    ("multi", 1, FAST | TRANSACTION),
    ("object", -2, SLOW),
    ("object|encoding", 3, KEYSPACE | READ | SLOW),
    ("object|freq", 3, KEYSPACE | READ | SLOW),
    ("object|help", 2, KEYSPACE | SLOW),
    ("object|idletime", 3, KEYSPACE | READ | SLOW),
    ("object|refcount", 3, KEYSPACE | READ | SLOW),
    ("persist", 2, KEYSPACE | WRITE | FAST),
    ("pexpire", -3, KEYSPACE | WRITE | FAST),
    ("pexpireat", -3, KEYSPACE | WRITE | FAST),
    ("pexpiretime", 2, KEYSPACE | READ | FAST),
    ("pfadd", -2, WRITE | HYPERLOGLOG | FAST),
    ("pfcount", -2, READ | HYPERLOGLOG | SLOW),
    ("pfdebug", 3, WRITE | HYPERLOGLOG | ADMIN | SLOW | DANGEROUS),
    ("pfmerge", -2, WRITE | HYPERLOGLOG | SLOW),
    ("pfselftest", 1, HYPERLOGLOG | ADMIN | SLOW | DANGEROUS),
    ("ping", -1, FAST | CONNECTION),
    ("psetex", 4, WRITE | STRING | SLOW),
    ("psubscribe", -2, PUBSUB | SLOW),
    ("psync", -3, ADMIN | SLOW | DANGEROUS),
    ("pttl", 2, KEYSPACE | READ | FAST),
    ("publish", 3, PUBSUB | FAST),
    ("pubsub", -2, SLOW),
    ("pubsub|channels", -2, PUBSUB | SLOW),
    ("pubsub|help", 2, SLOW),
    ("pubsub|numpat", 2, PUBSUB | SLOW),
    ("pubsub|numsub", -2, PUBSUB | SLOW),
    ("pubsub|shardchannels", -2, PUBSUB | SLOW),
    ("pubsub|shardnumsub", -2, PUBSUB | SLOW),
    ("punsubscribe", -1, PUBSUB | SLOW),
    ("quit", -1, FAST | CONNECTION),
    ("randomkey", 1, KEYSPACE | READ | SLOW),
    ("readonly", 1, FAST | CONNECTION),
    ("readwrite", 1, FAST | CONNECTION),
    ("rename", 3, KEYSPACE | WRITE | SLOW),
    ("renamenx", 3, KEYSPACE | WRITE | FAST),
    ("replconf", -1, ADMIN | SLOW | DANGEROUS),
    ("replicaof", 3, ADMIN | SLOW | DANGEROUS),
    ("reset", 1, FAST | CONNECTION),
    ("restore", -4, KEYSPACE | WRITE | SLOW | DANGEROUS),
    ("restore-asking", -4, KEYSPACE | WRITE | SLOW | DANGEROUS),
    ("role", 1, ADMIN | FAST | DANGEROUS),
    ("rpop", -2, WRITE | LIST | FAST),
    ("rpoplpush", 3, WRITE | LIST | SLOW),
    ("rpush", -3, WRITE | LIST | FAST),
    ("rpushx", -3, WRITE | LIST | FAST),
    ("sadd", -3, WRITE | SET | FAST),
    ("save", 1, ADMIN | SLOW | DANGEROUS),
    ("scan", -2, KEYSPACE | READ | SLOW),
    ("scard", 2, READ | SET | FAST),
    ("script", -2, SLOW),
    ("script|debug", 3, SLOW | SCRIPTING),
    ("script|exists", -3, SLOW | SCRIPTING),
    ("script|flush", -2, SLOW | SCRIPTING),
    ("script|help", 2, SLOW | SCRIPTING),
    ("script|kill", 2, SLOW | SCRIPTING),
    ("script|load", 3, SLOW | SCRIPTING),
    ("sdiff", -2, READ | SET | SLOW),
    ("sdiffstore", -3, WRITE | SET | SLOW),
    ("select", 2, FAST | CONNECTION),
    ("set", -3, WRITE | STRING | SLOW),
    ("setbit", 4, WRITE | BITMAP | SLOW),
    ("setex", 4, WRITE | STRING | SLOW),
    ("setnx", 3, WRITE | STRING | FAST),
    ("setrange", 4, WRITE | STRING | SLOW),
    ("shutdown", -1, ADMIN | SLOW | DANGEROUS),
    ("sinter", -2, READ | SET | SLOW),
    ("sintercard", -3, READ | SET | SLOW),
    ("sinterstore", -3, WRITE | SET | SLOW),
    ("sismember", 3, READ | SET | FAST),
    ("slaveof", 3, ADMIN | SLOW | DANGEROUS),
    ("slowlog", -2, SLOW),
    ("slowlog|get", -2, ADMIN | SLOW | DANGEROUS),
    ("slowlog|help", 2, SLOW),
    ("slowlog|len", 2, ADMIN | SLOW | DANGEROUS),
    ("slowlog|reset", 2, ADMIN | SLOW | DANGEROUS),
    ("smembers", 2, READ | SET | SLOW),
    ("smismember", -3, READ | SET | FAST),
    ("smove", 4, WRITE | SET | FAST),
    ("sort", -2, WRITE | SET | SORTEDSET | LIST | SLOW | DANGEROUS),
    ("sort_ro", -2, READ | SET | SORTEDSET | LIST | SLOW | DANGEROUS),
    ("spop", -2, WRITE | SET | FAST),
    ("spublish", 3, PUBSUB | FAST),
    ("srandmember", -2, READ | SET | SLOW),
    ("srem", -3, WRITE | SET | FAST),
    ("sscan", -3, READ | SET | SLOW),
    ("ssubscribe", -2, PUBSUB | SLOW),
    ("strlen", 2, READ | STRING | FAST),
    ("subscribe", -2, PUBSUB | SLOW),
    ("substr", 4, READ | STRING | SLOW),
    ("sunion", -2, READ | SET | SLOW),
    ("sunionstore", -3, WRITE | SET | SLOW),
    ("sunsubscribe", -1, PUBSUB | SLOW),
    ("swapdb", 3, KEYSPACE | WRITE | FAST | DANGEROUS),
    ("sync", 1, ADMIN | SLOW | DANGEROUS),
    ("time", 1, FAST),
    ("touch", -2, KEYSPACE | READ | FAST),
    ("ttl", 2, KEYSPACE | READ | FAST),
    ("type", 2, KEYSPACE | READ | FAST),
    ("unlink", -2, KEYSPACE | WRITE | FAST),
    ("unsubscribe", -1, PUBSUB | SLOW),
    ("unwatch", 1, FAST | TRANSACTION),
    ("wait", 3, SLOW | CONNECTION),
    ("waitaof", 4, SLOW | CONNECTION),
    ("watch", -2, FAST | TRANSACTION),
    ("xack", -4, WRITE | STREAM | FAST),
    ("xadd", -5, WRITE | STREAM | FAST),
    ("xautoclaim", -6, WRITE | STREAM | FAST),
    ("xclaim", -6, WRITE | STREAM | FAST),
    ("xdel", -3, WRITE | STREAM | FAST),
    ("xgroup", -2, SLOW),
    ("xgroup|create", -5, WRITE | STREAM | SLOW),
    ("xgroup|createconsumer", 5, WRITE | STREAM | SLOW),
    ("xgroup|delconsumer", 5, WRITE | STREAM | SLOW),
    ("xgroup|destroy", 4, WRITE | STREAM | SLOW),
    ("xgroup|help", 2, STREAM | SLOW),
    ("xgroup|setid", -5, WRITE | STREAM | SLOW),
    ("xinfo", -2, SLOW),
    ("xinfo|consumers", 4, READ | STREAM | SLOW),
    ("xinfo|groups", 3, READ | STREAM | SLOW),
    ("xinfo|help", 2, STREAM | SLOW),
    ("xinfo|stream", -3, READ | STREAM | SLOW),
    ("xlen", 2, READ | STREAM | FAST),
    ("xpending", -3, READ | STREAM | SLOW),
    ("xrange", -4, READ | STREAM | SLOW),
    ("xread", -4, READ | STREAM | SLOW | BLOCKING),
    ("xreadgroup", -7, WRITE | STREAM | SLOW | BLOCKING),
    ("xrevrange", -4, READ | STREAM | SLOW),
    ("xsetid", -3, WRITE | STREAM | FAST),
    ("xtrim", -4, WRITE | STREAM | SLOW),
    ("zadd", -4, WRITE | SORTEDSET | FAST),
    ("zcard", 2, READ | SORTEDSET | FAST),
    ("zcount", 4, READ | SORTEDSET | FAST),
    ("zdiff", -3, READ | SORTEDSET | SLOW),
    ("zdiffstore", -4, WRITE | SORTEDSET | SLOW),
    ("zincrby", 4, WRITE | SORTEDSET | FAST),
    ("zinter", -3, READ | SORTEDSET | SLOW),
    ("zintercard", -3, READ | SORTEDSET | SLOW),
    ("zinterstore", -4, WRITE | SORTEDSET | SLOW),
    ("zlexcount", 4, READ | SORTEDSET | FAST),
    ("zmpop", -4, WRITE | SORTEDSET | SLOW),
    ("zmscore", -3, READ | SORTEDSET | FAST),
    ("zpopmax", -2, WRITE | SORTEDSET | FAST),
    ("zpopmin", -2, WRITE | SORTEDSET | FAST),
    ("zrandmember", -2, READ | SORTEDSET | SLOW),
    ("zrange", -4, READ | SORTEDSET | SLOW),
    ("zrangebylex", -4, READ | SORTEDSET | SLOW),
    ("zrangebyscore", -4, READ | SORTEDSET | SLOW),
    ("zrangestore", -5, WRITE | SORTEDSET | SLOW),
    ("zrank", -3, READ | SORTEDSET | FAST),
    ("zrem", -3, WRITE | SORTEDSET | FAST),
    ("zremrangebylex", 4, WRITE | SORTEDSET | SLOW),
    ("zremrangebyrank", 4, WRITE | SORTEDSET | SLOW),
    ("zremrangebyscore", 4, WRITE | SORTEDSET | SLOW),
    ("zrevrange", -4, READ | SORTEDSET | SLOW),
    ("zrevrangebylex", -4, READ | SORTEDSET | SLOW),
    ("zrevrangebyscore", -4, READ | SORTEDSET | SLOW),
    ("zrevrank", -3, READ | SORTEDSET | FAST),
    ("zscan", -3, READ | SORTEDSET | SLOW),
    ("zscore", 3, READ | SORTEDSET | FAST),
    ("zunion", -3, READ | SORTEDSET | SLOW),
    ("zunionstore", -4, WRITE | SORTEDSET | SLOW),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_is_sorted_and_every_row_has_an_entry() {
        assert!(DATA.windows(2).all(|p| p[0].0 < p[1].0));
        let c = catalog();
        assert_eq!(
            c.entry(table::row(table::lookup(b"get").unwrap()) as u16)
                .cats,
            READ | STRING | FAST
        );
        let kill = c.find(b"CLIENT|Kill").expect("client|kill");
        assert_eq!(c.entry(kill).name, "client|kill");
        assert_eq!(c.entry(kill).cats, ADMIN | SLOW | DANGEROUS | CONNECTION);
        assert!(c.find(b"get|key").is_none());
        assert!(c.find(b"config|nosuch").is_none());
        let client = table::lookup(b"client").unwrap();
        assert_eq!(
            c.call(client, &[b"client", b"ID"]),
            (c.find(b"client|id").unwrap(), true)
        );
        assert!(!c.call(client, &[b"client", b"nosuch"]).1);
        assert_eq!(category(b"SortedSet"), Some(SORTEDSET));
        assert_eq!(names(READ | FAST).collect::<Vec<_>>(), ["read", "fast"]);
    }
}
