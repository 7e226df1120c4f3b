//! Following a Redis primary (`REPLICAOF host port` where a redis-server listens).
//!
//! The handshake is the one [`super::replica`] sends to any primary; a Redis primary
//! answers PSYNC with `+FULLRESYNC <replid> <offset>` and its RDB snapshot, either as a
//! bulk (`$<length>`, written to its disk first) or streamed (`$EOF:<40-byte mark>`,
//! diskless: the payload ends with the mark), with newlines before it while the
//! snapshot is made. The snapshot is read whole (bounded), parsed by the RDB reader
//! ([`crate::cmd::dump::rdb`]) and only then installed: a damaged one changes nothing.
//!
//! Its stream is Redis's commands, as its replicas get them. Each runs here as the
//! primary's client runs on a Redis replica: past the read-only check, the ACLs and
//! the memory limit, its reply dropped; only writes and PUBLISH run (no CONFIG,
//! SHUTDOWN or other administration, whoever poses as the primary); `SELECT` changes its database, `MULTI`/`EXEC`
//! apply the commands between them at once (every shard held), `PING` and `REPLCONF`
//! only count. What they change goes to this server's log and to its own stream, for
//! its own replicas, which sync from it as from any wirespeed primary.
//!
//! Offsets are Redis's: the bytes of its stream applied, counted outside a
//! transaction (a link that drops inside one resumes before its MULTI, as Redis's
//! replicas do). `REPLCONF ACK` sends them, once a second and at once after
//! `REPLCONF GETACK`; PSYNC after a dropped link sends the primary's id and the next
//! offset, so the primary, or a replica of it promoted since, continues the stream
//! (`+CONTINUE`); INFO shows them. A restart syncs in full.
//!
//! Not followed: a key the primary writes while this server's clock already says it
//! expired is written as absent (Redis's replicas let the primary's writes see it);
//! with clocks in step, the primary's own expiry removes it first.

use std::io::{self, BufRead, BufReader, Read};
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::replica::{
    apply_batch, bad, clear_all, corrupt, read_more, send, waiting, Wire, MAX_SNAPSHOT,
};
use super::Link;
use crate::aof::Effect;
use crate::cmd::dump::rdb;
use crate::cmd::{self, eq, table, Ctx, Session};
use crate::config::Config;
use crate::input::Parser;
use crate::keyspace::Keys;
use crate::resp::{Limits, Proto, Writer};
use crate::state::{Shared, Stats};
use wirespeed_util::time::unix_ms as now_ms;

/// How the primary sends its RDB snapshot.
pub(super) enum Payload {
    /// `$<length>`: this many bytes.
    Len(u64),
    /// `$EOF:<mark>`: bytes up to the 40-byte mark.
    Until(Vec<u8>),
}

/// The length line of a Redis primary's snapshot, `$EOF:<mark>`, as a [`Payload`].
pub(super) fn eof_mark(line: &str) -> Option<io::Result<Payload>> {
    let mark = line.strip_prefix("$EOF:")?;
    Some(if mark.len() == 40 {
        Ok(Payload::Until(mark.as_bytes().to_vec()))
    } else {
        Err(bad(format!("a bad snapshot mark: {line}")))
    })
}

/// Reads the snapshot (`head`: its first bytes, already read), installs it in place of
/// everything this server holds, and takes `replid` `offset` as the place in the
/// primary's stream.
pub(super) fn full_sync(
    shared: &Shared,
    r: &mut BufReader<Wire>,
    payload: Payload,
    head: &[u8],
    replid: &str,
    offset: u64,
) -> io::Result<()> {
    let bytes = read_payload(r, payload, head)?;
    let mut loaded = Vec::new();
    // Each database's size as the file says (a third of its bytes at most).
    let mut hints = Vec::new();
    let summary = rdb::read_with_hints(
        &bytes,
        shared.keyspace.dbs(),
        |db, n| hints.push((db, n as usize)),
        |k| loaded.push(k),
    )
    .map_err(|e| bad(format!("the primary's RDB snapshot: {e}")))?;
    drop(bytes);
    // A shard at a time: each locked once, its table sized once.
    let per_db = shared.keyspace.shards();
    let at = |k: &rdb::RdbKey| k.db * per_db + shared.keyspace.shard_of(&k.key);
    loaded.sort_by_key(at);
    let mut keys = Keys::new(&shared.keyspace);
    clear_all(shared, &mut keys);
    let mut changes = Vec::new();
    for code in summary.functions {
        changes.push(Effect::Function(vec![
            b"FUNCTION".to_vec(),
            b"LOAD".to_vec(),
            b"REPLACE".to_vec(),
            code,
        ]));
        apply_batch(shared, &mut keys, &mut changes, &[], &[]);
    }
    for (db, n) in hints {
        shared.keyspace.use_db(db);
        for i in 0..per_db {
            keys.shard_at(db * per_db + i).reserve(n.div_ceil(per_db));
        }
        keys.unlock();
    }
    // Keys past their deadline stay: the primary's DEL removes them (as in Redis).
    let logging = shared.log.is_some();
    let now = now_ms();
    let mut effects = Vec::new();
    let mut held = usize::MAX;
    for k in loaded {
        let i = at(&k);
        if i != held {
            keys.unlock();
            shared.keyspace.use_db(k.db);
            held = i;
        }
        let store = keys.shard_at(i);
        store.put(&k.key, k.value, k.expires_at, now);
        if let Some(s) = k.idle_s {
            store.set_idle(&k.key, now, s.saturating_mul(1000));
        }
        if logging {
            if let Some(e) = store.get_quiet(&k.key, 0) {
                let db = k.db;
                effects.extend(
                    crate::aof::dump(&k.key, e)
                        .into_iter()
                        .map(|x| Effect::in_db(db, x)),
                );
            }
            shared.propagate(&mut keys, &mut effects);
        }
    }
    keys.unlock();
    let capacity = super::backlog_capacity(&shared.config().0);
    shared.repl.synced_redis(replid, offset, capacity);
    Ok(())
}

/// The snapshot's bytes (`head` first), at most [`MAX_SNAPSHOT`]; a streamed one
/// without its end mark, and nothing of the stream after it.
fn read_payload(r: &mut BufReader<Wire>, payload: Payload, head: &[u8]) -> io::Result<Vec<u8>> {
    let mut out = head.to_vec();
    let closed = || bad("the primary closed the connection during its snapshot");
    match payload {
        Payload::Len(n) => {
            if n > MAX_SNAPSHOT || n < head.len() as u64 {
                return Err(bad(format!("a bad snapshot length: {n}")));
            }
            r.by_ref()
                .take(n - head.len() as u64)
                .read_to_end(&mut out)?;
            if out.len() as u64 != n {
                return Err(closed());
            }
        }
        Payload::Until(mark) => {
            if let Some(end) = find(&out, &mark) {
                // The mark came with the head (a tiny snapshot): nothing else may.
                if end + mark.len() != out.len() {
                    return Err(bad("bytes after the snapshot's end mark"));
                }
                out.truncate(end);
                return Ok(out);
            }
            loop {
                let got = r.fill_buf()?;
                if got.is_empty() {
                    return Err(closed());
                }
                // Where the mark ends, if it does in what came (maybe begun before).
                let from = out.len().saturating_sub(mark.len() - 1);
                let mut window = out[from..].to_vec();
                window.extend_from_slice(got);
                let end = find(&window, &mark).map(|at| at + mark.len() - (out.len() - from));
                let take = end.unwrap_or(got.len());
                out.extend_from_slice(&got[..take]);
                r.consume(take);
                if end.is_some() {
                    out.truncate(out.len() - mark.len());
                    return Ok(out);
                }
                if out.len() as u64 > MAX_SNAPSHOT {
                    return Err(bad("a snapshot past the largest accepted"));
                }
            }
        }
    }
    Ok(out)
}

/// Where `needle` starts in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The primary's client: the session its commands run in.
struct Master<'s> {
    shared: &'s Shared,
    session: Session,
    config: Config,
    version: u64,
    stats: Stats,
    /// Between MULTI and EXEC: the commands queued, and the bytes they took.
    tx: Option<(Vec<Vec<Vec<u8>>>, u64)>,
    /// The reply of a command (dropped).
    out: Vec<u8>,
}

impl<'s> Master<'s> {
    fn new(shared: &'s Shared) -> Master<'s> {
        let (config, version) = shared.config();
        Master {
            shared,
            session: Session {
                authed: true,
                ..Session::default()
            },
            config,
            version,
            stats: Stats::default(),
            tx: None,
            out: Vec::new(),
        }
    }

    /// Runs one command of the stream, `len` bytes of it: whether it asked for an
    /// acknowledgement (`REPLCONF GETACK`).
    fn command(&mut self, keys: &mut Keys<'s>, args: &[&[u8]], len: u64) -> bool {
        let Some(name) = args.first() else {
            self.count(len);
            return false;
        };
        let mut asked = false;
        if eq(name, "multi") {
            self.tx = Some((Vec::new(), len));
            return false;
        }
        if let Some((queued, bytes)) = self.tx.as_mut() {
            *bytes += len;
            if eq(name, "exec") {
                let (queued, bytes) = self.tx.take().unwrap_or_default();
                let argv: Vec<Vec<&[u8]>> = queued
                    .iter()
                    .map(|a| a.iter().map(Vec::as_slice).collect())
                    .collect();
                self.run(keys, &argv, true);
                self.count(bytes);
            } else if eq(name, "discard") {
                let bytes = *bytes;
                self.tx = None;
                self.count(bytes);
            } else {
                queued.push(args.iter().map(|a| a.to_vec()).collect());
            }
            return false;
        }
        if eq(name, "replconf") {
            asked = args.get(1).is_some_and(|a| eq(a, "getack"));
        } else if !eq(name, "ping") {
            self.run(keys, &[args.to_vec()], false);
        }
        self.count(len);
        asked
    }

    /// `len` more bytes of the stream applied.
    fn count(&mut self, len: u64) {
        self.shared.repl.advance_upstream(len);
    }

    /// Runs `cmds` (all at once when `atomic`: every shard held, one record), then
    /// logs and streams what they changed.
    fn run(&mut self, keys: &mut Keys<'s>, cmds: &[Vec<&[u8]>], atomic: bool) {
        let shared = self.shared;
        let mut effects = Vec::new();
        {
            let mut ctx = Ctx {
                shared,
                keys,
                config: &mut self.config,
                session: &mut self.session,
                stats: &mut self.stats,
                now: now_ms(),
                effects: &mut effects,
                logging: true,
                can_block: false,
                blocked: None,
                ready: Vec::new(),
            };
            if atomic {
                ctx.keys.lock_atomic();
            }
            for args in cmds {
                let Some(c) = table::lookup(args[0]).filter(|c| streamed(c, args)) else {
                    eprintln!(
                        "kvs: the primary's stream: a command this server does not run from it: {}",
                        String::from_utf8_lossy(args[0])
                    );
                    continue;
                };
                ctx.keys.select(ctx.session.db);
                let start = ctx.effects.len();
                cmd::run(
                    &mut ctx,
                    c,
                    args,
                    &mut Writer::new(&mut self.out, Proto::Resp2),
                );
                cmd::multi::touch(&mut ctx, start);
                self.out.clear();
            }
        }
        if atomic && effects.len() > 1 {
            let mut batch = Vec::with_capacity(effects.len());
            for e in effects.drain(..) {
                match e {
                    Effect::Batch(inner) => batch.extend(inner),
                    e => batch.push(e),
                }
            }
            effects.push(Effect::Batch(batch));
        }
        shared.propagate_to(keys, &mut effects, true);
        keys.unlock();
    }

    /// Between reads: the settings as CONFIG SET left them, the writes counted for the
    /// `save` schedule.
    fn refresh(&mut self) {
        let (config, version) = self.shared.config();
        if version != self.version {
            (self.config, self.version) = (config, version);
        }
        if self.stats.dirty != 0 {
            let dirty = std::mem::take(&mut self.stats.dirty);
            self.shared.rdb.dirty.fetch_add(dirty, Ordering::Relaxed);
        }
    }
}

/// The commands a primary's stream may run here: writes and the pub/sub messages
/// Redis propagates (SELECT, MULTI/EXEC, PING and REPLCONF are taken apart). No
/// administration (CONFIG, SHUTDOWN, ACL, DEBUG, ...): a primary, or whoever poses as
/// one, changes data only.
fn streamed(c: &table::Command, args: &[&[u8]]) -> bool {
    let library = || {
        args.get(1).is_some_and(|s| {
            ["load", "delete", "flush", "restore"]
                .iter()
                .any(|n| eq(s, n))
        })
    };
    c.arity_ok(args.len())
        && (c.has(table::WRITE)
            || matches!(c.name, "select" | "publish" | "spublish")
            || (c.name == "function" && library()))
}

/// Runs the primary's commands until the link is dropped; acknowledges the offset once
/// a second, and as soon as the commands that came are applied after a GETACK.
pub(super) fn stream(
    shared: &Shared,
    r: &mut BufReader<Wire>,
    link: &Link,
    gone: &dyn Fn() -> bool,
) -> io::Result<()> {
    let mut buf = r.buffer().to_vec();
    r.consume(buf.len());
    let sock = r.get_mut();
    sock.tcp()
        .set_read_timeout(Some(Duration::from_millis(100)))?;
    let mut keys = Keys::new(&shared.keyspace);
    let mut master = Master::new(shared);
    let limits = Limits::default();
    let mut parser = Parser::default();
    let (mut last_ack, mut asked) = (0u64, true);
    let mut partial_since: Option<u64> = None;
    loop {
        if gone() {
            return Ok(());
        }
        let mut at = 0;
        while at < buf.len() {
            let Some(len) = parser
                .advance(&mut buf[at..], &limits, true)
                .map_err(|e| corrupt(&format!("the primary's stream: {e}")))?
            else {
                break;
            };
            let args: Vec<&[u8]> = parser
                .args()
                .iter()
                .map(|x| &buf[at + x.start..at + x.end])
                .collect();
            asked |= master.command(&mut keys, &args, len as u64);
            parser.next();
            at += len;
            if gone() {
                return Ok(());
            }
        }
        let now = now_ms();
        if at > 0 {
            buf.drain(..at);
            master.refresh();
            let offset = shared.repl.upstream().map_or(0, |u| u.offset);
            link.offset.store(offset, Ordering::Release);
            link.last_io_ms.store(now, Ordering::Release);
            if !shared.repl.replicas_empty() {
                for i in 0..shared.hub.loops() {
                    shared.hub.wake(i);
                }
            }
        }
        waiting(&buf, &mut partial_since, now, "a command")?;
        if asked || now >= last_ack + 1000 {
            (last_ack, asked) = (now, false);
            let offset = shared.repl.upstream().map_or(0, |u| u.offset);
            send(sock, &[b"REPLCONF", b"ACK", offset.to_string().as_bytes()])?;
        }
        read_more(sock, &mut buf, 0)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_is_found_where_it_starts() {
        assert_eq!(find(b"abcXYZdef", b"XYZ"), Some(3));
        assert_eq!(find(b"abc", b"XYZ"), None);
        assert!(matches!(
            eof_mark(&format!("$EOF:{}", "a".repeat(40))),
            Some(Ok(Payload::Until(m))) if m.len() == 40
        ));
        assert!(matches!(eof_mark("$EOF:short"), Some(Err(_))));
        assert!(eof_mark("$123").is_none());
    }

    #[test]
    fn the_stream_runs_writes_and_no_administration() {
        let ok = |args: &[&str]| {
            let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
            table::lookup(args[0]).is_some_and(|c| streamed(c, &args))
        };
        assert!(ok(&["SET", "k", "v"]));
        assert!(ok(&["select", "3"]));
        assert!(ok(&["PUBLISH", "ch", "m"]));
        assert!(ok(&["FUNCTION", "LOAD", "code"]));
        assert!(ok(&["FLUSHALL"]));
        assert!(!ok(&["SET", "k"]), "arity");
        assert!(!ok(&["FUNCTION", "LIST"]));
        assert!(!ok(&["CONFIG", "SET", "dir", "/"]));
        assert!(!ok(&["SHUTDOWN", "NOSAVE"]));
        assert!(!ok(&["ACL", "SETUSER", "x", "on", ">p", "+@all"]));
        assert!(!ok(&["DEBUG", "SLEEP", "10"]));
        assert!(!ok(&["BGSAVE"]));
        assert!(!ok(&["EVAL", "return 1", "0"]));
    }
}
