//! The connection family: PING, ECHO, QUIT, RESET, AUTH, HELLO, SELECT, CLIENT
//! (SETNAME, GETNAME, ID, SETINFO, REPLY, UNBLOCK).

use super::{eq, parse_i64, Ctx, NOT_INT, WRONGPASS};
use crate::resp::{Proto, Writer};

/// PING [message]. A RESP2 client with subscriptions gets `["pong", message]`.
pub fn ping(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    if args.len() <= 2 && ctx.session.subs.active() && ctx.session.proto == Proto::Resp2 {
        w.array(2);
        w.bulk(b"pong");
        return w.bulk(args.get(1).copied().unwrap_or(b""));
    }
    match args.len() {
        1 => w.simple("PONG"),
        2 => w.bulk(args[1]),
        _ => super::arity(w, args[0]),
    }
}

/// ECHO message.
pub fn echo(_ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    w.bulk(args[1]);
}

/// RESET: the connection as new: no transaction or watched keys, no subscriptions,
/// RESP2, no name, and authenticated only if no password is set.
pub fn reset(ctx: &mut Ctx, _args: &[&[u8]], w: &mut Writer) {
    ctx.session.tx.end();
    super::monitor::leave(ctx);
    let hub = &ctx.shared.hub;
    ctx.session.subs.forget(hub, ctx.session.id);
    if let Some(m) = &ctx.session.meta {
        m.subs
            .iter()
            .for_each(|s| s.store(0, std::sync::atomic::Ordering::Relaxed));
    }
    ctx.session.proto = Proto::Resp2;
    ctx.session.db = 0;
    ctx.keys.select(0);
    set_name(ctx, b"");
    ctx.session.reply_off = false;
    ctx.session.skip_next = false;
    // Back to the default user, authenticated only if it takes any password.
    crate::acl::set_user(ctx.session, None);
    ctx.session.authed = ctx.config.acl.open();
    w.simple("RESET");
}

/// QUIT: the reply, then the connection closes.
pub fn quit(ctx: &mut Ctx, _args: &[&[u8]], w: &mut Writer) {
    ctx.session.quit = true;
    w.simple("OK");
}

/// AUTH [username] password: any ACL user that is on, with one of its passwords (the
/// default user without a name). A failure is logged (ACL LOG).
pub fn auth(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (user, pass): (&[u8], &[u8]) = match args.len() {
        2 => {
            if ctx.config.acl.get(b"default").is_some_and(|u| u.nopass()) {
                return w.error("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?");
            }
            (b"default", args[1])
        }
        3 => (args[1], args[2]),
        _ => return w.error(super::SYNTAX),
    };
    if crate::acl::login(ctx, user, pass, args[0]) {
        w.simple("OK");
    } else {
        w.error(WRONGPASS);
    }
}

/// SELECT index: the database the connection's next commands work on.
pub fn select(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    if ctx.shared.cluster.is_some() && parse_i64(args[1]) != Some(0) {
        return w.error("ERR SELECT is not allowed in cluster mode");
    }
    match db_index(ctx, args[1]) {
        Ok(db) => {
            ctx.session.db = db;
            ctx.keys.select(db);
            w.simple("OK")
        }
        Err(e) => w.error(e),
    }
}

/// A database index argument (SELECT, MOVE, SWAPDB, COPY ... DB): below `databases`.
pub(crate) fn db_index(ctx: &Ctx, arg: &[u8]) -> Result<usize, &'static str> {
    match parse_i64(arg) {
        Some(n) if n >= 0 && (n as u64) < ctx.shared.keyspace.dbs() as u64 => Ok(n as usize),
        Some(_) => Err("ERR DB index is out of range"),
        None => Err(NOT_INT),
    }
}

/// HELLO [protover [AUTH username password] [SETNAME name]].
pub fn hello(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let mut i = 1;
    let mut proto = ctx.session.proto;
    if args.len() > 1 {
        match parse_i64(args[1]) {
            Some(2) => proto = Proto::Resp2,
            Some(3) => proto = Proto::Resp3,
            _ => return w.error("NOPROTO unsupported protocol version"),
        }
        i = 2;
    }
    // As in Redis: the last AUTH pair is tried, and the last name set once
    // authenticated.
    let mut login: Option<(&[u8], &[u8])> = None;
    let mut name: Option<&[u8]> = None;
    while i < args.len() {
        if eq(args[i], "auth") && i + 2 < args.len() {
            login = Some((args[i + 1], args[i + 2]));
            i += 3;
        } else if eq(args[i], "setname") && i + 1 < args.len() {
            if args[i + 1].iter().any(|&b| b <= b' ' || b > b'~') {
                return w.error(
                    "ERR Client names cannot contain spaces, newlines or special characters.",
                );
            }
            name = Some(args[i + 1]);
            i += 2;
        } else {
            return w.error(&format!(
                "ERR Syntax error in HELLO option '{}'",
                String::from_utf8_lossy(args[i])
            ));
        }
    }
    if let Some((user, pass)) = login {
        if !crate::acl::login(ctx, user, pass, args[0]) {
            return w.error(WRONGPASS);
        }
    }
    if !ctx.session.authed && !ctx.config.acl.open() {
        return w.error("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time");
    }
    if let Some(n) = name {
        set_name(ctx, n);
    }
    ctx.session.proto = proto;
    // The writer was made before the switch: the reply uses the new encoding.
    let mut out = Vec::new();
    let mut r = Writer::new(&mut out, proto);
    r.map(7);
    r.bulk(b"server");
    r.bulk(b"redis");
    r.bulk(b"version");
    r.bulk(b"7.2.0");
    r.bulk(b"proto");
    r.int(if proto == Proto::Resp3 { 3 } else { 2 });
    r.bulk(b"id");
    r.int(ctx.session.id as i64);
    r.bulk(b"mode");
    r.bulk(b"standalone");
    r.bulk(b"role");
    r.bulk(b"master");
    r.bulk(b"modules");
    r.array(0);
    w.raw(&out);
}

/// CLIENT SETNAME / GETNAME / ID / SETINFO / REPLY / UNBLOCK.
pub fn client(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let sub = args[1];
    if eq(sub, "setname") && args.len() == 3 {
        if args[2].iter().any(|&b| b <= b' ' || b > b'~') {
            return w
                .error("ERR Client names cannot contain spaces, newlines or special characters.");
        }
        set_name(ctx, args[2]);
        w.simple("OK");
    } else if eq(sub, "getname") && args.len() == 2 {
        match &ctx.session.name {
            Some(n) => w.bulk(n),
            None => w.null(),
        }
    } else if eq(sub, "id") && args.len() == 2 {
        w.int(ctx.session.id as i64);
    } else if eq(sub, "reply") && args.len() == 3 {
        if eq(args[2], "on") {
            ctx.session.reply_off = false;
            // Its own reply goes out even right after a SKIP, as in Redis.
            ctx.session.reply_on = true;
            w.simple("OK");
        } else if eq(args[2], "off") {
            ctx.session.reply_off = true;
        } else if eq(args[2], "skip") {
            ctx.session.skip_next = !ctx.session.reply_off;
        } else {
            w.error(super::SYNTAX);
        }
    } else if eq(sub, "unblock") && (args.len() == 3 || args.len() == 4) {
        unblock(ctx, args, w);
    } else if eq(sub, "setinfo") && args.len() == 4 {
        super::clients::setinfo(ctx, args, w);
    } else if eq(sub, "list") {
        super::clients::list(ctx, args, w);
    } else if eq(sub, "info") && args.len() == 2 {
        super::clients::info(ctx, args, w);
    } else if eq(sub, "kill") && args.len() >= 3 {
        super::clients::kill(ctx, args, w);
    } else if eq(sub, "no-evict") && args.len() == 3 {
        super::clients::no_evict(ctx, args, w);
    } else if eq(sub, "pause") && args.len() > 2 {
        super::pause::pause(ctx, args, w);
    } else if eq(sub, "unpause") && args.len() == 2 {
        super::pause::unpause(ctx, args, w);
    } else if eq(sub, "getredir") && args.len() == 2 {
        super::tracking::getredir(ctx, w);
    } else if eq(sub, "tracking") && args.len() >= 3 {
        super::tracking::tracking(ctx, args, w);
    } else if eq(sub, "caching") && args.len() >= 3 {
        super::tracking::caching(ctx, args, w);
    } else if eq(sub, "trackinginfo") && args.len() == 2 {
        super::tracking::info(ctx, w);
    } else if [
        "pause",
        "unpause",
        "kill",
        "setinfo",
        "setname",
        "getname",
        "id",
        "info",
        "reply",
        "no-evict",
        "unblock",
        "getredir",
        "tracking",
        "caching",
        "trackinginfo",
    ]
    .iter()
    .any(|s| eq(sub, s))
    {
        w.error(&format!(
            "ERR wrong number of arguments for 'client|{}' command",
            super::lower(sub)
        ));
    } else if eq(sub, "help") && args.len() == 2 {
        super::help(
            w,
            &[
                "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "GETNAME",
                "    Return the name of the current connection.",
                "ID",
                "    Return the ID of the current connection.",
                "INFO",
                "    Return information about the current client connection.",
                "KILL <ip:port>",
                "    Kill connection made from <ip:port>.",
                "KILL <option> <value> [<option> <value> [...]]",
                "    Kill connections. Options are: ID, ADDR, LADDR, TYPE, USER, SKIPME, MAXAGE.",
                "LIST [options ...]",
                "    Return information about client connections. Options: TYPE, ID.",
                "UNPAUSE",
                "    Stop the current client pause, resuming traffic.",
                "PAUSE <timeout> [WRITE|ALL]",
                "    Suspend all, or just write, clients for <timeout> milliseconds.",
                "NO-EVICT (ON|OFF)",
                "    Protect current client connection from eviction.",
                "REPLY (ON|OFF|SKIP)",
                "    Control the replies sent to the current connection.",
                "SETNAME <name>",
                "    Assign the name <name> to the current connection.",
                "GETREDIR",
                "    Return the client ID we are redirecting to when tracking is enabled.",
                "UNBLOCK <clientid> [TIMEOUT|ERROR]",
                "    Unblock the specified blocked client.",
            ],
        );
    } else {
        w.error(&format!(
            "ERR unknown subcommand '{}'. Try CLIENT HELP.",
            String::from_utf8_lossy(sub)
        ));
    }
}

/// Sets the connection's name (empty: none), also where CLIENT LIST reads it.
fn set_name(ctx: &mut Ctx, name: &[u8]) {
    let name = (!name.is_empty()).then(|| name.to_vec());
    if let Some(m) = &ctx.session.meta {
        *m.name.lock().unwrap_or_else(|p| p.into_inner()) = name.clone();
    }
    ctx.session.name = name;
}

/// CLIENT UNBLOCK id [TIMEOUT | ERROR]: a blocked client answered now, with nil (as
/// if its time ran out) or the UNBLOCKED error; 1 when it was blocked.
fn unblock(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let Some(id) = parse_i64(args[2]) else {
        return w.error(NOT_INT);
    };
    let error = match args.get(3) {
        None => false,
        Some(a) if eq(a, "timeout") => false,
        Some(a) if eq(a, "error") => true,
        Some(_) => return w.error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"),
    };
    let hub = &ctx.shared.hub;
    let Some(waiter) = u64::try_from(id).ok().and_then(|id| hub.claim(id)) else {
        return w.int(0);
    };
    if let Some(cmd) = waiter.argv.first().and_then(|n| super::table::lookup(n)) {
        ctx.shared.stats.per_command.ran(super::table::row(cmd));
    }
    let reply = if error {
        b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n".to_vec()
    } else {
        super::blocking::timed_out(waiter.proto)
    };
    hub.deliver(vec![(
        id as u64,
        crate::hub::Msg::Unblocked { reply, seq: 0 },
    )]);
    w.int(1);
}
