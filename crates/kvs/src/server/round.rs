//! An event loop's work besides reading and running requests: feeding replicas,
//! delivering the hub's messages, closing and flushing connections.

use mio::Token;

use super::{now_ms, Loop, FIRST_CONN};
use crate::config::Config;
use crate::conn::Flushed;
use crate::hub::Msg;
use crate::state::Shared;

impl Loop {
    /// Copies what the replication stream gained into this loop's replicas' output (a
    /// replica that fell out of the backlog is closed: it syncs again), and wakes the
    /// other loops when the stream grew since this loop last looked (their replicas
    /// wait otherwise until their next round).
    pub(super) fn feed_replicas(
        &mut self,
        shared: &Shared,
        index: usize,
        fed: &mut u64,
        touched: &mut Vec<Token>,
        closed: &mut Vec<Token>,
        again: &mut bool,
    ) {
        shared.repl.send_getack();
        let offset = shared.repl.offset();
        if offset != *fed {
            *fed = offset;
            for i in 0..shared.hub.loops() {
                if i != index {
                    shared.hub.wake(i);
                }
            }
        }
        self.replicas.retain(|t| self.conns.contains_key(t));
        let generation = shared.repl.generation();
        for &t in &self.replicas {
            let Some(c) = self.conns.get_mut(&t) else {
                continue;
            };
            let Some(sent) = c.session.replica else {
                continue;
            };
            if c.session.replica_gen != generation {
                // The history it followed was replaced: it syncs again.
                closed.push(t);
                continue;
            }
            if c.session.snapshot.is_some() {
                match step_snapshot(shared, c, sent, offset) {
                    Step::Wrote { more } => {
                        touched.push(t);
                        *again |= more;
                    }
                    Step::Waiting => {}
                    Step::Close => closed.push(t),
                }
                continue;
            }
            if sent >= offset {
                // A Redis-protocol replica hears a PING when the stream is silent.
                if let Some(feed) = c.session.resp_feed.as_mut() {
                    if feed.keepalive(wirespeed_util::time::unix_ms(), &mut c.output) {
                        touched.push(t);
                    }
                }
                continue;
            }
            match shared.repl.since(sent) {
                Some(bytes) => {
                    c.session.replica = Some(sent + bytes.len() as u64);
                    shared.repl.sent(c.session.id, sent + bytes.len() as u64);
                    match c.session.resp_feed.as_mut() {
                        Some(feed) => {
                            feed.translate(&bytes, sent, &mut c.output);
                            feed.last_ms = wirespeed_util::time::unix_ms();
                        }
                        None => c.output.extend_from_slice(&bytes),
                    }
                    touched.push(t);
                }
                None => closed.push(t),
            }
        }
    }

    /// Hands this loop's clients what the hub holds for them (pub/sub messages, the
    /// replies of blocked clients served elsewhere), and answers the blocked clients
    /// whose time ran out; a client that can run again joins `ready`.
    pub(super) fn deliver_mail(
        &mut self,
        shared: &Shared,
        index: usize,
        mail: &mut Vec<(u64, Msg)>,
        ready: &mut Vec<Token>,
        touched: &mut Vec<Token>,
        closed: &mut Vec<Token>,
    ) {
        shared.hub.drain(index, mail);
        for (id, msg) in mail.drain(..) {
            let token = Token(FIRST_CONN + id as usize);
            let Some(c) = self.conns.get_mut(&token) else {
                continue;
            };
            match msg {
                Msg::Kill => closed.push(token),
                Msg::Monitor(line) => {
                    c.output.extend_from_slice(&line);
                    touched.push(token);
                }
                m @ (Msg::Invalidate { .. } | Msg::RedirBroken(_)) => {
                    let subscribed = c.session.subs.active();
                    if crate::tracking::encode(&mut c.output, c.session.proto, subscribed, &m) {
                        touched.push(token);
                    }
                }
                Msg::Unblocked { reply, seq } => {
                    c.output.extend_from_slice(&reply);
                    c.wait_seq = c.wait_seq.max(seq);
                    c.blocked = None;
                    ready.push(token);
                    touched.push(token);
                }
                m => {
                    if crate::cmd::pubsub::encode(
                        &mut c.output,
                        c.session.proto,
                        &c.session.subs,
                        &m,
                    ) {
                        touched.push(token);
                    }
                }
            }
        }
        if self.blocked.is_empty() {
            return;
        }
        let now = now_ms();
        let conns = &mut self.conns;
        self.blocked.retain(|token| {
            let Some(c) = conns.get_mut(token) else {
                return false;
            };
            if let Some((offset, n, deadline)) = c.session.wait_acks {
                // WAIT: answered with the count once it is reached or time is up.
                let count = shared.repl.acked(offset);
                if count < n && (deadline == 0 || deadline >= now) {
                    return true;
                }
                c.session.wait_acks = None;
                shared.repl.wait_count(false);
                crate::resp::Writer::new(&mut c.output, c.session.proto).int(count as i64);
                c.blocked = None;
                ready.push(*token);
                touched.push(*token);
                return false;
            }
            match c.blocked {
                None => false,
                // Past it (strictly: `now` is whole milliseconds, truncated).
                Some(d) if d != 0 && d < now => {
                    // Claimed by no one else: its time is up (else its reply is on the way).
                    if let Some(w) = shared.hub.claim(c.session.id) {
                        // Counted once, now that it is answered.
                        if let Some(cmd) = w.argv.first().and_then(|n| crate::cmd::table::lookup(n))
                        {
                            shared.stats.per_command.ran(crate::cmd::table::row(cmd));
                        }
                        c.output
                            .extend_from_slice(&crate::cmd::blocking::timed_out(c.session.proto));
                        c.blocked = None;
                        ready.push(*token);
                        touched.push(*token);
                        return false;
                    }
                    true
                }
                Some(_) => true,
            }
        });
    }

    /// Removes a connection; true when it was there.
    pub(super) fn close(&mut self, token: Token, shared: &Shared) -> bool {
        match self.conns.remove(&token) {
            Some(mut c) => {
                if c.blocked.is_some() {
                    shared.hub.claim(c.session.id);
                }
                if c.session.replica.is_some() {
                    shared.repl.detach(c.session.id);
                }
                if c.session.snapshot.take().is_some() {
                    shared.repl.end_snapshot();
                }
                if c.session.wait_acks.is_some() {
                    shared.repl.wait_count(false);
                }
                c.session.subs.forget(&shared.hub, c.session.id);
                if c.session.monitor {
                    shared.monitors.remove(c.session.id);
                }
                if c.paused {
                    shared.pause.count(false);
                }
                shared.hub.unregister(c.session.id);
                crate::cmd::tracking::forget(&shared.hub, &mut c.session);
                let _ = self.poll.registry().deregister(&mut c.sock);
                if c.killed {
                    shared.stats.output_limit_kill();
                }
                shared.stats.client_buffers_changed(c.accounted, 0);
                true
            }
            None => false,
        }
    }

    /// Writes pending output unless it waits for the log; checks the output limit;
    /// updates the buffers' count.
    pub(super) fn flush(
        &mut self,
        token: Token,
        shared: &Shared,
        config: &Config,
        now: u64,
    ) -> Flushed {
        let Some(c) = self.conns.get_mut(&token) else {
            return Flushed::Open;
        };
        let held = match &shared.log {
            Some(log) => c.wait_seq > 0 && !c.output.is_empty() && !log.covers(c.wait_seq),
            None => false,
        };
        let result = if held {
            Flushed::Held
        } else if c.write_out(token, self.poll.registry()) {
            Flushed::Close
        } else {
            Flushed::Open
        };
        if c.over_output_limit(config, now) {
            return Flushed::Close;
        }
        c.account(&shared.stats);
        result
    }
}

/// What a streamed snapshot's step did.
enum Step {
    /// Wrote to the connection's output; `more` when the snapshot is not done and the
    /// output has room (the loop runs another round at once).
    Wrote { more: bool },
    /// The output is full: the next round after the socket drains.
    Waiting,
    /// The replica cannot be served (it syncs again).
    Close,
}

/// Output a streamed snapshot keeps pending at most (back-pressure).
const SNAPSHOT_OUTPUT: usize = 1 << 20;
/// Keys a loop reads for a snapshot per round at most.
const SNAPSHOT_KEYS: usize = 1024;

/// One round's part of a streamed full sync on `c` (stream sent up to `sent`, the
/// stream now at `offset`): the stream's new bytes wait in the job; the snapshot
/// goes on while the output is short; once whole, its end frame and the waiting
/// stream follow, and the connection becomes a plain replica.
fn step_snapshot(shared: &Shared, c: &mut crate::conn::Conn, sent: u64, offset: u64) -> Step {
    let id = c.session.id;
    let Some(job) = c.session.snapshot.as_mut() else {
        return Step::Waiting;
    };
    if sent < offset {
        match shared.repl.since(sent) {
            Some(bytes) => {
                job.pending.extend_from_slice(&bytes);
                c.session.replica = Some(sent + bytes.len() as u64);
                shared.repl.sent(id, sent + bytes.len() as u64);
            }
            None => return Step::Close,
        }
    }
    if job.swaps != shared.repl.swaps() {
        eprintln!("kvs: replica {id}: SWAPDB during its full sync; it syncs again");
        return Step::Close;
    }
    let limit = shared.config().0.output_limits.replica.hard;
    if limit > 0 && job.pending.len() > limit {
        eprintln!(
            "kvs: replica {id} closed: {} bytes of stream waiting behind its snapshot, over client-output-buffer-limit replica",
            job.pending.len()
        );
        return Step::Close;
    }
    if c.output.len() >= SNAPSHOT_OUTPUT {
        return Step::Waiting;
    }
    let now = now_ms();
    let mut budget = SNAPSHOT_KEYS;
    let out = &mut c.output;
    let start = out.len();
    let mut keys = 0u64;
    while budget > 0 && out.len() < SNAPSHOT_OUTPUT && !(job.started && job.cursor == 0) {
        let step = budget.min(512);
        job.started = true;
        job.cursor =
            super::persist::scan_keyspace(shared, job.cursor, step, now, &mut |db, k, e| {
                keys += 1;
                for rec in crate::aof::dump(k, e) {
                    crate::aof::encode(&crate::aof::Effect::in_db(db, rec), out);
                }
            });
        budget -= step;
    }
    job.keys += keys;
    job.bytes += (out.len() - start) as u64;
    if job.cursor != 0 {
        return Step::Wrote {
            more: out.len() < SNAPSHOT_OUTPUT,
        };
    }
    out.extend_from_slice(&crate::repl::SNAPSHOT_END);
    out.extend_from_slice(&job.pending);
    eprintln!(
        "kvs: replica {id} synced: {} keys, {} bytes of snapshot streamed, then {} bytes of stream",
        job.keys,
        job.bytes,
        job.pending.len()
    );
    c.session.snapshot = None;
    shared.repl.end_snapshot();
    Step::Wrote { more: false }
}
