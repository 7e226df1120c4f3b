//! `wirespeed kvs serve`: the Redis-protocol key-value server.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use clap::{Args, Subcommand};
use std::path::PathBuf;

use wirespeed_kvs::aof::Fsync;
use wirespeed_kvs::cmd::{parse_memory, Eviction};
use wirespeed_kvs::server::{Server, ServerConfig};

use crate::error::CliError;

/// `wirespeed kvs ...`
#[derive(Subcommand, Debug)]
pub enum KvsCommand {
    /// Serve the Redis protocol (RESP2/RESP3) until interrupted
    Serve(ServeArgs),
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
    }
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
