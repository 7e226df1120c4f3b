//! The two schedules a loop runs: closed loop (a batch of `pipeline` requests in flight
//! per connection, the next sent when its replies are in) and open loop (requests due on
//! a fixed-rate timeline, latency measured from the due time, so a slow server's queueing
//! counts).

use super::*;

impl Loop<'_> {
    /// The closed loop: batches of `pipeline` requests on each connection until its quota
    /// or the end of the run.
    pub(super) fn closed(&mut self, start: Instant, shared: &Shared) -> io::Result<()> {
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
            self.handle(&events, Some((deadline, &mut active)))?;
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
    pub(super) fn next_batch(
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
        let count = (c.quota - c.sent).min(spec.pipeline.max(1) as u64);
        c.sent += count;
        let mut nodes = Vec::with_capacity(4);
        for _ in 0..count {
            let (key, get) = self.conns[i].mix.next();
            let n = self.queue(i, key, get, now)?;
            if !nodes.contains(&n) {
                nodes.push(n);
            }
        }
        // Timed from the write.
        let t = Instant::now();
        for l in self.conns[i].links.iter_mut().flatten() {
            for p in l.pending.iter_mut() {
                p.from = t;
            }
            l.progress = t;
        }
        for n in nodes {
            self.flush(i, n)?;
        }
        Ok(())
    }

    /// The open loop: the requests of this loop's connections at their due times (see the
    /// module docs), then their replies.
    pub(super) fn open(&mut self, start: Instant, rate: f64, shared: &Shared) -> io::Result<()> {
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
            for (i, n) in ready.drain(..) {
                self.flush(i, n)?;
            }
            let timeout = match next {
                Some(d) => {
                    // Whole milliseconds that end early enough; none (a poll that returns
                    // at once) near the due time.
                    let left = d.saturating_duration_since(Instant::now());
                    let room = left.saturating_sub(lateness + SPIN).min(CHECK_EVERY);
                    Duration::from_millis(room.as_millis() as u64)
                }
                None if self.conns.iter().all(Conn::idle) => return Ok(()),
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
            self.handle(&events, None)?;
            if next_check <= now {
                self.check_progress(now)?;
                next_check = now + CHECK_EVERY;
            }
        }
    }

    /// Queues the next request of connection `i`, due at `due` (it is `now`); `ready`
    /// collects the links with requests to write.
    fn send(
        &mut self,
        i: usize,
        due: Instant,
        now: Instant,
        rate: f64,
        ready: &mut Vec<(usize, usize)>,
    ) -> io::Result<()> {
        let (key, get) = self.conns[i].mix.next();
        let n = self.route(key)?;
        let link = self.link(i, n)?;
        let outstanding = link.pending.len() as u64;
        if outstanding >= MAX_OUTSTANDING {
            return Err(io::Error::other(Overloaded { rate, outstanding }));
        }
        if link.pending.is_empty() {
            link.progress = now;
        }
        if link.written == link.out.len() {
            ready.push((i, n));
        }
        self.queue(i, key, get, due)?;
        self.conns[i].sent += 1;
        Ok(())
    }
}
