//! TLS on the key-value server through real clients: `redis-cli --tls` and redis-py
//! `ssl=True` on `tls-port` (with `tls-auth-clients` yes and optional, a client of
//! an unknown authority refused, plaintext on the TLS port answered nothing), big
//! values both ways, a replica that follows its primary over TLS
//! (`tls-replication yes`) and one whose certificate the primary does not trust,
//! and the settings refused at start. The certificates are in `tests/data/tls`
//! (a test authority, valid for 127.0.0.1 and localhost).

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::{free_port, kvs_serve_teed, missing_client, python3_runs, temp, until, wirespeed};

fn data(name: &str) -> String {
    common::repo_root()
        .join("crates/cli/tests/data/tls")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// A configuration file with a TLS port and this server's certificate, plus `extra`.
fn conf(group: &str, tls_port: u16, extra: &str) -> PathBuf {
    let path = temp(group, &format!("tls-{tls_port}.conf"));
    std::fs::write(
        &path,
        format!(
            "port 0\ntls-port {tls_port}\ntls-cert-file {}\ntls-key-file {}\ntls-ca-cert-file {}\n{extra}",
            data("server.crt"),
            data("server.key"),
            data("ca.crt")
        ),
    )
    .unwrap();
    path
}

/// `redis-cli --tls` against `port` with the client certificate `who` (None: none).
fn cli(port: u16, who: Option<&str>, args: &[&str]) -> (bool, String) {
    let mut c = Command::new("redis-cli");
    c.args([
        "-p",
        &port.to_string(),
        "--tls",
        "--cacert",
        &data("ca.crt"),
    ]);
    if let Some(who) = who {
        c.args(["--cert", &data(&format!("{who}.crt"))]);
        c.args(["--key", &data(&format!("{who}.key"))]);
    }
    let out = c.args(args).output().expect("redis-cli");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (
        out.status.success() && !text.contains("Error"),
        text.trim().to_string(),
    )
}

fn redis_cli_has_tls() -> bool {
    Command::new("redis-cli")
        .arg("--help")
        .output()
        .is_ok_and(|o| {
            String::from_utf8_lossy(&o.stderr).contains("--tls")
                || String::from_utf8_lossy(&o.stdout).contains("--tls")
        })
}

#[test]
fn redis_cli_and_redis_py_speak_tls_and_strangers_are_refused() {
    if !redis_cli_has_tls() {
        return missing_client("redis-cli with TLS");
    }
    let tls = free_port();
    let c = conf("tls", tls, "");
    let (_s, addr, before) = kvs_serve_teed(&["--config", c.to_str().unwrap()], None);
    assert!(
        before
            .iter()
            .any(|l| l == &format!("kvs: TLS on 127.0.0.1:{tls}")),
        "{before:?}"
    );
    assert_eq!(cli(tls, Some("client"), &["SET", "k", "over tls"]).1, "OK");
    assert_eq!(cli(tls, Some("client"), &["GET", "k"]).1, "over tls");
    // The plain port serves the same keys.
    let mut plain = common::connect(&addr);
    assert_eq!(
        common::cmd(&mut plain, &["GET", "k"]),
        common::bulk("over tls")
    );
    // tls-auth-clients yes (the default): no certificate, or one of another authority,
    // gets nothing.
    let (ok, text) = cli(tls, None, &["GET", "k"]);
    assert!(!ok, "{text}");
    let (ok, text) = cli(tls, Some("stranger"), &["GET", "k"]);
    assert!(!ok, "{text}");
    // Plaintext on the TLS port: no reply (a TLS alert, then closed).
    let out = Command::new("redis-cli")
        .args(["-p", &tls.to_string(), "GET", "k"])
        .output()
        .expect("redis-cli");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("over tls"));
    // redis-py with ssl=True: pipelined writes and a 3 MB value both ways.
    if !python3_runs("import redis, ssl") {
        return missing_client("redis-py");
    }
    let script = format!(
        r#"
import redis
r = redis.Redis(host='127.0.0.1', port={tls}, ssl=True, ssl_ca_certs='{ca}',
                ssl_certfile='{cert}', ssl_keyfile='{key}', socket_timeout=10)
p = r.pipeline(transaction=False)
for i in range(2000):
    p.set('py:%d' % i, 'v%d' % i)
p.execute()
big = b'x' * (3 << 20)
r.set('big', big)
assert r.get('big') == big
vals = r.mget(['py:%d' % i for i in range(2000)])
assert vals == [b'v%d' % i for i in range(2000)], vals[:3]
print('ok', r.dbsize())
"#,
        ca = data("ca.crt"),
        cert = data("client.crt"),
        key = data("client.key"),
    );
    let out = Command::new("python3")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "ok 2002",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn tls_auth_clients_optional_takes_clients_without_a_certificate() {
    if !redis_cli_has_tls() {
        return missing_client("redis-cli with TLS");
    }
    let tls = free_port();
    let c = conf("tls-optional", tls, "tls-auth-clients optional\n");
    let (_s, _addr, _) = kvs_serve_teed(&["--config", c.to_str().unwrap()], None);
    assert_eq!(cli(tls, None, &["PING"]).1, "PONG");
    assert_eq!(cli(tls, Some("client"), &["PING"]).1, "PONG");
    // One presented is still checked.
    let (ok, text) = cli(tls, Some("stranger"), &["PING"]);
    assert!(!ok, "{text}");
}

#[test]
fn a_replica_follows_its_primary_over_tls_and_an_untrusted_one_is_refused() {
    let tls = free_port();
    let pc = conf("tls-repl", tls, "");
    let (_p, paddr, _) = kvs_serve_teed(&["--config", pc.to_str().unwrap()], None);
    let mut p = common::connect(&paddr);
    common::cmd(&mut p, &["SET", "before", "1"]);
    let replica_conf = |who: &str, ca: &str| {
        let path = temp("tls-repl", &format!("replica-{who}.conf"));
        std::fs::write(
            &path,
            format!(
                "port 0\ntls-replication yes\ntls-cert-file {}\ntls-key-file {}\ntls-ca-cert-file {}\nreplicaof 127.0.0.1 {tls}\n",
                data(&format!("{who}.crt")),
                data(&format!("{who}.key")),
                data(ca)
            ),
        )
        .unwrap();
        path
    };
    let rc = replica_conf("client", "ca.crt");
    let (_r, raddr, _) = kvs_serve_teed(&["--config", rc.to_str().unwrap()], None);
    let mut r = common::connect(&raddr);
    // Writes after the sync, one longer than a TLS record and the backlog.
    let big = "b".repeat(3 << 20);
    let mut pipe = redis::pipe();
    for i in 0..5000 {
        pipe.cmd("SET").arg(format!("k{i}")).arg(i).ignore();
    }
    pipe.cmd("SET").arg("big").arg(&big).ignore();
    pipe.query::<()>(&mut p).unwrap();
    until(20, "the replica has every write", || {
        redis::cmd("DBSIZE").query::<usize>(&mut r).ok() == Some(5002)
    });
    let got: String = redis::cmd("GET").arg("big").query(&mut r).unwrap();
    assert_eq!(got.len(), big.len());
    let link: String = redis::cmd("INFO").arg("replication").query(&mut r).unwrap();
    assert!(link.contains("master_link_status:up"), "{link}");
    // A replica whose certificate comes from an authority the primary does not trust
    // never gets the data.
    let sc = replica_conf("stranger", "ca.crt");
    let log = temp("tls-repl", "stranger.log");
    let (_x, xaddr, _) = kvs_serve_teed(&["--config", sc.to_str().unwrap()], Some(&log));
    let mut x = common::connect(&xaddr);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let n: usize = redis::cmd("DBSIZE").query(&mut x).unwrap();
    assert_eq!(n, 0);
    let link: String = redis::cmd("INFO").arg("replication").query(&mut x).unwrap();
    assert!(link.contains("master_link_status:down"), "{link}");
    let said = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(said.contains("kvs: replication from 127.0.0.1"), "{said}");
}

#[test]
fn tls_settings_that_cannot_work_are_refused_at_start() {
    let tls = free_port();
    // A line the file cannot have exits 2 (a malformed file); settings that do not
    // work, or files that do not load, exit 1.
    for (extra, want, code) in [
        ("tls-cluster yes\n", "tls-cluster yes", 1),
        (
            "tls-auth-clients maybe\n",
            "tls-auth-clients must be yes, no or optional",
            2,
        ),
    ] {
        let c = conf("tls-bad", tls, extra);
        let out = wirespeed(&["kvs", "serve", "--config", c.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{err}");
        assert!(err.contains(want), "{err}");
    }
    // A key that is not one, and a missing certificate.
    let path = temp("tls-bad", "nokey.conf");
    std::fs::write(
        &path,
        format!(
            "port 0\ntls-port {tls}\ntls-cert-file {}\ntls-key-file {}\ntls-ca-cert-file {}\n",
            data("server.crt"),
            data("ca.crt"),
            data("ca.crt")
        ),
    )
    .unwrap();
    let out = wirespeed(&["kvs", "serve", "--config", path.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("tls-key-file"), "{err}");
    let path = temp("tls-bad", "nocert.conf");
    std::fs::write(&path, format!("port 0\ntls-port {tls}\n")).unwrap();
    let out = wirespeed(&["kvs", "serve", "--config", path.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("tls-cert-file is needed"), "{err}");
}
