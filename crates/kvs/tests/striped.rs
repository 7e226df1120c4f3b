//! The striped keyspace under several event loops: exact counts under concurrent
//! INCRs, MSET atomic across shards, SCAN across shards, settings and counters shared
//! by every loop, the log rewrite across shards.

mod common;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{info_used_memory, start, Running};
use wirespeed_kvs::aof::Fsync;
use wirespeed_kvs::keyspace::{default_shards, shard_index};
use wirespeed_kvs::server::ServerConfig;

fn client(r: &Running) -> redis::Connection {
    redis::Client::open(format!("redis://{}/", r.addr))
        .and_then(|c| c.get_connection())
        .unwrap_or_else(|e| panic!("connect: {e}"))
}

fn loops(threads: usize) -> ServerConfig {
    ServerConfig {
        threads,
        ..ServerConfig::default()
    }
}

/// `n` keys named `{prefix}{i}`, each in a different shard of `shards`.
fn keys_in_distinct_shards(prefix: &str, n: usize, shards: usize) -> Vec<String> {
    let mut seen = HashSet::new();
    let keys: Vec<String> = (0..)
        .map(|i| format!("{prefix}{i}"))
        .filter(|k| seen.insert(shard_index(k.as_bytes(), shards)))
        .take(n)
        .collect();
    assert_eq!(keys.len(), n);
    keys
}

fn info_field(c: &mut redis::Connection, section: &str, field: &str) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg(section)
        .query(c)
        .unwrap_or_else(|e| panic!("{e}"));
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("{field} in {info}"))
}

#[test]
fn concurrent_incrs_are_exact_and_mset_is_atomic_across_shards() {
    let r = start(loops(4));
    let shards = default_shards(4);
    assert!(shards >= 16);
    let counters = keys_in_distinct_shards("counter:", 8, shards);
    let group = keys_in_distinct_shards("group:", 8, shards);
    let stop = Arc::new(AtomicBool::new(false));
    // Eight incrementers over the four loops, on the same eight counters.
    let incrementers: Vec<_> = (0..8)
        .map(|t| {
            let mut c = client(&r);
            let counters = counters.clone();
            std::thread::spawn(move || {
                for i in 0..400 {
                    let k = &counters[(i + t) % counters.len()];
                    let _: i64 = redis::cmd("INCR")
                        .arg(k)
                        .query(&mut c)
                        .unwrap_or_else(|e| panic!("{e}"));
                }
            })
        })
        .collect();
    // Two writers set the whole group to one value with MSET; two readers must always
    // see one value across the group (all of an MSET or none of it).
    let writers: Vec<_> = (0..2)
        .map(|t| {
            let mut c = client(&r);
            let group = group.clone();
            std::thread::spawn(move || {
                for i in 0..500 {
                    let v = format!("{t}-{i}");
                    let mut cmd = redis::cmd("MSET");
                    for k in &group {
                        cmd.arg(k).arg(&v);
                    }
                    let _: () = cmd.query(&mut c).unwrap_or_else(|e| panic!("{e}"));
                }
            })
        })
        .collect();
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let mut c = client(&r);
            let (group, stop) = (group.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut reads = 0;
                while !stop.load(Ordering::Relaxed) || reads < 10 {
                    let vs: Vec<Option<String>> = redis::cmd("MGET")
                        .arg(&group)
                        .query(&mut c)
                        .unwrap_or_else(|e| panic!("{e}"));
                    let distinct: HashSet<&Option<String>> = vs.iter().collect();
                    assert_eq!(distinct.len(), 1, "a half-applied MSET: {vs:?}");
                    // DEL and EXISTS over the shards of the group and a missing key.
                    let n: i64 = redis::cmd("EXISTS")
                        .arg(&group)
                        .arg("nosuch")
                        .query(&mut c)
                        .unwrap_or_else(|e| panic!("{e}"));
                    assert!(n == 0 || n == group.len() as i64, "EXISTS saw {n}");
                    reads += 1;
                }
                reads
            })
        })
        .collect();
    for h in incrementers.into_iter().chain(writers) {
        h.join().unwrap_or_else(|_| panic!("client thread"));
    }
    stop.store(true, Ordering::Relaxed);
    for h in readers {
        let reads = h.join().unwrap_or_else(|_| panic!("reader thread"));
        assert!(reads >= 10);
    }
    let mut c = client(&r);
    let values: Vec<i64> = redis::cmd("MGET")
        .arg(&counters)
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        values,
        vec![400; 8],
        "8 clients x 400 INCRs over 8 counters"
    );
    let removed: i64 = redis::cmd("DEL")
        .arg(&group)
        .arg(&counters[..3])
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(removed, 11);
    let n: i64 = redis::cmd("DBSIZE")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(n, 5);
}

#[test]
fn scan_across_shards_returns_every_key_with_count_and_match() {
    let r = start(loops(4));
    let mut c = client(&r);
    let mut pipe = redis::pipe();
    for i in 0..1000 {
        pipe.cmd("SET").arg(format!("user:{i}")).arg(i).ignore();
        pipe.cmd("SET").arg(format!("other:{i}")).arg(i).ignore();
    }
    let _: () = pipe.query(&mut c).unwrap_or_else(|e| panic!("{e}"));
    let want: HashSet<String> = (0..1000).map(|i| format!("user:{i}")).collect();
    // Keys come and go on another loop while the scans run: the stable ones must all
    // be returned.
    let stop = Arc::new(AtomicBool::new(false));
    let churn = {
        let mut c = client(&r);
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let mut pipe = redis::pipe();
                for j in 0..50 {
                    pipe.cmd("SET").arg(format!("tmp:{i}:{j}")).arg(j).ignore();
                }
                for j in 0..50 {
                    pipe.cmd("DEL")
                        .arg(format!("tmp:{}:{j}", i.wrapping_sub(1)))
                        .ignore();
                }
                let _: () = pipe.query(&mut c).unwrap_or_else(|e| panic!("{e}"));
                i += 1;
            }
        })
    };
    for count in [1usize, 7, 100, 5000] {
        let mut got: HashSet<String> = HashSet::new();
        let mut cursor = 0u64;
        let mut calls = 0;
        loop {
            let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg("user:*")
                .arg("COUNT")
                .arg(count)
                .query(&mut c)
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(keys.iter().all(|k| k.starts_with("user:")), "{keys:?}");
            got.extend(keys);
            calls += 1;
            cursor = next;
            if cursor == 0 {
                break;
            }
            assert!(calls < 100_000, "the scan never ends");
        }
        assert_eq!(got, want, "COUNT {count}");
        if count == 5000 {
            assert!(calls <= 2, "{calls} calls with COUNT 5000");
        }
    }
    stop.store(true, Ordering::Relaxed);
    churn.join().unwrap_or_else(|_| panic!("churn thread"));
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("user:1?")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(keys.len(), 10);
}

#[test]
fn config_set_on_one_loop_is_seen_on_the_others() {
    let r = start(loops(4));
    // Connections are dealt round-robin: consecutive ones are on different loops.
    let mut a = client(&r);
    let mut b = client(&r);
    let _: () = redis::cmd("SET")
        .arg("k")
        .arg("v")
        .query(&mut b)
        .unwrap_or_else(|e| panic!("{e}"));
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg("1")
        .query(&mut a)
        .unwrap_or_else(|e| panic!("{e}"));
    let refused: redis::RedisResult<()> = redis::cmd("SET").arg("k2").arg("v").query(&mut b);
    let msg = refused.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        msg.contains("OOM"),
        "the other loop ignored maxmemory: {msg}"
    );
    // Changes from two loops add up (each applies to the current shared settings).
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg("0")
        .query(&mut b)
        .unwrap_or_else(|e| panic!("{e}"));
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("proto-inline-max-size")
        .arg("4kb")
        .query(&mut a)
        .unwrap_or_else(|e| panic!("{e}"));
    let got: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("maxmemory")
        .arg("proto-inline-max-size")
        .query(&mut b)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        got,
        ["proto-inline-max-size", "4096", "maxmemory", "0"],
        "as seen on the other loop"
    );
    let _: () = redis::cmd("SET")
        .arg("k2")
        .arg("v")
        .query(&mut b)
        .unwrap_or_else(|e| panic!("{e}"));
    // A password set on one loop applies to new connections on every loop.
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("requirepass")
        .arg("secret")
        .query(&mut a)
        .unwrap_or_else(|e| panic!("{e}"));
    for _ in 0..4 {
        let mut c = client(&r);
        let r: redis::RedisResult<Option<String>> = redis::cmd("GET").arg("k").query(&mut c);
        let msg = r.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(msg.contains("NOAUTH"), "{msg}");
    }
}

#[test]
fn info_counts_the_commands_of_every_loop() {
    let r = start(loops(4));
    let mut c = client(&r);
    let _: () = redis::cmd("SET")
        .arg("here")
        .arg("1")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    // Connected first (the client library sends commands of its own on connecting).
    let conns: Vec<redis::Connection> = (0..4).map(|_| client(&r)).collect();
    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    let clients: Vec<_> = conns
        .into_iter()
        .map(|mut c| {
            std::thread::spawn(move || {
                for i in 0..100 {
                    let key = if i % 2 == 0 { "here" } else { "missing" };
                    let _: Option<String> = redis::cmd("GET")
                        .arg(key)
                        .query(&mut c)
                        .unwrap_or_else(|e| panic!("{e}"));
                }
            })
        })
        .collect();
    for h in clients {
        h.join().unwrap_or_else(|_| panic!("client thread"));
    }
    assert_eq!(info_field(&mut c, "stats", "keyspace_hits"), 200);
    assert_eq!(info_field(&mut c, "stats", "keyspace_misses"), 200);
    // The 400 GETs, the two INFOs before and this one.
    assert_eq!(info_field(&mut c, "stats", "total_commands_processed"), 403);
}

#[test]
fn many_shards_on_one_loop_answer_like_one() {
    let r = start(ServerConfig {
        shards: 16,
        ..ServerConfig::default()
    });
    let mut c = client(&r);
    let empty_dataset = dataset_memory(&mut c);
    let mut pipe = redis::pipe();
    for i in 0..200 {
        pipe.cmd("SET")
            .arg(format!("k{i}"))
            .arg(format!("v{i}"))
            .ignore();
    }
    pipe.cmd("SET")
        .arg("ttl")
        .arg("x")
        .arg("EX")
        .arg(100)
        .ignore();
    let _: () = pipe.query(&mut c).unwrap_or_else(|e| panic!("{e}"));
    let _: () = redis::cmd("MSET")
        .arg("a")
        .arg("1")
        .arg("b")
        .arg("2")
        .arg("k5")
        .arg("five")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    let got: Vec<Option<String>> = redis::cmd("MGET")
        .arg("k7")
        .arg("nosuch")
        .arg("k5")
        .arg("a")
        .arg("b")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        got,
        [
            Some("v7".to_string()),
            None,
            Some("five".into()),
            Some("1".into()),
            Some("2".into())
        ]
    );
    let n: i64 = redis::cmd("DBSIZE")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(n, 203);
    let info: String = redis::cmd("INFO")
        .arg("keyspace")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(info.contains("db0:keys=203,expires=1,"), "{info}");
    let mut keys: Vec<String> = redis::cmd("KEYS")
        .arg("k1?")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    keys.sort();
    assert_eq!(keys.len(), 10);
    let _: () = redis::cmd("FLUSHALL")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    // Back to the empty shards' bucket arrays, as before the first key, and the
    // clients' buffers (which INFO counts in used_memory, as Redis).
    assert_eq!(info_field(&mut c, "memory", "used_memory_dataset"), 0);
    assert_eq!(dataset_memory(&mut c), empty_dataset);
    // maxmemory counts every shard: refused at the same point as with one table.
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(64 * 1024)
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    let value = vec![b'x'; 1000];
    let mut refused_at = None;
    for i in 0..200 {
        let r: redis::RedisResult<()> = redis::cmd("SET")
            .arg(format!("m{i}"))
            .arg(&value)
            .query(&mut c);
        if r.is_err() {
            refused_at = Some(i);
            break;
        }
    }
    let at = refused_at.unwrap_or_else(|| panic!("never refused"));
    // Refused once the dataset and the clients' buffers (INFO used_memory) reach the
    // limit: within one value's cost of it.
    let used = info_used_memory(&mut c);
    assert!(
        (64 * 1024 - 1200..=64 * 1024 + 1200).contains(&used) && at > 20,
        "refused at {at} with used_memory {used}"
    );
    // allkeys-lru evicts from any shard and keeps the total at the limit.
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory-policy")
        .arg("allkeys-lru")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    for i in 0..300 {
        let _: () = redis::cmd("SET")
            .arg(format!("lru{i}"))
            .arg(&value)
            .query(&mut c)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let used = info_field(&mut c, "memory", "used_memory");
    assert!(used <= 64 * 1024 + 1200, "used {used}");
    assert!(used >= 48 * 1024, "evicted far below the limit: {used}");
    assert!(info_field(&mut c, "stats", "evicted_keys") > 0);
}

#[test]
fn the_log_rewrite_walks_every_shard_while_loops_write() {
    use std::os::unix::fs::MetadataExt;
    const KEYS: u64 = 20_000;
    let dir = std::env::temp_dir().join(format!("wirespeed-striped-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("rewrite.aof");
    let _ = std::fs::remove_file(&path);
    let config = || ServerConfig {
        threads: 4,
        aof: Some((path.clone(), Fsync::EverySec)),
        ..ServerConfig::default()
    };
    let inode = |p: &std::path::Path| std::fs::metadata(p).map(|m| m.ino()).unwrap_or(0);
    let mut want: HashMap<String, String> = HashMap::new();
    {
        let r = start(config());
        let mut c = client(&r);
        for round in 0..3 {
            let mut pipe = redis::pipe();
            for i in 0..KEYS {
                pipe.cmd("SET")
                    .arg(format!("k{i}"))
                    .arg(format!("r{round}"))
                    .ignore();
            }
            let _: () = pipe.query(&mut c).unwrap_or_else(|e| panic!("{e}"));
        }
        let before = inode(&path);
        // Writers on the other loops go on through the rewrite (which takes several
        // rounds: a few thousand keys a step).
        let writers: Vec<_> = (0..3)
            .map(|t| {
                let mut c = client(&r);
                std::thread::spawn(move || {
                    let deadline = Instant::now() + Duration::from_millis(600);
                    let mut i = 0u64;
                    while Instant::now() < deadline {
                        let mut pipe = redis::pipe();
                        for j in 0..16 {
                            let n = (i * 16 + j) * 7919 % KEYS;
                            pipe.cmd("SET")
                                .arg(format!("k{n}"))
                                .arg(format!("w{t}-{i}"))
                                .ignore();
                            if j == 0 {
                                pipe.cmd("DEL").arg(format!("k{}", (n + 1) % KEYS)).ignore();
                            }
                        }
                        let _: () = pipe.query(&mut c).unwrap_or_else(|e| panic!("{e}"));
                        i += 1;
                    }
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(50));
        let _: String = redis::cmd("BGREWRITEAOF")
            .query(&mut c)
            .unwrap_or_else(|e| panic!("{e}"));
        for h in writers {
            h.join().unwrap_or_else(|_| panic!("writer"));
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while inode(&path) == before {
            assert!(Instant::now() < deadline, "the rewrite never finished");
            std::thread::sleep(Duration::from_millis(20));
        }
        let all: Vec<String> = (0..KEYS).map(|i| format!("k{i}")).collect();
        let now: Vec<Option<String>> = redis::cmd("MGET")
            .arg(&all)
            .query(&mut c)
            .unwrap_or_else(|e| panic!("{e}"));
        for (k, v) in all.into_iter().zip(now) {
            if let Some(v) = v {
                want.insert(k, v);
            }
        }
        assert!(want.len() < KEYS as usize, "the DELs removed keys");
    }
    let r = start(config());
    let mut c = client(&r);
    let n: usize = redis::cmd("DBSIZE")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(n, want.len());
    let all: Vec<&String> = want.keys().collect();
    let got: Vec<Option<String>> = redis::cmd("MGET")
        .arg(&all)
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    for (k, v) in all.into_iter().zip(got) {
        assert_eq!(v.as_ref(), want.get(k), "{k}");
    }
}

/// INFO memory's `used_memory` less `mem_clients_normal` (one INFO, so both are of the
/// same moment): the dataset's heap.
fn dataset_memory(c: &mut redis::Connection) -> usize {
    let info: String = redis::cmd("INFO")
        .arg("memory")
        .query(c)
        .unwrap_or_else(|e| panic!("{e}"));
    let field = |name: &str| -> usize {
        info.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {info}"))
    };
    field("used_memory:") - field("mem_clients_normal:")
}
