//! Runs the `wirespeed` binary with a `udp:` source and checks that what the kernel
//! drops is counted: with a tiny receive buffer (`--udp-rcvbuf`) and a burst far larger
//! than it, `udp_kernel_drops` is above zero and, with `ingested`, accounts for every
//! datagram this test sent (loopback, so the socket's full buffer is the only place
//! one can be lost); with fewer datagrams than the default buffer holds it is 0.
//! Both through `monitor --once --json` while the run goes and the totals after SIGINT.
//!
//! No timing is asserted: the runs wait (with a generous deadline) for the counts to
//! add up, whatever the machine's load.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use common::{in_ci, skipped, temp, wirespeed, Killed};
use serde_json::Value;
use wirespeed_sigverify::gen::generate;
use wirespeed_sigverify::pipeline::DEFAULT_TOPOLOGY;

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// A running `pipeline run --source udp:127.0.0.1:0 --json`.
struct Udp {
    child: Killed,
    stdout: ChildStdout,
    addr: String,
    rcvbuf: u64,
    metrics: PathBuf,
}

/// The built-in topology with links of depth 256 (a few MB of rings, not GBs).
fn small_topology(group: &str) -> PathBuf {
    let path = temp(group, "small.toml");
    let text = DEFAULT_TOPOLOGY.replace("depth = 4096", "depth = 256");
    std::fs::write(&path, text).expect("write topology");
    path
}

/// Starts the pipeline on a small topology with `extra` arguments; reads the address
/// and the receive buffer it printed.
fn start(group: &str, extra: &[&str]) -> Udp {
    let topology = small_topology(group);
    let metrics = temp(group, "m");
    let mut child = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args(["pipeline", "run", "--source", "udp:127.0.0.1:0", "--json"])
        .args(["--topology", &s(&topology), "--metrics", &s(&metrics)])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the pipeline");
    let stderr = child.stderr.take().expect("stderr");
    let stdout = child.stdout.take().expect("stdout");
    let child = Killed(child);
    let line = BufReader::new(stderr)
        .lines()
        .next()
        .expect("a line")
        .expect("read stderr");
    // "pipeline: listening on udp:ADDR; receive buffer N bytes; SIGINT or ..."
    let parts: Vec<&str> = line.split("; ").collect();
    let addr = parts[0]
        .strip_prefix("pipeline: listening on udp:")
        .unwrap_or_else(|| panic!("{line}"))
        .to_string();
    let rcvbuf = parts
        .get(1)
        .and_then(|p| p.strip_prefix("receive buffer "))
        .and_then(|p| p.strip_suffix(" bytes"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    Udp {
        child,
        stdout,
        addr,
        rcvbuf,
        metrics,
    }
}

/// `monitor --once --json` on the run's metrics: the source tile.
fn source_tile(metrics: &Path) -> Option<Value> {
    let o = wirespeed(&["monitor", "--metrics", &s(metrics), "--once", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).ok()?;
    v["tiles"]
        .as_array()?
        .iter()
        .find(|t| t["name"] == "source")
        .cloned()
}

/// Waits until the source tile has read or seen dropped `sent` datagrams (as the
/// monitor shows it); returns the tile as last seen.
fn wait_accounted(metrics: &Path, sent: u64) -> Value {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let tile = source_tile(metrics).unwrap_or(Value::Null);
        let got = |v: &Value| v.as_u64().unwrap_or(0);
        let counted = got(&tile["counters"]["out"])
            + got(&tile["counters"]["shed"])
            + got(&tile["custom"]["udp_kernel_drops"]);
        if counted == sent {
            return tile;
        }
        assert!(Instant::now() < deadline, "{counted} of {sent}: {tile}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// SIGINT, then the totals it prints.
fn stop(mut run: Udp) -> Value {
    let pid = run.child.0.id().to_string();
    let kill = Command::new("kill").args(["-INT", &pid]).status();
    assert!(kill.is_ok_and(|s| s.success()), "kill -INT");
    let mut out = String::new();
    run.stdout.read_to_string(&mut out).expect("stdout");
    let status = run.child.0.wait().expect("wait");
    assert!(status.success(), "{status}: {out}");
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// Whether the kernel's per-socket counts can be read here (Linux with /proc); a
/// failure in CI, a skip elsewhere.
fn kernel_counts_readable() -> bool {
    if Path::new("/proc/self/net/udp").exists() {
        return true;
    }
    assert!(!in_ci(), "/proc/self/net/udp is required in CI");
    skipped("no /proc/self/net/udp: the kernel's drop counts cannot be read");
    false
}

fn num(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

#[test]
fn a_burst_past_a_tiny_receive_buffer_is_counted_as_kernel_drops() {
    if !kernel_counts_readable() {
        return;
    }
    let run = start("udp-drops", &["--udp-rcvbuf", "4096"]);
    // Linux doubles the size asked for (and has a floor of a few KiB): far below the
    // default of ~200 KiB, room for a handful of datagrams.
    assert!(run.rcvbuf < 32 * 1024, "receive buffer {}", run.rcvbuf);
    let traffic = generate(300, 0.1, 0.1, 5);
    let sock = UdpSocket::bind("127.0.0.1:0").expect("bind");
    // Unpaced, and each valid one costs a verification: the pipeline, held back by
    // its links, leaves the buffer full for most of the burst.
    let mut sent = 0u64;
    for i in 0..20_000 {
        if sock
            .send_to(&traffic[i % traffic.len()].bytes, &run.addr)
            .is_ok()
        {
            sent += 1;
        }
    }
    assert!(sent > 19_000, "sent {sent}");
    let tile = wait_accounted(&run.metrics, sent);
    assert!(
        tile["custom"]["udp_kernel_drops"]
            .as_u64()
            .is_some_and(|d| d > 0),
        "{tile}"
    );
    let v = stop(run);
    assert_eq!(v["ended"], "stopped", "{v}");
    let (ingested, drops) = (num(&v, "ingested"), num(&v, "udp_kernel_drops"));
    assert!(drops > 0, "{v}");
    assert_eq!(ingested + drops, sent, "{v}");
}

#[test]
fn traffic_the_default_buffer_holds_loses_nothing() {
    if !kernel_counts_readable() {
        return;
    }
    let run = start("udp-nodrops", &[]);
    // Few enough that the buffer holds them all even if the pipeline read none while
    // they were sent (a datagram of a few hundred bytes takes well under 4 KiB of it).
    let n = (run.rcvbuf / 4096).min(100);
    assert!(n >= 20, "receive buffer {}", run.rcvbuf);
    let traffic = generate(n as usize, 0.1, 0.1, 6);
    let sock = UdpSocket::bind("127.0.0.1:0").expect("bind");
    for (i, g) in traffic.iter().enumerate() {
        sock.send_to(&g.bytes, &run.addr).expect("send");
        if i % 10 == 9 {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    let tile = wait_accounted(&run.metrics, n);
    // Declared for a UDP source, and shown at zero.
    assert_eq!(tile["custom"]["udp_kernel_drops"], 0, "{tile}");
    assert_eq!(tile["counters"]["out"], n, "{tile}");
    let v = stop(run);
    assert_eq!(num(&v, "udp_kernel_drops"), 0, "{v}");
    assert_eq!(num(&v, "ingested"), n, "{v}");
}

#[test]
fn other_sources_have_no_kernel_drops_and_refuse_a_receive_buffer() {
    let topology = s(&small_topology("udp-other"));
    let metrics = s(&temp("udp-other", "m"));
    let run = |extra: &[&str]| {
        let mut args = vec!["pipeline", "run", "--topology", &topology];
        args.extend(["--metrics", &metrics]);
        args.extend(extra);
        wirespeed(&args)
    };
    let o = run(&["--source", "gen:20", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert!(v["udp_kernel_drops"].is_null(), "{v}");
    // Nor is the counter declared for the monitor.
    let tile = source_tile(Path::new(&metrics)).expect("source tile");
    assert!(tile["custom"].get("udp_kernel_drops").is_none(), "{tile}");
    let o = run(&["--source", "gen:20", "--udp-rcvbuf", "4096"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--udp-rcvbuf") && err.lines().count() == 1,
        "{err}"
    );
    let o = run(&["--source", "udp:127.0.0.1:0", "--udp-rcvbuf", "0"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("not a receive buffer size"), "{err}");
}
