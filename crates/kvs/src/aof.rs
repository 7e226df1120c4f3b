//! The append-only log: every change to the keyspace, in order, so a restart rebuilds
//! the same keys.
//!
//! Records hold effects, not commands ([`Effect`]): `INCR` is logged as the value it
//! produced and `EXPIRE` as an absolute deadline, so replay is deterministic whatever
//! the clock says at restart (a key whose deadline passed while the server was down is
//! dropped as the log is read).
//!
//! Framing: `[payload length: u32 LE][CRC-32 of the payload: u32 LE][payload]`. Replay
//! stops at the first record that is short or fails its checksum (a write torn by a
//! crash), truncates the file there and reports how many bytes were cut
//! ([`LoadReport`]); the records before it are applied.
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
//! 4,096 keys per step through a SCAN cursor over the shards (each shard locked only
//! while its keys are read; no fork, no long pause), effects queued meanwhile are kept
//! aside and appended after the snapshot, and the file is synced and renamed over the
//! log. A failed rewrite leaves the old log in use.

use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

use crate::store::{Entry, Store};

/// A change to the keyspace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// The key holds this value and deadline (0: none).
    Set {
        /// Key.
        key: Vec<u8>,
        /// Value.
        value: Vec<u8>,
        /// Deadline, ms since the epoch; 0 for none.
        expires_at: u64,
    },
    /// The key is gone.
    Del {
        /// Key.
        key: Vec<u8>,
    },
    /// The key's deadline changed (0: persistent).
    Deadline {
        /// Key.
        key: Vec<u8>,
        /// Deadline, ms since the epoch; 0 for none.
        at: u64,
    },
    /// Every key is gone.
    Clear,
}

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

/// What replay found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadReport {
    /// Records applied.
    pub records: u64,
    /// Bytes cut from a torn or corrupt tail (0 when the log was whole).
    pub trimmed: u64,
}

/// Largest record accepted on replay (a 512 MB value, its key and the framing).
const MAX_RECORD: u32 = 600 * 1024 * 1024;

const SET: u8 = 1;
const DEL: u8 = 2;
const DEADLINE: u8 = 3;
const CLEAR: u8 = 4;

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

/// Appends one framed record for `e` to `out`.
pub fn encode(e: &Effect, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&[0; 8]);
    match e {
        Effect::Set {
            key,
            value,
            expires_at,
        } => {
            out.push(SET);
            put_bytes(out, key);
            put_bytes(out, value);
            out.extend_from_slice(&expires_at.to_le_bytes());
        }
        Effect::Del { key } => {
            out.push(DEL);
            put_bytes(out, key);
        }
        Effect::Deadline { key, at } => {
            out.push(DEADLINE);
            put_bytes(out, key);
            out.extend_from_slice(&at.to_le_bytes());
        }
        Effect::Clear => out.push(CLEAR),
    }
    let payload_len = (out.len() - start - 8) as u32;
    let crc = crc32fast::hash(&out[start + 8..]);
    out[start..start + 4].copy_from_slice(&payload_len.to_le_bytes());
    out[start + 4..start + 8].copy_from_slice(&crc.to_le_bytes());
}

/// Decodes one payload (its checksum already checked).
fn decode(p: &[u8]) -> Option<Effect> {
    let (&tag, _) = p.split_first()?;
    let read_bytes = |r: &mut &[u8]| -> Option<Vec<u8>> {
        let (n, tail) = r.split_at_checked(4)?;
        let n = u32::from_le_bytes(n.try_into().ok()?) as usize;
        let (v, tail) = tail.split_at_checked(n)?;
        *r = tail;
        Some(v.to_vec())
    };
    let read_u64 = |r: &mut &[u8]| -> Option<u64> {
        let (v, tail) = r.split_at_checked(8)?;
        *r = tail;
        Some(u64::from_le_bytes(v.try_into().ok()?))
    };
    let mut r = &p[1..];
    let e = match tag {
        SET => Effect::Set {
            key: read_bytes(&mut r)?,
            value: read_bytes(&mut r)?,
            expires_at: read_u64(&mut r)?,
        },
        DEL => Effect::Del {
            key: read_bytes(&mut r)?,
        },
        DEADLINE => Effect::Deadline {
            key: read_bytes(&mut r)?,
            at: read_u64(&mut r)?,
        },
        CLEAR => Effect::Clear,
        _ => return None,
    };
    r.is_empty().then_some(e)
}

/// Applies one effect to the store (replay), at time `now`.
pub fn apply(store: &mut Store, e: &Effect, now: u64) {
    match e {
        Effect::Set {
            key,
            value,
            expires_at,
        } => {
            if *expires_at != 0 && *expires_at <= now {
                store.remove(key);
            } else {
                store.set(key, value.clone(), *expires_at, now);
            }
        }
        Effect::Del { key } => {
            store.remove(key);
        }
        Effect::Deadline { key, at } => {
            if *at != 0 && *at <= now {
                store.remove(key);
            } else {
                store.set_deadline(key, *at, now);
            }
        }
        Effect::Clear => store.clear(),
    }
}

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
}

impl Batch {
    fn run(&self) -> io::Result<()> {
        if !self.buf.is_empty() {
            (&*self.file).write_all(&self.buf)?;
        }
        if self.sync {
            self.file.sync_data()?;
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
    /// Opens (or creates) the log at `path`, passes every record to `replay` in order
    /// and truncates a torn tail.
    pub fn open(
        path: &Path,
        policy: Fsync,
        mut replay: impl FnMut(Effect),
    ) -> io::Result<(Log, LoadReport)> {
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)?;
        let total = file.metadata()?.len();
        let mut report = LoadReport::default();
        let mut good = 0u64;
        {
            let mut r = BufReader::new(&mut file);
            let mut header = [0u8; 8];
            let mut payload = Vec::new();
            loop {
                if read_full(&mut r, &mut header)? < 8 {
                    break;
                }
                let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
                let crc = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
                if len > MAX_RECORD || good + 8 + len as u64 > total {
                    break;
                }
                payload.resize(len as usize, 0);
                if read_full(&mut r, &mut payload)? < len as usize
                    || crc32fast::hash(&payload) != crc
                {
                    break;
                }
                let Some(e) = decode(&payload) else {
                    break;
                };
                replay(e);
                report.records += 1;
                good += 8 + len as u64;
            }
        }
        if good < total {
            report.trimmed = total - good;
            file.set_len(good)?;
            file.sync_data()?;
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
            },
            report,
        ))
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
        let mut s = lock(&self.state);
        let s = &mut *s;
        for e in effects.drain(..) {
            encode(&e, &mut s.pending);
            if let Some(tail) = &mut s.tail {
                encode(&e, tail);
            }
            s.appended += 1;
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
        };
        let (size, retry) = (s.size, s.failed.is_some());
        s.committing = true;
        drop(s);
        // After a failure the file may end in part of the failed batch: cut it back to
        // the last whole batch before writing that batch again (appends go to the end).
        let result = if retry {
            batch.file.set_len(size).and_then(|()| batch.run())
        } else {
            batch.run()
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

    /// Starts a rewrite (no-op while one runs).
    pub fn start_rewrite(&self) -> io::Result<()> {
        let mut rw = lock(&self.rewrite);
        if rw.is_some() {
            return Ok(());
        }
        let mut tmp = self.path.clone().into_os_string();
        tmp.push(".rewrite");
        let tmp = PathBuf::from(tmp);
        let file = File::create(&tmp)?;
        *rw = Some(Rewrite {
            file,
            tmp,
            cursor: 0,
        });
        // From here on every appended effect also goes to the tail; the snapshot reads
        // each key later than this, so a change is in the snapshot, the tail, or both
        // (effects set absolute state, so replaying one twice is harmless).
        lock(&self.state).tail = Some(Vec::new());
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
        scan: impl FnOnce(u64, usize, &mut dyn FnMut(&[u8], &Entry)) -> u64,
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
        r.cursor = scan(r.cursor, budget, &mut |key, e| {
            encode(
                &Effect::Set {
                    key: key.to_vec(),
                    value: e.value.clone(),
                    expires_at: e.expires_at,
                },
                &mut chunk,
            );
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
        let swapped = (|| -> io::Result<File> {
            r.file.write_all(&tail)?;
            r.file.sync_all()?;
            std::fs::rename(&r.tmp, &self.path)?;
            if let Some(dir) = self.path.parent() {
                let dir = if dir.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    dir
                };
                File::open(dir)?.sync_all()?;
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

/// Reads until `buf` is full or the input ends; the count read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("wirespeed-aof-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let p = dir.join(name);
        let _ = std::fs::remove_file(&p);
        p
    }

    fn effects() -> Vec<Effect> {
        vec![
            Effect::Set {
                key: b"a".to_vec(),
                value: b"1".to_vec(),
                expires_at: 0,
            },
            Effect::Set {
                key: b"b".to_vec(),
                value: vec![7; 1000],
                expires_at: 5_000,
            },
            Effect::Set {
                key: b"old".to_vec(),
                value: b"x".to_vec(),
                expires_at: 10,
            },
            Effect::Deadline {
                key: b"a".to_vec(),
                at: 9_000,
            },
            Effect::Del {
                key: b"zz".to_vec(),
            },
        ]
    }

    /// Opens `path`, replaying into `store` at `now`.
    fn open(path: &Path, policy: Fsync, store: &mut Store, now: u64) -> (Log, LoadReport) {
        Log::open(path, policy, |e| apply(store, &e, now)).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A fresh log at `path` holding `effects()`, committed.
    fn write_log(path: &Path, policy: Fsync) {
        let mut store = Store::new();
        let (log, rep) = open(path, policy, &mut store, 0);
        assert_eq!(rep, LoadReport::default());
        let seq = log.append(&mut effects());
        assert_eq!(seq, 5);
        log.commit_through(seq).unwrap_or_else(|e| panic!("{e}"));
        log.flush_all().unwrap_or_else(|e| panic!("{e}"));
    }

    #[test]
    fn replay_restores_and_a_torn_tail_is_trimmed() {
        let path = temp("replay.aof");
        write_log(&path, Fsync::Always);
        let whole = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        // A torn record: half of a new one.
        let mut extra = Vec::new();
        encode(&Effect::Clear, &mut extra);
        encode(
            &Effect::Set {
                key: b"c".to_vec(),
                value: b"3".to_vec(),
                expires_at: 0,
            },
            &mut extra,
        );
        let cut = extra.len() - 5;
        {
            let mut f = OpenOptions::new()
                .append(true)
                .open(&path)
                .unwrap_or_else(|e| panic!("{e}"));
            f.write_all(&extra[..cut]).unwrap_or_else(|e| panic!("{e}"));
        }
        let mut store = Store::new();
        let (_log, rep) = open(&path, Fsync::Always, &mut store, 1_000);
        // The Clear record is whole and applies; the torn Set is cut.
        assert_eq!(rep.records, 6);
        assert_eq!(rep.trimmed as usize, cut - 9);
        assert!(store.is_empty());
        let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        assert_eq!(len, whole + 9);
        // Without the Clear: the keys, with the expired one dropped.
        let path2 = temp("replay2.aof");
        write_log(&path2, Fsync::No);
        let mut store = Store::new();
        let _ = open(&path2, Fsync::No, &mut store, 1_000);
        assert_eq!(store.get(b"a", 1_000).map(|e| e.expires_at), Some(9_000));
        assert_eq!(store.get(b"b", 1_000).map(|e| e.value.len()), Some(1000));
        assert!(store.get(b"old", 1_000).is_none());
        assert_eq!(store.len(), 2);
    }

    #[test]
    fn a_flipped_bit_stops_replay_there() {
        let path = temp("flip.aof");
        write_log(&path, Fsync::Always);
        let mut bytes = std::fs::read(&path).unwrap_or_default();
        // Inside the second record's payload.
        let first = 8 + u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
        bytes[first + 20] ^= 1;
        std::fs::write(&path, &bytes).unwrap_or_else(|e| panic!("{e}"));
        let mut store = Store::new();
        let (_log, rep) = open(&path, Fsync::Always, &mut store, 0);
        assert_eq!(rep.records, 1);
        assert_eq!(rep.trimmed as usize, bytes.len() - first);
        assert_eq!(store.len(), 1);
    }

    #[test]
    fn a_rewrite_compacts_and_keeps_writes_made_during_it() {
        let path = temp("rewrite.aof");
        let mut store = Store::new();
        let (aof, _) = open(&path, Fsync::No, &mut store, 0);
        let log = |aof: &Log, store: &mut Store, e: Effect| {
            apply(store, &e, 0);
            aof.append(&mut vec![e]);
        };
        // 200 keys, each overwritten 20 times: a long log for a small keyspace.
        for round in 0..20u32 {
            for k in 0..200u32 {
                let e = Effect::Set {
                    key: format!("k{k}").into_bytes(),
                    value: format!("v{round}").into_bytes(),
                    expires_at: 0,
                };
                log(&aof, &mut store, e);
            }
        }
        aof.flush_all().unwrap_or_else(|e| panic!("{e}"));
        let before = aof.size();
        aof.start_rewrite().unwrap_or_else(|e| panic!("{e}"));
        let mut step = 0u32;
        loop {
            // Writes between steps: a new key, a change, a delete.
            log(
                &aof,
                &mut store,
                Effect::Set {
                    key: format!("new{step}").into_bytes(),
                    value: b"n".to_vec(),
                    expires_at: 0,
                },
            );
            log(
                &aof,
                &mut store,
                Effect::Set {
                    key: format!("k{step}").into_bytes(),
                    value: b"changed".to_vec(),
                    expires_at: 0,
                },
            );
            log(
                &aof,
                &mut store,
                Effect::Del {
                    key: format!("k{}", 199 - step).into_bytes(),
                },
            );
            aof.commit_through(aof.appended())
                .unwrap_or_else(|e| panic!("{e}"));
            step += 1;
            if aof
                .rewrite_step(16, |c, budget, f| store.scan_entries(c, budget, 0, f))
                .unwrap_or_else(|e| panic!("{e}"))
            {
                break;
            }
            assert!(step < 100, "the rewrite never finished");
        }
        assert!(step > 3, "the rewrite took several steps");
        assert!(aof.size() < before / 5, "{} -> {}", before, aof.size());
        // Writes after the swap go to the new log.
        log(
            &aof,
            &mut store,
            Effect::Set {
                key: b"after".to_vec(),
                value: b"a".to_vec(),
                expires_at: 0,
            },
        );
        aof.flush_all().unwrap_or_else(|e| panic!("{e}"));
        let mut replayed = Store::new();
        let _ = open(&path, Fsync::No, &mut replayed, 0);
        let mut want: Vec<(Vec<u8>, Vec<u8>)> = store
            .keys(0)
            .map(|k| k.to_vec())
            .map(|k| (k.clone(), Vec::new()))
            .collect();
        for (k, v) in &mut want {
            *v = store.get(k, 0).map(|e| e.value.clone()).unwrap_or_default();
        }
        assert_eq!(replayed.len(), store.len());
        for (k, v) in want {
            assert_eq!(replayed.get(&k, 0).map(|e| e.value.clone()), Some(v));
        }
    }

    #[test]
    fn every_effect_round_trips() {
        for e in effects().into_iter().chain([Effect::Clear]) {
            let mut out = Vec::new();
            encode(&e, &mut out);
            assert_eq!(decode(&out[8..]), Some(e));
        }
        assert_eq!(decode(&[9]), None);
        assert_eq!(decode(&[SET, 5, 0, 0, 0, b'a']), None);
    }
}
