//! CLIENT TRACKING, CACHING, TRACKINGINFO and GETREDIR, and the keys a tracking
//! client's reads add to the table (see [`crate::tracking`]).

use super::table::Command;
use super::{eq, parse_i64, Ctx, SYNTAX};
use crate::resp::Writer;
use crate::tracking::Mode;

/// Remembers the keys of read-only command `cmd` run by a tracking client (default
/// mode; OPTIN after CLIENT CACHING YES, OPTOUT unless CLIENT CACHING NO).
pub(crate) fn track_read(ctx: &mut Ctx, cmd: &Command, args: &[&[u8]]) {
    let Some(m) = ctx.session.tracking.as_deref() else {
        return;
    };
    if m.bcast || (m.optin && !m.caching) || (m.optout && m.caching) {
        return;
    }
    if cmd.group == "scripting" {
        // A script's keys are tracked by the reads it makes, not by its declaration.
        return;
    }
    let Some(pos) = cmd.keys_of(args) else {
        return;
    };
    let keys: Vec<&[u8]> = pos.iter().filter_map(|&i| args.get(i).copied()).collect();
    if keys.is_empty() {
        return;
    }
    let hub = &ctx.shared.hub;
    hub.tracking
        .remember(hub, ctx.session.id, &keys, ctx.config.tracking_max_keys);
}

/// Drops a CLIENT CACHING flag after the command that followed it (`argv`: the command
/// just run).
pub(crate) fn after_command(session: &mut super::Session, argv: &[&[u8]]) {
    if let Some(m) = session.tracking.as_deref_mut() {
        let caching = argv.len() > 1 && eq(argv[0], "client") && eq(argv[1], "caching");
        if !caching {
            m.caching = false;
        }
    }
}

/// A connection closed: it tracks no more.
pub fn forget(hub: &crate::hub::Hub, session: &mut super::Session) {
    if let Some(m) = session.tracking.take() {
        hub.tracking.disable(session.id, &m.prefixes);
    }
}

/// Whether two prefixes overlap (one starts the other).
fn overlap(a: &[u8], b: &[u8]) -> bool {
    let n = a.len().min(b.len());
    a[..n] == b[..n]
}

/// Redis's error for prefixes that overlap one the client has or one another, if
/// any. Sorted, overlapping prefixes sit side by side, so the check costs n log n;
/// the pair Redis names (the first prefix given that overlaps a later one) is looked
/// for only when there is one, and among a bounded number.
fn collision(had: &[Vec<u8>], new: &[&[u8]]) -> Option<String> {
    let had: std::collections::BTreeSet<&[u8]> = had.iter().map(Vec::as_slice).collect();
    let mut sorted = new.to_vec();
    sorted.sort_unstable();
    let among = sorted.windows(2).find(|w| overlap(w[0], w[1]));
    for (i, p) in new.iter().enumerate() {
        let starts_p = (0..=p.len()).find_map(|n| had.get(&p[..n]));
        let under_p = had.range(*p..).next().filter(|h| h.starts_with(p));
        if let Some(c) = starts_p.or(under_p) {
            return Some(format!(
                "ERR Prefix '{}' overlaps with an existing prefix '{}'. Prefixes for a \
                 single client must not overlap.",
                String::from_utf8_lossy(p),
                String::from_utf8_lossy(c)
            ));
        }
        let Some(pair) = among else {
            continue;
        };
        let q = if new.len() <= 1024 {
            new[i + 1..].iter().find(|q| overlap(p, q))
        } else {
            (i == 0).then_some(&pair[1])
        };
        if let Some(q) = q {
            let p = if new.len() <= 1024 { p } else { &pair[0] };
            return Some(format!(
                "ERR Prefix '{}' overlaps with another provided prefix '{}'. Prefixes \
                 for a single client must not overlap.",
                String::from_utf8_lossy(p),
                String::from_utf8_lossy(q)
            ));
        }
    }
    None
}

/// CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p ...] [BCAST] [OPTIN] [OPTOUT]
/// [NOLOOP].
pub fn tracking(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let mut next = Mode::default();
    let mut prefixes: Vec<&[u8]> = Vec::new();
    let mut j = 3;
    while j < args.len() {
        let a = args[j];
        let more = j + 1 < args.len();
        if eq(a, "redirect") && more {
            j += 1;
            if next.redirect != 0 {
                return w.error("ERR A client can only redirect to a single other client");
            }
            let Some(id) = parse_i64(args[j]) else {
                return w.error(super::NOT_INT);
            };
            let exists = u64::try_from(id).is_ok_and(|id| ctx.shared.hub.has_client(id));
            if !exists {
                return w.error("ERR The client ID you want redirect to does not exist");
            }
            next.redirect = id as u64;
        } else if eq(a, "bcast") {
            next.bcast = true;
        } else if eq(a, "optin") {
            next.optin = true;
        } else if eq(a, "optout") {
            next.optout = true;
        } else if eq(a, "noloop") {
            next.noloop = true;
        } else if eq(a, "prefix") && more {
            j += 1;
            prefixes.push(args[j]);
        } else {
            return w.error(SYNTAX);
        }
        j += 1;
    }
    let hub = &ctx.shared.hub;
    if eq(args[2], "off") {
        forget(hub, ctx.session);
        return w.simple("OK");
    }
    if !eq(args[2], "on") {
        return w.error(SYNTAX);
    }
    if !next.bcast && !prefixes.is_empty() {
        return w.error("ERR PREFIX option requires BCAST mode to be enabled");
    }
    let old = ctx.session.tracking.as_deref();
    if old.is_some_and(|o| o.bcast != next.bcast) {
        return w.error(
            "ERR You can't switch BCAST mode on/off before disabling tracking for this \
             client, and then re-enabling it with a different mode.",
        );
    }
    if next.bcast && (next.optin || next.optout) {
        return w.error("ERR OPTIN and OPTOUT are not compatible with BCAST");
    }
    if next.optin && next.optout {
        return w.error("ERR You can't specify both OPTIN mode and OPTOUT mode");
    }
    if old.is_some_and(|o| (next.optin && o.optout) || (next.optout && o.optin)) {
        return w.error(
            "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this \
             client, and then re-enabling it with a different mode.",
        );
    }
    let had: &[Vec<u8>] = old.map_or(&[], |o| &o.prefixes);
    if next.bcast {
        if let Some(e) = collision(had, &prefixes) {
            return w.error(&e);
        }
        next.prefixes = had.to_vec();
        if prefixes.is_empty() {
            prefixes.push(b"");
        }
        for p in prefixes {
            if !next.prefixes.iter().any(|q| q == p) {
                next.prefixes.push(p.to_vec());
            }
        }
    }
    ctx.shared.keyspace.keep_for_tracking();
    hub.tracking.enable(ctx.session.id, &next);
    ctx.session.tracking = Some(Box::new(next));
    w.simple("OK");
}

/// CLIENT CACHING YES|NO.
pub fn caching(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let Some(m) = ctx.session.tracking.as_deref_mut() else {
        return w.error(
            "ERR CLIENT CACHING can be called only when the client is in tracking mode \
             with OPTIN or OPTOUT mode enabled",
        );
    };
    if eq(args[2], "yes") {
        if !m.optin {
            return w.error(
                "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.",
            );
        }
    } else if eq(args[2], "no") {
        if !m.optout {
            return w.error(
                "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.",
            );
        }
    } else {
        return w.error(SYNTAX);
    }
    m.caching = true;
    w.simple("OK");
}

/// CLIENT GETREDIR: the client invalidations go to (0: this one; -1: not tracking).
pub fn getredir(ctx: &mut Ctx, w: &mut Writer) {
    match ctx.session.tracking.as_deref() {
        Some(m) => w.int(m.redirect as i64),
        None => w.int(-1),
    }
}

/// CLIENT TRACKINGINFO: flags, redirect and prefixes.
pub fn info(ctx: &mut Ctx, w: &mut Writer) {
    let m = ctx.session.tracking.as_deref();
    let mut flags: Vec<&str> = Vec::new();
    match m {
        None => flags.push("off"),
        Some(m) => {
            flags.push("on");
            if m.bcast {
                flags.push("bcast");
            }
            if m.optin {
                flags.push("optin");
                if m.caching {
                    flags.push("caching-yes");
                }
            }
            if m.optout {
                flags.push("optout");
                if m.caching {
                    flags.push("caching-no");
                }
            }
            if m.noloop {
                flags.push("noloop");
            }
            if m.redirect != 0 && !ctx.shared.hub.has_client(m.redirect) {
                flags.push("broken_redirect");
            }
        }
    }
    w.map(3);
    w.bulk(b"flags");
    w.set(flags.len());
    for f in flags {
        w.bulk(f.as_bytes());
    }
    w.bulk(b"redirect");
    w.int(m.map_or(-1, |m| m.redirect as i64));
    w.bulk(b"prefixes");
    let prefixes: &[Vec<u8>] = m.map_or(&[], |m| &m.prefixes);
    w.array(prefixes.len());
    for p in prefixes {
        w.bulk(p);
    }
}
