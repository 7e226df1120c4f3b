//! CLIENT PAUSE timeout [WRITE|ALL] and CLIENT UNPAUSE, as in Redis 7.0, over the
//! server's pause ([`crate::state::pause`], where what a pause holds is described).

use super::table::{lookup, WRITE};
use super::{eq, parse_i64, Ctx, Session, SYNTAX};
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
    let end = wirespeed_util::time::unix_ms().saturating_add(ms);
    ctx.shared.pause.set(mode, end);
    // Keys past their time stay (read as gone) until the pause ends.
    ctx.shared.keyspace.hide_expired(true);
    w.simple("OK");
}

/// CLIENT UNPAUSE: held clients run now, on every loop.
pub fn unpause(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    if args.len() != 2 {
        return w.error(SYNTAX);
    }
    let shared = ctx.shared;
    shared.pause.clear();
    shared.keyspace.hide_expired(false);
    for i in 0..ctx.config.threads {
        shared.hub.wake(i);
    }
    w.simple("OK");
}

/// Whether the request `argv` of `session` may change the dataset, as a WRITE pause
/// sees it: a write command, one that may propagate a change, a script or function
/// that does not declare `no-writes` (as Redis reads script flags), or an EXEC whose
/// queue holds such a command.
pub(crate) fn may_write_request(
    shared: &crate::state::Shared,
    session: &Session,
    argv: &[&[u8]],
) -> bool {
    match lookup(argv[0]) {
        Some(cmd) if cmd.name == "exec" => session.tx.writes(|q| may_write(shared, q)),
        _ => may_write(shared, argv),
    }
}

/// Commands a WRITE pause holds: writes, those that may propagate a change, and
/// scripts and functions that do not declare `no-writes`.
fn may_write(shared: &crate::state::Shared, argv: &[&[u8]]) -> bool {
    let Some(cmd) = argv.first().and_then(|a| lookup(a)) else {
        return false;
    };
    if !cmd.arity_ok(argv.len()) {
        // Answered at once with the arity error, as Redis does.
        return false;
    }
    match cmd.name {
        "eval" | "evalsha" | "fcall" => {
            !super::scripting::declares_no_writes(shared, cmd.name, argv)
        }
        _ => cmd.has(WRITE) || cmd.may_replicate(),
    }
}
