//! The replication commands (see [`crate::repl`]): REPLICAOF / SLAVEOF, ROLE, and
//! what a replica sends its primary: REPLCONF and PSYNC.

use std::sync::atomic::Ordering;

use super::{eq, parse_i64, Ctx, SYNTAX};
use crate::aof::{dump, encode, format, Effect};
use crate::repl::{backlog_capacity, replica, Attached, Role};
use crate::resp::Writer;

/// REPLICAOF host port | NO ONE (and SLAVEOF).
pub fn replicaof(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    if ctx.shared.cluster.is_some() {
        return w.error("ERR REPLICAOF not allowed in cluster mode.");
    }
    let repl = &ctx.shared.repl;
    if eq(args[1], "no") && eq(args[2], "one") {
        if repl.is_replica() {
            repl.unfollow();
            // Writes of its own follow: its log no longer names a place in a stream.
            ctx.effects.push(Effect::Position {
                replid: Vec::new(),
                offset: 0,
            });
            eprintln!("kvs: replication stopped (REPLICAOF NO ONE): now a primary");
        }
        return w.simple("OK");
    }
    let Some(port) = parse_i64(args[2]).filter(|p| (0..=65535).contains(p)) else {
        return w.error("ERR Invalid master port");
    };
    let host = String::from_utf8_lossy(args[1]).into_owned();
    if repl.role()
        == (Role::Replica {
            host: host.clone(),
            port: port as u16,
        })
    {
        return w.simple("OK Already connected to specified master");
    }
    replica::start(ctx.shared, host, port as u16);
    w.simple("OK");
}

/// ROLE.
pub fn role(ctx: &mut Ctx, _args: &[&[u8]], w: &mut Writer) {
    let repl = &ctx.shared.repl;
    match repl.role() {
        Role::Primary => {
            let replicas = repl.replicas();
            w.array(3);
            w.bulk(b"master");
            w.int(repl.offset() as i64);
            w.array(replicas.len());
            for a in replicas {
                w.array(3);
                w.bulk(a.ip.as_bytes());
                w.bulk(a.port.to_string().as_bytes());
                w.bulk(a.ack.to_string().as_bytes());
            }
        }
        Role::Replica { host, port } => {
            let up = repl.link().is_some_and(|l| l.up.load(Ordering::Acquire));
            w.array(5);
            w.bulk(b"slave");
            w.bulk(host.as_bytes());
            w.int(port as i64);
            w.bulk(if up { b"connected" } else { b"connect" });
            w.int(repl.offset() as i64);
        }
    }
}

/// REPLCONF listening-port N | capa ... | ACK offset | GETACK *.
pub fn replconf(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    if args.len().is_multiple_of(2) {
        return w.error(SYNTAX);
    }
    for pair in args[1..].chunks(2) {
        let (opt, value) = (pair[0], pair[1]);
        if eq(opt, "ack") {
            // Not answered, as in Redis. A Redis-protocol replica's offsets count RESP
            // bytes: the offset of this stream they stand for.
            let mut off = parse_i64(value).filter(|&o| o >= 0);
            if let (Some(feed), Some(o)) = (ctx.session.resp_feed.as_mut(), off) {
                off = feed.acked(o as u64).map(|r| r as i64);
            }
            if let Some(off) = off {
                let now = ctx.now;
                let shared = ctx.shared;
                shared.repl.ack(ctx.session.id, off as u64, now);
                if shared.repl.any_waiting() {
                    // Clients in WAIT, on any loop, count again.
                    for i in 0..shared.hub.loops() {
                        shared.hub.wake(i);
                    }
                }
            }
            return;
        } else if eq(opt, "listening-port") {
            match parse_i64(value).filter(|p| (0..=65535).contains(p)) {
                Some(p) => ctx.session.replica_port = p as u16,
                None => return w.error("ERR value is not an integer or out of range"),
            }
        } else if eq(opt, "rdb-only") {
            match value {
                b"0" | b"1" => ctx.session.rdb_only = value == b"1",
                _ => return w.error("ERR value is not an integer or out of range"),
            }
        } else if eq(opt, "capa") {
            if eq(value, "wirespeed") {
                ctx.session.wirespeed_replica = true;
            }
        } else if !(eq(opt, "ip-address") || eq(opt, "getack")) {
            return w.error(&format!(
                "ERR Unrecognized REPLCONF option: {}",
                String::from_utf8_lossy(opt)
            ));
        }
    }
    w.simple("OK");
}

/// The RDB snapshot alone, in Redis's format, for a connection that asked for only
/// that (`REPLCONF rdb-only 1`, as `redis-cli --rdb` does): `$<length>`, the file,
/// then the connection closes. `head` goes first (PSYNC's `+FULLRESYNC` line).
fn rdb_only(ctx: &mut Ctx, head: Option<String>, w: &mut Writer) {
    let now = wirespeed_util::time::unix_ms();
    match crate::snapshot::to_bytes(ctx.shared, ctx.keys, now) {
        Ok(file) => {
            if let Some(h) = head {
                w.simple(&h);
            }
            w.raw(format!("${}\r\n", file.len()).as_bytes());
            w.raw(&file);
            eprintln!(
                "kvs: client {} was sent the RDB snapshot ({} bytes, rdb-only)",
                ctx.session.id,
                file.len()
            );
        }
        Err(e) => w.error(&format!("ERR cannot build the RDB snapshot: {e}")),
    }
    ctx.session.quit = true;
}

/// SYNC: the RDB snapshot for a connection that asked for it alone (`REPLCONF rdb-only
/// 1`); a replica that would follow gets an error naming PSYNC (this server's stream
/// is its own format, see [`crate::repl`]).
pub fn sync(ctx: &mut Ctx, _args: &[&[u8]], w: &mut Writer) {
    if ctx.session.tx.queuing() {
        return w.error("ERR Command not allowed inside a transaction");
    }
    if ctx.session.rdb_only {
        return rdb_only(ctx, None, w);
    }
    if let Err(e) = can_sync(ctx) {
        return w.error(e);
    }
    if let Some(offset) = resp_full_sync(ctx, None, w) {
        attach(ctx, offset, false, false);
    }
}

/// Why this server cannot serve a sync now (a replica without its primary).
fn can_sync(ctx: &mut Ctx) -> Result<(), &'static str> {
    let repl = &ctx.shared.repl;
    if repl.is_replica() && !repl.link().is_some_and(|l| l.up.load(Ordering::Acquire)) {
        return Err("NOMASTERLINK Can't SYNC while not connected with my master");
    }
    Ok(())
}

/// A full sync for a Redis-protocol replica: `head` (PSYNC's `+FULLRESYNC`), the RDB
/// snapshot as one bulk, taken with every shard held at the stream's offset, which is
/// returned; the stream follows as Redis commands ([`crate::repl::resp`]).
fn resp_full_sync(ctx: &mut Ctx, psync: Option<()>, w: &mut Writer) -> Option<u64> {
    let shared = ctx.shared;
    ctx.keys.lock_every_db();
    let offset = shared.repl.start_backlog(backlog_capacity(ctx.config));
    let now = wirespeed_util::time::unix_ms();
    let file = match crate::snapshot::to_bytes(shared, ctx.keys, now) {
        Ok(f) => f,
        Err(e) => {
            w.error(&format!("ERR cannot build the RDB snapshot: {e}"));
            return None;
        }
    };
    if psync.is_some() {
        // An id of its own: the replica's offsets count RESP bytes, so a PSYNC naming
        // this stream's id must never be answered from them (say this server, after
        // that replica was promoted, asked to continue its own stream there).
        let id = crate::repl::resp::stream_id(&shared.repl.replid());
        w.simple(&format!("FULLRESYNC {id} {offset}"));
    }
    let len_line = format!("${}\r\n", file.len());
    w.raw(len_line.as_bytes());
    w.raw(&file);
    ctx.session.bulk = (len_line.len() + file.len()) as u64;
    let ping_s = ctx
        .config
        .compat
        .get("repl-ping-replica-period")
        .and_then(|p| p.parse::<u64>().ok())
        .unwrap_or(10);
    ctx.session.resp_feed = Some(Box::new(crate::repl::resp::RespFeed::new(
        ping_s.saturating_mul(1000),
        now,
        offset,
    )));
    eprintln!(
        "kvs: Redis-protocol replica {} synced: {} bytes of RDB at offset {offset}",
        ctx.session.id,
        file.len()
    );
    Some(offset)
}

/// PSYNC replid offset: `+CONTINUE id` when this server's backlog holds that point
/// of that stream (the replica then receives the stream from there), else a full
/// sync (`+FULLRESYNC id offset`, then the snapshot). A replica serves replicas of
/// its own from the stream it gets.
pub fn psync(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let shared = ctx.shared;
    if ctx.session.tx.queuing() {
        return w.error("ERR Command not allowed inside a transaction");
    }
    if shared.repl.is_replica()
        && !shared
            .repl
            .link()
            .is_some_and(|l| l.up.load(Ordering::Acquire))
    {
        return w.error("NOMASTERLINK Can't SYNC while not connected with my master");
    }
    if ctx.session.snapshot.take().is_some() {
        // A PSYNC again on the same connection: the snapshot it was sent is dropped.
        shared.repl.end_snapshot();
    }
    if ctx.session.rdb_only {
        let head = format!(
            "FULLRESYNC {} {}",
            shared.repl.replid(),
            shared.repl.offset()
        );
        return rdb_only(ctx, Some(head), w);
    }
    if !ctx.session.wirespeed_replica {
        // A Redis replica (or redis-cli --replica): always in full, in Redis's format.
        if let Some(offset) = resp_full_sync(ctx, Some(()), w) {
            attach(ctx, offset, false, args[1] != b"?");
        }
        return;
    }
    let asked = std::str::from_utf8(args[1]).unwrap_or("");
    let next = std::str::from_utf8(args[2])
        .ok()
        .and_then(|s| s.parse::<u64>().ok());
    // The keyspace at one offset: every shard of every database is held while the
    // point to resume from, or the snapshot, is taken; the stream continues from there.
    ctx.keys.lock_every_db();
    let now = ctx.now;
    let resume = next.and_then(|n| shared.repl.resume_point(asked, n));
    let (offset, partial) = match resume {
        Some(from) => {
            w.simple(&format!("CONTINUE {}", shared.repl.replid()));
            (from, true)
        }
        None if !shared.repl.is_replica() => {
            // Streamed: the loop sends the keys a few thousand per round while writes go
            // on (the changes meanwhile follow the snapshot); every shard is held only
            // while the offset is taken and the stream switches to state records.
            let offset = shared.repl.start_backlog(backlog_capacity(ctx.config));
            let mut job = shared.repl.begin_snapshot();
            let mut head = format::header().to_vec();
            for e in shared.rewrite_preamble() {
                encode(&e, &mut head);
            }
            job.bytes = head.len() as u64;
            let replid = shared.repl.replid();
            w.simple(&format!("FULLRESYNC {replid} {offset}"));
            w.raw(b"$STREAM\r\n");
            w.raw(&head);
            ctx.session.snapshot = Some(Box::new(job));
            eprintln!(
                "kvs: replica {} full sync at offset {offset}: streaming the snapshot",
                ctx.session.id
            );
            (offset, false)
        }
        None => {
            // A replica serving a replica of its own: its stream is its primary's bytes
            // as they came (not state records), so the snapshot is taken at once.
            let offset = shared.repl.start_backlog(backlog_capacity(ctx.config));
            let mut snap = format::header().to_vec();
            for e in shared.rewrite_preamble() {
                encode(&e, &mut snap);
            }
            let per_db = ctx.keys.shards();
            for db in 0..=shared.keyspace.max_used() {
                for i in 0..per_db {
                    ctx.keys
                        .shard_at(db * per_db + i)
                        .scan_entries(0, usize::MAX, now, |k, e| {
                            for rec in dump(k, e) {
                                encode(&Effect::in_db(db, rec), &mut snap);
                            }
                        });
                }
            }
            let replid = shared.repl.replid();
            w.simple(&format!("FULLRESYNC {replid} {offset}"));
            let len_line = format!("${}\r\n", snap.len());
            w.raw(len_line.as_bytes());
            w.raw(&snap);
            ctx.session.bulk = (len_line.len() + snap.len()) as u64;
            eprintln!(
                "kvs: replica {} synced: {} bytes of snapshot at offset {offset}",
                ctx.session.id,
                snap.len()
            );
            (offset, false)
        }
    };
    attach(ctx, offset, partial, asked != "?");
}

/// The connection becomes a replica fed from `offset` (counted as a full or partial
/// sync).
fn attach(ctx: &mut Ctx, offset: u64, partial: bool, asked_to_resume: bool) {
    let shared = ctx.shared;
    let now = ctx.now;
    let generation = shared.repl.generation();
    shared.repl.count_sync(partial, asked_to_resume);
    if let Some(m) = &ctx.session.meta {
        m.replica.store(true, Ordering::Relaxed);
    }
    ctx.session.replica = Some(offset);
    ctx.session.replica_gen = generation;
    let ip = ctx
        .session
        .meta
        .as_ref()
        .map(|m| {
            m.addr
                .rsplit_once(':')
                .map_or(m.addr.clone(), |(ip, _)| ip.to_string())
        })
        .unwrap_or_default();
    shared.repl.attach(Attached {
        id: ctx.session.id,
        ip,
        port: ctx.session.replica_port,
        ack: offset,
        ack_ms: now,
        partial,
        overclaimed: false,
        sent: offset,
    });
    if partial {
        eprintln!(
            "kvs: replica {} resumed at offset {offset} (partial resync)",
            ctx.session.id
        );
    }
}

/// WAIT numreplicas timeout: blocks until that many replicas acknowledged every
/// change made so far (or the timeout, ms, 0: none, passes); answers how many did.
pub fn wait(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let repl = &ctx.shared.repl;
    if repl.is_replica() {
        return w.error("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.");
    }
    let Some(n) = parse_i64(args[1]) else {
        return w.error("ERR value is not an integer or out of range");
    };
    let Some(timeout) = parse_i64(args[2]) else {
        return w.error("ERR timeout is not an integer or out of range");
    };
    if timeout < 0 {
        return w.error("ERR timeout is negative");
    }
    let target = repl.offset();
    let count = repl.acked(target);
    if !ctx.can_block || n <= 0 || count >= n as usize {
        return w.int(count as i64);
    }
    let deadline = if timeout == 0 {
        0
    } else {
        ctx.now + timeout as u64
    };
    ctx.session.wait_acks = Some((target, n as usize, deadline));
    repl.wait_count(true);
    repl.ask_acks();
}
