//! `wirespeed kvs serve` as a process, before and at AUTH: a client that has not
//! authenticated cannot make the server buffer a large request (Redis's limits since
//! CVE-2021-32675: 10 arguments, 16 KiB bulks, checked on the header), an AUTH
//! pipelined with a large SET still works, HELLO's AUTH checks the user name as AUTH
//! does, and a server reachable from other hosts with no password says so at start.

mod common;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use common::{kvs_serve, kvs_serve_start};

const WRONGPASS: &[u8] = b"-WRONGPASS invalid username-password pair or user is disabled.\r\n";

/// A field of /proc/PID/status, in KiB.
fn status_kib(pid: u32, field: &str) -> u64 {
    let status = wirespeed_util::proc::read_status(Some(pid)).expect("status");
    wirespeed_util::proc::status_bytes(&status, field.trim_end_matches(':'))
        .map(|b| b / 1024)
        .unwrap_or_else(|| panic!("no {field} in {status}"))
}

/// Reads until `want` bytes came, the peer closed, or 10 s passed.
fn read_some(s: &mut TcpStream, want: usize) -> Vec<u8> {
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while out.len() < want {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
    }
    out
}

/// One connection that announces a huge request before AUTH and then pushes up to
/// 200 MB of it; returns (bytes it managed to send, what it read back).
fn flood(addr: &str, header: &[u8], filler: &'static [u8]) -> (usize, Vec<u8>) {
    let mut s = TcpStream::connect(addr).expect("connect");
    let mut reader = s.try_clone().expect("clone");
    let replies = std::thread::spawn(move || read_some(&mut reader, 1 << 20));
    let mut sent = 0;
    let piece: Vec<u8> = filler.iter().copied().cycle().take(64 * 1024).collect();
    if s.write_all(header).is_ok() {
        sent += header.len();
        while sent < 200_000_000 {
            match s.write(&piece) {
                Ok(n) => sent += n,
                Err(_) => break,
            }
        }
    }
    let _ = s.shutdown(Shutdown::Write);
    (sent, replies.join().expect("reader"))
}

#[test]
fn unauthenticated_floods_are_cut_at_the_header_and_memory_stays_small() {
    let (server, addr) = kvs_serve(&["--port", "0", "--requirepass", "secret"]);
    let pid = server.0.id();
    let rss_before = status_kib(pid, "VmRSS:");
    let started = Instant::now();
    let floods: Vec<_> = (0..4)
        .map(|i| {
            let addr = addr.clone();
            std::thread::spawn(move || {
                if i % 2 == 0 {
                    // One SET whose value is announced as 200 MB.
                    let (sent, got) =
                        flood(&addr, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$200000000\r\n", b"x");
                    (
                        sent,
                        got,
                        &b"-ERR Protocol error: unauthenticated bulk length\r\n"[..],
                    )
                } else {
                    // A request announcing a million one-byte arguments (within
                    // proto-max-multibulk-len, so only the limit before AUTH cuts it).
                    let (sent, got) = flood(&addr, b"*1000000\r\n", b"$1\r\na\r\n");
                    (
                        sent,
                        got,
                        &b"-ERR Protocol error: unauthenticated multibulk length\r\n"[..],
                    )
                }
            })
        })
        .collect();
    for f in floods {
        let (sent, got, error) = f.join().expect("a flood");
        eprintln!("a flood sent {sent} bytes before the server closed it");
        assert_eq!(got, error, "the error, then the connection closes");
        // Closed early: the kernel's socket buffers are all the server let through.
        assert!(
            sent < 64 << 20,
            "{sent} bytes sent before the server closed"
        );
    }
    let took = started.elapsed();
    eprintln!(
        "floods cut in {took:?}; server RSS {rss_before} KiB before, peak {} KiB",
        status_kib(pid, "VmHWM:")
    );
    // Peak resident memory of the whole run. Each connection holds at most one read
    // (16 KiB) and one request header when it is cut, so the floods add nothing the
    // allocator would notice; 16 MiB is room for thread stacks and allocator arenas,
    // far below the 800 MB the floods pushed at it.
    let peak = status_kib(pid, "VmHWM:");
    assert!(
        peak < rss_before + 16 * 1024,
        "peak RSS {peak} KiB, {rss_before} KiB before the floods"
    );
    assert!(took < Duration::from_secs(20), "{took:?}");
    // The server still serves, and a request at the limits before AUTH is parsed
    // whole (and refused for want of AUTH, not for its size).
    let mut s = TcpStream::connect(&addr).expect("connect");
    let mut req = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$16384\r\n".to_vec();
    req.extend(std::iter::repeat_n(b'v', 16384));
    req.extend_from_slice(b"\r\n*1\r\n$4\r\nPING\r\n");
    s.write_all(&req).expect("send");
    let want = b"-NOAUTH Authentication required.\r\n-NOAUTH Authentication required.\r\n";
    assert_eq!(read_some(&mut s, want.len()), want);
}

#[test]
fn an_unauthenticated_client_that_reads_no_replies_is_closed() {
    let (server, addr) = kvs_serve(&["--port", "0", "--requirepass", "secret"]);
    let pid = server.0.id();
    // A million PINGs (6 MB), each answered with a NOAUTH error (31 MB in all), none
    // read for a while: the server closes the client once its unsent replies pass
    // 64 KiB past what the socket buffers hold, instead of keeping them.
    let mut s = TcpStream::connect(&addr).expect("connect");
    let mut w = s.try_clone().expect("clone");
    let writer = std::thread::spawn(move || {
        let chunk = b"PING\r\n".repeat(10_000);
        for _ in 0..100 {
            if w.write_all(&chunk).is_err() {
                break;
            }
        }
    });
    std::thread::sleep(Duration::from_secs(2));
    let replies = read_some(&mut s, usize::MAX);
    let _ = writer.join();
    let all = 1_000_000 * b"-NOAUTH Authentication required.\r\n".len();
    assert!(
        replies.len() < all / 2,
        "{} of {all} reply bytes were kept and sent",
        replies.len()
    );
    // What was sent before the close, if anything, is NOAUTH errors.
    assert!(
        replies.is_empty() || replies.starts_with(b"-NOAUTH"),
        "{:?}",
        &replies[..replies.len().min(40)]
    );
    assert!(
        status_kib(pid, "VmHWM:") < 64 * 1024,
        "the server peaked at {} KiB",
        status_kib(pid, "VmHWM:")
    );
}

#[test]
fn after_auth_large_values_work_also_pipelined_with_the_auth() {
    let (_server, addr) = kvs_serve(&["--port", "0", "--requirepass", "secret"]);
    let big: Vec<u8> = (0..1 << 20).map(|i| (i % 251) as u8).collect();
    // The redis crate: AUTH, then a 1 MB SET and its GET.
    let mut c = redis::Client::open(format!("redis://:secret@{addr}/"))
        .and_then(|c| c.get_connection())
        .expect("connect with the password");
    redis::cmd("SET")
        .arg("big")
        .arg(&big)
        .query::<()>(&mut c)
        .expect("SET 1 MB after AUTH");
    let back: Vec<u8> = redis::cmd("GET").arg("big").query(&mut c).expect("GET");
    assert_eq!(back, big);
    // One write: AUTH, a 1 MB SET (past the limits before AUTH) and a GET. The limits
    // apply per request, after the request before it ran.
    let mut set = format!("*3\r\n$3\r\nSET\r\n$2\r\nk2\r\n${}\r\n", big.len()).into_bytes();
    set.extend_from_slice(&big);
    set.extend_from_slice(b"\r\n");
    let req = [
        &b"*2\r\n$4\r\nAUTH\r\n$6\r\nsecret\r\n"[..],
        &set,
        b"*2\r\n$6\r\nSTRLEN\r\n$2\r\nk2\r\n",
    ]
    .concat();
    let mut s = TcpStream::connect(&addr).expect("connect");
    s.write_all(&req).expect("send");
    let want = format!("+OK\r\n+OK\r\n:{}\r\n", big.len()).into_bytes();
    assert_eq!(read_some(&mut s, want.len()), want);
    // The same without the AUTH is cut at the bulk's header. Only the header is sent:
    // the server closes the connection there, and the rest of a 1 MB write could meet
    // that close (a reset) before the reply is read.
    let header = format!("*3\r\n$3\r\nSET\r\n$2\r\nk2\r\n${}\r\n", big.len());
    let mut s = TcpStream::connect(&addr).expect("connect");
    s.write_all(header.as_bytes()).expect("send");
    let got = read_some(&mut s, 1 << 10);
    assert_eq!(got, b"-ERR Protocol error: unauthenticated bulk length\r\n");
}

/// Sends one request and reads its first reply line's worth (`want` bytes at most).
fn ask(s: &mut TcpStream, args: &[&str], want: usize) -> Vec<u8> {
    let mut req = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        req.extend_from_slice(format!("${}\r\n{a}\r\n", a.len()).as_bytes());
    }
    s.write_all(&req).expect("send");
    let mut out = Vec::new();
    let mut b = [0u8; 1];
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    while out.len() < want && !out.ends_with(b"\r\n") {
        match s.read(&mut b) {
            Ok(1) => out.push(b[0]),
            _ => break,
        }
    }
    out
}

#[test]
fn hello_auth_checks_the_user_as_auth_does() {
    let (_server, addr) = kvs_serve(&["--port", "0", "--requirepass", "secret"]);
    let mut s = TcpStream::connect(&addr).expect("connect");
    for (user, pass) in [
        ("bob", "secret"),
        ("DEFAULT", "secret"),
        ("default", "wrong"),
    ] {
        assert_eq!(
            ask(&mut s, &["HELLO", "3", "AUTH", user, pass], 200),
            WRONGPASS,
            "HELLO 3 AUTH {user} {pass}"
        );
        assert_eq!(
            ask(&mut s, &["AUTH", user, pass], 200),
            WRONGPASS,
            "AUTH {user} {pass}"
        );
        // Still not authenticated.
        assert_eq!(
            ask(&mut s, &["GET", "k"], 200),
            b"-NOAUTH Authentication required.\r\n"
        );
    }
    assert_eq!(
        ask(&mut s, &["HELLO", "3", "AUTH", "default"], 200),
        b"-ERR Syntax error in HELLO option 'AUTH'\r\n"
    );
    // The right pair: the RESP3 map of HELLO, then commands run (a RESP3 null).
    assert_eq!(
        ask(&mut s, &["HELLO", "3", "AUTH", "default", "secret"], 200),
        b"%7\r\n"
    );
    let mut rest = [0u8; 4096];
    s.set_read_timeout(Some(Duration::from_millis(200)))
        .expect("timeout");
    let _ = s.read(&mut rest);
    assert_eq!(ask(&mut s, &["GET", "k"], 200), b"_\r\n");

    // The redis crate sends HELLO 3 AUTH <user> <pass> for RESP3 connections.
    let open = |url: String| redis::Client::open(url).and_then(|c| c.get_connection());
    let err = open(format!("redis://bob:secret@{addr}/?protocol=resp3"))
        .err()
        .expect("user bob is refused");
    assert!(err.to_string().contains("WRONGPASS"), "{err}");
    let mut c = open(format!("redis://default:secret@{addr}/?protocol=resp3"))
        .expect("user default with the password");
    let pong: String = redis::cmd("PING").query(&mut c).expect("PING");
    assert_eq!(pong, "PONG");
}

#[test]
fn a_server_open_to_other_hosts_without_a_password_warns_at_start() {
    let warning = |lines: &[String]| {
        lines
            .iter()
            .filter(|l| l.contains("no requirepass"))
            .cloned()
            .collect::<Vec<_>>()
    };
    let (_s, _, lines) = kvs_serve_start(&["--bind", "0.0.0.0", "--port", "0"]);
    let w = warning(&lines);
    assert_eq!(w.len(), 1, "{lines:?}");
    assert!(
        w[0].starts_with("kvs: warning: listening on 0.0.0.0:"),
        "{w:?}"
    );
    assert!(
        w[0].contains("anyone who can reach this port can read and change every key")
            && w[0].contains("set requirepass or bind 127.0.0.1"),
        "{w:?}"
    );
    for args in [
        &["--bind", "0.0.0.0", "--port", "0", "--requirepass", "pw"][..],
        &["--bind", "127.0.0.1", "--port", "0"],
        &["--port", "0"],
    ] {
        let (_s, _, lines) = kvs_serve_start(args);
        assert!(warning(&lines).is_empty(), "{args:?}: {lines:?}");
    }
}
