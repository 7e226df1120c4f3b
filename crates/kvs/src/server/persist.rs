//! What persists across restarts: loading the keyspace from the append-only log at
//! start ([`load`]), and the upkeep at the end of each round ([`housekeeping`]: a step
//! of the expiry sweep and of a log rewrite).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use super::{now_ms, BindError};
use crate::aof::{apply, Effect, Fsync, LoadReport, Log};
use crate::keyspace::{scan_shards, shard_for};
use crate::state::Shared;
use crate::state::Stats;
use crate::store::Store;

/// What the log held.
pub(super) struct Loaded {
    /// The keyspace's stores, database 0's shards first.
    pub stores: Vec<Store>,
    /// The log, open for appending.
    pub log: Option<Log>,
    /// What opening it found.
    pub load: LoadReport,
    /// The changes to the function libraries, in order (`FUNCTION ...`).
    pub functions: Vec<Vec<Vec<u8>>>,
    /// The last replication position the log holds (a replica's), if any.
    pub position: Option<(Vec<u8>, u64)>,
}

/// The stores of `dbs` databases of `shards` shards each, filled from the log at
/// `aof` (opened, or created) when there is one (keys in shards by hash slot when
/// `by_slot`: cluster mode), and the log's function records.
pub(super) fn load(
    aof: Option<&(PathBuf, Fsync)>,
    rdb: &Path,
    shards: usize,
    dbs: usize,
    by_slot: bool,
) -> Result<Loaded, BindError> {
    let mut stores: Vec<Store> = (0..shards * dbs).map(|_| Store::new()).collect();
    let mut functions = Vec::new();
    let mut position = None;
    let (log, load) = match aof {
        Some((path, policy)) => {
            let now = now_ms();
            // The highest database a record names (more than `databases`: refused).
            let mut top = 0;
            let (log, load) = Log::open(path, *policy, |e| {
                let db = e.db();
                top = top.max(db);
                if let Effect::Function(argv) = e {
                    functions.push(argv);
                    return;
                }
                if let Effect::Position { replid, offset } = e {
                    position = Some((replid, offset));
                    return;
                }
                if let Effect::SwapDb { a, b } = e {
                    let (a, b) = ((a.min(b)) as usize, (a.max(b)) as usize);
                    top = top.max(b);
                    if b < dbs && a != b {
                        let (lo, hi) = stores.split_at_mut(b * shards);
                        lo[a * shards..(a + 1) * shards].swap_with_slice(&mut hi[..shards]);
                    }
                    return;
                }
                if db >= dbs {
                    return;
                }
                let stores = &mut stores[db * shards..(db + 1) * shards];
                match e.inner() {
                    Effect::Clear => stores.iter_mut().for_each(Store::clear),
                    // Log::open replays a transaction's record as its changes.
                    Effect::Batch(b) => debug_assert!(b.is_empty(), "batches arrive flat"),
                    e => {
                        if let Some(key) = e.key() {
                            apply(&mut stores[shard_for(key, shards, by_slot)], e, now)
                        }
                    }
                }
            })
            .map_err(|error| BindError::Log {
                path: path.clone(),
                error,
            })?;
            if top >= dbs {
                return Err(BindError::Databases {
                    path: path.clone(),
                    needed: top + 1,
                    databases: dbs,
                });
            }
            (Some(log), load)
        }
        None => {
            // No log: the RDB file, when there is one (Redis's precedence).
            let now = now_ms();
            let t = std::time::Instant::now();
            let mut hinted = vec![false; dbs];
            // Both callbacks fill the stores (one at a time).
            let cell = std::cell::RefCell::new(&mut stores);
            let loaded = crate::snapshot::load(
                rdb,
                dbs,
                now,
                |db, keys| {
                    // The tables sized once for the keys to come (the first hint of
                    // each database only: a hostile file cannot grow them twice).
                    if db < dbs && !std::mem::replace(&mut hinted[db], true) {
                        let each = (keys as usize).div_ceil(shards);
                        for s in &mut cell.borrow_mut()[db * shards..(db + 1) * shards] {
                            s.reserve(each);
                        }
                    }
                },
                |k| {
                    let mut stores = cell.borrow_mut();
                    let store = &mut stores[k.db * shards + shard_for(&k.key, shards, by_slot)];
                    store.put(&k.key, k.value, k.expires_at, now);
                    if let Some(s) = k.idle_s {
                        store.set_idle(&k.key, now, s.saturating_mul(1000));
                    }
                },
            )
            .map_err(BindError::Rdb)?;
            if let Some(mut l) = loaded {
                for code in std::mem::take(&mut l.summary.functions) {
                    functions.push(vec![
                        b"FUNCTION".to_vec(),
                        b"LOAD".to_vec(),
                        b"REPLACE".to_vec(),
                        code,
                    ]);
                }
                let by = l
                    .summary
                    .aux("redis-ver")
                    .map(|v| format!(", written by Redis {}", String::from_utf8_lossy(v)))
                    .unwrap_or_default();
                eprintln!(
                    "kvs: loaded {} keys from {} (RDB version {}{by}, {} bytes, {} expired keys dropped) in {} ms",
                    l.summary.keys - l.expired,
                    rdb.display(),
                    l.summary.version,
                    l.bytes,
                    l.expired,
                    t.elapsed().as_millis()
                );
            }
            (None, LoadReport::default())
        }
    };
    Ok(Loaded {
        stores,
        log,
        load,
        functions,
        position,
    })
}

/// The end of a round, besides the log's commit: a step of the expiry sweep on the
/// next few shards (each skipped when another loop holds it), and a step of
/// the log rewrite if one runs (one loop at a time; a few thousand keys across the
/// shards, each locked in turn).
pub(super) fn housekeeping(shared: &Shared, stats: &mut Stats, sweep: &mut usize, now: u64) {
    if stats.dirty != 0 {
        shared.rdb.dirty.fetch_add(stats.dirty, Ordering::Relaxed);
        stats.dirty = 0;
    }
    crate::snapshot::maybe_scheduled(shared, now);
    // The shards of the databases in use, a few in turn (one sweep step each), so a
    // key nobody reads goes within a few rounds whatever the number of databases.
    let shards = (shared.keyspace.max_used() + 1) * shared.keyspace.shards();
    // Not while clients are paused (keys past their time stay until it ends).
    let paused = shared.pause.active(now);
    shared.keyspace.hide_expired(paused);
    crate::cmd::migrate::prune();
    let sweeps = if paused { 0 } else { SWEEP_SHARDS };
    // The latency monitor's `expire-cycle`: this round's step of the sweep.
    let t = shared.latency.start();
    for _ in 0..sweeps.min(shards) {
        let i = *sweep % shards;
        *sweep = i + 1;
        sweep_one(shared, stats, i, now);
    }
    shared.latency.end(t, crate::latency::EXPIRE_CYCLE);
    let Some(log) = &shared.log else {
        return;
    };
    if shared.rewrite_requested.load(Ordering::Relaxed)
        && shared.rewrite_requested.swap(false, Ordering::Relaxed)
    {
        if let Err(e) = log.start_rewrite(|| shared.log_preamble()) {
            eprintln!("kvs: cannot start the log rewrite: {e}");
        }
    }
    if !log.rewriting() {
        return;
    }
    match rewrite_step(shared, log, now) {
        Ok(true) => eprintln!("kvs: log rewritten: {} bytes", log.size()),
        Ok(false) => {}
        Err(e) => {
            // The old log is intact; say so and go on with it.
            eprintln!("kvs: log rewrite failed, keeping the old log: {e}");
            log.abort_rewrite();
        }
    }
}

/// One step of a SCAN over every database's shards (as one range: the shard gives the
/// database; those of databases never selected are empty), each shard locked only
/// while its keys are read: `f(db, key, entry)` on the live keys of about `budget`
/// keys from `cursor`; returns the next cursor (0: complete). The caller holds no
/// shard lock. The log rewrite's and a streamed full sync's scan.
pub(crate) fn scan_keyspace(
    shared: &Shared,
    cursor: u64,
    budget: usize,
    now: u64,
    f: &mut dyn FnMut(usize, &[u8], &crate::store::Entry),
) -> u64 {
    let per_db = shared.keyspace.shards();
    let total = shared.keyspace.total_shards();
    scan_shards(
        total.next_power_of_two(),
        cursor,
        budget,
        |shard, table, left| {
            if shard >= total || shard / per_db > shared.keyspace.max_used() {
                return (0, 0);
            }
            let mut seen = 0;
            let next = shared
                .keyspace
                .lock(shard)
                .scan_entries(table, left, now, |k, e| {
                    seen += 1;
                    f(shard / per_db, k, e)
                });
            (next, seen)
        },
    )
}

/// Shards one round's expiry sweep visits.
const SWEEP_SHARDS: usize = 8;

/// A step of the expiry sweep on shard `i` (skipped when another loop holds it), with
/// the `expired` notifications of the keys it removed.
fn sweep_one(shared: &Shared, stats: &mut Stats, i: usize, now: u64) {
    let Some(mut store) = shared.keyspace.try_lock(i) else {
        return;
    };
    let before = store.memory();
    store.keep_events(
        shared.keyspace.keep() & (crate::store::KEEP_EXPIRED | crate::store::HIDE_EXPIRED),
    );
    if store.sweep(now, 64) > 0 {
        shared.keyspace.account(before, store.memory());
    }
    let events = store.take_events();
    if !events.expired.is_empty() && shared.repl.keep_bits() == crate::store::KEEP_EXPIRED {
        // To the replicas, under the shard's lock (ordered with the key's other changes).
        let db = i / shared.keyspace.shards();
        let dels: Vec<Effect> = events
            .expired
            .iter()
            .map(|k| Effect::in_db(db, Effect::Del { key: k.to_vec() }))
            .collect();
        shared.repl.feed(&dels);
    }
    drop(store);
    stats.expired += events.expired_count;
    if !events.expired.is_empty() {
        let db = i / shared.keyspace.shards();
        let flags = shared.config().0.notify;
        let keys = events.expired.into_iter().map(|k| (db, k)).collect();
        crate::cmd::notify::key_events(&shared.hub, flags, keys, Vec::new());
    }
}

/// One step of the running log rewrite over about 4096 keys, each shard locked in
/// turn (the caller holds no shard lock); true when the rewrite finished.
pub(crate) fn rewrite_step(shared: &Shared, log: &Log, now: u64) -> io::Result<bool> {
    let done = log.rewrite_step(4096, |cursor, budget, f| {
        scan_keyspace(shared, cursor, budget, now, f)
    })?;
    Ok(done)
}
