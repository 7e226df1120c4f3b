//! The replica's side: one thread follows the primary that REPLICAOF named — connect,
//! handshake (PING, REPLCONF listening-port and capa, PSYNC), load the snapshot, then
//! apply the stream — and starts over a second after any failure, until REPLICAOF
//! names another primary or NO ONE, or the server stops.
//!
//! Every change is applied as a command applies it: under its shard's lock, appended
//! to this server's own log (when it has one) and to its own stream; the keys it
//! changed move WATCH versions. The records each read of the stream brings (up to
//! 1,024) are applied as one batch: their shards locked once, the bytes appended to
//! this server's stream once, one log record (a replica under pipelined load kept up
//! only record by record before). The snapshot first empties every database in use
//! and the function libraries.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::{Link, Role};
use crate::aof::{apply, decode, format, Effect};
use crate::keyspace::Keys;
use crate::state::Shared;
use wirespeed_util::time::unix_ms as now_ms;

/// Largest snapshot accepted (bytes): a bound before allocation.
pub(super) const MAX_SNAPSHOT: u64 = 64 << 30;
/// Largest record in the stream.
const MAX_RECORD: usize = format::MAX_RECORD as usize;

/// Runs the links REPLICAOF asks for until `stop` or SHUTDOWN (checked every 100 ms).
pub fn manager(shared: &Shared, stop: &AtomicBool) {
    let stopped = || stop.load(Ordering::Relaxed) || shared.shutdown.load(Ordering::Relaxed);
    while !stopped() {
        // The link first: `follow` sets the role before the link, so a new link is
        // always read with its own role.
        let link = shared.repl.link();
        let target = match (shared.repl.role(), link) {
            (Role::Replica { host, port }, Some(link)) if !link.stop.load(Ordering::Acquire) => {
                Some((host, port, link))
            }
            _ => None,
        };
        let Some((host, port, link)) = target else {
            std::thread::sleep(Duration::from_millis(100));
            continue;
        };
        let gone = || stopped() || link.stop.load(Ordering::Acquire);
        follow_until_gone(shared, &host, port, &link, &gone);
        link.up.store(false, Ordering::Release);
        link.done.store(true, Ordering::Release);
    }
}

/// Follows `host:port` while the link lasts, again a second after each failure.
fn follow_until_gone(shared: &Shared, host: &str, port: u16, link: &Link, gone: &dyn Fn() -> bool) {
    while !gone() {
        if let Err(e) = follow(shared, host, port, link, gone) {
            if link.up.swap(false, Ordering::AcqRel) {
                link.down_since_ms.store(now_ms(), Ordering::Release);
            }
            if !gone() {
                if e.get_ref().is_some_and(|x| x.is::<Corrupt>()) {
                    // Resuming from the same place would meet the same bytes: the next
                    // attempt loads a full snapshot.
                    shared.repl.forget_position();
                    eprintln!(
                        "kvs: replication from {host}:{port}: {e} at offset {}; asking for a full sync",
                        shared.repl.offset()
                    );
                } else {
                    eprintln!("kvs: replication from {host}:{port}: {e}");
                }
            }
            // Once a second, as Redis retries.
            for _ in 0..10 {
                if gone() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}

/// The connection to the primary: plain, or TLS (`tls-replication yes`).
pub(super) type Wire = crate::tls::Stream;

pub(super) fn bad(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

/// A record of the primary's stream that cannot be right (its checksum, its length, its
/// contents): this replica's place in the stream is wrong or the bytes were damaged, so
/// resuming from it again would fail again.
#[derive(Debug)]
struct Corrupt(String);

impl std::fmt::Display for Corrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Corrupt {}

pub(super) fn corrupt(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, Corrupt(msg.into()))
}

/// Sends one command.
pub(super) fn send(sock: &mut impl Write, args: &[&[u8]]) -> io::Result<()> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    sock.write_all(&out)?;
    sock.flush()
}

/// Reads one line (without its CRLF), at most 64 KiB.
fn line(r: &mut BufReader<Wire>) -> io::Result<String> {
    let mut buf = Vec::new();
    let n = r.by_ref().take(64 * 1024).read_until(b'\n', &mut buf)?;
    if n == 0 || !buf.ends_with(b"\n") {
        return Err(bad("the primary closed the connection"));
    }
    while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        buf.pop();
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// One command and its one-line reply; an error reply is an error.
fn ask(r: &mut BufReader<Wire>, args: &[&[u8]]) -> io::Result<String> {
    send(r.get_mut(), args)?;
    let reply = line(r)?;
    if reply.starts_with('-') {
        return Err(bad(format!(
            "{} answered {reply}",
            String::from_utf8_lossy(args[0])
        )));
    }
    Ok(reply)
}

/// One session with the primary: until the link is dropped (Ok) or fails (Err).
fn follow(
    shared: &Shared,
    host: &str,
    port: u16,
    link: &Link,
    gone: &dyn Fn() -> bool,
) -> io::Result<()> {
    let addr = (host, port)
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| bad("no address"))?;
    let sock = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    sock.set_nodelay(true)?;
    sock.set_read_timeout(Some(Duration::from_secs(5)))?;
    // tls-replication: the primary's certificate is checked against the authorities
    // and the host REPLICAOF named; this server's own is presented.
    let sock = Wire::over(
        sock,
        shared.tls.as_ref().and_then(|t| t.client.clone()),
        host,
    )?;
    let mut r = BufReader::with_capacity(1 << 16, sock);
    let config = shared.config().0;
    if let Some(pass) = config.compat.get("masterauth").filter(|p| !p.is_empty()) {
        // `masteruser`: an ACL user of the primary, else its default user.
        match config.compat.get("masteruser").filter(|u| !u.is_empty()) {
            Some(user) => ask(&mut r, &[b"AUTH", user.as_bytes(), pass.as_bytes()])?,
            None => ask(&mut r, &[b"AUTH", pass.as_bytes()])?,
        };
    }
    let pong = ask(&mut r, &[b"PING"])?;
    if pong != "+PONG" {
        return Err(bad(format!("PING answered {pong}")));
    }
    ask(
        &mut r,
        &[
            b"REPLCONF",
            b"listening-port",
            config.port.to_string().as_bytes(),
        ],
    )?;
    // `capa wirespeed`: this server's own stream (a Redis primary ignores it).
    ask(
        &mut r,
        &[
            b"REPLCONF",
            b"capa",
            b"eof",
            b"capa",
            b"psync2",
            b"capa",
            b"wirespeed",
        ],
    )?;
    let (id, next) = shared.repl.psync_args();
    send(
        r.get_mut(),
        &[b"PSYNC", id.as_bytes(), next.to_string().as_bytes()],
    )?;
    // A Redis primary sends newlines until its snapshot starts.
    let reply = loop {
        let l = line(&mut r)?;
        if !l.is_empty() {
            break l;
        }
    };
    let mut words = reply.split_whitespace();
    // A Redis primary's stream is its commands (see `from_redis`).
    let mut redis = shared.repl.upstream().is_some();
    match words.next() {
        Some("+CONTINUE") => {
            // The primary holds our point of its stream: it goes on from there.
            shared.repl.continued(words.next().unwrap_or(""));
            if !redis {
                log_position(shared);
            }
            link.partial_syncs.fetch_add(1, Ordering::Relaxed);
            let offset = shared
                .repl
                .upstream()
                .map_or(shared.repl.offset(), |u| u.offset);
            eprintln!("kvs: replica of {host}:{port} resumed at offset {offset} (partial resync)");
        }
        Some("+FULLRESYNC") => {
            let (Some(replid), Some(offset)) = (words.next(), words.next()) else {
                return Err(bad(format!("PSYNC answered {reply}")));
            };
            let offset: u64 = offset.parse().map_err(|_| bad("a bad offset"))?;
            redis = full_sync(shared, &mut r, replid, offset)?;
            link.full_syncs.fetch_add(1, Ordering::Relaxed);
            eprintln!("kvs: replica of {host}:{port} in sync at offset {offset}");
        }
        _ => return Err(bad(format!("PSYNC answered {reply}"))),
    }
    link.up.store(true, Ordering::Release);
    link.last_io_ms.store(now_ms(), Ordering::Release);
    if redis {
        return super::from_redis::stream(shared, &mut r, link, gone);
    }
    let mut keys = Keys::new(&shared.keyspace);
    stream(shared, &mut keys, &mut r, link, gone)
}

/// Loads the snapshot that follows `+FULLRESYNC replid offset`; the stream then
/// continues from `offset`. Two forms: `$<length>` then that many bytes (a snapshot
/// taken at once), or `$STREAM` then records until [`super::SNAPSHOT_END`] (a snapshot
/// the primary streams while it goes on writing; what changed meanwhile follows it in
/// the stream as state, not steps, so records applied twice agree). A Redis primary's
/// (an RDB file, `$<length>` or `$EOF:<mark>`) is loaded by [`super::from_redis`]:
/// true then.
fn full_sync(
    shared: &Shared,
    r: &mut BufReader<Wire>,
    replid: &str,
    offset: u64,
) -> io::Result<bool> {
    use super::from_redis::{self, Payload};
    // A Redis primary sends newlines while it makes its snapshot.
    let len = loop {
        let l = line(r)?;
        if !l.is_empty() {
            break l;
        }
    };
    if let Some(payload) = from_redis::eof_mark(&len) {
        from_redis::full_sync(shared, r, payload?, &[], replid, offset)?;
        return Ok(true);
    }
    let len: Option<u64> = match len.as_str() {
        "$STREAM" => None,
        _ => Some(
            len.strip_prefix('$')
                .and_then(|n| n.parse().ok())
                .filter(|&n| n <= MAX_SNAPSHOT)
                .ok_or_else(|| bad(format!("a bad snapshot length: {len}")))?,
        ),
    };
    let mut head = [0u8; format::HEADER_LEN as usize];
    if len.is_some_and(|n| n < head.len() as u64) {
        return Err(bad("a snapshot shorter than its header"));
    }
    r.read_exact(&mut head)?;
    if let (Some(n), b"REDIS") = (len, &head[..5]) {
        from_redis::full_sync(shared, r, Payload::Len(n), &head, replid, offset)?;
        return Ok(true);
    }
    if head[..8] != format::MAGIC {
        return Err(bad(
            "the primary's snapshot is neither this server's format nor an RDB file",
        ));
    }
    let mut keys = Keys::new(&shared.keyspace);
    load_snapshot(shared, &mut keys, r, len.map(|n| n - head.len() as u64))?;
    let capacity = super::backlog_capacity(&shared.config().0);
    shared.repl.synced(replid, offset, capacity);
    log_position(shared);
    Ok(false)
}

/// Empties every database and the libraries, then applies the snapshot's records:
/// `left` bytes of them, or (None) up to the end frame.
fn load_snapshot(
    shared: &Shared,
    keys: &mut Keys,
    r: &mut BufReader<Wire>,
    mut left: Option<u64>,
) -> io::Result<()> {
    clear_all(shared, keys);
    let mut changes = Vec::new();
    loop {
        if left == Some(0) {
            return Ok(());
        }
        let Some((e, raw)) = frame(r, left.is_none())? else {
            return Ok(());
        };
        if let Some(n) = left.as_mut() {
            *n = n
                .checked_sub(raw.len() as u64)
                .ok_or_else(|| bad("a record past the snapshot"))?;
        }
        add_change(&mut changes, e);
        apply_batch(shared, keys, &mut changes, &[], &[]);
    }
}

/// Empties every database in use and the function libraries (before a snapshot); the
/// log names no place to resume from until the snapshot is whole.
pub(super) fn clear_all(shared: &Shared, keys: &mut Keys) {
    shared.propagate(
        keys,
        &mut vec![Effect::Position {
            replid: Vec::new(),
            offset: 0,
        }],
    );
    let mut clear: Vec<Effect> = (0..=shared.keyspace.max_used())
        .map(|db| Effect::in_db(db, Effect::Clear))
        .collect();
    clear.push(Effect::Function(vec![
        b"FUNCTION".to_vec(),
        b"FLUSH".to_vec(),
    ]));
    let mut changes = Vec::new();
    for e in clear {
        changes.push(e);
        apply_batch(shared, keys, &mut changes, &[], &[]);
    }
}

/// Reads one framed record: the effect and its bytes as they came (frame included), or
/// None at a streamed snapshot's end frame (`end_allowed`).
fn frame(r: &mut BufReader<Wire>, end_allowed: bool) -> io::Result<Option<(Effect, Vec<u8>)>> {
    let mut raw = vec![0u8; 8];
    r.read_exact(&mut raw)?;
    if end_allowed && raw[..] == super::SNAPSHOT_END {
        return Ok(None);
    }
    let len = frame_len(&raw)?;
    raw.resize(8 + len, 0);
    r.read_exact(&mut raw[8..])?;
    Ok(Some((checked(&raw)?, raw)))
}

/// The payload length a frame's first 8 bytes announce, bounded.
fn frame_len(head: &[u8]) -> io::Result<usize> {
    if head[..8] == super::SNAPSHOT_END {
        return Err(corrupt("a snapshot's end frame in the stream"));
    }
    let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
    if len > MAX_RECORD {
        return Err(corrupt("a record longer than any this server writes"));
    }
    Ok(len)
}

/// The change a whole frame holds, once its checksum matches.
fn checked(raw: &[u8]) -> io::Result<Effect> {
    let crc = u32::from_le_bytes([raw[4], raw[5], raw[6], raw[7]]);
    let payload = &raw[8..];
    if crc32fast::hash(payload) != crc {
        return Err(corrupt("a record whose checksum does not match"));
    }
    decode(payload).ok_or_else(|| corrupt("a record this server cannot read"))
}

/// The first whole frame of `bytes` and its length, or None when `bytes` holds only
/// part of one (the length it needs at least, to read the rest at once).
fn parse_frame(bytes: &[u8]) -> io::Result<Result<(Effect, usize), usize>> {
    if bytes.len() < 8 {
        return Ok(Err(8));
    }
    let whole = 8 + frame_len(bytes)?;
    if bytes.len() < whole {
        return Ok(Err(whole));
    }
    Ok(Ok((checked(&bytes[..whole])?, whole)))
}

/// Records applied as one batch at most (and bytes of them, past which a batch ends).
const BATCH_RECORDS: usize = 1024;
const BATCH_BYTES: usize = 1 << 20;

/// Applies the stream until the link is dropped: the records each read brings are
/// applied as one batch (see [`apply_batch`]). The offset is acknowledged once a
/// second, and as soon as the records that came are applied after the primary asked
/// (a GETACK record: a client waits in WAIT).
fn stream(
    shared: &Shared,
    keys: &mut Keys,
    r: &mut BufReader<Wire>,
    link: &Link,
    gone: &dyn Fn() -> bool,
) -> io::Result<()> {
    // The bytes read and not yet applied, from `at` (what the handshake's reader
    // already holds first).
    let mut buf = r.buffer().to_vec();
    r.consume(buf.len());
    let mut at = 0;
    let sock = r.get_mut();
    sock.tcp()
        .set_read_timeout(Some(Duration::from_millis(100)))?;
    // Acknowledged at once when the primary asks (GETACK) and at the start.
    let (mut last_ack, mut asked) = (0u64, true);
    // The stream's id for the log's position records (fixed while it lasts).
    let replid = shared.repl.replid().into_bytes();
    // Since when a record has waited for the rest of its bytes (30 s at most).
    let mut partial_since: Option<u64> = None;
    let mut changes = Vec::new();
    loop {
        if gone() {
            return Ok(());
        }
        // Every whole record read so far, in batches.
        let mut need = 8;
        loop {
            let (mut end, mut n) = (at, 0);
            while n < BATCH_RECORDS && end - at < BATCH_BYTES {
                match parse_frame(&buf[end..])? {
                    Ok((e, len)) => {
                        asked |= e == Effect::GetAck;
                        add_change(&mut changes, e);
                        end += len;
                        n += 1;
                    }
                    Err(want) => {
                        need = want;
                        break;
                    }
                }
            }
            if n == 0 {
                break;
            }
            apply_batch(shared, keys, &mut changes, &buf[at..end], &replid);
            at = end;
            if gone() {
                return Ok(());
            }
        }
        let now = now_ms();
        if at > 0 {
            // Applied: the link's state, and the replicas of this replica fed.
            buf.drain(..at);
            at = 0;
            link.offset.store(shared.repl.offset(), Ordering::Release);
            link.last_io_ms.store(now, Ordering::Release);
            if !shared.repl.replicas_empty() {
                for i in 0..shared.hub.loops() {
                    shared.hub.wake(i);
                }
            }
        }
        waiting(&buf, &mut partial_since, now, "a record")?;
        if buf.is_empty() && (asked || now >= last_ack + 1000) {
            (last_ack, asked) = (now, false);
            let offset = shared.repl.offset();
            send(sock, &[b"REPLCONF", b"ACK", offset.to_string().as_bytes()])?;
        }
        // Read what came: at least 64 KiB of room, or the rest of a long record.
        read_more(sock, &mut buf, need)?;
    }
}

/// Notes since when the unapplied bytes `buf` hold have waited for the rest of
/// `what`: an error past 30 s.
pub(super) fn waiting(buf: &[u8], since: &mut Option<u64>, now: u64, what: &str) -> io::Result<()> {
    if buf.is_empty() {
        *since = None;
    } else if since.is_some_and(|t| now > t + 30_000) {
        return Err(bad(format!("{what}'s bytes stopped coming for 30 s")));
    } else {
        since.get_or_insert(now);
    }
    Ok(())
}

/// Appends what the primary sent (within the socket's read timeout) to `buf`, with
/// room for `need` bytes in all and 64 KiB at least; an error once it closed.
pub(super) fn read_more(sock: &mut Wire, buf: &mut Vec<u8>, need: usize) -> io::Result<()> {
    let have = buf.len();
    buf.resize(have + (need.saturating_sub(have)).max(64 * 1024), 0);
    match sock.read(&mut buf[have..]) {
        Ok(0) => Err(bad("the primary closed the connection")),
        Ok(n) => {
            buf.truncate(have + n);
            Ok(())
        }
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
            ) =>
        {
            buf.truncate(have);
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// Writes this server's place in its primary's stream to its log (after a sync).
fn log_position(shared: &Shared) {
    let mut keys = Keys::new(&shared.keyspace);
    shared.propagate(
        &mut keys,
        &mut vec![Effect::Position {
            replid: shared.repl.replid().into_bytes(),
            offset: shared.repl.offset(),
        }],
    );
}

/// Adds a record's changes to a batch (a transaction's one by one; a GETACK changes
/// nothing).
fn add_change(changes: &mut Vec<Effect>, e: Effect) {
    match e {
        Effect::GetAck => {}
        Effect::Batch(b) => changes.extend(b),
        e => changes.push(e),
    }
}

/// Applies the changes of consecutive records of the primary's as commands would, as
/// one: every shard they touch locked up front, in ascending order, the changes
/// applied in the order they came, WATCH moved, and the changes logged as one record.
/// For records of the stream (`raw`: their bytes as the primary sent them) the bytes
/// go to this server's own stream, and the offset after them to its log in the same
/// record as the changes, before the shards are unlocked: a snapshot for a replica of
/// this one has the records or its offset counts them, never one without the other,
/// and a restart from the log knows where to resume. Empties `changes`.
pub(super) fn apply_batch(
    shared: &Shared,
    keys: &mut Keys,
    changes: &mut Vec<Effect>,
    raw: &[u8],
    replid: &[u8],
) {
    lock_for(shared, keys, changes);
    for x in changes.iter() {
        apply_change(shared, keys, x);
    }
    let offset = (!raw.is_empty()).then(|| shared.repl.feed_raw(raw));
    if changes.is_empty() {
        keys.unlock();
        return;
    }
    if let Some(offset) = offset.filter(|_| shared.log.is_some()) {
        changes.push(Effect::Position {
            replid: replid.to_vec(),
            offset,
        });
    }
    let mut record = if changes.len() == 1 {
        std::mem::take(changes)
    } else {
        vec![Effect::Batch(std::mem::take(changes))]
    };
    shared.propagate(keys, &mut record);
    keys.unlock();
}

/// Locks up front, in ascending order, every shard a batch's changes touch (all of them
/// when one is not about a single key). The databases they write count as in use
/// first ([`crate::keyspace::Keyspace::use_db`]): what sees every database in use (a
/// full sync's clearing, a snapshot, the log rewrite, the expiry sweep) sees them.
fn lock_for(shared: &Shared, keys: &mut Keys, changes: &[Effect]) {
    let dbs = shared.keyspace.dbs();
    if let Some(top) = changes.iter().map(Effect::db).filter(|&d| d < dbs).max() {
        shared.keyspace.use_db(top);
    }
    let per_db = keys.shards();
    let mut at = Vec::with_capacity(changes.len());
    for x in changes {
        match x.inner().key() {
            Some(key) if x.db() < dbs => {
                at.push(x.db() * per_db + shared.keyspace.shard_of(key));
            }
            Some(_) => {}
            None => return keys.lock_every_db(),
        }
    }
    at.sort_unstable();
    at.dedup();
    for i in at {
        keys.shard_at(i);
    }
}

/// Applies one change (not a batch) under its shard's lock.
fn apply_change(shared: &Shared, keys: &mut Keys, e: &Effect) {
    // Nothing is expired as the primary's changes apply: a key goes when the primary
    // says so (its DEL), whatever this server's clock says.
    let now = 0;
    match e.inner() {
        Effect::Function(argv) => {
            let _ = crate::script::library::replay(&shared.scripts.libraries, argv);
        }
        Effect::SwapDb { a, b } => keys.swap_dbs(*a as usize, *b as usize),
        Effect::Clear => {
            let db = e.db();
            if db < shared.keyspace.dbs() {
                keys.select(db);
                keys.clear();
            }
        }
        Effect::Batch(_) | Effect::Position { .. } => {}
        inner => {
            let db = e.db();
            if let Some(key) = inner.key().filter(|_| db < shared.keyspace.dbs()) {
                apply(keys.store_in(db, key), inner, now);
                if shared.watches.any() {
                    shared.watches.touch(std::iter::once((db, key)));
                }
            }
        }
    }
}

/// Starts following `host:port` (REPLICAOF host port).
pub fn start(shared: &Shared, host: String, port: u16) {
    let link = Link::default();
    link.down_since_ms.store(now_ms(), Ordering::Relaxed);
    shared.repl.follow(host, port, Arc::new(link));
}
