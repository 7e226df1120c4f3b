//! A stream: entries (field-value pairs) under increasing IDs, and the consumer groups
//! that read it ([`Stream`]).
//!
//! The entries sit in nodes as Redis's do (a node per listpack in Redis's radix tree):
//! a node takes entries until it holds `stream-node-max-entries` of them (deleted ones
//! count) or its estimated listpack size reaches `stream-node-max-bytes`, then a new
//! node starts. XDEL marks an entry deleted inside its node and a node whose entries are
//! all deleted goes; trimming with `~` removes whole nodes only. So MAXLEN/MINID `~`
//! leave exactly the lengths Redis leaves, and DUMP writes the same nodes.
//!
//! Nodes are found by their first ID in a `BTreeMap`, entries inside a node by binary
//! search: a lookup or a range start is O(log n).
//!
//! Each group keeps its last delivered ID, its read counter (for the lag), its pending
//! entries list (PEL: ID to consumer, delivery time and count) and its consumers, each
//! with its own set of pending IDs. Groups and consumers are ordered by name, as
//! Redis's radix trees order them (XINFO lists them so).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::store::block;

/// A stream entry ID: milliseconds and a sequence number.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId {
    /// Milliseconds part.
    pub ms: u64,
    /// Sequence part.
    pub seq: u64,
}

/// Redis's error for an ID it cannot parse.
pub const INVALID_ID: &str = "ERR Invalid stream ID specified as stream command argument";

impl StreamId {
    /// 0-0.
    pub const MIN: StreamId = StreamId { ms: 0, seq: 0 };
    /// The largest ID.
    pub const MAX: StreamId = StreamId {
        ms: u64::MAX,
        seq: u64::MAX,
    };

    /// An ID.
    pub const fn new(ms: u64, seq: u64) -> StreamId {
        StreamId { ms, seq }
    }

    /// True for 0-0.
    pub fn is_zero(self) -> bool {
        self == StreamId::MIN
    }

    /// The next ID, None after the largest.
    pub fn next(self) -> Option<StreamId> {
        match self.seq.checked_add(1) {
            Some(seq) => Some(StreamId { ms: self.ms, seq }),
            None => self.ms.checked_add(1).map(|ms| StreamId { ms, seq: 0 }),
        }
    }

    /// The previous ID, None before 0-0.
    pub fn prev(self) -> Option<StreamId> {
        match self.seq.checked_sub(1) {
            Some(seq) => Some(StreamId { ms: self.ms, seq }),
            None => self
                .ms
                .checked_sub(1)
                .map(|ms| StreamId { ms, seq: u64::MAX }),
        }
    }

    /// Parses `ms-seq`, `ms` (the sequence then `missing_seq`), and unless `strict` the
    /// special `-` and `+`. With `star_seq`, `ms-*` parses too and the second part of
    /// the result says whether the sequence was given.
    pub fn parse_full(
        a: &[u8],
        missing_seq: u64,
        strict: bool,
        star_seq: bool,
    ) -> Result<(StreamId, bool), &'static str> {
        if a.len() > 127 {
            return Err(INVALID_ID);
        }
        match a {
            b"-" | b"+" if strict => return Err(INVALID_ID),
            b"-" => return Ok((StreamId::MIN, true)),
            b"+" => return Ok((StreamId::MAX, true)),
            _ => {}
        }
        let (ms, seq) = match a.iter().position(|&b| b == b'-') {
            Some(i) => (&a[..i], Some(&a[i + 1..])),
            None => (a, None),
        };
        let ms = parse_u64(ms).ok_or(INVALID_ID)?;
        match seq {
            None => Ok((StreamId::new(ms, missing_seq), true)),
            Some(b"*") if star_seq => Ok((StreamId::new(ms, 0), false)),
            Some(s) => Ok((StreamId::new(ms, parse_u64(s).ok_or(INVALID_ID)?), true)),
        }
    }

    /// [`StreamId::parse_full`] without the `ms-*` form.
    pub fn parse(a: &[u8], missing_seq: u64, strict: bool) -> Result<StreamId, &'static str> {
        Self::parse_full(a, missing_seq, strict, false).map(|(id, _)| id)
    }

    /// A range bound: `(` before the ID excludes it (then `-` and `+` are refused).
    /// Returns the ID and whether it is excluded.
    pub fn parse_bound(a: &[u8], missing_seq: u64) -> Result<(StreamId, bool), &'static str> {
        if a.len() > 1 && a[0] == b'(' {
            Ok((Self::parse(&a[1..], missing_seq, true)?, true))
        } else {
            Ok((Self::parse(a, missing_seq, false)?, false))
        }
    }

    /// An interval's bounds as XRANGE and XPENDING take them: an incomplete start has
    /// sequence 0 and an incomplete end the largest; `(` excludes a bound.
    pub fn parse_interval(start: &[u8], end: &[u8]) -> Result<(StreamId, StreamId), &'static str> {
        let (mut s, sx) = Self::parse_bound(start, 0)?;
        if sx {
            s = s.next().ok_or("ERR invalid start ID for the interval")?;
        }
        let (mut e, ex) = Self::parse_bound(end, u64::MAX)?;
        if ex {
            e = e.prev().ok_or("ERR invalid end ID for the interval")?;
        }
        Ok((s, e))
    }

    /// The ID as Redis writes it.
    pub fn text(self) -> String {
        self.to_string()
    }
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

/// Redis's string2ull: decimal digits only (a sign or spaces are refused), no overflow.
fn parse_u64(a: &[u8]) -> Option<u64> {
    if a.is_empty() || a.len() > 20 || !a.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(a).ok()?.parse().ok()
}

/// One entry: its ID, its fields and values (alternating), and whether XDEL or an
/// exact trim marked it deleted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    /// The ID.
    pub id: StreamId,
    /// Field, value, field, value, ...
    pub fields: Box<[Box<[u8]>]>,
    /// Marked deleted (still in its node).
    pub deleted: bool,
}

impl Item {
    /// The field-value pairs.
    pub fn pairs(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.fields.chunks_exact(2).map(|p| (&*p[0], &*p[1]))
    }
}

/// A node: entries in ID order, of which `live` are not deleted; `master` holds the
/// field names of the entry that opened it (Redis's master entry).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Node {
    /// Entries, deleted ones included.
    pub items: Vec<Item>,
    /// Entries not deleted.
    pub live: usize,
    /// The master entry's field names.
    pub master: Box<[Box<[u8]>]>,
    /// The estimated size of its listpack.
    bytes: usize,
}

impl Node {
    /// True when `item`'s field names are the master entry's.
    pub fn same_fields(&self, item: &Item) -> bool {
        item.fields.len() == self.master.len() * 2
            && item
                .pairs()
                .zip(self.master.iter())
                .all(|((f, _), m)| f == &**m)
    }
}

/// A pending entry of a group: delivered, not yet acknowledged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pending {
    /// The consumer that holds it.
    pub consumer: Box<[u8]>,
    /// When it was last delivered (ms since the epoch).
    pub delivery_time: u64,
    /// How many times it was delivered.
    pub delivery_count: u64,
}

/// A consumer of a group.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Consumer {
    /// The last time it was seen (any group command naming it), ms since the epoch.
    pub seen_time: u64,
    /// The last time it read or claimed something (None: never), ms since the epoch.
    pub active_time: Option<u64>,
    /// The IDs pending for it.
    pub pel: BTreeSet<StreamId>,
}

/// A consumer group.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Group {
    /// The last ID delivered to the group.
    pub last_id: StreamId,
    /// How many entries the group read (for the lag); None when not known.
    pub entries_read: Option<u64>,
    /// The pending entries.
    pub pel: BTreeMap<StreamId, Pending>,
    /// The consumers, by name.
    pub consumers: BTreeMap<Box<[u8]>, Consumer>,
    /// Bytes of consumer names held: the consumers' own and their pending entries'
    /// (kept by the methods below; [`Group::recount`] after building one by hand).
    names: usize,
}

impl Group {
    /// A group that starts after `last_id`.
    pub fn new(last_id: StreamId, entries_read: Option<u64>) -> Group {
        Group {
            last_id,
            entries_read,
            ..Group::default()
        }
    }

    /// Counts the bytes of consumer names again (after the maps were filled directly).
    pub fn recount(&mut self) {
        self.names = self.consumers.keys().map(|k| k.len()).sum::<usize>()
            + self.pel.values().map(|p| p.consumer.len()).sum::<usize>();
    }

    /// Heap bytes held beyond the maps' nodes: the consumer names.
    pub fn name_bytes(&self) -> usize {
        self.names
    }

    /// The consumer `name`, made if absent (true when it was made), seen at `now`.
    pub fn consumer(&mut self, name: &[u8], now: u64) -> (&mut Consumer, bool) {
        let made = !self.consumers.contains_key(name);
        if made {
            self.names += name.len();
        }
        let c = self.consumers.entry(name.into()).or_default();
        if made {
            c.active_time = None;
        }
        c.seen_time = now;
        (c, made)
    }

    /// Acknowledges `id`: true when it was pending.
    pub fn ack(&mut self, id: StreamId) -> bool {
        match self.pel.remove(&id) {
            Some(p) => {
                self.names -= p.consumer.len();
                if let Some(c) = self.consumers.get_mut(&p.consumer) {
                    c.pel.remove(&id);
                }
                true
            }
            None => false,
        }
    }

    /// Makes `id` pending for `consumer` (taking it from the consumer holding it), with
    /// this delivery time and count.
    pub fn assign(&mut self, id: StreamId, consumer: &[u8], time: u64, count: u64) {
        if let Some(old) = self.pel.get(&id) {
            if &*old.consumer != consumer {
                if let Some(c) = self.consumers.get_mut(&old.consumer) {
                    c.pel.remove(&id);
                }
            }
        }
        let old = self.pel.insert(
            id,
            Pending {
                consumer: consumer.into(),
                delivery_time: time,
                delivery_count: count,
            },
        );
        self.names += consumer.len();
        if let Some(old) = old {
            self.names -= old.consumer.len();
        }
        if !self.consumers.contains_key(consumer) {
            self.names += consumer.len();
        }
        self.consumers
            .entry(consumer.into())
            .or_default()
            .pel
            .insert(id);
    }

    /// Removes consumer `name`: how many entries it had pending (they are dropped from
    /// the group's PEL too); None when there was no such consumer.
    pub fn remove_consumer(&mut self, name: &[u8]) -> Option<usize> {
        let c = self.consumers.remove(name)?;
        self.names -= name.len();
        for id in &c.pel {
            if let Some(p) = self.pel.remove(id) {
                self.names -= p.consumer.len();
            }
        }
        Some(c.pel.len())
    }
}

/// How to trim: by length or by lowest ID, exactly or by whole nodes (`approx`), with
/// at most `limit` entries removed (0: no limit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trim {
    /// What to keep.
    pub keep: Keep,
    /// `~`: only whole nodes.
    pub approx: bool,
    /// At most this many entries removed (0: no limit).
    pub limit: u64,
}

/// What a trim keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// At most this many entries.
    MaxLen(u64),
    /// No entry below this ID.
    MinId(StreamId),
}

/// Why an entry could not be added.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddError {
    /// The ID is not above the last one.
    NotGreater,
    /// The last possible ID was used.
    Exhausted,
}

/// A node's listpack header, the master entry's fixed part and end: Redis's 7 bytes of
/// header and end, plus count, deleted, field count and the master terminator.
const NODE_BASE: usize = 7 + 4 * 2;
/// The fixed elements of an entry (flags, ms delta, seq delta, lp-count) in a listpack.
const ITEM_BASE: usize = 4 * 2;

/// The size of a listpack element holding `s` (encoding header and back length).
fn lp_elem(s: &[u8]) -> usize {
    let n = s.len();
    let head = if n < 64 {
        1
    } else if n < 4096 {
        2
    } else {
        5
    };
    let back = match head + n {
        0..=127 => 1,
        128..=16383 => 2,
        _ => 3,
    };
    head + n + back
}

/// Heap bytes of an item beyond its strings.
const ITEM_HEAP: usize = std::mem::size_of::<Item>();

/// A stream.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stream {
    /// Nodes by the ID of their first entry.
    nodes: BTreeMap<StreamId, Node>,
    /// Entries not deleted.
    length: u64,
    /// The last ID used (entries may have been deleted since).
    pub last_id: StreamId,
    /// The first entry's ID (0-0 when empty).
    pub first_id: StreamId,
    /// The largest ID deleted by XDEL (or XSETID MAXDELETEDID).
    pub max_deleted: StreamId,
    /// How many entries were ever added.
    pub entries_added: u64,
    /// The consumer groups, by name.
    pub groups: BTreeMap<Box<[u8]>, Group>,
    payload: usize,
    heap: usize,
}

impl Stream {
    /// Entries not deleted (XLEN).
    pub fn len(&self) -> u64 {
        self.length
    }

    /// True when it holds no entry (a stream key stays even then).
    pub fn is_empty(&self) -> bool {
        self.length == 0
    }

    /// Bytes of fields and values held.
    pub fn payload(&self) -> usize {
        self.payload
    }

    /// Heap bytes held (estimated).
    pub fn heap(&self) -> usize {
        // O(groups): each group's names and the nodes of its maps.
        let groups: usize = self
            .groups
            .iter()
            .map(|(n, g)| 64 + n.len() + g.pel.len() * 96 + g.consumers.len() * 96 + g.names)
            .sum();
        self.heap + self.nodes.len() * 64 + groups
    }

    /// The nodes, in ID order (DUMP).
    pub fn nodes(&self) -> impl Iterator<Item = (&StreamId, &Node)> {
        self.nodes.iter()
    }

    /// Adds a whole node after the last one (RESTORE): `items`, deleted ones included,
    /// in increasing ID order above every entry held, at least one of them live;
    /// `master` the master entry's field names. The length and the byte counts follow;
    /// the IDs and counters (`last_id`, `first_id`, `entries_added`, ...) are left to
    /// the caller. False, and nothing changed, when the items break those rules.
    pub fn restore_node(&mut self, master: Box<[Box<[u8]>]>, items: Vec<Item>) -> bool {
        let Some(first) = items.first().map(|i| i.id) else {
            return false;
        };
        let after_last = match self.nodes.last_key_value() {
            Some((_, n)) => n.items.last().is_some_and(|l| l.id < first),
            None => true,
        };
        let live = items.iter().filter(|i| !i.deleted).count();
        if !after_last || live == 0 || !items.windows(2).all(|w| w[0].id < w[1].id) {
            return false;
        }
        let mut node = Node {
            items: Vec::new(),
            live,
            bytes: NODE_BASE + master.iter().map(|m| lp_elem(m)).sum::<usize>(),
            master,
        };
        for it in &items {
            // As `append` counts an entry.
            node.bytes += ITEM_BASE
                + if node.same_fields(it) {
                    it.pairs().map(|(_, v)| lp_elem(v)).sum::<usize>()
                } else {
                    2 + it.fields.iter().map(|f| lp_elem(f)).sum::<usize>()
                };
            for f in it.fields.iter() {
                self.payload += f.len();
                self.heap += block(f.len());
            }
            self.heap += ITEM_HEAP + block(it.fields.len() * 16);
        }
        node.items = items;
        self.length += live as u64;
        self.nodes.insert(first, node);
        true
    }

    /// The ID a new entry gets: `want` (with `seq_given` false, `ms-*`: the next
    /// sequence in that millisecond), or for `*` (None) the time `now` or the next ID
    /// after the last.
    pub fn next_id(
        &self,
        want: Option<StreamId>,
        seq_given: bool,
        now: u64,
    ) -> Result<StreamId, AddError> {
        let last = self.last_id;
        match want {
            None => {
                if now > last.ms {
                    Ok(StreamId::new(now, 0))
                } else {
                    last.next().ok_or(AddError::Exhausted)
                }
            }
            Some(id) if seq_given => {
                if id > last {
                    Ok(id)
                } else {
                    Err(AddError::NotGreater)
                }
            }
            Some(id) => {
                if id.ms == last.ms {
                    match last.seq.checked_add(1) {
                        Some(seq) => Ok(StreamId::new(id.ms, seq)),
                        None => Err(AddError::NotGreater),
                    }
                } else if id.ms > last.ms {
                    Ok(id)
                } else {
                    Err(AddError::NotGreater)
                }
            }
        }
    }

    /// Appends an entry under `id` (above the last ID: see [`Stream::next_id`]), into
    /// the last node unless it is full by `max_entries` (0: no limit) or `max_bytes`.
    pub fn append(&mut self, id: StreamId, fields: &[&[u8]], max_entries: u64, max_bytes: u64) {
        debug_assert!(id > self.last_id || self.entries_added == 0);
        let item = Item {
            id,
            fields: fields.iter().map(|f| Box::<[u8]>::from(*f)).collect(),
            deleted: false,
        };
        let size: usize = fields.iter().map(|f| f.len()).sum();
        for f in fields {
            self.payload += f.len();
            self.heap += block(f.len());
        }
        self.heap += ITEM_HEAP + block(fields.len() * 16);
        let max_bytes = if max_bytes == 0 || max_bytes > 1 << 30 {
            1 << 30
        } else {
            max_bytes as usize
        };
        let open = match self.nodes.last_key_value() {
            Some((_, n)) => {
                n.bytes + size < max_bytes
                    && (max_entries == 0 || (n.items.len() as u64) < max_entries)
            }
            None => false,
        };
        if !open {
            let master: Box<[Box<[u8]>]> = item.pairs().map(|(f, _)| f.into()).collect();
            let bytes = NODE_BASE + master.iter().map(|m| lp_elem(m)).sum::<usize>();
            self.nodes.insert(
                id,
                Node {
                    items: Vec::new(),
                    live: 0,
                    master,
                    bytes,
                },
            );
        }
        let node = self.nodes.values_mut().next_back().expect("a node");
        let same = node.same_fields(&item);
        node.bytes += ITEM_BASE
            + if same {
                item.pairs().map(|(_, v)| lp_elem(v)).sum::<usize>()
            } else {
                2 + item.fields.iter().map(|f| lp_elem(f)).sum::<usize>()
            };
        node.items.push(item);
        node.live += 1;
        if self.length == 0 {
            self.first_id = id;
        }
        self.length += 1;
        self.entries_added += 1;
        self.last_id = id;
    }

    /// The node holding `id`, if any, and the item's index in it.
    fn locate(&self, id: StreamId) -> Option<(StreamId, usize)> {
        let (k, n) = self.nodes.range(..=id).next_back()?;
        let i = n.items.binary_search_by(|it| it.id.cmp(&id)).ok()?;
        Some((*k, i))
    }

    /// The entry `id`, if present and not deleted.
    pub fn get(&self, id: StreamId) -> Option<&Item> {
        let (k, i) = self.locate(id)?;
        let it = &self.nodes[&k].items[i];
        (!it.deleted).then_some(it)
    }

    /// Entries with IDs in `start..=end`, lowest first.
    pub fn range(&self, start: StreamId, end: StreamId) -> impl Iterator<Item = &Item> {
        let from = self
            .nodes
            .range(..=start)
            .next_back()
            .map(|(k, _)| *k)
            .unwrap_or(start);
        let nodes = if start <= end {
            Some(self.nodes.range(from..=end))
        } else {
            None
        };
        nodes
            .into_iter()
            .flatten()
            .flat_map(|(_, n)| n.items.iter())
            .skip_while(move |it| it.id < start)
            .take_while(move |it| it.id <= end)
            .filter(|it| !it.deleted)
    }

    /// Entries with IDs in `start..=end`, highest first.
    pub fn rev_range(&self, start: StreamId, end: StreamId) -> impl Iterator<Item = &Item> {
        let nodes = if start <= end {
            Some(self.nodes.range(..=end))
        } else {
            None
        };
        nodes
            .into_iter()
            .flatten()
            .rev()
            .take_while(move |(_, n)| n.items.last().is_some_and(|l| l.id >= start))
            .flat_map(|(_, n)| n.items.iter().rev())
            .skip_while(move |it| it.id > end)
            .take_while(move |it| it.id >= start)
            .filter(|it| !it.deleted)
    }

    /// The first (`last` false) or last entry's ID, if any.
    pub fn edge(&self, last: bool) -> Option<StreamId> {
        if last {
            self.rev_range(StreamId::MIN, StreamId::MAX)
                .next()
                .map(|i| i.id)
        } else {
            self.range(StreamId::MIN, StreamId::MAX)
                .next()
                .map(|i| i.id)
        }
    }

    fn forget(&mut self, it: &Item) {
        for f in it.fields.iter() {
            self.payload -= f.len();
            self.heap -= block(f.len());
        }
        self.heap -= ITEM_HEAP + block(it.fields.len() * 16);
    }

    /// Deletes entry `id` (XDEL): true when it was there. The largest deleted ID and
    /// the first ID follow.
    pub fn delete(&mut self, id: StreamId) -> bool {
        let Some((k, i)) = self.locate(id) else {
            return false;
        };
        let node = self.nodes.get_mut(&k).expect("located");
        if node.items[i].deleted {
            return false;
        }
        node.items[i].deleted = true;
        node.live -= 1;
        let gone = if node.live == 0 {
            self.nodes.remove(&k)
        } else {
            None
        };
        if let Some(n) = gone {
            n.items.iter().for_each(|it| self.forget(it));
        }
        self.length -= 1;
        if id > self.max_deleted {
            self.max_deleted = id;
        }
        if self.length == 0 {
            self.first_id = StreamId::MIN;
        } else if id == self.first_id {
            self.first_id = self.edge(false).unwrap_or_default();
        }
        true
    }

    /// Trims from the head as Redis's `streamTrim`: how many entries went.
    pub fn trim(&mut self, t: Trim) -> u64 {
        let mut deleted = 0u64;
        while let Some((&k, node)) = self.nodes.first_key_value() {
            if let Keep::MaxLen(max) = t.keep {
                if self.length <= max {
                    break;
                }
            }
            let entries = node.live as u64;
            if t.limit != 0 && deleted + entries > t.limit {
                break;
            }
            let whole = match t.keep {
                Keep::MaxLen(max) => self.length - entries >= max,
                Keep::MinId(min) => node.items.last().is_some_and(|l| l.id < min),
            };
            if whole {
                let n = self.nodes.remove(&k).expect("first");
                n.items.iter().for_each(|it| self.forget(it));
                self.length -= entries;
                deleted += entries;
                continue;
            }
            if t.approx {
                break;
            }
            let node = self.nodes.get_mut(&k).expect("first");
            let mut length = self.length;
            for it in node.items.iter_mut() {
                let stop = match t.keep {
                    Keep::MaxLen(max) => length <= max,
                    Keep::MinId(min) => it.id >= min,
                };
                if stop {
                    break;
                }
                if !it.deleted {
                    it.deleted = true;
                    node.live -= 1;
                    length -= 1;
                    deleted += 1;
                }
            }
            self.length = length;
            break;
        }
        if self.length == 0 {
            self.first_id = StreamId::MIN;
        } else if deleted > 0 {
            self.first_id = self.edge(false).unwrap_or_default();
        }
        deleted
    }

    /// True when a deleted entry may lie in `start..=end` (Redis's
    /// `streamRangeHasTombstones`).
    pub fn has_tombstones(&self, start: StreamId, end: StreamId) -> bool {
        if self.length == 0 || self.max_deleted.is_zero() || self.first_id > self.max_deleted {
            return false;
        }
        start <= self.max_deleted && self.max_deleted <= end
    }

    /// How many entries were added up to `id` included, when it can be known (Redis's
    /// `streamEstimateDistanceFromFirstEverEntry`).
    pub fn entries_read_at(&self, id: StreamId) -> Option<u64> {
        if self.entries_added == 0 {
            return Some(0);
        }
        if self.length == 0 && id <= self.last_id {
            return Some(self.entries_added);
        }
        if id == self.last_id {
            return Some(self.entries_added);
        }
        if id > self.last_id {
            return None;
        }
        if self.max_deleted.is_zero() || self.max_deleted < self.first_id {
            if id < self.first_id {
                return Some(self.entries_added - self.length);
            }
            if id == self.first_id {
                return Some(self.entries_added - self.length + 1);
            }
        }
        None
    }

    /// A group's lag (XINFO GROUPS), None when it cannot be known.
    pub fn lag(&self, g: &Group) -> Option<u64> {
        if self.entries_added == 0 {
            return Some(0);
        }
        if let Some(read) = g.entries_read {
            if !self.has_tombstones(g.last_id, StreamId::MAX) {
                return Some(self.entries_added.saturating_sub(read));
            }
        }
        self.entries_read_at(g.last_id)
            .map(|r| self.entries_added.saturating_sub(r))
    }

    /// Moves the group's last ID forward to `id`, delivered now, counting the read.
    pub fn advance_group(&mut self, group: &[u8], id: StreamId) {
        let tomb = self.has_tombstones(id, StreamId::MAX);
        let at = self.entries_read_at(id);
        let added = self.entries_added;
        if let Some(g) = self.groups.get_mut(group) {
            if id > g.last_id {
                match g.entries_read {
                    Some(r) if !tomb => g.entries_read = Some(r + 1),
                    _ if added > 0 => g.entries_read = at,
                    _ => {}
                }
                g.last_id = id;
            }
        }
    }

    /// Heap bytes of the string parts (tests).
    #[cfg(test)]
    fn payload_check(&self) -> usize {
        self.nodes
            .values()
            .flat_map(|n| n.items.iter())
            .flat_map(|it| it.fields.iter())
            .map(|f| f.len())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(s: &mut Stream, id: StreamId, max: u64) {
        s.append(id, &[b"f", b"v"], max, 4096);
    }

    #[test]
    fn ids_parse_as_redis_parses_them() {
        assert_eq!(StreamId::parse(b"5", 7, false), Ok(StreamId::new(5, 7)));
        assert_eq!(StreamId::parse(b"5-3", 7, false), Ok(StreamId::new(5, 3)));
        assert_eq!(StreamId::parse(b"-", 0, false), Ok(StreamId::MIN));
        assert_eq!(StreamId::parse(b"+", 0, false), Ok(StreamId::MAX));
        assert!(StreamId::parse(b"+", 0, true).is_err());
        assert!(StreamId::parse(b"5-*", 0, false).is_err());
        assert_eq!(
            StreamId::parse_full(b"5-*", 0, true, true),
            Ok((StreamId::new(5, 0), false))
        );
        for bad in [
            &b"-5"[..],
            b"5-",
            b"a",
            b"1-2-3",
            b"18446744073709551616",
            b" 1",
            b"",
        ] {
            assert!(StreamId::parse(bad, 0, false).is_err(), "{bad:?}");
        }
        assert_eq!(
            StreamId::parse_bound(b"(5-1", 0),
            Ok((StreamId::new(5, 1), true))
        );
        assert!(StreamId::parse_bound(b"(-", 0).is_err());
        assert_eq!(StreamId::new(1, u64::MAX).next(), Some(StreamId::new(2, 0)));
        assert_eq!(StreamId::MAX.next(), None);
        assert_eq!(StreamId::new(2, 0).prev(), Some(StreamId::new(1, u64::MAX)));
    }

    #[test]
    fn approximate_trimming_removes_whole_nodes_only() {
        // Redis's "XADD with MAXLEN option and the '~' argument": 1000 adds, nodes of
        // 100, MAXLEN ~ 555 leaves 600.
        let mut s = Stream::default();
        for j in 1..=1000 {
            add(&mut s, StreamId::new(j, 0), 100);
            s.trim(Trim {
                keep: Keep::MaxLen(555),
                approx: true,
                limit: 10_000,
            });
        }
        assert_eq!(s.len(), 600);
        assert_eq!(s.first_id, StreamId::new(401, 0));
        assert_eq!(s.payload(), s.payload_check());
        // Exact trimming marks entries deleted inside the first node.
        assert_eq!(
            s.trim(Trim {
                keep: Keep::MaxLen(555),
                approx: false,
                limit: 0
            }),
            45
        );
        assert_eq!(s.len(), 555);
        assert_eq!(s.range(StreamId::MIN, StreamId::MAX).count(), 555);
        assert_eq!(s.first_id, StreamId::new(446, 0));
        assert_eq!(s.edge(true), Some(StreamId::new(1000, 0)));
    }

    #[test]
    fn ranges_and_deletes_agree_with_a_plain_model() {
        let mut s = Stream::default();
        let mut model = BTreeSet::new();
        let mut x = 12345u64;
        for j in 1..=500u64 {
            add(&mut s, StreamId::new(j, j % 3), 7);
            model.insert(StreamId::new(j, j % 3));
        }
        for _ in 0..300 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let id = StreamId::new(1 + (x >> 33) % 520, (x >> 20) % 3);
            assert_eq!(s.delete(id), model.remove(&id));
            assert_eq!(s.len(), model.len() as u64);
            let a = StreamId::new((x >> 40) % 520, 0);
            let b = StreamId::new(a.ms + (x >> 50) % 100, 1);
            let got: Vec<_> = s.range(a, b).map(|i| i.id).collect();
            let want: Vec<_> = model.range(a..=b).copied().collect();
            assert_eq!(got, want);
            let got: Vec<_> = s.rev_range(a, b).map(|i| i.id).collect();
            let want: Vec<_> = model.range(a..=b).rev().copied().collect();
            assert_eq!(got, want);
            assert_eq!(s.first_id, model.first().copied().unwrap_or_default());
        }
        assert_eq!(s.payload(), s.payload_check());
    }

    #[test]
    fn new_ids_follow_the_last() {
        let mut s = Stream::default();
        assert_eq!(s.next_id(None, true, 10), Ok(StreamId::new(10, 0)));
        add(&mut s, StreamId::new(10, 0), 0);
        assert_eq!(s.next_id(None, true, 5), Ok(StreamId::new(10, 1)));
        assert_eq!(
            s.next_id(Some(StreamId::new(10, 0)), false, 0),
            Ok(StreamId::new(10, 1))
        );
        assert_eq!(
            s.next_id(Some(StreamId::new(9, 0)), false, 0),
            Err(AddError::NotGreater)
        );
        assert_eq!(
            s.next_id(Some(StreamId::new(10, 0)), true, 0),
            Err(AddError::NotGreater)
        );
        s.last_id = StreamId::MAX;
        assert_eq!(s.next_id(None, true, 0), Err(AddError::Exhausted));
    }
}
