//! CLIENT LIST, INFO, KILL, NO-EVICT, GETREDIR and HELP: what the server knows of
//! every connection, across the event loops.
//!
//! Each connection has a [`ClientMeta`] in the hub's registry ([`crate::hub`]), shared with its loop:
//! fixed facts (id, addresses, start) and a few atomics its loop updates as it serves
//! (last command, last interaction, subscription counts, protocol), so listing needs no
//! lock of another loop (flags: `O` for a monitor, `P` for a subscriber, else `N`).
//! Fields a listing shows that this server does not track per
//! client (buffer sizes other than the pending output, memory) are reported as 0.
//! CLIENT KILL marks the clients it matches and has their loops close them (a client
//! that kills itself is closed after its reply).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::{eq, parse_i64, table, Ctx, SYNTAX};
use crate::hub::{ClientMeta, Msg};
use crate::resp::{Proto, Writer};

impl ClientMeta {
    fn name(&self) -> String {
        let n = self.name.lock().unwrap_or_else(|p| p.into_inner());
        n.as_deref()
            .map(String::from_utf8_lossy)
            .unwrap_or_default()
            .into_owned()
    }

    /// Its ACL user's name.
    fn user_name(&self) -> String {
        let u = self.user.lock().unwrap_or_else(|p| p.into_inner());
        String::from_utf8_lossy(u.as_deref().unwrap_or(b"default")).into_owned()
    }

    fn is_user(&self, name: &[u8]) -> bool {
        let u = self.user.lock().unwrap_or_else(|p| p.into_inner());
        u.as_deref().unwrap_or(b"default") == name
    }

    fn is_pubsub(&self) -> bool {
        self.subs.iter().any(|s| s.load(Ordering::Relaxed) > 0)
    }

    /// True when this client is of CLIENT LIST / KILL's `TYPE t` (normal, replica or
    /// slave, pubsub, master: none here, the link to a primary is not a client).
    fn is_type(&self, t: &[u8]) -> bool {
        let replica = self.replica.load(Ordering::Relaxed);
        if eq(t, "replica") || eq(t, "slave") {
            replica
        } else if eq(t, "pubsub") {
            !replica && self.is_pubsub()
        } else if eq(t, "normal") {
            !replica && !self.is_pubsub()
        } else {
            false
        }
    }

    /// The CLIENT LIST line (without the line end).
    pub(crate) fn line(&self, now: u64) -> String {
        let cmd = match self.last_cmd.load(Ordering::Relaxed) {
            0 => "NULL",
            i => table::COMMANDS.get(i - 1).map_or("NULL", |c| c.name),
        };
        let s = |i: usize| self.subs[i].load(Ordering::Relaxed);
        let flags = if self.monitor.load(Ordering::Relaxed) {
            "O"
        } else if self.replica.load(Ordering::Relaxed) {
            "S"
        } else if self.is_pubsub() {
            "P"
        } else {
            "N"
        };
        let omem = self.omem.load(Ordering::Relaxed);
        let lib = self.lib.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let user = self.user_name();
        format!(
            "id={} addr={} laddr={} fd=-1 name={} age={} idle={} flags={flags} db={} sub={} psub={} ssub={} multi=-1 qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem={omem} tot-mem={omem} events=r cmd={cmd} user={user} redir=-1 resp={} lib-name={} lib-ver={}",
            self.id,
            self.addr,
            self.laddr,
            self.name(),
            now.saturating_sub(self.created_ms) / 1000,
            now.saturating_sub(self.last_ms.load(Ordering::Relaxed)) / 1000,
            self.db.load(Ordering::Relaxed),
            s(0),
            s(1),
            s(2),
            if self.resp3.load(Ordering::Relaxed) { 3 } else { 2 },
            lib.0,
            lib.1,
        )
    }
}

/// CLIENT SETINFO LIB-NAME|LIB-VER value: shown by CLIENT LIST and INFO; an empty
/// value clears it; spaces, line ends and other characters outside `!`..`~` are
/// refused, as in Redis.
pub fn setinfo(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (attr, value) = (args[2], args[3]);
    let lib_name = eq(attr, "lib-name");
    if !lib_name && !eq(attr, "lib-ver") {
        return w.error(&format!(
            "ERR Unrecognized option '{}'",
            String::from_utf8_lossy(attr)
        ));
    }
    if value.iter().any(|&b| !(b'!'..=b'~').contains(&b)) {
        return w.error(&format!(
            "ERR {} cannot contain spaces, newlines or special characters.",
            if lib_name { "lib-name" } else { "lib-ver" }
        ));
    }
    if let Some(m) = &ctx.session.meta {
        let mut lib = m.lib.lock().unwrap_or_else(|p| p.into_inner());
        let text = String::from_utf8_lossy(value).into_owned();
        if lib_name {
            lib.0 = text;
        } else {
            lib.1 = text;
        }
    }
    w.simple("OK");
}

/// CLIENT LIST [TYPE normal|master|replica|pubsub] [ID id ...].
pub fn list(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let mut ids: Option<Vec<u64>> = None;
    let mut kind: Option<&[u8]> = None;
    let mut i = 2;
    while i < args.len() {
        if eq(args[i], "type") && i + 1 < args.len() {
            let t = args[i + 1];
            if !["normal", "master", "replica", "slave", "pubsub"]
                .iter()
                .any(|k| eq(t, k))
            {
                return w.error(&format!(
                    "ERR Unknown client type '{}'",
                    String::from_utf8_lossy(t)
                ));
            }
            kind = Some(t);
            i += 2;
        } else if eq(args[i], "id") && i + 1 < args.len() {
            let mut v = Vec::new();
            for a in &args[i + 1..] {
                match parse_i64(a) {
                    Some(n) if n > 0 => v.push(n as u64),
                    _ => return w.error("ERR Invalid client ID"),
                }
            }
            ids = Some(v);
            i = args.len();
        } else {
            return w.error(SYNTAX);
        }
    }
    let now = ctx.now;
    let mut out = String::new();
    for m in ctx.shared.hub.clients() {
        if ids.as_ref().is_some_and(|v| !v.contains(&m.id)) {
            continue;
        }
        if kind.is_some_and(|t| !m.is_type(t)) {
            continue;
        }
        out.push_str(&m.line(now));
        out.push('\n');
    }
    w.verbatim(out.as_bytes());
}

/// CLIENT INFO: this connection's line.
pub fn info(ctx: &mut Ctx, _args: &[&[u8]], w: &mut Writer) {
    let id = ctx.session.id;
    let line = ctx
        .shared
        .hub
        .clients()
        .into_iter()
        .find(|m| m.id == id)
        .map(|m| m.line(ctx.now) + "\n")
        .unwrap_or_default();
    w.verbatim(line.as_bytes());
}

/// CLIENT KILL ip:port | CLIENT KILL [ID id] [ADDR ip:port] [LADDR ip:port] [TYPE t]
/// [USER name] [SKIPME yes|no] [MAXAGE secs].
pub fn kill(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let old_form = args.len() == 3;
    let mut id = None;
    let mut addr = None;
    let mut laddr = None;
    let mut kind = None;
    let mut user = None;
    let mut skipme = true;
    let mut maxage = None;
    if old_form {
        addr = Some(args[2]);
    } else {
        if !args.len().is_multiple_of(2) {
            return w.error(SYNTAX);
        }
        for pair in args[2..].chunks(2) {
            let (k, v) = (pair[0], pair[1]);
            if eq(k, "id") {
                match parse_i64(v) {
                    Some(n) if n > 0 => id = Some(n as u64),
                    _ => return w.error("ERR client-id should be greater than 0"),
                }
            } else if eq(k, "addr") {
                addr = Some(v);
            } else if eq(k, "laddr") {
                laddr = Some(v);
            } else if eq(k, "type") {
                if !["normal", "master", "replica", "slave", "pubsub"]
                    .iter()
                    .any(|t| eq(v, t))
                {
                    return w.error(&format!(
                        "ERR Unknown client type '{}'",
                        String::from_utf8_lossy(v)
                    ));
                }
                kind = Some(v);
            } else if eq(k, "user") {
                if ctx.config.acl.get(v).is_none() {
                    return w.error(&format!(
                        "ERR No such user '{}'",
                        String::from_utf8_lossy(v)
                    ));
                }
                user = Some(v);
            } else if eq(k, "skipme") {
                skipme = if eq(v, "yes") {
                    true
                } else if eq(v, "no") {
                    false
                } else {
                    return w.error(SYNTAX);
                };
            } else if eq(k, "maxage") {
                match parse_i64(v) {
                    Some(n) if n >= 0 => maxage = Some(n as u64),
                    _ => return w.error(SYNTAX),
                }
            } else {
                return w.error(SYNTAX);
            }
        }
    }
    let me = ctx.session.id;
    let now = ctx.now;
    let hub = &ctx.shared.hub;
    let mut killed = Vec::new();
    let mut myself = false;
    for m in hub.clients() {
        let matches = id.is_none_or(|i| i == m.id)
            && addr.is_none_or(|a| a == m.addr.as_bytes())
            && laddr.is_none_or(|a| a == m.laddr.as_bytes())
            && kind.is_none_or(|t| m.is_type(t))
            && user.is_none_or(|u| m.is_user(u))
            && maxage.is_none_or(|a| now.saturating_sub(m.created_ms) / 1000 >= a);
        if !matches {
            continue;
        }
        if m.id == me {
            // Old form: a client may kill itself; new form: only with SKIPME no.
            if skipme && !old_form {
                continue;
            }
            myself = true;
            continue;
        }
        killed.push((m.id, Msg::Kill));
    }
    let n = killed.len() + myself as usize;
    hub.deliver(killed);
    if myself {
        ctx.session.quit = true;
    }
    if old_form {
        if n == 0 {
            w.error("ERR No such client")
        } else {
            w.simple("OK")
        }
    } else {
        w.int(n as i64)
    }
}

/// CLIENT NO-EVICT on|off.
pub fn no_evict(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let on = if eq(args[2], "on") {
        true
    } else if eq(args[2], "off") {
        false
    } else {
        return w.error(SYNTAX);
    };
    if let Some(m) = &ctx.session.meta {
        m.no_evict.store(on, Ordering::Relaxed);
    }
    w.simple("OK");
}

/// Keeps a connection's listed facts current after a command.
pub(crate) fn touched(meta: &Arc<ClientMeta>, proto: Proto, db: usize, now: u64) {
    meta.last_ms.store(now, Ordering::Relaxed);
    meta.db.store(db, Ordering::Relaxed);
    meta.resp3.store(proto == Proto::Resp3, Ordering::Relaxed);
}
