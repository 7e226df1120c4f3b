//! The same commands against wirespeed and a real Redis 7 (`redis-server`, started
//! here on a free port): every reply must be equal, errors included (their text is
//! compared too). Covers the string, key, hash and set commands, WRONGTYPE across
//! them, transactions and COMMAND GETKEYS. In CI a missing `redis-server` fails the test; elsewhere it is skipped.

mod common;

use std::net::TcpListener;
use std::process::{Command, Stdio};

use common::{connect, kvs_serve, missing_client, Killed};
use redis::Value;

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A Redis server without persistence, or None when redis-server is not installed.
fn redis_server() -> Option<(Killed, String)> {
    let port = free_port();
    let child = Command::new("redis-server")
        .args([
            "--port",
            &port.to_string(),
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .args(["--bind", "127.0.0.1"])
        .arg("--dir")
        .arg(std::env::temp_dir())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let addr = format!("127.0.0.1:{port}");
    let killed = Killed(child);
    for _ in 0..200 {
        if std::net::TcpStream::connect(&addr).is_ok() {
            return Some((killed, addr));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!("redis-server did not start on {addr}");
}

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
    // Arity and unknown commands.
    &["GET"],
    &["GETRANGE", "s", "0"],
    &["NOSUCHCOMMAND", "a", "b"],
    &["COMMAND", "GETKEYS", "RENAME", "a", "b"],
    &["COMMAND", "GETKEYS", "MSET", "a", "1", "b", "2"],
    &["COMMAND", "GETKEYS", "GET"],
    &["COMMAND", "GETKEYS", "GET", "a", "b"],
    &["CONFIG", "SET", "list-max-listpack-size", "8"],
    &["CONFIG", "GET", "list-max-listpack-size"],
    &["CONFIG", "SET", "no-such-setting", "1"],
];

#[test]
fn replies_equal_redis() {
    let Some((_redis, redis_addr)) = redis_server() else {
        return missing_client("redis-server");
    };
    let (_ws, ws_addr) = kvs_serve(&["--port", "0"]);
    let mut theirs = connect(&redis_addr);
    let mut ours = connect(&ws_addr);
    let mut differ = Vec::new();
    for args in SCRIPT {
        let (a, b) = (reply(&mut theirs, args), reply(&mut ours, args));
        if a != b {
            differ.push(format!("{args:?}\n  redis:     {a:?}\n  wirespeed: {b:?}"));
        }
    }
    assert!(
        differ.is_empty(),
        "{} replies differ:\n{}",
        differ.len(),
        differ.join("\n")
    );
}
