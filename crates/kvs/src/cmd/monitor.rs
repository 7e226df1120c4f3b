//! MONITOR: a client that asks for it gets `+OK`, then one line per command any client
//! runs, on every event loop, in Redis's format:
//! `+<seconds>.<micros> [<db> <addr>] "NAME" "arg" ...` (`lua` in place of the address
//! for the commands a script calls), each argument quoted and escaped as Redis quotes
//! them (`\"`, `\\`, `\n`, `\r`, `\t`, `\a`, `\b`, `\xhh` for other unprintable bytes).
//!
//! What is shown follows Redis 7: a command is shown once it ran (so EXEC comes after
//! the commands it ran, and SELECT shows the database it selected), not when it was
//! queued or refused before running (unknown, wrong arity, NOAUTH, OOM); EVAL, EVALSHA
//! and FCALL are shown before the commands their script calls; administrative commands
//! and subcommands (CONFIG, CLIENT LIST/KILL/PAUSE, DEBUG, SLOWLOG GET, MONITOR, ...)
//! are never shown; AUTH's arguments, and HELLO's AUTH username and password, are
//! replaced by `(redacted)`. A blocking command is shown when it is called, not again
//! when it is served.
//!
//! The monitors are listed in [`crate::state::monitors::Monitors`] (in the server's state); a command
//! costs one atomic load while none is attached. A line goes to each monitor through
//! the hub ([`crate::hub::Msg::Monitor`]), into its loop's inbox, so monitors on any
//! loop see the lines of every loop, each loop's in order. A monitor is a `normal`
//! client for `client-output-buffer-limit` (as in Redis): one that does not read is
//! closed at that limit; its socket is never waited on. It leaves with QUIT, RESET or
//! its connection's end. While monitoring it may not run commands that touch the
//! keyspace (Redis's "Replica can't interact with the keyspace").

use std::cell::Cell;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::table::{Command, ADMIN, READONLY, SKIP_MONITOR, WRITE};
use super::{eq, Ctx};
use crate::hub::Msg;
use crate::resp::Writer;

thread_local! {
    /// A script's `redis.call` is running on this thread.
    static SCRIPT: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` as a command called by a script (shown with `lua` for its address).
pub(crate) fn scripted<R>(f: impl FnOnce() -> R) -> R {
    let was = SCRIPT.with(|s| s.replace(true));
    let r = f();
    SCRIPT.with(|s| s.set(was));
    r
}

/// True while a script's `redis.call` runs on this thread.
pub(crate) fn in_script() -> bool {
    SCRIPT.with(|s| s.get())
}

/// MONITOR.
pub fn monitor(ctx: &mut Ctx, _args: &[&[u8]], w: &mut Writer) {
    if !ctx.can_block {
        // Inside EXEC (Redis: a client that expects one reply per command).
        return w.error("ERR MONITOR isn't allowed for DENY BLOCKING client");
    }
    if ctx.session.monitor {
        // Already monitoring: ignored, no reply (as in Redis).
        return;
    }
    ctx.session.monitor = true;
    if let Some(m) = &ctx.session.meta {
        m.monitor.store(true, Ordering::Relaxed);
    }
    ctx.shared.monitors.add(ctx.session.id);
    w.simple("OK");
}

/// RESET: the client stops monitoring.
pub(crate) fn leave(ctx: &mut Ctx) {
    if std::mem::take(&mut ctx.session.monitor) {
        ctx.shared.monitors.remove(ctx.session.id);
        if let Some(m) = &ctx.session.meta {
            m.monitor.store(false, Ordering::Relaxed);
        }
    }
}

/// The error for a monitoring client's command that touches the keyspace (it may still
/// PING, QUIT, RESET and the like).
pub(crate) fn refused(ctx: &Ctx, cmd: &Command) -> Option<&'static str> {
    let touches = cmd.has(WRITE) || cmd.has(READONLY) || shown_first(cmd) || cmd.name == "publish";
    (ctx.session.monitor && touches).then_some("ERR Replica can't interact with the keyspace")
}

/// Commands shown before they run (their script's commands come after them).
fn shown_first(cmd: &Command) -> bool {
    matches!(
        cmd.name,
        "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "fcall" | "fcall_ro"
    )
}

/// Whether `args` (of `cmd`) is hidden from monitors, as Redis hides administrative
/// commands and subcommands and those flagged `skip_monitor`.
fn hidden(cmd: &Command, args: &[&[u8]]) -> bool {
    let sub = |names: &[&str]| args.get(1).is_some_and(|s| names.iter().any(|n| eq(s, n)));
    match cmd.name {
        "slowlog" | "latency" => !sub(&["help"]),
        "config" => !sub(&["help"]),
        "client" => sub(&["list", "kill", "pause", "unpause", "no-evict", "unblock"]),
        "acl" => !sub(&["help", "whoami", "cat", "genpass"]),
        "cluster" => sub(&[
            "failover",
            "count-failure-reports",
            "delslotsrange",
            "replicas",
            "forget",
            "addslotsrange",
            "setslot",
            "delslots",
            "bumpepoch",
            "meet",
            "saveconfig",
            "slaves",
            "replicate",
            "addslots",
            "reset",
            "flushslots",
            "set-config-epoch",
        ]),
        _ => cmd.has(SKIP_MONITOR) || cmd.has(ADMIN),
    }
}

/// Feeds the monitors the command `args` that `ctx`'s client runs: `before` is true
/// just before its handler runs, false just after. Call only when
/// [`Monitors::any`]. A command run again for a blocked client (no connection of its
/// own in the session) is not shown again.
pub(crate) fn feed(ctx: &Ctx, cmd: &Command, args: &[&[u8]], before: bool) {
    let first = shown_first(cmd);
    if first != before || (!first && hidden(cmd, args)) {
        return;
    }
    let script = SCRIPT.with(Cell::get);
    let Some(meta) = &ctx.session.meta else {
        return;
    };
    let line = line(ctx.session.db, (!script).then_some(&meta.addr[..]), args);
    let line: Arc<[u8]> = Arc::from(line);
    let shared = ctx.shared;
    let ids = shared.monitors.ids().clone();
    let msgs = ids
        .into_iter()
        .map(|id| (id, Msg::Monitor(line.clone())))
        .collect();
    shared.hub.deliver(msgs);
}

/// One monitor line, `\r\n` included (`addr` None: called by a script).
fn line(db: usize, addr: Option<&str>, args: &[&[u8]]) -> Vec<u8> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let mut out = format!(
        "+{}.{:06} [{db} {}]",
        now.as_secs(),
        now.subsec_micros(),
        addr.unwrap_or("lua")
    )
    .into_bytes();
    let redact = redacted(args);
    for (i, a) in args.iter().enumerate() {
        out.push(b' ');
        if redact(i) {
            out.extend_from_slice(b"\"(redacted)\"");
        } else {
            quote(&mut out, a);
        }
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// Which arguments are replaced by `(redacted)` (here and in the slow log): every
/// argument of AUTH, the username and password after HELLO's AUTH, the rules of ACL
/// SETUSER, and MIGRATE's AUTH and AUTH2 credentials.
pub(crate) fn redacted(args: &[&[u8]]) -> impl Fn(usize) -> bool {
    let mut hide = vec![false; args.len()];
    if eq(args[0], "auth") {
        hide.iter_mut().skip(1).for_each(|h| *h = true);
    } else if eq(args[0], "acl") && args.get(1).is_some_and(|s| eq(s, "setuser")) {
        hide.iter_mut().skip(2).for_each(|h| *h = true);
    } else if eq(args[0], "migrate") {
        let mut i = 6;
        while i < args.len() {
            let n = if eq(args[i], "auth") {
                1
            } else if eq(args[i], "auth2") {
                2
            } else if eq(args[i], "keys") {
                break;
            } else {
                0
            };
            hide.iter_mut().skip(i + 1).take(n).for_each(|h| *h = true);
            i += 1 + n;
        }
    } else if eq(args[0], "config") && args.get(1).is_some_and(|s| eq(s, "set")) {
        // The values of secret settings.
        let mut i = 2;
        while i + 1 < args.len() {
            let secret = ["masterauth", "masteruser", "requirepass"]
                .iter()
                .any(|n| eq(args[i], n));
            hide[i + 1] = secret;
            i += 2;
        }
    } else if eq(args[0], "hello") {
        let mut i = 2;
        while i < args.len() {
            if eq(args[i], "auth") {
                hide.iter_mut().skip(i + 1).take(2).for_each(|h| *h = true);
                i += 3;
            } else if eq(args[i], "setname") {
                i += 2;
            } else {
                i += 1;
            }
        }
    }
    move |i| hide[i]
}

/// `s` in double quotes, escaped as Redis's monitor shows it.
pub(crate) fn quote(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    for &b in s {
        match b {
            b'\\' | b'"' => out.extend_from_slice(&[b'\\', b]),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            7 => out.extend_from_slice(b"\\a"),
            8 => out.extend_from_slice(b"\\b"),
            0x20..=0x7e => out.push(b),
            _ => out.extend_from_slice(format!("\\x{b:02x}").as_bytes()),
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_as_redis() {
        let mut out = Vec::new();
        quote(&mut out, b"a b\"c\\\n\r\t\x07\x08\x01\xc3\xa9");
        assert_eq!(
            out,
            b"\"a b\\\"c\\\\\\n\\r\\t\\a\\b\\x01\\xc3\\xa9\"".to_vec()
        );
    }

    #[test]
    fn redacts_auth_and_hello_auth() {
        let l = line(0, Some("1.2.3.4:5"), &[b"AUTH", b"u", b"p"]);
        let l = String::from_utf8(l).unwrap();
        assert!(l.ends_with(" [0 1.2.3.4:5] \"AUTH\" \"(redacted)\" \"(redacted)\"\r\n"));
        let args: [&[u8]; 7] = [b"hello", b"3", b"SETNAME", b"n", b"auth", b"u", b"p"];
        let l = String::from_utf8(line(2, None, &args)).unwrap();
        assert!(l.ends_with(
            " [2 lua] \"hello\" \"3\" \"SETNAME\" \"n\" \"auth\" \"(redacted)\" \"(redacted)\"\r\n"
        ));
    }
}
