//! Transactions through the real binary: MULTI/EXEC/DISCARD/WATCH/UNWATCH replies and
//! errors as Redis gives them, atomicity against clients on other event loops, WATCH
//! across loops, and a transaction's changes surviving `kill -9` whole.

mod common;

use common::{cmd, connect, kvs_serve, temp, try_cmd};
use redis::{Connection, Value};
use std::io::{Read, Write};

fn err(con: &mut Connection, args: &[&str]) -> String {
    match try_cmd(con, args) {
        Ok(v) => panic!("{args:?}: expected an error, got {v:?}"),
        Err(e) => e.to_string(),
    }
}

fn get(con: &mut Connection, key: &str) -> Option<String> {
    redis::cmd("GET").arg(key).query(con).expect("GET")
}

#[test]
fn queued_commands_run_in_order_and_errors_follow_redis() {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let mut c = connect(&addr);
    assert_eq!(cmd(&mut c, &["MULTI"]), Value::Okay);
    assert_eq!(
        cmd(&mut c, &["SET", "k", "1"]),
        Value::SimpleString("QUEUED".into())
    );
    cmd(&mut c, &["INCR", "k"]);
    cmd(&mut c, &["GET", "k"]);
    assert_eq!(get_raw_exec(&mut c).len(), 3);
    assert_eq!(get(&mut c, "k").as_deref(), Some("2"));

    // Outside MULTI.
    assert!(err(&mut c, &["EXEC"]).contains("EXEC without MULTI"));
    assert!(err(&mut c, &["DISCARD"]).contains("DISCARD without MULTI"));
    // Nested MULTI and WATCH inside MULTI are refused without ending the transaction.
    cmd(&mut c, &["MULTI"]);
    assert!(err(&mut c, &["MULTI"]).contains("MULTI calls can not be nested"));
    assert!(err(&mut c, &["WATCH", "k"]).contains("WATCH inside MULTI is not allowed"));
    cmd(&mut c, &["INCR", "k"]);
    assert_eq!(cmd(&mut c, &["DISCARD"]), Value::Okay);
    assert_eq!(
        get(&mut c, "k").as_deref(),
        Some("2"),
        "DISCARD ran nothing"
    );

    // A command refused while queuing (unknown, wrong arity) discards the whole
    // transaction at EXEC; nothing queued before or after it runs.
    cmd(&mut c, &["MULTI"]);
    cmd(&mut c, &["INCR", "k"]);
    assert!(err(&mut c, &["NOSUCHCMD", "x"]).contains("unknown command"));
    assert!(err(&mut c, &["GET"]).contains("wrong number of arguments"));
    cmd(&mut c, &["INCR", "k"]);
    let e = err(&mut c, &["EXEC"]);
    assert!(e.contains("Transaction discarded"), "{e}");
    assert_eq!(get(&mut c, "k").as_deref(), Some("2"));

    // A command that fails when run leaves the others to run (Redis's semantics).
    // (Over a raw socket: the redis crate turns such an EXEC reply into one error.)
    cmd(&mut c, &["SET", "text", "abc"]);
    let mut raw = std::net::TcpStream::connect(&addr).unwrap();
    raw.write_all(b"MULTI\r\nINCR text\r\nINCR k\r\nEXEC\r\n")
        .unwrap();
    let want: &[u8] = b"+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n-ERR value is not an integer or out of range\r\n:3\r\n";
    let mut got = vec![0u8; want.len()];
    raw.read_exact(&mut got).unwrap();
    assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(want));

    // An empty transaction replies with an empty array.
    cmd(&mut c, &["MULTI"]);
    assert!(get_raw_exec(&mut c).is_empty());
}

/// EXEC's reply, as the array of the queued commands' replies.
fn get_raw_exec(c: &mut Connection) -> Vec<Value> {
    match cmd(c, &["EXEC"]) {
        Value::Array(v) => v,
        other => panic!("EXEC replied {other:?}"),
    }
}

#[test]
fn watch_aborts_on_a_change_by_another_loop_and_not_otherwise() {
    let (_server, addr) = kvs_serve(&["--port", "0", "--threads", "2"]);
    let mut a = connect(&addr);
    let mut b = connect(&addr);
    let mut c = connect(&addr);
    cmd(&mut a, &["SET", "w", "0"]);

    // Not changed: EXEC runs.
    cmd(&mut a, &["WATCH", "w", "other"]);
    cmd(&mut a, &["MULTI"]);
    cmd(&mut a, &["SET", "w", "a1"]);
    assert_eq!(get_raw_exec(&mut a), vec![Value::Okay]);

    // Changed by other connections (the server runs two loops; three connections
    // put at least two on different loops): EXEC runs nothing, replies null.
    for other in [&mut b, &mut c] {
        cmd(&mut a, &["WATCH", "w"]);
        cmd(other, &["SET", "w", "theirs"]);
        cmd(&mut a, &["MULTI"]);
        cmd(&mut a, &["SET", "w", "mine"]);
        assert_eq!(cmd(&mut a, &["EXEC"]), Value::Nil);
        assert_eq!(get(&mut a, "w").as_deref(), Some("theirs"));
    }

    // EXEC unwatches: a change after it does not abort the next transaction.
    cmd(&mut a, &["MULTI"]);
    cmd(&mut b, &["SET", "w", "later"]);
    cmd(&mut a, &["SET", "w", "mine"]);
    assert_eq!(get_raw_exec(&mut a), vec![Value::Okay]);

    // UNWATCH and DISCARD forget the watched keys.
    cmd(&mut a, &["WATCH", "w"]);
    cmd(&mut a, &["UNWATCH"]);
    cmd(&mut b, &["SET", "w", "x"]);
    cmd(&mut a, &["MULTI"]);
    cmd(&mut a, &["GET", "w"]);
    assert_eq!(get_raw_exec(&mut a), vec![Value::BulkString(b"x".to_vec())]);

    // A deletion, an expiry set by EXPIRE, and FLUSHALL of an existing key are
    // changes; FLUSHALL does not touch a watched key that does not exist.
    for change in [
        &["DEL", "w"][..],
        &["EXPIRE", "w", "100"][..],
        &["FLUSHALL"][..],
    ] {
        cmd(&mut a, &["SET", "w", "1"]);
        cmd(&mut a, &["WATCH", "w"]);
        cmd(&mut b, change);
        cmd(&mut a, &["MULTI"]);
        cmd(&mut a, &["PING"]);
        assert_eq!(cmd(&mut a, &["EXEC"]), Value::Nil, "{change:?}");
    }
    cmd(&mut a, &["DEL", "absent"]);
    cmd(&mut a, &["WATCH", "absent"]);
    cmd(&mut b, &["FLUSHALL"]);
    cmd(&mut a, &["MULTI"]);
    cmd(&mut a, &["PING"]);
    assert_eq!(
        get_raw_exec(&mut a),
        vec![Value::SimpleString("PONG".into())]
    );

    // A watched key whose deadline passes before EXEC aborts it.
    cmd(&mut a, &["SET", "short", "1", "PX", "50"]);
    cmd(&mut a, &["WATCH", "short"]);
    std::thread::sleep(std::time::Duration::from_millis(120));
    cmd(&mut a, &["MULTI"]);
    cmd(&mut a, &["PING"]);
    assert_eq!(cmd(&mut a, &["EXEC"]), Value::Nil);
}

#[test]
fn a_transaction_is_atomic_for_clients_on_other_loops() {
    let (_server, addr) = kvs_serve(&["--port", "0", "--threads", "2"]);
    let mut setup = connect(&addr);
    // Keys chosen to fall in different shards (a transaction locks all of them).
    cmd(&mut setup, &["MSET", "x", "0", "y", "0", "z", "0"]);
    let writers: Vec<_> = (0..2)
        .map(|_| {
            let addr = addr.clone();
            std::thread::spawn(move || {
                let mut c = connect(&addr);
                for _ in 0..300 {
                    let (x, y, z): (i64, i64, i64) = redis::pipe()
                        .atomic()
                        .incr("x", 1)
                        .incr("y", 1)
                        .incr("z", 1)
                        .query(&mut c)
                        .expect("transaction");
                    assert!(x == y && y == z, "a transaction saw another one half done");
                }
            })
        })
        .collect();
    let mut reader = connect(&addr);
    let mut seen = 0;
    while writers.iter().any(|w| !w.is_finished()) {
        let v: Vec<i64> = redis::cmd("MGET")
            .arg(&["x", "y", "z"])
            .query(&mut reader)
            .expect("MGET");
        assert!(
            v[0] == v[1] && v[1] == v[2],
            "a reader saw half a transaction: {v:?}"
        );
        seen += 1;
    }
    for w in writers {
        w.join().expect("writer");
    }
    assert!(seen > 0);
    assert_eq!(get(&mut reader, "x").as_deref(), Some("600"));
}

#[test]
fn a_transaction_survives_kill_9_whole() {
    let aof = temp("kvs-multi", "tx.aof");
    let _ = std::fs::remove_file(&aof);
    let path = aof.to_string_lossy().to_string();
    let args = ["--port", "0", "--aof", &path, "--appendfsync", "always"];
    {
        let (_server, addr) = kvs_serve(&args);
        let mut c = connect(&addr);
        cmd(&mut c, &["SET", "before", "1"]);
        let _: () = redis::pipe()
            .atomic()
            .set("t1", "a")
            .incr("before", 10)
            .del("before")
            .set("t2", "b")
            .query(&mut c)
            .expect("transaction");
        // _server is killed (SIGKILL) here.
    }
    let (_server, addr) = kvs_serve(&args);
    let mut c = connect(&addr);
    assert_eq!(get(&mut c, "t1").as_deref(), Some("a"));
    assert_eq!(get(&mut c, "t2").as_deref(), Some("b"));
    assert_eq!(get(&mut c, "before"), None);
}

#[test]
fn command_reports_the_table() {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let mut c = connect(&addr);
    let count: i64 = redis::cmd("COMMAND").arg("COUNT").query(&mut c).unwrap();
    let all = match cmd(&mut c, &["COMMAND"]) {
        Value::Array(v) => v,
        other => panic!("{other:?}"),
    };
    assert_eq!(all.len() as i64, count);
    // COMMAND INFO: name, arity, flags, first key, last key, step, ...
    let info = match cmd(&mut c, &["COMMAND", "INFO", "mset", "nosuch"]) {
        Value::Array(v) => v,
        other => panic!("{other:?}"),
    };
    let Value::Array(mset) = &info[0] else {
        panic!("{info:?}")
    };
    assert_eq!(mset[0], Value::BulkString(b"mset".to_vec()));
    assert_eq!(mset[1], Value::Int(-3));
    assert_eq!(&mset[3..6], &[Value::Int(1), Value::Int(-1), Value::Int(2)]);
    assert_eq!(info[1], Value::Nil);
    let keys: Vec<String> = redis::cmd("COMMAND")
        .arg(&["GETKEYS", "MSET", "a", "1", "b", "2"])
        .query(&mut c)
        .unwrap();
    assert_eq!(keys, ["a", "b"]);
    assert!(err(&mut c, &["COMMAND", "GETKEYS", "PING", "x"]).contains("no key arguments"));
    let names: Vec<String> = redis::cmd("COMMAND").arg("LIST").query(&mut c).unwrap();
    for n in ["multi", "exec", "watch", "get", "set"] {
        assert!(
            names.iter().any(|x| x == n),
            "{n} missing from COMMAND LIST"
        );
    }
}

#[test]
fn command_getkeysandflags_gives_each_key_with_its_flags() {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let mut c = connect(&addr);
    let flags = |c: &mut Connection, args: &[&str]| -> Vec<(String, Vec<String>)> {
        let mut all = vec!["COMMAND", "GETKEYSANDFLAGS"];
        all.extend_from_slice(args);
        redis::cmd(all[0])
            .arg(&all[1..])
            .query(c)
            .unwrap_or_else(|e| panic!("{args:?}: {e}"))
    };
    let k = |key: &str, f: &[&str]| (key.to_string(), f.iter().map(|s| s.to_string()).collect());
    // What redis-server 7.0 answers.
    assert_eq!(
        flags(&mut c, &["SET", "k", "v"]),
        [k("k", &["OW", "update"])]
    );
    assert_eq!(
        flags(&mut c, &["set", "k", "v", "GET"]),
        [k("k", &["RW", "access", "update"])]
    );
    assert_eq!(flags(&mut c, &["GET", "k"]), [k("k", &["RO", "access"])]);
    assert_eq!(
        flags(&mut c, &["LMOVE", "a", "b", "LEFT", "RIGHT"]),
        [
            k("a", &["RW", "access", "delete"]),
            k("b", &["RW", "insert"])
        ]
    );
    assert_eq!(
        flags(&mut c, &["SORT", "k", "BY", "w*", "GET", "x", "STORE", "d"]),
        [k("k", &["RO", "access"]), k("d", &["OW", "update"])]
    );
    assert_eq!(
        flags(&mut c, &["EVAL", "s", "2", "a", "b", "x"]),
        [
            k("a", &["RW", "access", "update"]),
            k("b", &["RW", "access", "update"])
        ]
    );
    assert_eq!(flags(&mut c, &["EVAL", "s", "0"]), []);
    assert_eq!(
        flags(&mut c, &["EVAL", "s", "9", "a"]),
        [],
        "no_mandatory_keys"
    );
    assert_eq!(
        flags(
            &mut c,
            &[
                "XREADGROUP",
                "GROUP",
                "g",
                "c",
                "STREAMS",
                "s1",
                "s2",
                "0",
                "0"
            ]
        ),
        [k("s1", &["RO", "access"]), k("s2", &["RO", "access"])]
    );
    assert_eq!(
        flags(&mut c, &["MSET", "a", "1", "b", "2"]),
        [k("a", &["OW", "update"]), k("b", &["OW", "update"])]
    );
    assert_eq!(
        flags(&mut c, &["RENAME", "a", "b"]),
        [
            k("a", &["RW", "access", "delete"]),
            k("b", &["OW", "update"])
        ]
    );
    assert_eq!(flags(&mut c, &["DEL", "a"]), [k("a", &["RM", "delete"])]);
    assert_eq!(
        flags(&mut c, &["OBJECT", "ENCODING", "k"]),
        [k("k", &["RO"])]
    );
    assert_eq!(
        flags(&mut c, &["XGROUP", "CREATE", "s", "g", "0"]),
        [k("s", &["RW", "insert"])]
    );
    // GETKEYS gives the same keys.
    let keys: Vec<String> = redis::cmd("COMMAND")
        .arg(&["GETKEYS", "ZUNIONSTORE", "d", "2", "a", "b"])
        .query(&mut c)
        .unwrap();
    assert_eq!(keys, ["d", "a", "b"]);
    // Redis's errors, in its order: unknown command or subcommand, no keys, arity,
    // arguments; and COMMAND's own arity.
    for (args, e) in [
        (&["FOO", "a"][..], "Invalid command specified"),
        (&["OBJECT", "NOSUCH", "k"], "Invalid command specified"),
        (&["ECHO", "a", "b"], "The command has no key arguments"),
        (&["OBJECT", "HELP", "x"], "The command has no key arguments"),
        (&["SPUBLISH", "ch", "m"], "The command has no key arguments"),
        (
            &["SET", "k"],
            "Invalid number of arguments specified for command",
        ),
        (
            &["OBJECT", "ENCODING"],
            "Invalid number of arguments specified for command",
        ),
        (
            &["OBJECT", "ENCODING", "a", "b"],
            "Invalid number of arguments specified",
        ),
        (
            &["ZUNIONSTORE", "d", "3", "a", "b"],
            "Invalid arguments specified for command",
        ),
        (
            &["LMPOP", "0", "a", "LEFT"],
            "Invalid arguments specified for command",
        ),
        (
            &["GET"],
            "wrong number of arguments for 'command|getkeysandflags'",
        ),
        (
            &[],
            "wrong number of arguments for 'command|getkeysandflags'",
        ),
    ] {
        let mut all = vec!["COMMAND", "GETKEYSANDFLAGS"];
        all.extend_from_slice(args);
        let got = err(&mut c, &all);
        assert!(got.contains(e), "{args:?}: {got}");
        all[1] = "GETKEYS";
        let plain = err(&mut c, &all).replace("command|getkeys'", "command|getkeysandflags'");
        assert_eq!(plain, got, "GETKEYS {args:?}");
    }
    // Many keys: one entry each, the server still answering.
    let many: Vec<String> = (0..20_000).map(|i| format!("k{i}")).collect();
    let mut args = vec!["COMMAND", "GETKEYSANDFLAGS", "DEL"];
    args.extend(many.iter().map(String::as_str));
    let Value::Array(got) = cmd(&mut c, &args) else {
        panic!("DEL with many keys")
    };
    assert_eq!(got.len(), many.len());
    assert_eq!(cmd(&mut c, &["PING"]), Value::SimpleString("PONG".into()));
}

#[test]
fn exec_refuses_a_transaction_that_would_grow_past_maxmemory() {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let mut a = connect(&addr);
    let mut b = connect(&addr);
    cmd(&mut a, &["SET", "x", "value"]);
    // Reads only: EXEC runs although memory is over the limit.
    cmd(&mut a, &["MULTI"]);
    cmd(&mut a, &["GET", "x"]);
    cmd(&mut b, &["CONFIG", "SET", "maxmemory", "1"]);
    assert_eq!(
        get_raw_exec(&mut a),
        vec![Value::BulkString(b"value".to_vec())]
    );
    cmd(&mut b, &["CONFIG", "SET", "maxmemory", "0"]);
    // A command that may add memory: the whole transaction is discarded.
    cmd(&mut a, &["MULTI"]);
    cmd(&mut a, &["SET", "x", "1"]);
    cmd(&mut a, &["GET", "x"]);
    cmd(&mut b, &["CONFIG", "SET", "maxmemory", "1"]);
    let e = err(&mut a, &["EXEC"]);
    assert!(e.contains("OOM"), "{e}");
    cmd(&mut b, &["CONFIG", "SET", "maxmemory", "0"]);
    assert_eq!(get(&mut a, "x").as_deref(), Some("value"));
}

/// Redis's no-multi commands (SAVE, SHUTDOWN, SYNC, PSYNC) are refused inside MULTI and
/// the transaction is discarded: the server is still up after EXEC.
#[test]
fn save_and_shutdown_are_refused_inside_multi() {
    let (_s, addr) = kvs_serve(&["--port", "0"]);
    let mut c = connect(&addr);
    for no in [
        &["SHUTDOWN"][..],
        &["SAVE"],
        &["SYNC"],
        &["PSYNC", "?", "-1"],
    ] {
        assert_eq!(cmd(&mut c, &["MULTI"]), redis::Value::Okay);
        cmd(&mut c, &["SET", "k", "v"]);
        let e = try_cmd(&mut c, no).unwrap_err().to_string();
        assert!(
            e.contains("Command not allowed inside a transaction"),
            "{no:?}: {e}"
        );
        let e = try_cmd(&mut c, &["EXEC"]).unwrap_err().to_string();
        assert!(e.contains("previous errors"), "{e}");
        assert_eq!(cmd(&mut c, &["EXISTS", "k"]), redis::Value::Int(0));
    }
    assert_eq!(
        cmd(&mut c, &["PING"]),
        redis::Value::SimpleString("PONG".into())
    );
}
