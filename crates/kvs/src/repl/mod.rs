//! Replication: a primary streams every change to its replicas; a replica follows one
//! primary (`REPLICAOF host port`) and refuses writes from clients (`-READONLY`).
//!
//! The handshake is Redis's (PING, REPLCONF listening-port / capa, PSYNC), so the
//! commands and replies a Redis user or tool sees are the usual ones; what follows
//! `+FULLRESYNC <replid> <offset>` between wirespeed servers is this server's own: the
//! snapshot is the records of the append-only log's format ([`crate::aof::format`]:
//! its header, then every key of every database and the function libraries) sent as
//! one bulk, and the stream after it is the same records, each change as the log
//! records it. A Redis replica gets an RDB file and Redis's commands instead
//! ([`resp`]).
//!
//! Primary side: once a replica has asked for a full sync, every change is also
//! appended to a backlog ([`Backlog`], `repl-backlog-size` bytes, 1 MiB by default),
//! counted by the replication offset. The snapshot is taken with every shard of every
//! database locked, so it is the keyspace at one offset, and the stream continues from
//! exactly there (no change is in both). A replica connection is an ordinary client
//! connection of one event loop; each round, the loop copies what the backlog gained
//! into the output of its replicas. The backlog keeps what an attached replica has
//! not been sent even past its size (a write longer than the backlog drops no
//! replica; the replica's output limit bounds it); a replica resuming from a point
//! the backlog no longer holds syncs in full.
//!
//! A Redis primary answers PSYNC with its RDB snapshot and its command stream: the
//! replica loads the one and runs the other as its primary's client ([`from_redis`]),
//! with its own stream for its own replicas.
//!
//! Replica side ([`replica`]): a thread per link connects, syncs, and applies the
//! records under the shards' locks as commands do, the records of each read as one
//! batch (and writes them to its own log, when it has one), reconnecting once a second
//! after a failure.

pub mod from_redis;
pub mod replica;
pub mod resp;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::aof::{encode, Effect};

/// Bytes of backlog when `repl-backlog-size` is not set (Redis's default).
pub const DEFAULT_BACKLOG: usize = 1 << 20;

/// The backlog's size from `repl-backlog-size` (16 KiB at least, as Redis).
pub fn backlog_capacity(config: &crate::config::Config) -> usize {
    config
        .compat
        .get("repl-backlog-size")
        .and_then(|s| crate::config::parse_memory(s))
        .unwrap_or(DEFAULT_BACKLOG)
        .max(16 * 1024)
}

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

    /// Appends `data`, then lets go of the oldest bytes past the capacity, but none
    /// from `floor()` on (the least offset an attached replica has not been sent: a
    /// write longer than the backlog, or more of them in one round, does not drop the
    /// replicas, as Redis's do not; each replica's output limit bounds what it holds).
    fn push(&mut self, data: &[u8], floor: impl FnOnce() -> u64) {
        self.bytes.extend(data);
        let cap = self.capacity.max(1);
        if self.bytes.len() > cap {
            let keep_from = (self.end() - cap as u64).min(floor()).max(self.start);
            self.bytes.drain(..(keep_from - self.start) as usize);
            self.start = keep_from;
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
    /// It resumed with `+CONTINUE` (else it loaded a full snapshot).
    pub partial: bool,
    /// It acknowledged an offset past the stream's end (said once in the log).
    pub overclaimed: bool,
    /// The offset up to which the stream was copied to its output (the backlog keeps
    /// what follows).
    pub sent: u64,
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
    /// When the link went down, ms since the epoch (0: it has not been up yet).
    pub down_since_ms: AtomicU64,
    /// Full and partial syncs done over this link.
    pub full_syncs: AtomicU64,
    /// See `full_syncs`.
    pub partial_syncs: AtomicU64,
}

/// The frame that ends a streamed snapshot (`$STREAM`): its length field is past any
/// record's, so no record starts with it.
pub const SNAPSHOT_END: [u8; 8] = [0xff, 0xff, 0xff, 0xff, b'e', b'n', b'd', b'.'];

/// A full sync in progress on a primary's connection to a replica: the snapshot is
/// read a few thousand keys per round through the keyspace's SCAN cursor (one shard
/// locked at a time) and written while the connection's output is short, and what the
/// stream gains meanwhile waits here, sent after the snapshot's end frame.
#[derive(Debug, Default)]
pub struct SnapshotJob {
    /// The SCAN cursor over every database's shards (0 again: done).
    pub cursor: u64,
    /// The scan has started (a cursor of 0 before it means the start).
    pub started: bool,
    /// The stream since the snapshot's offset, to send after it.
    pub pending: Vec<u8>,
    /// [`Repl::swaps`] when it began: a SWAPDB meanwhile (not the same applied twice)
    /// ends it (the replica syncs again).
    pub swaps: u64,
    /// Snapshot bytes written so far.
    pub bytes: u64,
    /// Keys written so far.
    pub keys: u64,
}

/// Replication state, shared by the event loops.
#[derive(Debug)]
pub struct Repl {
    /// This process's run id (INFO `run_id`: Sentinel tells restarts by it).
    pub run_id: String,
    role: Mutex<Role>,
    /// The role is [`Role::Replica`] (the writers' check, one load).
    replica: AtomicBool,
    replid: Mutex<String>,
    /// The id of the stream this one continues (a promoted replica's old primary's)
    /// and the first offset not in it (`second_repl_offset`; 0: none).
    replid2: Mutex<(String, u64)>,
    /// The id and offset describe a stream whose data this server holds (it synced
    /// from a primary, or was promoted from a replica): a new link may resume it.
    resumable: AtomicBool,
    /// Moves when the stream's history is replaced (a full sync from a primary, or a
    /// new primary to follow): replicas attached before are dropped (they sync again).
    generation: AtomicU64,
    /// Full syncs served, partial resyncs served, and resync requests that could not
    /// continue (INFO `sync_full`, `sync_partial_ok`, `sync_partial_err`).
    syncs: [AtomicU64; 3],
    /// Clients blocked in WAIT (acknowledgements wake the loops only while some are).
    waiting: AtomicUsize,
    /// A WAIT asked the replicas for their offsets: a GETACK record goes to the stream
    /// at the end of the round (one for all the WAITs of a round).
    getack: AtomicBool,
    /// Changes go to the backlog (a replica has synced since the start).
    active: AtomicBool,
    backlog: Mutex<Backlog>,
    /// Bytes ever streamed (master_repl_offset), as of the backlog's end.
    offset: AtomicU64,
    replicas: Mutex<Vec<Attached>>,
    /// How many replicas are attached (one load for the replica's link thread).
    attached: AtomicUsize,
    /// The link to the primary, on a replica.
    link: Mutex<Option<Arc<Link>>>,
    /// Streamed snapshots in progress: while there are any, changes go to the stream
    /// as the state they left where a step would not be the same applied twice.
    snapshots: AtomicUsize,
    /// SWAPDBs streamed while snapshots were in progress.
    swaps: AtomicU64,
    /// [`Repl::keep_bits`] as of the last change of the role or of `active`, published
    /// to the keyspace ([`Repl::keep_cell`]), which reads it at every shard lock.
    keep: Arc<AtomicU8>,
    /// Following a Redis primary ([`from_redis`]): the place in its stream (its id, and
    /// the bytes of its stream applied), apart from this server's own stream.
    upstream: Mutex<Option<Upstream>>,
}

/// A place in a Redis primary's stream: its replication id and offset (Redis's bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Upstream {
    /// The primary's replication id.
    pub replid: String,
    /// The bytes of its stream applied here (its `master_repl_offset` numbering).
    pub offset: u64,
}

impl Default for Repl {
    fn default() -> Repl {
        Repl {
            run_id: new_replid(),
            role: Mutex::new(Role::Primary),
            replica: AtomicBool::new(false),
            replid: Mutex::new(new_replid()),
            replid2: Mutex::new((NO_REPLID.to_string(), 0)),
            resumable: AtomicBool::new(false),
            generation: AtomicU64::new(0),
            waiting: AtomicUsize::new(0),
            getack: AtomicBool::new(false),
            syncs: Default::default(),
            active: AtomicBool::new(false),
            backlog: Mutex::new(Backlog {
                capacity: DEFAULT_BACKLOG,
                ..Backlog::default()
            }),
            offset: AtomicU64::new(0),
            snapshots: AtomicUsize::new(0),
            swaps: AtomicU64::new(0),
            replicas: Mutex::new(Vec::new()),
            attached: AtomicUsize::new(0),
            link: Mutex::new(None),
            keep: Arc::new(AtomicU8::new(0)),
            upstream: Mutex::new(None),
        }
    }
}

/// The id Redis shows when there is none.
pub const NO_REPLID: &str = "0000000000000000000000000000000000000000";

/// A new replication id: 40 hex digits from the system's random source.
pub fn new_replid() -> String {
    let mut bytes = [0u8; 20];
    if getrandom(&mut bytes).is_err() {
        // No random source: the time and the process id (an id need not be secret,
        // only different from the last one).
        let t = wirespeed_util::time::unix_ms() ^ ((std::process::id() as u64) << 32);
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

    /// What the stores keep or hide of expired keys for replication: a primary with
    /// replicas keeps them (each goes to the stream as a DEL); a replica hides them
    /// and waits for its primary's DEL ([`crate::store::HIDE_EXPIRED`]).
    #[inline]
    pub fn keep_bits(&self) -> u8 {
        if self.replica.load(Ordering::Relaxed) {
            crate::store::HIDE_EXPIRED
        } else if self.active.load(Ordering::Relaxed) {
            crate::store::KEEP_EXPIRED
        } else {
            0
        }
    }

    /// The cell the keyspace reads [`Repl::keep_bits`] from (kept current by every
    /// change of the role and of `active`).
    pub fn keep_cell(&self) -> Arc<AtomicU8> {
        self.keep.clone()
    }

    /// Publishes [`Repl::keep_bits`] after a change of the role or of `active`.
    fn publish_keep(&self) {
        self.keep.store(self.keep_bits(), Ordering::Release);
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
    /// has the changes to a key in the order they were made); returns the offset
    /// after them.
    pub fn feed(&self, effects: &[Effect]) -> u64 {
        let mut bytes = Vec::new();
        for e in effects {
            encode(e, &mut bytes);
        }
        if self.snapshotting() && effects.iter().any(swaps_dbs) {
            self.swaps.fetch_add(1, Ordering::AcqRel);
        }
        self.feed_raw(&bytes)
    }

    /// A streamed snapshot starts (with every shard held, so every change after its
    /// offset is streamed as state).
    pub fn begin_snapshot(&self) -> SnapshotJob {
        self.snapshots.fetch_add(1, Ordering::AcqRel);
        SnapshotJob {
            swaps: self.swaps.load(Ordering::Acquire),
            ..SnapshotJob::default()
        }
    }

    /// A streamed snapshot ended (sent whole, or its connection closed).
    pub fn end_snapshot(&self) {
        let _ = self
            .snapshots
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
    }

    /// True while streamed snapshots are in progress.
    #[inline]
    pub fn snapshotting(&self) -> bool {
        self.snapshots.load(Ordering::Acquire) > 0
    }

    /// SWAPDBs streamed while snapshots were in progress.
    pub fn swaps(&self) -> u64 {
        self.swaps.load(Ordering::Acquire)
    }

    /// Appends encoded records to the stream (a replica: the bytes its primary sent,
    /// as they came, so its offsets are its primary's); returns the offset after them.
    pub fn feed_raw(&self, bytes: &[u8]) -> u64 {
        let mut b = lock(&self.backlog);
        b.push(bytes, || {
            lock(&self.replicas)
                .iter()
                .map(|a| a.sent)
                .min()
                .unwrap_or(u64::MAX)
        });
        let end = b.end();
        self.offset.store(end, Ordering::Release);
        end
    }

    /// Counts a sync served: full or partial, and whether the replica asked to resume
    /// (a full sync after a request to resume is a `sync_partial_err`).
    pub fn count_sync(&self, partial: bool, asked_to_resume: bool) {
        self.syncs[usize::from(partial)].fetch_add(1, Ordering::Relaxed);
        if !partial && asked_to_resume {
            self.syncs[2].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// INFO stats' lines on syncs served.
    pub fn sync_stats(&self) -> String {
        let [full, ok, err] = [0, 1, 2].map(|i| self.syncs[i].load(Ordering::Relaxed));
        format!("sync_full:{full}\r\nsync_partial_ok:{ok}\r\nsync_partial_err:{err}\r\n")
    }

    /// The generation of the stream's history (see the field).
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Where a replica that asks `PSYNC replid offset` resumes: the backlog offset to
    /// send from, when this server's history contains that point of that stream (its
    /// own id, or the id it continues up to `second_repl_offset`) and the backlog
    /// still holds it. `offset` is the first byte the replica lacks, plus one (Redis's
    /// numbering, as `repl_backlog_first_byte_offset`).
    pub fn resume_point(&self, replid: &str, offset: u64) -> Option<u64> {
        if !self.active() || offset == 0 {
            return None;
        }
        let from = offset - 1;
        let ours = *lock(&self.replid) == replid;
        let (id2, second) = lock(&self.replid2).clone();
        let theirs = id2 == replid && offset <= second;
        if !ours && !theirs {
            return None;
        }
        let b = lock(&self.backlog);
        (from >= b.start && from <= b.end()).then_some(from)
    }

    /// This server's data no longer stands for a point of a stream (a replica met a
    /// damaged or misplaced record): its next PSYNC asks for a full sync.
    pub fn forget_position(&self) {
        self.resumable.store(false, Ordering::Release);
        *lock(&self.upstream) = None;
    }

    /// The place in a Redis primary's stream, when this server follows one.
    pub fn upstream(&self) -> Option<Upstream> {
        lock(&self.upstream).clone()
    }

    /// After a full sync from a Redis primary at `replid` `offset`: this server's own
    /// stream starts anew (its replicas sync again), and the primary's is followed from
    /// there.
    pub fn synced_redis(&self, replid: &str, offset: u64, capacity: usize) {
        self.synced(&new_replid(), 0, capacity);
        *lock(&self.upstream) = Some(Upstream {
            replid: replid.to_string(),
            offset,
        });
    }

    /// `bytes` more of the Redis primary's stream are applied; the offset after them.
    pub fn advance_upstream(&self, bytes: u64) -> u64 {
        let mut up = lock(&self.upstream);
        match up.as_mut() {
            Some(u) => {
                u.offset += bytes;
                u.offset
            }
            None => 0,
        }
    }

    /// What a replica sends in PSYNC to resume: its primary's id and the next offset
    /// (Redis's numbering), or `?` and -1 when it holds no stream's data.
    pub fn psync_args(&self) -> (String, i64) {
        if !self.resumable.load(Ordering::Acquire) {
            return ("?".to_string(), -1);
        }
        if let Some(up) = self.upstream() {
            return (up.replid, up.offset as i64 + 1);
        }
        (self.replid(), self.offset() as i64 + 1)
    }

    /// The primary answered `+CONTINUE newid`: the stream goes on under `newid`,
    /// which continues this one (the primary was promoted) when it differs.
    pub fn continued(&self, newid: &str) {
        if let Some(up) = lock(&self.upstream).as_mut() {
            // A Redis primary's stream: its new id (it was promoted) goes on from here.
            if !newid.is_empty() {
                up.replid = newid.to_string();
            }
            return;
        }
        let mut id = lock(&self.replid);
        if *id != newid && !newid.is_empty() {
            *lock(&self.replid2) = (
                std::mem::replace(&mut *id, newid.to_string()),
                self.offset() + 1,
            );
        }
    }

    /// How many replicas acknowledged `offset` (WAIT).
    pub fn acked(&self, offset: u64) -> usize {
        lock(&self.replicas)
            .iter()
            .filter(|a| a.ack >= offset)
            .count()
    }

    /// How many replicas acknowledged within `lag_s` seconds (min-replicas-to-write).
    pub fn good_replicas(&self, now: u64, lag_s: u32) -> usize {
        lock(&self.replicas)
            .iter()
            .filter(|a| now.saturating_sub(a.ack_ms) <= lag_s as u64 * 1000)
            .count()
    }

    /// A client starts (+1) or stops (-1) waiting in WAIT.
    pub fn wait_count(&self, start: bool) {
        if start {
            self.waiting.fetch_add(1, Ordering::AcqRel);
        } else {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Asks the replicas for their offsets (see the `getack` field).
    pub fn ask_acks(&self) {
        self.getack.store(true, Ordering::Release);
    }

    /// Sends the GETACK asked for since the last call, if any (an event loop, each
    /// round, before it feeds its replicas).
    pub fn send_getack(&self) {
        if self.getack.load(Ordering::Relaxed) && self.getack.swap(false, Ordering::AcqRel) {
            self.feed(&[Effect::GetAck]);
        }
    }

    /// True while clients wait in WAIT.
    pub fn any_waiting(&self) -> bool {
        self.waiting.load(Ordering::Acquire) > 0
    }

    /// Starts the backlog (before the first full sync; with every shard locked), or
    /// resizes it, and returns the offset the stream continues from.
    pub fn start_backlog(&self, capacity: usize) -> u64 {
        let mut b = lock(&self.backlog);
        // `repl-backlog-size` as it is now (CONFIG SET may have changed it).
        b.capacity = capacity;
        if !self.active.load(Ordering::Acquire) {
            self.active.store(true, Ordering::Release);
            self.publish_keep();
            self.resumable.store(true, Ordering::Release);
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
        self.attached.store(r.len(), Ordering::Release);
    }

    /// Forgets replica `id` (its connection closed).
    pub fn detach(&self, id: u64) {
        let mut r = lock(&self.replicas);
        r.retain(|x| x.id != id);
        self.attached.store(r.len(), Ordering::Release);
    }

    /// Records replica `id`'s acknowledged offset. Only connections attached as
    /// replicas (by PSYNC or SYNC) count; an offset past the end of the stream this
    /// server has sent is ignored (no replica can have received it: WAIT would count a
    /// replica for writes it never saw) and said once per connection.
    pub fn ack(&self, id: u64, offset: u64, now: u64) {
        let end = self.offset();
        let mut replicas = lock(&self.replicas);
        let Some(a) = replicas.iter_mut().find(|a| a.id == id) else {
            return;
        };
        if offset > end {
            if !a.overclaimed {
                a.overclaimed = true;
                eprintln!(
                    "kvs: replica {}:{} (client {id}) acknowledged offset {offset} past the stream's end {end}; ignored",
                    a.ip, a.port
                );
            }
            return;
        }
        a.ack = a.ack.max(offset);
        a.ack_ms = now;
    }

    /// Notes that replica `id` was sent the stream up to `offset`.
    pub fn sent(&self, id: u64, offset: u64) {
        if let Some(a) = lock(&self.replicas).iter_mut().find(|a| a.id == id) {
            a.sent = offset;
        }
    }

    /// True when no replica is attached.
    pub fn replicas_empty(&self) -> bool {
        self.attached.load(Ordering::Acquire) == 0
    }

    /// The attached replicas.
    pub fn replicas(&self) -> Vec<Attached> {
        lock(&self.replicas).clone()
    }

    /// Becomes a replica of `host:port` with `link` (the thread that follows it);
    /// stops the previous link, if any. Replicas attached to this server are dropped
    /// (they sync again, from what this server gets from its new primary).
    pub fn follow(&self, host: String, port: u16, link: Arc<Link>) {
        self.stop_link();
        *lock(&self.role) = Role::Replica { host, port };
        *lock(&self.link) = Some(link);
        self.replica.store(true, Ordering::Release);
        self.publish_keep();
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// Stops the link's thread; nothing from the old primary is applied after this
    /// returns (the thread checks the flag before each record; 2 s at most, a stuck
    /// read).
    fn stop_link(&self) {
        if let Some(link) = lock(&self.link).take() {
            link.stop.store(true, Ordering::Release);
            let start = std::time::Instant::now();
            while !link.done.load(Ordering::Acquire)
                && start.elapsed() < std::time::Duration::from_secs(2)
            {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
    }

    /// Stops following a primary and becomes one, under a new replication id (as
    /// REPLICAOF NO ONE does).
    ///
    /// The stream so far stays resumable under the old id up to this offset
    /// (`master_replid2`, `second_repl_offset`), so the other replicas of the old
    /// primary resume from this one with `+CONTINUE`.
    pub fn unfollow(&self) {
        self.stop_link();
        let was_replica = self.is_replica();
        *lock(&self.role) = Role::Primary;
        self.replica.store(false, Ordering::Release);
        self.publish_keep();
        // This server's own stream goes on; a Redis primary's place is left behind.
        *lock(&self.upstream) = None;
        if was_replica {
            let mut id = lock(&self.replid);
            let old = std::mem::replace(&mut *id, new_replid());
            if self.resumable.load(Ordering::Acquire) {
                *lock(&self.replid2) = (old, self.offset() + 1);
            }
        }
    }

    /// Takes a position from the log at start (a replica back from a restart): its
    /// data is the primary's stream `replid` up to `offset`, so it may resume there.
    /// Replicas of this one sync in full (the backlog starts empty).
    pub fn resume_from(&self, replid: &str, offset: u64, capacity: usize) {
        self.synced(replid, offset, capacity);
    }

    /// Takes the primary's id and offset after a full sync from it: the backlog
    /// starts there (empty), and replicas of this server sync again.
    pub fn synced(&self, replid: &str, offset: u64, capacity: usize) {
        *lock(&self.upstream) = None;
        *lock(&self.replid) = replid.to_string();
        *lock(&self.replid2) = (NO_REPLID.to_string(), 0);
        let mut b = lock(&self.backlog);
        b.bytes.clear();
        b.start = offset;
        b.capacity = capacity;
        self.offset.store(offset, Ordering::Release);
        self.active.store(true, Ordering::Release);
        self.publish_keep();
        self.resumable.store(true, Ordering::Release);
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// The link to the primary, on a replica.
    pub fn link(&self) -> Option<Arc<Link>> {
        lock(&self.link).clone()
    }

    /// INFO's replication section; `priority` is `replica-priority`.
    pub fn info(&self, now: u64, priority: &str) -> String {
        let replid = self.replid();
        let (replid2, second) = lock(&self.replid2).clone();
        let offset = self.offset();
        let mut out = String::from("# Replication\r\n");
        let upstream = self.upstream();
        if let Role::Replica { host, port } = self.role() {
            // Following a Redis primary: offsets in its numbering (Sentinel compares
            // them with its other replicas').
            let offset = upstream.as_ref().map_or(offset, |u| u.offset);
            let link = self.link();
            let get = |f: fn(&Link) -> &AtomicU64| {
                link.as_ref().map_or(0, |l| f(l).load(Ordering::Acquire))
            };
            let up = link.as_ref().is_some_and(|l| l.up.load(Ordering::Acquire));
            let last = get(|l| &l.last_io_ms);
            out.push_str(&format!(
                "role:slave\r\nmaster_host:{host}\r\nmaster_port:{port}\r\nmaster_link_status:{}\r\nmaster_last_io_seconds_ago:{}\r\nmaster_sync_in_progress:0\r\nslave_read_repl_offset:{offset}\r\nslave_repl_offset:{offset}\r\n",
                if up { "up" } else { "down" },
                if up { now.saturating_sub(last) as i64 / 1000 } else { -1 },
            ));
            if !up {
                // Since the link went down, or (never up) since the server started,
                // as Redis counts it.
                let since = get(|l| &l.down_since_ms);
                let secs = if since == 0 {
                    -1
                } else {
                    (now.saturating_sub(since) / 1000) as i64
                };
                out.push_str(&format!("master_link_down_since_seconds:{secs}\r\n"));
            }
            out.push_str(&format!(
                "slave_priority:{priority}\r\nslave_read_only:1\r\nreplica_announced:1\r\n"
            ));
        } else {
            out.push_str("role:master\r\n");
        }
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
        let (replid, offset) = match upstream {
            Some(u) if self.is_replica() => (u.replid, u.offset),
            _ => (replid, offset),
        };
        let b = lock(&self.backlog);
        out.push_str(&format!(
            "master_failover_state:no-failover\r\nmaster_replid:{replid}\r\nmaster_replid2:{replid2}\r\nmaster_repl_offset:{offset}\r\nsecond_repl_offset:{}\r\nrepl_backlog_active:{}\r\nrepl_backlog_size:{}\r\nrepl_backlog_first_byte_offset:{}\r\nrepl_backlog_histlen:{}\r\n\r\n",
            if second == 0 { -1 } else { second as i64 },
            u8::from(self.active()),
            b.capacity,
            b.start + 1,
            b.bytes.len()
        ));
        out
    }
}

/// True for a SWAPDB (alone or in a transaction).
fn swaps_dbs(e: &Effect) -> bool {
    match e.inner() {
        Effect::SwapDb { .. } => true,
        Effect::Batch(b) => b.iter().any(swaps_dbs),
        _ => false,
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
        let none = || u64::MAX;
        b.push(b"0123456789", none);
        assert_eq!(b.since(0).unwrap(), b"0123456789");
        b.push(b"abc", none);
        assert_eq!(b.end(), 13);
        assert!(b.since(2).is_none(), "dropped");
        assert_eq!(b.since(3).unwrap(), b"3456789abc");
        assert_eq!(b.since(13).unwrap(), b"");
        assert!(b.since(14).is_none(), "not yet streamed");
    }

    #[test]
    fn the_backlog_keeps_what_a_replica_was_not_sent() {
        let mut b = Backlog {
            capacity: 4,
            ..Backlog::default()
        };
        // A write longer than the backlog, a replica sent up to offset 2.
        b.push(b"0123456789", || 2);
        assert_eq!(b.since(2).unwrap(), b"23456789");
        assert!(b.since(1).is_none());
        // Sent it all: back to the capacity.
        b.push(b"ab", || 12);
        assert_eq!(b.since(8).unwrap(), b"89ab");
        assert!(b.since(7).is_none());
    }

    #[test]
    fn replids_are_40_hex_digits_and_differ() {
        let (a, b) = (new_replid(), new_replid());
        assert_eq!(a.len(), 40);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
