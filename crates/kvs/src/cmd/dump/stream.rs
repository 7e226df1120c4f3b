//! Streams in Redis's RDB serialization, read and written.
//!
//! A stream is its nodes, then its metadata, then its consumer groups:
//!
//! - the node count, then for each node its master ID (16 bytes, milliseconds then
//!   sequence, big endian: the key of Redis's radix tree) and its listpack, both as RDB
//!   strings;
//! - the length (live entries), the last ID (two lengths); from `STREAM_LISTPACKS_2`
//!   on, the first ID, the largest deleted ID and the count of entries ever added;
//! - the group count, then for each group its name, last delivered ID, its read
//!   counter (from `STREAM_LISTPACKS_2` on; -1, as 2^64 - 1, when not known), its PEL
//!   (count, then for each entry the raw 16-byte ID, the delivery time as 8 bytes
//!   little endian and the delivery count) and its consumers (count, then for each its
//!   name, its seen time as 8 bytes, its active time as 8 bytes in
//!   `STREAM_LISTPACKS_3` only (-1: never active), and its PEL as raw IDs, each of
//!   which must be in the group's PEL).
//!
//! A node's listpack opens with the master entry: the live count, the deleted count,
//! the number of fields, their names, and 0. Each entry follows: its flags
//! (1: deleted, 2: the master's field names), its milliseconds and sequence as
//! differences from the master ID (each a signed 64-bit integer, wrapping), then with
//! the same fields only the values, otherwise the field count and field, value pairs;
//! then the number of listpack elements the entry took (its lp-count). Entries XDEL or
//! an exact trim marked stay in the node, flagged deleted, as Redis keeps them.
//!
//! DUMP writes each node exactly as Redis would hold it after the same commands (the
//! master ID being its first entry's, numbers in the smallest listpack encoding) as
//! `STREAM_LISTPACKS_2` with RDB version 10, which Redis 7.0 and 7.2 restore, unless a
//! consumer's active time is not its seen time: a `STREAM_LISTPACKS_2` load sets the
//! one to the other, so then the payload is `STREAM_LISTPACKS_3` with version 11,
//! which keeps it and which only Redis 7.2 restores. No payload has to lose anything,
//! and a stream without such a consumer still goes to Redis 7.0. Redis 6.2 restores no
//! stream dumped here (it reads RDB version 9 at most, and type 15 cannot hold the
//! first ID, the largest deleted ID, the entries added or the read counters).
//!
//! RESTORE reads the three forms (Redis 5.0 to 6.2 write `STREAM_LISTPACKS`, 7.0
//! `_2`, 7.2 `_3`), whatever RDB version the payload declares, as Redis does.
//! Everything is checked before it is trusted, as Redis's deep sanitization checks it
//! and more: every listpack entry (bounds, encodings, backlens, the count in the
//! header), the master entry and its terminator, each entry's IDs, field count and
//! lp-count, the node's live and deleted counts against its entries, IDs strictly
//! increasing through the whole stream with each node's first entry at its master
//! ID, the length against the live entries, the last ID not below the last live
//! entry, the count added not below the length, no duplicate group, consumer or PEL
//! entry, and each PEL entry owned by exactly one consumer (a consumer's entry missing
//! from the group's PEL, or an entry no consumer holds, is a bad payload). The first
//! ID, the largest deleted ID, read counters, times and delivery counts are taken as
//! written, as Redis takes them. Counts are bounded by the bytes left before anything
//! is allocated for them, and what is built from the payload (the entries, where the
//! master's field names are repeated for each entry using them, and the consumer name
//! of each pending entry) is bounded by [`BUDGET_RATIO`] times the payload. A node
//! without entries is refused; one whose entries are all deleted (Redis writes
//! neither) is checked and dropped. For the older forms the missing values are
//! derived as Redis derives them: the first ID from the entries (the highest ID when
//! there is none), the count added as the length, each group's read counter estimated from its last ID, each consumer's
//! active time as its seen time.

use std::collections::{BTreeMap, BTreeSet};

use super::decode::{ty, Malformed, Reader, Res};
use super::encode::{len, string};
use super::packed::{lp_int, Elem, Listpack, ListpackWriter};
use crate::stream::{Consumer, Group, Item, Pending, Stream, StreamId};

/// An entry's flag: marked deleted.
const DELETED: i64 = 1;
/// An entry's flag: the master entry's field names.
const SAME_FIELDS: i64 = 2;

/// The strings built from a payload (fields and values of the entries, the consumer
/// named by each pending entry) may hold at most this many times its size, each
/// counted with [`ELEM_COST`] bytes more, plus [`BUDGET_FLOOR`].
const BUDGET_RATIO: usize = 256;
/// See [`BUDGET_RATIO`].
const BUDGET_FLOOR: usize = 16 << 20;
/// What a field or value costs beyond its bytes, for [`BUDGET_RATIO`].
const ELEM_COST: usize = 16;

/// The active time Redis writes for a consumer never active (-1).
const NEVER: u64 = u64::MAX;

/// The RDB version a payload of `s` declares: 11 when a consumer's active time differs
/// from its seen time (only `STREAM_LISTPACKS_3` keeps both), else 10.
pub(super) fn version(s: &Stream) -> u16 {
    let v3 = s.groups.values().any(|g| {
        g.consumers
            .values()
            .any(|c| c.active_time != Some(c.seen_time))
    });
    if v3 {
        11
    } else {
        10
    }
}

/// Appends the type byte and serialization of the stream `s` to `out`; returns the
/// RDB version the payload must declare.
pub(super) fn encode(out: &mut Vec<u8>, s: &Stream) -> u16 {
    let version = version(s);
    let v3 = version == 11;
    out.push(if v3 {
        ty::STREAM_LISTPACKS_3
    } else {
        ty::STREAM_LISTPACKS_2
    });
    len(out, s.nodes().count() as u64);
    for (master, node) in s.nodes() {
        string(out, &raw_id(*master));
        let mut lp = ListpackWriter::new();
        let live = node.live as i64;
        lp.int(live);
        lp.int(node.items.len() as i64 - live);
        lp.int(node.master.len() as i64);
        node.master.iter().for_each(|f| lp.string(f));
        lp.int(0);
        for it in &node.items {
            let same = node.same_fields(it);
            let mut flags = 0;
            if it.deleted {
                flags |= DELETED;
            }
            if same {
                flags |= SAME_FIELDS;
            }
            lp.int(flags);
            lp.int(it.id.ms.wrapping_sub(master.ms) as i64);
            lp.int(it.id.seq.wrapping_sub(master.seq) as i64);
            let n = (it.fields.len() / 2) as i64;
            if same {
                it.pairs().for_each(|(_, v)| lp.string(v));
                lp.int(n + 3);
            } else {
                lp.int(n);
                it.fields.iter().for_each(|f| lp.string(f));
                lp.int(n + 3 + n + 1);
            }
        }
        string(out, &lp.finish());
    }
    len(out, s.len());
    id(out, s.last_id);
    id(out, s.first_id);
    id(out, s.max_deleted);
    len(out, s.entries_added);
    len(out, s.groups.len() as u64);
    for (name, g) in &s.groups {
        string(out, name);
        id(out, g.last_id);
        len(out, g.entries_read.unwrap_or(NEVER));
        len(out, g.pel.len() as u64);
        for (pid, p) in &g.pel {
            out.extend_from_slice(&raw_id(*pid));
            out.extend_from_slice(&p.delivery_time.to_le_bytes());
            len(out, p.delivery_count);
        }
        len(out, g.consumers.len() as u64);
        for (name, c) in &g.consumers {
            string(out, name);
            out.extend_from_slice(&c.seen_time.to_le_bytes());
            if v3 {
                out.extend_from_slice(&c.active_time.unwrap_or(NEVER).to_le_bytes());
            }
            len(out, c.pel.len() as u64);
            c.pel
                .iter()
                .for_each(|pid| out.extend_from_slice(&raw_id(*pid)));
        }
    }
    version
}

/// An ID as two RDB lengths.
fn id(out: &mut Vec<u8>, id: StreamId) {
    len(out, id.ms);
    len(out, id.seq);
}

/// An ID as 16 bytes, big endian (a radix tree key).
fn raw_id(id: StreamId) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&id.ms.to_be_bytes());
    k[8..].copy_from_slice(&id.seq.to_be_bytes());
    k
}

fn parse_raw_id(k: &[u8]) -> Res<StreamId> {
    if k.len() != 16 {
        return Err(Malformed);
    }
    let half = |b: &[u8]| u64::from_be_bytes(b.try_into().expect("8 bytes"));
    Ok(StreamId::new(half(&k[..8]), half(&k[8..])))
}

fn read_id(r: &mut Reader) -> Res<StreamId> {
    Ok(StreamId::new(r.any_len()?, r.any_len()?))
}

/// Milliseconds as Redis writes them: 8 bytes, little endian.
fn read_ms(r: &mut Reader) -> Res<u64> {
    Ok(u64::from_le_bytes(r.array()?))
}

/// A listpack's elements, read as a node needs them.
struct Elems<'a> {
    lp: Listpack<'a>,
}

impl<'a> Elems<'a> {
    fn elem(&mut self) -> Res<Elem<'a>> {
        self.lp.next()?.ok_or(Malformed)
    }

    /// An integer (or a string that spells one, as Redis accepts).
    fn int(&mut self) -> Res<i64> {
        match self.elem()? {
            Elem::Int(i) => Ok(i),
            Elem::Str(s) => lp_int(s).ok_or(Malformed),
        }
    }

    /// A count, not negative.
    fn count(&mut self) -> Res<u64> {
        u64::try_from(self.int()?).map_err(|_| Malformed)
    }

    fn bytes(&mut self) -> Res<Box<[u8]>> {
        Ok(self.elem()?.bytes().into())
    }
}

/// What may still be built from the payload (see [`BUDGET_RATIO`]).
struct Budget(usize);

impl Budget {
    /// Takes a string of `n` bytes from the budget.
    fn spend(&mut self, n: usize) -> Res<()> {
        self.0 = self.0.checked_sub(n + ELEM_COST).ok_or(Malformed)?;
        Ok(())
    }
}

/// A node read: the master entry's field names, and the entries.
type Node = (Box<[Box<[u8]>]>, Vec<Item>);

/// A group's PEL as it is read: delivery time and count by ID, and the consumer once
/// one names it.
type Pel = BTreeMap<StreamId, (u64, u64, Option<Box<[u8]>>)>;

/// One node: its master ID's key and its listpack.
fn node(key: &[u8], lp: &[u8], budget: &mut Budget) -> Res<Node> {
    let master_id = parse_raw_id(key)?;
    let mut e = Elems {
        lp: Listpack::new(lp)?,
    };
    let live = e.count()?;
    let deleted = e.count()?;
    let master_fields = e.count()?;
    // Every element takes at least two bytes: no count can be above that.
    let most = lp.len() as u64 / 2;
    if master_fields > most {
        return Err(Malformed);
    }
    let master = (0..master_fields)
        .map(|_| e.bytes())
        .collect::<Res<Box<[_]>>>()?;
    if e.int()? != 0 {
        return Err(Malformed);
    }
    // An entry is at least four elements.
    let total = live.checked_add(deleted).ok_or(Malformed)?;
    if total > most / 4 || total == 0 {
        return Err(Malformed);
    }
    let mut items = Vec::with_capacity(total as usize);
    let (mut seen_live, mut seen_deleted) = (0u64, 0u64);
    for _ in 0..total {
        let flags = e.int()?;
        let id = StreamId::new(
            master_id.ms.wrapping_add(e.int()? as u64),
            master_id.seq.wrapping_add(e.int()? as u64),
        );
        let mut fields = Vec::new();
        let n = if flags & SAME_FIELDS != 0 {
            for f in master.iter() {
                fields.push(f.clone());
                fields.push(e.bytes()?);
            }
            master_fields + 3
        } else {
            let n = e.count()?;
            if n > most {
                return Err(Malformed);
            }
            for _ in 0..n * 2 {
                fields.push(e.bytes()?);
            }
            n + 3 + n + 1
        };
        if e.count()? != n {
            return Err(Malformed);
        }
        for f in &fields {
            budget.spend(f.len())?;
        }
        let deleted = flags & DELETED != 0;
        if deleted {
            seen_deleted += 1;
        } else {
            seen_live += 1;
        }
        items.push(Item {
            id,
            fields: fields.into(),
            deleted,
        });
    }
    if e.lp.next()?.is_some() || seen_live != live || seen_deleted != deleted {
        return Err(Malformed);
    }
    if items[0].id != master_id || !items.windows(2).all(|w| w[0].id < w[1].id) {
        return Err(Malformed);
    }
    Ok((master, items))
}

/// A stream of type `t` (`STREAM_LISTPACKS`, `_2` or `_3`), after its type byte.
pub(super) fn decode(r: &mut Reader, t: u8) -> Res<Stream> {
    let v2 = t >= ty::STREAM_LISTPACKS_2;
    let v3 = t >= ty::STREAM_LISTPACKS_3;
    let mut budget = Budget(r.left().saturating_mul(BUDGET_RATIO) + BUDGET_FLOOR);
    let mut s = Stream::default();
    let mut last_entry: Option<StreamId> = None;
    for _ in 0..r.bounded_len()? {
        let key = r.string()?;
        let lp = r.string()?;
        let (master, items) = node(&key, &lp, &mut budget)?;
        let (first, last) = (items[0].id, items[items.len() - 1].id);
        if last_entry.is_some_and(|l| l >= first) {
            return Err(Malformed);
        }
        last_entry = Some(last);
        if items.iter().all(|i| i.deleted) {
            continue;
        }
        if !s.restore_node(master, items) {
            return Err(Malformed);
        }
    }
    let length = r.any_len()?;
    s.last_id = read_id(r)?;
    if v2 {
        s.first_id = read_id(r)?;
        s.max_deleted = read_id(r)?;
        s.entries_added = r.any_len()?;
    } else {
        // As Redis finds it: the highest ID when there is no entry.
        s.first_id = s.edge(false).unwrap_or(StreamId::MAX);
        s.entries_added = length;
    }
    let top = s.edge(true);
    if length != s.len()
        || s.entries_added < length
        || s.entries_added == u64::MAX
        || top.is_some_and(|t| t > s.last_id)
    {
        return Err(Malformed);
    }
    for _ in 0..r.bounded_len()? {
        let name: Box<[u8]> = r.string()?.into();
        let last_id = read_id(r)?;
        let entries_read = if v2 {
            match r.any_len()? {
                NEVER => None,
                n => Some(n),
            }
        } else {
            s.entries_read_at(last_id)
        };
        let mut g = Group::new(last_id, entries_read);
        let mut pel = Pel::new();
        for _ in 0..r.bounded_len()? {
            let pid = parse_raw_id(r.take(16)?)?;
            let time = read_ms(r)?;
            let count = r.any_len()?;
            if pel.insert(pid, (time, count, None)).is_some() {
                return Err(Malformed);
            }
        }
        for _ in 0..r.bounded_len()? {
            let cname: Box<[u8]> = r.string()?.into();
            let seen_time = read_ms(r)?;
            let active_time = if v3 {
                match read_ms(r)? {
                    NEVER => None,
                    t => Some(t),
                }
            } else {
                Some(seen_time)
            };
            let mut owned = BTreeSet::new();
            for _ in 0..r.bounded_len()? {
                let pid = parse_raw_id(r.take(16)?)?;
                match pel.get_mut(&pid) {
                    Some((_, _, o @ None)) => {
                        budget.spend(cname.len())?;
                        *o = Some(cname.clone());
                    }
                    // Not in the group's PEL, or already someone's.
                    _ => return Err(Malformed),
                }
                owned.insert(pid);
            }
            let c = Consumer {
                seen_time,
                active_time,
                pel: owned,
            };
            if g.consumers.insert(cname, c).is_some() {
                return Err(Malformed);
            }
        }
        for (pid, (delivery_time, delivery_count, consumer)) in pel {
            let p = Pending {
                consumer: consumer.ok_or(Malformed)?,
                delivery_time,
                delivery_count,
            };
            g.pel.insert(pid, p);
        }
        g.recount();
        if s.groups.insert(name, g).is_some() {
            return Err(Malformed);
        }
    }
    Ok(s)
}
