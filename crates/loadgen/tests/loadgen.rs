//! The load generator against the server (closed and open loop) and, when installed,
//! against memcached.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use common::{memcached, start};
use wirespeed_kvs::server::ServerConfig;
use wirespeed_loadgen::{
    self as loadgen, key_of, preload, run, KeyDist, LoadSpec, Protocol, ValueSize,
};

fn spec(addr: SocketAddr, protocol: Protocol) -> LoadSpec {
    LoadSpec {
        addr,
        protocol,
        connections: 4,
        threads: 1,
        pipeline: 4,
        requests: 2_000,
        duration: None,
        rate: None,
        keys: 200,
        key_dist: KeyDist::Uniform,
        value_size: ValueSize::Fixed(48),
        get_ratio: 0.8,
        seed: 3,
        password: None,
        cluster: false,
    }
}

#[test]
fn the_open_loop_holds_the_offered_rate() {
    let r = start(ServerConfig::default());
    preload(r.addr, Protocol::Resp, 200, &ValueSize::Fixed(48)).unwrap_or_else(|e| panic!("{e}"));
    let cpu_before = loadgen::process_cpu_secs(std::process::id()).ok();
    let spec = LoadSpec {
        rate: Some(2_000.0),
        duration: Some(Duration::from_secs(1)),
        ..spec(r.addr, Protocol::Resp)
    };
    let rep = run(&spec).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rep.mismatches, 0);
    assert!(rep.requests > 0);
    // 2,000 requests are due in the second; the run ends with the last reply.
    assert!(rep.requests <= 2_000, "{}", rep.requests);
    let achieved = rep.per_sec();
    assert!(
        (1_000.0..=3_000.0).contains(&achieved),
        "achieved {achieved} requests/s of 2000 offered"
    );
    assert!(rep.us(0.5) > 0.0 && rep.us(0.5) <= rep.us(0.99));
    // The server runs in this process: its CPU time grew.
    if let Some(before) = cpu_before {
        let after = loadgen::process_cpu_secs(std::process::id()).unwrap_or_else(|e| panic!("{e}"));
        assert!(after >= before, "{before} -> {after}");
    }
}

#[test]
fn the_open_loop_sends_exactly_the_requests_asked_for() {
    let r = start(ServerConfig::default());
    preload(r.addr, Protocol::Resp, 200, &ValueSize::Fixed(48)).unwrap_or_else(|e| panic!("{e}"));
    let spec = LoadSpec {
        rate: Some(5_000.0),
        requests: 501,
        connections: 3,
        ..spec(r.addr, Protocol::Resp)
    };
    let rep = run(&spec).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((rep.requests, rep.mismatches), (501, 0));
    // 501 requests at 5,000/s are due over 0.1 s.
    assert!(rep.secs >= 0.09, "{}", rep.secs);
}

#[test]
fn the_closed_loop_runs_for_a_duration() {
    let r = start(ServerConfig::default());
    preload(r.addr, Protocol::Resp, 200, &ValueSize::Fixed(48)).unwrap_or_else(|e| panic!("{e}"));
    let t = Instant::now();
    let spec = LoadSpec {
        duration: Some(Duration::from_millis(300)),
        ..spec(r.addr, Protocol::Resp)
    };
    let rep = run(&spec).unwrap_or_else(|e| panic!("{e}"));
    assert!(rep.requests > 0);
    assert_eq!(rep.mismatches, 0);
    assert!(t.elapsed() >= Duration::from_millis(300));
    assert!(t.elapsed() < Duration::from_secs(10));
}

/// Values of another length behind the generator's back: every GET is a mismatch, and
/// the replies after each are still found (no hang, no read timeout).
fn check_mismatches_of_another_length(addr: SocketAddr, protocol: Protocol) {
    let mut c = TcpStream::connect(addr).unwrap_or_else(|e| panic!("{e}"));
    let mut out = Vec::new();
    for k in 0..200 {
        let key = key_of(k);
        match protocol {
            Protocol::Resp => out.extend_from_slice(
                format!("*3\r\n$3\r\nSET\r\n${}\r\n{key}\r\n$2\r\nxy\r\n", key.len()).as_bytes(),
            ),
            Protocol::Memcache => {
                out.extend_from_slice(format!("set {key} 0 0 2\r\nxy\r\n").as_bytes())
            }
        }
    }
    c.write_all(&out).unwrap_or_else(|e| panic!("{e}"));
    let reply_len = match protocol {
        Protocol::Resp => 5,
        Protocol::Memcache => 8,
    };
    let mut replies = vec![0u8; 200 * reply_len];
    c.read_exact(&mut replies).unwrap_or_else(|e| panic!("{e}"));
    let t = Instant::now();
    for rate in [None, Some(4_000.0)] {
        let spec = LoadSpec {
            get_ratio: 1.0,
            requests: 400,
            rate,
            ..spec(addr, protocol)
        };
        let rep = run(&spec).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((rep.requests, rep.mismatches), (400, 400), "{rate:?}");
    }
    assert!(t.elapsed() < Duration::from_secs(5));
}

#[test]
fn wrong_lengths_are_counted_not_hung_on() {
    let r = start(ServerConfig::default());
    check_mismatches_of_another_length(r.addr, Protocol::Resp);
}

#[test]
fn a_server_that_falls_behind_stops_the_open_loop() {
    // Reads every request, answers none.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut conn = conn;
                let mut buf = vec![0u8; 1 << 16];
                while matches!(conn.read(&mut buf), Ok(n) if n > 0) {}
            });
        }
    });
    let spec = LoadSpec {
        connections: 1,
        rate: Some(400_000.0),
        duration: Some(Duration::from_secs(60)),
        get_ratio: 1.0,
        ..spec(addr, Protocol::Resp)
    };
    let t = Instant::now();
    let e = run(&spec).err().unwrap_or_else(|| panic!("no error"));
    let o = loadgen::overloaded(&e).unwrap_or_else(|| panic!("not an overload: {e}"));
    assert_eq!(o.outstanding, loadgen::MAX_OUTSTANDING);
    assert!(e.to_string().contains("cannot keep up"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(30));
}

#[test]
fn a_bad_rate_is_an_error() {
    let r = start(ServerConfig::default());
    for rate in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let spec = LoadSpec {
            rate: Some(rate),
            ..spec(r.addr, Protocol::Resp)
        };
        assert!(run(&spec).is_err(), "{rate}");
    }
}

#[test]
fn memcached_closed_and_open_loop() {
    let Some(m) = memcached() else { return };
    preload(m.1, Protocol::Memcache, 200, &ValueSize::Fixed(48)).unwrap_or_else(|e| panic!("{e}"));
    let closed = run(&spec(m.1, Protocol::Memcache)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((closed.requests, closed.mismatches), (2_000, 0));
    let open = run(&LoadSpec {
        rate: Some(4_000.0),
        requests: 1_000,
        ..spec(m.1, Protocol::Memcache)
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((open.requests, open.mismatches), (1_000, 0));
    check_mismatches_of_another_length(m.1, Protocol::Memcache);
}

#[test]
fn two_hundred_connections_on_one_event_loop() {
    let r = start(ServerConfig::default());
    preload(r.addr, Protocol::Resp, 200, &ValueSize::Fixed(48)).unwrap_or_else(|e| panic!("{e}"));
    for pipeline in [1, 3] {
        let spec = LoadSpec {
            connections: 200,
            threads: 1,
            pipeline,
            requests: 10_000,
            ..spec(r.addr, Protocol::Resp)
        };
        let rep = run(&spec).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((rep.requests, rep.mismatches), (10_000, 0), "{pipeline}");
    }
}

#[test]
fn connections_are_split_across_loops() {
    let r = start(ServerConfig::default());
    preload(r.addr, Protocol::Resp, 200, &ValueSize::Fixed(48)).unwrap_or_else(|e| panic!("{e}"));
    // More loops than connections is as many loops as connections.
    for (connections, threads) in [(7, 3), (2, 5)] {
        for rate in [None, Some(5_000.0)] {
            let spec = LoadSpec {
                connections,
                threads,
                requests: 701,
                rate,
                ..spec(r.addr, Protocol::Resp)
            };
            let rep = run(&spec).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                (rep.requests, rep.mismatches),
                (701, 0),
                "{threads} {rate:?}"
            );
        }
    }
}

#[test]
fn batches_larger_than_the_socket_buffers_are_written_in_parts() {
    // 256 pipelined 64 KiB values a batch: writes and replies span many socket buffers.
    let r = start(ServerConfig::default());
    preload(r.addr, Protocol::Resp, 40, &ValueSize::Fixed(1 << 16))
        .unwrap_or_else(|e| panic!("{e}"));
    let spec = LoadSpec {
        connections: 2,
        pipeline: 256,
        requests: 1024,
        keys: 40,
        value_size: ValueSize::Fixed(1 << 16),
        get_ratio: 0.5,
        ..spec(r.addr, Protocol::Resp)
    };
    let rep = run(&spec).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((rep.requests, rep.mismatches), (1024, 0));
    let open = run(&LoadSpec {
        rate: Some(2_000.0),
        requests: 200,
        ..spec
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((open.requests, open.mismatches), (200, 0));
}

#[test]
fn a_server_that_stops_answering_fails_the_closed_loop() {
    // Accepts, reads, never answers: the run fails after the I/O timeout, not hangs.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut conn = conn;
                let mut buf = vec![0u8; 1 << 16];
                while matches!(conn.read(&mut buf), Ok(n) if n > 0) {}
            });
        }
    });
    let t = Instant::now();
    let e = run(&spec(addr, Protocol::Resp))
        .err()
        .unwrap_or_else(|| panic!("no error"));
    assert_eq!(e.kind(), std::io::ErrorKind::TimedOut, "{e}");
    assert!(t.elapsed() < Duration::from_secs(30));
}

#[test]
fn skewed_keys_and_mixed_sizes_are_checked_without_mismatches() {
    let r = start(ServerConfig::default());
    let sizes: ValueSize = "64:0.7,1024:0.2,16384:0.1"
        .parse()
        .unwrap_or_else(|e| panic!("{e}"));
    preload(r.addr, Protocol::Resp, 300, &sizes).unwrap_or_else(|e| panic!("{e}"));
    for (key_dist, rate) in [
        (KeyDist::Zipf { s: 0.99 }, None),
        (KeyDist::Zipf { s: 1.0 }, Some(5_000.0)),
        (
            KeyDist::Hot {
                keys: 0.1,
                requests: 0.9,
            },
            None,
        ),
    ] {
        let spec = LoadSpec {
            keys: 300,
            key_dist,
            value_size: sizes.clone(),
            get_ratio: 0.7,
            requests: 1_500,
            rate,
            ..spec(r.addr, Protocol::Resp)
        };
        let rep = run(&spec).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((rep.requests, rep.mismatches), (1_500, 0), "{key_dist}");
    }
    // A range of sizes on a fresh key space.
    let range = ValueSize::Uniform { min: 1, max: 3000 };
    let r = start(ServerConfig::default());
    preload(r.addr, Protocol::Resp, 200, &range).unwrap_or_else(|e| panic!("{e}"));
    let spec = LoadSpec {
        key_dist: KeyDist::Zipf { s: 1.2 },
        value_size: range,
        ..spec(r.addr, Protocol::Resp)
    };
    let rep = run(&spec).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((rep.requests, rep.mismatches), (2_000, 0));
}

#[test]
fn sizes_preloaded_by_another_distribution_are_mismatches() {
    // The server holds 48-byte values; GETs that expect other sizes all differ.
    let r = start(ServerConfig::default());
    preload(r.addr, Protocol::Resp, 200, &ValueSize::Fixed(48)).unwrap_or_else(|e| panic!("{e}"));
    let spec = LoadSpec {
        key_dist: KeyDist::Zipf { s: 0.99 },
        value_size: ValueSize::Uniform { min: 100, max: 200 },
        get_ratio: 1.0,
        requests: 500,
        ..spec(r.addr, Protocol::Resp)
    };
    let rep = run(&spec).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((rep.requests, rep.mismatches), (500, 500));
}

#[test]
fn bad_distributions_are_refused_before_any_load() {
    let r = start(ServerConfig::default());
    let bad_keys = LoadSpec {
        key_dist: KeyDist::Zipf { s: 0.0 },
        ..spec(r.addr, Protocol::Resp)
    };
    let bad_sizes = LoadSpec {
        value_size: ValueSize::Weighted(vec![(64, 0.0)]),
        ..spec(r.addr, Protocol::Resp)
    };
    for spec in [bad_keys, bad_sizes] {
        let e = run(&spec).err().unwrap_or_else(|| panic!("no error"));
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{e}");
    }
    let e = preload(r.addr, Protocol::Resp, 10, &ValueSize::Fixed(600 << 20))
        .err()
        .unwrap_or_else(|| panic!("no error"));
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{e}");
}

#[test]
fn the_load_generator_notices_wrong_replies() {
    let r = start(ServerConfig::default());
    preload(r.addr, Protocol::Resp, 100, &ValueSize::Fixed(32)).unwrap_or_else(|e| panic!("{e}"));
    let spec = LoadSpec {
        addr: r.addr,
        protocol: Protocol::Resp,
        connections: 2,
        threads: 1,
        pipeline: 4,
        requests: 400,
        duration: None,
        rate: None,
        keys: 100,
        key_dist: KeyDist::Uniform,
        value_size: ValueSize::Fixed(32),
        get_ratio: 1.0,
        seed: 7,
        password: None,
        cluster: false,
    };
    let clean = run(&spec).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((clean.requests, clean.mismatches), (400, 0));
    // Same-length values changed behind its back: every GET of them is a mismatch.
    let mut c = redis::Client::open(format!("redis://{}/", r.addr))
        .and_then(|c| c.get_connection())
        .unwrap_or_else(|e| panic!("{e}"));
    for k in 0..100 {
        let _: () = redis::cmd("SET")
            .arg(key_of(k))
            .arg(vec![b'#'; 32])
            .query(&mut c)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let dirty = run(&spec).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(dirty.mismatches, 400);
}
