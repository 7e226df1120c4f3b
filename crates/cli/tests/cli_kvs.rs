//! `wirespeed kvs serve` as a process: no acknowledged write is lost to `kill -9` with
//! `appendfsync always`, a torn log tail is trimmed (its bytes kept in a side file),
//! SIGTERM stops cleanly.

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{kvs_serve, temp, Killed};

/// Starts the server on a free port with a log; returns the server and its address.
fn serve(aof: &Path, fsync: &str) -> (Killed, String) {
    let aof = aof.to_string_lossy();
    kvs_serve(&["--port", "0", "--aof", &aof, "--appendfsync", fsync])
}

fn connect(addr: &str) -> redis::Connection {
    redis::Client::open(format!("redis://{addr}/"))
        .and_then(|c| c.get_connection())
        .expect("connect")
}

#[test]
fn acknowledged_writes_survive_kill_9() {
    let aof = temp("kvs", "crash.aof");
    let _ = std::fs::remove_file(&aof);
    let (mut child, addr) = serve(&aof, "always");
    let acked: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let deadline = Instant::now() + Duration::from_millis(600);
    let writers: Vec<_> = (0..4)
        .map(|t| {
            let (addr, acked) = (addr.clone(), acked.clone());
            std::thread::spawn(move || {
                let mut c = connect(&addr);
                for i in 0.. {
                    if Instant::now() > deadline {
                        break;
                    }
                    let (k, v) = (format!("k{t}-{i}"), format!("v{i}"));
                    let r: redis::RedisResult<()> = redis::cmd("SET").arg(&k).arg(&v).query(&mut c);
                    if r.is_err() {
                        break;
                    }
                    acked.lock().expect("lock").push((k, v));
                }
            })
        })
        .collect();
    // Kill mid-stream, while the writers are still going.
    std::thread::sleep(Duration::from_millis(300));
    child.0.kill().expect("SIGKILL");
    let _ = child.0.wait();
    for w in writers {
        let _ = w.join();
    }
    let acked = acked.lock().expect("lock").clone();
    assert!(
        acked.len() > 10,
        "only {} writes before the kill",
        acked.len()
    );
    let (mut child, addr) = serve(&aof, "always");
    let mut c = connect(&addr);
    for (k, v) in &acked {
        let got: Option<String> = redis::cmd("GET").arg(k).query(&mut c).expect("GET");
        assert_eq!(got.as_deref(), Some(v.as_str()), "acknowledged {k} lost");
    }
    // SIGTERM: a clean stop.
    let pid = child.0.id().to_string();
    let ok = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill -TERM");
    assert!(ok.success());
    let status = child.0.wait().expect("wait");
    assert!(status.success(), "{status:?}");
}

/// What one client of [`writes_from_several_loops_survive_kill_9_in_order`] had
/// acknowledged: the last value of its own key, and its INCRs of the shared counter.
#[derive(Clone, Copy, Debug, Default)]
struct Acked {
    own: i64,
    incrs: i64,
}

/// Six clients on four event loops, each writing increasing values to its own key and
/// incrementing one shared counter, until `deadline` (or the server is gone).
fn run_clients(addr: &str, deadline: Instant) -> Vec<std::thread::JoinHandle<Acked>> {
    (0..6)
        .map(|t| {
            let mut c = connect(addr);
            std::thread::spawn(move || {
                let mut acked = Acked::default();
                for i in 1.. {
                    if Instant::now() > deadline {
                        break;
                    }
                    let r: redis::RedisResult<()> = redis::cmd("SET")
                        .arg(format!("own{t}"))
                        .arg(i)
                        .query(&mut c);
                    if r.is_err() {
                        break;
                    }
                    acked.own = i;
                    let r: redis::RedisResult<i64> = redis::cmd("INCR").arg("shared").query(&mut c);
                    if r.is_err() {
                        break;
                    }
                    acked.incrs += 1;
                }
                acked
            })
        })
        .collect()
}

#[test]
fn writes_from_several_loops_survive_kill_9_in_order() {
    let aof = temp("kvs", "loops-crash.aof");
    let _ = std::fs::remove_file(&aof);
    let path = aof.to_string_lossy().to_string();
    let serve4 = || {
        kvs_serve(&[
            "--port",
            "0",
            "--threads",
            "4",
            "--aof",
            &path,
            "--appendfsync",
            "always",
        ])
    };
    let read = |addr: &str| -> (Vec<i64>, i64) {
        let mut c = connect(addr);
        let own: Vec<Option<i64>> = redis::cmd("MGET")
            .arg((0..6).map(|t| format!("own{t}")).collect::<Vec<_>>())
            .query(&mut c)
            .expect("MGET");
        let shared: Option<i64> = redis::cmd("GET").arg("shared").query(&mut c).expect("GET");
        (
            own.into_iter().map(|v| v.unwrap_or(0)).collect(),
            shared.unwrap_or(0),
        )
    };
    // Killed mid-stream: every acknowledged write is there, and at most the one write
    // each client had in flight besides.
    let (mut child, addr) = serve4();
    let clients = run_clients(&addr, Instant::now() + Duration::from_secs(5));
    std::thread::sleep(Duration::from_millis(400));
    child.0.kill().expect("SIGKILL");
    let _ = child.0.wait();
    let acked: Vec<Acked> = clients
        .into_iter()
        .map(|h| h.join().expect("client"))
        .collect();
    let incrs: i64 = acked.iter().map(|a| a.incrs).sum();
    assert!(incrs > 20, "only {incrs} INCRs before the kill");
    let (mut child, addr) = serve4();
    let (own, shared) = read(&addr);
    for (t, a) in acked.iter().enumerate() {
        assert!(
            own[t] == a.own || own[t] == a.own + 1,
            "own{t}: acknowledged {}, recovered {}",
            a.own,
            own[t]
        );
    }
    assert!(
        shared >= incrs && shared <= incrs + 6,
        "shared counter: {incrs} INCRs acknowledged, {shared} recovered"
    );
    // Every write acknowledged, then killed: exactly the acknowledged state.
    let base = shared;
    let clients = run_clients(&addr, Instant::now() + Duration::from_millis(300));
    let acked: Vec<Acked> = clients
        .into_iter()
        .map(|h| h.join().expect("client"))
        .collect();
    child.0.kill().expect("SIGKILL");
    let _ = child.0.wait();
    let incrs: i64 = acked.iter().map(|a| a.incrs).sum();
    let (mut child, addr) = serve4();
    let (own, shared) = read(&addr);
    assert_eq!(shared, base + incrs, "the shared counter after restart");
    for (t, a) in acked.iter().enumerate() {
        assert_eq!(own[t], a.own, "own{t}");
    }
    child.0.kill().expect("SIGKILL");
    let _ = child.0.wait();
}

#[test]
fn a_torn_log_tail_is_trimmed_on_restart() {
    let aof = temp("kvs", "torn.aof");
    let _ = std::fs::remove_file(&aof);
    let (mut child, addr) = serve(&aof, "always");
    let mut c = connect(&addr);
    for i in 0..20 {
        let _: () = redis::cmd("SET")
            .arg(format!("k{i}"))
            .arg(i)
            .query(&mut c)
            .expect("SET");
    }
    let _: () = redis::cmd("INCRBY")
        .arg("n")
        .arg(5)
        .query(&mut c)
        .expect("INCRBY");
    let _: () = redis::cmd("DEL").arg("k3").query(&mut c).expect("DEL");
    child.0.kill().expect("SIGKILL");
    let _ = child.0.wait();
    // Half of a record at the end, as a crash in the middle of a write leaves it.
    let mut bytes = std::fs::read(&aof).expect("read log");
    let whole = bytes.len();
    bytes.extend_from_slice(&[40, 0, 0, 0, 1, 2, 3, 4, 1, 2]);
    std::fs::write(&aof, &bytes).expect("write log");
    let (mut child, addr) = serve(&aof, "everysec");
    let mut c = connect(&addr);
    let n: i64 = redis::cmd("GET").arg("n").query(&mut c).expect("GET");
    assert_eq!(n, 5);
    let gone: Option<String> = redis::cmd("GET").arg("k3").query(&mut c).expect("GET");
    assert_eq!(gone, None);
    let size: i64 = redis::cmd("DBSIZE").query(&mut c).expect("DBSIZE");
    assert_eq!(size, 20);
    assert_eq!(
        std::fs::metadata(&aof).map(|m| m.len() as usize).ok(),
        Some(whole)
    );
    // The cut bytes are kept beside the log.
    let dir = aof.parent().expect("dir");
    let side: Vec<_> = std::fs::read_dir(dir)
        .expect("read dir")
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("torn.aof.torn-")
        })
        .map(|e| std::fs::read(e.path()).expect("read side file"))
        .collect();
    assert_eq!(side, vec![bytes[whole..].to_vec()]);
    child.0.kill().expect("SIGKILL");
    let _ = child.0.wait();
}

#[test]
fn bad_settings_are_refused_with_one_line() {
    // A usage error: status 1 and one line, like every other subcommand.
    let out = common::wirespeed(&["kvs", "serve", "--appendfsync", "sometimes"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("always, everysec or no"), "{err}");
    // A port already taken: a clear error, not a panic.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = taken.local_addr().expect("addr").port().to_string();
    let out = common::wirespeed(&["kvs", "serve", "--port", &port]);
    assert_ne!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot listen on"), "{err}");
}

#[test]
fn a_config_file_sets_what_flags_do_and_flags_win() {
    let aof = temp("kvs", "conf.aof");
    let _ = std::fs::remove_file(&aof);
    let conf = temp("kvs", "kvs.conf");
    std::fs::write(
        &conf,
        format!(
            "# wirespeed kvs\nport 1\nthreads 2\nrequirepass \"pa ss\"\nmaxmemory 10mb\n\
             appendonly yes\nappendfilename \"{}\"\nappendfsync always\n",
            aof.display()
        ),
    )
    .expect("write the config");
    let conf_s = conf.to_string_lossy();
    // --port 0 wins over the file's port 1.
    let (mut child, addr) = kvs_serve(&["--config", &conf_s, "--port", "0"]);
    let mut c = connect(&addr);
    let denied: redis::RedisResult<()> = redis::cmd("SET").arg("k").arg("v").query(&mut c);
    assert!(denied.is_err(), "requirepass from the file");
    let _: () = redis::cmd("AUTH").arg("pa ss").query(&mut c).expect("auth");
    let _: () = redis::cmd("SET")
        .arg("k")
        .arg("v")
        .query(&mut c)
        .expect("set");
    let got: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("threads")
        .arg("maxmemory")
        .arg("appendonly")
        .arg("appendfsync")
        .query(&mut c)
        .expect("config get");
    assert_eq!(
        got,
        [
            "maxmemory",
            "10485760",
            "appendonly",
            "yes",
            "appendfsync",
            "always",
            "threads",
            "2"
        ]
    );
    let _ = child.0.kill();
    let _ = child.0.wait();
    assert!(
        std::fs::metadata(&aof).map(|m| m.len()).unwrap_or(0) > 0,
        "the file's appendfilename holds the write"
    );
    // A bad line: status 2 and one line naming the file and the line.
    std::fs::write(&conf, "port 7000\nmaxmemory lots\n").expect("write");
    let out = common::wirespeed(&["kvs", "serve", "--config", &conf_s]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("line 2") && err.contains("maxmemory"), "{err}");
    let _ = std::fs::remove_file(&aof);
    let _ = std::fs::remove_file(&conf);
}

#[test]
fn a_redis_7_configuration_file_loads_with_warnings() {
    // The file the Debian redis-server package installs (Redis 7): every directive
    // this server lacks is a warning naming its line, never a refusal.
    let path = std::path::Path::new("/etc/redis/redis.conf");
    if !path.exists() {
        return common::missing_client("/etc/redis/redis.conf (redis-server)");
    }
    let (_child, addr, before) = common::kvs_serve_start(&[
        "--config",
        path.to_str().unwrap(),
        "--port",
        "0",
        "--bind",
        "127.0.0.1",
    ]);
    let warned: Vec<&String> = before.iter().filter(|l| l.contains("ignored")).collect();
    assert!(!warned.is_empty(), "{before:?}");
    assert!(
        warned
            .iter()
            .all(|l| l.contains("/etc/redis/redis.conf: line ")),
        "{warned:?}"
    );
    assert!(
        warned.iter().any(|l| l.contains("'daemonize'")),
        "{warned:?}"
    );
    let mut c = connect(&addr);
    let pong: String = redis::cmd("PING").query(&mut c).expect("ping");
    assert_eq!(pong, "PONG");
}

#[test]
fn the_load_generator_checks_every_reply() {
    let aof = temp("kvs", "bench.aof");
    let _ = std::fs::remove_file(&aof);
    let (mut child, addr) = serve(&aof, "no");
    let out = common::wirespeed(&[
        "kvs",
        "bench",
        "--addr",
        &addr,
        "--connections",
        "4",
        "--pipeline",
        "8",
        "--requests",
        "4000",
        "--keys",
        "500",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["requests"], 4000);
    assert_eq!(v["mismatches"], 0);
    assert!(v["per_sec"].as_f64().unwrap_or(0.0) > 0.0);
    child.0.kill().expect("SIGKILL");
    let _ = child.0.wait();
}

#[test]
fn bgrewriteaof_compacts_the_log_without_losing_writes() {
    let aof = temp("kvs", "rewrite.aof");
    let _ = std::fs::remove_file(&aof);
    let (mut child, addr) = serve(&aof, "always");
    let mut c = connect(&addr);
    for round in 0..10 {
        for k in 0..200 {
            let _: () = redis::cmd("SET")
                .arg(format!("k{k}"))
                .arg(round)
                .query(&mut c)
                .expect("SET");
        }
    }
    let before = std::fs::metadata(&aof).map(|m| m.len()).expect("log size");
    let reply: String = redis::cmd("BGREWRITEAOF")
        .query(&mut c)
        .expect("BGREWRITEAOF");
    assert!(reply.contains("rewriting started"), "{reply}");
    // Writes while and after it runs.
    for k in 0..50 {
        let _: () = redis::cmd("SET")
            .arg(format!("late{k}"))
            .arg(k)
            .query(&mut c)
            .expect("SET");
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::metadata(&aof).map(|m| m.len()).unwrap_or(before) >= before / 2 {
        assert!(Instant::now() < deadline, "the log never shrank");
        std::thread::sleep(Duration::from_millis(20));
    }
    let _: () = redis::cmd("SET")
        .arg("last")
        .arg("x")
        .query(&mut c)
        .expect("SET");
    child.0.kill().expect("SIGKILL");
    let _ = child.0.wait();
    let (mut child, addr) = serve(&aof, "always");
    let mut c = connect(&addr);
    let size: i64 = redis::cmd("DBSIZE").query(&mut c).expect("DBSIZE");
    assert_eq!(size, 251);
    let v: i64 = redis::cmd("GET").arg("k7").query(&mut c).expect("GET");
    assert_eq!(v, 9);
    let v: String = redis::cmd("GET").arg("last").query(&mut c).expect("GET");
    assert_eq!(v, "x");
    child.0.kill().expect("SIGKILL");
    let _ = child.0.wait();
}

/// Runs `tool` with `args` when it is installed; None (after saying so) when it is not.
fn external(tool: &str, args: &[&str]) -> Option<String> {
    match Command::new(tool).args(args).output() {
        Ok(o) => {
            assert!(
                o.status.success(),
                "{tool} {args:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            Some(String::from_utf8_lossy(&o.stdout).into_owned())
        }
        Err(_) => {
            common::missing_client(tool);
            None
        }
    }
}

#[test]
fn redis_cli_and_redis_benchmark_work_unchanged() {
    let aof = temp("kvs", "tools.aof");
    let _ = std::fs::remove_file(&aof);
    let (mut child, addr) = serve(&aof, "no");
    let port = addr.rsplit(':').next().unwrap_or("0").to_string();
    let cli = |args: &[&str]| {
        let mut all = vec!["-p", port.as_str()];
        all.extend_from_slice(args);
        external("redis-cli", &all)
    };
    if let Some(out) = cli(&["SET", "greeting", "hello world"]) {
        assert_eq!(out.trim(), "OK");
        assert_eq!(
            cli(&["GET", "greeting"]).unwrap_or_default().trim(),
            "hello world"
        );
        assert_eq!(cli(&["INCRBY", "n", "7"]).unwrap_or_default().trim(), "7");
        assert_eq!(
            cli(&["CLUSTER", "KEYSLOT", "foo"])
                .unwrap_or_default()
                .trim(),
            "12182"
        );
        assert!(cli(&["INFO", "server"])
            .unwrap_or_default()
            .contains("redis_version:"));
        let err = cli(&["NOSUCH", "x"]).unwrap_or_default();
        assert!(err.contains("unknown command 'NOSUCH'"), "{err}");
        let scan = cli(&["--scan", "--pattern", "gree*"]).unwrap_or_default();
        assert_eq!(scan.trim(), "greeting");
    }
    if let Some(out) = external(
        "redis-benchmark",
        &["-p", &port, "-t", "set,get", "-n", "2000", "-c", "4", "-q"],
    ) {
        let rates = out.matches("requests per second").count();
        assert_eq!(rates, 2, "{out}");
    }
    child.0.kill().expect("SIGKILL");
    let _ = child.0.wait();
}
