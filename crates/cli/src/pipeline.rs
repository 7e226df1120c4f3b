//! `wirespeed pipeline run`: the streaming signature-verification pipeline
//! (source -> parse -> verify x N -> reorder -> dedup -> sink) over generated traffic, a
//! file of signature records, a pcap capture or a UDP socket, with its totals at the end.
//! For a UDP source the totals count what the kernel dropped before the pipeline read
//! it (`udp_kernel_drops`), and `--udp-rcvbuf` sizes the socket's receive buffer.

use std::fmt;
use std::io::Write;
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use clap::{Args, Subcommand};
use serde_json::{json, Map, Value};
use wirespeed_disco::run::Ended;
use wirespeed_disco::MetricsError;
use wirespeed_ed25519::Mode;
use wirespeed_sigverify::gen::generate;
use wirespeed_sigverify::pcap::{CaptureError, UdpReader};
use wirespeed_sigverify::pipeline::{self, default_metrics_path, Config, PipelineError, Summary};
use wirespeed_sigverify::tiles::{open_records, Input};

use crate::args::{group_digits, parse_mode};
use crate::error::CliError;
use crate::files::read_bounded_text;
use crate::table::{Align, Table};

/// Transactions generated when no `--source` is given.
pub const DEFAULT_GEN_N: usize = 200_000;
/// Fraction of duplicates in generated traffic.
pub const GEN_DUP_FRAC: f64 = 0.05;
/// Fraction of bad signatures in generated traffic.
pub const GEN_BAD_FRAC: f64 = 0.05;
/// Seed of generated traffic.
pub const GEN_SEED: u64 = 1;
/// Most transactions a `gen:N` source generates.
pub const MAX_GEN_N: usize = crate::gen::MAX_PCAP_N;
/// Largest topology file read.
pub const MAX_TOPOLOGY_BYTES: usize = 1 << 20;
/// Most verify tiles `--verify-tiles` accepts.
pub const MAX_VERIFY_TILES: usize = 32;
/// Largest `--udp-rcvbuf` (the kernel's own limit is net.core.rmem_max).
pub const MAX_UDP_RCVBUF: usize = 1 << 30;

/// What `wirespeed pipeline` does.
#[derive(Subcommand, Debug)]
pub enum PipelineCommand {
    /// Run the pipeline until its input ends (or until SIGINT/SIGTERM) and print totals
    Run(RunArgs),
    /// Latency against offered load, 10% to 100% of the measured maximum (table, JSON, SVG)
    Sweep(crate::pipeline_sweep::SweepArgs),
}

/// Where the packets come from.
#[derive(Clone, Debug, PartialEq)]
pub enum SourceSpec {
    /// Generated Solana traffic held in memory (N transactions).
    Gen(usize),
    /// A file of signature records (binary, or JSON Lines for a .jsonl file).
    File(PathBuf),
    /// UDP payloads of a pcap or pcapng capture.
    Pcap(PathBuf),
    /// A UDP socket bound to this address.
    Udp(String),
}

impl fmt::Display for SourceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SourceSpec::Gen(n) => write!(f, "gen:{n}"),
            SourceSpec::File(p) => write!(f, "file:{}", p.display()),
            SourceSpec::Pcap(p) => write!(f, "pcap:{}", p.display()),
            SourceSpec::Udp(a) => write!(f, "udp:{a}"),
        }
    }
}

/// `--source file:PATH|pcap:PATH|udp:ADDR|gen[:N]`.
pub fn parse_source(s: &str) -> Result<SourceSpec, String> {
    let (scheme, rest) = s.split_once(':').unwrap_or((s, ""));
    let nonempty = |what: &str| {
        if rest.is_empty() {
            Err(format!("'{s}': {scheme}: needs {what} after the colon"))
        } else {
            Ok(rest)
        }
    };
    match scheme {
        "file" => Ok(SourceSpec::File(PathBuf::from(nonempty("a path")?))),
        "pcap" => Ok(SourceSpec::Pcap(PathBuf::from(nonempty("a path")?))),
        "udp" => Ok(SourceSpec::Udp(
            nonempty("an address (HOST:PORT)")?.to_string(),
        )),
        "gen" if rest.is_empty() => Ok(SourceSpec::Gen(DEFAULT_GEN_N)),
        "gen" => match rest.parse::<usize>() {
            Ok(n) if n <= MAX_GEN_N => Ok(SourceSpec::Gen(n)),
            _ => Err(format!(
                "'{s}': gen:N needs a count from 0 to {}",
                group_digits(MAX_GEN_N as u64)
            )),
        },
        _ => Err(format!(
            "'{s}' is not a source (expected file:PATH, pcap:PATH, udp:ADDR or gen[:N])"
        )),
    }
}

/// `--verify-tiles N`.
pub fn parse_verify_tiles(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=MAX_VERIFY_TILES).contains(&n) => Ok(n),
        _ => Err(format!(
            "'{s}' is not a verify tile count (expected 1 to {MAX_VERIFY_TILES})"
        )),
    }
}

fn parse_rcvbuf(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=MAX_UDP_RCVBUF).contains(&n) => Ok(n),
        _ => Err(format!(
            "'{s}' is not a receive buffer size (expected 1 to {} bytes)",
            group_digits(MAX_UDP_RCVBUF as u64)
        )),
    }
}

fn parse_rate(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 => Ok(r),
        _ => Err(format!("'{s}' is not a positive packet rate")),
    }
}

/// Arguments of `wirespeed pipeline run`.
#[derive(Args, Debug)]
#[command(after_help = "\
Sources: gen[:N] = N generated Solana transactions, 5% duplicates and 5% bad signatures
(the default: gen:200000); file:PATH = signature records (jsonl for a .jsonl file, else
bin); pcap:PATH = UDP payloads of a pcap/pcapng capture (Solana transactions);
udp:ADDR = a UDP socket, until SIGINT or SIGTERM.
UDP losses: datagrams the kernel dropped because the socket's receive buffer was full
(the pipeline did not read them in time) are counted as udp_kernel_drops: the kernel's
own count for the socket, read from /proc/self/net/udp about once a second (the
source tile's counter in `wirespeed monitor`) and once more at the end (the totals;
null in --json where /proc cannot be read). ingested + udp_kernel_drops = datagrams
that reached the socket (less any still queued when the run stopped). --udp-rcvbuf
sets the buffer (SO_RCVBUF; Linux doubles it for its bookkeeping and caps it at
net.core.rmem_max); the size in force is printed on stderr.
Topology: a TOML file like the built-in one (`wirespeed_sigverify::pipeline::
DEFAULT_TOPOLOGY`); --verify-tiles and --mode override it. Watch a run from another
terminal with `wirespeed monitor --metrics FILE`.
Exit status: 0 when the input was drained or the run was stopped by a signal, 2 for a
malformed input file or topology, 1 for any other error (a failed tile included).")]
pub struct RunArgs {
    /// Topology file (TOML) [default: the built-in topology]
    #[arg(long, value_name = "FILE")]
    pub topology: Option<PathBuf>,

    /// Packet source: file:PATH, pcap:PATH, udp:ADDR or gen[:N] [default: gen:200000]
    #[arg(long, value_name = "SOURCE", value_parser = parse_source)]
    pub source: Option<SourceSpec>,

    /// Verify tiles (1 to 32) [default: from the topology, 2 built in]
    #[arg(long, value_name = "N", value_parser = parse_verify_tiles)]
    pub verify_tiles: Option<usize>,

    /// Validation rules: strict, zip215, cofactored-strict or libsodium [default: strict]
    #[arg(long, value_name = "MODE", value_parser = parse_mode)]
    pub mode: Option<Mode>,

    /// Source rate in packets per second [default: as fast as the pipeline takes them]
    #[arg(long, value_name = "PPS", value_parser = parse_rate)]
    pub rate: Option<f64>,

    /// Stop the source after this many packets
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,

    /// Receive buffer of a udp: source's socket in bytes (SO_RCVBUF) [default: the
    /// system's, net.core.rmem_default]
    #[arg(long, value_name = "BYTES", value_parser = parse_rcvbuf)]
    pub udp_rcvbuf: Option<usize>,

    /// Shared-memory metrics file, kept after the run [default:
    /// /dev/shm/wirespeed-pipeline.metrics, removed when the run ends]
    #[arg(long, value_name = "FILE")]
    pub metrics: Option<PathBuf>,

    /// Print the totals as one JSON object
    #[arg(long)]
    pub json: bool,
}

/// Runs `wirespeed pipeline`.
pub fn run(cmd: &PipelineCommand) -> Result<(), CliError> {
    match cmd {
        PipelineCommand::Run(args) => run_pipeline(args),
        PipelineCommand::Sweep(args) => crate::pipeline_sweep::run(args),
    }
}

/// The configuration of a run: the topology (file or built in) with the flags over it.
pub fn config(args: &RunArgs) -> Result<Config, CliError> {
    let mut config = base_config(args.topology.as_deref(), args.verify_tiles, args.mode)?;
    config.rate = args.rate;
    config.limit = args.limit;
    config.metrics_path = args.metrics.clone().unwrap_or_else(default_metrics_path);
    Ok(config)
}

/// The topology (a file, or the built-in one) with the verify-tile count and mode over
/// it. Pinned verify tiles take consecutive cores from the topology's first one.
pub fn base_config(
    topology: Option<&Path>,
    verify_tiles: Option<usize>,
    mode: Option<Mode>,
) -> Result<Config, CliError> {
    let mut config = match topology {
        Some(path) => {
            let text = read_bounded_text(path, MAX_TOPOLOGY_BYTES)?;
            Config::from_topology(&text).map_err(|message| CliError::MalformedInput {
                path: path.to_path_buf(),
                message: format!("bad topology: {}", one_line(&message)),
            })?
        }
        None => Config::default(),
    };
    if let Some(n) = verify_tiles {
        config.verify_tiles = n;
    }
    if let Some(mode) = mode {
        config.mode = mode;
    }
    Ok(config)
}

/// A message on one line: its non-empty lines joined.
fn one_line(message: &str) -> String {
    let lines: Vec<&str> = message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines.join(": ")
}

/// Generated traffic as in-memory packets.
pub fn generated_input(n: usize) -> Input {
    let packets: Vec<(bool, Vec<u8>)> = generate(n, GEN_DUP_FRAC, GEN_BAD_FRAC, GEN_SEED)
        .into_iter()
        .map(|g| (false, g.bytes))
        .collect();
    Input::Memory(packets.into_iter())
}

/// Opens the source; a UDP source is named by the address it was bound to, with its
/// receive buffer set to `rcvbuf` bytes when given.
fn open(source: &SourceSpec, rcvbuf: Option<usize>) -> Result<(Input, SourceSpec), CliError> {
    if rcvbuf.is_some() && !matches!(source, SourceSpec::Udp(_)) {
        return Err(CliError::Invalid(format!(
            "--udp-rcvbuf sizes a udp: source's socket; the source is {source}"
        )));
    }
    let open_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CliError::Open { path, source }
    };
    match source {
        SourceSpec::Gen(n) => Ok((generated_input(*n), source.clone())),
        SourceSpec::File(path) => Ok((
            Input::Records(open_records(path).map_err(open_err(path))?),
            source.clone(),
        )),
        SourceSpec::Pcap(path) => match UdpReader::open(path) {
            Ok(r) => Ok((Input::Pcap(Box::new(r)), source.clone())),
            Err(CaptureError::Io(e)) => Err(open_err(path)(e)),
            Err(e) => Err(CliError::MalformedInput {
                path: path.clone(),
                message: e.to_string(),
            }),
        },
        SourceSpec::Udp(addr) => {
            let bind =
                |e: std::io::Error| CliError::Invalid(format!("cannot bind udp:{addr}: {e}"));
            let sock = UdpSocket::bind(addr.as_str()).map_err(bind)?;
            // The source tile shares its thread with others: it must never block.
            sock.set_nonblocking(true).map_err(bind)?;
            let local = sock.local_addr().map_err(bind)?;
            let opt = |e: std::io::Error| {
                CliError::Invalid(format!("udp:{local}: receive buffer (SO_RCVBUF): {e}"))
            };
            let sockref = socket2::SockRef::from(&sock);
            if let Some(n) = rcvbuf {
                sockref.set_recv_buffer_size(n).map_err(opt)?;
            }
            let size = sockref.recv_buffer_size().map_err(opt)?;
            eprintln!(
                "pipeline: listening on udp:{local}; receive buffer {size} bytes; SIGINT or \
                 SIGTERM stops it"
            );
            Ok((Input::Udp(sock), SourceSpec::Udp(local.to_string())))
        }
    }
}

fn run_pipeline(args: &RunArgs) -> Result<(), CliError> {
    let config = config(args)?;
    let source = args
        .source
        .clone()
        .unwrap_or(SourceSpec::Gen(DEFAULT_GEN_N));
    let (input, source) = open(&source, args.udp_rcvbuf)?;
    // SIGTERM and SIGINT stop the source; the totals so far are still printed.
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(sig, stop.clone())
            .map_err(|e| CliError::Invalid(format!("cannot handle signal {sig}: {e}")))?;
    }
    let result = pipeline::run(&config, input, &stop);
    if args.metrics.is_none() {
        // The default file only serves `wirespeed monitor` while the run lasts.
        let _ = std::fs::remove_file(&config.metrics_path);
    }
    let summary = result.map_err(|e| match e {
        PipelineError::Gpu(e) => CliError::Gpu(e),
        PipelineError::Input(message) => CliError::MalformedInput {
            path: match &source {
                SourceSpec::File(p) | SourceSpec::Pcap(p) => p.clone(),
                other => PathBuf::from(other.to_string()),
            },
            message,
        },
        PipelineError::Metrics(MetricsError::Io(source)) => CliError::Output {
            path: config.metrics_path.clone(),
            source,
        },
        PipelineError::Metrics(e) => CliError::Pipeline(format!("metrics: {e}")),
        PipelineError::Tile(e) => CliError::Pipeline(e.to_string()),
        PipelineError::Ring(e) => CliError::Pipeline(format!("cannot build a link: {e}")),
    })?;
    let report = Report {
        source: &source,
        config: &config,
        summary: &summary,
        metrics_kept: args.metrics.is_some(),
    };
    let text = if args.json {
        format!("{}\n", report.json())
    } else {
        report.table()
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(CliError::Stdout)
}

/// Latency quantiles in microseconds (None without samples).
pub fn latency_us(summary: &Summary, q: f64) -> Option<f64> {
    (!summary.latency.is_empty()).then(|| summary.latency.value_at_quantile(q) as f64 / 1e3)
}

/// Packets read per second of wall-clock time.
pub fn tx_per_sec(summary: &Summary) -> f64 {
    if summary.secs > 0.0 {
        summary.ingested as f64 / summary.secs
    } else {
        0.0
    }
}

/// The totals of a run, as a table or JSON.
struct Report<'a> {
    source: &'a SourceSpec,
    config: &'a Config,
    summary: &'a Summary,
    /// The metrics file was named with --metrics and is kept (else it was removed).
    metrics_kept: bool,
}

impl Report<'_> {
    /// Packets came as fast as the pipeline took them (no --rate, not a UDP socket):
    /// the latency then measures queueing behind the source, not a set load.
    fn unpaced(&self) -> bool {
        self.config.rate.is_none() && !matches!(self.source, SourceSpec::Udp(_))
    }

    fn ended(&self) -> &'static str {
        match self.summary.ended {
            Ended::Drained => "drained",
            Ended::Stopped => "stopped",
        }
    }

    fn json(&self) -> Value {
        let s = self.summary;
        let malformed: Map<String, Value> = s
            .malformed
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        json!({
            "source": self.source.to_string(),
            "mode": self.config.mode.name(),
            "verify_tiles": self.config.verify_tiles,
            "ended": self.ended(),
            "ingested": s.ingested,
            "malformed": malformed,
            "malformed_total": s.malformed.iter().map(|(_, n)| n).sum::<u64>(),
            "bad_signature": s.bad_signature,
            "duplicates": s.duplicates,
            "accepted": s.accepted,
            "accepted_total": s.accepted_total(),
            "shed": s.shed,
            "udp_kernel_drops": s.udp_kernel_drops,
            "secs": s.secs,
            "tx_per_sec": tx_per_sec(s),
            "latency_us": {
                "p50": latency_us(s, 0.5),
                "p99": latency_us(s, 0.99),
                "p999": latency_us(s, 0.999),
            },
            "rate_pps": self.config.rate,
            "latency_is_queueing": self.unpaced(),
            "metrics": self.config.metrics_path.display().to_string(),
            "metrics_kept": self.metrics_kept,
        })
    }

    fn table(&self) -> String {
        let s = self.summary;
        let mut t = Table::new(&[("total", Align::Left), ("value", Align::Right)]);
        let mut row = |k: &str, v: String| t.row(vec![k.to_string(), v]);
        let n = |v: u64| group_digits(v);
        let us = |q: f64| latency_us(s, q).map_or("-".into(), |v| format!("{v:.1} us"));
        row("source", self.source.to_string());
        row("mode", self.config.mode.name().into());
        row("verify tiles", self.config.verify_tiles.to_string());
        row("ended", self.ended().into());
        row("ingested", n(s.ingested));
        row(
            "malformed",
            n(s.malformed.iter().map(|(_, v)| v).sum::<u64>()),
        );
        for (reason, v) in &s.malformed {
            row(&format!("  {reason}"), n(*v));
        }
        row("bad signature", n(s.bad_signature));
        row("duplicate", n(s.duplicates));
        row("accepted", n(s.accepted_total()));
        if s.accepted.len() > 1 {
            for (i, v) in s.accepted.iter().enumerate() {
                row(&format!("  sink{i}"), n(*v));
            }
        }
        row("shed", n(s.shed));
        if let SourceSpec::Udp(_) = self.source {
            row(
                "udp kernel drops",
                s.udp_kernel_drops.map_or("unavailable".into(), n),
            );
        }
        row("elapsed", format!("{:.3} s", s.secs));
        row("rate", format!("{} tx/s", n(tx_per_sec(s).round() as u64)));
        row("latency p50", us(0.5));
        row("latency p99", us(0.99));
        row("latency p99.9", us(0.999));
        let metrics = self.config.metrics_path.display().to_string();
        row(
            "metrics",
            if self.metrics_kept {
                metrics
            } else {
                format!("{metrics} (removed)")
            },
        );
        let mut text = t.render();
        if self.unpaced() {
            text.push_str(
                "latency: ingest to verdict with the source unpaced (no --rate), so it is \
                 mostly queueing behind the source; --rate PPS measures it at a set load\n",
            );
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_parse() {
        assert_eq!(
            parse_source("pcap:/a/b.pcap"),
            Ok(SourceSpec::Pcap("/a/b.pcap".into()))
        );
        assert_eq!(parse_source("file:x"), Ok(SourceSpec::File("x".into())));
        assert_eq!(
            parse_source("udp:127.0.0.1:9000"),
            Ok(SourceSpec::Udp("127.0.0.1:9000".into()))
        );
        assert_eq!(parse_source("gen"), Ok(SourceSpec::Gen(DEFAULT_GEN_N)));
        assert_eq!(parse_source("gen:10"), Ok(SourceSpec::Gen(10)));
        for bad in ["tcp:1", "pcap:", "file", "gen:x", "gen:99999999999", ""] {
            assert!(parse_source(bad).is_err(), "{bad}");
        }
    }
}
