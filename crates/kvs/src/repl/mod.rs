//! Replication: a primary streams every change to its replicas; a replica follows one
//! primary (`REPLICAOF host port`) and refuses writes from clients (`-READONLY`).
//!
//! The handshake is Redis's (PING, REPLCONF listening-port / capa, PSYNC), so the
//! commands and replies a Redis user or tool sees are the usual ones; what follows
//! `+FULLRESYNC <replid> <offset>` is this server's own: the snapshot is the records
//! of the append-only log's format ([`crate::aof::format`]: its header, then every
//! key of every database and the function libraries) sent as one bulk, and the stream
//! after it is the same records, each change as the log records it. A wirespeed
//! replica therefore follows a wirespeed primary only (a Redis primary's RDB snapshot
//! is refused with one line in the replica's log; a Redis replica refuses ours).
//!
//! Primary side: once a replica has asked for a full sync, every change is also
//! appended to a backlog ([`Backlog`], `repl-backlog-size` bytes, 1 MiB by default),
//! counted by the replication offset. The snapshot is taken with every shard of every
//! database locked, so it is the keyspace at one offset, and the stream continues from
//! exactly there (no change is in both). A replica connection is an ordinary client
//! connection of one event loop; each round, the loop copies what the backlog gained
//! into the output of its replicas, and a replica that fell out of the backlog is
//! closed (it reconnects and syncs again).
//!
//! Replica side ([`replica`]): a thread per link connects, syncs, and applies the
//! records under the shards' locks as commands do (and writes them to its own log, when
//! it has one), reconnecting once a second after a failure.

pub mod replica;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::aof::{encode, Effect};

/// Bytes of backlog when `repl-backlog-size` is not set (Redis's default).
pub const DEFAULT_BACKLOG: usize = 1 << 20;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The recent stream: the bytes from offset `start` to `start + bytes.len()`.
#[derive(Debug, Default)]
pub struct Backlog {
    start: u64,
    bytes: VecDeque<u8>,
    capacity: usize,
}

impl Backlog {
    /// The offset after the last byte.
    pub fn end(&self) -> u64 {
        self.start + self.bytes.len() as u64
    }

    fn push(&mut self, data: &[u8]) {
        self.bytes.extend(data);
        let cap = self.capacity.max(1);
        if self.bytes.len() > cap {
            let drop = self.bytes.len() - cap;
            self.bytes.drain(..drop);
            self.start += drop as u64;
        }
    }

    /// The bytes from `from` to the end; None when `from` is no longer (or not yet)
    /// held.
    fn since(&self, from: u64) -> Option<Vec<u8>> {
        if from < self.start || from > self.end() {
            return None;
        }
        let skip = (from - self.start) as usize;
        Some(self.bytes.range(skip..).copied().collect())
    }
}

/// What this server is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// A primary (with or without replicas).
    Primary,
    /// A replica of `host:port`.
    Replica {
        /// The primary's host.
        host: String,
        /// The primary's port.
        port: u16,
    },
}

/// A replica attached to this primary, as INFO and ROLE list it.
#[derive(Debug, Clone)]
pub struct Attached {
    /// Its client id.
    pub id: u64,
    /// Its address.
    pub ip: String,
    /// The port it listens on (REPLCONF listening-port).
    pub port: u16,
    /// The offset it acknowledged (REPLCONF ACK).
    pub ack: u64,
    /// When it last acknowledged, ms since the epoch.
    pub ack_ms: u64,
}

/// The state of the link to the primary, on a replica.
#[derive(Debug, Default)]
pub struct Link {
    /// Connected and synced.
    pub up: AtomicBool,
    /// The offset applied so far.
    pub offset: AtomicU64,
    /// When the last bytes came, ms since the epoch.
    pub last_io_ms: AtomicU64,
    /// Set to end the link's thread.
    pub stop: AtomicBool,
    /// Set by the thread once it applies nothing more from this link.
    pub done: AtomicBool,
}

/// Replication state, shared by the event loops.
#[derive(Debug)]
pub struct Repl {
    role: Mutex<Role>,
    /// The role is [`Role::Replica`] (the writers' check, one load).
    replica: AtomicBool,
    replid: Mutex<String>,
    /// Changes go to the backlog (a replica has synced since the start).
    active: AtomicBool,
    backlog: Mutex<Backlog>,
    /// Bytes ever streamed (master_repl_offset), as of the backlog's end.
    offset: AtomicU64,
    replicas: Mutex<Vec<Attached>>,
    /// The link to the primary, on a replica.
    link: Mutex<Option<Arc<Link>>>,
}

impl Default for Repl {
    fn default() -> Repl {
        Repl {
            role: Mutex::new(Role::Primary),
            replica: AtomicBool::new(false),
            replid: Mutex::new(new_replid()),
            active: AtomicBool::new(false),
            backlog: Mutex::new(Backlog {
                capacity: DEFAULT_BACKLOG,
                ..Backlog::default()
            }),
            offset: AtomicU64::new(0),
            replicas: Mutex::new(Vec::new()),
            link: Mutex::new(None),
        }
    }
}

/// A new replication id: 40 hex digits from the system's random source.
pub fn new_replid() -> String {
    let mut bytes = [0u8; 20];
    if getrandom(&mut bytes).is_err() {
        // No random source: the time and the process id (an id need not be secret,
        // only different from the last one).
        let t = crate::server::now_ms() ^ ((std::process::id() as u64) << 32);
        bytes[..8].copy_from_slice(&t.to_le_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn getrandom(buf: &mut [u8]) -> std::io::Result<()> {
    use std::io::Read;
    std::fs::File::open("/dev/urandom")?.read_exact(buf)
}

impl Repl {
    /// True once changes go to the backlog (one relaxed load: the writers' check).
    #[inline]
    pub fn active(&self) -> bool {
        self.active.load(Ordering::Relaxed)
    }

    /// The role.
    pub fn role(&self) -> Role {
        lock(&self.role).clone()
    }

    /// True on a replica.
    #[inline]
    pub fn is_replica(&self) -> bool {
        self.replica.load(Ordering::Acquire)
    }

    /// The replication id.
    pub fn replid(&self) -> String {
        lock(&self.replid).clone()
    }

    /// The replication offset: bytes streamed so far.
    pub fn offset(&self) -> u64 {
        self.offset.load(Ordering::Acquire)
    }

    /// Appends changes to the stream (called with their shards locked, so the stream
    /// has the changes to a key in the order they were made).
    pub fn feed(&self, effects: &[Effect]) {
        let mut bytes = Vec::new();
        for e in effects {
            encode(e, &mut bytes);
        }
        let mut b = lock(&self.backlog);
        b.push(&bytes);
        self.offset.store(b.end(), Ordering::Release);
    }

    /// Starts the backlog (before the first full sync; with every shard locked) and
    /// returns the offset the stream continues from.
    pub fn start_backlog(&self, capacity: usize) -> u64 {
        let mut b = lock(&self.backlog);
        if !self.active.load(Ordering::Acquire) {
            b.capacity = capacity;
            self.active.store(true, Ordering::Release);
        }
        b.end()
    }

    /// The stream from `from` on (None: no longer held).
    pub fn since(&self, from: u64) -> Option<Vec<u8>> {
        lock(&self.backlog).since(from)
    }

    /// Notes an attached replica.
    pub fn attach(&self, a: Attached) {
        let mut r = lock(&self.replicas);
        r.retain(|x| x.id != a.id);
        r.push(a);
    }

    /// Forgets replica `id` (its connection closed).
    pub fn detach(&self, id: u64) {
        lock(&self.replicas).retain(|x| x.id != id);
    }

    /// Records replica `id`'s acknowledged offset.
    pub fn ack(&self, id: u64, offset: u64, now: u64) {
        if let Some(a) = lock(&self.replicas).iter_mut().find(|a| a.id == id) {
            a.ack = a.ack.max(offset);
            a.ack_ms = now;
        }
    }

    /// The attached replicas.
    pub fn replicas(&self) -> Vec<Attached> {
        lock(&self.replicas).clone()
    }

    /// Becomes a replica of `host:port` with `link` (the thread that follows it);
    /// stops the previous link, if any.
    pub fn follow(&self, host: String, port: u16, link: Arc<Link>) {
        self.unfollow();
        *lock(&self.role) = Role::Replica { host, port };
        *lock(&self.link) = Some(link);
        self.replica.store(true, Ordering::Release);
    }

    /// Stops following a primary and becomes one, under a new replication id (as
    /// REPLICAOF NO ONE does).
    pub fn unfollow(&self) {
        if let Some(link) = lock(&self.link).take() {
            link.stop.store(true, Ordering::Release);
            // Nothing from the old primary is applied after this returns (the thread
            // checks the flag before each record; 2 s at most, a stuck read).
            let start = std::time::Instant::now();
            while !link.done.load(Ordering::Acquire)
                && start.elapsed() < std::time::Duration::from_secs(2)
            {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
        let was_replica = self.is_replica();
        *lock(&self.role) = Role::Primary;
        self.replica.store(false, Ordering::Release);
        if was_replica {
            *lock(&self.replid) = new_replid();
        }
    }

    /// Takes the primary's id and offset (after a full sync from it).
    pub fn synced(&self, replid: &str, offset: u64) {
        *lock(&self.replid) = replid.to_string();
        let mut b = lock(&self.backlog);
        b.bytes.clear();
        b.start = offset;
        self.offset.store(offset, Ordering::Release);
    }

    /// Advances the offset by bytes applied from the primary (a replica's own stream).
    pub fn advance(&self, n: u64) {
        self.offset.fetch_add(n, Ordering::AcqRel);
    }

    /// The link to the primary, on a replica.
    pub fn link(&self) -> Option<Arc<Link>> {
        lock(&self.link).clone()
    }

    /// INFO's replication section.
    pub fn info(&self, now: u64) -> String {
        let replid = self.replid();
        let offset = self.offset();
        let mut out = String::from("# Replication\r\n");
        match self.role() {
            Role::Primary => {
                out.push_str("role:master\r\n");
                let replicas = self.replicas();
                out.push_str(&format!("connected_slaves:{}\r\n", replicas.len()));
                for (i, a) in replicas.iter().enumerate() {
                    out.push_str(&format!(
                        "slave{i}:ip={},port={},state=online,offset={},lag={}\r\n",
                        a.ip,
                        a.port,
                        a.ack,
                        now.saturating_sub(a.ack_ms) / 1000
                    ));
                }
            }
            Role::Replica { host, port } => {
                let link = self.link();
                let up = link.as_ref().is_some_and(|l| l.up.load(Ordering::Acquire));
                let last = link
                    .as_ref()
                    .map_or(0, |l| l.last_io_ms.load(Ordering::Acquire));
                out.push_str(&format!(
                    "role:slave\r\nmaster_host:{host}\r\nmaster_port:{port}\r\nmaster_link_status:{}\r\nmaster_last_io_seconds_ago:{}\r\nmaster_sync_in_progress:0\r\nslave_read_repl_offset:{offset}\r\nslave_repl_offset:{offset}\r\nslave_priority:100\r\nslave_read_only:1\r\nreplica_announced:1\r\nconnected_slaves:0\r\n",
                    if up { "up" } else { "down" },
                    if up { now.saturating_sub(last) as i64 / 1000 } else { -1 },
                ));
            }
        }
        let b = lock(&self.backlog);
        out.push_str(&format!(
            "master_failover_state:no-failover\r\nmaster_replid:{replid}\r\nmaster_replid2:0000000000000000000000000000000000000000\r\nmaster_repl_offset:{offset}\r\nsecond_repl_offset:-1\r\nrepl_backlog_active:{}\r\nrepl_backlog_size:{}\r\nrepl_backlog_first_byte_offset:{}\r\nrepl_backlog_histlen:{}\r\n\r\n",
            u8::from(self.active()),
            b.capacity,
            b.start + 1,
            b.bytes.len()
        ));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backlog_keeps_the_last_bytes_and_says_what_it_lost() {
        let mut b = Backlog {
            capacity: 10,
            ..Backlog::default()
        };
        b.push(b"0123456789");
        assert_eq!(b.since(0).unwrap(), b"0123456789");
        b.push(b"abc");
        assert_eq!(b.end(), 13);
        assert!(b.since(2).is_none(), "dropped");
        assert_eq!(b.since(3).unwrap(), b"3456789abc");
        assert_eq!(b.since(13).unwrap(), b"");
        assert!(b.since(14).is_none(), "not yet streamed");
    }

    #[test]
    fn replids_are_40_hex_digits_and_differ() {
        let (a, b) = (new_replid(), new_replid());
        assert_eq!(a.len(), 40);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
