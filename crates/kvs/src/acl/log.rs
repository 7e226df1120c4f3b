//! ACL LOG: the recent denials (a command, a key or a channel refused, an AUTH that
//! failed), newest first, at most `acllog-max-len` of them. A denial like one of the
//! ten newest entries (same reason, context, object and user, within 60 s of its last
//! update) is counted on that entry, which moves to the head, instead of making a new
//! one, as Redis groups them. INFO's `acl_access_denied_*` counters count every denial.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crate::resp::Writer;

/// Why something was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// The command (or subcommand).
    Command,
    /// A key.
    Key,
    /// A channel.
    Channel,
    /// AUTH or HELLO AUTH with a wrong pair.
    Auth,
}

impl Reason {
    /// As ACL LOG shows it.
    pub fn name(self) -> &'static str {
        match self {
            Reason::Command => "command",
            Reason::Key => "key",
            Reason::Channel => "channel",
            Reason::Auth => "auth",
        }
    }
}

/// Where the refused command was called from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Context {
    /// Sent by the client.
    Toplevel,
    /// Inside MULTI (queued, or run by EXEC).
    Multi,
    /// By a script (`redis.call`).
    Lua,
}

impl Context {
    /// As ACL LOG shows it.
    pub fn name(self) -> &'static str {
        match self {
            Context::Toplevel => "toplevel",
            Context::Multi => "multi",
            Context::Lua => "lua",
        }
    }
}

/// How far apart (ms) two denials may be to share an entry.
const GROUPING_MS: u64 = 60_000;

/// Entries a new denial is compared with.
const GROUPING_SCAN: usize = 10;

/// One entry.
#[derive(Debug)]
struct Entry {
    count: u64,
    reason: Reason,
    context: Context,
    object: Vec<u8>,
    username: Vec<u8>,
    /// Last update, ms since the epoch.
    updated: u64,
    /// The CLIENT LIST line of the last client.
    client: String,
    id: u64,
    created: u64,
}

/// The log and the denial counters.
#[derive(Debug, Default)]
pub struct Log {
    inner: Mutex<(VecDeque<Entry>, u64)>,
    counts: [AtomicU64; 4],
}

/// One denial to record.
#[derive(Debug)]
pub struct Denial<'a> {
    /// Why.
    pub reason: Reason,
    /// From where.
    pub context: Context,
    /// The command's full name, the key, the channel, or AUTH's name as sent.
    pub object: &'a [u8],
    /// The user refused (for AUTH: the name tried).
    pub username: &'a [u8],
    /// The client's CLIENT LIST line.
    pub client: String,
}

impl Log {
    /// Records a denial at `now` (ms), keeping at most `max` entries.
    pub fn add(&self, d: Denial, now: u64, max: usize) {
        let i = match d.reason {
            Reason::Auth => 0,
            Reason::Command => 1,
            Reason::Key => 2,
            Reason::Channel => 3,
        };
        self.counts[i].fetch_add(1, Ordering::Relaxed);
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let (entries, next_id) = &mut *g;
        let similar = entries.iter().take(GROUPING_SCAN).position(|e| {
            e.reason == d.reason
                && e.context == d.context
                && e.updated.abs_diff(now) <= GROUPING_MS
                && e.object == d.object
                && e.username == d.username
        });
        if let Some(at) = similar {
            if let Some(mut e) = entries.remove(at) {
                e.count += 1;
                e.updated = now;
                e.client = d.client;
                entries.push_front(e);
            }
            return;
        }
        entries.push_front(Entry {
            count: 1,
            reason: d.reason,
            context: d.context,
            object: d.object.to_vec(),
            username: d.username.to_vec(),
            updated: now,
            client: d.client,
            id: *next_id,
            created: now,
        });
        *next_id += 1;
        entries.truncate(max);
    }

    /// ACL LOG RESET.
    pub fn reset(&self) {
        self.inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .0
            .clear();
    }

    /// Denials so far: auth, command, key, channel (INFO).
    pub fn counts(&self) -> [u64; 4] {
        [0, 1, 2, 3].map(|i| self.counts[i].load(Ordering::Relaxed))
    }

    /// ACL LOG [count]: the newest `count` entries.
    pub fn write(&self, count: usize, now: u64, w: &mut Writer) {
        let g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let n = count.min(g.0.len());
        w.array(n);
        for e in g.0.iter().take(n) {
            w.map(10);
            w.bulk(b"count");
            w.int(e.count as i64);
            w.bulk(b"reason");
            w.bulk(e.reason.name().as_bytes());
            w.bulk(b"context");
            w.bulk(e.context.name().as_bytes());
            w.bulk(b"object");
            w.bulk(&e.object);
            w.bulk(b"username");
            w.bulk(&e.username);
            w.bulk(b"age-seconds");
            let age = now.saturating_sub(e.updated) as f64 / 1000.0;
            double(w, age);
            w.bulk(b"client-info");
            w.bulk(e.client.as_bytes());
            w.bulk(b"entry-id");
            w.int(e.id as i64);
            w.bulk(b"timestamp-created");
            w.int(e.created as i64);
            w.bulk(b"timestamp-last-updated");
            w.int(e.updated as i64);
        }
    }
}

/// A double: RESP3's `,`, a bulk string in RESP2 (shortest form, as Redis writes it).
fn double(w: &mut Writer, v: f64) {
    let text = format!("{v}");
    match w.proto() {
        crate::resp::Proto::Resp3 => w.raw(format!(",{text}\r\n").as_bytes()),
        crate::resp::Proto::Resp2 => w.bulk(text.as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn denial<'a>(object: &'a [u8], user: &'a [u8]) -> Denial<'a> {
        Denial {
            reason: Reason::Command,
            context: Context::Toplevel,
            object,
            username: user,
            client: String::new(),
        }
    }

    #[test]
    fn similar_denials_share_an_entry_and_the_log_is_bounded() {
        let log = Log::default();
        log.add(denial(b"get", b"u"), 1_000, 5);
        log.add(denial(b"get", b"u"), 2_000, 5);
        log.add(denial(b"set", b"u"), 3_000, 5);
        {
            let g = log.inner.lock().unwrap();
            assert_eq!(g.0.len(), 2);
            assert_eq!((g.0[1].count, g.0[1].id, g.0[1].created), (2, 0, 1_000));
            assert_eq!(g.0[0].id, 1);
        }
        // Past 60 s it is a new entry.
        log.add(denial(b"set", b"u"), 70_000, 5);
        for i in 0..10u8 {
            log.add(denial(&[b'k', i], b"u"), 80_000, 5);
        }
        assert_eq!(log.inner.lock().unwrap().0.len(), 5);
        assert_eq!(log.counts(), [0, 14, 0, 0]);
        let mut out = Vec::new();
        log.write(
            2,
            80_500,
            &mut Writer::new(&mut out, crate::resp::Proto::Resp2),
        );
        assert!(out.starts_with(b"*2\r\n*20\r\n$5\r\ncount\r\n:1\r\n"));
        assert!(String::from_utf8_lossy(&out).contains("$11\r\nage-seconds\r\n$3\r\n0.5\r\n"));
        log.reset();
        assert_eq!(log.inner.lock().unwrap().0.len(), 0);
    }
}
