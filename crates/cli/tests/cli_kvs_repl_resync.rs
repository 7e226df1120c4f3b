//! Replication beyond the first sync, through the real binaries: WAIT and
//! min-replicas-to-write, partial resync (`+CONTINUE`) after a dropped link and after a
//! promotion, chained replicas, expiry that follows the primary's DEL, and client
//! types (a replica's connection is not a `normal` client), and a replica killed with
//! -9 under load that comes back from its log and resumes without a full sync.

mod common;

use std::time::{Duration, Instant};

use common::{bulk, cmd, connect, durable_args, fresh_log, kvs_serve, try_cmd, until, Killed};
use redis::{Connection, Value};

fn field(c: &mut Connection, section: &str, name: &str) -> String {
    let info: String = redis::cmd("INFO").arg(section).query(c).unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")).map(str::to_string))
        .unwrap_or_else(|| panic!("INFO {section} has no {name}: {info}"))
}

fn port_of(addr: &str) -> &str {
    addr.rsplit_once(':').map_or(addr, |(_, p)| p)
}

/// Waits until the replica's link is up and its offset is the primary's.
fn synced(p: &mut Connection, r: &mut Connection) {
    let start = Instant::now();
    loop {
        let link = field(r, "replication", "master_link_status");
        let want = field(p, "replication", "master_repl_offset");
        let have = field(r, "replication", "slave_repl_offset");
        if link == "up" && want == have {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "replica not in sync: link {link}, primary at {want}, replica at {have}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A replica of `primary` (host:port), and a connection to it, synced.
fn replica_of(primary: &str, p: &mut Connection) -> (Killed, String, Connection) {
    let (k, addr) = kvs_serve(&["--port", "0", "--replicaof", "127.0.0.1", port_of(primary)]);
    let mut r = connect(&addr);
    synced(p, &mut r);
    (k, addr, r)
}

fn int(v: Value) -> i64 {
    match v {
        Value::Int(n) => n,
        v => panic!("not an integer: {v:?}"),
    }
}

#[test]
fn wait_counts_the_replicas_that_acknowledged_and_min_replicas_refuses_writes() {
    let (_p, paddr) = kvs_serve(&["--port", "0", "--threads", "2"]);
    let mut p = connect(&paddr);
    let (_r1, _, mut r1) = replica_of(&paddr, &mut p);
    let (r2k, _, _r2) = replica_of(&paddr, &mut p);
    for i in 0..200 {
        cmd(&mut p, &["SET", &format!("k{i}"), "v"]);
    }
    let start = Instant::now();
    assert_eq!(int(cmd(&mut p, &["WAIT", "2", "5000"])), 2);
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(cmd(&mut r1, &["GET", "k199"]), bulk("v"));
    // Nothing to wait for: the count at once.
    assert_eq!(int(cmd(&mut p, &["WAIT", "0", "0"])), 2);
    // One replica gone: WAIT 2 times out with 1.
    drop(r2k);
    until(10, "replica 2 detached", || {
        field(&mut p, "replication", "connected_slaves") == "1"
    });
    cmd(&mut p, &["SET", "after", "1"]);
    let start = Instant::now();
    assert_eq!(int(cmd(&mut p, &["WAIT", "2", "300"])), 1);
    assert!(
        start.elapsed() >= Duration::from_millis(290),
        "{:?}",
        start.elapsed()
    );
    // In a transaction, WAIT answers at once.
    let tx: Vec<Value> = redis::pipe()
        .atomic()
        .cmd("SET")
        .arg("t")
        .arg(1)
        .cmd("WAIT")
        .arg(5)
        .arg(0)
        .query(&mut p)
        .unwrap();
    assert!(matches!(tx[1], Value::Int(0..=1)), "{tx:?}");
    // A replica refuses WAIT.
    let e = try_cmd(&mut r1, &["WAIT", "1", "10"]).unwrap_err();
    assert!(e.to_string().contains("replica"), "{e}");
    // min-replicas-to-write: 2 wanted, 1 connected.
    cmd(&mut p, &["CONFIG", "SET", "min-replicas-to-write", "2"]);
    let e = try_cmd(&mut p, &["SET", "x", "1"]).unwrap_err();
    assert!(
        e.to_string().contains("Not enough good replicas to write"),
        "{e}"
    );
    assert_eq!(cmd(&mut p, &["GET", "after"]), bulk("1"), "reads go on");
    cmd(&mut p, &["CONFIG", "SET", "min-replicas-to-write", "1"]);
    assert_eq!(cmd(&mut p, &["SET", "x", "1"]), Value::Okay);
    assert_eq!(
        cmd(&mut p, &["CONFIG", "GET", "min-replicas-to-write"]),
        Value::Array(vec![bulk("min-replicas-to-write"), bulk("1")])
    );
}

#[test]
fn a_dropped_link_resumes_with_a_partial_resync() {
    let (_p, paddr) = kvs_serve(&["--port", "0"]);
    let mut p = connect(&paddr);
    for i in 0..1000 {
        cmd(&mut p, &["RPUSH", "list", &i.to_string()]);
    }
    let (_r, _, mut r) = replica_of(&paddr, &mut p);
    assert_eq!(field(&mut p, "stats", "sync_full"), "1");
    // A normal-client kill leaves the replica's connection alone.
    cmd(&mut p, &["CLIENT", "KILL", "TYPE", "normal"]);
    let list: String = redis::cmd("CLIENT")
        .arg("LIST")
        .arg("TYPE")
        .arg("replica")
        .query(&mut p)
        .unwrap();
    assert_eq!(list.lines().count(), 1, "{list}");
    assert!(list.contains("flags=S"), "{list}");
    // The link drops; writes go on meanwhile; the replica comes back where it was.
    assert_eq!(int(cmd(&mut p, &["CLIENT", "KILL", "TYPE", "replica"])), 1);
    for i in 0..500 {
        cmd(&mut p, &["LPOP", "list"]);
        cmd(&mut p, &["SET", &format!("n{i}"), "x"]);
    }
    synced(&mut p, &mut r);
    assert_eq!(field(&mut p, "stats", "sync_full"), "1");
    assert_eq!(field(&mut p, "stats", "sync_partial_ok"), "1");
    assert_eq!(
        cmd(&mut r, &["LRANGE", "list", "0", "0"]),
        Value::Array(vec![bulk("500")])
    );
    assert_eq!(int(cmd(&mut r, &["DBSIZE"])), 501);
    assert_eq!(int(cmd(&mut r, &["LLEN", "list"])), 500);
}

#[test]
fn a_promoted_replica_lets_the_other_continue_and_serves_a_chain() {
    let (_p, paddr) = kvs_serve(&["--port", "0"]);
    let mut p = connect(&paddr);
    let (_r1, a1, mut r1) = replica_of(&paddr, &mut p);
    let (_r2, _, mut r2) = replica_of(&paddr, &mut p);
    for i in 0..300 {
        cmd(&mut p, &["HSET", "h", &format!("f{i}"), &i.to_string()]);
    }
    synced(&mut p, &mut r1);
    synced(&mut p, &mut r2);
    let old_id = field(&mut p, "replication", "master_replid");
    // r1 becomes the primary; r2 follows it and resumes without a snapshot.
    cmd(&mut r1, &["REPLICAOF", "NO", "ONE"]);
    assert_eq!(field(&mut r1, "replication", "master_replid2"), old_id);
    assert_ne!(field(&mut r1, "replication", "master_replid"), old_id);
    cmd(&mut r2, &["REPLICAOF", "127.0.0.1", port_of(&a1)]);
    cmd(&mut r1, &["HSET", "h", "new", "1"]);
    synced(&mut r1, &mut r2);
    assert_eq!(field(&mut r1, "stats", "sync_partial_ok"), "1");
    assert_eq!(field(&mut r1, "stats", "sync_full"), "0");
    assert_eq!(cmd(&mut r2, &["HGET", "h", "new"]), bulk("1"));
    assert_eq!(int(cmd(&mut r2, &["HLEN", "h"])), 301);
    // A chain: r3 follows r2 (itself a replica of r1).
    let (_r3, a3) = kvs_serve(&["--port", "0"]);
    let mut r3 = connect(&a3);
    let r2addr = {
        let port = field(&mut r2, "server", "tcp_port");
        format!("127.0.0.1:{port}")
    };
    cmd(&mut r3, &["REPLICAOF", "127.0.0.1", port_of(&r2addr)]);
    cmd(&mut r1, &["SET", "through-the-chain", "yes"]);
    until(10, "the chain delivers", || {
        cmd(&mut r3, &["GET", "through-the-chain"]) == bulk("yes")
    });
    assert_eq!(int(cmd(&mut r3, &["HLEN", "h"])), 301);
}

#[test]
fn replicas_remove_expired_keys_when_the_primary_does() {
    let (_p, paddr) = kvs_serve(&["--port", "0"]);
    let mut p = connect(&paddr);
    let (_r, _, mut r) = replica_of(&paddr, &mut p);
    cmd(&mut p, &["SET", "soon", "v", "PX", "150"]);
    cmd(&mut p, &["SET", "later", "v", "EX", "1000"]);
    synced(&mut p, &mut r);
    std::thread::sleep(Duration::from_millis(300));
    // Past its deadline: a read on the replica misses, but the key stays until the
    // primary removes it.
    assert_eq!(cmd(&mut r, &["GET", "soon"]), Value::Nil);
    assert_eq!(int(cmd(&mut r, &["EXISTS", "soon"])), 0);
    // The primary's own sweep may already have removed it; a read there does if not.
    assert_eq!(cmd(&mut p, &["GET", "soon"]), Value::Nil);
    until(10, "the primary's DEL reaches the replica", || {
        int(cmd(&mut r, &["DBSIZE"])) == 1
    });
    assert_eq!(cmd(&mut r, &["GET", "later"]), bulk("v"));
}

#[test]
fn an_expired_key_the_replica_still_holds_is_dropped_only_by_the_primary() {
    // The primary's keys expire by its clock: with the sweep idle (the key just set)
    // and no read on the primary, the replica must keep the key it hides.
    let (_p, paddr) = kvs_serve(&["--port", "0"]);
    let mut p = connect(&paddr);
    let (_r, _, mut r) = replica_of(&paddr, &mut p);
    cmd(&mut p, &["SET", "k", "v", "PX", "100"]);
    synced(&mut p, &mut r);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(cmd(&mut r, &["GET", "k"]), Value::Nil);
    // Either the replica still holds it (the primary has not removed it yet) or the
    // primary did, and then its DEL went through the stream: the offsets say which.
    let held = int(cmd(&mut r, &["DBSIZE"]));
    let dels_sent = field(&mut p, "replication", "master_repl_offset")
        != field(&mut r, "replication", "slave_repl_offset")
        || int(cmd(&mut p, &["DBSIZE"])) == 0;
    assert!(
        held == 1 || dels_sent,
        "the replica removed a key on its own"
    );
}

/// Every key's type and content, sorted (lists in order, hashes by field).
fn contents(c: &mut Connection) -> Vec<(String, String)> {
    let mut keys: Vec<String> = redis::cmd("KEYS").arg("*").query(c).unwrap();
    keys.sort();
    keys.into_iter()
        .map(|k| {
            let kind: String = redis::cmd("TYPE").arg(&k).query(c).unwrap();
            let v = match kind.as_str() {
                "string" => redis::cmd("GET").arg(&k).query::<String>(c).unwrap(),
                "list" => redis::cmd("LRANGE")
                    .arg(&k)
                    .arg(0)
                    .arg(-1)
                    .query::<Vec<String>>(c)
                    .unwrap()
                    .join(","),
                "hash" => {
                    let mut kv: Vec<(String, String)> =
                        redis::cmd("HGETALL").arg(&k).query(c).unwrap();
                    kv.sort();
                    format!("{kv:?}")
                }
                other => panic!("type {other}"),
            };
            (k, v)
        })
        .collect()
}

#[test]
fn a_replica_killed_under_load_resumes_from_its_log_with_a_partial_resync() {
    let (_p, paddr) = kvs_serve(&["--port", "0", "--threads", "2"]);
    let mut p = connect(&paddr);
    // Room for what is written while the replica is away (a few MB a second here).
    cmd(&mut p, &["CONFIG", "SET", "repl-backlog-size", "256mb"]);
    for i in 0..2000 {
        cmd(&mut p, &["RPUSH", "list", &i.to_string()]);
    }
    let aof = fresh_log("kvs-replica-resume");
    let mut args: Vec<&str> = durable_args(&aof).to_vec();
    args.extend(["--replicaof", "127.0.0.1", port_of(&paddr)]);
    let (replica, raddr) = kvs_serve(&args);
    let mut r = connect(&raddr);
    synced(&mut p, &mut r);
    assert_eq!(field(&mut p, "stats", "sync_full"), "1");
    // Writes of every kind, relative ones (list pushes and pops) included, while the
    // replica is killed and comes back.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (paddr, stop) = (paddr.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut c = connect(&paddr);
            let mut i = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                redis::pipe()
                    .cmd("RPUSH")
                    .arg("list")
                    .arg(i)
                    .cmd("LPOP")
                    .arg("list")
                    .cmd("INCR")
                    .arg("n")
                    .cmd("HINCRBY")
                    .arg("h")
                    .arg(i % 10)
                    .arg(1)
                    .cmd("MULTI")
                    .cmd("LPUSH")
                    .arg("tx")
                    .arg(i)
                    .cmd("LTRIM")
                    .arg("tx")
                    .arg(0)
                    .arg(9)
                    .cmd("EXEC")
                    .query::<()>(&mut c)
                    .expect("write");
                i += 1;
            }
            i
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    drop(replica);
    std::thread::sleep(Duration::from_millis(300));
    let (_replica, raddr, said) = common::kvs_serve_start(&args);
    assert!(
        said.iter().any(|l| l.contains("the log ends at offset")),
        "{said:?}"
    );
    let mut r = connect(&raddr);
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let rounds = writer.join().expect("writer");
    assert!(rounds > 50, "{rounds}");
    synced(&mut p, &mut r);
    assert_eq!(
        field(&mut p, "stats", "sync_full"),
        "1",
        "no second full sync"
    );
    assert_eq!(field(&mut p, "stats", "sync_partial_ok"), "1");
    let (got, want) = (contents(&mut r), contents(&mut p));
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, w);
    }
}

#[test]
fn a_replica_without_its_primary_says_the_link_is_down_and_connects_once_it_is_up() {
    let port = common::free_port().to_string();
    let (_r, raddr) = kvs_serve(&["--port", "0", "--replicaof", "127.0.0.1", &port]);
    let mut r = connect(&raddr);
    std::thread::sleep(Duration::from_millis(1200));
    assert_eq!(field(&mut r, "replication", "master_link_status"), "down");
    let since: i64 = field(&mut r, "replication", "master_link_down_since_seconds")
        .parse()
        .unwrap();
    assert!((0..=5).contains(&since), "{since}");
    let e = try_cmd(&mut r, &["SET", "k", "v"]).unwrap_err();
    assert!(e.to_string().contains("read only replica"), "{e}");
    // The primary appears on that port: the replica connects and syncs.
    let (_p, paddr) = kvs_serve(&["--port", &port]);
    let mut p = connect(&paddr);
    cmd(&mut p, &["SET", "k", "v"]);
    synced(&mut p, &mut r);
    assert_eq!(cmd(&mut r, &["GET", "k"]), bulk("v"));
    assert!(
        !redis::cmd("INFO")
            .arg("replication")
            .query::<String>(&mut r)
            .unwrap()
            .contains("master_link_down_since_seconds"),
        "only while down"
    );
}

/// Reads one RESP array of bulk strings (a command) from a raw connection.
fn read_command(r: &mut std::io::BufReader<std::net::TcpStream>) -> Vec<String> {
    use std::io::{BufRead, Read};
    let mut line = String::new();
    r.read_line(&mut line).expect("read");
    let n: usize = line.trim().trim_start_matches('*').parse().expect("array");
    (0..n)
        .map(|_| {
            line.clear();
            r.read_line(&mut line).expect("read");
            let len: usize = line.trim().trim_start_matches('$').parse().expect("bulk");
            let mut b = vec![0u8; len + 2];
            r.read_exact(&mut b).expect("read");
            String::from_utf8_lossy(&b[..len]).into_owned()
        })
        .collect()
}

/// Answers a replica's handshake up to its PSYNC; returns the PSYNC's arguments.
fn handshake(r: &mut std::io::BufReader<std::net::TcpStream>) -> Vec<String> {
    use std::io::Write;
    loop {
        let c = read_command(r);
        if c[0].eq_ignore_ascii_case("psync") {
            return c;
        }
        let reply: &[u8] = if c[0].eq_ignore_ascii_case("ping") {
            b"+PONG\r\n"
        } else {
            b"+OK\r\n"
        };
        r.get_mut().write_all(reply).expect("write");
    }
}

/// A replica that meets a record whose checksum does not match asks for a full sync
/// next time (resuming from the same place would meet the same bytes), and says so;
/// after a link that merely dropped it resumes.
#[test]
fn a_damaged_record_makes_the_replica_ask_for_a_full_sync() {
    use std::io::{BufRead, BufReader, Read, Write};
    // A real snapshot, taken from a real server as a replica would.
    let (_real, real_addr) = kvs_serve(&["--port", "0"]);
    let mut c = connect(&real_addr);
    cmd(&mut c, &["SET", "k", "v"]);
    let mut src = BufReader::new(std::net::TcpStream::connect(&real_addr).unwrap());
    src.get_mut()
        .write_all(b"*3\r\n$8\r\nREPLCONF\r\n$4\r\ncapa\r\n$9\r\nwirespeed\r\n")
        .unwrap();
    let mut ok = String::new();
    src.read_line(&mut ok).unwrap();
    assert_eq!(ok, "+OK\r\n");
    src.get_mut()
        .write_all(b"*3\r\n$5\r\nPSYNC\r\n$1\r\n?\r\n$2\r\n-1\r\n")
        .unwrap();
    let mut full = String::new();
    src.read_line(&mut full).unwrap();
    let mut form = String::new();
    src.read_line(&mut form).unwrap();
    assert_eq!(form, "$STREAM\r\n", "a primary streams its snapshot");
    // The header, then framed records up to the end frame (a length past any record's).
    let mut snapshot = vec![0u8; 16];
    src.read_exact(&mut snapshot).unwrap();
    loop {
        let mut frame = [0u8; 8];
        src.read_exact(&mut frame).unwrap();
        snapshot.extend_from_slice(&frame);
        let len = u32::from_le_bytes([frame[0], frame[1], frame[2], frame[3]]);
        if len == u32::MAX {
            break;
        }
        let mut payload = vec![0u8; len as usize];
        src.read_exact(&mut payload).unwrap();
        snapshot.extend_from_slice(&payload);
    }
    let offset: u64 = full.split_whitespace().nth(2).unwrap().parse().unwrap();
    let replid = full.split_whitespace().nth(1).unwrap().to_string();

    // A primary played by the test.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let log = common::temp("repl-corrupt", "replica.log");
    let (_replica, raddr, _) = common::kvs_serve_teed(&["--port", "0"], Some(&log));
    let mut r = connect(&raddr);
    cmd(&mut r, &["REPLICAOF", "127.0.0.1", &port.to_string()]);

    // First link: a full sync, then the link drops.
    let (s, _) = listener.accept().unwrap();
    let mut link = BufReader::new(s);
    assert_eq!(handshake(&mut link)[1..], ["?", "-1"]);
    let mut out = format!("+FULLRESYNC {replid} {offset}\r\n$STREAM\r\n").into_bytes();
    out.extend_from_slice(&snapshot);
    link.get_mut().write_all(&out).unwrap();
    until(10, "the snapshot loaded", || {
        try_cmd(&mut r, &["GET", "k"]).ok() == Some(bulk("v"))
    });
    drop(link);

    // Second link: it resumes where the snapshot left it; then a damaged record.
    let (s, _) = listener.accept().unwrap();
    let mut link = BufReader::new(s);
    let next = (offset + 1).to_string();
    assert_eq!(handshake(&mut link)[1..], [replid.clone(), next.clone()]);
    let mut out = format!("+CONTINUE {replid}\r\n").into_bytes();
    // A frame of 4 payload bytes whose checksum is wrong.
    out.extend_from_slice(&4u32.to_le_bytes());
    out.extend_from_slice(&0xdead_beefu32.to_le_bytes());
    out.extend_from_slice(b"junk");
    link.get_mut().write_all(&out).unwrap();

    // Third link: a full sync is asked for.
    let (s, _) = listener.accept().unwrap();
    let mut link = BufReader::new(s);
    assert_eq!(handshake(&mut link)[1..], ["?", "-1"]);
    let said = std::fs::read_to_string(&log).unwrap();
    assert!(
        said.contains("a record whose checksum does not match")
            && said.contains("asking for a full sync"),
        "{said}"
    );
}
