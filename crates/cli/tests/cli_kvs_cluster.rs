//! Cluster mode through the real tools: six wirespeed nodes made into a three-primary,
//! three-replica cluster by `redis-cli --cluster create`, checked by `redis-cli
//! --cluster check`; redis-py's `RedisCluster` and the redis crate's `ClusterClient`
//! write and read 100,000 keys; `redis-benchmark --cluster` and `wirespeed kvs bench
//! --cluster` run (the latter through a resharding, following MOVED and ASK, after
//! which the slot floors the moves set are in the nodes' files and survive a restart);
//! MOVED, CROSSSLOT and hash tags as Redis answers them (followed by hand with the
//! redis crate); READONLY reads on a replica; a node restarted on its `nodes.conf`
//! keeps its id and rejoins; resharding and a new primary under load; a failed primary
//! replaced by its replica with no WAIT-acknowledged write lost, the old primary back
//! as a replica; a manual failover under writes with no acknowledged write lost (the
//! primary holds writes until its replica has caught up).

mod common;

use std::path::PathBuf;
use std::process::Command;

use std::time::Instant;

use common::{
    bulk, cmd, connect, kvs_serve, missing_client, python3_runs, temp, try_cmd, until, Killed,
};
use redis::Value;

/// A free port whose bus port (plus 10000) is free too.
fn cluster_port() -> u16 {
    loop {
        let p = common::free_port();
        if p < 55_000 && std::net::TcpListener::bind(("127.0.0.1", p + 10_000)).is_ok() {
            return p;
        }
    }
}

struct Node {
    port: u16,
    file: PathBuf,
    proc: Option<Killed>,
}

impl Node {
    fn start(&mut self) {
        let (port, file) = (
            self.port.to_string(),
            self.file.to_str().unwrap().to_string(),
        );
        self.proc = Some(
            kvs_serve(&[
                "--port",
                &port,
                "--cluster-enabled",
                "--cluster-config-file",
                &file,
                "--cluster-node-timeout",
                "2000",
            ])
            .0,
        );
    }
}

/// `n` fresh cluster-mode nodes (test group `group`), and their addresses.
fn start_nodes(n: usize, group: &str) -> (Vec<Node>, Vec<String>) {
    let mut nodes: Vec<Node> = (0..n)
        .map(|i| Node {
            port: cluster_port(),
            file: temp(group, &format!("nodes-{i}.conf")),
            proc: None,
        })
        .collect();
    for n in &mut nodes {
        let _ = std::fs::remove_file(&n.file);
        n.start();
    }
    let addrs = nodes
        .iter()
        .map(|n| format!("127.0.0.1:{}", n.port))
        .collect();
    (nodes, addrs)
}

fn redis_cli(args: &[&str]) -> (bool, String) {
    let out = Command::new("redis-cli")
        .args(args)
        .output()
        .expect("run redis-cli");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

/// Six fresh nodes (test group `group`) made a three-primary, three-replica cluster by
/// `redis-cli --cluster create`; `None` (the test skipped) without redis-cli.
fn six_node_cluster(group: &str) -> Option<(Vec<Node>, Vec<String>)> {
    if Command::new("redis-cli").arg("--version").output().is_err() {
        missing_client("redis-cli");
        return None;
    }
    let (nodes, addrs) = start_nodes(6, group);
    let mut args = vec!["--cluster", "create"];
    args.extend(addrs.iter().map(String::as_str));
    args.extend(["--cluster-replicas", "1", "--cluster-yes"]);
    let (ok, out) = redis_cli(&args);
    assert!(ok, "{out}");
    until(10, "the cluster is ok on every node", || {
        addrs.iter().all(|a| {
            let mut c = connect(a);
            let info: String = redis::cmd("CLUSTER").arg("INFO").query(&mut c).unwrap();
            info.contains("cluster_state:ok")
        })
    });
    Some((nodes, addrs))
}

/// The ports of the nodes that are primaries (by INFO replication), with their DBSIZE.
fn primaries(nodes: &[Node]) -> Vec<(u16, i64)> {
    nodes
        .iter()
        .filter_map(|n| {
            let mut c = connect(&format!("127.0.0.1:{}", n.port));
            let info: String = redis::cmd("INFO").arg("replication").query(&mut c).unwrap();
            if !info.contains("role:master") {
                return None;
            }
            let Value::Int(k) = cmd(&mut c, &["DBSIZE"]) else {
                panic!("DBSIZE")
            };
            Some((n.port, k))
        })
        .collect()
}

/// `SET key value` sent to `port`, following MOVED (at most twice).
fn set_following(port: u16, key: &str, value: &str) -> u16 {
    let mut at = port;
    for _ in 0..3 {
        let mut c = connect(&format!("127.0.0.1:{at}"));
        match try_cmd(&mut c, &["SET", key, value]) {
            Ok(_) => return at,
            Err(e) if e.kind() == redis::ErrorKind::Moved => {
                let (addr, _) = e.redirect_node().expect("MOVED names a node");
                at = addr.rsplit_once(':').unwrap().1.parse().unwrap();
            }
            Err(e) => panic!("SET {key}: {e}"),
        }
    }
    panic!("too many redirections for {key}")
}

#[test]
fn redis_cli_creates_a_six_node_cluster_that_clients_use() {
    if Command::new("redis-cli").arg("--version").output().is_err() {
        return missing_client("redis-cli");
    }
    let (mut nodes, addrs) = start_nodes(6, "cluster");
    let mut args = vec!["--cluster", "create"];
    args.extend(addrs.iter().map(String::as_str));
    args.extend(["--cluster-replicas", "1", "--cluster-yes"]);
    let (ok, out) = redis_cli(&args);
    assert!(ok, "{out}");
    assert!(
        out.contains("[OK] All nodes agree about slots configuration."),
        "{out}"
    );
    assert!(out.contains("[OK] All 16384 slots covered."), "{out}");
    let (ok, out) = redis_cli(&["--cluster", "check", &addrs[3]]);
    assert!(ok && out.contains("[OK] All 16384 slots covered."), "{out}");
    assert_eq!(out.matches("M: ").count(), 3, "{out}");
    assert_eq!(out.matches("S: ").count(), 3, "{out}");

    // Routing as Redis answers it.
    let p0 = nodes[0].port;
    let mut c0 = connect(&addrs[0]);
    let slot_of_foo = 12182;
    let owner = set_following(p0, "foo", "bar");
    let e = try_cmd(&mut c0, &["GET", "foo"]);
    if owner != p0 {
        let e = e.unwrap_err();
        assert_eq!(e.kind(), redis::ErrorKind::Moved);
        assert_eq!(
            e.redirect_node(),
            Some((format!("127.0.0.1:{owner}").as_str(), slot_of_foo))
        );
    }
    let mut co = connect(&format!("127.0.0.1:{owner}"));
    assert_eq!(cmd(&mut co, &["GET", "foo"]), bulk("bar"));
    let e = try_cmd(&mut co, &["MSET", "foo", "1", "bar", "2"]).unwrap_err();
    assert_eq!(e.kind(), redis::ErrorKind::CrossSlot, "{e}");
    // Commands whose key count comes first (Redis's keynum key specs) are routed too.
    for c in [
        &["ZUNION", "2", "foo", "bar"][..],
        &["SINTERCARD", "2", "foo", "bar"],
        &["LMPOP", "2", "foo", "bar", "LEFT"],
        &["BZMPOP", "0", "2", "foo", "bar", "MIN"],
        &["ZUNIONSTORE", "foo", "2", "foo", "bar"],
    ] {
        let e = try_cmd(&mut co, c).unwrap_err();
        assert_eq!(e.kind(), redis::ErrorKind::CrossSlot, "{c:?}: {e}");
    }
    let tagged = set_following(p0, "{user1}.a", "1");
    let mut ct = connect(&format!("127.0.0.1:{tagged}"));
    assert_eq!(
        cmd(&mut ct, &["MSET", "{user1}.b", "2", "{user1}.c", "3"]),
        Value::Okay
    );
    let zinter = try_cmd(&mut co, &["ZINTER", "1", "{user1}.z"]);
    if tagged == owner {
        assert!(zinter.is_ok(), "{zinter:?}");
    } else {
        assert_eq!(zinter.unwrap_err().kind(), redis::ErrorKind::Moved);
    }
    let e = try_cmd(&mut c0, &["SELECT", "1"]).unwrap_err();
    assert!(e.to_string().contains("not allowed in cluster mode"), "{e}");
    // A replica of the owner: MOVED, then served after READONLY (reads only).
    let owner_id = String::from_utf8(match cmd(&mut co, &["CLUSTER", "MYID"]) {
        Value::BulkString(b) => b,
        v => panic!("{v:?}"),
    })
    .unwrap();
    let replica = nodes
        .iter()
        .find(|n| {
            let mut c = connect(&format!("127.0.0.1:{}", n.port));
            let text: String = redis::cmd("CLUSTER").arg("NODES").query(&mut c).unwrap();
            text.lines()
                .any(|l| l.contains("myself,slave") && l.contains(&owner_id))
        })
        .map(|n| n.port)
        .expect("a replica of the owner");
    let mut cr = connect(&format!("127.0.0.1:{replica}"));
    until(10, "the replica has foo", || {
        cmd(&mut cr, &["READONLY"]);
        cmd(&mut cr, &["GET", "foo"]) == bulk("bar")
    });
    let e = try_cmd(&mut cr, &["SET", "foo", "x"]).unwrap_err();
    assert_eq!(e.kind(), redis::ErrorKind::Moved, "{e}");
    cmd(&mut cr, &["READWRITE"]);
    let e = try_cmd(&mut cr, &["GET", "foo"]).unwrap_err();
    assert_eq!(e.kind(), redis::ErrorKind::Moved, "{e}");

    // redis-py's cluster client: 100,000 keys written and read back.
    if python3_runs("import redis.cluster") {
        let script = format!(
            r#"
from redis.cluster import RedisCluster
rc = RedisCluster(host='127.0.0.1', port={p0}, protocol=2)
n = 100000
for start in range(0, n, 2000):
    p = rc.pipeline()
    for i in range(start, start + 2000):
        p.set('key:%d' % i, i)
    p.execute()
ok = 0
for start in range(0, n, 2000):
    p = rc.pipeline()
    for i in range(start, start + 2000):
        p.get('key:%d' % i)
    ok += sum(1 for i, v in zip(range(start, start + 2000), p.execute()) if v == str(i).encode())
print(ok)
"#
        );
        let out = Command::new("python3")
            .args(["-c", &script])
            .output()
            .expect("python3");
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            text.trim(),
            "100000",
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    } else {
        missing_client("redis-py");
    }
    // Each primary holds about a third of them.
    let mut total = 0;
    for n in &nodes {
        let mut c = connect(&format!("127.0.0.1:{}", n.port));
        let info: String = redis::cmd("INFO").arg("replication").query(&mut c).unwrap();
        if info.contains("role:master") {
            let Value::Int(k) = cmd(&mut c, &["DBSIZE"]) else {
                panic!()
            };
            assert!((30_000..40_000).contains(&k), "{k}");
            total += k;
        }
    }
    assert!(total >= 100_000, "{total}");

    // redis-benchmark's cluster mode.
    let out = Command::new("redis-benchmark")
        .args([
            "--cluster",
            "-p",
            &p0.to_string(),
            "-t",
            "set,get",
            "-n",
            "20000",
            "-q",
        ])
        .output();
    match out {
        Ok(out) => {
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{text}");
            assert!(text.matches("requests per second").count() >= 2, "{text}");
        }
        Err(_) => missing_client("redis-benchmark"),
    }

    // A node restarted on its file keeps its id and rejoins.
    let id_before = {
        let mut c = connect(&addrs[1]);
        cmd(&mut c, &["CLUSTER", "MYID"])
    };
    nodes[1].proc = None;
    nodes[1].start();
    let mut c1 = connect(&addrs[1]);
    assert_eq!(cmd(&mut c1, &["CLUSTER", "MYID"]), id_before);
    until(20, "the restarted node rejoins", || {
        let (ok, out) = redis_cli(&["--cluster", "check", &addrs[1]]);
        ok && out.contains("[OK] All nodes agree about slots configuration.")
            && out.contains("[OK] All 16384 slots covered.")
    });
    let info: String = redis::cmd("CLUSTER").arg("INFO").query(&mut c1).unwrap();
    assert!(info.contains("cluster_state:ok"), "{info}");
    assert!(info.contains("cluster_known_nodes:6"), "{info}");
}

#[test]
fn the_redis_crate_cluster_client_writes_and_reads_100000_keys() {
    let Some((nodes, addrs)) = six_node_cluster("cluster-rs-client") else {
        return;
    };
    let t = Instant::now();
    let client = redis::cluster::ClusterClient::new(vec![format!("redis://{}/", addrs[0])])
        .expect("a cluster client");
    let mut con = client.get_connection().expect("connected to the cluster");
    let n = 100_000;
    let batch = 2_000;
    // Pipelined: the client splits each pipeline by node and sends each part at once.
    for start in (0..n).step_by(batch) {
        let mut p = redis::cluster::cluster_pipe();
        for i in start..start + batch {
            p.set(format!("rc:{i}"), format!("v{i}")).ignore();
        }
        let () = p.query(&mut con).expect("pipelined SETs");
    }
    let mut wrong = 0;
    for start in (0..n).step_by(batch) {
        let mut p = redis::cluster::cluster_pipe();
        for i in start..start + batch {
            p.get(format!("rc:{i}"));
        }
        let got: Vec<Option<String>> = p.query(&mut con).expect("pipelined GETs");
        assert_eq!(got.len(), batch);
        wrong += (start..start + batch)
            .zip(&got)
            .filter(|(i, v)| v.as_deref() != Some(format!("v{i}").as_str()))
            .count();
    }
    assert_eq!(wrong, 0, "values read back wrong");
    // Single commands too, each routed by the client's slot map.
    let one: String = redis::cmd("GET").arg("rc:77777").query(&mut con).unwrap();
    assert_eq!(one, "v77777");
    eprintln!(
        "redis crate cluster client: 100,000 SETs and GETs in {:?}",
        t.elapsed()
    );
    // The keys spread over the three primaries.
    let ps = primaries(&nodes);
    assert_eq!(ps.len(), 3, "{ps:?}");
    assert!(
        ps.iter().all(|&(_, k)| (30_000..40_000).contains(&k)),
        "{ps:?}"
    );
    assert_eq!(ps.iter().map(|&(_, k)| k).sum::<i64>(), n as i64);
}

/// `wirespeed kvs bench` with `extra` arguments, as JSON (the run must succeed).
fn kvs_bench_json(extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["kvs", "bench", "--json"];
    args.extend(extra);
    let out = common::wirespeed(&args);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn kvs_bench_speaks_the_cluster_protocol_and_follows_a_resharding() {
    let Some((nodes, addrs)) = six_node_cluster("cluster-bench") else {
        return;
    };
    // Keys spread over the primaries: the preload writes each on its slot's primary.
    let t = Instant::now();
    let r = kvs_bench_json(&[
        "--cluster",
        "--addr",
        &addrs[0],
        "--keys",
        "30000",
        "--requests",
        "60000",
        "--connections",
        "8",
        "--pipeline",
        "8",
    ]);
    eprintln!("kvs bench --cluster: {r} in {:?}", t.elapsed());
    assert_eq!(r["requests"], 60_000, "{r}");
    assert_eq!(r["mismatches"], 0, "{r}");
    assert_eq!(r["cluster"], true, "{r}");
    assert_eq!(
        (r["moved"].as_u64(), r["asks"].as_u64()),
        (Some(0), Some(0)),
        "{r}"
    );
    let ps = primaries(&nodes);
    assert_eq!(ps.len(), 3, "{ps:?}");
    assert!(
        ps.iter().all(|&(_, k)| (8_000..12_000).contains(&k)),
        "{ps:?}"
    );
    assert_eq!(ps.iter().map(|&(_, k)| k).sum::<i64>(), 30_000);
    // Through a resharding: the load follows MOVED (and ASK while a slot migrates), and
    // every reply is still the expected one.
    let bench = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args([
            "kvs",
            "bench",
            "--json",
            "--cluster",
            "--addr",
            &addrs[1],
            "--keys",
            "30000",
            "--duration",
            "6",
            "--connections",
            "4",
            "--pipeline",
            "4",
            "--get-ratio",
            "0.5",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("kvs bench");
    std::thread::sleep(std::time::Duration::from_millis(1000));
    let ids: Vec<String> = ps[..2]
        .iter()
        .map(|(port, _)| {
            let mut c = connect(&format!("127.0.0.1:{port}"));
            redis::cmd("CLUSTER").arg("MYID").query(&mut c).unwrap()
        })
        .collect();
    let resharded = Instant::now();
    let (ok, out) = redis_cli(&[
        "--cluster",
        "reshard",
        &addrs[0],
        "--cluster-from",
        &ids[0],
        "--cluster-to",
        &ids[1],
        "--cluster-slots",
        "500",
        "--cluster-yes",
    ]);
    assert!(ok, "{out}");
    let took = resharded.elapsed();
    let out = bench.wait_with_output().expect("kvs bench ran");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value =
        serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"));
    eprintln!("kvs bench --cluster through a resharding of 500 slots ({took:?}): {r}");
    assert_eq!(r["mismatches"], 0, "{r}");
    assert!(r["requests"].as_u64() > Some(1_000), "{r}");
    // The resharding ended well before the run did, so requests met the moved slots.
    if took < std::time::Duration::from_secs(4) {
        assert!(r["moved"].as_u64() > Some(0), "{r}");
    }
    let ps = primaries(&nodes);
    assert_eq!(ps.iter().map(|&(_, k)| k).sum::<i64>(), 30_000, "{ps:?}");
    // The slots given by CLUSTER SETSLOT NODE keep their floors (the epoch a claim must
    // exceed to move them again) in the nodes' files, and through a restart.
    let floors = |file: &PathBuf| {
        let text = std::fs::read_to_string(file).unwrap();
        text.lines()
            .find(|l| l.starts_with("vars "))
            .and_then(|l| l.split_once(" slotFloors "))
            .map(|(_, f)| f.to_string())
    };
    let mut nodes = nodes;
    let n = nodes
        .iter_mut()
        .find(|n| floors(&n.file).is_some())
        .expect("a node's file keeps slot floors");
    let before = floors(&n.file);
    n.proc = None;
    n.start();
    let mut c = connect(&format!("127.0.0.1:{}", n.port));
    assert_eq!(cmd(&mut c, &["CLUSTER", "SAVECONFIG"]), Value::Okay);
    assert_eq!(floors(&n.file), before);
}

#[test]
fn resharding_and_a_new_primary_under_load_lose_no_key() {
    if Command::new("redis-cli").arg("--version").output().is_err() {
        return missing_client("redis-cli");
    }
    if !python3_runs("import redis.cluster") {
        return missing_client("redis-py");
    }
    let (nodes, addrs) = start_nodes(4, "cluster-reshard");
    let mut args = vec!["--cluster", "create"];
    args.extend(addrs[..3].iter().map(String::as_str));
    args.push("--cluster-yes");
    let (ok, out) = redis_cli(&args);
    assert!(ok, "{out}");
    // A client writes (each key once, counted when acknowledged) and reads back what it
    // wrote, following MOVED and ASK, until the stop file appears; then it checks
    // every acknowledged key.
    let stop = temp("cluster-reshard", "stop");
    let _ = std::fs::remove_file(&stop);
    let script = format!(
        r#"
import os, time
import redis.exceptions as rx
from redis.cluster import RedisCluster
rc = RedisCluster(host='127.0.0.1', port={port}, protocol=2)
def retried(f):
    # While slots move, the nodes the client asks for the slot map can answer a few
    # milliseconds apart and differ on the slots moved meanwhile; redis-py then gives
    # up its refresh (RedisClusterException): a client tries again.
    for _ in range(100):
        try:
            return f()
        except (rx.RedisClusterException, rx.MovedError, rx.AskError, rx.TryAgainError):
            time.sleep(0.01)
    return f()
acked, bad, i = [], 0, 0
while not os.path.exists({stop:?}) and i < 200000:
    retried(lambda: rc.set('w:%d' % i, i))
    acked.append(i)
    j = acked[(i * 7919) % len(acked)]
    if retried(lambda: rc.get('w:%d' % j)) != str(j).encode():
        bad += 1
    i += 1
missing = [k for k in acked if retried(lambda: rc.get('w:%d' % k)) != str(k).encode()]
print(len(acked), bad, len(missing))
"#,
        port = nodes[0].port,
        stop = stop.to_str().unwrap()
    );
    let client = Command::new("python3")
        .args(["-c", &script])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    std::thread::sleep(std::time::Duration::from_millis(500));
    let ids: Vec<String> = nodes[..2]
        .iter()
        .map(|n| {
            let mut c = connect(&format!("127.0.0.1:{}", n.port));
            redis::cmd("CLUSTER").arg("MYID").query(&mut c).unwrap()
        })
        .collect();
    let (ok, out) = redis_cli(&[
        "--cluster",
        "reshard",
        &addrs[0],
        "--cluster-from",
        &ids[0],
        "--cluster-to",
        &ids[1],
        "--cluster-slots",
        "1000",
        "--cluster-yes",
    ]);
    assert!(ok, "{out}");
    // A fourth primary joins and takes its share.
    let (ok, out) = redis_cli(&["--cluster", "add-node", &addrs[3], &addrs[0]]);
    assert!(
        ok && out.contains("[OK] New node added correctly."),
        "{out}"
    );
    until(20, "the new node is known to all", || {
        let (ok, out) = redis_cli(&["--cluster", "check", &addrs[0]]);
        ok && out.matches("M: ").count() == 4 && out.contains("[OK] All nodes agree")
    });
    let (ok, out) = redis_cli(&[
        "--cluster",
        "rebalance",
        &addrs[0],
        "--cluster-use-empty-masters",
    ]);
    assert!(ok, "{out}");
    std::fs::write(&stop, b"").unwrap();
    let out = client.wait_with_output().expect("the client ran");
    let text = String::from_utf8_lossy(&out.stdout);
    let words: Vec<u64> = text
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(
        words.len(),
        3,
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(words[0] > 500, "acknowledged writes: {text}");
    assert_eq!(
        (words[1], words[2]),
        (0, 0),
        "bad reads, missing keys: {text}"
    );
    let (ok, out) = redis_cli(&["--cluster", "check", &addrs[2]]);
    assert!(ok && out.contains("[OK] All 16384 slots covered."), "{out}");
    assert!(!out.contains("[WARNING]"), "{out}");
    // Every primary serves slots now, and the keys add up.
    let mut total = 0;
    for a in &addrs {
        let mut c = connect(a);
        let Value::Int(k) = cmd(&mut c, &["DBSIZE"]) else {
            panic!()
        };
        assert!(k > 0, "{a} holds no key");
        total += k as u64;
    }
    assert_eq!(total, words[0]);
}

/// The port of the node serving `key` (asked of `port`, following MOVED).
fn owner_port(port: u16, key: &str) -> u16 {
    let mut c = connect(&format!("127.0.0.1:{port}"));
    match try_cmd(&mut c, &["GET", key]) {
        Ok(_) => port,
        Err(e) => {
            let (addr, _) = e.redirect_node().expect("MOVED");
            addr.rsplit_once(':').unwrap().1.parse().unwrap()
        }
    }
}

#[test]
fn a_failed_primary_is_replaced_by_its_replica_without_losing_acknowledged_writes() {
    if Command::new("redis-cli").arg("--version").output().is_err() {
        return missing_client("redis-cli");
    }
    let (mut nodes, addrs) = start_nodes(6, "cluster-failover");
    let mut args = vec!["--cluster", "create"];
    args.extend(addrs.iter().map(String::as_str));
    args.extend(["--cluster-replicas", "1", "--cluster-yes"]);
    let (ok, out) = redis_cli(&args);
    assert!(ok, "{out}");
    until(10, "replicas in sync", || {
        nodes.iter().all(|n| {
            let mut c = connect(&format!("127.0.0.1:{}", n.port));
            let info: String = redis::cmd("INFO").arg("replication").query(&mut c).unwrap();
            info.contains("role:master") || info.contains("master_link_status:up")
        })
    });
    // Writes to one primary, each acknowledged by its replica (WAIT 1).
    let victim = owner_port(nodes[0].port, "foo");
    let mut c = connect(&format!("127.0.0.1:{victim}"));
    let mut acked = Vec::new();
    let mut i = 0;
    while acked.len() < 300 {
        let key = format!("k{i}");
        i += 1;
        if try_cmd(&mut c, &["SET", &key, "v"]).is_err() {
            continue; // another primary's slot
        }
        if cmd(&mut c, &["WAIT", "1", "1000"]) == Value::Int(1) {
            acked.push(key);
        }
    }
    let survivor = nodes.iter().find(|n| n.port != victim).unwrap().port;
    let killed = Instant::now();
    nodes.iter_mut().find(|n| n.port == victim).unwrap().proc = None;
    until(
        30,
        "a replica takes over the failed primary's slots",
        || owner_port(survivor, "foo") != victim,
    );
    let took = killed.elapsed();
    eprintln!("failover after kill -9: {took:?} (node timeout 2000 ms)");
    let promoted = owner_port(survivor, "foo");
    let mut p = connect(&format!("127.0.0.1:{promoted}"));
    let missing: Vec<&String> = acked
        .iter()
        .filter(|k| cmd(&mut p, &["GET", k]) != bulk("v"))
        .collect();
    assert!(
        missing.is_empty(),
        "{} of {} lost: {missing:?}",
        missing.len(),
        acked.len()
    );
    let info: String = redis::cmd("CLUSTER").arg("INFO").query(&mut p).unwrap();
    assert!(info.contains("cluster_state:ok"), "{info}");
    // The old primary, back on its file, follows the new one.
    nodes.iter_mut().find(|n| n.port == victim).unwrap().start();
    until(20, "the old primary becomes a replica", || {
        let mut c = connect(&format!("127.0.0.1:{victim}"));
        let info: String = redis::cmd("INFO").arg("replication").query(&mut c).unwrap();
        info.contains("role:slave")
            && info.contains(&format!("master_port:{promoted}"))
            && info.contains("master_link_status:up")
    });
    let mut v = connect(&format!("127.0.0.1:{victim}"));
    cmd(&mut v, &["READONLY"]);
    assert_eq!(cmd(&mut v, &["GET", &acked[0]]), bulk("v"));
    until(20, "the cluster agrees again", || {
        let (ok, out) = redis_cli(&["--cluster", "check", &format!("127.0.0.1:{survivor}")]);
        ok && out.contains("[OK] All nodes agree") && out.contains("[OK] All 16384 slots covered.")
    });
    // A manual failover back, under writes: the primary holds writes until its replica
    // has caught up, so every write it acknowledged is on the replica that takes over.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut c = connect(&format!("127.0.0.1:{promoted}"));
            let mut acked = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) && acked.len() < 1_000_000 {
                let key = format!("{{foo}}:{}", acked.len());
                match try_cmd(&mut c, &["SET", &key, "w"]) {
                    Ok(_) => acked.push(key),
                    Err(_) => break, // MOVED: the slot has a new primary
                }
            }
            acked
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(cmd(&mut v, &["CLUSTER", "FAILOVER"]), Value::Okay);
    until(10, "the manual failover is seen", || {
        owner_port(survivor, "foo") == victim
    });
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let written = writer.join().expect("the writer ran");
    assert!(written.len() > 100, "{} writes", written.len());
    let lost: Vec<&String> = written
        .iter()
        .filter(|k| cmd(&mut v, &["GET", k]) != bulk("w"))
        .collect();
    assert!(
        lost.is_empty(),
        "{} of {} acknowledged writes lost in the manual failover: {:?}",
        lost.len(),
        written.len(),
        &lost[..lost.len().min(5)]
    );
    assert_eq!(cmd(&mut v, &["GET", &acked[0]]), bulk("v"));
    // FORCE takes over at once, without the primary.
    let mut p = connect(&format!("127.0.0.1:{promoted}"));
    until(10, "the old primary follows the new one", || {
        let info: String = redis::cmd("INFO").arg("replication").query(&mut p).unwrap();
        info.contains("role:slave") && info.contains("master_link_status:up")
    });
    assert_eq!(cmd(&mut p, &["CLUSTER", "FAILOVER", "FORCE"]), Value::Okay);
    until(10, "the forced failover is seen", || {
        owner_port(survivor, "foo") == promoted
    });
}

#[test]
fn migrate_moves_keys_to_wirespeed_and_to_redis() {
    let (_a, a) = kvs_serve(&["--port", "0"]);
    let (_b, b) = kvs_serve(&["--port", "0"]);
    let mut ca = connect(&a);
    let mut cb = connect(&b);
    let bport = b.rsplit_once(':').unwrap().1.to_string();
    cmd(&mut ca, &["RPUSH", "l", "x", "y"]);
    cmd(&mut ca, &["SET", "s", "v", "EX", "1000"]);
    cmd(&mut ca, &["HSET", "h", "f", "1"]);
    assert_eq!(
        cmd(&mut ca, &["MIGRATE", "127.0.0.1", &bport, "l", "0", "1000"]),
        Value::Okay
    );
    assert_eq!(cmd(&mut ca, &["EXISTS", "l"]), Value::Int(0));
    assert_eq!(
        cmd(&mut cb, &["LRANGE", "l", "0", "-1"]),
        Value::Array(vec![bulk("x"), bulk("y")])
    );
    // COPY keeps the source; an existing target key needs REPLACE.
    let args = [
        "MIGRATE",
        "127.0.0.1",
        &bport,
        "",
        "0",
        "1000",
        "COPY",
        "KEYS",
        "s",
        "h",
    ];
    assert_eq!(cmd(&mut ca, &args), Value::Okay);
    assert_eq!(cmd(&mut ca, &["EXISTS", "s", "h"]), Value::Int(2));
    let ttl = match cmd(&mut cb, &["TTL", "s"]) {
        Value::Int(t) => t,
        v => panic!("{v:?}"),
    };
    assert!((990..=1000).contains(&ttl), "{ttl}");
    let e = try_cmd(&mut ca, &args).unwrap_err();
    assert!(e.to_string().contains("BUSYKEY"), "{e}");
    let mut replace = args.to_vec();
    replace.insert(7, "REPLACE");
    assert_eq!(cmd(&mut ca, &replace), Value::Okay);
    assert_eq!(
        cmd(
            &mut ca,
            &["MIGRATE", "127.0.0.1", &bport, "nothing", "0", "1000"]
        ),
        Value::SimpleString("NOKEY".into())
    );
    // To a Redis server: the payload is Redis's DUMP format.
    let Some((_r, raddr)) = common::redis_server() else {
        return missing_client("redis-server");
    };
    let rport = raddr.rsplit_once(':').unwrap().1.to_string();
    assert_eq!(
        cmd(&mut ca, &["MIGRATE", "127.0.0.1", &rport, "h", "0", "1000"]),
        Value::Okay
    );
    let mut cr = connect(&raddr);
    assert_eq!(cmd(&mut cr, &["HGET", "h", "f"]), bulk("1"));
    assert_eq!(cmd(&mut ca, &["EXISTS", "h"]), Value::Int(0));
}

#[test]
fn the_bus_listens_on_cluster_port_and_nodes_meet_there() {
    // Two nodes whose bus ports are not their port plus 10000. The bus ports come from
    // below the ephemeral range, where the other tests' ports and bus ports (their port
    // plus 10000) never are, so the tests running beside this one can't take them.
    let mut nodes = Vec::new();
    for i in 0..2 {
        let port = cluster_port();
        let bus = (0..1000)
            .map(|k| 20_000 + ((port as u32 * 7 + i * 331 + k * 13) % 10_000) as u16)
            .find(|&b| std::net::TcpListener::bind(("127.0.0.1", b)).is_ok())
            .expect("a free bus port");
        let file = temp("cluster-port", &format!("nodes-{i}.conf"));
        let _ = std::fs::remove_file(&file);
        let f = file.to_str().unwrap().to_string();
        let (p, b) = (port.to_string(), bus.to_string());
        let (server, _) = kvs_serve(&[
            "--port",
            &p,
            "--cluster-enabled",
            "--cluster-config-file",
            &f,
            "--cluster-port",
            &b,
        ]);
        nodes.push((server, port, bus));
    }
    let mut a = connect(&format!("127.0.0.1:{}", nodes[0].1));
    assert_eq!(
        cmd(&mut a, &["CONFIG", "GET", "cluster-port"]),
        Value::Array(vec![bulk("cluster-port"), bulk(&nodes[0].2.to_string())])
    );
    let e = try_cmd(&mut a, &["CONFIG", "SET", "cluster-port", "1"]).unwrap_err();
    assert!(e.to_string().contains("immutable"), "{e}");
    let (b_port, b_bus) = (nodes[1].1.to_string(), nodes[1].2.to_string());
    assert_eq!(
        cmd(&mut a, &["CLUSTER", "MEET", "127.0.0.1", &b_port, &b_bus]),
        Value::Okay
    );
    // Both see each other, connected, at `ip:port@bus`.
    for (me, other) in [(0, 1), (1, 0)] {
        let mut c = connect(&format!("127.0.0.1:{}", nodes[me].1));
        let want = format!("127.0.0.1:{}@{}", nodes[other].1, nodes[other].2);
        until(10, "the nodes meet over the configured bus ports", || {
            let text: String = redis::cmd("CLUSTER").arg("NODES").query(&mut c).unwrap();
            text.lines()
                .any(|l| l.contains(&want) && l.contains("connected") && !l.contains("handshake"))
        });
        let text: String = redis::cmd("CLUSTER").arg("NODES").query(&mut c).unwrap();
        let mine = format!("127.0.0.1:{}@{}", nodes[me].1, nodes[me].2);
        assert!(
            text.lines()
                .any(|l| l.contains("myself") && l.contains(&mine)),
            "{text}"
        );
    }
}

/// A damaged `nodes.conf` is refused at start with one line naming the file, the line
/// and the problem, and the file is left as it was.
#[test]
fn a_damaged_nodes_file_is_refused_with_its_line() {
    let good = "\
07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004 slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected
e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@31001 myself,master - 0 0 1 connected 0-5460
292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:30003@31003 master - 0 1426238318243 3 connected 10923-16383
vars currentEpoch 6 lastVoteEpoch 2
";
    let cases = [
        (
            good.replace("1426238318243 3 connected", "1426238318243 8 connected"),
            "line 3: config epoch 8 is past currentEpoch 6",
        ),
        (
            good.replace("currentEpoch 6", "currentEpoch 18446744073709551615"),
            "line 4: a bad vars value",
        ),
        (
            good.replace("connected 10923-16383", "connected 5000-16383"),
            "slot 5000 is claimed by node",
        ),
        (
            good.replace(
                "myself,master - 0 0 1 connected 0-5460",
                "myself,slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 0 1 connected 0-5460",
            ),
            "replicates itself",
        ),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let file = temp("cluster-damaged", &format!("nodes-{i}.conf"));
        std::fs::write(&file, text).unwrap();
        let port = cluster_port().to_string();
        let out = common::wirespeed(&[
            "kvs",
            "serve",
            "--port",
            &port,
            "--cluster-enabled",
            "--cluster-config-file",
            file.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "started on a damaged file: {want}");
        assert!(err.contains(want), "{err} (wanted {want})");
        assert!(err.contains(file.to_str().unwrap()), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert_eq!(
            &std::fs::read_to_string(&file).unwrap(),
            text,
            "the file changed"
        );
    }
}

/// A bus message with an epoch past the bound (2^64 - 1 would wrap the next
/// election's epoch to 0) is refused; a node whose announced address cannot be reached
/// stays in handshake and nothing it says counts; a reachable node's sane epoch is
/// taken once its handshake completes.
#[test]
fn the_bus_refuses_an_epoch_past_the_bound_and_trusts_no_unreachable_node() {
    let port = cluster_port();
    let file = temp("cluster-epoch", "nodes.conf");
    let mut node = Node {
        port,
        file,
        proc: None,
    };
    node.start();
    let mut c = connect(&format!("127.0.0.1:{port}"));
    let epoch = |c: &mut redis::Connection| -> String {
        let info: String = redis::cmd("CLUSTER").arg("INFO").query(c).unwrap();
        info.lines()
            .find_map(|l| l.strip_prefix("cluster_current_epoch:"))
            .unwrap_or("")
            .trim()
            .to_string()
    };
    assert_eq!(epoch(&mut c), "0");
    // A bus port for the test's node, so the server's link to it works.
    let fake_bus = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let fake_cport = fake_bus.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in fake_bus.incoming().flatten() {
            held.push(s);
        }
    });
    let meet = |id: char, cport: u16, current: &str| {
        use std::io::Write;
        // The bus may start listening a moment after the client port.
        let mut bus = None;
        common::until(5, "the bus port listening", || {
            bus = std::net::TcpStream::connect(("127.0.0.1", port + 10_000)).ok();
            bus.is_some()
        });
        let mut bus = bus.unwrap();
        let id = id.to_string().repeat(40);
        let line = format!("MEET {id} 127.0.0.1 1 0 {cport} m - 0 {current} 0 - 0\n");
        bus.write_all(line.as_bytes()).unwrap();
        bus
    };
    let mut held = vec![
        meet('f', fake_cport, "18446744073709551615"),
        meet('f', fake_cport, "281474976710657"),
    ];
    // A made-up node at an address where nothing listens.
    for _ in 0..5 {
        held.push(meet('e', 1, "7"));
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(epoch(&mut c), "0", "an epoch was adopted");
    common::until(5, "the reachable node's sane epoch taken", || {
        held.push(meet('f', fake_cport, "5"));
        std::thread::sleep(std::time::Duration::from_millis(100));
        epoch(&mut c) == "5"
    });
}

/// Idle connections to the bus cost no thread each, and past the limit they are
/// closed; the node goes on answering.
#[test]
fn idle_bus_connections_cost_no_thread_each_and_are_bounded() {
    let port = cluster_port();
    let file = temp("cluster-bus-conns", "nodes.conf");
    let mut node = Node {
        port,
        file,
        proc: None,
    };
    node.start();
    let pid = node.proc.as_ref().unwrap().0.id();
    let threads = || -> usize {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("Threads:"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let mut c = connect(&format!("127.0.0.1:{port}"));
    common::until(5, "the bus port listening", || {
        std::net::TcpStream::connect(("127.0.0.1", port + 10_000)).is_ok()
    });
    let before = threads();
    let conns: Vec<std::net::TcpStream> = (0..600)
        .map(|_| std::net::TcpStream::connect(("127.0.0.1", port + 10_000)).unwrap())
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let during = threads();
    assert!(
        during <= before + 2,
        "{before} threads before, {during} with 600 idle connections"
    );
    // The connections past the limit were closed by the node.
    let closed = conns
        .iter()
        .filter(|s| {
            use std::io::Read;
            s.set_nonblocking(true).unwrap();
            match (&**s).read(&mut [0u8; 1]) {
                Ok(0) => true,
                Ok(_) => false,
                Err(e) => !matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ),
            }
        })
        .count();
    assert!(
        closed >= 600 - 512,
        "only {closed} of 600 closed past the limit of 512"
    );
    let info: String = redis::cmd("CLUSTER").arg("INFO").query(&mut c).unwrap();
    assert!(info.contains("cluster_state:"), "{info}");
}

/// Redis's binary cluster bus, as redis-server 7.0 speaks it: a node that only listens
/// on a bus port is MEET by a redis-server node; its MEET decodes (and encodes back to
/// the same bytes), and the PONG this side encodes, naming itself and claiming slots,
/// makes the Redis node take it as a connected primary serving those slots.
#[test]
fn redis_cluster_bus_messages_decode_and_a_redis_node_takes_a_pong() {
    use std::io::{Read, Write};
    use wirespeed_kvs::cluster::redis_bus::{self as bus, Body, Message};
    if common::redis_server().is_none() {
        return missing_client("redis-server");
    }
    let dir = temp("cluster-redis-bus", "redis");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let rport = cluster_port();
    let _redis = Killed(
        Command::new("redis-server")
            .args(["--port", &rport.to_string(), "--bind", "127.0.0.1"])
            .args([
                "--cluster-enabled",
                "yes",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .arg("--dir")
            .arg(&dir)
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("redis-server"),
    );
    let raddr = format!("127.0.0.1:{rport}");
    until(10, "redis-server starts", || {
        std::net::TcpStream::connect(&raddr).is_ok()
    });
    let mut redis = connect(&raddr);
    let Value::BulkString(rid) = cmd(&mut redis, &["CLUSTER", "MYID"]) else {
        panic!()
    };
    // This side: a bus port, and a client port 10000 below it (never connected to).
    let listener = loop {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        if l.local_addr().unwrap().port() > 10_000 {
            break l;
        }
    };
    let cport = listener.local_addr().unwrap().port();
    let port = cport - 10_000;
    let meet = cmd(
        &mut redis,
        &[
            "CLUSTER",
            "MEET",
            "127.0.0.1",
            &port.to_string(),
            &cport.to_string(),
        ],
    );
    assert_eq!(meet, Value::Okay);
    let (mut link, _) = listener.accept().unwrap();
    link.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    let read_message = |link: &mut std::net::TcpStream| {
        let mut buf = vec![0u8; 8];
        link.read_exact(&mut buf).unwrap();
        let n = bus::message_len(&buf).unwrap();
        buf.resize(n, 0);
        link.read_exact(&mut buf[8..]).unwrap();
        let (m, used) = bus::decode(&buf).unwrap();
        assert_eq!(used, n);
        (m, buf)
    };
    let (m, raw) = read_message(&mut link);
    assert_eq!(bus::encode(&m), raw, "the same bytes back");
    let h = &m.header;
    assert_eq!(h.kind, bus::kind::MEET);
    assert_eq!(
        bus::text(&h.sender),
        String::from_utf8(rid.clone()).unwrap()
    );
    assert_eq!((h.port, h.cport), (rport, rport + 10_000));
    assert_eq!(h.flags & bus::flag::MASTER, bus::flag::MASTER);
    assert!(h.slots.iter().all(|&b| b == 0), "no slots yet");
    assert_eq!(h.slaveof, [0; bus::NAME_LEN]);
    let Body::Ping { gossip, .. } = &m.body else {
        panic!("{:?}", m.body)
    };
    // It gossips about the only other node it knows: this one, in handshake.
    assert!(gossip.iter().all(|g| g.cport == cport || g.port == rport));
    // The answer: a PONG from a primary named here, claiming slots 0 to 99.
    let name = "0123456789abcdef0123456789abcdef01234567";
    let mut slots = Box::new([0u8; bus::SLOTS / 8]);
    for s in 0..100 {
        slots[s >> 3] |= 1 << (s & 7);
    }
    let pong = Message {
        header: bus::Header {
            kind: bus::kind::PONG,
            port,
            pport: 0,
            cport,
            current_epoch: 1,
            config_epoch: 1,
            offset: 0,
            sender: bus::field(name),
            slots,
            slaveof: [0; bus::NAME_LEN],
            myip: bus::field("127.0.0.1"),
            flags: bus::flag::MASTER,
            state: 0,
            mflags: [0; 3],
        },
        body: Body::Ping {
            gossip: Vec::new(),
            exts: Vec::new(),
        },
    };
    // The first renames the handshake node; the next (once known by name) gives its
    // slots, as between Redis nodes.
    let mut shown = String::new();
    let start = Instant::now();
    let took = loop {
        link.write_all(&bus::encode(&pong)).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        if let Value::BulkString(nodes) = cmd(&mut redis, &["CLUSTER", "NODES"]) {
            shown = String::from_utf8_lossy(&nodes).into_owned();
        }
        let known = shown.lines().any(|l| {
            l.starts_with(name)
                && l.contains(&format!("127.0.0.1:{port}@{cport}"))
                && l.contains("master")
                && !l.contains("handshake")
                && l.ends_with("0-99")
        });
        if known || start.elapsed().as_secs() > 10 {
            break known;
        }
    };
    assert!(
        took,
        "the Redis node knows this one by name with its slots:\n{shown}"
    );
    // Redis's own PINGs decode too, as long as it sends them.
    let (next, raw) = read_message(&mut link);
    assert_eq!(bus::encode(&next), raw);
    assert!(matches!(
        next.header.kind,
        bus::kind::PING | bus::kind::PONG | bus::kind::MEET
    ));
    let _ = std::fs::remove_dir_all(&dir);
}
