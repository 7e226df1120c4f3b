//! DUMP and RESTORE between a real Redis 7 (`redis-server`) and wirespeed, both ways:
//! keys of every type, in every encoding Redis picks for them (integer strings,
//! strings long enough to be LZF-compressed, intsets, listpacks, and values over 64
//! bytes that make Redis use its hash tables, skiplists and quicklists), with their
//! time to live. In CI a missing `redis-server` fails the test; elsewhere it is
//! skipped. Also without Redis: a restored key goes through the append-only log (it
//! survives a SIGKILL), serves a client blocked on it, moves a WATCH, sends the
//! `restore` notification, is refused over `maxmemory`, and goes to the selected
//! database.

mod common;

use common::{connect, kvs_serve, missing_client, redis_server, temp, unhex};

/// The type of `key` and its content in a form that compares across servers (sets and
/// hashes sorted, sorted sets in score order with their scores).
fn content(c: &mut redis::Connection, key: &str) -> (String, Vec<Vec<u8>>) {
    let t: String = redis::cmd("TYPE").arg(key).query(c).expect("TYPE");
    let q = |cmd: &mut redis::Cmd, c: &mut redis::Connection| -> Vec<Vec<u8>> {
        cmd.query(c).expect("read")
    };
    let mut items = match t.as_str() {
        "string" => vec![redis::cmd("GET").arg(key).query(c).expect("GET")],
        "list" => q(redis::cmd("LRANGE").arg(key).arg(0).arg(-1), c),
        "set" => q(redis::cmd("SMEMBERS").arg(key), c),
        "hash" => {
            let flat = q(redis::cmd("HGETALL").arg(key), c);
            let mut pairs: Vec<Vec<u8>> = flat.chunks(2).map(|p| p.concat()).collect();
            pairs.sort();
            pairs
        }
        "zset" => q(
            redis::cmd("ZRANGE")
                .arg(key)
                .arg(0)
                .arg(-1)
                .arg("WITHSCORES"),
            c,
        ),
        other => panic!("{key}: unexpected type {other}"),
    };
    if t == "set" {
        items.sort();
    }
    (t, items)
}

fn pttl(c: &mut redis::Connection, key: &str) -> i64 {
    redis::cmd("PTTL").arg(key).query(c).expect("PTTL")
}

fn dump(c: &mut redis::Connection, key: &str) -> Vec<u8> {
    let p: Option<Vec<u8>> = redis::cmd("DUMP").arg(key).query(c).expect("DUMP");
    p.unwrap_or_else(|| panic!("DUMP {key}: nil"))
}

fn restore(c: &mut redis::Connection, key: &str, ttl: i64, payload: &[u8]) {
    let r: redis::RedisResult<String> = redis::cmd("RESTORE")
        .arg(key)
        .arg(ttl.max(0))
        .arg(payload)
        .query(c);
    assert_eq!(r.as_deref(), Ok("OK"), "RESTORE {key}");
}

/// Keys of every type and encoding, with the encoding Redis 7 gives each.
fn fill_redis(c: &mut redis::Connection) -> Vec<(&'static str, &'static str)> {
    let big = "x".repeat(100);
    let run = |c: &mut redis::Connection, args: &[&str]| {
        let mut cmd = redis::cmd(args[0]);
        args[1..].iter().for_each(|a| {
            cmd.arg(*a);
        });
        let _: redis::Value = cmd.query(c).expect("fill");
    };
    // Long enough for several quicklist nodes (8 KiB each), which DUMP compresses.
    let long: Vec<String> = (0..300).map(|i| format!("{big}{i}")).collect();
    let mut rpush = vec!["RPUSH", "l_many"];
    rpush.extend(long.iter().map(String::as_str));
    let many: Vec<String> = (0..200).map(|i| format!("m{i}")).collect();
    let scored: Vec<String> = (0..200).map(|i| format!("{}", i as f64 / 4.0)).collect();
    let mut zadd = vec!["ZADD", "z_many"];
    for (s, m) in scored.iter().zip(&many) {
        zadd.extend([s.as_str(), m.as_str()]);
    }
    let commands: Vec<Vec<&str>> = vec![
        vec!["SET", "s_text", "hello world", "PX", "500000"],
        vec!["SET", "s_int", "12345"],
        vec!["SET", "s_neg", "-2000000000"],
        vec!["SET", "s_wide", "123456789012345"],
        vec!["SET", "s_lzf", &big],
        vec!["SET", "s_empty", ""],
        vec!["RPUSH", "l_small", "a", "b", "1", "-300", "100000", ""],
        vec!["RPUSH", "l_big", &big, "y", "7"],
        rpush,
        vec!["EXPIRE", "l_big", "1000"],
        vec!["HSET", "h_small", "f1", "v1", "f2", "2"],
        vec!["HSET", "h_big", "f", &big, "g", "1"],
        vec!["SADD", "i_set", "1", "2", "3", "-70000", "5000000000"],
        vec!["SADD", "s_set", "a", "b", "c"],
        vec!["SADD", "b_set", &big, "q", "9"],
        vec![
            "ZADD", "z_small", "1.5", "a", "2", "b", "-inf", "c", "0.25", "d",
        ],
        vec!["ZADD", "z_big", "3", &big, "4", "z", "0.1", "w"],
        zadd,
    ];
    for args in &commands {
        run(c, args);
    }
    vec![
        ("s_text", "embstr"),
        ("s_int", "int"),
        ("s_neg", "int"),
        ("s_wide", "int"),
        ("s_lzf", "raw"),
        ("s_empty", "embstr"),
        // Redis 7.2 keeps short lists in one listpack, 7.0 in a quicklist.
        ("l_small", ""),
        ("l_big", ""),
        ("l_many", "quicklist"),
        ("h_small", "listpack"),
        ("h_big", "hashtable"),
        ("i_set", "intset"),
        ("s_set", ""),
        ("b_set", "hashtable"),
        ("z_small", "listpack"),
        ("z_big", "skiplist"),
        ("z_many", "skiplist"),
    ]
}

#[test]
fn keys_move_from_redis_to_wirespeed_and_back() {
    let Some((_redis, redis_addr)) = redis_server() else {
        return missing_client("redis-server");
    };
    let (_ws, ws_addr) = kvs_serve(&["--port", "0", "--threads", "2"]);
    let mut theirs = connect(&redis_addr);
    let mut ours = connect(&ws_addr);
    let keys = fill_redis(&mut theirs);
    for &(key, encoding) in &keys {
        if !encoding.is_empty() {
            // The fixture holds the encoding it claims to test.
            let enc: String = redis::cmd("OBJECT")
                .arg("ENCODING")
                .arg(key)
                .query(&mut theirs)
                .expect("OBJECT ENCODING");
            assert_eq!(enc, encoding, "{key}");
        }
        let ttl = pttl(&mut theirs, key);
        restore(&mut ours, key, ttl, &dump(&mut theirs, key));
        assert_eq!(content(&mut ours, key), content(&mut theirs, key), "{key}");
        let ours_ttl = pttl(&mut ours, key);
        if ttl < 0 {
            assert_eq!(ours_ttl, -1, "{key}");
        } else {
            assert!(
                ours_ttl <= ttl && ours_ttl > ttl - 5000,
                "{key}: {ours_ttl} {ttl}"
            );
        }
    }
    // wirespeed's DUMP compresses long strings as Redis's does.
    assert!(dump(&mut ours, "s_lzf").len() < 40);
    // Back: what wirespeed dumps, Redis restores, to the same content.
    for &(key, _) in &keys {
        let back = format!("back:{key}");
        let ttl = pttl(&mut ours, key);
        restore(&mut theirs, &back, ttl, &dump(&mut ours, key));
        assert_eq!(
            content(&mut theirs, &back),
            content(&mut theirs, key),
            "{key}"
        );
        let ttl_back = pttl(&mut theirs, &back);
        assert_eq!(ttl_back < 0, ttl < 0, "{key}: {ttl_back} {ttl}");
        assert!(ttl_back <= ttl.max(0) + 1000, "{key}: {ttl_back} {ttl}");
    }
}

/// A payload DUMPed by Redis 7.0.15: a sorted set (c -inf, a 1.5, b 2) as a listpack.
const ZSET_LISTPACK: &str =
    "111d1d0000000600816302842d696e660581610283312e35048162020201ff0a0017dce91ab8436c89";
/// Redis 7.0.15's DUMP of a list (a, b, 1, -300, 100000), a quicklist of one listpack.
const LIST_QUICKLIST: &str =
    "120102171700000005008161028162020101ded402f2a0860104ff0a007fcdf657f83805c0";

#[test]
fn a_restored_key_survives_a_sigkill_with_the_log() {
    let aof = temp("kvs-dump", "restore.aof");
    let _ = std::fs::remove_file(&aof);
    let path = aof.to_string_lossy().to_string();
    let args = ["--port", "0", "--appendfsync", "always", "--aof", &path];
    let (mut server, addr) = kvs_serve(&args);
    let mut c = connect(&addr);
    restore(&mut c, "z", 0, &unhex(ZSET_LISTPACK));
    restore(&mut c, "l", 600_000, &unhex(LIST_QUICKLIST));
    let z = content(&mut c, "z");
    let l = content(&mut c, "l");
    assert_eq!(l.1.len(), 5);
    server.0.kill().expect("SIGKILL");
    let _ = server.0.wait();
    let (_server, addr) = kvs_serve(&args);
    let mut c = connect(&addr);
    assert_eq!(content(&mut c, "z"), z);
    assert_eq!(content(&mut c, "l"), l);
    let ttl = pttl(&mut c, "l");
    assert!(ttl > 500_000 && ttl <= 600_000, "{ttl}");
    assert_eq!(pttl(&mut c, "z"), -1);
    let _ = std::fs::remove_file(&aof);
}

#[test]
fn restore_serves_waiters_moves_watches_and_notifies() {
    let (_server, addr) = kvs_serve(&["--port", "0", "--threads", "2"]);
    let mut c = connect(&addr);
    let payload = unhex(LIST_QUICKLIST);
    // A client blocked on the key is served by the RESTORE.
    let waiter_addr = addr.clone();
    let waiter = std::thread::spawn(move || {
        let mut w = connect(&waiter_addr);
        let r: Option<(String, String)> = redis::cmd("BLPOP")
            .arg("bl")
            .arg(10)
            .query(&mut w)
            .expect("BLPOP");
        r
    });
    while common::info_num(&mut c, "clients", "blocked_clients") == 0 {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    restore(&mut c, "bl", 0, &payload);
    let got = waiter.join().expect("waiter");
    assert_eq!(got, Some(("bl".to_string(), "a".to_string())));
    // A WATCH on the key fails the transaction.
    let mut other = connect(&addr);
    let _: () = redis::cmd("WATCH").arg("w").query(&mut c).expect("WATCH");
    restore(&mut other, "w", 0, &payload);
    let _: () = redis::cmd("MULTI").query(&mut c).expect("MULTI");
    let _: () = redis::cmd("GET").arg("x").query(&mut c).expect("GET");
    let exec: Option<Vec<redis::Value>> = redis::cmd("EXEC").query(&mut c).expect("EXEC");
    assert_eq!(exec, None);
    // The restore event.
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("notify-keyspace-events")
        .arg("KEA")
        .query(&mut c)
        .expect("CONFIG SET");
    let mut sub = connect(&addr);
    let mut ps = sub.as_pubsub();
    ps.subscribe("__keyevent@0__:restore").expect("SUBSCRIBE");
    restore(&mut c, "n", 0, &payload);
    let msg = ps.get_message().expect("message");
    assert_eq!(msg.get_payload::<String>().expect("payload"), "n");
    // Over maxmemory (noeviction) RESTORE is refused; DUMP still answers.
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(1)
        .query(&mut c)
        .expect("CONFIG SET");
    let r: redis::RedisResult<String> = redis::cmd("RESTORE")
        .arg("o")
        .arg(0)
        .arg(&payload)
        .query(&mut c);
    let e = r.expect_err("OOM");
    assert_eq!(e.code(), Some("OOM"), "{e}");
    assert!(
        e.to_string()
            .contains("command not allowed when used memory > 'maxmemory'."),
        "{e}"
    );
    assert!(!dump(&mut c, "n").is_empty());
}

#[test]
fn restore_and_dump_use_the_selected_database() {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let mut c = connect(&addr);
    let select = |c: &mut redis::Connection, db: i64| {
        let () = redis::cmd("SELECT").arg(db).query(c).expect("SELECT");
    };
    select(&mut c, 3);
    restore(&mut c, "k", 0, &unhex(ZSET_LISTPACK));
    let payload = dump(&mut c, "k");
    select(&mut c, 0);
    let none: Option<Vec<u8>> = redis::cmd("DUMP").arg("k").query(&mut c).expect("DUMP");
    assert_eq!(none, None);
    restore(&mut c, "k", 0, &payload);
    select(&mut c, 3);
    let z = content(&mut c, "k");
    select(&mut c, 0);
    assert_eq!(content(&mut c, "k"), z);
}

#[test]
fn restore_idletime_sets_when_the_key_was_last_used() {
    let (_server, addr) = common::kvs_serve(&["--port", "0"]);
    let mut c = common::connect(&addr);
    common::cmd(&mut c, &["SET", "src", "v"]);
    let payload = dump(&mut c, "src");
    let mut r = redis::cmd("RESTORE");
    r.arg("old")
        .arg(0)
        .arg(&payload[..])
        .arg("IDLETIME")
        .arg(1000);
    r.query::<()>(&mut c).unwrap();
    let idle: i64 = redis::cmd("OBJECT")
        .arg("IDLETIME")
        .arg("old")
        .query(&mut c)
        .unwrap();
    assert!((1000..=1001).contains(&idle), "{idle}");
    // Reading it makes it used now.
    common::cmd(&mut c, &["GET", "old"]);
    let idle: i64 = redis::cmd("OBJECT")
        .arg("IDLETIME")
        .arg("old")
        .query(&mut c)
        .unwrap();
    assert_eq!(idle, 0);
}
