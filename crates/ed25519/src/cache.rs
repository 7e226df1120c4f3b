//! A bounded cache of decoded public keys, for traffic where keys repeat (fee payers,
//! vote accounts, a service's own clients).
//!
//! Decoding A costs one field exponentiation (a square root), about a tenth of a
//! verification; a signature whose key is in the cache skips it. The cache is keyed by
//! the exact 32 bytes of the encoding, never by the point: two encodings of one point
//! (a non-canonical y, a negative zero) are two entries, each with the facts the rule
//! modes check ([`Decoded`]: `y_non_canonical`, `negative_zero`), and an encoding that
//! is not a point is cached as such. Every mode's rules still run on every signature
//! after the lookup, so a verdict with the cache is the verdict without it.
//!
//! Bounds and eviction: at most `capacity` keys (rounded up to a whole number of
//! entries per shard), each about 200 bytes; a full shard evicts by the CLOCK rule (a
//! key used since the hand last passed it gets a second chance), so hot keys stay and
//! a flood of one-off keys cycles through without growing anything. The map hashes
//! with a per-process random key (SipHash), so chosen keys cannot collide on purpose.
//! Shards (each behind its own lock) let the verify threads look up side by side.

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crate::serial::Decoded;

/// Shards of a cache: enough that two to a few dozen verify threads rarely wait.
const SHARDS: usize = 16;

/// A bounded, thread-safe cache of decoded Ed25519 public keys ([`crate::verify_many_cached`]).
pub struct KeyCache {
    shards: Box<[Mutex<Shard>]>,
    per_shard: usize,
    hasher: RandomState,
    hits: AtomicU64,
    misses: AtomicU64,
}

/// Hit and miss counts of a [`KeyCache`] since it was made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Lookups that found the key.
    pub hits: u64,
    /// Lookups that did not (the key was then decoded and inserted).
    pub misses: u64,
    /// Keys held now.
    pub len: usize,
    /// The most keys it holds.
    pub capacity: usize,
}

struct Entry {
    key: [u8; 32],
    value: Option<Decoded>,
    referenced: bool,
}

struct Shard {
    index: HashMap<[u8; 32], usize, RandomState>,
    entries: Vec<Entry>,
    hand: usize,
}

impl Shard {
    fn get(&mut self, key: &[u8; 32]) -> Option<Option<Decoded>> {
        let &i = self.index.get(key)?;
        let e = &mut self.entries[i];
        e.referenced = true;
        Some(e.value)
    }

    fn insert(&mut self, key: [u8; 32], value: Option<Decoded>, cap: usize) {
        if let Some(&i) = self.index.get(&key) {
            self.entries[i].value = value;
            return;
        }
        if self.entries.len() < cap {
            self.index.insert(key, self.entries.len());
            self.entries.push(Entry {
                key,
                value,
                referenced: false,
            });
            return;
        }
        // CLOCK: clear reference bits until an unreferenced entry comes round; at most
        // one full turn, since the first pass clears every bit it meets.
        loop {
            let i = self.hand;
            self.hand = (self.hand + 1) % self.entries.len();
            let e = &mut self.entries[i];
            if e.referenced {
                e.referenced = false;
                continue;
            }
            self.index.remove(&e.key);
            *e = Entry {
                key,
                value,
                referenced: false,
            };
            self.index.insert(key, i);
            return;
        }
    }
}

impl KeyCache {
    /// A cache holding at most about `capacity` keys (at least one per shard; 0 gives
    /// the smallest cache, 16 keys).
    pub fn new(capacity: usize) -> KeyCache {
        let per_shard = capacity.div_ceil(SHARDS).max(1);
        let hasher = RandomState::new();
        let shards = (0..SHARDS)
            .map(|_| {
                Mutex::new(Shard {
                    index: HashMap::with_hasher(hasher.clone()),
                    entries: Vec::new(),
                    hand: 0,
                })
            })
            .collect();
        KeyCache {
            shards,
            per_shard,
            hasher,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// The most keys the cache holds.
    pub fn capacity(&self) -> usize {
        self.per_shard * SHARDS
    }

    /// Hits, misses and size so far.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            len: self.shards.iter().map(|s| lock(s).entries.len()).sum(),
            capacity: self.capacity(),
        }
    }

    fn shard(&self, key: &[u8; 32]) -> &Mutex<Shard> {
        &self.shards[(self.hasher.hash_one(key) as usize) % SHARDS]
    }

    /// The cached decoding of `key` (`Some(None)`: cached as not a point), or None
    /// when it is not cached.
    pub(crate) fn get(&self, key: &[u8; 32]) -> Option<Option<Decoded>> {
        let v = lock(self.shard(key)).get(key);
        let counter = if v.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        v
    }

    /// Records the decoding of `key` (None: not a point).
    pub(crate) fn insert(&self, key: &[u8; 32], value: Option<Decoded>) {
        lock(self.shard(key)).insert(*key, value, self.per_shard);
    }
}

impl std::fmt::Debug for KeyCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyCache")
            .field("stats", &self.stats())
            .finish()
    }
}

/// A shard's lock; a panic elsewhere while holding it leaves a consistent map (every
/// update is a whole entry), so a poisoned lock is used as is.
fn lock(m: &Mutex<Shard>) -> std::sync::MutexGuard<'_, Shard> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serial::vartime_decompress;

    fn key(i: u32) -> [u8; 32] {
        let mut k = [0u8; 32];
        k[..4].copy_from_slice(&i.to_le_bytes());
        k
    }

    #[test]
    fn bounded_and_counts() {
        let c = KeyCache::new(64);
        assert_eq!(c.capacity(), 64);
        for i in 0..10_000 {
            let k = key(i);
            assert!(c.get(&k).is_none());
            c.insert(&k, vartime_decompress(&k));
        }
        let s = c.stats();
        assert!(s.len <= 64, "{s:?}");
        assert_eq!(s.misses, 10_000);
        assert_eq!(s.hits, 0);
    }

    #[test]
    fn hot_keys_survive_a_flood_of_cold_ones() {
        let c = KeyCache::new(16 * 8);
        let hot: Vec<[u8; 32]> = (0..16).map(|i| key(1_000_000 + i)).collect();
        for h in &hot {
            c.insert(h, vartime_decompress(h));
        }
        for i in 0..5_000 {
            // Touch the hot keys between cold inserts, as repeat traffic does.
            if i % 4 == 0 {
                for h in &hot {
                    c.get(h);
                }
            }
            let k = key(i);
            c.insert(&k, vartime_decompress(&k));
        }
        let kept = hot.iter().filter(|h| c.get(h).is_some()).count();
        assert!(kept >= 12, "only {kept} of 16 hot keys kept");
    }

    #[test]
    fn cached_value_is_the_decoding() {
        let c = KeyCache::new(100);
        let b = crate::serial::basepoint().compress();
        let d = vartime_decompress(&b);
        c.insert(&b, d);
        let got = c.get(&b).expect("cached").expect("a point");
        assert_eq!(got.point.compress(), b);
        // Not a point: cached as such.
        let mut bad = [0u8; 32];
        bad[0] = 2;
        if vartime_decompress(&bad).is_none() {
            c.insert(&bad, None);
            assert!(matches!(c.get(&bad), Some(None)));
        }
    }
}
