//! A load generator for key-value servers that checks every reply: the Redis protocol
//! (RESP, [`Protocol::Resp`]) or the memcached text protocol ([`Protocol::Memcache`]),
//! closed loop or open loop.
//!
//! # Requests and checks
//!
//! Each request is a GET or a SET (by [`LoadSpec::get_ratio`]) of a key drawn from a key
//! space ([`key_of`]). Values are a deterministic function of the key ([`value_of`]) and
//! every SET writes that value, so after [`preload`] the reply to every request is known
//! exactly. Replies are delimited by the protocol's framing alone (a RESP bulk string by
//! its length, a memcached `VALUE` block by its byte count and `END`), then compared byte
//! for byte with the expected reply; any difference is counted
//! ([`LoadReport::mismatches`]) without losing track of the replies after it. The load
//! generator therefore checks the server as it measures it.
//!
//! # Closed loop (the default)
//!
//! N connections (one thread each) send batches of P pipelined requests and wait for all
//! P replies before the next batch. Latency is per request, from the write of its batch to
//! the arrival of its reply (so with P > 1 a request's latency includes the replies queued
//! before it). The offered load adapts to the server: a slow reply delays the requests
//! behind it, which are then never sent at the moment a real client would have sent them,
//! so these latencies understate those of clients arriving independently.
//!
//! # Open loop ([`LoadSpec::rate`])
//!
//! Requests are sent on a fixed schedule, independent of the replies: at R requests per
//! second in total, request i of connection c (of N) is due at `start + (i·N + c) / R`,
//! so the connections interleave into one uniform stream. Each connection has a writer
//! thread, which sleeps until the next due time and writes that request on its own (the
//! pipeline depth plays no part), and a reader thread, which takes the replies in order.
//! A request whose due time has already passed (the writer fell behind, or was blocked by
//! the socket) is sent at once, but its latency is still taken from its *due* time to the
//! arrival of its reply, so a stalled server is charged for every request it delayed
//! (no coordinated omission). A sleeping thread wakes later than asked (timer slack and
//! scheduling, from tens of microseconds to over a hundred on a virtual machine), which
//! would add that much to every latency; so the writer keeps a moving average of its
//! wake-up lateness and sleeps that much less. A request then leaves a little before or
//! after its due time; one that leaves early is timed from its actual send, one that leaves
//! late from its due time (any lateness that remains is counted against the server, never
//! hidden). At most [`MAX_OUTSTANDING`] requests may
//! await their replies on one connection; past that the run stops with an [`Overloaded`]
//! error: the server cannot keep up with the offered rate. The achieved rate
//! ([`LoadReport::per_sec`]) is the replies received over the time from the start to the
//! last reply.
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
//! [`process_cpu_secs`] reads a process's user and system time (fields 14 and 15 of
//! `/proc/PID/stat`, Linux only) in clock ticks, converted to seconds by the kernel's
//! tick rate ([`clock_ticks_per_sec`]: `AT_CLKTCK` of the auxiliary vector, the value
//! `sysconf(_SC_CLK_TCK)` returns; 100, the Linux value on every common architecture,
//! where it cannot be read). Read before and after a run, it gives the server's CPU
//! seconds for that run, and per million requests a measure of efficiency independent
//! of the number of cores the server used.

use std::fmt;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Barrier, Mutex, OnceLock};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

/// Most requests one open-loop connection may have awaiting replies (see the module docs).
pub const MAX_OUTSTANDING: u64 = 100_000;

/// Cap on one sample of the writer's sleep lateness (a preempted thread is not the norm).
const MAX_LATENESS: Duration = Duration::from_millis(2);

/// How long a read or write may wait before the run fails.
const IO_TIMEOUT: Duration = Duration::from_secs(10);

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
    /// Concurrent connections (closed loop: one thread each; open loop: two).
    pub connections: usize,
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

/// Appends the request for key `k` (a GET or a SET of its value) to `out`; returns the
/// exact reply expected.
fn push_request(
    protocol: Protocol,
    out: &mut Vec<u8>,
    k: u64,
    get: bool,
    value_size: usize,
) -> Vec<u8> {
    let key = key_of(k);
    let value = value_of(k, value_size);
    match (protocol, get) {
        (Protocol::Resp, true) => {
            push_command(out, &[b"GET", key.as_bytes()]);
            let mut r = format!("${}\r\n", value.len()).into_bytes();
            r.extend_from_slice(&value);
            r.extend_from_slice(b"\r\n");
            r
        }
        (Protocol::Resp, false) => {
            push_command(out, &[b"SET", key.as_bytes(), &value]);
            b"+OK\r\n".to_vec()
        }
        (Protocol::Memcache, true) => {
            out.extend_from_slice(format!("get {key}\r\n").as_bytes());
            let mut r = format!("VALUE {key} 0 {}\r\n", value.len()).into_bytes();
            r.extend_from_slice(&value);
            r.extend_from_slice(b"\r\nEND\r\n");
            r
        }
        (Protocol::Memcache, false) => {
            out.extend_from_slice(format!("set {key} 0 0 {}\r\n", value.len()).as_bytes());
            out.extend_from_slice(&value);
            out.extend_from_slice(b"\r\n");
            b"STORED\r\n".to_vec()
        }
    }
}

fn bad_reply(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("reply: {what}"))
}

/// Appends one line (through its `\n`) to `buf`; returns where it starts.
fn read_line(r: &mut impl BufRead, buf: &mut Vec<u8>) -> io::Result<usize> {
    let start = buf.len();
    let n = Read::take(&mut *r, MAX_REPLY as u64).read_until(b'\n', buf)?;
    if buf.ends_with(b"\n") {
        Ok(start)
    } else if n == MAX_REPLY {
        Err(bad_reply("a line longer than 64 MiB"))
    } else {
        Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the server closed the connection",
        ))
    }
}

/// Appends `n` more bytes to `buf`.
fn read_n(r: &mut impl BufRead, buf: &mut Vec<u8>, n: usize) -> io::Result<()> {
    if n > MAX_REPLY {
        return Err(bad_reply("longer than 64 MiB"));
    }
    let at = buf.len();
    buf.resize(at + n, 0);
    r.read_exact(&mut buf[at..])
}

/// The number in a line such as `$12\r\n` (after its type byte).
fn line_number(line: &[u8]) -> io::Result<i64> {
    std::str::from_utf8(line)
        .ok()
        .and_then(|t| t.trim_end().parse().ok())
        .ok_or_else(|| bad_reply("a malformed length"))
}

/// Appends one whole reply to `buf`, delimited by the protocol's framing only (its
/// content is compared afterwards).
fn read_reply(protocol: Protocol, r: &mut impl BufRead, buf: &mut Vec<u8>) -> io::Result<()> {
    match protocol {
        Protocol::Resp => read_resp(r, buf, 0),
        Protocol::Memcache => read_memcache(r, buf),
    }
}

fn read_resp(r: &mut impl BufRead, buf: &mut Vec<u8>, depth: usize) -> io::Result<()> {
    if depth > 16 {
        return Err(bad_reply("nested too deep"));
    }
    let start = read_line(r, buf)?;
    let (&kind, rest) = buf[start..]
        .split_first()
        .ok_or_else(|| bad_reply("empty"))?;
    match kind {
        // Bulk string, blob error, verbatim string: a length, then that many bytes.
        b'$' | b'!' | b'=' => {
            let n = line_number(rest)?;
            if n >= 0 {
                read_n(r, buf, n as usize + 2)?;
            }
        }
        // Array, set, push; map and attribute (pairs).
        b'*' | b'~' | b'>' | b'%' | b'|' => {
            let n = line_number(rest)?;
            let per = if matches!(kind, b'%' | b'|') { 2 } else { 1 };
            for _ in 0..n.max(0) * per {
                read_resp(r, buf, depth + 1)?;
            }
        }
        // Everything else is one line.
        _ => {}
    }
    Ok(())
}

fn read_memcache(r: &mut impl BufRead, buf: &mut Vec<u8>) -> io::Result<()> {
    loop {
        let start = read_line(r, buf)?;
        let Some(rest) = buf[start..].strip_prefix(b"VALUE ") else {
            // END, STORED, ERROR, CLIENT_ERROR ..., SERVER_ERROR ...: one line.
            return Ok(());
        };
        // VALUE <key> <flags> <bytes> [<cas unique>], then the data block and its \r\n.
        let n = std::str::from_utf8(rest)
            .ok()
            .and_then(|t| t.split_ascii_whitespace().nth(2))
            .and_then(|t| t.parse::<usize>().ok())
            .ok_or_else(|| bad_reply("a malformed VALUE line"))?;
        read_n(r, buf, n.saturating_add(2))?;
    }
}

fn connect(addr: SocketAddr) -> io::Result<TcpStream> {
    let s = TcpStream::connect(addr)?;
    s.set_nodelay(true)?;
    // A server that stops answering fails the run instead of hanging it.
    s.set_read_timeout(Some(IO_TIMEOUT))?;
    s.set_write_timeout(Some(IO_TIMEOUT))?;
    Ok(s)
}

/// SETs every key to its value, pipelined 256 deep on one connection.
pub fn preload(
    addr: SocketAddr,
    protocol: Protocol,
    keys: u64,
    value_size: usize,
) -> io::Result<()> {
    let s = connect(addr)?;
    let mut r = BufReader::new(&s);
    let mut out = Vec::new();
    let mut expected = Vec::new();
    let mut got = Vec::new();
    let mut i = 0;
    while i < keys {
        let n = (keys - i).min(256);
        out.clear();
        for k in i..i + n {
            expected = push_request(protocol, &mut out, k, false, value_size);
        }
        (&s).write_all(&out)?;
        for _ in 0..n {
            got.clear();
            read_reply(protocol, &mut r, &mut got)?;
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
/// Fails on an I/O error, a rate that is not positive and finite, or (open loop) a server
/// that falls [`MAX_OUTSTANDING`] requests behind ([`overloaded`] tells).
pub fn run(spec: &LoadSpec) -> io::Result<LoadReport> {
    let conns = spec.connections.max(1);
    let (start, tallies) = match spec.rate {
        None => run_closed(spec, conns)?,
        Some(rate) if rate.is_finite() && rate > 0.0 => run_open(spec, conns, rate)?,
        Some(rate) => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("the rate must be a positive number of requests per second, not {rate}"),
            ))
        }
    };
    let mut latency = new_histogram()?;
    let (mut requests, mut mismatches, mut last) = (0, 0, start);
    for t in tallies {
        requests += t.requests;
        mismatches += t.mismatches;
        last = last.max(t.end);
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

/// One connection's results.
struct Tally {
    requests: u64,
    latency: Histogram<u64>,
    mismatches: u64,
    /// When its last reply arrived.
    end: Instant,
}

/// The request mix of one connection: a xorshift stream seeded by the seed and the
/// connection, one key and one GET-or-SET draw per request.
struct Mix {
    rng: u64,
    keys: u64,
    get_ratio: f64,
}

impl Mix {
    fn new(spec: &LoadSpec, conn: u64) -> Mix {
        Mix {
            rng: spec.seed ^ (conn + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15),
            keys: spec.keys.max(1),
            get_ratio: spec.get_ratio,
        }
    }

    fn step(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }

    /// (key index, is a GET).
    fn next(&mut self) -> (u64, bool) {
        let k = self.step() % self.keys;
        let get = (self.step() % 1_000_000) as f64 / 1e6 < self.get_ratio;
        (k, get)
    }
}

/// Requests of connection `c` of `conns` when `total` are spread evenly.
fn share(total: u64, conns: u64, c: u64) -> u64 {
    total / conns + u64::from(c < total % conns)
}

fn join_all<T>(
    handles: Vec<std::thread::ScopedJoinHandle<'_, io::Result<T>>>,
) -> Vec<io::Result<T>> {
    handles
        .into_iter()
        .map(|h| {
            h.join()
                .unwrap_or_else(|_| Err(io::Error::other("a load thread panicked")))
        })
        .collect()
}

/// The start of the run and each connection's results.
type Run = (Instant, Vec<Tally>);

fn run_closed(spec: &LoadSpec, conns: usize) -> io::Result<Run> {
    let pipeline = spec.pipeline.max(1);
    let start = Instant::now();
    let deadline = spec.duration.map(|d| start + d);
    let results = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..conns as u64)
            .map(|c| {
                let count = match deadline {
                    Some(_) => u64::MAX,
                    None => share(spec.requests, conns as u64, c),
                };
                scope.spawn(move || drive_closed(spec, c, count, deadline, pipeline))
            })
            .collect();
        join_all(handles)
    });
    Ok((start, results.into_iter().collect::<io::Result<_>>()?))
}

/// One closed-loop connection: `count` requests, or batches until `deadline`.
fn drive_closed(
    spec: &LoadSpec,
    conn: u64,
    count: u64,
    deadline: Option<Instant>,
    pipeline: usize,
) -> io::Result<Tally> {
    let s = connect(spec.addr)?;
    let mut r = BufReader::with_capacity(1 << 16, &s);
    let mut hist = new_histogram()?;
    let mut mix = Mix::new(spec, conn);
    let (mut done, mut mismatches) = (0u64, 0u64);
    let mut out = Vec::new();
    let mut expected: Vec<Vec<u8>> = Vec::with_capacity(pipeline);
    let mut got = Vec::new();
    while done < count && deadline.is_none_or(|d| Instant::now() < d) {
        let n = (count - done).min(pipeline as u64) as usize;
        out.clear();
        expected.clear();
        for _ in 0..n {
            let (k, get) = mix.next();
            expected.push(push_request(
                spec.protocol,
                &mut out,
                k,
                get,
                spec.value_size,
            ));
        }
        let t = Instant::now();
        (&s).write_all(&out)?;
        for e in &expected {
            got.clear();
            read_reply(spec.protocol, &mut r, &mut got)?;
            hist.saturating_record((t.elapsed().as_nanos() as u64).max(1));
            if got != *e {
                mismatches += 1;
            }
        }
        done += n as u64;
    }
    Ok(Tally {
        requests: done,
        latency: hist,
        mismatches,
        end: Instant::now(),
    })
}

/// What the threads of an open loop share: the start of the schedule, and the first
/// failure, which stops every connection.
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
        self.stop.load(Ordering::SeqCst)
    }
}

fn run_open(spec: &LoadSpec, conns: usize, rate: f64) -> io::Result<Run> {
    // Connect first, so that connection setup does not eat into the schedule.
    let sockets = (0..conns)
        .map(|_| connect(spec.addr))
        .collect::<io::Result<Vec<_>>>()?;
    let shared = Shared {
        start: OnceLock::new(),
        go: Barrier::new(conns + 1),
        stop: AtomicBool::new(false),
        first: Mutex::new(None),
    };
    let tallies = std::thread::scope(|scope| {
        let handles: Vec<_> = sockets
            .iter()
            .enumerate()
            .map(|(c, s)| {
                let shared = &shared;
                scope.spawn(move || drive_open(spec, s, c as u64, conns as u64, rate, shared))
            })
            .collect();
        // Every writer is running: the schedule starts now.
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
    let tallies = tallies
        .into_iter()
        .map(|t| t.ok_or_else(|| io::Error::other("a load thread panicked")))
        .collect::<io::Result<_>>()?;
    let start = shared
        .start
        .get()
        .copied()
        .ok_or_else(|| io::Error::other("the schedule never started"))?;
    Ok((start, tallies))
}

/// One open-loop connection: a writer (this thread) on the schedule and a reader.
/// Failures go to `shared`; `None` then.
fn drive_open(
    spec: &LoadSpec,
    s: &TcpStream,
    conn: u64,
    conns: u64,
    rate: f64,
    shared: &Shared,
) -> Option<Tally> {
    let received = AtomicU64::new(0);
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    shared.go.wait();
    let start = *shared.start.wait();
    std::thread::scope(|scope| {
        let reader = scope.spawn(|| match read_open(spec.protocol, s, rx, &received) {
            Ok(t) => Some(t),
            Err(e) => {
                // Recorded before the shutdown, so the writer's broken pipe is not first.
                shared.fail(e);
                let _ = s.shutdown(Shutdown::Both);
                None
            }
        });
        if let Err(e) = write_open(spec, s, tx, &received, conn, conns, rate, start, shared) {
            shared.fail(e);
        }
        // Await the replies still due, unless the run has failed: then wake the reader.
        while !reader.is_finished() {
            if shared.stopped() {
                let _ = s.shutdown(Shutdown::Both);
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        reader.join().ok().flatten()
    })
}

/// Writes the requests of connection `conn` at their due times; each goes to the reader
/// (with the instant it is timed from and its expected reply) before it is written.
fn write_open(
    spec: &LoadSpec,
    mut s: &TcpStream,
    tx: mpsc::Sender<(Instant, Vec<u8>)>,
    received: &AtomicU64,
    conn: u64,
    conns: u64,
    rate: f64,
    start: Instant,
    shared: &Shared,
) -> io::Result<()> {
    let mut mix = Mix::new(spec, conn);
    let total = match spec.duration {
        Some(_) => u64::MAX,
        None => spec.requests,
    };
    let limit_ns = spec.duration.map(|d| d.as_nanos() as f64);
    let mut out = Vec::new();
    // How much later than asked a sleep ends (a moving average): sleeps end that much early.
    let mut lateness = Duration::from_micros(50);
    for i in 0u64.. {
        let idx = i.saturating_mul(conns).saturating_add(conn);
        let due_ns = idx as f64 * 1e9 / rate;
        if idx >= total || limit_ns.is_some_and(|l| due_ns >= l) {
            break;
        }
        let due = start + Duration::from_nanos(due_ns as u64);
        loop {
            if shared.stopped() {
                return Ok(());
            }
            let now = Instant::now();
            if now + lateness >= due {
                break;
            }
            // In slices, so that a failure elsewhere is noticed at low rates too.
            let want = (due - now - lateness).min(Duration::from_millis(20));
            std::thread::sleep(want);
            let late = now.elapsed().saturating_sub(want).min(MAX_LATENESS);
            lateness = (lateness * 7 + late) / 8;
        }
        // Requests 0..i have been sent.
        let outstanding = i.saturating_sub(received.load(Ordering::Acquire));
        if outstanding >= MAX_OUTSTANDING {
            return Err(io::Error::other(Overloaded { rate, outstanding }));
        }
        let (k, get) = mix.next();
        out.clear();
        let expected = push_request(spec.protocol, &mut out, k, get, spec.value_size);
        // Timed from its due time, or from now if it goes out early.
        let from = due.min(Instant::now());
        if tx.send((from, expected)).is_err() {
            // The reader has stopped (and recorded why).
            return Ok(());
        }
        s.write_all(&out)?;
    }
    Ok(())
}

/// Reads the replies in order, timing each from its due time (or earlier send).
fn read_open(
    protocol: Protocol,
    s: &TcpStream,
    rx: mpsc::Receiver<(Instant, Vec<u8>)>,
    received: &AtomicU64,
) -> io::Result<Tally> {
    let mut r = BufReader::with_capacity(1 << 16, s);
    let mut hist = new_histogram()?;
    let mut got = Vec::new();
    let (mut done, mut mismatches) = (0u64, 0u64);
    for (due, expected) in rx {
        got.clear();
        read_reply(protocol, &mut r, &mut got)?;
        hist.saturating_record((due.elapsed().as_nanos() as u64).max(1));
        if got != expected {
            mismatches += 1;
        }
        done += 1;
        received.store(done, Ordering::Release);
    }
    Ok(Tally {
        requests: done,
        latency: hist,
        mismatches,
        end: Instant::now(),
    })
}

/// Why a process's CPU time could not be read.
#[derive(Debug)]
pub enum CpuError {
    /// `/proc/PID/stat` could not be read (no such process, or not Linux).
    Read {
        /// The process.
        pid: u32,
        /// Why.
        source: io::Error,
    },
    /// Its contents were not as expected.
    Malformed(String),
}

impl fmt::Display for CpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CpuError::Read { pid, source } => write!(f, "cannot read /proc/{pid}/stat: {source}"),
            CpuError::Malformed(m) => write!(f, "malformed /proc/PID/stat: {m}"),
        }
    }
}

impl std::error::Error for CpuError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CpuError::Read { source, .. } => Some(source),
            CpuError::Malformed(_) => None,
        }
    }
}

/// User and system CPU time of a process, in clock ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuTicks {
    /// Field 14, `utime`.
    pub user: u64,
    /// Field 15, `stime`.
    pub system: u64,
}

/// Parses the contents of `/proc/PID/stat`. The command name (field 2) is in parentheses
/// and may itself contain spaces and parentheses, so the fields are counted from the
/// last `)`.
pub fn parse_proc_stat(stat: &str) -> Result<CpuTicks, CpuError> {
    let close = stat
        .rfind(')')
        .ok_or_else(|| CpuError::Malformed("no ')' closing the command name".into()))?;
    // Fields 3 (state) onwards.
    let fields: Vec<&str> = stat[close + 1..].split_ascii_whitespace().collect();
    let field = |n: usize| -> Result<u64, CpuError> {
        let text = fields
            .get(n - 3)
            .ok_or_else(|| CpuError::Malformed(format!("field {n} is missing")))?;
        text.parse()
            .map_err(|_| CpuError::Malformed(format!("field {n} is '{text}', not a number")))
    };
    Ok(CpuTicks {
        user: field(14)?,
        system: field(15)?,
    })
}

/// Clock ticks per second of `/proc` times: the kernel's `AT_CLKTCK` (what
/// `sysconf(_SC_CLK_TCK)` returns), read from `/proc/self/auxv`; 100 where that fails.
pub fn clock_ticks_per_sec() -> u64 {
    const AT_CLKTCK: usize = 17;
    const WORD: usize = std::mem::size_of::<usize>();
    let Ok(auxv) = std::fs::read("/proc/self/auxv") else {
        return 100;
    };
    let word = |b: &[u8]| b.try_into().map(usize::from_ne_bytes).unwrap_or(0);
    auxv.chunks_exact(2 * WORD)
        .map(|pair| (word(&pair[..WORD]), word(&pair[WORD..])))
        .take_while(|&(key, _)| key != 0)
        .find(|&(key, _)| key == AT_CLKTCK)
        .map(|(_, ticks)| ticks as u64)
        .filter(|&t| t > 0)
        .unwrap_or(100)
}

/// User plus system CPU seconds process `pid` has used so far (Linux).
pub fn process_cpu_secs(pid: u32) -> Result<f64, CpuError> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map_err(|source| CpuError::Read { pid, source })?;
    let t = parse_proc_stat(&stat)?;
    Ok((t.user + t.system) as f64 / clock_ticks_per_sec() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_is_parsed_after_the_last_parenthesis() {
        // A command name with spaces and parentheses of its own.
        let stat = "4242 (my (odd) srv) x) S 1 4242 4242 0 -1 4194560 1234 0 5 0 \
                    731 229 0 0 20 0 4 0 12345 1000000 300 18446744073709551615\n";
        let t = parse_proc_stat(stat).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            t,
            CpuTicks {
                user: 731,
                system: 229
            }
        );
        let plain = "1 (init) S 0 1 1 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 9";
        assert_eq!(
            parse_proc_stat(plain).map_err(|e| e.to_string()),
            Ok(CpuTicks { user: 5, system: 6 })
        );
    }

    #[test]
    fn malformed_proc_stat_is_a_typed_error() {
        for bad in [
            "",
            "1 init S 0 1",
            "1 (init) S 0 1 1 0 -1",
            "1 (init) S 0 1 1 0 -1 4194560 1 2 3 4 x 6 7",
        ] {
            assert!(
                matches!(parse_proc_stat(bad), Err(CpuError::Malformed(_))),
                "{bad:?}"
            );
        }
        assert!(matches!(
            process_cpu_secs(u32::MAX),
            Err(CpuError::Read { .. })
        ));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn own_cpu_time_is_readable() {
        assert!(clock_ticks_per_sec() > 0);
        let secs = process_cpu_secs(std::process::id()).unwrap_or_else(|e| panic!("{e}"));
        assert!(secs.is_finite() && secs >= 0.0);
    }

    #[test]
    fn protocols_parse_by_name() {
        assert_eq!("resp".parse(), Ok(Protocol::Resp));
        assert_eq!("Memcache".parse(), Ok(Protocol::Memcache));
        assert!("http".parse::<Protocol>().is_err());
        assert_eq!(Protocol::Memcache.to_string(), "memcache");
    }

    fn replies(protocol: Protocol, bytes: &[u8]) -> Vec<Vec<u8>> {
        let mut r = io::Cursor::new(bytes);
        let mut all = Vec::new();
        while (r.position() as usize) < bytes.len() {
            let mut buf = Vec::new();
            read_reply(protocol, &mut r, &mut buf).unwrap_or_else(|e| panic!("{e}"));
            all.push(buf);
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
            let mut buf = Vec::new();
            assert!(
                read_reply(p, &mut io::Cursor::new(bytes), &mut buf).is_err(),
                "{}",
                String::from_utf8_lossy(bytes)
            );
        }
    }

    #[test]
    fn expected_replies_match_the_requests() {
        let mut out = Vec::new();
        let e = push_request(Protocol::Memcache, &mut out, 7, true, 5);
        assert_eq!(out, b"get key:000000000007\r\n");
        assert_eq!(e, b"VALUE key:000000000007 0 5\r\n7.7.7\r\nEND\r\n");
        out.clear();
        let e = push_request(Protocol::Memcache, &mut out, 7, false, 5);
        assert_eq!(out, b"set key:000000000007 0 0 5\r\n7.7.7\r\n");
        assert_eq!(e, b"STORED\r\n");
        out.clear();
        let e = push_request(Protocol::Resp, &mut out, 7, true, 5);
        assert_eq!(out, b"*2\r\n$3\r\nGET\r\n$16\r\nkey:000000000007\r\n");
        assert_eq!(e, b"$5\r\n7.7.7\r\n");
    }

    #[test]
    fn requests_are_spread_evenly() {
        let counts: Vec<u64> = (0..4).map(|c| share(10, 4, c)).collect();
        assert_eq!(counts, [3, 3, 2, 2]);
        assert_eq!((0..7).map(|c| share(4000, 7, c)).sum::<u64>(), 4000);
    }
}
