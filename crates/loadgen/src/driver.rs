//! The connection loops of a run: each worker thread drives its connections with one
//! mio poll, closed loop (a batch in flight per connection) or open loop (requests sent
//! on a schedule, latency measured from the due time), checking every reply against
//! the one its request must get.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, Mutex, OnceLock};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

use crate::dist::{KeySampler, XorShift64};
use crate::wire::{bad_reply, closed_by_server, frame, push_reply, push_request};
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
}

/// One connection of a loop.
pub(crate) struct Conn {
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
    pub(crate) fn new(
        stream: TcpStream,
        spec: &LoadSpec,
        keys: KeySampler,
        index: u64,
        quota: u64,
    ) -> Conn {
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
pub(crate) fn drive(
    spec: &LoadSpec,
    conns: Vec<Conn>,
    rate: Option<f64>,
    shared: &Shared,
) -> Option<Tally> {
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
    fn requests_are_spread_evenly() {
        let counts: Vec<u64> = (0..4).map(|c| share(10, 4, c)).collect();
        assert_eq!(counts, [3, 3, 2, 2]);
        assert_eq!((0..7).map(|c| share(4000, 7, c)).sum::<u64>(), 4000);
    }
}
