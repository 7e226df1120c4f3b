//! Keyspace notifications (`notify-keyspace-events`): after a command changes keys,
//! a message on `__keyspace@<db>__:<key>` (the event as payload, class `K`) and on
//! `__keyevent@<db>__:<event>` (the key as payload, class `E`), for the event classes
//! the setting enables, with Redis's event names.
//!
//! The keys a command changed are the ones its log effects name (the effects are
//! recorded while notifications are on), so nothing is sent for a command that changed
//! nothing; the event is the command's (`lpush`, `hset`, `incrby`, ...), with the
//! source and destination of moves told apart, in Redis's order (`rename_from` then
//! `rename_to`, `rpush` to the destination then `lpop` from the source, `srem` then
//! `sadd`), `expire` after a SET with a time to live, and `del`
//! when a pop or removal leaves a collection empty. Keys removed by `maxmemory` send
//! `evicted`; keys removed by their deadline send `expired` and keys created `new`
//! (`key_events`, from what the shards' stores kept). A read-only command sends
//! `keymiss` for each of its keys that is not there.

use super::{eq, Ctx};
use crate::aof::Effect;
pub use crate::config::notify::*;

/// The event class and name a command's change to a key sends; `first`: the key is the
/// command's first key (the source of a move).
fn event(name: &str, args: &[&[u8]], first: bool) -> Option<(u32, &'static str)> {
    let side = |a: Option<&&[u8]>, left: &'static str, right: &'static str| {
        if a.is_some_and(|a| eq(a, "left")) {
            left
        } else {
            right
        }
    };
    Some(match name {
        "set" | "setnx" | "setex" | "psetex" | "getset" | "mset" | "msetnx" => (STRING, "set"),
        "append" => (STRING, "append"),
        "incr" | "decr" | "incrby" | "decrby" => (STRING, "incrby"),
        "incrbyfloat" => (STRING, "incrbyfloat"),
        "setrange" => (STRING, "setrange"),
        // PFMERGE tells of a "pfadd", as in Redis; PFCOUNT's cache and PFDEBUG's
        // conversions send nothing.
        "pfadd" | "pfmerge" => (STRING, "pfadd"),
        "setbit" | "bitfield" => (STRING, "setbit"),
        "bitop" => (STRING, "set"),
        "del" | "unlink" | "getdel" => (GENERIC, "del"),
        "expire" | "pexpire" | "expireat" | "pexpireat" | "getex" => (GENERIC, "expire"),
        "persist" => (GENERIC, "persist"),
        "restore" => (GENERIC, "restore"),
        "rename" | "renamenx" if first => (GENERIC, "rename_from"),
        "rename" | "renamenx" => (GENERIC, "rename_to"),
        "copy" if !first => (GENERIC, "copy_to"),
        "move" if first => (GENERIC, "move_from"),
        "move" => (GENERIC, "move_to"),
        "lpush" | "lpushx" => (LIST, "lpush"),
        "rpush" | "rpushx" => (LIST, "rpush"),
        "lpop" | "rpop" | "lset" | "lrem" | "ltrim" | "linsert" => (LIST, row_name(name)),
        "rpoplpush" | "brpoplpush" if first => (LIST, "rpop"),
        "rpoplpush" | "brpoplpush" => (LIST, "lpush"),
        "lmove" if first => (LIST, side(args.get(3), "lpop", "rpop")),
        "lmove" => (LIST, side(args.get(4), "lpush", "rpush")),
        "blmove" if first => (LIST, side(args.get(3), "lpop", "rpop")),
        "blmove" => (LIST, side(args.get(4), "lpush", "rpush")),
        "blpop" => (LIST, "lpop"),
        "brpop" => (LIST, "rpop"),
        "lmpop" | "blmpop" => {
            let left = args.iter().any(|a| eq(a, "left"));
            (LIST, if left { "lpop" } else { "rpop" })
        }
        "hset" | "hmset" | "hsetnx" => (HASH, "hset"),
        "hdel" => (HASH, "hdel"),
        "hincrby" => (HASH, "hincrby"),
        "hincrbyfloat" => (HASH, "hincrbyfloat"),
        "sadd" => (SET, "sadd"),
        "srem" => (SET, "srem"),
        "spop" => (SET, "spop"),
        "smove" if first => (SET, "srem"),
        "smove" => (SET, "sadd"),
        "sinterstore" | "sunionstore" | "sdiffstore" => (SET, row_name(name)),
        "zadd" | "geoadd" => (ZSET, "zadd"),
        "georadius" | "georadiusbymember" => (ZSET, "georadiusstore"),
        "geosearchstore" => (ZSET, "geosearchstore"),
        "zincrby" => (ZSET, "zincr"),
        "zrem" => (ZSET, "zrem"),
        "zpopmin" | "bzpopmin" => (ZSET, "zpopmin"),
        "zpopmax" | "bzpopmax" => (ZSET, "zpopmax"),
        "zmpop" | "bzmpop" => {
            let min = args.iter().any(|a| eq(a, "min"));
            (ZSET, if min { "zpopmin" } else { "zpopmax" })
        }
        "zremrangebyscore" | "zremrangebyrank" | "zremrangebylex" | "zunionstore"
        | "zinterstore" | "zdiffstore" | "zrangestore" => (ZSET, row_name(name)),
        _ => return None,
    })
}

/// The command table's (`'static`) copy of the name `name`.
fn row_name(name: &str) -> &'static str {
    super::table::lookup(name.as_bytes()).map_or("", |c| c.name)
}

/// Sends the notifications of a command that ran with `args` and recorded
/// `ctx.effects[start..]`.
pub(crate) fn after(ctx: &mut Ctx, name: &str, args: &[&[u8]], start: usize) {
    let flags = ctx.config.notify;
    if flags & (KEYSPACE | KEYEVENT) == 0 || ctx.effects.len() <= start {
        return;
    }
    let mut keys: Vec<(usize, Vec<u8>)> = Vec::new();
    let mut ttl = false;
    for e in &ctx.effects[start..] {
        ttl |= matches!(e.inner(), Effect::Set { expires_at, .. } if *expires_at != 0);
        if let Some(k) = e.key() {
            let db = e.db();
            if !keys.iter().any(|(d, x)| *d == db && x == k) {
                keys.push((db, k.to_vec()));
            }
        }
    }
    if matches!(name, "lmove" | "blmove" | "rpoplpush" | "brpoplpush") {
        // Redis tells of the push to the destination before the pop from the source.
        keys.reverse();
    }
    let mut events: Vec<Event> = Vec::new();
    for (db, key) in keys {
        // The source of a move between databases is in the caller's.
        let first = args.get(1).is_some_and(|a| *a == key.as_slice()) && db == ctx.keys.db();
        let Some((class, ev)) = event(name, args, first) else {
            continue;
        };
        let exists = ctx.keys.store_in(db, &key).contains(&key, ctx.now);
        let geo_store = ev == "georadiusstore" || ev == "geosearchstore";
        if !exists && (geo_store || (class == GENERIC && (ev == "expire" || ev == "restore"))) {
            // A deadline already past removes the key; a geo search that found nothing
            // deletes its destination.
            events.push((GENERIC, "del", db, key));
            continue;
        }
        if class == STRING && ev == "set" && !exists {
            // BITOP with an empty result deletes its destination.
            events.push((GENERIC, "del", db, key));
            continue;
        }
        events.push((class, ev, db, key.clone()));
        if class == STRING && ev == "set" && ttl {
            events.push((GENERIC, "expire", db, key.clone()));
        }
        if !exists && class != GENERIC && class != STRING {
            // The last element went: the key is deleted too.
            events.push((GENERIC, "del", db, key));
        }
    }
    publish(ctx, flags, events);
}

/// A notification: its class, the event, the key's database and the key.
type Event = (u32, &'static str, usize, Vec<u8>);

/// Sends `expired` for keys whose deadline passed and `new` for keys created (with
/// their databases), in that order.
pub(crate) fn key_events(
    hub: &crate::hub::Hub,
    flags: u32,
    expired: Vec<crate::keyspace::DbKey>,
    created: Vec<crate::keyspace::DbKey>,
) {
    if hub.tracking.any() && !expired.is_empty() {
        // Client-side caching: an expired key is invalidated like a changed one.
        let keys: Vec<&[u8]> = expired.iter().map(|(_, k)| &k[..]).collect();
        hub.tracking.invalidate(hub, 0, &keys);
    }
    let expired = expired
        .into_iter()
        .map(|(db, k)| (EXPIRED, "expired", db, k));
    let created = created.into_iter().map(|(db, k)| (NEW, "new", db, k));
    let events: Vec<Event> = expired
        .chain(created)
        .map(|(class, ev, db, k)| (class, ev, db, k.into_vec()))
        .collect();
    if !events.is_empty() {
        send(hub, flags, events);
    }
}

/// Sends `evicted` for a key maxmemory removed from the selected database.
pub(crate) fn evicted(ctx: &mut Ctx, key: &[u8]) {
    let flags = ctx.config.notify;
    if flags & EVICTED != 0 {
        let db = ctx.keys.db();
        publish(ctx, flags, vec![(EVICTED, "evicted", db, key.to_vec())]);
    }
}

/// Sends `keymiss` for each key a read-only command named that is not there (class
/// `m`; only looked for when that class is on).
pub(crate) fn key_misses(ctx: &mut Ctx, cmd: &super::table::Command, args: &[&[u8]]) {
    let Some(at) = cmd.keys_of(args) else {
        return;
    };
    let (db, now) = (ctx.keys.db(), ctx.now);
    let mut events: Vec<Event> = Vec::new();
    for k in at.into_iter().filter_map(|i| args.get(i)) {
        if !ctx.keys.contains(k, now) {
            events.push((KEY_MISS, "keymiss", db, k.to_vec()));
        }
    }
    if !events.is_empty() {
        let flags = ctx.config.notify;
        publish(ctx, flags, events);
    }
}

/// Sends the stream events `events` (`xadd`, `xtrim`, `xgroup-create`, ...) about
/// `key` of the selected database, in order: stream commands tell of several changes
/// (XADD of an `xadd` and then an `xtrim`), so they send their own.
pub(crate) fn stream(ctx: &mut Ctx, events: &[&'static str], key: &[u8]) {
    let flags = ctx.config.notify;
    if flags & STREAM != 0 && !events.is_empty() {
        let db = ctx.keys.db();
        let events = events
            .iter()
            .map(|ev| (STREAM, *ev, db, key.to_vec()))
            .collect();
        publish(ctx, flags, events);
    }
}

fn publish(ctx: &mut Ctx, flags: u32, events: Vec<Event>) {
    send(&ctx.shared.hub, flags, events);
}

fn send(hub: &crate::hub::Hub, flags: u32, events: Vec<Event>) {
    let mut msgs = Vec::new();
    for (class, ev, db, key) in events {
        if flags & class == 0 {
            continue;
        }
        let subs = hub.subs();
        if flags & KEYSPACE != 0 {
            let mut ch = format!("__keyspace@{db}__:").into_bytes();
            ch.extend_from_slice(&key);
            msgs.extend(subs.publish(false, &ch, ev.as_bytes()));
        }
        if flags & KEYEVENT != 0 {
            let mut ch = format!("__keyevent@{db}__:").into_bytes();
            ch.extend_from_slice(ev.as_bytes());
            msgs.extend(subs.publish(false, &ch, &key));
        }
    }
    if !msgs.is_empty() {
        hub.deliver(msgs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_parse_and_show_as_redis() {
        assert_eq!(parse("KEA"), Some(KEYSPACE | KEYEVENT | ALL));
        assert_eq!(show(parse("KEA").unwrap()), "AKE");
        assert_eq!(show(parse("Kl$").unwrap()), "$lK");
        assert_eq!(parse(""), Some(0));
        assert_eq!(show(0), "");
        assert_eq!(parse("Kq"), None);
        assert_eq!(show(parse("Egx").unwrap()), "gxE");
    }
}
