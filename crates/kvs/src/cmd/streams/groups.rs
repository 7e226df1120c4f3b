//! Consumer groups: XGROUP (CREATE, SETID, DESTROY, CREATECONSUMER, DELCONSUMER, HELP),
//! XACK, XPENDING, XCLAIM and XAUTOCLAIM, XREADGROUP's reading of one stream
//! ([`read_group`]), and the forms in which group changes are logged and replayed
//! ([`replay`], [`dump`]):
//!
//! - `XCLAIM key group consumer 0 id TIME ms RETRYCOUNT n FORCE JUSTID LASTID id`: an
//!   entry delivered or claimed (Redis propagates XREADGROUP, XCLAIM and XAUTOCLAIM so,
//!   one per entry). When the entry is no longer in the stream, the same record (with
//!   the pending entry's old owner, time and count) drops it from the PEL: XCLAIM and
//!   XAUTOCLAIM remove the pending entries of deleted entries, and log them so;
//! - `XGROUP CREATE key group id [MKSTREAM] ENTRIESREAD n`, `XGROUP SETID key group id
//!   ENTRIESREAD n`, `XGROUP DESTROY key group`, `XGROUP CREATECONSUMER key group
//!   consumer`, `XGROUP DELCONSUMER key group consumer`;
//! - `XACK key group id [id ...]`.
//!
//! Arguments are checked in Redis's order, with its error texts; a container's
//! subcommand and its arity first ([`subcommand`]), as Redis checks them before the
//! command runs.

use super::{with_stream, write_item, Ctx};
use crate::cmd::{eq, help, lower, notify, parse_i64, read, NOT_INT};
use crate::resp::{Proto, Writer};
use crate::store::Store;
use crate::stream::{Group, Stream, StreamId};
use crate::value::Value;
use wirespeed_util::time::unix_ms;

/// A container command's subcommands and their arities (`n`: exactly n arguments with
/// the command's name, `-n`: at least n).
pub(crate) type Subs = &'static [(&'static str, i32)];

/// Redis's `%.128s`: at most 128 bytes of `a`, as text.
fn clip(a: &[u8]) -> String {
    String::from_utf8_lossy(&a[..a.len().min(128)]).into_owned()
}

/// Text of a key or a name in an error.
fn text(a: &[u8]) -> String {
    String::from_utf8_lossy(a).into_owned()
}

/// Checks the subcommand of a container command as Redis does before running it: one
/// it does not know, then its arity. Returns its name (lower case), or writes the
/// error and returns None.
pub(crate) fn subcommand(w: &mut Writer, args: &[&[u8]], subs: Subs) -> Option<&'static str> {
    let cmd = lower(args[0]);
    let Some(&(name, arity)) = subs.iter().find(|(n, _)| eq(args[1], n)) else {
        w.error(&format!(
            "ERR unknown subcommand '{}'. Try {} HELP.",
            clip(args[1]),
            cmd.to_ascii_uppercase()
        ));
        return None;
    };
    let ok = if arity >= 0 {
        args.len() == arity as usize
    } else {
        args.len() >= arity.unsigned_abs() as usize
    };
    if !ok {
        w.error(&format!(
            "ERR wrong number of arguments for '{cmd}|{name}' command"
        ));
        return None;
    }
    Some(name)
}

/// Redis's reply to a subcommand's bad options.
pub(crate) fn sub_syntax(args: &[&[u8]]) -> String {
    format!(
        "ERR unknown subcommand or wrong number of arguments for '{}'. Try {} HELP.",
        clip(args[1]),
        lower(args[0]).to_ascii_uppercase()
    )
}

/// A HELP reply: Redis's first line naming the command, then `lines`, then HELP.
pub(crate) fn sub_help(w: &mut Writer, args: &[&[u8]], lines: &[&str]) {
    let first = format!(
        "{} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        lower(args[0]).to_ascii_uppercase()
    );
    let mut all: Vec<&str> = vec![&first];
    all.extend_from_slice(lines);
    help(w, &all);
}

/// The error for a missing key or group (XPENDING, XCLAIM, XAUTOCLAIM).
fn no_key_or_group(key: &[u8], group: &[u8]) -> String {
    format!(
        "NOGROUP No such key '{}' or consumer group '{}'",
        text(key),
        text(group)
    )
}

/// The error for a missing group of an existing key (XGROUP, XINFO CONSUMERS).
pub(crate) fn no_group(key: &[u8], group: &[u8]) -> String {
    format!(
        "NOGROUP No such consumer group '{}' for key name '{}'",
        text(group),
        text(key)
    )
}

/// Writes `args` to the log.
fn log_records(ctx: &mut Ctx, records: &[Vec<Vec<u8>>]) {
    for rec in records {
        let args: Vec<&[u8]> = rec.iter().map(Vec::as_slice).collect();
        ctx.log_cmd(&args);
    }
}

fn createconsumer_record(key: &[u8], group: &[u8], consumer: &[u8]) -> Vec<Vec<u8>> {
    vec![
        b"XGROUP".to_vec(),
        b"CREATECONSUMER".to_vec(),
        key.to_vec(),
        group.to_vec(),
        consumer.to_vec(),
    ]
}
/// One stream's part of an XREADGROUP.
#[derive(Debug)]
pub(crate) struct Read<'a> {
    /// The group.
    pub group: &'a [u8],
    /// The consumer.
    pub consumer: &'a [u8],
    /// None for `>` (new entries); else the consumer's pending entries after this ID.
    pub after: Option<StreamId>,
    /// At most this many entries (0: all).
    pub count: usize,
    /// NOACK: delivered entries are not made pending.
    pub noack: bool,
}

/// The canonical XCLAIM that logs the delivery of `id` to `consumer`.
fn claim_record(
    key: &[u8],
    group: &[u8],
    consumer: &[u8],
    id: StreamId,
    time: u64,
    count: u64,
    last: StreamId,
) -> Vec<Vec<u8>> {
    vec![
        b"XCLAIM".to_vec(),
        key.to_vec(),
        group.to_vec(),
        consumer.to_vec(),
        b"0".to_vec(),
        id.text().into_bytes(),
        b"TIME".to_vec(),
        time.to_string().into_bytes(),
        b"RETRYCOUNT".to_vec(),
        count.to_string().into_bytes(),
        b"FORCE".to_vec(),
        b"JUSTID".to_vec(),
        b"LASTID".to_vec(),
        last.text().into_bytes(),
    ]
}

fn setid_record(key: &[u8], group: &[u8], g: &Group) -> Vec<Vec<u8>> {
    vec![
        b"XGROUP".to_vec(),
        b"SETID".to_vec(),
        key.to_vec(),
        group.to_vec(),
        g.last_id.text().into_bytes(),
        b"ENTRIESREAD".to_vec(),
        entries_read_text(g.entries_read).into_bytes(),
    ]
}

/// A group's read counter as Redis writes it (-1: not known).
pub(crate) fn entries_read_text(r: Option<u64>) -> String {
    r.map_or_else(|| "-1".to_string(), |n| n.to_string())
}

/// Reads one stream for XREADGROUP (the group exists: the caller checked), writing
/// `key, entries` when it serves: always for a history read (an ID), for `>` only when
/// there are new entries. True when written.
pub(crate) fn read_group(ctx: &mut Ctx, key: &[u8], r: &Read, w: &mut Writer) -> bool {
    let now = ctx.now;
    let n = if r.count == 0 { usize::MAX } else { r.count };
    let mut records: Vec<Vec<Vec<u8>>> = Vec::new();
    let mut made = false;
    let mut body = Vec::new();
    let served = {
        let mut out = Writer::new(&mut body, w.proto());
        with_stream(ctx.keys.store(key), key, now, |s| {
            let Some(g) = s.groups.get_mut(r.group) else {
                return false;
            };
            let (_, created) = g.consumer(r.consumer, now);
            made = created;
            match r.after {
                Some(after) => {
                    history(s, r, after, n, now, &mut out);
                    true
                }
                None => {
                    let last = g.last_id;
                    let Some(start) = last.next() else {
                        return false;
                    };
                    let ids: Vec<StreamId> = s
                        .range(start, StreamId::MAX)
                        .take(n)
                        .map(|i| i.id)
                        .collect();
                    if ids.is_empty() {
                        return false;
                    }
                    out.array(ids.len());
                    for id in &ids {
                        s.advance_group(r.group, *id);
                        if let Some(it) = s.get(*id) {
                            write_item(&mut out, it);
                        }
                        if !r.noack {
                            let g = s.groups.get_mut(r.group).expect("group");
                            g.assign(*id, r.consumer, now, 1);
                            if let Some(c) = g.consumers.get_mut(r.consumer) {
                                c.active_time = Some(now);
                            }
                            records.push(claim_record(
                                key, r.group, r.consumer, *id, now, 1, g.last_id,
                            ));
                        }
                    }
                    if r.noack {
                        let g = &s.groups[r.group];
                        records.push(setid_record(key, r.group, g));
                    }
                    true
                }
            }
        })
        .ok()
        .flatten()
        .unwrap_or(false)
    };
    if made && !records.iter().any(|r| r[0] == b"XCLAIM") {
        // A consumer made by a read that logs no claim (NOACK, nothing new, history)
        // must exist on a replica too; a claim makes it there.
        records.insert(0, createconsumer_record(key, r.group, r.consumer));
    }
    log_records(ctx, &records);
    if made {
        notify::stream(ctx, &["xgroup-createconsumer"], key);
    }
    if served {
        if w.proto() != Proto::Resp3 {
            w.array(2);
        }
        w.bulk(key);
        w.raw(&body);
    }
    served
}

/// A consumer's pending entries after `after` (at most `n`): each delivered again (its
/// count and time move), an entry deleted since as its ID and a null.
fn history(s: &mut Stream, r: &Read, after: StreamId, n: usize, now: u64, w: &mut Writer) {
    let Some(start) = after.next() else {
        return w.array(0);
    };
    let ids: Vec<StreamId> = s
        .groups
        .get(r.group)
        .and_then(|g| g.consumers.get(r.consumer))
        .map(|c| c.pel.range(start..).take(n).copied().collect())
        .unwrap_or_default();
    w.array(ids.len());
    for id in ids {
        match s.get(id) {
            Some(it) => {
                write_item(w, it);
                if let Some(p) = s.groups.get_mut(r.group).and_then(|g| g.pel.get_mut(&id)) {
                    p.delivery_time = now;
                    p.delivery_count += 1;
                }
            }
            None => {
                w.array(2);
                w.bulk(id.text().as_bytes());
                w.null_array();
            }
        }
    }
}

/// XGROUP's subcommands.
const XGROUP_SUBS: Subs = &[
    ("create", -5),
    ("setid", -5),
    ("destroy", 4),
    ("createconsumer", 5),
    ("delconsumer", 5),
    ("help", 2),
];

const XGROUP_HELP: &[&str] = &[
    "CREATE <key> <groupname> <id|$> [option]",
    "    Create a new consumer group. Options are:",
    "    * MKSTREAM",
    "      Create the empty stream if it does not exist.",
    "    * ENTRIESREAD entries_read",
    "      Set the group's entries_read counter (internal use).",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a new consumer in the specified group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove the specified consumer.",
    "DESTROY <key> <groupname>",
    "    Remove the specified group.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    "    Set the current group ID and entries_read counter.",
];

/// The options of XGROUP CREATE and SETID after the ID: MKSTREAM (CREATE only) and
/// ENTRIESREAD. Err(None): a bad option (the caller's syntax error).
fn group_options(sub: &str, args: &[&[u8]]) -> Result<(bool, Option<u64>), Option<&'static str>> {
    let (mut mkstream, mut entries_read) = (false, None);
    let mut i = 5;
    while i < args.len() {
        if sub == "create" && eq(args[i], "mkstream") {
            mkstream = true;
            i += 1;
        } else if (sub == "create" || sub == "setid")
            && eq(args[i], "entriesread")
            && i + 1 < args.len()
        {
            let n = parse_i64(args[i + 1]).ok_or(Some(NOT_INT))?;
            if n < 0 && n != -1 {
                return Err(Some("ERR value for ENTRIESREAD must be positive or -1"));
            }
            entries_read = u64::try_from(n).ok();
            i += 2;
        } else {
            return Err(None);
        }
    }
    Ok((mkstream, entries_read))
}

/// XGROUP CREATE key group id|$ [MKSTREAM] [ENTRIESREAD n], XGROUP SETID key group
/// id|$ [ENTRIESREAD n], XGROUP DESTROY key group, XGROUP CREATECONSUMER key group
/// consumer, XGROUP DELCONSUMER key group consumer, XGROUP HELP.
pub fn xgroup(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let Some(sub) = subcommand(w, args, XGROUP_SUBS) else {
        return;
    };
    if sub == "help" {
        return sub_help(w, args, XGROUP_HELP);
    }
    let (key, group) = (args[2], args[3]);
    let (mkstream, entries_read) = match group_options(sub, args) {
        Ok(o) => o,
        Err(Some(e)) => return w.error(e),
        Err(None) => return w.error(&sub_syntax(args)),
    };
    let found = match read::<Stream, _>(ctx, key, |s| (s.last_id, s.groups.contains_key(group))) {
        Ok(f) => f,
        Err(e) => return w.error(e),
    };
    if !mkstream {
        let Some((_, has_group)) = found else {
            return w.error("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.");
        };
        if !has_group && matches!(sub, "setid" | "createconsumer" | "delconsumer") {
            return w.error(&no_group(key, group));
        }
    }
    let now = ctx.now;
    let last = found.map(|f| f.0);
    match sub {
        "create" => {
            if args.len() > 8 {
                return w.error(&sub_syntax(args));
            }
            let id = if args[4] == b"$" {
                last.unwrap_or_default()
            } else {
                match StreamId::parse(args[4], 0, true) {
                    Ok(id) => id,
                    Err(e) => return w.error(e),
                }
            };
            let store = ctx.keys.store(key);
            let made_key = last.is_none();
            if made_key {
                store.put(key, Value::Stream(Box::default()), 0, now);
            }
            let made = with_stream(store, key, now, |s| {
                if s.groups.contains_key(group) {
                    return false;
                }
                s.groups.insert(group.into(), Group::new(id, entries_read));
                true
            });
            if made != Ok(Some(true)) {
                return w.error("BUSYGROUP Consumer Group name already exists");
            }
            w.simple("OK");
            let id = id.text();
            let er = entries_read_text(entries_read);
            let mut rec: Vec<&[u8]> = vec![b"XGROUP", b"CREATE", key, group, id.as_bytes()];
            if made_key {
                rec.push(b"MKSTREAM");
            }
            rec.extend([&b"ENTRIESREAD"[..], er.as_bytes()]);
            ctx.log_cmd(&rec);
            notify::stream(ctx, &["xgroup-create"], key);
        }
        "setid" => {
            if args.len() != 5 && args.len() != 7 {
                return w.error(&sub_syntax(args));
            }
            let id = if args[4] == b"$" {
                last.unwrap_or_default()
            } else {
                match StreamId::parse(args[4], 0, false) {
                    Ok(id) => id,
                    Err(e) => return w.error(e),
                }
            };
            let rec = with_stream(ctx.keys.store(key), key, now, |s| {
                let g = s.groups.get_mut(group)?;
                g.last_id = id;
                g.entries_read = entries_read;
                Some(setid_record(key, group, g))
            });
            w.simple("OK");
            if let Ok(Some(Some(rec))) = rec {
                log_records(ctx, &[rec]);
            }
            notify::stream(ctx, &["xgroup-setid"], key);
        }
        "destroy" => {
            let gone = with_stream(ctx.keys.store(key), key, now, |s| {
                s.groups.remove(group).is_some()
            });
            if gone == Ok(Some(true)) {
                w.int(1);
                ctx.log_cmd(&[b"XGROUP", b"DESTROY", key, group]);
                notify::stream(ctx, &["xgroup-destroy"], key);
            } else {
                w.int(0);
            }
        }
        "createconsumer" => {
            let name = args[4];
            let made = with_stream(ctx.keys.store(key), key, now, |s| {
                let g = s.groups.get_mut(group)?;
                if g.consumers.contains_key(name) {
                    return Some(false);
                }
                g.consumer(name, now);
                Some(true)
            });
            if made == Ok(Some(Some(true))) {
                w.int(1);
                log_records(ctx, &[createconsumer_record(key, group, name)]);
                notify::stream(ctx, &["xgroup-createconsumer"], key);
            } else {
                w.int(0);
            }
        }
        _ => {
            // DELCONSUMER.
            let name = args[4];
            let pending = with_stream(ctx.keys.store(key), key, now, |s| {
                s.groups.get_mut(group)?.remove_consumer(name)
            });
            match pending {
                Ok(Some(Some(n))) => {
                    w.int(n as i64);
                    ctx.log_cmd(&[b"XGROUP", b"DELCONSUMER", key, group, name]);
                    notify::stream(ctx, &["xgroup-delconsumer"], key);
                }
                _ => w.int(0),
            }
        }
    }
}

/// XACK key group id [id ...].
pub fn xack(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (key, group) = (args[1], args[2]);
    match read::<Stream, _>(ctx, key, |s| s.groups.contains_key(group)) {
        Err(e) => return w.error(e),
        Ok(Some(true)) => {}
        Ok(_) => return w.int(0),
    }
    // Every ID is checked before any is acknowledged.
    let ids: Result<Vec<StreamId>, _> = args[3..]
        .iter()
        .map(|a| StreamId::parse(a, 0, true))
        .collect();
    let ids = match ids {
        Ok(ids) => ids,
        Err(e) => return w.error(e),
    };
    let now = ctx.now;
    let acked = with_stream(ctx.keys.store(key), key, now, |s| {
        s.groups
            .get_mut(group)
            .map_or(0, |g| ids.iter().filter(|id| g.ack(**id)).count())
    });
    let acked = acked.ok().flatten().unwrap_or(0);
    w.int(acked as i64);
    if acked > 0 {
        ctx.log_cmd(args);
    }
}

/// XPENDING key group [[IDLE min-idle] start end count [consumer]].
pub fn xpending(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (key, group) = (args[1], args[2]);
    let n = args.len();
    if n != 3 && !(6..=9).contains(&n) {
        return w.error(crate::cmd::SYNTAX);
    }
    // The range, checked before the key is looked at.
    let mut range = None;
    if n >= 6 {
        let mut at = 3;
        let mut min_idle = 0i64;
        if eq(args[3], "idle") {
            match parse_i64(args[4]) {
                Some(v) => min_idle = v,
                None => return w.error(NOT_INT),
            }
            if n < 8 {
                return w.error(crate::cmd::SYNTAX);
            }
            at += 2;
        }
        let count = match parse_i64(args[at + 2]) {
            Some(c) => c.max(0) as u64,
            None => return w.error(NOT_INT),
        };
        let (start, end) = match StreamId::parse_interval(args[at], args[at + 1]) {
            Ok(b) => b,
            Err(e) => return w.error(e),
        };
        range = Some((min_idle, start, end, count, args.get(at + 3).copied()));
    }
    let now = ctx.now as i64;
    let mut missing = false;
    let r = read::<Stream, _>(ctx, key, |s| {
        let Some(g) = s.groups.get(group) else {
            missing = true;
            return;
        };
        match range {
            None => pending_summary(g, w),
            Some((min_idle, start, end, mut count, consumer)) => {
                let ids: Box<dyn Iterator<Item = &StreamId>> = match consumer {
                    Some(c) => match g.consumers.get(c) {
                        Some(c) => Box::new(c.pel.range(start..)),
                        None => return w.array(0),
                    },
                    None => Box::new(g.pel.range(start..).map(|(id, _)| id)),
                };
                let mut out = Vec::new();
                for id in ids {
                    if count == 0 || *id > end {
                        break;
                    }
                    let Some(p) = g.pel.get(id) else {
                        continue;
                    };
                    let idle = now - p.delivery_time as i64;
                    if min_idle != 0 && idle < min_idle {
                        continue;
                    }
                    count -= 1;
                    out.push((*id, p, idle.max(0)));
                }
                w.array(out.len());
                for (id, p, idle) in out {
                    w.array(4);
                    w.bulk(id.text().as_bytes());
                    w.bulk(&p.consumer);
                    w.int(idle);
                    w.int(p.delivery_count as i64);
                }
            }
        }
    });
    match r {
        Err(e) => w.error(e),
        Ok(None) => w.error(&no_key_or_group(key, group)),
        Ok(Some(())) if missing => w.error(&no_key_or_group(key, group)),
        Ok(Some(())) => {}
    }
}

/// XPENDING key group: the count, the lowest and highest pending IDs, and each
/// consumer with pending entries and how many.
fn pending_summary(g: &Group, w: &mut Writer) {
    w.array(4);
    w.int(g.pel.len() as i64);
    let (Some((first, _)), Some((last, _))) = (g.pel.first_key_value(), g.pel.last_key_value())
    else {
        w.null();
        w.null();
        return w.null_array();
    };
    w.bulk(first.text().as_bytes());
    w.bulk(last.text().as_bytes());
    let busy: Vec<_> = g
        .consumers
        .iter()
        .filter(|(_, c)| !c.pel.is_empty())
        .collect();
    w.array(busy.len());
    for (name, c) in busy {
        w.array(2);
        w.bulk(name);
        w.bulk(c.pel.len().to_string().as_bytes());
    }
}

/// The arguments of an XCLAIM after its consumer.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Claim {
    /// Pending entries idle for less are left (0: no minimum).
    min_idle: i64,
    /// The IDs to claim.
    ids: Vec<StreamId>,
    /// The delivery time asked for (IDLE or TIME), before it is checked.
    delivery: Option<i64>,
    /// RETRYCOUNT (negative: not given).
    retry: i64,
    /// FORCE: IDs not pending are made pending (when their entries exist).
    force: bool,
    /// JUSTID: IDs in the reply, and the delivery count does not move.
    justid: bool,
    /// LASTID (0-0: not given).
    last_id: StreamId,
}

/// Parses XCLAIM's `min-idle-time id [id ...] [options]` (from `args[4]`) at time `now`
/// (IDLE is relative to it), with Redis's errors.
fn parse_claim(args: &[&[u8]], now: u64) -> Result<Claim, String> {
    let min_idle = parse_i64(args[4])
        .ok_or("ERR Invalid min-idle-time argument for XCLAIM")?
        .max(0);
    let mut c = Claim {
        min_idle,
        ids: Vec::new(),
        delivery: None,
        retry: -1,
        force: false,
        justid: false,
        last_id: StreamId::MIN,
    };
    let mut j = 5;
    while j < args.len() {
        match StreamId::parse(args[j], 0, true) {
            Ok(id) => c.ids.push(id),
            Err(_) => break,
        }
        j += 1;
    }
    while j < args.len() {
        let more = j + 1 < args.len();
        let opt = args[j];
        let num = |j: usize, what: &str| {
            parse_i64(args[j])
                .ok_or_else(|| format!("ERR Invalid {what} option argument for XCLAIM"))
        };
        if eq(opt, "force") {
            c.force = true;
        } else if eq(opt, "justid") {
            c.justid = true;
        } else if eq(opt, "idle") && more {
            j += 1;
            c.delivery = Some((now as i64).wrapping_sub(num(j, "IDLE")?));
        } else if eq(opt, "time") && more {
            j += 1;
            c.delivery = Some(num(j, "TIME")?);
        } else if eq(opt, "retrycount") && more {
            j += 1;
            c.retry = num(j, "RETRYCOUNT")?;
        } else if eq(opt, "lastid") && more {
            j += 1;
            c.last_id = StreamId::parse(args[j], 0, true)?;
        } else {
            return Err(format!("ERR Unrecognized XCLAIM option '{}'", text(opt)));
        }
        j += 1;
    }
    Ok(c)
}

/// What a claim did: the IDs claimed (in order), the IDs whose entries were gone (their
/// pending entries were dropped), the log records, and whether the consumer was made.
#[derive(Debug, Default)]
struct Claimed {
    ids: Vec<StreamId>,
    deleted: Vec<StreamId>,
    records: Vec<Vec<Vec<u8>>>,
    made: bool,
}

/// Claims one ID for `consumer` of `group` (XCLAIM and XAUTOCLAIM): an ID whose entry is
/// gone leaves the PEL; a pending one idle for at least `min_idle` (or any, with FORCE
/// when not pending) goes to the consumer with this delivery time and count (`retry`
/// when not negative, else one more unless `justid`). True when claimed.
#[allow(clippy::too_many_arguments)]
fn claim_one(
    s: &mut Stream,
    (key, group, consumer): (&[u8], &[u8], &[u8]),
    id: StreamId,
    c: &Claim,
    delivery: u64,
    now: u64,
    done: &mut Claimed,
) -> bool {
    let exists = s.get(id).is_some();
    let Some(g) = s.groups.get_mut(group) else {
        return false;
    };
    let pending = g.pel.get(&id).cloned();
    if !exists {
        if let Some(p) = pending {
            // The record drops it on a replica too (its entry is gone there as well).
            done.records.push(claim_record(
                key,
                group,
                &p.consumer,
                id,
                p.delivery_time,
                p.delivery_count,
                g.last_id,
            ));
            g.ack(id);
            done.deleted.push(id);
        }
        return false;
    }
    let count = match pending {
        Some(p) => {
            let idle = (now as i64).wrapping_sub(p.delivery_time as i64);
            if c.min_idle != 0 && idle < c.min_idle {
                return false;
            }
            p.delivery_count
        }
        None if c.force => 1,
        None => return false,
    };
    let count = if c.retry >= 0 {
        c.retry as u64
    } else if !c.justid {
        count + 1
    } else {
        count
    };
    g.assign(id, consumer, delivery, count);
    if let Some(me) = g.consumers.get_mut(consumer) {
        me.active_time = Some(now);
    }
    done.records.push(claim_record(
        key, group, consumer, id, delivery, count, g.last_id,
    ));
    done.ids.push(id);
    true
}

/// Makes `consumer` in `group` if absent and marks it seen: true when made.
fn see_consumer(s: &mut Stream, group: &[u8], consumer: &[u8], now: u64) -> bool {
    s.groups
        .get_mut(group)
        .is_some_and(|g| g.consumer(consumer, now).1)
}

/// Writes claimed entries: their IDs (JUSTID) or the entries.
fn write_claimed(s: &Stream, ids: &[StreamId], justid: bool, w: &mut Writer) {
    w.array(ids.len());
    for id in ids {
        if justid {
            w.bulk(id.text().as_bytes());
        } else if let Some(it) = s.get(*id) {
            write_item(w, it);
        } else {
            w.null_array();
        }
    }
}

/// Whether the key holds a stream with this group: Err with the reply when not.
fn check_group(ctx: &mut Ctx, key: &[u8], group: &[u8]) -> Result<(), String> {
    match read::<Stream, _>(ctx, key, |s| s.groups.contains_key(group)) {
        Err(e) => Err(e.into()),
        Ok(Some(true)) => Ok(()),
        Ok(_) => Err(no_key_or_group(key, group)),
    }
}

/// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME ms-unix-time]
/// [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID id].
pub fn xclaim(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let (key, group, consumer) = (args[1], args[2], args[3]);
    if let Err(e) = check_group(ctx, key, group) {
        return w.error(&e);
    }
    let now = ctx.now;
    let c = match parse_claim(args, now) {
        Ok(c) => c,
        Err(e) => return w.error(&e),
    };
    // A time in the future or before the epoch is taken as now, as Redis does.
    let delivery = match c.delivery {
        Some(t) if t >= 0 && t as u64 <= now => t as u64,
        _ => now,
    };
    let mut moved = None;
    let r = with_stream(ctx.keys.store(key), key, now, |s| {
        if let Some(g) = s.groups.get_mut(group) {
            if c.last_id > g.last_id {
                g.last_id = c.last_id;
                moved = Some(setid_record(key, group, g));
            }
        }
        let mut done = Claimed {
            made: see_consumer(s, group, consumer, now),
            ..Claimed::default()
        };
        for id in &c.ids {
            claim_one(s, (key, group, consumer), *id, &c, delivery, now, &mut done);
        }
        write_claimed(s, &done.ids, c.justid, w);
        done
    });
    let Ok(Some(mut done)) = r else {
        return w.array(0);
    };
    if done.made && done.ids.is_empty() {
        // Made, and no claim makes it on a replica.
        done.records
            .insert(0, createconsumer_record(key, group, consumer));
    }
    // LASTID moved the group: its new ID (and read counter) go as XGROUP SETID, which
    // replays exactly whatever the claims' records did with it.
    done.records.extend(moved);
    log_records(ctx, &done.records);
    if done.made {
        notify::stream(ctx, &["xgroup-createconsumer"], key);
    }
}

/// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID].
pub fn xautoclaim(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    const ATTEMPTS_FACTOR: u64 = 10;
    let (key, group, consumer) = (args[1], args[2], args[3]);
    let Some(min_idle) = parse_i64(args[4]) else {
        return w.error("ERR Invalid min-idle-time argument for XAUTOCLAIM");
    };
    let start = match StreamId::parse_bound(args[5], 0) {
        Ok((id, false)) => id,
        Ok((id, true)) => match id.next() {
            Some(id) => id,
            None => return w.error("ERR invalid start ID for the interval"),
        },
        Err(e) => return w.error(e),
    };
    let mut count = 100u64;
    let mut justid = false;
    let mut j = 6;
    while j < args.len() {
        if eq(args[j], "count") && j + 1 < args.len() {
            // Redis bounds it so that the attempts and its buffer of IDs fit.
            let max = i64::MAX / 16;
            match parse_i64(args[j + 1]) {
                Some(n) if (1..=max).contains(&n) => count = n as u64,
                _ => return w.error("ERR COUNT must be > 0"),
            }
            j += 1;
        } else if eq(args[j], "justid") {
            justid = true;
        } else {
            return w.error(crate::cmd::SYNTAX);
        }
        j += 1;
    }
    if let Err(e) = check_group(ctx, key, group) {
        return w.error(&e);
    }
    let now = ctx.now;
    let c = Claim {
        min_idle: min_idle.max(0),
        ids: Vec::new(),
        delivery: None,
        retry: -1,
        force: false,
        justid,
        last_id: StreamId::MIN,
    };
    let r = with_stream(ctx.keys.store(key), key, now, |s| {
        let mut done = Claimed {
            made: see_consumer(s, group, consumer, now),
            ..Claimed::default()
        };
        let mut attempts = count * ATTEMPTS_FACTOR;
        let mut left = count;
        let mut from = Some(start);
        while attempts > 0 && left > 0 {
            attempts -= 1;
            let Some(at) = from else {
                break;
            };
            let next = s
                .groups
                .get(group)
                .and_then(|g| g.pel.range(at..).next().map(|(id, _)| *id));
            let Some(id) = next else {
                break;
            };
            from = id.next();
            let (claimed, deleted) = (done.ids.len(), done.deleted.len());
            claim_one(s, (key, group, consumer), id, &c, now, now, &mut done);
            if done.ids.len() > claimed || done.deleted.len() > deleted {
                left -= 1;
            }
        }
        // The cursor: the next pending ID, 0-0 at the end.
        let cursor = from
            .and_then(|at| {
                s.groups
                    .get(group)
                    .and_then(|g| g.pel.range(at..).next().map(|(id, _)| *id))
            })
            .unwrap_or_default();
        w.array(3);
        w.bulk(cursor.text().as_bytes());
        write_claimed(s, &done.ids, justid, w);
        w.array(done.deleted.len());
        for id in &done.deleted {
            w.bulk(id.text().as_bytes());
        }
        done
    });
    let Ok(Some(mut done)) = r else {
        return w.array(0);
    };
    if done.made && done.ids.is_empty() {
        // Made, and no claim makes it on a replica.
        done.records
            .insert(0, createconsumer_record(key, group, consumer));
    }
    log_records(ctx, &done.records);
    if done.made {
        notify::stream(ctx, &["xgroup-createconsumer"], key);
    }
}

/// Applies a logged group command (see the module's list) to a store. `args` is the
/// whole command, name first (lower case in `name`). `now` is 0 on a replica (the
/// primary's times come in the records).
pub(crate) fn replay(store: &mut Store, name: &str, args: &[&[u8]], now: u64) {
    match name {
        "xgroup" if args.len() >= 4 => replay_group(store, args, now),
        "xack" if args.len() >= 3 => {
            let _ = with_stream(store, args[1], now, |s| {
                if let Some(g) = s.groups.get_mut(args[2]) {
                    for a in &args[3..] {
                        if let Ok(id) = StreamId::parse(a, 0, true) {
                            g.ack(id);
                        }
                    }
                }
            });
        }
        "xclaim" if args.len() >= 6 => replay_claim(store, args, now),
        _ => {}
    }
}

/// Replays an XGROUP subcommand.
fn replay_group(store: &mut Store, args: &[&[u8]], now: u64) {
    let sub = lower(args[1]);
    let (key, group) = (args[2], args[3]);
    let Ok((mkstream, entries_read)) = group_options(&sub, args) else {
        return;
    };
    let id = |s: &Stream| {
        let a = args.get(4)?;
        if *a == b"$" {
            Some(s.last_id)
        } else {
            StreamId::parse(a, 0, false).ok()
        }
    };
    let _ = match sub.as_str() {
        "create" => {
            if mkstream && store.get(key, now).is_none() {
                store.put(key, Value::Stream(Box::default()), 0, now);
            }
            with_stream(store, key, now, |s| {
                if let Some(id) = id(s) {
                    s.groups
                        .entry(group.into())
                        .or_insert_with(|| Group::new(id, entries_read));
                }
            })
        }
        "setid" => with_stream(store, key, now, |s| {
            if let Some(id) = id(s) {
                if let Some(g) = s.groups.get_mut(group) {
                    g.last_id = id;
                    g.entries_read = entries_read;
                }
            }
        }),
        "destroy" => with_stream(store, key, now, |s| {
            s.groups.remove(group);
        }),
        "createconsumer" if args.len() >= 5 => with_stream(store, key, now, |s| {
            if let Some(g) = s.groups.get_mut(group) {
                if !g.consumers.contains_key(args[4]) {
                    // A replica (`now` 0) sees it made now by its own clock.
                    let seen = if now == 0 { unix_ms() } else { now };
                    g.consumer(args[4], seen);
                }
            }
        }),
        "delconsumer" if args.len() >= 5 => with_stream(store, key, now, |s| {
            if let Some(g) = s.groups.get_mut(group) {
                g.remove_consumer(args[4]);
            }
        }),
        _ => Ok(None),
    };
}

/// Replays an XCLAIM as the live command runs it, except that LASTID moves the group
/// as a delivery does (its read counter follows: XREADGROUP's records carry it so), and
/// a delivery time is taken as given (a replica's clock does not bound it).
fn replay_claim(store: &mut Store, args: &[&[u8]], now: u64) {
    let (key, group, consumer) = (args[1], args[2], args[3]);
    let Ok(c) = parse_claim(args, now) else {
        return;
    };
    let delivery = match c.delivery {
        Some(t) if t >= 0 => t as u64,
        _ => now,
    };
    // Without a clock of its own (a replica), the record's time stands for now (the
    // store's own `now` stays 0: a replica expires nothing itself).
    let clock = if now == 0 { delivery } else { now };
    let _ = with_stream(store, key, now, |s| {
        let Some(g) = s.groups.get(group) else {
            return;
        };
        if c.last_id > g.last_id {
            s.advance_group(group, c.last_id);
        }
        let mut done = Claimed::default();
        see_consumer(s, group, consumer, clock);
        for id in &c.ids {
            claim_one(
                s,
                (key, group, consumer),
                *id,
                &c,
                delivery,
                clock,
                &mut done,
            );
        }
    });
}

/// The log records that rebuild a stream's groups: each group (XGROUP CREATE with its
/// last ID and read counter), its consumers (XGROUP CREATECONSUMER), and its pending
/// entries (XCLAIM with their times and counts).
pub(crate) fn dump(key: &[u8], s: &Stream) -> Vec<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    for (name, g) in &s.groups {
        out.push(vec![
            b"XGROUP".to_vec(),
            b"CREATE".to_vec(),
            key.to_vec(),
            name.to_vec(),
            g.last_id.text().into_bytes(),
            b"ENTRIESREAD".to_vec(),
            entries_read_text(g.entries_read).into_bytes(),
        ]);
        for cname in g.consumers.keys() {
            out.push(vec![
                b"XGROUP".to_vec(),
                b"CREATECONSUMER".to_vec(),
                key.to_vec(),
                name.to_vec(),
                cname.to_vec(),
            ]);
        }
        for (id, p) in &g.pel {
            out.push(claim_record(
                key,
                name,
                &p.consumer,
                *id,
                p.delivery_time,
                p.delivery_count,
                g.last_id,
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(store: &mut Store, line: &str, now: u64) {
        let argv: Vec<Vec<u8>> = line.split(' ').map(|a| a.as_bytes().to_vec()).collect();
        crate::cmd::replay(store, &argv, now);
    }

    fn stream(store: &mut Store, key: &str) -> Stream {
        match store.get(key.as_bytes(), 1).map(|e| &e.value) {
            Some(Value::Stream(s)) => (**s).clone(),
            other => panic!("not a stream: {other:?}"),
        }
    }

    fn args(line: &str) -> Vec<&[u8]> {
        line.split(' ').map(str::as_bytes).collect()
    }

    /// A stream `s` with entries 1-0, 2-0, 3-0 delivered to alice in group `g`.
    fn delivered() -> Store {
        let mut store = Store::new();
        for id in ["1-0", "2-0", "3-0"] {
            run(&mut store, &format!("XADD s {id} f v"), 1);
        }
        run(&mut store, "XGROUP CREATE s g 0 ENTRIESREAD 0", 1);
        for (i, id) in ["1-0", "2-0", "3-0"].iter().enumerate() {
            let line = format!(
                "XCLAIM s g alice 0 {id} TIME 100 RETRYCOUNT 1 FORCE JUSTID LASTID {}-0",
                i + 1
            );
            run(&mut store, &line, 1);
        }
        store
    }

    #[test]
    fn delivery_records_rebuild_the_group() {
        let mut store = delivered();
        let s = stream(&mut store, "s");
        let g = &s.groups[&b"g"[..]];
        assert_eq!(g.last_id, StreamId::new(3, 0));
        assert_eq!(g.entries_read, Some(3));
        assert_eq!(g.pel.len(), 3);
        assert_eq!(g.consumers[&b"alice"[..]].pel.len(), 3);
        assert_eq!(g.pel[&StreamId::new(2, 0)].delivery_time, 100);
        // The records that rebuild it, replayed, give the same stream.
        let mut copy = Store::new();
        for rec in super::super::dump(b"s", &s) {
            crate::cmd::replay(&mut copy, &rec, 1);
        }
        let mut again = stream(&mut copy, "s");
        // Consumers' times are the replay's own.
        for (_, g) in again.groups.iter_mut() {
            for (name, c) in g.consumers.iter_mut() {
                let orig = &s.groups[&b"g"[..]].consumers[name];
                c.seen_time = orig.seen_time;
                c.active_time = orig.active_time;
            }
        }
        assert_eq!(again.groups, s.groups);
    }

    #[test]
    fn an_empty_stream_with_a_group_survives_its_rewrite() {
        // Made by XGROUP CREATE MKSTREAM (last ID 0-0), and one whose entries went.
        let mut store = Store::new();
        run(&mut store, "XGROUP CREATE e g $ MKSTREAM", 1);
        run(&mut store, "XADD d 5-0 f v", 1);
        run(&mut store, "XDEL d 5-0", 1);
        run(&mut store, "XGROUP CREATE d g 0 ENTRIESREAD 0", 1);
        for key in ["e", "d"] {
            let s = stream(&mut store, key);
            let mut copy = Store::new();
            for rec in super::super::dump(key.as_bytes(), &s) {
                crate::cmd::replay(&mut copy, &rec, 1);
            }
            let again = stream(&mut copy, key);
            assert_eq!(
                (
                    again.len(),
                    again.last_id,
                    again.entries_added,
                    again.max_deleted
                ),
                (s.len(), s.last_id, s.entries_added, s.max_deleted),
                "{key}"
            );
            assert_eq!(again.groups, s.groups, "{key}");
        }
    }

    #[test]
    fn claims_drop_pending_entries_of_deleted_entries_and_log_it() {
        let mut store = delivered();
        run(&mut store, "XDEL s 2-0", 1);
        let mut s = stream(&mut store, "s");
        let c = parse_claim(&args("XCLAIM s g bob 0 1-0 2-0 3-0 JUSTID"), 500).unwrap();
        let mut done = Claimed::default();
        assert!(see_consumer(&mut s, b"g", b"bob", 500));
        for id in &c.ids {
            claim_one(&mut s, (b"s", b"g", b"bob"), *id, &c, 500, 500, &mut done);
        }
        assert_eq!(done.ids, [StreamId::new(1, 0), StreamId::new(3, 0)]);
        assert_eq!(done.deleted, [StreamId::new(2, 0)]);
        let g = &s.groups[&b"g"[..]];
        assert!(!g.pel.contains_key(&StreamId::new(2, 0)));
        assert!(g.consumers[&b"alice"[..]].pel.is_empty());
        // JUSTID leaves the delivery count.
        assert_eq!(g.pel[&StreamId::new(1, 0)].delivery_count, 1);
        assert_eq!(g.pel[&StreamId::new(1, 0)].consumer.as_ref(), b"bob");
        // The record of the deleted entry names its old owner; replayed, the records
        // leave the same PEL.
        let rec = &done.records[1];
        assert_eq!(rec[3], b"alice");
        assert_eq!(rec[5], b"2-0");
        for rec in &done.records {
            crate::cmd::replay(&mut store, rec, 500);
        }
        assert_eq!(stream(&mut store, "s").groups[&b"g"[..]].pel, g.pel);
    }

    #[test]
    fn claim_options_parse_as_redis_parses_them() {
        let c = parse_claim(
            &args("XCLAIM s g c -5 1-0 2 IDLE 30 RETRYCOUNT 4 FORCE LASTID 7-1"),
            1000,
        )
        .unwrap();
        assert_eq!(c.min_idle, 0);
        assert_eq!(c.ids, [StreamId::new(1, 0), StreamId::new(2, 0)]);
        assert_eq!(c.delivery, Some(970));
        assert_eq!((c.retry, c.force, c.justid), (4, true, false));
        assert_eq!(c.last_id, StreamId::new(7, 1));
        let err = |l: &str| parse_claim(&args(l), 0).unwrap_err();
        assert_eq!(
            err("XCLAIM s g c x 1-0"),
            "ERR Invalid min-idle-time argument for XCLAIM"
        );
        assert_eq!(
            err("XCLAIM s g c 0 1-0 TIME x"),
            "ERR Invalid TIME option argument for XCLAIM"
        );
        assert_eq!(
            err("XCLAIM s g c 0 1-0 IDLE"),
            "ERR Unrecognized XCLAIM option 'IDLE'"
        );
        assert_eq!(
            err("XCLAIM s g c 0 1-0 LASTID -"),
            crate::stream::INVALID_ID
        );
    }

    #[test]
    fn group_records_replay_whatever_the_names() {
        let mut store = Store::new();
        run(
            &mut store,
            "XGROUP CREATE entriesread mkstream 5-0 MKSTREAM ENTRIESREAD 2",
            1,
        );
        let s = stream(&mut store, "entriesread");
        let g = &s.groups[&b"mkstream"[..]];
        assert_eq!((g.last_id, g.entries_read), (StreamId::new(5, 0), Some(2)));
        run(
            &mut store,
            "XGROUP SETID entriesread mkstream 6-0 ENTRIESREAD -1",
            1,
        );
        run(
            &mut store,
            "XGROUP CREATECONSUMER entriesread mkstream c",
            1,
        );
        let s = stream(&mut store, "entriesread");
        let g = &s.groups[&b"mkstream"[..]];
        assert_eq!((g.last_id, g.entries_read), (StreamId::new(6, 0), None));
        assert!(g.consumers.contains_key(&b"c"[..]));
        run(&mut store, "XGROUP DELCONSUMER entriesread mkstream c", 1);
        run(&mut store, "XGROUP DESTROY entriesread mkstream", 1);
        assert!(stream(&mut store, "entriesread").groups.is_empty());
        // The record's key is the stream's, not the subcommand.
        let e = crate::aof::Effect::Cmd(vec![
            b"XGROUP".to_vec(),
            b"CREATE".to_vec(),
            b"k".to_vec(),
            b"g".to_vec(),
        ]);
        assert_eq!(e.key(), Some(&b"k"[..]));
    }
}
