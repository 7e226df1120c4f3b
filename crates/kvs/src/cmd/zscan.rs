//! Sorted sets read whole: ZRANDMEMBER (a random draw, with or without repeats, as
//! SRANDMEMBER) and ZSCAN (the whole set in one reply, cursor 0).

use super::zsets::{g17, reply_members};
use super::{glob, Ctx};
use crate::resp::Writer;
use crate::value::ZSet;

/// ZRANDMEMBER key [count [WITHSCORES]].
pub fn zrandmember(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (count, scores) = match super::sets::rand_args(args, Some("withscores")) {
        Ok(r) => r,
        Err(e) => return w.error(e),
    };
    let items = match super::read::<ZSet, _>(ctx, args[1], |z| {
        z.iter().map(|(m, s)| (m.to_vec(), s)).collect::<Vec<_>>()
    }) {
        Ok(i) => i.unwrap_or_default(),
        Err(e) => return w.error(e),
    };
    let p = super::sets::pick(
        items.len(),
        count,
        ctx.now ^ ctx.stats.commands.rotate_left(7),
    );
    match count {
        None => match p.first() {
            Some(&i) => w.bulk(&items[i].0),
            None => w.null(),
        },
        Some(_) => {
            let chosen: Vec<(Vec<u8>, f64)> = p.iter().map(|&i| items[i].clone()).collect();
            reply_members(w, &chosen, scores);
        }
    }
}

/// ZSCAN key cursor [MATCH pattern] [COUNT count]: the whole set in one reply.
pub fn zscan(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let opts = match super::sets::scan_args(args, false) {
        Ok(o) => o,
        Err(e) => return w.error(&e),
    };
    let items = match super::read::<ZSet, _>(ctx, args[1], |z| {
        z.iter()
            .filter(|(m, _)| opts.pattern.is_none_or(|p| glob(p, m)))
            .map(|(m, s)| (m.to_vec(), s))
            .collect::<Vec<_>>()
    }) {
        Ok(i) => i.unwrap_or_default(),
        Err(e) => return w.error(e),
    };
    w.array(2);
    w.bulk(b"0");
    w.array(2 * items.len());
    for (m, s) in &items {
        w.bulk(m);
        w.bulk(g17(*s).as_bytes());
    }
}
