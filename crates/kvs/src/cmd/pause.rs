//! CLIENT PAUSE timeout [WRITE|ALL] and CLIENT UNPAUSE, as in Redis 7.0, over the
//! server's pause ([`crate::state::pause`], where what a pause holds is described).

use super::{eq, parse_i64, Ctx, SYNTAX};
use crate::resp::Writer;
use crate::state::pause::{ALL, WRITES};

/// CLIENT PAUSE timeout [WRITE|ALL].
pub fn pause(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    if !(3..=4).contains(&args.len()) {
        return w.error(
            "ERR unknown subcommand or wrong number of arguments for 'PAUSE'. Try CLIENT HELP.",
        );
    }
    let mode = match args.get(3) {
        None => ALL,
        Some(m) if eq(m, "all") => ALL,
        Some(m) if eq(m, "write") => WRITES,
        Some(_) => return w.error("ERR CLIENT PAUSE mode must be WRITE or ALL"),
    };
    let ms = match parse_i64(args[2]) {
        None => return w.error("ERR timeout is not an integer or out of range"),
        Some(ms) if ms < 0 => return w.error("ERR timeout is negative"),
        Some(ms) => ms as u64,
    };
    let end = crate::server::now_ms().saturating_add(ms);
    ctx.shared.pause.set(mode, end);
    w.simple("OK");
}

/// CLIENT UNPAUSE: held clients run now, on every loop.
pub fn unpause(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    if args.len() != 2 {
        return w.error(SYNTAX);
    }
    let shared = ctx.shared;
    shared.pause.clear();
    for i in 0..ctx.config.threads {
        shared.hub.wake(i);
    }
    w.simple("OK");
}
