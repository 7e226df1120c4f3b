//! What a key holds: a string, a hash, a set, a list or a sorted set ([`Value`]), with
//! the byte counts that `maxmemory` reads.
//!
//! A string is its bytes (no spare capacity). A hash and a set sit behind one box each,
//! so a string key's table node stays as small as before (the enum is the size of the
//! string's vector; a test checks it). Each collection keeps two running totals as
//! members come and go: the payload (the bytes of its fields, values or members) and
//! the heap blocks they take ([`block`]); its table's slot array is added from its
//! capacity when asked. So the store learns a value's memory in O(1) before and after a
//! command changes it in place.
//!
//! Members are `Box<[u8]>` in std's `HashMap`/`HashSet` with their default (keyed,
//! DoS-resistant) hasher: field names are client data.

use std::collections::{HashMap, HashSet, VecDeque};

use crate::store::block;
pub use crate::stream::Stream;

pub mod ostree;
use ostree::OsTree;

/// Bytes of a slot in a collection's table (two boxed slices, or one, plus hash
/// metadata), for the table part of [`Value::heap`].
const HASH_SLOT: usize = 2 * 16 + 1;
const SET_SLOT: usize = 16 + 1;
const LIST_SLOT: usize = 16;
/// A slot of a sorted set's map (member box, score, metadata); the order's nodes are
/// counted by [`OsTree::heap`].
const ZSET_SLOT: usize = 16 + 8 + 1;

/// A hash: field to value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hash {
    map: HashMap<Box<[u8]>, Box<[u8]>>,
    payload: usize,
    heap: usize,
}

impl Hash {
    /// Number of fields.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when there is no field (the key then goes away).
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The value of `field`.
    pub fn get(&self, field: &[u8]) -> Option<&[u8]> {
        self.map.get(field).map(|v| &**v)
    }

    /// Sets `field`; true when it is new.
    pub fn insert(&mut self, field: &[u8], value: &[u8]) -> bool {
        self.payload += value.len();
        self.heap += block(value.len());
        match self.map.get_mut(field) {
            Some(v) => {
                self.payload -= v.len();
                self.heap -= block(v.len());
                *v = value.into();
                false
            }
            None => {
                self.payload += field.len();
                self.heap += block(field.len());
                self.map.insert(field.into(), value.into());
                true
            }
        }
    }

    /// Removes `field`; true when it was there.
    pub fn remove(&mut self, field: &[u8]) -> bool {
        match self.map.remove(field) {
            Some(v) => {
                self.payload -= field.len() + v.len();
                self.heap -= block(field.len()) + block(v.len());
                true
            }
            None => false,
        }
    }

    /// Fields and values, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.map.iter().map(|(f, v)| (&**f, &**v))
    }
}

/// A set of members.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Set {
    set: HashSet<Box<[u8]>>,
    payload: usize,
    heap: usize,
}

impl Set {
    /// Number of members.
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// True when there is no member (the key then goes away).
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// True when `m` is a member.
    pub fn contains(&self, m: &[u8]) -> bool {
        self.set.contains(m)
    }

    /// Adds `m`; true when it is new.
    pub fn insert(&mut self, m: &[u8]) -> bool {
        if self.set.contains(m) {
            return false;
        }
        self.payload += m.len();
        self.heap += block(m.len());
        self.set.insert(m.into())
    }

    /// Removes `m`; true when it was there.
    pub fn remove(&mut self, m: &[u8]) -> bool {
        let removed = self.set.remove(m);
        if removed {
            self.payload -= m.len();
            self.heap -= block(m.len());
        }
        removed
    }

    /// Members, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        self.set.iter().map(|m| &**m)
    }
}

/// A list of elements, both ends open.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct List {
    items: VecDeque<Box<[u8]>>,
    payload: usize,
    heap: usize,
}

impl List {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when there is no element (the key then goes away).
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    fn count_in(&mut self, v: &[u8]) {
        self.payload += v.len();
        self.heap += block(v.len());
    }

    fn count_out(&mut self, v: &[u8]) {
        self.payload -= v.len();
        self.heap -= block(v.len());
    }

    /// Adds `v` at the head (`left`) or the tail.
    pub fn push(&mut self, left: bool, v: &[u8]) {
        self.count_in(v);
        if left {
            self.items.push_front(v.into());
        } else {
            self.items.push_back(v.into());
        }
    }

    /// Takes the head (`left`) or tail element.
    pub fn pop(&mut self, left: bool) -> Option<Box<[u8]>> {
        let v = if left {
            self.items.pop_front()
        } else {
            self.items.pop_back()
        }?;
        self.count_out(&v);
        Some(v)
    }

    /// The element at `i` (from the head).
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        self.items.get(i).map(|v| &**v)
    }

    /// Replaces the element at `i`; false when out of range.
    pub fn set(&mut self, i: usize, v: &[u8]) -> bool {
        let Some(old) = self.items.get(i).map(|o| o.len()) else {
            return false;
        };
        self.payload = self.payload - old + v.len();
        self.heap = self.heap - block(old) + block(v.len());
        self.items[i] = v.into();
        true
    }

    /// Inserts `v` before position `i` (`i` = len appends).
    pub fn insert(&mut self, i: usize, v: &[u8]) {
        self.count_in(v);
        self.items.insert(i, v.into());
    }

    /// Removes the element at `i`.
    pub fn remove(&mut self, i: usize) -> Option<Box<[u8]>> {
        let v = self.items.remove(i)?;
        self.count_out(&v);
        Some(v)
    }

    /// Keeps the elements in `start..=end` (an empty list when `start > end`).
    pub fn retain_range(&mut self, start: usize, end: usize) {
        let keep: VecDeque<Box<[u8]>> = if start <= end && start < self.items.len() {
            self.items
                .drain(start..=end.min(self.items.len() - 1))
                .collect()
        } else {
            VecDeque::new()
        };
        for v in &self.items {
            self.payload -= v.len();
            self.heap -= block(v.len());
        }
        self.items = keep;
    }

    /// Elements from the head.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &[u8]> + ExactSizeIterator {
        self.items.iter().map(|v| &**v)
    }
}

/// A score with a total order (scores are never NaN: ZADD and ZINCRBY refuse it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Score(pub f64);

impl Eq for Score {}

impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Score {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// A sorted set: members ordered by (score, member), each member's score by name.
/// Lookups by member are O(1); ranks, the member at a rank and the start of a range
/// are O(log n) ([`OsTree`], a counted B-tree).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ZSet {
    scores: HashMap<Box<[u8]>, Score>,
    order: OsTree<(Score, Box<[u8]>)>,
    payload: usize,
    heap: usize,
}

impl ZSet {
    /// Number of members.
    pub fn len(&self) -> usize {
        self.scores.len()
    }

    /// True when there is no member (the key then goes away).
    pub fn is_empty(&self) -> bool {
        self.scores.is_empty()
    }

    /// The score of `m`.
    pub fn score(&self, m: &[u8]) -> Option<f64> {
        self.scores.get(m).map(|s| s.0)
    }

    /// Sets the score of `m`; the previous one if it was a member.
    pub fn insert(&mut self, m: &[u8], score: f64) -> Option<f64> {
        let entry = match self.scores.get_mut(m) {
            Some(s) => {
                let old = std::mem::replace(s, Score(score));
                // Move the member's entry (and its box) to its new place.
                let mut e = self
                    .order
                    .remove_by(by_entry(old, m))
                    .expect("in the order");
                e.0 = Score(score);
                self.order.insert(e);
                return Some(old.0);
            }
            None => (Score(score), Box::<[u8]>::from(m)),
        };
        self.scores.insert(m.into(), Score(score));
        self.order.insert(entry);
        self.payload += m.len() + 8;
        self.heap += 2 * block(m.len());
        None
    }

    /// Removes `m`; true when it was a member.
    pub fn remove(&mut self, m: &[u8]) -> bool {
        match self.scores.remove(m) {
            Some(s) => {
                self.order.remove_by(by_entry(s, m));
                self.payload -= m.len() + 8;
                self.heap -= 2 * block(m.len());
                true
            }
            None => false,
        }
    }

    /// Members with their scores, lowest first (ties by member bytes).
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&[u8], f64)> + ExactSizeIterator {
        self.by_ranks(0, self.len())
    }

    /// Members with their scores from the first scoring at least `min`, lowest first
    /// (the start is found in O(log n)); a score of -0 counts as 0.
    pub fn iter_from(&self, min: f64) -> impl Iterator<Item = (&[u8], f64)> {
        let min = Score(if min == 0.0 { -0.0 } else { min });
        let start = self.order.partition_point(|(s, _)| *s < min);
        self.by_ranks(start, self.len())
    }

    /// The 0-based rank of `m`, lowest score first. O(log n).
    pub fn rank(&self, m: &[u8]) -> Option<usize> {
        let s = *self.scores.get(m)?;
        Some(self.order.partition_point(|e| by_entry(s, m)(e).is_lt()))
    }

    /// The member (and its score) at 0-based rank `i`, lowest score first. O(log n).
    pub fn by_rank(&self, i: usize) -> Option<(&[u8], f64)> {
        self.order.get(i).map(|(s, m)| (&**m, s.0))
    }

    /// Members with their scores at ranks `start..end` (clamped to the length), lowest
    /// first; reversible. The start (or the end) is found in O(log n).
    pub fn by_ranks(
        &self,
        start: usize,
        end: usize,
    ) -> impl DoubleEndedIterator<Item = (&[u8], f64)> + ExactSizeIterator {
        self.order.range(start, end).map(|(s, m)| (&**m, s.0))
    }

    /// How many members, lowest first, satisfy `below` (member, score), which must
    /// hold for a prefix of the order and not after: the rank where a range by score
    /// (or by member, when all scores are equal) starts or ends. O(log n).
    pub fn rank_where(&self, mut below: impl FnMut(&[u8], f64) -> bool) -> usize {
        self.order.partition_point(|(s, m)| below(m, s.0))
    }
}

/// How an order entry compares with `(s, m)`.
fn by_entry(s: Score, m: &[u8]) -> impl Fn(&(Score, Box<[u8]>)) -> std::cmp::Ordering + '_ {
    move |(es, em)| es.cmp(&s).then_with(|| (**em).cmp(m))
}

/// A collection type a key can hold, reached inside a [`Value`].
pub trait Kind {
    /// The collection, if `v` is one of this type.
    fn of(v: &Value) -> Option<&Self>;
    /// The same, mutable.
    fn of_mut(v: &mut Value) -> Option<&mut Self>;
}

/// A collection whose members can be removed by name (hash fields, set and sorted-set
/// members).
pub trait Members: Kind {
    /// Removes `m`; true when it was there.
    fn remove_member(&mut self, m: &[u8]) -> bool;
}

macro_rules! kind {
    ($t:ident, $variant:ident) => {
        impl Kind for $t {
            fn of(v: &Value) -> Option<&Self> {
                match v {
                    Value::$variant(c) => Some(c),
                    _ => None,
                }
            }
            fn of_mut(v: &mut Value) -> Option<&mut Self> {
                match v {
                    Value::$variant(c) => Some(c),
                    _ => None,
                }
            }
        }
    };
}
kind!(Hash, Hash);
kind!(Set, Set);
kind!(List, List);
kind!(ZSet, ZSet);
kind!(Stream, Stream);

impl Members for Hash {
    fn remove_member(&mut self, m: &[u8]) -> bool {
        self.remove(m)
    }
}

impl Members for Set {
    fn remove_member(&mut self, m: &[u8]) -> bool {
        self.remove(m)
    }
}

impl Members for ZSet {
    fn remove_member(&mut self, m: &[u8]) -> bool {
        self.remove(m)
    }
}

/// What a key holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// A string.
    Str(Vec<u8>),
    /// A hash.
    Hash(Box<Hash>),
    /// A set.
    Set(Box<Set>),
    /// A list.
    List(Box<List>),
    /// A sorted set.
    ZSet(Box<ZSet>),
    /// A stream.
    Stream(Box<Stream>),
}

impl Value {
    /// The string, if the value is one.
    pub fn as_str(&self) -> Option<&[u8]> {
        match self {
            Value::Str(v) => Some(v),
            _ => None,
        }
    }

    /// Redis's name of the type (TYPE, SCAN TYPE).
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "string",
            Value::Hash(_) => "hash",
            Value::Set(_) => "set",
            Value::List(_) => "list",
            Value::ZSet(_) => "zset",
            Value::Stream(_) => "stream",
        }
    }

    /// Bytes of data held (string bytes; fields, values, members).
    pub fn payload(&self) -> usize {
        match self {
            Value::Str(v) => v.len(),
            Value::Hash(h) => h.payload,
            Value::Set(s) => s.payload,
            Value::List(l) => l.payload,
            Value::ZSet(z) => z.payload,
            Value::Stream(s) => s.payload(),
        }
    }

    /// Heap bytes held, each block rounded to the allocator's size class.
    pub fn heap(&self) -> usize {
        match self {
            Value::Str(v) => block(v.len()),
            Value::Hash(h) => {
                block(std::mem::size_of::<Hash>()) + h.heap + block(h.map.capacity() * HASH_SLOT)
            }
            Value::Set(s) => {
                block(std::mem::size_of::<Set>()) + s.heap + block(s.set.capacity() * SET_SLOT)
            }
            Value::List(l) => {
                block(std::mem::size_of::<List>()) + l.heap + block(l.items.capacity() * LIST_SLOT)
            }
            Value::ZSet(z) => {
                block(std::mem::size_of::<ZSet>())
                    + z.heap
                    + block(z.scores.capacity() * ZSET_SLOT)
                    + z.order.heap()
            }
            Value::Stream(s) => block(std::mem::size_of::<Stream>()) + s.heap(),
        }
    }

    /// True for a collection with nothing left (Redis removes such keys).
    pub fn is_empty_collection(&self) -> bool {
        match self {
            Value::Str(_) => false,
            Value::Hash(h) => h.is_empty(),
            Value::Set(s) => s.is_empty(),
            Value::List(l) => l.is_empty(),
            Value::ZSet(z) => z.is_empty(),
            // A stream stays when its last entry goes (its ID and groups live on).
            Value::Stream(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_as_small_as_a_string() {
        assert_eq!(std::mem::size_of::<Value>(), std::mem::size_of::<Vec<u8>>());
    }

    #[test]
    fn collections_count_their_bytes() {
        let mut h = Hash::default();
        assert!(h.insert(b"field", b"value"));
        assert!(!h.insert(b"field", b"v2"));
        assert_eq!(h.payload, 5 + 2);
        assert_eq!(h.heap, block(5) + block(2));
        assert!(h.remove(b"field") && !h.remove(b"field"));
        assert_eq!((h.payload, h.heap), (0, 0));
        let mut s = Set::default();
        assert!(s.insert(b"a") && !s.insert(b"a") && s.insert(b"bb"));
        assert_eq!(s.payload, 3);
        assert!(s.remove(b"a"));
        assert_eq!((s.payload, s.heap), (2, block(2)));
        let v = Value::Set(Box::new(s));
        assert!(v.heap() > block(2) && v.payload() == 2);
    }

    /// A sorted set's ranks, members at ranks, starts of ranges and bytes against a
    /// sorted list of (score, member), with -0 beside 0 and infinite scores.
    #[test]
    fn zset_ranks_agree_with_a_sorted_list() {
        let (mut z, mut model) = (ZSet::default(), Vec::<(Score, Vec<u8>)>::new());
        let mut r = 0x2545_F491_4F6C_DD1D_u64;
        let scores = [-0.0, 0.0, 1.5, -2.0, f64::INFINITY, f64::NEG_INFINITY, 7.0];
        for step in 0..6_000 {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            let m = format!("m{}", r % 900).into_bytes();
            let s = scores[(r >> 32) as usize % scores.len()];
            let at = model.iter().position(|(_, x)| *x == m);
            if step % 3 == 2 {
                assert_eq!(z.remove(&m), at.is_some());
                at.map(|i| model.remove(i));
            } else {
                assert_eq!(z.insert(&m, s), at.map(|i| model.remove(i).0 .0));
                model.push((Score(s), m));
                model.sort();
            }
        }
        assert_eq!(z.len(), model.len());
        for (i, (s, m)) in model.iter().enumerate() {
            assert_eq!(z.rank(m), Some(i));
            assert_eq!(z.by_rank(i), Some((&m[..], s.0)));
        }
        assert_eq!((z.rank(b"absent"), z.by_rank(model.len())), (None, None));
        assert!(z
            .iter()
            .rev()
            .map(|(m, _)| m.to_vec())
            .eq(model.iter().rev().map(|e| e.1.clone())));
        for min in [-0.0, 0.0, 1.0, f64::INFINITY, f64::NEG_INFINITY] {
            let lo = if min == 0.0 { -0.0 } else { min };
            let want = model
                .iter()
                .filter(|(s, _)| s.0.total_cmp(&lo).is_ge())
                .count();
            assert_eq!(z.iter_from(min).count(), want);
            let below = model.iter().filter(|(s, _)| s.0 < min).count();
            assert_eq!(z.rank_where(|_, s| s < min), below);
        }
        assert_eq!(z.by_ranks(3, 9).rev().len(), 6);
        let members: Vec<Vec<u8>> = model.iter().map(|e| e.1.clone()).collect();
        let v = Value::ZSet(Box::new(z.clone()));
        assert!(v.heap() > members.len() * (2 * block(4) + ZSET_SLOT));
        for m in &members {
            assert!(z.remove(m));
        }
        assert_eq!((z.payload, z.heap, z.order.heap()), (0, 0, 0));
    }
}
