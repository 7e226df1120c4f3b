//! ZRANGESTORE dst src min max [BYSCORE | BYLEX] [REV] [LIMIT offset count]: the range
//! ZRANGE would reply (WITHSCORES refused) stored as a new sorted set at `dst`; the
//! reply is its size, and an empty range deletes `dst`.
//!
//! Logged as the deletion of `dst` and the ZADD of the stored members, like the STORE
//! forms of ZUNION/ZINTER/ZDIFF, so a restart from the log rebuilds the same set.

use super::zsets::{add_on, log_zadd, parse_range};
use super::{Ctx, WRONGTYPE};
use crate::resp::Writer;
use crate::value::Value;

/// ZRANGESTORE dst src min max [options].
pub fn zrangestore(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (dst, src) = (args[1], args[2]);
    let range = match parse_range("zrangestore", &args[3..]) {
        Ok(r) => r,
        Err(e) => return w.error(e),
    };
    ctx.keys.lock_keys([dst, src].into_iter());
    let items = match ctx.keys.get(src, ctx.now).map(|e| &e.value) {
        None => Vec::new(),
        Some(Value::ZSet(z)) => range.select(z),
        Some(_) => return w.error(WRONGTYPE),
    };
    let now = ctx.now;
    ctx.keys.remove(dst);
    ctx.log_del(dst);
    if !items.is_empty() {
        let refs: Vec<(f64, &[u8])> = items.iter().map(|(m, s)| (*s, &m[..])).collect();
        let _ = add_on(ctx.keys.store(dst), dst, &refs, now);
        log_zadd(ctx, dst, &items);
    }
    w.int(items.len() as i64);
}
