//! MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE] [AUTH password |
//! AUTH2 username password] [KEYS key ...]: moves keys to another server (a cluster's
//! resharding moves a slot's keys with it). Each key is sent as RESTORE-ASKING (in
//! cluster mode; RESTORE otherwise) with its remaining time and its DUMP payload, all
//! in one pipeline on a connection kept for 10 s for the next call to the same target
//! (as Redis does); a key the target took is then
//! removed here (unless COPY), logged as a deletion. The event loop waits for the
//! target, at most `timeout` ms per read, as Redis's MIGRATE does.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use super::dump::serialize;
use super::{eq, parse_i64, Ctx, SYNTAX};
use crate::resp::{request, Writer};

/// One reply's first line (a status or an error: what RESTORE, AUTH and SELECT send);
/// a bulk or array reply is skipped over and reported as "+".
fn reply(r: &mut BufReader<TcpStream>) -> std::io::Result<String> {
    let mut line = Vec::new();
    r.by_ref().take(64 * 1024).read_until(b'\n', &mut line)?;
    if !line.ends_with(b"\n") {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the target closed the connection",
        ));
    }
    let text = String::from_utf8_lossy(&line).trim_end().to_string();
    Ok(text)
}

/// A connection to a MIGRATE target, kept for the next call to the same target (as
/// Redis keeps them, for 10 s), one set per event loop thread.
struct Cached {
    r: BufReader<TcpStream>,
    used: std::time::Instant,
}

thread_local! {
    static TARGETS: std::cell::RefCell<std::collections::HashMap<(String, u16), Cached>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// How long an idle cached connection is kept.
const KEEP: Duration = Duration::from_secs(10);

/// Connections cached, on every loop (INFO `migrate_cached_sockets`).
static CACHED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The number of cached connections (INFO `migrate_cached_sockets`).
pub(crate) fn cached_sockets() -> usize {
    CACHED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Closes this loop's cached connections idle for [`KEEP`] (each loop calls it as it
/// goes round, as Redis's cron closes them).
pub(crate) fn prune() {
    TARGETS.with(|t| {
        let mut t = t.borrow_mut();
        if !t.is_empty() {
            let before = t.len();
            t.retain(|_, c| c.used.elapsed() < KEEP);
            CACHED.fetch_sub(before - t.len(), std::sync::atomic::Ordering::Relaxed);
        }
    });
}

/// Sends `out` to the target `key` and reads `n` replies, on the cached connection if
/// one is fresh (else a new one, connected within `timeout`). A connection that failed
/// in any way is dropped (its state is unknown); a failure on a cached one is retried
/// once on a new connection.
fn exchange(
    key: &(String, u16),
    timeout: Duration,
    out: &[u8],
    n: usize,
) -> std::io::Result<Vec<String>> {
    prune();
    let cached = TARGETS.with(|t| t.borrow_mut().remove(key));
    if cached.is_some() {
        CACHED.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
    let fresh = cached.is_none();
    let mut conn = match cached {
        Some(c) => c,
        None => connect(key, timeout)?,
    };
    let go = |c: &mut Cached| -> std::io::Result<Vec<String>> {
        c.r.get_ref().set_read_timeout(Some(timeout))?;
        c.r.get_ref().set_write_timeout(Some(timeout))?;
        c.r.get_mut().write_all(out)?;
        (0..n).map(|_| reply(&mut c.r)).collect()
    };
    let result = match go(&mut conn) {
        Err(_) if !fresh => {
            conn = connect(key, timeout)?;
            go(&mut conn)
        }
        r => r,
    };
    if result.is_ok() {
        conn.used = std::time::Instant::now();
        TARGETS.with(|t| t.borrow_mut().insert(key.clone(), conn));
        CACHED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    result
}

fn connect(key: &(String, u16), timeout: Duration) -> std::io::Result<Cached> {
    let addr = (key.0.as_str(), key.1)
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| std::io::Error::other("no address"))?;
    let sock = TcpStream::connect_timeout(&addr, timeout)?;
    sock.set_nodelay(true)?;
    Ok(Cached {
        r: BufReader::new(sock),
        used: std::time::Instant::now(),
    })
}

/// MIGRATE.
pub fn migrate(ctx: &mut Ctx, args: &[&[u8]], w: &mut Writer) {
    let host = String::from_utf8_lossy(args[1]).into_owned();
    let Some(port) = parse_i64(args[2]).filter(|p| (1..=65535).contains(p)) else {
        return w.error("ERR Invalid port");
    };
    let Some(db) = parse_i64(args[4]).filter(|d| *d >= 0) else {
        return w.error("ERR value is not an integer or out of range");
    };
    let Some(timeout) = parse_i64(args[5]) else {
        return w.error("ERR value is not an integer or out of range");
    };
    let timeout = Duration::from_millis(if timeout <= 0 { 1000 } else { timeout as u64 });
    let (mut copy, mut replace) = (false, false);
    let mut auth: Vec<Vec<u8>> = Vec::new();
    let mut keys: Vec<&[u8]> = Vec::new();
    let mut i = 6;
    while i < args.len() {
        let a = args[i];
        if eq(a, "copy") {
            copy = true;
        } else if eq(a, "replace") {
            replace = true;
        } else if eq(a, "auth") && i + 1 < args.len() {
            auth = vec![b"AUTH".to_vec(), args[i + 1].to_vec()];
            i += 1;
        } else if eq(a, "auth2") && i + 2 < args.len() {
            auth = vec![b"AUTH".to_vec(), args[i + 1].to_vec(), args[i + 2].to_vec()];
            i += 2;
        } else if eq(a, "keys") {
            if !args[3].is_empty() {
                return w.error(
                    "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string",
                );
            }
            keys.extend_from_slice(&args[i + 1..]);
            break;
        } else {
            return w.error(SYNTAX);
        }
        i += 1;
    }
    if keys.is_empty() {
        keys.push(args[3]);
    }
    // What is here of them: payloads and remaining times.
    let now = ctx.now;
    ctx.keys.lock_keys(keys.iter().copied());
    let mut found: Vec<(&[u8], Vec<u8>, u64)> = Vec::new();
    for &k in &keys {
        if let Some(e) = ctx.keys.get(k, now) {
            let ttl = if e.expires_at == 0 {
                0
            } else {
                e.expires_at.saturating_sub(now).max(1)
            };
            found.push((k, serialize(&e.value), ttl));
        }
    }
    if found.is_empty() {
        return w.simple("NOKEY");
    }
    let cluster = ctx.shared.cluster.is_some();
    let mut out = Vec::new();
    if !auth.is_empty() {
        let a: Vec<&[u8]> = auth.iter().map(Vec::as_slice).collect();
        request(&mut out, &a);
    }
    // Always: a kept connection may have another database selected.
    request(&mut out, &[b"SELECT", db.to_string().as_bytes()]);
    for (k, payload, ttl) in &found {
        let ttl = ttl.to_string();
        let name: &[u8] = if cluster {
            b"RESTORE-ASKING"
        } else {
            b"RESTORE"
        };
        let mut a: Vec<&[u8]> = vec![name, k, ttl.as_bytes(), payload];
        if replace {
            a.push(b"REPLACE");
        }
        request(&mut out, &a);
    }
    let n = usize::from(!auth.is_empty()) + 1 + found.len();
    let key = (host.clone(), port as u16);
    let sent = exchange(&key, timeout, &out, n);
    let replies = match sent {
        Ok(r) => r,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            return w.error("IOERR error or timeout reading to target instance");
        }
        Err(e) => {
            return w.error(&format!(
                "IOERR error or timeout connecting to the client: {e}"
            ))
        }
    };
    let setup = usize::from(!auth.is_empty()) + 1;
    if let Some(e) = replies[..setup].iter().find(|r| r.starts_with('-')) {
        return w.error(&format!(
            "ERR Target instance replied with error: {}",
            &e[1..]
        ));
    }
    let mut error = None;
    for ((k, _, _), r) in found.iter().zip(&replies[setup..]) {
        if let Some(e) = r.strip_prefix('-') {
            error.get_or_insert_with(|| e.to_string());
        } else if !copy {
            ctx.keys.remove(k);
            ctx.log_del(k);
        }
    }
    match error {
        Some(e) => w.error(&format!("ERR Target instance replied with error: {e}")),
        None => w.simple("OK"),
    }
}
