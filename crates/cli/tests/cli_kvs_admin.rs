//! Administration commands through the real binary: the slow log (threshold, order,
//! Redis's trimming of long arguments, LEN, RESET, max length, DEBUG SLEEP caught by
//! it), BGREWRITEAOF (the log shrinks to the live keys, which a restart still has),
//! SAVE/BGSAVE/LASTSAVE, the `save` schedule and SHUTDOWN SAVE/NOSAVE writing the RDB
//! file that a restart loads, INFO persistence, and LATENCY: the monitor off by default, then the events past
//! `latency-monitor-threshold` (a DEBUG SLEEP, the expiry sweep freeing a big set),
//! their replies, GRAPH, DOCTOR, RESET, and the per-command histograms.

mod common;

use std::time::{Duration, Instant};

use common::{bulk, cmd, connect, info, kvs_serve, temp, try_cmd};
use redis::{Connection, Value};

/// The argument lists of the slow log's entries, newest first.
fn slow_args(c: &mut Connection) -> Vec<Vec<Value>> {
    let Value::Array(entries) = cmd(c, &["SLOWLOG", "GET", "-1"]) else {
        panic!("SLOWLOG GET")
    };
    entries
        .into_iter()
        .map(|e| match e {
            Value::Array(f) => match &f[3] {
                Value::Array(a) => a.clone(),
                v => panic!("{v:?}"),
            },
            v => panic!("{v:?}"),
        })
        .collect()
}

#[test]
fn the_slow_log_keeps_what_ran_past_its_threshold() {
    let (_server, addr) = kvs_serve(&["--port", "0", "--enable-debug-command", "yes"]);
    let mut c = connect(&addr);
    // Default threshold 10 ms: a SET is not slow.
    cmd(&mut c, &["SET", "a", "1"]);
    assert_eq!(cmd(&mut c, &["SLOWLOG", "LEN"]), Value::Int(0));
    // DEBUG SLEEP past the threshold is.
    let t = Instant::now();
    cmd(&mut c, &["DEBUG", "SLEEP", "0.05"]);
    assert!(t.elapsed() >= Duration::from_millis(50));
    let got = slow_args(&mut c);
    assert_eq!(got, vec![vec![bulk("DEBUG"), bulk("SLEEP"), bulk("0.05")]]);
    // Every command at threshold 0, newest first, each entry whole.
    cmd(&mut c, &["SLOWLOG", "RESET"]);
    cmd(&mut c, &["CONFIG", "SET", "slowlog-log-slower-than", "0"]);
    cmd(&mut c, &["SET", "b", "2"]);
    let long = "x".repeat(200);
    cmd(&mut c, &["SET", "c", &long]);
    let many: Vec<String> = (0..40).map(|i| i.to_string()).collect();
    let mut del = vec!["DEL"];
    del.extend(many.iter().map(String::as_str));
    cmd(&mut c, &del);
    let got = slow_args(&mut c);
    // The newest: DEL with 41 arguments, cut to 31 and a note of the rest.
    assert_eq!(got[0].len(), 32);
    assert_eq!(got[0][31], bulk("... (10 more arguments)"));
    // The long value cut at 128 bytes.
    assert_eq!(
        got[1][2],
        bulk(&format!("{}... (72 more bytes)", "x".repeat(128)))
    );
    assert_eq!(got[2], vec![bulk("SET"), bulk("b"), bulk("2")]);
    let Value::Array(first) = cmd(&mut c, &["SLOWLOG", "GET", "1"]) else {
        panic!()
    };
    assert_eq!(first.len(), 1);
    // At most slowlog-max-len entries.
    cmd(&mut c, &["CONFIG", "SET", "slowlog-max-len", "3"]);
    for _ in 0..10 {
        cmd(&mut c, &["PING"]);
    }
    assert_eq!(cmd(&mut c, &["SLOWLOG", "LEN"]), Value::Int(3));
    // Negative: nothing is logged.
    cmd(&mut c, &["CONFIG", "SET", "slowlog-log-slower-than", "-1"]);
    cmd(&mut c, &["SLOWLOG", "RESET"]);
    cmd(&mut c, &["DEBUG", "SLEEP", "0.02"]);
    assert_eq!(cmd(&mut c, &["SLOWLOG", "LEN"]), Value::Int(0));
    // LATENCY with monitoring off: nothing recorded.
    assert_eq!(cmd(&mut c, &["LATENCY", "LATEST"]), Value::Array(vec![]));
}

#[test]
fn bgrewriteaof_shrinks_the_log_and_a_restart_has_the_keys() {
    let aof = temp("kvs-admin", "save.aof");
    let _ = std::fs::remove_file(&aof);
    let aof_s = aof.to_str().unwrap().to_string();
    let args = ["--port", "0", "--aof", &aof_s, "--appendfsync", "always"];
    {
        let (_server, addr) = kvs_serve(&args);
        let mut c = connect(&addr);
        for i in 0..300 {
            cmd(&mut c, &["SET", &format!("k{}", i % 3), &i.to_string()]);
        }
        let before = std::fs::metadata(&aof).unwrap().len();
        common::rewrite_log(&mut c);
        let after = std::fs::metadata(&aof).unwrap().len();
        assert!(after < before / 4, "rewritten: {before} -> {after} bytes");
        assert_eq!(info(&mut c, "persistence")["aof_enabled"], "1");
        cmd(&mut c, &["SET", "after", "save"]);
    }
    // What the rewritten log holds survives a restart.
    let (_server, addr) = kvs_serve(&args);
    let mut c = connect(&addr);
    assert_eq!(
        cmd(&mut c, &["MGET", "k0", "k1", "k2", "after"]),
        Value::Array(vec![bulk("297"), bulk("298"), bulk("299"), bulk("save")])
    );
    let _ = std::fs::remove_file(&aof);
}

/// INFO persistence's count of saves.
fn saves(c: &mut Connection) -> usize {
    common::info_num(c, "persistence", "rdb_saves")
}

#[test]
fn save_bgsave_the_schedule_and_shutdown_write_the_rdb_file_a_restart_loads() {
    let dir = temp("kvs-admin", "rdb");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.to_str().unwrap().to_string();
    let file = dir.join("dump.rdb");
    let args = ["--port", "0", "--dir", &d];
    {
        let (_server, addr) = kvs_serve(&args);
        let mut c = connect(&addr);
        cmd(&mut c, &["SET", "a", "1"]);
        cmd(&mut c, &["RPUSH", "l", "x", "y"]);
        cmd(&mut c, &["SET", "t", "v", "EX", "1000"]);
        let lib = "#!lua name=lib\nredis.register_function('f', function() return 'fn' end)";
        cmd(&mut c, &["FUNCTION", "LOAD", lib]);
        // Counted per write command (Redis counts per changed element).
        let p = info(&mut c, "persistence");
        assert_eq!(p["rdb_changes_since_last_save"], "3");
        let Value::Int(t0) = cmd(&mut c, &["LASTSAVE"]) else {
            panic!()
        };
        std::thread::sleep(Duration::from_millis(1100));
        assert!(!file.exists());
        assert_eq!(cmd(&mut c, &["SAVE"]), Value::Okay);
        assert!(file.exists());
        let Value::Int(t1) = cmd(&mut c, &["LASTSAVE"]) else {
            panic!()
        };
        assert!(t1 > t0, "LASTSAVE {t0} -> {t1}");
        let p = info(&mut c, "persistence");
        assert_eq!(p["rdb_last_save_time"], t1.to_string());
        assert_eq!(p["rdb_changes_since_last_save"], "0");
        assert_eq!(p["rdb_saves"], "1");
        // BGSAVE: the keys as they were when it was asked for.
        cmd(&mut c, &["SELECT", "5"]);
        cmd(&mut c, &["HSET", "h", "f", "v"]);
        assert_eq!(
            cmd(&mut c, &["BGSAVE"]),
            Value::SimpleString("Background saving started".into())
        );
        common::until(10, "BGSAVE", || saves(&mut c) == 2);
        assert_eq!(info(&mut c, "persistence")["rdb_last_bgsave_status"], "ok");
        // Written after the save: lost with kill -9 (no append-only log).
        cmd(&mut c, &["SET", "lost", "1"]);
    }
    {
        let (_server, addr) = kvs_serve(&args);
        let mut c = connect(&addr);
        assert_eq!(cmd(&mut c, &["GET", "a"]), bulk("1"));
        assert_eq!(
            cmd(&mut c, &["LRANGE", "l", "0", "-1"]),
            Value::Array(vec![bulk("x"), bulk("y")])
        );
        let Value::Int(ttl) = cmd(&mut c, &["TTL", "t"]) else {
            panic!()
        };
        assert!((990..=1000).contains(&ttl), "{ttl}");
        assert_eq!(cmd(&mut c, &["FCALL", "f", "0"]), bulk("fn"));
        assert_eq!(cmd(&mut c, &["GET", "lost"]), Value::Nil);
        cmd(&mut c, &["SELECT", "5"]);
        assert_eq!(cmd(&mut c, &["HGET", "h", "f"]), bulk("v"));
        // The schedule: one change and one second are enough here.
        cmd(&mut c, &["CONFIG", "SET", "save", "1 1"]);
        assert_eq!(
            cmd(&mut c, &["CONFIG", "GET", "save"]),
            Value::Array(vec![bulk("save"), bulk("1 1")])
        );
        cmd(&mut c, &["SET", "scheduled", "1"]);
        common::until(10, "the scheduled save", || saves(&mut c) == 1);
        // SHUTDOWN NOSAVE leaves the file as it was; SHUTDOWN SAVE writes it.
        cmd(&mut c, &["CONFIG", "SET", "save", ""]);
        cmd(&mut c, &["SET", "nosave", "1"]);
        let _ = redis::cmd("SHUTDOWN").arg("NOSAVE").query::<Value>(&mut c);
    }
    {
        let (mut server, addr) = kvs_serve(&args);
        let mut c = connect(&addr);
        cmd(&mut c, &["SELECT", "5"]);
        assert_eq!(cmd(&mut c, &["GET", "scheduled"]), bulk("1"));
        assert_eq!(cmd(&mut c, &["GET", "nosave"]), Value::Nil);
        cmd(&mut c, &["SET", "shutdown", "1"]);
        let _ = redis::cmd("SHUTDOWN").arg("SAVE").query::<Value>(&mut c);
        assert!(server.0.wait().unwrap().success());
    }
    let (_server, addr) = kvs_serve(&args);
    let mut c = connect(&addr);
    cmd(&mut c, &["SELECT", "5"]);
    assert_eq!(cmd(&mut c, &["GET", "shutdown"]), bulk("1"));
    // The file names are the server's to choose.
    let e = redis::cmd("CONFIG")
        .arg("SET")
        .arg("dbfilename")
        .arg("../x.rdb")
        .query::<Value>(&mut c)
        .unwrap_err();
    assert!(e.to_string().contains("protected"), "{e}");
    // With a schedule, FLUSHALL writes the empty keyspace at once (as Redis): a
    // restart does not bring the keys back.
    cmd(&mut c, &["CONFIG", "SET", "save", "3600 1"]);
    cmd(&mut c, &["FLUSHALL"]);
    drop(_server);
    let (_server, addr) = kvs_serve(&args);
    let mut c = connect(&addr);
    cmd(&mut c, &["SELECT", "5"]);
    assert_eq!(cmd(&mut c, &["DBSIZE"]), Value::Int(0));
    drop(_server);
    // A damaged file refuses the start with one line that names it; nothing is half
    // loaded.
    let mut bytes = std::fs::read(&file).unwrap();
    let n = bytes.len();
    bytes[n - 20] ^= 0x55;
    std::fs::write(&file, &bytes).unwrap();
    let out = common::wirespeed(&["kvs", "serve", "--port", "0", "--dir", &d]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("dump.rdb") && err.contains("RDB"), "{err}");
    for bad in [["--dbfilename", "a/b.rdb"], ["--save", "60"]] {
        let out = common::wirespeed(&["kvs", "serve", "--port", "0", bad[0], bad[1]]);
        assert!(!out.status.success(), "{bad:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `LATENCY LATEST` as (event, latest ms, max ms), by event.
fn latest(c: &mut Connection) -> Vec<(String, i64, i64)> {
    let Value::Array(events) = cmd(c, &["LATENCY", "LATEST"]) else {
        panic!("LATENCY LATEST")
    };
    events
        .into_iter()
        .map(|e| match e {
            Value::Array(f) => match (&f[0], &f[1], &f[2], &f[3]) {
                (Value::BulkString(n), Value::Int(t), Value::Int(ms), Value::Int(max)) => {
                    assert!(*t > 1_600_000_000, "a time in seconds: {t}");
                    (String::from_utf8_lossy(n).into_owned(), *ms, *max)
                }
                v => panic!("{v:?}"),
            },
            v => panic!("{v:?}"),
        })
        .collect()
}

/// A RESP2 map reply (a flat array of pairs) as (name, value) pairs.
fn pairs(v: Value) -> Vec<(String, Value)> {
    let Value::Array(items) = v else {
        panic!("{v:?}")
    };
    items
        .chunks(2)
        .map(|p| match &p[0] {
            Value::BulkString(k) => (String::from_utf8_lossy(k).into_owned(), p[1].clone()),
            Value::Int(k) => (k.to_string(), p[1].clone()),
            v => panic!("{v:?}"),
        })
        .collect()
}

fn text(v: Value) -> String {
    match v {
        Value::BulkString(b) => String::from_utf8(b).unwrap(),
        Value::VerbatimString { text, .. } => text,
        v => panic!("{v:?}"),
    }
}

#[test]
fn the_latency_monitor_records_what_passed_its_threshold() {
    let (_server, addr) = kvs_serve(&["--port", "0", "--enable-debug-command", "yes"]);
    let mut c = connect(&addr);
    // Off by default: a long command is not recorded, and DOCTOR says how to turn it on.
    let got = cmd(&mut c, &["CONFIG", "GET", "latency-monitor-threshold"]);
    assert_eq!(
        got,
        Value::Array(vec![bulk("latency-monitor-threshold"), bulk("0")])
    );
    cmd(&mut c, &["DEBUG", "SLEEP", "0.03"]);
    assert!(latest(&mut c).is_empty());
    let doctor = text(cmd(&mut c, &["LATENCY", "DOCTOR"]));
    assert!(doctor.contains("latency-monitor-threshold"), "{doctor}");
    // At 20 ms: a 5 ms sleep is not an event, a 60 ms one is a `command` sample.
    cmd(
        &mut c,
        &["CONFIG", "SET", "latency-monitor-threshold", "20"],
    );
    cmd(&mut c, &["DEBUG", "SLEEP", "0.005"]);
    assert!(latest(&mut c).is_empty());
    cmd(&mut c, &["DEBUG", "SLEEP", "0.06"]);
    let got = latest(&mut c);
    assert_eq!(got.len(), 1, "{got:?}");
    let (name, ms, max) = &got[0];
    assert_eq!(name, "command");
    assert!(*ms >= 60 && *max == *ms, "{got:?}");
    let Value::Array(history) = cmd(&mut c, &["LATENCY", "HISTORY", "command"]) else {
        panic!()
    };
    assert_eq!(history.len(), 1);
    let graph = text(cmd(&mut c, &["LATENCY", "GRAPH", "command"]));
    assert!(
        graph.starts_with(&format!("command - high {ms} ms, low {ms} ms")),
        "{graph}"
    );
    let doctor = text(cmd(&mut c, &["LATENCY", "DOCTOR"]));
    assert!(
        doctor.contains("1. command: 1 sample") && doctor.contains("SLOWLOG"),
        "{doctor}"
    );
    // Unknown events: no history, nothing reset, no graph.
    assert_eq!(
        cmd(&mut c, &["LATENCY", "HISTORY", "blabla"]),
        Value::Array(vec![])
    );
    assert_eq!(cmd(&mut c, &["LATENCY", "RESET", "blabla"]), Value::Int(0));
    let e = common::try_cmd(&mut c, &["LATENCY", "GRAPH", "blabla"]).unwrap_err();
    assert!(
        e.to_string()
            .contains("No samples available for event 'blabla'"),
        "{e}"
    );
    let e = common::try_cmd(&mut c, &["LATENCY", "HELP", "xxx"]).unwrap_err();
    assert!(
        e.to_string()
            .contains("wrong number of arguments for 'latency|help' command"),
        "{e}"
    );
    let e = common::try_cmd(
        &mut c,
        &["CONFIG", "SET", "latency-monitor-threshold", "-1"],
    )
    .unwrap_err();
    assert!(e.to_string().contains("latency-monitor-threshold"), "{e}");
    // The expiry sweep freeing a big set on the loop is an `expire-cycle`.
    cmd(&mut c, &["CONFIG", "SET", "latency-monitor-threshold", "1"]);
    for chunk in 0..8 {
        let members: Vec<String> = (0..25_000).map(|i| format!("m{chunk}-{i}")).collect();
        let mut sadd = vec!["SADD", "big"];
        sadd.extend(members.iter().map(String::as_str));
        cmd(&mut c, &sadd);
    }
    cmd(&mut c, &["PEXPIRE", "big", "10"]);
    let t = Instant::now();
    while !latest(&mut c).iter().any(|(n, _, _)| n == "expire-cycle") {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "{:?}",
            latest(&mut c)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(cmd(&mut c, &["EXISTS", "big"]), Value::Int(0));
    // RESET without names forgets every event.
    cmd(&mut c, &["CONFIG", "SET", "latency-monitor-threshold", "0"]);
    let Value::Int(n) = cmd(&mut c, &["LATENCY", "RESET"]) else {
        panic!()
    };
    assert!(n >= 2, "{n}");
    assert!(latest(&mut c).is_empty());
}

/// INFO `section` as text.
fn info_text(c: &mut Connection, section: &str) -> String {
    redis::cmd("INFO").arg(section).query(c).expect("INFO")
}

/// The percentiles of INFO latencystats' line for `name`: (percentile, µs).
fn latency_line(c: &mut Connection, name: &str) -> Option<Vec<(String, f64)>> {
    let text = info_text(c, "latencystats");
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix(&format!("latency_percentiles_usec_{name}:")))?;
    Some(
        line.split(',')
            .filter(|f| !f.is_empty())
            .map(|f| {
                let (p, v) = f.split_once('=').unwrap_or_else(|| panic!("{line}"));
                let (_, decimals) = v.split_once('.').unwrap_or_else(|| panic!("{line}"));
                assert_eq!(decimals.len(), 3, "{line}");
                (p.to_string(), v.parse().unwrap())
            })
            .collect(),
    )
}

#[test]
fn info_latencystats_gives_each_commands_percentiles() {
    let (_server, addr) = kvs_serve(&["--port", "0", "--enable-debug-command", "yes"]);
    let mut c = connect(&addr);
    cmd(&mut c, &["CONFIG", "RESETSTAT"]);
    for _ in 0..3 {
        cmd(&mut c, &["SET", "a", "b"]);
    }
    cmd(&mut c, &["DEBUG", "SLEEP", "0.02"]);
    cmd(&mut c, &["CLIENT", "ID"]);
    let text = info_text(&mut c, "latencystats");
    assert!(text.starts_with("# Latencystats\r\n"), "{text}");
    // Redis's form: p50, p99, p99.9 by default, microseconds with three decimals.
    let set = latency_line(&mut c, "set").expect("a line for SET");
    let names: Vec<&str> = set.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(names, ["p50", "p99", "p99.9"]);
    assert!(set.windows(2).all(|w| w[0].1 <= w[1].1), "{set:?}");
    assert!(set[0].1 > 0.0);
    let debug = latency_line(&mut c, "debug").expect("a line for DEBUG");
    assert!(debug.iter().all(|(_, v)| *v >= 20_000.0), "{debug:?}");
    assert!(
        latency_line(&mut c, "client|id").is_some(),
        "subcommands by name"
    );
    assert!(latency_line(&mut c, "get").is_none(), "not called");
    // Not in the default sections; in all and everything.
    assert!(!info_text(&mut c, "default").contains("# Latencystats"));
    let plain: String = redis::cmd("INFO").query(&mut c).unwrap();
    assert!(!plain.contains("# Latencystats"));
    assert!(info_text(&mut c, "all").contains("latency_percentiles_usec_set:p50="));
    assert!(info_text(&mut c, "everything").contains("# Latencystats"));
    // The percentiles follow latency-tracking-info-percentiles.
    cmd(
        &mut c,
        &[
            "CONFIG",
            "SET",
            "latency-tracking-info-percentiles",
            "0 12.5 100",
        ],
    );
    let set = latency_line(&mut c, "set").unwrap();
    let names: Vec<&str> = set.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(names, ["p0", "p12.5", "p100"]);
    assert!(set[0].1 <= set[2].1);
    let got: Vec<String> = redis::cmd("CONFIG")
        .arg(&["GET", "latency-tracking-info-percentiles"])
        .query(&mut c)
        .unwrap();
    assert_eq!(got, ["latency-tracking-info-percentiles", "0 12.5 100"]);
    // None: each line is left without values, as Redis leaves it.
    cmd(
        &mut c,
        &["CONFIG", "SET", "latency-tracking-info-percentiles", ""],
    );
    assert_eq!(latency_line(&mut c, "set"), Some(vec![]));
    // Bad values: Redis's errors, the setting unchanged.
    for (bad, why) in [
        ("101", "parameters should sit between [0.0,100.0]"),
        (
            "50 abc",
            "Invalid latency-tracking-info-percentiles parameters",
        ),
    ] {
        let e = try_cmd(
            &mut c,
            &["CONFIG", "SET", "latency-tracking-info-percentiles", bad],
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains(why), "{bad}: {e}");
    }
    assert_eq!(latency_line(&mut c, "set"), Some(vec![]));
    // Many percentiles: INFO still answers them all.
    let many = vec!["99.5"; 5000].join(" ");
    cmd(
        &mut c,
        &["CONFIG", "SET", "latency-tracking-info-percentiles", &many],
    );
    assert_eq!(latency_line(&mut c, "set").unwrap().len(), 5000);
    // latency-tracking no: the header only.
    cmd(&mut c, &["CONFIG", "SET", "latency-tracking", "no"]);
    assert_eq!(info_text(&mut c, "latencystats"), "# Latencystats\r\n\r\n");
}

#[test]
fn latency_histogram_counts_each_command_and_subcommand() {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let mut c = connect(&addr);
    cmd(&mut c, &["CONFIG", "RESETSTAT"]);
    let all = pairs(cmd(&mut c, &["LATENCY", "HISTOGRAM"]));
    let names: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, vec!["config|resetstat"]);
    cmd(&mut c, &["SET", "a", "b"]);
    cmd(&mut c, &["SET", "c", "d"]);
    cmd(&mut c, &["GET", "a"]);
    cmd(&mut c, &["CLIENT", "ID"]);
    let got = pairs(cmd(
        &mut c,
        &["LATENCY", "HISTOGRAM", "blabla", "set", "client", "get"],
    ));
    let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, vec!["set", "client|id", "get"]);
    let set = pairs(got[0].1.clone());
    assert_eq!(set[0], ("calls".into(), Value::Int(2)));
    assert_eq!(set[1].0, "histogram_usec");
    // Cumulative counts at powers of two of microseconds, ending at the calls.
    let buckets = pairs(set[1].1.clone());
    let counts: Vec<i64> = buckets
        .iter()
        .map(|(_, v)| match v {
            Value::Int(n) => *n,
            v => panic!("{v:?}"),
        })
        .collect();
    assert!(counts.windows(2).all(|w| w[0] < w[1]), "{buckets:?}");
    assert_eq!(counts.last(), Some(&2));
    // GET is timed one call in 16: its call is counted all the same.
    assert_eq!(pairs(got[2].1.clone())[0], ("calls".into(), Value::Int(1)));
    // latency-tracking no: calls are not counted.
    cmd(&mut c, &["CONFIG", "SET", "latency-tracking", "no"]);
    cmd(&mut c, &["SET", "a", "b"]);
    let got = pairs(cmd(&mut c, &["LATENCY", "HISTOGRAM", "set"]));
    assert_eq!(pairs(got[0].1.clone())[0], ("calls".into(), Value::Int(2)));
    assert_eq!(
        cmd(&mut c, &["LATENCY", "HISTOGRAM", "nosuchcommand"]),
        Value::Array(vec![])
    );
}

#[test]
fn debug_reload_saves_and_loads_back_and_a_bad_file_changes_nothing() {
    let dir = temp("kvs-admin", "reload");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.to_str().unwrap().to_string();
    let log = common::fresh_log("kvs-admin-reload");
    let args = [
        "--port",
        "0",
        "--dir",
        &d,
        "--aof",
        &log,
        "--enable-debug-command",
        "yes",
    ];
    let keys = |c: &mut redis::Connection| {
        let mut out = Vec::new();
        for db in ["0", "3"] {
            cmd(c, &["SELECT", db]);
            let Value::Array(mut ks) = cmd(c, &["KEYS", "*"]) else {
                panic!()
            };
            ks.sort_by_key(|k| format!("{k:?}"));
            for k in ks {
                let Value::BulkString(k) = k else { panic!() };
                let k = String::from_utf8(k).unwrap();
                out.push(format!("{db} {k} {:?}", cmd(c, &["DUMP", &k])));
            }
        }
        cmd(c, &["SELECT", "0"]);
        out
    };
    let (server, addr) = kvs_serve(&args);
    let mut c = connect(&addr);
    cmd(&mut c, &["SET", "a", "1"]);
    cmd(&mut c, &["RPUSH", "l", "x", "y"]);
    cmd(&mut c, &["ZADD", "z", "1", "m", "2.5", "n"]);
    cmd(&mut c, &["SET", "t", "v", "EX", "1000"]);
    cmd(&mut c, &["SELECT", "3"]);
    cmd(&mut c, &["HSET", "h", "f", "v"]);
    cmd(&mut c, &["SELECT", "0"]);
    let before = keys(&mut c);
    // Saved, emptied, loaded: the same keys, values and deadlines.
    assert_eq!(cmd(&mut c, &["DEBUG", "RELOAD"]), Value::Okay);
    assert_eq!(keys(&mut c), before);
    assert!(matches!(cmd(&mut c, &["TTL", "t"]), Value::Int(t) if t > 990));
    // NOSAVE: the file as it is; a key written since is gone.
    cmd(&mut c, &["SET", "since", "1"]);
    assert_eq!(cmd(&mut c, &["DEBUG", "RELOAD", "NOSAVE"]), Value::Okay);
    assert_eq!(keys(&mut c), before);
    // NOFLUSH without MERGE: a key already there refuses the load, nothing changes.
    cmd(&mut c, &["SET", "a", "changed"]);
    let refused = common::try_cmd(&mut c, &["DEBUG", "RELOAD", "NOFLUSH", "NOSAVE"]);
    assert!(refused.is_err(), "{refused:?}");
    assert_eq!(
        cmd(&mut c, &["GET", "a"]),
        Value::BulkString(b"changed".to_vec())
    );
    // MERGE: the file's keys replace those in memory, the others stay.
    cmd(&mut c, &["SET", "extra", "1"]);
    assert_eq!(
        cmd(&mut c, &["DEBUG", "RELOAD", "MERGE", "NOFLUSH", "NOSAVE"]),
        Value::Okay
    );
    assert_eq!(cmd(&mut c, &["GET", "a"]), Value::BulkString(b"1".to_vec()));
    assert_eq!(
        cmd(&mut c, &["GET", "extra"]),
        Value::BulkString(b"1".to_vec())
    );
    // A damaged file: an error, and the keyspace as it was.
    let now = keys(&mut c);
    let file = dir.join("dump.rdb");
    let mut bytes = std::fs::read(&file).unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 0x5a;
    std::fs::write(&file, &bytes).unwrap();
    let bad = common::try_cmd(&mut c, &["DEBUG", "RELOAD", "NOSAVE"]);
    assert!(bad
        .unwrap_err()
        .to_string()
        .contains("Error trying to load the RDB dump"),);
    assert_eq!(keys(&mut c), now);
    assert!(common::try_cmd(&mut c, &["DEBUG", "RELOAD", "BOGUS"]).is_err());
    // What a reload changed is in the log: a restart from it holds the same keys.
    drop(server);
    let (_again, addr) = kvs_serve(&args[..6]);
    let mut c = connect(&addr);
    assert_eq!(keys(&mut c), now);
    let _ = std::fs::remove_dir_all(&dir);
}
