//! `wirespeed kvs serve` on a full disk: the server stays up; writes get Redis's
//! `-MISCONF` while the append-only log cannot be written; reads keep working; a write
//! whose log record could not be written is not acknowledged until it is; once space
//! returns, the held reply is sent and writes are accepted again by themselves; and
//! after `kill -9` every acknowledged write is there and no refused one is.
//!
//! The test mounts a small tmpfs of its own (root and `mount` needed); where it cannot,
//! it says it was skipped.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{connect, kvs_serve, skipped, temp};

/// A tmpfs mounted for the test, unmounted on drop.
struct Mount(PathBuf);

impl Mount {
    fn new(dir: &Path, size: &str) -> Option<Mount> {
        std::fs::create_dir_all(dir).ok()?;
        let ok = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size}"),
                "wirespeed-test",
            ])
            .arg(dir)
            .output()
            .is_ok_and(|o| o.status.success());
        ok.then(|| Mount(dir.to_path_buf()))
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).output();
    }
}

/// Fills the file system of `dir` with `path` until a write fails, then gives back
/// `room` bytes.
fn fill(path: &Path, room: u64) {
    let mut f = std::fs::File::create(path).expect("filler");
    let block = vec![0xa5u8; 64 * 1024];
    while f.write_all(&block).is_ok() {}
    let _ = f.sync_all();
    let len = f.metadata().expect("filler size").len();
    f.set_len(len.saturating_sub(room))
        .expect("trim the filler");
}

/// One RESP SET, sent on a raw socket.
fn send_set(sock: &mut TcpStream, key: &str, value: &[u8]) {
    let mut req = format!(
        "*3\r\n$3\r\nSET\r\n${}\r\n{key}\r\n${}\r\n",
        key.len(),
        value.len()
    )
    .into_bytes();
    req.extend_from_slice(value);
    req.extend_from_slice(b"\r\n");
    sock.write_all(&req).expect("send SET");
}

/// The next reply line, or None when none comes within `wait`.
fn reply(sock: &mut TcpStream, wait: Duration) -> Option<String> {
    sock.set_read_timeout(Some(wait)).expect("timeout");
    let mut line = Vec::new();
    let mut b = [0u8; 1];
    while !line.ends_with(b"\r\n") {
        match sock.read(&mut b) {
            Ok(1) => line.push(b[0]),
            Ok(_) => panic!("the server closed the connection"),
            Err(e)
                if line.is_empty()
                    && (e.kind() == std::io::ErrorKind::WouldBlock
                        || e.kind() == std::io::ErrorKind::TimedOut) =>
            {
                return None
            }
            Err(e) => panic!("read: {e}"),
        }
    }
    Some(String::from_utf8_lossy(&line).trim_end().to_string())
}

#[test]
fn a_full_disk_refuses_writes_keeps_reads_and_recovers_by_itself() {
    let dir = temp("kvs-diskfull", "mnt");
    let Some(mount) = Mount::new(&dir, "4m") else {
        return skipped("cannot mount a tmpfs here (needs root): full-disk behaviour not checked");
    };
    let aof = mount.0.join("full.aof");
    let filler = mount.0.join("filler");
    let aof_arg = aof.to_string_lossy().into_owned();
    let (mut server, addr) =
        kvs_serve(&["--port", "0", "--aof", &aof_arg, "--appendfsync", "always"]);
    fill(&filler, 256 * 1024);
    // Write 1 KiB values until one is not acknowledged: its record did not fit.
    let mut writer = TcpStream::connect(&addr).expect("connect");
    let value = vec![b'w'; 1024];
    let mut acked = Vec::new();
    let held = loop {
        let key = format!("k{}", acked.len());
        send_set(&mut writer, &key, &value);
        match reply(&mut writer, Duration::from_millis(1500)) {
            Some(r) if r == "+OK" => acked.push(key),
            Some(r) => panic!("SET {key}: {r}"),
            None => break key,
        }
        assert!(acked.len() < 100_000, "the disk never filled");
    };
    assert!(acked.len() > 10, "only {} writes fitted", acked.len());
    // The server is up: reads work, writes (and PING, as in Redis) get MISCONF.
    let mut con = connect(&addr);
    let v: Vec<u8> = redis::cmd("GET")
        .arg(&acked[0])
        .query(&mut con)
        .expect("GET");
    assert_eq!(v, value);
    let refused = redis::cmd("SET")
        .arg("refused")
        .arg("x")
        .query::<()>(&mut con)
        .expect_err("a write on a full disk");
    assert_eq!(refused.code(), Some("MISCONF"), "{refused}");
    assert!(
        refused.to_string().contains("No space left on device"),
        "{refused}"
    );
    let info: String = redis::cmd("INFO")
        .arg("persistence")
        .query(&mut con)
        .expect("INFO");
    assert!(info.contains("aof_last_write_status:err"), "{info}");
    // The held write is still not acknowledged.
    assert_eq!(reply(&mut writer, Duration::from_millis(300)), None);
    // Space comes back: the held reply is sent, and writes are accepted again.
    std::fs::remove_file(&filler).expect("remove the filler");
    assert_eq!(
        reply(&mut writer, Duration::from_secs(5)).as_deref(),
        Some("+OK"),
        "the held write was not acknowledged once space returned"
    );
    acked.push(held);
    let start = Instant::now();
    loop {
        match redis::cmd("SET")
            .arg("after")
            .arg("a")
            .query::<()>(&mut con)
        {
            Ok(()) => break,
            Err(e) => {
                assert_eq!(e.code(), Some("MISCONF"), "{e}");
                assert!(
                    start.elapsed() < Duration::from_secs(5),
                    "writes never resumed"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
    acked.push("after".into());
    let info: String = redis::cmd("INFO")
        .arg("persistence")
        .query(&mut con)
        .expect("INFO");
    assert!(info.contains("aof_last_write_status:ok"), "{info}");
    // After kill -9: every acknowledged write, and not the refused one.
    server.0.kill().expect("SIGKILL");
    let _ = server.0.wait();
    let (_server, addr) = kvs_serve(&["--port", "0", "--aof", &aof_arg]);
    let mut con = connect(&addr);
    for k in &acked {
        let got: Option<Vec<u8>> = redis::cmd("GET").arg(k).query(&mut con).expect("GET");
        assert!(got.is_some(), "acknowledged {k} lost");
    }
    let got: Option<String> = redis::cmd("GET")
        .arg("refused")
        .query(&mut con)
        .expect("GET");
    assert_eq!(got, None, "a refused write came back");
    let keys: usize = redis::cmd("DBSIZE").query(&mut con).expect("DBSIZE");
    assert_eq!(keys, acked.len());
}
