//! TLS on the key-value server through real clients: `redis-cli --tls` and redis-py
//! `ssl=True` on `tls-port` (with `tls-auth-clients` yes and optional, a client of
//! an unknown authority refused, plaintext on the TLS port answered nothing), big
//! values both ways, a replica that follows its primary over TLS
//! (`tls-replication yes`) and one whose certificate the primary does not trust, a
//! six-node cluster with `tls-cluster yes` made by `redis-cli --tls --cluster create`
//! (TLS ports to TLS clients, plain ones to plain clients, a failover over the TLS
//! bus, a restart from `nodes.conf`, and strangers on the bus ignored), and the
//! settings refused at start. The certificates are in `tests/data/tls`
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
    // CONFIG GET shows the TLS settings; CONFIG SET refuses them (set at start).
    let got: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("tls-*")
        .query(&mut plain)
        .unwrap();
    for (name, value) in [
        ("tls-port", tls.to_string()),
        ("tls-cert-file", data("server.crt")),
        ("tls-ca-cert-file", data("ca.crt")),
        ("tls-auth-clients", "yes".to_string()),
        ("tls-replication", "no".to_string()),
        ("tls-cluster", "no".to_string()),
    ] {
        let at = got.iter().position(|n| n == name).expect(name);
        assert_eq!(got[at + 1], value, "{name}: {got:?}");
    }
    let set = common::try_cmd(&mut plain, &["CONFIG", "SET", "tls-auth-clients", "no"]);
    assert!(set.is_err(), "{set:?}");
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
    for (port, extra, want, code) in [
        (0, "tls-cluster yes\n", "tls-cluster yes needs tls-port", 1),
        (
            tls,
            "tls-auth-clients maybe\n",
            "tls-auth-clients must be yes, no or optional",
            2,
        ),
    ] {
        let c = conf("tls-bad", port, extra);
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

/// A free port whose bus port (plus 10000) is free too.
fn cluster_port() -> u16 {
    loop {
        let p = free_port();
        if p < 55_000 && std::net::TcpListener::bind(("127.0.0.1", p + 10_000)).is_ok() {
            return p;
        }
    }
}

/// Sends a MEET line (a made-up node claiming every slot) to the bus port `bus`, as
/// plaintext (`who` None) or over TLS with that certificate; what the sender saw.
fn meet_on_bus(bus: u16, who: Option<&str>) -> String {
    let script = format!(
        r#"
import socket, ssl, time
line = ("MEET " + "f" * 40 + " 127.0.0.1 9999 0 19999 m - 0 999 0 0-16383 0\n").encode()
s = socket.create_connection(('127.0.0.1', {bus}), timeout=3)
who = '{who}'
if who:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.load_verify_locations('{ca}')
    ctx.load_cert_chain('{dir}/' + who + '.crt', '{dir}/' + who + '.key')
    s = ctx.wrap_socket(s, server_hostname='127.0.0.1')
try:
    for _ in range(3):
        s.sendall(line)
        time.sleep(0.2)
    print('sent')
except Exception as e:
    print('refused', type(e).__name__)
"#,
        who = who.unwrap_or(""),
        ca = data("ca.crt"),
        dir = data(""),
    );
    let out = Command::new("python3")
        .args(["-c", &script])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string() + &String::from_utf8_lossy(&out.stderr)
}

#[test]
fn a_tls_cluster_is_made_by_redis_cli_fails_over_and_ignores_strangers_on_its_bus() {
    if !redis_cli_has_tls() {
        return missing_client("redis-cli with TLS");
    }
    if !python3_runs("import ssl") {
        return missing_client("python3 with ssl");
    }
    let tls: Vec<u16> = (0..6).map(|_| cluster_port()).collect();
    let files: Vec<PathBuf> = (0..6)
        .map(|i| temp("tls-cluster", &format!("nodes-{i}.conf")))
        .collect();
    let confs: Vec<PathBuf> = (0..6)
        .map(|i| {
            let _ = std::fs::remove_file(&files[i]);
            conf(
                "tls-cluster",
                tls[i],
                &format!(
                    "tls-cluster yes\ntls-replication yes\ncluster-enabled yes\n\
                     cluster-config-file {}\ncluster-node-timeout 2000\n",
                    files[i].display()
                ),
            )
        })
        .collect();
    let start = |i: usize| kvs_serve_teed(&["--config", confs[i].to_str().unwrap()], None);
    let mut nodes: Vec<Option<common::Killed>> = Vec::new();
    let mut plain: Vec<String> = Vec::new();
    for i in 0..6 {
        let (k, addr, _) = start(i);
        nodes.push(Some(k));
        plain.push(addr);
    }
    let plain_port = |i: usize| plain[i].rsplit(':').next().unwrap().to_string();
    let mut args = vec![
        "--tls".to_string(),
        "--cacert".into(),
        data("ca.crt"),
        "--cert".into(),
        data("client.crt"),
        "--key".into(),
        data("client.key"),
        "--cluster".into(),
        "create".into(),
    ];
    args.extend(tls.iter().map(|p| format!("127.0.0.1:{p}")));
    args.extend(["--cluster-replicas", "1", "--cluster-yes"].map(String::from));
    let out = Command::new("redis-cli").args(&args).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("All 16384 slots covered"),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ok_at = |addr: &str| {
        let mut c = common::connect(addr);
        let info: String = redis::cmd("CLUSTER").arg("INFO").query(&mut c).unwrap();
        info.contains("cluster_state:ok")
    };
    until(20, "the cluster is ok on every node", || {
        plain.iter().all(|a| ok_at(a))
    });
    // The bus is on the TLS port plus 10000. A TLS client sees TLS ports, a plain
    // client plain ones, in CLUSTER NODES and in MOVED.
    let (ok, nodes_tls) = cli(tls[0], Some("client"), &["CLUSTER", "NODES"]);
    assert!(ok, "{nodes_tls}");
    let mut c0 = common::connect(&plain[0]);
    let nodes_plain: String = redis::cmd("CLUSTER").arg("NODES").query(&mut c0).unwrap();
    for i in 0..6 {
        let bus = tls[i] + 10_000;
        assert!(
            nodes_tls.contains(&format!("127.0.0.1:{}@{bus}", tls[i])),
            "{nodes_tls}"
        );
        assert!(
            nodes_plain.contains(&format!("127.0.0.1:{}@{bus}", plain_port(i))),
            "{nodes_plain}"
        );
    }
    // Keys in every primary's slots, written and read by redis-cli -c over TLS.
    for k in 0..30 {
        let key = format!("key:{k}");
        let (ok, t) = cli(
            tls[0],
            Some("client"),
            &["-c", "SET", &key, &format!("v{k}")],
        );
        assert!(ok && t == "OK", "{t}");
    }
    let moved = common::try_cmd(&mut c0, &["GET", "key:0"])
        .err()
        .or_else(|| common::try_cmd(&mut c0, &["GET", "key:1"]).err())
        .expect("key:0 or key:1 lives on another node");
    let moved = moved.to_string();
    assert!(
        (1..6).any(|i| moved.contains(&format!("127.0.0.1:{}", plain_port(i)))),
        "{moved}"
    );
    let (_, moved_tls) = cli(tls[0], Some("client"), &["GET", "key:0"]);
    let (_, moved_tls1) = cli(tls[0], Some("client"), &["GET", "key:1"]);
    assert!(
        (1..6).any(|i| {
            let p = format!("127.0.0.1:{}", tls[i]);
            moved_tls.contains(&p) || moved_tls1.contains(&p)
        }),
        "{moved_tls} {moved_tls1}"
    );
    // Replicas follow their primaries' TLS ports, and have every key.
    until(20, "every replica has its primary's keys", || {
        plain
            .iter()
            .map(|a| {
                let mut c = common::connect(a);
                redis::cmd("DBSIZE").query::<usize>(&mut c).unwrap_or(0)
            })
            .sum::<usize>()
            == 60
    });
    let mut replicas = 0;
    for a in &plain {
        let mut c = common::connect(a);
        let info: String = redis::cmd("INFO").arg("replication").query(&mut c).unwrap();
        if info.contains("role:slave") {
            replicas += 1;
            assert!(info.contains("master_link_status:up"), "{info}");
            let port: u16 = info
                .lines()
                .find_map(|l| l.strip_prefix("master_port:"))
                .and_then(|p| p.trim().parse().ok())
                .unwrap();
            assert!(tls.contains(&port), "{info}");
        }
    }
    assert_eq!(replicas, 3);
    // Strangers on the bus: plaintext, and TLS with a certificate of another
    // authority, change nothing; the same line with a trusted certificate is read
    // (its made-up node is met, untrusted, in handshake).
    let bus1 = tls[1] + 10_000;
    let handshakes = |a: &str| {
        let mut c = common::connect(a);
        let t: String = redis::cmd("CLUSTER").arg("NODES").query(&mut c).unwrap();
        t.matches("handshake").count()
    };
    meet_on_bus(bus1, None);
    let said = meet_on_bus(bus1, Some("stranger"));
    assert!(!said.contains("sent") || said.contains("refused"), "{said}");
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(handshakes(&plain[1]), 0);
    let said = meet_on_bus(bus1, Some("client"));
    assert!(said.contains("sent"), "{said}");
    until(5, "the trusted sender's MEET is read", || {
        handshakes(&plain[1]) == 1
    });
    // kill -9 of the first primary: its replica is elected over the TLS bus, and
    // every key is still there for a TLS client.
    nodes[0] = None;
    let old = format!(":{}@", plain_port(0));
    until(30, "a replica took over the first primary's slots", || {
        plain[1..].iter().all(|a| {
            let mut c = common::connect(a);
            let t: String = redis::cmd("CLUSTER").arg("NODES").query(&mut c).unwrap();
            ok_at(a)
                && t.lines()
                    .any(|l| l.contains("master") && !l.contains(&old) && l.contains(" 0-5460"))
        })
    });
    for k in 0..30 {
        let key = format!("key:{k}");
        let (ok, t) = cli(tls[1], Some("client"), &["-c", "GET", &key]);
        assert!(ok && t == format!("v{k}"), "{key}: {t}");
    }
    // Restarted on its nodes.conf (TLS port first, `tcp-port=` after it), the old
    // primary comes back as a replica of the new one, over TLS.
    let saved = std::fs::read_to_string(&files[0]).unwrap();
    assert!(
        saved.contains(&format!(
            "127.0.0.1:{}@{},,tcp-port=",
            tls[0],
            tls[0] + 10_000
        )),
        "{saved}"
    );
    let (k, addr, _) = start(0);
    nodes[0] = Some(k);
    until(20, "the old primary follows the new one", || {
        let mut c = common::connect(&addr);
        let info: String = redis::cmd("INFO").arg("replication").query(&mut c).unwrap();
        info.contains("role:slave") && info.contains("master_link_status:up")
    });
}
