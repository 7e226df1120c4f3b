//! The event loop: a non-blocking listener and its connections on one mio poll.
//!
//! Each readable connection is drained into its input buffer; every complete request in
//! the buffer is executed in order and its reply appended to the output buffer, which
//! is written once for the whole batch (pipelined requests cost one write). A request
//! that breaks the protocol, or an input buffer past `max_query_buffer`, gets one error
//! reply and the connection is closed; the server and the other clients carry on.
//! Between polls (at least every 100 ms) an incremental sweep drops expired keys.
//!
//! Allocation: none per request on the GET path once a connection's buffers have
//! grown (arguments are ranges of the input buffer, held on the stack for up to 16
//! arguments; replies go into the output buffer): `tests/alloc_count.rs` counts 0.001
//! allocations per pipelined GET with a counting global allocator. A SET allocates the
//! stored key and value, which it keeps.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};

use crate::aof::{Aof, Effect, Fsync, LoadReport};
use crate::cmd::{exec, Config, Ctx, Session, Stats};
use crate::resp::{parse, Limits, Writer};
use crate::store::Store;

const LISTENER: Token = Token(0);

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Server settings beyond what commands read.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// What commands see.
    pub cmd: Config,
    /// Request size limits.
    pub limits: Limits,
    /// Largest input buffer of one client before it is disconnected.
    pub max_query_buffer: usize,
    /// The append-only log and its sync policy (none: memory only).
    pub aof: Option<(std::path::PathBuf, Fsync)>,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            cmd: Config::default(),
            limits: Limits::default(),
            max_query_buffer: 1024 * 1024 * 1024,
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
}

/// A server bound to its address, ready to [`Server::run`].
#[derive(Debug)]
pub struct Server {
    poll: Poll,
    listener: TcpListener,
    config: ServerConfig,
    store: Store,
    stats: Stats,
    conns: HashMap<Token, Conn>,
    next_id: u64,
    aof: Option<Aof>,
    effects: Vec<Effect>,
    load: LoadReport,
    /// BGREWRITEAOF was called.
    rewrite_requested: bool,
}

impl Server {
    /// Binds `addr` (port 0 picks a free port).
    pub fn bind(addr: SocketAddr, mut config: ServerConfig) -> io::Result<Server> {
        let poll = Poll::new()?;
        let mut listener = TcpListener::bind(addr)?;
        poll.registry()
            .register(&mut listener, LISTENER, Interest::READABLE)?;
        let local = listener.local_addr()?;
        config.cmd.port = local.port();
        config.cmd.bind = local.ip().to_string();
        config.cmd.max_bulk = config.limits.max_bulk;
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
        Ok(Server {
            poll,
            listener,
            config,
            store,
            stats: Stats {
                started_ms: now_ms(),
                ..Stats::default()
            },
            conns: HashMap::new(),
            next_id: 1,
            aof,
            effects: Vec::new(),
            load,
            rewrite_requested: false,
        })
    }

    /// What replaying the append-only log found at start.
    pub fn load_report(&self) -> &LoadReport {
        &self.load
    }

    /// Number of keys (expired ones not yet swept included).
    pub fn keys(&self) -> usize {
        self.store.len()
    }

    fn close(&mut self, token: Token) {
        if let Some(mut c) = self.conns.remove(&token) {
            let _ = self.poll.registry().deregister(&mut c.sock);
            self.stats.connected -= 1;
        }
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves until `stop` is set (checked at least every 100 ms).
    pub fn run(&mut self, stop: Arc<AtomicBool>) -> io::Result<()> {
        let mut events = Events::with_capacity(1024);
        let mut args: Vec<Range<usize>> = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            match self
                .poll
                .poll(&mut events, Some(Duration::from_millis(100)))
            {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            let mut touched = Vec::new();
            for ev in events.iter() {
                if ev.token() == LISTENER {
                    self.accept()?;
                    continue;
                }
                let token = ev.token();
                if !self.conns.contains_key(&token) {
                    continue;
                }
                if ev.is_readable() && self.serve(token, &mut args) {
                    self.close(token);
                } else {
                    touched.push(token);
                }
            }
            // Group commit: the log of every write of this round reaches the file (and
            // the disk, with appendfsync always) before any of their replies is sent.
            if let Some(aof) = &mut self.aof {
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
            for token in touched {
                if self.flush(token) {
                    self.close(token);
                }
            }
            let removed = self.store.sweep(now_ms(), 64);
            self.stats.expired += removed as u64;
        }
        if let Some(aof) = &mut self.aof {
            aof.commit(true)?;
        }
        Ok(())
    }

    fn accept(&mut self) -> io::Result<()> {
        loop {
            match self.listener.accept() {
                Ok((mut sock, _)) => {
                    let token = Token(self.next_id as usize);
                    let id = self.next_id;
                    self.next_id += 1;
                    let _ = sock.set_nodelay(true);
                    self.poll
                        .registry()
                        .register(&mut sock, token, Interest::READABLE)?;
                    self.stats.connections += 1;
                    self.stats.connected += 1;
                    let session = Session {
                        id,
                        authed: self.config.cmd.requirepass.is_none(),
                        ..Session::default()
                    };
                    self.conns.insert(
                        token,
                        Conn {
                            sock,
                            input: Vec::new(),
                            output: Vec::new(),
                            session,
                            closing: false,
                            writable: false,
                        },
                    );
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // A failed accept (out of descriptors, a reset) must not stop the server.
                Err(e) => {
                    eprintln!("kvs: accept failed: {e}");
                    return Ok(());
                }
            }
        }
    }

    /// Reads what is there and runs every complete request; true to close.
    fn serve(&mut self, token: Token, args: &mut Vec<Range<usize>>) -> bool {
        let Some(c) = self.conns.get_mut(&token) else {
            return true;
        };
        let mut chunk = [0u8; 16 * 1024];
        let mut eof = false;
        loop {
            match c.sock.read(&mut chunk) {
                Ok(0) => {
                    // The client finished sending: answer what came, then close.
                    eof = true;
                    break;
                }
                Ok(k) => {
                    if c.input.len() + k > self.config.max_query_buffer {
                        eprintln!(
                            "kvs: client {} closed: query buffer over the limit",
                            c.session.id
                        );
                        Writer::new(&mut c.output, c.session.proto)
                            .error("ERR Protocol error: query buffer limit exceeded");
                        c.closing = true;
                        break;
                    }
                    c.input.extend_from_slice(&chunk[..k]);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return true,
            }
        }
        let mut at = 0;
        while !c.closing {
            match parse(&c.input[at..], &self.config.limits, args) {
                Ok(None) => break,
                Ok(Some(len)) => {
                    if !args.is_empty() {
                        let input = &c.input[at..at + len];
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
                        let mut w = Writer::new(&mut c.output, c.session.proto);
                        let mut ctx = Ctx {
                            store: &mut self.store,
                            config: &mut self.config.cmd,
                            session: &mut c.session,
                            stats: &mut self.stats,
                            now: now_ms(),
                            effects: &mut self.effects,
                            logging: self.aof.is_some(),
                            rewrite: &mut self.rewrite_requested,
                        };
                        exec(&mut ctx, argv, &mut w);
                        match &mut self.aof {
                            Some(aof) => self.effects.drain(..).for_each(|e| aof.append(&e)),
                            None => self.effects.clear(),
                        }
                        // CONFIG SET may have changed the bulk limit.
                        self.config.limits.max_bulk = self.config.cmd.max_bulk;
                        if c.session.quit {
                            c.closing = true;
                        }
                    }
                    at += len;
                }
                Err(e) => {
                    eprintln!("kvs: client {} closed: {e}", c.session.id);
                    Writer::new(&mut c.output, c.session.proto).error(&format!("ERR {e}"));
                    c.closing = true;
                }
            }
        }
        c.closing |= eof;
        c.input.drain(..at);
        false
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
