//! Runs the `wirespeed` binary: `gen pcap` -> `pipeline run` over the capture, over
//! signature records and over UDP (until SIGINT); `monitor --once` on a finished run's
//! metrics; the pipeline demo section; and the one-line errors of bad inputs.
//!
//! Most runs use a topology with shallow links: the pipeline's ring buffers are sized
//! by depth, and the default depths make each run allocate far more than a test needs.

mod common;

use std::io::{BufRead, BufReader};
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{temp, wirespeed, Killed};
use serde_json::Value;
use wirespeed_disco::metrics::{read, Counter};
use wirespeed_ed25519::{verify, Mode};
use wirespeed_sigdata::format::{read_path, Format};
use wirespeed_sigverify::gen::{generate, Expect};
use wirespeed_sigverify::pipeline::DEFAULT_TOPOLOGY;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "failed: {}", stderr(o));
    stdout(o)
}

fn json(o: &Output) -> Value {
    let out = ok(o);
    assert_eq!(out.lines().count(), 1, "one line: {out}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn num(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// The built-in topology with links of depth 256 (a few MB of rings, not GBs).
fn small_topology(group: &str) -> PathBuf {
    let path = temp(group, "small.toml");
    let text = DEFAULT_TOPOLOGY.replace("depth = 4096", "depth = 256");
    assert_ne!(text, DEFAULT_TOPOLOGY);
    std::fs::write(&path, text).expect("write topology");
    path
}

/// `gen pcap`: the path and the counts it printed (valid, bad, duplicate).
fn gen_pcap(group: &str, n: usize, dup: &str, bad: &str) -> (PathBuf, [u64; 3]) {
    let path = temp(group, "traffic.pcap");
    let o = wirespeed(&[
        "gen",
        "pcap",
        "--n",
        &n.to_string(),
        "--dup-frac",
        dup,
        "--bad-frac",
        bad,
        "--seed",
        "7",
        "--out",
        &s(&path),
    ]);
    let out = ok(&o);
    let count = |key: &str| -> u64 {
        out.split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{key} in {out}"))
    };
    let counts = [count("valid="), count("bad="), count("duplicate=")];
    assert_eq!(counts.iter().sum::<u64>(), n as u64, "{out}");
    (path, counts)
}

#[test]
fn gen_pcap_then_pipeline_run_accepts_what_gen_reported() {
    let (pcap, [valid, bad, dup]) = gen_pcap("pcap", 1_200, "0.1", "0.05");
    assert!(valid > 0 && bad > 0 && dup > 0);
    let metrics = temp("pcap", "m");
    // The built-in topology, as a plain run uses it.
    let v = json(&wirespeed(&[
        "pipeline",
        "run",
        "--source",
        &format!("pcap:{}", s(&pcap)),
        "--metrics",
        &s(&metrics),
        "--json",
    ]));
    assert_eq!(num(&v, "accepted_total"), valid, "{v}");
    assert_eq!(num(&v, "bad_signature"), bad, "{v}");
    assert_eq!(num(&v, "duplicates"), dup, "{v}");
    assert_eq!(num(&v, "ingested"), 1_200, "{v}");
    assert_eq!(num(&v, "malformed_total"), 0, "{v}");
    assert_eq!(num(&v, "shed"), 0, "{v}");
    assert_eq!(v["ended"], "drained");
    assert_eq!(v["verify_tiles"], 2);
    assert!(
        v["latency_us"]["p99"].as_f64().is_some_and(|p| p > 0.0),
        "{v}"
    );

    // The table form carries the same totals.
    let table = ok(&wirespeed(&[
        "pipeline",
        "run",
        "--source",
        &format!("pcap:{}", s(&pcap)),
        "--metrics",
        &s(&metrics),
        "--topology",
        &s(&small_topology("pcap")),
    ]));
    let row = |name: &str| {
        table
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().last())
            .map(|n| n.replace(',', ""))
            .unwrap_or_else(|| panic!("{name} in {table}"))
    };
    assert_eq!(row("accepted"), valid.to_string(), "{table}");
    assert_eq!(row("duplicate"), dup.to_string(), "{table}");
    assert!(table.contains("latency p99.9"), "{table}");
    // An unpaced run says its latency is queueing behind the source; a named metrics
    // file is kept.
    assert!(
        table.contains("mostly queueing behind the source"),
        "{table}"
    );
    assert!(metrics.exists(), "the named metrics file is kept");
    assert_eq!(v["latency_is_queueing"], true, "{v}");
    assert_eq!(v["metrics_kept"], true, "{v}");
}

/// Without --metrics the run's shared-memory file is removed when it ends; with --rate
/// the latency is not called queueing.
#[test]
fn the_default_metrics_file_is_removed_and_a_paced_run_is_not_queueing() {
    let v = json(&wirespeed(&[
        "pipeline", "run", "--source", "gen:400", "--rate", "20000", "--json",
    ]));
    assert_eq!(num(&v, "ingested"), 400, "{v}");
    assert_eq!(v["latency_is_queueing"], false, "{v}");
    assert_eq!(v["rate_pps"], 20000.0, "{v}");
    assert_eq!(v["metrics_kept"], false, "{v}");
    let path = v["metrics"].as_str().expect("metrics path");
    assert!(
        !std::path::Path::new(path).exists(),
        "{path} was left behind"
    );
}

#[test]
fn pipeline_run_on_signature_records_accepts_exactly_the_valid_ones() {
    for (file, mode) in [("sigs.bin", Mode::Strict), ("sigs.jsonl", Mode::Zip215)] {
        let path = temp("records", file);
        ok(&wirespeed(&[
            "gen",
            "sigs",
            "--n",
            "500",
            "--msg-len",
            "40",
            "--seed",
            "3",
            "--bad-frac",
            "0.2",
            "--out",
            &s(&path),
        ]));
        let records = read_path(&path, Format::from_path(&path))
            .expect("read back")
            .records;
        let valid = records
            .iter()
            .filter(|r| verify(&r.msg, &r.sig, &r.pk, mode).is_ok())
            .count() as u64;
        assert!(valid > 300 && valid < 500, "{valid}");
        let v = json(&wirespeed(&[
            "pipeline",
            "run",
            "--source",
            &format!("file:{}", s(&path)),
            "--mode",
            mode.name(),
            "--topology",
            &s(&small_topology("records")),
            "--metrics",
            &s(&temp("records", "m")),
            "--json",
        ]));
        assert_eq!(num(&v, "accepted_total"), valid, "{file}: {v}");
        assert_eq!(num(&v, "bad_signature"), 500 - valid, "{file}: {v}");
        assert_eq!(num(&v, "duplicates"), 0, "{file}: {v}");
        assert_eq!(v["mode"], mode.name());
    }
}

#[test]
fn monitor_once_shows_every_tile_of_a_finished_run() {
    let (pcap, [valid, _, dup]) = gen_pcap("monitor", 400, "0.1", "0.1");
    let metrics = temp("monitor", "m");
    ok(&wirespeed(&[
        "pipeline",
        "run",
        "--source",
        &format!("pcap:{}", s(&pcap)),
        "--verify-tiles",
        "3",
        "--topology",
        &s(&small_topology("monitor")),
        "--metrics",
        &s(&metrics),
    ]));
    let v = json(&wirespeed(&[
        "monitor",
        "--metrics",
        &s(&metrics),
        "--once",
        "--json",
    ]));
    assert_eq!(v["state"], "finished", "{v}");
    let tiles = v["tiles"].as_array().expect("tiles");
    let names: Vec<&str> = tiles.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(
        names,
        ["source", "parse", "verify0", "verify1", "verify2", "reorder", "dedup", "sink0"]
    );
    let tile = |name: &str| &tiles[names.iter().position(|n| *n == name).expect(name)];
    assert_eq!(tile("source")["counters"]["out"], 400);
    assert_eq!(tile("sink0")["counters"]["in"], valid);
    assert_eq!(tile("dedup")["custom"]["duplicate"], dup);
    // Every declared counter under its full name: this one is 26 bytes (version 1 of
    // the metrics layout cut it to "account_index_out_of_ran").
    let parse = tile("parse")["custom"].as_object().expect("parse counters");
    assert_eq!(
        parse.get("account_index_out_of_range"),
        Some(&Value::from(0))
    );
    assert!(parse.keys().all(|k| k != "account_index_out_of_ran"), "{v}");
    assert!(tile("sink0")["latency_us"]["p50"].as_f64().is_some(), "{v}");
    assert!(tile("parse")["latency_us"]["p50"].is_null(), "{v}");
    // The percentiles say what they are: bucket bounds, not exact values.
    assert!(
        tile("sink0")["latency_us"]["percentiles"]
            .as_str()
            .is_some_and(|s| s.contains("histogram bucket")),
        "{v}"
    );
    assert!(tiles.iter().all(|t| t["state"] == "finished"), "{v}");
    // The metrics file says the same as the JSON.
    let snap = read(&metrics).expect("metrics");
    assert_eq!(snap.tiles[7].get(Counter::In), valid);

    let table = ok(&wirespeed(&[
        "monitor",
        "--metrics",
        &s(&metrics),
        "--once",
    ]));
    assert!(table.contains("state finished"), "{table}");
    // The text says what its percentiles are, as the JSON does.
    assert!(table.contains("histogram bucket"), "{table}");
    for name in names {
        assert!(
            table.lines().any(|l| l.starts_with(name)),
            "{name}: {table}"
        );
    }
}

#[test]
fn a_udp_source_runs_until_sigint_and_prints_its_totals() {
    let traffic = generate(300, 0.1, 0.1, 5);
    let valid = traffic.iter().filter(|g| g.expect == Expect::Valid).count() as u64;
    let metrics = temp("udp", "m");
    let mut child = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args(["pipeline", "run", "--source", "udp:127.0.0.1:0", "--json"])
        .args(["--topology", &s(&small_topology("udp"))])
        .args(["--metrics", &s(&metrics)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the pipeline");
    let stderr = child.stderr.take().expect("stderr");
    let stdout = child.stdout.take().expect("stdout");
    let mut child = Killed(child);
    let line = BufReader::new(stderr)
        .lines()
        .next()
        .expect("a line")
        .expect("read stderr");
    let addr = line
        .strip_prefix("pipeline: listening on udp:")
        .and_then(|l| l.split(';').next())
        .unwrap_or_else(|| panic!("{line}"))
        .to_string();
    let sock = UdpSocket::bind("127.0.0.1:0").expect("bind");
    // In bursts of 50, each once the source has read the one before: never more than
    // 50 datagrams (some 60 KiB) wait in the socket's buffer, so the kernel drops none
    // however late the pipeline starts reading or however loaded the machine is.
    let deadline = Instant::now() + Duration::from_secs(30);
    let read_by_source = || {
        read(&metrics)
            .ok()
            .and_then(|m| m.tiles.iter().find(|t| t.name == "source").cloned())
            .map_or(0, |t| t.get(Counter::Out))
    };
    for (i, burst) in traffic.chunks(50).enumerate() {
        while read_by_source() < (i * 50) as u64 {
            assert!(Instant::now() < deadline, "source stalled before burst {i}");
            std::thread::sleep(Duration::from_millis(1));
        }
        for g in burst {
            sock.send_to(&g.bytes, &addr).expect("send");
        }
    }
    // Wait until every packet went through, then stop the run with SIGINT.
    loop {
        let through = read(&metrics)
            .ok()
            .and_then(|m| m.tiles.iter().find(|t| t.name == "dedup").cloned())
            .map_or(0, |t| t.get(Counter::In));
        if through == 300 {
            break;
        }
        if Instant::now() >= deadline {
            let m = wirespeed(&["monitor", "--metrics", &s(&metrics), "--once"]);
            panic!(
                "{through} of 300 through:\n{}",
                String::from_utf8_lossy(&m.stdout)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = child.0.id().to_string();
    let kill = Command::new("kill").args(["-INT", &pid]).status();
    assert!(kill.is_ok_and(|s| s.success()), "kill -INT");
    let mut out = String::new();
    std::io::Read::read_to_string(&mut BufReader::new(stdout), &mut out).expect("stdout");
    let status = child.0.wait().expect("wait");
    assert!(status.success(), "{status}: {out}");
    let v: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(v["ended"], "stopped", "{v}");
    assert_eq!(num(&v, "ingested"), 300, "{v}");
    assert_eq!(num(&v, "udp_kernel_drops"), 0, "{v}");
    assert_eq!(num(&v, "accepted_total"), valid, "{v}");
    assert!(v["source"]
        .as_str()
        .is_some_and(|s| s.starts_with("udp:127.0.0.1:")));
}

#[test]
fn the_pipeline_demo_checks_its_counts() {
    let o = wirespeed(&["demo", "--quick", "--only", "pipeline"]);
    let out = ok(&o);
    assert!(out.contains("ok: counts and ids as generated"), "{out}");
    assert!(out.contains("tx/s") && out.contains("p99 us"), "{out}");
    // Its latency is said to be queueing behind an unpaced source.
    assert!(out.contains("mostly queueing behind the source"), "{out}");
}

#[test]
fn a_tile_that_panics_stops_the_pipeline_with_a_nonzero_exit() {
    let path = temp("panic", "fail.toml");
    let text = DEFAULT_TOPOLOGY
        .replace("depth = 4096", "depth = 256")
        .replace(
            "name = \"sink\"\nkind = \"sink\"",
            "name = \"sink\"\nkind = \"sink\"\nparams = { fail_after = 50 }",
        );
    assert!(text.contains("fail_after"), "{text}");
    std::fs::write(&path, text).expect("write topology");
    let m = temp("panic", "m");
    let started = Instant::now();
    let o = wirespeed(&[
        "pipeline",
        "run",
        "--source",
        "gen:3000",
        "--topology",
        &s(&path),
        "--metrics",
        &s(&m),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("sink0") && err.contains("injected failure after 50"),
        "{err}"
    );
    assert!(stdout(&o).is_empty(), "no totals after a failure");
    // The pipeline stopped rather than running on: well under what 3,000 takes.
    assert!(started.elapsed() < Duration::from_secs(60));
    // The metrics file says which tile failed and that the pipeline did.
    let snap = read(&m).expect("metrics");
    assert_eq!(snap.state, 2, "pipeline state: failed");
    let sink = snap
        .tiles
        .iter()
        .find(|t| t.name == "sink0")
        .expect("sink0");
    assert_eq!(sink.get(Counter::State), 2);
    assert_eq!(sink.get(Counter::In), 51);
}

#[test]
fn the_sweep_prints_a_row_per_load_point_and_an_svg() {
    let svg = temp("sweep", "sweep.svg");
    let topo = small_topology("sweep");
    let o = wirespeed(&[
        "pipeline",
        "sweep",
        "--topology",
        &s(&topo),
        "--n",
        "500",
        "--secs",
        "0.2",
        "--points",
        "20,60",
        "--svg",
        &s(&svg),
        "--json",
    ]);
    let v = json(&o);
    let pts = v["points"].as_array().expect("points");
    assert_eq!(pts.len(), 2, "{v}");
    let max = v["max_tx_per_sec"].as_f64().expect("max");
    assert!(max > 0.0);
    for (p, pct) in pts.iter().zip([20.0, 60.0]) {
        assert_eq!(p["pct"].as_f64(), Some(pct));
        let offered = p["offered_tx_per_sec"].as_f64().expect("offered");
        assert!((offered - max * pct / 100.0).abs() < 1e-6 * max, "{p}");
        let (p50, p99) = (p["p50_us"].as_f64(), p["p99_us"].as_f64());
        assert!(
            p50.is_some_and(|a| p99.is_some_and(|b| 0.0 < a && a <= b)),
            "{p}"
        );
    }
    assert!(v["single_verify_us"].as_f64().is_some_and(|u| u > 0.0));
    let chart = std::fs::read_to_string(&svg).expect("svg");
    assert!(
        chart.starts_with("<svg") || chart.starts_with("<?xml"),
        "{chart}"
    );
    assert!(chart.contains("p99.9") && chart.contains("3 x single verify"));
}

#[test]
fn bad_inputs_give_one_line_errors() {
    let garbage = temp("errors", "garbage.txt");
    std::fs::write(&garbage, "not a capture, not metrics\n").expect("write");
    let bad_topology = temp("errors", "bad.toml");
    std::fs::write(&bad_topology, "[[tile\nname = 1\n").expect("write");
    let wrong_topology = temp("errors", "wrong.toml");
    std::fs::write(
        &wrong_topology,
        DEFAULT_TOPOLOGY.replace("\"dedup\"", "\"dd\""),
    )
    .expect("write");
    let bad_records = temp("errors", "bad.jsonl");
    std::fs::write(&bad_records, "{\"pk\": 1}\n").expect("write");
    let missing = s(&temp("errors", "missing"));
    let out = s(&temp("errors", "out.pcap"));
    let m = s(&temp("errors", "m"));
    let cases: Vec<(Vec<String>, i32, &str)> = vec![
        (
            vec![
                "pipeline".into(),
                "run".into(),
                "--source".into(),
                format!("pcap:{missing}"),
            ],
            2,
            "cannot read",
        ),
        (
            vec![
                "pipeline".into(),
                "run".into(),
                "--source".into(),
                format!("file:{missing}"),
            ],
            2,
            "cannot read",
        ),
        (
            vec![
                "pipeline".into(),
                "run".into(),
                "--source".into(),
                "tcp:127.0.0.1:1".into(),
            ],
            1,
            "is not a source",
        ),
        (
            vec![
                "pipeline".into(),
                "run".into(),
                "--verify-tiles".into(),
                "0".into(),
            ],
            1,
            "verify tile count",
        ),
        (
            vec![
                "pipeline".into(),
                "run".into(),
                "--topology".into(),
                missing.clone(),
            ],
            2,
            "cannot read",
        ),
        (
            vec![
                "pipeline".into(),
                "run".into(),
                "--topology".into(),
                s(&bad_topology),
            ],
            2,
            "bad topology",
        ),
        (
            vec![
                "pipeline".into(),
                "run".into(),
                "--topology".into(),
                s(&wrong_topology),
            ],
            2,
            "bad topology",
        ),
        (
            vec![
                "pipeline".into(),
                "run".into(),
                "--source".into(),
                format!("pcap:{}", s(&garbage)),
            ],
            2,
            "not a pcap",
        ),
        (
            vec![
                "pipeline".into(),
                "run".into(),
                "--source".into(),
                format!("file:{}", s(&bad_records)),
                "--topology".into(),
                s(&small_topology("errors")),
                "--metrics".into(),
                m.clone(),
            ],
            2,
            "bad.jsonl",
        ),
        (
            vec![
                "gen".into(),
                "pcap".into(),
                "--n".into(),
                "10".into(),
                "--dup-frac".into(),
                "2".into(),
                "--out".into(),
                out.clone(),
            ],
            1,
            "not a fraction",
        ),
        (
            vec![
                "gen".into(),
                "pcap".into(),
                "--n".into(),
                "10".into(),
                "--dup-frac".into(),
                "0.6".into(),
                "--bad-frac".into(),
                "0.5".into(),
                "--out".into(),
                out.clone(),
            ],
            1,
            "more than 1",
        ),
        (
            vec![
                "gen".into(),
                "pcap".into(),
                "--n".into(),
                "10000001".into(),
                "--out".into(),
                out.clone(),
            ],
            1,
            "too large",
        ),
        (
            vec![
                "monitor".into(),
                "--metrics".into(),
                missing.clone(),
                "--once".into(),
            ],
            2,
            "cannot read",
        ),
        (
            vec![
                "monitor".into(),
                "--metrics".into(),
                s(&garbage),
                "--once".into(),
                "--json".into(),
            ],
            2,
            "not a wirespeed metrics file",
        ),
        (vec!["monitor".into(), "--json".into()], 1, "--once"),
    ];
    for (args, code, needle) in cases {
        let o = wirespeed(&args.iter().map(String::as_str).collect::<Vec<_>>());
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("error: ") && err.contains(needle),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(stdout(&o).is_empty(), "{args:?}");
    }
    assert!(!Path::new(&out).exists(), "no capture written");
}
