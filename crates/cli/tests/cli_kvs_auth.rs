//! `wirespeed kvs serve` as a process, before and at AUTH: a client that has not
//! authenticated cannot make the server buffer a large request (Redis's limits since
//! CVE-2021-32675: 10 arguments, 16 KiB bulks, checked on the header), an AUTH
//! pipelined with a large SET still works, HELLO's AUTH checks the user name as AUTH
//! does, and a server reachable from other hosts with no password says so at start.
//!
//! ACLs, as Redis 7.2 has them (the cases of its acl.tcl and acl-v2.tcl that matter):
//! users and passwords, commands, subcommands and categories, keys with read and
//! write permissions, channels, selectors, ACL DRYRUN, ACL LOG, the ACL file and
//! `user` lines, `requirepass` as the default user's password, `masteruser`, what a
//! client with a password and limited permissions cannot reach, and redis-cli.

mod common;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use common::{connect, info_num, kvs_serve, kvs_serve_start, temp, until};
use redis::Value;

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

// ACLs (Redis 7.2's access control lists): the cases of Redis's acl.tcl and
// acl-v2.tcl, through the binary.

/// A reply as text: bulk and simple strings as they are, integers in decimal, arrays
/// (and maps, sets) as their elements joined by spaces; an error as `CODE detail`.
fn q(c: &mut redis::Connection, args: &[&str]) -> String {
    fn flat(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Nil => out.push("(nil)".into()),
            Value::Int(i) => out.push(i.to_string()),
            Value::BulkString(b) => out.push(String::from_utf8_lossy(b).into_owned()),
            Value::SimpleString(s) => out.push(s.clone()),
            Value::Okay => out.push("OK".into()),
            Value::Array(a) | Value::Set(a) => a.iter().for_each(|x| flat(x, out)),
            Value::Map(m) => m.iter().for_each(|(k, x)| {
                flat(k, out);
                flat(x, out)
            }),
            other => out.push(format!("{other:?}")),
        }
    }
    match common::try_cmd(c, args) {
        Ok(v) => {
            let mut out = Vec::new();
            flat(&v, &mut out);
            out.join(" ")
        }
        Err(e) => format!("{} {}", e.code().unwrap_or("?"), e.detail().unwrap_or("")),
    }
}

/// Name and value pairs of a reply.
type Fields = Vec<(String, String)>;

/// ACL GETUSER's fields: the top-level ones, and each selector's.
fn getuser(c: &mut redis::Connection, name: &str) -> (Fields, Vec<Fields>) {
    let v = common::cmd(c, &["ACL", "GETUSER", name]);
    let text = |v: &Value| match v {
        Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Array(a) => a
            .iter()
            .map(|x| match x {
                Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
                other => format!("{other:?}"),
            })
            .collect::<Vec<_>>()
            .join(" "),
        other => format!("{other:?}"),
    };
    let Value::Array(fields) = v else {
        panic!("GETUSER {name}: {v:?}")
    };
    let mut top = Vec::new();
    let mut selectors = Vec::new();
    for kv in fields.chunks(2) {
        let key = text(&kv[0]);
        if key == "selectors" {
            let Value::Array(sels) = &kv[1] else { panic!() };
            for s in sels {
                let Value::Array(f) = s else { panic!() };
                selectors.push(f.chunks(2).map(|p| (text(&p[0]), text(&p[1]))).collect());
            }
        } else {
            top.push((key, text(&kv[1])));
        }
    }
    (top, selectors)
}

fn field(fields: &[(String, String)], name: &str) -> String {
    fields
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| panic!("no {name} in {fields:?}"))
}

/// ACL LOG's newest entry, by field.
fn last_log(c: &mut redis::Connection) -> std::collections::HashMap<String, String> {
    let v = common::cmd(c, &["ACL", "LOG", "1"]);
    let Value::Array(entries) = v else {
        panic!("{v:?}")
    };
    let Value::Array(e) = &entries[0] else {
        panic!()
    };
    e.chunks(2)
        .map(|kv| {
            let s = |v: &Value| match v {
                Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
                Value::Int(i) => i.to_string(),
                other => format!("{other:?}"),
            };
            (s(&kv[0]), s(&kv[1]))
        })
        .collect()
}

#[test]
fn acl_users_passwords_and_authentication() {
    let (_s, addr) = kvs_serve(&["--port", "0"]);
    let mut r = connect(&addr);
    assert_eq!(q(&mut r, &["ACL", "WHOAMI"]), "default");
    assert_eq!(q(&mut r, &["ACL", "SETUSER", "newuser"]), "OK");
    assert_eq!(q(&mut r, &["ACL", "USERS"]), "default newuser");
    assert_eq!(
        q(&mut r, &["ACL", "SETUSER", "a a"]),
        "ERR Usernames can't contain spaces or null characters"
    );
    // New users start disabled.
    q(&mut r, &["ACL", "SETUSER", "newuser", ">passwd1"]);
    let mut u = connect(&addr);
    assert!(q(&mut u, &["AUTH", "newuser", "passwd1"]).starts_with("WRONGPASS"));
    q(&mut r, &["ACL", "SETUSER", "newuser", "on", "+acl"]);
    assert_eq!(q(&mut u, &["AUTH", "newuser", "passwd1"]), "OK");
    assert_eq!(q(&mut u, &["ACL", "WHOAMI"]), "newuser");
    // Only the set of passwords works, passwords can be removed, hashes added.
    q(&mut r, &["ACL", "SETUSER", "newuser", ">passwd2"]);
    assert_eq!(q(&mut u, &["AUTH", "newuser", "passwd2"]), "OK");
    assert!(q(&mut u, &["AUTH", "newuser", "passwd3"]).starts_with("WRONGPASS"));
    q(&mut r, &["ACL", "SETUSER", "newuser", "<passwd1"]);
    assert!(q(&mut u, &["AUTH", "newuser", "passwd1"]).starts_with("WRONGPASS"));
    let hash = "34344e4d60c2b6d639b7bd22e18f2b0b91bc34bf0ac5f9952744435093cfb4e6";
    q(&mut r, &["ACL", "SETUSER", "newuser", &format!("#{hash}")]);
    assert_eq!(q(&mut u, &["AUTH", "newuser", "passwd4"]), "OK");
    for bad in [&hash[1..], &format!("{}q", &hash[1..])] {
        assert_eq!(
            q(&mut r, &["ACL", "SETUSER", "newuser", &format!("#{bad}")]),
            format!("ERR Error in ACL SETUSER modifier '#{bad}': The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters")
        );
    }
    let (top, _) = getuser(&mut r, "newuser");
    let passwords = field(&top, "passwords");
    assert!(
        passwords.contains(hash) && !passwords.contains("passwd4"),
        "{passwords}"
    );
    q(&mut r, &["ACL", "SETUSER", "newuser", &format!("!{hash}")]);
    assert!(!field(&getuser(&mut r, "newuser").0, "passwords").contains(hash));
    assert_eq!(field(&top, "flags"), "on sanitize-payload");
    // Users are not able to run any command nor touch any key by default.
    q(&mut r, &["ACL", "SETUSER", "newuser", "nopass"]);
    assert_eq!(q(&mut u, &["AUTH", "newuser", "zipzapblabla"]), "OK");
    assert_eq!(
        q(&mut u, &["SET", "foo", "bar"]),
        "NOPERM User newuser has no permissions to run the 'set' command"
    );
    q(&mut r, &["ACL", "SETUSER", "newuser", "+set"]);
    assert_eq!(
        q(&mut u, &["SET", "foo", "bar"]),
        "NOPERM No permissions to access a key"
    );
    q(
        &mut r,
        &[
            "ACL",
            "SETUSER",
            "newuser",
            "allcommands",
            "~foo:*",
            "~bar:*",
        ],
    );
    assert_eq!(q(&mut u, &["SET", "foo:1", "a"]), "OK");
    assert_eq!(
        q(&mut u, &["SET", "zap:3", "c"]),
        "NOPERM No permissions to access a key"
    );
    // The AUTH forms and their errors.
    assert_eq!(
        q(&mut r, &["AUTH", "pw"]),
        "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
    );
    assert_eq!(q(&mut r, &["AUTH", "a", "b", "c"]), "ERR syntax error");
    assert_eq!(
        q(&mut r, &["ACL", "DELUSER", "default"]),
        "ERR The 'default' user cannot be removed"
    );
    // HELLO: the last AUTH pair counts; a failed one changes nothing, its SETNAME
    // included; a bad name is refused.
    for n in ["secure-user1", "secure-user2"] {
        q(&mut r, &["ACL", "SETUSER", n, ">supass", "on", "+@all"]);
    }
    let mut h = connect(&addr);
    q(&mut h, &["CLIENT", "SETNAME", "client0"]);
    assert!(q(
        &mut h,
        &[
            "HELLO",
            "2",
            "AUTH",
            "secure-user",
            "pass",
            "AUTH",
            "secure-user2",
            "supass",
            "AUTH",
            "secure-user1",
            "supass"
        ]
    )
    .starts_with("server redis"));
    assert_eq!(q(&mut h, &["ACL", "WHOAMI"]), "secure-user1");
    assert!(q(
        &mut h,
        &[
            "HELLO",
            "2",
            "AUTH",
            "secure-user2",
            "supass",
            "AUTH",
            "secure-user1",
            "pass",
            "SETNAME",
            "client1"
        ]
    )
    .starts_with("WRONGPASS"));
    assert_eq!(q(&mut h, &["ACL", "WHOAMI"]), "secure-user1");
    assert_eq!(q(&mut h, &["CLIENT", "GETNAME"]), "client0");
    assert_eq!(
        q(
            &mut h,
            &["HELLO", "2", "SETNAME", "client5", "SETNAME", "client name"]
        ),
        "ERR Client names cannot contain spaces, newlines or special characters."
    );
    // CLIENT LIST and INFO show the user; CLIENT KILL USER closes its connections.
    assert!(q(&mut h, &["CLIENT", "INFO"]).contains(" user=secure-user1 "));
    assert!(q(&mut r, &["CLIENT", "LIST"]).contains(" user=newuser "));
    assert_eq!(
        q(&mut r, &["CLIENT", "KILL", "USER", "nosuch"]),
        "ERR No such user 'nosuch'"
    );
    assert_eq!(q(&mut r, &["CLIENT", "KILL", "USER", "secure-user1"]), "1");
    assert!(common::try_cmd(&mut h, &["PING"]).is_err(), "killed");
    // RESET: the default user again.
    assert_eq!(q(&mut u, &["RESET"]), "RESET");
    assert_eq!(q(&mut u, &["ACL", "WHOAMI"]), "default");
    // Deleting a user closes its connections, after the reply to its own DELUSER.
    q(
        &mut r,
        &["ACL", "SETUSER", "using", "on", "+acl", ">passwd"],
    );
    q(&mut r, &["ACL", "SETUSER", "not_used", "on", ">passwd"]);
    assert_eq!(q(&mut r, &["ACL", "DELUSER", "not_used", "nosuch"]), "1");
    assert_eq!(q(&mut r, &["PING"]), "PONG");
    let mut d = connect(&addr);
    q(&mut d, &["AUTH", "using", "passwd"]);
    assert_eq!(q(&mut d, &["ACL", "DELUSER", "using"]), "1");
    assert!(common::try_cmd(&mut d, &["PING"]).is_err(), "closed");
    // The default user off: new connections are not authenticated.
    q(&mut r, &["ACL", "SETUSER", "default", "off"]);
    let mut n = connect(&addr);
    assert_eq!(q(&mut n, &["PING"]), "NOAUTH Authentication required.");
    assert_eq!(
        q(&mut r, &["ACL", "SETUSER", "default", "on"]),
        "OK",
        "r stays authenticated"
    );
    assert_eq!(q(&mut connect(&addr), &["PING"]), "PONG");
    assert_eq!(q(&mut r, &["ACL", "GENPASS"]).len(), 64);
    assert_eq!(q(&mut r, &["ACL", "GENPASS", "5"]).len(), 2);
    for bad in ["-236", "5000"] {
        assert!(
            q(&mut r, &["ACL", "GENPASS", bad]).contains("ACL GENPASS argument must be the number")
        );
    }
}

#[test]
fn acl_commands_subcommands_and_categories() {
    let (_s, addr) = kvs_serve(&["--port", "0", "--enable-debug-command", "yes"]);
    let mut r = connect(&addr);
    let mut u = connect(&addr);
    q(
        &mut r,
        &[
            "ACL",
            "SETUSER",
            "newuser",
            "on",
            "nopass",
            "allcommands",
            "allkeys",
        ],
    );
    q(&mut u, &["AUTH", "newuser", "x"]);
    let set = |r: &mut redis::Connection, rules: &[&str]| {
        let mut args = vec!["ACL", "SETUSER", "newuser"];
        args.extend_from_slice(rules);
        assert_eq!(q(r, &args), "OK", "{rules:?}");
    };
    let commands = |r: &mut redis::Connection| field(&getuser(r, "newuser").0, "commands");
    set(&mut r, &["-ping"]);
    assert_eq!(q(&mut u, &["INCR", "mycounter"]), "1");
    assert_eq!(
        q(&mut u, &["PING"]),
        "NOPERM User newuser has no permissions to run the 'ping' command"
    );
    set(&mut r, &["-@all", "+@set", "+acl"]);
    assert_eq!(q(&mut u, &["SADD", "myset", "a", "b", "c"]), "3");
    set(&mut r, &["+@all", "-@string"]);
    assert!(q(&mut u, &["SET", "foo", "bar"]).starts_with("NOPERM"));
    set(
        &mut r,
        &["+@all", "-client", "+client|id", "+client|setname"],
    );
    assert_eq!(commands(&mut r), "+@all -client +client|id +client|setname");
    assert!(q(&mut u, &["CLIENT", "ID"]).parse::<u64>().is_ok());
    assert_eq!(q(&mut u, &["CLIENT", "SETNAME", "foo"]), "OK");
    assert_eq!(
        q(&mut u, &["CLIENT", "KILL", "TYPE", "master"]),
        "NOPERM User newuser has no permissions to run the 'client|kill' command"
    );
    set(&mut r, &["+@all", "-client|kill"]);
    assert_eq!(commands(&mut r), "+@all -client|kill");
    set(&mut r, &["-@all", "+acl", "+config", "-config|set"]);
    assert_eq!(q(&mut u, &["CONFIG", "GET", "maxmemory"]), "maxmemory 0");
    assert!(q(&mut u, &["CONFIG", "SET", "maxmemory", "1"]).contains("'config|set' command"));
    assert_eq!(
        q(&mut r, &["ACL", "SETUSER", "newuser", "+config|get|appendonly"]),
        "ERR Error in ACL SETUSER modifier '+config|get|appendonly': Allowing first-arg of a subcommand is not supported"
    );
    for rule in [
        "+config|asdf",
        "-config|asdf",
        "+get|key1|key2",
        "+nosuch",
        "-@nosuch",
    ] {
        assert!(
            q(&mut r, &["ACL", "SETUSER", "newuser", rule])
                .ends_with("Unknown command or category name in ACL"),
            "{rule}"
        );
    }
    set(&mut r, &["-@all", "+acl", "+select|0"]);
    assert_eq!(q(&mut u, &["SELECT", "0"]), "OK");
    assert!(q(&mut u, &["SELECT", "1"]).contains("'select' command"));
    set(&mut r, &["-@all", "+acl", "+del", "+incr", "+debug|object"]);
    q(&mut u, &["DEL", "key"]);
    q(&mut u, &["INCR", "key"]);
    // Past the ACLs (this server has no DEBUG OBJECT: the handler says so).
    assert!(!q(&mut u, &["DEBUG", "OBJECT", "key"]).starts_with("NOPERM"));
    assert!(q(&mut u, &["DEBUG", "SEGFAULT"]).contains("'debug' command"));
    assert!(commands(&mut r).contains("+debug|object"));
    // Subcommands of a container allowed whole, or all but one.
    set(&mut r, &["+@all", "-memory|doctor"]);
    assert!(q(&mut u, &["MEMORY", "DOCTOR"]).contains("'memory|doctor' command"));
    assert!(!q(&mut u, &["MEMORY", "STATS"]).starts_with("NOPERM"));
    set(&mut r, &["-@all", "+acl", "+memory|doctor", "+memory"]);
    assert_eq!(commands(&mut r), "-@all +acl +memory");
    // The rules are kept as given, compacted as Redis does.
    for (rules, want) in [
        (
            &["reset", "+@all", "-@hash", "-@slow", "+hget"][..],
            "+@all -@hash -@slow +hget",
        ),
        (&["-@hash"], "+@all -@slow +hget -@hash"),
        (
            &[
                "-@all",
                "+client|list",
                "+client|list",
                "+config|get",
                "+config",
                "+acl|list",
                "-acl",
            ],
            "-@all +client|list +config -acl",
        ),
        (
            &["-@all", "+config", "+config|get", "-config|set", "+config"],
            "-@all +config",
        ),
        (&["-@all", "+HGET", "+hget", "+hGeT"], "-@all +hget"),
    ] {
        set(&mut r, rules);
        assert_eq!(commands(&mut r), want, "{rules:?}");
    }
    // Every category alone: +@all -@cat and -@all +@cat are kept as such.
    let cats = q(&mut r, &["ACL", "CAT"]);
    assert_eq!(cats.split(' ').count(), 21, "{cats}");
    for cat in cats.split(' ') {
        set(&mut r, &["reset", "+@all", &format!("-@{cat}")]);
        assert_eq!(commands(&mut r), format!("+@all -@{cat}"));
    }
    let tx = q(&mut r, &["ACL", "CAT", "transaction"]);
    assert!(tx.split(' ').any(|c| c == "multi"), "{tx}");
    assert!(q(&mut r, &["ACL", "CAT", "scripting"])
        .split(' ')
        .any(|c| c == "function|list"));
    assert!(!q(&mut r, &["ACL", "CAT", "keyspace"])
        .split(' ')
        .any(|c| c == "set"));
    assert_eq!(
        q(&mut r, &["ACL", "CAT", "NON_EXISTS"]),
        "ERR Unknown category 'NON_EXISTS'"
    );
    assert!(q(&mut r, &["ACL", "CAT", "a", "b"])
        .contains("unknown subcommand or wrong number of arguments for 'CAT'"));
    assert_eq!(
        q(&mut r, &["ACL", "HELP", "xxx"]),
        "ERR wrong number of arguments for 'acl|help' command"
    );
    // COMMAND INFO's categories are the ACL ones.
    assert!(q(&mut r, &["COMMAND", "INFO", "get"]).contains("@read @string @fast"));
    // Scripting commands need their own permission, also the read-only ones.
    q(
        &mut r,
        &["ACL", "SETUSER", "scripter", "on", "nopass", "+@read"],
    );
    for c in ["EVAL_RO", "EVALSHA_RO", "FCALL_RO"] {
        assert!(
            q(&mut r, &["ACL", "DRYRUN", "scripter", c, "", "0"])
                .contains("has no permissions to run the"),
            "{c}"
        );
    }
    // HELLO and AUTH run for a user without commands.
    q(&mut r, &["ACL", "SETUSER", "secure", ">pw", "on", "+@all"]);
    q(&mut r, &["ACL", "SETUSER", "default", "-@all"]);
    assert!(q(&mut r, &["HELLO", "2", "AUTH", "secure", "pw"]).starts_with("server"));
    q(&mut r, &["ACL", "SETUSER", "default", "nopass", "+@all"]);
}

/// Sends a (P)SUBSCRIBE of one name and reads its confirmation (six lines) or error.
fn frames(s: &mut TcpStream, args: &[&str]) -> String {
    let mut req = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        req.extend_from_slice(format!("${}\r\n{a}\r\n", a.len()).as_bytes());
    }
    s.write_all(&req).expect("send");
    let mut got = Vec::new();
    let mut b = [0u8; 1];
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    loop {
        let lines = got.windows(2).filter(|w| w == b"\r\n").count();
        if lines >= 6 || (got.starts_with(b"-") && lines == 1) {
            break;
        }
        match s.read(&mut b) {
            Ok(1) => got.push(b[0]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// Starts `wirespeed kvs serve --port 0 ARGS`, which must refuse to start: its one
/// line of error.
fn refused(args: &[&str]) -> String {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args(["kvs", "serve", "--port", "0"])
        .args(args)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start");
    let started = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            panic!("{args:?}: the server started");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    assert!(!out.status.success(), "{args:?}");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    err
}

#[test]
fn acl_keys_read_write_and_channels() {
    let (_s, addr) = kvs_serve(&["--port", "0"]);
    let mut r = connect(&addr);
    let mut u = connect(&addr);
    let become_ = |u: &mut redis::Connection, r: &mut redis::Connection, rules: &[&str]| {
        let mut args = vec!["ACL", "SETUSER", "k", "reset", "on", "nopass"];
        args.extend_from_slice(rules);
        assert_eq!(q(r, &args), "OK");
        assert_eq!(q(u, &["AUTH", "k", "x"]), "OK");
    };
    const KEY: &str = "NOPERM No permissions to access a key";
    become_(&mut u, &mut r, &["%R~read*", "+@all"]);
    q(&mut r, &["SET", "readstr", "bar"]);
    assert_eq!(q(&mut u, &["GET", "readstr"]), "bar");
    for c in [
        &["SET", "readstr", "bar"][..],
        &["GET", "notread"],
        &["SET", "readstr", "bar", "GET"],
    ] {
        assert_eq!(q(&mut u, c), KEY, "{c:?}");
    }
    assert_eq!(q(&mut u, &["BITFIELD", "readstr", "GET", "u4", "0"]), "6");
    assert_eq!(
        q(&mut u, &["BITFIELD", "readstr", "SET", "u4", "0", "1"]),
        KEY
    );
    become_(&mut u, &mut r, &["%W~write*", "+@all"]);
    assert_eq!(q(&mut u, &["LPUSH", "writelist", "10"]), "1");
    assert_eq!(q(&mut u, &["SET", "writestr", "bar"]), "OK");
    assert_eq!(
        q(&mut u, &["SET", "writestr", "get"]),
        "OK",
        "the value, not the option"
    );
    for c in [
        &["GET", "writestr"][..],
        &["LPUSH", "notwrite", "10"],
        &["SET", "writestr", "bar", "GET"],
        &["BITFIELD", "writestr", "GET", "u4", "0"],
    ] {
        assert_eq!(q(&mut u, c), KEY, "{c:?}");
    }
    // Existence and length tests take either permission.
    for (c, want) in [
        ("EXISTS", "1"),
        ("TYPE", "string"),
        ("STRLEN", "3"),
        ("TOUCH", "1"),
    ] {
        assert_eq!(q(&mut u, &[c, "writestr"]), want, "{c}");
    }
    become_(&mut u, &mut r, &["%R~read*", "%W~write*", "+@all"]);
    q(&mut r, &["SET", "read", "bar"]);
    assert_eq!(q(&mut u, &["COPY", "read", "write"]), "1");
    assert_eq!(q(&mut u, &["COPY", "write", "read"]), KEY);
    // Selectors do not add up.
    become_(&mut u, &mut r, &["(%R~read* +@all)", "(%W~write* +@all)"]);
    assert_eq!(q(&mut u, &["GET", "readstr"]), "bar");
    assert_eq!(q(&mut u, &["LPUSH", "writelist", "11"]), "2");
    assert_eq!(q(&mut u, &["COPY", "read", "write"]), KEY);
    // Channels: none for new users; PUBLISH, SUBSCRIBE, PSUBSCRIBE, SPUBLISH checked.
    const CH: &str = "NOPERM No permissions to access a channel";
    become_(&mut u, &mut r, &["+@all", "~*"]);
    assert_eq!(q(&mut u, &["PUBLISH", "foo", "bar"]), CH);
    assert_eq!(q(&mut u, &["SPUBLISH", "foo", "bar"]), CH);
    become_(&mut u, &mut r, &["+@all", "~*", "&foo:1", "&bar:*"]);
    assert_eq!(q(&mut u, &["PUBLISH", "foo:1", "m"]), "0");
    assert_eq!(q(&mut u, &["PUBLISH", "bar:2", "m"]), "0");
    assert_eq!(q(&mut u, &["PUBLISH", "zap:3", "m"]), CH);
    assert_eq!(q(&mut u, &["MULTI"]), "OK");
    assert_eq!(q(&mut u, &["PUBLISH", "notexits", "m"]), CH);
    assert_eq!(q(&mut u, &["SUBSCRIBE", "notexits", "foo:1"]), CH);
    assert!(q(&mut u, &["EXEC"]).starts_with("EXECABORT"));
    q(
        &mut r,
        &[
            "ACL",
            "SETUSER",
            "ps",
            "on",
            ">pspass",
            "+@all",
            "resetchannels",
            "&foo:1",
            "&bar:*",
        ],
    );
    let mut s = TcpStream::connect(&addr).expect("connect");
    assert_eq!(ask(&mut s, &["AUTH", "ps", "pspass"], 100), b"+OK\r\n");
    assert!(frames(&mut s, &["SUBSCRIBE", "foo:1"]).contains("foo:1"));
    assert!(frames(&mut s, &["PSUBSCRIBE", "bar:*"]).contains("bar:*"));
    assert!(frames(&mut s, &["PSUBSCRIBE", "bar:baz"]).starts_with(&format!("-{CH}")));
    assert_eq!(q(&mut r, &["CLIENT", "SETNAME", "admin"]), "OK");
    // Kept when the new permissions still hold its subscriptions, closed otherwise.
    q(
        &mut r,
        &[
            "ACL",
            "SETUSER",
            "ps",
            "resetchannels",
            "&foo:1",
            "&bar:*",
            "&baz:qaz",
        ],
    );
    q(&mut r, &["ACL", "SETUSER", "ps", "allchannels"]);
    assert_eq!(
        q(&mut r, &["CLIENT", "LIST", "TYPE", "pubsub"])
            .matches("user=ps")
            .count(),
        1
    );
    q(&mut r, &["ACL", "SETUSER", "ps", "resetchannels", "&foo:1"]);
    until(5, "the subscriber closed", || {
        !q(&mut r, &["CLIENT", "LIST"]).contains("user=ps")
    });
    let mut b = [0u8; 16];
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    assert!(
        matches!(s.read(&mut b), Ok(0) | Err(_)),
        "closed by the server"
    );
}

#[test]
fn acl_selectors_and_dryrun() {
    let (_s, addr) = kvs_serve(&["--port", "0"]);
    let mut r = connect(&addr);
    let mut u = connect(&addr);
    q(
        &mut r,
        &[
            "ACL",
            "SETUSER",
            "selector-1",
            "on",
            "-@all",
            "resetkeys",
            "nopass",
        ],
    );
    q(&mut u, &["AUTH", "selector-1", "password"]);
    assert!(q(&mut u, &["PING"]).contains("'ping' command"));
    q(
        &mut r,
        &[
            "ACL",
            "SETUSER",
            "selector-1",
            "(+@write ~write::*)",
            "(+@read ~read::*)",
        ],
    );
    assert_eq!(q(&mut u, &["SET", "write::foo", "bar"]), "OK");
    assert_eq!(q(&mut u, &["GET", "read::foo"]), "(nil)");
    assert!(q(&mut u, &["GET", "write::foo"]).contains("key"));
    assert!(q(&mut u, &["SET", "read::foo", "bar"]).contains("key"));
    // A new selector has no permission; CLEARSELECTORS drops them.
    q(
        &mut r,
        &["ACL", "SETUSER", "selector-default", "reset", "()"],
    );
    let (_, sels) = getuser(&mut r, "selector-default");
    assert_eq!(sels.len(), 1);
    assert_eq!(
        (
            field(&sels[0], "keys"),
            field(&sels[0], "channels"),
            field(&sels[0], "commands")
        ),
        (String::new(), String::new(), "-@all".into())
    );
    q(
        &mut r,
        &["ACL", "SETUSER", "selector-default", "clearselectors"],
    );
    assert!(getuser(&mut r, "selector-default").1.is_empty());
    // Selectors spread over several arguments, and their errors.
    q(
        &mut r,
        &[
            "ACL",
            "SETUSER",
            "selector-2",
            "(~key1 +get )",
            "( ~key2 +get )",
            "(~key5",
            "+get",
            ")",
        ],
    );
    let keys: Vec<String> = getuser(&mut r, "selector-2")
        .1
        .iter()
        .map(|s| field(s, "keys"))
        .collect();
    assert_eq!(keys, ["~key1", "~key2", "~key5"]);
    for (args, says) in [
        (
            &["(this-is-invalid)"][..],
            "Error in ACL SETUSER modifier '(this-is-invalid)': Syntax error",
        ),
        (
            &["(&* &fail)"],
            "Adding a pattern after the * pattern (or the 'allchannels' flag)",
        ),
        (
            &["(+PING", "(+SELECT", "(+DEL"],
            "ERR Unmatched parenthesis in acl selector starting at '(+PING'.",
        ),
        (
            &["(+PING", "(+SELECT", "(+DEL", ")", ")", ")"],
            "Error in ACL SETUSER modifier",
        ),
        (&[" () "], "Syntax error"),
        (&[")"], "Syntax error"),
    ] {
        let mut a = vec!["ACL", "SETUSER", "selector-syntax", "on"];
        a.extend_from_slice(args);
        let e = q(&mut r, &a);
        assert!(e.contains(says), "{args:?}: {e}");
    }
    assert_eq!(
        q(&mut r, &["ACL", "GETUSER", "selector-syntax"]),
        "(nil)",
        "nothing applied"
    );
    // GETUSER and LIST show the root selector and the others.
    q(
        &mut r,
        &[
            "ACL",
            "SETUSER",
            "info",
            "-@all",
            "+get",
            "resetchannels",
            "&channel1",
            "%R~foo1",
            "%W~bar1",
            "~baz1",
            "(-@all +set resetchannels &channel2 %R~foo2 %W~bar2 ~baz2)",
        ],
    );
    let (top, sels) = getuser(&mut r, "info");
    assert_eq!(field(&top, "keys"), "%R~foo1 %W~bar1 ~baz1");
    assert_eq!(field(&top, "channels"), "&channel1");
    assert_eq!(field(&top, "commands"), "-@all +get");
    assert_eq!(field(&sels[0], "keys"), "%R~foo2 %W~bar2 ~baz2");
    assert_eq!(field(&sels[0], "commands"), "-@all +set");
    assert!(q(&mut r, &["ACL", "LIST"]).contains("user info off sanitize-payload %R~foo1 %W~bar1 ~baz1 resetchannels &channel1 -@all +get (%R~foo2 %W~bar2 ~baz2 resetchannels &channel2 -@all +set)"));
    q(
        &mut r,
        &["ACL", "SETUSER", "rw", "%R~foo", "%W~foo", "%RW~bar"],
    );
    assert_eq!(field(&getuser(&mut r, "rw").0, "keys"), "~foo ~bar");
    // DRYRUN: whether a user may, with the reason named.
    q(
        &mut r,
        &[
            "ACL",
            "SETUSER",
            "command-test",
            "+@all",
            "%R~read*",
            "%W~write*",
            "%RW~rw*",
        ],
    );
    let dry = |r: &mut redis::Connection, args: &[&str]| {
        let mut a = vec!["ACL", "DRYRUN", "command-test"];
        a.extend_from_slice(args);
        q(r, &a)
    };
    assert_eq!(dry(&mut r, &["GET", "read"]), "OK");
    assert_eq!(
        q(&mut r, &["ACL", "DRYRUN", "not-a-user", "GET", "read"]),
        "ERR User 'not-a-user' not found"
    );
    assert_eq!(
        dry(&mut r, &["not-a-command", "read"]),
        "ERR Command 'not-a-command' not found"
    );
    assert_eq!(
        dry(&mut r, &["SET", "v"]),
        "ERR wrong number of arguments for 'set' command"
    );
    let no_key = |k: &str| format!("User command-test has no permissions to access the '{k}' key");
    for (args, want) in [
        (
            &["MIGRATE", "whatever", "whatever", "rw", "0", "500"][..],
            "OK".to_string(),
        ),
        (
            &["MIGRATE", "whatever", "whatever", "read", "0", "500"],
            no_key("read"),
        ),
        (
            &[
                "MIGRATE", "whatever", "whatever", "", "0", "5000", "AUTH2", "USER", "KEYS",
                "KEYS", "write",
            ],
            no_key("write"),
        ),
        (&["SORT", "read", "STORE", "write"], "OK".into()),
        (&["SORT", "read", "STORE", "read"], no_key("read")),
        (&["EVAL", "", "1", "read"], no_key("read")),
        (&["EVAL_RO", "", "1", "read"], "OK".into()),
        (&["EVAL", "", "0", "read"], "OK".into()),
        (&["EVAL", "", "3", "rw", "read"], "OK".into()),
        (
            &[
                "GEORADIUS",
                "read",
                "1",
                "2",
                "3",
                "M",
                "STOREDIST",
                "write",
            ],
            "OK".into(),
        ),
        (
            &["GEORADIUS", "read1", "1", "2", "3", "M", "STORE", "read2"],
            no_key("read2"),
        ),
        (&["HEXISTS", "write", "foo"], "OK".into()),
        (&["HEXISTS", "nothing", "foo"], no_key("nothing")),
        (&["SINTERCARD", "2", "write", "read"], no_key("write")),
        (&["MEMORY", "USAGE", "write"], "OK".into()),
        (&["OBJECT", "ENCODING", "nothing"], no_key("nothing")),
    ] {
        assert_eq!(dry(&mut r, args), want, "{args:?}");
    }
    q(&mut r, &["ACL", "SETUSER", "command-test", "-@all"]);
    assert_eq!(
        dry(&mut r, &["SET", "somekey", "v"]),
        "User command-test has no permissions to run the 'set' command"
    );
    q(
        &mut r,
        &[
            "ACL",
            "SETUSER",
            "test-channels",
            "+@all",
            "resetchannels",
            "&channel",
        ],
    );
    for (args, want) in [
        (&["spublish", "channel", "foo"][..], "OK"),
        (&["sunsubscribe", "otherchannel"], "OK"),
        (
            &["ssubscribe", "otherchannel", "foo"],
            "User test-channels has no permissions to access the 'otherchannel' channel",
        ),
    ] {
        let mut a = vec!["ACL", "DRYRUN", "test-channels"];
        a.extend_from_slice(args);
        assert_eq!(q(&mut r, &a), want, "{args:?}");
    }
}

#[test]
fn acl_log_entries_and_counters() {
    let (_s, addr) = kvs_serve(&["--port", "0"]);
    let mut r = connect(&addr);
    let mut u = connect(&addr);
    q(
        &mut r,
        &[
            "ACL",
            "SETUSER",
            "antirez",
            ">foo",
            "on",
            "+set",
            "~object:1234",
            "+eval",
            "+multi",
            "+exec",
            "resetchannels",
            "+publish",
        ],
    );
    q(&mut u, &["AUTH", "antirez", "foo"]);
    assert!(q(&mut u, &["GET", "foo"]).contains("'get' command"));
    let e = last_log(&mut r);
    assert_eq!(
        (
            e["username"].as_str(),
            e["context"].as_str(),
            e["reason"].as_str(),
            e["object"].as_str()
        ),
        ("antirez", "toplevel", "command", "get")
    );
    assert!(
        e["client-info"].contains("cmd=get") && e["client-info"].contains("user=antirez"),
        "{e:?}"
    );
    for f in [
        "count",
        "age-seconds",
        "entry-id",
        "timestamp-created",
        "timestamp-last-updated",
    ] {
        assert!(e.contains_key(f), "{f}");
    }
    // Similar denials share an entry.
    q(&mut u, &["GET", "foo"]);
    q(&mut u, &["GET", "foo"]);
    let again = last_log(&mut r);
    assert_eq!(
        (again["count"].as_str(), again["entry-id"].as_str()),
        ("3", e["entry-id"].as_str())
    );
    assert_eq!(again["timestamp-created"], e["timestamp-created"]);
    q(&mut u, &["SET", "somekeynotallowed", "1234"]);
    let e = last_log(&mut r);
    assert_eq!(
        (e["reason"].as_str(), e["object"].as_str()),
        ("key", "somekeynotallowed")
    );
    q(&mut u, &["PUBLISH", "somechannelnotallowed", "m"]);
    let e = last_log(&mut r);
    assert_eq!(
        (e["reason"].as_str(), e["object"].as_str()),
        ("channel", "somechannelnotallowed")
    );
    // Transactions: at queueing, and at EXEC when the rules changed meanwhile.
    q(&mut u, &["MULTI"]);
    q(&mut u, &["INCR", "foo"]);
    assert!(q(&mut u, &["EXEC"]).starts_with("EXECABORT"));
    let e = last_log(&mut r);
    assert_eq!(
        (e["context"].as_str(), e["object"].as_str()),
        ("multi", "incr")
    );
    q(&mut r, &["ACL", "SETUSER", "antirez", "+incr"]);
    q(&mut u, &["MULTI"]);
    assert_eq!(q(&mut u, &["INCR", "object:1234"]), "QUEUED");
    q(&mut r, &["ACL", "SETUSER", "antirez", "-incr"]);
    assert_eq!(
        q(&mut u, &["EXEC"]),
        "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: no permission to execute the command or subcommand"
    );
    let e = last_log(&mut r);
    assert_eq!(
        (e["context"].as_str(), e["object"].as_str()),
        ("multi", "incr")
    );
    assert!(e["client-info"].contains("cmd=exec"));
    // Scripts run as the caller.
    let err = q(&mut u, &["EVAL", "redis.call('incr','foo')", "0"]);
    assert!(
        err.starts_with(
            "ERR ACL failure in script: User antirez has no permissions to run the 'incr' command"
        ),
        "{err}"
    );
    let e = last_log(&mut r);
    assert_eq!(
        (e["context"].as_str(), e["object"].as_str()),
        ("lua", "incr")
    );
    assert!(e["client-info"].contains("cmd=eval"));
    assert!(q(
        &mut u,
        &["EVAL", "return redis.call('set','other','1')", "0"]
    )
    .contains("No permissions to access a key"));
    assert_eq!(
        q(
            &mut u,
            &["EVAL", "return redis.call('set','object:1234','1')", "0"]
        ),
        "OK"
    );
    // A failed AUTH.
    assert!(q(&mut r, &["AUTH", "antirez", "wrong-password"]).starts_with("WRONGPASS"));
    let e = last_log(&mut r);
    assert_eq!(
        (
            e["context"].as_str(),
            e["reason"].as_str(),
            e["object"].as_str(),
            e["username"].as_str()
        ),
        ("toplevel", "auth", "AUTH", "antirez")
    );
    // COUNT, RESET, acllog-max-len, and INFO's counters.
    assert_eq!(q(&mut r, &["ACL", "LOG", "2"]).matches("count").count(), 2);
    assert_eq!(q(&mut r, &["ACL", "LOG", "RESET"]), "OK");
    assert_eq!(q(&mut r, &["ACL", "LOG"]), "");
    assert_eq!(q(&mut r, &["CONFIG", "SET", "acllog-max-len", "5"]), "OK");
    for j in 0..10 {
        q(&mut u, &["SET", &format!("obj:{j}"), "1"]);
    }
    assert_eq!(q(&mut r, &["ACL", "LOG"]).matches("count").count(), 5);
    let denied = |r: &mut redis::Connection, what: &str| {
        info_num(r, "stats", &format!("acl_access_denied_{what}"))
    };
    let before = [
        denied(&mut r, "auth"),
        denied(&mut r, "cmd"),
        denied(&mut r, "key"),
        denied(&mut r, "channel"),
    ];
    q(&mut r, &["AUTH", "notrealuser", "1233456"]);
    q(&mut r, &["HELLO", "3", "AUTH", "notrealuser", "1233456"]);
    q(&mut u, &["GET", "x"]);
    q(&mut u, &["SET", "x", "1"]);
    q(&mut u, &["PUBLISH", "x", "1"]);
    let after = [
        denied(&mut r, "auth"),
        denied(&mut r, "cmd"),
        denied(&mut r, "key"),
        denied(&mut r, "channel"),
    ];
    assert_eq!(
        after,
        [before[0] + 2, before[1] + 1, before[2] + 1, before[3] + 1]
    );
    assert_eq!(
        q(&mut r, &["CONFIG", "GET", "acllog-max-len"]),
        "acllog-max-len 5"
    );
}

#[test]
fn acl_an_attacker_with_a_password_does_not_escape() {
    let (_s, addr) = kvs_serve(&["--port", "0"]);
    let mut r = connect(&addr);
    let mut u = connect(&addr);
    // SORT and MIGRATE are @dangerous too: given back, to check their keys.
    q(
        &mut r,
        &[
            "ACL",
            "SETUSER",
            "app",
            "on",
            ">pw",
            "+@all",
            "-@dangerous",
            "+sort",
            "+migrate",
            "~app:*",
            "resetchannels",
        ],
    );
    q(&mut u, &["AUTH", "app", "pw"]);
    q(&mut r, &["SET", "secret", "s3"]);
    const KEY: &str = "No permissions to access a key";
    // Scripts, transactions, SORT's patterns, MIGRATE, OBJECT: the keys are checked.
    assert!(q(&mut u, &["EVAL", "return redis.call('get','secret')", "0"]).contains(KEY));
    assert!(q(&mut u, &["EVAL", "return redis.pcall('get','secret')", "0"]).contains(KEY));
    assert!(q(&mut u, &["FCALL", "nosuch", "1", "secret"]).contains(KEY));
    q(&mut u, &["MULTI"]);
    assert!(q(&mut u, &["GET", "secret"]).contains(KEY));
    assert!(q(&mut u, &["EXEC"]).starts_with("EXECABORT"));
    q(&mut u, &["RPUSH", "app:list", "1"]);
    assert_eq!(
        q(&mut u, &["SORT", "app:list", "BY", "secret*"]),
        "ERR BY option of SORT denied due to insufficient ACL permissions."
    );
    assert_eq!(
        q(&mut u, &["SORT", "app:list", "GET", "#"]),
        "ERR GET option of SORT denied due to insufficient ACL permissions."
    );
    assert_eq!(q(&mut u, &["SORT", "app:list", "BY", "nosort"]), "1");
    assert!(q(&mut u, &["SORT", "app:list", "STORE", "secret"]).contains(KEY));
    assert!(q(&mut u, &["MIGRATE", "127.0.0.1", "1", "secret", "0", "10"]).contains(KEY));
    assert!(q(
        &mut u,
        &[
            "MIGRATE",
            "127.0.0.1",
            "1",
            "",
            "0",
            "10",
            "KEYS",
            "app:x",
            "secret"
        ]
    )
    .contains(KEY));
    assert!(q(&mut u, &["OBJECT", "ENCODING", "secret"]).contains(KEY));
    assert!(q(&mut u, &["RENAME", "secret", "app:mine"]).contains(KEY));
    // Administrative commands: @dangerous.
    for c in [
        &["CLIENT", "KILL", "TYPE", "normal"][..],
        &["CONFIG", "SET", "requirepass", "x"],
        &["ACL", "SETUSER", "app", "allkeys"],
        &["FLUSHALL"],
        &["KEYS", "*"],
        &["MONITOR"],
        &["SHUTDOWN"],
    ] {
        assert!(
            q(&mut u, c).starts_with("NOPERM User app has no permissions to run"),
            "{c:?}"
        );
    }
    assert_eq!(q(&mut u, &["GET", "app:x"]), "(nil)");
    // DEBUG: refused by enable-debug-command first (as Redis orders the checks).
    assert!(q(&mut u, &["DEBUG", "SLEEP", "0"]).starts_with("ERR DEBUG command not allowed"));
    // CONFIG SET aclfile is refused even to an administrator: it is fixed at start.
    assert!(q(&mut r, &["CONFIG", "SET", "aclfile", "/tmp/x.acl"])
        .contains("can't set immutable config"));
    // A blocked command is checked again when it is served.
    q(&mut r, &["CONFIG", "RESETSTAT"]);
    let mut b = TcpStream::connect(&addr).expect("connect");
    assert_eq!(ask(&mut b, &["AUTH", "app", "pw"], 100), b"+OK\r\n");
    b.write_all(b"*3\r\n$5\r\nBLPOP\r\n$5\r\napp:q\r\n$1\r\n0\r\n")
        .unwrap();
    until(5, "BLPOP blocked", || {
        info_num(&mut r, "clients", "blocked_clients") == 1
    });
    q(&mut r, &["ACL", "SETUSER", "app", "resetkeys"]);
    q(&mut r, &["LPUSH", "app:q", "foo"]);
    let mut line = Vec::new();
    let mut one = [0u8; 1];
    b.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    while !line.ends_with(b"\r\n") && b.read(&mut one).is_ok_and(|n| n == 1) {
        line.push(one[0]);
    }
    assert_eq!(line, b"-NOPERM No permissions to access a key\r\n");
    assert_eq!(q(&mut r, &["LLEN", "app:q"]), "1", "not popped");
    assert!(q(&mut r, &["INFO", "commandstats"]).contains(
        "cmdstat_blpop:calls=0,usec=0,usec_per_call=0.00,rejected_calls=1,failed_calls=0"
    ));
    // Passwords do not show in the slow log or to monitors.
    q(&mut r, &["CONFIG", "SET", "slowlog-log-slower-than", "0"]);
    q(&mut r, &["ACL", "SETUSER", "app", ">hunter2"]);
    assert_eq!(q(&mut connect(&addr), &["AUTH", "app", "hunter2"]), "OK");
    assert!(!q(&mut r, &["SLOWLOG", "GET"]).contains("hunter2"));
    // Bounded: an ACL SETUSER of very many rules is refused whole.
    let many: Vec<String> = (0..10_001).map(|i| format!("~p{i}")).collect();
    let mut args: Vec<&str> = vec!["ACL", "SETUSER", "big"];
    args.extend(many.iter().map(String::as_str));
    assert!(q(&mut r, &args).contains("Too many"));
    assert_eq!(q(&mut r, &["ACL", "GETUSER", "big"]), "(nil)");
}

#[test]
fn acl_file_load_save_and_startup() {
    let dir = temp("acl", "files");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("users.acl");
    std::fs::write(
        &file,
        "user alice on allcommands allkeys &* >alice\nuser bob on -@all +@set +acl ~set* &* >bob\nuser default on nopass ~* &* +@all\n",
    )
    .unwrap();
    let path = file.to_str().unwrap();
    let (_s, addr) = kvs_serve(&[
        "--port",
        "0",
        "--aclfile",
        path,
        "--acl-pubsub-default",
        "allchannels",
    ]);
    let mut r = connect(&addr);
    assert_eq!(q(&mut r, &["PUBLISH", "hello", "world"]), "0");
    q(
        &mut r,
        &[
            "ACL", "SETUSER", "default", "reset", "on", "nopass", "~*", "+@all",
        ],
    );
    assert_eq!(
        q(&mut r, &["PUBLISH", "hello", "world"]),
        "0",
        "acl-pubsub-default allchannels"
    );
    q(
        &mut r,
        &["CONFIG", "SET", "acl-pubsub-default", "resetchannels"],
    );
    q(
        &mut r,
        &[
            "ACL", "SETUSER", "default", "reset", "on", "nopass", "~*", "+@all",
        ],
    );
    assert_eq!(
        q(&mut r, &["PUBLISH", "hello", "world"]),
        "NOPERM No permissions to access a channel"
    );
    q(&mut r, &["ACL", "SETUSER", "default", "allchannels"]);
    assert_eq!(q(&mut r, &["AUTH", "bob", "bob"]), "OK");
    assert_eq!(q(&mut r, &["SADD", "set", "1", "2", "3"]), "3");
    assert!(q(&mut r, &["SET", "key", "value"]).contains("'set' command"));
    // SAVE writes the file (beside it, then renamed); LOAD reads it and closes the
    // connections of every user but the default one.
    q(
        &mut r,
        &["ACL", "SETUSER", "eve", "+get", "allkeys", ">eve", "on"],
    );
    assert_eq!(q(&mut r, &["ACL", "SAVE"]), "OK");
    let saved = std::fs::read_to_string(&file).unwrap();
    assert!(
        saved
            .lines()
            .any(|l| l.starts_with("user eve on sanitize-payload #")),
        "{saved}"
    );
    assert_eq!(saved.lines().count(), 4);
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty());
    let mut other = connect(&addr);
    q(&mut other, &["AUTH", "alice", "alice"]);
    assert_eq!(q(&mut r, &["ACL", "LOAD"]), "OK");
    assert!(
        common::try_cmd(&mut r, &["ACL", "LIST"]).is_err(),
        "closed after its reply"
    );
    assert!(common::try_cmd(&mut other, &["PING"]).is_err(), "closed");
    let mut r = connect(&addr);
    assert_eq!(q(&mut r, &["AUTH", "eve", "eve"]), "OK");
    assert!(q(&mut r, &["SET", "key", "value"]).contains("'set' command"));
    q(&mut r, &["AUTH", "alice", "alice"]);
    // A file with errors changes nothing and names its lines.
    std::fs::write(
        &file,
        "user alice on nopass\nuser alice off\n# comment\nuser x +nosuch\n",
    )
    .unwrap();
    let e = q(&mut r, &["ACL", "LOAD"]);
    for says in [
        "Duplicate user 'alice' found on line 2",
        ":3 should start with user keyword",
        ":4: Error in applying operation '+nosuch'",
        "no change to the previously active ACL rules was performed",
    ] {
        assert!(e.contains(says), "{e}");
    }
    assert_eq!(field(&getuser(&mut r, "alice").0, "commands"), "+@all");
    // Without an ACL file, LOAD and SAVE say so.
    let (_s2, addr2) = kvs_serve(&["--port", "0"]);
    assert!(q(&mut connect(&addr2), &["ACL", "LOAD"])
        .contains("This Redis instance is not configured to use an ACL file"));
    // At start: a bad file, users both ways, a user given twice: one line, no server.
    let start = refused;
    let bad = dir.join("bad.acl");
    std::fs::write(&bad, "user a on\nnot a user line\n").unwrap();
    assert!(start(&["--aclfile", bad.to_str().unwrap()])
        .contains("bad.acl:2 should start with user keyword"));
    let garbage: Vec<u8> = (0..3_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    std::fs::write(&bad, garbage).unwrap();
    assert!(start(&["--aclfile", bad.to_str().unwrap()]).len() < 4096);
    assert!(start(&["--aclfile", path, "--user", "x on"]).contains("define them in one place only"));
    assert!(start(&["--user", "x on", "--user", "x off"]).contains("Duplicate user"));
    assert!(start(&["--aclfile", dir.join("nosuch.acl").to_str().unwrap()]).contains("nosuch.acl"));
}

#[test]
fn acl_requirepass_is_the_default_users_password_and_users_in_the_config_file() {
    let (_s, addr) = kvs_serve(&["--port", "0", "--requirepass", "pw"]);
    let mut r = connect(&addr);
    assert_eq!(q(&mut r, &["PING"]), "NOAUTH Authentication required.");
    assert_eq!(q(&mut r, &["AUTH", "default", "pw"]), "OK");
    let (top, _) = getuser(&mut r, "default");
    assert_eq!(field(&top, "flags"), "on sanitize-payload");
    assert_eq!(field(&top, "passwords").len(), 64);
    // CONFIG SET requirepass is the default user's password, as in Redis.
    q(&mut r, &["CONFIG", "SET", "requirepass", "other"]);
    let mut n = connect(&addr);
    assert!(q(&mut n, &["AUTH", "pw"]).starts_with("WRONGPASS"));
    assert_eq!(q(&mut n, &["AUTH", "other"]), "OK");
    q(&mut r, &["CONFIG", "SET", "requirepass", ""]);
    assert_eq!(q(&mut connect(&addr), &["ACL", "WHOAMI"]), "default");
    assert!(
        q(&mut r, &["ACL", "LIST"]).contains("user default on nopass sanitize-payload ~* &* +@all")
    );
    // `user` lines of the configuration file, kept by CONFIG REWRITE.
    let conf = temp("acl", "users.conf");
    std::fs::write(
        &conf,
        "user default on nopass ~* +@all -flushdb\nuser bob on >bobpw ~bob:* +get\n",
    )
    .unwrap();
    let (first, addr) = kvs_serve(&["--port", "0", "--config", conf.to_str().unwrap()]);
    let mut r = connect(&addr);
    assert!(q(&mut r, &["FLUSHDB"]).starts_with("NOPERM"));
    assert_eq!(
        q(&mut r, &["PUBLISH", "c", "m"]),
        "NOPERM No permissions to access a channel",
        "a user line starts from reset"
    );
    assert_eq!(q(&mut r, &["AUTH", "bob", "bobpw"]), "OK");
    assert_eq!(q(&mut r, &["AUTH", "default", "x"]), "OK");
    assert_eq!(q(&mut r, &["CONFIG", "REWRITE"]), "OK");
    let text = std::fs::read_to_string(&conf).unwrap();
    assert!(
        text.contains("user default on nopass sanitize-payload ~* resetchannels +@all -flushdb"),
        "{text}"
    );
    drop(first);
    let (_again, addr) = kvs_serve(&["--port", "0", "--config", conf.to_str().unwrap()]);
    let mut r = connect(&addr);
    assert!(q(&mut r, &["FLUSHDB"]).starts_with("NOPERM"));
    assert_eq!(q(&mut r, &["AUTH", "bob", "bobpw"]), "OK");
}

#[test]
fn acl_masteruser_replication() {
    let (_p, primary) = kvs_serve(&[
        "--port",
        "0",
        "--requirepass",
        "admin",
        "--user",
        "repl on >rp -@all +psync +replconf +ping",
    ]);
    let (host, port) = primary.rsplit_once(':').unwrap();
    let (_r, replica) = kvs_serve(&[
        "--port",
        "0",
        "--replicaof",
        host,
        port,
        "--masteruser",
        "repl",
        "--masterauth",
        "rp",
    ]);
    let mut p = connect(&primary);
    q(&mut p, &["AUTH", "admin"]);
    q(&mut p, &["SET", "k", "v"]);
    let mut r = connect(&replica);
    until(10, "the replica has the key", || {
        q(&mut r, &["GET", "k"]) == "v"
    });
    assert!(q(&mut p, &["CLIENT", "LIST", "TYPE", "replica"]).contains("user=repl"));
    assert_eq!(
        q(&mut r, &["CONFIG", "GET", "masteruser"]),
        "masteruser repl"
    );
}

#[test]
fn acl_through_redis_cli() {
    if std::process::Command::new("redis-cli")
        .arg("--version")
        .output()
        .is_err()
    {
        return common::missing_client("redis-cli");
    }
    let (_s, addr) = kvs_serve(&[
        "--port",
        "0",
        "--user",
        "default on >adminpw ~* &* +@all",
        "--user",
        "ro on >ropw ~* -@all +@read +acl|whoami",
    ]);
    let (host, port) = addr.rsplit_once(':').unwrap();
    let cli = |args: &[&str]| {
        let o = std::process::Command::new("redis-cli")
            .args(["-h", host, "-p", port, "--no-auth-warning"])
            .args(args)
            .output()
            .expect("redis-cli");
        String::from_utf8_lossy(&o.stdout).trim_end().to_string()
    };
    assert_eq!(
        cli(&["--user", "ro", "--pass", "ropw", "ACL", "WHOAMI"]),
        "ro"
    );
    assert_eq!(
        cli(&["--user", "ro", "--pass", "ropw", "SET", "k", "v"]),
        "NOPERM User ro has no permissions to run the 'set' command"
    );
    assert_eq!(
        cli(&["--user", "ro", "--pass", "nope", "GET", "k"]),
        "NOAUTH Authentication required.",
        "AUTH failed"
    );
    assert_eq!(cli(&["-a", "adminpw", "SET", "k", "v"]), "OK");
    assert_eq!(cli(&["--user", "ro", "--pass", "ropw", "GET", "k"]), "v");
    assert_eq!(
        cli(&["-a", "adminpw", "ACL", "DRYRUN", "ro", "DEL", "k"]),
        "User ro has no permissions to run the 'del' command"
    );
    assert!(cli(&["-a", "adminpw", "ACL", "LIST"]).contains("user ro on sanitize-payload #"));
}
