//! The striped keyspace: what the event loops share.
//!
//! The keys live in S shards (S a power of two), each a [`Store`] behind its own mutex;
//! a key's shard is a hash of the key ([`Keyspace::shard_of`]). A command locks only the
//! shards it touches, through a [`Keys`] view that the loop keeps for its whole run:
//!
//! - a single-key command (GET, SET, INCR, EXPIRE, TTL, ...) locks its key's shard
//!   when it first touches the key: one uncontended lock per command, no allocation;
//! - a multi-key command (MGET, MSET, DEL, UNLINK, EXISTS) first locks the shards of
//!   all its keys, in ascending index order ([`Keys::lock_keys`]);
//! - a command over the whole database (KEYS, DBSIZE, FLUSHDB) locks every shard of it
//!   in ascending order ([`Keys::lock_all`]); SCAN locks the shard its cursor names
//!   and, when that one is done, the next ones, ascending;
//! - a command over several databases (FLUSHALL, INFO keyspace, SWAPDB, and a write
//!   over `maxmemory` under an evicting policy, which evicts from any shard) locks theirs,
//!   ascending; EXEC and scripts lock every shard of the databases up to the highest
//!   in use ([`Keys::lock_atomic`]).
//!
//! Databases (SELECT): each has its own S shards, database `d`'s numbered `d * S` to
//! `(d + 1) * S - 1` in one array, so one ascending order covers them all. A [`Keys`]
//! view has a selected database ([`Keys::select`]); databases never selected cost no
//! heap (their tables allocate with their first key) and the expiry sweep, INFO and
//! the log rewrite skip those above the highest selected ([`Keyspace::max_used`]).
//!
//! Shards are only ever locked in ascending order and held until the command ends (two
//! phases), so there is no deadlock and a multi-key command is atomic: a reader locking
//! the same shards sees all of an MSET or none of it. When the command ends, the server
//! propagates its effects while its shards are still locked
//! ([`crate::state::Shared::propagate`]), then [`Keys::end_command`] marks the command
//! done and [`Keys::unlock`] adds the shards' memory changes to the global total that
//! `maxmemory` reads and drops the locks.
//!
//! The keyspace knows nothing else of the server: the settings, the log, replication
//! and the clients live in [`crate::state`].

use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};

mod route;
pub use route::{scan_shards, shard_for, shard_index};
use std::sync::{Mutex, MutexGuard, TryLockError};

use crate::store::{Entry, Store};

/// A key and its database.
pub type DbKey = (usize, Box<[u8]>);

/// A pseudo-random number (xorshift64*, one state per thread, seeded from the clock
/// and the thread): RANDOMKEY's draws, not for secrets.
fn next_random() -> u64 {
    use std::cell::Cell;
    thread_local! {
        static STATE: Cell<u64> = Cell::new({
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            let id = std::thread::current().id();
            let h = format!("{id:?}").bytes().fold(t, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
            h | 1
        });
    }
    STATE.with(|s| {
        let mut x = s.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        s.set(x);
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    })
}

/// Most shards (routing sets are bitmaps of this many bits).
pub const MAX_SHARDS: usize = 1024;

/// The number of shards for `threads` event loops when none is given: one for one loop
/// (nothing to stripe), else four per loop rounded up to a power of two (at least 16),
/// so that two loops rarely want the same shard at once.
pub fn default_shards(threads: usize) -> usize {
    if threads <= 1 {
        1
    } else {
        (threads * 4).next_power_of_two().clamp(16, MAX_SHARDS)
    }
}

/// One shard, on its own cache lines (its lock word is written by every command on it).
#[derive(Debug)]
#[repr(align(128))]
struct Shard(Mutex<Store>);

/// The keys: every database's shards and what routes a key to its shard. The server's
/// other state ([`crate::state::Shared`]) holds it; it knows nothing of the log,
/// replication, scripts or clients.
#[derive(Debug)]
pub struct Keyspace {
    /// Every database's shards: database `d`'s are `d * per_db ..(d + 1) * per_db`.
    shards: Box<[Shard]>,
    /// Shards per database less one (`per_db` is a power of two).
    mask: usize,
    /// Keys are in shards by hash slot ([`route::slot_shard`]): cluster mode.
    by_slot: bool,
    /// Number of databases (SELECT 0 to this less one).
    dbs: usize,
    /// The highest database a client has selected since the start (or the log filled):
    /// the expiry sweep, INFO keyspace and the atomic regions look no further.
    max_used: AtomicUsize,
    /// Which keys the stores keep for notifications ([`crate::store::KEEP_EXPIRED`],
    /// [`crate::store::KEEP_NEW`]), as the settings ask.
    keep: AtomicU8,
    /// What the stores keep or hide of expired keys for replication, as the
    /// replication state publishes it (`crate::repl::Repl::keep_cell`).
    keep_repl: std::sync::Arc<AtomicU8>,
    /// [`crate::store::HIDE_EXPIRED`] while clients are paused: keys past their time
    /// read as gone but stay until the pause ends, as in Redis.
    keep_pause: AtomicU8,
    /// [`crate::store::KEEP_EXPIRED`] once a client tracked keys.
    keep_track: AtomicU8,
    /// Sum of the shards' [`Store::memory`], as of the last command that changed each.
    memory: AtomicUsize,
    /// The LFU settings each store is given when locked ([`Store::set_lfu`]).
    lfu: AtomicU64,
}

fn lock(m: &Mutex<Store>) -> MutexGuard<'_, Store> {
    // A panic while holding the lock would be a bug in command code; the shard is
    // still consistent at request granularity, so serve on rather than stop.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Keyspace {
    /// `shards` stores for `dbs` databases (`shards.len() / dbs` per database: a power
    /// of two, at most [`MAX_SHARDS`]), database 0's first; the stores keep `keep` of
    /// their keys' events for notifications and read `keep_repl` for replication's.
    pub fn new(
        shards: Vec<Store>,
        dbs: usize,
        keep: u8,
        keep_repl: std::sync::Arc<AtomicU8>,
    ) -> Keyspace {
        let dbs = dbs.max(1);
        let per_db = shards.len() / dbs;
        debug_assert!(per_db.is_power_of_two() && per_db <= MAX_SHARDS);
        debug_assert_eq!(per_db * dbs, shards.len());
        let memory = shards.iter().map(Store::memory).sum();
        let max_used = (0..dbs)
            .rev()
            .find(|d| {
                shards[d * per_db..(d + 1) * per_db]
                    .iter()
                    .any(|s| !s.is_empty())
            })
            .unwrap_or(0);
        let shards: Box<[Shard]> = shards.into_iter().map(|s| Shard(Mutex::new(s))).collect();
        Keyspace {
            keep: AtomicU8::new(keep),
            keep_repl,
            keep_pause: AtomicU8::new(0),
            keep_track: AtomicU8::new(0),
            mask: per_db - 1,
            by_slot: false,
            dbs,
            max_used: AtomicUsize::new(max_used),
            shards,
            memory: AtomicUsize::new(memory),
            lfu: AtomicU64::new(0),
        }
    }

    /// Number of shards of one database.
    pub fn shards(&self) -> usize {
        self.mask + 1
    }

    /// Number of shards of every database together (the index range of
    /// [`Keyspace::lock`] and [`Keyspace::try_lock`]).
    pub fn total_shards(&self) -> usize {
        self.shards.len()
    }

    /// Number of databases.
    pub fn dbs(&self) -> usize {
        self.dbs
    }

    /// The highest database selected since the start (databases above it are empty).
    #[inline]
    pub fn max_used(&self) -> usize {
        self.max_used.load(Ordering::Acquire)
    }

    /// Notes that database `db` is in use (before any shard of it is locked).
    #[inline]
    pub fn use_db(&self, db: usize) {
        if db > self.max_used.load(Ordering::Relaxed) {
            self.max_used.fetch_max(db, Ordering::AcqRel);
        }
    }

    /// The shard of `key`.
    #[inline]
    pub fn shard_of(&self, key: &[u8]) -> usize {
        shard_for(key, self.mask + 1, self.by_slot)
    }

    /// Keys go to shards by their cluster hash slot from now on (cluster mode; set
    /// before any key is looked up, with the stores filled the same way).
    pub fn route_by_slot(&mut self) {
        self.by_slot = true;
    }

    /// Which keys the stores keep for notifications (see [`Store::keep_events`]).
    #[inline]
    pub fn keep(&self) -> u8 {
        self.keep.load(Ordering::Relaxed)
            | self.keep_track.load(Ordering::Relaxed)
            | self.keep_repl.load(Ordering::Relaxed)
            | self.keep_pause.load(Ordering::Relaxed)
    }

    /// While `paused`, expired keys are hidden, not removed (see `keep_pause`).
    pub fn hide_expired(&self, paused: bool) {
        let bits = if paused {
            crate::store::HIDE_EXPIRED
        } else {
            0
        };
        if self.keep_pause.load(Ordering::Relaxed) != bits {
            self.keep_pause.store(bits, Ordering::Relaxed);
        }
    }

    /// Expired keys are kept for client-side caching's invalidations from the first
    /// CLIENT TRACKING ON on.
    pub fn keep_for_tracking(&self) {
        self.keep_track
            .store(crate::store::KEEP_EXPIRED, Ordering::Relaxed);
    }

    /// Sets what the stores count of accesses for an LFU policy (the settings changed;
    /// see [`crate::config::Config::lfu`]).
    pub fn set_lfu(&self, lfu: u64) {
        self.lfu.store(lfu, Ordering::Relaxed);
    }

    /// Sets which keys the stores keep for notifications (the settings changed).
    pub fn set_keep(&self, keep: u8) {
        self.keep.store(keep, Ordering::Relaxed);
    }

    /// Locks shard `i` (of [`Keyspace::total_shards`]) alone (for work outside commands:
    /// the expiry sweep).
    pub fn try_lock(&self, i: usize) -> Option<MutexGuard<'_, Store>> {
        match self.shards[i].0.try_lock() {
            Ok(g) => Some(g),
            Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    /// Locks shard `i` (of [`Keyspace::total_shards`]) alone, waiting for it.
    pub fn lock(&self, i: usize) -> MutexGuard<'_, Store> {
        lock(&self.shards[i].0)
    }

    /// Adds a shard's memory change (`before` to `after` bytes) to the total.
    pub fn account(&self, before: usize, after: usize) {
        if after > before {
            self.memory.fetch_add(after - before, Ordering::Relaxed);
        } else if after < before {
            self.memory.fetch_sub(before - after, Ordering::Relaxed);
        }
    }

    /// Estimated memory of the dataset, summed over the shards as of the last command
    /// that changed each.
    pub fn memory(&self) -> usize {
        self.memory.load(Ordering::Relaxed)
    }

    /// Number of keys in every database (expired ones not yet swept included); locks
    /// each shard in turn.
    pub fn len(&self) -> usize {
        (0..self.total_shards()).map(|i| self.lock(i).len()).sum()
    }

    /// True when no shard holds a key.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A locked shard of a [`Keys`] view, with its memory when locked.
#[derive(Debug)]
struct Held<'s> {
    index: usize,
    store: MutexGuard<'s, Store>,
    memory: usize,
    /// Used by the command now running (else kept from an earlier command of the
    /// same batch, see [`Keys::end_command`]).
    current: bool,
}

/// One loop's view of the keyspace for the command it runs: the shards it has locked
/// (ascending), locked on first use; [`Keys::end_command`] ends the command. Kept for the
/// loop's whole run, so its list of locks does not allocate per command.
#[derive(Debug)]
pub struct Keys<'s> {
    keyspace: &'s Keyspace,
    held: Vec<Held<'s>>,
    /// The selected database and the index of its first shard.
    db: usize,
    base: usize,
}

impl<'s> Keys<'s> {
    /// A view with nothing locked.
    pub fn new(keyspace: &'s Keyspace) -> Keys<'s> {
        Keys {
            keyspace,
            held: Vec::with_capacity(keyspace.shards()),
            db: 0,
            base: 0,
        }
    }

    /// Makes `db` the database the next commands work on (the caller checked it is
    /// below [`Keyspace::dbs`]). Shards held stay held.
    #[inline]
    pub fn select(&mut self, db: usize) {
        if db != self.db {
            debug_assert!(db < self.keyspace.dbs);
            self.keyspace.use_db(db);
            self.db = db;
            self.base = db * self.keyspace.shards();
        }
    }

    /// The selected database.
    #[inline]
    pub fn db(&self) -> usize {
        self.db
    }

    /// The keyspace this view locks.
    pub fn keyspace(&self) -> &'s Keyspace {
        self.keyspace
    }

    /// Number of shards of one database.
    pub fn shards(&self) -> usize {
        self.keyspace.shards()
    }

    /// Shard `i` of the selected database, locked now if not yet.
    #[inline]
    pub fn shard(&mut self, i: usize) -> &mut Store {
        self.shard_at(self.base + i)
    }

    /// The shard of `key` in database `db`, locked now if not yet.
    #[inline]
    pub fn store_in(&mut self, db: usize, key: &[u8]) -> &mut Store {
        let i = db * self.keyspace.shards() + self.keyspace.shard_of(key);
        self.shard_at(i)
    }

    /// Shard `i` among every database's ([`Keyspace::total_shards`]), locked now if not
    /// yet. Shards are locked in ascending order: a command that needs a shard below
    /// one it holds must have locked both up front ([`Keys::lock_keys`],
    /// [`Keys::lock_all`], [`Keys::lock_atomic`]).
    #[inline]
    pub fn shard_at(&mut self, i: usize) -> &mut Store {
        let p = match self.held.binary_search_by_key(&i, |h| h.index) {
            Ok(p) => {
                self.held[p].current = true;
                p
            }
            Err(mut p) => {
                if p < self.held.len() {
                    // Shards above `i` are held: locking `i` now would break the
                    // ascending order. Those kept from earlier commands are let go
                    // (this command has not used them).
                    self.unlock_kept();
                    p = self.held.partition_point(|h| h.index < i);
                }
                debug_assert_eq!(p, self.held.len(), "shard {i} locked out of order");
                let mut store = lock(&self.keyspace.shards[i].0);
                store.keep_events(self.keyspace.keep());
                store.set_lfu(self.keyspace.lfu.load(Ordering::Relaxed));
                let memory = store.memory();
                self.held.insert(
                    p,
                    Held {
                        index: i,
                        store,
                        memory,
                        current: true,
                    },
                );
                p
            }
        };
        &mut self.held[p].store
    }

    /// The shard of `key`, locked now if not yet.
    #[inline]
    pub fn store(&mut self, key: &[u8]) -> &mut Store {
        let i = self.base + self.keyspace.shard_of(key);
        self.shard_at(i)
    }

    /// Locks the shards of `keys`, ascending (before a command touches several keys).
    pub fn lock_keys<'k>(&mut self, keys: impl Iterator<Item = &'k [u8]>) {
        let mut set = [0u64; MAX_SHARDS / 64];
        for k in keys {
            let i = self.keyspace.shard_of(k);
            set[i / 64] |= 1 << (i % 64);
        }
        for (w, &bits) in set.iter().enumerate() {
            let mut b = bits;
            while b != 0 {
                let i = w * 64 + b.trailing_zeros() as usize;
                b &= b - 1;
                self.shard(i);
            }
        }
    }

    /// Locks every shard of the selected database, ascending.
    pub fn lock_all(&mut self) {
        for i in 0..self.shards() {
            self.shard(i);
        }
    }

    /// Locks every shard of the databases `dbs` (ascending, each once).
    pub fn lock_dbs(&mut self, dbs: &[usize]) {
        let mut dbs = dbs.to_vec();
        dbs.sort_unstable();
        dbs.dedup();
        let n = self.shards();
        for d in dbs {
            for i in d * n..(d + 1) * n {
                self.shard_at(i);
            }
        }
    }

    /// Locks every shard of every database in use (FLUSHALL, eviction, INFO keyspace).
    pub fn lock_every_db(&mut self) {
        for i in 0..(self.keyspace.max_used() + 1) * self.shards() {
            self.shard_at(i);
        }
    }

    /// Locks what a transaction or a script holds for its whole run: every shard of the
    /// selected database and of every one below it and in use, so that a SELECT inside
    /// it only ever needs shards above the ones held (locked then, in order).
    pub fn lock_atomic(&mut self) {
        let top = self.keyspace.max_used().max(self.db);
        for i in 0..(top + 1) * self.shards() {
            self.shard_at(i);
        }
    }

    /// Estimated memory of the dataset now: the shared total, with the changes made
    /// under this view's locks.
    pub fn memory(&self) -> usize {
        let mut m = self.keyspace.memory() as isize;
        for h in &self.held {
            m += h.store.memory() as isize - h.memory as isize;
        }
        m.max(0) as usize
    }

    /// Evicts one key by sampled LRU from the largest locked shard (of every database,
    /// after [`Keys::lock_every_db`]); None when the locked shards are empty. Returns
    /// the key's database and the key.
    pub fn evict_lru(&mut self, samples: usize) -> Option<(usize, Vec<u8>)> {
        self.evict(crate::store::Pick::Lru, false, samples, 0)
    }

    /// Evicts one key as `pick` chooses ([`Store::evict`]; only keys with a deadline
    /// when `volatile`) from the largest locked shard that has a candidate (of every
    /// database, after [`Keys::lock_every_db`]); None when none has. Returns the key's
    /// database and the key.
    pub fn evict(
        &mut self,
        pick: crate::store::Pick,
        volatile: bool,
        samples: usize,
        now: u64,
    ) -> Option<(usize, Vec<u8>)> {
        let n = self.shards();
        let eligible = |h: &Held<'_>| {
            if volatile {
                h.store.has_volatile()
            } else {
                !h.store.is_empty()
            }
        };
        let mut tried = Vec::new();
        loop {
            let (p, _) = self
                .held
                .iter()
                .enumerate()
                .filter(|(p, h)| eligible(h) && !tried.contains(p))
                .max_by_key(|(_, h)| h.store.memory())?;
            let h = &mut self.held[p];
            if let Some(k) = h.store.evict(pick, volatile, samples, now) {
                return Some((h.index / n, k));
            }
            tried.push(p);
        }
    }

    /// The selected database's shards among those held.
    fn held_db(&mut self) -> impl Iterator<Item = &mut Held<'s>> {
        let range = self.base..self.base + self.shards();
        self.held
            .iter_mut()
            .filter(move |h| range.contains(&h.index))
    }

    /// Ends a command but keeps its shards locked for the next commands of the same
    /// batch (a pipelined batch on one shard then takes its lock once). Its effects
    /// were propagated before ([`crate::state::Shared::propagate`], under these locks).
    /// A later command that needs a shard below a kept one lets the kept ones go first,
    /// so shards are still only ever locked in ascending order. The batch must end with
    /// [`Keys::unlock`] before anything else locks a shard or waits.
    #[inline]
    pub fn end_command(&mut self) {
        for h in &mut self.held {
            h.current = false;
        }
    }

    /// The entry at `key` in database `db`, if any, when this view holds its shard
    /// (None when it does not); no expiry check.
    pub fn peek_held(&self, db: usize, key: &[u8]) -> Option<Option<&Entry>> {
        let i = db * self.shards() + self.keyspace.shard_of(key);
        let p = self.held.binary_search_by_key(&i, |h| h.index).ok()?;
        Some(self.held[p].store.peek(key))
    }

    /// What happened to keys in the shards held since the last call (see
    /// [`Store::take_events`]), each key with its database: how many expired, those
    /// that expired and those created (when the stores keep them).
    #[inline]
    pub fn take_events(&mut self) -> (u64, Vec<DbKey>, Vec<DbKey>) {
        let n = self.shards();
        let (mut count, mut expired, mut created) = (0, Vec::new(), Vec::new());
        for h in &mut self.held {
            let e = h.store.take_events();
            count += e.expired_count;
            let db = h.index / n;
            expired.extend(e.expired.into_iter().map(|k| (db, k)));
            created.extend(e.created.into_iter().map(|k| (db, k)));
        }
        (count, expired, created)
    }

    /// Unlocks every shard held, adding their memory changes to the total.
    #[inline]
    pub fn unlock(&mut self) {
        for h in self.held.drain(..) {
            self.keyspace.account(h.memory, h.store.memory());
        }
    }

    /// Unlocks the shards kept from earlier commands.
    fn unlock_kept(&mut self) {
        let keyspace = self.keyspace;
        self.held.retain(|h| {
            if !h.current {
                keyspace.account(h.memory, h.store.memory());
            }
            h.current
        });
    }

    /// A live key drawn at random from a random non-empty shard (every shard locked).
    pub fn random_key(&mut self, now: u64, seed: u64) -> Option<Vec<u8>> {
        self.lock_all();
        let n = self.shards();
        let lens: Vec<usize> = (0..n).map(|i| self.shard(i).len()).collect();
        let total: usize = lens.iter().sum();
        if total == 0 {
            return None;
        }
        // A shard drawn in proportion to its keys (each key about as likely as any
        // other), then the next ones if its keys have all expired.
        let mut r = (next_random() ^ seed) as usize % total;
        let mut first = 0;
        while r >= lens[first] {
            r -= lens[first];
            first += 1;
        }
        for i in 0..n {
            let s = (first + i) % n;
            if let Some(k) = self.shard(s).random_key(now) {
                return Some(k);
            }
        }
        None
    }

    /// The live entry of `key` (marks it used).
    pub fn get(&mut self, key: &[u8], now: u64) -> Option<&Entry> {
        self.store(key).get(key, now)
    }

    /// The live entry of `key`, not marked used (see [`Store::get_quiet`]).
    pub fn get_quiet(&mut self, key: &[u8], now: u64) -> Option<&Entry> {
        self.store(key).get_quiet(key, now)
    }

    /// True when `key` is live.
    pub fn contains(&mut self, key: &[u8], now: u64) -> bool {
        self.store(key).contains(key, now)
    }

    /// See [`Store::set`].
    pub fn set(&mut self, key: &[u8], value: Vec<u8>, expires_at: u64, now: u64) -> Option<Entry> {
        self.store(key).set(key, value, expires_at, now)
    }

    /// Sets `key` to `value` (any type) with a deadline; returns the previous entry.
    pub fn put(
        &mut self,
        key: &[u8],
        value: crate::value::Value,
        expires_at: u64,
        now: u64,
    ) -> Option<Entry> {
        self.store(key).put(key, value, expires_at, now)
    }

    /// Runs `f` on the live value of `key`, keeping the memory count (see
    /// [`Store::update`]).
    pub fn update<R>(
        &mut self,
        key: &[u8],
        now: u64,
        f: impl FnOnce(&mut crate::value::Value) -> R,
    ) -> Option<R> {
        self.store(key).update(key, now, f)
    }

    /// See [`Store::set_value`].
    pub fn set_value(&mut self, key: &[u8], value: Vec<u8>, now: u64) -> bool {
        self.store(key).set_value(key, value, now)
    }

    /// See [`Store::set_deadline`].
    pub fn set_deadline(&mut self, key: &[u8], expires_at: u64, now: u64) -> bool {
        self.store(key).set_deadline(key, expires_at, now)
    }

    /// See [`Store::remove`].
    pub fn remove(&mut self, key: &[u8]) -> Option<Entry> {
        self.store(key).remove(key)
    }

    /// Number of keys in the selected database (locks its every shard).
    pub fn len(&mut self) -> usize {
        self.lock_all();
        self.held_db().map(|h| h.store.len()).sum()
    }

    /// True when there are no keys (locks every shard).
    pub fn is_empty(&mut self) -> bool {
        self.len() == 0
    }

    /// Bytes of keys and values held (locks every shard).
    pub fn payload_bytes(&mut self) -> usize {
        self.lock_all();
        self.held_db().map(|h| h.store.payload_bytes()).sum()
    }

    /// Keys with a deadline and their mean remaining time to live (locks every shard).
    pub fn volatile(&mut self, now: u64) -> (usize, u64) {
        self.lock_all();
        let (mut n, mut sum) = (0usize, 0u128);
        for h in self.held_db() {
            let (k, ttl) = h.store.volatile(now);
            n += k;
            sum += k as u128 * ttl as u128;
        }
        if n == 0 {
            (0, 0)
        } else {
            (n, (sum / n as u128) as u64)
        }
    }

    /// Removes every key of the selected database (locks its every shard).
    pub fn clear(&mut self) {
        self.lock_all();
        for h in self.held_db() {
            h.store.clear();
        }
    }

    /// [`Keys::clear`], the keys freed in the background (FLUSHDB ASYNC).
    pub fn clear_lazily(&mut self) {
        self.lock_all();
        for h in self.held_db() {
            h.store.clear_lazily();
        }
    }

    /// Exchanges the contents of databases `a` and `b` (SWAPDB; locks their shards).
    pub fn swap_dbs(&mut self, a: usize, b: usize) {
        if a == b {
            return;
        }
        self.keyspace.use_db(a.max(b));
        self.lock_dbs(&[a, b]);
        let n = self.shards();
        let (lo, hi) = (a.min(b), a.max(b));
        for i in 0..n {
            let p = self.held.binary_search_by_key(&(lo * n + i), |h| h.index);
            let q = self.held.binary_search_by_key(&(hi * n + i), |h| h.index);
            if let (Ok(p), Ok(q)) = (p, q) {
                let (x, y) = self.held.split_at_mut(q);
                std::mem::swap(&mut *x[p].store, &mut *y[0].store);
            }
        }
    }

    /// Calls `f` on every live key of the selected database's shard `i` (locks it).
    pub fn for_each_key_in_shard(&mut self, i: usize, now: u64, f: impl FnMut(&[u8])) {
        self.shard(i).keys(now).for_each(f);
    }

    /// Calls `f` on every live key (locks every shard).
    pub fn for_each_key(&mut self, now: u64, mut f: impl FnMut(&[u8])) {
        self.lock_all();
        for h in self.held_db() {
            h.store.keys(now).for_each(&mut f);
        }
    }

    /// One SCAN step over the shards: the cursor holds the shard in its low bits and
    /// that shard's table cursor above them. Calls `f` on the live keys of about
    /// `count` keys' worth of tables from `cursor`, going on to the next shards (locked
    /// ascending) while fewer were seen; returns the next cursor (0: the scan is
    /// complete). Every key present for the whole scan is returned at least once.
    pub fn scan(
        &mut self,
        cursor: u64,
        count: usize,
        now: u64,
        mut f: impl FnMut(&[u8], &Entry),
    ) -> u64 {
        scan_shards(self.shards(), cursor, count, |shard, table, budget| {
            let mut seen = 0;
            let next = self.shard(shard).scan_entries(table, budget, now, |k, e| {
                seen += 1;
                f(k, e)
            });
            (next, seen)
        })
    }
}

#[cfg(test)]
mod tests;
