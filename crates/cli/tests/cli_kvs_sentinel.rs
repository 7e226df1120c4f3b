//! Failover by Redis Sentinel (the real `redis-sentinel`): three wirespeed servers (a
//! primary and two replicas, each on its own configuration file) and three Sentinels
//! (quorum 2). Ten failovers in a row, clients writing throughout, each write
//! acknowledged with `WAIT 1`. Even rounds: the primary is killed with -9; Sentinel
//! promotes a replica and points the other at it (which resumes from it: a partial
//! resync); the killed server, restarted on its file, is turned into a replica (by
//! Sentinel in round 0, by the operator's REPLICAOF after). Odd rounds: the primary stays up, its writes paused until the replicas
//! have them, `SENTINEL FAILOVER` switches over, and the old primary, told to follow
//! the new one, resumes from its stream. Every acknowledged write is on the new
//! primary after each round, and once the writers stop every replica reaches the
//! primary's offset with the same keys and values. Then redis-py's
//! `Sentinel` client writes across one more failover.
//!
//! And moves between Redis and wirespeed, both ways: a redis-server primary and a
//! wirespeed replica of it (or the other way round), one Sentinel; clients write
//! throughout; the primary's writes are paused until the replica has them, `SENTINEL
//! FAILOVER` promotes the replica, the old primary follows it; no acknowledged write is
//! lost and both hold the same keys.

mod common;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{free_port, kvs_serve_teed, missing_client, python3_runs, temp, until, Killed};
use redis::Connection;

/// One wirespeed server: its configuration file, its log (its stderr, across
/// restarts), port, and process while it runs.
struct Node {
    conf: PathBuf,
    log: PathBuf,
    port: u16,
    proc: Option<Killed>,
}

impl Node {
    fn start(&mut self) {
        let conf = self.conf.to_str().expect("path").to_string();
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .and_then(|mut f| writeln!(f, "--- (re)started"))
            .expect("the log");
        self.proc = Some(kvs_serve_teed(&["--config", &conf], Some(&self.log)).0);
    }
}

/// The last `n` lines of a file.
fn tail(path: &std::path::Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// What a failed wait shows: each server's INFO replication, configuration file and
/// log, and what each Sentinel thinks of the primary and its replicas, with its log.
fn dump(nodes: &[Node], sentinels: &[u16], dirs: &[PathBuf]) -> String {
    let mut out = String::new();
    for n in nodes {
        let info = conn(n.port)
            .and_then(|mut c| {
                redis::cmd("INFO")
                    .arg("replication")
                    .query::<String>(&mut c)
            })
            .unwrap_or_else(|e| format!("(no answer: {e})"));
        out += &format!(
            "=== server {} (running: {})\n{}\n--- conf\n{}\n--- log\n{}\n",
            n.port,
            n.proc.is_some(),
            info.trim(),
            std::fs::read_to_string(&n.conf).unwrap_or_default().trim(),
            tail(&n.log, 40)
        );
    }
    for (&s, dir) in sentinels.iter().zip(dirs) {
        let ask = |sub: &str| {
            conn(s)
                .and_then(|mut c| {
                    redis::cmd("SENTINEL")
                        .arg(sub)
                        .arg("mymaster")
                        .query::<redis::Value>(&mut c)
                })
                .map(|v| format!("{v:?}"))
                .unwrap_or_else(|e| format!("(no answer: {e})"))
        };
        out += &format!(
            "=== sentinel {s}\n--- master\n{}\n--- replicas\n{}\n--- log\n{}\n",
            ask("master"),
            ask("replicas"),
            tail(&dir.join("sentinel.log"), 60)
        );
    }
    out
}

fn conn(port: u16) -> redis::RedisResult<Connection> {
    let c = redis::Client::open(format!("redis://127.0.0.1:{port}/"))?;
    c.get_connection_with_timeout(Duration::from_millis(500))
}

fn info_field(port: u16, name: &str) -> Option<String> {
    let mut c = conn(port).ok()?;
    let info: String = redis::cmd("INFO").arg("replication").query(&mut c).ok()?;
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")).map(str::to_string))
}

/// Every key of database 0 and its string value.
fn keyspace(port: u16) -> std::collections::BTreeMap<String, String> {
    let mut c = conn(port).expect("connect");
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut c).expect("KEYS");
    let mut out = std::collections::BTreeMap::new();
    for chunk in keys.chunks(500) {
        let values: Vec<Option<String>> =
            redis::cmd("MGET").arg(chunk).query(&mut c).expect("MGET");
        for (k, v) in chunk.iter().zip(values) {
            out.insert(k.clone(), v.unwrap_or_default());
        }
    }
    out
}

/// The primary's port as the first Sentinel that answers says.
fn primary_port(sentinels: &[u16]) -> Option<u16> {
    sentinels.iter().find_map(|&s| {
        let mut c = conn(s).ok()?;
        let (_, port): (String, String) = redis::cmd("SENTINEL")
            .arg("get-master-addr-by-name")
            .arg("mymaster")
            .query(&mut c)
            .ok()?;
        port.parse().ok()
    })
}

/// Writes `w{writer}:{n}` keys to the primary Sentinel names, each followed by
/// `WAIT 1 1000`; the keys acknowledged by a replica go to `acked`. Reconnects
/// (asking Sentinel again) after any error, until `stop`.
fn writer(id: usize, sentinels: Vec<u16>, acked: Arc<Mutex<Vec<String>>>, stop: Arc<AtomicBool>) {
    writes(id, sentinels, acked, stop, true)
}

/// [`writer`]; without `wait`, a write counts once the primary answers OK.
fn writes(
    id: usize,
    sentinels: Vec<u16>,
    acked: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    wait: bool,
) {
    let mut n = 0u64;
    let mut c: Option<Connection> = None;
    while !stop.load(Ordering::Relaxed) {
        if c.is_none() {
            c = primary_port(&sentinels).and_then(|p| conn(p).ok());
            if c.is_none() {
                std::thread::sleep(Duration::from_millis(20));
                continue;
            }
        }
        let con = c.as_mut().expect("connected");
        let key = format!("w{id}:{n}");
        n += 1;
        let r: redis::RedisResult<(String, i64)> = if wait {
            redis::pipe()
                .cmd("SET")
                .arg(&key)
                .arg(n)
                .cmd("WAIT")
                .arg(1)
                .arg(1000)
                .query(con)
        } else {
            redis::cmd("SET")
                .arg(&key)
                .arg(n)
                .query::<String>(con)
                .map(|ok| (ok, 1))
        };
        match r {
            Ok((_, replicas)) if replicas >= 1 => acked.lock().unwrap().push(key),
            Ok(_) => {}
            Err(_) => {
                c = None;
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

/// [`until`], showing [`dump`] when it times out.
fn until_or_dump(
    secs: u64,
    what: &str,
    nodes: &[Node],
    sentinels: &[u16],
    dirs: &[PathBuf],
    mut f: impl FnMut() -> bool,
) {
    let start = Instant::now();
    while !f() {
        if start.elapsed() > Duration::from_secs(secs) {
            panic!("timed out: {what}\n{}", dump(nodes, sentinels, dirs));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A failover by kill -9 of the primary, writers still going; the killed server comes
/// back on its file and becomes a replica (by Sentinel in round 0, by the operator
/// after).
fn kill_and_restart(
    round: usize,
    primary: u16,
    nodes: &mut [Node],
    sentinel_ports: &[u16],
    sentinel_dirs: &[PathBuf],
    acked: &Mutex<Vec<String>>,
) {
    let victim = nodes.iter_mut().find(|n| n.port == primary).expect("node");
    let killed_at = Instant::now();
    victim.proc = None;
    until_or_dump(
        40,
        &format!("round {round}: Sentinel promotes a replica"),
        nodes,
        sentinel_ports,
        sentinel_dirs,
        || primary_port(sentinel_ports).is_some_and(|p| p != primary),
    );
    let promoted = primary_port(sentinel_ports).unwrap();
    writes_acknowledged_again(round, nodes, sentinel_ports, sentinel_dirs, acked);
    eprintln!(
        "round {round}: {primary} killed, {promoted} promoted, writes acknowledged again after {:?}",
        killed_at.elapsed()
    );
    let victim = nodes.iter_mut().find(|n| n.port == primary).expect("node");
    let restarted_at = Instant::now();
    victim.start();
    if round > 0 {
        // Sentinel turns the restarted server into a replica itself in round 0; after
        // that the operator does, to keep the ten rounds short.
        follow_now(primary, promoted);
    }
    rejoined(round, primary, nodes, sentinel_ports, sentinel_dirs);
    eprintln!(
        "round {round}: {primary} a replica again after {:?}",
        restarted_at.elapsed()
    );
}

/// The operator points the old primary at the new one (REPLICAOF, then CONFIG REWRITE
/// so its file says so) rather than waiting for Sentinel, which does the same at its
/// own pace (about 10 to 15 s later, when it sees a primary it counts as a replica).
fn follow_now(old: u16, promoted: u16) -> Connection {
    let mut c = conn(old).expect("the old primary");
    let _: String = redis::cmd("REPLICAOF")
        .arg("127.0.0.1")
        .arg(promoted)
        .query(&mut c)
        .expect("REPLICAOF");
    let _: () = redis::cmd("CONFIG")
        .arg("REWRITE")
        .query(&mut c)
        .expect("CONFIG REWRITE");
    c
}

/// A switch-over with the primary alive, writers still going (blocked meanwhile): its
/// writes are paused (CLIENT PAUSE WRITE) until both replicas reach its offset, then
/// `SENTINEL FAILOVER` promotes one; the old primary, told to follow it, continues
/// from the new one's stream (a partial resync) and its paused clients are let go.
fn switch_over(
    round: usize,
    primary: u16,
    nodes: &[Node],
    sentinel_ports: &[u16],
    sentinel_dirs: &[PathBuf],
    acked: &Mutex<Vec<String>>,
) {
    let mut old = conn(primary).expect("the primary");
    let _: () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(20000)
        .arg("WRITE")
        .query(&mut old)
        .expect("CLIENT PAUSE");
    until_or_dump(
        20,
        &format!("round {round}: replicas reach the paused primary's offset"),
        nodes,
        sentinel_ports,
        sentinel_dirs,
        || {
            let at = info_field(primary, "master_repl_offset");
            nodes
                .iter()
                .filter(|n| n.port != primary)
                .all(|n| info_field(n.port, "master_repl_offset") == at)
        },
    );
    let switched_at = Instant::now();
    failover(sentinel_ports[0]);
    until_or_dump(
        40,
        &format!("round {round}: Sentinel promotes a replica on request"),
        nodes,
        sentinel_ports,
        sentinel_dirs,
        || primary_port(sentinel_ports).is_some_and(|p| p != primary),
    );
    // The operator ends the switch-over.
    let promoted = primary_port(sentinel_ports).expect("a primary");
    let mut old = follow_now(primary, promoted);
    rejoined(round, primary, nodes, sentinel_ports, sentinel_dirs);
    let _: () = redis::cmd("CLIENT")
        .arg("UNPAUSE")
        .query(&mut old)
        .expect("CLIENT UNPAUSE");
    writes_acknowledged_again(round, nodes, sentinel_ports, sentinel_dirs, acked);
    let resumed = std::fs::read_to_string(&nodes.iter().find(|n| n.port == primary).unwrap().log)
        .unwrap_or_default()
        .lines()
        .rev()
        .take_while(|l| !l.contains("---"))
        .any(|l| l.contains("(partial resync)"));
    eprintln!(
        "round {round}: {primary} switched over to {}, a replica again after {:?} (partial resync: {resumed})",
        primary_port(sentinel_ports).unwrap_or(0),
        switched_at.elapsed()
    );
}

/// Waits until writers have 10 more writes acknowledged (on the new primary).
fn writes_acknowledged_again(
    round: usize,
    nodes: &[Node],
    sentinel_ports: &[u16],
    sentinel_dirs: &[PathBuf],
    acked: &Mutex<Vec<String>>,
) {
    let before = acked.lock().unwrap().len();
    until_or_dump(
        40,
        &format!("round {round}: a write acknowledged on the new primary"),
        nodes,
        sentinel_ports,
        sentinel_dirs,
        || acked.lock().unwrap().len() > before + 10,
    );
}

/// Waits until the old primary follows the primary Sentinel names now, link up.
fn rejoined(
    round: usize,
    old: u16,
    nodes: &[Node],
    sentinel_ports: &[u16],
    sentinel_dirs: &[PathBuf],
) {
    until_or_dump(
        60,
        &format!("round {round}: the old primary rejoins as a replica"),
        nodes,
        sentinel_ports,
        sentinel_dirs,
        || {
            // Of the primary Sentinel names now: Sentinel may fail over again (a
            // promoted replica it briefly sees as down), which is its call.
            primary_port(sentinel_ports).is_some_and(|p| {
                info_field(old, "master_port") == Some(p.to_string())
                    && info_field(old, "master_link_status").as_deref() == Some("up")
            })
        },
    );
}

/// `SENTINEL FAILOVER mymaster` on the Sentinel at `port`.
fn failover(port: u16) {
    let mut s = conn(port).expect("a sentinel");
    let _: () = redis::cmd("SENTINEL")
        .arg("FAILOVER")
        .arg("mymaster")
        .query(&mut s)
        .expect("SENTINEL FAILOVER");
}

/// redis-sentinel is not installed.
fn no_sentinel() -> bool {
    Command::new("redis-sentinel")
        .arg("--version")
        .output()
        .is_err()
}

fn sentinel_conf(dir: &std::path::Path, port: u16, primary: u16) -> String {
    format!(
        "port {port}\nbind 127.0.0.1\ndaemonize no\ndir {0}\nlogfile \"{0}/sentinel.log\"\n\
         sentinel monitor mymaster 127.0.0.1 {primary} 2\n\
         sentinel down-after-milliseconds mymaster 2000\n\
         sentinel failover-timeout mymaster 10000\n\
         sentinel parallel-syncs mymaster 2\n",
        dir.display()
    )
}

#[test]
fn sentinel_fails_over_ten_times_and_no_acknowledged_write_is_lost() {
    if no_sentinel() {
        return missing_client("redis-sentinel");
    }
    // The servers, on configuration files that CONFIG REWRITE keeps up to date.
    let mut nodes: Vec<Node> = (0..3)
        .map(|i| {
            let port = free_port();
            let conf = temp("sentinel", &format!("node{i}.conf"));
            let log = temp("sentinel", &format!("node{i}.log"));
            let mut text = format!("port {port}\n");
            if i > 0 {
                text.push_str("replicaof 127.0.0.1 PRIMARY\n");
            }
            std::fs::write(&conf, text).expect("write the config");
            Node {
                conf,
                log,
                port,
                proc: None,
            }
        })
        .collect();
    let first = nodes[0].port;
    for n in &mut nodes {
        let text = std::fs::read_to_string(&n.conf).unwrap();
        std::fs::write(&n.conf, text.replace("PRIMARY", &first.to_string())).unwrap();
        n.start();
    }
    for n in &nodes[1..] {
        until(10, "replicas attached", || {
            info_field(n.port, "master_link_status").as_deref() == Some("up")
        });
    }
    let sentinel_ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let sentinel_dirs: Vec<PathBuf> = (0..3).map(|i| temp("sentinel", &format!("s{i}"))).collect();
    let _sentinels: Vec<Killed> = sentinel_ports
        .iter()
        .zip(&sentinel_dirs)
        .map(|(&port, dir)| {
            std::fs::create_dir_all(dir).unwrap();
            let conf = dir.join("sentinel.conf");
            std::fs::write(&conf, sentinel_conf(dir, port, first)).unwrap();
            Killed(
                Command::new("redis-sentinel")
                    .arg(&conf)
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .expect("start redis-sentinel"),
            )
        })
        .collect();
    // Every Sentinel sees both replicas and the two other Sentinels.
    until(20, "sentinels ready", || {
        sentinel_ports.iter().all(|&s| {
            conn(s)
                .and_then(|mut c| {
                    redis::cmd("SENTINEL")
                        .arg("master")
                        .arg("mymaster")
                        .query::<Vec<String>>(&mut c)
                })
                .is_ok_and(|kv| {
                    let get = |k: &str| kv.iter().position(|x| x == k).map(|i| kv[i + 1].clone());
                    get("num-slaves").as_deref() == Some("2")
                        && get("num-other-sentinels").as_deref() == Some("2")
                })
        })
    });
    let acked = Arc::new(Mutex::new(Vec::new()));
    for round in 0..10 {
        let primary = primary_port(&sentinel_ports).expect("a primary");
        let stop = Arc::new(AtomicBool::new(false));
        let writers: Vec<_> = (0..2)
            .map(|w| {
                let (s, a, st) = (sentinel_ports.clone(), acked.clone(), stop.clone());
                std::thread::spawn(move || writer(round * 10 + w, s, a, st))
            })
            .collect();
        until_or_dump(
            30,
            &format!("round {round}: writes acknowledged"),
            &nodes,
            &sentinel_ports,
            &sentinel_dirs,
            || acked.lock().unwrap().len() > 200 * (round + 1),
        );
        if round % 2 == 0 {
            kill_and_restart(
                round,
                primary,
                &mut nodes,
                &sentinel_ports,
                &sentinel_dirs,
                &acked,
            );
        } else {
            switch_over(
                round,
                primary,
                &nodes,
                &sentinel_ports,
                &sentinel_dirs,
                &acked,
            );
        }
        let promoted = primary_port(&sentinel_ports).expect("a primary");
        stop.store(true, Ordering::Relaxed);
        for w in writers {
            w.join().expect("writer");
        }
        // Every acknowledged write is on the new primary.
        let mut c = conn(promoted).expect("the new primary");
        let keys = acked.lock().unwrap().clone();
        let mut missing = Vec::new();
        for chunk in keys.chunks(500) {
            let found: Vec<Option<String>> =
                redis::cmd("MGET").arg(chunk).query(&mut c).expect("MGET");
            missing.extend(
                chunk
                    .iter()
                    .zip(found)
                    .filter(|(_, v)| v.is_none())
                    .map(|(k, _)| k.clone()),
            );
        }
        assert!(
            missing.is_empty(),
            "round {round}: {} of {} acknowledged writes lost: {:?}",
            missing.len(),
            keys.len(),
            &missing[..missing.len().min(10)]
        );
        // The other replica follows the new primary too, reaches its offset, and holds
        // the same keys and values.
        for n in nodes.iter().filter(|n| n.port != promoted) {
            until_or_dump(
                40,
                &format!("round {round}: replicas follow the new primary"),
                &nodes,
                &sentinel_ports,
                &sentinel_dirs,
                || {
                    info_field(n.port, "master_port") == Some(promoted.to_string())
                        && info_field(n.port, "master_link_status").as_deref() == Some("up")
                        && info_field(n.port, "master_repl_offset")
                            == info_field(promoted, "master_repl_offset")
                },
            );
            let (want, got) = (keyspace(promoted), keyspace(n.port));
            assert!(
                want == got,
                "round {round}: replica {} differs from primary {promoted}: {} keys against {}, first differences {:?}\n{}",
                n.port,
                got.len(),
                want.len(),
                want.iter()
                    .filter(|(k, v)| got.get(*k) != Some(*v))
                    .take(5)
                    .collect::<Vec<_>>(),
                dump(&nodes, &sentinel_ports, &sentinel_dirs)
            );
        }
    }
    // The configuration files say who follows whom (CONFIG REWRITE from Sentinel).
    let promoted = primary_port(&sentinel_ports).unwrap();
    for n in &nodes {
        let text = std::fs::read_to_string(&n.conf).unwrap();
        let follows = text.lines().any(|l| l.starts_with("replicaof "));
        assert_eq!(follows, n.port != promoted, "{}: {text}", n.port);
    }
    // redis-py's Sentinel client finds the primary and keeps writing across a failover.
    if !python3_runs("import redis.sentinel") {
        return missing_client("redis-py");
    }
    let script = format!(
        r#"
import time, redis
from redis.sentinel import Sentinel
s = Sentinel([('127.0.0.1', p) for p in {ports:?}], socket_timeout=0.5)
m = s.master_for('mymaster', socket_timeout=0.5)
first = s.discover_master('mymaster')
ok, seen = 0, set()
deadline = time.time() + 30
while time.time() < deadline:
    try:
        m.set('py:%d' % ok, 'x')
        ok += 1
        seen.add(s.discover_master('mymaster'))
        if len(seen) > 1 and ok > 50:
            break
    except (redis.ConnectionError, redis.TimeoutError, redis.ReadOnlyError):
        time.sleep(0.05)
print(first[1], ok, len(seen))
"#,
        ports = sentinel_ports
    );
    let py = Command::new("python3")
        .args(["-c", &script])
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    std::thread::sleep(Duration::from_secs(2));
    let victim = nodes.iter_mut().find(|n| n.port == promoted).expect("node");
    victim.proc = None;
    let out = py.wait_with_output().expect("python3 ran");
    let text = String::from_utf8_lossy(&out.stdout);
    let words: Vec<&str> = text.split_whitespace().collect();
    assert_eq!(words.len(), 3, "redis-py said: {text}");
    assert_eq!(words[0], promoted.to_string(), "{text}");
    assert!(words[1].parse::<u64>().unwrap() > 50, "{text}");
    assert_eq!(
        words[2], "2",
        "redis-py wrote to the old and the new primary: {text}"
    );
}

#[test]
fn a_redis_primary_moves_to_a_wirespeed_replica_by_sentinel_with_writers_running() {
    moves_by_sentinel(true);
}

#[test]
fn a_wirespeed_primary_moves_to_a_redis_replica_by_sentinel_with_writers_running() {
    moves_by_sentinel(false);
}

/// The offset the primary at `port` says its first replica acknowledged.
fn acked_offset(port: u16) -> Option<String> {
    let line = info_field(port, "slave0")?;
    line.split(',')
        .find_map(|f| f.strip_prefix("offset="))
        .map(str::to_string)
}

/// A switch-over between a redis-server and a wirespeed server by one Sentinel, from
/// Redis to wirespeed (`from_redis`) or back, clients writing throughout: the
/// primary's writes paused until its replica acknowledged them all, `SENTINEL
/// FAILOVER`, the old primary told to follow the new one; no acknowledged write lost,
/// both servers with the same keys after.
fn moves_by_sentinel(from_redis: bool) {
    if no_sentinel() {
        return missing_client("redis-sentinel");
    }
    let group = if from_redis {
        "sentinel-in"
    } else {
        "sentinel-out"
    };
    let dir = temp(group, "redis");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // Each server's port is taken just before it starts (two free ports asked for at
    // once may be the same one).
    let mut port = free_port();
    let conf = temp(group, "ours.conf");
    let log = temp(group, "ours.log");
    let _ = std::fs::remove_file(&log);
    let mut ours = Node {
        conf: conf.clone(),
        log,
        port,
        proc: None,
    };
    let mut redis_args = vec![
        "--dir".to_string(),
        dir.to_str().unwrap().to_string(),
        "--repl-diskless-sync-delay".to_string(),
        "0".to_string(),
    ];
    if !from_redis {
        std::fs::write(&conf, format!("port {port}\n")).unwrap();
        ours.start();
        redis_args.extend(["--replicaof".into(), "127.0.0.1".into(), port.to_string()]);
    }
    let args: Vec<&str> = redis_args.iter().map(String::as_str).collect();
    let (_redis, raddr) = common::redis_server_with(None, &args).expect("redis-server");
    let redis_port: u16 = raddr.rsplit_once(':').unwrap().1.parse().unwrap();
    if from_redis {
        port = free_port();
        ours.port = port;
        std::fs::write(
            &conf,
            format!("port {port}\nreplicaof 127.0.0.1 {redis_port}\n"),
        )
        .unwrap();
        ours.start();
    }
    let (primary, replica) = if from_redis {
        (redis_port, port)
    } else {
        (port, redis_port)
    };
    until(10, "the replica syncs", || {
        info_field(replica, "master_link_status").as_deref() == Some("up")
    });
    let sentinel_port = free_port();
    let sentinel_dir = temp(group, "s0");
    let _ = std::fs::remove_dir_all(&sentinel_dir);
    std::fs::create_dir_all(&sentinel_dir).unwrap();
    let sconf = sentinel_dir.join("sentinel.conf");
    // One Sentinel: quorum 1.
    let text = sentinel_conf(&sentinel_dir, sentinel_port, primary)
        .replace(&format!("{primary} 2\n"), &format!("{primary} 1\n"));
    std::fs::write(&sconf, text).unwrap();
    let _sentinel = Killed(
        Command::new("redis-sentinel")
            .arg(&sconf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-sentinel"),
    );
    let (sentinels, dirs) = (vec![sentinel_port], vec![sentinel_dir]);
    let nodes = [ours];
    until_or_dump(
        20,
        "Sentinel sees the replica",
        &nodes,
        &sentinels,
        &dirs,
        || {
            conn(sentinel_port)
                .and_then(|mut c| {
                    redis::cmd("SENTINEL")
                        .arg("replicas")
                        .arg("mymaster")
                        .query::<redis::Value>(&mut c)
                })
                .is_ok_and(|v| format!("{v:?}").contains(&replica.to_string()))
        },
    );
    let acked = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let (s, a, st) = (sentinels.clone(), acked.clone(), stop.clone());
            std::thread::spawn(move || writes(w, s, a, st, false))
        })
        .collect();
    until_or_dump(
        20,
        "writes to the first primary",
        &nodes,
        &sentinels,
        &dirs,
        || acked.lock().unwrap().len() > 300,
    );
    // The switch-over: the primary's writes paused until the replica has them all.
    let mut old = conn(primary).expect("the primary");
    let _: () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(20000)
        .arg("WRITE")
        .query(&mut old)
        .unwrap();
    until_or_dump(
        20,
        "the replica acknowledges every write",
        &nodes,
        &sentinels,
        &dirs,
        || {
            let want = info_field(primary, "master_repl_offset");
            want.is_some() && acked_offset(primary) == want
        },
    );
    failover(sentinel_port);
    until_or_dump(
        40,
        "Sentinel promotes the replica",
        &nodes,
        &sentinels,
        &dirs,
        || {
            primary_port(&sentinels) == Some(replica)
                && info_field(replica, "role").as_deref() == Some("master")
        },
    );
    // The old primary follows the new one.
    let _: String = redis::cmd("REPLICAOF")
        .arg("127.0.0.1")
        .arg(replica)
        .query(&mut old)
        .unwrap();
    let _: () = redis::cmd("CLIENT").arg("UNPAUSE").query(&mut old).unwrap();
    until_or_dump(
        30,
        "the old primary follows the new one",
        &nodes,
        &sentinels,
        &dirs,
        || info_field(primary, "master_link_status").as_deref() == Some("up"),
    );
    let before = acked.lock().unwrap().len();
    until_or_dump(
        20,
        "writes to the new primary",
        &nodes,
        &sentinels,
        &dirs,
        || acked.lock().unwrap().len() > before + 300,
    );
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().expect("writer");
    }
    // Every write acknowledged by either primary is on the new one, and on the old one
    // now its replica.
    let want = keyspace(replica);
    let keys = acked.lock().unwrap().clone();
    let lost: Vec<&String> = keys.iter().filter(|k| !want.contains_key(*k)).collect();
    assert!(
        lost.is_empty(),
        "{} of {} acknowledged writes lost: {:?}",
        lost.len(),
        keys.len(),
        &lost[..lost.len().min(10)]
    );
    let mut got = Default::default();
    until_or_dump(
        20,
        "the old primary holds the same keys",
        &nodes,
        &sentinels,
        &dirs,
        || {
            got = keyspace(primary);
            got == want
        },
    );
    if from_redis {
        // Sentinel's CONFIG REWRITE on the promoted wirespeed server: no replicaof.
        let text = std::fs::read_to_string(&conf).unwrap();
        assert!(!text.lines().any(|l| l.starts_with("replicaof ")), "{text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
