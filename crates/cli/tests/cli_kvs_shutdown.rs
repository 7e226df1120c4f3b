//! SHUTDOWN through the real binary and redis-cli: the server exits 0 within a second,
//! its log flushed (a write just before it survives the restart), and the caller gets
//! no reply, as from Redis. SHUTDOWN ABORT with no shutdown under way is an error.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::{connect, kvs_serve, missing_client, temp};

#[test]
fn redis_cli_shutdown_stops_the_server_with_the_log_flushed() {
    if Command::new("redis-cli").arg("--version").output().is_err() {
        return missing_client("redis-cli");
    }
    let aof = temp("kvs-shutdown", "stop.aof");
    let _ = std::fs::remove_file(&aof);
    let path = aof.to_string_lossy().to_string();
    // everysec: only the flush at the stop makes the last write durable at once.
    let args = ["--port", "0", "--aof", &path, "--appendfsync", "everysec"];
    let (mut server, addr) = kvs_serve(&args);
    let mut c = connect(&addr);
    let _: () = redis::cmd("RPUSH")
        .arg("last")
        .arg("words")
        .query(&mut c)
        .unwrap();
    let e = redis::cmd("SHUTDOWN")
        .arg("ABORT")
        .query::<()>(&mut c)
        .unwrap_err();
    assert!(e.to_string().contains("No shutdown in progress"), "{e}");
    let (host, port) = addr.rsplit_once(':').unwrap();
    let out = Command::new("redis-cli")
        .args(["-h", host, "-p", port, "shutdown", "nosave"])
        .output()
        .expect("redis-cli");
    assert!(
        String::from_utf8_lossy(&out.stdout).trim().is_empty(),
        "no reply expected: {out:?}"
    );
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = server.0.try_wait().unwrap() {
            break s;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "the server did not stop"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
    assert!(
        t0.elapsed() < Duration::from_secs(1),
        "stopped in {:?}",
        t0.elapsed()
    );
    let (_server, addr) = kvs_serve(&args);
    let mut c = connect(&addr);
    let v: Vec<String> = redis::cmd("LRANGE")
        .arg("last")
        .arg(0)
        .arg(-1)
        .query(&mut c)
        .unwrap();
    assert_eq!(v, ["words"]);
}
