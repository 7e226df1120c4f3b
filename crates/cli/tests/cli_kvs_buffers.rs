//! `wirespeed kvs serve`'s client buffers stay bounded and counted: a client that
//! pipelines large replies and reads none is closed at `client-output-buffer-limit`
//! (hard at once, soft after its time) and the memory comes back; buffers a big request
//! grew are given back once the connection is idle; the clients' buffers show in INFO
//! (`mem_clients_normal`, inside `used_memory`) and count against `maxmemory`.
//!
//! The resident-size checks read `/proc/PID/status` (Linux); elsewhere they are skipped
//! with a line saying so.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{connect, info, info_num, kvs_serve, skipped};

const MIB: usize = 1 << 20;

/// Resident size of `pid` in bytes (None where /proc is not there).
fn rss(pid: u32) -> Option<usize> {
    usize::try_from(wirespeed_util::proc::rss_bytes(Some(pid))?).ok()
}

/// Polls `f` every 50 ms for up to `secs`; true once it holds.
fn eventually(secs: u64, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if f() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Reads from `sock` until the server closes it (true) or `secs` pass (false); the
/// bytes read are counted in `got`.
fn closed_by_server(sock: &mut TcpStream, secs: u64, got: &mut usize) -> bool {
    sock.set_read_timeout(Some(Duration::from_millis(200)))
        .expect("timeout");
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut buf = vec![0u8; 1 << 16];
    while Instant::now() < deadline {
        match sock.read(&mut buf) {
            Ok(0) => return true,
            Ok(k) => *got += k,
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => return true,
        }
    }
    false
}

/// Stores a 1 MiB value under `big` and sets `client-output-buffer-limit` to `limit`.
fn big_value_and_limit(con: &mut redis::Connection, limit: &str) {
    let _: () = redis::cmd("SET")
        .arg("big")
        .arg(vec![b'v'; MIB])
        .query(con)
        .expect("SET");
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("client-output-buffer-limit")
        .arg(limit)
        .query(con)
        .expect("CONFIG SET");
}

#[test]
fn a_client_past_the_hard_output_limit_is_closed_and_its_memory_comes_back() {
    let (server, addr) = kvs_serve(&["--port", "0"]);
    let pid = server.0.id();
    let mut con = connect(&addr);
    big_value_and_limit(&mut con, "normal 8mb 0 0");
    let shown: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("client-output-buffer-limit")
        .query(&mut con)
        .expect("CONFIG GET");
    assert_eq!(
        shown[1],
        "normal 8388608 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
    );
    let before = rss(pid);
    // 2,000 pipelined GETs of a 1 MiB value (22 KB sent), none of the replies read:
    // without a limit the server would hold 2 GB of replies for this client.
    let mut sock = TcpStream::connect(&addr).expect("connect");
    sock.write_all(&b"GET big\r\n".repeat(2000)).expect("send");
    let mut got = 0;
    assert!(
        closed_by_server(&mut sock, 20, &mut got),
        "the client was not closed"
    );
    assert!(
        got < 16 * MIB,
        "{got} bytes of replies were sent before the close"
    );
    assert_eq!(
        info_num(
            &mut con,
            "stats",
            "client_output_buffer_limit_disconnections"
        ),
        1
    );
    // The server is fine, and the memory the replies took is back.
    let v: Vec<u8> = redis::cmd("GET").arg("big").query(&mut con).expect("GET");
    assert_eq!(v.len(), MIB);
    assert!(eventually(5, || info_num(
        &mut con,
        "memory",
        "mem_clients_normal"
    ) < MIB));
    match (before, rss(pid)) {
        (Some(b), Some(a)) => assert!(
            a < b + 64 * MIB,
            "VmRSS {} MiB after the close, {} MiB before",
            a / MIB,
            b / MIB
        ),
        _ => skipped("no /proc/PID/status here, resident size not checked"),
    }
}

#[test]
fn a_client_over_the_soft_output_limit_for_its_time_is_closed_and_a_reader_is_not() {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let mut con = connect(&addr);
    big_value_and_limit(&mut con, "normal 0 2mb 1");
    // 64 MiB of replies not read for a while: more than the socket buffers take, so
    // at least 2 MiB stay pending past the second.
    let mut idle = TcpStream::connect(&addr).expect("connect");
    idle.write_all(&b"GET big\r\n".repeat(64)).expect("send");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        info_num(
            &mut con,
            "stats",
            "client_output_buffer_limit_disconnections"
        ),
        0,
        "closed before the soft limit's second"
    );
    std::thread::sleep(Duration::from_millis(2000));
    let mut got = 0;
    assert!(
        closed_by_server(&mut idle, 20, &mut got),
        "the client was not closed"
    );
    assert!(
        got < 32 * MIB,
        "{got} bytes of replies were sent before the close"
    );
    // A client that reads its replies as they come is never over the soft limit for
    // long, however much it asks for.
    for _ in 0..32 {
        let v: Vec<u8> = redis::cmd("GET").arg("big").query(&mut con).expect("GET");
        assert_eq!(v.len(), MIB);
    }
    assert_eq!(
        info_num(
            &mut con,
            "stats",
            "client_output_buffer_limit_disconnections"
        ),
        1
    );
}

#[test]
fn big_requests_and_replies_leave_no_buffer_behind_once_idle() {
    let (server, addr) = kvs_serve(&["--port", "0"]);
    let pid = server.0.id();
    let mut con = connect(&addr);
    let idle_clients = info_num(&mut con, "memory", "mem_clients_normal");
    let before = rss(pid);
    let big = vec![b'x'; 96 * MIB];
    let _: () = redis::cmd("SET")
        .arg("big")
        .arg(&big)
        .query(&mut con)
        .expect("SET");
    drop(big);
    // The request's buffer is given back as soon as it ran (it is empty and large);
    // the reply buffer a 96 MiB GET grew is counted while it is held...
    let got: Vec<u8> = redis::cmd("GET").arg("big").query(&mut con).expect("GET");
    assert_eq!(got.len(), 96 * MIB);
    drop(got);
    let m = info(&mut con, "memory");
    let num = |k: &str| m.get(k).and_then(|v| v.parse::<usize>().ok()).unwrap_or(0);
    let clients = num("mem_clients_normal");
    assert!(clients >= 96 * MIB, "mem_clients_normal {clients}");
    assert!(
        num("used_memory") >= clients + 96 * MIB,
        "used_memory {} holds neither the value nor the buffer: {m:?}",
        num("used_memory")
    );
    let _: () = redis::cmd("DEL").arg("big").query(&mut con).expect("DEL");
    // ... and given back within about a second of idleness.
    assert!(
        eventually(5, || info_num(&mut con, "memory", "mem_clients_normal")
            <= idle_clients + 64 * 1024),
        "the buffers were kept: {:?}",
        info(&mut con, "memory")
    );
    match before {
        Some(b) => assert!(
            eventually(15, || rss(pid).is_some_and(|a| a < b + 32 * MIB)),
            "VmRSS {} MiB once idle, {} MiB before the request",
            rss(pid).unwrap_or(0) / MIB,
            b / MIB
        ),
        None => skipped("no /proc/PID/status here, resident size not checked"),
    }
}

#[test]
fn client_buffers_count_against_maxmemory() {
    let (_server, addr) = kvs_serve(&["--port", "0", "--maxmemory", "16mb"]);
    let mut con = connect(&addr);
    let _: () = redis::cmd("SET")
        .arg("k")
        .arg("v")
        .query(&mut con)
        .expect("SET");
    // A client in the middle of sending a 40 MB value holds 24 MB in its query buffer.
    let mut slow = TcpStream::connect(&addr).expect("connect");
    slow.write_all(b"*3\r\n$3\r\nSET\r\n$4\r\nhuge\r\n$41943040\r\n")
        .expect("send");
    slow.write_all(&vec![b'h'; 24 * MIB]).expect("send");
    assert!(
        eventually(10, || info_num(&mut con, "memory", "mem_clients_normal")
            >= 24 * MIB),
        "the partial request is not counted: {:?}",
        info(&mut con, "memory")
    );
    let refused = redis::cmd("SET")
        .arg("k2")
        .arg("v")
        .query::<()>(&mut con)
        .expect_err("a write past maxmemory");
    assert!(refused.to_string().contains("OOM"), "{refused}");
    // Reads go on.
    let v: String = redis::cmd("GET").arg("k").query(&mut con).expect("GET");
    assert_eq!(v, "v");
    // The slow client goes away: its buffer with it, and writes are accepted again.
    drop(slow);
    assert!(eventually(5, || redis::cmd("SET")
        .arg("k2")
        .arg("v")
        .query::<()>(&mut con)
        .is_ok()));
}
