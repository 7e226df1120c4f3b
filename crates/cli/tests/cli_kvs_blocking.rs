//! Blocking list and sorted-set commands through the real binary, with clients on
//! different event loops: a blocked BLPOP is served by a push from another client,
//! first come first served; timeouts answer nil; BLMOVE's destination serves the next
//! waiter; a value of another type wakes no one; inside MULTI and scripts nothing
//! blocks; a blocked client's pipelined commands wait
//! for it; a client that left is not served (the element stays); what a blocked pop
//! took is gone after `kill -9` and a restart from the log. Stream readers: XREAD's `$`
//! waits for entries after the last one, XREADGROUP answers NOGROUP when its key goes,
//! and what a group delivered is pending after a restart.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::thread;
use std::time::{Duration, Instant};

use common::{bulk, cmd, connect, durable_args, fresh_log, info_num, kvs_serve};
use redis::{Connection, Value};

/// Waits until INFO says `n` clients are blocked.
fn wait_blocked(con: &mut Connection, n: usize) {
    let start = Instant::now();
    while info_num(con, "clients", "blocked_clients") != n {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "never {n} blocked clients"
        );
        thread::sleep(Duration::from_millis(5));
    }
}

/// Runs `args` on a new connection in a thread.
fn spawn_cmd(addr: &str, args: &[&str]) -> thread::JoinHandle<Value> {
    let addr = addr.to_string();
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    thread::spawn(move || {
        let mut c = connect(&addr);
        // A waiter never served fails the test instead of hanging it.
        c.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        cmd(&mut c, &refs)
    })
}

#[test]
fn blocked_pops_are_served_first_come_first_served_across_loops() {
    let (_server, addr) = kvs_serve(&["--port", "0", "--threads", "2"]);
    let mut c = connect(&addr);
    // One waiter, served by a push from a client on the other loop.
    let h = spawn_cmd(&addr, &["BLPOP", "nope", "q", "0"]);
    wait_blocked(&mut c, 1);
    assert_eq!(cmd(&mut c, &["RPUSH", "q", "a"]), Value::Int(1));
    assert_eq!(h.join().unwrap(), Value::Array(vec![bulk("q"), bulk("a")]));
    assert_eq!(cmd(&mut c, &["EXISTS", "q"]), Value::Int(0), "popped whole");

    // Three waiters in order get the elements in order (some on each loop).
    let mut hs = Vec::new();
    for i in 0..3 {
        hs.push(spawn_cmd(&addr, &["BRPOP", "q", "0"]));
        wait_blocked(&mut c, i + 1);
    }
    assert_eq!(cmd(&mut c, &["LPUSH", "q", "x", "y", "z"]), Value::Int(3));
    let got: Vec<Value> = hs.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(
        got,
        vec![
            Value::Array(vec![bulk("q"), bulk("x")]),
            Value::Array(vec![bulk("q"), bulk("y")]),
            Value::Array(vec![bulk("q"), bulk("z")]),
        ]
    );
    assert_eq!(info_num(&mut c, "clients", "blocked_clients"), 0);

    // Sorted sets: BZPOPMIN wakes on ZADD; BZMPOP takes up to its count.
    let h = spawn_cmd(&addr, &["BZPOPMIN", "z", "0"]);
    wait_blocked(&mut c, 1);
    cmd(&mut c, &["ZADD", "z", "2", "b", "1", "a"]);
    assert_eq!(
        h.join().unwrap(),
        Value::Array(vec![bulk("z"), bulk("a"), bulk("1")])
    );
    let h = spawn_cmd(
        &addr,
        &["BZMPOP", "0", "2", "none", "z", "MAX", "COUNT", "5"],
    );
    let v = h.join().unwrap();
    assert_eq!(
        v,
        Value::Array(vec![
            bulk("z"),
            Value::Array(vec![Value::Array(vec![bulk("b"), bulk("2")])])
        ])
    );
}

#[test]
fn timeouts_multi_and_moves() {
    let (_server, addr) = kvs_serve(&["--port", "0", "--threads", "2"]);
    let mut c = connect(&addr);
    // A timeout answers the null array, no sooner than asked.
    let t = Instant::now();
    assert_eq!(cmd(&mut c, &["BLPOP", "empty", "0.2"]), Value::Nil);
    assert!(
        t.elapsed() >= Duration::from_millis(200),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(cmd(&mut c, &["BZPOPMAX", "empty", "0.05"]), Value::Nil);
    assert_eq!(
        cmd(&mut c, &["BLMOVE", "empty", "d", "LEFT", "LEFT", "0.05"]),
        Value::Nil
    );

    // Nor inside a script.
    assert_eq!(
        cmd(
            &mut c,
            &[
                "EVAL",
                "return redis.call('BLPOP', KEYS[1], 0)",
                "1",
                "empty"
            ]
        ),
        Value::Nil
    );
    assert_eq!(info_num(&mut c, "clients", "blocked_clients"), 0);

    // Inside MULTI nothing blocks.
    cmd(&mut c, &["MULTI"]);
    cmd(&mut c, &["BLPOP", "empty", "0"]);
    cmd(&mut c, &["BRPOPLPUSH", "empty", "d", "0"]);
    assert_eq!(
        cmd(&mut c, &["EXEC"]),
        Value::Array(vec![Value::Nil, Value::Nil])
    );

    // A push to BLMOVE's source moves the element to its destination, where the next
    // waiter takes it.
    let mover = spawn_cmd(&addr, &["BLMOVE", "src", "dst", "RIGHT", "LEFT", "0"]);
    wait_blocked(&mut c, 1);
    let taker = spawn_cmd(&addr, &["BLPOP", "dst", "0"]);
    wait_blocked(&mut c, 2);
    cmd(&mut c, &["RPUSH", "src", "v"]);
    assert_eq!(mover.join().unwrap(), bulk("v"));
    assert_eq!(
        taker.join().unwrap(),
        Value::Array(vec![bulk("dst"), bulk("v")])
    );
    assert_eq!(cmd(&mut c, &["EXISTS", "src", "dst"]), Value::Int(0));

    // Source and destination in either shard order (locked ascending whatever their
    // order in the command), with data present and when served after a wait.
    for i in 0..40 {
        let (src, dst) = (format!("s{i}"), format!("d{i}"));
        cmd(&mut c, &["RPUSH", &src, "x"]);
        assert_eq!(
            cmd(&mut c, &["BLMOVE", &src, &dst, "LEFT", "LEFT", "0"]),
            bulk("x")
        );
        if i % 5 == 0 {
            let h = spawn_cmd(&addr, &["BRPOPLPUSH", &src, &dst, "0"]);
            wait_blocked(&mut c, 1);
            cmd(&mut c, &["RPUSH", &src, "y"]);
            assert_eq!(h.join().unwrap(), bulk("y"));
        }
    }

    // A transaction's push serves a waiter after EXEC.
    let h = spawn_cmd(&addr, &["BLPOP", "tx", "0"]);
    wait_blocked(&mut c, 1);
    cmd(&mut c, &["MULTI"]);
    cmd(&mut c, &["SET", "other", "1"]);
    cmd(&mut c, &["RPUSH", "tx", "t"]);
    cmd(&mut c, &["EXEC"]);
    assert_eq!(h.join().unwrap(), Value::Array(vec![bulk("tx"), bulk("t")]));

    // A transaction that pushes, deletes and leaves a string wakes no one (the
    // waiter wants a list); the next push serves it.
    let h = spawn_cmd(&addr, &["BLPOP", "mixed", "0"]);
    wait_blocked(&mut c, 1);
    cmd(&mut c, &["MULTI"]);
    cmd(&mut c, &["LPUSH", "mixed", "a"]);
    cmd(&mut c, &["DEL", "mixed"]);
    cmd(&mut c, &["SET", "mixed", "foo"]);
    cmd(&mut c, &["EXEC"]);
    cmd(&mut c, &["DEL", "mixed"]);
    cmd(&mut c, &["LPUSH", "mixed", "b"]);
    assert_eq!(
        h.join().unwrap(),
        Value::Array(vec![bulk("mixed"), bulk("b")])
    );

    // A value of another type leaves the waiter waiting (as in Redis); a list later
    // serves it.
    let h = spawn_cmd(&addr, &["BLPOP", "wt", "0"]);
    wait_blocked(&mut c, 1);
    cmd(&mut c, &["SET", "wt", "x"]);
    thread::sleep(Duration::from_millis(50));
    assert_eq!(info_num(&mut c, "clients", "blocked_clients"), 1);
    cmd(&mut c, &["DEL", "wt"]);
    cmd(&mut c, &["RPUSH", "wt", "l"]);
    assert_eq!(h.join().unwrap(), Value::Array(vec![bulk("wt"), bulk("l")]));
}

#[test]
fn pipelined_commands_wait_and_a_closed_client_is_not_served() {
    let (_server, addr) = kvs_serve(&["--port", "0", "--threads", "2"]);
    let mut c = connect(&addr);
    let mut raw = TcpStream::connect(&addr).unwrap();
    raw.write_all(b"BLPOP p 0\r\nPING\r\n").unwrap();
    wait_blocked(&mut c, 1);
    cmd(&mut c, &["RPUSH", "p", "one"]);
    let want = b"*2\r\n$1\r\np\r\n$3\r\none\r\n+PONG\r\n";
    let mut got = vec![0u8; want.len()];
    raw.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    raw.read_exact(&mut got).unwrap();
    assert_eq!(got, want, "{}", String::from_utf8_lossy(&got));

    // A blocked client that leaves is forgotten: the next push stays in the list.
    let mut gone = TcpStream::connect(&addr).unwrap();
    gone.write_all(b"BLPOP left 0\r\n").unwrap();
    wait_blocked(&mut c, 1);
    drop(gone);
    wait_blocked(&mut c, 0);
    cmd(&mut c, &["RPUSH", "left", "kept"]);
    assert_eq!(cmd(&mut c, &["LLEN", "left"]), Value::Int(1));

    // CLIENT UNBLOCK answers a waiter with nil (TIMEOUT) or an error (ERROR).
    let mut w = connect(&addr);
    let id = cmd(&mut w, &["CLIENT", "ID"]);
    let Value::Int(id) = id else { panic!("{id:?}") };
    let h = thread::spawn(move || {
        redis::cmd("BLPOP")
            .arg("u")
            .arg("0")
            .query::<Value>(&mut w)
            .map_err(|e| e.to_string())
    });
    wait_blocked(&mut c, 1);
    let id = id.to_string();
    assert_eq!(
        cmd(&mut c, &["CLIENT", "UNBLOCK", &id, "ERROR"]),
        Value::Int(1)
    );
    let e = h.join().unwrap().expect_err("UNBLOCKED");
    assert!(e.contains("UNBLOCKED"), "{e}");
    assert_eq!(cmd(&mut c, &["CLIENT", "UNBLOCK", &id]), Value::Int(0));
}

#[test]
fn a_served_pop_is_durable() {
    let aof = fresh_log("kvs-blocking");
    let args = durable_args(&aof);
    {
        let (_server, addr) = kvs_serve(&args);
        let mut c = connect(&addr);
        let h = spawn_cmd(&addr, &["BLPOP", "d", "0"]);
        wait_blocked(&mut c, 1);
        cmd(&mut c, &["RPUSH", "d", "taken", "left"]);
        assert_eq!(
            h.join().unwrap(),
            Value::Array(vec![bulk("d"), bulk("taken")])
        );
        // _server is killed with SIGKILL when dropped.
    }
    let (_server, addr) = kvs_serve(&args);
    let mut c = connect(&addr);
    assert_eq!(
        cmd(&mut c, &["LRANGE", "d", "0", "-1"]),
        Value::Array(vec![bulk("left")])
    );
}

/// The `field=value` pairs of `cmdstat_<name>` in INFO commandstats.
fn cmdstat(c: &mut Connection, name: &str) -> Option<std::collections::HashMap<String, String>> {
    let info: String = redis::cmd("INFO").arg("commandstats").query(c).unwrap();
    let line = info
        .lines()
        .find(|l| l.starts_with(&format!("cmdstat_{name}:")))?;
    let (_, fields) = line.split_once(':').unwrap();
    Some(
        fields
            .split(',')
            .filter_map(|f| f.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
}

#[test]
fn commandstats_count_a_blocked_command_once() {
    let (_server, addr) = kvs_serve(&["--port", "0", "--threads", "2"]);
    let mut c = connect(&addr);
    let h = spawn_cmd(&addr, &["BLPOP", "cs", "0"]);
    wait_blocked(&mut c, 1);
    cmd(&mut c, &["RPUSH", "cs", "v"]);
    h.join().unwrap();
    assert_eq!(cmdstat(&mut c, "blpop").unwrap()["calls"], "1", "served");
    cmd(&mut c, &["BLPOP", "cs", "0.01"]);
    assert_eq!(cmdstat(&mut c, "blpop").unwrap()["calls"], "2", "timed out");
    // Refused before running (arity) and run with an error reply (WRONGTYPE).
    let _ = redis::cmd("GET").query::<Value>(&mut c);
    cmd(&mut c, &["SET", "s", "x"]);
    let _ = redis::cmd("LPUSH").arg("s").arg("y").query::<Value>(&mut c);
    assert_eq!(cmdstat(&mut c, "get").unwrap()["rejected_calls"], "1");
    assert_eq!(cmdstat(&mut c, "lpush").unwrap()["failed_calls"], "1");
    assert_eq!(cmdstat(&mut c, "lpush").unwrap()["calls"], "1");
    assert!(
        cmdstat(&mut c, "zadd").is_none(),
        "never called, not listed"
    );
    cmd(&mut c, &["CONFIG", "RESETSTAT"]);
    assert!(cmdstat(&mut c, "blpop").is_none(), "RESETSTAT clears them");
}

#[test]
fn timeouts_still_fire_after_a_script_has_run() {
    // Once a script has run, a loop serves its clients on loan (so that a long script
    // can answer them BUSY); a client blocked that way must still time out.
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let mut c = connect(&addr);
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    assert_eq!(cmd(&mut c, &["EVAL", "return 1", "0"]), Value::Int(1));
    assert_eq!(cmd(&mut c, &["BLPOP", "nothing", "0.1"]), Value::Nil);
}

/// One entry of an XREAD / XREADGROUP reply: `[key, [[id, [f, v]]]]`.
fn stream_reply(key: &str, id: &str, f: &str, v: &str) -> Value {
    Value::Array(vec![Value::Array(vec![
        bulk(key),
        Value::Array(vec![Value::Array(vec![
            bulk(id),
            Value::Array(vec![bulk(f), bulk(v)]),
        ])]),
    ])])
}

#[test]
fn stream_readers_block_until_entries_arrive_and_what_groups_took_is_durable() {
    let aof = fresh_log("kvs-blocking-stream");
    let args = durable_args(&aof);
    let (server, addr) = kvs_serve(&args);
    let mut c = connect(&addr);
    cmd(&mut c, &["XADD", "s", "5-0", "old", "x"]);
    // `$` means after the last entry when the client blocked: the new one serves it,
    // not the old one.
    let h = spawn_cmd(&addr, &["XREAD", "BLOCK", "0", "STREAMS", "s", "$"]);
    wait_blocked(&mut c, 1);
    cmd(&mut c, &["XADD", "s", "6-0", "new", "y"]);
    assert_eq!(h.join().unwrap(), stream_reply("s", "6-0", "new", "y"));
    // A key deleted or of another type leaves XREAD waiting; a stream made again
    // serves it.
    let h = spawn_cmd(&addr, &["XREAD", "BLOCK", "0", "STREAMS", "s", "$"]);
    wait_blocked(&mut c, 1);
    cmd(&mut c, &["DEL", "s"]);
    cmd(&mut c, &["SET", "s", "str"]);
    cmd(&mut c, &["DEL", "s"]);
    assert_eq!(info_num(&mut c, "clients", "blocked_clients"), 1);
    cmd(&mut c, &["XADD", "s", "7-0", "again", "z"]);
    assert_eq!(h.join().unwrap(), stream_reply("s", "7-0", "again", "z"));
    // A timeout answers nil; inside MULTI nothing blocks.
    assert_eq!(
        cmd(&mut c, &["XREAD", "BLOCK", "10", "STREAMS", "s", "$"]),
        Value::Nil
    );

    // A group reader waits for new entries and is answered NOGROUP when its key goes.
    cmd(&mut c, &["XGROUP", "CREATE", "s", "g", "$"]);
    let args_g = [
        "XREADGROUP",
        "GROUP",
        "g",
        "alice",
        "BLOCK",
        "0",
        "STREAMS",
        "s",
        ">",
    ];
    let h = spawn_cmd(&addr, &args_g);
    wait_blocked(&mut c, 1);
    cmd(&mut c, &["XADD", "s", "8-0", "job", "1"]);
    assert_eq!(h.join().unwrap(), stream_reply("s", "8-0", "job", "1"));
    let addr2 = addr.clone();
    let h = thread::spawn(move || {
        let mut c = connect(&addr2);
        c.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        common::try_cmd(&mut c, &args_g).map_err(|e| e.to_string())
    });
    wait_blocked(&mut c, 1);
    cmd(&mut c, &["XADD", "other", "1-0", "a", "b"]);
    cmd(&mut c, &["RENAME", "other", "s2"]);
    cmd(&mut c, &["DEL", "s"]);
    let e = h.join().unwrap().unwrap_err();
    assert!(e.contains("NOGROUP"), "{e}");
    // What a group delivered is pending after a restart from the log.
    cmd(&mut c, &["XGROUP", "CREATE", "t", "g", "0", "MKSTREAM"]);
    cmd(&mut c, &["XADD", "t", "1-0", "a", "1"]);
    cmd(&mut c, &["XADD", "t", "2-0", "b", "2"]);
    cmd(
        &mut c,
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "bob",
            "COUNT",
            "1",
            "STREAMS",
            "t",
            ">",
        ],
    );
    drop(server);
    let (_server, addr) = kvs_serve(&args);
    let mut c = connect(&addr);
    let pending = cmd(&mut c, &["XPENDING", "t", "g"]);
    assert_eq!(
        pending,
        Value::Array(vec![
            Value::Int(1),
            bulk("1-0"),
            bulk("1-0"),
            Value::Array(vec![Value::Array(vec![bulk("bob"), bulk("1")])]),
        ])
    );
    // The next read for the group starts after what it was given.
    assert_eq!(
        cmd(
            &mut c,
            &["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "t", ">"]
        ),
        stream_reply("t", "2-0", "b", "2")
    );
    assert_eq!(cmd(&mut c, &["XLEN", "s2"]), Value::Int(1));
}
