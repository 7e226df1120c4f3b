//! `wirespeed kvs serve` as a process: the listening socket takes its backlog from
//! `tcp-backlog` (flag or configuration file; CONFIG GET shows it, CONFIG SET refuses
//! it), and a burst of 2,000 connections opened at once all connect promptly and are
//! all served.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{kvs_serve, temp};

const BURST: usize = 2_000;

fn connect(addr: &str) -> redis::Connection {
    redis::Client::open(format!("redis://{addr}/"))
        .and_then(|c| c.get_connection())
        .expect("connect")
}

fn config_get(addr: &str, name: &str) -> String {
    let v: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg(name)
        .query(&mut connect(addr))
        .expect("CONFIG GET");
    assert_eq!(v.len(), 2, "{v:?}");
    v[1].clone()
}

/// The backlog of the socket listening on `port`, as `ss -ltn` shows it (its Send-Q
/// column); None when `ss` is not installed.
fn listen_backlog(port: &str) -> Option<u64> {
    let out = Command::new("ss")
        .args(["-ltnH", &format!("sport = :{port}")])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().next()?;
    // State Recv-Q Send-Q Local Peer
    line.split_whitespace().nth(2)?.parse().ok()
}

fn somaxconn() -> u64 {
    std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(4096)
}

#[test]
fn tcp_backlog_comes_from_the_setting() {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    assert_eq!(config_get(&addr, "tcp-backlog"), "511", "Redis's default");
    let port = addr.rsplit(':').next().unwrap_or("0").to_string();
    if let Some(b) = listen_backlog(&port) {
        assert_eq!(b, 511.min(somaxconn()));
    }
    let err = redis::cmd("CONFIG")
        .arg("SET")
        .arg("tcp-backlog")
        .arg("100")
        .query::<()>(&mut connect(&addr))
        .expect_err("tcp-backlog is fixed at start");
    assert!(err.to_string().contains("immutable"), "{err}");

    let conf = temp("kvs-listen", "backlog.conf");
    std::fs::write(&conf, "tcp-backlog 300\n").expect("write the file");
    let (_server, addr) = kvs_serve(&["--port", "0", "--config", &conf.to_string_lossy()]);
    assert_eq!(config_get(&addr, "tcp-backlog"), "300");
    let port = addr.rsplit(':').next().unwrap_or("0").to_string();
    if let Some(b) = listen_backlog(&port) {
        assert_eq!(b, 300.min(somaxconn()));
    }
}

#[test]
fn a_burst_of_2000_connections_all_connect_and_get_pong() {
    let (_server, addr) = kvs_serve(&["--port", "0", "--tcp-backlog", "2048"]);
    assert_eq!(config_get(&addr, "tcp-backlog"), "2048");
    // Eight threads open their share as fast as they can, before any is used.
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let addr = addr.clone();
            std::thread::spawn(move || {
                let mut slowest = Duration::ZERO;
                let conns: Vec<TcpStream> = (0..BURST / 8)
                    .map(|_| {
                        let t = Instant::now();
                        let s = TcpStream::connect(&addr).expect("connect");
                        slowest = slowest.max(t.elapsed());
                        s
                    })
                    .collect();
                (conns, slowest)
            })
        })
        .collect();
    let mut all = Vec::new();
    let mut slowest = Duration::ZERO;
    for t in threads {
        let (conns, s) = t.join().expect("a connecting thread");
        all.extend(conns);
        slowest = slowest.max(s);
    }
    assert_eq!(all.len(), BURST);
    // A connection refused by a full queue is retried by the kernel after a second;
    // the queue takes the whole burst, so none waits that long.
    assert!(
        slowest < Duration::from_millis(900),
        "slowest connect {slowest:?}"
    );
    for s in &mut all {
        s.write_all(b"*1\r\n$4\r\nPING\r\n").expect("send PING");
    }
    for (i, s) in all.iter_mut().enumerate() {
        s.set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        let mut pong = [0u8; 7];
        s.read_exact(&mut pong)
            .unwrap_or_else(|e| panic!("connection {i}: {e}"));
        assert_eq!(&pong, b"+PONG\r\n", "connection {i}");
    }
    let clients: String = redis::cmd("INFO")
        .arg("clients")
        .query(&mut connect(&addr))
        .expect("INFO clients");
    assert!(
        clients.contains(&format!("connected_clients:{}", BURST + 2))
            || clients.contains(&format!("connected_clients:{}", BURST + 1)),
        "{clients}"
    );
}
