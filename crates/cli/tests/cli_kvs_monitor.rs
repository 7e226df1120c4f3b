//! MONITOR through the real binary: the lines a monitor gets for the commands of
//! clients on both event loops compared with redis-server's (timestamps and client
//! ports aside): argument quoting, the database, MULTI/EXEC order, `lua` for a
//! script's commands, hidden administrative commands, redacted AUTH and HELLO AUTH;
//! what a monitor may still run, RESET leaving monitor mode, the `O` flag of CLIENT
//! LIST, and a monitor that reads nothing closed at the output limit while the server
//! serves the others.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{kvs_serve, redis_server};

/// A raw connection: requests in RESP, replies parsed one at a time (what arrives
/// past a reply is kept for the next).
struct Raw {
    sock: TcpStream,
    parser: redis::Parser,
}

impl Raw {
    fn open(addr: &str) -> Raw {
        let sock = TcpStream::connect(addr).expect("connect");
        sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        Raw {
            sock,
            parser: redis::Parser::new(),
        }
    }

    fn send(&mut self, args: &[&[u8]]) {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
        self.sock.write_all(&out).expect("send");
    }

    /// The next reply (or monitor line).
    fn next(&mut self) -> redis::Value {
        let v = self.parser.parse_value(&mut self.sock);
        v.unwrap_or_else(|e| panic!("a reply: {e}"))
    }

    /// Sends a request and reads its reply.
    fn req(&mut self, args: &[&[u8]]) -> redis::Value {
        self.send(args);
        self.next()
    }
}

fn s(args: &[&str]) -> Vec<Vec<u8>> {
    args.iter().map(|a| a.as_bytes().to_vec()).collect()
}

/// The commands run by clients while one monitors, ending with a PING that marks the
/// end (each list is one client's, run in turn).
fn script() -> Vec<(usize, Vec<Vec<u8>>)> {
    let odd = b"a b\"c\\\n\r\t\x07\x08\x01\xc3\xa9".to_vec();
    vec![
        (0, vec![b"SET".to_vec(), b"k".to_vec(), odd]),
        (1, s(&["get", "k"])),
        (0, s(&["MULTI"])),
        (0, s(&["SET", "x", "1"])),
        (0, s(&["GET", "x"])),
        (0, s(&["EXEC"])),
        (1, s(&["EVAL", "redis.call('set','y','2') return 1", "0"])),
        (0, s(&["CONFIG", "GET", "port"])),
        (0, s(&["CONFIG", "HELP"])),
        (1, s(&["CLIENT", "LIST"])),
        (1, s(&["CLIENT", "ID"])),
        (0, s(&["AUTH", "nobody", "wrong"])),
        (1, s(&["HELLO", "3", "AUTH", "default", "x"])),
        (1, s(&["HELLO", "2"])),
        (0, s(&["SELECT", "3"])),
        (0, s(&["GET", "q"])),
        (0, s(&["NOSUCHCMD"])),
        (1, s(&["GET"])),
        (0, s(&["EXEC"])),
        (1, s(&["DEBUG", "SLEEP", "0"])),
        (0, s(&["BLPOP", "nolist", "0.01"])),
        (1, s(&["PING"])),
    ]
}

/// Runs [`script`] on the server at `addr` with a monitor attached; the monitor's
/// lines, each with its timestamp dropped and the client's address replaced by `c0`,
/// `c1` (`lua` kept).
fn monitored(addr: &str) -> Vec<String> {
    let mut mon = Raw::open(addr);
    assert_eq!(mon.req(&[b"MONITOR"]), redis::Value::Okay);
    let mut clients = [Raw::open(addr), Raw::open(addr)];
    let ports: Vec<String> = clients
        .iter()
        .map(|c| c.sock.local_addr().unwrap().to_string())
        .collect();
    for (who, args) in script() {
        let argv: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        clients[who].req(&argv);
    }
    let mut lines = Vec::new();
    let mut r = BufReader::new(mon.sock.try_clone().unwrap());
    loop {
        let mut l = String::new();
        r.read_line(&mut l).expect("a monitor line");
        assert!(!l.is_empty(), "the monitor was closed");
        let l = l.trim_end().to_string();
        let (stamp, rest) = l.split_once(' ').expect("a timestamp");
        let secs: f64 = stamp[1..].parse().expect("seconds.micros");
        assert!(stamp.starts_with('+') && secs > 1e9, "{l}");
        let mut rest = rest.to_string();
        for (i, p) in ports.iter().enumerate() {
            rest = rest.replace(p, &format!("c{i}"));
        }
        let done = rest.ends_with("\"PING\"");
        lines.push(rest);
        if done {
            return lines;
        }
    }
}

#[test]
fn monitor_lines_match_redis() {
    let (_server, addr) = kvs_serve(&["--port", "0", "--threads", "2"]);
    let ours = monitored(&addr);
    let expected = [
        r#"[0 c0] "SET" "k" "a b\"c\\\n\r\t\a\b\x01\xc3\xa9""#,
        r#"[0 c1] "get" "k""#,
        r#"[0 c0] "MULTI""#,
        r#"[0 c0] "SET" "x" "1""#,
        r#"[0 c0] "GET" "x""#,
        r#"[0 c0] "EXEC""#,
        r#"[0 c1] "EVAL" "redis.call('set','y','2') return 1" "0""#,
        r#"[0 lua] "set" "y" "2""#,
        r#"[0 c0] "CONFIG" "HELP""#,
        r#"[0 c1] "CLIENT" "ID""#,
        r#"[0 c0] "AUTH" "(redacted)" "(redacted)""#,
        r#"[0 c1] "HELLO" "3" "AUTH" "(redacted)" "(redacted)""#,
        r#"[0 c1] "HELLO" "2""#,
        r#"[3 c0] "SELECT" "3""#,
        r#"[3 c0] "GET" "q""#,
        r#"[3 c0] "EXEC""#,
        r#"[3 c0] "BLPOP" "nolist" "0.01""#,
        r#"[0 c1] "PING""#,
    ];
    assert_eq!(ours, expected);
    let Some((_redis, raddr)) = redis_server() else {
        return common::missing_client("redis-server");
    };
    assert_eq!(ours, monitored(&raddr), "redis-server's monitor differs");
}

#[test]
fn a_monitor_runs_no_keyspace_commands_and_leaves_with_reset() {
    let (ours, addr) = kvs_serve(&["--port", "0", "--threads", "2"]);
    let mut servers = vec![(ours, addr)];
    servers.extend(redis_server());
    for (_, a) in &servers {
        let mut m = Raw::open(a);
        assert_eq!(m.req(&[b"MONITOR"]), redis::Value::Okay);
        let refused = format!("{:?}", m.req(&[b"GET", b"a"]));
        assert!(
            refused.contains("Replica can't interact with the keyspace"),
            "{a}: {refused}"
        );
        assert_eq!(m.req(&[b"PING"]), redis::Value::SimpleString("PONG".into()));
        let mut other = Raw::open(a);
        let list = other.req(&[b"CLIENT", b"LIST"]);
        let redis::Value::BulkString(list) = list else {
            panic!("{list:?}")
        };
        let list = String::from_utf8(list).unwrap();
        assert!(list.contains(" flags=O "), "{a}: {list}");
        // The monitor sees its own PING.
        let line = format!("{:?}", m.next());
        assert!(line.contains("\\\"PING\\\""), "{a}: {line}");
        let reset = m.req(&[b"RESET"]);
        assert_eq!(reset, redis::Value::SimpleString("RESET".into()), "{a}");
        assert_eq!(m.req(&[b"GET", b"a"]), redis::Value::Nil, "{a}");
        assert_eq!(other.req(&[b"SET", b"a", b"1"]), redis::Value::Okay);
        // Out of monitor mode: no line comes before the reply.
        let got = m.req(&[b"GET", b"a"]);
        assert_eq!(got, redis::Value::BulkString(b"1".to_vec()), "{a}");
    }
}

#[test]
fn a_monitor_that_reads_nothing_is_closed_at_the_output_limit() {
    let (_server, addr) = kvs_serve(&["--port", "0", "--threads", "2"]);
    let mut c = Raw::open(&addr);
    let limit: [&[u8]; 4] = [
        b"CONFIG",
        b"SET",
        b"client-output-buffer-limit",
        b"normal 1mb 0 0",
    ];
    assert_eq!(c.req(&limit), redis::Value::Okay);
    let mut m = Raw::open(&addr);
    assert_eq!(m.req(&[b"MONITOR"]), redis::Value::Okay);
    // The others are served while the monitor's lines pile up unread (20 MB of them).
    let big = vec![b'v'; 10_000];
    let t = Instant::now();
    for i in 0..2_000 {
        let key = format!("k{i}");
        let set: [&[u8]; 3] = [b"SET", key.as_bytes(), &big];
        assert_eq!(c.req(&set), redis::Value::Okay);
    }
    assert!(t.elapsed() < Duration::from_secs(20));
    // The monitor was closed: reading ends, after what was sent before the limit.
    let mut sink = Vec::new();
    let got = m.sock.read_to_end(&mut sink);
    let timed_out = got.as_ref().is_err_and(|e| {
        matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        )
    });
    assert!(!timed_out, "the monitor is still open");
    assert!(sink.len() < 10_000_000, "{}", sink.len());
    assert_eq!(c.req(&[b"PING"]), redis::Value::SimpleString("PONG".into()));
}
