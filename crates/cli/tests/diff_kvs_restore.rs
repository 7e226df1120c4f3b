//! RESTORE against wirespeed and a real Redis 7 (`redis-server`, started here on a free
//! port): payloads DUMPed by Redis restored on both, with every option and every error
//! in Redis's order (texts compared), deadlines, and the values read back (HyperLogLogs
//! sparse and dense counted, merged and read byte for byte); every reply
//! must be equal. Streams move both ways: built by the same commands on both servers,
//! each server's DUMP is RESTOREd on the other and read back (XRANGE, XINFO STREAM
//! FULL, groups, PELs, consumers) against the original, and RESTORE serves clients
//! blocked in XREAD and XREADGROUP. RDB files move both ways: the same keys of every
//! type, in each of the encodings Redis picks by size, saved by each server are loaded
//! by the other and read back equal, and `redis-check-rdb` accepts ours. A
//! redis-server replica follows this server (the RDB snapshot, then the stream as
//! Redis commands) to an equal keyspace. In CI a
//! missing `redis-server` fails the test; elsewhere it is skipped.

mod common;

use common::{both, connect, info_num, kvs_serve, missing_client, redis_server, same, until};
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

/// The name of each field of an XINFO reply (RESP2: name, value, name, value, ...)
/// that starts with `length` (a stream) or `name` (a group or a consumer).
fn xinfo_fields(v: &Value) -> Option<Vec<(Vec<u8>, Value)>> {
    let Value::Array(a) = v else { return None };
    match a.first() {
        Some(Value::BulkString(k)) if k == b"length" || k == b"name" => {}
        _ => return None,
    }
    if a.len() % 2 != 0 {
        return None;
    }
    a.chunks(2)
        .map(|p| match &p[0] {
            Value::BulkString(k) => Some((k.clone(), p[1].clone())),
            _ => None,
        })
        .collect()
}

/// `a` and `b` with only the XINFO fields both have (Redis 7.0 shows no consumer
/// active time, this server shows Redis 7.2's fields), minus `drop`, at every depth.
fn common_fields(a: &Value, b: &Value, drop: &[&str]) -> (Value, Value) {
    if let (Some(fa), Some(fb)) = (xinfo_fields(a), xinfo_fields(b)) {
        let keep = |k: &[u8], other: &[(Vec<u8>, Value)]| {
            other.iter().any(|(o, _)| o == k) && !drop.iter().any(|d| d.as_bytes() == k)
        };
        let ka: Vec<_> = fa.iter().filter(|(k, _)| keep(k, &fb)).collect();
        let kb: Vec<_> = fb.iter().filter(|(k, _)| keep(k, &fa)).collect();
        if ka.len() == kb.len() {
            let (mut oa, mut ob) = (Vec::new(), Vec::new());
            for ((k1, v1), (k2, v2)) in ka.iter().zip(&kb) {
                let (x, y) = common_fields(v1, v2, drop);
                oa.extend([Value::BulkString(k1.clone()), x]);
                ob.extend([Value::BulkString(k2.clone()), y]);
            }
            return (Value::Array(oa), Value::Array(ob));
        }
    }
    match (a, b) {
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            let (oa, ob) = x
                .iter()
                .zip(y)
                .map(|(x, y)| common_fields(x, y, drop))
                .unzip();
            (Value::Array(oa), Value::Array(ob))
        }
        _ => (a.clone(), b.clone()),
    }
}

/// The replies that show a stream: read on `a` at `ka` and on `b` at `kb`, they must
/// be equal (XINFO: the fields both servers have; consumers' idle times left out).
fn same_stream(
    a: &mut redis::Connection,
    ka: &str,
    b: &mut redis::Connection,
    kb: &str,
    groups: &[&str],
    differ: &mut Vec<String>,
) {
    let mut reads: Vec<Vec<&str>> = vec![
        vec!["TYPE", "K"],
        vec!["XLEN", "K"],
        vec!["XRANGE", "K", "-", "+"],
        vec!["XREVRANGE", "K", "+", "-", "COUNT", "3"],
        vec!["XRANGE", "K", "(0-1", "+", "COUNT", "2"],
        vec!["XINFO", "STREAM", "K"],
        vec!["XINFO", "STREAM", "K", "FULL"],
        vec!["XINFO", "STREAM", "K", "FULL", "COUNT", "2"],
        vec!["XINFO", "GROUPS", "K"],
    ];
    for g in groups {
        reads.push(vec!["XINFO", "CONSUMERS", "K", g]);
        reads.push(vec!["XPENDING", "K", g]);
    }
    for r in reads {
        let args = |k: &str| -> Vec<Vec<u8>> {
            r.iter()
                .map(|x| if *x == "K" { k } else { x }.as_bytes().to_vec())
                .collect()
        };
        let (xa, xb) = (args(ka), args(kb));
        let x = reply_bytes(a, &xa.iter().map(Vec::as_slice).collect::<Vec<_>>());
        let y = reply_bytes(b, &xb.iter().map(Vec::as_slice).collect::<Vec<_>>());
        let (x, y) = match (x, y) {
            (Ok(x), Ok(y)) => {
                let (x, y) = common_fields(&x, &y, &["idle", "inactive"]);
                (Ok(x), Ok(y))
            }
            other => other,
        };
        if x != y {
            differ.push(format!(
                "{r:?} on {ka} / {kb}\n  one:   {x:?}\n  other: {y:?}"
            ));
        }
    }
}

/// The RDB version a DUMP payload declares.
fn version_of(p: &[u8]) -> u16 {
    u16::from_le_bytes([p[p.len() - 10], p[p.len() - 9]])
}

/// Builds the same streams on both servers, then moves each one's DUMP to the other:
/// what Redis 7.0 DUMPs is RESTOREd here and reads back the same, and what this server
/// DUMPs (type 19, RDB 10, unless a consumer's active time must be kept) is RESTOREd
/// in Redis and reads back the same; through both and back to Redis, the payload is
/// Redis's own, byte for byte.
#[test]
fn streams_move_both_ways() {
    let Some((_redis, redis_addr)) = redis_server() else {
        return missing_client("redis-server");
    };
    let (_ws, ws_addr) = kvs_serve(&["--port", "0"]);
    let (mut theirs, mut ours) = (connect(&redis_addr), connect(&ws_addr));
    let big = "x".repeat(300);
    let mut build: Vec<Vec<String>> = Vec::new();
    let mut add = |args: &[&str]| build.push(args.iter().map(|a| a.to_string()).collect());
    add(&["CONFIG", "SET", "stream-node-max-entries", "4"]);
    // `a`: nodes of 4, fields like and unlike the master entry's, integers, a long
    // value, deleted entries, an exact trim; groups with pending entries, an
    // acknowledgement, a claim.
    for i in 1..=14u64 {
        let id = format!("{}-{}", 1000 + i / 3, i % 3);
        let v = match i % 5 {
            0 => big.clone(),
            1 => format!("-{}", i * 1000),
            2 => "text".to_string(),
            _ => (i * 100_000).to_string(),
        };
        if i % 4 == 3 {
            add(&["XADD", "a", &id, "other", &v]);
        } else {
            add(&["XADD", "a", &id, "f", &v, "n", "1"]);
        }
    }
    add(&["XDEL", "a", "1001-2", "1003-0"]);
    add(&["XTRIM", "a", "MAXLEN", "10"]);
    add(&["XGROUP", "CREATE", "a", "g1", "0"]);
    add(&["XGROUP", "CREATE", "a", "g2", "$"]);
    add(&["XGROUP", "CREATE", "a", "7", "1002-1"]);
    add(&[
        "XREADGROUP",
        "GROUP",
        "g1",
        "alice",
        "COUNT",
        "3",
        "STREAMS",
        "a",
        ">",
    ]);
    add(&[
        "XREADGROUP",
        "GROUP",
        "g1",
        "bob",
        "COUNT",
        "2",
        "STREAMS",
        "a",
        ">",
    ]);
    add(&["XACK", "a", "g1", "1001-0"]);
    add(&["XCLAIM", "a", "g1", "bob", "0", "1001-1"]);
    add(&[
        "XREADGROUP",
        "GROUP",
        "7",
        "12",
        "COUNT",
        "1",
        "STREAMS",
        "a",
        ">",
    ]);
    add(&["XDEL", "a", "1002-0"]);
    // `c`: a consumer made and never active (this server then DUMPs type 21, RDB 11,
    // which Redis 7.0 refuses).
    add(&["XADD", "c", "1-1", "f", "v"]);
    add(&["XGROUP", "CREATE", "c", "g", "0"]);
    add(&["XGROUP", "CREATECONSUMER", "c", "g", "carol"]);
    // `e`: empty, with a group.
    add(&["XGROUP", "CREATE", "e", "g", "$", "MKSTREAM"]);
    // `d`: every entry deleted but the stream kept, its counters with it.
    add(&["XADD", "d", "5-5", "f", "v"]);
    add(&["XDEL", "d", "5-5"]);
    add(&[
        "XSETID",
        "d",
        "9-9",
        "ENTRIESADDED",
        "12",
        "MAXDELETEDID",
        "7-7",
    ]);
    // `big`: default node sizes, so nodes are cut by bytes, some LZF-compressed.
    add(&["CONFIG", "SET", "stream-node-max-entries", "100"]);
    for i in 1..=400u64 {
        let v = if i % 50 == 0 {
            big.clone()
        } else {
            format!("value {}", i % 7)
        };
        add(&[
            "XADD",
            "big",
            &format!("{i}-0"),
            "field",
            &v,
            "n",
            &i.to_string(),
        ]);
    }
    add(&["XGROUP", "CREATE", "big", "g", "0"]);
    add(&[
        "XREADGROUP",
        "GROUP",
        "g",
        "c",
        "COUNT",
        "150",
        "STREAMS",
        "big",
        ">",
    ]);
    for args in &build {
        let a: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        let (t, o) = (reply_bytes(&mut theirs, &a), reply_bytes(&mut ours, &a));
        assert!(t.is_ok() && o.is_ok(), "{args:?}: {t:?} {o:?}");
    }
    let keys: &[(&str, &[&str])] = &[
        ("a", &["g1", "g2", "7"]),
        ("c", &["g"]),
        ("e", &["g"]),
        ("d", &[]),
        ("big", &["g"]),
    ];
    let dump = |con: &mut redis::Connection, k: &str| -> Vec<u8> {
        redis::cmd("DUMP").arg(k).query(con).expect("DUMP")
    };
    let restore = |con: &mut redis::Connection, k: &str, p: &[u8]| {
        reply_bytes(con, &[b"RESTORE", k.as_bytes(), b"0", p])
    };
    let mut differ = Vec::new();
    for (k, groups) in keys {
        // Redis's payload here: read back the same as Redis's original.
        let p = dump(&mut theirs, k);
        assert_eq!((p[0], version_of(&p)), (19, 10), "{k}");
        let copy = format!("from-redis:{k}");
        assert_eq!(restore(&mut ours, &copy, &p), Ok(Value::Okay), "{k}");
        same_stream(&mut theirs, k, &mut ours, &copy, groups, &mut differ);
        // And from here back to Redis: Redis's payload again, byte for byte.
        let back = dump(&mut ours, &copy);
        let round = format!("round:{k}");
        assert_eq!(restore(&mut theirs, &round, &back), Ok(Value::Okay), "{k}");
        if dump(&mut theirs, &round) != p {
            differ.push(format!("{k}: Redis -> here -> Redis changed the payload"));
        }
        // This server's payload in Redis: read back the same as this server's original.
        let p = dump(&mut ours, k);
        let copy = format!("from-here:{k}");
        let r = restore(&mut theirs, &copy, &p);
        if *k == "c" {
            assert_eq!((p[0], version_of(&p)), (21, 11), "{k}");
            let e = r.expect_err("Redis 7.0 reads RDB 10 at most");
            assert!(
                e.contains("DUMP payload version or checksum are wrong"),
                "{e}"
            );
            // Here it keeps the consumer never active.
            assert_eq!(restore(&mut ours, "c-again", &p), Ok(Value::Okay));
            let mut again = connect(&ws_addr);
            same_stream(&mut ours, k, &mut again, "c-again", groups, &mut differ);
            continue;
        }
        assert_eq!((p[0], version_of(&p)), (19, 10), "{k}");
        assert_eq!(r, Ok(Value::Okay), "{k}");
        same_stream(&mut ours, k, &mut theirs, &copy, groups, &mut differ);
    }
    same(&differ);
    // The restored streams take new entries as the originals do: the same nodes, the
    // same IDs, the same deliveries.
    for (k, _) in keys {
        let copy = format!("from-redis:{k}");
        for args in [
            vec!["XADD", "K", "*", "f", "v"],
            vec!["XADD", "K", "99999999999999-0", "f", "v", "n", "1"],
        ] {
            let a = |key: &str| -> Vec<Vec<u8>> {
                args.iter()
                    .map(|x| if *x == "K" { key } else { x }.as_bytes().to_vec())
                    .collect()
            };
            let (x, y) = (a(k), a(&copy));
            let t = reply_bytes(
                &mut theirs,
                &x.iter().map(Vec::as_slice).collect::<Vec<_>>(),
            );
            let o = reply_bytes(&mut ours, &y.iter().map(Vec::as_slice).collect::<Vec<_>>());
            assert_eq!(t.is_ok(), o.is_ok(), "{args:?} {k}: {t:?} {o:?}");
        }
        let x = reply_bytes(&mut theirs, &[b"XINFO", b"STREAM", k.as_bytes()]);
        let y = reply_bytes(&mut ours, &[b"XINFO", b"STREAM", copy.as_bytes()]);
        let (x, y) = common_fields(
            &x.expect("XINFO"),
            &y.expect("XINFO"),
            // The IDs `*` made: each server's clock (an emptied stream's first entry
            // is one of them).
            &[
                "last-generated-id",
                "last-entry",
                "first-entry",
                "recorded-first-entry-id",
            ],
        );
        assert_eq!(x, y, "{k} after XADD");
    }
}

/// RESTORE of a stream serves the clients blocked on its key, as a RESTORE of a list
/// serves BLPOP: XREAD on a key that was absent, XREADGROUP on one RESTORE REPLACE
/// replaces with a stream that has the group. The replies are Redis's.
#[test]
fn restore_serves_blocked_stream_readers() {
    let Some((_redis, redis_addr)) = redis_server() else {
        return missing_client("redis-server");
    };
    let (_ws, ws_addr) = kvs_serve(&["--port", "0"]);
    // The payload: a stream whose group `g` has read its first entry.
    let mut theirs = connect(&redis_addr);
    for args in [
        &["XADD", "src", "1-1", "f", "v"][..],
        &["XADD", "src", "2-2", "f", "w", "n", "3"],
        &["XGROUP", "CREATE", "src", "g", "1-1"],
    ] {
        let a: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        reply_bytes(&mut theirs, &a).expect("fill");
    }
    let p: Vec<u8> = redis::cmd("DUMP")
        .arg("src")
        .query(&mut theirs)
        .expect("DUMP");
    let mut replies = Vec::new();
    for addr in [&redis_addr, &ws_addr] {
        let mut con = connect(addr);
        reply_bytes(
            &mut con,
            &[b"XGROUP", b"CREATE", b"wg", b"g", b"$", b"MKSTREAM"],
        )
        .expect("group");
        let readers: Vec<_> = [
            &["XREAD", "BLOCK", "10000", "STREAMS", "wk", "0-0"][..],
            &[
                "XREADGROUP",
                "GROUP",
                "g",
                "c",
                "BLOCK",
                "10000",
                "STREAMS",
                "wg",
                ">",
            ],
        ]
        .into_iter()
        .map(|args| {
            let mut c = connect(addr);
            let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            std::thread::spawn(move || {
                let a: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
                reply_bytes(&mut c, &a)
            })
        })
        .collect();
        until(5, "two clients blocked", || {
            info_num(&mut con, "clients", "blocked_clients") == 2
        });
        let restored = [
            reply_bytes(&mut con, &[b"RESTORE", b"wk", b"0", &p]),
            reply_bytes(&mut con, &[b"RESTORE", b"wg", b"0", &p, b"REPLACE"]),
        ];
        let served: Vec<_> = readers
            .into_iter()
            .map(|t| t.join().expect("reader"))
            .collect();
        replies.push((restored, served));
    }
    assert_eq!(replies[0], replies[1]);
    let (restored, served) = &replies[0];
    assert!(
        restored.iter().all(|r| r == &Ok(Value::Okay)),
        "{restored:?}"
    );
    assert!(
        served.iter().all(|r| matches!(r, Ok(Value::Array(_)))),
        "{served:?}"
    );
}

/// Streams as Redis 5.0 to 6.2 DUMP them (`STREAM_LISTPACKS`, RDB 9): Redis 7.0's
/// payloads of two streams cut to the older form (no first ID, largest deleted ID,
/// count added nor read counters), and an empty stream with a group. Both servers
/// derive the missing values alike (the read counters estimated, an empty stream's
/// first ID the highest).
#[test]
fn streams_of_redis_6_load_alike() {
    let Some((_servers, mut theirs, mut ours)) = both() else {
        return missing_client("redis-server");
    };
    const OLD: [&str; 3] = [
        // Node max 3 entries: 1-1 {f v n 5}, 1-2 deleted, 2-0 {g x}; 5-7 {f a n b}.
        "0f0210000000000000000100000000000000014043430000001900020101010201816602816e02000102010001000181760205010501030100010101ded402f2a0860104050100010101dfff0201018167028178020601ff100000000000000005000000000000000723230000000c00010100010201816602816e0200010201000100018161028162020501ff03050700",
        // N-0 {k vN} for N in 1..=4 (5-0 deleted), groups ga (at 3-0, alice and bob
        // holding 2-0 and 3-0) and gb (at 5-0, carol).
        "0f02100000000000000001000000000000000036360000001400030100010101816b020001020100010001827631030401020101010001827632030401020102010001827633030401ff10000000000000000400000000000000002a2a0000000f00010101010101816b020001020100010001827634030401030101010001827635030401ff040500020267610300020000000000000002000000000000000088d00926a2010000010000000000000003000000000000000088d00926a2010000010205616c69636588d00926a2010000010000000000000002000000000000000003626f6288d00926a2010000010000000000000003000000000000000002676205000001056361726f6c88d00926a201000000",
        // Empty, last ID 3-4, group g at 1-1.
        "0f0000030401016701010000",
    ];
    let mut differ = Vec::new();
    for (i, h) in OLD.iter().enumerate() {
        let p = sealed(&common::unhex(h), 9);
        let k = format!("old{i}");
        for con in [&mut theirs, &mut ours] {
            assert_eq!(
                reply_bytes(con, &[b"RESTORE", k.as_bytes(), b"0", &p]),
                Ok(Value::Okay),
                "{k}"
            );
        }
        let groups: &[&str] = match i {
            1 => &["ga", "gb"],
            2 => &["g"],
            _ => &[],
        };
        same_stream(&mut theirs, &k, &mut ours, &k, groups, &mut differ);
        // An entry added: the first ID and the counters follow alike.
        for con in [&mut theirs, &mut ours] {
            reply_bytes(con, &[b"XADD", k.as_bytes(), b"100-1", b"f", b"v"]).expect("XADD");
        }
        same_stream(&mut theirs, &k, &mut ours, &k, groups, &mut differ);
    }
    same(&differ);
}

/// Every key of every database, with its type, value and whether it has a deadline.
fn keyspace(c: &mut redis::Connection) -> Vec<String> {
    let mut out = Vec::new();
    for db in 0..16 {
        reply_bytes(c, &[b"SELECT", db.to_string().as_bytes()]).unwrap();
        let mut keys: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query(c).unwrap();
        keys.sort();
        for k in keys {
            let kind: String = redis::cmd("TYPE").arg(&k).query(c).unwrap();
            // Each read: the command, the key, then the rest.
            let reads: &[&[&[u8]]] = match kind.as_str() {
                "string" => &[&[b"GET"]],
                "list" => &[&[b"LRANGE", b"0", b"-1"]],
                "set" => &[&[b"SORT_RO", b"ALPHA"]],
                "hash" => &[&[b"HGETALL"]],
                "zset" => &[&[b"ZRANGE", b"0", b"-1", b"WITHSCORES"]],
                // Groups without their times (the two servers ran the commands at
                // different moments).
                "stream" => &[
                    &[b"XRANGE", b"-", b"+"],
                    &[b"XINFO", b"GROUPS"],
                    &[b"XPENDING", b"g1"],
                ],
                other => panic!("unexpected type {other}"),
            };
            let mut value = String::new();
            for read in reads {
                let mut args = vec![read[0]];
                if read[0] == b"XINFO" {
                    args.push(read[1]);
                    args.push(&k);
                } else {
                    args.push(&k);
                    args.extend_from_slice(&read[1..]);
                }
                let reply = reply_bytes(c, &args).unwrap();
                if kind == "hash" {
                    // Field order is the table's: compare the pairs sorted.
                    let Value::Array(items) = reply else { panic!() };
                    let mut pairs: Vec<String> =
                        items.chunks(2).map(|p| format!("{p:?}")).collect();
                    pairs.sort();
                    value.push_str(&pairs.join(","));
                } else {
                    value.push_str(&format!("{reply:?} "));
                }
            }
            let ttl = matches!(reply_bytes(c, &[b"TTL", &k]), Ok(Value::Int(t)) if t > 0);
            out.push(format!(
                "{db} {} {kind} {value} ttl={ttl}",
                String::from_utf8_lossy(&k)
            ));
        }
    }
    reply_bytes(c, &[b"SELECT", b"0"]).unwrap();
    out
}

/// The same keys on a server: every type, small and large (Redis's compact encodings
/// and its big ones), deadlines, three databases, a function library.
fn fill_every_encoding(c: &mut redis::Connection) {
    let big = "v".repeat(10_000);
    let mut p = redis::pipe();
    p.cmd("SET").arg("int").arg("-123456").ignore();
    p.cmd("SET").arg("raw").arg("hello").ignore();
    p.cmd("SET").arg("lzf").arg("ab".repeat(500)).ignore();
    p.cmd("SET")
        .arg("ttl")
        .arg("x")
        .arg("EX")
        .arg(5000)
        .ignore();
    p.cmd("RPUSH").arg("lsmall").arg(&["a", "1", "-7"]).ignore();
    p.cmd("RPUSH").arg("lplain").arg(&["a", &big, "b"]).ignore();
    p.cmd("SADD")
        .arg("sint")
        .arg(&["1", "2", "-70000"])
        .ignore();
    p.cmd("SADD").arg("slp").arg(&["a", "b", "3"]).ignore();
    p.cmd("HSET")
        .arg("hsmall")
        .arg(&["f", "v", "n", "12"])
        .ignore();
    p.cmd("ZADD")
        .arg("zsmall")
        .arg(&["1", "a", "-2.5", "b", "inf", "c"])
        .ignore();
    p.cmd("PFADD").arg("hll").arg(&["a", "b", "c"]).ignore();
    p.cmd("PEXPIRE").arg("hsmall").arg(9_000_000).ignore();
    for i in 0..1000 {
        p.cmd("RPUSH").arg("lbig").arg(format!("item-{i}")).ignore();
        p.cmd("SADD").arg("sbig").arg(format!("m{i}")).ignore();
        p.cmd("SADD").arg("sintbig").arg(i * 7).ignore();
        p.cmd("HSET")
            .arg("hbig")
            .arg(format!("f{i}"))
            .arg(i)
            .ignore();
        p.cmd("ZADD")
            .arg("zbig")
            .arg(i as f64 / 3.0)
            .arg(format!("m{i}"))
            .ignore();
    }
    for i in 0..300 {
        p.cmd("XADD")
            .arg("st")
            .arg(format!("{}-{}", 1000 + i / 7, i % 7))
            .arg("f")
            .arg(i)
            .arg("g")
            .arg("x")
            .ignore();
    }
    p.cmd("XDEL").arg("st").arg("1003-2").ignore();
    p.cmd("XGROUP").arg(&["CREATE", "st", "g1", "0"]).ignore();
    p.cmd("XREADGROUP")
        .arg(&["GROUP", "g1", "alice", "COUNT", "5", "STREAMS", "st", ">"])
        .ignore();
    p.cmd("XGROUP").arg(&["CREATE", "st", "g2", "$"]).ignore();
    p.cmd("SELECT").arg(2).ignore();
    p.cmd("SET").arg("in2").arg("two").ignore();
    p.cmd("SELECT").arg(15).ignore();
    p.cmd("HSET").arg("in15").arg(&["f", "v"]).ignore();
    p.cmd("SELECT").arg(0).ignore();
    p.cmd("FUNCTION")
        .arg("LOAD")
        .arg("#!lua name=rdblib\nredis.register_function('rdbf', function() return 'from rdb' end)")
        .ignore();
    p.query::<()>(c).expect("fill");
}

/// A directory of its own for one server's RDB file.
fn rdb_dir(name: &str) -> std::path::PathBuf {
    let d = common::temp("diff-rdb", name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn rdb_files_move_both_ways_with_every_type_and_encoding() {
    if redis_server().is_none() {
        return missing_client("redis-server");
    }
    let (rd, wd) = (rdb_dir("redis"), rdb_dir("ours"));
    let (r, w) = (rd.to_str().unwrap(), wd.to_str().unwrap());
    let (_redis, raddr) = common::redis_server_with(None, &["--dir", r]).unwrap();
    let (_ours, waddr) = kvs_serve(&["--port", "0", "--dir", w]);
    let (mut theirs, mut ours) = (connect(&raddr), connect(&waddr));
    fill_every_encoding(&mut theirs);
    fill_every_encoding(&mut ours);
    let want = keyspace(&mut theirs);
    assert_eq!(
        keyspace(&mut ours),
        want,
        "the same commands, the same keys"
    );
    assert_eq!(want.len(), 19);
    for c in [&mut theirs, &mut ours] {
        let ok: String = redis::cmd("SAVE").query(c).unwrap();
        assert_eq!(ok, "OK");
    }
    // Redis's own checker accepts our file.
    let check = std::process::Command::new("redis-check-rdb")
        .arg(wd.join("dump.rdb"))
        .output();
    match check {
        Ok(o) => {
            let text = String::from_utf8_lossy(&o.stdout);
            assert!(
                o.status.success() && text.contains("RDB looks OK"),
                "{text}"
            );
        }
        Err(_) => missing_client("redis-check-rdb"),
    }
    // Each file loaded by the other server.
    let (r2d, w2d) = (rdb_dir("redis-loads-ours"), rdb_dir("ours-loads-redis"));
    std::fs::copy(wd.join("dump.rdb"), r2d.join("dump.rdb")).unwrap();
    std::fs::copy(rd.join("dump.rdb"), w2d.join("dump.rdb")).unwrap();
    let (_r2, r2addr) = common::redis_server_with(None, &["--dir", r2d.to_str().unwrap()]).unwrap();
    let (_w2, w2addr) = kvs_serve(&["--port", "0", "--dir", w2d.to_str().unwrap()]);
    let (mut r2, mut w2) = (connect(&r2addr), connect(&w2addr));
    until(10, "redis-server loaded the file", || {
        reply_bytes(&mut r2, &[b"DBSIZE"]).is_ok_and(|v| v == Value::Int(17))
    });
    assert_eq!(keyspace(&mut r2), want, "redis-server loading our file");
    assert_eq!(
        keyspace(&mut w2),
        want,
        "wirespeed loading redis-server's file"
    );
    for c in [&mut r2, &mut w2] {
        assert_eq!(
            reply_bytes(c, &[b"FCALL", b"rdbf", b"0"]).unwrap(),
            Value::BulkString(b"from rdb".to_vec())
        );
    }
    // redis-cli --rdb takes the snapshot through the replication handshake.
    let cli_file = w2d.join("cli.rdb");
    let (host, port) = waddr.rsplit_once(':').unwrap();
    let out = std::process::Command::new("redis-cli")
        .args(["-h", host, "-p", port, "--rdb"])
        .arg(&cli_file)
        .output();
    match out {
        Ok(o) => {
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let bytes = std::fs::read(&cli_file).unwrap();
            let mut keys = 0;
            wirespeed_kvs::cmd::dump::rdb::read(&bytes, 16, |_| keys += 1).unwrap();
            assert_eq!(keys, 19);
        }
        Err(_) => missing_client("redis-cli"),
    }
    for d in [rd, wd, r2d, w2d] {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// Writes of every kind after a replica synced (they reach it in the stream): each
/// type, deadlines, databases, SWAPDB, FLUSHDB, a transaction.
fn change_every_type(c: &mut redis::Connection) {
    let mut p = redis::pipe();
    p.cmd("SET").arg("after").arg("1").ignore();
    p.cmd("INCR").arg("after").ignore();
    p.cmd("SET")
        .arg("soon")
        .arg("x")
        .arg("EX")
        .arg(3000)
        .ignore();
    p.cmd("PERSIST").arg("ttl").ignore();
    p.cmd("DEL").arg("raw").ignore();
    p.cmd("HSET").arg("hsmall").arg("new").arg("field").ignore();
    p.cmd("SREM").arg("sbig").arg("m7").ignore();
    p.cmd("ZINCRBY").arg("zsmall").arg(5).arg("a").ignore();
    p.cmd("LPOP").arg("lbig").arg(3).ignore();
    p.cmd("XADD").arg("st").arg("*").arg("k").arg("v").ignore();
    p.cmd("XACK").arg("st").arg("g1").arg("1000-0").ignore();
    p.cmd("PFADD").arg("hll").arg("z").ignore();
    p.cmd("SELECT").arg(2).ignore();
    p.cmd("SET").arg("in2b").arg("two").ignore();
    p.cmd("SWAPDB").arg(2).arg(4).ignore();
    p.cmd("SELECT").arg(15).ignore();
    p.cmd("FLUSHDB").ignore();
    p.cmd("SELECT").arg(0).ignore();
    p.query::<()>(c).unwrap();
    let _: Value = redis::pipe()
        .atomic()
        .cmd("SET")
        .arg("tx1")
        .arg("a")
        .cmd("RPUSH")
        .arg("txl")
        .arg("b")
        .query(c)
        .unwrap();
}

#[test]
fn a_redis_replica_follows_this_server() {
    if redis_server().is_none() {
        return missing_client("redis-server");
    }
    let (_ours, waddr) = kvs_serve(&["--port", "0"]);
    let mut ours = connect(&waddr);
    // Before the replica attaches: in its snapshot.
    fill_every_encoding(&mut ours);
    let (host, port) = waddr.rsplit_once(':').unwrap();
    let rd = rdb_dir("replica");
    let (_replica, raddr) = common::redis_server_with(
        None,
        &["--dir", rd.to_str().unwrap(), "--replicaof", host, port],
    )
    .unwrap();
    let mut replica = connect(&raddr);
    until(10, "the replica's first sync", || {
        common::info(&mut replica, "replication")["master_link_status"] == "up"
    });
    // After: in the stream, as Redis commands.
    change_every_type(&mut ours);
    let want = keyspace(&mut ours);
    let mut got = Vec::new();
    until(10, "the replica has every change", || {
        got = keyspace(&mut replica);
        got == want
    });
    assert_eq!(
        common::info(&mut ours, "replication")["connected_slaves"],
        "1"
    );
    // Its acknowledgements count: WAIT sends it REPLCONF GETACK and it answers at once
    // (well before its once-a-second ACK), its RESP offset mapped to this stream's.
    for i in 0..5 {
        let _: () = redis::cmd("SET")
            .arg("waited")
            .arg(i)
            .query(&mut ours)
            .unwrap();
        let t = std::time::Instant::now();
        let acked: i64 = redis::cmd("WAIT")
            .arg(1)
            .arg(5000)
            .query(&mut ours)
            .unwrap();
        assert_eq!(acked, 1);
        assert!(
            t.elapsed() < std::time::Duration::from_millis(900),
            "{:?}",
            t.elapsed()
        );
    }
    let lag = common::info(&mut ours, "replication")["slave0"].clone();
    let offset = common::info(&mut ours, "replication")["master_repl_offset"].clone();
    assert!(
        lag.contains(&format!("offset={offset},")),
        "{lag} at {offset}"
    );
    let _ = std::fs::remove_dir_all(rd);
}

#[test]
fn this_server_follows_a_redis_primary_diskless_and_from_disk_and_resumes() {
    if redis_server().is_none() {
        return missing_client("redis-server");
    }
    // A directory of its own: the sync from disk writes its dump.rdb there.
    let rd = rdb_dir("primary");
    let (_redis, raddr) = common::redis_server_with(
        None,
        &[
            "--dir",
            rd.to_str().unwrap(),
            "--repl-diskless-sync-delay",
            "0",
        ],
    )
    .unwrap();
    let mut theirs = connect(&raddr);
    // Before the replica attaches: in the RDB snapshot (sent diskless, Redis 7's default).
    fill_every_encoding(&mut theirs);
    let log = common::fresh_log("follows-redis");
    let (_ours, waddr) = kvs_serve(&common::durable_args(&log));
    let mut ours = connect(&waddr);
    let (host, port) = raddr.rsplit_once(':').unwrap();
    let linked = |ours: &mut redis::Connection| {
        common::info(ours, "replication")["master_link_status"] == "up"
    };
    let _: () = redis::cmd("REPLICAOF")
        .arg(host)
        .arg(port)
        .query(&mut ours)
        .unwrap();
    until(10, "the first sync", || linked(&mut ours));
    let want = keyspace(&mut theirs);
    assert_eq!(keyspace(&mut ours), want, "the snapshot");
    // The function library came with it.
    let libs = reply_bytes(&mut ours, &[b"FUNCTION", b"LIST"]).unwrap();
    assert!(format!("{libs:?}").contains("rdblib"), "{libs:?}");
    // After: the command stream.
    change_every_type(&mut theirs);
    let _: String = redis::cmd("FUNCTION")
        .arg("LOAD")
        .arg("#!lua name=streamlib\nredis.register_function('sf', function() return 1 end)")
        .query(&mut theirs)
        .unwrap();
    let want = keyspace(&mut theirs);
    let mut got = Vec::new();
    until(10, "every change of the stream", || {
        got = keyspace(&mut ours);
        got == want
    });
    let libs = reply_bytes(&mut ours, &[b"FUNCTION", b"LIST"]).unwrap();
    assert!(format!("{libs:?}").contains("streamlib"), "{libs:?}");
    // WAIT on the primary: the replica acknowledges at once (REPLCONF GETACK).
    let acked: i64 = redis::cmd("WAIT")
        .arg(1)
        .arg(5000)
        .query(&mut theirs)
        .unwrap();
    assert_eq!(acked, 1);
    // The offsets are the primary's.
    let offset = |c: &mut redis::Connection, f: &str| common::info(c, "replication")[f].clone();
    until(10, "the offsets agree", || {
        offset(&mut ours, "slave_repl_offset") == offset(&mut theirs, "master_repl_offset")
    });
    assert_eq!(
        offset(&mut ours, "master_replid"),
        offset(&mut theirs, "master_replid")
    );
    // A dropped link resumes where it stopped (PSYNC: +CONTINUE), with what was written
    // meanwhile.
    let partial = |c: &mut redis::Connection| info_num(c, "stats", "sync_partial_ok");
    let before = partial(&mut theirs);
    let _: Value = redis::cmd("CLIENT")
        .arg(&["KILL", "TYPE", "replica"])
        .query(&mut theirs)
        .unwrap();
    let _: () = redis::cmd("SET")
        .arg("while-down")
        .arg("1")
        .query(&mut theirs)
        .unwrap();
    let _: i64 = redis::cmd("RPUSH")
        .arg("lbig")
        .arg("late")
        .query(&mut theirs)
        .unwrap();
    until(10, "a partial resync", || partial(&mut theirs) > before);
    let want = keyspace(&mut theirs);
    until(10, "what was written while the link was down", || {
        got = keyspace(&mut ours);
        got == want
    });
    // The replica refuses writes of its own, as Redis's do.
    let refused = redis::cmd("SET")
        .arg("mine")
        .arg("1")
        .query::<()>(&mut ours);
    assert!(refused
        .unwrap_err()
        .to_string()
        .contains("read only replica"));
    // A snapshot from the primary's disk, after this server left and came back.
    let _: () = redis::cmd("CONFIG")
        .arg(&["SET", "repl-diskless-sync", "no"])
        .query(&mut theirs)
        .unwrap();
    let _: () = redis::cmd("REPLICAOF")
        .arg(&["NO", "ONE"])
        .query(&mut ours)
        .unwrap();
    let _: () = redis::cmd("SET")
        .arg("mine")
        .arg("dropped at the sync")
        .query(&mut ours)
        .unwrap();
    let full = info_num(&mut theirs, "stats", "sync_full");
    let _: () = redis::cmd("HSET")
        .arg("hbig")
        .arg("f1")
        .arg("changed")
        .query(&mut theirs)
        .unwrap();
    let _: () = redis::cmd("REPLICAOF")
        .arg(host)
        .arg(port)
        .query(&mut ours)
        .unwrap();
    until(10, "a second full sync", || {
        info_num(&mut theirs, "stats", "sync_full") > full && linked(&mut ours)
    });
    let want = keyspace(&mut theirs);
    until(10, "the snapshot from disk", || {
        got = keyspace(&mut ours);
        got == want
    });
    // What the replica applied is in its own log: a restart from it holds the same keys.
    let _: () = redis::cmd("REPLICAOF")
        .arg(&["NO", "ONE"])
        .query(&mut ours)
        .unwrap();
    drop(_ours);
    let (_again, addr2) = kvs_serve(&common::durable_args(&log));
    let mut again = connect(&addr2);
    assert_eq!(
        keyspace(&mut again),
        want,
        "the log holds what the replica applied"
    );
    let _ = std::fs::remove_dir_all(rd);
}
