//! The keyspace: byte-string keys to values ([`Value`]: strings, hashes, sets) with
//! optional expiry times.
//!
//! Expiry is lazy (a read or write of an expired key first removes it) plus an
//! incremental active sweep ([`Store::sweep`]): keys with a deadline also sit in a
//! vector that the sweep walks a bounded number of entries at a time, dropping the
//! expired ones and the stale entries (keys deleted or given another deadline), so an
//! expired key that nobody reads still goes away without a full scan.
//!
//! Memory ([`Store::memory`]) counts the heap blocks the store holds, each rounded up to
//! the allocator's size class ([`block`]): per key its table node, its key and its value
//! (values are kept without spare capacity), plus the table's bucket array and the
//! deadline records. That is what `maxmemory` limits, so the resident size of a full
//! store is its limit plus the allocator's free space, not a multiple of it.
//!
//! Time is passed in by the caller (milliseconds since the Unix epoch), which keeps the
//! store deterministic under test.

use crate::table::Table;
pub use crate::value::Value;

/// A value and its deadline (0: none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The value.
    pub value: Value,
    /// Expiry time in milliseconds since the epoch; 0 when the key does not expire.
    pub expires_at: u64,
    /// Last read or write (for LRU eviction and OBJECT IDLETIME) and, in the top 8
    /// bits ([`LFU_SHIFT`]), the LFU access counter. The use mark below them is the
    /// time in ms shifted left by [`USE_SEQ_BITS`], below it a count that orders the
    /// uses made within one millisecond ([`Entry::used_ms`] reads the time back): 46
    /// bits of ms last until the year 4200.
    ///
    /// The counter is Redis's: 8 bits, raised with probability
    /// `1 / ((counter - 5) * lfu-log-factor + 1)` on each access and lowered by one
    /// per `lfu-decay-time` minutes since the last access (the use mark's time, which
    /// is Redis's separate 16-bit minute clock here), only kept while an LFU policy is
    /// set ([`Store::set_lfu`]); otherwise a use sets it to 0.
    pub touched: u64,
}

/// Bits of [`Entry::touched`] below the time: a sequence for uses within one ms.
pub const USE_SEQ_BITS: u32 = 10;

/// Where the LFU counter starts in [`Entry::touched`].
pub const LFU_SHIFT: u32 = 56;

/// The use mark's bits of [`Entry::touched`].
const MARK_MASK: u64 = (1 << LFU_SHIFT) - 1;

/// A new key's LFU counter (Redis's `LFU_INIT_VAL`), so that new keys are not evicted
/// before they had a chance to be read.
pub const LFU_INIT: u64 = 5;

impl Entry {
    /// When the key was last read or written, ms since the epoch.
    pub fn used_ms(&self) -> u64 {
        (self.touched & MARK_MASK) >> USE_SEQ_BITS
    }

    /// The LFU counter at `now` under the settings `lfu` ([`lfu_settings`]): as
    /// stored, less one per `lfu-decay-time` minutes since the last access (Redis's
    /// `LFUDecrAndReturn`, what OBJECT FREQ shows).
    pub fn freq(&self, lfu: u64, now: u64) -> u64 {
        lfu_decayed(self.touched, lfu, now)
    }
}

/// The LFU settings a store is given ([`Store::set_lfu`]): 0 when the policy is not
/// an LFU one, else a flag, `lfu-log-factor` and `lfu-decay-time` (minutes) packed.
pub fn lfu_settings(log_factor: u64, decay_minutes: u64) -> u64 {
    1 << 63 | log_factor.min(i32::MAX as u64) << 32 | decay_minutes.min(u32::MAX as u64)
}

fn lfu_decayed(touched: u64, lfu: u64, now: u64) -> u64 {
    let counter = touched >> LFU_SHIFT;
    let decay = lfu & 0xffff_ffff;
    if decay == 0 {
        return counter;
    }
    let used_min = ((touched & MARK_MASK) >> USE_SEQ_BITS) / 60_000;
    let periods = (now / 60_000).saturating_sub(used_min) / decay;
    counter.saturating_sub(periods)
}

/// How [`Store::evict`] chooses among the keys it draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// The least recently used.
    Lru,
    /// The lowest decayed LFU counter (the least recently used of equals).
    Lfu,
    /// The first drawn.
    Random,
    /// The nearest deadline.
    Ttl,
}

/// Bytes a heap block of `n` bytes takes: `n` rounded up to jemalloc's size classes
/// (the server binary's allocator). 0 stays 0 (an empty key or value allocates nothing).
///
/// Classes: 8, 16, then multiples of 16 up to 128, then four per doubling (160, 192,
/// 224, 256, 320, ...); blocks of 16 KiB and more are also given one extra page, which
/// jemalloc adds to large blocks to vary their cache alignment. The system allocator
/// (glibc) rounds `n + 8` up to 16 with a 32-byte minimum: within 16 bytes of this for
/// small blocks, and at most this plus a page for large ones.
pub fn block(n: usize) -> usize {
    const PAGE: usize = 4096;
    match n {
        0 => 0,
        1..=8 => 8,
        9..=128 => n.next_multiple_of(16),
        _ => {
            // 2^k < n <= 2^(k+1): classes are 2^(k-2) apart.
            let k = usize::BITS - 1 - (n - 1).leading_zeros();
            let class = n.next_multiple_of(1 << (k - 2));
            if class >= 16 * 1024 {
                class + PAGE
            } else {
                class
            }
        }
    }
}

/// Bytes of one deadline record in [`Store`]'s sweep vector (the key's box and the
/// deadline); the key's own block is counted apart.
const DEADLINE_RECORD: usize = std::mem::size_of::<(Box<[u8]>, u64)>();

/// Bytes a key costs beyond its key and value bytes at the least: its table node
/// (64 bytes: chain pointer, key box, value vector, deadline and LRU clock) and its
/// bucket pointer (the table has at least one bucket per key). INFO's `used_memory`
/// counts this per key; [`Store::memory`] also counts the rounding of the key's and
/// value's blocks and the buckets beyond one per key, so it is never below that.
///
/// Measured (release build, jemalloc, 16-byte keys, `scripts/kvs-mem-probe`, fill of
/// about 64 MiB): resident growth per key against [`Store::memory`] per key was 99
/// against 96 bytes for 1-byte values, 108 / 104 for 16 bytes, 208 / 205 for 100
/// bytes, 1,166 / 1,112 for 1 KiB (the rest of the larger sizes' growth is the
/// connection's batch buffers); the old table of one vector per bucket took 244
/// resident bytes a key for 1- and 16-byte values (docs/benchmarks-history.md, "Key-value server:
/// memory per key").
pub const PER_KEY_OVERHEAD: usize = 72;

/// The keyspace of one database.
#[derive(Debug, Default)]
pub struct Store {
    map: Table<Entry>,
    /// Keys that were given a deadline, with it (may be stale).
    deadlines: Vec<(Box<[u8]>, u64)>,
    /// Where the next sweep starts in `deadlines`.
    cursor: usize,
    /// Bytes held by keys and values (the payload, not the table's own overhead).
    bytes: usize,
    /// Heap bytes of the keys' and values' blocks and of the deadline records' keys,
    /// each rounded by [`block`] (the table's nodes and buckets are counted by it).
    heap: usize,
    /// The last use mark given (see [`Store::tick`]).
    clock: u64,
    /// State of the sampler that picks eviction candidates (xorshift).
    rng: u64,
    /// The LFU settings ([`lfu_settings`]; 0: no counting), see [`Store::set_lfu`].
    lfu: u64,
    /// Keys that have a deadline (expired ones not yet removed included).
    volatile: usize,
    /// Sum of those deadlines (for the mean remaining time to live).
    deadline_sum: u128,
    /// Keys removed because their deadline passed, since the owner last took them
    /// ([`Store::take_events`]); kept only while asked (for `expired` notifications),
    /// counted always.
    expired: Vec<Box<[u8]>>,
    expired_count: u64,
    /// Keys created since the owner last took them, kept only while asked (for `new`
    /// notifications).
    created: Vec<Box<[u8]>>,
    /// [`KEEP_EXPIRED`] and [`KEEP_NEW`].
    keep: u8,
}

/// [`Store::keep_events`]: keep the keys that expire.
pub const KEEP_EXPIRED: u8 = 1;
/// [`Store::keep_events`]: keep the keys created.
pub const KEEP_NEW: u8 = 2;
/// [`Store::keep_events`]: expired keys are hidden from reads but not removed (a
/// replica: its primary's DEL removes them, so a key the primary still holds, because
/// its clock is behind, is not lost here).
pub const HIDE_EXPIRED: u8 = 4;

/// What happened to keys since the owner last asked ([`Store::take_events`]).
#[derive(Debug, Default)]
pub struct KeyEvents {
    /// How many keys expired.
    pub expired_count: u64,
    /// The keys that expired (when kept), oldest first.
    pub expired: Vec<Box<[u8]>>,
    /// The keys created (when kept), oldest first.
    pub created: Vec<Box<[u8]>>,
}

impl Store {
    /// An empty store.
    pub fn new() -> Store {
        Store {
            rng: 0x9e37_79b9_7f4a_7c15,
            ..Store::default()
        }
    }

    /// Number of keys (expired ones not yet swept included).
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when there are no keys.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Bytes of keys and values held.
    pub fn payload_bytes(&self) -> usize {
        self.bytes
    }

    /// Memory of the dataset: the heap blocks of the table (bucket array and nodes),
    /// of the keys and values, and of the deadline records, each rounded up to the
    /// allocator's size class ([`block`]). At least payload plus [`PER_KEY_OVERHEAD`]
    /// per key.
    pub fn memory(&self) -> usize {
        self.heap + self.map.heap_bytes(block) + block(self.deadlines.capacity() * DEADLINE_RECORD)
    }

    /// Heap bytes one key of `key_len` bytes with a value of `value_len` bytes adds to
    /// [`Store::memory`], bucket array aside: its node, key block and value block.
    pub fn key_cost(key_len: usize, value_len: usize) -> usize {
        block(Table::<Entry>::NODE_BYTES) + block(key_len) + block(value_len)
    }

    /// Heap bytes a key of `key_len` bytes holding `value` takes (MEMORY USAGE): its
    /// node, key block and value blocks.
    pub fn entry_cost(key_len: usize, value: &Value) -> usize {
        block(Table::<Entry>::NODE_BYTES) + block(key_len) + value.heap()
    }

    /// Adds (or takes back) the blocks of a key and its value.
    fn add_blocks(&mut self, key_len: usize, value: &Value) {
        self.bytes += key_len + value.payload();
        self.heap += block(key_len) + value.heap();
    }

    fn sub_blocks(&mut self, key_len: usize, value: &Value) {
        self.bytes -= key_len + value.payload();
        self.heap -= block(key_len) + value.heap();
    }

    /// Records a deadline for the sweep.
    fn push_deadline(&mut self, key: &[u8], at: u64) {
        self.heap += block(key.len());
        self.deadlines.push((key.into(), at));
    }

    /// Drops deadline record `i`; returns its key.
    fn drop_deadline(&mut self, i: usize) -> Box<[u8]> {
        let (key, _) = self.deadlines.swap_remove(i);
        self.heap -= block(key.len());
        key
    }

    /// Keys with a deadline, and their mean remaining time to live in ms at `now`
    /// (0 when there are none), as INFO keyspace reports them.
    pub fn volatile(&self, now: u64) -> (usize, u64) {
        if self.volatile == 0 {
            return (0, 0);
        }
        let mean = (self.deadline_sum / self.volatile as u128) as u64;
        (self.volatile, mean.saturating_sub(now))
    }

    /// Keeps the count and sum of deadlines: an entry's deadline goes from `old` to
    /// `new` (0: none, on either side).
    fn account(&mut self, old: u64, new: u64) {
        if old != 0 {
            self.volatile -= 1;
            self.deadline_sum -= old as u128;
        }
        if new != 0 {
            self.volatile += 1;
            self.deadline_sum += new as u128;
        }
    }

    /// The next use mark: the time shifted left, or one past the last mark when that
    /// is later (more than 1,024 uses in a millisecond), so the marks of one store only
    /// grow.
    fn tick(&mut self, now: u64) -> u64 {
        self.clock = (self.clock + 1).max(now << USE_SEQ_BITS);
        self.clock
    }

    /// Marks `key` as last used at `now_ms` less `idle_ms` (RESTORE ... IDLETIME).
    pub fn set_idle(&mut self, key: &[u8], now_ms: u64, idle_ms: u64) {
        if let Some(e) = self.map.get_mut(key) {
            e.touched = (e.touched & !MARK_MASK) | now_ms.saturating_sub(idle_ms) << USE_SEQ_BITS;
        }
    }

    /// Sets the LFU counter of `key` (RESTORE ... FREQ), as of an access now.
    pub fn set_freq(&mut self, key: &[u8], freq: u8, now_ms: u64) {
        let t = self.tick(now_ms);
        if let Some(e) = self.map.get_mut(key) {
            e.touched = t | (freq as u64) << LFU_SHIFT;
        }
    }

    /// Counts accesses for an LFU policy from now on, with the settings `lfu`
    /// ([`lfu_settings`]; 0: no counting, uses only mark the time). The keyspace passes
    /// the server's settings on each lock of the store.
    #[inline]
    pub fn set_lfu(&mut self, lfu: u64) {
        self.lfu = lfu;
    }

    /// The LFU settings given ([`Store::set_lfu`]).
    pub fn lfu(&self) -> u64 {
        self.lfu
    }

    /// The counter an access now leaves on an entry whose [`Entry::touched`] is `old`
    /// (Redis's `updateLFU`: decay, then the logarithmic increment).
    fn lfu_bump(&mut self, old: u64, now: u64) -> u64 {
        let c = lfu_decayed(old, self.lfu, now);
        if c == 255 {
            return 255;
        }
        let factor = ((self.lfu >> 32) & 0x7fff_ffff) as f64;
        let p = 1.0 / (c.saturating_sub(LFU_INIT) as f64 * factor + 1.0);
        let r = (self.next_rng() >> 11) as f64 / (1u64 << 53) as f64;
        if r < p {
            c + 1
        } else {
            c
        }
    }

    fn next_rng(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }

    /// True when some key has a deadline (a `volatile-*` policy has a candidate).
    pub fn has_volatile(&self) -> bool {
        self.volatile > 0
    }

    /// Evicts one key chosen by sampled LRU: of `samples` keys drawn at random, the
    /// least recently used (Redis's approximate LRU). Returns it, or None when empty.
    pub fn evict_lru(&mut self, samples: usize) -> Option<Vec<u8>> {
        self.evict(Pick::Lru, false, samples, 0)
    }

    /// Evicts one key: of `samples` keys drawn at random (one for [`Pick::Random`]),
    /// among all or, when `volatile`, among those with a deadline, the one `pick`
    /// ranks first (Redis's sampled policies). Returns it, or None when there is no
    /// candidate.
    pub fn evict(
        &mut self,
        pick: Pick,
        volatile: bool,
        samples: usize,
        now: u64,
    ) -> Option<Vec<u8>> {
        let samples = if pick == Pick::Random {
            1
        } else {
            samples.max(1)
        };
        let lfu = self.lfu;
        let score = move |e: &Entry| -> u64 {
            match pick {
                Pick::Lru => e.touched & MARK_MASK,
                Pick::Lfu => lfu_decayed(e.touched, lfu, now) << LFU_SHIFT | e.touched & MARK_MASK,
                Pick::Ttl => e.expires_at,
                Pick::Random => 0,
            }
        };
        if volatile {
            return self.evict_volatile(score, samples);
        }
        let mut best: Option<(u64, Vec<u8>)> = None;
        for _ in 0..samples {
            let r = self.next_rng();
            let (k, e) = self.map.sample(r)?;
            let s = score(e);
            if best.as_ref().is_none_or(|(b, _)| s < *b) {
                best = Some((s, k.to_vec()));
            }
        }
        let (_, key) = best?;
        self.remove(&key);
        Some(key)
    }

    /// [`Store::evict`] among the keys with a deadline: draws deadline records, skips
    /// (and drops) stale ones; when every draw was stale, drops all stale records and
    /// draws again.
    fn evict_volatile(&mut self, score: impl Fn(&Entry) -> u64, samples: usize) -> Option<Vec<u8>> {
        for _ in 0..2 {
            if self.volatile == 0 || self.deadlines.is_empty() {
                return None;
            }
            let mut best: Option<(u64, usize)> = None;
            let mut drop = Vec::new();
            let mut found = 0;
            for _ in 0..samples * 4 {
                if found == samples {
                    break;
                }
                let i = (self.next_rng() % self.deadlines.len() as u64) as usize;
                let (ref k, at) = self.deadlines[i];
                match self.map.get(k) {
                    Some(e) if e.expires_at == at => {
                        found += 1;
                        let s = score(e);
                        if best.is_none_or(|(b, _)| s < b) {
                            best = Some((s, i));
                        }
                    }
                    _ => drop.push(i),
                }
            }
            let Some((_, chosen)) = best else {
                self.drop_stale_deadlines();
                continue;
            };
            drop.push(chosen);
            drop.sort_unstable();
            drop.dedup();
            // Highest first: a swap-remove moves only the last record, never one of
            // the lower indices still to go.
            let mut key = None;
            for &i in drop.iter().rev() {
                let k = self.drop_deadline(i);
                if i == chosen {
                    key = Some(k);
                }
            }
            let key = key?;
            self.remove(&key);
            return Some(key.into_vec());
        }
        None
    }

    /// Drops every deadline record whose key is gone or has another deadline now.
    fn drop_stale_deadlines(&mut self) {
        let mut i = 0;
        while i < self.deadlines.len() {
            let (ref k, at) = self.deadlines[i];
            if self.map.get(k).map(|e| e.expires_at) == Some(at) {
                i += 1;
            } else {
                self.drop_deadline(i);
            }
        }
        self.cursor = 0;
    }

    /// A live key drawn at random (RANDOMKEY): up to 100 draws skip expired keys,
    /// which are removed as they are found. None when there is none.
    pub fn random_key(&mut self, now: u64) -> Option<Vec<u8>> {
        for _ in 0..100 {
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            let (k, e) = self.map.sample(self.rng)?;
            if !Store::expired(e, now) {
                return Some(k.to_vec());
            }
            if self.keep & HIDE_EXPIRED != 0 {
                continue;
            }
            let k = k.to_vec();
            self.remove(&k);
        }
        None
    }

    fn expired(e: &Entry, now: u64) -> bool {
        e.expires_at != 0 && e.expires_at <= now
    }

    /// Notes a key removed because its deadline passed.
    fn note_expired(&mut self, key: Box<[u8]>) {
        self.expired_count += 1;
        if self.keep & KEEP_EXPIRED != 0 {
            self.expired.push(key);
        }
    }

    /// [`Store::note_expired`] of a borrowed key (copied only when kept).
    fn note_expired_ref(&mut self, key: &[u8]) {
        self.expired_count += 1;
        if self.keep & KEEP_EXPIRED != 0 {
            self.expired.push(key.into());
        }
    }

    /// Which keys [`Store::take_events`] returns: those that expire ([`KEEP_EXPIRED`]),
    /// those created ([`KEEP_NEW`]); and whether expired keys stay ([`HIDE_EXPIRED`]).
    #[inline]
    pub fn keep_events(&mut self, keep: u8) {
        self.keep = keep;
    }

    /// What happened since the last call (see [`Store::keep_events`]).
    #[inline]
    pub fn take_events(&mut self) -> KeyEvents {
        KeyEvents {
            expired_count: std::mem::take(&mut self.expired_count),
            expired: if self.expired.is_empty() {
                Vec::new()
            } else {
                std::mem::take(&mut self.expired)
            },
            created: if self.created.is_empty() {
                Vec::new()
            } else {
                std::mem::take(&mut self.created)
            },
        }
    }

    /// Removes `key` when it has expired; true when it is (still) present afterwards.
    fn live(&mut self, key: &[u8], now: u64) -> bool {
        match self.map.get(key) {
            None => false,
            Some(e) if Store::expired(e, now) => {
                if self.keep & HIDE_EXPIRED == 0 {
                    self.remove(key);
                    self.note_expired_ref(key);
                }
                false
            }
            Some(_) => true,
        }
    }

    /// The live entry of `key` (marks it used). One table probe.
    pub fn get(&mut self, key: &[u8], now: u64) -> Option<&Entry> {
        self.lookup(key, now, true)
    }

    /// The live entry of `key` without marking it used (TYPE, TTL: Redis's no-touch
    /// lookups leave OBJECT IDLETIME and the LRU alone).
    pub fn get_quiet(&mut self, key: &[u8], now: u64) -> Option<&Entry> {
        self.lookup(key, now, false)
    }

    fn lookup(&mut self, key: &[u8], now: u64, touch: bool) -> Option<&Entry> {
        let at = self.map.find(key)?;
        if Store::expired(self.map.at_mut(at)?, now) {
            if self.keep & HIDE_EXPIRED != 0 {
                return None;
            }
            let (k, e) = self.map.remove_at(at)?;
            self.sub_blocks(k.len(), &e.value);
            self.account(e.expires_at, 0);
            self.note_expired(k);
            return None;
        }
        if !touch {
            return self.map.at_mut(at).map(|e| &*e);
        }
        let mut t = self.tick(now);
        if self.lfu != 0 {
            let old = self.map.at_mut(at)?.touched;
            t |= self.lfu_bump(old, now) << LFU_SHIFT;
        }
        let e = self.map.at_mut(at)?;
        e.touched = t;
        Some(e)
    }

    /// The entry of `key` as stored (expired or not), without marking it used.
    pub fn peek(&self, key: &[u8]) -> Option<&Entry> {
        self.map.get(key)
    }

    /// True when `key` is live.
    pub fn contains(&mut self, key: &[u8], now: u64) -> bool {
        self.live(key, now)
    }

    /// Sets `key` to the string `value` with a deadline (0: none); returns the previous
    /// live entry. One table probe. A value with spare capacity is shrunk to its length
    /// first.
    pub fn set(
        &mut self,
        key: &[u8],
        mut value: Vec<u8>,
        expires_at: u64,
        now: u64,
    ) -> Option<Entry> {
        if value.capacity() != value.len() {
            value.shrink_to_fit();
        }
        self.put(key, Value::Str(value), expires_at, now)
    }

    /// Sets `key` to `value` (any type) with a deadline (0: none); returns the previous
    /// live entry. One table probe.
    pub fn put(&mut self, key: &[u8], value: Value, expires_at: u64, now: u64) -> Option<Entry> {
        self.add_blocks(key.len(), &value);
        if expires_at != 0 {
            self.push_deadline(key, expires_at);
        }
        let mut touched = self.tick(now);
        if self.lfu != 0 {
            touched |= LFU_INIT << LFU_SHIFT;
        }
        let old = self.map.insert(
            key,
            Entry {
                value,
                expires_at,
                touched,
            },
        );
        let old_deadline = old.as_ref().map_or(0, |o| o.expires_at);
        self.account(old_deadline, expires_at);
        let Some(old) = old else {
            if self.keep & KEEP_NEW != 0 {
                self.created.push(key.into());
            }
            return None;
        };
        self.sub_blocks(key.len(), &old.value);
        if self.lfu != 0 && !Store::expired(&old, now) {
            // An overwrite keeps the key's counter, as an access (Redis's dbOverwrite
            // after the write's lookup).
            let c = self.lfu_bump(old.touched, now);
            if let Some(e) = self.map.get_mut(key) {
                e.touched = e.touched & MARK_MASK | c << LFU_SHIFT;
            }
        }
        if Store::expired(&old, now) {
            self.note_expired_ref(key);
            if self.keep & KEEP_NEW != 0 {
                self.created.push(key.into());
            }
            return None;
        }
        Some(old)
    }

    /// Runs `f` on the live value of `key` (marks it used) and keeps the memory count
    /// right however `f` changed it; a collection left empty is removed, as Redis
    /// removes it. None when the key is absent.
    pub fn update<R>(
        &mut self,
        key: &[u8],
        now: u64,
        f: impl FnOnce(&mut Value) -> R,
    ) -> Option<R> {
        if !self.live(key, now) {
            return None;
        }
        let mut t = self.tick(now);
        if self.lfu != 0 {
            let old = self.map.get(key)?.touched;
            t |= self.lfu_bump(old, now) << LFU_SHIFT;
        }
        let e = self.map.get_mut(key)?;
        e.touched = t;
        let (payload, heap) = (e.value.payload(), e.value.heap());
        let r = f(&mut e.value);
        let (p2, h2) = (e.value.payload(), e.value.heap());
        let empty = e.value.is_empty_collection();
        self.bytes = self.bytes + p2 - payload;
        self.heap = self.heap + h2 - heap;
        if empty {
            self.remove(key);
        }
        Some(r)
    }

    /// Replaces the value of a live key with the string `value`, keeping its deadline;
    /// false when absent. A value with spare capacity is shrunk to its length first.
    pub fn set_value(&mut self, key: &[u8], mut value: Vec<u8>, now: u64) -> bool {
        if value.capacity() != value.len() {
            value.shrink_to_fit();
        }
        self.update(key, now, |v| *v = Value::Str(value)).is_some()
    }

    /// Sets or clears (0) the deadline of a live key; false when absent.
    pub fn set_deadline(&mut self, key: &[u8], expires_at: u64, now: u64) -> bool {
        if !self.live(key, now) {
            return false;
        }
        if let Some(e) = self.map.get_mut(key) {
            let old = std::mem::replace(&mut e.expires_at, expires_at);
            self.account(old, expires_at);
            if expires_at != 0 {
                self.push_deadline(key, expires_at);
            }
        }
        true
    }

    /// Removes `key` (expired or not); returns its entry.
    pub fn remove(&mut self, key: &[u8]) -> Option<Entry> {
        let e = self.map.remove(key)?;
        self.sub_blocks(key.len(), &e.value);
        self.account(e.expires_at, 0);
        Some(e)
    }

    /// Removes every key.
    pub fn clear(&mut self) {
        self.map.clear();
        self.forget_all();
    }

    /// Removes every key, freeing them on the background thread when there are more
    /// than a few (FLUSHDB ASYNC, see [`crate::lazyfree`]).
    pub fn clear_lazily(&mut self) {
        let n = self.map.len();
        if n > crate::lazyfree::THRESHOLD {
            let map = std::mem::take(&mut self.map);
            crate::lazyfree::free(Box::new(map), n as u64);
        } else {
            self.map.clear();
        }
        self.forget_all();
    }

    fn forget_all(&mut self) {
        self.deadlines = Vec::new();
        self.cursor = 0;
        self.bytes = 0;
        self.heap = 0;
        self.volatile = 0;
        self.deadline_sum = 0;
    }

    /// Makes room for `additional` more keys (see [`Table::reserve`]).
    pub fn reserve(&mut self, additional: usize) {
        self.map.reserve(additional);
    }

    /// Live keys, in no particular order (expired ones are skipped, not removed).
    pub fn keys(&self, now: u64) -> impl Iterator<Item = &[u8]> {
        self.map
            .iter()
            .filter(move |(_, e)| !Store::expired(e, now))
            .map(|(k, _)| k)
    }

    /// As [`Store::scan`], with each live key's entry.
    pub fn scan_entries(
        &self,
        cursor: u64,
        count: usize,
        now: u64,
        mut f: impl FnMut(&[u8], &Entry),
    ) -> u64 {
        self.map.scan(cursor, count, |k, e| {
            if !Store::expired(e, now) {
                f(k, e)
            }
        })
    }

    /// One SCAN step: calls `f` on the live keys of about `count` keys' worth of the
    /// table from `cursor`; returns the next cursor (0 when the scan is complete). Every
    /// key present for the whole scan is returned at least once (see [`Table::scan`]).
    pub fn scan(&self, cursor: u64, count: usize, now: u64, mut f: impl FnMut(&[u8])) -> u64 {
        self.map.scan(cursor, count, |k, e| {
            if !Store::expired(e, now) {
                f(k)
            }
        })
    }

    /// Looks at up to `budget` deadline records and removes the keys that expired;
    /// returns how many keys it removed.
    pub fn sweep(&mut self, now: u64, budget: usize) -> usize {
        if self.keep & HIDE_EXPIRED != 0 {
            return 0;
        }
        let mut removed = 0;
        let mut looked = 0;
        while looked < budget && !self.deadlines.is_empty() {
            if self.cursor >= self.deadlines.len() {
                self.cursor = 0;
            }
            let i = self.cursor;
            looked += 1;
            let (ref key, at) = self.deadlines[i];
            let current = self.map.get(key).map(|e| e.expires_at);
            if current != Some(at) {
                // Stale: the key went away or has another deadline now.
                self.drop_deadline(i);
                continue;
            }
            if at <= now {
                let key = self.drop_deadline(i);
                self.remove(&key);
                self.note_expired(key);
                removed += 1;
                continue;
            }
            self.cursor += 1;
        }
        // Give back the records' space once most of it is unused.
        if self.deadlines.capacity() > 64 && self.deadlines.len() < self.deadlines.capacity() / 4 {
            self.deadlines.shrink_to(self.deadlines.len() * 2);
        }
        removed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_get_expire_and_sweep() {
        let mut s = Store::new();
        s.set(b"a", b"1".to_vec(), 0, 100);
        s.set(b"b", b"22".to_vec(), 150, 100);
        assert_eq!(s.payload_bytes(), 2 + 3);
        assert_eq!(
            s.get(b"b", 149).map(|e| e.value.clone()),
            Some(Value::Str(b"22".to_vec()))
        );
        assert!(s.get(b"b", 150).is_none(), "lazy expiry at the deadline");
        assert_eq!(s.len(), 1);
        s.set(b"c", b"3".to_vec(), 200, 100);
        s.set(b"d", b"4".to_vec(), 300, 100);
        s.set_deadline(b"d", 0, 100);
        assert_eq!(s.sweep(250, 10), 1, "c expired; d's record is stale");
        assert_eq!(s.len(), 2);
        assert!(s.get(b"d", 1000).is_some());
        assert!(s.set_value(b"a", b"xyz".to_vec(), 1000));
        assert_eq!(s.payload_bytes(), 4 + 2);
        s.clear();
        assert!(s.is_empty() && s.payload_bytes() == 0);
    }

    #[test]
    fn volatile_count_and_mean_ttl_follow_every_change() {
        let mut s = Store::new();
        s.set(b"a", b"1".to_vec(), 1100, 100);
        s.set(b"b", b"1".to_vec(), 2100, 100);
        s.set(b"c", b"1".to_vec(), 0, 100);
        assert_eq!(s.volatile(100), (2, 1500));
        s.set_deadline(b"c", 3100, 100);
        assert_eq!(s.volatile(100), (3, 2000));
        s.set_deadline(b"b", 0, 100);
        assert_eq!(s.volatile(100), (2, 2000));
        s.set(b"a", b"2".to_vec(), 0, 100);
        assert_eq!(s.volatile(100), (1, 3000));
        assert!(s.get(b"c", 3100).is_none(), "expired on access");
        assert_eq!(s.volatile(100), (0, 0));
        s.set(b"d", b"1".to_vec(), 500, 100);
        s.remove(b"d");
        s.set(b"e", b"1".to_vec(), 500, 100);
        assert_eq!(s.sweep(600, 10), 1);
        assert_eq!(s.volatile(600), (0, 0));
        s.set(b"f", b"1".to_vec(), 500, 100);
        s.clear();
        assert_eq!(s.volatile(100), (0, 0));
    }

    #[test]
    fn sweep_is_bounded_and_eventually_complete() {
        let mut s = Store::new();
        for i in 0..1000u32 {
            s.set(&i.to_le_bytes(), vec![0; 3], 10 + (i % 2) as u64 * 1000, 0);
        }
        let mut removed = 0;
        for _ in 0..100 {
            let r = s.sweep(500, 20);
            assert!(r <= 20);
            removed += r;
        }
        assert_eq!(removed, 500);
        assert_eq!(s.len(), 500);
    }
}

#[cfg(test)]
mod memory_tests {
    use super::*;

    #[test]
    fn blocks_follow_the_size_classes() {
        let want = [
            (0, 0),
            (1, 8),
            (8, 8),
            (9, 16),
            (17, 32),
            (100, 112),
            (128, 128),
            (129, 160),
            (257, 320),
            (1024, 1024),
            (1025, 1280),
            (14 * 1024 + 1, 16 * 1024 + 4096),
            (16 * 1024, 16 * 1024 + 4096),
            (16 * 1024 + 1, 20 * 1024 + 4096),
            (1 << 20, (1 << 20) + 4096),
        ];
        for (n, b) in want {
            assert_eq!(block(n), b, "block({n})");
        }
        for n in 1..100_000 {
            assert!(block(n) >= n && block(n) <= n + n / 4 + 4096, "block({n})");
        }
    }

    #[test]
    fn a_node_is_one_64_byte_block_and_memory_covers_the_info_estimate() {
        assert_eq!(Table::<Entry>::NODE_BYTES, 64);
        let mut s = Store::new();
        let empty = s.memory();
        for i in 0..10_000u32 {
            let key = format!("key:{i:012}");
            s.set(key.as_bytes(), vec![1; (i % 300) as usize], 0, 0);
            assert!(s.memory() >= s.payload_bytes() + s.len() * PER_KEY_OVERHEAD);
        }
        // Spare capacity is not kept (nor counted).
        let mut v = Vec::with_capacity(4096);
        v.extend_from_slice(b"abc");
        s.set(b"spare", v, 0, 0);
        let capacity = |e: &Entry| match &e.value {
            Value::Str(v) => v.capacity(),
            _ => usize::MAX,
        };
        assert_eq!(s.get(b"spare", 0).map(capacity), Some(3));
        // Every key gone: only the empty table's buckets are left.
        for i in 0..10_000u32 {
            s.remove(format!("key:{i:012}").as_bytes());
        }
        s.remove(b"spare");
        assert_eq!(s.memory(), empty);
        // Deadline records are counted, and given back once swept.
        for i in 0..1000u32 {
            s.set(&i.to_le_bytes(), vec![0; 8], 10, 0);
        }
        let with_records = s.memory();
        assert!(with_records >= 1000 * (Store::key_cost(4, 8) + DEADLINE_RECORD + 8));
        while s.sweep(20, 100) > 0 {}
        assert!(s.is_empty());
        assert!(
            s.memory() <= empty + block(64 * DEADLINE_RECORD),
            "{}",
            s.memory()
        );
    }
}

#[cfg(test)]
mod lru_tests {
    use super::*;

    #[test]
    fn sampled_lru_prefers_cold_keys() {
        let mut s = Store::new();
        for i in 0..1000u32 {
            s.set(&i.to_le_bytes(), vec![0; 10], 0, 0);
        }
        // Keys 0..100 are hot.
        for _ in 0..3 {
            for i in 0..100u32 {
                s.get(&i.to_le_bytes(), 0);
            }
        }
        let before = s.memory();
        let mut hot_evicted = 0;
        for _ in 0..500 {
            let k = s.evict_lru(5).unwrap_or_default();
            if u32::from_le_bytes(k[..4].try_into().unwrap_or_default()) < 100 {
                hot_evicted += 1;
            }
        }
        assert_eq!(s.len(), 500);
        assert_eq!(s.memory(), before - 500 * Store::key_cost(4, 10));
        // With 5 samples, a hot key is chosen only when all 5 are hot: rare.
        assert!(hot_evicted < 20, "{hot_evicted} hot keys evicted");
    }

    #[test]
    fn volatile_picks_only_keys_with_a_deadline_and_ttl_the_nearest() {
        let mut s = Store::new();
        for i in 0..100u32 {
            s.set(&i.to_le_bytes(), vec![0; 10], 0, 0);
            s.set(&(1000 + i).to_le_bytes(), vec![0; 10], 10_000 + i as u64, 0);
        }
        // Stale records (deadlines changed, keys deleted) are skipped.
        for i in 0..50u32 {
            s.set_deadline(&(1000 + i).to_le_bytes(), 20_000 + i as u64, 0);
        }
        let mut last = 0;
        let mut order = Vec::new();
        while let Some(k) = s.evict(Pick::Ttl, true, 5, 0) {
            let i = u32::from_le_bytes(k[..4].try_into().unwrap_or_default());
            assert!(i >= 1000, "persistent key {i} evicted");
            order.push(i);
            last = i;
        }
        assert_eq!(order.len(), 100, "{last}");
        assert_eq!(s.len(), 100);
        assert!(!s.has_volatile());
        // Sampled: the first evicted are mostly the nearest deadlines (1050..1099).
        let early = order[..25].iter().filter(|&&i| i >= 1050).count();
        assert!(early >= 20, "{order:?}");
        // Every record went with its key or as stale.
        assert!(s.deadlines.is_empty(), "{}", s.deadlines.len());
        for pick in [Pick::Lru, Pick::Lfu, Pick::Random] {
            assert_eq!(s.evict(pick, true, 5, 0), None);
        }
        assert!(s.evict(Pick::Random, false, 5, 0).is_some());
    }

    #[test]
    fn lfu_counter_grows_logarithmically_and_decays() {
        let mut s = Store::new();
        s.set_lfu(lfu_settings(10, 1));
        let now = 120 * 60_000;
        s.set(b"k", vec![1], 0, now);
        assert_eq!(s.peek(b"k").map(|e| e.freq(s.lfu(), now)), Some(LFU_INIT));
        for _ in 0..1000 {
            s.get(b"k", now);
        }
        let f = s.peek(b"k").map_or(0, |e| e.freq(s.lfu(), now));
        // Redis's table for factor 10: about 10 after 100 hits, 18 after 1,000.
        assert!((12..=25).contains(&f), "{f}");
        // One less per minute idle.
        let later = now + 5 * 60_000;
        assert_eq!(s.peek(b"k").map(|e| e.freq(s.lfu(), later)), Some(f - 5));
        // The use mark is intact.
        assert_eq!(s.peek(b"k").map(Entry::used_ms), Some(now));
        // An overwrite keeps the counter.
        s.set(b"k", vec![2], 0, now);
        assert!(s.peek(b"k").is_some_and(|e| e.freq(s.lfu(), now) >= f));
        // Without LFU settings a use clears it.
        s.set_lfu(0);
        s.get(b"k", now);
        assert_eq!(s.peek(b"k").map(|e| e.freq(0, now)), Some(0));
    }

    #[test]
    fn sampled_lfu_prefers_rarely_read_keys() {
        let mut s = Store::new();
        s.set_lfu(lfu_settings(10, 1));
        for i in 0..1000u32 {
            s.set(&i.to_le_bytes(), vec![0; 10], 0, 0);
        }
        // Keys 0..100 are read often, the rest once; the frequent ones first, so
        // LRU alone would evict them.
        for _ in 0..50 {
            for i in 0..100u32 {
                s.get(&i.to_le_bytes(), 0);
            }
        }
        for i in 100..1000u32 {
            s.get(&i.to_le_bytes(), 0);
        }
        let mut hot_evicted = 0;
        for _ in 0..500 {
            let k = s.evict(Pick::Lfu, false, 5, 0).unwrap_or_default();
            if u32::from_le_bytes(k[..4].try_into().unwrap_or_default()) < 100 {
                hot_evicted += 1;
            }
        }
        assert!(hot_evicted < 20, "{hot_evicted} hot keys evicted");
    }
}
