//! The log's unit tests: replay, rewrite, framing, and the rules for damaged files.

use super::check::{check, fix, utc_stamp, Fixed};
use super::format::{header, header_of, scan_after, HEADER_LEN, SET, VERSION};
use super::*;
use crate::store::{Store, Value};
use std::fs::OpenOptions;
use std::time::{Duration, UNIX_EPOCH};

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
    assert_eq!(
        rep,
        LoadReport {
            created: true,
            ..LoadReport::default()
        }
    );
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
    // The Clear record is whole and applies; the torn Set is cut, its bytes saved.
    assert_eq!(rep.records, 6);
    assert_eq!(rep.trimmed as usize, cut - 9);
    assert!(store.is_empty());
    let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    assert_eq!(len, whole + 9);
    let torn = rep.torn.unwrap_or_else(|| panic!("no torn cut reported"));
    assert_eq!(
        (torn.offset, torn.record, torn.bytes),
        (whole + 9, 7, (cut - 9) as u64)
    );
    assert!(torn.partial);
    assert_eq!(read(&torn.side), extra[9..cut].to_vec());
    let name = torn.side.to_string_lossy().to_string();
    assert!(name.contains("replay.aof.torn-2"), "{name}");
    // Without the Clear: the keys, with the expired one dropped.
    let path2 = temp("replay2.aof");
    write_log(&path2, Fsync::No);
    let mut store = Store::new();
    let _ = open(&path2, Fsync::No, &mut store, 1_000);
    assert_eq!(store.get(b"a", 1_000).map(|e| e.expires_at), Some(9_000));
    assert_eq!(
        store.get(b"b", 1_000).map(|e| e.value.payload()),
        Some(1000)
    );
    assert!(store.get(b"old", 1_000).is_none());
    assert_eq!(store.len(), 2);
}

/// Opens `path` expecting a refusal; checks the file is unchanged.
fn refused(path: &Path) -> OpenError {
    let before = read(path);
    let mut store = Store::new();
    let Err(e) = Log::open(path, Fsync::Always, |e| apply(&mut store, &e, 0)) else {
        panic!("{} opened", path.display())
    };
    assert_eq!(read(path), before, "a refused file changed");
    e
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

/// Offsets of the records of a log of this version.
fn record_offsets(bytes: &[u8]) -> Vec<usize> {
    let mut at = HEADER_LEN as usize;
    let mut out = Vec::new();
    while at + 8 <= bytes.len() {
        out.push(at);
        at += 8 + u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
            as usize;
    }
    out
}

/// Side files `<path>.<tag>-*` next to `path`.
fn side_files(path: &Path, tag: &str) -> Vec<PathBuf> {
    let name = format!(
        "{}.{tag}-",
        path.file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default()
    );
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{e}"))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&name))
        })
        .collect();
    out.sort();
    out
}

#[test]
fn a_flipped_bit_mid_log_is_refused_and_the_file_kept() {
    let path = temp("flip.aof");
    write_log(&path, Fsync::Always);
    let mut bytes = read(&path);
    let at = record_offsets(&bytes);
    assert_eq!(at.len(), 5);
    // Inside the second record's payload.
    bytes[at[1] + 20] ^= 1;
    write(&path, &bytes);
    match refused(&path) {
        OpenError::Damaged(b) => {
            assert_eq!((b.offset, b.record), (at[1] as u64, 2));
            assert!(
                matches!(b.problem, Problem::Checksum { .. }),
                "{:?}",
                b.problem
            );
            assert_eq!(b.rest, (bytes.len() - at[1]) as u64);
            assert_eq!(b.after.first, Some(at[2] as u64));
            assert!(!b.torn());
        }
        e => panic!("{e}"),
    }
    // The message names where, what, and the repair command.
    let msg = refused(&path).message(&path);
    assert!(msg.contains(&format!("byte {} (record 2)", at[1])), "{msg}");
    assert!(msg.contains("checksum mismatch"), "{msg}");
    assert!(
        msg.contains(&format!("wirespeed kvs check-aof {} --fix", path.display())),
        "{msg}"
    );
    assert!(!msg.contains('\n'), "{msg}");
    // A flipped length bit that makes the record run past the end: incomplete, but
    // valid records follow, so it is not a torn tail either.
    let mut bytes = read(&path);
    bytes[at[1]] ^= 1;
    bytes[at[1] + 20] ^= 1;
    bytes[at[1] + 3] ^= 0x10;
    write(&path, &bytes);
    match refused(&path) {
        OpenError::Damaged(b) => {
            assert!(b.problem.incomplete(), "{:?}", b.problem);
            assert_eq!(b.after.first, Some(at[2] as u64));
        }
        e => panic!("{e}"),
    }
}

#[test]
fn a_bad_final_record_that_is_complete_is_refused() {
    let path = temp("final.aof");
    write_log(&path, Fsync::Always);
    let mut bytes = read(&path);
    let at = record_offsets(&bytes);
    let last = *at.last().unwrap_or(&0);
    *bytes.last_mut().unwrap_or_else(|| panic!("empty")) ^= 0x40;
    write(&path, &bytes);
    match refused(&path) {
        OpenError::Damaged(b) => {
            assert_eq!((b.offset, b.record), (last as u64, 5));
            assert!(!b.problem.incomplete());
            assert_eq!(b.after.records, 0);
            assert!(!b.torn());
        }
        e => panic!("{e}"),
    }
    // A complete record with a good checksum that does not decode: refused too.
    let mut bytes = read(&path);
    bytes.truncate(last);
    let payload = [9u8, 1, 2, 3];
    bytes.extend_from_slice(&4u32.to_le_bytes());
    bytes.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    bytes.extend_from_slice(&payload);
    write(&path, &bytes);
    match refused(&path) {
        OpenError::Damaged(b) => assert_eq!((b.record, b.problem), (5, Problem::Undecodable)),
        e => panic!("{e}"),
    }
}

#[test]
fn a_zero_filled_tail_is_cut_and_saved() {
    let path = temp("zeros.aof");
    write_log(&path, Fsync::Always);
    let whole = read(&path);
    let mut bytes = whole.clone();
    bytes.extend_from_slice(&[0u8; 4096]);
    write(&path, &bytes);
    let mut store = Store::new();
    let (_log, rep) = open(&path, Fsync::Always, &mut store, 0);
    assert_eq!(rep.records, 5);
    assert_eq!(read(&path), whole);
    let torn = rep.torn.unwrap_or_else(|| panic!("no cut"));
    assert_eq!(
        (torn.offset, torn.record, torn.bytes),
        (whole.len() as u64, 6, 4096)
    );
    assert!(!torn.partial);
    assert_eq!(read(&torn.side), vec![0u8; 4096]);
    // Zeros and then a valid record: not a torn tail.
    let mut bytes = whole.clone();
    bytes.extend_from_slice(&[0u8; 100]);
    encode(&Effect::Clear, &mut bytes);
    write(&path, &bytes);
    match refused(&path) {
        OpenError::Damaged(b) => {
            assert_eq!(b.after.first, Some(whole.len() as u64 + 100));
            assert!(!b.zero_rest);
        }
        e => panic!("{e}"),
    }
}

#[test]
fn a_new_log_starts_with_the_header_and_a_rewrite_keeps_it() {
    let h = header();
    assert_eq!(&h[..8], b"\x89WSAOF\r\n");
    assert_eq!(h[8..12], VERSION.to_le_bytes());
    assert_eq!(h[12..], crc32fast::hash(&h[..12]).to_le_bytes());
    let path = temp("header.aof");
    let mut store = Store::new();
    let (log, rep) = open(&path, Fsync::Always, &mut store, 0);
    assert!(rep.created);
    assert_eq!(read(&path), h.to_vec());
    assert_eq!(log.size(), HEADER_LEN);
    log.append(&mut effects());
    log.flush_all().unwrap_or_else(|e| panic!("{e}"));
    log.start_rewrite(Vec::new)
        .unwrap_or_else(|e| panic!("{e}"));
    while !log
        .rewrite_step(16, |c, budget, f| {
            store.scan_entries(c, budget, 0, |k, e| f(0, k, e))
        })
        .unwrap_or_else(|e| panic!("{e}"))
    {}
    assert_eq!(read(&path)[..16], h);
    // A crash while the header was written: a prefix of it is completed, by --fix as
    // by opening.
    write(&path, &h[..5]);
    let (report, fixed) = fix(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.kind, Kind::TornHeader);
    assert!(
        matches!(
            fixed,
            Fixed::Rewritten {
                records: 0,
                side: None,
                ..
            }
        ),
        "{fixed:?}"
    );
    assert_eq!(read(&path), h.to_vec());
    write(&path, &h[..5]);
    let (_log, rep) = open(&path, Fsync::Always, &mut store, 0);
    assert!(rep.created);
    assert_eq!(read(&path), h.to_vec());
}

#[test]
fn foreign_files_are_refused_and_kept() {
    let path = temp("foreign.aof");
    let cases: [(&[u8], &str); 5] = [
        (
            b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n",
            "Redis AOF (RESP text)",
        ),
        (b"REDIS0011\xfa\x09redis-ver", "Redis RDB"),
        (b"hello, world\nsecond line \xc3\xa9\n", "a text file"),
        (
            b"\x7fELF\x02\x01\x01\x00\x00\x00",
            "unknown binary header (first bytes 7f 45 4c 46",
        ),
        (&[0u8; 64], "unknown binary header"),
    ];
    for (bytes, what) in cases {
        write(&path, bytes);
        match refused(&path) {
            OpenError::Foreign(x) => assert!(x.to_string().contains(what), "{x} for {what}"),
            e => panic!("{what}: {e}"),
        }
        let msg = refused(&path).message(&path);
        assert!(
            msg.contains("not a wirespeed log") && msg.contains("unchanged"),
            "{msg}"
        );
    }
    // Another version, a damaged header, a header cut short.
    let mut v2 = header_of(2).to_vec();
    encode(&Effect::Clear, &mut v2);
    write(&path, &v2);
    assert!(matches!(refused(&path), OpenError::Version(2)));
    let msg = refused(&path).message(&path);
    assert!(
        msg.contains("version 2, this build reads version 1"),
        "{msg}"
    );
    let mut bad = header().to_vec();
    bad[13] ^= 1;
    write(&path, &bad);
    assert!(matches!(refused(&path), OpenError::BadHeader));
    write(&path, &header_of(2)[..12]);
    assert!(matches!(refused(&path), OpenError::BadHeader));
    // check-aof says what each is, and --fix leaves them alone.
    write(&path, b"*1\r\n$4\r\nPING\r\n");
    let report = check(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.kind, Kind::Foreign(Foreign::RedisAof));
    assert!(!report.whole());
    assert!(matches!(fix(&path), Err(check::FixError::Refused(_))));
    assert_eq!(read(&path), b"*1\r\n$4\r\nPING\r\n".to_vec());
}

#[test]
fn an_old_headerless_log_is_refused_then_upgraded_by_fix() {
    let path = temp("old.aof");
    let mut old = Vec::new();
    for e in effects() {
        encode(&e, &mut old);
    }
    write(&path, &old);
    assert!(matches!(refused(&path), OpenError::Headerless));
    let msg = refused(&path).message(&path);
    assert!(
        msg.contains("old wirespeed log without a header") && msg.contains("--fix"),
        "{msg}"
    );
    let report = check(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.kind, Kind::Headerless);
    assert_eq!(report.records.as_ref().map(|r| r.records), Some(5));
    let (_, fixed) = fix(&path).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        matches!(
            fixed,
            Fixed::Rewritten {
                records: 5,
                side: None,
                upgraded: true,
                ..
            }
        ),
        "{fixed:?}"
    );
    let mut want = header().to_vec();
    want.extend_from_slice(&old);
    assert_eq!(read(&path), want);
    let mut store = Store::new();
    let (_log, rep) = open(&path, Fsync::Always, &mut store, 1_000);
    assert_eq!(rep.records, 5);
    assert_eq!(store.len(), 2);
}

#[test]
fn check_counts_the_records_after_damage_and_fix_keeps_the_prefix() {
    let path = temp("check.aof");
    let mut store = Store::new();
    let (log, _) = open(&path, Fsync::No, &mut store, 0);
    for i in 0..1000u32 {
        log.append(&mut vec![Effect::Set {
            key: format!("key{i}").into_bytes(),
            value: vec![b'v'; (i % 50) as usize],
            expires_at: 0,
        }]);
    }
    log.flush_all().unwrap_or_else(|e| panic!("{e}"));
    drop(log);
    let whole = read(&path);
    let at = record_offsets(&whole);
    assert_eq!(at.len(), 1000);
    let report = check(&path).unwrap_or_else(|e| panic!("{e}"));
    assert!(report.whole());
    // Record 400's tag byte flipped: 600 valid records after it.
    let mut bytes = whole.clone();
    bytes[at[399] + 8] ^= 0x80;
    write(&path, &bytes);
    let report = check(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(read(&path), bytes, "check changed the file");
    let b = report.bad().unwrap_or_else(|| panic!("no bad record"));
    assert_eq!((b.offset, b.record), (at[399] as u64, 400));
    assert_eq!(b.after.records, 600);
    assert_eq!(b.after.first, Some(at[400] as u64));
    assert!(!b.after.cut_short);
    let lines = report.lines(&path).join("\n");
    assert!(lines.contains("valid records: 399"), "{lines}");
    assert!(
        lines.contains(&format!("record 400 at byte {}", at[399])),
        "{lines}"
    );
    assert!(
        lines.contains("600 valid records found after it"),
        "{lines}"
    );
    // --fix: the prefix stays, the rest goes to the side file.
    let (_, fixed) = fix(&path).unwrap_or_else(|e| panic!("{e}"));
    let Fixed::Rewritten {
        records: 399,
        side: Some((side, n)),
        upgraded: false,
        ..
    } = fixed
    else {
        panic!("{fixed:?}")
    };
    assert_eq!(n as usize, bytes.len() - at[399]);
    assert_eq!(read(&side), bytes[at[399]..].to_vec());
    assert_eq!(read(&path), bytes[..at[399]].to_vec());
    assert!(!with_tmp(&path).exists());
    let mut store = Store::new();
    let (_log, rep) = open(&path, Fsync::No, &mut store, 0);
    assert_eq!((rep.records, store.len()), (399, 399));
    // --fix on a torn tail cuts it as the server does.
    let mut bytes = read(&path);
    bytes.extend_from_slice(&whole[at[399]..at[399] + 10]);
    write(&path, &bytes);
    let before = side_files(&path, "torn").len();
    let (_, fixed) = fix(&path).unwrap_or_else(|e| panic!("{e}"));
    let Fixed::Trimmed(cut) = fixed else {
        panic!("{fixed:?}")
    };
    assert_eq!(read(&cut.side), whole[at[399]..at[399] + 10].to_vec());
    assert_eq!(side_files(&path, "torn").len(), before + 1);
    assert_eq!(read(&path).len(), at[399]);
}

fn with_tmp(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".fix-tmp");
    PathBuf::from(p)
}

#[test]
fn the_forward_scan_is_bounded() {
    // Every 17 bytes of 8 MiB, the start of a SET whose length runs to the end of the
    // file: each passes the shape check and costs a checksum over the rest of the file
    // (about 2 TB in all). The scan stops at its budget and says so.
    let path = temp("hostile.aof");
    let n = 8usize << 20;
    let mut bytes = vec![0u8; n];
    let mut q = 0;
    while q + 17 <= n {
        let len = (n - q - 8) as u32;
        bytes[q..q + 4].copy_from_slice(&len.to_le_bytes());
        bytes[q + 8] = SET;
        bytes[q + 13..q + 17].copy_from_slice(&(len - 17).to_le_bytes());
        q += 17;
    }
    write(&path, &bytes);
    let f = File::open(&path).unwrap_or_else(|e| panic!("{e}"));
    let t = std::time::Instant::now();
    let after = scan_after(&f, 0, n as u64, false).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(after.records, 0);
    assert!(after.cut_short);
    assert!(t.elapsed() < Duration::from_secs(60), "{:?}", t.elapsed());
}

#[test]
fn a_leftover_rewrite_file_is_removed_at_open() {
    let path = temp("stale.aof");
    write_log(&path, Fsync::Always);
    let stale = rewrite_path(&path);
    let mut half = header().to_vec();
    encode(&Effect::Clear, &mut half);
    write(&stale, &half);
    let mut store = Store::new();
    let (_log, rep) = open(&path, Fsync::Always, &mut store, 1_000);
    assert_eq!(
        rep.removed_rewrite,
        Some((stale.clone(), half.len() as u64))
    );
    assert!(!stale.exists());
    assert_eq!((rep.records, store.len()), (5, 2));
    // A refused log keeps its leftover too.
    write(&stale, &half);
    write(&path, b"text\n");
    let _ = refused(&path);
    assert!(stale.exists());
}

#[test]
fn timestamps_are_utc() {
    let at = |s: u64| utc_stamp(UNIX_EPOCH + Duration::from_secs(s));
    assert_eq!(at(0), "19700101T000000Z");
    assert_eq!(at(951_868_799), "20000229T235959Z");
    assert_eq!(at(1_795_615_501), "20261125T140501Z");
    assert_eq!(at(4_107_542_400), "21000301T000000Z");
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
    aof.start_rewrite(Vec::new)
        .unwrap_or_else(|e| panic!("{e}"));
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
            .rewrite_step(16, |c, budget, f| {
                store.scan_entries(c, budget, 0, |k, e| f(0, k, e))
            })
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
        *v = store
            .get(k, 0)
            .and_then(|e| e.value.as_str().map(<[u8]>::to_vec))
            .unwrap_or_default();
    }
    assert_eq!(replayed.len(), store.len());
    for (k, v) in want {
        assert_eq!(
            replayed.get(&k, 0).map(|e| e.value.clone()),
            Some(Value::Str(v))
        );
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

#[test]
fn changes_to_other_databases_round_trip_and_bad_wrappers_are_refused() {
    let swap = Effect::SwapDb { a: 3, b: 0 };
    let mut all: Vec<Effect> = effects()
        .into_iter()
        .chain([Effect::Clear])
        .map(|e| Effect::in_db(7, e))
        .collect();
    all.push(swap.clone());
    let function = Effect::Function(vec![b"FUNCTION".to_vec(), b"FLUSH".to_vec()]);
    assert_eq!(Effect::in_db(3, function.clone()), function);
    assert_eq!(function.key(), None);
    all.push(function);
    let position = Effect::Position {
        replid: b"0123456789abcdef0123456789abcdef01234567".to_vec(),
        offset: 1 << 40,
    };
    assert_eq!(Effect::in_db(5, position.clone()), position);
    assert_eq!(position.key(), None);
    all.push(position.clone());
    all.push(Effect::GetAck);
    all.push(Effect::Batch(vec![
        Effect::in_db(2, Effect::Clear),
        swap.clone(),
        Effect::Del { key: b"k".to_vec() },
        position,
    ]));
    for e in all {
        let mut out = Vec::new();
        encode(&e, &mut out);
        assert_eq!(decode(&out[8..]), Some(e));
    }
    let wrapped = Effect::in_db(7, Effect::Del { key: b"k".to_vec() });
    assert_eq!(wrapped.db(), 7);
    assert_eq!(wrapped.key(), Some(&b"k"[..]));
    assert_eq!(Effect::in_db(0, Effect::Clear), Effect::Clear);
    assert_eq!(Effect::in_db(4, swap.clone()), swap);
    // Database 0 is never wrapped; a wrapper holds one plain change.
    let mut zero = vec![7u8, 0, 0, 0, 0];
    encode_payload_for_test(&Effect::Clear, &mut zero);
    assert_eq!(decode(&zero), None);
    for inner in [Effect::Batch(vec![]), swap, wrapped] {
        let mut bad = vec![7u8, 1, 0, 0, 0];
        encode_payload_for_test(&inner, &mut bad);
        assert_eq!(decode(&bad), None, "{inner:?} inside a wrapper");
    }
    // A truncated swap or wrapper is refused.
    assert_eq!(decode(&[8, 1, 0, 0, 0, 2]), None);
    assert_eq!(decode(&[7, 1, 0]), None);
}

/// The payload of `e` (its record without the framing).
fn encode_payload_for_test(e: &Effect, out: &mut Vec<u8>) {
    let mut framed = Vec::new();
    encode(e, &mut framed);
    out.extend_from_slice(&framed[8..]);
}

#[test]
fn a_transaction_is_one_record_replayed_whole_or_not_at_all() {
    let batch = Effect::Batch(effects());
    let mut out = Vec::new();
    encode(&batch, &mut out);
    assert_eq!(decode(&out[8..]), Some(batch.clone()));
    // A batch inside a batch is not a record this format writes.
    let mut nested = Vec::new();
    encode(&Effect::Batch(vec![batch.clone()]), &mut nested);
    assert_eq!(decode(&nested[8..]), None);
    // A count larger than the payload holds does not allocate it, and fails.
    let mut lying = vec![5u8];
    lying.extend_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(decode(&lying), None);

    // Replay: the batch's changes arrive one by one, in order; a torn batch (the
    // last record cut short) is cut whole, so none of its changes is applied.
    let path = temp("batch");
    let now = 1;
    {
        let mut store = Store::new();
        let (log, _) = open(&path, Fsync::Always, &mut store, now);
        let mut first = vec![Effect::Set {
            key: b"before".to_vec(),
            value: b"1".to_vec(),
            expires_at: 0,
        }];
        log.append(&mut first);
        log.append(&mut vec![batch]);
        log.commit_through(log.appended()).unwrap();
    }
    let mut store = Store::new();
    let (_log, report) = open(&path, Fsync::Always, &mut store, now);
    assert_eq!(report.records, 2);
    assert!(store.get(b"a", now).is_some() && store.get(b"before", now).is_some());

    let len = std::fs::metadata(&path).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(len - 3).unwrap();
    let mut store = Store::new();
    let (_log, report) = open(&path, Fsync::Always, &mut store, now);
    assert_eq!(report.records, 1);
    assert!(store.get(b"before", now).is_some());
    assert!(store.get(b"a", now).is_none() && store.get(b"b", now).is_none());
}
