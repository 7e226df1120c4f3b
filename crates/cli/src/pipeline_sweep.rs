//! `wirespeed pipeline sweep`: ingest-to-verdict latency against offered load.
//!
//! Generated Solana traffic (all valid, distinct) is first run as fast as the pipeline
//! takes it, which gives the maximum rate; then the source is paced at each requested
//! share of that maximum for a few seconds and the latency quantiles of every accepted
//! transaction are taken from the time it was *due* (a source held back by the pipeline
//! is charged for the wait). The single-signature `verify` time is measured in the same
//! process, so the table can say how p99 compares with it.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use clap::Args;
use serde_json::{json, Value};
use wirespeed_ed25519::Mode;
use wirespeed_engine::ed25519::verify;
use wirespeed_loadgen::plot::{self, Chart, Dash, Series};
use wirespeed_sigverify::gen::generate;
use wirespeed_sigverify::pipeline::{self, Config, Summary};
use wirespeed_sigverify::solana;
use wirespeed_sigverify::tiles::Input;

use crate::args::group_digits;
use crate::error::CliError;
use crate::files::write_file;
use crate::pipeline::{base_config, latency_us, tx_per_sec, GEN_SEED};
use crate::table::{Align, Table};

/// Most distinct transactions generated.
pub const MAX_SWEEP_N: usize = 1_000_000;

/// Arguments of `wirespeed pipeline sweep`.
#[derive(Args, Debug)]
#[command(after_help = "\
Runs generated traffic once as fast as the pipeline takes it (the maximum), then paces
the source at each load point for --secs seconds. Latency runs from each transaction's
scheduled send to its verdict at the sink. The last column divides p99 by the median
time of one single-signature verify, measured in the same process.")]
pub struct SweepArgs {
    /// Topology file (TOML) [default: the built-in topology]
    #[arg(long, value_name = "FILE")]
    pub topology: Option<PathBuf>,

    /// Verify tiles [default: from the topology]
    #[arg(long, value_name = "N", value_parser = crate::pipeline::parse_verify_tiles)]
    pub verify_tiles: Option<usize>,

    /// Load points, percent of the measured maximum, comma separated
    #[arg(long, value_name = "PCTS", value_delimiter = ',', value_parser = parse_pct,
          default_value = "10,20,30,40,50,60,70,80,90,100")]
    pub points: Vec<f64>,

    /// Seconds per load point
    #[arg(long, value_name = "S", default_value = "2", value_parser = parse_secs)]
    pub secs: f64,

    /// Distinct transactions generated (repeated as needed)
    #[arg(long, value_name = "N", default_value_t = 50_000, value_parser = parse_n)]
    pub n: usize,

    /// Write the latency curves as an SVG chart
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,

    /// Print the results as one JSON object
    #[arg(long)]
    pub json: bool,
}

fn parse_pct(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(p) if p.is_finite() && p > 0.0 && p <= 200.0 => Ok(p),
        _ => Err(format!(
            "'{s}' is not a load percentage (above 0, at most 200)"
        )),
    }
}

fn parse_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.05..=600.0).contains(&v) => Ok(v),
        _ => Err(format!("'{s}' is not a duration in seconds (0.05 to 600)")),
    }
}

fn parse_n(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (100..=MAX_SWEEP_N).contains(&n) => Ok(n),
        _ => Err(format!(
            "'{s}' is not a transaction count (100 to {})",
            group_digits(MAX_SWEEP_N as u64)
        )),
    }
}

/// One load point's result.
#[derive(Clone, Debug)]
pub struct Point {
    /// Share of the maximum, percent.
    pub pct: f64,
    /// Offered transactions per second.
    pub offered: f64,
    /// Ingested transactions per second.
    pub achieved: f64,
    /// Latency quantiles (p50, p90, p99, p99.9, max), microseconds.
    pub us: [Option<f64>; 5],
}

const QUANTILES: [f64; 5] = [0.5, 0.9, 0.99, 0.999, 1.0];

/// The median wall time of one single-signature verify over `items`, microseconds.
pub fn single_verify_us(items: &[([u8; 32], [u8; 64], Vec<u8>)], calls: usize) -> f64 {
    let mut times: Vec<f64> = Vec::with_capacity(calls);
    for i in 0..calls {
        let (pk, sig, msg) = &items[i % items.len()];
        let t = Instant::now();
        let ok = verify(msg, sig, pk, Mode::Strict).is_ok();
        times.push(t.elapsed().as_secs_f64() * 1e6);
        std::hint::black_box(ok);
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Runs the pipeline over `count` packets cycled from `packets`, at `rate` (None: as
/// fast as taken).
fn run_point(
    config: &Config,
    packets: &[Vec<u8>],
    count: usize,
    rate: Option<f64>,
) -> Result<Summary, CliError> {
    let input: Vec<(bool, Vec<u8>)> = packets
        .iter()
        .cycle()
        .take(count)
        .map(|p| (false, p.clone()))
        .collect();
    let config = Config {
        rate,
        ..config.clone()
    };
    let result = pipeline::run(
        &config,
        Input::Memory(input.into_iter()),
        &AtomicBool::new(false),
    );
    let _ = std::fs::remove_file(&config.metrics_path);
    result.map_err(|e| CliError::Pipeline(e.to_string()))
}

/// Runs `wirespeed pipeline sweep`.
pub fn run(args: &SweepArgs) -> Result<(), CliError> {
    let mut config = base_config(args.topology.as_deref(), args.verify_tiles, None)?;
    config.metrics_path = std::env::temp_dir().join(format!(
        "wirespeed-pipeline-sweep-{}.metrics",
        std::process::id()
    ));
    // Repeats of the generated set are a full set apart: keep them out of the horizon
    // so every transaction is accepted and timed.
    config.dedup_horizon = (args.n / 2).max(1);
    let traffic = generate(args.n, 0.0, 0.0, GEN_SEED);
    let packets: Vec<Vec<u8>> = traffic.into_iter().map(|g| g.bytes).collect();
    let singles: Vec<([u8; 32], [u8; 64], Vec<u8>)> = packets
        .iter()
        .take(256)
        .filter_map(|p| {
            let t = solana::parse(p).ok()?;
            let it = t.items().next()?;
            Some((
                it.pk.try_into().ok()?,
                it.sig.try_into().ok()?,
                it.msg.to_vec(),
            ))
        })
        .collect();
    if singles.is_empty() {
        return Err(CliError::Check("generated traffic did not parse".into()));
    }
    let single_us = single_verify_us(&singles, 2_000);

    let max_run = run_point(&config, &packets, args.n.max(20_000), None)?;
    let max = tx_per_sec(&max_run);
    if max <= 0.0 {
        return Err(CliError::Check(
            "the maximum-rate run took no transactions".into(),
        ));
    }
    let mut points = Vec::new();
    for &pct in &args.points {
        let offered = max * pct / 100.0;
        let count = ((offered * args.secs) as usize).max(200);
        let s = run_point(&config, &packets, count, Some(offered))?;
        points.push(Point {
            pct,
            offered,
            achieved: tx_per_sec(&s),
            us: QUANTILES.map(|q| latency_us(&s, q)),
        });
    }
    if args.json {
        println!("{}", json_doc(&config, max, single_us, args, &points));
    } else {
        print!("{}", table(&config, max, single_us, &points));
    }
    if let Some(path) = &args.svg {
        write_svg(path, &config, single_us, &points)?;
    }
    Ok(())
}

fn json_doc(
    config: &Config,
    max: f64,
    single_us: f64,
    args: &SweepArgs,
    points: &[Point],
) -> Value {
    let pts: Vec<Value> = points
        .iter()
        .map(|p| {
            json!({
                "pct": p.pct,
                "offered_tx_per_sec": p.offered,
                "achieved_tx_per_sec": p.achieved,
                "p50_us": p.us[0],
                "p90_us": p.us[1],
                "p99_us": p.us[2],
                "p999_us": p.us[3],
                "max_us": p.us[4],
                "p99_over_single_verify": p.us[2].map(|v| v / single_us),
            })
        })
        .collect();
    json!({
        "verify_tiles": config.verify_tiles,
        "secs_per_point": args.secs,
        "distinct_transactions": args.n,
        "max_tx_per_sec": max,
        "single_verify_us": single_us,
        "points": pts,
    })
}

fn table(config: &Config, max: f64, single_us: f64, points: &[Point]) -> String {
    let mut out = format!(
        "maximum {} tx/s with {} verify tiles; one single-signature verify: {single_us:.1} us (median)\n",
        group_digits(max.round() as u64),
        config.verify_tiles
    );
    let mut t = Table::new(&[
        ("load %", Align::Right),
        ("offered tx/s", Align::Right),
        ("achieved tx/s", Align::Right),
        ("p50 us", Align::Right),
        ("p90 us", Align::Right),
        ("p99 us", Align::Right),
        ("p99.9 us", Align::Right),
        ("max us", Align::Right),
        ("p99 / verify", Align::Right),
    ]);
    let cell = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1}"));
    for p in points {
        t.row(vec![
            format!("{:.0}", p.pct),
            group_digits(p.offered.round() as u64),
            group_digits(p.achieved.round() as u64),
            cell(p.us[0]),
            cell(p.us[1]),
            cell(p.us[2]),
            cell(p.us[3]),
            cell(p.us[4]),
            p.us[2].map_or("-".into(), |v| format!("{:.2}", v / single_us)),
        ]);
    }
    out.push_str(&t.render());
    out
}

fn write_svg(
    path: &Path,
    config: &Config,
    single_us: f64,
    points: &[Point],
) -> Result<(), CliError> {
    let curve = |k: usize| -> Vec<(f64, f64)> {
        points
            .iter()
            .filter_map(|p| p.us[k].map(|v| (p.offered, v)))
            .collect()
    };
    let mut series: Vec<Series> = [("p50", 0), ("p99", 2), ("p99.9", 3)]
        .iter()
        .enumerate()
        .map(|(i, (label, k))| Series {
            label: (*label).to_string(),
            points: curve(*k),
            color: i,
            dash: Dash::Solid,
        })
        .collect();
    let xs: Vec<f64> = points.iter().map(|p| p.offered).collect();
    let (lo, hi) = xs
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
    if lo.is_finite() {
        series.push(Series {
            label: "3 x single verify".into(),
            points: vec![(lo, 3.0 * single_us), (hi, 3.0 * single_us)],
            color: 3,
            dash: Dash::Dashed,
        });
    }
    let chart = Chart {
        title: format!(
            "verification pipeline: ingest-to-verdict latency against offered load ({} verify tiles)",
            config.verify_tiles
        ),
        x_label: "offered rate (transactions/s)".into(),
        y_label: "latency (µs, from the scheduled send)".into(),
        series,
    };
    write_file(path, plot::svg(&chart).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_bounded() {
        assert_eq!(parse_pct("50"), Ok(50.0));
        for bad in ["0", "-5", "201", "x", "NaN", "inf"] {
            assert!(parse_pct(bad).is_err(), "{bad}");
        }
        assert!(parse_secs("0.01").is_err());
        assert!(parse_secs("2").is_ok());
        assert!(parse_n("99").is_err());
        assert!(parse_n("1000").is_ok());
    }
}
