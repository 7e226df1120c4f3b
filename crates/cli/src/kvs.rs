//! `wirespeed kvs serve`: the Redis-protocol key-value server.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use clap::{Args, Subcommand};
use std::path::PathBuf;

use wirespeed_kvs::aof::Fsync;
use wirespeed_kvs::cmd::{parse_memory, Eviction};
use wirespeed_kvs::loadgen::{self, LoadSpec};
use wirespeed_kvs::server::{Server, ServerConfig};

use crate::error::CliError;

/// `wirespeed kvs ...`
#[derive(Subcommand, Debug)]
pub enum KvsCommand {
    /// Serve the Redis protocol (RESP2/RESP3) until interrupted
    Serve(ServeArgs),
    /// Closed-loop load against a RESP server (wirespeed, Redis, ...), every reply checked
    Bench(BenchArgs),
}

/// Arguments of `wirespeed kvs bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Server address
    #[arg(long, default_value = "127.0.0.1:6379")]
    pub addr: SocketAddr,

    /// Concurrent connections
    #[arg(long, default_value_t = 50)]
    pub connections: usize,

    /// Requests per batch on a connection
    #[arg(long, default_value_t = 1)]
    pub pipeline: usize,

    /// Requests in total
    #[arg(long, default_value_t = 200_000)]
    pub requests: u64,

    /// Key space (16-byte keys)
    #[arg(long, default_value_t = 10_000)]
    pub keys: u64,

    /// Value size in bytes
    #[arg(long, default_value_t = 64)]
    pub value_size: usize,

    /// Share of GETs (the rest are SETs)
    #[arg(long, default_value_t = 0.9)]
    pub get_ratio: f64,

    /// Print {requests, secs, per_sec, p50_us, p90_us, p99_us, p999_us, max_us, mismatches}
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `wirespeed kvs serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// TCP port (0 picks a free one)
    #[arg(long, default_value_t = 6379)]
    pub port: u16,

    /// Address to listen on (loopback unless told otherwise)
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: IpAddr,

    /// Clients must AUTH with this password first
    #[arg(long)]
    pub requirepass: Option<String>,

    /// Longest bulk string accepted, in bytes (proto-max-bulk-len)
    #[arg(long, default_value_t = 512 * 1024 * 1024)]
    pub max_bulk: usize,

    /// Append-only log: replayed at start, every write appended (none: memory only)
    #[arg(long, value_name = "FILE")]
    pub aof: Option<PathBuf>,

    /// When the log reaches the disk: always (before the reply), everysec, no
    #[arg(long, default_value = "everysec")]
    pub appendfsync: Fsync,

    /// Memory limit of the dataset (e.g. 100mb, 2gb; 0: none), as INFO memory reports it
    #[arg(long, default_value = "0", value_parser = memory_size)]
    pub maxmemory: usize,

    /// At the limit: noeviction (writes get an OOM error) or allkeys-lru
    #[arg(long, default_value = "noeviction")]
    pub maxmemory_policy: Eviction,
}

fn memory_size(s: &str) -> Result<usize, String> {
    parse_memory(s).ok_or_else(|| format!("'{s}' is not a memory size (e.g. 100mb, 2gb)"))
}

/// Runs a `kvs` subcommand.
pub fn run(cmd: &KvsCommand) -> Result<(), CliError> {
    match cmd {
        KvsCommand::Serve(a) => serve(a),
        KvsCommand::Bench(a) => bench(a),
    }
}

fn bench(a: &BenchArgs) -> Result<(), CliError> {
    if !(0.0..=1.0).contains(&a.get_ratio) {
        return Err(CliError::Invalid(
            "--get-ratio must be between 0 and 1".into(),
        ));
    }
    if a.value_size > 1 << 20 || a.connections > 10_000 || a.pipeline > 10_000 {
        return Err(CliError::Invalid(
            "--value-size at most 1 MiB, --connections and --pipeline at most 10,000".into(),
        ));
    }
    let io = |e: std::io::Error| CliError::Invalid(format!("{}: {e}", a.addr));
    loadgen::preload(a.addr, a.keys, a.value_size).map_err(io)?;
    let spec = LoadSpec {
        addr: a.addr,
        connections: a.connections,
        pipeline: a.pipeline,
        requests: a.requests,
        keys: a.keys,
        value_size: a.value_size,
        get_ratio: a.get_ratio,
        seed: 1,
    };
    let r = loadgen::run(&spec).map_err(io)?;
    if a.json {
        println!(
            "{}",
            serde_json::json!({
                "requests": r.requests, "secs": r.secs, "per_sec": r.per_sec(),
                "p50_us": r.us(0.5), "p90_us": r.us(0.9), "p99_us": r.us(0.99),
                "p999_us": r.us(0.999), "max_us": r.us(1.0), "mismatches": r.mismatches,
            })
        );
    } else {
        println!(
            "requests={} secs={:.3} per_sec={:.0} p50_us={:.1} p90_us={:.1} p99_us={:.1} p999_us={:.1} max_us={:.1} mismatches={}",
            r.requests, r.secs, r.per_sec(), r.us(0.5), r.us(0.9), r.us(0.99), r.us(0.999), r.us(1.0), r.mismatches
        );
    }
    if r.mismatches > 0 {
        return Err(CliError::Check(format!(
            "{} replies differed from the expected bytes",
            r.mismatches
        )));
    }
    Ok(())
}

fn serve(a: &ServeArgs) -> Result<(), CliError> {
    let mut config = ServerConfig::default();
    config.cmd.requirepass = a.requirepass.as_ref().map(|p| p.as_bytes().to_vec());
    config.limits.max_bulk = a.max_bulk;
    config.aof = a.aof.clone().map(|p| (p, a.appendfsync));
    config.cmd.maxmemory = a.maxmemory;
    config.cmd.policy = a.maxmemory_policy;
    let addr = SocketAddr::new(a.bind, a.port);
    let mut server = Server::bind(addr, config)
        .map_err(|e| CliError::Invalid(format!("cannot listen on {addr}: {e}")))?;
    let local = server
        .local_addr()
        .map_err(|e| CliError::Invalid(format!("listening address: {e}")))?;
    if let Some(path) = &a.aof {
        eprintln!(
            "kvs: {}: {} records replayed, {} keys",
            path.display(),
            server.load_report().records,
            server.keys()
        );
    }
    eprintln!("kvs: listening on {local}");
    // SIGTERM and SIGINT stop the loop, which then syncs the log.
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(sig, stop.clone())
            .map_err(|e| CliError::Invalid(format!("cannot handle signal {sig}: {e}")))?;
    }
    server
        .run(stop)
        .map_err(|e| CliError::Invalid(format!("server stopped: {e}")))?;
    eprintln!("kvs: stopped");
    Ok(())
}
