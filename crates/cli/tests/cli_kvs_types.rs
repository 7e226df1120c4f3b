//! Hashes, sets and lists through the real binary: they survive `kill -9` (the log replays
//! their commands) and a log rewrite (the snapshot writes them as commands), their
//! memory is counted (INFO used_memory grows with them and falls back when they go),
//! and `maxmemory` refuses writes that would grow them.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::{connect, info_num, kvs_serve, temp};

fn fill(c: &mut redis::Connection) {
    for i in 0..300 {
        let _: () = redis::cmd("HSET")
            .arg("user:1")
            .arg(format!("field{i}"))
            .arg(format!("value{i}"))
            .query(c)
            .unwrap();
        let _: () = redis::cmd("SADD")
            .arg("tags")
            .arg(format!("tag{i}"))
            .query(c)
            .unwrap();
    }
    let _: () = redis::cmd("HDEL")
        .arg("user:1")
        .arg("field7")
        .query(c)
        .unwrap();
    let _: () = redis::cmd("SREM").arg("tags").arg("tag8").query(c).unwrap();
    let _: () = redis::cmd("HINCRBY")
        .arg("user:1")
        .arg("n")
        .arg(41)
        .query(c)
        .unwrap();
    let _: () = redis::cmd("SADD").arg("gone").arg("x").query(c).unwrap();
    let _: () = redis::cmd("SPOP").arg("gone").query(c).unwrap();
    let _: () = redis::cmd("EXPIRE").arg("tags").arg(1000).query(c).unwrap();
    let _: () = redis::cmd("SUNIONSTORE")
        .arg("copy")
        .arg("tags")
        .query(c)
        .unwrap();
    let run = |c: &mut redis::Connection, args: &[&str]| {
        let mut cmd = redis::cmd(args[0]);
        args[1..].iter().for_each(|a| {
            cmd.arg(*a);
        });
        let _: redis::Value = cmd.query(c).unwrap();
    };
    for i in 0..50 {
        run(c, &["RPUSH", "queue", &i.to_string()]);
    }
    run(c, &["LPOP", "queue", "3"]);
    run(c, &["LMOVE", "queue", "done", "RIGHT", "LEFT"]);
    run(c, &["LSET", "queue", "0", "first"]);
    run(c, &["LINSERT", "queue", "AFTER", "10", "x"]);
    run(c, &["LREM", "queue", "0", "20"]);
    run(c, &["LTRIM", "queue", "1", "-2"]);
    for i in 0..40 {
        run(
            c,
            &["ZADD", "board", &format!("{}.1", i * 3), &format!("p{i}")],
        );
    }
    run(c, &["ZINCRBY", "board", "0.30000000000000004", "p1"]);
    run(c, &["ZPOPMIN", "board", "2"]);
    run(c, &["ZREMRANGEBYSCORE", "board", "(60", "+inf"]);
    run(c, &["ZUNIONSTORE", "top", "1", "board", "WEIGHTS", "2"]);
}

/// Members with their scores as replied.
type Scored = Vec<(String, String)>;

fn scores(c: &mut redis::Connection) -> (Scored, Scored) {
    let b: Scored = redis::cmd("ZRANGE")
        .arg("board")
        .arg(0)
        .arg(-1)
        .arg("WITHSCORES")
        .query(c)
        .unwrap();
    let t: Scored = redis::cmd("ZRANGE")
        .arg("top")
        .arg(0)
        .arg(-1)
        .arg("WITHSCORES")
        .query(c)
        .unwrap();
    (b, t)
}

fn lists(c: &mut redis::Connection) -> (Vec<String>, Vec<String>) {
    let q: Vec<String> = redis::cmd("LRANGE")
        .arg("queue")
        .arg(0)
        .arg(-1)
        .query(c)
        .unwrap();
    let d: Vec<String> = redis::cmd("LRANGE")
        .arg("done")
        .arg(0)
        .arg(-1)
        .query(c)
        .unwrap();
    (q, d)
}

fn snapshot(
    c: &mut redis::Connection,
) -> (
    BTreeMap<String, String>,
    BTreeSet<String>,
    BTreeSet<String>,
    i64,
    bool,
) {
    let h: BTreeMap<String, String> = redis::cmd("HGETALL").arg("user:1").query(c).unwrap();
    let s: BTreeSet<String> = redis::cmd("SMEMBERS").arg("tags").query(c).unwrap();
    let copy: BTreeSet<String> = redis::cmd("SMEMBERS").arg("copy").query(c).unwrap();
    let ttl: i64 = redis::cmd("TTL").arg("tags").query(c).unwrap();
    let gone: bool = redis::cmd("EXISTS").arg("gone").query(c).unwrap();
    (h, s, copy, ttl, gone)
}

#[test]
fn hashes_and_sets_survive_kill_9_and_a_rewrite() {
    let aof = temp("kvs-types", "types.aof");
    let _ = std::fs::remove_file(&aof);
    let path = aof.to_string_lossy().to_string();
    let args = ["--port", "0", "--aof", &path, "--appendfsync", "always"];
    let before = {
        let (_server, addr) = kvs_serve(&args);
        let mut c = connect(&addr);
        fill(&mut c);
        (snapshot(&mut c), lists(&mut c))
    };
    let (before, lists_before) = before;
    let zsets_before = {
        let (_server, addr) = kvs_serve(&args);
        scores(&mut connect(&addr))
    };
    // 40 added, 2 popped, those above 60 removed: 18 left (p2..p19).
    assert_eq!(zsets_before.0.len(), 18, "{:?}", zsets_before.0);
    assert_eq!(
        zsets_before.0[0],
        ("p2".to_string(), "6.0999999999999996".to_string())
    );
    assert_eq!(zsets_before.1.len(), 18);
    assert_eq!(lists_before.1, ["49"]);
    assert_eq!(lists_before.0.len(), 44, "{:?}", lists_before.0);
    assert_eq!(lists_before.0.first().map(String::as_str), Some("4"));
    assert_eq!(before.0.len(), 300, "299 fields left and n");
    assert_eq!(before.0.get("n").map(String::as_str), Some("41"));
    assert_eq!(before.1.len(), 299);
    assert_eq!(before.1, before.2);
    assert!(!before.4);
    // Killed: replay of the log.
    let (server, addr) = kvs_serve(&args);
    let mut c = connect(&addr);
    let after = snapshot(&mut c);
    assert_eq!(
        (&after.0, &after.1, &after.2, after.4),
        (&before.0, &before.1, &before.2, before.4)
    );
    assert!(
        after.3 > 900 && after.3 <= 1000,
        "the deadline survives: {}",
        after.3
    );
    // Rewrite, then kill again: the snapshot holds the collections.
    // The rewrite ends by renaming its file over the log: a new inode.
    use std::os::unix::fs::MetadataExt;
    let inode = std::fs::metadata(&aof).unwrap().ino();
    let _: String = redis::cmd("BGREWRITEAOF").query(&mut c).unwrap();
    for _ in 0..200 {
        // Requests keep the event loop turning (a rewrite goes a step per round).
        let _: String = redis::cmd("PING").query(&mut c).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        if std::fs::metadata(&aof).unwrap().ino() != inode {
            break;
        }
    }
    assert_ne!(
        std::fs::metadata(&aof).unwrap().ino(),
        inode,
        "the log was rewritten"
    );
    drop(server);
    let (_server, addr) = kvs_serve(&args);
    let mut c = connect(&addr);
    let again = snapshot(&mut c);
    assert_eq!(
        (&again.0, &again.1, &again.2, again.4),
        (&before.0, &before.1, &before.2, before.4)
    );
    assert!(again.3 > 900);
    assert_eq!(lists(&mut c), lists_before);
    assert_eq!(scores(&mut c), zsets_before);
}

#[test]
fn collections_count_against_maxmemory() {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let mut c = connect(&addr);
    let base = info_num(&mut c, "memory", "used_memory");
    let value = "v".repeat(1000);
    for i in 0..2000 {
        let _: () = redis::cmd("HSET")
            .arg("big")
            .arg(i)
            .arg(&value)
            .query(&mut c)
            .unwrap();
    }
    let grown = info_num(&mut c, "memory", "used_memory");
    assert!(grown >= base + 2000 * 1000, "{base} -> {grown}");
    let _: () = redis::cmd("DEL").arg("big").query(&mut c).unwrap();
    let back = info_num(&mut c, "memory", "used_memory");
    assert!(back < base + 100_000, "{base} -> {grown} -> {back}");
    // With noeviction, a write that may grow a collection is refused over the limit.
    let limit = back + 500_000;
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(limit)
        .query(&mut c)
        .unwrap();
    let mut refused = None;
    for i in 0..2000 {
        if let Err(e) = redis::cmd("SADD")
            .arg("s")
            .arg(format!("{i}{value}"))
            .query::<i64>(&mut c)
        {
            refused = Some(e.to_string());
            break;
        }
    }
    let e = refused.expect("SADD refused over maxmemory");
    assert!(e.contains("OOM"), "{e}");
    // Reads and shrinking writes still run.
    let n: i64 = redis::cmd("SCARD").arg("s").query(&mut c).unwrap();
    assert!(n > 0);
    let _: i64 = redis::cmd("SREM")
        .arg("s")
        .arg(format!("0{value}"))
        .query(&mut c)
        .unwrap();
}
