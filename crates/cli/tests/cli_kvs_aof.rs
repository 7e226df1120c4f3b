//! `wirespeed kvs serve` and `wirespeed kvs check-aof` as processes: the append-only log
//! is never shortened or rewritten unless the damage is a torn tail (whose bytes are
//! kept in a side file); a flipped byte mid-log or a foreign file stops the server with
//! exit status 2 and one line, the file unchanged; `check-aof` reports and `--fix`
//! keeps the valid prefix and moves the rest aside; a leftover `<log>.rewrite` is
//! removed at start.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{kvs_serve_start, temp, wirespeed, Killed};

/// Starts `kvs serve` on a free port with `aof`; returns the server, its address and
/// the stderr lines printed before it listened.
fn serve(aof: &Path) -> (Killed, String, Vec<String>) {
    let aof = aof.to_string_lossy();
    kvs_serve_start(&["--port", "0", "--appendfsync", "always", "--aof", &aof])
}

/// Runs `kvs serve` on `aof` expecting it not to start.
fn serve_refused(aof: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args(["kvs", "serve", "--port", "0", "--aof"])
        .arg(aof)
        .output()
        .expect("run the server")
}

fn connect(addr: &str) -> redis::Connection {
    redis::Client::open(format!("redis://{addr}/"))
        .and_then(|c| c.get_connection())
        .expect("connect")
}

fn key(i: usize) -> String {
    format!("key:{i:06}")
}

/// A fresh log at `name` holding `n` SETs (`key(i)` = `i`), written with
/// `appendfsync always` by one client in pipelines of 500, then the server SIGKILLed.
fn log_of(name: &str, n: usize) -> PathBuf {
    let aof = temp("kvs-aof", name);
    let _ = std::fs::remove_file(&aof);
    let (mut child, addr, _) = serve(&aof);
    let mut c = connect(&addr);
    for chunk in (0..n).collect::<Vec<_>>().chunks(500) {
        let mut p = redis::pipe();
        for &i in chunk {
            p.cmd("SET").arg(key(i)).arg(i).ignore();
        }
        let () = p.query(&mut c).expect("SET pipeline");
    }
    child.0.kill().expect("SIGKILL");
    let _ = child.0.wait();
    aof
}

/// Offsets of the records after the 16-byte header.
fn records(bytes: &[u8]) -> Vec<usize> {
    let mut at = 16;
    let mut out = Vec::new();
    while at + 8 <= bytes.len() {
        out.push(at);
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
        at += 8 + len as usize;
    }
    out
}

/// The side files `<aof>.<tag>-*`, their contents.
fn side_files(aof: &Path, tag: &str) -> Vec<Vec<u8>> {
    let prefix = format!(
        "{}.{tag}-",
        aof.file_name().expect("name").to_string_lossy()
    );
    let mut names: Vec<PathBuf> = std::fs::read_dir(aof.parent().expect("dir"))
        .expect("read dir")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect();
    names.sort();
    names
        .iter()
        .map(|p| std::fs::read(p).expect("read side file"))
        .collect()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn dbsize(c: &mut redis::Connection) -> usize {
    redis::cmd("DBSIZE").query(c).expect("DBSIZE")
}

/// Flips one byte in the middle of a 20,000-key log; returns the log, its bytes, the
/// offset and number of the damaged record.
fn flipped(name: &str) -> (PathBuf, Vec<u8>, usize, usize) {
    let aof = log_of(name, 20_000);
    let mut bytes = std::fs::read(&aof).expect("read log");
    let at = records(&bytes);
    assert_eq!(at.len(), 20_000);
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x20;
    std::fs::write(&aof, &bytes).expect("write log");
    let index = at.partition_point(|&a| a <= mid) - 1;
    (aof, bytes, at[index], index + 1)
}

#[test]
fn a_flipped_byte_mid_log_stops_the_server_with_one_line_and_the_file_unchanged() {
    let (aof, bytes, offset, record) = flipped("flip.aof");
    let out = serve_refused(&aof);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    for want in [
        aof.display().to_string(),
        format!("byte {offset} (record {record})"),
        format!("wirespeed kvs check-aof {} --fix", aof.display()),
    ] {
        assert!(err.contains(&want), "'{want}' missing from: {err}");
    }
    assert_eq!(std::fs::read(&aof).expect("read log"), bytes);
    assert!(side_files(&aof, "torn").is_empty());
    assert!(side_files(&aof, "corrupt").is_empty());
}

#[test]
fn check_aof_reports_and_fix_keeps_the_prefix() {
    let (aof, bytes, offset, record) = flipped("fix.aof");
    let path = aof.to_string_lossy().to_string();
    let out = wirespeed(&["kvs", "check-aof", &path]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    for want in [
        "wirespeed log version 1".to_string(),
        format!("valid records: {}", record - 1),
        format!("record {record} at byte {offset}"),
        format!(
            "from it to the end: {} bytes; {} valid records found after it",
            bytes.len() - offset,
            20_000 - record
        ),
    ] {
        assert!(report.contains(&want), "'{want}' missing from: {report}");
    }
    assert_eq!(
        std::fs::read(&aof).expect("read log"),
        bytes,
        "check changed the file"
    );
    let out = wirespeed(&["kvs", "check-aof", &path, "--fix"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("fixed: kept"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(
        std::fs::read(&aof).expect("read log"),
        bytes[..offset].to_vec()
    );
    assert_eq!(side_files(&aof, "corrupt"), vec![bytes[offset..].to_vec()]);
    let out = wirespeed(&["kvs", "check-aof", &path]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("verdict: whole"));
    // The server starts with the prefix's keys.
    let (_child, addr, _) = serve(&aof);
    let mut c = connect(&addr);
    assert_eq!(dbsize(&mut c), record - 1);
    let first: Option<usize> = redis::cmd("GET").arg(key(0)).query(&mut c).expect("GET");
    let last: Option<usize> = redis::cmd("GET")
        .arg(key(record - 2))
        .query(&mut c)
        .expect("GET");
    let cut: Option<usize> = redis::cmd("GET")
        .arg(key(record - 1))
        .query(&mut c)
        .expect("GET");
    assert_eq!((first, last, cut), (Some(0), Some(record - 2), None));
}

#[test]
fn foreign_files_are_refused_and_left_unchanged() {
    let resp = b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n";
    let plain = b"# notes\nnot a log at all\n";
    for (name, bytes, what) in [
        ("redis.aof", &resp[..], "looks like a Redis AOF (RESP text)"),
        ("notes.txt", &plain[..], "a text file"),
    ] {
        let f = temp("kvs-aof", name);
        std::fs::write(&f, bytes).expect("write");
        let out = serve_refused(&f);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            err.contains("not a wirespeed log") && err.contains(what),
            "{err}"
        );
        let path = f.to_string_lossy().to_string();
        let check = wirespeed(&["kvs", "check-aof", &path]);
        assert_eq!(check.status.code(), Some(2));
        assert!(
            text(&check.stdout).contains(what),
            "{}",
            text(&check.stdout)
        );
        let fix = wirespeed(&["kvs", "check-aof", &path, "--fix"]);
        assert_eq!(fix.status.code(), Some(2));
        assert!(
            text(&fix.stderr).contains("--fix changed nothing"),
            "{}",
            text(&fix.stderr)
        );
        assert_eq!(
            std::fs::read(&f).expect("read"),
            bytes.to_vec(),
            "{name} changed"
        );
    }
}

#[test]
fn a_torn_tail_is_cut_and_its_bytes_kept() {
    let aof = log_of("torn.aof", 300);
    let whole = std::fs::read(&aof).expect("read log");
    // The first 30 bytes of a copy of the last record: a write cut by a crash.
    let last = *records(&whole).last().expect("records");
    let mut bytes = whole.clone();
    bytes.extend_from_slice(&whole[last..last + 30]);
    std::fs::write(&aof, &bytes).expect("write log");
    let (_child, addr, lines) = serve(&aof);
    let line = lines
        .iter()
        .find(|l| l.contains("torn tail"))
        .unwrap_or_else(|| panic!("no torn-tail line in {lines:?}"));
    assert!(
        line.contains(&format!("torn tail at byte {} (record 301)", whole.len())),
        "{line}"
    );
    assert!(line.contains("cut 30 bytes (1 partial record)"), "{line}");
    assert_eq!(
        side_files(&aof, "torn"),
        vec![bytes[whole.len()..].to_vec()]
    );
    assert_eq!(std::fs::read(&aof).expect("read log"), whole);
    let mut c = connect(&addr);
    assert_eq!(dbsize(&mut c), 300);
    let v: usize = redis::cmd("GET").arg(key(299)).query(&mut c).expect("GET");
    assert_eq!(v, 299);
}

#[test]
fn check_aof_exit_codes() {
    let aof = log_of("whole.aof", 50);
    let path = aof.to_string_lossy().to_string();
    let out = wirespeed(&["kvs", "check-aof", &path]);
    assert_eq!(out.status.code(), Some(0));
    let report = text(&out.stdout);
    assert!(
        report.contains("valid records: 50") && report.contains("verdict: whole"),
        "{report}"
    );
    let out = wirespeed(&["kvs", "check-aof", &path, "--fix"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("nothing to fix"));
    // An old headerless log: exit 2; --fix upgrades it.
    let bytes = std::fs::read(&aof).expect("read log");
    let old = temp("kvs-aof", "old.aof");
    std::fs::write(&old, &bytes[16..]).expect("write");
    let old_path = old.to_string_lossy().to_string();
    let out = serve_refused(&old);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("old wirespeed log without a header"));
    let out = wirespeed(&["kvs", "check-aof", &old_path]);
    assert_eq!(out.status.code(), Some(2));
    let out = wirespeed(&["kvs", "check-aof", &old_path, "--fix"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("header added, kept 50 records"));
    assert_eq!(std::fs::read(&old).expect("read"), bytes);
    // A missing file: an input that cannot be read, exit 2.
    let missing = temp("kvs-aof", "missing.aof");
    let out = wirespeed(&["kvs", "check-aof", &missing.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stderr).trim_end().lines().count(), 1);
}

#[test]
fn a_leftover_rewrite_file_is_removed_at_start_and_the_data_kept() {
    let aof = log_of("stale.aof", 1_000);
    let mut stale = aof.clone().into_os_string();
    stale.push(".rewrite");
    let stale = PathBuf::from(stale);
    // Half a snapshot, as a kill during a rewrite leaves it.
    let bytes = std::fs::read(&aof).expect("read log");
    std::fs::write(&stale, &bytes[..bytes.len() / 3]).expect("write");
    let (_child, addr, lines) = serve(&aof);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("removed") && l.contains(&stale.display().to_string())),
        "{lines:?}"
    );
    assert!(!stale.exists());
    let mut c = connect(&addr);
    assert_eq!(dbsize(&mut c), 1_000);
    let v: usize = redis::cmd("GET").arg(key(999)).query(&mut c).expect("GET");
    assert_eq!(v, 999);
}

/// A log is a regular file: a device (which reports 0 bytes) is not called an empty log,
/// and a directory is not checked by its reported size; both exit 2 in one line.
#[test]
fn check_aof_refuses_what_is_not_a_regular_file() {
    let dir = temp("kvs-aof", "a-directory");
    std::fs::create_dir_all(&dir).expect("directory");
    let mut paths = vec![dir.to_string_lossy().to_string()];
    if Path::new("/dev/zero").exists() {
        paths.push("/dev/zero".into());
    }
    for path in &paths {
        for fix in [false, true] {
            let mut args = vec!["kvs", "check-aof", path.as_str()];
            if fix {
                args.push("--fix");
            }
            let out = wirespeed(&args);
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
            assert!(!text(&out.stdout).contains("empty"), "{args:?}");
        }
    }
}

#[test]
fn list_changes_made_during_a_rewrite_are_replayed_once() {
    // A rewrite copies the keys a few thousand per round while clients write; a list
    // change logged while it runs must not be applied twice at replay (once in the
    // snapshot, once from the changes kept for after it).
    let aof = common::fresh_log("kvs-aof-rewrite");
    let args = common::durable_args(&aof);
    let lists = 64;
    let pushes = 40;
    {
        let (_server, addr) = common::kvs_serve(&args);
        let mut c = common::connect(&addr);
        let mut fill = redis::pipe();
        for i in 0..60_000 {
            fill.cmd("SET").arg(format!("filler:{i}")).arg("x").ignore();
        }
        fill.query::<()>(&mut c).unwrap();
        common::cmd(&mut c, &["BGREWRITEAOF"]);
        for round in 0..pushes {
            let mut p = redis::pipe();
            for l in 0..lists {
                p.cmd("RPUSH").arg(format!("list:{l}")).arg(round).ignore();
            }
            p.cmd("LPOP").arg("list:0").ignore();
            p.cmd("RPUSH").arg("list:0").arg(round).ignore();
            p.query::<()>(&mut c).unwrap();
        }
        // Wait for the rewrite to end (INFO persistence).
        for _ in 0..500 {
            let info: String = redis::cmd("INFO").arg("persistence").query(&mut c).unwrap();
            if info.contains("aof_rewrite_in_progress:0") {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
    let (_server, addr) = common::kvs_serve(&args);
    let mut c = common::connect(&addr);
    for l in 0..lists {
        let n: i64 = redis::cmd("LLEN")
            .arg(format!("list:{l}"))
            .query(&mut c)
            .unwrap();
        assert_eq!(n, pushes, "list:{l}");
    }
}
