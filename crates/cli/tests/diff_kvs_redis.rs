//! The same commands against wirespeed and a real Redis 7 (`redis-server`, started
//! here on a free port): every reply must be equal, errors included (their text is
//! compared too). Covers the string, key, hash, set, list and sorted-set commands (the multi-key
//! and blocking pops with data present), pub/sub outside the subscribed context, WRONGTYPE across
//! them, HyperLogLogs (their bytes, counts, merges, corrupt values), transactions, Lua scripting (EVAL, the script cache, functions, the
//! conversions and every scripting error text), geo indexes (every GEO* command, option and error), stream consumer groups and XINFO, and COMMAND GETKEYS (RESTORE: `diff_kvs_restore.rs`). In CI a missing `redis-server` fails the test; elsewhere it is skipped.

mod common;

use common::{both, missing_client, same};
use redis::Value;

/// A reply with error texts kept (the redis crate's error, as text).
fn reply(con: &mut redis::Connection, args: &[&str]) -> Result<Value, String> {
    let mut c = redis::cmd(args[0]);
    for a in &args[1..] {
        c.arg(*a);
    }
    c.query::<Value>(con).map_err(|e| e.to_string())
}

const SCRIPT: &[&[&str]] = &[
    &["FLUSHALL"],
    // GETRANGE / SUBSTR over every kind of range.
    &["SET", "s", "Hello, World"],
    &["GETRANGE", "s", "0", "4"],
    &["GETRANGE", "s", "-5", "-1"],
    &["GETRANGE", "s", "5", "2"],
    &["GETRANGE", "s", "-1", "-5"],
    &["GETRANGE", "s", "0", "100"],
    &["GETRANGE", "s", "-100", "2"],
    &["GETRANGE", "nosuch", "0", "-1"],
    &["SUBSTR", "s", "7", "-1"],
    &["GETRANGE", "s", "x", "1"],
    // SETRANGE: overwrite, pad, empty value, bad offsets.
    &["SETRANGE", "s", "7", "Redis"],
    &["GET", "s"],
    &["SETRANGE", "pad", "3", "ab"],
    &["GET", "pad"],
    &["SETRANGE", "none", "5", ""],
    &["EXISTS", "none"],
    &["SETRANGE", "s", "-1", "x"],
    &["SETRANGE", "s", "536870912", "x"],
    // BITCOUNT, BITPOS, BITOP, BITFIELD, BITFIELD_RO: ranges in bytes and bits,
    // negative and out of range, missing keys, every overflow mode and the errors.
    &["SET", "bits", "foobar"],
    &["BITCOUNT", "bits"],
    &["BITCOUNT", "bits", "1", "1"],
    &["BITCOUNT", "bits", "-2", "-1"],
    &["BITCOUNT", "bits", "5", "30", "BIT"],
    &["BITCOUNT", "bits", "-1", "-2"],
    &["BITCOUNT", "bits", "0", "100", "byte"],
    &["BITCOUNT", "bits", "1"],
    &["BITCOUNT", "bits", "0", "1", "bits"],
    &["BITCOUNT", "bits", "x", "1"],
    &["BITCOUNT", "bits", "-0", "1"],
    &["BITCOUNT", "nosuch", "0", "1000", "bit"],
    &["SET", "bp", "\u{ff}\u{f0}\u{00}"],
    &["BITPOS", "bp", "0"],
    &["BITPOS", "bp", "1", "2"],
    &["BITPOS", "bp", "0", "2", "-1", "BIT"],
    &["BITPOS", "bp", "0", "0", "0"],
    &["BITPOS", "bp", "1", "7", "15", "bit"],
    &["BITPOS", "bp", "0", "-3", "-2", "byte"],
    &["BITPOS", "bp", "2"],
    &["BITPOS", "bp", "1", "0", "1", "nibble"],
    &["BITPOS", "nosuch", "0"],
    &["BITPOS", "nosuch", "1"],
    &["SET", "b1", "abc"],
    &["SET", "b2", "\u{0}\u{ff}"],
    &["BITOP", "AND", "dest", "b1", "b2"],
    &["GET", "dest"],
    &["BITOP", "or", "dest", "b1", "b2", "nosuch"],
    &["GET", "dest"],
    &["BITOP", "XOR", "dest", "b1", "b2"],
    &["GET", "dest"],
    &["BITOP", "NOT", "dest", "b1"],
    &["GET", "dest"],
    &["BITOP", "NOT", "dest", "b1", "b2"],
    &["BITOP", "NAND", "dest", "b1"],
    &["BITOP", "AND", "dest", "nosuch"],
    &["EXISTS", "dest"],
    &["SADD", "aset", "x"],
    &["BITOP", "AND", "dest", "b1", "aset"],
    &["BITCOUNT", "aset"],
    &[
        "BITFIELD", "bf", "SET", "i8", "0", "100", "GET", "u4", "0", "INCRBY", "i8", "0", "50",
    ],
    &[
        "BITFIELD", "bf", "OVERFLOW", "SAT", "INCRBY", "i8", "0", "100", "INCRBY", "u2", "#5", "9",
    ],
    &[
        "BITFIELD", "bf", "OVERFLOW", "FAIL", "INCRBY", "i8", "0", "100", "GET", "i8", "0",
    ],
    &[
        "BITFIELD",
        "bf",
        "SET",
        "u63",
        "3",
        "-1",
        "GET",
        "i64",
        "3",
        "SET",
        "i64",
        "#1",
        "-9223372036854775808",
    ],
    &[
        "BITFIELD", "bf", "OVERFLOW", "WRAP", "INCRBY", "i64", "#1", "-1",
    ],
    &[
        "BITFIELD",
        "bf",
        "OVERFLOW",
        "SAT",
        "SET",
        "i8",
        "0",
        "-9223372036854775808",
    ],
    &["GET", "bf"],
    &["BITFIELD", "bf", "GET", "u64", "0"],
    &["BITFIELD", "bf", "GET", "i0", "0"],
    &["BITFIELD", "bf", "GET", "i8", "-1"],
    &["BITFIELD", "bf", "GET", "i8", "4294967296"],
    &["BITFIELD", "bf", "SET", "i8", "0"],
    &["BITFIELD", "bf", "OVERFLOW", "MAYBE", "GET", "i8", "0"],
    &["BITFIELD", "bf", "INCRBY", "i8", "0", "x"],
    &["BITFIELD", "bf"],
    &["BITFIELD_RO", "bf", "GET", "i8", "0", "GET", "u5", "#2"],
    &["BITFIELD_RO", "bf", "SET", "i8", "0", "1"],
    &["BITFIELD", "nosuch", "GET", "u8", "8"],
    &[
        "BITFIELD", "newbf", "OVERFLOW", "FAIL", "SET", "u2", "0", "10",
    ],
    &["GET", "newbf"],
    &["BITFIELD", "aset", "GET", "u8", "0"],
    &["BITFIELD", "aset", "SET", "u8", "0", "1"],
    // INCRBYFLOAT (values exact in binary: Redis adds in 80-bit long doubles, this
    // server in 64-bit doubles, so sums such as 10.5 + 0.1 differ in the 17th digit).
    &["SET", "f", "10.50"],
    &["INCRBYFLOAT", "f", "0.125"],
    &["INCRBYFLOAT", "f", "-5"],
    &["INCRBYFLOAT", "f", "2.0e2"],
    &["INCRBYFLOAT", "newf", "3"],
    &["SET", "big", "17179869184"],
    &["INCRBYFLOAT", "big", "1.5"],
    &["INCRBYFLOAT", "f", "abc"],
    &["INCRBYFLOAT", "s", "1"],
    &["INCRBYFLOAT", "f", "inf"],
    &["SET", "third", "0"],
    &["INCRBYFLOAT", "third", "0.25"],
    &["INCRBYFLOAT", "third", "-0.25"],
    // GETSET, MSETNX, SETEX, PSETEX.
    &["GETSET", "g", "1"],
    &["GETSET", "g", "2"],
    &["MSETNX", "m1", "a", "m2", "b"],
    &["MSETNX", "m2", "x", "m3", "c"],
    &["MGET", "m1", "m2", "m3"],
    &["MSETNX", "m1", "a", "m2"],
    &["SETEX", "e", "100", "v"],
    &["TTL", "e"],
    &["SETEX", "e", "0", "v"],
    &["SETEX", "e", "-3", "v"],
    &["PSETEX", "pe", "100000", "v"],
    &["GET", "pe"],
    // Bits.
    &["SETBIT", "b", "7", "1"],
    &["SETBIT", "b", "7", "0"],
    &["SETBIT", "b", "100", "1"],
    &["GETBIT", "b", "100"],
    &["GETBIT", "b", "10000"],
    &["STRLEN", "b"],
    &["SETBIT", "b", "-1", "1"],
    &["SETBIT", "b", "1", "2"],
    &["GETBIT", "nosuch", "3"],
    // LCS.
    &["MSET", "l1", "ohmytext", "l2", "mynewtext"],
    &["LCS", "l1", "l2"],
    &["LCS", "l1", "l2", "LEN"],
    &["LCS", "l1", "l2", "IDX"],
    &["LCS", "l1", "l2", "IDX", "MINMATCHLEN", "4"],
    &["LCS", "l1", "l2", "IDX", "WITHMATCHLEN"],
    &["LCS", "l1", "l2", "LEN", "IDX"],
    &["LCS", "l1", "nosuch"],
    // RENAME, RENAMENX, COPY keep the value and the deadline.
    &["SET", "r1", "v", "EX", "1000"],
    &["RENAME", "r1", "r2"],
    &["TTL", "r2"],
    &["EXISTS", "r1"],
    &["RENAME", "nosuch", "x"],
    &["SET", "r3", "w"],
    &["RENAMENX", "r2", "r3"],
    &["RENAMENX", "r2", "r4"],
    &["RENAME", "r4", "r4"],
    &["COPY", "r4", "c1"],
    &["TTL", "c1"],
    &["COPY", "r4", "c1"],
    &["COPY", "r3", "c1", "REPLACE"],
    &["GET", "c1"],
    &["COPY", "nosuch", "c2"],
    // Databases: SELECT, MOVE, COPY ... DB, SWAPDB, FLUSHDB, DBSIZE, their errors.
    &["SELECT", "16"],
    &["SELECT", "-1"],
    &["SELECT", "x"],
    &["SET", "mv", "1", "EX", "1000"],
    &["MOVE", "mv", "3"],
    &["MOVE", "mv", "3"],
    &["MOVE", "c1", "0"],
    &["MOVE", "c1", "16"],
    &["MOVE", "c1", "x"],
    &["SELECT", "3"],
    &["TTL", "mv"],
    &["DBSIZE"],
    &["SET", "c1", "other"],
    &["SELECT", "0"],
    &["MOVE", "c1", "3"],
    &["COPY", "c1", "c1"],
    &["COPY", "c1", "c1", "DB", "4"],
    &["COPY", "c1", "c1", "DB", "4"],
    &["COPY", "c1", "c1", "DB", "16"],
    &["COPY", "c1", "c1", "DB", "x"],
    &["SWAPDB", "0", "4"],
    &["GET", "c1"],
    &["DBSIZE"],
    &["SWAPDB", "0", "4"],
    &["SWAPDB", "x", "1"],
    &["SWAPDB", "1", "y"],
    &["SWAPDB", "1", "16"],
    &["SWAPDB", "2", "2"],
    &["SELECT", "4"],
    &["FLUSHDB"],
    &["DBSIZE"],
    &["SELECT", "3"],
    &["MULTI"],
    &["SELECT", "0"],
    &["DBSIZE"],
    &["EXEC"],
    &["EXISTS", "c1"],
    &[
        "EVAL",
        "redis.call('select', 3); return redis.call('get', 'c1')",
        "0",
    ],
    &["EXISTS", "c1"],
    &["SELECT", "3"],
    &["FLUSHDB"],
    &["SELECT", "0"],
    // Absolute deadlines.
    &["SET", "a", "1"],
    &["EXPIREAT", "a", "99999999999"],
    &["EXPIRETIME", "a"],
    &["PEXPIRETIME", "a"],
    &["PEXPIREAT", "a", "99999999999000", "GT"],
    &["EXPIRETIME", "nosuch"],
    &["SET", "p", "1"],
    &["EXPIRETIME", "p"],
    &["EXPIREAT", "p", "1"],
    &["EXISTS", "p"],
    // TOUCH, OBJECT, TYPE.
    &["TOUCH", "a", "nosuch", "c1"],
    &["SET", "i", "12345"],
    &["OBJECT", "ENCODING", "i"],
    &[
        "SET",
        "long",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    ],
    &["OBJECT", "ENCODING", "long"],
    &["OBJECT", "ENCODING", "nosuch"],
    &["OBJECT", "REFCOUNT", "i"],
    &["OBJECT", "IDLETIME", "i"],
    &["OBJECT", "FREQ", "i"],
    &["OBJECT", "IDLETIME", "nosuch"],
    &["OBJECT", "NOSUCH", "i"],
    &["OBJECT", "ENCODING"],
    // Transactions.
    &["MULTI"],
    &["INCR", "i"],
    &["GETRANGE", "s", "0", "2"],
    &["EXEC"],
    &["MULTI"],
    &["SET", "t"],
    &["EXEC"],
    &["EXEC"],
    &["DISCARD"],
    &["WATCH", "i"],
    &["UNWATCH"],
    // Hashes.
    &["HSET", "h", "a", "1", "b", "2"],
    &["HSET", "h", "a", "10", "c", "3"],
    &["HGET", "h", "a"],
    &["HGET", "h", "nosuch"],
    &["HMGET", "h", "a", "nosuch", "c"],
    &["HLEN", "h"],
    &["HSTRLEN", "h", "a"],
    &["HEXISTS", "h", "b"],
    &["HSETNX", "h", "a", "x"],
    &["HSETNX", "h", "d", "4"],
    &["HINCRBY", "h", "a", "5"],
    &["HINCRBY", "h", "new", "-3"],
    &["HINCRBY", "h", "a", "x"],
    &["HSET", "h", "f", "1.5"],
    &["HINCRBYFLOAT", "h", "f", "0.25"],
    &["HINCRBY", "h", "f", "1"],
    &["HMSET", "h", "m", "1"],
    &["HDEL", "h", "a", "nosuch", "b"],
    &["HSET", "h", "odd"],
    &["HGET", "s", "a"],
    &["HSET", "s", "a", "1"],
    &["GET", "h"],
    &["TYPE", "h"],
    &["HDEL", "h", "c", "d", "new", "f", "m"],
    &["EXISTS", "h"],
    &["TYPE", "h"],
    // Sets.
    &["SADD", "set1", "a", "b", "c", "a"],
    &["SADD", "set2", "b", "c", "d"],
    &["SCARD", "set1"],
    &["SISMEMBER", "set1", "a"],
    &["SMISMEMBER", "set1", "a", "z", "c"],
    &["SREM", "set1", "a", "z"],
    &["SINTERCARD", "2", "set1", "set2"],
    &["SINTERCARD", "2", "set1", "set2", "LIMIT", "1"],
    &["SINTERSTORE", "dst", "set1", "set2"],
    &["SCARD", "dst"],
    &["SUNIONSTORE", "dst", "set1", "set2"],
    &["SCARD", "dst"],
    &["SDIFFSTORE", "dst", "set2", "set1"],
    &["SMEMBERS", "dst"],
    &["SINTERSTORE", "dst", "set1", "nosuch"],
    &["EXISTS", "dst"],
    &["SMOVE", "set2", "set1", "d"],
    &["SMOVE", "set2", "set1", "zz"],
    &["SISMEMBER", "set1", "d"],
    &["SADD", "h2", "x"],
    &["SMOVE", "set1", "s", "d"],
    &["SADD", "s", "x"],
    &["SCARD", "s"],
    &["TYPE", "set1"],
    &["SPOP", "nosuch"],
    &["SRANDMEMBER", "nosuch"],
    &["SRANDMEMBER", "nosuch", "3"],
    &["SADD", "one", "only"],
    &["SPOP", "one"],
    &["EXISTS", "one"],
    &["SADD", "one", "only"],
    &["SRANDMEMBER", "one", "-3"],
    &["SRANDMEMBER", "one", "5"],
    &["SPOP", "one", "-1"],
    &["SRANDMEMBER", "one", "-9223372036854775808"],
    &["ZRANDMEMBER", "z1", "-9223372036854770000", "WITHSCORES"],
    &["HRANDFIELD", "nosuch", "-9223372036854775808"],
    // Lists.
    &["RPUSH", "l", "a", "b", "c", "d", "e"],
    &["LPUSH", "l", "z"],
    &["LLEN", "l"],
    &["LRANGE", "l", "0", "-1"],
    &["LRANGE", "l", "-3", "2"],
    &["LRANGE", "l", "5", "100"],
    &["LRANGE", "l", "4", "1"],
    &["LRANGE", "l", "0", "-100"],
    &["LRANGE", "l", "-100", "-100"],
    &["GETRANGE", "s", "0", "-100"],
    &["LINDEX", "l", "0"],
    &["LINDEX", "l", "-1"],
    &["LINDEX", "l", "99"],
    &["LSET", "l", "1", "A"],
    &["LSET", "l", "-1", "E"],
    &["LSET", "l", "99", "x"],
    &["LSET", "nolist", "0", "x"],
    &["LINSERT", "l", "BEFORE", "c", "bc"],
    &["LINSERT", "l", "AFTER", "E", "end"],
    &["LINSERT", "l", "AFTER", "nope", "x"],
    &["LINSERT", "l", "MIDDLE", "c", "x"],
    &["LINSERT", "nolist", "BEFORE", "c", "x"],
    &["RPUSH", "l", "c", "c"],
    &["LPOS", "l", "c"],
    &["LPOS", "l", "c", "RANK", "-1"],
    &["LPOS", "l", "c", "COUNT", "0"],
    &["LPOS", "l", "c", "RANK", "2", "COUNT", "2"],
    &["LPOS", "l", "c", "MAXLEN", "2"],
    &["LPOS", "l", "c", "RANK", "0"],
    &["LREM", "l", "-1", "c"],
    &["LREM", "l", "0", "c"],
    &["LRANGE", "l", "0", "-1"],
    &["LPOP", "l"],
    &["RPOP", "l", "2"],
    &["LPOP", "l", "0"],
    &["LPOP", "nolist"],
    &["LPOP", "nolist", "2"],
    &["LPOP", "l", "-1"],
    &["LTRIM", "l", "1", "-2"],
    &["LTRIM", "l", "0", "-100"],
    &["EXISTS", "l"],
    &["RPUSH", "l", "p", "q", "r", "s", "t"],
    &["LRANGE", "l", "0", "-1"],
    &["LPUSHX", "nolist", "x"],
    &["RPUSHX", "l", "x", "y"],
    &["LMOVE", "l", "l2", "LEFT", "RIGHT"],
    &["RPOPLPUSH", "l", "l2"],
    &["LRANGE", "l2", "0", "-1"],
    &["LMOVE", "l", "l2", "UP", "LEFT"],
    &["LMOVE", "nolist", "l2", "LEFT", "LEFT"],
    &["LMOVE", "l", "h", "LEFT", "LEFT"],
    &["LTRIM", "l", "5", "1"],
    &["EXISTS", "l"],
    // Pops from the first non-empty of several keys, and the blocking forms with data
    // present (or timing out at once inside MULTI), errors first.
    &["RPUSH", "m1", "a", "b", "c", "d"],
    &["ZADD", "mz", "1", "a", "2", "b", "3", "c"],
    &["LMPOP", "2", "nolist", "m1", "LEFT"],
    &["LMPOP", "2", "nolist", "m1", "RIGHT", "COUNT", "2"],
    &["LMPOP", "1", "nolist", "LEFT"],
    &["LMPOP", "0", "m1", "LEFT"],
    &["LMPOP", "-1", "m1", "LEFT"],
    &["LMPOP", "3", "m1", "LEFT"],
    &["LMPOP", "1", "m1", "UP"],
    &["LMPOP", "1", "m1", "LEFT", "COUNT", "0"],
    &["LMPOP", "1", "m1", "LEFT", "COUNT", "1", "COUNT", "1"],
    &["LMPOP", "1", "m1", "LEFT", "BOGUS"],
    &["LMPOP", "1", "mz", "LEFT"],
    &["ZMPOP", "2", "nolist", "mz", "MIN"],
    &["ZMPOP", "1", "mz", "MAX", "COUNT", "10"],
    &["ZMPOP", "1", "mz", "MAX"],
    &["ZMPOP", "1", "m1", "MAX"],
    &["ZMPOP", "1", "mz", "LEFT"],
    &["RPUSH", "m1", "x", "y", "z"],
    &["ZADD", "mz", "1", "a", "2", "b", "3", "c"],
    &["BLPOP", "nolist", "m1", "0"],
    &["BRPOP", "m1", "0.5"],
    &["BLPOP", "m1", "-1"],
    &["BLPOP", "m1", "abc"],
    &["BLPOP", "mz", "0"],
    &["BLMPOP", "0", "1", "m1", "LEFT", "COUNT", "5"],
    &["BLMPOP", "x", "1", "m1", "LEFT"],
    &["BZPOPMIN", "nolist", "mz", "0"],
    &["BZPOPMAX", "mz", "0"],
    &["BZMPOP", "0", "1", "mz", "MIN", "COUNT", "3"],
    &["BZPOPMIN", "m1", "0"],
    &["RPUSH", "m1", "x", "y"],
    &["BLMOVE", "m1", "m2", "LEFT", "RIGHT", "0"],
    &["BLMOVE", "m1", "m2", "UP", "RIGHT", "0"],
    &["BRPOPLPUSH", "m1", "m2", "0"],
    &["LRANGE", "m2", "0", "-1"],
    &["MULTI"],
    &["BLPOP", "nolist", "0"],
    &["BLMOVE", "nolist", "m2", "LEFT", "LEFT", "0"],
    &["BRPOPLPUSH", "nolist", "m2", "0"],
    &["BZPOPMIN", "nolist", "0"],
    &["BLMPOP", "0", "1", "nolist", "LEFT"],
    &["BZMPOP", "0", "1", "nolist", "MIN"],
    &["EXEC"],
    // Pub/sub outside the subscribed context.
    &["PUBLISH", "nochannel", "hello"],
    &["SPUBLISH", "nochannel", "hello"],
    &["PUBSUB", "NUMSUB", "a", "b"],
    &["PUBSUB", "NUMPAT"],
    &["PUBSUB", "CHANNELS"],
    &["PUBSUB", "SHARDNUMSUB", "a"],
    &["PUBSUB", "BOGUS"],
    &["UNSUBSCRIBE"],
    &["PUNSUBSCRIBE"],
    &["LPUSH", "s", "x"],
    &["LLEN", "s"],
    &["TYPE", "l2"],
    // Sorted sets.
    &[
        "ZADD", "z", "1", "a", "2", "b", "3", "c", "0.1", "d", "-inf", "m", "+inf", "x",
    ],
    &["ZADD", "z", "NX", "5", "a", "5", "e"],
    &["ZADD", "z", "XX", "CH", "6", "a", "7", "nope"],
    &["ZADD", "z", "GT", "CH", "1", "a", "9", "b"],
    &["ZADD", "z", "LT", "2.5", "c"],
    &["ZADD", "z", "INCR", "1.5", "d"],
    &["ZADD", "z", "NX", "INCR", "1", "d"],
    &["ZADD", "z", "NX", "XX", "1", "a"],
    &["ZADD", "z", "GT", "LT", "1", "a"],
    &["ZADD", "z", "1", "a", "2"],
    &["ZADD", "z", "x", "a"],
    &["ZADD", "z", "INCR", "1", "a", "2", "b"],
    &["ZINCRBY", "z", "0.2", "d"],
    &["ZINCRBY", "z", "1", "new"],
    &["ZCARD", "z"],
    &["ZSCORE", "z", "d"],
    &["ZSCORE", "z", "nope"],
    &["ZMSCORE", "z", "a", "nope", "m"],
    &["ZRANK", "z", "c"],
    &["ZREVRANK", "z", "c"],
    &["ZRANK", "z", "nope"],
    &["ZRANGE", "z", "0", "-1", "WITHSCORES"],
    &["ZRANGE", "z", "1", "3"],
    &["ZRANGE", "z", "0", "-50"],
    &["ZREVRANGE", "z", "-50", "0"],
    &["ZRANGE", "z", "-2", "-1", "REV"],
    &["ZRANGE", "z", "(1", "5", "BYSCORE", "WITHSCORES"],
    &[
        "ZRANGE", "z", "5", "(1", "BYSCORE", "REV", "LIMIT", "1", "2",
    ],
    &["ZRANGE", "z", "0", "1", "LIMIT", "0", "1"],
    &["ZRANGE", "z", "x", "1", "BYSCORE"],
    &["ZREVRANGE", "z", "0", "2", "WITHSCORES"],
    &["ZRANGEBYSCORE", "z", "-inf", "+inf"],
    &[
        "ZRANGEBYSCORE",
        "z",
        "1",
        "6",
        "WITHSCORES",
        "LIMIT",
        "1",
        "-1",
    ],
    &["ZREVRANGEBYSCORE", "z", "6", "1"],
    &["ZCOUNT", "z", "(1", "6"],
    &["ZCOUNT", "nozset", "0", "1"],
    &[
        "ZADD", "lex", "0", "a", "0", "b", "0", "c", "0", "d", "0", "e",
    ],
    &["ZRANGEBYLEX", "lex", "[b", "(e"],
    &["ZRANGEBYLEX", "lex", "-", "+", "LIMIT", "1", "2"],
    &["ZREVRANGEBYLEX", "lex", "+", "[c"],
    &["ZRANGE", "lex", "[b", "[d", "BYLEX"],
    &["ZLEXCOUNT", "lex", "(a", "+"],
    &["ZRANGEBYLEX", "lex", "b", "c"],
    &["ZREMRANGEBYLEX", "lex", "[a", "[b"],
    &["ZRANGE", "lex", "0", "-1"],
    &["ZPOPMIN", "z"],
    &["ZPOPMAX", "z", "2"],
    &["ZPOPMIN", "nozset"],
    &["ZPOPMIN", "z", "-1"],
    &["ZREM", "z", "a", "nope"],
    &["ZREMRANGEBYSCORE", "z", "-inf", "(2"],
    &["ZREMRANGEBYRANK", "z", "0", "0"],
    &["ZRANGE", "z", "0", "-1", "WITHSCORES"],
    &["ZADD", "z1", "1", "a", "2", "b", "3", "c"],
    &["ZADD", "z2", "10", "b", "20", "c", "30", "d"],
    &["SADD", "sz", "c", "d", "q"],
    &["ZUNIONSTORE", "zu", "2", "z1", "z2"],
    &["ZRANGE", "zu", "0", "-1", "WITHSCORES"],
    &[
        "ZINTERSTORE",
        "zi",
        "2",
        "z1",
        "z2",
        "WEIGHTS",
        "2",
        "0.5",
        "AGGREGATE",
        "MAX",
    ],
    &["ZRANGE", "zi", "0", "-1", "WITHSCORES"],
    &[
        "ZUNIONSTORE",
        "zu",
        "3",
        "z1",
        "z2",
        "sz",
        "AGGREGATE",
        "MIN",
    ],
    &["ZRANGE", "zu", "0", "-1", "WITHSCORES"],
    &["ZINTERSTORE", "zi", "1", "nozset"],
    &["EXISTS", "zi"],
    &["ZUNIONSTORE", "zu", "0", "z1"],
    &["ZUNIONSTORE", "zu", "2", "z1", "s"],
    &["ZUNIONSTORE", "zu", "1", "z1", "WEIGHTS", "x"],
    &["ZUNION", "2", "z1", "z2", "WITHSCORES"],
    &["ZINTER", "2", "z1", "z2", "AGGREGATE", "MIN", "WITHSCORES"],
    &["ZDIFF", "2", "z1", "z2", "WITHSCORES"],
    &["ZDIFF", "2", "z1", "z2", "WEIGHTS", "1", "2"],
    &["ZDIFFSTORE", "zd", "2", "z2", "z1"],
    &["ZRANGE", "zd", "0", "-1", "WITHSCORES"],
    &["ZUNIONSTORE", "zu", "1", "z1", "WITHSCORES"],
    &["ZPOPMIN", "z1", "0"],
    &["ZSCORE", "s", "a"],
    &["ZADD", "s", "1", "a"],
    &["TYPE", "z1"],
    // ZRANGESTORE and ZINTERCARD (sets count as sorted sets scored 1).
    &["ZRANGESTORE", "zr", "z2", "0", "-1"],
    &["ZRANGE", "zr", "0", "-1", "WITHSCORES"],
    &[
        "ZRANGESTORE",
        "zr",
        "z2",
        "(10",
        "+inf",
        "BYSCORE",
        "LIMIT",
        "0",
        "1",
    ],
    &["ZRANGE", "zr", "0", "-1", "WITHSCORES"],
    &["ZRANGESTORE", "zr", "z2", "+", "[c", "BYLEX", "REV"],
    &["ZRANGE", "zr", "0", "-1", "WITHSCORES"],
    &["ZRANGESTORE", "zr", "z2", "5", "9"],
    &["EXISTS", "zr"],
    &["ZRANGESTORE", "zr", "z2", "0", "-1", "WITHSCORES"],
    &["ZRANGESTORE", "zr", "z2", "0", "-1", "LIMIT", "0", "1"],
    &["ZRANGESTORE", "zr", "z2", "x", "1"],
    &["ZRANGESTORE", "zr", "s", "0", "-1"],
    &["ZRANGESTORE", "zr", "z2", "0"],
    &["ZINTERCARD", "2", "z1", "z2"],
    &["ZINTERCARD", "2", "z2", "sz"],
    &["ZINTERCARD", "2", "z1", "z2", "LIMIT", "1"],
    &["ZINTERCARD", "2", "z1", "z2", "LIMIT", "0"],
    &["ZINTERCARD", "2", "z1", "nozset"],
    &["ZINTERCARD", "0", "z1"],
    &["ZINTERCARD", "x", "z1"],
    &["ZINTERCARD", "3", "z1", "z2"],
    &["ZINTERCARD", "1", "z1", "LIMIT", "-1"],
    &["ZINTERCARD", "1", "z1", "LIMIT"],
    &["ZINTERCARD", "1", "z1", "WITHSCORES"],
    &["ZINTERCARD", "1", "s"],
    // SORT and SORT_RO over lists, sets and sorted sets, BY and GET patterns.
    &["RPUSH", "sl", "3", "1", "2", "10"],
    &["SORT", "sl"],
    &["SORT", "sl", "DESC"],
    &["SORT", "sl", "ALPHA"],
    &["SORT", "sl", "LIMIT", "1", "2"],
    &["SORT", "sl", "LIMIT", "10", "2"],
    &["SORT", "sl", "LIMIT", "-1", "-1"],
    &["SORT", "sl", "LIMIT", "0", "x"],
    &["SORT", "sl", "BY", "nosort"],
    &["SORT_RO", "sl", "DESC", "ALPHA"],
    &["SET", "sw_a", "3"],
    &["SET", "sw_b", "1"],
    &["SET", "sw_c", "2"],
    &["HSET", "sh_a", "f", "x9"],
    &["HSET", "sh_b", "f", "x7"],
    &["HSET", "sh_c", "f", "x8"],
    &["SORT", "z2", "BY", "sw_*"],
    &[
        "SORT", "z1", "BY", "sw_*", "GET", "#", "GET", "sh_*->f", "GET", "sw_*",
    ],
    &["SORT", "z1", "BY", "sh_*->f", "ALPHA", "DESC"],
    &["SORT", "z1", "BY", "sh_*->f"],
    &["SORT", "z2", "BY", "nosort", "DESC"],
    &["SORT", "z2", "BY", "nosort", "LIMIT", "1", "1"],
    &["SORT", "z1", "GET", "nostar", "GET", "#"],
    &["SORT", "sz", "ALPHA"],
    &["SORT", "sz"],
    &["SORT", "sz", "BY", "nosort", "STORE", "sd"],
    &["LRANGE", "sd", "0", "-1"],
    &["SORT", "z1", "BY", "sw_*", "GET", "sh_*->g", "STORE", "sd"],
    &["LRANGE", "sd", "0", "-1"],
    &["SORT", "nokey", "STORE", "sd"],
    &["EXISTS", "sd"],
    &["SORT_RO", "sl", "STORE", "sd"],
    &["SORT", "sl", "FOO"],
    &["SORT", "sw_a"],
    // Types across commands.
    &["RENAME", "set1", "set3"],
    &["TYPE", "set3"],
    &["SCARD", "set3"],
    &["COPY", "set3", "set4"],
    &["SREM", "set4", "b"],
    &["SCARD", "set3"],
    &["INCR", "set3"],
    &["APPEND", "set3", "x"],
    &["GETRANGE", "set3", "0", "1"],
    &["SETRANGE", "set3", "0", "x"],
    &["STRLEN", "set3"],
    &["SET", "set3", "now a string", "GET"],
    &["SET", "set3", "now a string"],
    &["TYPE", "set3"],
    // Lua scripting: conversions both ways, redis.call/pcall, the error texts (with
    // the script's SHA1 and line), the sandbox, the cache, functions.
    &["SCRIPT", "FLUSH"],
    &["FUNCTION", "FLUSH"],
    &["EVAL", "return {1, 2.5, 'three', true, false, {4}}", "0"],
    &["EVAL", "return {1, 2, nil, 4}", "0"],
    &[
        "EVAL",
        "return {KEYS[1], ARGV[1], #KEYS, #ARGV}",
        "1",
        "k",
        "a",
    ],
    &[
        "EVAL",
        "return redis.call('SET', KEYS[1], ARGV[1])",
        "1",
        "sk",
        "v",
    ],
    &["EVAL", "return redis.call('GET', KEYS[1])", "1", "sk"],
    &["EVAL", "return redis.call('INCR', KEYS[1])", "1", "sk"],
    &["EVAL", "return redis.pcall('INCR', KEYS[1])", "1", "sk"],
    &[
        "EVAL",
        "local t = redis.pcall('INCR', KEYS[1]) return t.err",
        "1",
        "sk",
    ],
    &[
        "EVAL",
        "local ok, e = pcall(redis.call, 'INCR', KEYS[1]) return e",
        "1",
        "sk",
    ],
    &["EVAL", "return type(redis.call('GET', 'nosuchkey'))", "0"],
    &["EVAL", "return redis.call('PING').ok", "0"],
    &[
        "EVAL",
        "redis.call('SET', 'num', 9007199254740991) return redis.call('GET', 'num')",
        "0",
    ],
    &["EVAL", "return 100.9", "0"],
    &["EVAL", "return -2.5", "0"],
    &["EVAL", "return {err='MY err'}", "0"],
    &["EVAL", "return {ok='FINE'}", "0"],
    &["EVAL", "return redis.error_reply('bar')", "0"],
    &["EVAL", "return redis.error_reply('MY_CODE custom')", "0"],
    &["EVAL", "return redis.status_reply('X')", "0"],
    &["EVAL", "error('boom')", "0"],
    &["EVAL", "error({err='MY boom'})", "0"],
    &["EVAL", "x = 1", "0"],
    &["EVAL", "return y", "0"],
    &["EVAL", "return redis.call('nosuch')", "0"],
    &["EVAL", "return redis.call('GET')", "0"],
    &["EVAL", "return redis.call('MULTI')", "0"],
    &["EVAL", "return redis.call()", "0"],
    &["EVAL", "return redis.call('SET', {}, 1)", "0"],
    &["EVAL_RO", "return redis.call('DEL', KEYS[1])", "1", "sk"],
    &["EVAL_RO", "return redis.call('GET', KEYS[1])", "1", "sk"],
    &["EVAL", "syntax error here", "0"],
    &["EVAL", "return 1", "-1"],
    &["EVAL", "return 1", "3", "a"],
    &["EVAL", "return 1", "x"],
    &["EVAL", "return cjson.encode({1, 2, {a=1}})", "0"],
    &["EVAL", "return cjson.encode({})", "0"],
    &["EVAL", "return cjson.decode('[1,2,{\"a\":3}]')[3].a", "0"],
    &["EVAL", "return bit.tohex(65535, -2147483648)", "0"],
    &["EVAL", "return bit.bxor(5, 3, 1)", "0"],
    &["EVAL", "return redis.sha1hex('abc')", "0"],
    &["SCRIPT", "LOAD", "return 'loaded'"],
    &["EVALSHA", "b534286061d4b9e4026607613b95c06c06015ae8", "0"],
    &["EVALSHA", "B534286061D4B9E4026607613B95C06C06015AE8", "0"],
    &[
        "SCRIPT",
        "EXISTS",
        "b534286061d4b9e4026607613b95c06c06015ae8",
        "ffff",
    ],
    &["EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", "0"],
    &["SCRIPT", "FLUSH"],
    &["EVALSHA", "b534286061d4b9e4026607613b95c06c06015ae8", "0"],
    &["SCRIPT", "KILL"],
    &["SCRIPT", "NOSUCH"],
    &["COMMAND", "GETKEYS", "EVAL", "return 1", "2", "a", "b", "c"],
    &["COMMAND", "GETKEYS", "EVAL", "return 1", "0"],
    &[
        "FUNCTION",
        "LOAD",
        "#!lua name=dl\nredis.register_function('dl_f', function(keys, args) return args[1] end)",
    ],
    &[
        "FUNCTION",
        "LOAD",
        "#!lua name=dl\nredis.register_function('dl_f', function(keys, args) return args[1] end)",
    ],
    &["FCALL", "dl_f", "0", "hi"],
    &["FCALL_RO", "dl_f", "0", "hi"],
    &["FCALL", "nosuch", "0"],
    &["FUNCTION", "LOAD", "#!lua\nreturn 1"],
    &["FUNCTION", "DELETE", "dl"],
    &["FUNCTION", "DELETE", "dl"],
    &["FUNCTION", "LIST"],
    // HyperLogLogs: the values byte for byte (GET), the cached count, sparse and dense,
    // the estimator at scale (a script adds 20000), merges, PFDEBUG, foreign and
    // corrupt strings, hll-sparse-max-bytes.
    &["PFADD", "hll"],
    &["GET", "hll"],
    &["PFCOUNT", "hll"],
    &["GET", "hll"],
    &["PFADD", "hll", "a", "b", "c", "d", "e", "", "a"],
    &["PFADD", "hll", "a", "b"],
    &["GET", "hll"],
    &["PFCOUNT", "hll"],
    &["GET", "hll"],
    &["PFDEBUG", "DECODE", "hll"],
    &["PFDEBUG", "encoding", "hll"],
    &[
        "PFADD", "hll2", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m",
    ],
    &["PFCOUNT", "hll", "hll2", "nosuch"],
    &["PFMERGE", "hllm", "hll", "hll2", "nosuch"],
    &["GET", "hllm"],
    &["PFCOUNT", "hllm"],
    &["PFMERGE", "hllm"],
    &["PFMERGE", "hll0", "nosuch"],
    &["GET", "hll0"],
    &["PFDEBUG", "TODENSE", "hll2"],
    &["PFDEBUG", "TODENSE", "hll2"],
    &["PFDEBUG", "ENCODING", "hll2"],
    &["PFDEBUG", "DECODE", "hll2"],
    &["PFDEBUG", "GETREG", "hll"],
    &["PFDEBUG", "ENCODING", "hll"],
    &["PFADD", "hll2", "x", "y"],
    &["PFCOUNT", "hll2"],
    &["GET", "hll2"],
    &["PFMERGE", "hllm", "hll2"],
    &["GET", "hllm"],
    &["PFDEBUG", "NOPE", "hll"],
    &["PFDEBUG", "GETREG", "nosuch"],
    &[
        "EVAL",
        "for i = 1, 20000 do redis.call('pfadd', KEYS[1], 'e' .. i) \
         if i % 500 == 0 then redis.call('pfadd', KEYS[2], 'e' .. i) end end \
         return {redis.call('pfcount', KEYS[1]), redis.call('pfcount', KEYS[2]), \
         redis.sha1hex(redis.call('get', KEYS[1])), redis.sha1hex(redis.call('get', KEYS[2]))}",
        "2",
        "hllbig",
        "hllsmall",
    ],
    &["PFCOUNT", "hllbig", "hllsmall", "hll"],
    &["PFMERGE", "hllsmall", "hllbig"],
    &[
        "EVAL",
        "return redis.sha1hex(redis.call('get', KEYS[1]))",
        "1",
        "hllsmall",
    ],
    &["CONFIG", "SET", "hll-sparse-max-bytes", "40"],
    &["CONFIG", "GET", "hll-sparse-max-bytes"],
    &["PFADD", "hllp", "1", "2", "3", "4"],
    &["PFDEBUG", "ENCODING", "hllp"],
    &["PFADD", "hllp", "5", "6", "7", "8", "9", "10"],
    &["PFDEBUG", "ENCODING", "hllp"],
    &["PFCOUNT", "hllp"],
    &["CONFIG", "SET", "hll-sparse-max-bytes", "-1"],
    &["CONFIG", "SET", "hll-sparse-max-bytes", "1.5"],
    &[
        "CONFIG",
        "SET",
        "hll-sparse-max-bytes",
        "9223372036854775808",
    ],
    &["CONFIG", "SET", "hll-sparse-max-bytes", "2kb"],
    &["CONFIG", "GET", "hll-sparse-max-bytes"],
    &["CONFIG", "SET", "hll-sparse-max-bytes", "3000"],
    &["SET", "hllbad", "HYLL"],
    &["PFCOUNT", "hllbad"],
    &["PFADD", "hllbad", "a"],
    &["PFMERGE", "hllbad"],
    &["PFDEBUG", "ENCODING", "hllbad"],
    &["PFADD", "hllc", "a", "b", "c"],
    &["APPEND", "hllc", "hello"],
    &["PFCOUNT", "hllc"],
    &["PFCOUNT", "hllc", "hll"],
    &["PFMERGE", "hlld", "hllc"],
    &["EXISTS", "hlld"],
    &["PFDEBUG", "GETREG", "hllc"],
    &["PFDEBUG", "DECODE", "hllc"],
    &["PFADD", "hllc", "zz"],
    &["SETRANGE", "hllc", "4", "\u{0}"],
    &["PFCOUNT", "hllc"],
    &["SETRANGE", "hllc", "4", "x"],
    &["PFCOUNT", "hllc"],
    &["SETRANGE", "hllc", "0", "0123"],
    &["PFCOUNT", "hllc"],
    &["PFADD", "hllk", "a"],
    &["PFCOUNT", "hllk"],
    &["APPEND", "hllk", "zz"],
    &["PFCOUNT", "hllk"],
    &["PFCOUNT", "hllk", "hll"],
    // A zero run cut by the end of the value, runs past the registers, too few.
    &["SET", "hllt", "HYLL\u{1}\0\0\0\0\0\0\0\0\0\0\0\u{7f}"],
    &["PFADD", "hllt", "a", "b", "c"],
    &["GET", "hllt"],
    &["PFCOUNT", "hllt"],
    &[
        "SET",
        "hllv",
        "HYLL\u{1}\0\0\0\0\0\0\0\0\0\0\u{1}\u{7f}\u{7f}\u{7f}\u{7f}\u{7f}",
    ],
    &["PFADD", "hllv", "a"],
    &["PFCOUNT", "hllv", "hll"],
    &["PFMERGE", "hllv2", "hllv"],
    &["PFDEBUG", "TODENSE", "hllv"],
    &["SET", "hllf", "HYLL\u{1}\0\0\0\0\0\0\0\0\0\0\u{1}\u{3f}"],
    &["PFADD", "hllf", "a", "b"],
    &["PFDEBUG", "DECODE", "hllf"],
    &["LPUSH", "hlll", "a"],
    &["PFADD", "hlll", "x"],
    &["PFCOUNT", "hlll"],
    &["PFCOUNT", "hll", "hlll"],
    &["PFMERGE", "hll", "hlll"],
    &["PFMERGE", "hlll", "hll"],
    &["PFDEBUG", "ENCODING", "hlll"],
    &["PFADD"],
    &["PFDEBUG", "GETREG"],
    &["PFDEBUG", "GETREG", "hll", "x"],
    &["PFSELFTEST", "x"],
    &["COMMAND", "GETKEYS", "PFMERGE", "a", "b", "c"],
    &["COMMAND", "GETKEYS", "PFDEBUG", "GETREG", "k"],
    // Arity and unknown commands.
    &["GET"],
    &["GETRANGE", "s", "0"],
    &["NOSUCHCOMMAND", "a", "b"],
    &["COMMAND", "GETKEYS", "RENAME", "a", "b"],
    &["COMMAND", "GETKEYS", "MSET", "a", "1", "b", "2"],
    &["COMMAND", "GETKEYS", "GET"],
    &["COMMAND", "GETKEYS", "GET", "a", "b"],
    &["COMMAND", "GETKEYS", "ECHO", "a", "b"],
    &["COMMAND", "GETKEYS", "LMPOP", "0", "a", "LEFT"],
    &["COMMAND", "GETKEYSANDFLAGS", "SET", "k", "v"],
    &["COMMAND", "GETKEYSANDFLAGS", "SET", "k", "v", "XX", "get"],
    &["COMMAND", "GETKEYSANDFLAGS", "GET", "k"],
    &[
        "COMMAND",
        "GETKEYSANDFLAGS",
        "LMOVE",
        "a",
        "b",
        "LEFT",
        "RIGHT",
    ],
    &[
        "COMMAND",
        "GETKEYSANDFLAGS",
        "SORT",
        "k",
        "BY",
        "w*",
        "STORE",
        "d",
    ],
    &[
        "COMMAND",
        "GETKEYSANDFLAGS",
        "EVAL",
        "s",
        "2",
        "a",
        "b",
        "x",
    ],
    &["COMMAND", "GETKEYSANDFLAGS", "EVAL", "s", "3", "a"],
    &["COMMAND", "GETKEYSANDFLAGS", "FCALL_RO", "f", "1", "k"],
    &[
        "COMMAND",
        "GETKEYSANDFLAGS",
        "XREADGROUP",
        "GROUP",
        "g",
        "c",
        "STREAMS",
        "a",
        "b",
        "0",
        "0",
    ],
    &["COMMAND", "GETKEYSANDFLAGS", "MSET", "a", "1", "b", "2"],
    &["COMMAND", "GETKEYSANDFLAGS", "MSETNX", "a", "1", "b", "2"],
    &["COMMAND", "GETKEYSANDFLAGS", "RENAME", "a", "b"],
    &["COMMAND", "GETKEYSANDFLAGS", "RENAMENX", "a", "b"],
    &["COMMAND", "GETKEYSANDFLAGS", "DEL", "a", "b"],
    &["COMMAND", "GETKEYSANDFLAGS", "EXISTS", "a"],
    &[
        "COMMAND",
        "GETKEYSANDFLAGS",
        "ZUNIONSTORE",
        "d",
        "2",
        "a",
        "b",
    ],
    &["COMMAND", "GETKEYSANDFLAGS", "SINTERSTORE", "d", "a", "b"],
    &["COMMAND", "GETKEYSANDFLAGS", "PFMERGE", "d", "a"],
    &["COMMAND", "GETKEYSANDFLAGS", "PFCOUNT", "a"],
    &[
        "COMMAND",
        "GETKEYSANDFLAGS",
        "BITFIELD",
        "k",
        "GET",
        "u8",
        "0",
    ],
    &[
        "COMMAND",
        "GETKEYSANDFLAGS",
        "BITFIELD",
        "k",
        "INCRBY",
        "u8",
        "0",
        "1",
    ],
    &[
        "COMMAND",
        "GETKEYSANDFLAGS",
        "GEORADIUS",
        "a",
        "0",
        "0",
        "1",
        "m",
        "STORE",
        "x",
    ],
    &["COMMAND", "GETKEYSANDFLAGS", "XGROUP", "DESTROY", "s", "g"],
    &["COMMAND", "GETKEYSANDFLAGS", "XINFO", "STREAM", "s"],
    &["COMMAND", "GETKEYSANDFLAGS", "MEMORY", "USAGE", "k"],
    &["COMMAND", "GETKEYSANDFLAGS", "LPUSH", "l", "a"],
    &["COMMAND", "GETKEYSANDFLAGS", "INCR", "k"],
    &[
        "COMMAND",
        "GETKEYSANDFLAGS",
        "BLMPOP",
        "0",
        "2",
        "a",
        "b",
        "LEFT",
    ],
    &["COMMAND", "GETKEYSANDFLAGS", "FOO", "a"],
    &["COMMAND", "GETKEYSANDFLAGS", "OBJECT", "NOSUCH", "a"],
    &["COMMAND", "GETKEYSANDFLAGS", "OBJECT", "HELP", "a"],
    &["COMMAND", "GETKEYSANDFLAGS", "SPUBLISH", "ch", "m"],
    &["COMMAND", "GETKEYSANDFLAGS", "SET", "k"],
    &[
        "COMMAND",
        "GETKEYSANDFLAGS",
        "ZUNIONSTORE",
        "d",
        "3",
        "a",
        "b",
    ],
    &["COMMAND", "GETKEYSANDFLAGS", "GET"],
    &["CONFIG", "SET", "list-max-listpack-size", "8"],
    &["CONFIG", "GET", "list-max-listpack-size"],
    &["CONFIG", "SET", "no-such-setting", "1"],
    &["CONFIG", "GET", "replicaof"],
    &["CONFIG", "GET", "SLAVEOF"],
    &["CONFIG", "GET", "slave*of"],
    &["CONFIG", "SET", "slaveof", "127.0.0.1 1"],
    &["CONFIG", "SET", "replicaof", "127.0.0.1 1"],
    &["CONFIG", "SET", "slave-priority", "7"],
    &["CONFIG", "GET", "replica-priority"],
    &["CONFIG", "SET", "replica-priority", "100"],
    &["CONFIG", "GET", "latency-tracking-info-percentiles"],
    &["CONFIG", "SET", "latency-tracking-info-percentiles", "101"],
    &["CONFIG", "SET", "latency-tracking-info-percentiles", "abc"],
    &[
        "CONFIG",
        "SET",
        "latency-tracking-info-percentiles",
        "12.5 -0 1e1 99.990",
    ],
    &["CONFIG", "GET", "latency-tracking-info-percentiles"],
    &["CONFIG", "SET", "latency-tracking-info-percentiles", ""],
    &["CONFIG", "GET", "latency-tracking-info-percentiles"],
    &[
        "CONFIG",
        "SET",
        "latency-tracking-info-percentiles",
        "50 99 99.9",
    ],
    &["EVAL", "return redis.acl_check_cmd('set', 'k', 'v')", "0"],
    &[
        "EVAL",
        "return redis.acl_check_cmd('CONFIG', 'SET', 'a', 'b')",
        "0",
    ],
    &["EVAL", "return redis.acl_check_cmd('get')", "0"],
    &["EVAL", "return redis.acl_check_cmd('nosuch')", "0"],
    &[
        "EVAL",
        "return redis.acl_check_cmd('config', 'nosuch')",
        "0",
    ],
    &["EVAL", "return redis.acl_check_cmd()", "0"],
    &["EVAL", "return redis.acl_check_cmd('get', {})", "0"],
    &[
        "EVAL",
        "local ok, e = pcall(redis.acl_check_cmd, 'nosuch') return {tostring(ok), e}",
        "0",
    ],
];

/// Geo indexes, after SCRIPT: GEOADD (NX XX CH, bad pairs), GEOPOS, GEOHASH, GEODIST (units,
/// scores GEOADD never writes), GEOSEARCH and GEOSEARCHSTORE (every FROM and BY form, ASC/DESC,
/// COUNT [ANY], WITH*, STOREDIST), GEORADIUS and GEORADIUSBYMEMBER (STORE, STOREDIST, the _RO
/// forms), distances along a meridian (stored exactly), fifty members at five positions (so the
/// order of equal distances is Redis's, for the full sort and the partial one COUNT makes), inside
/// MULTI, COMMAND GETKEYS, and every error text. One command a line, its arguments split on
/// spaces (SCRIPT's layout, one argument a line, would make this a thousand lines).
const GEO_SCRIPT: &str = "\
GEOADD geo:k 13.361389 38.115556 Palermo 15.087269 37.502669 Catania
GEOADD geo:k 13.361389 38.115556 Palermo
GEOADD geo:k CH 13.5 38 Palermo
GEOADD geo:k NX 13.361389 38.115556 Palermo 12.5 37.8 Marsala
GEOADD geo:k XX CH 13.361389 38.115556 Palermo 1 1 nosuch
GEOADD geo:k ch nx 14 37 Palermo
GEOADD geo:k xx nx 1 1 a
GEOADD geo:k NX 1 1 a GT
GEOADD geo:k 1 1 a 2
GEOADD geo:k 200 1 a
GEOADD geo:k 1 -85.06 a
GEOADD geo:k abc 1 a
GEOADD geo:k 1 nan a
GEOADD geo:k 1 1
GEOADD geo:k ch ch nx
GEOADD geo:k 180 85.05112878 top -180 -85.05112878 bottom
ZRANGE geo:k 0 -1 WITHSCORES
GEOPOS geo:k Palermo nosuch Catania top bottom
GEOPOS geo:none a b
GEOPOS geo:k
GEOHASH geo:k Palermo nosuch Catania top bottom
GEOHASH geo:none a
GEODIST geo:k Palermo Catania
GEODIST geo:k Palermo Catania KM
GEODIST geo:k Palermo Catania mi
GEODIST geo:k Palermo Catania ft
GEODIST geo:k Palermo Palermo
GEODIST geo:k Palermo nosuch
GEODIST geo:none a b
GEODIST geo:k Palermo Catania parsec
GEODIST geo:k Palermo Catania km x
GEODIST geo:k top bottom
ZADD geo:z -1 neg 0.5 half 1e300 huge 4503599627370496 two52 -inf ninf
GEOPOS geo:z neg half huge two52 ninf
GEOHASH geo:z neg half huge two52 ninf
GEODIST geo:z neg huge
SET geo:str x
GEOADD geo:str 1 1 a
GEOADD geo:str 1 100 a
GEOPOS geo:str a
GEOHASH geo:str a
GEODIST geo:str a b
GEODIST geo:str a b yd
GEOSEARCH geo:str FROMMEMBER a BYRADIUS -1 km
GEORADIUS geo:str 1 1 1 km
GEORADIUSBYMEMBER geo:str a 1 km STORE geo:d
GEOSEARCHSTORE geo:d geo:str FROMLONLAT 1 1 BYBOX 1 1 km
GEOSEARCH geo:k FROMLONLAT 15 37 BYRADIUS 200 km
GEOSEARCH geo:k FROMLONLAT 15 37 BYRADIUS 200 km ASC WITHDIST WITHCOORD WITHHASH
GEOSEARCH geo:k FROMLONLAT 15 37 BYRADIUS 200 km DESC WITHDIST
GEOSEARCH geo:k FROMLONLAT 15 37 BYRADIUS 200 km COUNT 1 WITHDIST
GEOSEARCH geo:k FROMLONLAT 15 37 BYRADIUS 200 km COUNT 2 DESC
GEOSEARCH geo:k FROMLONLAT 15 37 BYRADIUS 200 km COUNT 1 ANY
GEOSEARCH geo:k FROMLONLAT 15 37 BYRADIUS 200 km COUNT 1 ANY DESC WITHCOORD
GEOSEARCH geo:k FROMMEMBER Palermo BYBOX 400 300 km ASC WITHDIST
GEOSEARCH geo:k FROMMEMBER Palermo BYBOX 100 100 mi WITHHASH
GEOSEARCH geo:k FROMMEMBER Palermo BYRADIUS 1e9 ft ASC
GEOSEARCH geo:k FROMLONLAT 0 0 BYRADIUS inf m ASC
GEOSEARCH geo:k FROMLONLAT 179.9 85 BYBOX 500 500 km WITHCOORD
GEOSEARCH geo:k FROMLONLAT 1 1 FROMLONLAT 15 37 BYRADIUS 200 km
GEOSEARCH geo:k FROMMEMBER Catania BYRADIUS 1 km BYRADIUS 100 km
GEOSEARCH geo:k FROMLONLAT 15 37 BYRADIUS 0 km
GEOSEARCH geo:none FROMMEMBER x BYRADIUS 1 km
GEOSEARCH geo:none FROMMEMBER x BYBOX 1 1 km WITHDIST
GEOSEARCH geo:k FROMMEMBER nosuch BYRADIUS 1 km
GEOSEARCH geo:k BYRADIUS -1 km FROMMEMBER nosuch
GEOSEARCH geo:k FROMLONLAT 1 1 FROMMEMBER Palermo BYRADIUS 1 km
GEOSEARCH geo:k FROMMEMBER Palermo BYBOX 1 1 km BYRADIUS 1 km
GEOSEARCH geo:k FROMLONLAT 1 100 BYRADIUS 1 km
GEOSEARCH geo:k FROMLONLAT x 1 BYRADIUS 1 km
GEOSEARCH geo:k FROMLONLAT 1e400 0 BYRADIUS 1 km
GEOSEARCH geo:k FROMLONLAT 0 0 BYRADIUS 1e-400 km
GEOSEARCH geo:k FROMLONLAT 0 0 BYBOX 1 1e999 km
GEOSEARCH geo:k FROMMEMBER Palermo BYRADIUS x km
GEOSEARCH geo:k FROMMEMBER Palermo BYRADIUS 1 yards
GEOSEARCH geo:k FROMMEMBER Palermo BYBOX -1 1 km
GEOSEARCH geo:k FROMMEMBER Palermo BYBOX x 1 km
GEOSEARCH geo:k FROMMEMBER Palermo BYBOX 1 x km
GEOSEARCH geo:k FROMMEMBER Palermo BYBOX 1 1 parsec
GeoSearch geo:k BYBOX 1 1 km ASC
GEOSEARCH geo:k FROMMEMBER Palermo ASC WITHDIST DESC
GEOSEARCH geo:k FROMMEMBER Palermo BYRADIUS 100 km ANY
GEOSEARCH geo:k FROMMEMBER Palermo BYRADIUS 100 km COUNT 0
GEOSEARCH geo:k FROMMEMBER Palermo BYRADIUS 100 km COUNT -1
GEOSEARCH geo:k FROMMEMBER Palermo BYRADIUS 100 km COUNT -0
GEOSEARCH geo:k FROMMEMBER Palermo BYRADIUS 100 km COUNT x
GEOSEARCH geo:k FROMMEMBER Palermo BYRADIUS 100 km COUNT
GEOSEARCH geo:k FROMMEMBER Palermo BYRADIUS 100 km STORE geo:d
GEOSEARCH geo:k FROMMEMBER Palermo BYRADIUS 100 km STOREDIST
GEOSEARCH geo:k FROMMEMBER Palermo BYRADIUS 100 km
GEOSEARCH geo:k FROMMEMBER Palermo BYRADIUS 100 km BOGUS
GEOSEARCHSTORE geo:d geo:k FROMLONLAT 15 37 BYRADIUS 200 km
ZRANGE geo:d 0 -1 WITHSCORES
GEOSEARCHSTORE geo:d geo:k FROMMEMBER Palermo BYBOX 500 500 km DESC COUNT 1 STOREDIST
ZRANGE geo:d 0 -1 WITHSCORES
GEOSEARCHSTORE geo:d geo:k FROMLONLAT 0 0 BYRADIUS 1 m
EXISTS geo:d
GEOSEARCHSTORE geo:d geo:none FROMMEMBER x BYRADIUS 1 m
GEOSEARCHSTORE geo:d geo:k FROMMEMBER Palermo BYRADIUS 100 km STOREDIST WITHDIST
GEOSEARCHSTORE geo:d geo:k FROMMEMBER Palermo BYRADIUS 100 km STORE geo:e
GEORADIUS geo:k 15 37 200 km
GEORADIUS geo:k 15 37 200 km WITHDIST WITHCOORD WITHHASH COUNT 1
GEORADIUS geo:k 15 37 200 km DESC COUNT 1 ANY
GEORADIUS_RO geo:k 15 37 200 km ASC WITHDIST
GEORADIUS geo:k 15 37 200 km STORE geo:d
ZRANGE geo:d 0 -1 WITHSCORES
GEORADIUS geo:k 15 37 200 km STOREDIST geo:d ASC
ZRANGE geo:d 0 -1 WITHSCORES
GEORADIUS geo:k 15 37 200 km STORE geo:d STOREDIST geo:e
ZRANGE geo:e 0 -1 WITHSCORES
SET geo:d x
GEORADIUS geo:k 0 0 1 m STORE geo:d
EXISTS geo:d
GEORADIUS geo:none 0 0 1 m STORE geo:e
EXISTS geo:e
GEORADIUS geo:k 15 37 200 km STORE geo:d WITHDIST
GEORADIUS geo:k 15 37 200 km STORE
GEORADIUS_RO geo:k 15 37 200 km STORE geo:d
GEORADIUS geo:k 200 37 200 km
GEORADIUS geo:k 15 37 -2 km
GEORADIUS geo:k 15 37 x km
GEORADIUS geo:k 15 37 2 parsec
GEORADIUS geo:none 1 1 x km
GEORADIUS geo:k 15 37 200 km FROMLONLAT 1 1
GEORADIUSBYMEMBER geo:k Palermo 200 km WITHDIST
GEORADIUSBYMEMBER_RO geo:k Catania 500 mi DESC WITHCOORD COUNT 2
GEORADIUSBYMEMBER geo:k Palermo 500 km STOREDIST geo:d
ZRANGE geo:d 0 -1 WITHSCORES
GEORADIUSBYMEMBER geo:k Palermo 200 km STORE geo:d WITHCOORD
GEORADIUSBYMEMBER geo:k nosuch 2 km
GEORADIUSBYMEMBER geo:k Palermo -1 km
GEORADIUSBYMEMBER geo:none nosuch x km
GEORADIUSBYMEMBER geo:none nosuch 2 km WITHDIST BOGUS
GEORADIUSBYMEMBER_RO geo:k Palermo 200 km STOREDIST geo:d
GEOADD geo:mer 180 12.32318186377672475 a 180 9.9988020051243538 b -180 11 c
GEOSEARCHSTORE geo:d geo:mer FROMMEMBER a BYBOX 600 600 km ASC STOREDIST
ZRANGE geo:d 0 -1 WITHSCORES
GEOADD geo:t 10 10 t0 10 10 t1 10 10 t2 10 10 t3 10 10 t4
GEOADD geo:t 10 10 t5 10 10 t6 10 10 t7 10 10 t8 10 10 t9
GEOADD geo:t 10.001 10 u0 10.001 10 u1 10.001 10 u2 10.001 10 u3 10.001 10 u4
GEOADD geo:t 10.001 10 u5 10.001 10 u6 10.001 10 u7 10.001 10 u8 10.001 10 u9
GEOADD geo:t 10 10.001 v0 10 10.001 v1 10 10.001 v2 10 10.001 v3 10 10.001 v4
GEOADD geo:t 10 10.001 v5 10 10.001 v6 10 10.001 v7 10 10.001 v8 10 10.001 v9
GEOADD geo:t 9.999 10 w0 9.999 10 w1 9.999 10 w2 9.999 10 w3 9.999 10 w4
GEOADD geo:t 9.999 10 w5 9.999 10 w6 9.999 10 w7 9.999 10 w8 9.999 10 w9
GEOADD geo:t 10 9.999 x0 10 9.999 x1 10 9.999 x2 10 9.999 x3 10 9.999 x4
GEOADD geo:t 10 9.999 x5 10 9.999 x6 10 9.999 x7 10 9.999 x8 10 9.999 x9
GEOSEARCH geo:t FROMLONLAT 10 10 BYRADIUS 1 km ASC
GEOSEARCH geo:t FROMLONLAT 10 10 BYRADIUS 1 km DESC
GEOSEARCH geo:t FROMLONLAT 10 10 BYRADIUS 1 km COUNT 7
GEOSEARCH geo:t FROMLONLAT 10 10 BYRADIUS 1 km COUNT 23 DESC
GEOSEARCH geo:t FROMLONLAT 10 10 BYRADIUS 1 km COUNT 45 WITHDIST
GEOSEARCH geo:t FROMLONLAT 10 10 BYBOX 2 2 km COUNT 12 ANY
GEOSEARCH geo:t FROMLONLAT 10.0005 10.0005 BYBOX 200 200 m WITHDIST
GEORADIUS geo:t 10 10 1 km COUNT 30 STORE geo:d
ZRANGE geo:d 0 -1
MULTI
GEOADD geo:m 1
EXEC
MULTI
GEOADD geo:m 200 1 a
GEOADD geo:m 1 1 a
GEOPOS geo:m a
EXEC
COMMAND GETKEYS GEORADIUS k 1 1 1 km
COMMAND GETKEYS GEORADIUS k 1 1 1 km STORE d
COMMAND GETKEYS GEORADIUS k 1 1 1 km store d storedist e
COMMAND GETKEYS GEORADIUS k 1 1 1 km withdist store
COMMAND GETKEYS GEORADIUSBYMEMBER k m 1 km STOREDIST d
COMMAND GETKEYS GEORADIUS_RO k 1 1 1 km STORE d
COMMAND GETKEYS GEOSEARCHSTORE d s FROMLONLAT 1 1 BYRADIUS 1 km
COMMAND GETKEYS GEOADD k 1 1 m
COMMAND GETKEYS GEOADD k 1 1
";

/// Streams' consumer groups and XINFO, after GEO_SCRIPT: XGROUP (every subcommand, option and
/// error, in Redis's order of checks), XREADGROUP, XACK, XPENDING (the summary, and the extended
/// form where no reply shows an idle time), XCLAIM (FORCE, JUSTID, RETRYCOUNT, LASTID, claims of
/// deleted entries), XAUTOCLAIM (cursors, COUNT bounds, deleted entries), XINFO STREAM [FULL],
/// GROUPS (read counters and lags after SETID, XDEL and trims) and CONSUMERS (errors and empty
/// groups), WRONGTYPE, COMMAND GETKEYS and MULTI. Nothing here depends on the clock (XINFO
/// CONSUMERS and the PELs of FULL show times); the HELP texts changed after 7.0.
const STREAM_SCRIPT: &str = "\
DEL st:s st:e st:str st:m
XADD st:s 1-1 a 1
XADD st:s 1-2 b 2
XADD st:s 2-0 c 3
XADD st:s 3-0 d 4
XADD st:s 4-0 e 5
XGROUP
XGROUP NOSUCH st:s g
XGROUP CREATE st:s
XGROUP HELP st:s
XGROUP CREATE st:none g $
XGROUP CREATE st:s g1 0
XGROUP CREATE st:s g1 0
XGROUP CREATE st:s g2 $
XGROUP CREATE st:s g3 1-2 ENTRIESREAD 2
XGROUP CREATE st:s g4 0 ENTRIESREAD -2
XGROUP CREATE st:s g4 0 ENTRIESREAD x
XGROUP CREATE st:s g4 0 BADOPT
XGROUP CREATE st:s g4 -
XGROUP CREATE st:s g4 1-x
XGROUP CREATE st:s g4 0 MKSTREAM MKSTREAM MKSTREAM MKSTREAM
XGROUP CREATE st:none g4 0 BADOPT
XGROUP CREATE st:e g $ MKSTREAM
XGROUP CREATE st:e g2 0 MKSTREAM ENTRIESREAD 0
XLEN st:e
TYPE st:e
XINFO GROUPS st:e
XINFO STREAM st:e
XINFO STREAM st:e FULL
XINFO CONSUMERS st:e g
XGROUP SETID st:s nosuch 0
XGROUP SETID st:s g2 0
XGROUP SETID st:s g2 $ ENTRIESREAD 5
XGROUP SETID st:s g3 +
XGROUP SETID st:s g2 0 MKSTREAM
XGROUP SETID st:s g2 0 ENTRIESREAD
XGROUP SETID st:s g2 x
XGROUP SETID st:none g 0
XINFO GROUPS st:s
XGROUP SETID st:s g3 1-2 ENTRIESREAD 2
XGROUP CREATECONSUMER st:s g1 alice
XGROUP CREATECONSUMER st:s g1 alice
XGROUP CREATECONSUMER st:s nosuch alice
XGROUP CREATECONSUMER st:s g1
XGROUP CREATECONSUMER st:none g1 alice
XGROUP DELCONSUMER st:s g1 nobody
XGROUP DELCONSUMER st:s nosuch nobody
XGROUP DESTROY st:s g4
XGROUP DESTROY st:s g3
XGROUP DESTROY st:none g3
XGROUP DESTROY st:s g3 extra
SET st:str x
XGROUP CREATE st:str g 0
XGROUP CREATE st:str g 0 MKSTREAM
XGROUP DESTROY st:str g
XREADGROUP GROUP g1 alice COUNT 2 STREAMS st:s >
XREADGROUP GROUP g1 bob STREAMS st:s >
XPENDING st:s g1
XPENDING st:s g1 IDLE 100000000 - + 10
XPENDING st:s nosuch
XPENDING st:none g1
XPENDING st:str g1
XPENDING st:s g1 - +
XPENDING st:s g1 - + x
XPENDING st:s g1 IDLE x - + 10
XPENDING st:s g1 IDLE 10 - +
XPENDING st:s g1 ( + 10
XPENDING st:s g1 (18446744073709551615-18446744073709551615 + 10
XPENDING st:s g1 - (0-0 10
XPENDING st:s g1 - + -1
XPENDING st:s g1 - + 0 nobody
XPENDING st:s g1 - + 10 nobody
XPENDING st:s g1 a b c d e f g
XPENDING st:s g1 x + 10
XPENDING st:none g1 x + 10
XPENDING st:s g1 - + x nobody
XACK st:s g1 1-1 1-1 x
XACK st:s g1 1-1 1-1
XACK st:s nosuch 1-1 x
XACK st:none g 1-1
XACK st:str g 1-1
XACK st:s g1
XPENDING st:s g1
XCLAIM st:s g1 carol 0 1-2 JUSTID
XCLAIM st:s g1 carol 0 2-0 3-0
XCLAIM st:s g1 carol x 1-2
XCLAIM st:s nosuch carol 0 1-2
XCLAIM st:s nosuch carol x 1-2
XCLAIM st:none g carol 0 1-2
XCLAIM st:str g carol 0 1-2
XCLAIM st:s g1 carol 0 1-2 IDLE x
XCLAIM st:s g1 carol 0 1-2 TIME x
XCLAIM st:s g1 carol 0 1-2 RETRYCOUNT x
XCLAIM st:s g1 carol 0 1-2 LASTID x
XCLAIM st:s g1 carol 0 1-2 BOGUS
XCLAIM st:s g1 carol 0 1-2 IDLE
XCLAIM st:s g1 carol 100000000 1-2 JUSTID
XCLAIM st:s g1 dave 0 4-0 JUSTID
XCLAIM st:s g1 dave 0 4-0 FORCE JUSTID
XCLAIM st:s g1 dave 0 9-0 FORCE JUSTID
XCLAIM st:s g1 dave 0 4-0 RETRYCOUNT 7 JUSTID
XCLAIM st:s g1 dave 0 4-0 4-0 JUSTID
XPENDING st:s g1
XINFO GROUPS st:s
XCLAIM st:s g1 dave 0 1-2 LASTID 5-0 JUSTID
XCLAIM st:s g1 dave 0 LASTID 6-0
XINFO GROUPS st:s
XCLAIM st:s g2 gina 0 1-1 FORCE
XCLAIM st:s g2 gina 0 1-1 TIME 0 RETRYCOUNT -3
XDEL st:s 2-0
XCLAIM st:s g1 dave 0 2-0 3-0
XPENDING st:s g1
XAUTOCLAIM st:s g1 erin 0 - COUNT 1 JUSTID
XAUTOCLAIM st:s g1 erin 0 - COUNT 0
XAUTOCLAIM st:s g1 erin 0 - COUNT x
XAUTOCLAIM st:s g1 erin 0 - COUNT 8070450532247928833
XAUTOCLAIM st:s g1 erin 0 - COUNT
XAUTOCLAIM st:s g1 erin x -
XAUTOCLAIM st:s g1 erin 0 x
XAUTOCLAIM st:s g1 erin 0 (18446744073709551615-18446744073709551615
XAUTOCLAIM st:s g1 erin 0 - BOGUS
XAUTOCLAIM st:s nosuch erin 0 -
XAUTOCLAIM st:none g erin 0 -
XAUTOCLAIM st:str g erin 0 -
XAUTOCLAIM st:s g1 erin 0 - JUSTID
XAUTOCLAIM st:s g1 erin 100000000 - JUSTID
XDEL st:s 1-2
XAUTOCLAIM st:s g1 frank 0 0-0
XAUTOCLAIM st:s g1 frank 0 (3-0
XAUTOCLAIM st:s g1 frank 0 +
XPENDING st:s g1
XGROUP DELCONSUMER st:s g1 frank
XPENDING st:s g1
XINFO CONSUMERS st:s nosuch
XINFO CONSUMERS st:none g
XINFO CONSUMERS st:str g
XINFO GROUPS st:s
XINFO GROUPS st:none
XINFO STREAM st:s
XINFO STREAM st:s FULL COUNT x
XINFO STREAM st:s BOGUS
XINFO STREAM st:s FULL COUNT
XINFO STREAM st:s FULL x 1
XINFO STREAM st:none
XINFO STREAM st:str
XINFO HELP x
XINFO NOSUCH st:s
XINFO GROUPS
XINFO GROUPS st:s x
XINFO STREAM
COMMAND GETKEYS XGROUP CREATE st:s g $
COMMAND GETKEYS XINFO STREAM st:s
COMMAND GETKEYS XACK st:s g 1-1
COMMAND GETKEYS XCLAIM st:s g c 0 1-1
COMMAND GETKEYS XPENDING st:s g
COMMAND GETKEYS XAUTOCLAIM st:s g c 0 0
MULTI
XGROUP CREATE st:m g $ MKSTREAM
XINFO GROUPS st:m
XGROUP DESTROY st:m g
EXEC
CONFIG SET stream-node-max-entries 2
DEL st:r
XADD st:r 1-1 a 1
XADD st:r 1-2 b 2
XADD st:r 2-0 c 3
XADD st:r 3-0 d 4
XADD st:r 4-0 e 5
XADD st:r 300-0 e 5
XADD st:r 70000-0 e 5
XADD st:r 70001-0 e 5
XADD st:r 1700000000000-0 e 5
XADD st:r 1700000000000-1 e 5
XADD st:r 1700000000001-0 e 5
XADD st:r 1700000000300-0 e 5
XADD st:r 1700000000300-5 e 5
XADD st:r 1700000000300-258 e 5
XADD st:r 1800000000300-258 e 5
XINFO STREAM st:r
XDEL st:r 1-1 1-2 300-0
XINFO STREAM st:r
XTRIM st:r MAXLEN 3
XINFO STREAM st:r
XINFO STREAM st:r FULL COUNT 2
XINFO STREAM st:r FULL COUNT 0
XINFO STREAM st:r FULL COUNT -5
XGROUP CREATE st:r g 0
XREADGROUP GROUP g c COUNT 1 NOACK STREAMS st:r >
XINFO GROUPS st:r
XREADGROUP GROUP g c COUNT 1 STREAMS st:r >
XINFO GROUPS st:r
XGROUP SETID st:r g 0
XINFO GROUPS st:r
XGROUP SETID st:r g 1700000000300-5
XINFO GROUPS st:r
XDEL st:r 1800000000300-258
XINFO GROUPS st:r
XGROUP CREATE st:r g2 0-0
XINFO GROUPS st:r
XADD st:r 1900000000000-0 x y
XINFO GROUPS st:r
XINFO STREAM st:r
CONFIG SET stream-node-max-entries 100
";

#[test]
fn replies_equal_redis() {
    let Some((_servers, mut theirs, mut ours)) = both() else {
        return missing_client("redis-server");
    };
    let mut differ = Vec::new();
    let geo: Vec<Vec<&str>> = GEO_SCRIPT
        .lines()
        .chain(STREAM_SCRIPT.lines())
        .map(|l| l.split(' ').collect())
        .collect();
    for args in SCRIPT.iter().copied().chain(geo.iter().map(Vec::as_slice)) {
        let (a, b) = (reply(&mut theirs, args), reply(&mut ours, args));
        if a != b {
            differ.push(format!("{args:?}\n  redis:     {a:?}\n  wirespeed: {b:?}"));
        }
    }
    same(&differ);
}
