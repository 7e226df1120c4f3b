//! The numbered databases: SELECT picks one per connection (see
//! [`super::connection::select`]); MOVE and COPY ... DB take a key from one to another,
//! SWAPDB exchanges two. Each database has its own shards of the keyspace
//! ([`crate::keyspace`]); a command that touches two locks the shards of both in
//! ascending order, so it is atomic against every other command.
//!
//! The log records a change to database `n > 0` wrapped with `n`
//! ([`Effect::Db`]) and SWAPDB as itself ([`Effect::SwapDb`]); WATCHed keys and
//! blocked clients are per database, as in Redis.

use super::connection::db_index;
use super::{eq, Ctx, SYNTAX};
use crate::aof::Effect;
use crate::resp::Writer;

const SAME: &str = "ERR source and destination objects are the same";

/// Locks the shards of `from` in database `a` and `to` in database `b`, ascending.
fn lock_pair(ctx: &mut Ctx, a: usize, from: &[u8], b: usize, to: &[u8]) {
    let n = ctx.keys.shards();
    let shared = ctx.shared;
    let mut i = [
        a * n + shared.keyspace.shard_of(from),
        b * n + shared.keyspace.shard_of(to),
    ];
    i.sort_unstable();
    ctx.keys.shard_at(i[0]);
    ctx.keys.shard_at(i[1]);
}

/// MOVE key db: moves `key` (its value and deadline) to database `db` unless a key
/// of that name is there; 1 when moved.
pub fn move_key(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (key, now, src) = (args[1], ctx.now, ctx.keys.db());
    let dst = match db_index(ctx, args[2]) {
        Ok(db) => db,
        Err(e) => return w.error(e),
    };
    if dst == src {
        return w.error(SAME);
    }
    ctx.shared.keyspace.use_db(dst);
    lock_pair(ctx, src, key, dst, key);
    let Some(e) = ctx.keys.get(key, now).cloned() else {
        return w.int(0);
    };
    if ctx.keys.store_in(dst, key).contains(key, now) {
        return w.int(0);
    }
    ctx.keys.remove(key);
    ctx.log_del(key);
    ctx.in_db(dst, |ctx| {
        ctx.keys.put(key, e.value, e.expires_at, now);
        ctx.log_key(key);
    });
    ctx.ready.push((dst, key.to_vec()));
    w.int(1);
}

/// COPY source destination [DB db] [REPLACE].
pub fn copy(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (from, to, now, src) = (args[1], args[2], ctx.now, ctx.keys.db());
    let mut replace = false;
    let mut dst = src;
    let mut i = 3;
    while i < args.len() {
        if eq(args[i], "replace") {
            replace = true;
        } else if eq(args[i], "db") && i + 1 < args.len() {
            match db_index(ctx, args[i + 1]) {
                Ok(db) => dst = db,
                Err(e) => return w.error(e),
            }
            i += 1;
        } else {
            return w.error(SYNTAX);
        }
        i += 1;
    }
    if from == to && src == dst {
        return w.error(SAME);
    }
    ctx.shared.keyspace.use_db(dst);
    lock_pair(ctx, src, from, dst, to);
    let Some(e) = ctx.keys.get(from, now).cloned() else {
        return w.int(0);
    };
    if !replace && ctx.keys.store_in(dst, to).contains(to, now) {
        return w.int(0);
    }
    ctx.in_db(dst, |ctx| {
        ctx.keys.put(to, e.value, e.expires_at, now);
        ctx.log_key(to);
    });
    if dst != src {
        ctx.ready.push((dst, to.to_vec()));
    }
    w.int(1);
}

/// SWAPDB index1 index2: the two databases exchange their keys; clients connected to
/// one see the other's data at once.
pub fn swapdb(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let index = |arg: &[u8], which: &str| -> Result<i64, String> {
        super::parse_i64(arg).ok_or_else(|| format!("ERR invalid {which} DB index"))
    };
    let (a, b) = match (index(args[1], "first"), index(args[2], "second")) {
        (Err(e), _) | (_, Err(e)) => return w.error(&e),
        (Ok(a), Ok(b)) => (a, b),
    };
    let dbs = ctx.shared.keyspace.dbs() as i64;
    if !(0..dbs).contains(&a) || !(0..dbs).contains(&b) {
        return w.error("ERR DB index is out of range");
    }
    let (a, b) = (a as usize, b as usize);
    if a != b {
        super::multi::touch_dbs(ctx, &[(a, Some(b)), (b, Some(a))]);
        ctx.keys.swap_dbs(a, b);
        if ctx.logging {
            ctx.effects.push(Effect::SwapDb {
                a: a as u32,
                b: b as u32,
            });
        }
        // Clients blocked on keys that the swap brought in are served after it.
        let hub = &ctx.shared.hub;
        if hub.any_blocked() {
            for db in [a, b] {
                let keys = hub.waited_in(db);
                ctx.ready.extend(keys.into_iter().map(|k| (db, k)));
            }
        }
    }
    w.simple("OK");
}
