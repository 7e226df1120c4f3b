//! The event loops: `threads` mio polls, each owning its connections; one listener,
//! whose accepted connections are dealt round-robin to the loops.
//!
//! A round of one loop: poll; read every readable connection into its input buffer
//! (no lock held); then, under the keyspace lock taken once for the round, run every
//! complete request of every connection that has input, in order, appending replies
//! to the connections' output buffers, and commit the append-only log (group commit:
//! with `appendfsync always`, one fdatasync covers every write of the round, before any
//! of their replies is sent); then, without the lock, write each output buffer once
//! (pipelined requests cost one write). The keyspace is one table behind one mutex:
//! the syscalls, which are most of a request's cost, run in parallel on the loops, and
//! the lock is taken once per round, not per request.
//!
//! A request that breaks the protocol, or an input buffer past
//! `client-query-buffer-limit`, gets one error reply and the connection is closed; the
//! server and the other clients carry on. Each round (at least every 100 ms) an
//! incremental sweep drops expired keys and the log rewrite, if one runs, takes a step.
//!
//! Allocation: none per request on the GET path once a connection's buffers have
//! grown (arguments are ranges of the input buffer, held on the stack for up to 16
//! arguments; replies go into the output buffer): `tests/alloc_count.rs` counts the
//! allocations per pipelined GET with a counting global allocator. A SET allocates the
//! stored key and value, which it keeps.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};

use crate::aof::{Aof, Effect, Fsync, LoadReport};
use crate::cmd::{exec, Config, Ctx, Session, Stats};
use crate::resp::{parse, Writer};
use crate::store::Store;

const LISTENER: Token = Token(0);
const WAKER: Token = Token(1);
const FIRST_CONN: usize = 2;

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Server settings beyond what commands read.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// What commands see (limits, memory, password, ...).
    pub cmd: Config,
    /// Event loops (at least 1).
    pub threads: usize,
    /// The append-only log and its sync policy (none: memory only).
    pub aof: Option<(std::path::PathBuf, Fsync)>,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            cmd: Config::default(),
            threads: 1,
            aof: None,
        }
    }
}

#[derive(Debug)]
struct Conn {
    sock: TcpStream,
    input: Vec<u8>,
    output: Vec<u8>,
    session: Session,
    /// Closing after the output is flushed.
    closing: bool,
    /// Registered for writability too (output is waiting).
    writable: bool,
    /// Not yet served: its session takes the settings at its first round.
    fresh: bool,
    /// `client-query-buffer-limit` as of the last round this connection was served.
    max_query_buffer: usize,
}

/// What the loops share: the keyspace and everything commands change, behind one lock.
#[derive(Debug)]
struct Core {
    store: Store,
    config: Config,
    stats: Stats,
    aof: Option<Aof>,
    effects: Vec<Effect>,
    /// BGREWRITEAOF was called.
    rewrite_requested: bool,
}

/// One loop's poll and connections, and the way to hand it new connections.
#[derive(Debug)]
struct Loop {
    poll: Poll,
    conns: HashMap<Token, Conn>,
    inbox: Receiver<(TcpStream, u64)>,
}

#[derive(Debug)]
struct Mailbox {
    send: Sender<(TcpStream, u64)>,
    waker: Waker,
}

/// A server bound to its address, ready to [`Server::run`].
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    core: Arc<Mutex<Core>>,
    loops: Vec<Loop>,
    mailboxes: Vec<Mailbox>,
    next_id: Arc<AtomicU64>,
    load: LoadReport,
}

fn lock(core: &Mutex<Core>) -> MutexGuard<'_, Core> {
    // A panic while holding the lock would be a bug in command code; the keyspace is
    // still consistent at request granularity, so serve on rather than stop.
    core.lock().unwrap_or_else(|p| p.into_inner())
}

impl Server {
    /// Binds `addr` (port 0 picks a free port) and replays the log, if any.
    pub fn bind(addr: SocketAddr, mut config: ServerConfig) -> io::Result<Server> {
        let listener = TcpListener::bind(addr)?;
        let local = listener.local_addr()?;
        config.threads = config.threads.clamp(1, 1024);
        config.cmd.port = local.port();
        config.cmd.bind = local.ip().to_string();
        config.cmd.threads = config.threads;
        config.cmd.appendonly = config.aof.is_some();
        if let Some((_, policy)) = &config.aof {
            config.cmd.appendfsync = *policy;
        }
        let mut store = Store::new();
        let (aof, load) = match &config.aof {
            Some((path, policy)) => {
                let (aof, load) = Aof::open(path, *policy, &mut store, now_ms())?;
                if load.trimmed > 0 {
                    eprintln!(
                        "kvs: warning: {}: torn or corrupt tail, {} bytes trimmed after {} records",
                        path.display(),
                        load.trimmed,
                        load.records
                    );
                }
                (Some(aof), load)
            }
            None => (None, LoadReport::default()),
        };
        let mut loops = Vec::new();
        let mut mailboxes = Vec::new();
        for _ in 0..config.threads {
            let poll = Poll::new()?;
            let waker = Waker::new(poll.registry(), WAKER)?;
            let (send, inbox) = channel();
            loops.push(Loop {
                poll,
                conns: HashMap::new(),
                inbox,
            });
            mailboxes.push(Mailbox { send, waker });
        }
        Ok(Server {
            listener,
            core: Arc::new(Mutex::new(Core {
                store,
                config: config.cmd,
                stats: Stats {
                    started_ms: now_ms(),
                    ..Stats::default()
                },
                aof,
                effects: Vec::new(),
                rewrite_requested: false,
            })),
            loops,
            mailboxes,
            next_id: Arc::new(AtomicU64::new(1)),
            load,
        })
    }

    /// What replaying the append-only log found at start.
    pub fn load_report(&self) -> &LoadReport {
        &self.load
    }

    /// Number of keys (expired ones not yet swept included).
    pub fn keys(&self) -> usize {
        lock(&self.core).store.len()
    }

    /// Number of event loops.
    pub fn threads(&self) -> usize {
        self.mailboxes.len()
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves until `stop` is set (checked at least every 100 ms), on `threads` loops
    /// (this thread runs the first); then syncs the log.
    pub fn run(&mut self, stop: Arc<AtomicBool>) -> io::Result<()> {
        let mut loops = std::mem::take(&mut self.loops);
        if loops.is_empty() {
            return Err(io::Error::other("the server has already run"));
        }
        loops[0]
            .poll
            .registry()
            .register(&mut self.listener, LISTENER, Interest::READABLE)?;
        let mut rest = loops.split_off(1);
        let mut first = loops.pop().ok_or_else(|| io::Error::other("no loop"))?;
        let result = std::thread::scope(|scope| {
            let handles: Vec<_> = rest
                .iter_mut()
                .map(|l| {
                    let (core, stop) = (&self.core, &stop);
                    scope.spawn(move || l.run(core, stop, None))
                })
                .collect();
            let accept = Acceptor {
                listener: &self.listener,
                mailboxes: &self.mailboxes,
                next_id: &self.next_id,
            };
            let mut result = first.run(&self.core, &stop, Some(accept));
            // The first loop stops on the flag or on a fatal error: stop the others.
            stop.store(true, Ordering::Relaxed);
            for m in &self.mailboxes {
                let _ = m.waker.wake();
            }
            for h in handles {
                let r = h
                    .join()
                    .unwrap_or_else(|_| Err(io::Error::other("an event loop panicked")));
                if result.is_ok() {
                    result = r;
                }
            }
            result
        });
        let _ = first.poll.registry().deregister(&mut self.listener);
        let mut core = lock(&self.core);
        if let Some(aof) = &mut core.aof {
            aof.commit(true)?;
        }
        result
    }
}

/// Accepts on the first loop and deals connections round-robin.
struct Acceptor<'a> {
    listener: &'a TcpListener,
    mailboxes: &'a [Mailbox],
    next_id: &'a AtomicU64,
}

impl Loop {
    fn run(
        &mut self,
        core: &Mutex<Core>,
        stop: &AtomicBool,
        accept: Option<Acceptor>,
    ) -> io::Result<()> {
        let mut events = Events::with_capacity(1024);
        let mut args: Vec<Range<usize>> = Vec::new();
        let mut touched: Vec<Token> = Vec::new();
        let mut ready: Vec<Token> = Vec::new();
        let mut closed: Vec<Token> = Vec::new();
        // One read buffer for the loop (zeroed once, not per read).
        let mut chunk = vec![0u8; 16 * 1024];
        while !stop.load(Ordering::Relaxed) {
            match self
                .poll
                .poll(&mut events, Some(Duration::from_millis(100)))
            {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            touched.clear();
            ready.clear();
            closed.clear();
            let mut accepted = 0u64;
            for ev in events.iter() {
                match ev.token() {
                    LISTENER => {
                        if let Some(a) = &accept {
                            accepted += a.accept()?;
                        }
                    }
                    WAKER => {}
                    token => {
                        let Some(c) = self.conns.get_mut(&token) else {
                            continue;
                        };
                        touched.push(token);
                        if ev.is_readable() {
                            if c.read(&mut chunk) {
                                closed.push(token);
                            } else {
                                ready.push(token);
                            }
                        }
                    }
                }
            }
            // Connections dealt to this loop by the acceptor.
            while let Ok((mut sock, id)) = self.inbox.try_recv() {
                let token = Token(FIRST_CONN + id as usize);
                if self
                    .poll
                    .registry()
                    .register(&mut sock, token, Interest::READABLE)
                    .is_err()
                {
                    continue;
                }
                self.conns.insert(
                    token,
                    Conn {
                        sock,
                        input: Vec::new(),
                        output: Vec::new(),
                        session: Session {
                            id,
                            ..Session::default()
                        },
                        closing: false,
                        writable: false,
                        fresh: true,
                        max_query_buffer: Config::default().max_query_buffer,
                    },
                );
                ready.push(token);
            }
            {
                let mut guard = lock(core);
                let k = &mut *guard;
                k.stats.connections += accepted;
                k.stats.connected += accepted;
                for token in &ready {
                    if let Some(c) = self.conns.get_mut(token) {
                        if std::mem::take(&mut c.fresh) {
                            // A new connection: authenticated when no password is set.
                            c.session.authed = k.config.requirepass.is_none();
                        }
                        c.serve(k, &mut args);
                        touched.push(*token);
                    }
                }
                k.round()?;
                for token in &closed {
                    if self.close(*token) {
                        k.stats.connected -= 1;
                    }
                }
            }
            touched.sort_unstable();
            touched.dedup();
            let mut gone = 0;
            for &token in &touched {
                if self.flush(token) && self.close(token) {
                    gone += 1;
                }
            }
            if gone > 0 {
                lock(core).stats.connected -= gone;
            }
        }
        Ok(())
    }

    /// Removes a connection; true when it was there.
    fn close(&mut self, token: Token) -> bool {
        match self.conns.remove(&token) {
            Some(mut c) => {
                let _ = self.poll.registry().deregister(&mut c.sock);
                true
            }
            None => false,
        }
    }

    /// Writes pending output; true when the connection should close.
    fn flush(&mut self, token: Token) -> bool {
        let Some(c) = self.conns.get_mut(&token) else {
            return false;
        };
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
        // Ask for writability only while output waits (one epoll_ctl per change, not
        // per batch).
        let want = !c.output.is_empty();
        if want != c.writable {
            let interest = if want {
                Interest::READABLE | Interest::WRITABLE
            } else {
                Interest::READABLE
            };
            if self
                .poll
                .registry()
                .reregister(&mut c.sock, token, interest)
                .is_err()
            {
                return true;
            }
            c.writable = want;
        }
        c.closing && c.output.is_empty()
    }
}

impl Acceptor<'_> {
    /// Accepts what is waiting; returns how many.
    fn accept(&self) -> io::Result<u64> {
        let mut n = 0;
        loop {
            match self.listener.accept() {
                Ok((sock, _)) => {
                    let _ = sock.set_nodelay(true);
                    let id = self.next_id.fetch_add(1, Ordering::Relaxed);
                    let m = &self.mailboxes[id as usize % self.mailboxes.len()];
                    if m.send.send((sock, id)).is_ok() {
                        let _ = m.waker.wake();
                        n += 1;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // A failed accept (out of descriptors, a reset) must not stop the server.
                Err(e) => {
                    eprintln!("kvs: accept failed: {e}");
                    return Ok(n);
                }
            }
        }
    }
}

impl Core {
    /// The end of a round: group commit of the log, a step of log compaction, a step
    /// of the expiry sweep.
    fn round(&mut self) -> io::Result<()> {
        if let Some(aof) = &mut self.aof {
            if aof.policy() != self.config.appendfsync {
                aof.set_policy(self.config.appendfsync);
            }
            // Group commit: the log of every write of this round reaches the file (and
            // the disk, with appendfsync always) before any of their replies is sent.
            if let Err(e) = aof.commit(false) {
                eprintln!("kvs: fatal: cannot write the append-only log: {e}");
                return Err(e);
            }
            // Log compaction, a few thousand keys per round.
            if std::mem::take(&mut self.rewrite_requested) || aof.wants_rewrite() {
                if let Err(e) = aof.start_rewrite() {
                    eprintln!("kvs: cannot start the log rewrite: {e}");
                }
            }
            match aof.rewrite_step(&self.store, now_ms(), 4096) {
                Ok(true) => eprintln!("kvs: log rewritten: {} bytes", aof.size()),
                Ok(false) => {}
                Err(e) => {
                    // The old log is intact; say so and go on with it.
                    eprintln!("kvs: log rewrite failed, keeping the old log: {e}");
                    aof.abort_rewrite();
                }
            }
        }
        let removed = self.store.sweep(now_ms(), 64);
        self.stats.expired += removed as u64;
        Ok(())
    }
}

impl Conn {
    /// Reads what is there (no lock held); true when the connection is gone.
    fn read(&mut self, chunk: &mut [u8]) -> bool {
        loop {
            match self.sock.read(chunk) {
                Ok(0) => {
                    // The client finished sending: answer what came, then close.
                    self.closing = true;
                    return false;
                }
                Ok(k) => {
                    if self.input.len() + k > self.max_query_buffer {
                        eprintln!(
                            "kvs: client {} closed: query buffer over the limit",
                            self.session.id
                        );
                        Writer::new(&mut self.output, self.session.proto)
                            .error("ERR Protocol error: query buffer limit exceeded");
                        self.closing = true;
                        self.input.clear();
                        return false;
                    }
                    self.input.extend_from_slice(&chunk[..k]);
                    if k < chunk.len() {
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

    /// Runs every complete request in the input (under the lock).
    fn serve(&mut self, k: &mut Core, args: &mut Vec<Range<usize>>) {
        self.max_query_buffer = k.config.max_query_buffer;
        let mut at = 0;
        let mut closing = false;
        // One clock reading per 64 requests of a batch, not per request (expiry has
        // millisecond granularity; 64 requests take microseconds).
        let mut now = 0;
        let mut served = 0u32;
        while !closing {
            match parse(&mut self.input[at..], &k.config.limits, args) {
                Ok(None) => break,
                Ok(Some(len)) => {
                    if !args.is_empty() {
                        if served.is_multiple_of(64) {
                            now = now_ms();
                        }
                        served += 1;
                        let input = &self.input[at..at + len];
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
                        let mut w = Writer::new(&mut self.output, self.session.proto);
                        let mut ctx = Ctx {
                            store: &mut k.store,
                            config: &mut k.config,
                            session: &mut self.session,
                            stats: &mut k.stats,
                            now,
                            effects: &mut k.effects,
                            logging: k.aof.is_some(),
                            rewrite: &mut k.rewrite_requested,
                        };
                        exec(&mut ctx, argv, &mut w);
                        match &mut k.aof {
                            Some(aof) => k.effects.drain(..).for_each(|e| aof.append(&e)),
                            None => k.effects.clear(),
                        }
                        if self.session.quit {
                            closing = true;
                        }
                    }
                    at += len;
                }
                Err(e) => {
                    eprintln!("kvs: client {} closed: {e}", self.session.id);
                    Writer::new(&mut self.output, self.session.proto).error(&format!("ERR {e}"));
                    closing = true;
                }
            }
        }
        self.closing |= closing;
        self.input.drain(..at);
    }
}
