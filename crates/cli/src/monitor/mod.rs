//! `wirespeed monitor`: attaches to a pipeline's shared-memory metrics file (from this
//! or another process) and shows each tile's counters: once (a table or one JSON
//! object), or live in the terminal with rates computed between snapshots.

mod live;

pub use live::frame_text;

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Args;
use serde_json::{json, Map, Value};
use wirespeed_disco::metrics::{read, Counter, Snapshot, TileSnapshot, COUNTER_NAMES};
use wirespeed_sigverify::pipeline::default_metrics_path;

use crate::args::group_digits;
use crate::error::CliError;
use crate::table::{Align, Table};

/// Shortest `--interval-ms`.
pub const MIN_INTERVAL_MS: u64 = 50;
/// Longest `--interval-ms`.
pub const MAX_INTERVAL_MS: u64 = 60_000;

/// Arguments of `wirespeed monitor`.
#[derive(Args, Debug)]
#[command(after_help = "\
Live view (the default): per tile, packets in and out per second, busy and backpressure
time as a share of the interval, shed, rejected and overrun counts, and p50/p99 latency
(of the last interval, else since the start; each the upper edge of the power-of-two
histogram bucket that holds it, not an exact value); q or Esc quits; it also ends, printing the
final table, once the pipeline has finished or failed. Below the table, each tile's
named counters that are not zero: malformed packets by reason (parse), bad signatures
and duplicates (dedup), and for a udp: source `udp_kernel_drops`, the datagrams the
kernel dropped because the socket's receive buffer was full (read about once a second).
--once prints one snapshot (cumulative counters) and exits; --json makes that one JSON
object, with every named counter (zero or not) under its full name.
Exit status: 0, 1 when the metrics file is missing or unreadable, 2 when it is not a
wirespeed metrics file.")]
pub struct MonitorArgs {
    /// Metrics file of the pipeline [default: /dev/shm/wirespeed-pipeline.metrics]
    #[arg(long, value_name = "FILE")]
    pub metrics: Option<PathBuf>,

    /// Print one snapshot and exit
    #[arg(long)]
    pub once: bool,

    /// With --once: the snapshot as one JSON object
    #[arg(long, requires = "once")]
    pub json: bool,

    /// Refresh interval of the live view in milliseconds (50 to 60000)
    #[arg(long, value_name = "MS", default_value_t = 500, value_parser = parse_interval)]
    pub interval_ms: u64,
}

fn parse_interval(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(n) if (MIN_INTERVAL_MS..=MAX_INTERVAL_MS).contains(&n) => Ok(n),
        _ => Err(format!(
            "'{s}' is not an interval (expected {MIN_INTERVAL_MS} to {MAX_INTERVAL_MS} ms)"
        )),
    }
}

/// Runs `wirespeed monitor`.
pub fn run(args: &MonitorArgs) -> Result<(), CliError> {
    let path = args.metrics.clone().unwrap_or_else(default_metrics_path);
    let snap = read_snapshot(&path)?;
    if args.once {
        let text = if args.json {
            format!("{}\n", snapshot_json(&path, &snap))
        } else {
            snapshot_table(&path, &snap)
        };
        return io::stdout()
            .lock()
            .write_all(text.as_bytes())
            .map_err(CliError::Stdout);
    }
    live::run(&path, snap, Duration::from_millis(args.interval_ms))
}

/// Reads a snapshot: a missing or unreadable file is an error of status 1, a file that
/// is not a metrics file one of status 2.
pub fn read_snapshot(path: &Path) -> Result<Snapshot, CliError> {
    read(path).map_err(|e| match e.kind() {
        io::ErrorKind::InvalidData => CliError::MalformedInput {
            path: path.to_path_buf(),
            message: e.to_string(),
        },
        _ => CliError::Open {
            path: path.to_path_buf(),
            source: e,
        },
    })
}

/// The pipeline's state word, in words.
pub fn pipeline_state(state: u64) -> String {
    match state {
        0 => "running".into(),
        1 => "finished".into(),
        2 => "failed".into(),
        n => format!("unknown ({n})"),
    }
}

/// A tile's state counter, in words.
pub fn tile_state(t: &TileSnapshot) -> &'static str {
    match t.get(Counter::State) {
        0 => "running",
        1 => "finished",
        2 => "failed",
        _ => "unknown",
    }
}

/// Time since the last heartbeat (None before the first one).
pub fn heartbeat_age(snap: &Snapshot) -> Option<Duration> {
    if snap.heartbeat_ns == 0 {
        return None;
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    Some(Duration::from_nanos(now.saturating_sub(snap.heartbeat_ns)))
}

/// Nanoseconds to microseconds.
fn us(ns: Option<u64>) -> Option<f64> {
    ns.map(|v| v as f64 / 1e3)
}

/// A latency cell: microseconds with one decimal, "-" without samples.
pub fn us_cell(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.1}"))
}

/// One snapshot as a JSON object.
pub fn snapshot_json(path: &Path, snap: &Snapshot) -> Value {
    let tiles: Vec<Value> = snap
        .tiles
        .iter()
        .map(|t| {
            let counters: Map<String, Value> = COUNTER_NAMES
                .iter()
                .map(|(c, name)| (name.to_string(), json!(t.get(*c))))
                .collect();
            let custom: Map<String, Value> = t
                .custom
                .iter()
                .map(|(k, v)| (k.clone(), json!(v)))
                .collect();
            json!({
                "name": t.name,
                "state": tile_state(t),
                "counters": counters,
                "custom": custom,
                // Not exact: each percentile is the upper edge of the power-of-two
                // histogram bucket that holds it (the metrics keep buckets, not samples).
                "latency_us": {
                    "p50": us(t.latency_ns(0.5)),
                    "p99": us(t.latency_ns(0.99)),
                    "percentiles": "upper edge of the power-of-two histogram bucket",
                },
            })
        })
        .collect();
    json!({
        "metrics": path.display().to_string(),
        "pid": snap.pid,
        "state": pipeline_state(snap.state),
        "heartbeat_age_ms": heartbeat_age(snap).map(|d| d.as_secs_f64() * 1e3),
        "tiles": tiles,
    })
}

/// The nonzero custom counters of a tile, `name=value` separated by spaces.
pub fn custom_line(t: &TileSnapshot) -> Option<String> {
    let parts: Vec<String> = t
        .custom
        .iter()
        .filter(|(_, v)| *v > 0)
        .map(|(k, v)| format!("{k}={}", group_digits(*v)))
        .collect();
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// The header line: pid, state and heartbeat age.
pub fn header_line(snap: &Snapshot) -> String {
    let age = heartbeat_age(snap).map_or("none yet".into(), |d| {
        format!("{:.1} s ago", d.as_secs_f64())
    });
    format!(
        "pid {}  state {}  heartbeat {age}",
        snap.pid,
        pipeline_state(snap.state)
    )
}

/// One snapshot as text: a header, a table of cumulative counters, custom counters.
pub fn snapshot_table(path: &Path, snap: &Snapshot) -> String {
    let mut out = format!("metrics {}\n{}\n", path.display(), header_line(snap));
    let mut t = Table::new(&[
        ("tile", Align::Left),
        ("state", Align::Left),
        ("in", Align::Right),
        ("out", Align::Right),
        ("shed", Align::Right),
        ("rejected", Align::Right),
        ("overrun", Align::Right),
        ("busy ms", Align::Right),
        ("backpressure ms", Align::Right),
        ("p50 us", Align::Right),
        ("p99 us", Align::Right),
    ]);
    let ms = |ns: u64| format!("{:.1}", ns as f64 / 1e6);
    for tile in &snap.tiles {
        t.row(vec![
            tile.name.clone(),
            tile_state(tile).into(),
            group_digits(tile.get(Counter::In)),
            group_digits(tile.get(Counter::Out)),
            group_digits(tile.get(Counter::Shed)),
            group_digits(tile.get(Counter::Rejected)),
            group_digits(tile.get(Counter::Overrun)),
            ms(tile.get(Counter::BusyNs)),
            ms(tile.get(Counter::BackpressureNs)),
            us_cell(us(tile.latency_ns(0.5))),
            us_cell(us(tile.latency_ns(0.99))),
        ]);
    }
    out.push_str(&t.render());
    out.push_str(LATENCY_NOTE);
    for tile in &snap.tiles {
        if let Some(line) = custom_line(tile) {
            out.push_str(&format!("{}: {line}\n", tile.name));
        }
    }
    out
}

/// Under a table of latencies: what its p50 and p99 are (the metrics keep buckets).
pub const LATENCY_NOTE: &str =
    "(p50/p99: the upper edge of the power-of-two histogram bucket that holds each, not exact)\n";

/// What the live view shows of one tile over one interval.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TileRates {
    /// Fragments taken per second.
    pub in_per_s: Option<f64>,
    /// Fragments published per second.
    pub out_per_s: Option<f64>,
    /// Share of the interval spent in callbacks that did work, percent.
    pub busy_pct: Option<f64>,
    /// Share of the interval spent waiting for output credits, percent.
    pub backpressure_pct: Option<f64>,
    /// Latency quantiles of the interval (or since the start when the interval has no
    /// samples), microseconds.
    pub p50_us: Option<f64>,
    /// See `p50_us`.
    pub p99_us: Option<f64>,
}

/// Per-tile rates between two snapshots `secs` apart. Without a comparable earlier
/// snapshot (none, another process's, other tiles, or counters that went back) only the
/// cumulative latencies are given.
pub fn rates(prev: Option<&Snapshot>, cur: &Snapshot, secs: f64) -> Vec<TileRates> {
    let comparable = prev.filter(|p| {
        secs > 0.0
            && p.pid == cur.pid
            && p.tiles.len() == cur.tiles.len()
            && p.tiles.iter().zip(&cur.tiles).all(|(a, b)| {
                a.name == b.name && a.counters.iter().zip(&b.counters).all(|(x, y)| x <= y)
            })
    });
    cur.tiles
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let before = comparable.map(|p| &p.tiles[i]);
            let delta = |c: Counter| before.map(|b| t.get(c).saturating_sub(b.get(c)) as f64);
            let window = before.map(|b| TileSnapshot {
                hist: std::array::from_fn(|k| t.hist[k].saturating_sub(b.hist[k])),
                ..TileSnapshot::default()
            });
            let latency = |q: f64| {
                window
                    .as_ref()
                    .and_then(|w| w.latency_ns(q))
                    .or_else(|| t.latency_ns(q))
            };
            TileRates {
                in_per_s: delta(Counter::In).map(|d| d / secs),
                out_per_s: delta(Counter::Out).map(|d| d / secs),
                busy_pct: delta(Counter::BusyNs).map(|d| (d / (secs * 1e9) * 100.0).min(100.0)),
                backpressure_pct: delta(Counter::BackpressureNs)
                    .map(|d| (d / (secs * 1e9) * 100.0).min(100.0)),
                p50_us: us(latency(0.5)),
                p99_us: us(latency(0.99)),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tile(name: &str, input: u64, busy_ns: u64) -> TileSnapshot {
        let mut t = TileSnapshot {
            name: name.into(),
            ..TileSnapshot::default()
        };
        t.counters[Counter::In as usize] = input;
        t.counters[Counter::BusyNs as usize] = busy_ns;
        t
    }

    #[test]
    fn rates_are_differences_over_the_interval() {
        let a = Snapshot {
            pid: 7,
            tiles: vec![tile("parse", 100, 0)],
            ..Snapshot::default()
        };
        let mut b = Snapshot {
            pid: 7,
            tiles: vec![tile("parse", 1100, 250_000_000)],
            ..Snapshot::default()
        };
        b.tiles[0].hist[10] = 4;
        let r = rates(Some(&a), &b, 0.5);
        assert_eq!(r[0].in_per_s, Some(2000.0));
        assert_eq!(r[0].busy_pct, Some(50.0));
        assert_eq!(r[0].p50_us, Some(2.047));
        // Another process: no rates.
        b.pid = 8;
        assert_eq!(rates(Some(&a), &b, 0.5)[0].in_per_s, None);
        assert_eq!(rates(None, &b, 0.5)[0].busy_pct, None);
    }

    #[test]
    fn intervals_are_bounded() {
        assert_eq!(parse_interval("500"), Ok(500));
        assert!(parse_interval("10").is_err());
        assert!(parse_interval("x").is_err());
    }
}
