//! Command execution: one request's arguments in, one reply out, against the store and
//! the connection's session. Replies and error texts follow Redis's, so clients and
//! their error handling work unchanged.
//!
//! Every command is one row of [`table::COMMANDS`]: its name, arity, flags (write,
//! readonly, denyoom, ...), key positions and handler. [`exec`] checks a request
//! against its row (unknown command, arity, authentication, ACLs, `maxmemory`, a
//! failing log)
//! in Redis's order and then runs the handler; COMMAND, transactions and the
//! log-failure and memory checks all read the same row, so nothing is listed twice.
//! The handlers live in one file per family, as Redis documents them: [`strings`],
//! [`keys`], [`hashes`], [`sets`], [`lists`], [`zsets`], [`blocking`] (BLPOP and the like), [`pubsub`], [`connection`], [`server`],
//! [`cluster`], [`multi`] (transactions), [`scripting`] (EVAL, FUNCTION), [`monitor`],
//! [`pause`] (CLIENT PAUSE), [`config`] (CONFIG GET/SET over [`crate::config`]) and
//! [`rewrite`] (CONFIG REWRITE), [`acl`] (the ACL command over [`crate::acl`]).

pub mod acl;
pub mod admin;
pub mod bits;
pub mod blocking;
pub mod clients;
pub mod cluster;
pub mod cluster_cmds;
pub mod config;
pub mod connection;
pub mod dbs;
pub mod dump;
pub mod geo;

pub mod hashes;
pub mod hll;
pub mod keys;
pub mod latency;
pub mod lists;
pub mod migrate;
pub mod monitor;
pub mod multi;
pub mod notify;
pub mod pause;
pub mod pubsub;
pub mod replication;
pub mod rewrite;
pub mod scripting;
pub mod server;
pub mod sets;
pub mod sort;
pub mod streams;
pub mod strings;
pub mod table;
pub mod tracking;
pub mod zsets;

use crate::aof::Effect;
use crate::keyspace::Keys;
use crate::resp::{Proto, Writer};
use crate::state::{Shared, Stats};
use crate::value::Value;

use crate::config::Config;
pub use crate::glob::glob;
pub use cluster::key_slot;
pub use server::rss_bytes;
use table::{Command, DENYOOM, NO_AUTH, WRITE};

/// Per-connection state.
#[derive(Debug, Default)]
pub struct Session {
    /// Client id (CLIENT ID).
    pub id: u64,
    /// Reply encoding.
    pub proto: Proto,
    /// Passed AUTH (or no password is set).
    pub authed: bool,
    /// CLIENT SETNAME.
    pub name: Option<Vec<u8>>,
    /// QUIT was received: close after the reply.
    pub quit: bool,
    /// The selected database (SELECT).
    pub db: usize,
    /// MULTI / WATCH state.
    pub tx: multi::Tx,
    /// Pub/sub subscriptions.
    pub subs: pubsub::Subs,
    /// CLIENT REPLY OFF: replies are dropped.
    pub reply_off: bool,
    /// CLIENT REPLY SKIP: the next command's reply is dropped.
    pub skip_next: bool,
    /// CLIENT REPLY ON just ran: its reply is sent even if a SKIP preceded it.
    pub reply_on: bool,
    /// A replica's connection after PSYNC: the stream's offset sent to it so far.
    pub replica: Option<u64>,
    /// Bytes of a snapshot taken at once still in the output (not counted against
    /// `client-output-buffer-limit replica`: Redis does not count its RDB either).
    pub bulk: u64,
    /// A full sync being streamed to this replica's connection.
    pub snapshot: Option<Box<crate::repl::SnapshotJob>>,
    /// The port a replica said it listens on (REPLCONF listening-port).
    pub replica_port: u16,
    /// REPLCONF rdb-only 1: this connection wants the RDB snapshot alone (SYNC or
    /// PSYNC answer it, then close), as `redis-cli --rdb` asks.
    pub rdb_only: bool,
    /// REPLCONF capa wirespeed: a wirespeed replica (this server's own stream).
    pub wirespeed_replica: bool,
    /// A Redis-protocol replica (SYNC, or PSYNC without `capa wirespeed`): its stream
    /// is translated to Redis's commands (see [`crate::repl::resp`]).
    pub resp_feed: Option<Box<crate::repl::resp::RespFeed>>,
    /// The stream's generation when this replica attached (see
    /// [`crate::repl::Repl::generation`]): it is dropped once that moves.
    pub replica_gen: u64,
    /// READONLY (cluster mode): reads of the primary's slots are served by a replica.
    pub cluster_readonly: bool,
    /// ASKING was sent (cluster mode): the next command may use a slot being imported.
    pub asking: bool,
    /// The connection came on the TLS port (cluster mode answers with TLS ports).
    pub tls: bool,
    /// Blocked in WAIT: for this many replicas to acknowledge this offset, until this
    /// deadline (ms since the epoch, 0: none).
    pub wait_acks: Option<(u64, usize, u64)>,
    /// In MONITOR mode.
    pub monitor: bool,
    /// What CLIENT LIST shows of this connection (None for a session without one).
    pub meta: Option<std::sync::Arc<crate::hub::ClientMeta>>,
    /// CLIENT TRACKING ON: its settings.
    pub tracking: Option<Box<crate::tracking::Mode>>,
    /// The ACL user it runs as (AUTH, HELLO AUTH; `default` until then).
    pub acl: crate::acl::Principal,
}

/// Everything a command runs against.
#[derive(Debug)]
pub struct Ctx<'a, 's> {
    /// The server's state apart from the keys (settings, the log, replication, ...).
    pub shared: &'s Shared,
    /// The keyspace: the shards this command has locked, locking more on first use
    /// (see [`crate::keyspace`]); the server releases them after the command.
    pub keys: &'a mut Keys<'s>,
    /// The loop's copy of the settings (CONFIG SET changes the shared ones and this).
    pub config: &'a mut Config,
    /// The caller's session.
    pub session: &'a mut Session,
    /// The loop's counters, not yet added to the shared ones.
    pub stats: &'a mut Stats,
    /// Current time, ms since the epoch.
    pub now: u64,
    /// Changes made, for the append-only log.
    pub effects: &'a mut Vec<Effect>,
    /// Whether to record effects (false without a log: no copies of values).
    pub logging: bool,
    /// A blocking command may wait (false inside EXEC and scripts, and when a blocked
    /// client's command is run again for it: then it answers at once).
    pub can_block: bool,
    /// Set by a blocking command that found nothing: the client waits.
    pub blocked: Option<blocking::Blocked>,
    /// Keys (with their database) that a command run for others (EXEC, a script, MOVE)
    /// wrote, beyond its own arguments: clients blocked on them are served after it.
    pub ready: Vec<(usize, Vec<u8>)>,
}

impl Ctx<'_, '_> {
    /// The string at `key` (a copy): None when absent, the WRONGTYPE error when the key
    /// holds another type.
    pub(crate) fn string(&mut self, key: &[u8]) -> Result<Option<Vec<u8>>, &'static str> {
        match self.keys.get(key, self.now).map(|e| &e.value) {
            None => Ok(None),
            Some(Value::Str(v)) => Ok(Some(v.clone())),
            Some(_) => Err(WRONGTYPE),
        }
    }

    /// Records a change to the selected database for the log (and WATCH).
    #[inline]
    pub(crate) fn push_effect(&mut self, e: Effect) {
        let db = self.keys.db();
        self.effects.push(Effect::in_db(db, e));
    }

    /// Logs `key`'s current state: its value and deadline, or its absence.
    pub(crate) fn log_key(&mut self, key: &[u8]) {
        if !self.logging {
            return;
        }
        let dump = match self.keys.get(key, self.now) {
            Some(e) if matches!(e.value, Value::Str(_)) => crate::aof::dump(key, e),
            Some(e) => {
                // A collection: its whole content replaces whatever the key held.
                let mut dump = vec![Effect::Del { key: key.to_vec() }];
                dump.extend(crate::aof::dump(key, e));
                dump
            }
            None => vec![Effect::Del { key: key.to_vec() }],
        };
        for e in dump {
            self.push_effect(e);
        }
    }

    /// Logs a change to a collection as the write command that makes it (replayed by
    /// [`crate::aof::apply`]); `args` is the canonical command, key second.
    pub(crate) fn log_cmd(&mut self, args: &[&[u8]]) {
        if self.logging {
            self.push_effect(Effect::Cmd(args.iter().map(|a| a.to_vec()).collect()));
        }
    }

    pub(crate) fn log_del(&mut self, key: &[u8]) {
        if self.logging {
            self.push_effect(Effect::Del { key: key.to_vec() });
        }
    }

    pub(crate) fn log_deadline(&mut self, key: &[u8], at: u64) {
        if self.logging {
            self.push_effect(Effect::Deadline {
                key: key.to_vec(),
                at,
            });
        }
    }

    /// Runs `f` with database `db` selected, then selects the caller's again.
    pub(crate) fn in_db<R>(&mut self, db: usize, f: impl FnOnce(&mut Self) -> R) -> R {
        let mine = self.keys.db();
        self.keys.select(db);
        let r = f(self);
        self.keys.select(mine);
        r
    }
}

pub(crate) fn lower(a: &[u8]) -> String {
    String::from_utf8_lossy(a).to_ascii_lowercase()
}

pub(crate) fn eq(a: &[u8], b: &str) -> bool {
    a.eq_ignore_ascii_case(b.as_bytes())
}

pub(crate) fn parse_i64(a: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(a).ok()?;
    // Redis's string2ll: no sign but '-', no leading zero, no "-0".
    if s.is_empty()
        || s.starts_with('+')
        || (s.len() > 1 && s.starts_with('0'))
        || s.starts_with("-0")
    {
        return if s == "0" { Some(0) } else { None };
    }
    s.parse().ok()
}

/// Constant-time equality of two byte strings (the length is not secret).
pub(crate) fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

pub(crate) const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";

pub(crate) const WRONGTYPE: &str =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
pub(crate) const NOT_INT: &str = "ERR value is not an integer or out of range";
pub(crate) const SYNTAX: &str = "ERR syntax error";

/// A HELP reply: `lines`, then the HELP entry every container command ends with.
pub(crate) fn help(w: &mut Writer, lines: &[&str]) {
    w.array(lines.len() + 2);
    for l in lines.iter().chain(&["HELP", "    Print this help."]) {
        w.simple(l);
    }
}

pub(crate) fn arity(w: &mut Writer, name: &[u8]) {
    w.error(&format!(
        "ERR wrong number of arguments for '{}' command",
        lower(name)
    ));
}

/// Runs one command; `args` is non-empty. The checks run in Redis's order: a name it
/// does not know, then the argument count, then authentication, then the user's ACL
/// permissions (`crate::acl`), then (outside a
/// transaction) `maxmemory` and a failing log; inside MULTI the command is queued.
/// Returns the command's row (None for a name it does not know), looked up once.
pub fn exec(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) -> Option<&'static table::Command> {
    ctx.keys.select(ctx.session.db);
    let at = w.position();
    let Some(cmd) = table::lookup(args[0]) else {
        multi::flag_error(ctx);
        unknown(args, w);
        count_error(ctx, w, at);
        return None;
    };
    let seen = ctx.stats.errors_seen;
    checked(ctx, cmd, args, w);
    if ctx.stats.errors_seen == seen && w.byte_at(at) == Some(b'-') {
        // Refused before it ran (arity, authentication, memory, ...).
        count_error(ctx, w, at);
    }
    Some(cmd)
}

/// Counts the error reply written at `at` (INFO errorstats).
fn count_error(ctx: &mut Ctx, w: &Writer, at: usize) {
    if let Some(code) = w.error_code(at) {
        ctx.shared.stats.error(code);
        ctx.stats.errors_seen += 1;
    }
}

/// [`exec`] once the command is known.
fn checked(ctx: &mut Ctx, cmd: &'static table::Command, args: &[&[u8]], w: &mut Writer) {
    if let Some(m) = &ctx.session.meta {
        // CLIENT LIST shows the command a client runs, or ran last.
        m.last_cmd
            .store(table::row(cmd) + 1, std::sync::atomic::Ordering::Relaxed);
    }
    if !cmd.arity_ok(args.len()) {
        multi::flag_error(ctx);
        ctx.stats.per_command.rejected(table::row(cmd));
        return arity(w, args[0]);
    }
    let needs_auth = !ctx.session.authed && !ctx.config.acl.open();
    if needs_auth && !cmd.has(NO_AUTH) {
        ctx.stats.per_command.rejected(table::row(cmd));
        return w.error("NOAUTH Authentication required.");
    }
    // Redis's no-multi commands: never queued (a SHUTDOWN in EXEC would stop the
    // server with the transaction half told).
    if ctx.session.tx.queuing() && matches!(cmd.name, "save" | "shutdown" | "sync" | "psync") {
        multi::flag_error(ctx);
        ctx.stats.per_command.rejected(table::row(cmd));
        return w.error("ERR Command not allowed inside a transaction");
    }
    // ACLs: one comparison for a user that may run anything (see `crate::acl`).
    if !crate::acl::open(ctx) {
        if let Err(e) = crate::acl::admit(ctx, cmd, args) {
            multi::flag_error(ctx);
            ctx.stats.per_command.rejected(table::row(cmd));
            return w.error(&e);
        }
    }
    if let Some(e) = monitor::refused(ctx, cmd) {
        return w.error(e);
    }
    if ctx.session.subs.active() && ctx.session.proto == Proto::Resp2 && !pubsub::allowed(cmd) {
        return w.error(&format!(
            "ERR Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context",
            cmd.name
        ));
    }
    if let Some(e) = crate::cluster::route::check(ctx, cmd, args) {
        multi::flag_error(ctx);
        ctx.stats.per_command.rejected(table::row(cmd));
        return w.error(&e);
    }
    if let Err(e) = admit(ctx, cmd) {
        multi::flag_error(ctx);
        ctx.stats.per_command.rejected(table::row(cmd));
        return w.error(&e);
    }
    if stale(ctx, cmd) {
        ctx.stats.per_command.rejected(table::row(cmd));
        if cmd.name == "exec" && ctx.session.tx.queuing() {
            ctx.session.tx.end();
            return w.error(&format!(
                "EXECABORT Transaction discarded because of: {MASTERDOWN}"
            ));
        }
        multi::flag_error(ctx);
        return w.error(MASTERDOWN);
    }
    if let Err(e) = scripting::wait_busy(ctx, cmd, args) {
        // An EXEC refused ends its transaction (EXECABORT, as Redis answers and as the
        // busy pump answers on the script's own loop); anything else refused inside
        // MULTI makes EXEC discard the transaction, as in Redis.
        if cmd.name == "exec" && ctx.session.tx.queuing() {
            ctx.session.tx.end();
            return w.error(&format!("EXECABORT Transaction discarded because of: {e}"));
        }
        multi::flag_error(ctx);
        return w.error(&e);
    }
    if ctx.session.tx.queuing() && !multi::runs_now(cmd) {
        return multi::queue(ctx, cmd, args, w);
    }
    let start = ctx.effects.len();
    run(ctx, cmd, args, w);
    multi::touch(ctx, start);
}

/// A stale replica's refusal (Redis's text).
pub(crate) const MASTERDOWN: &str =
    "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";

/// `replica-serve-stale-data no` on a replica whose link to its primary is down: a
/// command without the STALE flag is refused, and so is EXEC of a transaction that
/// queued one (it may have been queued while the link was up), as in Redis.
fn stale(ctx: &Ctx, cmd: &Command) -> bool {
    let repl = &ctx.shared.repl;
    if !repl.is_replica()
        || !ctx
            .config
            .compat
            .get("replica-serve-stale-data")
            .is_some_and(|v| v.eq_ignore_ascii_case("no"))
        || repl
            .link()
            .is_some_and(|l| l.up.load(std::sync::atomic::Ordering::Acquire))
    {
        return false;
    }
    if cmd.name == "exec" && ctx.session.tx.queuing() {
        ctx.session.tx.queued_without(table::STALE)
    } else {
        !cmd.has(table::STALE)
    }
}

/// Runs a command that passed its checks, counting it (a command that blocked is
/// counted when it is answered).
pub(crate) fn run(ctx: &mut Ctx, cmd: &table::Command, args: &[&[u8]], w: &mut Writer) {
    let at = w.position();
    let slow = ctx.config.slowlog_slower_than;
    // The latency monitor's threshold, ms (0: off).
    let spikes = ctx.shared.latency.threshold();
    // Below the default slow-log threshold, or with the latency monitor on, every
    // command is timed, exactly.
    let weight = if spikes > 0 || (0..10_000).contains(&slow) {
        Some(1)
    } else {
        ctx.stats.per_command.timing(cmd.has(table::FAST))
    };
    let t = weight.map(|_| std::time::Instant::now());
    let start = ctx.effects.len();
    let watched = ctx.shared.monitors.any();
    if watched {
        monitor::feed(ctx, cmd, args, true);
    }
    (cmd.handler)(ctx, args, w);
    if watched {
        monitor::feed(ctx, cmd, args, false);
    }
    let (expired, gone, created) = ctx.keys.take_events();
    ctx.stats.expired += expired;
    if !gone.is_empty() && ctx.logging && ctx.shared.repl.keep_bits() == crate::store::KEEP_EXPIRED
    {
        // Replicas remove a key when this server does (see `HIDE_EXPIRED`): each key
        // that expired as the command ran goes to the stream as a DEL, before the
        // command's own changes.
        let dels = gone
            .iter()
            .map(|(db, k)| Effect::in_db(*db, Effect::Del { key: k.to_vec() }));
        ctx.effects.splice(start..start, dels);
    }
    if !gone.is_empty() || !created.is_empty() {
        notify::key_events(&ctx.shared.hub, ctx.config.notify, gone, created);
    }
    if ctx.blocked.is_some() {
        return;
    }
    if ctx.config.notify != 0 && cmd.has(WRITE) {
        notify::after(ctx, cmd.name, args, start);
    }
    if ctx.config.notify & notify::KEY_MISS != 0 && cmd.has(table::READONLY) {
        notify::key_misses(ctx, cmd, args);
    }
    if ctx.session.tracking.is_some() && cmd.has(table::READONLY) {
        tracking::track_read(ctx, cmd, args);
    }
    ctx.stats.commands += 1;
    let elapsed = t.map(|t| t.elapsed());
    let took = elapsed.map(|d| d.as_micros() as u64);
    let usec = took.unwrap_or(0) * weight.unwrap_or(0);
    if ctx.config.latency_tracking {
        let id = crate::acl::catalog::catalog().call(cmd, args).0;
        let ns = elapsed.map(|d| d.as_nanos().min(u64::MAX as u128) as u64);
        ctx.stats.histograms.record(id, ns);
    }
    if let Some(d) = elapsed.filter(|_| spikes > 0) {
        let event = if cmd.has(table::FAST) {
            crate::latency::FAST_COMMAND
        } else {
            crate::latency::COMMAND
        };
        ctx.shared
            .latency
            .add_if_needed(event, d.as_millis() as u64);
    }
    if let Some(us) = took {
        // The threshold after the command: `CONFIG SET slowlog-log-slower-than -1` is
        // not logged itself, as in Redis.
        let slow = ctx.config.slowlog_slower_than;
        if slow >= 0 && us >= slow as u64 && !cmd.has(table::SKIP_SLOWLOG) {
            let max = ctx.config.slowlog_max_len;
            let who = match &ctx.session.meta {
                Some(m) => (
                    m.addr.clone(),
                    ctx.session
                        .name
                        .as_deref()
                        .map(|n| String::from_utf8_lossy(n).into_owned())
                        .unwrap_or_default(),
                ),
                None => (String::new(), String::new()),
            };
            ctx.shared.slowlog.record(args, us, max, ctx.now, who);
        }
    }
    let failed = w.byte_at(at) == Some(b'-');
    if failed {
        count_error(ctx, w, at);
    } else if cmd.has(WRITE) {
        ctx.stats.dirty += 1;
    }
    ctx.stats.per_command.ran(table::row(cmd), usec, failed);
}

/// The checks a command passes before it runs (or is queued): `maxmemory` for a
/// command that may add memory, and a log that cannot be written for a write (and for
/// PING, as Redis does, so a monitor sees the fault); reads go on. A write already
/// applied when a commit failed keeps its reply until the log holds it (see the
/// server's round). The error is the reply.
pub(crate) fn admit(ctx: &mut Ctx, cmd: &Command) -> Result<(), String> {
    admit_with(ctx, cmd, true)
}

/// [`admit`], with `maxmemory` applied only when `memory` (a script flagged
/// `allow-oom` runs its commands without it).
pub(crate) fn admit_with(ctx: &mut Ctx, cmd: &Command, memory: bool) -> Result<(), String> {
    if cmd.has(WRITE) {
        let repl = &ctx.shared.repl;
        if repl.is_replica() {
            return Err("READONLY You can't write against a read only replica.".into());
        }
        let min = ctx.config.min_replicas;
        if min > 0 && repl.good_replicas(ctx.now, ctx.config.min_replicas_lag) < min as usize {
            return Err("NOREPLICAS Not enough good replicas to write.".into());
        }
    }
    if memory && !within_memory(ctx, cmd) {
        return Err("OOM command not allowed when used memory > 'maxmemory'.".into());
    }
    if let Some(log) = ctx.shared.log.as_ref().filter(|l| l.failing()) {
        if cmd.has(WRITE) || cmd.name == "ping" {
            if let Some(why) = log.write_error() {
                return Err(why);
            }
        }
    }
    Ok(())
}

/// Applies maxmemory before a command: false when it must be refused (noeviction,
/// or a `volatile-*` policy with no key with a deadline left); with an evicting
/// policy, locks every shard and evicts (and logs the evictions) until under the limit.
fn within_memory(ctx: &mut Ctx, cmd: &Command) -> bool {
    !cmd.has(DENYOOM) || evict(ctx)
}

/// Applies `maxmemory` now: true when within it (after evicting, under an evicting
/// policy), false when over it with noeviction or with nothing left to evict.
pub(crate) fn evict(ctx: &mut Ctx) -> bool {
    let max = ctx.config.maxmemory;
    if max == 0 {
        return true;
    }
    // The clients' buffers and the scripts count against the limit, as in Redis: what
    // is left for the dataset is the limit less what they hold (nothing when they hold
    // more).
    let held = ctx.shared.stats.client_buffers() + ctx.shared.scripts.memory();
    let within = |dataset: usize| dataset.saturating_add(held) <= max;
    if within(ctx.keys.memory()) {
        return true;
    }
    match ctx.config.policy.pick() {
        None => false,
        Some((pick, volatile)) => {
            // The latency monitor's `eviction-cycle` (all of it) and `eviction-del`
            // (each key).
            let shared = ctx.shared;
            let latency = &shared.latency;
            let cycle = latency.start();
            ctx.keys.lock_every_db();
            while !within(ctx.keys.memory()) {
                let del = latency.start();
                match ctx.keys.evict(pick, volatile, 5, ctx.now) {
                    Some((db, k)) => {
                        ctx.in_db(db, |ctx| {
                            ctx.log_del(&k);
                            notify::evicted(ctx, &k);
                        });
                        ctx.stats.evicted += 1;
                        latency.end(del, crate::latency::EVICTION_DEL);
                    }
                    None => break,
                }
            }
            latency.end(cycle, crate::latency::EVICTION_CYCLE);
            within(ctx.keys.memory())
        }
    }
}

fn unknown(args: &[&[u8]], w: &mut Writer) {
    let mut msg = format!(
        "ERR unknown command '{}', with args beginning with: ",
        String::from_utf8_lossy(args[0])
    );
    for a in args.iter().skip(1).take(20) {
        msg.push_str(&format!("'{}' ", String::from_utf8_lossy(a)));
    }
    w.error(&msg);
}

/// Applies a logged collection command (an [`Effect::Cmd`]) to a store: replay of the
/// log. Unknown or malformed commands change nothing (the log only holds what the
/// handlers wrote).
pub fn replay(store: &mut crate::store::Store, argv: &[Vec<u8>], now: u64) {
    let Some((name, rest)) = argv.split_first() else {
        return;
    };
    if rest.is_empty() {
        return;
    }
    let name = lower(name);
    let args: Vec<&[u8]> = rest.iter().map(Vec::as_slice).collect();
    match name.as_str() {
        "hset" | "hdel" => hashes::replay_hash(store, &name, &args, now),
        "sadd" | "srem" => sets::replay_set(store, &name, &args, now),
        "zadd" | "zrem" => zsets::replay_zset(store, &name, &args, now),
        "lpush" | "rpush" | "lpop" | "rpop" | "lset" | "lrem" | "ltrim" | "linsert" => {
            lists::replay_list(store, &name, &args, now)
        }
        n if n.starts_with('x') => streams::replay(store, n, &args, now),
        _ => {}
    }
}

/// Runs `f` on the collection at `key`; when the key is absent, on a new one made by
/// `new`, stored if `f` left something in it. WRONGTYPE comes from `f`.
pub(crate) fn upsert(
    store: &mut crate::store::Store,
    key: &[u8],
    now: u64,
    new: fn() -> Value,
    f: impl Fn(&mut Value) -> Result<usize, &'static str>,
) -> Result<usize, &'static str> {
    if let Some(r) = store.update(key, now, &f) {
        return r;
    }
    let mut v = new();
    let r = f(&mut v)?;
    if !v.is_empty_collection() {
        store.put(key, v, 0, now);
    }
    Ok(r)
}

/// Runs `f` on the collection of type `K` at `key`: `Ok(None)` when absent, WRONGTYPE
/// when the key holds another type.
pub(crate) fn read<K: crate::value::Kind, R>(
    ctx: &mut Ctx,
    key: &[u8],
    f: impl FnOnce(&K) -> R,
) -> Result<Option<R>, &'static str> {
    match ctx.keys.get(key, ctx.now) {
        None => Ok(None),
        Some(e) => K::of(&e.value).map(f).map(Some).ok_or(WRONGTYPE),
    }
}

/// Removes `members` from the collection of type `K` at `key` (the key goes when it is
/// left empty): how many were there, or WRONGTYPE.
pub(crate) fn remove_members<K: crate::value::Members>(
    store: &mut crate::store::Store,
    key: &[u8],
    members: &[&[u8]],
    now: u64,
) -> Result<usize, &'static str> {
    store
        .update(key, now, |v| match K::of_mut(v) {
            Some(c) => Ok(members.iter().filter(|m| c.remove_member(m)).count()),
            None => Err(WRONGTYPE),
        })
        .unwrap_or(Ok(0))
}
