//! `wirespeed kvs bench` beyond the closed loop: open loop, server CPU, protocols, sweeps
//! with their JSON and SVG, and refusals of bad input.

mod common;

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{kvs_serve, temp, wirespeed, Killed};

fn json_of(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

#[test]
fn the_open_loop_reports_its_rate_and_the_server_cpu() {
    let (server, addr) = kvs_serve(&["--port", "0"]);
    let pid = server.0.id().to_string();
    let base = [
        "kvs",
        "bench",
        "--addr",
        &addr,
        "--connections",
        "4",
        "--keys",
        "200",
        "--json",
    ];
    let mut open = base.to_vec();
    open.extend(["--rate", "2000", "--duration", "1", "--server-pid", &pid]);
    let v = json_of(&wirespeed(&open));
    assert_eq!(v["mode"], "open");
    assert_eq!(v["protocol"], "resp");
    assert_eq!(v["offered_rate"], 2000.0);
    assert_eq!(v["mismatches"], 0);
    assert_eq!(
        (v["key_dist"].as_str(), v["value_sizes"].as_str()),
        (Some("uniform"), Some("64"))
    );
    let per_sec = v["per_sec"].as_f64().unwrap_or(0.0);
    assert!((1000.0..=3000.0).contains(&per_sec), "{v}");
    assert!(v["server_cpu_s"].as_f64().is_some_and(|s| s >= 0.0), "{v}");
    assert!(v["cpu_s_per_million"].as_f64().is_some(), "{v}");
    // The closed loop, as before, with the new fields present.
    let mut closed = base.to_vec();
    closed.extend(["--requests", "1000", "--pipeline", "4"]);
    let v = json_of(&wirespeed(&closed));
    assert_eq!(v["mode"], "closed");
    assert_eq!(v["requests"], 1000);
    assert!(v["offered_rate"].is_null() && v["server_cpu_s"].is_null());
    assert!(v["cpu_s_per_million"].is_null());
    // Both loops split over event-loop threads.
    for mode in [&["--pipeline", "4"][..], &["--rate", "4000"]] {
        let mut args = vec!["kvs", "bench", "--addr", &addr, "--keys", "200", "--json"];
        args.extend(["--connections", "5", "--threads", "2", "--requests", "800"]);
        args.extend(mode);
        let v = json_of(&wirespeed(&args));
        assert_eq!(
            (v["requests"].as_u64(), v["mismatches"].as_u64()),
            (Some(800), Some(0))
        );
    }
}

#[test]
fn a_sweep_writes_json_and_svg_and_sweeps_merge_into_one_plot() {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let (json_a, svg_a) = (temp("kvs-bench", "a.json"), temp("kvs-bench", "a.svg"));
    let out = wirespeed(&[
        "kvs",
        "bench",
        "--addr",
        &addr,
        "--connections",
        "2",
        "--keys",
        "100",
        "--sweep",
        "500,1000",
        "--duration",
        "0.3",
        "--label",
        "wirespeed",
        "--key-dist",
        "hot:0.2:0.8",
        "--value-size",
        "16-512",
        "--sweep-json",
        json_a.to_str().expect("path"),
        "--svg",
        svg_a.to_str().expect("path"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().count(), 2);
    assert!(
        stdout
            .lines()
            .all(|l| l.contains(" key_dist=hot:0.2:0.8 value_sizes=16-512 ")),
        "{stdout}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_a).expect("read")).expect("json");
    assert_eq!(doc["label"], "wirespeed");
    assert_eq!(doc["key_dist"], "hot:0.2:0.8");
    assert_eq!(doc["value_sizes"], "16-512");
    assert!(doc["value_size"].is_null(), "{doc}");
    assert_eq!(doc["points"][0]["mismatches"], 0);
    assert_eq!(doc["points"].as_array().map(Vec::len), Some(2));
    assert_eq!(doc["points"][1]["offered_rate"], 1000.0);
    assert!(doc["saturated_at"].is_null());
    let svg = std::fs::read_to_string(&svg_a).expect("read svg");
    assert!(svg.starts_with("<svg"));
    assert_eq!(svg.matches("<polyline").count(), 3);
    // A second server's document, then both on one plot.
    let mut other = doc.clone();
    other["label"] = "other".into();
    let json_b = temp("kvs-bench", "b.json");
    std::fs::write(&json_b, other.to_string()).expect("write");
    let merged = temp("kvs-bench", "merged.svg");
    let out = wirespeed(&[
        "kvs",
        "bench",
        "--svg-merge",
        json_a.to_str().expect("path"),
        json_b.to_str().expect("path"),
        "--svg",
        merged.to_str().expect("path"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let svg = std::fs::read_to_string(&merged).expect("read svg");
    assert_eq!(svg.matches("<polyline").count(), 4);
    assert!(svg.contains("wirespeed p99") && svg.contains("other p50"));
}

#[test]
fn bad_bench_input_is_refused_with_one_line() {
    let not_json = temp("kvs-bench", "not.json");
    std::fs::write(&not_json, "{ nope").expect("write");
    let no_points = temp("kvs-bench", "nopoints.json");
    std::fs::write(&no_points, r#"{"label": "x"}"#).expect("write");
    let missing = temp("kvs-bench", "missing.json");
    let _ = std::fs::remove_file(&missing);
    let out_svg = temp("kvs-bench", "never.svg");
    let path = |p: &std::path::Path| p.to_str().expect("path").to_string();
    let cases: Vec<(Vec<String>, i32, &str)> = vec![
        (vec!["--rate".into(), "0".into()], 1, "--rate"),
        (vec!["--rate=-3".into()], 1, "--rate"),
        (vec!["--rate".into(), "NaN".into()], 1, "--rate"),
        (vec!["--sweep".into(), "".into()], 1, "--sweep"),
        (vec!["--sweep".into(), "1000,x".into()], 1, "--sweep"),
        (vec!["--sweep".into(), "1000,-1".into()], 1, "--sweep"),
        (vec!["--duration".into(), "0".into()], 1, "--duration"),
        (vec!["--threads".into(), "0".into()], 1, "--threads"),
        (vec!["--threads".into(), "5000".into()], 1, "--threads"),
        (
            vec!["--key-dist".into(), "pareto".into()],
            1,
            "not a key distribution",
        ),
        (vec!["--key-dist".into(), "zipf:0".into()], 1, "exponent"),
        (vec!["--key-dist".into(), "zipf:x".into()], 1, "--key-dist"),
        (vec!["--key-dist".into(), "hot:0.2".into()], 1, "--key-dist"),
        (
            vec!["--key-dist".into(), "hot:1.5:0.5".into()],
            1,
            "share of the keys",
        ),
        (
            vec!["--key-dist".into(), "hot:0.2:2".into()],
            1,
            "share of the requests",
        ),
        (
            vec!["--value-size".into(), "".into()],
            1,
            "not a value size",
        ),
        (
            vec!["--value-size".into(), "64:0,128:0".into()],
            1,
            "weight",
        ),
        (
            vec!["--value-size".into(), "64:0.5,".into()],
            1,
            "--value-size",
        ),
        (vec!["--value-size".into(), "4096-64".into()], 1, "empty"),
        (
            vec!["--value-size".into(), "600000000".into()],
            1,
            "512 MiB",
        ),
        (
            vec!["--value-size".into(), "64:1,2000000:1".into()],
            1,
            "1 MiB",
        ),
        (vec!["--svg".into(), path(&out_svg)], 1, "--sweep"),
        (
            vec![
                "--svg-merge".into(),
                path(&missing),
                "--svg".into(),
                path(&out_svg),
            ],
            2,
            "cannot read",
        ),
        (
            vec![
                "--svg-merge".into(),
                path(&not_json),
                "--svg".into(),
                path(&out_svg),
            ],
            2,
            "not JSON",
        ),
        (
            vec![
                "--svg-merge".into(),
                path(&no_points),
                "--svg".into(),
                path(&out_svg),
            ],
            2,
            "points",
        ),
    ];
    for (extra, code, says) in cases {
        let mut args = vec!["kvs", "bench", "--addr", "127.0.0.1:1"];
        args.extend(extra.iter().map(String::as_str));
        let out = wirespeed(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{extra:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{extra:?}: {err}");
        assert!(err.contains(says), "{extra:?}: {err}");
    }
    assert!(!out_svg.exists());
}

/// memcached on a free port, or None (after saying so) when it is not installed.
fn memcached() -> Option<(Killed, SocketAddr)> {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let mut cmd = Command::new("memcached");
    cmd.args(["-p", &port.to_string(), "-U", "0", "-l", "127.0.0.1"]);
    // memcached refuses to run as root without a user to become.
    if wirespeed_util::proc::is_root() {
        cmd.args(["-u", "root"]);
    }
    let Ok(child) = cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn() else {
        common::missing_client("memcached");
        return None;
    };
    let mut child = Killed(child);
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(addr).is_err() {
        assert!(
            matches!(child.0.try_wait(), Ok(None)),
            "memcached exited early"
        );
        assert!(Instant::now() < deadline, "memcached never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
    Some((child, addr))
}

#[test]
fn the_memcache_protocol_against_memcached() {
    let Some((m, addr)) = memcached() else { return };
    let addr = addr.to_string();
    let pid = m.0.id().to_string();
    let v = json_of(&wirespeed(&[
        "kvs",
        "bench",
        "--protocol",
        "memcache",
        "--addr",
        &addr,
        "--connections",
        "4",
        "--pipeline",
        "8",
        "--requests",
        "4000",
        "--keys",
        "500",
        "--server-pid",
        &pid,
        "--json",
    ]));
    assert_eq!(v["protocol"], "memcache");
    assert_eq!(
        (v["requests"].as_u64(), v["mismatches"].as_u64()),
        (Some(4000), Some(0))
    );
    assert!(v["cpu_s_per_million"].as_f64().is_some(), "{v}");
}

#[test]
fn zipf_keys_and_weighted_sizes_against_the_server() {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let base = [
        "kvs",
        "bench",
        "--addr",
        &addr,
        "--connections",
        "4",
        "--keys",
        "500",
        "--get-ratio",
        "0.8",
    ];
    // Zipf keys (the default exponent) and three sizes, closed and open loop.
    for mode in [
        &["--pipeline", "8", "--requests", "4000"][..],
        &["--rate", "4000", "--requests", "2000"],
    ] {
        let mut args = base.to_vec();
        args.extend([
            "--key-dist",
            "zipf",
            "--value-size",
            "64:0.7,1024:0.2,16384:0.1",
            "--json",
        ]);
        args.extend(mode);
        let v = json_of(&wirespeed(&args));
        assert_eq!(v["mismatches"], 0, "{v}");
        assert!(v["requests"].as_u64().is_some_and(|n| n >= 2000), "{v}");
        assert_eq!(v["key_dist"], "zipf:0.99");
        assert_eq!(v["value_sizes"], "64:0.7,1024:0.2,16384:0.1");
    }
    // Another exponent and a range of sizes, as a text line.
    let mut args = base.to_vec();
    args.extend([
        "--key-dist",
        "zipf:1.2",
        "--value-size",
        "1-5000",
        "--requests",
        "3000",
    ]);
    let out = wirespeed(&args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(" key_dist=zipf:1.2 value_sizes=1-5000 ")
            && stdout.contains(" mismatches=0"),
        "{stdout}"
    );
}

#[test]
fn zero_counts_are_refused_and_names_passwords_work() {
    for (flag, value) in [
        ("--connections", "0"),
        ("--pipeline", "0"),
        ("--keys", "0"),
        ("--threads", "0"),
        ("--requests", "0"),
    ] {
        let out = wirespeed(&["kvs", "bench", "--addr", "127.0.0.1:1", flag, value]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{flag} {value}: {err}");
        assert!(err.contains("at least 1"), "{flag} {value}: {err}");
    }
    // Above the bounds: refused before connecting, naming the flag and the value.
    for flag in ["--connections", "--pipeline"] {
        let out = wirespeed(&["kvs", "bench", "--addr", "127.0.0.1:1", flag, "10001"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{flag}: {err}");
        assert!(
            err.contains(&format!("{flag} must be at most 10,000, not 10001")),
            "{flag}: {err}"
        );
    }
    // A server found by name, listening on a name.
    let (_open, addr) = kvs_serve(&["--port", "0", "--bind", "localhost"]);
    let port = addr.rsplit(':').next().unwrap_or("0");
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");
    let by_name = format!("localhost:{port}");
    let v = json_of(&wirespeed(&[
        "kvs",
        "bench",
        "--addr",
        &by_name,
        "--connections",
        "2",
        "--keys",
        "50",
        "--requests",
        "200",
        "--json",
    ]));
    assert_eq!(
        (v["requests"].as_u64(), v["mismatches"].as_u64()),
        (Some(200), Some(0))
    );
    // A server with a password: refused without it (one line naming AUTH's error),
    // measured with it.
    let (_locked, addr) = kvs_serve(&["--port", "0", "--requirepass", "s3cret"]);
    let base = [
        "kvs",
        "bench",
        "--addr",
        &addr,
        "--connections",
        "2",
        "--keys",
        "50",
        "--requests",
        "200",
        "--json",
    ];
    let out = wirespeed(&base);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("NOAUTH"), "{err}");
    let mut wrong = base.to_vec();
    wrong.extend(["--password", "nope"]);
    let out = wirespeed(&wrong);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("AUTH refused: -WRONGPASS"), "{err}");
    let mut right = base.to_vec();
    right.extend(["--password", "s3cret"]);
    let v = json_of(&wirespeed(&right));
    assert_eq!(
        (v["requests"].as_u64(), v["mismatches"].as_u64()),
        (Some(200), Some(0))
    );
}
