//! redis-py, the Python client, against `wirespeed kvs serve` in RESP2 and RESP3:
//! `redis_py_check.py` runs the string, expiry, keyspace, server, pipeline, error and
//! AUTH checks (the same script passes against a real Redis 7). Skipped, with a line
//! saying so, where `python3` or its `redis` package is missing; in CI that fails.

mod common;

use std::process::Command;

use common::{kvs_serve, missing_client, python3_runs};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/redis_py_check.py");

#[test]
fn redis_py_works_unchanged_in_resp2_and_resp3() {
    if !python3_runs("import redis") {
        missing_client("python3 with the redis package (redis-py)");
        return;
    }
    let (_open, addr) = kvs_serve(&["--port", "0"]);
    let (_locked, auth_addr) = kvs_serve(&["--port", "0", "--requirepass", "pw"]);
    let (host, port) = addr.rsplit_once(':').expect("host:port");
    let (_, auth_port) = auth_addr.rsplit_once(':').expect("host:port");
    let out = Command::new("python3")
        .arg(SCRIPT)
        .args([host, port, auth_port])
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "redis_py_check.py failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    assert!(stdout.contains("all checks passed"), "{stdout}");
    assert!(stdout.contains("RESP3 auth: ok"), "{stdout}");
}
