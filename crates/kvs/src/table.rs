//! The keyspace's hash table: separate chaining over a power-of-two array of buckets,
//! so that a SCAN cursor can walk it across resizes.
//!
//! Layout (what a key costs): the bucket array holds one pointer per bucket (8 bytes);
//! each key is one boxed [`Node`] (the chain's next pointer, the key's box and the
//! value: 64 bytes for the store's entries) plus the key's own heap block. There is no
//! per-bucket vector: a removed key frees its node at once, and an empty bucket costs
//! its pointer alone. [`Table::heap_bytes`] counts the bucket array and the nodes; the
//! key blocks are counted by the caller, which knows their lengths.
//!
//! Keys are hashed with SipHash-1-3 under a per-process random key (the standard
//! library's `RandomState`), so clients cannot aim many keys at one bucket. The table
//! doubles when it holds more keys than buckets and halves when it holds fewer than an
//! eighth (never below 16 buckets; an empty table has none), so there are always at least as many buckets as
//! keys (the mean chain is at most one key long) and at most about eight per key.
//!
//! SCAN: the cursor is a bucket index whose bits are incremented from the top down
//! (reverse binary, as Redis's `dictScan`). Because a key's bucket in a table of 2^k
//! buckets is its bucket in a table of 2^(k+1) buckets with the top bit dropped, every
//! key present for a whole scan is returned at least once even if the table doubles or
//! halves between calls (a key may come twice). A resize relinks the nodes without
//! moving or reallocating them.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;

const MIN_BUCKETS: usize = 16;

type Link<V> = Option<Box<Node<V>>>;

/// One key: its chain's next node, the key and the value, in one heap block.
#[derive(Debug)]
struct Node<V> {
    next: Link<V>,
    key: Box<[u8]>,
    value: V,
}

/// A chained hash table from byte-string keys to `V`.
#[derive(Debug)]
pub struct Table<V> {
    buckets: Box<[Link<V>]>,
    len: usize,
    hasher: RandomState,
}

impl<V> Default for Table<V> {
    fn default() -> Table<V> {
        Table::new()
    }
}

fn empty<V>(n: usize) -> Box<[Link<V>]> {
    (0..n).map(|_| None).collect()
}

impl<V> Drop for Table<V> {
    fn drop(&mut self) {
        // Unlink chains one node at a time (no recursion through `next`).
        for b in self.buckets.iter_mut() {
            unlink_all(b);
        }
    }
}

fn unlink_all<V>(link: &mut Link<V>) {
    let mut cur = link.take();
    while let Some(mut n) = cur {
        cur = n.next.take();
    }
}

impl<V> Table<V> {
    /// Bytes of one node (before the allocator's rounding).
    pub const NODE_BYTES: usize = std::mem::size_of::<Node<V>>();

    /// An empty table (its bucket array is allocated with its first key: the shards
    /// of databases never used cost no heap).
    pub fn new() -> Table<V> {
        Table {
            buckets: empty(0),
            len: 0,
            hasher: RandomState::new(),
        }
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of buckets.
    pub fn buckets(&self) -> usize {
        self.buckets.len()
    }

    /// Heap bytes of the bucket array and the nodes, each block rounded up by `block`
    /// (the allocator's size classes); the keys' blocks are not included.
    pub fn heap_bytes(&self, block: impl Fn(usize) -> usize) -> usize {
        block(self.buckets.len() * std::mem::size_of::<Link<V>>())
            + self.len * block(Self::NODE_BYTES)
    }

    fn mask(&self) -> usize {
        self.buckets.len() - 1
    }

    fn slot(&self, key: &[u8]) -> usize {
        (self.hasher.hash_one(key) as usize) & self.mask()
    }

    fn chain(&self, b: usize) -> impl Iterator<Item = &Node<V>> {
        std::iter::successors(self.buckets[b].as_deref(), |n| n.next.as_deref())
    }

    /// The link that holds the `i`th node of bucket `b` (or the chain's end).
    fn link_mut(&mut self, b: usize, i: usize) -> &mut Link<V> {
        let mut link = &mut self.buckets[b];
        for _ in 0..i {
            match link {
                Some(n) => link = &mut n.next,
                None => break,
            }
        }
        link
    }

    /// The value of `key`.
    pub fn get(&self, key: &[u8]) -> Option<&V> {
        if self.len == 0 {
            return None;
        }
        self.chain(self.slot(key))
            .find(|n| &*n.key == key)
            .map(|n| &n.value)
    }

    /// Where `key` is: (bucket, position in its chain), for [`Table::at_mut`] and
    /// [`Table::remove_at`] without hashing again.
    pub fn find(&self, key: &[u8]) -> Option<(usize, usize)> {
        if self.len == 0 {
            return None;
        }
        let s = self.slot(key);
        let i = self.chain(s).position(|n| &*n.key == key)?;
        Some((s, i))
    }

    /// The value at a position from [`Table::find`] (None if the table changed since).
    pub fn at_mut(&mut self, at: (usize, usize)) -> Option<&mut V> {
        self.link_mut(at.0, at.1).as_mut().map(|n| &mut n.value)
    }

    /// Removes the key at a position from [`Table::find`]; returns its key and value.
    pub fn remove_at(&mut self, at: (usize, usize)) -> Option<(Box<[u8]>, V)> {
        let link = self.link_mut(at.0, at.1);
        let mut node = link.take()?;
        *link = node.next.take();
        self.len -= 1;
        if self.len == 0 {
            self.buckets = empty(0);
        } else if self.buckets.len() > MIN_BUCKETS && self.len < self.buckets.len() / 8 {
            self.resize(self.buckets.len() / 2);
        }
        let Node { key, value, .. } = *node;
        Some((key, value))
    }

    /// The value of `key`, mutable.
    pub fn get_mut(&mut self, key: &[u8]) -> Option<&mut V> {
        let at = self.find(key)?;
        self.at_mut(at)
    }

    /// Sets `key` to `value`; returns the previous value.
    pub fn insert(&mut self, key: &[u8], value: V) -> Option<V> {
        if self.buckets.is_empty() {
            self.buckets = empty(MIN_BUCKETS);
        }
        let s = self.slot(key);
        let found = self.chain(s).position(|n| &*n.key == key);
        if let Some(i) = found {
            if let Some(v) = self.at_mut((s, i)) {
                return Some(std::mem::replace(v, value));
            }
        }
        let next = self.buckets[s].take();
        self.buckets[s] = Some(Box::new(Node {
            next,
            key: key.into(),
            value,
        }));
        self.len += 1;
        if self.len > self.buckets.len() {
            self.resize(self.buckets.len() * 2);
        }
        None
    }

    /// Makes room for `additional` more keys without a resize on the way (a load
    /// that knows how many keys come).
    pub fn reserve(&mut self, additional: usize) {
        let want = self
            .len
            .saturating_add(additional)
            .checked_next_power_of_two()
            .unwrap_or(usize::MAX)
            .max(MIN_BUCKETS);
        if want > self.buckets.len() {
            self.resize(want);
        }
    }

    /// Removes `key`; returns its value.
    pub fn remove(&mut self, key: &[u8]) -> Option<V> {
        let at = self.find(key)?;
        self.remove_at(at).map(|(_, v)| v)
    }

    /// Removes every key.
    pub fn clear(&mut self) {
        for b in self.buckets.iter_mut() {
            unlink_all(b);
        }
        self.buckets = empty(0);
        self.len = 0;
    }

    /// Moves every node to a new array of `n` buckets (the nodes stay where they are).
    fn resize(&mut self, n: usize) {
        let mut old = std::mem::replace(&mut self.buckets, empty(n));
        for b in old.iter_mut() {
            let mut cur = b.take();
            while let Some(mut node) = cur {
                cur = node.next.take();
                let s = self.slot(&node.key);
                node.next = self.buckets[s].take();
                self.buckets[s] = Some(node);
            }
        }
    }

    /// Every key and value, in bucket order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &V)> {
        (0..self.buckets.len())
            .flat_map(move |b| self.chain(b))
            .map(|n| (&*n.key, &n.value))
    }

    /// Calls `f` on the keys of the buckets from `cursor` on, at least `count` keys'
    /// worth of buckets (whole buckets), and returns the next cursor (0: done).
    pub fn scan(&self, mut cursor: u64, count: usize, mut f: impl FnMut(&[u8], &V)) -> u64 {
        if self.buckets.is_empty() {
            return 0;
        }
        let mask = self.mask() as u64;
        let mut seen = 0;
        loop {
            for n in self.chain((cursor & mask) as usize) {
                f(&n.key, &n.value);
                seen += 1;
            }
            // Reverse-binary increment of the bits under the mask.
            cursor |= !mask;
            cursor = cursor.reverse_bits().wrapping_add(1).reverse_bits();
            if cursor == 0 || seen >= count {
                return cursor;
            }
        }
    }

    /// The key and value in a bucket chosen from `r` (a random number), or None when
    /// empty; looks at up to all buckets from there.
    pub fn sample(&self, r: u64) -> Option<(&[u8], &V)> {
        if self.len == 0 {
            return None;
        }
        let n = self.buckets.len();
        let start = (r as usize) & self.mask();
        let b = (0..n)
            .map(|i| (start + i) & self.mask())
            .find(|&b| self.buckets[b].is_some())?;
        let len = self.chain(b).count();
        self.chain(b)
            .nth((r >> 32) as usize % len)
            .map(|n| (&*n.key, &n.value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn behaves_like_a_map() {
        let mut t = Table::new();
        for i in 0..1000u32 {
            assert_eq!(t.insert(&i.to_le_bytes(), i), None);
        }
        assert_eq!(t.insert(&5u32.to_le_bytes(), 55), Some(5));
        assert_eq!(t.len(), 1000);
        assert_eq!(t.get(&5u32.to_le_bytes()), Some(&55));
        for i in 0..990u32 {
            assert!(t.remove(&i.to_le_bytes()).is_some());
        }
        assert_eq!(t.remove(&1u32.to_le_bytes()), None);
        // Long keys live on the heap, short ones inline: both behave the same.
        let long = vec![7u8; 100];
        assert_eq!(t.insert(&long, 1), None);
        assert_eq!(t.insert(&long, 2), Some(1));
        assert_eq!(t.get(&long), Some(&2));
        assert_eq!(t.get(&long[..99]), None);
        let at = t.find(&long).unwrap_or_else(|| panic!("long key"));
        assert_eq!(t.remove_at(at), Some((long.clone().into_boxed_slice(), 2)));
        assert_eq!(t.insert(&[], 9), None, "the empty key");
        assert_eq!(t.remove(&[]), Some(9));
        assert_eq!(t.len(), 10);
        assert_eq!(t.iter().count(), 10);
        assert!(t.buckets.len() < 1000, "shrank");
        t.clear();
        assert!(t.is_empty() && t.sample(7).is_none());
    }

    #[test]
    fn random_operations_agree_with_std_hashmap() {
        use std::collections::HashMap;
        let mut t = Table::new();
        let mut m: HashMap<Vec<u8>, u64> = HashMap::new();
        let mut r = 0x1234_5678_9abc_def1u64;
        for step in 0..200_000u64 {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            // Keys of 0 to 40 bytes over a small space, so chains, hits and the
            // inline/heap boundary all occur.
            let len = (r >> 8) as usize % 41;
            let key: Vec<u8> = std::iter::repeat_n((r % 97) as u8, len).collect();
            match (r >> 40) % 4 {
                0 | 1 => assert_eq!(t.insert(&key, step), m.insert(key, step)),
                2 => assert_eq!(t.remove(&key), m.remove(&key)),
                _ => match t.find(&key) {
                    Some(at) => {
                        let (k, v) = t.remove_at(at).unwrap_or_else(|| panic!("found"));
                        assert_eq!(m.remove(&key), Some(v));
                        assert_eq!(&*k, &key[..]);
                    }
                    None => assert!(!m.contains_key(&key)),
                },
            }
            assert_eq!(t.len(), m.len());
        }
        let mut all: Vec<(Vec<u8>, u64)> = t.iter().map(|(k, v)| (k.to_vec(), *v)).collect();
        let mut want: Vec<(Vec<u8>, u64)> = m.into_iter().collect();
        all.sort();
        want.sort();
        assert_eq!(all, want);
    }

    #[test]
    fn scan_returns_every_stable_key_across_resizes() {
        let mut t = Table::new();
        for i in 0..500u32 {
            t.insert(format!("stable{i}").as_bytes(), ());
        }
        let mut seen = HashSet::new();
        let mut cursor = 0;
        let mut step = 0;
        loop {
            cursor = t.scan(cursor, 10, |k, _| {
                seen.insert(k.to_vec());
            });
            // Grow and shrink the table while the scan runs.
            step += 1;
            if step % 3 == 0 {
                for j in 0..300u32 {
                    t.insert(format!("tmp{step}-{j}").as_bytes(), ());
                }
            } else if step % 3 == 1 {
                let tmp: Vec<Vec<u8>> = t
                    .iter()
                    .filter(|(k, _)| k.starts_with(b"tmp"))
                    .map(|(k, _)| k.to_vec())
                    .collect();
                for k in tmp {
                    t.remove(&k);
                }
            }
            if cursor == 0 {
                break;
            }
        }
        for i in 0..500u32 {
            assert!(
                seen.contains(format!("stable{i}").as_bytes()),
                "stable{i} missed"
            );
        }
    }
}

#[cfg(test)]
mod probe {
    use super::*;

    #[test]
    #[ignore = "timing probe"]
    fn chain_lengths_and_lookup_time() {
        let mut t = Table::new();
        for i in 0..10_000u64 {
            t.insert(format!("key:{i:012}").as_bytes(), i);
        }
        let max = (0..t.buckets())
            .map(|b| t.chain(b).count())
            .max()
            .unwrap_or(0);
        println!("buckets {} max chain {max}", t.buckets.len());
        let keys: Vec<String> = (0..10_000u64).map(|i| format!("key:{i:012}")).collect();
        let start = std::time::Instant::now();
        let mut sum = 0u64;
        for _ in 0..100 {
            for k in &keys {
                sum += t.get(k.as_bytes()).copied().unwrap_or(0);
            }
        }
        println!(
            "{:.1} ns per get ({sum})",
            start.elapsed().as_nanos() as f64 / 1e6
        );
    }
}
