//! The connection loops of a run: each worker thread drives its connections with one
//! mio poll, closed loop (a batch in flight per connection) or open loop (requests sent
//! on a schedule, latency measured from the due time), checking every reply against
//! the one its request must get. In cluster mode a connection holds one socket (a link)
//! per node and sends each request to the node serving its key's slot, following
//! `-MOVED` and `-ASK`.

mod schedule;

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, Mutex, OnceLock};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

use crate::cluster::{redirect, Redirect, SlotMap, ASKING, MAX_NODES};
use crate::dist::{KeySampler, XorShift64};
use crate::wire::{bad_reply, closed_by_server, connect, frame, push_reply, push_request};
use crate::{
    new_histogram, LoadSpec, Overloaded, CHECK_EVERY, FIRST_LATENESS, IO_TIMEOUT, MAX_LATENESS,
    MAX_OUTSTANDING, READ_BUF, SPIN,
};

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
pub(crate) fn share(total: u64, conns: u64, c: u64) -> u64 {
    total / conns + u64::from(c < total % conns)
}

/// What the loops share: the start of the run, and the first failure, which stops every
/// loop.
pub(crate) struct Shared {
    pub(crate) start: OnceLock<Instant>,
    pub(crate) go: Barrier,
    pub(crate) stop: AtomicBool,
    pub(crate) first: Mutex<Option<io::Error>>,
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
pub(crate) struct Tally {
    pub(crate) requests: u64,
    pub(crate) latency: Histogram<u64>,
    pub(crate) mismatches: u64,
    /// `-MOVED` and `-ASK` replies followed (cluster mode).
    pub(crate) moved: u64,
    pub(crate) asks: u64,
    /// When its last reply arrived.
    pub(crate) end: Option<Instant>,
}

/// A request awaiting its reply.
#[derive(Clone, Copy, Debug)]
struct Pending {
    /// The instant its latency is taken from: its batch's write (closed loop) or its due
    /// time (open loop).
    from: Instant,
    key: u64,
    get: bool,
    /// The `ASKING` before a request sent on an `-ASK` (its `+OK` is no request's reply).
    asking: bool,
    /// Redirections it has followed.
    hops: u8,
}

/// Most redirections one request may follow before the run fails.
const MAX_HOPS: u8 = 16;

/// Least time between two slot-map refreshes of a loop after `-MOVED`.
const REFRESH_EVERY: Duration = Duration::from_millis(100);

/// One socket of a connection: to the server, or (cluster mode) to one of its nodes.
struct Link {
    stream: TcpStream,
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
}

impl Link {
    fn new(stream: TcpStream) -> Link {
        Link {
            stream,
            out: Vec::new(),
            written: 0,
            want_write: false,
            partial: Vec::new(),
            pending: VecDeque::new(),
            progress: Instant::now(),
        }
    }
}

/// One connection of a loop: one link to the server, or in cluster mode one to each node
/// it has sent to (`links[n]` to node n of the slot map).
pub(crate) struct Conn {
    /// Its number among all the run's connections: the seed of its mix, its place in the
    /// open loop's schedule.
    index: u64,
    mix: Mix,
    /// Requests it is to send (closed loop; `u64::MAX` when the run has a duration).
    quota: u64,
    sent: u64,
    links: Vec<Option<Link>>,
    /// It sends no more (a closed-loop connection done, or the open loop's schedule over).
    finished: bool,
}

impl Conn {
    pub(crate) fn new(
        links: Vec<Option<TcpStream>>,
        spec: &LoadSpec,
        keys: KeySampler,
        index: u64,
        quota: u64,
    ) -> Conn {
        Conn {
            index,
            mix: Mix::new(spec, keys, index),
            quota,
            sent: 0,
            links: links.into_iter().map(|s| s.map(Link::new)).collect(),
            finished: false,
        }
    }

    /// No request of it awaits a reply.
    fn idle(&self) -> bool {
        self.links.iter().flatten().all(|l| l.pending.is_empty())
    }
}

/// The poll token of link `n` of connection `i`.
fn token(i: usize, n: usize) -> Token {
    Token(i * MAX_NODES + n)
}

/// Replies checked and timed so far.
struct Stats {
    latency: Histogram<u64>,
    requests: u64,
    mismatches: u64,
    moved: u64,
    asks: u64,
    end: Option<Instant>,
    /// Scratch for the expected reply.
    expected: Vec<u8>,
}

/// Frames, checks and times the whole replies at the start of `data` (received at `now`
/// from `node`) against the requests of `pending`; returns the bytes they took. In
/// cluster mode a redirection is no reply: its request goes to `redirects`.
fn take_replies(
    spec: &LoadSpec,
    data: &[u8],
    pending: &mut VecDeque<Pending>,
    stats: &mut Stats,
    now: Instant,
    node: SocketAddr,
    redirects: &mut Vec<(Pending, Redirect)>,
) -> io::Result<usize> {
    let mut at = 0;
    while let Some(len) = frame(spec.protocol, &data[at..])? {
        let p = pending
            .pop_front()
            .ok_or_else(|| bad_reply("a reply to no request"))?;
        let reply = &data[at..at + len];
        at += len;
        if p.asking {
            // Refused only when the node forgot the migration; the request after it is
            // then answered with a redirection or counted as a mismatch.
            continue;
        }
        if spec.cluster && reply.first() == Some(&b'-') {
            if let Some(r) = redirect(reply, node) {
                redirects.push((p, r));
                continue;
            }
        }
        stats.expected.clear();
        push_reply(
            spec.protocol,
            &mut stats.expected,
            p.key,
            p.get,
            spec.value_size.of(p.key),
        );
        if reply != &stats.expected[..] {
            stats.mismatches += 1;
        }
        let ns = now.saturating_duration_since(p.from).as_nanos() as u64;
        stats.latency.saturating_record(ns.max(1));
        stats.requests += 1;
        stats.end = Some(now);
    }
    Ok(at)
}

/// Sets up one loop, waits for the start, runs it; its failure goes to `shared` (`None`
/// then). `map` is the cluster's slot map (cluster mode).
pub(crate) fn drive(
    spec: &LoadSpec,
    conns: Vec<Conn>,
    rate: Option<f64>,
    shared: &Shared,
    map: Option<SlotMap>,
) -> Option<Tally> {
    let ready = Loop::new(spec, conns, map);
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
            moved: s.moved,
            asks: s.asks,
            end: s.end,
        }),
        Err(e) => {
            shared.fail(e);
            None
        }
    }
}

/// One event loop: its connections (token `i·MAX_NODES + n` is link n of connection
/// `conns[i]`) and their results.
struct Loop<'a> {
    spec: &'a LoadSpec,
    poll: Poll,
    conns: Vec<Conn>,
    buf: Box<[u8]>,
    stats: Stats,
    /// The slot map (cluster mode): this loop's own, updated by the redirections it gets.
    map: Option<SlotMap>,
    /// Redirected requests not yet sent again: (connection, request, redirection).
    redirects: Vec<(usize, Pending, Redirect)>,
    /// When the slot map was last read again.
    refreshed: Option<Instant>,
}

impl<'a> Loop<'a> {
    fn new(spec: &'a LoadSpec, mut conns: Vec<Conn>, map: Option<SlotMap>) -> io::Result<Loop<'a>> {
        let poll = Poll::new()?;
        for (i, c) in conns.iter_mut().enumerate() {
            for (n, l) in c.links.iter_mut().enumerate() {
                if let Some(l) = l {
                    poll.registry()
                        .register(&mut l.stream, token(i, n), Interest::READABLE)?;
                }
            }
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
                moved: 0,
                asks: 0,
                end: None,
                expected: Vec::new(),
            },
            map,
            redirects: Vec::new(),
            refreshed: None,
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

    /// The address of node `n` (the server's outside cluster mode).
    fn node_addr(&self, n: usize) -> SocketAddr {
        match &self.map {
            Some(m) => m.nodes[n],
            None => self.spec.addr,
        }
    }

    /// The node key `k` goes to (0 outside cluster mode).
    fn route(&self, k: u64) -> io::Result<usize> {
        match &self.map {
            Some(m) => m.node_of_key(k),
            None => Ok(0),
        }
    }

    /// Link `n` of connection `i`, connected (and registered) first if it is new.
    fn link(&mut self, i: usize, n: usize) -> io::Result<&mut Link> {
        let addr = self.node_addr(n);
        let c = &mut self.conns[i];
        if c.links.len() <= n {
            c.links.resize_with(n + 1, || None);
        }
        if c.links[n].is_none() {
            let mut stream = connect(addr, self.spec.password.as_deref())?;
            self.poll
                .registry()
                .register(&mut stream, token(i, n), Interest::READABLE)?;
            c.links[n] = Some(Link::new(stream));
        }
        c.links[n]
            .as_mut()
            .ok_or_else(|| io::Error::other("a link not connected"))
    }

    /// Queues request (`key`, `get`) of connection `i` on the link to its node, timed from
    /// `from`; returns that node.
    fn queue(&mut self, i: usize, key: u64, get: bool, from: Instant) -> io::Result<usize> {
        let n = self.route(key)?;
        let spec = self.spec;
        let link = self.link(i, n)?;
        if link.pending.is_empty() {
            link.progress = Instant::now();
        }
        push_request(
            spec.protocol,
            &mut link.out,
            key,
            get,
            spec.value_size.of(key),
        );
        link.pending.push_back(Pending {
            from,
            key,
            get,
            asking: false,
            hops: 0,
        });
        Ok(n)
    }

    /// Writes what link `n` of connection `i` has not yet written, as far as its socket
    /// takes it; waits for writability while some is left.
    fn flush(&mut self, i: usize, n: usize) -> io::Result<()> {
        let Some(Some(l)) = self.conns[i].links.get_mut(n) else {
            return Ok(());
        };
        while l.written < l.out.len() {
            match l.stream.write(&l.out[l.written..]) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::WriteZero,
                        "the server takes no more requests",
                    ))
                }
                Ok(k) => l.written += k,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if !l.want_write {
                        self.poll.registry().reregister(
                            &mut l.stream,
                            token(i, n),
                            Interest::READABLE | Interest::WRITABLE,
                        )?;
                        l.want_write = true;
                    }
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        l.out.clear();
        l.written = 0;
        if l.want_write {
            self.poll
                .registry()
                .reregister(&mut l.stream, token(i, n), Interest::READABLE)?;
            l.want_write = false;
        }
        Ok(())
    }

    /// Reads what has arrived on link `n` of connection `i` and takes the whole replies
    /// in it (until the socket is drained when `drain`, else once unless the read fills
    /// the buffer), then sends the redirected requests again. Returns the instant of the
    /// last read that brought bytes.
    fn read(&mut self, i: usize, n: usize, drain: bool) -> io::Result<Option<Instant>> {
        let node = self.node_addr(n);
        let mut redirects = Vec::new();
        let last = self.read_link(i, n, drain, node, &mut redirects);
        self.redirects
            .extend(redirects.into_iter().map(|(p, r)| (i, p, r)));
        let last = last?;
        self.follow()?;
        Ok(last)
    }

    fn read_link(
        &mut self,
        i: usize,
        n: usize,
        drain: bool,
        node: SocketAddr,
        redirects: &mut Vec<(Pending, Redirect)>,
    ) -> io::Result<Option<Instant>> {
        let spec = self.spec;
        let Loop {
            conns, buf, stats, ..
        } = self;
        let c = &mut conns[i];
        let finished = c.finished;
        let Some(Some(l)) = c.links.get_mut(n) else {
            return Ok(None);
        };
        let mut last = None;
        loop {
            let k = match l.stream.read(buf) {
                Ok(0) if finished && l.pending.is_empty() => return Ok(last),
                Ok(0) => return Err(closed_by_server()),
                Ok(k) => k,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(last),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let now = Instant::now();
            l.progress = now;
            last = Some(now);
            let data = &buf[..k];
            if l.partial.is_empty() {
                let used = take_replies(spec, data, &mut l.pending, stats, now, node, redirects)?;
                l.partial.extend_from_slice(&data[used..]);
            } else {
                l.partial.extend_from_slice(data);
                let used = take_replies(
                    spec,
                    &l.partial,
                    &mut l.pending,
                    stats,
                    now,
                    node,
                    redirects,
                )?;
                l.partial.drain(..used);
            }
            if k < buf.len() && !drain {
                return Ok(last);
            }
        }
    }

    /// Sends the redirected requests to the nodes named: after `-MOVED` the slot's node
    /// changes in the map (which is read again from that node, at most every
    /// [`REFRESH_EVERY`]); after `-ASK` the request goes once, behind `ASKING`.
    fn follow(&mut self) -> io::Result<()> {
        if self.redirects.is_empty() {
            return Ok(());
        }
        let mut dirty = Vec::new();
        for (i, mut p, r) in std::mem::take(&mut self.redirects) {
            p.hops += 1;
            if p.hops > MAX_HOPS {
                return Err(io::Error::other(format!(
                    "{}: more than {MAX_HOPS} redirections (last to {})",
                    crate::key_of(p.key),
                    r.addr
                )));
            }
            let password = self.spec.password.as_deref();
            let map = self
                .map
                .as_mut()
                .ok_or_else(|| io::Error::other("a redirection outside cluster mode"))?;
            let to = map.node(r.addr)?;
            if r.ask {
                self.stats.asks += 1;
            } else {
                self.stats.moved += 1;
                map.set(r.slot, to);
                let now = Instant::now();
                if self
                    .refreshed
                    .is_none_or(|t| now.saturating_duration_since(t) >= REFRESH_EVERY)
                {
                    self.refreshed = Some(now);
                    // A failed refresh keeps the map as the redirection left it.
                    let _ = map.refresh(r.addr, password);
                }
            }
            let to = usize::from(to);
            let spec = self.spec;
            let link = self.link(i, to)?;
            if link.pending.is_empty() {
                link.progress = Instant::now();
            }
            if r.ask {
                link.out.extend_from_slice(ASKING);
                link.pending.push_back(Pending { asking: true, ..p });
            }
            push_request(
                spec.protocol,
                &mut link.out,
                p.key,
                p.get,
                spec.value_size.of(p.key),
            );
            link.pending.push_back(p);
            dirty.push((i, to));
        }
        dirty.sort_unstable();
        dirty.dedup();
        for (i, n) in dirty {
            self.flush(i, n)?;
        }
        Ok(())
    }

    /// Fails the run if a link has awaited a reply for [`IO_TIMEOUT`] without receiving
    /// a byte.
    fn check_progress(&self, now: Instant) -> io::Result<()> {
        let stuck = self
            .conns
            .iter()
            .flat_map(|c| c.links.iter().flatten())
            .any(|l| {
                !l.pending.is_empty() && now.saturating_duration_since(l.progress) > IO_TIMEOUT
            });
        if stuck {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("no reply from the server for {} s", IO_TIMEOUT.as_secs()),
            ));
        }
        Ok(())
    }

    /// Handles the events of one poll: writability, then replies (and, in the closed
    /// loop, a connection's next batch once its replies are all in).
    fn handle(
        &mut self,
        events: &Events,
        closed: Option<(Option<Instant>, &mut usize)>,
    ) -> io::Result<()> {
        let mut closed = closed;
        for ev in events.iter() {
            let (i, n) = (ev.token().0 / MAX_NODES, ev.token().0 % MAX_NODES);
            if ev.is_writable() {
                self.flush(i, n)?;
            }
            if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                let drain = ev.is_read_closed() || ev.is_error();
                let got = self.read(i, n, drain)?;
                if let (Some(now), Some((deadline, active))) = (got, closed.as_mut()) {
                    let c = &self.conns[i];
                    if c.idle() && !c.finished {
                        self.next_batch(i, now, *deadline, active)?;
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_spread_evenly() {
        let counts: Vec<u64> = (0..4).map(|c| share(10, 4, c)).collect();
        assert_eq!(counts, [3, 3, 2, 2]);
        assert_eq!((0..7).map(|c| share(4000, 7, c)).sum::<u64>(), 4000);
    }
}
