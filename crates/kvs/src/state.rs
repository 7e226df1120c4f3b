//! The server's state apart from the keys: what the event loops share besides the
//! [`Keyspace`] (settings, counters, the log, replication, cluster, the hub of
//! inboxes, scripts, the slow log, monitors, pause), and the one place a command's
//! effects leave it ([`Shared::propagate`]).
//!
//! Settings: one [`Config`] behind a mutex with a version number; each loop keeps a copy
//! and refreshes it when the version moved (checked once per round, one atomic load).
//! Counters: each loop counts in a plain [`Stats`] and adds it to the
//! shared atomic [`SharedStats`] once per round, before it sends the round's replies.
//!
//! Propagation: a command only changes keys and records its effects; when it ends, the
//! loop calls [`Shared::propagate`] while the command's shards are still locked: the
//! effects go to the replicas' stream and are appended to the log (lock order: shards,
//! then the log), so two loops writing one key reach the log and the replicas in the
//! order they changed it. Keyspace events are published from the same point of the
//! loop (`crate::cmd::notify`).

pub mod cmdstats;
pub mod histogram;
pub mod monitors;
pub mod pause;
pub mod slowlog;
mod stats;
pub mod watches;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

pub use stats::{SharedStats, Stats};

use crate::aof::{Effect, Log};
use crate::config::Config;
use crate::keyspace::{Keys, Keyspace};
use crate::store::Store;

/// What the loops share: the keyspace and the server's other state.
#[derive(Debug)]
pub struct Shared {
    /// The keys.
    pub keyspace: Keyspace,
    config: Mutex<Config>,
    /// Bumped by every change of `config`.
    version: AtomicU64,
    /// INFO counters.
    pub stats: SharedStats,
    /// The append-only log, if any.
    pub log: Option<Log>,
    /// BGREWRITEAOF was called: the next round starts a rewrite.
    pub rewrite_requested: AtomicBool,
    /// Keys watched by connections (WATCH), with their versions.
    pub watches: std::sync::Arc<watches::Watches>,
    /// SHUTDOWN was called: the loops stop (within 100 ms), the log is flushed.
    pub shutdown: AtomicBool,
    /// The loops' inboxes, pub/sub subscribers and blocked clients.
    pub hub: crate::hub::Hub,
    /// The RDB snapshot's saves (LASTSAVE, BGSAVE, the `save` schedule).
    pub rdb: std::sync::Arc<crate::snapshot::RdbState>,
    /// The slow log (SLOWLOG).
    pub slowlog: slowlog::SlowLog,
    /// The script cache, the function libraries and the running script.
    pub scripts: crate::script::Scripts,
    /// Replication: the role, the stream to replicas, the link to a primary.
    pub repl: crate::repl::Repl,
    /// Cluster mode's state (`cluster-enabled yes`), None otherwise.
    pub cluster: Option<crate::cluster::Cluster>,
    /// TLS (`tls-port`, `tls-replication`), None without.
    pub tls: Option<crate::tls::Tls>,
    /// The clients in MONITOR mode.
    pub monitors: monitors::Monitors,
    /// CLIENT PAUSE.
    pub pause: pause::Pause,
    /// ACL LOG and the denial counters (the users are in the settings).
    pub acl_log: crate::acl::Log,
    /// The latency monitor (LATENCY; `latency-monitor-threshold`), shared with the log.
    pub latency: std::sync::Arc<crate::latency::Monitor>,
}

impl Shared {
    /// The server's state over `shards` stores for `dbs` databases (see
    /// [`Keyspace::new`]).
    pub fn new(
        shards: Vec<Store>,
        dbs: usize,
        config: Config,
        log: Option<Log>,
        started_ms: u64,
    ) -> Shared {
        let repl = crate::repl::Repl::default();
        let latency = std::sync::Arc::new(crate::latency::Monitor::new(config.latency_threshold));
        let log = log.map(|l| l.with_latency(latency.clone()));
        let keyspace = Keyspace::new(
            shards,
            dbs,
            crate::config::notify::keep(config.notify),
            repl.keep_cell(),
        );
        keyspace.set_lfu(config.lfu());
        Shared {
            keyspace,
            config: Mutex::new(config),
            version: AtomicU64::new(1),
            stats: SharedStats::new(started_ms),
            log,
            rewrite_requested: AtomicBool::new(false),
            watches: Default::default(),
            shutdown: AtomicBool::new(false),
            hub: crate::hub::Hub::new(Vec::new()),
            rdb: std::sync::Arc::new(crate::snapshot::RdbState::new(started_ms)),
            slowlog: Default::default(),
            scripts: Default::default(),
            repl,
            cluster: None,
            tls: None,
            monitors: Default::default(),
            pause: Default::default(),
            acl_log: Default::default(),
            latency,
        }
    }

    /// Propagates a command's `effects` (and empties them): to the replicas' stream on
    /// a primary with replicas, and to the log, while the command's shards are still
    /// locked in `keys` (so writes to one key leave in the order they were made).
    /// Returns the sequence number of its last log record (0 when it logged nothing).
    /// Then ends the command in `keys` (its shards stay locked for the batch).
    #[inline]
    pub fn propagate(&self, keys: &mut Keys<'_>, effects: &mut Vec<Effect>) -> u64 {
        self.propagate_to(keys, effects, !self.repl.is_replica())
    }

    /// [`Shared::propagate`], to this server's own stream when `stream` (a primary's
    /// writes; a Redis primary's commands run on a replica, whose own stream is its
    /// own: see [`crate::repl::from_redis`]).
    pub fn propagate_to(
        &self,
        keys: &mut Keys<'_>,
        effects: &mut Vec<Effect>,
        stream: bool,
    ) -> u64 {
        let mut seq = 0;
        if !effects.is_empty() {
            if stream && self.repl.active() {
                if self.repl.snapshotting() {
                    // A snapshot being streamed may hold a change or not: the stream
                    // carries the state it left where the step is not idempotent.
                    let mut state = Vec::with_capacity(effects.len());
                    for e in effects.iter() {
                        match absolute(keys, e) {
                            Some(s) => state.extend(s),
                            None => state.push(e.clone()),
                        }
                    }
                    self.repl.feed(&state);
                } else {
                    self.repl.feed(effects);
                }
            }
            match &self.log {
                Some(log) => seq = log.append_with(effects, |e| absolute(keys, e)),
                None => effects.clear(),
            }
        }
        keys.end_command();
        seq
    }

    /// The first records of a log rewrite: what the log holds besides keys (the
    /// function libraries).
    pub fn rewrite_preamble(&self) -> Vec<Effect> {
        crate::script::library::records(&self.scripts.libraries)
    }

    /// The first records of a log rewrite: [`Shared::rewrite_preamble`] and, on a
    /// replica, its place in the primary's stream (read once changes go to the
    /// rewrite's tail: a change it counts that the snapshot misses is in the tail).
    pub fn log_preamble(&self) -> Vec<Effect> {
        let mut out = self.rewrite_preamble();
        if self.repl.is_replica() {
            out.push(Effect::Position {
                replid: self.repl.replid().into_bytes(),
                offset: self.repl.offset(),
            });
        }
        out
    }

    /// The settings' version (changes whenever CONFIG SET applies).
    #[inline]
    pub fn config_version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// The settings and their version.
    pub fn config(&self) -> (Config, u64) {
        let c = self.config.lock().unwrap_or_else(|p| p.into_inner());
        (c.clone(), self.version.load(Ordering::Acquire))
    }

    /// Changes the settings: `f` edits a copy of the current ones (all or nothing: an
    /// error leaves them as they were); the result is published to every loop, and a
    /// changed `appendfsync` applies to the log at once. Returns the new settings.
    pub fn update_config<E>(
        &self,
        f: impl FnOnce(&mut Config) -> Result<(), E>,
    ) -> Result<Config, E> {
        let mut c = self.config.lock().unwrap_or_else(|p| p.into_inner());
        let mut next = c.clone();
        f(&mut next)?;
        if let Some(log) = &self.log {
            if next.appendfsync != c.appendfsync {
                log.set_policy(next.appendfsync);
            }
        }
        self.keyspace
            .set_keep(crate::config::notify::keep(next.notify));
        self.keyspace.set_lfu(next.lfu());
        self.latency.set_threshold(next.latency_threshold);
        *c = next.clone();
        self.version.fetch_add(1, Ordering::Release);
        Ok(next)
    }
}

/// A change that is not the same applied twice (a list push, pop, trim, removal or
/// insertion, which the log records as the command) as the state it left, read from the
/// shards the command holds: the key's removal and, if it is there, its whole value
/// (see [`Log::append_with`]); a transaction's changes likewise. None for changes
/// already absolute.
fn absolute(keys: &Keys<'_>, e: &Effect) -> Option<Vec<Effect>> {
    const RELATIVE: &[&str] = &["lpush", "rpush", "lpop", "rpop", "lrem", "linsert", "ltrim"];
    match e.inner() {
        Effect::Batch(b) => {
            let mut out = Vec::with_capacity(b.len());
            let mut changed = false;
            for x in b {
                match absolute(keys, x) {
                    Some(state) => {
                        changed = true;
                        out.extend(state);
                    }
                    None => out.push(x.clone()),
                }
            }
            changed.then(|| vec![Effect::Batch(out)])
        }
        Effect::Cmd(argv) if argv.len() >= 2 => {
            let name = std::str::from_utf8(&argv[0]).ok()?.to_ascii_lowercase();
            if !RELATIVE.contains(&name.as_str()) {
                return None;
            }
            let (db, key) = (e.db(), &argv[1]);
            let held = keys.peek_held(db, key)?;
            let mut state = vec![Effect::Del { key: key.clone() }];
            if let Some(entry) = held {
                state.extend(crate::aof::dump(key, entry));
            }
            Some(state.into_iter().map(|x| Effect::in_db(db, x)).collect())
        }
        _ => None,
    }
}
