//! The RDB snapshot on disk, as Redis keeps one: `dir`/`dbfilename` (`./dump.rdb` by
//! default) is loaded at start when no append-only log is configured, and written by
//! SAVE, BGSAVE, the `save` schedule and SHUTDOWN SAVE, in Redis's format
//! ([`crate::cmd::dump::rdb`]), so a file moves between Redis and this server both
//! ways.
//!
//! Which file holds the truth: with an append-only log (`--aof`, `appendonly yes`) the
//! log is loaded at start and the RDB file is only written (a backup, or the way out to
//! Redis), as Redis does; without one, the RDB file is loaded.
//!
//! A save is one point in time: SAVE writes with every shard of every database locked
//! (the server answers nobody meanwhile, as Redis's SAVE); BGSAVE locks them only to
//! copy the keyspace, then writes the copy on a thread of its own (this server does not
//! fork: a BGSAVE holds a second copy of the data until its file is written). A file is
//! written as `temp-<pid>-<n>.rdb` in `dir`, flushed to the disk, then renamed over
//! `dbfilename` and the directory flushed, so a crash leaves the old file or the new
//! one, never a part.
//!
//! Attacker's pass: `dir` and `dbfilename` are protected settings (CONFIG SET refuses
//! them unless `enable-protected-configs` allows it, as in Redis 7), `dbfilename` is a
//! file name and never a path, and `dir` must be a directory; a hostile file at start is
//! read with every length bounded by the file ([`crate::cmd::dump::rdb::read`]) and
//! refuses the start with one line.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicU8, Ordering};
use std::time::Instant;

use crate::cmd::dump::rdb::{self, RdbKey, RdbSummary, RdbWriter};
use crate::config::Config;
use crate::keyspace::Keys;
use crate::state::Shared;
use crate::value::Value;

/// The state of saves (INFO persistence, LASTSAVE, the `save` schedule).
#[derive(Debug)]
pub struct RdbState {
    /// When the last save succeeded (or the server started), seconds since the
    /// epoch: LASTSAVE.
    pub last_save: AtomicU64,
    /// A BGSAVE is writing.
    pub in_progress: AtomicBool,
    /// The last BGSAVE (or SAVE) succeeded.
    pub last_ok: AtomicBool,
    /// Changes to the keyspace since the last save (the loops add theirs each round).
    pub dirty: AtomicU64,
    /// When the running BGSAVE started, ms since the epoch.
    pub started_ms: AtomicU64,
    /// Seconds the last BGSAVE took (-1: none yet).
    pub last_secs: AtomicI64,
    /// Saves done (INFO `rdb_saves`).
    pub saves: AtomicU64,
    /// When the schedule was last looked at (ms): once a second.
    checked_ms: AtomicU64,
    /// When the last save failed (ms; 0: none): the schedule waits 5 s before it tries
    /// again, as Redis's.
    failed_ms: AtomicU64,
    /// What the server does with the file when it stops: [`ON_EXIT_SCHEDULE`] (save
    /// when a `save` schedule is set), [`ON_EXIT_SAVE`] or [`ON_EXIT_NOSAVE`].
    pub on_exit: AtomicU8,
}

/// At exit, save when a `save` schedule is set (SIGTERM, plain SHUTDOWN).
pub const ON_EXIT_SCHEDULE: u8 = 0;
/// At exit, save (SHUTDOWN SAVE).
pub const ON_EXIT_SAVE: u8 = 1;
/// At exit, do not save (SHUTDOWN NOSAVE).
pub const ON_EXIT_NOSAVE: u8 = 2;

impl RdbState {
    /// The state of a server started at `started_ms`.
    pub fn new(started_ms: u64) -> RdbState {
        RdbState {
            last_save: AtomicU64::new(started_ms / 1000),
            in_progress: AtomicBool::new(false),
            last_ok: AtomicBool::new(true),
            dirty: AtomicU64::new(0),
            started_ms: AtomicU64::new(0),
            last_secs: AtomicI64::new(-1),
            saves: AtomicU64::new(0),
            checked_ms: AtomicU64::new(0),
            failed_ms: AtomicU64::new(0),
            on_exit: AtomicU8::new(ON_EXIT_SCHEDULE),
        }
    }
}

/// The file: `dir` joined with `dbfilename`.
pub fn path(config: &Config) -> PathBuf {
    let get = |k: &str, d: &str| {
        config
            .compat
            .get(k)
            .cloned()
            .unwrap_or_else(|| d.to_string())
    };
    Path::new(&get("dir", ".")).join(get("dbfilename", "dump.rdb"))
}

/// The `save` schedule: (seconds, changes) pairs; empty: none.
pub fn schedule(config: &Config) -> Vec<(u64, u64)> {
    parse_schedule(config.compat.get("save").map_or("", String::as_str)).unwrap_or_default()
}

/// `save` as Redis reads it: pairs of seconds and changes, or nothing.
pub fn parse_schedule(text: &str) -> Option<Vec<(u64, u64)>> {
    let words: Vec<&str> = text.split_whitespace().collect();
    if !words.len().is_multiple_of(2) {
        return None;
    }
    words
        .chunks(2)
        .map(|p| Some((p[0].parse().ok()?, p[1].parse().ok()?)))
        .collect()
}

/// What a load found.
#[derive(Debug)]
pub struct Loaded {
    /// The file's summary (version, aux fields, function libraries).
    pub summary: RdbSummary,
    /// Keys dropped because their deadline had passed.
    pub expired: u64,
    /// Bytes read.
    pub bytes: u64,
}

/// Reads the file at `path` into `put` (keys whose deadline is past `now` are
/// dropped); Ok(None) when there is no file.
pub fn load(
    path: &Path,
    databases: usize,
    now: u64,
    hint: impl FnMut(usize, u64),
    mut put: impl FnMut(RdbKey),
) -> Result<Option<Loaded>, String> {
    let buf = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let mut expired = 0;
    let summary = rdb::read_with_hints(&buf, databases, hint, |k| {
        if k.expires_at != 0 && k.expires_at <= now {
            expired += 1;
        } else {
            put(k)
        }
    })
    .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Some(Loaded {
        summary,
        expired,
        bytes: buf.len() as u64,
    }))
}

/// One database's keys as a save writes them.
type DbKeys = (usize, Vec<(Vec<u8>, Value, u64)>);

/// The aux fields written at the head of every file.
fn write_head<W: Write>(w: &mut RdbWriter<W>, now_ms: u64, used_mem: usize) -> io::Result<()> {
    w.aux("redis-ver", b"7.2.0")?;
    w.aux("wirespeed-ver", env!("CARGO_PKG_VERSION").as_bytes())?;
    w.aux("redis-bits", b"64")?;
    w.aux("ctime", (now_ms / 1000).to_string().as_bytes())?;
    w.aux("used-mem", used_mem.to_string().as_bytes())?;
    w.aux("aof-base", b"0")
}

/// Writes `dbs` and the libraries `codes` to `out` as one RDB file; the bytes.
pub fn write_to<W: Write>(
    out: W,
    dbs: &[DbKeys],
    codes: &[std::sync::Arc<[u8]>],
    now_ms: u64,
    used_mem: usize,
) -> io::Result<(W, u64)> {
    let version = rdb::version_for(
        !codes.is_empty(),
        dbs.iter().flat_map(|(_, keys)| keys.iter().map(|k| &k.1)),
    );
    let mut w = RdbWriter::new(out, version);
    write_head(&mut w, now_ms, used_mem)?;
    for code in codes {
        w.function(code)?;
    }
    for (db, keys) in dbs {
        let expires = keys.iter().filter(|k| k.2 != 0).count() as u64;
        w.select_db(*db, keys.len() as u64, expires)?;
        for (k, v, at) in keys {
            w.key(k, v, *at, None)?;
        }
    }
    w.finish()
}

/// Writes the file at `target` through a temporary file beside it, flushed and
/// renamed over it; the bytes written.
fn write_file(
    target: &Path,
    dbs: &[DbKeys],
    codes: &[std::sync::Arc<[u8]>],
    now_ms: u64,
    used_mem: usize,
) -> io::Result<u64> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        "temp-{}-{}.rdb",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let written = (|| {
        // A file or link already there (a crash's leftover, or planted) is removed,
        // not written through: the temporary file is always a new one.
        let _ = fs::remove_file(&tmp);
        let file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        let (out, n) = write_to(BufWriter::new(file), dbs, codes, now_ms, used_mem)?;
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        fs::rename(&tmp, target)?;
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(n)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// The keyspace now, copied database by database, with every shard of every database
/// locked in `keys` (they stay locked to the end of the command's batch, as any
/// command's; a transaction holds them already).
fn copy_all(keys: &mut Keys, now: u64) -> Vec<DbKeys> {
    keys.lock_every_db();
    let per_db = keys.shards();
    let dbs = keys.keyspace().max_used() + 1;
    let mut out = Vec::new();
    for db in 0..dbs {
        let mut mine = Vec::new();
        for i in db * per_db..(db + 1) * per_db {
            let store = keys.shard_at(i);
            let mut cursor = 0;
            loop {
                cursor = store.scan_entries(cursor, usize::MAX, now, |k, e| {
                    mine.push((k.to_vec(), e.value.clone(), e.expires_at))
                });
                if cursor == 0 {
                    break;
                }
            }
        }
        if !mine.is_empty() {
            out.push((db, mine));
        }
    }
    out
}

/// What a finished save leaves: the time, a clean slate of changes, and the count.
fn saved(r: &RdbState, dirty_before: u64, now_ms: u64) {
    r.dirty.fetch_sub(
        dirty_before.min(r.dirty.load(Ordering::Relaxed)),
        Ordering::Relaxed,
    );
    r.last_ok.store(true, Ordering::Relaxed);
    r.failed_ms.store(0, Ordering::Relaxed);
    r.saves.fetch_add(1, Ordering::Relaxed);
    r.last_save.store(now_ms / 1000, Ordering::Relaxed);
}

fn failed(r: &RdbState, now_ms: u64) {
    r.last_ok.store(false, Ordering::Relaxed);
    r.failed_ms.store(now_ms.max(1), Ordering::Relaxed);
}

/// SAVE: the file written now, with every shard locked throughout; the bytes.
pub fn save(shared: &Shared, keys: &mut Keys, config: &Config, now_ms: u64) -> Result<u64, String> {
    if shared.rdb.in_progress.load(Ordering::Acquire) {
        return Err("ERR Background save already in progress".into());
    }
    let dirty = shared.rdb.dirty.load(Ordering::Relaxed);
    let dbs = copy_all(keys, now_ms);
    let used = keys.memory();
    let codes = crate::script::library::codes(&shared.scripts.libraries);
    let target = path(config);
    let r = write_file(&target, &dbs, &codes, now_ms, used);
    match r {
        Ok(n) => {
            saved(&shared.rdb, dirty, now_ms);
            eprintln!("kvs: DB saved on disk: {} ({n} bytes)", target.display());
            Ok(n)
        }
        Err(e) => {
            failed(&shared.rdb, now_ms);
            eprintln!("kvs: cannot save {}: {e}", target.display());
            Err(format!("ERR cannot save {}: {e}", target.display()))
        }
    }
}

/// The RDB file of the keyspace now, in memory (SYNC for a client that wants the
/// snapshot alone, `redis-cli --rdb`).
pub fn to_bytes(shared: &Shared, keys: &mut Keys, now_ms: u64) -> io::Result<Vec<u8>> {
    let dbs = copy_all(keys, now_ms);
    let used = keys.memory();
    let codes = crate::script::library::codes(&shared.scripts.libraries);
    write_to(Vec::new(), &dbs, &codes, now_ms, used).map(|(v, _)| v)
}

/// BGSAVE: the keyspace copied now (shards locked only for the copy), written on a
/// thread of its own. Err when one is already running.
pub fn bgsave(
    shared: &Shared,
    keys: &mut Keys,
    config: &Config,
    now_ms: u64,
) -> Result<(), String> {
    if shared.rdb.in_progress.swap(true, Ordering::AcqRel) {
        return Err("ERR Background save already in progress".into());
    }
    let started = Instant::now();
    shared.rdb.started_ms.store(now_ms, Ordering::Relaxed);
    let dirty = shared.rdb.dirty.load(Ordering::Relaxed);
    let dbs = copy_all(keys, now_ms);
    let used = keys.memory();
    let codes = crate::script::library::codes(&shared.scripts.libraries);
    let target = path(config);
    let state = std::sync::Arc::clone(&shared.rdb);
    let spawned = std::thread::Builder::new()
        .name("kvs-bgsave".into())
        .spawn(move || {
            let r = write_file(&target, &dbs, &codes, now_ms, used);
            drop(dbs);
            let end = wirespeed_util::time::unix_ms();
            match r {
                Ok(n) => {
                    saved(&state, dirty, now_ms);
                    eprintln!(
                        "kvs: background saving terminated with success: {} ({n} bytes, {} ms)",
                        target.display(),
                        started.elapsed().as_millis()
                    );
                }
                Err(e) => {
                    failed(&state, end);
                    eprintln!("kvs: background saving failed: {}: {e}", target.display());
                }
            }
            state
                .last_secs
                .store(started.elapsed().as_secs() as i64, Ordering::Relaxed);
            state.in_progress.store(false, Ordering::Release);
        });
    if let Err(e) = spawned {
        shared.rdb.in_progress.store(false, Ordering::Release);
        return Err(format!("ERR cannot start the background save: {e}"));
    }
    Ok(())
}

/// The save a stopping server makes (its loops have stopped): as [`RdbState::on_exit`]
/// says, after any BGSAVE running has finished. Err when the file could not be
/// written (the caller says so; the data is then only in the append-only log, if
/// any).
pub fn on_exit(shared: &Shared) -> Result<(), String> {
    let (config, _) = shared.config();
    let wanted = match shared.rdb.on_exit.load(Ordering::Relaxed) {
        ON_EXIT_SAVE => true,
        ON_EXIT_NOSAVE => false,
        _ => !schedule(&config).is_empty(),
    };
    if !wanted {
        return Ok(());
    }
    while shared.rdb.in_progress.load(Ordering::Acquire) {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let mut keys = Keys::new(&shared.keyspace);
    eprintln!("kvs: saving the final RDB snapshot before exiting");
    save(shared, &mut keys, &config, wirespeed_util::time::unix_ms()).map(|_| ())
}

/// The `save` schedule, looked at once a second from a loop's round: a BGSAVE when a
/// pair's seconds have passed since the last save with at least its changes made
/// (after a failure, only once 5 s have passed, as Redis).
pub fn maybe_scheduled(shared: &Shared, now_ms: u64) {
    let r = &shared.rdb;
    let last = r.checked_ms.load(Ordering::Relaxed);
    if now_ms < last + 1000
        || r.checked_ms
            .compare_exchange(last, now_ms, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
    {
        return;
    }
    let dirty = r.dirty.load(Ordering::Relaxed);
    if dirty == 0 || r.in_progress.load(Ordering::Acquire) {
        return;
    }
    let failed_ms = r.failed_ms.load(Ordering::Relaxed);
    if failed_ms != 0 && now_ms < failed_ms + 5000 {
        return;
    }
    let (config, _) = shared.config();
    let since = (now_ms / 1000).saturating_sub(r.last_save.load(Ordering::Relaxed));
    let due = schedule(&config)
        .iter()
        .any(|&(secs, changes)| dirty >= changes && since >= secs);
    if due {
        eprintln!("kvs: {dirty} changes in {since} seconds: saving");
        let mut keys = Keys::new(&shared.keyspace);
        if let Err(e) = bgsave(shared, &mut keys, &config, now_ms) {
            eprintln!("kvs: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedule_reads_as_redis_writes_it() {
        assert_eq!(
            parse_schedule("3600 1 300 100 60 10000"),
            Some(vec![(3600, 1), (300, 100), (60, 10000)])
        );
        assert_eq!(parse_schedule(""), Some(vec![]));
        assert_eq!(parse_schedule("3600"), None);
        assert_eq!(parse_schedule("a 1"), None);
        assert_eq!(parse_schedule("-1 1"), None);
    }

    #[test]
    fn a_file_is_written_whole_or_not_at_all() {
        let dir = std::env::temp_dir().join(format!("ws-snapshot-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let target = dir.join("dump.rdb");
        let dbs = vec![(0, vec![(b"k".to_vec(), Value::Str(b"v".to_vec()), 0)])];
        let n = write_file(&target, &dbs, &[], 1, 0).unwrap();
        assert_eq!(fs::metadata(&target).unwrap().len(), n);
        let mut got = Vec::new();
        let l = load(&target, 16, 2, |_, _| {}, |k| got.push(k))
            .unwrap()
            .unwrap();
        assert_eq!(l.summary.keys, 1);
        assert_eq!(got[0].key, b"k");
        // A directory that is not there: an error, and the old file stays.
        let bad = dir.join("missing").join("dump.rdb");
        assert!(write_file(&bad, &dbs, &[], 1, 0).is_err());
        assert!(load(&bad, 16, 2, |_, _| {}, |_| {}).unwrap().is_none());
        // No temporary file is left behind.
        let left: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from("dump.rdb")]);
        fs::remove_dir_all(&dir).unwrap();
    }
}
