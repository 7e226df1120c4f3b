//! A closed-loop RESP load generator: N connections, each sending batches of P
//! pipelined requests (GET or SET by a given ratio over a key space) and waiting for
//! all P replies before the next batch.
//!
//! Values are a deterministic function of the key ([`value_of`]), and every SET writes
//! that value, so after [`preload`] every GET reply is known exactly: each reply is
//! compared byte for byte and any difference is counted ([`LoadReport::mismatches`]).
//! The load generator therefore checks the server as it measures it.
//!
//! Latency is per request, from the write of its batch to the arrival of its reply
//! (so with P > 1 a request's latency includes the replies queued before it); recorded
//! in an HDR histogram in nanoseconds. Closed loop: the offered load adapts to the
//! server, so these latencies are not those of an open-loop client at a fixed rate.

use std::io::{self, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Instant;

use hdrhistogram::Histogram;

/// What to send.
#[derive(Clone, Debug)]
pub struct LoadSpec {
    /// Server address.
    pub addr: SocketAddr,
    /// Concurrent connections (one thread each).
    pub connections: usize,
    /// Requests per batch on one connection.
    pub pipeline: usize,
    /// Requests in total.
    pub requests: u64,
    /// Keys `key:000000000000` .. (16-byte keys).
    pub keys: u64,
    /// Value size in bytes.
    pub value_size: usize,
    /// Share of GETs (the rest are SETs).
    pub get_ratio: f64,
    /// Seed of the request mix.
    pub seed: u64,
}

/// What came back.
#[derive(Debug)]
pub struct LoadReport {
    /// Requests completed.
    pub requests: u64,
    /// Wall-clock seconds.
    pub secs: f64,
    /// Per-request latency, nanoseconds.
    pub latency: Histogram<u64>,
    /// Replies that differed from the expected bytes.
    pub mismatches: u64,
}

impl LoadReport {
    /// Requests per second.
    pub fn per_sec(&self) -> f64 {
        self.requests as f64 / self.secs.max(1e-9)
    }

    /// Latency at quantile q (0..=1), microseconds.
    pub fn us(&self, q: f64) -> f64 {
        self.latency.value_at_quantile(q) as f64 / 1e3
    }
}

/// The 16-byte key of index `i`.
pub fn key_of(i: u64) -> String {
    format!("key:{:012}", i % 1_000_000_000_000)
}

/// The value every SET of key `i` writes: `value_size` bytes derived from `i`.
pub fn value_of(i: u64, value_size: usize) -> Vec<u8> {
    let pattern = format!("{i:x}.");
    pattern.bytes().cycle().take(value_size).collect()
}

fn push_command(out: &mut Vec<u8>, parts: &[&[u8]]) {
    out.extend_from_slice(format!("*{}\r\n", parts.len()).as_bytes());
    for p in parts {
        out.extend_from_slice(format!("${}\r\n", p.len()).as_bytes());
        out.extend_from_slice(p);
        out.extend_from_slice(b"\r\n");
    }
}

fn expected_get(value: &[u8]) -> Vec<u8> {
    let mut r = format!("${}\r\n", value.len()).into_bytes();
    r.extend_from_slice(value);
    r.extend_from_slice(b"\r\n");
    r
}

/// SETs every key to its value, pipelined 256 deep on one connection.
pub fn preload(addr: SocketAddr, keys: u64, value_size: usize) -> io::Result<()> {
    let mut s = TcpStream::connect(addr)?;
    s.set_nodelay(true)?;
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))?;
    let mut r = BufReader::new(s.try_clone()?);
    let mut reply = [0u8; 5];
    let mut i = 0;
    while i < keys {
        let n = (keys - i).min(256);
        let mut out = Vec::new();
        for k in i..i + n {
            push_command(
                &mut out,
                &[b"SET", key_of(k).as_bytes(), &value_of(k, value_size)],
            );
        }
        s.write_all(&out)?;
        for _ in 0..n {
            r.read_exact(&mut reply)?;
            if &reply != b"+OK\r\n" {
                return Err(io::Error::other("preload: SET was not answered +OK"));
            }
        }
        i += n;
    }
    Ok(())
}

/// Runs the load; every reply is checked (see the module docs).
pub fn run(spec: &LoadSpec) -> io::Result<LoadReport> {
    let conns = spec.connections.max(1);
    let pipeline = spec.pipeline.max(1);
    let per_conn = spec.requests.div_ceil(conns as u64);
    let start = Instant::now();
    let results: Vec<io::Result<(u64, Histogram<u64>, u64)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..conns)
            .map(|c| {
                let spec = spec.clone();
                scope.spawn(move || drive(&spec, c as u64, per_conn, pipeline))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(io::Error::other("a load thread panicked")))
            })
            .collect()
    });
    let secs = start.elapsed().as_secs_f64();
    let mut latency = new_histogram()?;
    let (mut requests, mut mismatches) = (0, 0);
    for r in results {
        let (n, h, m) = r?;
        requests += n;
        mismatches += m;
        latency
            .add(&h)
            .map_err(|e| io::Error::other(format!("histogram: {e}")))?;
    }
    Ok(LoadReport {
        requests,
        secs,
        latency,
        mismatches,
    })
}

fn new_histogram() -> io::Result<Histogram<u64>> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3)
        .map_err(|e| io::Error::other(format!("histogram: {e}")))
}

/// One connection's share: (requests, latencies, mismatches).
fn drive(
    spec: &LoadSpec,
    conn: u64,
    count: u64,
    pipeline: usize,
) -> io::Result<(u64, Histogram<u64>, u64)> {
    let mut s = TcpStream::connect(spec.addr)?;
    s.set_nodelay(true)?;
    // A reply of an unexpected length would leave a read waiting: time out instead.
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))?;
    let mut r = BufReader::with_capacity(1 << 16, s.try_clone()?);
    let mut hist = new_histogram()?;
    let mut rng = spec.seed ^ (conn + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let (mut done, mut mismatches) = (0u64, 0u64);
    let mut out = Vec::new();
    let mut expected: Vec<Vec<u8>> = Vec::with_capacity(pipeline);
    let mut got = Vec::new();
    while done < count {
        let n = (count - done).min(pipeline as u64) as usize;
        out.clear();
        expected.clear();
        for _ in 0..n {
            let k = next() % spec.keys.max(1);
            let value = value_of(k, spec.value_size);
            let is_get = (next() % 1_000_000) as f64 / 1e6 < spec.get_ratio;
            if is_get {
                push_command(&mut out, &[b"GET", key_of(k).as_bytes()]);
                expected.push(expected_get(&value));
            } else {
                push_command(&mut out, &[b"SET", key_of(k).as_bytes(), &value]);
                expected.push(b"+OK\r\n".to_vec());
            }
        }
        let t = Instant::now();
        s.write_all(&out)?;
        for e in &expected {
            got.resize(e.len(), 0);
            r.read_exact(&mut got)?;
            let ns = t.elapsed().as_nanos() as u64;
            hist.record(ns.max(1))
                .map_err(|e| io::Error::other(format!("histogram: {e}")))?;
            if got != *e {
                mismatches += 1;
            }
        }
        done += n as u64;
    }
    Ok((done, hist, mismatches))
}
