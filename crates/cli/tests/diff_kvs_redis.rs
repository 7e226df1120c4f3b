//! The same commands against wirespeed and a real Redis 7 (`redis-server`, started
//! here on a free port): every reply must be equal, errors included (their text is
//! compared too). Covers the string and key commands, transactions and COMMAND
//! GETKEYS. In CI a missing `redis-server` fails the test; elsewhere it is skipped.

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
