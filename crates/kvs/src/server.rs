//! The event loops: `threads` mio polls, each owning its connections; one listener,
//! whose accepted connections are dealt round-robin to the loops.
//!
//! The keyspace is striped ([`crate::keyspace`]): S shards, each a table behind its own
//! mutex, and a command locks only the shards it touches, for the time it runs. A GET
//! or SET locks its key's shard alone, so loops serving different keys run in
//! parallel; MGET, MSET, DEL, UNLINK and EXISTS lock the shards of their keys in
//! ascending order (atomic across shards); KEYS, DBSIZE, FLUSHALL, INFO memory and
//! keyspace, and a write over `maxmemory` under allkeys-lru lock every shard; SCAN
//! locks the shard its cursor names and the next ones as it goes.
//!
//! A round of one loop: poll; read every readable connection into its input buffer
//! (no lock held); refresh the loop's copy of the settings if CONFIG SET changed them
//! (one atomic load); run every complete request of every connection that has input,
//! in order, each under its shards' locks, appending replies to the connections'
//! output buffers and the changes to the append-only log (while the shards are still
//! locked, so the log has writes to a key in the order they were made); a step of the
//! expiry sweep on one shard (skipped if busy) and of the log rewrite, if one runs;
//! add the round's counters to the shared ones; commit the log through the round's
//! last record (group commit: with `appendfsync always`, one fdatasync covers every
//! write of the round, and of any other loop that wrote meanwhile, before any reply is
//! sent; a loop whose records another loop's commit covered sends at once, and with
//! `always` a loop also waits for the records it may have read, so no reply shows a
//! write that is not yet on disk); then write each output buffer once (pipelined
//! requests cost one write).
//!
//! A connection whose next request waits for CLIENT PAUSE to end is left in the
//! loop's `paused` list, its request unrun, and served again once the pause is over
//! (the poll sleeps no longer than the pause's end; CLIENT UNPAUSE wakes every loop).
//!
//! A request that breaks the protocol, or an input buffer past
//! `client-query-buffer-limit`, gets one error reply and the connection is closed; the
//! server and the other clients carry on.
//!
//! A failed log commit (a full disk) does not stop the server: the log keeps the
//! records and is retried each round that needs it and every 100 ms; write commands
//! get `-MISCONF` meanwhile; a connection whose replies wait for a record not yet
//! written (`wait_seq`; synced too with `always`) is held, its replies unsent, until a
//! commit covers it, while other connections are served. Replies of reads are not
//! held. Tested by `crates/cli/tests/cli_kvs_diskfull.rs` on a tmpfs it fills.
//!
//! Client buffers: after each command the connection's pending replies are checked
//! against `client-output-buffer-limit` (hard: closed at once without what is pending;
//! soft: closed once over it for its time, also checked once a second for clients that
//! raise no events). Once a second each loop shrinks every buffer whose capacity is
//! over 16 KiB and more than twice the most it held since the last pass; the capacities
//! are summed into `mem_clients_normal`, which counts against `maxmemory`. Tested by
//! `crates/cli/tests/cli_kvs_buffers.rs`.
//!
//! Input ([`crate::input`]): a connection's first request not yet run is parsed as its
//! bytes arrive and the parser keeps its place, so a read costs only its new bytes
//! however long the request (a slow client sending 200,000 arguments piece by piece
//! does not slow the others); a big bulk is read straight into a buffer sized to it.
//! Before AUTH (when the default user needs a password), a request may announce at
//! most 10 arguments and
//! bulks of 16 KiB, checked on the header, and reading stops while a whole request
//! waits to run, so such a connection holds at most about 180 KiB of input (one
//! request of 10 bulks of 16 KiB, and one read of 16 KiB past it).
//!
//! Allocation: none per request on the GET path once a connection's buffers have
//! grown (arguments are ranges of the input buffer, held on the stack for up to 16
//! arguments; replies go into the output buffer; the list of a command's locks is the
//! loop's, reused): `tests/alloc_count.rs` counts the allocations per pipelined GET
//! with a counting global allocator. A SET allocates the stored key and value, which
//! it keeps.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::Duration;

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};

use crate::aof::{Effect, Fsync, LoadReport, OpenError};
use crate::config::Config;
use crate::conn::{Conn, Flushed};
use crate::hub::Msg;
use crate::keyspace::{default_shards, Keys, MAX_SHARDS};
use crate::state::Shared;
use crate::state::Stats;

mod accept;
pub(crate) use accept::adopt;
mod persist;
mod round;
use accept::listen;
pub use accept::somaxconn;
pub(crate) use accept::Acceptor;
use persist::housekeeping;

/// Most unsent reply bytes a client that has not authenticated may have (with
/// `requirepass`); past it the connection is closed.
pub const UNAUTH_MAX_OUTPUT: usize = 64 * 1024;

const LISTENER: Token = Token(0);
/// The TLS port's listening socket (`tls-port`).
const TLS_LISTENER: Token = Token(usize::MAX);
const WAKER: Token = Token(1);
const FIRST_CONN: usize = 2;

pub(crate) use wirespeed_util::time::unix_ms as now_ms;

/// Server settings beyond what commands read.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// What commands see (limits, memory, password, ...).
    pub cmd: Config,
    /// Event loops (at least 1).
    pub threads: usize,
    /// Keyspace shards, rounded up to a power of two (at most 1024); 0: one for one
    /// loop, else four per loop (at least 16).
    pub shards: usize,
    /// The append-only log and its sync policy (none: memory only).
    pub aof: Option<(std::path::PathBuf, Fsync)>,
    /// The primary to follow from the start (`replicaof host port`).
    pub replicaof: Option<(String, u16)>,
    /// Cluster mode (`cluster-enabled yes`): its file (`cluster-config-file`) and
    /// `cluster-node-timeout` in ms.
    pub cluster: Option<(std::path::PathBuf, u64)>,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            cmd: Config::default(),
            threads: 1,
            shards: 0,
            aof: None,
            replicaof: None,
            cluster: None,
        }
    }
}

/// One loop's poll and connections, and the way to hand it new connections.
#[derive(Debug)]
struct Loop {
    poll: Poll,
    /// Boxed, so a connection is cheap to take out while its requests run (the busy
    /// pump is lent the others).
    conns: crate::conn::Conns,
    inbox: Receiver<(TcpStream, u64, bool)>,
    /// Connections blocked on keys (to check their deadlines).
    blocked: Vec<Token>,
    /// Replicas' connections (fed from the replication stream each round).
    replicas: Vec<Token>,
    /// Connections held by CLIENT PAUSE (run again once it ends).
    paused: Vec<Token>,
}

/// Where the acceptor puts a loop's new connections (the loop is woken through the
/// hub, which holds its poll's one waker).
#[derive(Debug)]
struct Mailbox {
    /// A connection, its client id, and whether it came on the TLS port.
    send: Sender<(TcpStream, u64, bool)>,
}

/// What one loop runs commands with: its view of the keyspace, its copy of the
/// settings, its counters, and the round's log position.
#[derive(Debug)]
pub(crate) struct Env<'s> {
    /// The server's state apart from the keys.
    pub(crate) shared: &'s Shared,
    pub(crate) keys: Keys<'s>,
    pub(crate) config: Config,
    /// The shared settings' version `config` was copied at.
    pub(crate) version: u64,
    pub(crate) stats: Stats,
    pub(crate) effects: Vec<Effect>,
    pub(crate) logging: bool,
    /// Sequence number of the round's last log record (0: none).
    pub(crate) seq: u64,
    /// The round ran at least one command.
    pub(crate) served: bool,
}

/// A server bound to its address, ready to [`Server::run`].
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    /// The TLS port's listening socket (`tls-port`).
    tls_listener: Option<TcpListener>,
    shared: Shared,
    loops: Vec<Loop>,
    mailboxes: Vec<Mailbox>,
    next_id: AtomicU64,
    load: LoadReport,
}

/// Why [`Server::bind`] failed.
#[derive(Debug)]
pub enum BindError {
    /// Listening, or setting up the event loops, failed.
    Io(io::Error),
    /// The append-only log would not open (I/O, or a file it refuses to touch).
    Log {
        /// The log's path.
        path: std::path::PathBuf,
        /// Why.
        error: OpenError,
    },
    /// The log holds keys of a database at or above `databases` (it was written by a
    /// server with more): started with fewer, those keys would be dropped.
    Databases {
        /// The log's path.
        path: std::path::PathBuf,
        /// Databases the log needs.
        needed: usize,
        /// Databases configured.
        databases: usize,
    },
    /// The cluster's file (`cluster-config-file`) would not load.
    Cluster(String),
    /// The TLS settings or files are not usable.
    Tls(String),
    /// The ACL users would not load (`user` directives, `aclfile`).
    Acl(String),
    /// The RDB file (`dir`/`dbfilename`) would not load: one line naming what and
    /// where.
    Rdb(String),
}

impl From<io::Error> for BindError {
    fn from(e: io::Error) -> BindError {
        BindError::Io(e)
    }
}

impl std::fmt::Display for BindError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BindError::Io(e) => write!(f, "{e}"),
            BindError::Log { path, error } => {
                write!(f, "{}: {}", path.display(), error.message(path))
            }
            BindError::Databases {
                path,
                needed,
                databases,
            } => write!(
                f,
                "{}: the log holds keys of database {}, but this server has {databases} \
                 databases (start it with --databases {needed} or more)",
                path.display(),
                needed - 1
            ),
            BindError::Cluster(e) => write!(f, "cluster-config-file {e}"),
            BindError::Tls(e) => write!(f, "TLS: {e}"),
            BindError::Acl(e) => write!(f, "ACL: {e}"),
            BindError::Rdb(e) => write!(f, "RDB: {e}"),
        }
    }
}

impl std::error::Error for BindError {}

impl Server {
    /// Binds `addr` (port 0 picks a free port) with `tcp-backlog` and replays the log, if any (see
    /// [`Log::open`] for what it refuses and what it repairs).
    pub fn bind(addr: SocketAddr, mut config: ServerConfig) -> Result<Server, BindError> {
        // The users: `requirepass`, then the `user` directives or the ACL file.
        crate::acl::file::load_at_start(&mut config.cmd).map_err(BindError::Acl)?;
        let tls = crate::tls::Tls::load(&config.cmd.tls).map_err(BindError::Tls)?;
        let listener = listen(addr, config.cmd.tcp_backlog)?;
        let local = listener.local_addr()?;
        let tls_listener = match config.cmd.tls.port {
            0 => None,
            port => Some(
                listen(SocketAddr::new(local.ip(), port), config.cmd.tcp_backlog).map_err(|e| {
                    BindError::Tls(format!("cannot listen on tls-port {port}: {e}"))
                })?,
            ),
        };
        config.threads = config.threads.clamp(1, 1024);
        config.cmd.port = local.port();
        config.cmd.bind = local.ip().to_string();
        config.cmd.threads = config.threads;
        config.cmd.appendonly = config.aof.is_some();
        if let Some((path, policy)) = &config.aof {
            config.cmd.appendfsync = *policy;
            // The log's file as CONFIG GET shows it and CONFIG REWRITE writes it.
            config.cmd.appendfilename = path.to_string_lossy().into_owned();
        }
        let shards = match config.shards {
            // Cluster mode: a slot's keys share a shard (see `route_by_slot`), and
            // GETKEYSINSLOT scans its slot's shard: at least 64 keep that scan short.
            0 if config.cluster.is_some() => default_shards(config.threads).max(64),
            0 => default_shards(config.threads),
            n => n.next_power_of_two().min(MAX_SHARDS),
        };
        let dbs = config.cmd.databases.max(1);
        let persist::Loaded {
            stores,
            log,
            load,
            functions,
            position,
        } = persist::load(
            config.aof.as_ref(),
            &crate::snapshot::path(&config.cmd),
            shards,
            dbs,
            config.cluster.is_some(),
        )?;
        let mut loops = Vec::new();
        let mut mailboxes = Vec::new();
        let mut wakers = Vec::new();
        for _ in 0..config.threads {
            let poll = Poll::new()?;
            wakers.push(Waker::new(poll.registry(), WAKER)?);
            let (send, inbox) = channel();
            loops.push(Loop {
                poll,
                conns: Default::default(),
                inbox,
                blocked: Vec::new(),
                replicas: Vec::new(),
                paused: Vec::new(),
            });
            mailboxes.push(Mailbox { send });
        }
        let mut shared = Shared::new(stores, dbs, config.cmd, log, now_ms());
        shared.scripts.busy.set_pump(crate::busy::pump);
        shared.tls = tls;
        if config.cluster.is_some() {
            shared.keyspace.route_by_slot();
        }
        for argv in &functions {
            // A library that no longer loads (it did when logged) is said, not fatal.
            if let Err(e) = crate::script::library::replay(&shared.scripts.libraries, argv) {
                eprintln!("kvs: a function library in the log did not load: {e}");
            }
        }
        shared.hub = crate::hub::Hub::new(wakers);
        if let Some((file, timeout)) = &config.cluster {
            let port = listener.local_addr()?.port();
            let ip = shared.config().0.bind.clone();
            let cport = shared.config().0.cluster_port;
            let ports = crate::cluster::Ports {
                port,
                tls_port: tls_listener
                    .as_ref()
                    .and_then(|l| l.local_addr().ok())
                    .map_or(0, |a| a.port()),
                cport,
                tls_cluster: shared.config().0.tls.cluster,
                tls_replication: shared.config().0.tls.replication,
            };
            let c = crate::cluster::Cluster::open(file.clone(), &ip, ports, *timeout)
                .map_err(BindError::Cluster)?;
            eprintln!("kvs: cluster mode, node {}", c.my_id());
            shared.cluster = Some(c);
            // A replica in the file follows its primary again.
            if let Some((host, port)) = shared.cluster.as_ref().and_then(|c| c.primary_addr()) {
                crate::repl::replica::start(&shared, host, port);
            }
        }
        if let Some((host, port)) = config.replicaof {
            // A replica back from its log resumes from where the log says it was (a
            // server started as a primary takes writes of its own: it does not).
            if let Some((id, offset)) = position.filter(|(id, _)| !id.is_empty()) {
                let capacity = crate::repl::backlog_capacity(&shared.config().0);
                shared
                    .repl
                    .resume_from(&String::from_utf8_lossy(&id), offset, capacity);
                eprintln!("kvs: the log ends at offset {offset} of the primary's stream");
            }
            crate::repl::replica::start(&shared, host, port);
        }
        Ok(Server {
            listener,
            tls_listener,
            shared,
            loops,
            mailboxes,
            next_id: AtomicU64::new(1),
            load,
        })
    }

    /// What replaying the append-only log found at start.
    pub fn load_report(&self) -> &LoadReport {
        &self.load
    }

    /// Number of keys (expired ones not yet swept included).
    pub fn keys(&self) -> usize {
        self.shared.keyspace.len()
    }

    /// Number of event loops.
    pub fn threads(&self) -> usize {
        self.mailboxes.len()
    }

    /// Number of keyspace shards.
    pub fn shards(&self) -> usize {
        self.shared.keyspace.shards()
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// True when connections start authenticated (the default ACL user is on and takes
    /// any password: no `requirepass`).
    pub fn open(&self) -> bool {
        self.shared.config().0.acl.open()
    }

    /// The TLS port's address (`tls-port`), if any.
    pub fn tls_addr(&self) -> Option<SocketAddr> {
        self.tls_listener.as_ref().and_then(|l| l.local_addr().ok())
    }

    /// Serves until `stop` is set or a client sends SHUTDOWN (checked at least every
    /// 100 ms), on `threads` loops
    /// (this thread runs the first); then syncs the log. A fatal error on any loop (its
    /// poll fails) stops them all; a log that cannot be written is not fatal (see the
    /// module note).
    pub fn run(&mut self, stop: std::sync::Arc<AtomicBool>) -> io::Result<()> {
        let mut loops = std::mem::take(&mut self.loops);
        if loops.is_empty() {
            return Err(io::Error::other("the server has already run"));
        }
        // Every loop listens (a copy of the socket each), so a loop busy with a long
        // script does not keep new clients from being accepted by the others.
        let mut listeners = Vec::with_capacity(loops.len());
        for l in &loops {
            let mut copy = accept::listener_copy(&self.listener)?;
            l.poll
                .registry()
                .register(&mut copy, LISTENER, Interest::READABLE)?;
            let tls = match &self.tls_listener {
                Some(t) => {
                    let mut copy = accept::listener_copy(t)?;
                    l.poll
                        .registry()
                        .register(&mut copy, TLS_LISTENER, Interest::READABLE)?;
                    Some(copy)
                }
                None => None,
            };
            listeners.push((copy, tls));
        }
        let mut rest = loops.split_off(1);
        let mut first = loops.pop().ok_or_else(|| io::Error::other("no loop"))?;
        let stop_all = |mailboxes: &[Mailbox]| {
            stop.store(true, Ordering::Relaxed);
            for i in 0..mailboxes.len() {
                self.shared.hub.wake(i);
            }
        };
        let mut result = std::thread::scope(|scope| {
            let handles: Vec<_> = rest
                .iter_mut()
                .zip(&listeners[1..])
                .enumerate()
                .map(|(i, (l, listener))| {
                    let (shared, stop, mailboxes) = (&self.shared, &stop, &self.mailboxes);
                    let stop_all = &stop_all;
                    let next_id = &self.next_id;
                    scope.spawn(move || {
                        let accept = Acceptor {
                            listener: &listener.0,
                            tls_listener: listener.1.as_ref(),
                            mailboxes,
                            next_id,
                            shared,
                        };
                        let r = l.run(shared, i + 1, stop, Some(accept));
                        if r.is_err() {
                            stop_all(mailboxes);
                        }
                        r
                    })
                })
                .collect();
            // The link to a primary, when REPLICAOF names one.
            let shared = &self.shared;
            let stop_ref = &stop;
            scope.spawn(move || crate::repl::replica::manager(shared, stop_ref));
            // The cluster bus, in cluster mode.
            scope.spawn(move || crate::cluster::bus::run(shared, stop_ref));
            let accept = Acceptor {
                listener: &listeners[0].0,
                tls_listener: listeners[0].1.as_ref(),
                mailboxes: &self.mailboxes,
                next_id: &self.next_id,
                shared: &self.shared,
            };
            let mut result = first.run(&self.shared, 0, &stop, Some(accept));
            // The first loop stops on the flag or on a fatal error: stop the others.
            stop_all(&self.mailboxes);
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
        drop(listeners);
        if let Some(log) = &self.shared.log {
            log.flush_all()?;
        }
        if let Err(e) = crate::snapshot::on_exit(&self.shared) {
            eprintln!("kvs: the final RDB snapshot was not written: {e}");
            if result.is_ok() {
                result = Err(io::Error::other(e));
            }
        }
        result
    }
}

impl Loop {
    fn run(
        &mut self,
        shared: &Shared,
        index: usize,
        stop: &AtomicBool,
        accept: Option<Acceptor>,
    ) -> io::Result<()> {
        let mut events = Events::with_capacity(1024);
        let mut touched: Vec<Token> = Vec::new();
        let mut ready: Vec<Token> = Vec::new();
        let mut closed: Vec<Token> = Vec::new();
        // Connections to read again with no event (their `unread`): this round's and
        // the last round's.
        let mut again: Vec<Token> = Vec::new();
        let mut retry: Vec<Token> = Vec::new();
        let mut round = 0u64;
        let (config, version) = shared.config();
        let mut env = Env {
            shared,
            keys: Keys::new(&shared.keyspace),
            config,
            version,
            stats: Stats::default(),
            effects: Vec::new(),
            logging: shared.log.is_some(),
            seq: 0,
            served: false,
        };
        // The loops sweep different shards.
        let mut sweep = index;
        let mut last_tick = 0u64;
        let mut last_cron = 0u64;
        // Connections whose replies wait for log records a failed commit did not write.
        let mut held: Vec<Token> = Vec::new();
        let mut mail: Vec<(u64, Msg)> = Vec::new();
        // The replication offset as of this loop's last look (to wake the others).
        let mut fed = 0u64;
        while !stop.load(Ordering::Relaxed) && !shared.shutdown.load(Ordering::Relaxed) {
            let wait = if again.is_empty() {
                // Wake for the nearest deadline of a blocked client.
                let now = now_ms();
                let first = self
                    .blocked
                    .iter()
                    .filter_map(|t| self.conns.get(t)?.blocked)
                    .filter(|&d| d != 0)
                    .min();
                let mut ms = first.map_or(100, |d| (d + 1).saturating_sub(now).min(100));
                if !self.paused.is_empty() {
                    ms = ms.min(shared.pause.left(now));
                }
                Duration::from_millis(ms)
            } else {
                Duration::ZERO
            };
            match self.poll.poll(&mut events, Some(wait)) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            touched.clear();
            ready.clear();
            closed.clear();
            round += 1;
            retry.clear();
            std::mem::swap(&mut again, &mut retry);
            for ev in events.iter() {
                match ev.token() {
                    LISTENER => {
                        if let Some(a) = &accept {
                            a.accept(false);
                        }
                    }
                    TLS_LISTENER => {
                        if let Some(a) = &accept {
                            a.accept(true);
                        }
                    }
                    WAKER => {}
                    token => {
                        let Some(c) = self.conns.get_mut(&token) else {
                            continue;
                        };
                        touched.push(token);
                        if ev.is_readable() {
                            c.read_round = round;
                            if c.read(&env.config) {
                                closed.push(token);
                            } else {
                                ready.push(token);
                            }
                            if c.unread {
                                again.push(token);
                            }
                        }
                    }
                }
            }
            // Connections whose reading stopped early last round (no new edge will
            // come for the bytes they left in the socket).
            for &token in &retry {
                let Some(c) = self.conns.get_mut(&token) else {
                    continue;
                };
                if !c.unread || c.read_round == round {
                    continue;
                }
                c.read_round = round;
                touched.push(token);
                if c.read(&env.config) {
                    closed.push(token);
                } else {
                    ready.push(token);
                }
                if c.unread {
                    again.push(token);
                }
            }
            // Connections dealt to this loop by the acceptor.
            adopt(
                &self.inbox,
                self.poll.registry(),
                &mut self.conns,
                shared,
                &mut ready,
            );
            // Messages for this loop's clients, and blocked clients served or timed out.
            self.deliver_mail(
                shared,
                index,
                &mut mail,
                &mut ready,
                &mut touched,
                &mut closed,
            );
            // Clients held by a pause that is over run again.
            if !self.paused.is_empty() && !shared.pause.active(now_ms()) {
                ready.append(&mut self.paused);
            }
            // Settings changed by CONFIG SET on any loop.
            if shared.config_version() != env.version {
                (env.config, env.version) = shared.config();
            }
            env.seq = 0;
            env.served = false;
            // A connection is taken out of the table while its requests run, and the
            // table (with the acceptor's inbox) is lent to the busy pump
            // (`crate::busy`): a script that runs past the busy threshold, the first
            // one after start included, answers the loop's other clients and new ones.
            for token in &ready {
                let Some(mut c) = self.conns.remove(token) else {
                    continue;
                };
                let loan = crate::busy::lend(
                    &mut self.conns,
                    &self.inbox,
                    self.poll.registry(),
                    accept.as_ref(),
                    shared,
                    env.config.limits,
                );
                serve_one(&mut c, &mut env);
                let pumped = loan.end();
                self.conns.insert(*token, c);
                // The pump read and wrote these (and adopted the new ones): read them
                // again next round, flush them this one.
                for t in pumped {
                    if let Some(p) = self.conns.get_mut(&t) {
                        p.unread = true;
                        again.push(t);
                        touched.push(t);
                    }
                }
                // What the requests left it as: closing, blocked, a replica, paused.
                let Some(c) = self.conns.get(token) else {
                    continue;
                };
                if c.killed {
                    closed.push(*token);
                } else {
                    touched.push(*token);
                }
                if c.blocked.is_some() && !self.blocked.contains(token) {
                    self.blocked.push(*token);
                }
                if c.session.replica.is_some() && !self.replicas.contains(token) {
                    self.replicas.push(*token);
                }
                if c.paused && !self.paused.contains(token) {
                    self.paused.push(*token);
                }
            }
            let now = now_ms();
            housekeeping(shared, &mut env.stats, &mut sweep, now);
            if shared.hub.tracking.any() {
                // A lowered `tracking-table-max-keys` applies without waiting for reads.
                let max = env.config.tracking_max_keys;
                shared.hub.tracking.limit(&shared.hub, max);
            }
            if shared.repl.active() {
                let mut more = false;
                self.feed_replicas(
                    shared,
                    index,
                    &mut fed,
                    &mut touched,
                    &mut closed,
                    &mut more,
                );
                if more {
                    // A snapshot being streamed has room to go on: another round at once.
                    shared.hub.wake(index);
                }
            }
            shared.stats.add(&mut env.stats);
            if let Some(log) = &shared.log {
                // Group commit, before any reply of the round is sent: this round's
                // records, and with `always` every record this round's commands may
                // have read (another loop's write is visible once applied), and the
                // records that replies held since a failed commit wait for. A failed
                // commit does not stop the server: the log keeps the records to write
                // again, write commands are refused (MISCONF) until a commit succeeds,
                // and replies that wait for unwritten records stay held (reads go on).
                let mut target = env.seq;
                if env.served && env.config.appendfsync == Fsync::Always && !log.failing() {
                    target = target.max(log.appended());
                }
                for token in &held {
                    if let Some(c) = self.conns.get(token) {
                        target = target.max(c.wait_seq);
                    }
                }
                if target > 0 && !log.covers(target) {
                    // A failure is recorded in the log (its `write_error`) and retried.
                    let _ = log.commit_through(target);
                }
                if index == 0 && now >= last_tick + 100 {
                    // The idle server's periodic sync (everysec), the retry of a failed
                    // commit, and the automatic rewrite.
                    last_tick = now;
                    let _ = log.tick();
                    if log.wants_rewrite() && !log.failing() {
                        shared.rewrite_requested.store(true, Ordering::Relaxed);
                    }
                }
            }
            touched.append(&mut held);
            if now >= last_cron + 1000 {
                // Once a second: give back the buffers idle connections grew.
                // And close the clients past a soft output limit for its time (a
                // client that reads nothing raises no event to be checked at).
                last_cron = now;
                for (token, c) in self.conns.iter_mut() {
                    if c.over_output_limit(&env.config, now) {
                        closed.push(*token);
                        continue;
                    }
                    c.shrink_idle_buffers();
                    c.account(&shared.stats);
                }
            }
            let mut gone = 0;
            for token in &closed {
                if self.close(*token, shared) {
                    gone += 1;
                }
            }
            touched.sort_unstable();
            touched.dedup();
            for &token in &touched {
                match self.flush(token, shared, &env.config, now) {
                    Flushed::Close => {
                        if self.close(token, shared) {
                            gone += 1;
                        }
                    }
                    Flushed::Held => held.push(token),
                    Flushed::Open => {}
                }
            }
            shared.stats.disconnected(gone);
        }
        Ok(())
    }
}

/// The exit status of a server ended by a bug (EX_SOFTWARE).
pub const PANIC_EXIT: i32 = 70;

/// The server's rule for a panic (a bug) on any of its threads: the panic's message,
/// one line saying the server ends, and the process exits with [`PANIC_EXIT`], so a
/// supervisor restarts it. Without it a panicking event loop would die alone and leave
/// a process that accepts connections and never answers them. Acknowledged writes
/// are in the log as its fsync policy promises; nothing else is flushed. Installed by
/// `wirespeed kvs serve` (a process that embeds the server may keep its own rule).
pub fn exit_on_panic() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        previous(info);
        let thread = std::thread::current();
        eprintln!(
            "kvs: a bug ended the server (a panic on thread '{}'); exiting with status {PANIC_EXIT} so that a supervisor restarts it",
            thread.name().unwrap_or("?")
        );
        std::process::exit(PANIC_EXIT);
    }));
}

/// Runs a connection's complete requests (a new connection is authenticated first
/// when no password is set).
fn serve_one(c: &mut Conn, env: &mut Env) {
    if std::mem::take(&mut c.fresh) {
        c.session.authed = env.config.acl.open();
    }
    c.serve(env);
}
