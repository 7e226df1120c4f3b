//! CLIENT PAUSE and CLIENT UNPAUSE through the real binary, each case run on
//! redis-server too when it is installed: under WRITE, writes (also inside MULTI) and
//! EVAL wait while reads go on, held clients count in `blocked_clients`, and they run
//! in order once the pause times out or CLIENT UNPAUSE ends it; under ALL every
//! command waits, CLIENT UNPAUSE and the pausing client's own included; the expiry
//! sweep waits; the error replies equal Redis's.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{connect, info_num, kvs_serve, redis_server, try_cmd, Killed};

/// Our server (two loops) and, when installed, redis-server.
fn servers() -> Vec<(Killed, String)> {
    let mut all = vec![kvs_serve(&["--port", "0", "--threads", "2"])];
    all.extend(redis_server());
    all
}

/// A raw connection (requests are pipelined text, replies read as bytes).
fn raw(addr: &str) -> TcpStream {
    let s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    s
}

fn send(s: &mut TcpStream, req: &str) {
    s.write_all(req.as_bytes()).expect("send");
}

/// What arrives within the read timeout (empty: nothing).
fn got(s: &mut TcpStream) -> String {
    let mut buf = [0u8; 4096];
    match s.read(&mut buf) {
        Ok(n) => String::from_utf8_lossy(&buf[..n]).into_owned(),
        Err(_) => String::new(),
    }
}

/// Reads until `want` has arrived (at most `within`); what arrived.
fn wait_for(s: &mut TcpStream, want: &str, within: Duration) -> String {
    let t = Instant::now();
    let mut all = String::new();
    while !all.contains(want) && t.elapsed() < within {
        all.push_str(&got(s));
    }
    all
}

#[test]
fn a_write_pause_holds_writes_until_it_times_out() {
    for (_k, addr) in servers() {
        let mut r = connect(&addr);
        let mut a = raw(&addr);
        let start = Instant::now();
        send(&mut a, "CLIENT PAUSE 2000 WRITE\r\n");
        assert_eq!(got(&mut a), "+OK\r\n", "{addr}");
        // Writes from several clients (on both loops), EVAL and a write inside MULTI.
        let mut held: Vec<TcpStream> = (0..4).map(|_| raw(&addr)).collect();
        for (i, h) in held.iter_mut().enumerate() {
            send(h, &format!("SET k{i} v\r\nGET k{i}\r\n"));
        }
        let mut e = raw(&addr);
        send(&mut e, "EVAL \"return 1\" 0\r\n");
        let mut m = raw(&addr);
        send(&mut m, "MULTI\r\nSET m 1\r\nEXEC\r\n");
        // The pausing client's own write waits too; reads go on.
        send(&mut a, "PING\r\nSET own 1\r\n");
        assert_eq!(got(&mut a), "+PONG\r\n", "{addr}");
        for h in held.iter_mut().chain([&mut e]) {
            assert_eq!(got(h), "", "{addr}: answered during the pause");
        }
        assert_eq!(got(&mut m), "+OK\r\n", "{addr}");
        let gets = try_cmd(&mut r, &["GET", "k0"]).unwrap();
        assert_eq!(gets, redis::Value::Nil, "{addr}");
        // EVAL_RO is a read.
        let ro = try_cmd(&mut r, &["EVAL_RO", "return 2", "0"]).unwrap();
        assert_eq!(ro, redis::Value::Int(2), "{addr}");
        assert_eq!(info_num(&mut r, "clients", "blocked_clients"), 7, "{addr}");
        // Then all run, in order.
        for (i, h) in held.iter_mut().enumerate() {
            let reply = wait_for(h, "$1\r\nv\r\n", Duration::from_secs(3));
            assert_eq!(reply, "+OK\r\n$1\r\nv\r\n", "{addr}: client {i}");
        }
        assert!(start.elapsed() >= Duration::from_millis(1950), "{addr}");
        assert!(wait_for(&mut e, ":1", Duration::from_secs(2)).contains(":1\r\n"));
        let tx = wait_for(&mut m, "*1", Duration::from_secs(2));
        assert_eq!(tx, "+QUEUED\r\n*1\r\n+OK\r\n", "{addr}");
        assert_eq!(wait_for(&mut a, "+OK", Duration::from_secs(2)), "+OK\r\n");
        assert_eq!(info_num(&mut r, "clients", "blocked_clients"), 0, "{addr}");
    }
}

#[test]
fn unpause_lets_held_clients_run_at_once() {
    for (_k, addr) in servers() {
        let mut a = raw(&addr);
        send(&mut a, "CLIENT PAUSE 20000 WRITE\r\n");
        assert_eq!(got(&mut a), "+OK\r\n");
        let mut held: Vec<TcpStream> = (0..3).map(|_| raw(&addr)).collect();
        for h in &mut held {
            send(h, "INCR n\r\n");
        }
        for h in &mut held {
            assert_eq!(got(h), "", "{addr}");
        }
        let t = Instant::now();
        send(&mut a, "CLIENT UNPAUSE\r\n");
        assert_eq!(got(&mut a), "+OK\r\n");
        let mut seen: Vec<String> = held
            .iter_mut()
            .map(|h| wait_for(h, "\r\n", Duration::from_secs(3)))
            .collect();
        assert!(t.elapsed() < Duration::from_secs(2), "{addr}");
        seen.sort();
        assert_eq!(seen, [":1\r\n", ":2\r\n", ":3\r\n"], "{addr}");
    }
}

#[test]
fn an_all_pause_holds_every_command() {
    for (_k, addr) in servers() {
        let mut a = raw(&addr);
        let t = Instant::now();
        send(&mut a, "CLIENT PAUSE 600 ALL\r\nPING\r\n");
        assert_eq!(got(&mut a), "+OK\r\n", "{addr}");
        let mut b = raw(&addr);
        send(&mut b, "PING\r\nCLIENT UNPAUSE\r\n");
        assert_eq!(got(&mut b), "", "{addr}");
        let reply = wait_for(&mut b, "+OK", Duration::from_secs(3));
        assert_eq!(reply, "+PONG\r\n+OK\r\n", "{addr}");
        assert!(t.elapsed() >= Duration::from_millis(550), "{addr}");
        assert_eq!(
            wait_for(&mut a, "PONG", Duration::from_secs(1)),
            "+PONG\r\n"
        );
    }
}

#[test]
fn the_expiry_sweep_waits_for_the_pause() {
    for (_k, addr) in servers() {
        let mut r = connect(&addr);
        try_cmd(&mut r, &["SET", "gone", "1", "PX", "100"]).unwrap();
        try_cmd(&mut r, &["CLIENT", "PAUSE", "700", "WRITE"]).unwrap();
        std::thread::sleep(Duration::from_millis(400));
        // The key ran out during the pause, and no one read it: it was not removed.
        assert_eq!(info_num(&mut r, "stats", "expired_keys"), 0, "{addr}");
        let t = Instant::now();
        while info_num(&mut r, "stats", "expired_keys") == 0 {
            assert!(
                t.elapsed() < Duration::from_secs(5),
                "{addr}: never expired"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn pause_errors_match_redis() {
    let Some((_r, raddr)) = redis_server() else {
        return common::missing_client("redis-server");
    };
    let (_k, addr) = kvs_serve(&["--port", "0"]);
    let (mut theirs, mut ours) = (connect(&raddr), connect(&addr));
    let cases: &[&[&str]] = &[
        &["CLIENT", "PAUSE", "abc"],
        &["CLIENT", "PAUSE", "-1"],
        &["CLIENT", "PAUSE", "1.5"],
        &["CLIENT", "PAUSE", "99999999999999999999"],
        &["CLIENT", "PAUSE", "10", "FOO"],
        &["CLIENT", "PAUSE", "abc", "FOO"],
        &["CLIENT", "PAUSE"],
        &["CLIENT", "PAUSE", "10", "ALL", "x"],
        &["CLIENT", "UNPAUSE", "x"],
        &["CLIENT", "PAUSE", "0", "write"],
        &["CLIENT", "UNPAUSE"],
    ];
    common::same_replies(&mut theirs, &mut ours, cases);
}
