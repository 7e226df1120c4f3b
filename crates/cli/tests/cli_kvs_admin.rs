//! Administration commands through the real binary: the slow log (threshold, order,
//! Redis's trimming of long arguments, LEN, RESET, max length, DEBUG SLEEP caught by
//! it), SAVE/BGSAVE/LASTSAVE as rewrites of the append-only log (the file shrinks to
//! the live keys, which a restart still has), their error without a log, INFO
//! persistence, and LATENCY with monitoring off.

mod common;

use std::time::{Duration, Instant};

use common::{bulk, cmd, connect, info, kvs_serve, temp};
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
fn save_rewrites_the_log_and_lastsave_moves() {
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
        let Value::Int(t0) = cmd(&mut c, &["LASTSAVE"]) else {
            panic!()
        };
        std::thread::sleep(Duration::from_millis(1100));
        assert_eq!(cmd(&mut c, &["SAVE"]), Value::Okay);
        let after = std::fs::metadata(&aof).unwrap().len();
        assert!(after < before / 4, "rewritten: {before} -> {after} bytes");
        let Value::Int(t1) = cmd(&mut c, &["LASTSAVE"]) else {
            panic!()
        };
        assert!(t1 > t0, "LASTSAVE {t0} -> {t1}");
        let p = info(&mut c, "persistence");
        assert_eq!(p["aof_enabled"], "1");
        assert_eq!(p["rdb_last_save_time"], t1.to_string());
        assert_eq!(
            cmd(&mut c, &["BGSAVE"]),
            Value::SimpleString("Background saving started".into())
        );
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

#[test]
fn save_without_a_log_says_so() {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let mut c = connect(&addr);
    for what in ["SAVE", "BGSAVE"] {
        let e = redis::cmd(what).query::<Value>(&mut c).unwrap_err();
        assert!(e.to_string().contains("append-only log"), "{what}: {e}");
    }
    assert_eq!(info(&mut c, "persistence")["aof_enabled"], "0");
}
