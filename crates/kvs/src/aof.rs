//! The append-only log: every change to the keyspace, in order, so a restart rebuilds
//! the same keys.
//!
//! Records hold effects, not commands ([`Effect`]): `INCR` is logged as the value it
//! produced and `EXPIRE` as an absolute deadline, so replay is deterministic whatever
//! the clock says at restart (a key whose deadline passed while the server was down is
//! dropped as the log is read).
//!
//! Bytes ([`format`]): a 16-byte header (magic, version, its checksum), then records
//! `[payload length: u32 LE][CRC-32 of the payload: u32 LE][payload]`.
//!
//! Opening never destroys data it does not understand. A missing or empty file becomes
//! a new log (the header is written and synced). A file that is not a log of this
//! version (a Redis AOF, text, another version, the headerless format of earlier
//! builds) is refused before any of it is read as records ([`OpenError`]). Replay stops
//! at the first bad record; only a torn tail (no valid record after it, and the record
//! incomplete or the rest zero bytes: what a crash in the middle of a write leaves, as
//! Redis's `aof-load-truncated yes` accepts) is cut, after the cut bytes are copied to
//! `<log>.torn-<UTC time>` and synced ([`TornCut`]). Any other damage refuses to open
//! and leaves the file as it was, byte for byte; [`check`] reports and repairs it
//! (`wirespeed kvs check-aof FILE [--fix]`). A `<log>.rewrite` left by a rewrite that
//! did not finish is removed once the log has opened (the rename is the commit point, so
//! a leftover is never the log).
//!
//! Durability ([`Fsync`]): with `always`, the server writes and `fdatasync`s the log
//! before it sends the replies of the writes that produced it (group commit: one sync
//! covers every record queued by any event loop until then; see [`Log`]); with
//! `everysec` it writes before replying and syncs at most once a second (a crash of the
//! machine loses at most about a second); with `no` it writes and leaves syncing to the
//! kernel.
//!
//! A failed commit (a full disk, an I/O error) keeps its records queued, in order, and
//! marks the log failing ([`Log::write_error`], Redis's MISCONF text); the next commit
//! first cuts the file back to the end of the last whole batch (a write that failed
//! part way leaves no partial record) and writes them again; the first success clears
//! the mark.
//!
//! Order: the event loops share one log; a command's records are queued while the
//! keyspace shards it changed are still locked, so the records of two writes to one
//! key are in the order the writes were applied.
//!
//! Compaction (BGREWRITEAOF, or automatically once the log passes 64 MiB and twice its
//! size after the last rewrite): a snapshot of the keyspace is written to `<log>.rewrite`
//! (header first) 4,096 keys per step through a SCAN cursor over the shards (each shard
//! locked only while its keys are read; no fork, no long pause), effects queued
//! meanwhile are kept aside and appended after the snapshot, and the file is synced and
//! renamed over the log. A failed rewrite leaves the old log in use.

pub mod check;
mod effect;
pub mod format;
mod replay;

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

use crate::store::Entry;

pub use check::{sync_dir, TornCut};
pub use effect::Effect;
use format::{classify, header, scan_records, HEADER_LEN};
pub use format::{decode, encode, Bad, Foreign, Kind, Problem, MAX_RECORD};
pub use replay::{apply, dump};

/// When the log reaches the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fsync {
    /// Before any reply to a write is sent.
    Always,
    /// At most once a second.
    EverySec,
    /// When the kernel decides.
    No,
}

impl Fsync {
    /// The Redis name.
    pub fn name(self) -> &'static str {
        match self {
            Fsync::Always => "always",
            Fsync::EverySec => "everysec",
            Fsync::No => "no",
        }
    }
}

impl std::str::FromStr for Fsync {
    type Err = String;
    fn from_str(s: &str) -> Result<Fsync, String> {
        match s.to_ascii_lowercase().as_str() {
            "always" => Ok(Fsync::Always),
            "everysec" => Ok(Fsync::EverySec),
            "no" => Ok(Fsync::No),
            _ => Err(format!(
                "appendfsync must be always, everysec or no, not '{s}'"
            )),
        }
    }
}

/// What opening the log found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadReport {
    /// Records applied.
    pub records: u64,
    /// Bytes cut from a torn tail (0 when the log was whole).
    pub trimmed: u64,
    /// The torn tail that was cut, and where its bytes were saved.
    pub torn: Option<TornCut>,
    /// A `<log>.rewrite` left by a rewrite that did not finish, removed, and its size.
    pub removed_rewrite: Option<(PathBuf, u64)>,
    /// The log was created (it was missing or empty).
    pub created: bool,
}

/// Why the log would not open. Every variant but [`OpenError::Io`] leaves the file
/// exactly as it was.
#[derive(Debug)]
pub enum OpenError {
    /// The file could not be opened, read, written or synced.
    Io(io::Error),
    /// The file is not a wirespeed log.
    Foreign(Foreign),
    /// A log of the previous format, without a header (`check-aof --fix` upgrades it).
    Headerless,
    /// A wirespeed log of another format version.
    Version(u32),
    /// The magic is there but the header is cut short or fails its checksum.
    BadHeader,
    /// A bad record that is not a torn tail.
    Damaged(Bad),
}

impl From<io::Error> for OpenError {
    fn from(e: io::Error) -> OpenError {
        OpenError::Io(e)
    }
}

impl OpenError {
    /// One line: what is wrong and where (byte offset, record number), that the file is
    /// unchanged, and the command that repairs or inspects `path`.
    pub fn message(&self, path: &Path) -> String {
        let file = path.display();
        let unchanged = "the server did not start and the file is unchanged";
        match self {
            OpenError::Io(e) => format!("{e}"),
            OpenError::Damaged(_) | OpenError::Headerless => {
                format!("{self}; {unchanged}; repair with `wirespeed kvs check-aof {file} --fix`")
            }
            OpenError::Foreign(_) => format!(
                "{self}; {unchanged}; --aof takes a wirespeed log or a new file \
                 (`wirespeed kvs check-aof {file}` says what it is)"
            ),
            OpenError::Version(_) | OpenError::BadHeader => {
                format!("{self}; {unchanged}; inspect with `wirespeed kvs check-aof {file}`")
            }
        }
    }
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenError::Io(e) => write!(f, "{e}"),
            OpenError::Foreign(x) => write!(f, "not a wirespeed log: {x} (byte 0, record 1)"),
            OpenError::Headerless => f.write_str(
                "an old wirespeed log without a header (byte 0, record 1)",
            ),
            OpenError::Version(v) => write!(
                f,
                "{} (byte 8, record 1)",
                Kind::Version(*v)
            ),
            OpenError::BadHeader => f.write_str(
                "a damaged header: the magic is there but the header is cut short or fails its checksum (byte 0, record 1)",
            ),
            OpenError::Damaged(b) => {
                write!(
                    f,
                    "bad record at byte {} (record {}): {}; {} bytes from there to the end",
                    b.offset, b.record, b.problem, b.rest
                )?;
                match b.after.first {
                    Some(at) => write!(f, ", a valid record after it at byte {at}"),
                    None if b.after.cut_short => f.write_str(", too much to scan for valid records after it"),
                    None => f.write_str(", the record complete, so not a torn tail"),
                }
            }
        }
    }
}

impl std::error::Error for OpenError {}

/// An open log, shared by the event loops.
///
/// Appends are numbered (sequence numbers from 1): [`Log::append`] returns the number
/// of the last record it queued, and [`Log::commit_through`] returns once every record
/// up to a number is in the file (and on the disk, with `appendfsync always`). One
/// caller at a time writes: it takes everything queued so far, writes and syncs it
/// without holding the lock (appends go on meanwhile), and wakes the callers waiting
/// for records it covered, so records of several loops share one fdatasync and a
/// caller whose records another commit covered returns without a syscall.
#[derive(Debug)]
pub struct Log {
    path: PathBuf,
    state: Mutex<State>,
    /// Signalled when a commit finishes.
    committed: Condvar,
    /// Mirrors of the state's counters and policy, read without the lock.
    always: AtomicBool,
    appended: AtomicU64,
    written: AtomicU64,
    synced: AtomicU64,
    /// The rewrite's snapshot side; taken before the state when both are needed.
    rewrite: Mutex<Option<Rewrite>>,
    /// True while a rewrite runs (mirror, read without a lock).
    rewriting: AtomicBool,
    /// True while the last commit failed (mirror of the state's `failed`, read without
    /// a lock before every write command).
    failing: AtomicBool,
    /// The server's latency monitor (writes, syncs and a rewrite's last step are
    /// timed for it), once the server holds the log.
    latency: Option<Arc<crate::latency::Monitor>>,
}

/// What the lock guards: the queue, the counters, the file.
#[derive(Debug)]
struct State {
    file: Arc<File>,
    policy: Fsync,
    pending: Vec<u8>,
    /// An empty buffer to swap in for `pending` when a commit takes it.
    spare: Vec<u8>,
    /// Effects queued since a rewrite began (they follow its snapshot).
    tail: Option<Vec<u8>>,
    /// Records queued, written to the file, and synced (sequence numbers).
    appended: u64,
    written: u64,
    synced: u64,
    /// A commit is writing outside the lock.
    committing: bool,
    last_sync: Instant,
    /// Bytes in the log file.
    size: u64,
    /// Size right after the last rewrite (or at open).
    base_size: u64,
    /// The last commit failed (a full disk, an I/O error): the file may end in part of
    /// a batch, cut back to `size` before the next attempt.
    failed: Option<io::ErrorKind>,
}

/// A rewrite in progress: the snapshot goes to a temporary file a few thousand keys
/// per event-loop round (through the keyspace's SCAN cursor, so no round blocks for
/// long and nothing forks), while every new effect is also kept in the state's `tail`;
/// when the scan is complete, the tail follows the snapshot and the file replaces the
/// log.
#[derive(Debug)]
struct Rewrite {
    file: File,
    tmp: PathBuf,
    cursor: u64,
}

/// One commit's work, done without the lock.
struct Batch {
    buf: Vec<u8>,
    file: Arc<File>,
    target: u64,
    sync: bool,
    /// The policy is `always` (the sync is timed as `aof-fsync-always`).
    always: bool,
    /// A rewrite runs (the write is timed as `aof-write-active-child`).
    rewriting: bool,
}

impl Batch {
    fn run(&self, latency: Option<&crate::latency::Monitor>) -> io::Result<()> {
        use crate::latency as l;
        if !self.buf.is_empty() {
            let t = latency.and_then(|m| m.start());
            (&*self.file).write_all(&self.buf)?;
            if let (Some(m), Some(t)) = (latency, t) {
                let ms = t.elapsed().as_millis() as u64;
                m.add_if_needed(l::AOF_WRITE, ms);
                let alone = if self.rewriting {
                    l::AOF_WRITE_ACTIVE_CHILD
                } else {
                    l::AOF_WRITE_ALONE
                };
                m.add_if_needed(alone, ms);
            }
        }
        if self.sync {
            let t = latency.filter(|_| self.always).and_then(|m| m.start());
            self.file.sync_data()?;
            if let Some(m) = latency {
                m.end(t, l::AOF_FSYNC_ALWAYS);
            }
        }
        Ok(())
    }
}

/// Rewrite automatically once the log is this big and has doubled since the last one.
pub const AUTO_REWRITE_MIN: u64 = 64 << 20;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock leaves the log consistent at record granularity.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Log {
    /// Opens (or creates) the log at `path`, passes every record to `replay` in order,
    /// cuts a torn tail (saving it to a side file first) and removes a `<log>.rewrite`
    /// left by an unfinished rewrite. Refuses any other damage and any file that is not
    /// a log of this version, leaving it unchanged.
    pub fn open(
        path: &Path,
        policy: Fsync,
        replay: impl FnMut(Effect),
    ) -> Result<(Log, LoadReport), OpenError> {
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)?;
        let total = file.metadata()?.len();
        let mut report = LoadReport::default();
        match classify(&file, total)? {
            Kind::Empty | Kind::TornHeader => {
                // Nothing but (a prefix of) our header: complete it.
                let have = total.min(HEADER_LEN) as usize;
                (&file).write_all(&header()[have..])?;
                file.sync_all()?;
                sync_dir(path)?;
                report.created = true;
            }
            Kind::Current => {
                // A transaction's record is replayed as its changes, in order.
                let mut replay = replay;
                let flat = |e: Effect| match e {
                    Effect::Batch(b) => b.into_iter().for_each(&mut replay),
                    e => replay(e),
                };
                let scan = scan_records(&file, HEADER_LEN, total, false, flat)?;
                report.records = scan.records;
                if let Some(bad) = scan.bad {
                    if !bad.torn() {
                        return Err(OpenError::Damaged(bad));
                    }
                    report.trimmed = bad.rest;
                    report.torn = Some(check::trim_torn(&file, path, &bad)?);
                }
            }
            Kind::Version(v) => return Err(OpenError::Version(v)),
            Kind::BadHeader => return Err(OpenError::BadHeader),
            Kind::Headerless => return Err(OpenError::Headerless),
            Kind::Foreign(x) => return Err(OpenError::Foreign(x)),
        }
        let good = file.metadata()?.len();
        let stale = rewrite_path(path);
        if let Ok(meta) = std::fs::symlink_metadata(&stale) {
            std::fs::remove_file(&stale)?;
            report.removed_rewrite = Some((stale, meta.len()));
        }
        Ok((
            Log {
                path: path.to_path_buf(),
                state: Mutex::new(State {
                    file: Arc::new(file),
                    policy,
                    pending: Vec::new(),
                    spare: Vec::new(),
                    tail: None,
                    appended: 0,
                    written: 0,
                    synced: 0,
                    committing: false,
                    last_sync: Instant::now(),
                    size: good,
                    base_size: good,
                    failed: None,
                }),
                committed: Condvar::new(),
                always: AtomicBool::new(policy == Fsync::Always),
                appended: AtomicU64::new(0),
                written: AtomicU64::new(0),
                synced: AtomicU64::new(0),
                rewrite: Mutex::new(None),
                rewriting: AtomicBool::new(false),
                failing: AtomicBool::new(false),
                latency: None,
            },
            report,
        ))
    }

    /// The log, its writes, syncs and rewrites timed for the latency monitor `m`.
    pub fn with_latency(mut self, m: Arc<crate::latency::Monitor>) -> Log {
        self.latency = Some(m);
        self
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Queues `effects` (draining the vector) to be written by the next commit; returns
    /// the sequence number of the last one (the count of records queued so far).
    /// Callers that need the log in the order changes were made call it while they
    /// still hold what orders those changes (the keyspace shard's lock).
    pub fn append(&self, effects: &mut Vec<Effect>) -> u64 {
        self.append_with(effects, |_| None)
    }

    /// [`Log::append`], where a rewrite runs, of each effect as `absolute` gives it
    /// (when it does): a change that is not the same applied twice (a list push) is
    /// then recorded as the state it left, because the rewrite's snapshot may hold it
    /// too. Called with the changed keys' shards locked, so the state is the one the
    /// change made; decided under the log's lock, so no rewrite starts in between.
    pub fn append_with(
        &self,
        effects: &mut Vec<Effect>,
        mut absolute: impl FnMut(&Effect) -> Option<Vec<Effect>>,
    ) -> u64 {
        let mut s = lock(&self.state);
        let s = &mut *s;
        let rewriting = s.tail.is_some();
        let mut put = |e: &Effect| {
            encode(e, &mut s.pending);
            if let Some(tail) = &mut s.tail {
                encode(e, tail);
            }
            s.appended += 1;
        };
        for e in effects.drain(..) {
            match rewriting.then(|| absolute(&e)).flatten() {
                Some(state) => state.iter().for_each(&mut put),
                None => put(&e),
            }
        }
        self.appended.store(s.appended, Ordering::Release);
        s.appended
    }

    /// The sequence number of the last record queued.
    pub fn appended(&self) -> u64 {
        self.appended.load(Ordering::Acquire)
    }

    /// True when every record up to `seq` is as safe as the policy makes it: written,
    /// and synced with `always` (a check without the lock).
    pub fn covers(&self, seq: u64) -> bool {
        seq <= self.written.load(Ordering::Acquire)
            && (!self.always.load(Ordering::Acquire) || seq <= self.synced.load(Ordering::Acquire))
    }

    /// Returns once every record up to `seq` is written to the file, and synced when
    /// the policy is `always` (group commit: one caller writes and syncs everything
    /// queued, without holding the lock; the others wait for it or find their records
    /// already covered).
    pub fn commit_through(&self, seq: u64) -> io::Result<()> {
        let mut s = lock(&self.state);
        loop {
            let done = if s.policy == Fsync::Always {
                s.synced
            } else {
                s.written
            };
            if seq <= done {
                return Ok(());
            }
            if !s.committing {
                break;
            }
            s = self.committed.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        self.commit_locked(s, false)
    }

    /// Writes what is queued and syncs when the policy says it is due (`everysec`: a
    /// second after the last sync); a no-op while another commit runs. For an idle
    /// server's periodic sync.
    pub fn tick(&self) -> io::Result<()> {
        let s = lock(&self.state);
        if s.committing {
            return Ok(());
        }
        self.commit_locked(s, false)
    }

    /// Writes and syncs everything queued, whatever the policy (shutdown).
    pub fn flush_all(&self) -> io::Result<()> {
        let mut s = lock(&self.state);
        while s.committing {
            s = self.committed.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        self.commit_locked(s, true)
    }

    /// One commit from the state (not committing): takes the queue, writes and syncs
    /// it without the lock, then publishes the counters.
    fn commit_locked(&self, mut s: MutexGuard<'_, State>, force: bool) -> io::Result<()> {
        let due = force
            || match s.policy {
                Fsync::Always => true,
                Fsync::EverySec => s.last_sync.elapsed() >= Duration::from_secs(1),
                Fsync::No => false,
            };
        let write = !s.pending.is_empty();
        let sync = due && (write || s.written > s.synced);
        if !write && !sync {
            return Ok(());
        }
        let spare = std::mem::take(&mut s.spare);
        let batch = Batch {
            buf: std::mem::replace(&mut s.pending, spare),
            file: s.file.clone(),
            target: s.appended,
            sync,
            always: s.policy == Fsync::Always,
            rewriting: s.tail.is_some(),
        };
        let (size, retry) = (s.size, s.failed.is_some());
        s.committing = true;
        drop(s);
        // After a failure the file may end in part of the failed batch: cut it back to
        // the last whole batch before writing that batch again (appends go to the end).
        let latency = self.latency.as_deref();
        let result = if retry {
            batch.file.set_len(size).and_then(|()| batch.run(latency))
        } else {
            batch.run(latency)
        };
        let mut s = lock(&self.state);
        s.committing = false;
        if let Err(e) = &result {
            if s.failed.is_none() {
                eprintln!(
                    "kvs: cannot write the append-only log {}: {e}; write commands are refused \
                     (MISCONF) until it can be written again",
                    self.path.display()
                );
            }
            s.failed = Some(e.kind());
            self.failing.store(true, Ordering::Release);
        } else if s.failed.take().is_some() {
            self.failing.store(false, Ordering::Release);
            eprintln!(
                "kvs: the append-only log {} is written again; write commands are accepted",
                self.path.display()
            );
        }
        if result.is_ok() {
            s.size += batch.buf.len() as u64;
            s.written = s.written.max(batch.target);
            self.written.store(s.written, Ordering::Release);
            if batch.sync {
                s.synced = s.synced.max(batch.target);
                s.last_sync = Instant::now();
                self.synced.store(s.synced, Ordering::Release);
            }
            let mut buf = batch.buf;
            buf.clear();
            s.spare = buf;
        } else {
            // Not written (or written and not synced): put the records back in front
            // of what came since, so a retry (or the shutdown flush) writes them again
            // in order, after cutting the file back to `size`.
            let mut buf = batch.buf;
            buf.extend_from_slice(&s.pending);
            s.pending = buf;
        }
        drop(s);
        self.committed.notify_all();
        result
    }

    /// Why the last commit failed, while it has not succeeded since (the log cannot be
    /// written: writes are refused until a retry succeeds), as Redis's MISCONF error
    /// words it.
    pub fn write_error(&self) -> Option<String> {
        if !self.failing.load(Ordering::Acquire) {
            return None;
        }
        let kind = lock(&self.state).failed?;
        Some(format!(
            "MISCONF Errors writing to the AOF file: {}",
            describe(kind)
        ))
    }

    /// True while the last commit failed (see [`Log::write_error`]).
    pub fn failing(&self) -> bool {
        self.failing.load(Ordering::Acquire)
    }

    /// Bytes in the log file.
    pub fn size(&self) -> u64 {
        lock(&self.state).size
    }

    /// True while a rewrite runs.
    pub fn rewriting(&self) -> bool {
        self.rewriting.load(Ordering::Acquire)
    }

    /// True when the log is due for an automatic rewrite.
    pub fn wants_rewrite(&self) -> bool {
        let s = lock(&self.state);
        s.tail.is_none() && s.size >= AUTO_REWRITE_MIN.max(2 * s.base_size)
    }

    /// The sync policy.
    pub fn policy(&self) -> Fsync {
        lock(&self.state).policy
    }

    /// Changes the sync policy (CONFIG SET appendfsync); takes effect at the next
    /// commit.
    pub fn set_policy(&self, policy: Fsync) {
        let mut s = lock(&self.state);
        s.policy = policy;
        self.always
            .store(policy == Fsync::Always, Ordering::Release);
    }

    /// Starts a rewrite (no-op while one runs); the snapshot begins with the records
    /// `preamble` gives (what is not a key: the function libraries), read once changes
    /// already go to the tail.
    pub fn start_rewrite(&self, preamble: impl FnOnce() -> Vec<Effect>) -> io::Result<()> {
        let mut rw = lock(&self.rewrite);
        if rw.is_some() {
            return Ok(());
        }
        let tmp = rewrite_path(&self.path);
        let mut file = File::create(&tmp)?;
        file.write_all(&header())?;
        // From here on every appended effect also goes to the tail; the snapshot reads
        // each key later than this, so a change is in the snapshot, the tail, or both
        // (effects set absolute state, so replaying one twice is harmless).
        lock(&self.state).tail = Some(Vec::new());
        let mut first = Vec::new();
        for e in preamble() {
            encode(&e, &mut first);
        }
        if let Err(e) = file.write_all(&first) {
            lock(&self.state).tail = None;
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        *rw = Some(Rewrite {
            file,
            tmp,
            cursor: 0,
        });
        self.rewriting.store(true, Ordering::Release);
        Ok(())
    }

    /// Drops a running rewrite (after an error): the old log stays as it is.
    pub fn abort_rewrite(&self) {
        let mut rw = lock(&self.rewrite);
        if let Some(r) = rw.take() {
            let _ = std::fs::remove_file(&r.tmp);
        }
        lock(&self.state).tail = None;
        self.rewriting.store(false, Ordering::Release);
    }

    /// One step of a running rewrite, if no other caller is stepping it: `scan(cursor,
    /// budget, f)` calls `f` on the live keys of about `budget` keys of the keyspace from
    /// `cursor` and returns the next cursor (0: complete), as a SCAN step does; when the
    /// snapshot is complete, the tail follows it and the file replaces the log. Returns
    /// true when it finished.
    pub fn rewrite_step(
        &self,
        budget: usize,
        scan: impl FnOnce(u64, usize, &mut dyn FnMut(usize, &[u8], &Entry)) -> u64,
    ) -> io::Result<bool> {
        let mut rw = match self.rewrite.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return Ok(false),
        };
        let Some(r) = rw.as_mut() else {
            return Ok(false);
        };
        let mut chunk = Vec::new();
        r.cursor = scan(r.cursor, budget, &mut |db, key, e| {
            for rec in dump(key, e) {
                encode(&Effect::in_db(db, rec), &mut chunk);
            }
        });
        r.file.write_all(&chunk)?;
        if r.cursor != 0 {
            return Ok(false);
        }
        // Snapshot complete: the tail, then the swap, with no commit writing meanwhile
        // (what is queued is in the tail too, and is dropped from the queue).
        let Some(mut r) = rw.take() else {
            return Ok(false);
        };
        let mut s = lock(&self.state);
        while s.committing {
            s = self.committed.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        let tail = s.tail.take().unwrap_or_default();
        self.rewriting.store(false, Ordering::Release);
        let latency = self.latency.as_deref();
        let swapped = (|| -> io::Result<File> {
            let t = latency.and_then(|m| m.start());
            r.file.write_all(&tail)?;
            r.file.sync_all()?;
            if let Some(m) = latency {
                m.end(t, crate::latency::AOF_REWRITE_DIFF_WRITE);
            }
            let t = latency.and_then(|m| m.start());
            std::fs::rename(&r.tmp, &self.path)?;
            sync_dir(&self.path)?;
            if let Some(m) = latency {
                m.end(t, crate::latency::AOF_RENAME);
            }
            OpenOptions::new().append(true).open(&self.path)
        })();
        match swapped {
            Ok(file) => {
                s.size = file.metadata()?.len();
                s.base_size = s.size;
                s.file = Arc::new(file);
                s.pending.clear();
                // The new file holds every record: a failed batch is in it too.
                if s.failed.take().is_some() {
                    self.failing.store(false, Ordering::Release);
                }
                s.written = s.appended;
                s.synced = s.appended;
                s.last_sync = Instant::now();
                self.written.store(s.written, Ordering::Release);
                self.synced.store(s.synced, Ordering::Release);
                drop(s);
                self.committed.notify_all();
                Ok(true)
            }
            Err(e) => {
                let _ = std::fs::remove_file(&r.tmp);
                Err(e)
            }
        }
    }
}

/// The C library's wording of an I/O error kind (what `strerror` says for the errno
/// behind it), as Redis's MISCONF reply quotes it.
fn describe(kind: io::ErrorKind) -> &'static str {
    match kind {
        io::ErrorKind::StorageFull => "No space left on device",
        io::ErrorKind::QuotaExceeded => "Disk quota exceeded",
        io::ErrorKind::FileTooLarge => "File too large",
        io::ErrorKind::ReadOnlyFilesystem => "Read-only file system",
        io::ErrorKind::PermissionDenied => "Permission denied",
        io::ErrorKind::NotFound => "No such file or directory",
        _ => "Input/output error",
    }
}

/// Where a rewrite writes its snapshot: `<log>.rewrite`.
pub fn rewrite_path(log: &Path) -> PathBuf {
    let mut p = log.as_os_str().to_owned();
    p.push(".rewrite");
    PathBuf::from(p)
}

#[cfg(test)]
mod tests;
