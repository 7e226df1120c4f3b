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
//! - [`plot`]: latency-against-load charts as hand-written SVG (used by `kvs bench
//!   --sweep` and `pipeline sweep`).

#![cfg_attr(not(test), warn(missing_docs))]

use std::collections::VecDeque;
use std::fmt;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, Mutex, OnceLock};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

pub mod dist;
pub mod plot;

use crate::dist::{DistError, KeySampler, XorShift64};
pub use crate::dist::{KeyDist, ValueSize};
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

/// Appends the 16-byte key of index `i`.
fn push_key(out: &mut Vec<u8>, i: u64) {
    let mut key = *b"key:000000000000";
    let mut n = i % 1_000_000_000_000;
    for d in key[4..].iter_mut().rev() {
        *d = b'0' + (n % 10) as u8;
        n /= 10;
    }
    out.extend_from_slice(&key);
}

/// The 16-byte key of index `i`.
pub fn key_of(i: u64) -> String {
    let mut key = Vec::with_capacity(16);
    push_key(&mut key, i);
    key.into_iter().map(char::from).collect()
}

/// Appends the value of key `i`: `i` in hex and a dot, repeated to `value_size` bytes.
fn push_value(out: &mut Vec<u8>, i: u64, value_size: usize) {
    let mut pattern = [0u8; 17];
    let digits = ((u64::BITS - i.leading_zeros()).div_ceil(4) as usize).max(1);
    for (j, d) in pattern[..digits].iter_mut().enumerate() {
        *d = b"0123456789abcdef"[((i >> (4 * (digits - 1 - j))) & 15) as usize];
    }
    pattern[digits] = b'.';
    let pattern = &pattern[..=digits];
    let mut left = value_size;
    while left >= pattern.len() {
        out.extend_from_slice(pattern);
        left -= pattern.len();
    }
    out.extend_from_slice(&pattern[..left]);
}

/// The value every SET of key `i` writes: `value_size` bytes derived from `i` (with a
/// [`ValueSize`] `sizes`, `value_of(i, sizes.of(i))`).
pub fn value_of(i: u64, value_size: usize) -> Vec<u8> {
    let mut value = Vec::with_capacity(value_size);
    push_value(&mut value, i, value_size);
    value
}

/// Appends `n` in decimal.
fn push_decimal(out: &mut Vec<u8>, mut n: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// Appends the request for key `k` (a GET, or a SET of its value) to `out`.
fn push_request(protocol: Protocol, out: &mut Vec<u8>, k: u64, get: bool, value_size: usize) {
    match (protocol, get) {
        (Protocol::Resp, true) => {
            out.extend_from_slice(b"*2\r\n$3\r\nGET\r\n$16\r\n");
            push_key(out, k);
            out.extend_from_slice(b"\r\n");
        }
        (Protocol::Resp, false) => {
            out.extend_from_slice(b"*3\r\n$3\r\nSET\r\n$16\r\n");
            push_key(out, k);
            out.extend_from_slice(b"\r\n$");
            push_decimal(out, value_size);
            out.extend_from_slice(b"\r\n");
            push_value(out, k, value_size);
            out.extend_from_slice(b"\r\n");
        }
        (Protocol::Memcache, true) => {
            out.extend_from_slice(b"get ");
            push_key(out, k);
            out.extend_from_slice(b"\r\n");
        }
        (Protocol::Memcache, false) => {
            out.extend_from_slice(b"set ");
            push_key(out, k);
            out.extend_from_slice(b" 0 0 ");
            push_decimal(out, value_size);
            out.extend_from_slice(b"\r\n");
            push_value(out, k, value_size);
            out.extend_from_slice(b"\r\n");
        }
    }
}

/// Appends the exact reply expected to the request of [`push_request`].
fn push_reply(protocol: Protocol, out: &mut Vec<u8>, k: u64, get: bool, value_size: usize) {
    match (protocol, get) {
        (Protocol::Resp, true) => {
            out.push(b'$');
            push_decimal(out, value_size);
            out.extend_from_slice(b"\r\n");
            push_value(out, k, value_size);
            out.extend_from_slice(b"\r\n");
        }
        (Protocol::Resp, false) => out.extend_from_slice(b"+OK\r\n"),
        (Protocol::Memcache, true) => {
            out.extend_from_slice(b"VALUE ");
            push_key(out, k);
            out.extend_from_slice(b" 0 ");
            push_decimal(out, value_size);
            out.extend_from_slice(b"\r\n");
            push_value(out, k, value_size);
            out.extend_from_slice(b"\r\nEND\r\n");
        }
        (Protocol::Memcache, false) => out.extend_from_slice(b"STORED\r\n"),
    }
}

fn bad_reply(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("reply: {what}"))
}

fn closed_by_server() -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "the server closed the connection",
    )
}

/// The end (just past its `\n`) of the line that starts at `at`; `None` while it is
/// incomplete.
fn line_end(buf: &[u8], at: usize) -> io::Result<Option<usize>> {
    match buf[at..].iter().position(|&b| b == b'\n') {
        Some(i) if i < MAX_REPLY => Ok(Some(at + i + 1)),
        None if buf.len() - at < MAX_REPLY => Ok(None),
        _ => Err(bad_reply("a line longer than 64 MiB")),
    }
}

/// The end of a block of `n` bytes (and its `\r\n`) that starts at `at`; `None` while it
/// is incomplete.
fn block_end(buf: &[u8], at: usize, n: usize) -> io::Result<Option<usize>> {
    if n > MAX_REPLY {
        return Err(bad_reply("longer than 64 MiB"));
    }
    let end = at + n + 2;
    Ok((buf.len() >= end).then_some(end))
}

/// The number in a line such as `$12\r\n` (after its type byte).
fn line_number(line: &[u8]) -> io::Result<i64> {
    std::str::from_utf8(line)
        .ok()
        .and_then(|t| t.trim_end().parse().ok())
        .ok_or_else(|| bad_reply("a malformed length"))
}

/// The length of the whole reply at the start of `buf`, delimited by the protocol's
/// framing only (its content is compared afterwards); `None` while it is incomplete.
fn frame(protocol: Protocol, buf: &[u8]) -> io::Result<Option<usize>> {
    match protocol {
        Protocol::Resp => frame_resp(buf, 0, 0),
        Protocol::Memcache => frame_memcache(buf),
    }
}

/// The end of the RESP value that starts at `at`.
fn frame_resp(buf: &[u8], at: usize, depth: usize) -> io::Result<Option<usize>> {
    if depth > 16 {
        return Err(bad_reply("nested too deep"));
    }
    let Some(end) = line_end(buf, at)? else {
        return Ok(None);
    };
    let (&kind, rest) = buf[at..end]
        .split_first()
        .ok_or_else(|| bad_reply("empty"))?;
    match kind {
        // Bulk string, blob error, verbatim string: a length, then that many bytes.
        b'$' | b'!' | b'=' => match line_number(rest)? {
            n if n >= 0 => block_end(buf, end, n as usize),
            _ => Ok(Some(end)),
        },
        // Array, set, push; map and attribute (pairs).
        b'*' | b'~' | b'>' | b'%' | b'|' => {
            let n = line_number(rest)?;
            let per = if matches!(kind, b'%' | b'|') { 2 } else { 1 };
            let mut pos = end;
            for _ in 0..n.max(0).saturating_mul(per) {
                match frame_resp(buf, pos, depth + 1)? {
                    Some(e) => pos = e,
                    None => return Ok(None),
                }
            }
            Ok(Some(pos))
        }
        // Everything else is one line.
        _ => Ok(Some(end)),
    }
}

fn frame_memcache(buf: &[u8]) -> io::Result<Option<usize>> {
    let mut pos = 0;
    loop {
        let Some(end) = line_end(buf, pos)? else {
            return Ok(None);
        };
        let Some(rest) = buf[pos..end].strip_prefix(b"VALUE ") else {
            // END, STORED, ERROR, CLIENT_ERROR ..., SERVER_ERROR ...: one line.
            return Ok(Some(end));
        };
        // VALUE <key> <flags> <bytes> [<cas unique>], then the data block and its \r\n.
        let n = std::str::from_utf8(rest)
            .ok()
            .and_then(|t| t.split_ascii_whitespace().nth(2))
            .and_then(|t| t.parse::<usize>().ok())
            .ok_or_else(|| bad_reply("a malformed VALUE line"))?;
        match block_end(buf, end, n)? {
            Some(e) => pos = e,
            None => return Ok(None),
        }
    }
}

/// Takes the next whole reply off the front of `pending` (bytes received and not yet
/// framed), reading more from `r` as needed (blocking).
fn read_reply(protocol: Protocol, r: &mut impl Read, pending: &mut Vec<u8>) -> io::Result<Vec<u8>> {
    let mut chunk = [0u8; 16 << 10];
    loop {
        if let Some(n) = frame(protocol, pending)? {
            return Ok(pending.drain(..n).collect());
        }
        match r.read(&mut chunk) {
            Ok(0) => return Err(closed_by_server()),
            Ok(n) => pending.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
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
    let conns = spec.connections.max(1);
    let threads = spec.threads.clamp(1, conns);
    // Connect first, so that connection setup does not eat into the run.
    let mut loops: Vec<Vec<Conn>> = (0..threads).map(|_| Vec::new()).collect();
    for c in 0..conns {
        let quota = match (rate, spec.duration) {
            (None, None) => share(spec.requests, conns as u64, c as u64),
            _ => u64::MAX,
        };
        let sock = connect(spec.addr, spec.password.as_deref())?;
        let conn = Conn::new(sock, spec, sampler, c as u64, quota);
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
                let shared = &shared;
                scope.spawn(move || drive(spec, conns, rate, shared))
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
    for t in tallies {
        let t = t.ok_or_else(|| io::Error::other("a load thread panicked"))?;
        requests += t.requests;
        mismatches += t.mismatches;
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
    })
}

fn new_histogram() -> io::Result<Histogram<u64>> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3)
        .map_err(|e| io::Error::other(format!("histogram: {e}")))
}

/// A non-blocking connection without Nagle's delay.
fn connect(addr: SocketAddr, password: Option<&str>) -> io::Result<TcpStream> {
    let mut s = std::net::TcpStream::connect(addr)?;
    s.set_nodelay(true)?;
    if let Some(pw) = password {
        s.set_read_timeout(Some(IO_TIMEOUT))?;
        authenticate(&mut s, pw)?;
    }
    s.set_nonblocking(true)?;
    Ok(TcpStream::from_std(s))
}

/// Sends `AUTH password` on a blocking connection and reads the reply line: an error
/// unless it is `+OK` (the server's error text is kept in the message).
fn authenticate(s: &mut std::net::TcpStream, password: &str) -> io::Result<()> {
    let mut req = format!("*2\r\n$4\r\nAUTH\r\n${}\r\n", password.len()).into_bytes();
    req.extend_from_slice(password.as_bytes());
    req.extend_from_slice(b"\r\n");
    s.write_all(&req)?;
    // The reply is one line; read it a byte at a time so nothing after it is taken.
    let mut line = Vec::new();
    let mut b = [0u8; 1];
    while !line.ends_with(b"\r\n") {
        if line.len() > 512 || s.read(&mut b)? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "no reply to AUTH",
            ));
        }
        line.push(b[0]);
    }
    if line == b"+OK\r\n" {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "AUTH refused: {}",
                String::from_utf8_lossy(&line).trim_end()
            ),
        ))
    }
}

/// The request mix of one connection: a xorshift stream seeded by the seed and the
/// connection, one key draw (by the key distribution) and one GET-or-SET draw per
/// request.
struct Mix {
    rng: XorShift64,
    keys: KeySampler,
    get_ratio: f64,
}

impl Mix {
    fn new(spec: &LoadSpec, keys: KeySampler, conn: u64) -> Mix {
        Mix {
            rng: XorShift64::new(spec.seed ^ (conn + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)),
            keys,
            get_ratio: spec.get_ratio,
        }
    }

    /// (key index, is a GET).
    fn next(&mut self) -> (u64, bool) {
        let k = self.keys.next(&mut self.rng);
        let get = (self.rng.next_u64() % 1_000_000) as f64 / 1e6 < self.get_ratio;
        (k, get)
    }
}

/// Requests of connection `c` of `conns` when `total` are spread evenly.
fn share(total: u64, conns: u64, c: u64) -> u64 {
    total / conns + u64::from(c < total % conns)
}

/// What the loops share: the start of the run, and the first failure, which stops every
/// loop.
struct Shared {
    start: OnceLock<Instant>,
    go: Barrier,
    stop: AtomicBool,
    first: Mutex<Option<io::Error>>,
}

impl Shared {
    fn fail(&self, e: io::Error) {
        if let Ok(mut first) = self.first.lock() {
            first.get_or_insert(e);
        }
        self.stop.store(true, Ordering::SeqCst);
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// One loop's results.
struct Tally {
    requests: u64,
    latency: Histogram<u64>,
    mismatches: u64,
    /// When its last reply arrived.
    end: Option<Instant>,
}

/// A request awaiting its reply.
#[derive(Clone, Copy, Debug)]
struct Pending {
    /// The instant its latency is taken from: its batch's write (closed loop) or its due
    /// time (open loop).
    from: Instant,
    key: u64,
    get: bool,
}

/// One connection of a loop.
struct Conn {
    stream: TcpStream,
    /// Its number among all the run's connections: the seed of its mix, its place in the
    /// open loop's schedule.
    index: u64,
    mix: Mix,
    /// Requests it is to send (closed loop; `u64::MAX` when the run has a duration).
    quota: u64,
    sent: u64,
    /// Requests not yet written: `out[written..]`.
    out: Vec<u8>,
    written: usize,
    /// Registered for writability too (a write was cut short).
    want_write: bool,
    /// The received start of a reply not yet complete.
    partial: Vec<u8>,
    /// Requests sent and not yet answered, oldest first.
    pending: VecDeque<Pending>,
    /// When it last received bytes, or began to await a reply.
    progress: Instant,
    /// It sends no more (a closed-loop connection done, or the open loop's schedule over).
    finished: bool,
}

impl Conn {
    fn new(stream: TcpStream, spec: &LoadSpec, keys: KeySampler, index: u64, quota: u64) -> Conn {
        Conn {
            stream,
            index,
            mix: Mix::new(spec, keys, index),
            quota,
            sent: 0,
            out: Vec::new(),
            written: 0,
            want_write: false,
            partial: Vec::new(),
            pending: VecDeque::new(),
            progress: Instant::now(),
            finished: false,
        }
    }
}

/// Replies checked and timed so far.
struct Stats {
    latency: Histogram<u64>,
    requests: u64,
    mismatches: u64,
    end: Option<Instant>,
    /// Scratch for the expected reply.
    expected: Vec<u8>,
}

/// Frames, checks and times the whole replies at the start of `data` (received at `now`)
/// against the requests of `pending`; returns the bytes they took.
fn take_replies(
    spec: &LoadSpec,
    data: &[u8],
    pending: &mut VecDeque<Pending>,
    stats: &mut Stats,
    now: Instant,
) -> io::Result<usize> {
    let mut at = 0;
    while let Some(len) = frame(spec.protocol, &data[at..])? {
        let p = pending
            .pop_front()
            .ok_or_else(|| bad_reply("a reply to no request"))?;
        stats.expected.clear();
        push_reply(
            spec.protocol,
            &mut stats.expected,
            p.key,
            p.get,
            spec.value_size.of(p.key),
        );
        if data[at..at + len] != stats.expected[..] {
            stats.mismatches += 1;
        }
        let ns = now.saturating_duration_since(p.from).as_nanos() as u64;
        stats.latency.saturating_record(ns.max(1));
        stats.requests += 1;
        at += len;
    }
    if at > 0 {
        stats.end = Some(now);
    }
    Ok(at)
}

/// Sets up one loop, waits for the start, runs it; its failure goes to `shared` (`None`
/// then).
fn drive(spec: &LoadSpec, conns: Vec<Conn>, rate: Option<f64>, shared: &Shared) -> Option<Tally> {
    let ready = Loop::new(spec, conns);
    shared.go.wait();
    let start = *shared.start.wait();
    let ran = ready.and_then(|mut l| {
        match rate {
            None => l.closed(start, shared)?,
            Some(rate) => l.open(start, rate, shared)?,
        }
        Ok(l.stats)
    });
    match ran {
        Ok(s) => Some(Tally {
            requests: s.requests,
            latency: s.latency,
            mismatches: s.mismatches,
            end: s.end,
        }),
        Err(e) => {
            shared.fail(e);
            None
        }
    }
}

/// One event loop: its connections (token i is connection `conns[i]`) and their results.
struct Loop<'a> {
    spec: &'a LoadSpec,
    poll: Poll,
    conns: Vec<Conn>,
    buf: Box<[u8]>,
    stats: Stats,
}

impl<'a> Loop<'a> {
    fn new(spec: &'a LoadSpec, mut conns: Vec<Conn>) -> io::Result<Loop<'a>> {
        let poll = Poll::new()?;
        for (i, c) in conns.iter_mut().enumerate() {
            poll.registry()
                .register(&mut c.stream, Token(i), Interest::READABLE)?;
        }
        Ok(Loop {
            spec,
            poll,
            conns,
            buf: vec![0u8; READ_BUF].into_boxed_slice(),
            stats: Stats {
                latency: new_histogram()?,
                requests: 0,
                mismatches: 0,
                end: None,
                expected: Vec::new(),
            },
        })
    }

    /// Polls for at most `timeout` (a zero one returns at once).
    fn wait(&mut self, events: &mut Events, timeout: Duration) -> io::Result<()> {
        match self.poll.poll(events, Some(timeout)) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                events.clear();
                Ok(())
            }
            r => r,
        }
    }

    /// Writes what connection `i` has not yet written, as far as its socket takes it;
    /// waits for writability while some is left.
    fn flush(&mut self, i: usize) -> io::Result<()> {
        let c = &mut self.conns[i];
        while c.written < c.out.len() {
            match c.stream.write(&c.out[c.written..]) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::WriteZero,
                        "the server takes no more requests",
                    ))
                }
                Ok(n) => c.written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if !c.want_write {
                        self.poll.registry().reregister(
                            &mut c.stream,
                            Token(i),
                            Interest::READABLE | Interest::WRITABLE,
                        )?;
                        c.want_write = true;
                    }
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        c.out.clear();
        c.written = 0;
        if c.want_write {
            self.poll
                .registry()
                .reregister(&mut c.stream, Token(i), Interest::READABLE)?;
            c.want_write = false;
        }
        Ok(())
    }

    /// Reads what has arrived on connection `i` and takes the whole replies in it; until
    /// the socket is drained when `drain`, else once unless the read fills the buffer.
    /// Returns the instant of the last read that brought bytes.
    fn read(&mut self, i: usize, drain: bool) -> io::Result<Option<Instant>> {
        let spec = self.spec;
        let Loop {
            conns, buf, stats, ..
        } = self;
        let c = &mut conns[i];
        let mut last = None;
        loop {
            let n = match c.stream.read(buf) {
                Ok(0) if c.finished && c.pending.is_empty() => return Ok(last),
                Ok(0) => return Err(closed_by_server()),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(last),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let now = Instant::now();
            c.progress = now;
            last = Some(now);
            let data = &buf[..n];
            if c.partial.is_empty() {
                let used = take_replies(spec, data, &mut c.pending, stats, now)?;
                c.partial.extend_from_slice(&data[used..]);
            } else {
                c.partial.extend_from_slice(data);
                let used = take_replies(spec, &c.partial, &mut c.pending, stats, now)?;
                c.partial.drain(..used);
            }
            if n < buf.len() && !drain {
                return Ok(last);
            }
        }
    }

    /// Fails the run if a connection has awaited a reply for [`IO_TIMEOUT`] without
    /// receiving a byte.
    fn check_progress(&self, now: Instant) -> io::Result<()> {
        let stuck = self.conns.iter().any(|c| {
            !c.pending.is_empty() && now.saturating_duration_since(c.progress) > IO_TIMEOUT
        });
        if stuck {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("no reply from the server for {} s", IO_TIMEOUT.as_secs()),
            ));
        }
        Ok(())
    }

    /// The closed loop: batches of `pipeline` requests on each connection until its quota
    /// or the end of the run.
    fn closed(&mut self, start: Instant, shared: &Shared) -> io::Result<()> {
        let deadline = self.spec.duration.map(|d| start + d);
        let mut active = self.conns.len();
        let mut events = Events::with_capacity(1024);
        let now = Instant::now();
        for i in 0..self.conns.len() {
            self.next_batch(i, now, deadline, &mut active)?;
        }
        let mut next_check = now + CHECK_EVERY;
        while active > 0 {
            if shared.stopped() {
                return Ok(());
            }
            self.wait(&mut events, CHECK_EVERY)?;
            for ev in events.iter() {
                let i = ev.token().0;
                if ev.is_writable() {
                    self.flush(i)?;
                }
                if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                    let drain = ev.is_read_closed() || ev.is_error();
                    if let Some(now) = self.read(i, drain)? {
                        let c = &self.conns[i];
                        if c.pending.is_empty() && !c.finished {
                            self.next_batch(i, now, deadline, &mut active)?;
                        }
                    }
                }
            }
            let now = Instant::now();
            if now >= next_check {
                self.check_progress(now)?;
                next_check = now + CHECK_EVERY;
            }
        }
        Ok(())
    }

    /// Writes the next batch of connection `i` (all replies of the last one are in, at
    /// `now`), or finishes it.
    fn next_batch(
        &mut self,
        i: usize,
        now: Instant,
        deadline: Option<Instant>,
        active: &mut usize,
    ) -> io::Result<()> {
        let spec = self.spec;
        let c = &mut self.conns[i];
        if c.sent >= c.quota || deadline.is_some_and(|d| now >= d) {
            c.finished = true;
            *active -= 1;
            return Ok(());
        }
        let n = (c.quota - c.sent).min(spec.pipeline.max(1) as u64);
        for _ in 0..n {
            let (key, get) = c.mix.next();
            push_request(spec.protocol, &mut c.out, key, get, spec.value_size.of(key));
            c.pending.push_back(Pending {
                from: now,
                key,
                get,
            });
        }
        c.sent += n;
        // Timed from the write.
        let t = Instant::now();
        for p in c.pending.iter_mut() {
            p.from = t;
        }
        c.progress = t;
        self.flush(i)
    }

    /// The open loop: the requests of this loop's connections at their due times (see the
    /// module docs), then their replies.
    fn open(&mut self, start: Instant, rate: f64, shared: &Shared) -> io::Result<()> {
        let all = self.spec.connections.max(1) as u64;
        let total = match self.spec.duration {
            Some(_) => u64::MAX,
            None => self.spec.requests,
        };
        let limit_ns = self.spec.duration.map(|d| d.as_nanos() as f64);
        // Request `round` of connection `c` is due at this instant; `None` when it is not
        // in the run.
        let due = |round: u64, c: u64| {
            let idx = round.saturating_mul(all).saturating_add(c);
            let ns = idx as f64 * 1e9 / rate;
            let late = idx >= total || limit_ns.is_some_and(|l| ns >= l);
            (!late).then(|| start + Duration::from_nanos(ns as u64))
        };
        // This loop's connections in schedule order: the next request is round `round`
        // of connection `conns[at]`.
        let (mut round, mut at) = (0u64, 0usize);
        let mut next = due(0, self.conns[0].index);
        // How much later than asked a sleep in poll ends (a moving average).
        let mut lateness = FIRST_LATENESS;
        let mut events = Events::with_capacity(1024);
        let mut ready = Vec::new();
        let mut next_check = Instant::now() + CHECK_EVERY;
        loop {
            if shared.stopped() {
                return Ok(());
            }
            let now = Instant::now();
            // Every request that is due.
            while let Some(d) = next.filter(|&d| d <= now) {
                self.send(at, d, now, rate, &mut ready)?;
                at += 1;
                if at == self.conns.len() {
                    at = 0;
                    round += 1;
                }
                next = due(round, self.conns[at].index);
            }
            for i in ready.drain(..) {
                self.flush(i)?;
            }
            let timeout = match next {
                Some(d) => {
                    // Whole milliseconds that end early enough; none (a poll that returns
                    // at once) near the due time.
                    let left = d.saturating_duration_since(Instant::now());
                    let room = left.saturating_sub(lateness + SPIN).min(CHECK_EVERY);
                    Duration::from_millis(room.as_millis() as u64)
                }
                None if self.conns.iter().all(|c| c.pending.is_empty()) => return Ok(()),
                None => {
                    for c in &mut self.conns {
                        c.finished = true;
                    }
                    CHECK_EVERY
                }
            };
            let asleep = Instant::now();
            self.wait(&mut events, timeout)?;
            if next.is_some() && !timeout.is_zero() && events.is_empty() {
                let late = asleep.elapsed().saturating_sub(timeout).min(MAX_LATENESS);
                lateness = (lateness * 7 + late) / 8;
            }
            for ev in events.iter() {
                let i = ev.token().0;
                if ev.is_writable() {
                    self.flush(i)?;
                }
                if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                    self.read(i, ev.is_read_closed() || ev.is_error())?;
                }
            }
            if next_check <= now {
                self.check_progress(now)?;
                next_check = now + CHECK_EVERY;
            }
        }
    }

    /// Queues the next request of connection `i`, due at `due` (it is `now`); `ready`
    /// collects the connections with requests to write.
    fn send(
        &mut self,
        i: usize,
        due: Instant,
        now: Instant,
        rate: f64,
        ready: &mut Vec<usize>,
    ) -> io::Result<()> {
        let spec = self.spec;
        let c = &mut self.conns[i];
        let outstanding = c.pending.len() as u64;
        if outstanding >= MAX_OUTSTANDING {
            return Err(io::Error::other(Overloaded { rate, outstanding }));
        }
        if c.pending.is_empty() {
            c.progress = now;
        }
        if c.written == c.out.len() {
            ready.push(i);
        }
        let (key, get) = c.mix.next();
        push_request(spec.protocol, &mut c.out, key, get, spec.value_size.of(key));
        c.pending.push_back(Pending {
            from: due,
            key,
            get,
        });
        c.sent += 1;
        Ok(())
    }
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

    fn replies(protocol: Protocol, bytes: &[u8]) -> Vec<Vec<u8>> {
        let mut r = io::Cursor::new(bytes);
        let mut pending = Vec::new();
        let mut all = Vec::new();
        while (r.position() as usize) < bytes.len() || !pending.is_empty() {
            let reply = read_reply(protocol, &mut r, &mut pending);
            all.push(reply.unwrap_or_else(|e| panic!("{e}")));
        }
        all
    }

    #[test]
    fn replies_are_framed_whatever_their_content() {
        let resp = replies(
            Protocol::Resp,
            b"$3\r\nabc\r\n+OK\r\n$-1\r\n-ERR no\r\n*2\r\n$1\r\nx\r\n:5\r\n$2\r\n\r\n\r\n",
        );
        let want: Vec<&[u8]> = vec![
            b"$3\r\nabc\r\n",
            b"+OK\r\n",
            b"$-1\r\n",
            b"-ERR no\r\n",
            b"*2\r\n$1\r\nx\r\n:5\r\n",
            b"$2\r\n\r\n\r\n",
        ];
        assert_eq!(resp, want);
        let mc = replies(
            Protocol::Memcache,
            b"VALUE k 0 4\r\nab\r\n\r\nEND\r\nEND\r\nSTORED\r\nSERVER_ERROR out of memory\r\n",
        );
        let want: Vec<&[u8]> = vec![
            b"VALUE k 0 4\r\nab\r\n\r\nEND\r\n",
            b"END\r\n",
            b"STORED\r\n",
            b"SERVER_ERROR out of memory\r\n",
        ];
        assert_eq!(mc, want);
    }

    #[test]
    fn truncated_or_malformed_replies_are_errors() {
        for (p, bytes) in [
            (Protocol::Resp, &b"$5\r\nab"[..]),
            (Protocol::Resp, b"$x\r\n"),
            (Protocol::Resp, b"+OK"),
            (Protocol::Memcache, b"VALUE k 0\r\n"),
            (Protocol::Memcache, b"VALUE k 0 9\r\nabc\r\n"),
        ] {
            let mut pending = Vec::new();
            assert!(
                read_reply(p, &mut io::Cursor::new(bytes), &mut pending).is_err(),
                "{}",
                String::from_utf8_lossy(bytes)
            );
        }
    }

    /// (request, expected reply) of key `k`.
    fn request(protocol: Protocol, k: u64, get: bool, value_size: usize) -> (Vec<u8>, Vec<u8>) {
        let (mut out, mut reply) = (Vec::new(), Vec::new());
        push_request(protocol, &mut out, k, get, value_size);
        push_reply(protocol, &mut reply, k, get, value_size);
        (out, reply)
    }

    #[test]
    fn expected_replies_match_the_requests() {
        let (out, e) = request(Protocol::Memcache, 7, true, 5);
        assert_eq!(out, b"get key:000000000007\r\n");
        assert_eq!(e, b"VALUE key:000000000007 0 5\r\n7.7.7\r\nEND\r\n");
        let (out, e) = request(Protocol::Memcache, 7, false, 5);
        assert_eq!(out, b"set key:000000000007 0 0 5\r\n7.7.7\r\n");
        assert_eq!(e, b"STORED\r\n");
        let (out, e) = request(Protocol::Resp, 7, true, 5);
        assert_eq!(out, b"*2\r\n$3\r\nGET\r\n$16\r\nkey:000000000007\r\n");
        assert_eq!(e, b"$5\r\n7.7.7\r\n");
        let (out, e) = request(Protocol::Resp, 4660, false, 12);
        assert_eq!(
            out,
            b"*3\r\n$3\r\nSET\r\n$16\r\nkey:000000004660\r\n$12\r\n1234.1234.12\r\n"
        );
        assert_eq!(e, b"+OK\r\n");
    }

    #[test]
    fn keys_and_values_are_the_documented_functions_of_the_index() {
        for i in [
            0,
            1,
            7,
            15,
            16,
            255,
            4096,
            999_999_999_999,
            1 << 40,
            u64::MAX,
        ] {
            assert_eq!(key_of(i), format!("key:{:012}", i % 1_000_000_000_000));
            for size in [0, 1, 5, 17, 64, 1000] {
                let want: Vec<u8> = format!("{i:x}.").bytes().cycle().take(size).collect();
                assert_eq!(value_of(i, size), want, "{i} {size}");
            }
        }
    }

    #[test]
    fn replies_arriving_byte_by_byte_are_framed_when_complete() {
        let cases: [(Protocol, &[u8]); 4] = [
            (Protocol::Resp, b"$3\r\nabc\r\n"),
            (Protocol::Resp, b"*2\r\n$1\r\nx\r\n%1\r\n+a\r\n:5\r\n"),
            (Protocol::Memcache, b"VALUE k 0 4\r\nab\r\n\r\nEND\r\n"),
            (Protocol::Memcache, b"STORED\r\n"),
        ];
        for (p, reply) in cases {
            for cut in 0..reply.len() {
                let framed = frame(p, &reply[..cut]).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(framed, None, "{p} {cut}");
            }
            let mut two = reply.to_vec();
            two.extend_from_slice(reply);
            assert_eq!(frame(p, &two).ok(), Some(Some(reply.len())), "{p}");
        }
    }

    #[test]
    fn requests_are_spread_evenly() {
        let counts: Vec<u64> = (0..4).map(|c| share(10, 4, c)).collect();
        assert_eq!(counts, [3, 3, 2, 2]);
        assert_eq!((0..7).map(|c| share(4000, 7, c)).sum::<u64>(), 4000);
    }
}
