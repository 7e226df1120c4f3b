//! XINFO STREAM [FULL [COUNT n]], XINFO GROUPS, XINFO CONSUMERS and XINFO HELP, with
//! Redis 7.2's fields in its order; maps in RESP3 where Redis writes maps.
//!
//! `radix-tree-keys` is the number of nodes (Redis's listpacks, one key each in its
//! radix tree); `radix-tree-nodes` is the number of nodes a radix tree holding those
//! keys (each node's first ID, 16 big-endian bytes) has when fully compressed, which is
//! what Redis's tree has after appends.

use super::groups::{no_group, sub_help, sub_syntax, subcommand, Subs};
use super::{write_item, write_items, Ctx};
use crate::cmd::{eq, parse_i64, read, NOT_INT};
use crate::resp::Writer;
use crate::stream::{Group, Stream, StreamId};

/// XINFO's subcommands.
const XINFO_SUBS: Subs = &[("consumers", 4), ("groups", 3), ("stream", -3), ("help", 2)];

const XINFO_HELP: &[&str] = &[
    "CONSUMERS <key> <groupname>",
    "    Show consumers of <groupname>.",
    "GROUPS <key>",
    "    Show the stream consumer groups.",
    "STREAM <key> [FULL [COUNT <count>]",
    "    Show information about the stream.",
];

/// XINFO CONSUMERS key group, XINFO GROUPS key, XINFO STREAM key [FULL [COUNT n]],
/// XINFO HELP.
pub fn xinfo(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let Some(sub) = subcommand(w, args, XINFO_SUBS) else {
        return;
    };
    if sub == "help" {
        return sub_help(w, args, XINFO_HELP);
    }
    let key = args[2];
    let now = ctx.now;
    let r = read::<Stream, _>(ctx, key, |s| match sub {
        "consumers" => consumers(s, key, args[3], now, w),
        "groups" => groups(s, w),
        _ => stream(s, args, w),
    });
    match r {
        Err(e) => w.error(e),
        Ok(None) => w.error("ERR no such key"),
        Ok(Some(())) => {}
    }
}

/// An ID as a bulk string.
fn id(w: &mut Writer, id: StreamId) {
    w.bulk(id.text().as_bytes());
}

/// A counter that may not be known: the integer or null.
fn maybe(w: &mut Writer, v: Option<u64>) {
    match v {
        Some(n) => w.int(n as i64),
        None => w.null(),
    }
}

/// XINFO CONSUMERS: each consumer's name, pending count, idle time (since it was last
/// seen) and inactive time (since it last read or claimed; -1: never).
fn consumers(s: &Stream, key: &[u8], group: &[u8], now: u64, w: &mut Writer) {
    let Some(g) = s.groups.get(group) else {
        return w.error(&no_group(key, group));
    };
    let now = now as i64;
    w.array(g.consumers.len());
    for (name, c) in &g.consumers {
        w.map(4);
        w.bulk(b"name");
        w.bulk(name);
        w.bulk(b"pending");
        w.int(c.pel.len() as i64);
        w.bulk(b"idle");
        w.int((now - c.seen_time as i64).max(0));
        w.bulk(b"inactive");
        w.int(c.active_time.map_or(-1, |t| now - t as i64));
    }
}

/// XINFO GROUPS: each group's name, consumers, pending count, last delivered ID, read
/// counter and lag.
fn groups(s: &Stream, w: &mut Writer) {
    w.array(s.groups.len());
    for (name, g) in &s.groups {
        w.map(6);
        w.bulk(b"name");
        w.bulk(name);
        w.bulk(b"consumers");
        w.int(g.consumers.len() as i64);
        w.bulk(b"pending");
        w.int(g.pel.len() as i64);
        w.bulk(b"last-delivered-id");
        id(w, g.last_id);
        w.bulk(b"entries-read");
        maybe(w, g.entries_read);
        w.bulk(b"lag");
        maybe(w, s.lag(g));
    }
}

/// XINFO STREAM key [FULL [COUNT n]].
fn stream(s: &Stream, args: &[&[u8]], w: &mut Writer) {
    let opts = &args[3..];
    let mut full = None;
    if !opts.is_empty() {
        if (opts.len() != 1 && opts.len() != 3) || !eq(opts[0], "full") {
            return w.error(&sub_syntax(args));
        }
        let mut count = 10u64;
        if opts.len() == 3 {
            if !eq(opts[1], "count") {
                return w.error(&sub_syntax(args));
            }
            match parse_i64(opts[2]) {
                Some(n) if n < 0 => count = 10,
                Some(n) => count = n as u64,
                None => return w.error(NOT_INT),
            }
        }
        full = Some(count);
    }
    let keys: Vec<[u8; 16]> = s.nodes().map(|(k, _)| rax_key(*k)).collect();
    w.map(if full.is_some() { 9 } else { 10 });
    w.bulk(b"length");
    w.int(s.len() as i64);
    w.bulk(b"radix-tree-keys");
    w.int(keys.len() as i64);
    w.bulk(b"radix-tree-nodes");
    w.int(rax_nodes(&keys) as i64);
    w.bulk(b"last-generated-id");
    id(w, s.last_id);
    w.bulk(b"max-deleted-entry-id");
    id(w, s.max_deleted);
    w.bulk(b"entries-added");
    w.int(s.entries_added as i64);
    w.bulk(b"recorded-first-entry-id");
    id(w, s.first_id);
    let Some(count) = full else {
        w.bulk(b"groups");
        w.int(s.groups.len() as i64);
        for (name, last) in [(&b"first-entry"[..], false), (b"last-entry", true)] {
            w.bulk(name);
            let it = if last {
                s.rev_range(StreamId::MIN, StreamId::MAX).next()
            } else {
                s.range(StreamId::MIN, StreamId::MAX).next()
            };
            match it {
                Some(it) => write_item(w, it),
                None => w.null(),
            }
        }
        return;
    };
    // 0: no limit.
    let limit = if count == 0 {
        usize::MAX
    } else {
        usize::try_from(count).unwrap_or(usize::MAX)
    };
    w.bulk(b"entries");
    let items: Vec<_> = s.range(StreamId::MIN, StreamId::MAX).take(limit).collect();
    write_items(w, items.into_iter());
    w.bulk(b"groups");
    w.array(s.groups.len());
    for (name, g) in &s.groups {
        full_group(s, name, g, limit, w);
    }
}

/// One group of XINFO STREAM FULL: its counters, its PEL (at most `limit` entries) and
/// its consumers with theirs.
fn full_group(s: &Stream, name: &[u8], g: &Group, limit: usize, w: &mut Writer) {
    w.map(7);
    w.bulk(b"name");
    w.bulk(name);
    w.bulk(b"last-delivered-id");
    id(w, g.last_id);
    w.bulk(b"entries-read");
    maybe(w, g.entries_read);
    w.bulk(b"lag");
    maybe(w, s.lag(g));
    w.bulk(b"pel-count");
    w.int(g.pel.len() as i64);
    w.bulk(b"pending");
    let pel: Vec<_> = g.pel.iter().take(limit).collect();
    w.array(pel.len());
    for (pid, p) in pel {
        w.array(4);
        id(w, *pid);
        w.bulk(&p.consumer);
        w.int(p.delivery_time as i64);
        w.int(p.delivery_count as i64);
    }
    w.bulk(b"consumers");
    w.array(g.consumers.len());
    for (cname, c) in &g.consumers {
        w.map(5);
        w.bulk(b"name");
        w.bulk(cname);
        w.bulk(b"seen-time");
        w.int(c.seen_time as i64);
        w.bulk(b"active-time");
        w.int(c.active_time.map_or(-1, |t| t as i64));
        w.bulk(b"pel-count");
        w.int(c.pel.len() as i64);
        w.bulk(b"pending");
        let ids: Vec<_> = c.pel.iter().take(limit).collect();
        w.array(ids.len());
        for pid in ids {
            w.array(3);
            id(w, *pid);
            let (time, count) = g
                .pel
                .get(pid)
                .map_or((0, 0), |p| (p.delivery_time, p.delivery_count));
            w.int(time as i64);
            w.int(count as i64);
        }
    }
}

/// A node's key in Redis's radix tree: its first ID, big-endian.
fn rax_key(id: StreamId) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&id.ms.to_be_bytes());
    k[8..].copy_from_slice(&id.seq.to_be_bytes());
    k
}

/// The nodes of a compressed radix tree holding `keys` (sorted, distinct): the root
/// alone when empty.
fn rax_nodes(keys: &[[u8; 16]]) -> u64 {
    if keys.is_empty() {
        1
    } else {
        subtree(keys, 0)
    }
}

/// The nodes under (and including) the one reached after `depth` bytes of `keys`.
fn subtree(keys: &[[u8; 16]], depth: usize) -> u64 {
    if depth == 16 {
        // The node a key ends on.
        return 1;
    }
    let (first, last) = (&keys[0], &keys[keys.len() - 1]);
    let common = (depth..16).take_while(|&i| first[i] == last[i]).count();
    if common > 0 {
        // A compressed node for the shared bytes, then what follows them.
        return 1 + subtree(keys, depth + common);
    }
    // A node branching on this byte, and a child per distinct byte.
    let mut n = 1;
    let mut i = 0;
    while i < keys.len() {
        let b = keys[i][depth];
        let j = i + keys[i..].iter().take_while(|k| k[depth] == b).count();
        n += subtree(&keys[i..j], depth + 1);
        i = j;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(ids: &[(u64, u64)]) -> Vec<[u8; 16]> {
        ids.iter()
            .map(|&(ms, seq)| rax_key(StreamId::new(ms, seq)))
            .collect()
    }

    #[test]
    fn radix_tree_nodes_count_compressed_nodes() {
        // An empty tree is its root; one key a compressed root and the key's node.
        assert_eq!(rax_nodes(&[]), 1);
        assert_eq!(rax_nodes(&keys(&[(5, 0)])), 2);
        // Two keys differing in the last byte: the shared prefix, a branch, two ends.
        assert_eq!(rax_nodes(&keys(&[(5, 0), (5, 1)])), 4);
        // Differing in the first byte: a branching root and two compressed chains.
        assert_eq!(rax_nodes(&keys(&[(1, 0), (1 << 56, 0)])), 5);
    }
}
