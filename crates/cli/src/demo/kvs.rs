//! Demo section: the Redis-protocol server. Started in this process on a free port,
//! loaded with the built-in load generator (which checks every reply byte for byte),
//! one connection request by request for latency and pipelined connections for
//! throughput, then stopped.

use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use wirespeed_kvs::server::{Server, ServerConfig};
use wirespeed_loadgen::{self as loadgen, KeyDist, LoadReport, LoadSpec, Protocol, ValueSize};

use super::{DemoOptions, Section};
use crate::error::CliError;

/// The key-value section.
pub const SECTION: Section = Section {
    name: "kvs",
    title: "Redis-protocol key-value server (GET 90% / SET 10%, 64-byte values)",
    run,
};

fn run(opts: &DemoOptions, out: &mut dyn Write) -> Result<(), CliError> {
    let scale = if opts.quick { 10 } else { 1 };
    let internal = |e: std::io::Error| CliError::Internal(format!("kvs demo: {e}"));
    let any: SocketAddr = "127.0.0.1:0"
        .parse()
        .map_err(|e| CliError::Internal(format!("{e}")))?;
    let mut server = Server::bind(any, ServerConfig::default())
        .map_err(|e| CliError::Internal(format!("kvs demo: {e}")))?;
    let addr = server.local_addr().map_err(internal)?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let handle = std::thread::spawn(move || server.run(flag));
    let keys = 10_000 / scale as u64;
    let runs = (|| -> std::io::Result<Vec<(&str, LoadReport)>> {
        loadgen::preload(addr, Protocol::Resp, keys, &ValueSize::Fixed(64))?;
        let spec = |connections, pipeline, requests| LoadSpec {
            addr,
            protocol: Protocol::Resp,
            connections,
            threads: 1,
            pipeline,
            requests,
            duration: None,
            rate: None,
            keys,
            key_dist: KeyDist::Uniform,
            value_size: ValueSize::Fixed(64),
            get_ratio: 0.9,
            seed: 1,
            password: None,
            cluster: false,
        };
        Ok(vec![
            (
                "1 connection",
                loadgen::run(&spec(1, 1, 20_000 / scale as u64))?,
            ),
            (
                "8 conns, pipeline 16",
                loadgen::run(&spec(8, 16, 400_000 / scale as u64))?,
            ),
        ])
    })();
    stop.store(true, Ordering::Relaxed);
    let stopped = handle.join();
    let runs = runs.map_err(internal)?;
    match stopped {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(internal(e)),
        Err(_) => {
            return Err(CliError::Internal(
                "kvs demo: the server thread panicked".into(),
            ))
        }
    }
    let w = CliError::Stdout;
    writeln!(
        out,
        "{:<22} {:>9} {:>8} {:>10} {:>8} {:>8}  check",
        "load", "requests", "secs", "per sec", "p50 us", "p99 us"
    )
    .map_err(w)?;
    for (name, r) in &runs {
        if r.mismatches > 0 {
            return Err(CliError::Check(format!(
                "{name}: {} replies differed from the expected bytes",
                r.mismatches
            )));
        }
        writeln!(
            out,
            "{:<22} {:>9} {:>8.3} {:>10.0} {:>8.1} {:>8.1}  every reply as expected",
            name,
            r.requests,
            r.secs,
            r.per_sec(),
            r.us(0.5),
            r.us(0.99)
        )
        .map_err(w)?;
    }
    Ok(())
}
