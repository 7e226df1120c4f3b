//! Replication through the real binaries: a primary and two replicas (two event loops
//! each), 10,000 mixed writes from four clients over several databases, and every
//! replica's keyspace equal to the primary's (each key's value and whether it has a
//! deadline); replicas refuse writes; ROLE and INFO replication as Redis shapes them;
//! REPLICAOF NO ONE promotes; a replica with a log keeps its data across `kill -9`;
//! a Redis primary is refused without touching the replica's data.

mod common;

use std::time::{Duration, Instant};

use common::{bulk, cmd, connect, durable_args, fresh_log, kvs_serve, redis_server, try_cmd};
use redis::{Connection, Value};

/// Every key of databases 0..8 with its value in a canonical form (members sorted:
/// hash and set order differ between servers) and whether it expires, sorted.
fn keyspace(c: &mut Connection) -> Vec<(usize, String, String, bool)> {
    let mut out = Vec::new();
    for db in 0..8 {
        cmd(c, &["SELECT", &db.to_string()]);
        let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(c).unwrap();
        for k in keys {
            let kind: String = redis::cmd("TYPE").arg(&k).query(c).unwrap();
            let mut items: Vec<String> = match kind.as_str() {
                "string" => vec![redis::cmd("GET").arg(&k).query(c).unwrap()],
                "list" => redis::cmd("LRANGE")
                    .arg(&k)
                    .arg(0)
                    .arg(-1)
                    .query(c)
                    .unwrap(),
                "hash" => redis::cmd("HGETALL")
                    .arg(&k)
                    .query::<Vec<String>>(c)
                    .unwrap()
                    .chunks(2)
                    .map(|p| p.join("="))
                    .collect(),
                "set" => redis::cmd("SMEMBERS").arg(&k).query(c).unwrap(),
                "zset" => redis::cmd("ZRANGE")
                    .arg(&k)
                    .arg(0)
                    .arg(-1)
                    .arg("WITHSCORES")
                    .query(c)
                    .unwrap(),
                other => panic!("type {other}"),
            };
            if matches!(kind.as_str(), "hash" | "set") {
                items.sort();
            }
            let ttl: i64 = redis::cmd("PTTL").arg(&k).query(c).unwrap();
            out.push((db, k, format!("{kind} {}", items.join(",")), ttl > 0));
        }
    }
    cmd(c, &["SELECT", "0"]);
    out.sort();
    out
}

/// The entries of `got` and `want` that differ (a short report).
fn differ(got: &[(usize, String, String, bool)], want: &[(usize, String, String, bool)]) -> String {
    let only_got: Vec<_> = got.iter().filter(|x| !want.contains(x)).take(5).collect();
    let only_want: Vec<_> = want.iter().filter(|x| !got.contains(x)).take(5).collect();
    format!(
        "{} keys against {}; only on the replica: {only_got:?}; only on the primary: {only_want:?}",
        got.len(),
        want.len()
    )
}

fn info_field(c: &mut Connection, field: &str) -> Option<String> {
    let info: String = redis::cmd("INFO").arg("replication").query(c).unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")).map(str::to_string))
}

/// Waits until the replica's offset reaches the primary's (10 s at most).
fn wait_synced(primary: &mut Connection, replica: &mut Connection) {
    let start = Instant::now();
    loop {
        let want = info_field(primary, "master_repl_offset");
        let have = info_field(replica, "slave_repl_offset");
        let up = info_field(replica, "master_link_status");
        if up.as_deref() == Some("up") && want.is_some() && want == have {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "replica not in sync: primary {want:?}, replica {have:?}, link {up:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn port_of(addr: &str) -> &str {
    addr.rsplit_once(':').map_or(addr, |(_, p)| p)
}

/// 2,500 writes of every kind from client `n`, over databases 0..8.
fn writes(addr: &str, n: usize) {
    let mut c = connect(addr);
    for i in 0..2_500usize {
        let db = (i + n) % 8;
        let k = format!("k{}", i % 97);
        let mut p = redis::pipe();
        p.cmd("SELECT").arg(db).ignore();
        match i % 10 {
            0 => p.cmd("SET").arg(&k).arg(i).arg("EX").arg(1000).ignore(),
            1 => p.cmd("INCR").arg(format!("n{n}")).ignore(),
            2 => p.cmd("RPUSH").arg("list").arg(i).ignore(),
            3 => p.cmd("LPOP").arg("list").ignore(),
            4 => p.cmd("HSET").arg("h").arg(&k).arg(i).ignore(),
            5 => p.cmd("SADD").arg("s").arg(i % 50).ignore(),
            6 => p.cmd("SREM").arg("s").arg(i % 7).ignore(),
            7 => p.cmd("ZADD").arg("z").arg(i).arg(&k).ignore(),
            8 => p.cmd("DEL").arg(&k).ignore(),
            _ => p
                .cmd("MULTI")
                .ignore()
                .cmd("LPUSH")
                .arg("tx")
                .arg(i)
                .ignore()
                .cmd("EXPIRE")
                .arg("tx")
                .arg(5000)
                .ignore()
                .cmd("EXEC")
                .ignore(),
        };
        p.query::<()>(&mut c)
            .unwrap_or_else(|e| panic!("client {n}, write {i}: {e}"));
    }
}

#[test]
fn two_replicas_follow_a_primary_through_10000_writes() {
    let (_primary, paddr) = kvs_serve(&["--port", "0", "--threads", "2"]);
    let mut p = connect(&paddr);
    // Before the replicas come: this goes through the snapshot.
    cmd(&mut p, &["SET", "before", "1"]);
    cmd(&mut p, &["SELECT", "3"]);
    cmd(&mut p, &["RPUSH", "old-list", "a", "b", "c"]);
    cmd(&mut p, &["SELECT", "0"]);
    // A replica runs a function that declares `no-writes`, and refuses one that does
    // not (Redis's READONLY), as Redis does.
    let lib = "#!lua name=lib\nredis.register_function{function_name='f', callback=function() return 'lib' end, flags={'no-writes'}}\nredis.register_function('w', function() return 'w' end)";
    cmd(&mut p, &["FUNCTION", "LOAD", lib]);
    let port = port_of(&paddr).to_string();
    let (_r1, a1) = kvs_serve(&["--port", "0", "--threads", "2"]);
    let (_r2, a2) = kvs_serve(&[
        "--port",
        "0",
        "--threads",
        "2",
        "--replicaof",
        "127.0.0.1",
        &port,
    ]);
    let mut r1 = connect(&a1);
    let mut r2 = connect(&a2);
    assert_eq!(
        cmd(&mut r1, &["REPLICAOF", "127.0.0.1", &port]),
        Value::Okay
    );
    wait_synced(&mut p, &mut r1);
    wait_synced(&mut p, &mut r2);
    assert_eq!(cmd(&mut r1, &["FCALL", "f", "0"]), bulk("lib"));
    let e = try_cmd(&mut r1, &["FCALL", "w", "0"]).unwrap_err();
    assert!(e.to_string().contains("read only replica"), "{e}");
    let clients: Vec<_> = (0..4)
        .map(|n| {
            let paddr = paddr.clone();
            std::thread::spawn(move || writes(&paddr, n))
        })
        .collect();
    for c in clients {
        c.join().expect("writer");
    }
    cmd(&mut p, &["SWAPDB", "1", "6"]);
    cmd(&mut p, &["SELECT", "2"]);
    cmd(&mut p, &["FLUSHDB"]);
    cmd(&mut p, &["SELECT", "0"]);
    // Records longer than a read (the replica reads 64 KiB at a time): 3 MB and 200 KB
    // values, with small writes around them.
    let big = "b".repeat(3 << 20);
    let mid = "m".repeat(200 << 10);
    cmd(&mut p, &["SET", "big", &big]);
    cmd(&mut p, &["SET", "after-big", "1"]);
    cmd(&mut p, &["MSET", "mid", &mid, "after-mid", "2"]);
    wait_synced(&mut p, &mut r1);
    wait_synced(&mut p, &mut r2);
    // A write longer than the backlog (1 MiB) kept both replicas: no sync again.
    let stats: String = redis::cmd("INFO").arg("stats").query(&mut p).unwrap();
    assert!(stats.contains("sync_full:2\r\n"), "{stats}");
    let want = keyspace(&mut p);
    assert!(want.len() > 100, "{}", want.len());
    let got = keyspace(&mut r1);
    assert!(got == want, "replica 1: {}", differ(&got, &want));
    let got = keyspace(&mut r2);
    assert!(got == want, "replica 2: {}", differ(&got, &want));
    // Replicas refuse writes, and say what they are.
    let e = try_cmd(&mut r1, &["SET", "x", "1"]).unwrap_err();
    assert!(e.to_string().contains("read only replica"), "{e}");
    let role = cmd(&mut r1, &["ROLE"]);
    let Value::Array(role) = role else {
        panic!("{role:?}")
    };
    assert_eq!(role[0], bulk("slave"));
    assert_eq!(role[3], bulk("connected"));
    let Value::Array(role) = cmd(&mut p, &["ROLE"]) else {
        panic!("ROLE")
    };
    assert_eq!(role[0], bulk("master"));
    assert!(
        matches!(&role[2], Value::Array(list) if list.len() == 2),
        "{role:?}"
    );
    assert_eq!(info_field(&mut p, "connected_slaves").as_deref(), Some("2"));
    // REPLICAOF NO ONE: the replica keeps its data and takes writes; the old
    // primary's later writes no longer reach it.
    assert_eq!(cmd(&mut r1, &["REPLICAOF", "NO", "ONE"]), Value::Okay);
    cmd(&mut r1, &["SET", "mine", "1"]);
    cmd(&mut p, &["SET", "after", "1"]);
    wait_synced(&mut p, &mut r2);
    assert_eq!(cmd(&mut r2, &["GET", "after"]), bulk("1"));
    assert_eq!(cmd(&mut r1, &["GET", "after"]), Value::Nil);
    assert_eq!(cmd(&mut r1, &["GET", "before"]), bulk("1"));
    assert_eq!(info_field(&mut r1, "role").as_deref(), Some("master"));
}

#[test]
fn config_get_replicaof_and_its_slaveof_alias_follow_the_role() {
    let (_primary, paddr) = kvs_serve(&["--port", "0"]);
    let port = port_of(&paddr).to_string();
    let (_replica, raddr) = kvs_serve(&["--port", "0", "--replicaof", "127.0.0.1", &port]);
    let mut p = connect(&paddr);
    let mut r = connect(&raddr);
    let get = |c: &mut Connection, args: &[&str]| -> Vec<(String, String)> {
        let mut all = vec!["GET"];
        all.extend_from_slice(args);
        let mut pairs: Vec<(String, String)> = redis::cmd("CONFIG")
            .arg(&all)
            .query::<std::collections::HashMap<String, String>>(c)
            .unwrap()
            .into_iter()
            .collect();
        pairs.sort();
        pairs
    };
    let pair = |n: &str, v: &str| (n.to_string(), v.to_string());
    let primary_of = format!("127.0.0.1 {port}");
    // As redis-server 7.0: an empty value on a primary, "host port" on a replica,
    // under either name, as asked.
    assert_eq!(get(&mut p, &["replicaof"]), [pair("replicaof", "")]);
    assert_eq!(get(&mut p, &["slaveof"]), [pair("slaveof", "")]);
    assert_eq!(
        get(&mut r, &["replicaof"]),
        [pair("replicaof", &primary_of)]
    );
    assert_eq!(get(&mut r, &["SLAVEOF"]), [pair("SLAVEOF", &primary_of)]);
    assert_eq!(
        get(&mut r, &["*of"]),
        [pair("replicaof", &primary_of), pair("slaveof", &primary_of)]
    );
    assert!(get(&mut p, &["replica*"]).contains(&pair("replicaof", "")));
    // Set only by REPLICAOF.
    for name in ["replicaof", "slaveof"] {
        let e = try_cmd(&mut p, &["CONFIG", "SET", name, "127.0.0.1 1"]).unwrap_err();
        assert!(
            e.to_string().contains(&format!(
                "possibly related to argument '{name}') - can't set immutable config"
            )),
            "{e}"
        );
    }
    // The other aliases set what they stand for.
    cmd(&mut p, &["CONFIG", "SET", "slave-priority", "7"]);
    assert_eq!(
        get(&mut p, &["replica-priority"]),
        [pair("replica-priority", "7")]
    );
    assert_eq!(
        get(&mut p, &["slave-priority"]),
        [pair("slave-priority", "7")]
    );
    // Promoted: empty again.
    cmd(&mut r, &["REPLICAOF", "NO", "ONE"]);
    assert_eq!(
        get(&mut r, &["slaveof", "replicaof"]),
        [pair("replicaof", ""), pair("slaveof", "")]
    );
}

#[test]
fn a_replica_with_a_log_keeps_its_data_across_kill_9_and_syncs_again() {
    let (_primary, paddr) = kvs_serve(&["--port", "0"]);
    let port = port_of(&paddr).to_string();
    let mut p = connect(&paddr);
    cmd(&mut p, &["SET", "a", "1"]);
    let aof = fresh_log("kvs-replica");
    let args = durable_args(&aof);
    {
        let (_replica, raddr) = kvs_serve(&args);
        let mut r = connect(&raddr);
        cmd(&mut r, &["REPLICAOF", "127.0.0.1", &port]);
        wait_synced(&mut p, &mut r);
        cmd(&mut p, &["RPUSH", "l", "x", "y"]);
        wait_synced(&mut p, &mut r);
    }
    // Back from its log alone (a primary now: it was not started with --replicaof).
    let (_replica, raddr) = kvs_serve(&args);
    let mut r = connect(&raddr);
    assert_eq!(cmd(&mut r, &["GET", "a"]), bulk("1"));
    assert_eq!(
        cmd(&mut r, &["LRANGE", "l", "0", "-1"]),
        Value::Array(vec![bulk("x"), bulk("y")])
    );
    cmd(&mut p, &["SET", "while-down", "1"]);
    cmd(&mut r, &["SET", "stale", "1"]);
    cmd(&mut r, &["REPLICAOF", "127.0.0.1", &port]);
    wait_synced(&mut p, &mut r);
    let (got, want) = (keyspace(&mut r), keyspace(&mut p));
    assert!(got == want, "{}", differ(&got, &want));
}

#[test]
fn a_redis_primary_is_refused_and_the_data_kept() {
    let Some((_redis, raddr)) = redis_server() else {
        return common::missing_client("redis-server");
    };
    let (_replica, addr) = kvs_serve(&["--port", "0"]);
    let mut r = connect(&addr);
    cmd(&mut r, &["SET", "mine", "1"]);
    cmd(&mut r, &["REPLICAOF", "127.0.0.1", port_of(&raddr)]);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(
        info_field(&mut r, "master_link_status").as_deref(),
        Some("down")
    );
    assert_eq!(cmd(&mut r, &["GET", "mine"]), bulk("1"));
    cmd(&mut r, &["REPLICAOF", "NO", "ONE"]);
}

/// Sends one RESP command on a raw connection.
fn send_raw(s: &mut std::net::TcpStream, args: &[&str]) {
    use std::io::Write;
    let mut out = format!("*{}\r\n", args.len());
    for a in args {
        out.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    s.write_all(out.as_bytes()).expect("write");
}

#[test]
fn wait_counts_no_replica_for_an_offset_past_the_stream() {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let mut c = connect(&addr);
    // A connection that attaches as a replica and then claims far more than was sent.
    // (A wirespeed replica: a Redis one's acknowledgements count RESP bytes and are
    // not counted.)
    let mut fake = std::net::TcpStream::connect(&addr).expect("connect");
    send_raw(&mut fake, &["REPLCONF", "capa", "wirespeed"]);
    send_raw(&mut fake, &["PSYNC", "?", "-1"]);
    common::until(5, "the replica attached", || {
        info_field(&mut c, "connected_slaves").as_deref() == Some("1")
    });
    cmd(&mut c, &["SET", "a", "1"]);
    send_raw(&mut fake, &["REPLCONF", "ACK", "4611686018427387904"]);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        cmd(&mut c, &["WAIT", "1", "300"]),
        Value::Int(0),
        "an ACK past the stream's end counted"
    );
    // The same connection acknowledging what it was really sent counts.
    let end = info_field(&mut c, "master_repl_offset").expect("offset");
    send_raw(&mut fake, &["REPLCONF", "ACK", &end]);
    assert_eq!(cmd(&mut c, &["WAIT", "1", "2000"]), Value::Int(1));
    // A plain client's ACK counts for nothing.
    let mut plain = std::net::TcpStream::connect(&addr).expect("connect");
    send_raw(&mut plain, &["REPLCONF", "ACK", &end]);
    drop(fake);
    common::until(5, "the replica detached", || {
        info_field(&mut c, "connected_slaves").as_deref() == Some("0")
    });
    cmd(&mut c, &["SET", "b", "2"]);
    assert_eq!(cmd(&mut c, &["WAIT", "1", "300"]), Value::Int(0));
}

/// Step `n` of the writer below: list pushes, pops and trims, sets, deletes and
/// expiries over 5,000 keys and their lists, in databases 0 and 1.
fn write_step(w: &mut Connection, n: u64) {
    let k = (n * 7919) % 5_000;
    let list = format!("list:{}", (k / 300) * 300);
    cmd(w, &["SELECT", &(n % 2).to_string()]);
    cmd(w, &["RPUSH", &list, &n.to_string()]);
    if n.is_multiple_of(5) {
        cmd(w, &["LPOP", &list]);
    }
    if n.is_multiple_of(11) {
        cmd(w, &["LTRIM", &list, "0", "6"]);
    }
    cmd(w, &["SET", &format!("key:{k}"), &format!("w{n}")]);
    if n.is_multiple_of(13) {
        cmd(w, &["DEL", &format!("key:{}", k + 1)]);
    }
    if n.is_multiple_of(17) {
        cmd(w, &["PEXPIRE", &format!("key:{}", k + 2), "10000000"]);
    }
}

/// The state of the keys the writer below touches, and the size of each database:
/// what must agree between a primary and its replica.
fn touched_state(c: &mut Connection) -> Vec<String> {
    let mut out = Vec::new();
    for db in 0..2 {
        cmd(c, &["SELECT", &db.to_string()]);
        out.push(format!("db{db} size {:?}", cmd(c, &["DBSIZE"])));
        let mut pipe = redis::pipe();
        for k in 0..5_003u32 {
            pipe.cmd("TYPE").arg(format!("key:{k}"));
            pipe.cmd("GET").arg(format!("key:{k}"));
            pipe.cmd("PTTL").arg(format!("key:{k}"));
        }
        for l in (0..5_000u32).step_by(300) {
            pipe.cmd("LRANGE").arg(format!("list:{l}")).arg(0).arg(-1);
        }
        let vals: Vec<Value> = pipe.query(c).unwrap_or_else(|e| panic!("{e}"));
        for v in vals {
            out.push(match v {
                // A deadline, not the time left: only whether there is one.
                Value::Int(n) => (n > 0).to_string(),
                v => format!("{v:?}"),
            });
        }
    }
    cmd(c, &["SELECT", "0"]);
    out
}

/// A full sync streams the snapshot while writes go on: list pushes, pops and trims
/// (steps that are not the same applied twice) to keys the snapshot has or has not
/// read yet, sets, deletes and expiries all end the same on the replica. The replica
/// is stopped (SIGSTOP) for 300 ms once its sync starts, so the snapshot waits behind
/// it (back-pressure) while the writes run.
#[test]
fn writes_during_a_streamed_full_sync_end_the_same_on_the_replica() {
    streamed_sync_under_writes("repl-streamed", false);
}

/// As above, with a SWAPDB while the snapshot waits: the syncing replica is closed
/// (a swap is not the same applied twice), syncs again, and ends the same.
#[test]
fn a_swapdb_during_a_streamed_full_sync_makes_the_replica_sync_again() {
    streamed_sync_under_writes("repl-streamed-swap", true);
}

fn streamed_sync_under_writes(group: &str, swap: bool) {
    let log = common::temp(group, "primary.log");
    let (_primary, paddr, _) =
        common::kvs_serve_teed(&["--port", "0", "--threads", "2"], Some(&log));
    let mut p = connect(&paddr);
    // 100,000 keys of 1 KB over two databases (a snapshot of about 100 MB), with lists.
    let value = "v".repeat(1000);
    for db in 0..2 {
        cmd(&mut p, &["SELECT", &db.to_string()]);
        for chunk in 0..25 {
            let mut pipe = redis::pipe();
            for i in 0..2000 {
                let n: u32 = chunk * 2000 + i;
                if n.is_multiple_of(300) {
                    pipe.cmd("RPUSH")
                        .arg(format!("list:{n}"))
                        .arg("a")
                        .arg("b")
                        .ignore();
                } else {
                    pipe.cmd("SET").arg(format!("key:{n}")).arg(&value).ignore();
                }
            }
            pipe.query::<()>(&mut p).unwrap();
        }
    }
    cmd(&mut p, &["SELECT", "0"]);
    // The writer runs from before the replica attaches until its sync has ended.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (stop, paddr) = (stop.clone(), paddr.clone());
        std::thread::spawn(move || {
            let mut w = connect(&paddr);
            let mut n = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                write_step(&mut w, n);
                n += 1;
            }
            n
        })
    };
    let (replica, raddr) = kvs_serve(&["--port", "0", "--replicaof", "127.0.0.1", port_of(&paddr)]);
    let pid = replica.0.id().to_string();
    let started = Instant::now();
    while !std::fs::read_to_string(&log).is_ok_and(|t| t.contains("streaming the snapshot")) {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no full sync started"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let signal = |sig: &str| {
        let ok = std::process::Command::new("kill")
            .args([sig, &pid])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "kill {sig} {pid}");
    };
    signal("-STOP");
    std::thread::sleep(Duration::from_millis(150));
    if swap {
        cmd(&mut p, &["SWAPDB", "0", "1"]);
    }
    std::thread::sleep(Duration::from_millis(150));
    signal("-CONT");
    common::until(60, "the full sync ended", || {
        std::fs::read_to_string(&log).is_ok_and(|t| t.contains("bytes of snapshot streamed"))
    });
    std::thread::sleep(Duration::from_millis(50));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(writer.join().unwrap() > 0);
    let mut r = connect(&raddr);
    common::until(60, "the replica in sync", || {
        let want = info_field(&mut p, "master_repl_offset");
        info_field(&mut r, "master_link_status").as_deref() == Some("up")
            && info_field(&mut r, "slave_repl_offset") == want
    });
    let (got, want) = (touched_state(&mut r), touched_state(&mut p));
    let first = got.iter().zip(&want).position(|(a, b)| a != b);
    assert!(
        got.len() == want.len() && first.is_none(),
        "the replica differs at {first:?}: {:?} against {:?}",
        first.map(|i| &got[i]),
        first.map(|i| &want[i])
    );
    let said = std::fs::read_to_string(&log).unwrap();
    if swap {
        assert!(said.contains("SWAPDB during its full sync"), "{said}");
        return;
    }
    // The writes did overlap the snapshot: stream waited behind it.
    let behind: u64 = said
        .lines()
        .find_map(|l| l.split("bytes of snapshot streamed, then ").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no streamed sync in the log: {said}"));
    assert!(behind > 0, "no write overlapped the snapshot: {said}");
}

/// A database the stream wrote, never selected by a client on the replica, counts as
/// in use there: a full sync from another primary empties it (it kept the old keys,
/// and the new snapshot's list was appended to the old one).
#[test]
fn a_full_sync_empties_the_databases_the_stream_wrote() {
    let (_p1, a1) = kvs_serve(&["--port", "0"]);
    let (_p2, a2) = kvs_serve(&["--port", "0"]);
    let (_r, ar) = kvs_serve(&["--port", "0"]);
    let (mut p1, mut p2, mut r) = (connect(&a1), connect(&a2), connect(&ar));
    for (c, items) in [(&mut p1, ["a", "b"]), (&mut p2, ["x", "y"])] {
        cmd(c, &["SELECT", "7"]);
        cmd(c, &["RPUSH", "list", items[0], items[1]]);
    }
    cmd(&mut p1, &["SET", "only-on-1", "1"]);
    cmd(&mut r, &["REPLICAOF", "127.0.0.1", port_of(&a1)]);
    wait_synced(&mut p1, &mut r);
    // More for the stream (after the snapshot) in database 5.
    cmd(&mut p1, &["SELECT", "5"]);
    cmd(&mut p1, &["SET", "streamed", "1"]);
    wait_synced(&mut p1, &mut r);
    cmd(&mut r, &["REPLICAOF", "127.0.0.1", port_of(&a2)]);
    wait_synced(&mut p2, &mut r);
    assert_eq!(keyspace(&mut r), keyspace(&mut p2));
}

/// `replica-serve-stale-data no`: while a replica's link is down, commands without
/// Redis's STALE flag get MASTERDOWN (INFO, REPLICAOF, CONFIG still run), EXEC of a
/// transaction queued before the link went down is discarded with it, and once the
/// server is a primary again everything runs.
#[test]
fn a_stale_replica_refuses_what_redis_refuses() {
    let (_s, addr) = kvs_serve(&["--port", "0"]);
    let mut c = connect(&addr);
    let mut other = connect(&addr);
    // (the redis crate spells the code MasterDown)
    let masterdown = |r: redis::RedisResult<redis::Value>| {
        r.unwrap_err()
            .to_string()
            .contains("Link with MASTER is down and replica-serve-stale-data is set to 'no'")
    };
    assert_eq!(
        cmd(&mut c, &["CONFIG", "SET", "replica-serve-stale-data", "no"]),
        redis::Value::Okay
    );
    cmd(&mut c, &["SET", "xx", "1"]);
    cmd(&mut c, &["MULTI"]);
    cmd(&mut c, &["GET", "xx"]);
    // A primary nobody answers for: the link never comes up.
    cmd(&mut other, &["REPLICAOF", "127.0.0.1", "1"]);
    let e = try_cmd(&mut c, &["EXEC"]).unwrap_err().to_string();
    assert!(
        e.contains("discarded") && e.contains("Link with MASTER is down"),
        "{e}"
    );
    assert!(masterdown(try_cmd(&mut c, &["GET", "xx"])));
    assert!(masterdown(try_cmd(&mut c, &["PING"])));
    assert!(matches!(
        cmd(&mut c, &["INFO", "replication"]),
        redis::Value::BulkString(_)
    ));
    // The default: stale data is served.
    cmd(&mut c, &["CONFIG", "SET", "slave-serve-stale-data", "yes"]);
    assert_eq!(
        cmd(&mut c, &["GET", "xx"]),
        redis::Value::BulkString(b"1".to_vec())
    );
    cmd(&mut c, &["CONFIG", "SET", "replica-serve-stale-data", "no"]);
    // Queued while stale: refused at once, and EXEC discards the transaction.
    cmd(&mut c, &["MULTI"]);
    assert!(masterdown(try_cmd(&mut c, &["GET", "xx"])));
    cmd(&mut other, &["REPLICAOF", "NO", "ONE"]);
    assert!(try_cmd(&mut c, &["EXEC"]).is_err());
    // A primary again: served.
    cmd(&mut c, &["MULTI"]);
    cmd(&mut c, &["GET", "xx"]);
    assert_eq!(
        cmd(&mut c, &["EXEC"]),
        redis::Value::Array(vec![redis::Value::BulkString(b"1".to_vec())])
    );
}
