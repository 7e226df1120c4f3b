//! One client connection of an event loop: its socket, its input (parsed as it
//! arrives, [`crate::input`]), its pending replies and session, and what the loop does
//! with it each round: read, run every complete request, write, and the checks of the
//! output limits and buffer sizes (see the server's module note for the round).

use std::io::{self, Write};

use mio::{Interest, Token};

use crate::cmd::{exec, table, Ctx, Session};
use crate::config::Config;
use crate::hub::{Msg, Waiter};
use crate::input::{Input, Received};
use crate::limits::OutputWatch;
use crate::resp::{ProtocolError, Writer};
use crate::server::{Env, UNAUTH_MAX_OUTPUT};
use wirespeed_util::time::unix_ms as now_ms;

/// A client connection.
#[derive(Debug)]
pub(crate) struct Conn {
    pub(crate) sock: crate::tls::Sock,
    pub(crate) input: Input,
    pub(crate) output: Vec<u8>,
    pub(crate) session: Session,
    /// Closing after the output is flushed.
    pub(crate) closing: bool,
    /// Registered for writability too (output is waiting).
    pub(crate) writable: bool,
    /// Not yet served: its session takes the settings at its first round.
    pub(crate) fresh: bool,
    /// `client-query-buffer-limit` as of the last round this connection was served.
    pub(crate) max_query_buffer: usize,
    /// The log record the replies in `output` wait for (sequence number; 0: none): they
    /// are sent once the log holds it (written, and synced with `always`).
    pub(crate) wait_seq: u64,
    /// Against `client-output-buffer-limit`.
    pub(crate) watch: OutputWatch,
    /// Passed `client-output-buffer-limit`: closed without sending what is pending.
    pub(crate) killed: bool,
    /// The buffers' capacities as last added to the shared count.
    pub(crate) accounted: usize,
    /// The most bytes `input` and `output` held since the last once-a-second pass
    /// (which gives back capacity far above them).
    pub(crate) input_peak: usize,
    pub(crate) output_peak: usize,
    /// Reading stopped with bytes maybe left in the socket (before AUTH, a whole
    /// request waits to run): read again next round, event or not.
    pub(crate) unread: bool,
    /// The loop's round this connection was last read in.
    pub(crate) read_round: u64,
    /// Blocked (BLPOP and the like) until this deadline (ms since the epoch; 0: no
    /// limit): nothing more of its input runs until it is served or times out.
    pub(crate) blocked: Option<u64>,
    /// Its next request waits for CLIENT PAUSE to end ([`crate::cmd::pause`]).
    pub(crate) paused: bool,
}

/// What the loop's flush left a connection in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flushed {
    /// Open (output written or waiting for the socket).
    Open,
    /// To close (done, the socket failed, or over the output limit).
    Close,
    /// Its replies wait for log records not yet written.
    Held,
}

impl Conn {
    /// Buffers up to this capacity are kept as they are.
    const KEEP_BUFFER: usize = 16 * 1024;

    /// Gives back buffer capacity far above use (Redis's client cron does the same for
    /// its query buffers): a buffer over [`Conn::KEEP_BUFFER`] whose most bytes held
    /// since the last pass are under half its capacity shrinks to that peak (to nothing
    /// when empty), so a client that once sent or was sent a big request keeps nothing
    /// of it a second or two later, busy or idle; the next big request allocates anew.
    pub(crate) fn shrink_idle_buffers(&mut self) {
        fn shrink(buf: &mut Vec<u8>, peak: usize) {
            if buf.capacity() > Conn::KEEP_BUFFER && peak < buf.capacity() / 2 {
                if buf.is_empty() {
                    *buf = Vec::new();
                } else {
                    buf.shrink_to(peak.max(buf.len()));
                }
            }
        }
        self.input.shrink_idle(Conn::KEEP_BUFFER, self.input_peak);
        shrink(&mut self.output, self.output_peak);
        self.input_peak = self.input.pending();
        self.output_peak = self.output.len();
    }

    /// Adds the change of this connection's buffer capacities to the shared count.
    pub(crate) fn account(&mut self, stats: &crate::state::SharedStats) {
        if let Some(m) = &self.session.meta {
            m.omem
                .store(self.output.len(), std::sync::atomic::Ordering::Relaxed);
        }
        let now = self.input.capacity() + self.output.capacity();
        if now != self.accounted {
            stats.client_buffers_changed(self.accounted, now);
            self.accounted = now;
        }
    }

    /// Writes pending output; true when the connection should close.
    pub(crate) fn write_out(&mut self, token: Token, registry: &mio::Registry) -> bool {
        let c = self;
        // TLS records the socket did not take last time go first.
        if c.sock.flush_pending().is_err() {
            return true;
        }
        let mut written = 0;
        while written < c.output.len() {
            match c.sock.write(&c.output[written..]) {
                Ok(0) => return true,
                Ok(k) => written += k,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return true,
            }
        }
        c.output.drain(..written);
        c.session.bulk = c.session.bulk.saturating_sub(written as u64);
        // Ask for writability only while output waits (one epoll_ctl per change, not
        // per batch).
        let want = !c.output.is_empty() || c.sock.pending();
        if want != c.writable {
            let interest = if want {
                Interest::READABLE | Interest::WRITABLE
            } else {
                Interest::READABLE
            };
            if registry.reregister(&mut c.sock, token, interest).is_err() {
                return true;
            }
            c.writable = want;
        }
        c.closing && !want
    }
}

impl Conn {
    /// Reads what is there (no lock held); true when the connection is gone.
    ///
    /// The first request not yet run is parsed as its bytes come (the parser keeps its
    /// place, so this costs only the new bytes, and a big bulk's size is known before
    /// its payload is read). Before AUTH, a header past the limits before AUTH closes
    /// the connection before its payload is buffered, and reading stops once a whole
    /// request waits: it runs first, and its outcome (an AUTH) decides the limits of
    /// the next one; `unread` then asks the loop to read again next round. A
    /// connection before AUTH thus holds at most one request (10 bulks of 16 KiB) and
    /// one read ([`crate::input::READ_SIZE`]).
    pub(crate) fn read(&mut self, config: &Config) -> bool {
        self.unread = false;
        if self.closing {
            // Nothing more will run: leave the rest unread.
            return false;
        }
        let authed = config.acl.open() || self.session.authed;
        loop {
            if !authed && self.input.ready() {
                self.unread = true;
                return false;
            }
            match self.input.read_from(&mut self.sock, self.max_query_buffer) {
                Ok(Received::End) => {
                    // The client finished sending: answer what came, then close.
                    self.closing = true;
                    return false;
                }
                Ok(Received::OverLimit) => {
                    eprintln!(
                        "kvs: client {} closed: query buffer over the limit",
                        self.session.id
                    );
                    Writer::new(&mut self.output, self.session.proto)
                        .error("ERR Protocol error: query buffer limit exceeded");
                    self.closing = true;
                    return false;
                }
                Ok(Received::Bytes { got, asked }) => {
                    if !self.input.ready() {
                        if let Err(e) = self.input.parse(&config.limits, authed) {
                            self.protocol_error(&e);
                            return false;
                        }
                    }
                    if got < asked && self.sock.drained() {
                        // The socket is drained (a short read): data arriving later is
                        // a new edge, so there is no need to pay a read that would
                        // only say WouldBlock (one syscall per request saved).
                        return false;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return false,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return true,
            }
        }
    }

    /// True (and the connection marked killed, its buffers dropped) when its pending
    /// replies pass `client-output-buffer-limit` (Redis closes such a client at once,
    /// without sending what is pending).
    pub(crate) fn over_output_limit(&mut self, config: &Config, now: u64) -> bool {
        if self.killed {
            return true;
        }
        let pending = self.output.len();
        if pending == 0 {
            return false;
        }
        let pending = pending.saturating_sub(self.session.bulk as usize);
        // Before AUTH a client gets only short errors and the replies of AUTH and HELLO:
        // one that piles up unread replies is closed at a fixed bound whatever the
        // setting, so it cannot grow the server's memory through its replies either.
        let unauthed = !config.acl.open() && !self.session.authed;
        let why = if unauthed && pending > UNAUTH_MAX_OUTPUT {
            "before AUTH"
        } else if self.watch.over(self.limit_class(config), pending, now) {
            "over client-output-buffer-limit"
        } else {
            return false;
        };
        eprintln!(
            "kvs: client {} closed: {pending} reply bytes pending, {why}",
            self.session.id
        );
        self.killed = true;
        self.output = Vec::new();
        self.input = Input::default();
        true
    }

    /// The output limit of this client's class: `replica` for a replica's connection
    /// (one that does not keep up with the stream is closed and syncs again), `pubsub`
    /// while it has subscriptions (a subscriber that does not read its messages is
    /// closed at that limit), else `normal`.
    fn limit_class<'c>(&self, config: &'c Config) -> &'c crate::limits::ClassLimit {
        if self.session.replica.is_some() {
            &config.output_limits.replica
        } else if self.session.subs.active() {
            &config.output_limits.pubsub
        } else {
            &config.output_limits.normal
        }
    }

    /// Answers a request that breaks the protocol; the connection closes once the
    /// reply is sent, and nothing more of its input is run.
    fn protocol_error(&mut self, e: &ProtocolError) {
        eprintln!("kvs: client {} closed: {e}", self.session.id);
        Writer::new(&mut self.output, self.session.proto).error(&format!("ERR {e}"));
        self.closing = true;
        self.input.clear();
    }

    /// Runs every complete request in the input, each under the locks of the shards it
    /// touches (taken on first use; the log appended after it, under them). A shard
    /// stays locked for the next requests of the batch until one needs a lower shard,
    /// and every shard is unlocked when the batch is done. Each request is parsed with
    /// the authentication state left by the one before it.
    pub(crate) fn serve(&mut self, env: &mut Env) {
        self.input_peak = self.input_peak.max(self.input.pending());
        self.max_query_buffer = env.config.max_query_buffer;
        let mut closing = false;
        // One clock reading per 64 requests of a batch, not per request (expiry has
        // millisecond granularity; 64 requests take microseconds).
        let mut now = 0;
        let mut served = 0u32;
        let pause = &env.shared.pause;
        if std::mem::take(&mut self.paused) {
            pause.count(false);
        }
        while !closing && self.blocked.is_none() {
            let authed = env.config.acl.open() || self.session.authed;
            match self.input.parse(&env.config.limits, authed) {
                Ok(None) => break,
                Ok(Some(_)) => {
                    let (input, args) = self.input.request();
                    if !args.is_empty() {
                        if served.is_multiple_of(64) {
                            now = now_ms();
                            // Other loops wait at most 64 requests for a kept shard.
                            env.keys.unlock();
                        }
                        served += 1;
                        // Arguments on the stack for the usual few (no allocation per
                        // request); a vector only for long commands.
                        let mut small: [&[u8]; 16] = [&[]; 16];
                        let long: Vec<&[u8]>;
                        let argv: &[&[u8]] = if args.len() <= small.len() {
                            for (slot, r) in small.iter_mut().zip(args.iter()) {
                                *slot = &input[r.clone()];
                            }
                            &small[..args.len()]
                        } else {
                            long = args.iter().map(|r| &input[r.clone()]).collect();
                            &long
                        };
                        if pause.on()
                            && pause.holds(
                                self.session.monitor,
                                || {
                                    crate::cmd::pause::may_write_request(
                                        env.shared,
                                        &self.session,
                                        argv,
                                    )
                                },
                                now_ms(),
                            )
                        {
                            // Left unrun (and unconsumed) until the pause ends.
                            self.paused = true;
                            pause.count(true);
                            break;
                        }
                        // CLIENT REPLY OFF / SKIP: the reply is dropped once made.
                        let muted = self.session.reply_off;
                        let skip = std::mem::take(&mut self.session.skip_next);
                        let mark = self.output.len();
                        let mut w = Writer::new(&mut self.output, self.session.proto);
                        let ran = run_command(env, &mut self.session, argv, now, &mut w);
                        let hub = &env.shared.hub;
                        if !env.effects.is_empty() && hub.tracking.any() {
                            // Client-side caching: the keys it changed, invalidated.
                            hub.tracking
                                .after_effects(hub, self.session.id, &env.effects);
                        }
                        if let Some(m) = &self.session.meta {
                            crate::cmd::clients::touched(
                                m,
                                self.session.proto,
                                self.session.db,
                                now,
                            );
                        }
                        let still_off = self.session.reply_off;
                        let skip = skip && !std::mem::take(&mut self.session.reply_on);
                        let Ran {
                            cmd,
                            blocked,
                            ready,
                        } = ran;
                        // Pub/sub frames ((un)subscribe confirmations) go out whatever
                        // CLIENT REPLY says, in RESP2 and RESP3, as in Redis.
                        let pushes = crate::cmd::pubsub::is_subscription(argv[0]);
                        if (skip || (muted && still_off)) && !pushes {
                            self.output.truncate(mark);
                        }
                        let hub = &env.shared.hub;
                        if let Some(b) = blocked {
                            // Registered while the shards of its keys are still locked:
                            // a write to them comes after and finds it.
                            let waiter = Waiter {
                                argv: b
                                    .argv
                                    .unwrap_or_else(|| argv.iter().map(|a| a.to_vec()).collect()),
                                keys: b.keys,
                                db: self.session.db,
                                proto: self.session.proto,
                                user: self.session.acl.shared_name(),
                            };
                            hub.block(self.session.id, waiter, false);
                            self.blocked = Some(b.deadline);
                        } else if let Some((_, _, deadline)) = self.session.wait_acks {
                            // WAIT: the loop answers once enough replicas acknowledge.
                            self.blocked = Some(deadline);
                        }
                        let seq = env.shared.propagate(&mut env.keys, &mut env.effects);
                        if seq > 0 {
                            env.seq = seq;
                            self.wait_seq = seq;
                        }
                        if hub.any_blocked() {
                            if cmd.is_some_and(|c| c.has(table::WRITE)) {
                                serve_waiters(env, self.session.db, &argv[1..]);
                            }
                            for (db, key) in &ready {
                                serve_waiters(env, *db, &[key]);
                            }
                        }
                        env.served = true;
                        if self.session.quit {
                            closing = true;
                        }
                        if self.over_output_limit(&env.config, now) {
                            closing = true;
                        }
                    }
                    self.input.consume();
                }
                Err(e) => {
                    self.protocol_error(&e);
                    closing = true;
                }
            }
        }
        // The batch is done: no shard stays locked past it.
        env.keys.unlock();
        self.closing |= closing;
        self.output_peak = self.output_peak.max(self.output.len());
        self.input.compact();
    }
}

/// What running one command left for the loop.
struct Ran {
    /// The command's row (None for an unknown name).
    cmd: Option<&'static table::Command>,
    /// A blocking command found nothing: the client waits.
    blocked: Option<crate::cmd::blocking::Blocked>,
    /// Keys written for others (EXEC, a script, MOVE): their waiters are served next.
    ready: Vec<(usize, Vec<u8>)>,
}

/// Runs one command for `session`, its reply written to `w`: the one place a command's
/// context is built. Its effects stay in `env.effects` for the caller to propagate
/// ([`crate::state::Shared::propagate`]) once it has registered a blocked client.
fn run_command(
    env: &mut Env,
    session: &mut Session,
    argv: &[&[u8]],
    now: u64,
    w: &mut Writer,
) -> Ran {
    // Changes are also recorded while keys are watched (they name the keys whose WATCH
    // versions move), for replicas and for keyspace notifications.
    let logging = env.logging
        || env.shared.repl.active()
        || env.shared.watches.any()
        || env.config.notify != 0
        || env.shared.hub.tracking.any();
    let mut ctx = Ctx {
        shared: env.shared,
        keys: &mut env.keys,
        config: &mut env.config,
        session,
        stats: &mut env.stats,
        now,
        effects: &mut env.effects,
        logging,
        can_block: true,
        blocked: None,
        ready: Vec::new(),
    };
    let cmd = exec(&mut ctx, argv, w);
    let ran = Ran {
        cmd,
        blocked: ctx.blocked,
        ready: ctx.ready,
    };
    if session.tracking.is_some() {
        crate::cmd::tracking::after_command(session, argv);
    }
    ran
}

/// Serves the clients blocked on `keys` of database `db` (those a write may have
/// changed): each, first come first served, has its command run again here; its reply
/// goes to its loop. A command that still finds nothing waits again, first in line,
/// and the key's queue stops there. What a served command writes (BLMOVE's
/// destination) may serve others.
pub(crate) fn serve_waiters(env: &mut Env, db: usize, keys: &[&[u8]]) {
    let hub = &env.shared.hub;
    let mut work = hub.waited(db, keys);
    let mut msgs = Vec::new();
    while let Some(key) = work.pop() {
        // Only a value of the type a client waits for wakes it (a string SET on the
        // key leaves a BLPOP waiting, as in Redis).
        let now = now_ms();
        let kind = env
            .keys
            .store_in(db, &key)
            .get(&key, now)
            .map(|e| e.value.type_name());
        // The look is not part of a command: its shard may be let go for a lower one.
        env.keys.end_command();
        // XREADGROUP is woken by any change (its key deleted or of another type, its
        // group destroyed: it then answers the error), as in Redis.
        let wakes = |w: &Waiter| Some(w.wants()) == kind || w.on_any_change();
        while let Some((id, waiter)) = hub.next_waiter(db, &key, wakes) {
            let mut out = Vec::new();
            let mut session = Session {
                id,
                proto: waiter.proto,
                db,
                authed: true,
                ..Session::default()
            };
            // Run again as its user: permissions changed meanwhile apply.
            session.acl.switch(waiter.user.clone());
            let argv: Vec<&[u8]> = waiter.argv.iter().map(Vec::as_slice).collect();
            let ran = run_command(
                env,
                &mut session,
                &argv,
                now_ms(),
                &mut Writer::new(&mut out, waiter.proto),
            );
            if ran.blocked.is_some() {
                hub.block(id, waiter, true);
                break;
            }
            // Client-side caching: its invalidations go after its reply.
            let mut invalidations = Vec::new();
            if !env.effects.is_empty() && hub.tracking.any() {
                hub.tracking
                    .after_effects_into(hub, id, &env.effects, &mut invalidations);
            }
            let seq = env.shared.propagate(&mut env.keys, &mut env.effects);
            if seq > 0 {
                env.seq = seq;
            }
            for k in hub.waited(db, &argv[1..]) {
                if !work.contains(&k) {
                    work.push(k);
                }
            }
            msgs.push((id, Msg::Unblocked { reply: out, seq }));
            msgs.append(&mut invalidations);
        }
    }
    hub.deliver(msgs);
}

/// A loop's connections by token. Tokens are unique numbers the server hands out, so
/// they need no keyed hash: a multiply spreads them (the table is looked up several
/// times per connection per round, and taken out and put back while its requests run).
pub(crate) type Conns =
    std::collections::HashMap<mio::Token, Box<Conn>, std::hash::BuildHasherDefault<TokenHasher>>;

/// The hasher of [`Conns`].
#[derive(Default)]
pub(crate) struct TokenHasher(u64);

impl std::hash::Hasher for TokenHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}
