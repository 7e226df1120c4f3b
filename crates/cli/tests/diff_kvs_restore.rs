//! RESTORE against wirespeed and a real Redis 7 (`redis-server`, started here on a free
//! port): payloads DUMPed by Redis restored on both, with every option and every error
//! in Redis's order (texts compared), deadlines, and the values read back (HyperLogLogs
//! sparse and dense counted, merged and read byte for byte); every reply
//! must be equal. In CI a missing `redis-server` fails the test; elsewhere it is
//! skipped.

mod common;

use common::{both, missing_client, same};
use redis::Value;

/// A reply to a command with binary arguments, error texts kept.
fn reply_bytes(con: &mut redis::Connection, args: &[&[u8]]) -> Result<Value, String> {
    let mut c = redis::Cmd::new();
    args.iter().for_each(|a| {
        c.arg(*a);
    });
    c.query::<Value>(con).map_err(|e| e.to_string())
}

/// A script that adds 5000 elements to the HyperLogLog KEYS[1] (dense by then).
const FILL_HLL: &str = "for i = 1, 5000 do redis.call('pfadd', KEYS[1], i) end";

/// `body` as a DUMP payload of RDB `version`, with its checksum.
fn sealed(body: &[u8], version: u16) -> Vec<u8> {
    let mut p = body.to_vec();
    p.extend_from_slice(&version.to_le_bytes());
    let crc = wirespeed_kvs::cmd::dump::crc64(&p);
    p.extend_from_slice(&crc.to_le_bytes());
    p
}

/// RESTORE of payloads DUMPed by Redis, on both servers: the options, every error in
/// Redis's order, deadlines, and the values read back.
#[test]
fn restore_replies_equal_redis() {
    let Some((_servers, mut theirs, mut ours)) = both() else {
        return missing_client("redis-server");
    };
    let big = "x".repeat(100);
    for args in [
        &["SET", "s", "12345"][..],
        &["SET", "t", &big],
        &["RPUSH", "l", "a", &big, "-3"],
        &["HSET", "h", "f", "v", "g", &big],
        &["SADD", "i", "1", "2", "-70000"],
        &["ZADD", "z", "1", "a", "-2.5", &big],
        // HyperLogLogs: sparse, dense with a stale cache, dense with a fresh one.
        &["PFADD", "hs", "a", "b", "c", &big],
        &["EVAL", FILL_HLL, "1", "hd"],
        &["EVAL", FILL_HLL, "1", "hdc"],
        &["PFCOUNT", "hdc"],
    ] {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        reply_bytes(&mut theirs, &args).expect("fill");
    }
    let p: Vec<Vec<u8>> = ["s", "t", "l", "h", "i", "z", "hs", "hd", "hdc"]
        .iter()
        .map(|k| redis::cmd("DUMP").arg(*k).query(&mut theirs).expect("DUMP"))
        .collect();
    let mut bad_crc = p[0].clone();
    *bad_crc.last_mut().expect("payload") ^= 1;
    let body = &p[0][..p[0].len() - 10];
    let (newer, bad, stream) = (
        sealed(body, 12),
        sealed(&[0, 0x3f, b'a'], 9),
        sealed(&[15, 0], 9),
    );
    let script: &[&[&[u8]]] = &[
        &[b"RESTORE", b"r0", b"0", &p[0]],
        &[b"GET", b"r0"],
        &[b"RESTORE", b"r0", b"0", &p[1]],
        &[b"RESTORE", b"r0", b"0", &p[1], b"REPLACE"],
        &[b"GET", b"r0"],
        &[b"RESTORE", b"r1", b"-1", &p[0]],
        &[b"RESTORE", b"r1", b"x", &p[0]],
        &[b"RESTORE", b"r0", b"-1", &p[0]],
        &[b"RESTORE", b"r1", b"0", &bad_crc],
        &[b"RESTORE", b"r1", b"0", &newer],
        &[b"RESTORE", b"r1", b"0", &bad],
        &[b"RESTORE", b"r1", b"0", &stream],
        &[b"RESTORE", b"r1", b"0", b"short"],
        &[b"RESTORE", b"r1", b"0", &p[0], b"FOO"],
        &[b"RESTORE", b"r1", b"0", &p[0], b"IDLETIME"],
        &[b"RESTORE", b"r1", b"0", &p[0], b"IDLETIME", b"-1"],
        &[b"RESTORE", b"r1", b"0", &p[0], b"IDLETIME", b"x"],
        &[b"RESTORE", b"r1", b"0", &p[0], b"FREQ", b"256"],
        &[
            b"RESTORE",
            b"r1",
            b"0",
            &p[0],
            b"IDLETIME",
            b"1",
            b"FREQ",
            b"1",
        ],
        &[b"RESTORE", b"r1", b"0", &p[0], b"FREQ", b"5", b"ABSTTL"],
        &[b"RESTORE", b"r2", b"100000", &p[2]],
        &[b"LRANGE", b"r2", b"0", b"-1"],
        &[b"TTL", b"r2"],
        &[b"RESTORE", b"r3", b"1", &p[3], b"ABSTTL"],
        &[b"EXISTS", b"r3"],
        &[b"RESTORE", b"r1", b"1", &p[3], b"ABSTTL", b"REPLACE"],
        &[b"EXISTS", b"r1"],
        &[b"RESTORE", b"r4", b"0", &p[3], b"IDLETIME", b"10"],
        &[b"HGET", b"r4", b"g"],
        &[b"HLEN", b"r4"],
        &[b"RESTORE", b"r5", b"0", &p[4]],
        &[b"SMISMEMBER", b"r5", b"1", b"2", b"-70000", b"3"],
        &[b"SCARD", b"r5"],
        &[b"RESTORE", b"r6", b"99999999999000", &p[5], b"ABSTTL"],
        &[b"ZRANGE", b"r6", b"0", b"-1", b"WITHSCORES"],
        &[b"PEXPIRETIME", b"r6"],
        &[b"RESTORE", b"rs", b"0", &p[6]],
        &[b"PFDEBUG", b"ENCODING", b"rs"],
        &[b"PFCOUNT", b"rs"],
        &[b"GET", b"rs"],
        &[b"RESTORE", b"rd", b"0", &p[7]],
        &[b"PFDEBUG", b"ENCODING", b"rd"],
        &[b"PFCOUNT", b"rd"],
        &[b"PFCOUNT", b"rd", b"rs"],
        &[b"RESTORE", b"rdc", b"0", &p[8]],
        &[b"PFCOUNT", b"rdc"],
        &[b"PFADD", b"rs", b"x", b"y"],
        &[b"PFMERGE", b"rm", b"rs", b"rd", b"rdc"],
        &[b"PFCOUNT", b"rm"],
        &[b"GET", b"rm"],
        &[b"GET", b"rd"],
        &[b"DUMP", b"nosuch"],
        &[b"DUMP"],
        &[b"RESTORE", b"r7", b"0"],
        &[b"COMMAND", b"GETKEYS", b"RESTORE", b"k", b"0", &p[0]],
        &[b"COMMAND", b"GETKEYS", b"DUMP", b"k"],
    ];
    let mut differ = Vec::new();
    for args in script {
        let (a, b) = (reply_bytes(&mut theirs, args), reply_bytes(&mut ours, args));
        if a != b {
            let shown: Vec<String> = args
                .iter()
                .map(|a| String::from_utf8_lossy(&a[..a.len().min(24)]).into_owned())
                .collect();
            differ.push(format!("{shown:?}\n  redis:     {a:?}\n  wirespeed: {b:?}"));
        }
    }
    same(&differ);
}
