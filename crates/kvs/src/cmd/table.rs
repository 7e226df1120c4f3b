//! The command table: one row per command, from which everything about a command that
//! is not its behaviour comes: the arity check, the flags that decide whether it may
//! run (authentication, `maxmemory`, a failing log, inside MULTI), its key positions
//! (COMMAND GETKEYS, cluster clients, WATCH), and the replies of COMMAND, COMMAND
//! COUNT/INFO/DOCS/LIST/GETKEYS/GETKEYSANDFLAGS (the keys with Redis's key-spec
//! flags, which the ACLs also read). Rows are sorted by name (checked by a test) and
//! found by binary search on the lower-cased name, without allocating.
//!
//! Arity follows Redis: `n` means exactly `n` arguments counting the name, `-n` at
//! least `n`. Key positions are `first`, `last` (negative: from the end) and `step`,
//! as in Redis's COMMAND reply; 0 for commands without keys.

use super::scripting::{self, functions};
use super::{
    acl, admin, arity, bits, blocking, cluster, cluster_cmds, config, connection, dbs, eq, geo,
    hashes, hll, keys, latency, lists, monitor, multi, pubsub, replication, server, sets, sort,
    streams, strings, zsets, Ctx,
};
use crate::resp::Writer;

/// Runs a command whose arity and admission were checked.
pub type Handler = fn(&mut Ctx, &[&[u8]], &mut Writer);

/// Changes the keyspace.
pub const WRITE: u32 = 1;
/// Only reads the keyspace.
pub const READONLY: u32 = 1 << 1;
/// May add memory: refused over `maxmemory` (after eviction, if any, did not help).
pub const DENYOOM: u32 = 1 << 2;
/// Administrative.
pub const ADMIN: u32 = 1 << 3;
/// Not allowed in scripts.
pub const NOSCRIPT: u32 = 1 << 4;
/// Runs while the dataset loads.
pub const LOADING: u32 = 1 << 5;
/// Runs on a replica with stale data.
pub const STALE: u32 = 1 << 6;
/// Constant or logarithmic time.
pub const FAST: u32 = 1 << 7;
/// Allowed before AUTH.
pub const NO_AUTH: u32 = 1 << 8;
/// Pub/sub.
pub const PUBSUB: u32 = 1 << 9;
/// Allowed while a script is busy.
pub const ALLOW_BUSY: u32 = 1 << 10;
/// Not shown in the slow log.
pub const SKIP_SLOWLOG: u32 = 1 << 11;
/// May block the client.
pub const BLOCKING: u32 = 1 << 15;
/// Not shown to MONITOR.
pub const SKIP_MONITOR: u32 = 1 << 12;
/// May be called with no key (EVAL with 0 keys).
pub const NO_MANDATORY_KEYS: u32 = 1 << 13;
/// Key positions come from the arguments (EVAL's numkeys), not from first/last/step.
pub const MOVABLEKEYS: u32 = 1 << 14;

/// Flag names as COMMAND shows them, in Redis's order.
const FLAG_NAMES: &[(u32, &str)] = &[
    (WRITE, "write"),
    (READONLY, "readonly"),
    (DENYOOM, "denyoom"),
    (ADMIN, "admin"),
    (PUBSUB, "pubsub"),
    (NOSCRIPT, "noscript"),
    (BLOCKING, "blocking"),
    (LOADING, "loading"),
    (STALE, "stale"),
    (SKIP_MONITOR, "skip_monitor"),
    (SKIP_SLOWLOG, "skip_slowlog"),
    (FAST, "fast"),
    (NO_AUTH, "no_auth"),
    (NO_MANDATORY_KEYS, "no_mandatory_keys"),
    (ALLOW_BUSY, "allow_busy"),
    (MOVABLEKEYS, "movablekeys"),
];

/// Key-spec flags, as Redis's key specifications flag how a command uses a key
/// (COMMAND GETKEYSANDFLAGS; the ACLs read the read and write needs from them):
/// read-only, read-write, overwrite, remove; then what it does: reads the value
/// (`access`), replaces or changes it (`update`), adds to it (`insert`), removes from
/// it (`delete`).
pub const KEY_RO: u16 = 1;
/// Reads and writes the key.
pub const KEY_RW: u16 = 1 << 1;
/// Overwrites the key whatever it held.
pub const KEY_OW: u16 = 1 << 2;
/// Removes the key.
pub const KEY_RM: u16 = 1 << 3;
/// Reads the value (or part of it).
pub const KEY_ACCESS: u16 = 1 << 4;
/// Replaces or changes the value.
pub const KEY_UPDATE: u16 = 1 << 5;
/// Adds to the value.
pub const KEY_INSERT: u16 = 1 << 6;
/// Removes from the value (or the key).
pub const KEY_DELETE: u16 = 1 << 7;

/// Key-spec flag names, in Redis's order.
const KEY_FLAG_NAMES: &[(u16, &str)] = &[
    (KEY_RO, "RO"),
    (KEY_RW, "RW"),
    (KEY_OW, "OW"),
    (KEY_RM, "RM"),
    (KEY_ACCESS, "access"),
    (KEY_UPDATE, "update"),
    (KEY_INSERT, "insert"),
    (KEY_DELETE, "delete"),
];

/// One command.
#[derive(Debug)]
pub struct Command {
    /// Name, lower case.
    pub name: &'static str,
    /// Redis's arity: `n` exactly n arguments (with the name), `-n` at least n.
    pub arity: i32,
    /// Flags ([`WRITE`], [`READONLY`], ...).
    pub flags: u32,
    /// First key argument (0: none).
    pub first: i32,
    /// Last key argument (negative: counted from the end, -1 the last).
    pub last: i32,
    /// Step between keys.
    pub step: i32,
    /// Redis's command group (`string`, `generic`, `connection`, `server`, ...).
    pub group: &'static str,
    /// One line for COMMAND DOCS.
    pub summary: &'static str,
    /// The behaviour.
    pub handler: Handler,
}

impl Command {
    /// True when the command has every flag in `f`.
    pub fn has(&self, f: u32) -> bool {
        self.flags & f == f
    }

    /// True when `n` arguments (with the name) suit the arity.
    pub fn arity_ok(&self, n: usize) -> bool {
        let a = self.arity;
        if a >= 0 {
            n == a as usize
        } else {
            n >= a.unsigned_abs() as usize
        }
    }

    /// Redis's `may-replicate` commands: not writes, but they may send something to
    /// the replicas (a publication, PFCOUNT's cached count, a script's writes). A
    /// WRITE pause holds them and read-only scripts may not call them.
    pub fn may_replicate(&self) -> bool {
        matches!(
            self.name,
            "publish" | "spublish" | "pfcount" | "eval" | "evalsha" | "fcall"
        )
    }

    /// The indexes of the key arguments in `args` (with the name at 0).
    pub fn key_indexes(&self, n: usize) -> impl Iterator<Item = usize> {
        let first = self.first.max(0) as usize;
        let last = if self.last < 0 {
            (n as i64 + self.last as i64).max(0) as usize
        } else {
            (self.last as usize).min(n.saturating_sub(1))
        };
        let step = self.step.max(1) as usize;
        let any = first > 0 && first < n;
        (first..=last).step_by(step).filter(move |_| any)
    }

    /// The key indexes of a full command line `args` (name at 0): the row's positions,
    /// or for a `movablekeys` command (EVAL, FCALL and their kin) the `numkeys`
    /// arguments after its count (GEORADIUS and GEORADIUSBYMEMBER: the source and the
    /// STORE / STOREDIST destinations); None when the count is not valid.
    pub fn keys_of(&self, args: &[&[u8]]) -> Option<Vec<usize>> {
        if self.name == "sort" || self.name == "sort_ro" {
            return Some(sort_keys(args));
        }
        if self.name == "migrate" {
            // The key argument, or with an empty one, the keys after KEYS.
            if args.get(3).is_some_and(|k| !k.is_empty()) {
                return Some(vec![3]);
            }
            let at = args.iter().skip(6).position(|a| eq(a, "keys"));
            return Some(at.map_or(Vec::new(), |i| (i + 7..args.len()).collect()));
        }
        if self.name == "georadius" || self.name == "georadiusbymember" {
            return Some(super::geo::radius_keys(self.name, args));
        }
        if self.name == "xread" || self.name == "xreadgroup" {
            // The keys are the first half of what follows STREAMS.
            let at = args.iter().position(|a| eq(a, "streams"))? + 1;
            let rest = args.len() - at;
            if rest == 0 || !rest.is_multiple_of(2) {
                return None;
            }
            return Some((at..at + rest / 2).collect());
        }
        if !self.has(MOVABLEKEYS) {
            return Some(self.key_indexes(args.len()).collect());
        }
        // Where the key count sits, and the keys before it (Redis's keynum key specs).
        let (at, before): (usize, &[usize]) = match self.name {
            "zunion" | "zinter" | "zdiff" | "zintercard" | "sintercard" | "lmpop" | "zmpop" => {
                (1, &[])
            }
            "zunionstore" | "zinterstore" | "zdiffstore" => (2, &[1]),
            // EVAL, FCALL and their _RO forms, BLMPOP, BZMPOP.
            _ => (2, &[]),
        };
        let n = super::parse_i64(args.get(at)?)?;
        let n = usize::try_from(n).ok()?;
        if n > args.len().saturating_sub(at + 1) {
            return None;
        }
        Some(before.iter().copied().chain(at + 1..at + 1 + n).collect())
    }

    /// The keys of a full command line `args` (name at 0) with their key-spec flags
    /// ([`KEY_RO`], ...): the keys [`Command::keys_of`] finds, flagged as Redis's key
    /// specifications flag them (SET with GET and BITFIELD with a write as Redis
    /// resolves their variable flags). Empty for a command or subcommand without keys
    /// (shard channels are not keys here); None when the key count is not valid.
    pub fn key_flags(&self, args: &[&[u8]]) -> Option<Vec<(usize, u16)>> {
        let Some((first, rest)) = spec_flags(self, args) else {
            return Some(Vec::new());
        };
        let idx = self.keys_of(args)?;
        Some(
            idx.into_iter()
                .enumerate()
                .map(|(n, i)| (i, if n == 0 { first } else { rest }))
                .collect(),
        )
    }

    /// True when the command (for a container: the subcommand `args[1]`) has keys,
    /// whatever its arguments (Redis's "has key specifications").
    pub fn has_keys(&self, args: &[&[u8]]) -> bool {
        spec_flags(self, args).is_some()
    }

    /// Redis's ACL categories for this command (COMMAND's seventh field), as the ACLs
    /// use them ([`crate::acl::catalog`]).
    fn categories(&self) -> Vec<String> {
        let cats = crate::acl::catalog::catalog().entry(row(self) as u16).cats;
        crate::acl::catalog::names(cats)
            .map(|n| format!("@{n}"))
            .collect()
    }
}

/// COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern]: every
/// command and subcommand (`client|list`), or those of a category or whose name
/// matches; no module is loaded, so MODULE lists nothing.
fn command_list(rest: &[&[u8]], w: &mut Writer) {
    let all = crate::acl::catalog::catalog().entries();
    let names: Vec<&str> = match rest {
        [] => all.iter().map(|e| e.name.as_str()).collect(),
        [f, kind, v] if eq(f, "filterby") => {
            if eq(kind, "module") {
                Vec::new()
            } else if eq(kind, "aclcat") {
                match crate::acl::catalog::category(v) {
                    Some(cat) => all
                        .iter()
                        .filter(|e| e.cats & cat != 0)
                        .map(|e| e.name.as_str())
                        .collect(),
                    None => Vec::new(),
                }
            } else if eq(kind, "pattern") {
                // Names are lower case; the match ignores case, as Redis's does.
                let pat = v.to_ascii_lowercase();
                all.iter()
                    .filter(|e| super::glob(&pat, e.name.as_bytes()))
                    .map(|e| e.name.as_str())
                    .collect()
            } else {
                return w.error(super::SYNTAX);
            }
        }
        _ => return w.error(super::SYNTAX),
    };
    w.array(names.len());
    for n in names {
        w.bulk(n.as_bytes());
    }
}

macro_rules! row {
    ($name:literal, $arity:expr, $flags:expr, $keys:expr, $group:literal, $handler:expr, $summary:literal) => {
        Command {
            name: $name,
            arity: $arity,
            flags: $flags,
            first: $keys.0,
            last: $keys.1,
            step: $keys.2,
            group: $group,
            summary: $summary,
            handler: $handler,
        }
    };
}

const NOKEY: (i32, i32, i32) = (0, 0, 0);
const KEY1: (i32, i32, i32) = (1, 1, 1);
const KEYS: (i32, i32, i32) = (1, -1, 1);

/// Every command, sorted by name.
#[rustfmt::skip]
pub static COMMANDS: &[Command] = &[
    row!("acl", -2, 0, NOKEY, "server", acl::acl, "A container for Access List Control commands."),
    row!("append", 3, WRITE | DENYOOM | FAST, KEY1, "string", strings::append, "Appends a string to the value of a key. Creates the key if it doesn't exist."),
    row!("asking", 1, FAST, NOKEY, "cluster", cluster_cmds::asking, "Signals that a cluster client is following an -ASK redirect."),
    row!("auth", -2, NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | ALLOW_BUSY, NOKEY, "connection", connection::auth, "Authenticates the connection."),
    row!("bgrewriteaof", 1, ADMIN | NOSCRIPT, NOKEY, "server", server::bgrewriteaof, "Asynchronously rewrites the append-only file to disk."),
    row!("bgsave", -1, ADMIN | NOSCRIPT, NOKEY, "server", admin::bgsave, "Asynchronously saves the database(s) to disk."),
    row!("bitcount", -2, READONLY, KEY1, "bitmap", bits::bitcount, "Counts the number of set bits (population counting) in a string."),
    row!("bitfield", -2, WRITE | DENYOOM, KEY1, "bitmap", bits::bitfield, "Performs arbitrary bitfield integer operations on strings."),
    row!("bitfield_ro", -2, READONLY | FAST, KEY1, "bitmap", bits::bitfield_ro, "Performs arbitrary read-only bitfield integer operations on strings."),
    row!("bitop", -4, WRITE | DENYOOM, (2, -1, 1), "bitmap", bits::bitop, "Performs bitwise operations on multiple strings, and stores the result."),
    row!("bitpos", -3, READONLY, KEY1, "bitmap", bits::bitpos, "Finds the first set (1) or clear (0) bit in a string."),
    row!("blmove", 6, WRITE | DENYOOM | BLOCKING, (1, 2, 1), "list", blocking::blmove, "Pops an element from a list, pushes it to another list and returns it. Blocks until an element is available otherwise. Deletes the list if the last element was moved."),
    row!("blmpop", -5, WRITE | BLOCKING | MOVABLEKEYS, NOKEY, "list", blocking::lmpop, "Pops the first element from one of multiple lists. Blocks until an element is available otherwise. Deletes the list if the last element was popped."),
    row!("blpop", -3, WRITE | BLOCKING, (1, -2, 1), "list", blocking::bpop, "Removes and returns the first element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped."),
    row!("brpop", -3, WRITE | BLOCKING, (1, -2, 1), "list", blocking::bpop, "Removes and returns the last element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped."),
    row!("brpoplpush", 4, WRITE | DENYOOM | BLOCKING, (1, 2, 1), "list", blocking::blmove, "Pops an element from a list, pushes it to another list and returns it. Block until an element is available otherwise. Deletes the list if the last element was popped."),
    row!("bzmpop", -5, WRITE | BLOCKING | MOVABLEKEYS, NOKEY, "sorted-set", blocking::zmpop, "Removes and returns a member by score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped."),
    row!("bzpopmax", -3, WRITE | FAST | BLOCKING, (1, -2, 1), "sorted-set", blocking::bzpop, "Removes and returns the member with the highest score from one or more sorted sets. Blocks until a member available otherwise.  Deletes the sorted set if the last element was popped."),
    row!("bzpopmin", -3, WRITE | FAST | BLOCKING, (1, -2, 1), "sorted-set", blocking::bzpop, "Removes and returns the member with the lowest score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped."),
    row!("client", -2, 0, NOKEY, "connection", connection::client, "A container for client connection commands."),
    row!("cluster", -2, 0, NOKEY, "cluster", cluster::cluster, "A container for Redis Cluster commands."),
    row!("command", -1, LOADING | STALE, NOKEY, "server", command, "Returns detailed information about all commands."),
    row!("config", -2, ADMIN | NOSCRIPT | LOADING | STALE, NOKEY, "server", config::config, "A container for server configuration commands."),
    row!("copy", -3, WRITE | DENYOOM, (1, 2, 1), "generic", dbs::copy, "Copies the value of a key to a new key."),
    row!("dbsize", 1, READONLY | FAST, NOKEY, "server", server::dbsize, "Returns the number of keys in the database."),
    row!("debug", -2, ADMIN | NOSCRIPT | LOADING | STALE, NOKEY, "server", admin::debug, "A container for debugging commands."),
    row!("decr", 2, WRITE | DENYOOM | FAST, KEY1, "string", strings::decr, "Decrements the integer value of a key by one."),
    row!("decrby", 3, WRITE | DENYOOM | FAST, KEY1, "string", strings::decrby, "Decrements a number from the integer value of a key."),
    row!("del", -2, WRITE, KEYS, "generic", keys::del, "Deletes one or more keys."),
    row!("discard", 1, NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY, NOKEY, "transactions", multi::discard, "Discards a transaction."),
    row!("dump", 2, READONLY, KEY1, "generic", super::dump::dump, "Returns a serialized representation of the value stored at a key."),
    row!("echo", 2, FAST, NOKEY, "connection", connection::echo, "Returns the given string."),
    row!("eval", -3, NOSCRIPT | STALE | SKIP_MONITOR | NO_MANDATORY_KEYS | MOVABLEKEYS, NOKEY, "scripting", scripting::eval, "Executes a server-side Lua script."),
    row!("eval_ro", -3, READONLY | NOSCRIPT | STALE | SKIP_MONITOR | NO_MANDATORY_KEYS | MOVABLEKEYS, NOKEY, "scripting", scripting::eval_ro, "Executes a read-only server-side Lua script."),
    row!("evalsha", -3, NOSCRIPT | STALE | SKIP_MONITOR | NO_MANDATORY_KEYS | MOVABLEKEYS, NOKEY, "scripting", scripting::evalsha, "Executes a server-side Lua script by SHA1 digest."),
    row!("evalsha_ro", -3, READONLY | NOSCRIPT | STALE | SKIP_MONITOR | NO_MANDATORY_KEYS | MOVABLEKEYS, NOKEY, "scripting", scripting::evalsha_ro, "Executes a read-only server-side Lua script by SHA1 digest."),
    row!("exec", 1, NOSCRIPT | LOADING | STALE | SKIP_SLOWLOG, NOKEY, "transactions", multi::exec, "Executes all commands in a transaction."),
    row!("exists", -2, READONLY | FAST, KEYS, "generic", keys::exists, "Determines whether one or more keys exist."),
    row!("expire", -3, WRITE | FAST, KEY1, "generic", keys::expire, "Sets the expiration time of a key in seconds."),
    row!("expireat", -3, WRITE | FAST, KEY1, "generic", keys::expire, "Sets the expiration time of a key to a Unix timestamp."),
    row!("expiretime", 2, READONLY | FAST, KEY1, "generic", keys::expiretime, "Returns the expiration time of a key as a Unix timestamp."),
    row!("fcall", -3, NOSCRIPT | STALE | SKIP_MONITOR | NO_MANDATORY_KEYS | MOVABLEKEYS, NOKEY, "scripting", functions::fcall, "Invokes a function."),
    row!("fcall_ro", -3, READONLY | NOSCRIPT | STALE | SKIP_MONITOR | NO_MANDATORY_KEYS | MOVABLEKEYS, NOKEY, "scripting", functions::fcall_ro, "Invokes a read-only function."),
    row!("flushall", -1, WRITE, NOKEY, "server", server::flushall, "Removes all keys from all databases."),
    row!("flushdb", -1, WRITE, NOKEY, "server", server::flushdb, "Remove all keys from the current database."),
    row!("function", -2, 0, NOKEY, "scripting", functions::function, "A container for function commands."),
    row!("geoadd", -5, WRITE | DENYOOM, KEY1, "geo", geo::geoadd, "Adds one or more members to a geospatial index. The key is created if it doesn't exist."),
    row!("geodist", -4, READONLY, KEY1, "geo", geo::geodist, "Returns the distance between two members of a geospatial index."),
    row!("geohash", -2, READONLY, KEY1, "geo", geo::geohash, "Returns members from a geospatial index as geohash strings."),
    row!("geopos", -2, READONLY, KEY1, "geo", geo::geopos, "Returns the longitude and latitude of members from a geospatial index."),
    row!("georadius", -6, WRITE | DENYOOM | MOVABLEKEYS, KEY1, "geo", geo::georadius, "Queries a geospatial index for members within a distance from a coordinate, optionally stores the result."),
    row!("georadius_ro", -6, READONLY, KEY1, "geo", geo::georadius, "Returns members from a geospatial index that are within a distance from a coordinate."),
    row!("georadiusbymember", -5, WRITE | DENYOOM | MOVABLEKEYS, KEY1, "geo", geo::georadiusbymember, "Queries a geospatial index for members within a distance from a member, optionally stores the result."),
    row!("georadiusbymember_ro", -5, READONLY, KEY1, "geo", geo::georadiusbymember, "Returns members from a geospatial index that are within a distance from a member."),
    row!("geosearch", -7, READONLY, KEY1, "geo", geo::geosearch, "Queries a geospatial index for members inside an area of a box or a circle."),
    row!("geosearchstore", -8, WRITE | DENYOOM, (1, 2, 1), "geo", geo::geosearchstore, "Queries a geospatial index for members inside an area of a box or a circle, optionally stores the result."),
    row!("get", 2, READONLY | FAST, KEY1, "string", strings::get, "Returns the string value of a key."),
    row!("getbit", 3, READONLY | FAST, KEY1, "bitmap", strings::getbit, "Returns a bit value by offset."),
    row!("getdel", 2, WRITE | FAST, KEY1, "string", strings::getdel, "Returns the string value of a key after deleting the key."),
    row!("getex", -2, WRITE | FAST, KEY1, "string", strings::getex, "Returns the string value of a key after setting its expiration time."),
    row!("getrange", 4, READONLY, KEY1, "string", strings::getrange, "Returns a substring of the string stored at a key."),
    row!("getset", 3, WRITE | DENYOOM | FAST, KEY1, "string", strings::getset, "Returns the previous string value of a key after setting it to a new value."),
    row!("hdel", -3, WRITE | FAST, KEY1, "hash", hashes::hdel, "Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain."),
    row!("hello", -1, NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | ALLOW_BUSY, NOKEY, "connection", connection::hello, "Handshakes with the Redis server."),
    row!("hexists", 3, READONLY | FAST, KEY1, "hash", hashes::hexists, "Determines whether a field exists in a hash."),
    row!("hget", 3, READONLY | FAST, KEY1, "hash", hashes::hget, "Returns the value of a field in a hash."),
    row!("hgetall", 2, READONLY, KEY1, "hash", hashes::hgetall, "Returns all fields and values in a hash."),
    row!("hincrby", 4, WRITE | DENYOOM | FAST, KEY1, "hash", hashes::hincrby, "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if the field doesn't exist."),
    row!("hincrbyfloat", 4, WRITE | DENYOOM | FAST, KEY1, "hash", hashes::hincrbyfloat, "Increments the floating point value of a field by a number. Uses 0 as initial value if the field doesn't exist."),
    row!("hkeys", 2, READONLY, KEY1, "hash", hashes::hgetall, "Returns all fields in a hash."),
    row!("hlen", 2, READONLY | FAST, KEY1, "hash", hashes::hlen, "Returns the number of fields in a hash."),
    row!("hmget", -3, READONLY | FAST, KEY1, "hash", hashes::hmget, "Returns the values of all fields in a hash."),
    row!("hmset", -4, WRITE | DENYOOM | FAST, KEY1, "hash", hashes::hset, "Sets the values of multiple fields."),
    row!("hrandfield", -2, READONLY, KEY1, "hash", hashes::hrandfield, "Returns one or more random fields from a hash."),
    row!("hscan", -3, READONLY, KEY1, "hash", hashes::hscan, "Iterates over fields and values of a hash."),
    row!("hset", -4, WRITE | DENYOOM | FAST, KEY1, "hash", hashes::hset, "Creates or modifies the value of a field in a hash."),
    row!("hsetnx", 4, WRITE | DENYOOM | FAST, KEY1, "hash", hashes::hsetnx, "Sets the value of a field in a hash only when the field doesn't exist."),
    row!("hstrlen", 3, READONLY | FAST, KEY1, "hash", hashes::hstrlen, "Returns the length of the value of a field."),
    row!("hvals", 2, READONLY, KEY1, "hash", hashes::hgetall, "Returns all values in a hash."),
    row!("incr", 2, WRITE | DENYOOM | FAST, KEY1, "string", strings::incr, "Increments the integer value of a key by one."),
    row!("incrby", 3, WRITE | DENYOOM | FAST, KEY1, "string", strings::incrby, "Increments the integer value of a key by a number."),
    row!("incrbyfloat", 3, WRITE | DENYOOM | FAST, KEY1, "string", strings::incrbyfloat, "Increment the floating point value of a key by a number."),
    row!("info", -1, LOADING | STALE, NOKEY, "server", server::info, "Returns information and statistics about the server."),
    row!("keys", 2, READONLY, NOKEY, "generic", keys::keys, "Returns all key names that match a pattern."),
    row!("lastsave", 1, LOADING | STALE | FAST, NOKEY, "server", admin::lastsave, "Returns the Unix timestamp of the last successful save to disk."),
    row!("latency", -2, ADMIN | NOSCRIPT | LOADING | STALE, NOKEY, "server", latency::latency, "A container for latency diagnostics commands."),
    row!("lcs", -3, READONLY, (1, 2, 1), "string", strings::lcs, "Finds the longest common substring."),
    row!("lindex", 3, READONLY, KEY1, "list", lists::lindex, "Returns an element from a list by its index."),
    row!("linsert", 5, WRITE | DENYOOM, KEY1, "list", lists::edit, "Inserts an element before or after another element in a list."),
    row!("llen", 2, READONLY | FAST, KEY1, "list", lists::llen, "Returns the length of a list."),
    row!("lmove", 5, WRITE | DENYOOM, (1, 2, 1), "list", lists::lmove, "Returns an element after popping it from one list and pushing it to another. Deletes the list if the last element was moved."),
    row!("lmpop", -4, WRITE | MOVABLEKEYS, NOKEY, "list", blocking::lmpop, "Returns multiple elements from a list after removing them. Deletes the list if the last element was popped."),
    row!("lpop", -2, WRITE | FAST, KEY1, "list", lists::pop, "Returns the first elements in a list after removing it. Deletes the list if the last element was popped."),
    row!("lpos", -3, READONLY, KEY1, "list", lists::lpos, "Returns the index of matching elements in a list."),
    row!("lpush", -3, WRITE | DENYOOM | FAST, KEY1, "list", lists::push, "Prepends one or more elements to a list. Creates the key if it doesn't exist."),
    row!("lpushx", -3, WRITE | DENYOOM | FAST, KEY1, "list", lists::push, "Prepends one or more elements to a list only when the list exists."),
    row!("lrange", 4, READONLY, KEY1, "list", lists::lrange, "Returns a range of elements from a list."),
    row!("lrem", 4, WRITE, KEY1, "list", lists::edit, "Removes elements from a list. Deletes the list if the last element was removed."),
    row!("lset", 4, WRITE | DENYOOM, KEY1, "list", lists::edit, "Sets the value of an element in a list by its index."),
    row!("ltrim", 4, WRITE, KEY1, "list", lists::edit, "Removes elements from both ends a list. Deletes the list if all elements were trimmed."),
    row!("memory", -2, READONLY, (2, 2, 1), "server", server::memory, "A container for memory diagnostics commands."),
    row!("mget", -2, READONLY | FAST, KEYS, "string", strings::mget, "Atomically returns the string values of one or more keys."),
    row!("migrate", -6, WRITE | MOVABLEKEYS, (3, 3, 1), "generic", super::migrate::migrate, "Atomically transfers a key from one Redis instance to another."),
    row!("monitor", 1, ADMIN | NOSCRIPT | LOADING | STALE, NOKEY, "server", monitor::monitor, "Listens for all requests received by the server in real-time."),
    row!("move", 3, WRITE | FAST, KEY1, "generic", dbs::move_key, "Moves a key to another database."),
    row!("mset", -3, WRITE | DENYOOM, (1, -1, 2), "string", strings::mset, "Atomically creates or modifies the string values of one or more keys."),
    row!("msetnx", -3, WRITE | DENYOOM, (1, -1, 2), "string", strings::msetnx, "Atomically modifies the string values of one or more keys only when all keys don't exist."),
    row!("multi", 1, NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY, NOKEY, "transactions", multi::multi, "Starts a transaction."),
    row!("object", -2, READONLY, (2, 2, 1), "generic", keys::object, "A container for object introspection commands."),
    row!("persist", 2, WRITE | FAST, KEY1, "generic", keys::persist, "Removes the expiration time of a key."),
    row!("pexpire", -3, WRITE | FAST, KEY1, "generic", keys::expire, "Sets the expiration time of a key in milliseconds."),
    row!("pexpireat", -3, WRITE | FAST, KEY1, "generic", keys::expire, "Sets the expiration time of a key to a Unix milliseconds timestamp."),
    row!("pexpiretime", 2, READONLY | FAST, KEY1, "generic", keys::expiretime, "Returns the expiration time of a key as a Unix milliseconds timestamp."),
    row!("pfadd", -2, WRITE | DENYOOM | FAST, KEY1, "hyperloglog", hll::pfadd, "Adds the specified elements to the specified HyperLogLog."),
    row!("pfcount", -2, READONLY, KEYS, "hyperloglog", hll::pfcount, "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s)."),
    row!("pfdebug", 3, WRITE | DENYOOM | ADMIN, (2, 2, 1), "hyperloglog", hll::pfdebug, "Internal commands for debugging HyperLogLog values"),
    row!("pfmerge", -2, WRITE | DENYOOM, KEYS, "hyperloglog", hll::pfmerge, "Merge N different HyperLogLogs into a single one."),
    row!("pfselftest", 1, ADMIN, NOKEY, "hyperloglog", hll::pfselftest, "An internal command for testing HyperLogLog values"),
    row!("ping", -1, FAST, NOKEY, "connection", connection::ping, "Returns the server's liveliness response."),
    row!("psetex", 4, WRITE | DENYOOM, KEY1, "string", strings::setex, "Sets both string value and expiration time in milliseconds of a key. The key is created if it doesn't exist."),
    row!("psubscribe", -2, PUBSUB | NOSCRIPT | LOADING | STALE, NOKEY, "pubsub", pubsub::subscribe, "Listens for messages published to channels that match one or more patterns."),
    row!("psync", -3, ADMIN | NOSCRIPT, NOKEY, "server", replication::psync, "An internal command used in replication."),
    row!("pttl", 2, READONLY | FAST, KEY1, "generic", keys::ttl, "Returns the expiration time in milliseconds of a key."),
    row!("publish", 3, PUBSUB | LOADING | STALE | FAST, NOKEY, "pubsub", pubsub::publish, "Posts a message to a channel."),
    row!("pubsub", -2, 0, NOKEY, "pubsub", pubsub::pubsub, "A container for Pub/Sub commands."),
    row!("punsubscribe", -1, PUBSUB | NOSCRIPT | LOADING | STALE, NOKEY, "pubsub", pubsub::unsubscribe, "Stops listening to messages published to channels that match one or more patterns."),
    row!("quit", -1, NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | ALLOW_BUSY, NOKEY, "connection", connection::quit, "Closes the connection."),
    row!("randomkey", 1, READONLY, NOKEY, "generic", keys::randomkey, "Returns a random key name from the database."),
    row!("readonly", 1, FAST | LOADING | STALE, NOKEY, "cluster", cluster_cmds::readonly, "Enables read-only queries for a connection to a Redis Cluster replica node."),
    row!("readwrite", 1, FAST | LOADING | STALE, NOKEY, "cluster", cluster_cmds::readwrite, "Enables read-write queries for a connection to a Redis Cluster replica node."),
    row!("rename", 3, WRITE, (1, 2, 1), "generic", keys::rename, "Renames a key and overwrites the destination."),
    row!("renamenx", 3, WRITE | FAST, (1, 2, 1), "generic", keys::rename, "Renames a key only when the target key name doesn't exist."),
    row!("replconf", -1, ADMIN | NOSCRIPT | LOADING | STALE | ALLOW_BUSY, NOKEY, "server", replication::replconf, "An internal command for configuring the replication stream."),
    row!("replicaof", 3, ADMIN | NOSCRIPT | STALE, NOKEY, "server", replication::replicaof, "Configures a server as replica of another, or promotes it to a master."),
    row!("reset", 1, NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | ALLOW_BUSY, NOKEY, "connection", connection::reset, "Resets the connection."),
    row!("restore", -4, WRITE | DENYOOM, KEY1, "generic", super::dump::restore, "Creates a key from the serialized representation of a value."),
    row!("restore-asking", -4, WRITE | DENYOOM, KEY1, "server", super::dump::restore, "An internal command for migrating keys in a cluster."),
    row!("role", 1, NOSCRIPT | LOADING | STALE | FAST, NOKEY, "server", replication::role, "Returns the replication role."),
    row!("rpop", -2, WRITE | FAST, KEY1, "list", lists::pop, "Returns and removes the last elements of a list. Deletes the list if the last element was popped."),
    row!("rpoplpush", 3, WRITE | DENYOOM, (1, 2, 1), "list", lists::lmove, "Returns the last element of a list after removing and pushing it to another list. Deletes the list if the last element was popped."),
    row!("rpush", -3, WRITE | DENYOOM | FAST, KEY1, "list", lists::push, "Appends one or more elements to a list. Creates the key if it doesn't exist."),
    row!("rpushx", -3, WRITE | DENYOOM | FAST, KEY1, "list", lists::push, "Appends an element to a list only when the list exists."),
    row!("sadd", -3, WRITE | DENYOOM | FAST, KEY1, "set", sets::sadd, "Adds one or more members to a set. Creates the key if it doesn't exist."),
    row!("save", 1, ADMIN | NOSCRIPT, NOKEY, "server", admin::save, "Synchronously saves the database(s) to disk."),
    row!("scan", -2, READONLY, NOKEY, "generic", keys::scan, "Iterates over the key names in the database."),
    row!("scard", 2, READONLY | FAST, KEY1, "set", sets::scard, "Returns the number of members in a set."),
    row!("script", -2, 0, NOKEY, "scripting", scripting::script, "A container for Lua scripts management commands."),
    row!("sdiff", -2, READONLY, KEYS, "set", sets::sinter, "Returns the difference of multiple sets."),
    row!("sdiffstore", -3, WRITE | DENYOOM, KEYS, "set", sets::sinterstore, "Stores the difference of multiple sets in a key."),
    row!("select", 2, LOADING | STALE | FAST, NOKEY, "connection", connection::select, "Changes the selected database."),
    row!("set", -3, WRITE | DENYOOM, KEY1, "string", strings::set, "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist."),
    row!("setbit", 4, WRITE | DENYOOM, KEY1, "bitmap", strings::setbit, "Sets or clears the bit at offset of the string value. Creates the key if it doesn't exist."),
    row!("setex", 4, WRITE | DENYOOM, KEY1, "string", strings::setex, "Sets the string value and expiration time of a key. Creates the key if it doesn't exist."),
    row!("setnx", 3, WRITE | DENYOOM | FAST, KEY1, "string", strings::setnx, "Set the string value of a key only when the key doesn't exist."),
    row!("setrange", 4, WRITE | DENYOOM, KEY1, "string", strings::setrange, "Overwrites a part of a string value with another by an offset. Creates the key if it doesn't exist."),
    row!("shutdown", -1, ADMIN | NOSCRIPT | LOADING | STALE | ALLOW_BUSY, NOKEY, "server", server::shutdown, "Synchronously saves the database(s) to disk and shuts down the Redis server."),
    row!("sinter", -2, READONLY, KEYS, "set", sets::sinter, "Returns the intersect of multiple sets."),
    row!("sintercard", -3, READONLY | MOVABLEKEYS, NOKEY, "set", sets::sintercard, "Returns the number of members of the intersect of multiple sets."),
    row!("sinterstore", -3, WRITE | DENYOOM, KEYS, "set", sets::sinterstore, "Stores the intersect of multiple sets in a key."),
    row!("sismember", 3, READONLY | FAST, KEY1, "set", sets::sismember, "Determines whether a member belongs to a set."),
    row!("slaveof", 3, ADMIN | NOSCRIPT | STALE, NOKEY, "server", replication::replicaof, "Sets a Redis server as a replica of another, or promotes it to being a master."),
    row!("slowlog", -2, ADMIN | LOADING | STALE, NOKEY, "server", admin::slowlog, "A container for slow log commands."),
    row!("smembers", 2, READONLY, KEY1, "set", sets::smembers, "Returns all members of a set."),
    row!("smismember", -3, READONLY | FAST, KEY1, "set", sets::smismember, "Determines whether multiple members belong to a set."),
    row!("smove", 4, WRITE | FAST, (1, 2, 1), "set", sets::smove, "Moves a member from one set to another."),
    row!("sort", -2, WRITE | DENYOOM | MOVABLEKEYS, KEY1, "generic", sort::sort, "Sorts the elements in a list, a set, or a sorted set, optionally storing the result."),
    row!("sort_ro", -2, READONLY | MOVABLEKEYS, KEY1, "generic", sort::sort, "Returns the sorted elements of a list, a set, or a sorted set."),
    row!("spop", -2, WRITE | FAST, KEY1, "set", sets::spop, "Returns one or more random members from a set after removing them. Deletes the set if the last member was popped."),
    row!("spublish", 3, PUBSUB | LOADING | STALE | FAST, KEY1, "pubsub", pubsub::publish, "Post a message to a shard channel"),
    row!("srandmember", -2, READONLY, KEY1, "set", sets::srandmember, "Get one or multiple random members from a set"),
    row!("srem", -3, WRITE | FAST, KEY1, "set", sets::srem, "Removes one or more members from a set. Deletes the set if the last member was removed."),
    row!("sscan", -3, READONLY, KEY1, "set", sets::sscan, "Iterates over members of a set."),
    row!("ssubscribe", -2, PUBSUB | NOSCRIPT | LOADING | STALE, KEYS, "pubsub", pubsub::subscribe, "Listens for messages published to shard channels."),
    row!("strlen", 2, READONLY | FAST, KEY1, "string", strings::strlen, "Returns the length of a string value."),
    row!("subscribe", -2, PUBSUB | NOSCRIPT | LOADING | STALE, NOKEY, "pubsub", pubsub::subscribe, "Listens for messages published to channels."),
    row!("substr", 4, READONLY, KEY1, "string", strings::getrange, "Returns a substring from a string value."),
    row!("sunion", -2, READONLY, KEYS, "set", sets::sinter, "Returns the union of multiple sets."),
    row!("sunionstore", -3, WRITE | DENYOOM, KEYS, "set", sets::sinterstore, "Stores the union of multiple sets in a key."),
    row!("sunsubscribe", -1, PUBSUB | NOSCRIPT | LOADING | STALE, KEYS, "pubsub", pubsub::unsubscribe, "Stops listening to messages posted to shard channels."),
    row!("swapdb", 3, WRITE | FAST, NOKEY, "server", dbs::swapdb, "Swaps two Redis databases."),
    row!("sync", 1, ADMIN | NOSCRIPT, NOKEY, "server", replication::sync, "An internal command used in replication."),
    row!("time", 1, LOADING | STALE | FAST, NOKEY, "server", strings::time, "Returns the server time."),
    row!("touch", -2, READONLY | FAST, KEYS, "generic", keys::touch, "Returns the number of existing keys out of those specified after updating the time they were last accessed."),
    row!("ttl", 2, READONLY | FAST, KEY1, "generic", keys::ttl, "Returns the expiration time in seconds of a key."),
    row!("type", 2, READONLY | FAST, KEY1, "generic", keys::type_, "Determines the type of value stored at a key."),
    row!("unlink", -2, WRITE | FAST, KEYS, "generic", keys::del, "Asynchronously deletes one or more keys."),
    row!("unsubscribe", -1, PUBSUB | NOSCRIPT | LOADING | STALE, NOKEY, "pubsub", pubsub::unsubscribe, "Stops listening to messages posted to channels."),
    row!("unwatch", 1, NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY, NOKEY, "transactions", multi::unwatch, "Forgets about watched keys of a transaction."),
    row!("wait", 3, NOSCRIPT, NOKEY, "generic", replication::wait, "Blocks until the asynchronous replication of all preceding write commands sent by the connection is completed."),
    row!("watch", -2, NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY, KEYS, "transactions", multi::watch, "Monitors changes to keys to determine the execution of a transaction."),
    row!("xack", -4, WRITE | FAST, KEY1, "stream", streams::groups::xack, "Returns the number of messages that were successfully acknowledged by the consumer group member of a stream."),
    row!("xadd", -5, WRITE | DENYOOM | FAST, KEY1, "stream", streams::xadd, "Appends a new message to a stream. Creates the key if it doesn't exist."),
    row!("xautoclaim", -6, WRITE | FAST, KEY1, "stream", streams::groups::xautoclaim, "Changes, or acquires, ownership of messages in a consumer group, as if the messages were delivered to as consumer group member."),
    row!("xclaim", -6, WRITE | FAST, KEY1, "stream", streams::groups::xclaim, "Changes, or acquires, ownership of a message in a consumer group, as if the message was delivered a consumer group member."),
    row!("xdel", -3, WRITE | FAST, KEY1, "stream", streams::xdel, "Returns the number of messages after removing them from a stream."),
    row!("xgroup", -2, WRITE, (2, 2, 1), "stream", streams::groups::xgroup, "A container for consumer groups commands."),
    row!("xinfo", -2, READONLY, (2, 2, 1), "stream", streams::info::xinfo, "A container for stream introspection commands."),
    row!("xlen", 2, READONLY | FAST, KEY1, "stream", streams::xlen, "Return the number of messages in a stream."),
    row!("xpending", -3, READONLY, KEY1, "stream", streams::groups::xpending, "Returns the information and entries from a stream consumer group's pending entries list."),
    row!("xrange", -4, READONLY, KEY1, "stream", streams::xrange, "Returns the messages from a stream within a range of IDs."),
    row!("xread", -4, READONLY | BLOCKING | MOVABLEKEYS, NOKEY, "stream", streams::xread, "Returns messages from multiple streams with IDs greater than the ones requested. Blocks until a message is available otherwise."),
    row!("xreadgroup", -7, WRITE | BLOCKING | MOVABLEKEYS, NOKEY, "stream", streams::xread, "Returns new or historical messages from a stream for a consumer in a group. Blocks until a message is available otherwise."),
    row!("xrevrange", -4, READONLY, KEY1, "stream", streams::xrange, "Returns the messages from a stream within a range of IDs in reverse order."),
    row!("xsetid", -3, WRITE | DENYOOM | FAST, KEY1, "stream", streams::xsetid, "An internal command for replicating stream values."),
    row!("xtrim", -4, WRITE, KEY1, "stream", streams::xtrim, "Deletes messages from the beginning of a stream."),
    row!("zadd", -4, WRITE | DENYOOM | FAST, KEY1, "sorted-set", zsets::zadd, "Adds one or more members to a sorted set, or updates their scores. Creates the key if it doesn't exist."),
    row!("zcard", 2, READONLY | FAST, KEY1, "sorted-set", zsets::zcard, "Returns the number of members in a sorted set."),
    row!("zcount", 4, READONLY | FAST, KEY1, "sorted-set", zsets::zcount, "Returns the count of members in a sorted set that have scores within a range."),
    row!("zdiff", -3, READONLY | MOVABLEKEYS, NOKEY, "sorted-set", zsets::zcombine, "Returns the difference between multiple sorted sets."),
    row!("zdiffstore", -4, WRITE | DENYOOM | MOVABLEKEYS, (1, 1, 1), "sorted-set", zsets::zcombine, "Stores the difference of multiple sorted sets in a key."),
    row!("zincrby", 4, WRITE | DENYOOM | FAST, KEY1, "sorted-set", zsets::zadd, "Increments the score of a member in a sorted set."),
    row!("zinter", -3, READONLY | MOVABLEKEYS, NOKEY, "sorted-set", zsets::zcombine, "Returns the intersect of multiple sorted sets."),
    row!("zintercard", -3, READONLY | MOVABLEKEYS, NOKEY, "sorted-set", zsets::zcombine, "Returns the number of members of the intersect of multiple sorted sets."),
    row!("zinterstore", -4, WRITE | DENYOOM | MOVABLEKEYS, (1, 1, 1), "sorted-set", zsets::zcombine, "Stores the intersect of multiple sorted sets in a key."),
    row!("zlexcount", 4, READONLY | FAST, KEY1, "sorted-set", zsets::zcount, "Returns the number of members in a sorted set within a lexicographical range."),
    row!("zmpop", -4, WRITE | MOVABLEKEYS, NOKEY, "sorted-set", blocking::zmpop, "Returns the highest- or lowest-scoring members from one or more sorted sets after removing them. Deletes the sorted set if the last member was popped."),
    row!("zmscore", -3, READONLY | FAST, KEY1, "sorted-set", zsets::zmscore, "Returns the score of one or more members in a sorted set."),
    row!("zpopmax", -2, WRITE | FAST, KEY1, "sorted-set", zsets::zpop, "Returns the highest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped."),
    row!("zpopmin", -2, WRITE | FAST, KEY1, "sorted-set", zsets::zpop, "Returns the lowest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped."),
    row!("zrandmember", -2, READONLY, KEY1, "sorted-set", zsets::zrandmember, "Returns one or more random members from a sorted set."),
    row!("zrange", -4, READONLY, KEY1, "sorted-set", zsets::zrange, "Returns members in a sorted set within a range of indexes."),
    row!("zrangebylex", -4, READONLY, KEY1, "sorted-set", zsets::zrange, "Returns members in a sorted set within a lexicographical range."),
    row!("zrangebyscore", -4, READONLY, KEY1, "sorted-set", zsets::zrange, "Returns members in a sorted set within a range of scores."),
    row!("zrangestore", -5, WRITE | DENYOOM, (1, 2, 1), "sorted-set", zsets::zrangestore, "Stores a range of members from sorted set in a key."),
    row!("zrank", -3, READONLY | FAST, KEY1, "sorted-set", zsets::zrank, "Returns the index of a member in a sorted set ordered by ascending scores."),
    row!("zrem", -3, WRITE | FAST, KEY1, "sorted-set", zsets::zrem, "Removes one or more members from a sorted set. Deletes the sorted set if all members were removed."),
    row!("zremrangebylex", 4, WRITE, KEY1, "sorted-set", zsets::zremrange, "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if all members were removed."),
    row!("zremrangebyrank", 4, WRITE, KEY1, "sorted-set", zsets::zremrange, "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all members were removed."),
    row!("zremrangebyscore", 4, WRITE, KEY1, "sorted-set", zsets::zremrange, "Removes members in a sorted set within a range of scores. Deletes the sorted set if all members were removed."),
    row!("zrevrange", -4, READONLY, KEY1, "sorted-set", zsets::zrange, "Returns members in a sorted set within a range of indexes in reverse order."),
    row!("zrevrangebylex", -4, READONLY, KEY1, "sorted-set", zsets::zrange, "Returns members in a sorted set within a lexicographical range in reverse order."),
    row!("zrevrangebyscore", -4, READONLY, KEY1, "sorted-set", zsets::zrange, "Returns members in a sorted set within a range of scores in reverse order."),
    row!("zrevrank", -3, READONLY | FAST, KEY1, "sorted-set", zsets::zrank, "Returns the index of a member in a sorted set ordered by descending scores."),
    row!("zscan", -3, READONLY, KEY1, "sorted-set", zsets::zscan, "Iterates over members and scores of a sorted set."),
    row!("zscore", 3, READONLY | FAST, KEY1, "sorted-set", zsets::zscore, "Returns the score of a member in a sorted set."),
    row!("zunion", -3, READONLY | MOVABLEKEYS, NOKEY, "sorted-set", zsets::zcombine, "Returns the union of multiple sorted sets."),
    row!("zunionstore", -4, WRITE | DENYOOM | MOVABLEKEYS, (1, 1, 1), "sorted-set", zsets::zcombine, "Stores the union of multiple sorted sets in a key."),
];

// Every row has its counters (INFO commandstats).
const _: () = assert!(COMMANDS.len() <= crate::state::cmdstats::MAX_ROWS);

/// The row of the command named `name` (any case).
/// The row of `cmd` in [`COMMANDS`].
pub fn row(cmd: &Command) -> usize {
    let base = COMMANDS.as_ptr() as usize;
    (cmd as *const Command as usize - base) / std::mem::size_of::<Command>()
}

/// The row of the command `name` (any case), without allocating.
pub fn lookup(name: &[u8]) -> Option<&'static Command> {
    // The name in lower case on the stack (longer names are unknown anyway).
    let mut buf = [0u8; 24];
    if name.len() > buf.len() {
        return None;
    }
    for (d, c) in buf.iter_mut().zip(name) {
        *d = c.to_ascii_lowercase();
    }
    let lname = &buf[..name.len()];
    COMMANDS
        .binary_search_by(|c| c.name.as_bytes().cmp(lname))
        .ok()
        .map(|i| &COMMANDS[i])
}

/// The command a full command line `args` (name first) names, as Redis looks it up:
/// None for an unknown command, or for a container (CONFIG, OBJECT, ...) followed by
/// an unknown subcommand; with the catalog id of what runs (`crate::acl::catalog`) and
/// whether that is a subcommand.
pub fn lookup_call(args: &[&[u8]]) -> Option<(&'static Command, u16, bool)> {
    let c = lookup(args.first()?)?;
    let cat = crate::acl::catalog::catalog();
    let (id, is_sub) = cat.call(c, args);
    if !is_sub && args.len() >= 2 && !cat.entry(id).subs.is_empty() {
        return None;
    }
    Some((c, id, is_sub))
}

/// One command's COMMAND / COMMAND INFO entry.
fn describe(c: &Command, w: &mut Writer) {
    w.array(10);
    w.bulk(c.name.as_bytes());
    w.int(c.arity as i64);
    let flags: Vec<&str> = FLAG_NAMES
        .iter()
        .filter(|(f, _)| c.has(*f))
        .map(|(_, n)| *n)
        .collect();
    w.set(flags.len());
    for f in flags {
        w.simple(f);
    }
    w.int(c.first as i64);
    w.int(c.last as i64);
    w.int(c.step as i64);
    let cats = c.categories();
    w.set(cats.len());
    for cat in cats {
        w.simple(&cat);
    }
    w.array(0); // tips
    w.array(0); // key specifications
    w.array(0); // subcommands
}

/// One command's COMMAND DOCS entry (name, then a map of its documentation).
fn document(c: &Command, w: &mut Writer) {
    w.bulk(c.name.as_bytes());
    w.map(3);
    w.bulk(b"summary");
    w.bulk(c.summary.as_bytes());
    w.bulk(b"since");
    w.bulk(b"1.0.0");
    w.bulk(b"group");
    w.bulk(c.group.as_bytes());
}

/// COMMAND [COUNT | INFO name... | DOCS [name...] | LIST | GETKEYS cmd args... |
/// GETKEYSANDFLAGS cmd args... | HELP].
pub fn command(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let _ = ctx;
    let Some(sub) = args.get(1) else {
        w.array(COMMANDS.len());
        for c in COMMANDS {
            describe(c, w);
        }
        return;
    };
    let rest = &args[2..];
    if eq(sub, "count") && rest.is_empty() {
        w.int(COMMANDS.len() as i64);
    } else if eq(sub, "info") {
        if rest.is_empty() {
            w.array(COMMANDS.len());
            COMMANDS.iter().for_each(|c| describe(c, w));
            return;
        }
        w.array(rest.len());
        for name in rest {
            match lookup(name) {
                Some(c) => describe(c, w),
                None => w.null_array(),
            }
        }
    } else if eq(sub, "docs") {
        let found: Vec<&Command> = if rest.is_empty() {
            COMMANDS.iter().collect()
        } else {
            rest.iter().filter_map(|n| lookup(n)).collect()
        };
        w.map(found.len());
        for c in found {
            document(c, w);
        }
    } else if eq(sub, "list") {
        command_list(rest, w);
    } else if (eq(sub, "getkeys") || eq(sub, "getkeysandflags")) && rest.len() >= 2 {
        getkeys(rest, eq(sub, "getkeysandflags"), w);
    } else if eq(sub, "help") && rest.is_empty() {
        let lines = [
            "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "(no subcommand)",
            "    Return details about all commands.",
            "COUNT",
            "    Return the total number of commands in this server.",
            "LIST",
            "    Return a list of all commands in this server.",
            "INFO [<command-name> ...]",
            "    Return details about multiple commands.",
            "DOCS [<command-name> ...]",
            "    Return documentation details about multiple commands.",
            "GETKEYS <full-command>",
            "    Return the keys from a full command.",
            "GETKEYSANDFLAGS <full-command>",
            "    Return the keys and the access flags from a full command.",
        ];
        super::help(w, &lines);
    } else if eq(sub, "count")
        || eq(sub, "getkeys")
        || eq(sub, "getkeysandflags")
        || eq(sub, "help")
    {
        arity(w, format!("command|{}", super::lower(sub)).as_bytes());
    } else {
        w.error(&format!(
            "ERR unknown subcommand '{}'. Try COMMAND HELP.",
            String::from_utf8_lossy(sub)
        ));
    }
}

/// The key-spec flags of `cmd`'s keys (for a container: of the subcommand `args[1]`)
/// as Redis 7.0 has them: those of the first key and those of the others (a
/// destination before its sources, a source before its destination); None for a
/// command or subcommand without keys. Commands with keys not named here read them
/// (`RO access`) when read-only; a write not named is taken to read and change them.
fn spec_flags(cmd: &Command, args: &[&[u8]]) -> Option<(u16, u16)> {
    const R: u16 = KEY_RO | KEY_ACCESS;
    const RW_ACCESS: u16 = KEY_RW | KEY_ACCESS;
    const RW_UPDATE: u16 = KEY_RW | KEY_ACCESS | KEY_UPDATE;
    const POP: u16 = KEY_RW | KEY_ACCESS | KEY_DELETE;
    const OVERWRITE: u16 = KEY_OW | KEY_UPDATE;
    let one = |f: u16| Some((f, f));
    let sub = |names: &[&str]| args.get(1).is_some_and(|s| names.iter().any(|n| eq(s, n)));
    match cmd.name {
        // Containers: only some subcommands have keys.
        "object" => sub(&["encoding", "freq", "idletime", "refcount"]).then_some((KEY_RO, KEY_RO)),
        "memory" => sub(&["usage"]).then_some((KEY_RO, KEY_RO)),
        "xinfo" => sub(&["consumers", "groups", "stream"]).then_some((R, R)),
        "xgroup" => {
            if sub(&["create", "createconsumer"]) {
                one(KEY_RW | KEY_INSERT)
            } else if sub(&["delconsumer", "destroy"]) {
                one(KEY_RW | KEY_DELETE)
            } else if sub(&["setid"]) {
                one(KEY_RW | KEY_UPDATE)
            } else {
                None
            }
        }
        // Shard channels are keys for cluster routing only.
        "spublish" | "ssubscribe" | "sunsubscribe" => None,
        // Variable flags: GET reads the old value.
        "set" => {
            let get = args.iter().skip(3).any(|a| eq(a, "get"));
            one(if get { RW_UPDATE } else { OVERWRITE })
        }
        "bitfield" => one(if bitfield_reads_only(args) {
            R
        } else {
            RW_UPDATE
        }),
        // A destination, then sources.
        "bitop" | "geosearchstore" | "sdiffstore" | "sunionstore" | "zdiffstore"
        | "zinterstore" | "zrangestore" | "zunionstore" => Some((OVERWRITE, R)),
        "sinterstore" => Some((KEY_RW | KEY_UPDATE, R)),
        "pfmerge" => Some((KEY_RW | KEY_ACCESS | KEY_INSERT, R)),
        // A source emptied or moved, then a destination.
        "blmove" | "brpoplpush" | "lmove" | "rpoplpush" | "smove" => {
            Some((POP, KEY_RW | KEY_INSERT))
        }
        "rename" => Some((POP, OVERWRITE)),
        "renamenx" => Some((POP, KEY_OW | KEY_INSERT)),
        // A source read, then destinations.
        "copy" | "georadius" | "georadiusbymember" | "sort" => Some((R, OVERWRITE)),
        "migrate" => one(POP),
        // Existence, type and length tests: the value is not read.
        "exists" | "hexists" | "hlen" | "hstrlen" | "llen" | "scard" | "sismember" | "strlen"
        | "touch" | "type" | "watch" | "xlen" | "zcard" => one(KEY_RO),
        // Writes that change the value without reading it.
        "expire" | "expireat" | "geoadd" | "hmset" | "hset" | "lset" | "persist" | "pexpire"
        | "pexpireat" | "setrange" | "xack" | "xadd" | "xclaim" | "xsetid" | "zadd" => {
            one(KEY_RW | KEY_UPDATE)
        }
        // Removals from the value.
        "hdel" | "lrem" | "ltrim" | "srem" | "xautoclaim" | "xdel" | "xtrim" | "zrem"
        | "zremrangebylex" | "zremrangebyrank" | "zremrangebyscore" => one(KEY_RW | KEY_DELETE),
        // Additions to the value.
        "append" | "hsetnx" | "linsert" | "lpush" | "lpushx" | "pfadd" | "rpush" | "rpushx"
        | "sadd" => one(KEY_RW | KEY_INSERT),
        // Pops: read and remove.
        "blmpop" | "blpop" | "brpop" | "bzmpop" | "bzpopmax" | "bzpopmin" | "getdel" | "lmpop"
        | "lpop" | "rpop" | "spop" | "zmpop" | "zpopmax" | "zpopmin" => one(POP),
        // Overwrites.
        "mset" | "psetex" | "restore" | "restore-asking" | "setex" => one(OVERWRITE),
        "msetnx" | "setnx" => one(KEY_OW | KEY_INSERT),
        "del" | "unlink" => one(KEY_RM | KEY_DELETE),
        // PFCOUNT may cache the count it computed in the value.
        "pfcount" | "pfdebug" => one(RW_ACCESS),
        // Streams read by a group (its state is not the key's value).
        "xreadgroup" => one(R),
        _ if cmd.first == 0 && !cmd.has(MOVABLEKEYS) => None,
        _ if cmd.has(READONLY) => one(R),
        // Scripts (Redis cannot tell what they do), INCR and its kin, GETEX, MOVE, ...
        _ => one(RW_UPDATE),
    }
}

/// True when BITFIELD's operations are only GETs and OVERFLOWs (Redis's reading of
/// them: a syntax error counts as a write).
fn bitfield_reads_only(args: &[&[u8]]) -> bool {
    let mut i = 2;
    while i < args.len() {
        let left = args.len() - i - 1;
        if eq(args[i], "get") && left >= 2 {
            i += 3;
        } else if eq(args[i], "overflow") && left >= 1 {
            i += 2;
        } else {
            return false;
        }
    }
    true
}

/// COMMAND GETKEYS / GETKEYSANDFLAGS over the full command `cmd` (name first), with
/// Redis's checks in its order and texts.
fn getkeys(cmd: &[&[u8]], with_flags: bool, w: &mut Writer) {
    // A container's subcommand, as Redis looks it up: an unknown one is no command.
    let Some((c, id, is_sub)) = lookup_call(cmd) else {
        return w.error("ERR Invalid command specified");
    };
    if !c.has_keys(cmd) {
        return w.error("ERR The command has no key arguments");
    }
    let arity_ok = if is_sub {
        let a = crate::acl::catalog::catalog().entry(id).arity;
        if a >= 0 {
            cmd.len() == a as usize
        } else {
            cmd.len() >= a.unsigned_abs() as usize
        }
    } else {
        c.arity_ok(cmd.len())
    };
    if !arity_ok {
        return w.error("ERR Invalid number of arguments specified for command");
    }
    let Some(keys) = c.key_flags(cmd).filter(|k| !k.is_empty()) else {
        if c.has(NO_MANDATORY_KEYS) {
            return w.array(0);
        }
        return w.error("ERR Invalid arguments specified for command");
    };
    w.array(keys.len());
    for (i, flags) in keys {
        if !with_flags {
            w.bulk(cmd[i]);
            continue;
        }
        w.array(2);
        w.bulk(cmd[i]);
        let names: Vec<&str> = KEY_FLAG_NAMES
            .iter()
            .filter(|(f, _)| flags & f != 0)
            .map(|(_, n)| *n)
            .collect();
        w.set(names.len());
        for n in names {
            w.simple(n);
        }
    }
}

/// SORT's keys: the sorted key and the (last) STORE destination (option arguments skipped).
fn sort_keys(args: &[&[u8]]) -> Vec<usize> {
    let mut keys = vec![1];
    let mut i = 2;
    while i < args.len() {
        let skip = match super::lower(args[i]).as_str() {
            "limit" => 2,
            "get" | "by" => 1,
            "store" => {
                // Only the last STORE counts, as in the command itself.
                if i + 1 < args.len() {
                    keys.truncate(1);
                    keys.push(i + 1);
                }
                1
            }
            _ => 0,
        };
        i += 1 + skip;
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_sorted_unique_and_lower_case() {
        for pair in COMMANDS.windows(2) {
            assert!(
                pair[0].name < pair[1].name,
                "{} / {}",
                pair[0].name,
                pair[1].name
            );
        }
        for c in COMMANDS {
            assert_eq!(c.name, c.name.to_ascii_lowercase());
            assert!(std::ptr::eq(
                lookup(c.name.to_uppercase().as_bytes()).unwrap(),
                c
            ));
        }
        assert!(lookup(b"nosuchcommand").is_none());
        assert!(lookup(&[b'g'; 40]).is_none());
    }

    #[test]
    fn key_positions_follow_the_row() {
        let mset = lookup(b"mset").unwrap();
        assert_eq!(mset.key_indexes(5).collect::<Vec<_>>(), vec![1, 3]);
        let del = lookup(b"del").unwrap();
        assert_eq!(del.key_indexes(4).collect::<Vec<_>>(), vec![1, 2, 3]);
        let get = lookup(b"get").unwrap();
        assert_eq!(get.key_indexes(2).collect::<Vec<_>>(), vec![1]);
        let ping = lookup(b"ping").unwrap();
        assert_eq!(ping.key_indexes(2).count(), 0);
    }

    /// The flag names of each key of `args`, as GETKEYSANDFLAGS writes them.
    fn flags_of(args: &[&str]) -> Option<Vec<(String, Vec<&'static str>)>> {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        let c = lookup(args[0]).unwrap();
        let keys = c.key_flags(&args)?;
        Some(
            keys.into_iter()
                .map(|(i, f)| {
                    let names = KEY_FLAG_NAMES
                        .iter()
                        .filter(|(b, _)| f & b != 0)
                        .map(|(_, n)| *n)
                        .collect();
                    (String::from_utf8_lossy(args[i]).into_owned(), names)
                })
                .collect(),
        )
    }

    #[test]
    fn key_flags_are_those_of_redis_key_specs() {
        // COMMAND INFO's key specifications of redis-server 7.0.15, grouped by flags:
        // every command and subcommand of the table that has keys (first key; then
        // the others where they differ).
        let groups: &[(&str, &str)] = &[
            ("RO access", "bitcount bitfield_ro bitpos dump eval_ro evalsha_ro expiretime fcall_ro geodist geohash geopos georadius_ro georadiusbymember_ro geosearch get getbit getrange hget hgetall hkeys hmget hrandfield hscan hvals lcs lindex lpos lrange mget pexpiretime pttl sdiff sinter sintercard smembers smismember srandmember sscan substr sunion ttl xinfo|consumers xinfo|groups xinfo|stream xpending xrange xread xreadgroup xrevrange zcount zdiff zinter zintercard zlexcount zmscore zrandmember zrange zrangebylex zrangebyscore zrank zrevrange zrevrangebylex zrevrangebyscore zrevrank zscan zscore zunion sort_ro"),
            ("RO", "exists hexists hlen hstrlen llen memory|usage object|freq object|idletime object|encoding object|refcount scard sismember strlen touch type watch xlen zcard"),
            ("RW update", "expire expireat geoadd hmset hset lset persist pexpire pexpireat setrange xack xadd xclaim xgroup|setid xsetid zadd"),
            ("RW access update", "decr decrby eval evalsha fcall getex getset hincrby hincrbyfloat incr incrby incrbyfloat move setbit zincrby bitfield"),
            ("RW access delete", "blmpop blpop brpop bzmpop bzpopmax bzpopmin getdel lmpop lpop rpop spop zmpop zpopmax zpopmin migrate"),
            ("RW delete", "hdel lrem ltrim srem xautoclaim xdel xgroup|delconsumer xgroup|destroy xtrim zrem zremrangebylex zremrangebyrank zremrangebyscore"),
            ("RW insert", "append hsetnx linsert lpush lpushx pfadd rpush rpushx sadd xgroup|create xgroup|createconsumer"),
            ("OW update/RO access", "bitop geosearchstore sdiffstore sunionstore zdiffstore zinterstore zrangestore zunionstore"),
            ("RW access delete/RW insert", "blmove brpoplpush lmove rpoplpush smove"),
            ("OW update", "mset psetex restore restore-asking setex set"),
            ("RM delete", "del unlink"),
            ("RO access/OW update", "georadius georadiusbymember copy sort"),
            ("OW insert", "msetnx setnx"),
            ("RW access", "pfcount pfdebug"),
            ("RW access insert/RO access", "pfmerge"),
            ("RW access delete/OW update", "rename"),
            ("RW access delete/OW insert", "renamenx"),
            ("RW update/RO access", "sinterstore"),
        ];
        let show = |f: u16| {
            KEY_FLAG_NAMES
                .iter()
                .filter(|(b, _)| f & b != 0)
                .map(|(_, n)| *n)
                .collect::<Vec<_>>()
                .join(" ")
        };
        let mut named = std::collections::HashSet::new();
        for (flags, names) in groups {
            let (first, rest) = flags.split_once('/').unwrap_or((flags, flags));
            for full in names.split(' ') {
                named.insert(full);
                let mut args: Vec<&[u8]> = full.split('|').map(str::as_bytes).collect();
                // Enough arguments for SET's third and BITFIELD's operations.
                args.extend([b"x".as_slice(), b"y", b"z"]);
                let c = lookup(args[0]).unwrap();
                let got = spec_flags(c, &args).unwrap_or_else(|| panic!("{full}: no keys"));
                assert_eq!(
                    (show(got.0), show(got.1)),
                    (first.into(), rest.into()),
                    "{full}"
                );
            }
        }
        // Every other command has no keys, and neither has a subcommand not named.
        for c in COMMANDS {
            if !named.contains(c.name) {
                let sub = [c.name.as_bytes(), b"help", b"x"];
                assert!(spec_flags(c, &sub).is_none(), "{}", c.name);
            }
        }
    }

    #[test]
    fn key_flags_follow_the_arguments() {
        let f = |a: &[&str]| flags_of(a).unwrap();
        let k = |key: &str, flags: &[&'static str]| (key.to_string(), flags.to_vec());
        assert_eq!(f(&["set", "k", "v"]), vec![k("k", &["OW", "update"])]);
        assert_eq!(
            f(&["SET", "k", "v", "nx", "Get"]),
            vec![k("k", &["RW", "access", "update"])]
        );
        // GET as the value is no option.
        assert_eq!(f(&["set", "k", "get"]), vec![k("k", &["OW", "update"])]);
        assert_eq!(
            f(&["bitfield", "k", "get", "u8", "0", "overflow", "wrap"]),
            vec![k("k", &["RO", "access"])]
        );
        for write in [&["set", "u8", "0", "1"][..], &["get", "u8"], &["foo"]] {
            let mut a = vec!["bitfield", "k"];
            a.extend_from_slice(write);
            assert_eq!(f(&a), vec![k("k", &["RW", "access", "update"])], "{a:?}");
        }
        assert_eq!(
            f(&["lmove", "a", "b", "left", "right"]),
            vec![
                k("a", &["RW", "access", "delete"]),
                k("b", &["RW", "insert"])
            ]
        );
        assert_eq!(
            f(&["sort", "k", "by", "w*", "get", "x", "store", "d"]),
            vec![k("k", &["RO", "access"]), k("d", &["OW", "update"])]
        );
        assert_eq!(
            f(&["zunionstore", "d", "2", "a", "b"]),
            vec![
                k("d", &["OW", "update"]),
                k("a", &["RO", "access"]),
                k("b", &["RO", "access"])
            ]
        );
        assert_eq!(
            f(&["eval", "s", "2", "a", "b", "x"]),
            vec![
                k("a", &["RW", "access", "update"]),
                k("b", &["RW", "access", "update"])
            ]
        );
        assert_eq!(
            f(&[
                "xreadgroup",
                "group",
                "g",
                "c",
                "streams",
                "s1",
                "s2",
                "0",
                "0"
            ]),
            vec![k("s1", &["RO", "access"]), k("s2", &["RO", "access"])]
        );
        assert_eq!(
            f(&["mset", "a", "1", "b", "2"]),
            vec![k("a", &["OW", "update"]), k("b", &["OW", "update"])]
        );
        assert_eq!(
            f(&["rename", "a", "b"]),
            vec![
                k("a", &["RW", "access", "delete"]),
                k("b", &["OW", "update"])
            ]
        );
        // No keys: shard channels, subcommands without keys, key-less commands.
        assert!(f(&["spublish", "ch", "m"]).is_empty());
        assert!(f(&["object", "help", "x"]).is_empty());
        assert!(f(&["ping", "x"]).is_empty());
        // A key count that does not fit.
        assert_eq!(flags_of(&["eval", "s", "5", "a"]), None);
        assert_eq!(flags_of(&["eval", "s", "-1", "a"]), None);
        assert_eq!(
            flags_of(&["zunionstore", "d", "99999999999999999999", "a"]),
            None
        );
    }

    #[test]
    fn arity_is_exact_or_minimum() {
        let get = lookup(b"get").unwrap();
        assert!(get.arity_ok(2) && !get.arity_ok(1) && !get.arity_ok(3));
        let set = lookup(b"set").unwrap();
        assert!(set.arity_ok(3) && set.arity_ok(7) && !set.arity_ok(2));
    }
}
