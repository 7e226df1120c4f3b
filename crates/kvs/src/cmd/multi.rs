//! Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH, with Redis's semantics.
//!
//! - After MULTI a connection's commands are checked (unknown name, arity, `maxmemory`,
//!   a failing log) and queued with the reply `+QUEUED`; a refused one is answered
//!   with its error and marks the transaction, which EXEC then discards
//!   (`-EXECABORT`). EXEC, DISCARD, MULTI, WATCH and QUIT run at once.
//! - EXEC locks every shard of the keyspace before it runs the first queued command
//!   and holds them until the last one is done, so no command of another client (on
//!   any event loop) runs in between; the replies go out as one array, and every
//!   change the transaction made is written to the log as one record
//!   ([`Effect::Batch`]), so a crash never replays half of it.
//! - WATCH: each watched key has a version in a registry the event loops share
//!   ([`crate::state::watches::Watches`]); every change to a key (what the log records: a write, a delete,
//!   an eviction, a deadline, FLUSHALL of a key that existed) moves the version of a
//!   watched key. EXEC compares the versions under the shards' locks and, if any moved
//!   or a watched key's deadline passed since it was watched, runs nothing and replies
//!   with the null array. Without watchers a write pays one atomic load.

use std::sync::Arc;

use super::table::{Command, DENYOOM, WRITE};
use super::Ctx;
use crate::aof::Effect;
use crate::resp::Writer;
use crate::state::watches::{Watched, Watches};

/// A key and its database.
type DbKey = (usize, Vec<u8>);

#[derive(Debug)]
struct Queued {
    cmd: &'static Command,
    args: Vec<Vec<u8>>,
}

/// A connection's transaction state.
#[derive(Debug, Default)]
pub struct Tx {
    queued: Option<Vec<Queued>>,
    queued_bytes: usize,
    refused: bool,
    watched: Vec<Watched>,
    registry: Option<Arc<Watches>>,
}

impl Tx {
    /// Whether a command queued so far lacks `flag` (EXEC on a stale replica refuses a
    /// transaction that holds one without STALE).
    pub(crate) fn queued_without(&self, flag: u32) -> bool {
        self.queued
            .as_ref()
            .is_some_and(|q| q.iter().any(|c| !c.cmd.has(flag)))
    }

    /// Marks the transaction being queued (if any) as refused.
    pub fn refuse(&mut self) {
        if self.queuing() {
            self.refused = true;
        }
    }

    /// Starts a transaction (MULTI); false when one is already being queued.
    pub(crate) fn begin(&mut self) -> bool {
        if self.queuing() {
            return false;
        }
        self.queued = Some(Vec::new());
        true
    }

    /// True between MULTI and EXEC/DISCARD.
    pub fn queuing(&self) -> bool {
        self.queued.is_some()
    }

    fn unwatch(&mut self) {
        if let Some(r) = &self.registry {
            r.unwatch(&self.watched);
        }
        self.watched.clear();
    }

    /// Whether a queued command passes `test`, given its arguments (CLIENT PAUSE
    /// WRITE holds such an EXEC).
    pub(crate) fn writes(&self, test: impl Fn(&[&[u8]]) -> bool) -> bool {
        self.queued.iter().flatten().any(|q| {
            let args: Vec<&[u8]> = q.args.iter().map(Vec::as_slice).collect();
            test(&args)
        })
    }

    /// Ends the transaction (if any) and unwatches every key.
    pub(crate) fn end(&mut self) {
        self.queued = None;
        self.queued_bytes = 0;
        self.refused = false;
        self.unwatch();
    }
}

impl Drop for Tx {
    fn drop(&mut self) {
        self.unwatch();
    }
}

/// True for the commands that run at once inside MULTI instead of being queued.
pub fn runs_now(cmd: &Command) -> bool {
    matches!(
        cmd.name,
        "exec" | "discard" | "multi" | "watch" | "quit" | "reset"
    )
}

/// Marks the transaction being queued (if any) as refused: EXEC will discard it.
pub fn flag_error(ctx: &mut Ctx) {
    ctx.session.tx.refuse();
}

/// Queues a checked command inside MULTI.
pub fn queue(ctx: &mut Ctx, cmd: &'static Command, args: &[&[u8]], w: &mut Writer) {
    let tx = &mut ctx.session.tx;
    let bytes: usize = args.iter().map(|a| a.len() + 16).sum();
    // What a transaction holds is bounded as one request is.
    if tx.queued_bytes + bytes > ctx.config.max_query_buffer {
        tx.refused = true;
        return w.error("ERR transaction too large (over client-query-buffer-limit)");
    }
    tx.queued_bytes += bytes;
    if let Some(q) = tx.queued.as_mut() {
        q.push(Queued {
            cmd,
            args: args.iter().map(|a| a.to_vec()).collect(),
        });
    }
    w.simple("QUEUED");
}

pub(crate) const MULTI_NESTED: &str = "ERR MULTI calls can not be nested";
pub(crate) const DISCARD_WITHOUT: &str = "ERR DISCARD without MULTI";

/// MULTI.
pub fn multi(ctx: &mut Ctx, _args: &[&[u8]], w: &mut Writer) {
    if !ctx.session.tx.begin() {
        return w.error(MULTI_NESTED);
    }
    w.simple("OK");
}

/// DISCARD.
pub fn discard(ctx: &mut Ctx, _args: &[&[u8]], w: &mut Writer) {
    let tx = &mut ctx.session.tx;
    if !tx.queuing() {
        return w.error(DISCARD_WITHOUT);
    }
    tx.end();
    w.simple("OK");
}

/// WATCH key [key ...].
pub fn watch(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    if ctx.session.tx.queuing() {
        return w.error("ERR WATCH inside MULTI is not allowed");
    }
    let registry = ctx.shared.watches.clone();
    let now = ctx.now;
    ctx.keys.lock_keys(args[1..].iter().copied());
    let db = ctx.keys.db();
    for key in &args[1..] {
        if ctx
            .session
            .tx
            .watched
            .iter()
            .any(|x| x.db == db && x.key == *key)
        {
            continue;
        }
        let expires_at = ctx.keys.get(key, now).map_or(0, |e| e.expires_at);
        let version = registry.watch(db, key);
        ctx.session.tx.watched.push(Watched {
            db,
            key: key.to_vec(),
            version,
            expires_at,
        });
    }
    ctx.session.tx.registry = Some(registry);
    w.simple("OK");
}

/// UNWATCH.
pub fn unwatch(ctx: &mut Ctx, _args: &[&[u8]], w: &mut Writer) {
    ctx.session.tx.unwatch();
    w.simple("OK");
}

/// EXEC: runs the queued commands as one unit (see the module notes).
pub fn exec(ctx: &mut Ctx, _args: &[&[u8]], w: &mut Writer) {
    let tx = &mut ctx.session.tx;
    let Some(queued) = tx.queued.take() else {
        return w.error("ERR EXEC without MULTI");
    };
    let refused = tx.refused;
    let watched = std::mem::take(&mut tx.watched);
    let registry = ctx.shared.watches.clone();
    // Whatever happens next, the transaction ends here and its keys are not watched.
    let _unwatch = Unwatch(&registry, &watched);
    tx.end();
    if refused {
        return w.error("EXECABORT Transaction discarded because of previous errors.");
    }
    // From here to the end no other command touches the keyspace.
    ctx.keys.lock_atomic();
    let now = ctx.now;
    let expired = watched
        .iter()
        .any(|x| x.expires_at != 0 && x.expires_at <= now);
    if expired || !registry.unchanged(&watched) {
        return w.null_array();
    }
    // The checks a write passes before it runs, again at EXEC (memory or the log may
    // have failed since it was queued): one refusal discards the transaction.
    for q in queued
        .iter()
        .filter(|q| q.cmd.has(WRITE) || q.cmd.has(DENYOOM))
    {
        if let Err(why) = super::admit(ctx, q.cmd) {
            return w.error(&format!(
                "EXECABORT Transaction discarded because of: {why}"
            ));
        }
    }
    let start = ctx.effects.len();
    w.array(queued.len());
    // Blocking commands answer at once inside a transaction.
    ctx.can_block = false;
    for q in &queued {
        let argv: Vec<&[u8]> = q.args.iter().map(Vec::as_slice).collect();
        // The user's ACLs again: they may have changed since the command was queued.
        if !crate::acl::open(ctx) {
            if let Err(e) = crate::acl::admit_queued(ctx, q.cmd, &argv) {
                w.error(&e);
                continue;
            }
        }
        super::run(ctx, q.cmd, &argv, w);
        if q.cmd.has(WRITE) && ctx.shared.hub.any_blocked() {
            // Clients blocked on what the transaction wrote are served after it.
            let db = ctx.keys.db();
            ctx.ready
                .extend(q.args.iter().skip(1).map(|a| (db, a.clone())));
        }
    }
    touch(ctx, start);
    if ctx.effects.len() - start > 1 {
        // A script's record inside the transaction joins it (one level of batch).
        let mut batch = Vec::with_capacity(ctx.effects.len() - start);
        for e in ctx.effects.drain(start..) {
            match e {
                Effect::Batch(inner) => batch.extend(inner),
                e => batch.push(e),
            }
        }
        ctx.effects.push(Effect::Batch(batch));
    }
}

/// Unwatches keys when dropped.
struct Unwatch<'a>(&'a Watches, &'a [Watched]);

impl Drop for Unwatch<'_> {
    fn drop(&mut self) {
        self.0.unwatch(self.1);
    }
}

/// Moves the versions of the watched keys that the effects from `start` on changed.
pub fn touch(ctx: &mut Ctx, start: usize) {
    let registry = &ctx.shared.watches;
    if !registry.any() || ctx.effects.len() <= start {
        return;
    }
    registry.touch(
        ctx.effects[start..]
            .iter()
            .filter_map(|e| Some((e.db(), e.key()?))),
    );
}

/// Before FLUSHALL, FLUSHDB and SWAPDB: for each `(db, with)`, database `db` is
/// emptied and, when `with` is given, gets that database's keys. Moves the versions of
/// the watched keys of `db` that exist there or in `with` (a watched key that exists in
/// neither, or whose deadline passed, is not changed, as in Redis).
pub fn touch_dbs(ctx: &mut Ctx, dbs: &[(usize, Option<usize>)]) {
    let registry = ctx.shared.watches.clone();
    if !registry.any() {
        return;
    }
    let all: Vec<usize> = dbs
        .iter()
        .flat_map(|&(d, w)| [Some(d), w])
        .flatten()
        .collect();
    ctx.keys.lock_dbs(&all);
    let now = ctx.now;
    let hit: Vec<DbKey> = registry
        .watched()
        .into_iter()
        .filter(|(db, k)| {
            dbs.iter().any(|&(d, with)| {
                d == *db
                    && (ctx.keys.store_in(d, k).contains(k, now)
                        || with.is_some_and(|w| ctx.keys.store_in(w, k).contains(k, now)))
            })
        })
        .collect();
    registry.touch(hit.iter().map(|(db, k)| (*db, k.as_slice())));
}
