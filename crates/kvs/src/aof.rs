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
//! before it sends the replies of the writes that produced it, once per event-loop
//! round for all the writes that arrived together (group commit); with `everysec` it
//! writes every round and syncs at most once a second (a crash loses at most about a
//! second); with `no` it writes and leaves syncing to the kernel.
//!
//! Compaction (BGREWRITEAOF, or automatically once the log passes 64 MiB and twice its
//! size after the last rewrite): a snapshot of the keyspace is written to `<log>.rewrite`
//! 4,096 keys per event-loop round through the store's SCAN cursor (no fork, no long
//! pause), effects made meanwhile are kept aside and appended after the snapshot, and
//! the file is synced and renamed over the log. A failed rewrite leaves the old log in
//! use.

use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::store::Store;

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

/// An open log.
#[derive(Debug)]
pub struct Aof {
    file: File,
    path: PathBuf,
    policy: Fsync,
    pending: Vec<u8>,
    last_sync: Instant,
    unsynced: bool,
    /// Bytes in the log file.
    size: u64,
    /// Size right after the last rewrite (or at open).
    base_size: u64,
    rewrite: Option<Rewrite>,
}

/// A rewrite in progress: the snapshot goes to a temporary file a few thousand keys
/// per event-loop round (via the store's SCAN cursor, so no round blocks for long and
/// nothing forks), while every new effect is also kept in `tail`; when the scan is
/// complete, `tail` follows the snapshot and the file replaces the log.
#[derive(Debug)]
struct Rewrite {
    file: File,
    tmp: PathBuf,
    cursor: u64,
    tail: Vec<u8>,
}

/// Rewrite automatically once the log is this big and has doubled since the last one.
pub const AUTO_REWRITE_MIN: u64 = 64 << 20;

impl Aof {
    /// Opens (or creates) the log at `path`, replays it into `store` and truncates a
    /// torn tail.
    pub fn open(
        path: &Path,
        policy: Fsync,
        store: &mut Store,
        now: u64,
    ) -> io::Result<(Aof, LoadReport)> {
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
                apply(store, &e, now);
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
            Aof {
                file,
                path: path.to_path_buf(),
                policy,
                pending: Vec::new(),
                last_sync: Instant::now(),
                unsynced: false,
                size: good,
                base_size: good,
                rewrite: None,
            },
            report,
        ))
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Queues one effect (written by the next [`Aof::commit`]).
    pub fn append(&mut self, e: &Effect) {
        encode(e, &mut self.pending);
        if let Some(rw) = &mut self.rewrite {
            encode(e, &mut rw.tail);
        }
    }

    /// Bytes in the log file.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// True while a rewrite runs.
    pub fn rewriting(&self) -> bool {
        self.rewrite.is_some()
    }

    /// True when the log is due for an automatic rewrite.
    pub fn wants_rewrite(&self) -> bool {
        self.rewrite.is_none() && self.size >= AUTO_REWRITE_MIN.max(2 * self.base_size)
    }

    /// Starts a rewrite (no-op while one runs).
    pub fn start_rewrite(&mut self) -> io::Result<()> {
        if self.rewrite.is_some() {
            return Ok(());
        }
        let mut tmp = self.path.clone().into_os_string();
        tmp.push(".rewrite");
        let tmp = PathBuf::from(tmp);
        let file = File::create(&tmp)?;
        self.rewrite = Some(Rewrite {
            file,
            tmp,
            cursor: 0,
            tail: Vec::new(),
        });
        Ok(())
    }

    /// Drops a running rewrite (after an error): the old log stays as it is.
    pub fn abort_rewrite(&mut self) {
        if let Some(rw) = self.rewrite.take() {
            let _ = std::fs::remove_file(&rw.tmp);
        }
    }

    /// One step of a running rewrite: about `budget` keys of the snapshot; when the
    /// snapshot is complete, swaps the new log in. Call it after [`Aof::commit`] (the
    /// effects of the round are then in both files). Returns true when it finished.
    pub fn rewrite_step(&mut self, store: &Store, now: u64, budget: usize) -> io::Result<bool> {
        let Some(rw) = &mut self.rewrite else {
            return Ok(false);
        };
        let mut chunk = Vec::new();
        rw.cursor = store.scan_entries(rw.cursor, budget, now, |key, e| {
            encode(
                &Effect::Set {
                    key: key.to_vec(),
                    value: e.value.clone(),
                    expires_at: e.expires_at,
                },
                &mut chunk,
            );
        });
        rw.file.write_all(&chunk)?;
        if rw.cursor != 0 {
            return Ok(false);
        }
        // Snapshot complete: the tail, then the swap.
        let Some(mut rw) = self.rewrite.take() else {
            return Ok(false);
        };
        rw.file.write_all(&rw.tail)?;
        rw.file.sync_all()?;
        std::fs::rename(&rw.tmp, &self.path)?;
        if let Some(dir) = self.path.parent() {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            File::open(dir)?.sync_all()?;
        }
        self.file = OpenOptions::new().append(true).open(&self.path)?;
        self.size = self.file.metadata()?.len();
        self.base_size = self.size;
        Ok(true)
    }

    /// True when effects wait to be written.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// The sync policy.
    pub fn policy(&self) -> Fsync {
        self.policy
    }

    /// Changes the sync policy (CONFIG SET appendfsync); takes effect at the next
    /// commit.
    pub fn set_policy(&mut self, policy: Fsync) {
        self.policy = policy;
    }

    /// Writes what is queued and syncs as the policy says (`force`: sync now whatever
    /// the policy, for shutdown).
    pub fn commit(&mut self, force: bool) -> io::Result<()> {
        if !self.pending.is_empty() {
            self.file.write_all(&self.pending)?;
            self.size += self.pending.len() as u64;
            self.pending.clear();
            self.unsynced = true;
        }
        let due = match self.policy {
            Fsync::Always => true,
            Fsync::EverySec => self.last_sync.elapsed() >= Duration::from_secs(1),
            Fsync::No => false,
        };
        if self.unsynced && (due || force) {
            self.file.sync_data()?;
            self.unsynced = false;
            self.last_sync = Instant::now();
        }
        Ok(())
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

    /// A fresh log at `path` holding `effects()`, committed.
    fn write_log(path: &Path, policy: Fsync) {
        let mut store = Store::new();
        let (mut aof, rep) =
            Aof::open(path, policy, &mut store, 0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(rep, LoadReport::default());
        for e in effects() {
            aof.append(&e);
        }
        aof.commit(true).unwrap_or_else(|e| panic!("{e}"));
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
        let (_aof, rep) =
            Aof::open(&path, Fsync::Always, &mut store, 1_000).unwrap_or_else(|e| panic!("{e}"));
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
        let _ = Aof::open(&path2, Fsync::No, &mut store, 1_000).unwrap_or_else(|e| panic!("{e}"));
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
        let (_a, rep) =
            Aof::open(&path, Fsync::Always, &mut store, 0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(rep.records, 1);
        assert_eq!(rep.trimmed as usize, bytes.len() - first);
        assert_eq!(store.len(), 1);
    }

    #[test]
    fn a_rewrite_compacts_and_keeps_writes_made_during_it() {
        let path = temp("rewrite.aof");
        let mut store = Store::new();
        let (mut aof, _) =
            Aof::open(&path, Fsync::No, &mut store, 0).unwrap_or_else(|e| panic!("{e}"));
        let log = |aof: &mut Aof, store: &mut Store, e: Effect| {
            apply(store, &e, 0);
            aof.append(&e);
        };
        // 200 keys, each overwritten 20 times: a long log for a small keyspace.
        for round in 0..20u32 {
            for k in 0..200u32 {
                let e = Effect::Set {
                    key: format!("k{k}").into_bytes(),
                    value: format!("v{round}").into_bytes(),
                    expires_at: 0,
                };
                log(&mut aof, &mut store, e);
            }
        }
        aof.commit(true).unwrap_or_else(|e| panic!("{e}"));
        let before = aof.size();
        aof.start_rewrite().unwrap_or_else(|e| panic!("{e}"));
        let mut step = 0u32;
        loop {
            // Writes between steps: a new key, a change, a delete.
            log(
                &mut aof,
                &mut store,
                Effect::Set {
                    key: format!("new{step}").into_bytes(),
                    value: b"n".to_vec(),
                    expires_at: 0,
                },
            );
            log(
                &mut aof,
                &mut store,
                Effect::Set {
                    key: format!("k{step}").into_bytes(),
                    value: b"changed".to_vec(),
                    expires_at: 0,
                },
            );
            log(
                &mut aof,
                &mut store,
                Effect::Del {
                    key: format!("k{}", 199 - step).into_bytes(),
                },
            );
            aof.commit(false).unwrap_or_else(|e| panic!("{e}"));
            step += 1;
            if aof
                .rewrite_step(&store, 0, 16)
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
            &mut aof,
            &mut store,
            Effect::Set {
                key: b"after".to_vec(),
                value: b"a".to_vec(),
                expires_at: 0,
            },
        );
        aof.commit(true).unwrap_or_else(|e| panic!("{e}"));
        let mut replayed = Store::new();
        let _ = Aof::open(&path, Fsync::No, &mut replayed, 0).unwrap_or_else(|e| panic!("{e}"));
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
