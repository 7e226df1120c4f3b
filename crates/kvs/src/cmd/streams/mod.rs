//! The stream family: XADD, XLEN, XRANGE, XREVRANGE, XDEL, XTRIM, XSETID, XREAD and
//! XREADGROUP here; the consumer-group commands in [`groups`] (XGROUP, XACK, XPENDING,
//! XCLAIM, XAUTOCLAIM) and XINFO in [`info`]. The data structure is
//! [`crate::stream::Stream`].
//!
//! Arguments are checked in Redis's order with its error texts (IDs and options before
//! the key is looked at). Every change is logged, for the append-only log and the
//! replicas, as the deterministic command Redis propagates: XADD with the ID it got and
//! any trim rewritten as `MAXLEN = <length left>`; XTRIM likewise; XREADGROUP as one
//! `XCLAIM ... FORCE JUSTID LASTID` per entry delivered (or `XGROUP SETID` with NOACK);
//! [`replay`] applies those forms to a store.
//!
//! XREAD and XREADGROUP with BLOCK wait on the hub as BLPOP does (see
//! [`super::blocking`]); XREAD's `$` is replaced by the ID it meant when the client
//! blocked, so new entries serve it. Inside MULTI they answer at once (the null array);
//! from a script BLOCK is an error, as in Redis.

pub mod groups;
pub mod info;

use super::blocking::Blocked;
use super::{eq, notify, parse_i64, Ctx, NOT_INT, SYNTAX, WRONGTYPE};
use crate::resp::{Proto, Writer};
use crate::store::Store;
use crate::stream::{AddError, Item, Keep, Stream, StreamId, Trim};
use crate::value::Value;

/// `stream-node-max-entries` and `stream-node-max-bytes`.
pub(crate) fn node_limits(ctx: &Ctx) -> (u64, u64) {
    (
        ctx.config.compat_u64("stream-node-max-entries", 100),
        ctx.config.compat_u64("stream-node-max-bytes", 4096),
    )
}

/// Runs `f` on the stream at `key`: `Ok(None)` when absent, WRONGTYPE for another type.
pub(crate) fn with_stream<R>(
    store: &mut Store,
    key: &[u8],
    now: u64,
    f: impl FnOnce(&mut Stream) -> R,
) -> Result<Option<R>, &'static str> {
    store
        .update(key, now, |v| match v {
            Value::Stream(s) => Ok(f(s)),
            _ => Err(WRONGTYPE),
        })
        .transpose()
}

/// Writes one entry: its ID and its field-value pairs.
pub(crate) fn write_item(w: &mut Writer, it: &Item) {
    w.array(2);
    w.bulk(it.id.text().as_bytes());
    w.array(it.fields.len());
    for f in it.fields.iter() {
        w.bulk(f);
    }
}

/// Writes entries as an array.
pub(crate) fn write_items<'a>(w: &mut Writer, items: impl ExactSizeIterator<Item = &'a Item>) {
    w.array(items.len());
    for it in items {
        write_item(w, it);
    }
}

/// A count argument: Redis's integer parse.
fn count_arg(a: &[u8]) -> Result<i64, &'static str> {
    parse_i64(a).ok_or(NOT_INT)
}

/// The options of XADD and XTRIM, parsed as Redis's `streamParseAddOrTrimArgsOrReply`.
#[derive(Debug, Default)]
struct AddArgs {
    trim: Option<Trim>,
    /// Where the trim's argument is (for the log's rewrite).
    nomkstream: bool,
    /// XADD: the ID asked for (None: `*`) and whether its sequence was given.
    id: Option<StreamId>,
    seq_given: bool,
    /// XADD: where the fields start.
    fields_at: usize,
}

/// Parses the options of XADD (`xadd`) or XTRIM from `args[2..]`. `obey`: the command
/// comes from the log or a primary (no LIMIT enforced, as Redis does).
fn parse_add(args: &[&[u8]], xadd: bool, obey: bool, node_max: u64) -> Result<AddArgs, String> {
    let mut a = AddArgs::default();
    let mut keep: Option<Keep> = None;
    let mut approx = false;
    let mut limit: Option<i64> = None;
    let mut i = 2;
    while i < args.len() {
        let more = args.len() - 1 - i;
        let opt = args[i];
        if xadd && opt == b"*" {
            break;
        } else if (eq(opt, "maxlen") || eq(opt, "minid")) && more > 0 {
            if keep.is_some() {
                return Err("ERR syntax error, MAXLEN and MINID options at the same time are not compatible".into());
            }
            approx = false;
            let next = args[i + 1];
            if more >= 2 && (next == b"~" || next == b"=") {
                approx = next == b"~";
                i += 1;
            }
            let v = args[i + 1];
            keep = Some(if eq(opt, "maxlen") {
                let n = count_arg(v)?;
                if n < 0 {
                    return Err("ERR The MAXLEN argument must be >= 0.".into());
                }
                Keep::MaxLen(n as u64)
            } else {
                Keep::MinId(StreamId::parse(v, 0, true)?)
            });
            i += 2;
            continue;
        } else if eq(opt, "limit") && more > 0 {
            let n = count_arg(args[i + 1])?;
            if n < 0 {
                return Err("ERR The LIMIT argument must be >= 0.".into());
            }
            limit = Some(n);
            i += 2;
            continue;
        } else if xadd && eq(opt, "nomkstream") {
            a.nomkstream = true;
        } else if xadd {
            let (id, given) = StreamId::parse_full(opt, 0, true, true)?;
            a.id = Some(id);
            a.seq_given = given;
            break;
        } else {
            return Err(SYNTAX.into());
        }
        i += 1;
    }
    if limit.is_some_and(|l| l != 0) && keep.is_none() {
        return Err(
            "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy".into(),
        );
    }
    if !xadd && keep.is_none() {
        return Err("ERR syntax error, XTRIM must be called with a trimming strategy".into());
    }
    let limit = if obey {
        0
    } else if let Some(l) = limit {
        if !approx {
            return Err(
                "ERR syntax error, LIMIT cannot be used without the special ~ option".into(),
            );
        }
        l as u64
    } else if approx {
        let l = node_max.saturating_mul(100);
        if l == 0 || l > 1_000_000 {
            10_000
        } else {
            l
        }
    } else {
        0
    };
    a.trim = keep.map(|keep| Trim {
        keep,
        approx,
        limit,
    });
    a.fields_at = i + 1;
    Ok(a)
}

/// What an XADD did: the ID, and how many entries its trim removed.
struct Added {
    id: StreamId,
    trimmed: u64,
    length: u64,
}

/// Adds an entry as XADD does (the live command and its replay): None with NOMKSTREAM
/// and no stream.
fn add(
    store: &mut Store,
    key: &[u8],
    now: u64,
    a: &AddArgs,
    fields: &[&[u8]],
    (max_entries, max_bytes): (u64, u64),
) -> Result<Option<Added>, String> {
    match store.get(key, now).map(|e| &e.value) {
        Some(Value::Stream(s)) => {
            if s.last_id == StreamId::MAX {
                return Err(
                    "ERR The stream has exhausted the last possible ID, unable to add more items"
                        .into(),
                );
            }
        }
        Some(_) => return Err(WRONGTYPE.into()),
        None if a.nomkstream => return Ok(None),
        None => {
            store.put(key, Value::Stream(Box::default()), 0, now);
        }
    }
    let r = with_stream(store, key, now, |s| {
        let id = s.next_id(a.id, a.seq_given, now).map_err(|e| match e {
            AddError::NotGreater => {
                "ERR The ID specified in XADD is equal or smaller than the target stream top item"
            }
            AddError::Exhausted => {
                "ERR The stream has exhausted the last possible ID, unable to add more items"
            }
        })?;
        s.append(id, fields, max_entries, max_bytes);
        let trimmed = a.trim.map_or(0, |t| s.trim(t));
        Ok::<_, &'static str>(Added {
            id,
            trimmed,
            length: s.len(),
        })
    })?;
    match r {
        Some(Ok(added)) => Ok(Some(added)),
        Some(Err(e)) => {
            // A key made for this entry goes again (Redis checks the ID first).
            if with_stream(store, key, now, |s| s.entries_added == 0).ok() == Some(Some(true)) {
                store.remove(key);
            }
            Err(e.into())
        }
        None => Ok(None),
    }
}

/// XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value
/// [field value ...].
pub fn xadd(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let limits = node_limits(ctx);
    let a = match parse_add(args, true, false, limits.0) {
        Ok(a) => a,
        Err(e) => return w.error(&e),
    };
    let fields = args.get(a.fields_at..).unwrap_or(&[]);
    if fields.len() < 2 || fields.len() % 2 == 1 {
        return super::arity(w, args[0]);
    }
    if a.seq_given && a.id == Some(StreamId::MIN) {
        return w.error("ERR The ID specified in XADD must be greater than 0-0");
    }
    let key = args[1];
    let now = ctx.now;
    let added = match add(ctx.keys.store(key), key, now, &a, fields, limits) {
        Ok(Some(added)) => added,
        Ok(None) => return w.null(),
        Err(e) => return w.error(&e),
    };
    let id = added.id.text();
    w.bulk(id.as_bytes());
    let len = added.length.to_string();
    let mut log: Vec<&[u8]> = vec![b"XADD", key];
    if a.trim.is_some() {
        log.extend([&b"MAXLEN"[..], b"=", len.as_bytes()]);
    }
    log.push(id.as_bytes());
    log.extend_from_slice(fields);
    ctx.log_cmd(&log);
    let events: &[&str] = if added.trimmed > 0 {
        &["xadd", "xtrim"]
    } else {
        &["xadd"]
    };
    notify::stream(ctx, events, key);
}

/// XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count].
pub fn xtrim(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let a = match parse_add(args, false, false, node_limits(ctx).0) {
        Ok(a) => a,
        Err(e) => return w.error(&e),
    };
    let key = args[1];
    let now = ctx.now;
    let t = a.trim.expect("XTRIM has a strategy");
    let r = with_stream(ctx.keys.store(key), key, now, |s| (s.trim(t), s.len()));
    match r {
        Err(e) => w.error(e),
        Ok(None) => w.int(0),
        Ok(Some((deleted, len))) => {
            w.int(deleted as i64);
            if deleted > 0 {
                let len = len.to_string();
                ctx.log_cmd(&[b"XTRIM", key, b"MAXLEN", b"=", len.as_bytes()]);
                notify::stream(ctx, &["xtrim"], key);
            }
        }
    }
}

/// XDEL key id [id ...].
pub fn xdel(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let key = args[1];
    let now = ctx.now;
    match super::read::<Stream, _>(ctx, key, |_| ()) {
        Err(e) => return w.error(e),
        Ok(None) => return w.int(0),
        Ok(Some(())) => {}
    }
    let ids: Result<Vec<StreamId>, _> = args[2..]
        .iter()
        .map(|a| StreamId::parse(a, 0, true))
        .collect();
    let ids = match ids {
        Ok(ids) => ids,
        Err(e) => return w.error(e),
    };
    let deleted = with_stream(ctx.keys.store(key), key, now, |s| {
        ids.iter().filter(|id| s.delete(**id)).count()
    });
    let deleted = deleted.ok().flatten().unwrap_or(0);
    w.int(deleted as i64);
    if deleted > 0 {
        ctx.log_cmd(args);
        notify::stream(ctx, &["xdel"], key);
    }
}

/// XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id].
pub fn xsetid(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let now = ctx.now;
    match set_id(ctx.keys.store(args[1]), args, now) {
        Ok(()) => {
            w.simple("OK");
            ctx.log_cmd(args);
            notify::stream(ctx, &["xsetid"], args[1]);
        }
        Err(e) => w.error(&e),
    }
}

/// XSETID on a store (the live command and its replay).
fn set_id(store: &mut Store, args: &[&[u8]], now: u64) -> Result<(), String> {
    let id = StreamId::parse(args[2], 0, true)?;
    let mut added: Option<u64> = None;
    let mut max_del = StreamId::MIN;
    let mut i = 3;
    while i < args.len() {
        let more = args.len() - 1 - i;
        if eq(args[i], "entriesadded") && more > 0 {
            let n = count_arg(args[i + 1])?;
            if n < 0 {
                return Err("ERR entries_added must be positive".into());
            }
            added = Some(n as u64);
        } else if eq(args[i], "maxdeletedid") && more > 0 {
            max_del = StreamId::parse(args[i + 1], 0, true)?;
            if id < max_del {
                return Err("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id".into());
            }
        } else {
            return Err(SYNTAX.into());
        }
        i += 2;
    }
    let key = args[1];
    let r = with_stream(store, key, now, |s| {
        if id < s.max_deleted {
            return Err(
                "ERR The ID specified in XSETID is smaller than current max_deleted_entry_id",
            );
        }
        if !s.is_empty() {
            if s.edge(true).is_some_and(|top| id < top) {
                return Err(
                    "ERR The ID specified in XSETID is smaller than the target stream top item",
                );
            }
            if added.is_some_and(|n| s.len() > n) {
                return Err("ERR The entries_added specified in XSETID is smaller than the target stream length");
            }
        }
        s.last_id = id;
        if let Some(n) = added {
            s.entries_added = n;
        }
        if !max_del.is_zero() {
            s.max_deleted = max_del;
        }
        Ok(())
    })?;
    match r {
        None => Err("ERR no such key".into()),
        Some(r) => r.map_err(Into::into),
    }
}

/// XLEN key.
pub fn xlen(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    match super::read::<Stream, _>(ctx, args[1], |s| s.len()) {
        Ok(n) => w.int(n.unwrap_or(0) as i64),
        Err(e) => w.error(e),
    }
}

/// XRANGE key start end [COUNT count], XREVRANGE key end start [COUNT count].
pub fn xrange(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let rev = eq(args[0], "xrevrange");
    let (start, end) = if rev {
        (args[3], args[2])
    } else {
        (args[2], args[3])
    };
    let (start, end) = match StreamId::parse_interval(start, end) {
        Ok(b) => b,
        Err(e) => return w.error(e),
    };
    let mut count: Option<usize> = None;
    let mut j = 4;
    while j < args.len() {
        if eq(args[j], "count") && j + 1 < args.len() {
            match count_arg(args[j + 1]) {
                Ok(n) => count = Some(n.max(0) as usize),
                Err(e) => return w.error(e),
            }
            j += 2;
        } else {
            return w.error(SYNTAX);
        }
    }
    let now = ctx.now;
    let store = ctx.keys.store(args[1]);
    let s = match store.get(args[1], now).map(|e| &e.value) {
        None => return w.array(0),
        Some(Value::Stream(s)) => s,
        Some(_) => return w.error(WRONGTYPE),
    };
    if count == Some(0) {
        return w.null_array();
    }
    let n = count.unwrap_or(usize::MAX);
    let items: Vec<&Item> = if rev {
        s.rev_range(start, end).take(n).collect()
    } else {
        s.range(start, end).take(n).collect()
    };
    write_items(w, items.into_iter());
}

/// The options of XREAD and XREADGROUP.
struct ReadArgs<'a> {
    /// BLOCK's deadline (ms since the epoch, 0: none); None without BLOCK.
    block: Option<u64>,
    count: usize,
    group: Option<(&'a [u8], &'a [u8])>,
    noack: bool,
    /// Where the keys start, and how many there are.
    streams_at: usize,
    n: usize,
}

fn parse_read<'a>(args: &[&'a [u8]], group: bool, now: u64) -> Result<ReadArgs<'a>, String> {
    let mut r = ReadArgs {
        block: None,
        count: 0,
        group: None,
        noack: false,
        streams_at: 0,
        n: 0,
    };
    let name = if group { "xreadgroup" } else { "xread" };
    let mut i = 1;
    while i < args.len() {
        let more = args.len() - i - 1;
        let o = args[i];
        if eq(o, "block") && more > 0 {
            if super::monitor::in_script() {
                return Err(format!(
                    "ERR {name} command is not allowed with BLOCK option from scripts"
                ));
            }
            i += 1;
            let ms = parse_i64(args[i]).ok_or("ERR timeout is not an integer or out of range")?;
            if ms < 0 {
                return Err("ERR timeout is negative".into());
            }
            r.block = Some(if ms == 0 {
                0
            } else {
                now.checked_add(ms as u64)
                    .filter(|&d| d <= i64::MAX as u64)
                    .ok_or("ERR timeout is out of range")?
            });
        } else if eq(o, "count") && more > 0 {
            i += 1;
            r.count = count_arg(args[i])?.max(0) as usize;
        } else if eq(o, "streams") && more > 0 {
            r.streams_at = i + 1;
            let rest = args.len() - r.streams_at;
            if !rest.is_multiple_of(2) {
                let symbol = if group { '>' } else { '$' };
                return Err(format!("ERR Unbalanced '{name}' list of streams: for each stream key an ID or '{symbol}' must be specified."));
            }
            r.n = rest / 2;
            break;
        } else if eq(o, "group") && more >= 2 {
            if !group {
                return Err(
                    "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead."
                        .into(),
                );
            }
            r.group = Some((args[i + 1], args[i + 2]));
            i += 2;
        } else if eq(o, "noack") {
            if !group {
                return Err(
                    "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead."
                        .into(),
                );
            }
            r.noack = true;
        } else {
            return Err(SYNTAX.into());
        }
        i += 1;
    }
    if r.streams_at == 0 {
        return Err(SYNTAX.into());
    }
    if group && r.group.is_none() {
        return Err("ERR Missing GROUP option for XREADGROUP".into());
    }
    Ok(r)
}

/// Where a read starts in one stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum From {
    /// After this ID.
    After(StreamId),
    /// XREADGROUP `>`: entries never delivered to the group.
    New,
}

/// XREAD [COUNT count] [BLOCK ms] STREAMS key [key ...] id [id ...], and
/// XREADGROUP GROUP group consumer [COUNT count] [BLOCK ms] [NOACK] STREAMS key
/// [key ...] id [id ...].
pub fn xread(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let grouped = eq(args[0], "xreadgroup");
    let r = match parse_read(args, grouped, ctx.now) {
        Ok(r) => r,
        Err(e) => return w.error(&e),
    };
    let keys = &args[r.streams_at..r.streams_at + r.n];
    let id_args = &args[r.streams_at + r.n..];
    ctx.keys.lock_keys(keys.iter().copied());
    // Check every key and ID first, as Redis does.
    let mut froms = Vec::with_capacity(r.n);
    for (key, a) in keys.iter().zip(id_args) {
        let found = super::read::<Stream, _>(ctx, key, |s| {
            (s.last_id, r.group.map(|(g, _)| s.groups.contains_key(g)))
        });
        let (last, has_group) = match found {
            Err(e) => return w.error(e),
            Ok(f) => (f.map(|f| f.0), f.and_then(|f| f.1)),
        };
        if let Some((g, _)) = r.group {
            if has_group != Some(true) {
                return w.error(&format!(
                    "NOGROUP No such key '{}' or consumer group '{}' in XREADGROUP with GROUP option",
                    String::from_utf8_lossy(key),
                    String::from_utf8_lossy(g)
                ));
            }
        }
        let from = if *a == b"$" {
            if grouped {
                return w.error("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.");
            }
            From::After(last.unwrap_or_default())
        } else if *a == b">" {
            if !grouped {
                return w.error("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.");
            }
            From::New
        } else {
            match StreamId::parse(a, 0, true) {
                Ok(id) => From::After(id),
                Err(e) => return w.error(e),
            }
        };
        froms.push(from);
    }
    // Serve what can be served now.
    let mut out = Vec::new();
    let mut served = 0usize;
    {
        let mut body = Writer::new(&mut out, w.proto());
        for (i, key) in keys.iter().enumerate() {
            let got = match r.group {
                None => read_plain(ctx, key, froms[i], r.count, &mut body),
                Some((g, c)) => {
                    let after = match froms[i] {
                        From::After(id) => Some(id),
                        From::New => None,
                    };
                    let read = groups::Read {
                        group: g,
                        consumer: c,
                        after,
                        count: r.count,
                        noack: r.noack,
                    };
                    groups::read_group(ctx, key, &read, &mut body)
                }
            };
            served += got as usize;
        }
    }
    if served > 0 {
        if w.proto() == Proto::Resp3 {
            w.map(served);
        } else {
            w.array(served);
        }
        w.raw(&out);
        return;
    }
    let Some(deadline) = r.block else {
        return w.null_array();
    };
    if !ctx.can_block {
        return w.null_array();
    }
    // Wait, with `$` replaced by the ID it meant.
    let mut argv: Vec<Vec<u8>> = args.iter().map(|a| a.to_vec()).collect();
    for (i, from) in froms.iter().enumerate() {
        if let From::After(id) = from {
            argv[r.streams_at + r.n + i] = id.text().into_bytes();
        }
    }
    ctx.blocked = Some(Blocked {
        keys: keys.iter().map(|k| k.to_vec()).collect(),
        deadline,
        argv: Some(argv),
    });
}

/// XREAD on one stream: entries after `from` (at most `count`, 0: all), written as
/// `key, entries` when there are any; true when written.
fn read_plain(ctx: &mut Ctx, key: &[u8], from: From, count: usize, w: &mut Writer) -> bool {
    let From::After(after) = from else {
        return false;
    };
    let now = ctx.now;
    let Some(Value::Stream(s)) = ctx.keys.store(key).get(key, now).map(|e| &e.value) else {
        return false;
    };
    let Some(start) = after.next() else {
        return false;
    };
    let n = if count == 0 { usize::MAX } else { count };
    let items: Vec<&Item> = s.range(start, StreamId::MAX).take(n).collect();
    if items.is_empty() {
        return false;
    }
    if w.proto() != Proto::Resp3 {
        w.array(2);
    }
    w.bulk(key);
    write_items(w, items.into_iter());
    true
}

/// Applies a logged stream command to a store (replay of the log and of a primary's
/// stream): XADD, XTRIM, XDEL, XSETID here, the group commands in [`groups`].
pub(crate) fn replay(store: &mut Store, name: &str, args: &[&[u8]], now: u64) {
    // `args` is the command without its name; the parsers take it with one.
    let mut full: Vec<&[u8]> = Vec::with_capacity(args.len() + 1);
    full.push(name.as_bytes());
    full.extend_from_slice(args);
    let full = &full[..];
    let Some(&key) = full.get(1) else {
        return;
    };
    match name {
        "xadd" => {
            if let Ok(a) = parse_add(full, true, true, 100) {
                let fields = full.get(a.fields_at..).unwrap_or(&[]);
                if fields.len() >= 2 && fields.len() % 2 == 0 {
                    let _ = add(store, key, now, &a, fields, (100, 4096));
                }
            }
        }
        "xtrim" => {
            if let Ok(AddArgs { trim: Some(t), .. }) = parse_add(full, false, true, 100) {
                let _ = with_stream(store, key, now, |s| s.trim(t));
            }
        }
        "xdel" => {
            let _ = with_stream(store, key, now, |s| {
                for a in &full[2..] {
                    if let Ok(id) = StreamId::parse(a, 0, true) {
                        s.delete(id);
                    }
                }
            });
        }
        "xsetid" if full.len() >= 3 => {
            let _ = set_id(store, full, now);
        }
        _ => groups::replay(store, name, full, now),
    }
}

/// The log records that rebuild a stream (the log's rewrite, COPY and RENAME of a
/// stream): its entries as XADD (an empty stream as XADD with MAXLEN 0, as Redis
/// writes it), its last ID and counters as XSETID, then each group, its consumers and
/// its pending entries.
pub(crate) fn dump(key: &[u8], s: &Stream) -> Vec<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let k = key.to_vec();
    let mut any = false;
    for it in s.range(StreamId::MIN, StreamId::MAX) {
        let mut argv = vec![b"XADD".to_vec(), k.clone(), it.id.text().into_bytes()];
        argv.extend(it.fields.iter().map(|f| f.to_vec()));
        out.push(argv);
        any = true;
    }
    if !any {
        // An entry 0-1 made and trimmed at once: the key exists, empty; XSETID then
        // puts the last ID back (whatever it is, 0-0 included), as Redis's rewrite does.
        out.push(vec![
            b"XADD".to_vec(),
            k.clone(),
            b"MAXLEN".to_vec(),
            b"0".to_vec(),
            b"0-1".to_vec(),
            b"x".to_vec(),
            b"y".to_vec(),
        ]);
    }
    out.push(vec![
        b"XSETID".to_vec(),
        k.clone(),
        s.last_id.text().into_bytes(),
        b"ENTRIESADDED".to_vec(),
        s.entries_added.to_string().into_bytes(),
        b"MAXDELETEDID".to_vec(),
        s.max_deleted.text().into_bytes(),
    ]);
    out.extend(groups::dump(key, s));
    out
}
