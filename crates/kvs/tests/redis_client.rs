//! The server against a real client (the `redis` crate) and raw sockets.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::{info_used_memory, start, Running};
use wirespeed_kvs::server::ServerConfig;

fn client(r: &Running) -> redis::Connection {
    redis::Client::open(format!("redis://{}/", r.addr))
        .and_then(|c| c.get_connection())
        .unwrap_or_else(|e| panic!("connect: {e}"))
}

#[test]
fn string_commands_answer_like_redis() {
    let r = start(ServerConfig::default());
    let mut c = client(&r);
    let pong: String = redis::cmd("PING")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(pong, "PONG");
    let _: () = redis::cmd("SET")
        .arg("k")
        .arg("v1")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    let v: Option<String> = redis::cmd("GET")
        .arg("k")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(v.as_deref(), Some("v1"));
    let old: Option<String> = redis::cmd("SET")
        .arg("k")
        .arg("v2")
        .arg("GET")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(old.as_deref(), Some("v1"));
    let nx: Option<String> = redis::cmd("SET")
        .arg("k")
        .arg("x")
        .arg("NX")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(nx, None);
    let n: i64 = redis::cmd("INCRBY")
        .arg("n")
        .arg(41)
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(n, 41);
    let n: i64 = redis::cmd("INCR")
        .arg("n")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(n, 42);
    let e: redis::RedisResult<i64> = redis::cmd("INCR").arg("k").query(&mut c);
    let msg = e.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(msg.contains("not an integer"), "{msg}");
    let len: i64 = redis::cmd("APPEND")
        .arg("k")
        .arg("abc")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(len, 5);
    let _: () = redis::cmd("MSET")
        .arg("a")
        .arg("1")
        .arg("b")
        .arg("2")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    let vs: Vec<Option<String>> = redis::cmd("MGET")
        .arg("a")
        .arg("nope")
        .arg("b")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(vs, vec![Some("1".into()), None, Some("2".into())]);
    let ex: i64 = redis::cmd("EXISTS")
        .arg("a")
        .arg("b")
        .arg("c")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ex, 2);
    let d: i64 = redis::cmd("DEL")
        .arg("a")
        .arg("c")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(d, 1);
    let mut keys: Vec<String> = redis::cmd("KEYS")
        .arg("*")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    keys.sort();
    assert_eq!(keys, vec!["b", "k", "n"]);
    let size: i64 = redis::cmd("DBSIZE")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(size, 3);
    let bad: redis::RedisResult<()> = redis::cmd("NOSUCH").arg("x").query(&mut c);
    let msg = bad.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(msg.contains("unknown command 'NOSUCH'"), "{msg}");
    let bad: redis::RedisResult<()> = redis::cmd("GET").query(&mut c);
    let msg = bad.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(msg.contains("wrong number of arguments for 'get'"), "{msg}");
}

#[test]
fn expiry_and_ttls() {
    let r = start(ServerConfig::default());
    let mut c = client(&r);
    let _: () = redis::cmd("SET")
        .arg("t")
        .arg("v")
        .arg("PX")
        .arg(150)
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    let pttl: i64 = redis::cmd("PTTL")
        .arg("t")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(pttl > 0 && pttl <= 150, "{pttl}");
    let ttl: i64 = redis::cmd("TTL")
        .arg("none")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ttl, -2);
    let _: () = redis::cmd("SET")
        .arg("p")
        .arg("v")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    let ttl: i64 = redis::cmd("TTL")
        .arg("p")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ttl, -1);
    let set: i64 = redis::cmd("EXPIRE")
        .arg("p")
        .arg(100)
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(set, 1);
    let persisted: i64 = redis::cmd("PERSIST")
        .arg("p")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(persisted, 1);
    std::thread::sleep(Duration::from_millis(300));
    let v: Option<String> = redis::cmd("GET")
        .arg("t")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(v, None, "expired");
    let bad: redis::RedisResult<()> = redis::cmd("SET")
        .arg("x")
        .arg("v")
        .arg("EX")
        .arg(0)
        .query(&mut c);
    let msg = bad.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        msg.contains("invalid expire time in 'set' command"),
        "{msg}"
    );
}

#[test]
fn expire_takes_redis_7_options() {
    let r = start(ServerConfig::default());
    let mut c = client(&r);
    let _: () = redis::cmd("SET")
        .arg("k")
        .arg("v")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut q = |args: &[&str]| -> redis::RedisResult<i64> {
        let mut cmd = redis::cmd(args[0]);
        for a in &args[1..] {
            cmd.arg(*a);
        }
        cmd.query(&mut c)
    };
    // A TTL in whole seconds, with a second of slack for a slow machine.
    let near = |got: Option<i64>, want: i64| match got {
        Some(g) if want > 0 => (want - 1..=want).contains(&g),
        g => g == Some(want),
    };
    // (command, reply, TTL afterwards); no deadline counts as an infinite one.
    for (args, reply, ttl) in [
        (&["EXPIRE", "k", "100", "XX"][..], 0, -1),
        (&["EXPIRE", "k", "100", "GT"], 0, -1),
        (&["EXPIRE", "k", "100", "NX"], 1, 100),
        (&["EXPIRE", "k", "200", "NX"], 0, 100),
        (&["EXPIRE", "k", "200", "LT"], 0, 100),
        (&["EXPIRE", "k", "50", "lt"], 1, 50),
        (&["EXPIRE", "k", "20", "GT"], 0, 50),
        (&["EXPIRE", "k", "300", "XX", "GT"], 1, 300),
        (&["PEXPIRE", "k", "10000", "XX"], 1, 10),
        (&["PERSIST", "k"], 1, -1),
        (&["EXPIRE", "k", "100", "LT"], 1, 100),
        (&["EXPIRE", "missing", "100", "NX"], 0, 100),
    ] {
        assert_eq!(q(args).ok(), Some(reply), "{args:?}");
        let got = q(&["TTL", "k"]).ok();
        assert!(near(got, ttl), "TTL {got:?} after {args:?}, want {ttl}");
    }
    for (args, says) in [
        (&["EXPIRE", "k", "10", "NX", "XX"][..], "not compatible"),
        (&["EXPIRE", "k", "10", "GT", "LT"], "not compatible"),
        (&["EXPIRE", "k", "10", "SOMETIMES"], "Unsupported option"),
    ] {
        let msg = q(args).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(msg.contains(says), "{args:?}: {msg}");
    }
    let got = q(&["TTL", "k"]).ok();
    assert!(near(got, 100), "refused EXPIREs changed the TTL: {got:?}");
}

#[test]
fn pipelines_and_auth() {
    let mut config = ServerConfig::default();
    config.cmd.requirepass = Some(b"s3cret".to_vec());
    let r = start(config);
    let mut c = client(&r);
    let denied: redis::RedisResult<Option<String>> = redis::cmd("GET").arg("k").query(&mut c);
    let msg = denied.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        msg.contains("NOAUTH") || msg.contains("Authentication required"),
        "{msg}"
    );
    let wrong: redis::RedisResult<()> = redis::cmd("AUTH").arg("nope").query(&mut c);
    assert!(wrong.is_err());
    let _: () = redis::cmd("AUTH")
        .arg("s3cret")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut p = redis::pipe();
    for i in 0..100 {
        p.cmd("SET").arg(format!("k{i}")).arg(i).ignore();
    }
    for i in 0..100 {
        p.cmd("GET").arg(format!("k{i}"));
    }
    let got: Vec<i64> = p.query(&mut c).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(got, (0..100).collect::<Vec<i64>>());
}

#[test]
fn malformed_input_closes_one_client_only() {
    let r = start(ServerConfig::default());
    let mut good = client(&r);
    for bad in [
        &b"*-5x\r\n"[..],
        b"*1\r\n$999999999999\r\n",
        b"*3000000\r\n",
        b"*1\r\n:1\r\n",
        b"\"unbalanced\r\n",
    ] {
        let mut s = TcpStream::connect(r.addr).unwrap_or_else(|e| panic!("{e}"));
        s.set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap_or_else(|e| panic!("{e}"));
        s.write_all(bad).unwrap_or_else(|e| panic!("{e}"));
        let mut reply = Vec::new();
        let _ = s.read_to_end(&mut reply);
        let text = String::from_utf8_lossy(&reply);
        assert!(text.starts_with("-ERR Protocol error"), "{bad:?}: {text}");
        let pong: String = redis::cmd("PING")
            .query(&mut good)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(pong, "PONG");
    }
    // Half a request, then the rest in pieces: answered once complete.
    let mut s = TcpStream::connect(r.addr).unwrap_or_else(|e| panic!("{e}"));
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap_or_else(|e| panic!("{e}"));
    for piece in [&b"*2\r\n$4\r\nEC"[..], b"HO\r\n$2\r", b"\nhi\r\n"] {
        s.write_all(piece).unwrap_or_else(|e| panic!("{e}"));
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut buf = [0u8; 8];
    s.read_exact(&mut buf).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(&buf, b"$2\r\nhi\r\n");
}

#[test]
fn info_config_cluster_and_resp3() {
    let r = start(ServerConfig::default());
    let mut c = client(&r);
    let info: String = redis::cmd("INFO")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(info.contains("connected_clients:1"), "{info}");
    assert!(info.contains("# Keyspace"), "{info}");
    let cfg: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("proto-max-bulk*")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        cfg,
        vec![
            "proto-max-bulk-len".to_string(),
            (512 * 1024 * 1024).to_string()
        ]
    );
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("proto-max-bulk-len")
        .arg(2 * 1024 * 1024)
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    let bad: redis::RedisResult<()> = redis::cmd("CONFIG")
        .arg("SET")
        .arg("nosuch")
        .arg("1")
        .query(&mut c);
    assert!(bad.is_err());
    let fixed: redis::RedisResult<()> = redis::cmd("CONFIG")
        .arg("SET")
        .arg("port")
        .arg("1")
        .query(&mut c);
    let msg = fixed.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(msg.contains("immutable"), "{msg}");
    // The other request limits are settings too; all-or-nothing on a bad pair.
    let partial: redis::RedisResult<()> = redis::cmd("CONFIG")
        .arg("SET")
        .arg("proto-inline-max-size")
        .arg("2kb")
        .arg("client-query-buffer-limit")
        .arg("1")
        .query(&mut c);
    assert!(partial.is_err());
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("proto-inline-max-size")
        .arg("2kb")
        .arg("proto-max-multibulk-len")
        .arg("8")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    let limits: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("proto-*")
        .arg("client-query-buffer-limit")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        limits,
        [
            "proto-max-bulk-len",
            "2097152",
            "proto-max-multibulk-len",
            "8",
            "proto-inline-max-size",
            "2048",
            "client-query-buffer-limit",
            "1073741824"
        ]
    );
    for (request, error) in [
        (vec![b'a'; 3000], "too big inline request"),
        (b"*9\r\n".to_vec(), "invalid multibulk length"),
    ] {
        let mut s = TcpStream::connect(r.addr).unwrap_or_else(|e| panic!("{e}"));
        s.set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap_or_else(|e| panic!("{e}"));
        s.write_all(&request).unwrap_or_else(|e| panic!("{e}"));
        let mut reply = Vec::new();
        let _ = s.read_to_end(&mut reply);
        assert!(
            String::from_utf8_lossy(&reply).contains(error),
            "{error}: {reply:?}"
        );
    }
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("proto-max-multibulk-len")
        .arg("1024")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    let slot: i64 = redis::cmd("CLUSTER")
        .arg("KEYSLOT")
        .arg("foo")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(slot, 12182);
    let slots: Vec<(i64, i64, (String, i64, String))> = redis::cmd("CLUSTER")
        .arg("SLOTS")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(slots.len(), 1);
    assert_eq!(
        (slots[0].0, slots[0].1, slots[0].2 .1),
        (0, 16383, r.addr.port() as i64)
    );
    // A bulk over the new limit closes that client only.
    let mut s = TcpStream::connect(r.addr).unwrap_or_else(|e| panic!("{e}"));
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap_or_else(|e| panic!("{e}"));
    s.write_all(b"*2\r\n$3\r\nGET\r\n$3000000\r\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let mut reply = Vec::new();
    let _ = s.read_to_end(&mut reply);
    assert!(String::from_utf8_lossy(&reply).contains("invalid bulk length"));
    // RESP3 after HELLO 3: maps and the RESP3 null.
    let mut s = TcpStream::connect(r.addr).unwrap_or_else(|e| panic!("{e}"));
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap_or_else(|e| panic!("{e}"));
    s.write_all(b"HELLO 3\r\nGET nosuchkey\r\nQUIT\r\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let mut reply = Vec::new();
    let _ = s.read_to_end(&mut reply);
    let text = String::from_utf8_lossy(&reply);
    assert!(text.starts_with("%7\r\n$6\r\nserver\r\n"), "{text}");
    assert!(text.contains("$5\r\nproto\r\n:3\r\n"), "{text}");
    assert!(text.ends_with("_\r\n+OK\r\n"), "{text}");
}

#[test]
fn scan_walks_every_key_through_the_client_iterator() {
    let r = start(ServerConfig::default());
    let mut c = client(&r);
    for i in 0..300 {
        let _: () = redis::cmd("SET")
            .arg(format!("user:{i}"))
            .arg(i)
            .query(&mut c)
            .unwrap_or_else(|e| panic!("{e}"));
        let _: () = redis::cmd("SET")
            .arg(format!("other:{i}"))
            .arg(i)
            .query(&mut c)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let mut keys: Vec<String> = redis::cmd("SCAN")
        .cursor_arg(0)
        .arg("MATCH")
        .arg("user:*")
        .arg("COUNT")
        .arg(25)
        .clone()
        .iter(&mut c)
        .unwrap_or_else(|e| panic!("{e}"))
        .collect();
    keys.sort();
    keys.dedup();
    let mut want: Vec<String> = (0..300).map(|i| format!("user:{i}")).collect();
    want.sort();
    assert_eq!(keys, want);
    let bad: redis::RedisResult<()> = redis::cmd("SCAN").arg("x").query(&mut c);
    assert!(bad.is_err());
}

#[test]
fn maxmemory_refuses_or_evicts() {
    let mut config = ServerConfig::default();
    config.cmd.maxmemory = 64 * 1024;
    let r = start(config);
    let mut c = client(&r);
    let value = vec![b'x'; 1000];
    let mut refused = None;
    for i in 0..200 {
        let res: redis::RedisResult<()> = redis::cmd("SET")
            .arg(format!("k{i}"))
            .arg(&value)
            .query(&mut c);
        if let Err(e) = res {
            refused = Some((i, e.to_string()));
            break;
        }
    }
    let (at, msg) = refused.unwrap_or_else(|| panic!("never refused"));
    assert!(msg.contains("OOM"), "{msg}");
    // Refused once the dataset and the clients' buffers (INFO used_memory) reach the
    // limit: within one value's cost of it.
    let used = info_used_memory(&mut c);
    assert!(
        (64 * 1024 - 1200..=64 * 1024 + 1200).contains(&used) && at > 20,
        "refused at {at} with used_memory {used}"
    );
    // Reads and deletes still work; a delete makes room again (a few keys: the
    // clients' buffers, a kilobyte or two here, count against the limit too).
    let v: Option<Vec<u8>> = redis::cmd("GET")
        .arg("k0")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(v.as_deref(), Some(&value[..]));
    let _: () = redis::cmd("DEL")
        .arg("k0")
        .arg("k1")
        .arg("k2")
        .arg("k3")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    let _: () = redis::cmd("SET")
        .arg("again")
        .arg(&value)
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    // allkeys-lru: writes go on, memory stays at the limit plus one request.
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory-policy")
        .arg("allkeys-lru")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    for i in 0..500 {
        let _: () = redis::cmd("SET")
            .arg(format!("lru{i}"))
            .arg(&value)
            .query(&mut c)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let info: String = redis::cmd("INFO")
        .arg("memory")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    let used: usize = info
        .lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(usize::MAX);
    assert!(used <= 64 * 1024 + 1200, "used {used}");
    let stats: String = redis::cmd("INFO")
        .arg("stats")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!stats.contains("evicted_keys:0\r"), "{stats}");
    let last: Option<Vec<u8>> = redis::cmd("GET")
        .arg("lru499")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(last.is_some(), "the newest key survives");
}

#[test]
fn several_event_loops_share_one_keyspace() {
    let config = ServerConfig {
        threads: 3,
        ..ServerConfig::default()
    };
    let r = start(config);
    // Eight clients, dealt round-robin to the three loops, each incrementing shared
    // and own counters and reading keys the others wrote.
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let mut c = client(&r);
            std::thread::spawn(move || {
                for i in 0..500 {
                    let _: i64 = redis::cmd("INCR")
                        .arg("shared")
                        .query(&mut c)
                        .unwrap_or_else(|e| panic!("{e}"));
                    let _: () = redis::cmd("SET")
                        .arg(format!("t{t}:{i}"))
                        .arg(i)
                        .query(&mut c)
                        .unwrap_or_else(|e| panic!("{e}"));
                }
                let id: i64 = redis::cmd("CLIENT")
                    .arg("ID")
                    .query(&mut c)
                    .unwrap_or_else(|e| panic!("{e}"));
                id
            })
        })
        .collect();
    let mut ids: Vec<i64> = handles
        .into_iter()
        .map(|h| h.join().unwrap_or_else(|_| panic!("client thread")))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 8, "client ids are unique across loops");
    let mut c = client(&r);
    let shared: i64 = redis::cmd("GET")
        .arg("shared")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(shared, 8 * 500);
    let n: i64 = redis::cmd("DBSIZE")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(n, 1 + 8 * 500);
    let info: String = redis::cmd("INFO")
        .arg("clients")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    // The eight finished clients are gone (closed on their loops); this one remains.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let mut info = info;
    while !info.contains("connected_clients:1\r") && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        info = redis::cmd("INFO")
            .arg("clients")
            .query(&mut c)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    assert!(info.contains("connected_clients:1\r"), "{info}");
    let threads: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("threads")
        .query(&mut c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(threads, ["threads", "3"]);
}
