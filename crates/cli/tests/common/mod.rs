//! Helpers shared by the CLI tests.

// Not every test binary uses every helper.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// Runs the built `wirespeed` binary.
pub fn wirespeed(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args(args)
        .output()
        .expect("run wirespeed")
}

/// A path in a per-process temporary directory for the test group `group`.
/// The first call in a process removes the directories left by test processes that
/// have ended, so runs do not pile up in the temporary directory.
pub fn temp(group: &str, name: &str) -> PathBuf {
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(sweep_ended_runs);
    let dir = std::env::temp_dir().join(format!("wirespeed-cli-{group}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

/// Removes `wirespeed-cli-*-PID` directories whose process no longer runs.
fn sweep_ended_runs() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(rest) = name.strip_prefix("wirespeed-cli-") else {
            continue;
        };
        // Only `GROUP-PID` where GROUP's words are not numbers: other tests' names
        // carry more numbers (and clean up after themselves).
        let Some((group, pid)) = rest.rsplit_once('-') else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        if group
            .split('-')
            .any(|w| w.is_empty() || w.bytes().all(|b| b.is_ascii_digit()))
        {
            continue;
        }
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// A child process killed on drop.
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `wirespeed kvs serve ARGS`; returns the server (killed on drop) and its address.
pub fn kvs_serve(args: &[&str]) -> (Killed, String) {
    let (child, addr, _) = kvs_serve_start(args);
    (child, addr)
}

/// [`kvs_serve`], with the lines the server wrote on stderr before the one that says
/// where it listens.
pub fn kvs_serve_start(args: &[&str]) -> (Killed, String, Vec<String>) {
    kvs_serve_teed(args, None)
}

/// [`kvs_serve_start`], with every line the server writes on stderr also appended to
/// `log` (when given), for a test to show when it fails.
pub fn kvs_serve_teed(
    args: &[&str],
    log: Option<&std::path::Path>,
) -> (Killed, String, Vec<String>) {
    let mut log = log.map(|p| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .expect("open the server's log")
    });
    let mut child = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args(["kvs", "serve"])
        .args(args)
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the server");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let mut before = Vec::new();
    let addr = loop {
        let line = lines.next().expect("a line").expect("read stderr");
        if let Some(f) = log.as_mut() {
            let _ = writeln!(f, "{line}");
        }
        if let Some(a) = line.strip_prefix("kvs: listening on ") {
            break a.to_string();
        }
        before.push(line);
    };
    // Keep draining stderr so the server never blocks on it.
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            if let Some(f) = log.as_mut() {
                let _ = writeln!(f, "{line}");
            }
        }
    });
    (Killed(child), addr, before)
}

/// A `redis` crate connection to a server at `addr` (host:port).
pub fn connect(addr: &str) -> redis::Connection {
    redis::Client::open(format!("redis://{addr}/"))
        .and_then(|c| c.get_connection())
        .expect("connect")
}

/// The fields of INFO `section`, by name.
pub fn info(
    con: &mut redis::Connection,
    section: &str,
) -> std::collections::HashMap<String, String> {
    let text: String = redis::cmd("INFO").arg(section).query(con).expect("INFO");
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.to_string(), v.trim().to_string()))
        .collect()
}

/// A numeric field of INFO `section`.
pub fn info_num(con: &mut redis::Connection, section: &str, field: &str) -> usize {
    info(con, section)
        .get(field)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("INFO {section} has no number {field}"))
}

/// The repository root (two levels above this crate).
pub fn repo_root() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

/// True when `python3 -c CHECK` runs and exits 0 (CHECK tests the version or imports
/// what a test needs).
pub fn python3_runs(check: &str) -> bool {
    Command::new("python3")
        .args(["-c", check])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The check of [`python3_runs`] for Python 3.9 or newer.
pub const PYTHON_3_9: &str = "import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)";

/// Says that a test was skipped and why, straight to stderr (past the test harness's
/// capture, so the skip shows).
pub fn skipped(why: &str) {
    let _ = writeln!(std::io::stderr(), "skipped: {why}");
}

/// A test skipped because a tool is missing: said, and added to this `cargo test` run's
/// tally, which the last test target (`zz_skipped`) counts in one line.
fn skipped_for_a_missing_tool(why: &str) {
    skipped(why);
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(skip_tally())
    {
        let _ = writeln!(f, "{why}");
    }
}

/// The tally of the skips of this `cargo test` run: one file per run, named by the
/// process that runs the test binaries one after another (cargo).
pub fn skip_tally() -> PathBuf {
    let run = std::os::unix::process::parent_id();
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("skipped-tests-{run}.log"))
}

/// True where the tests run in continuous integration (`CI` set to `true` or `1`),
/// where a missing real client is a failure, not a skip.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// A real client or peer program the test needs is missing: fails the test in CI
/// (`.ci/run` installs it), says the test was skipped elsewhere.
pub fn missing_client(what: &str) {
    assert!(
        !in_ci(),
        "{what} is required in CI (.ci/run installs it) and is missing"
    );
    skipped_for_a_missing_tool(&format!("{what} is not installed"));
}

/// For a command run with `--backend gpu`: true when it succeeded (a GPU is present and
/// its output should be checked); otherwise asserts the no-GPU failure is one error line
/// naming the GPU backend with exit status 1, says the GPU run was skipped, and returns
/// false.
#[allow(dead_code)] // not every test file runs a GPU command
pub fn ran_on_gpu(o: &Output, what: &str) -> bool {
    if o.status.success() {
        return true;
    }
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{what}: {err}");
    assert!(err.starts_with("error: GPU backend: "), "{what}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{what}: {err}");
    skipped(&format!("no GPU here, {what} checked only for its error"));
    false
}

/// Starts `wirespeed ARGS` and returns the first line of its standard error that
/// contains `needle` (None if none comes within `timeout`); the process is killed then.
pub fn first_stderr_line(
    args: &[&str],
    needle: &str,
    timeout: std::time::Duration,
) -> Option<String> {
    let mut child = Killed(
        Command::new(env!("CARGO_BIN_EXE_wirespeed"))
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start wirespeed"),
    );
    let err = child.0.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = std::time::Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) if line.contains(needle) => return Some(line),
            Ok(_) => continue,
            Err(_) => return None,
        }
    }
}

/// Sends one command; panics with the command and the error when it fails.
pub fn cmd(con: &mut redis::Connection, args: &[&str]) -> redis::Value {
    try_cmd(con, args).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

/// Sends one command.
pub fn try_cmd(con: &mut redis::Connection, args: &[&str]) -> redis::RedisResult<redis::Value> {
    let mut c = redis::cmd(args[0]);
    for a in &args[1..] {
        c.arg(*a);
    }
    c.query(con)
}

/// A bulk-string reply.
pub fn bulk(s: &str) -> redis::Value {
    redis::Value::BulkString(s.as_bytes().to_vec())
}

/// A fresh log's path for a durable server of test group `group`.
pub fn fresh_log(group: &str) -> String {
    let path = temp(group, "durable.aof");
    let _ = std::fs::remove_file(&path);
    path.to_string_lossy().into_owned()
}

/// A durable server's arguments: two event loops, the log at `aof` synced before
/// every reply to a write.
pub fn durable_args(aof: &str) -> [&str; 8] {
    [
        "--port",
        "0",
        "--threads",
        "2",
        "--aof",
        aof,
        "--appendfsync",
        "always",
    ]
}

/// A free TCP port on the loopback interface.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A Redis server without persistence, or None when redis-server is not installed.
pub fn redis_server() -> Option<(Killed, String)> {
    redis_server_on(None)
}

/// [`redis_server`], started on the configuration file `conf` when given.
pub fn redis_server_on(conf: Option<&std::path::Path>) -> Option<(Killed, String)> {
    redis_server_with(conf, &[])
}

/// [`redis_server_on`], with `extra` arguments last (they win: `--dir D` for a server
/// that saves and loads D/dump.rdb).
pub fn redis_server_with(
    conf: Option<&std::path::Path>,
    extra: &[&str],
) -> Option<(Killed, String)> {
    let port = free_port();
    let child = Command::new("redis-server")
        .args(conf)
        .args([
            "--port",
            &port.to_string(),
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .args(["--bind", "127.0.0.1"])
        .arg("--dir")
        .arg(std::env::temp_dir())
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let addr = format!("127.0.0.1:{port}");
    let killed = Killed(child);
    for _ in 0..200 {
        if std::net::TcpStream::connect(&addr).is_ok() {
            return Some((killed, addr));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!("redis-server did not start on {addr}");
}

/// The bytes a string of hexadecimal digit pairs spells.
pub fn unhex(h: &str) -> Vec<u8> {
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).expect("hex"))
        .collect()
}

/// A Redis and a wirespeed server (killed on drop) and a connection to each; None when
/// redis-server is not installed.
pub fn both() -> Option<([Killed; 2], redis::Connection, redis::Connection)> {
    let (redis, redis_addr) = redis_server()?;
    let (ws, ws_addr) = kvs_serve(&["--port", "0"]);
    let (theirs, ours) = (connect(&redis_addr), connect(&ws_addr));
    Some(([redis, ws], theirs, ours))
}

/// Sends each of `cases` to both servers; fails with every reply that differed.
pub fn same_replies(
    theirs: &mut redis::Connection,
    ours: &mut redis::Connection,
    cases: &[&[&str]],
) {
    let mut differ = Vec::new();
    for c in cases {
        let (t, o) = (try_cmd(theirs, c), try_cmd(ours, c));
        if format!("{t:?}") != format!("{o:?}") {
            differ.push(format!("{c:?}: redis {t:?}, ours {o:?}"));
        }
    }
    same(&differ);
}

/// Fails with every reply that differed.
pub fn same(differ: &[String]) {
    assert!(
        differ.is_empty(),
        "{} replies differ:\n{}",
        differ.len(),
        differ.join("\n")
    );
}

/// Waits (`secs` at most, polling every 50 ms) until `f` holds; panics naming `what`.
pub fn until(secs: u64, what: &str, mut f: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !f() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(secs),
            "timed out: {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// BGREWRITEAOF, then waits (10 s at most) until the rewrite has run and finished.
#[allow(dead_code)]
pub fn rewrite_log(con: &mut redis::Connection) {
    let _: String = redis::cmd("BGREWRITEAOF").query(con).expect("BGREWRITEAOF");
    until(10, "the log rewrite", || {
        let p = info(con, "persistence");
        p["aof_rewrite_in_progress"] == "0" && p["aof_rewrite_scheduled"] == "0"
    });
}
