//! A load generator for key-value servers that checks every reply: the Redis protocol
//! (RESP, [`Protocol::Resp`]) or the memcached text protocol ([`Protocol::Memcache`]),
//! closed loop or open loop.
//!
//! # Requests and checks
//!
//! Each request is a GET or a SET (by [`LoadSpec::get_ratio`]) of a key drawn from a key
//! space ([`key_of`]) by a distribution ([`LoadSpec::key_dist`]: uniform, Zipf or a hot
//! set; see [`crate::dist`]). Values are a deterministic function of the key: their size
//! ([`LoadSpec::value_size`]: fixed, a range, or weighted sizes) and their bytes
//! ([`value_of`]), and every SET writes that value, so after [`preload`] the reply to
//! every request is known exactly. Replies are delimited by the protocol's framing alone
//! (a RESP bulk string by its length, a memcached `VALUE` block by its byte count and
//! `END`), then compared byte for byte with the expected reply; any difference is counted
//! ([`LoadReport::mismatches`]) without losing track of the replies after it. The load
//! generator therefore checks the server as it measures it.
//!
//! # Event loops
//!
//! All connections are opened before the run's clock starts, then driven by
//! [`LoadSpec::threads`] event-loop threads (one by default; connection c belongs to loop
//! c mod T), each a mio `Poll` over its non-blocking sockets. A loop writes a connection's
//! requests with one write for all that are ready to go; a write the socket takes only in
//! part keeps the rest and waits for writability. When a socket is readable the loop reads
//! what has arrived (one read, unless it filled the buffer), notes the instant, and frames
//! the replies in it; the bytes of a reply not yet complete wait for the next read. So
//! hundreds of connections cost no more threads than one, and a client pinned to one core
//! adds no scheduling delays of many blocking threads to the latencies it measures. A
//! connection that awaits a reply for 10 seconds without receiving a byte fails the run,
//! and the first failure in any loop stops them all.
//!
//! # Closed loop (the default)
//!
//! Each connection sends a batch of P pipelined requests and, when all P replies are in,
//! the next batch. Latency is per request, from the write of its batch to the arrival of
//! its reply (so with P > 1 a request's latency includes the replies queued before it).
//! The offered load adapts to the server: a slow reply delays the requests behind it,
//! which are then never sent at the moment a real client would have sent them, so these
//! latencies understate those of clients arriving independently.
//!
//! # Open loop ([`LoadSpec::rate`])
//!
//! Requests are sent on a fixed schedule, independent of the replies: at R requests per
//! second in total, request i of connection c (of N) is due at `start + (i·N + c) / R`,
//! so the connections interleave into one uniform stream (the pipeline depth plays no
//! part). A loop follows one timer for all its connections: it visits them in turn in
//! the order of that schedule, sends every request that is due (each on its own
//! connection; several due at once on one connection go in one write), then waits in
//! `poll` for the next due time, reading the replies that arrive meanwhile. mio's poll
//! timeout counts whole milliseconds (it rounds up), and a sleeping thread wakes later
//! than asked (timer slack and scheduling, tens of microseconds to over a hundred on a
//! virtual machine); so the loop sleeps only whole milliseconds that end at least 50 µs
//! plus its recent wake-up lateness (a moving average) before the due time, and polls
//! without sleeping for the rest. A request therefore never leaves before its due time
//! and, unless the loop is busy, only a few microseconds after it; above about a
//! thousand requests per second per loop the loop never sleeps, and its thread takes a
//! whole core. Latency is taken from the request's *due* time to the arrival of its
//! reply, so a request that left late (the loop fell behind, or the socket was full) is
//! charged for all of its delay, and a stalled server for every request it delayed (no
//! coordinated omission). At most [`MAX_OUTSTANDING`] requests may await their replies
//! on one connection; past that the run stops with an [`Overloaded`] error: the server
//! cannot keep up with the offered rate. The achieved rate ([`LoadReport::per_sec`]) is
//! the replies received over the time from the start to the last reply.
//!
//! # Cluster mode ([`LoadSpec::cluster`])
//!
//! Against a Redis Cluster (RESP only), [`LoadSpec::addr`] is one node, the seed. Before
//! the run the load generator reads the slot map from it (`CLUSTER SLOTS`: which primary
//! serves each of the 16384 slots), and each connection opens one socket to every
//! primary. Each request goes to the primary serving its key's slot (CRC16/XMODEM of the
//! key, or of its `{hash tag}`, mod 16384: [`wirespeed_util::keyslot::key_slot`], the
//! server's own function). A `-MOVED slot host:port` reply is no reply: the slot now
//! belongs to that node in the loop's map (read again from that node, at most every
//! 100 ms), and the request is sent there, opening a socket to the node if it is new;
//! after `-ASK slot host:port` (a slot being migrated) the request goes once to that
//! node behind `ASKING`, and the map is unchanged. A redirected request keeps its
//! start time, so its latency includes the detour; [`LoadReport::moved`] and
//! [`LoadReport::asks`] count the redirections, and a request redirected more than 16
//! times fails the run. In the closed loop a batch of P requests is spread over the
//! primaries its keys map to, and the next batch waits for all of its replies;
//! [`preload_cluster`] writes every key on its primary first.
//!
//! # Length of a run
//!
//! [`LoadSpec::requests`] in total (spread evenly over the connections, and in the open
//! loop over the schedule), or, when [`LoadSpec::duration`] is given, for that long: the
//! closed loop starts no batch after it, the open loop schedules no request after it
//! (the replies still due are awaited).
//!
//! # Server CPU time
//!
//! [`process_cpu_secs`] (from [`wirespeed_util::proc`]) reads a process's user and
//! system time (fields 14 and 15 of
//! `/proc/PID/stat`, Linux only) in clock ticks, converted to seconds by the kernel's
//! tick rate ([`clock_ticks_per_sec`]: `AT_CLKTCK` of the auxiliary vector, the value
//! `sysconf(_SC_CLK_TCK)` returns; 100, the Linux value on every common architecture,
//! where it cannot be read). Read before and after a run, it gives the server's CPU
//! seconds for that run, and per million requests a measure of efficiency independent
//! of the number of cores the server used.
//!
//! # Modules
//!
//! - [`dist`]: the key distributions (uniform, Zipf, hot set) and value sizes (fixed, a
//!   range, weighted).
//! - `cluster` (private): the slot map, redirections, the cluster preload.
//! - [`plot`]: latency-against-load charts as hand-written SVG (used by `kvs bench
//!   --sweep` and `pipeline sweep`).
//! - `wire` (private): the requests, the reply each must get, reply framing, connecting
//!   and `AUTH`.
//! - `driver` (private): the closed- and open-loop connection loops that [`run`] starts
//!   on its threads.

#![cfg_attr(not(test), warn(missing_docs))]

use std::fmt;
use std::io::{self, Write};
use std::net::SocketAddr;
use std::str::FromStr;
use std::sync::atomic::AtomicBool;
use std::sync::{Barrier, Mutex, OnceLock};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

mod cluster;
pub mod dist;
mod driver;
pub mod plot;
mod wire;

use crate::cluster::SlotMap;
use crate::dist::{DistError, KeySampler};
pub use crate::dist::{KeyDist, ValueSize};
use crate::driver::{drive, share, Conn, Shared};
use crate::wire::{authenticate, connect, push_reply, push_request, read_reply};
pub use crate::wire::{key_of, value_of};
pub use wirespeed_util::proc::{
    clock_ticks_per_sec, parse_proc_stat, process_cpu_secs, CpuError, CpuTicks,
};

/// Most requests one open-loop connection may have awaiting replies (see the module docs).
pub const MAX_OUTSTANDING: u64 = 100_000;

/// Cap on one sample of a loop's wake-up lateness (a preempted thread is not the norm).
const MAX_LATENESS: Duration = Duration::from_millis(2);

/// The open loop's first guess of its wake-up lateness, before it has measured any.
const FIRST_LATENESS: Duration = Duration::from_micros(100);

/// The stretch before a due time that an open loop polls without sleeping, beyond its
/// wake-up lateness.
const SPIN: Duration = Duration::from_micros(50);

/// How long a connection may await a reply without receiving a byte before the run fails.
const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// Longest a loop waits in `poll` before it looks at the other loops' failures and at
/// [`IO_TIMEOUT`].
const CHECK_EVERY: Duration = Duration::from_millis(50);

/// Bytes one read may take.
const READ_BUF: usize = 1 << 16;

/// Longest reply (or reply line) accepted, in bytes.
const MAX_REPLY: usize = 64 << 20;

/// The wire protocol spoken to the server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Protocol {
    /// The Redis protocol: `GET key` answered by a bulk string, `SET key value` by `+OK`.
    #[default]
    Resp,
    /// The memcached text protocol: `get key` answered by `VALUE key 0 len` with the data
    /// and `END`, `set key 0 0 len` with the data answered by `STORED`.
    Memcache,
}

impl Protocol {
    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Resp => "resp",
            Protocol::Memcache => "memcache",
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Protocol {
    type Err = String;
    fn from_str(s: &str) -> Result<Protocol, String> {
        match s.to_ascii_lowercase().as_str() {
            "resp" | "redis" => Ok(Protocol::Resp),
            "memcache" | "memcached" => Ok(Protocol::Memcache),
            _ => Err(format!("protocol must be resp or memcache, not '{s}'")),
        }
    }
}

/// What to send.
#[derive(Clone, Debug)]
pub struct LoadSpec {
    /// Server address.
    pub addr: SocketAddr,
    /// Wire protocol.
    pub protocol: Protocol,
    /// Concurrent connections.
    pub connections: usize,
    /// Event-loop threads the connections are split across (at least 1, at most
    /// `connections`).
    pub threads: usize,
    /// Requests per batch on one connection (closed loop only).
    pub pipeline: usize,
    /// Requests in total (unless `duration` is given).
    pub requests: u64,
    /// Run for this long instead of `requests`.
    pub duration: Option<Duration>,
    /// Open loop at this many requests per second in total; closed loop when `None`.
    pub rate: Option<f64>,
    /// Keys `key:000000000000` .. (16-byte keys).
    pub keys: u64,
    /// How the requests pick among the keys.
    pub key_dist: KeyDist,
    /// The size of each key's value in bytes, a function of the key.
    pub value_size: ValueSize,
    /// Share of GETs (the rest are SETs).
    pub get_ratio: f64,
    /// Seed of the request mix.
    pub seed: u64,
    /// RESP only: each connection sends `AUTH` with this password first (before the
    /// run's clock starts) and fails the run unless it is accepted.
    pub password: Option<String>,
    /// RESP only: `addr` is a node of a Redis Cluster; see "Cluster mode" in the crate
    /// docs.
    pub cluster: bool,
}

/// What came back.
#[derive(Debug)]
pub struct LoadReport {
    /// Requests completed.
    pub requests: u64,
    /// Wall-clock seconds, from the start to the last reply.
    pub secs: f64,
    /// Per-request latency, nanoseconds (open loop: from the request's due time).
    pub latency: Histogram<u64>,
    /// Replies that differed from the expected bytes.
    pub mismatches: u64,
    /// Cluster mode: `-MOVED` replies followed (each request sent again to the node
    /// named).
    pub moved: u64,
    /// Cluster mode: `-ASK` replies followed (`ASKING` and the request sent to the node
    /// named).
    pub asks: u64,
}

impl LoadReport {
    /// Requests per second (in the open loop: the achieved rate).
    pub fn per_sec(&self) -> f64 {
        self.requests as f64 / self.secs.max(1e-9)
    }

    /// Latency at quantile q (0..=1), microseconds.
    pub fn us(&self, q: f64) -> f64 {
        self.latency.value_at_quantile(q) as f64 / 1e3
    }
}

/// The open-loop run stopped: more than [`MAX_OUTSTANDING`] requests awaited replies on
/// one connection. Carried inside the `io::Error` of [`run`]; see [`overloaded`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Overloaded {
    /// The offered rate, requests per second in total.
    pub rate: f64,
    /// Requests awaiting replies on the connection that gave up.
    pub outstanding: u64,
}

impl fmt::Display for Overloaded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the server cannot keep up with {} requests/s: {} requests awaiting replies on one connection",
            self.rate, self.outstanding
        )
    }
}

impl std::error::Error for Overloaded {}

/// The [`Overloaded`] inside an error of [`run`], if that is why it failed.
pub fn overloaded(e: &io::Error) -> Option<&Overloaded> {
    e.get_ref()?.downcast_ref::<Overloaded>()
}

/// A distribution refused, as the `io::Error` of [`preload`] and [`run`].
fn invalid(e: DistError) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, e)
}

/// SETs every key to its value (of the size `value_size` gives it), pipelined 256 deep
/// on one (blocking) connection. Fails on sizes that [`ValueSize::check`] refuses.
pub fn preload(
    addr: SocketAddr,
    protocol: Protocol,
    keys: u64,
    value_size: &ValueSize,
) -> io::Result<()> {
    preload_with(addr, protocol, keys, value_size, None)
}

/// [`preload`] on a connection that first authenticates with `password` (RESP).
pub fn preload_with(
    addr: SocketAddr,
    protocol: Protocol,
    keys: u64,
    value_size: &ValueSize,
    password: Option<&str>,
) -> io::Result<()> {
    value_size.check().map_err(invalid)?;
    let mut s = std::net::TcpStream::connect(addr)?;
    s.set_nodelay(true)?;
    // A server that stops answering fails the preload instead of hanging it.
    s.set_read_timeout(Some(IO_TIMEOUT))?;
    s.set_write_timeout(Some(IO_TIMEOUT))?;
    if let Some(pw) = password {
        authenticate(&mut s, pw)?;
    }
    let mut out = Vec::new();
    let mut expected = Vec::new();
    push_reply(protocol, &mut expected, 0, false, value_size.of(0));
    let mut pending = Vec::new();
    let mut i = 0;
    while i < keys {
        let n = (keys - i).min(256);
        out.clear();
        for k in i..i + n {
            push_request(protocol, &mut out, k, false, value_size.of(k));
        }
        s.write_all(&out)?;
        for _ in 0..n {
            let got = read_reply(protocol, &mut s, &mut pending)?;
            if got != expected {
                return Err(io::Error::other(format!(
                    "preload: a SET was answered {:?}, not {:?}",
                    String::from_utf8_lossy(&got).trim_end(),
                    String::from_utf8_lossy(&expected).trim_end()
                )));
            }
        }
        i += n;
    }
    Ok(())
}

/// [`preload_with`] on a Redis Cluster that `seed` is a node of (RESP): each key SET on
/// the node serving its slot, as `CLUSTER SLOTS` on `seed` tells, following `-MOVED` and
/// `-ASK`.
pub fn preload_cluster(
    seed: SocketAddr,
    keys: u64,
    value_size: &ValueSize,
    password: Option<&str>,
) -> io::Result<()> {
    value_size.check().map_err(invalid)?;
    cluster::preload(seed, keys, value_size, password)
}

/// Runs the load; every reply is checked (see the module docs).
///
/// Fails on an I/O error, a rate that is not positive and finite, a key distribution or
/// value sizes that [`KeyDist::check`] or [`ValueSize::check`] refuse (these three
/// with [`io::ErrorKind::InvalidInput`]), a connection that awaits a reply for 10
/// seconds, or (open loop) a server that falls [`MAX_OUTSTANDING`] requests behind
/// ([`overloaded`] tells).
pub fn run(spec: &LoadSpec) -> io::Result<LoadReport> {
    let rate = match spec.rate {
        None => None,
        Some(rate) if rate.is_finite() && rate > 0.0 => Some(rate),
        Some(rate) => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("the rate must be a positive number of requests per second, not {rate}"),
            ))
        }
    };
    let sampler = KeySampler::new(spec.key_dist, spec.keys).map_err(invalid)?;
    spec.value_size.check().map_err(invalid)?;
    if spec.cluster && spec.protocol != Protocol::Resp {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "cluster mode needs the RESP protocol",
        ));
    }
    let password = spec.password.as_deref();
    let map = match spec.cluster {
        true => Some(SlotMap::fetch(spec.addr, password)?),
        false => None,
    };
    let conns = spec.connections.max(1);
    let threads = spec.threads.clamp(1, conns);
    // Connect first, so that connection setup does not eat into the run.
    let mut loops: Vec<Vec<Conn>> = (0..threads).map(|_| Vec::new()).collect();
    for c in 0..conns {
        let quota = match (rate, spec.duration) {
            (None, None) => share(spec.requests, conns as u64, c as u64),
            _ => u64::MAX,
        };
        let links = match &map {
            None => vec![Some(connect(spec.addr, password)?)],
            Some(m) => {
                let mut links: Vec<_> = m.nodes.iter().map(|_| None).collect();
                for n in m.primaries() {
                    links[n] = Some(connect(m.nodes[n], password)?);
                }
                links
            }
        };
        let conn = Conn::new(links, spec, sampler, c as u64, quota);
        loops[c % threads].push(conn);
    }
    let shared = Shared {
        start: OnceLock::new(),
        go: Barrier::new(threads + 1),
        stop: AtomicBool::new(false),
        first: Mutex::new(None),
    };
    let tallies = std::thread::scope(|scope| {
        let handles: Vec<_> = loops
            .into_iter()
            .map(|conns| {
                let (shared, map) = (&shared, map.clone());
                scope.spawn(move || drive(spec, conns, rate, shared, map))
            })
            .collect();
        // Every loop is ready: the run starts now.
        shared.go.wait();
        let _ = shared.start.set(Instant::now());
        handles
            .into_iter()
            .map(|h| h.join().ok().flatten())
            .collect::<Vec<_>>()
    });
    if let Some(e) = shared.first.lock().ok().and_then(|mut f| f.take()) {
        return Err(e);
    }
    let start = shared
        .start
        .get()
        .copied()
        .ok_or_else(|| io::Error::other("the run never started"))?;
    let mut latency = new_histogram()?;
    let (mut requests, mut mismatches, mut last) = (0, 0, start);
    let (mut moved, mut asks) = (0, 0);
    for t in tallies {
        let t = t.ok_or_else(|| io::Error::other("a load thread panicked"))?;
        requests += t.requests;
        mismatches += t.mismatches;
        moved += t.moved;
        asks += t.asks;
        last = last.max(t.end.unwrap_or(start));
        latency
            .add(&t.latency)
            .map_err(|e| io::Error::other(format!("histogram: {e}")))?;
    }
    let secs = last.saturating_duration_since(start).as_secs_f64();
    Ok(LoadReport {
        requests,
        secs,
        latency,
        mismatches,
        moved,
        asks,
    })
}

pub(crate) fn new_histogram() -> io::Result<Histogram<u64>> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3)
        .map_err(|e| io::Error::other(format!("histogram: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocols_parse_by_name() {
        assert_eq!("resp".parse(), Ok(Protocol::Resp));
        assert_eq!("Memcache".parse(), Ok(Protocol::Memcache));
        assert!("http".parse::<Protocol>().is_err());
        assert_eq!(Protocol::Memcache.to_string(), "memcache");
    }
}
