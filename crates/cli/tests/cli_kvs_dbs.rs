//! The numbered databases through the real binary (two event loops, so the clients of
//! one test are served by different loops): SELECT keeps the databases apart; MOVE,
//! COPY ... DB, SWAPDB and FLUSHDB change only what they name; the log brings every
//! database back after `kill -9` (and after a rewrite); WATCH, blocked clients and
//! keyspace notifications are per database; SELECT inside a script stays inside it.

mod common;

use std::time::Duration;

use common::{bulk, cmd, connect, durable_args, fresh_log, kvs_serve, wirespeed};
use redis::{Connection, Value};

fn ok() -> Value {
    Value::Okay
}

/// The INFO keyspace lines (`dbN:keys=...`), without the averages.
fn keyspace(c: &mut Connection) -> Vec<String> {
    let info: String = redis::cmd("INFO")
        .arg("keyspace")
        .query(c)
        .unwrap_or_else(|e| panic!("{e}"));
    info.lines()
        .filter(|l| l.starts_with("db"))
        .map(|l| l.split(",avg_ttl").next().unwrap_or(l).to_string())
        .collect()
}

/// Every database's keys and values (strings, lists, hashes), sorted, as one listing.
fn snapshot(c: &mut Connection) -> Vec<String> {
    let mut out = Vec::new();
    for db in 0..16 {
        cmd(c, &["SELECT", &db.to_string()]);
        let mut keys: Vec<String> = redis::cmd("KEYS")
            .arg("*")
            .query(c)
            .unwrap_or_else(|e| panic!("{e}"));
        keys.sort();
        for k in keys {
            let kind: String = redis::cmd("TYPE").arg(&k).query(c).unwrap();
            let value = match kind.as_str() {
                "string" => cmd(c, &["GET", &k]),
                "list" => cmd(c, &["LRANGE", &k, "0", "-1"]),
                "hash" => cmd(c, &["HGETALL", &k]),
                other => panic!("unexpected type {other}"),
            };
            let ttl = matches!(cmd(c, &["TTL", &k]), Value::Int(t) if t > 0);
            out.push(format!("{db} {k} {kind} {value:?} ttl={ttl}"));
        }
    }
    cmd(c, &["SELECT", "0"]);
    out
}

#[test]
fn databases_are_apart_and_come_back_from_the_log() {
    let aof = fresh_log("kvs-dbs");
    let args = durable_args(&aof);
    let before;
    {
        let (_server, addr) = kvs_serve(&args);
        let mut c = connect(&addr);
        cmd(&mut c, &["SET", "k", "zero"]);
        assert_eq!(cmd(&mut c, &["SELECT", "1"]), ok());
        assert_eq!(cmd(&mut c, &["GET", "k"]), Value::Nil);
        cmd(&mut c, &["SET", "k", "one", "EX", "1000"]);
        cmd(&mut c, &["RPUSH", "list", "a", "b"]);
        cmd(&mut c, &["HSET", "h", "f", "v"]);
        // MOVE keeps the deadline; a name taken in the target is not moved.
        assert_eq!(cmd(&mut c, &["MOVE", "k", "2"]), Value::Int(1));
        assert_eq!(cmd(&mut c, &["MOVE", "list", "2"]), Value::Int(1));
        cmd(&mut c, &["SET", "k", "again"]);
        assert_eq!(cmd(&mut c, &["MOVE", "k", "2"]), Value::Int(0));
        assert_eq!(cmd(&mut c, &["COPY", "h", "h2", "DB", "5"]), Value::Int(1));
        // A second client sees its own database, not the first one's.
        let mut d = connect(&addr);
        assert_eq!(cmd(&mut d, &["GET", "k"]), bulk("zero"));
        cmd(&mut d, &["SELECT", "2"]);
        assert_eq!(cmd(&mut d, &["GET", "k"]), bulk("one"));
        assert!(matches!(cmd(&mut d, &["TTL", "k"]), Value::Int(t) if t > 990));
        assert_eq!(cmd(&mut d, &["DBSIZE"]), Value::Int(2));
        // SWAPDB: d (on 2) now sees what was in 7 (nothing), and 7 what was in 2.
        cmd(&mut c, &["SELECT", "7"]);
        cmd(&mut c, &["SET", "in7", "x"]);
        assert_eq!(cmd(&mut c, &["SWAPDB", "2", "7"]), ok());
        assert_eq!(cmd(&mut d, &["KEYS", "*"]), Value::Array(vec![bulk("in7")]));
        assert_eq!(cmd(&mut c, &["GET", "k"]), bulk("one"));
        // FLUSHDB empties one database; the others keep their keys.
        cmd(&mut c, &["SELECT", "5"]);
        cmd(&mut c, &["SET", "doomed", "1"]);
        cmd(&mut c, &["SELECT", "6"]);
        cmd(&mut c, &["SET", "doomed", "1"]);
        assert_eq!(cmd(&mut c, &["FLUSHDB"]), ok());
        assert_eq!(
            keyspace(&mut c),
            [
                "db0:keys=1,expires=0",
                "db1:keys=2,expires=0",
                "db2:keys=1,expires=0",
                "db5:keys=2,expires=0",
                "db7:keys=2,expires=1",
            ]
        );
        before = snapshot(&mut c);
        assert_eq!(before.len(), 8, "{before:?}");
        // Dropped without a word: the server is killed (-9).
    }
    let (server, addr) = kvs_serve(&args);
    let mut c = connect(&addr);
    assert_eq!(snapshot(&mut c), before, "after kill -9");
    // After a rewrite of the log the same databases come back again.
    cmd(&mut c, &["BGREWRITEAOF"]);
    std::thread::sleep(Duration::from_millis(500));
    cmd(&mut c, &["SELECT", "9"]);
    cmd(&mut c, &["SET", "after-rewrite", "1"]);
    drop(server);
    let (server, addr) = kvs_serve(&args);
    let mut c = connect(&addr);
    let mut want = before.clone();
    want.push("9 after-rewrite string bulk-string(\"1\") ttl=false".into());
    let got = snapshot(&mut c);
    assert_eq!(got.len(), want.len(), "{got:?}");
    assert_eq!(&got[..before.len()], &before[..], "after a rewrite");
    assert!(
        got[before.len()].starts_with("9 after-rewrite string"),
        "{got:?}"
    );
    drop(server);
    // Fewer databases than the log needs: refused, the log untouched.
    let size = std::fs::metadata(&aof).map(|m| m.len()).unwrap_or(0);
    let out = wirespeed(&[
        "kvs",
        "serve",
        "--port",
        "0",
        "--databases",
        "4",
        "--aof",
        &aof,
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("database 9") && err.contains("--databases 10"),
        "{err}"
    );
    assert_eq!(std::fs::metadata(&aof).map(|m| m.len()).unwrap_or(0), size);
}

#[test]
fn the_number_of_databases_is_a_setting() {
    let (_server, addr) = kvs_serve(&["--port", "0", "--databases", "4"]);
    let mut c = connect(&addr);
    assert_eq!(cmd(&mut c, &["SELECT", "3"]), ok());
    let err = redis::cmd("SELECT")
        .arg(4)
        .query::<Value>(&mut c)
        .unwrap_err();
    assert!(
        err.to_string().contains("DB index is out of range"),
        "{err}"
    );
    assert_eq!(
        cmd(&mut c, &["CONFIG", "GET", "databases"]),
        Value::Array(vec![bulk("databases"), bulk("4")])
    );
    let out = wirespeed(&["kvs", "serve", "--port", "0", "--databases", "0"]);
    assert!(!out.status.success());
}

#[test]
fn watch_blocking_and_notifications_are_per_database() {
    let (_server, addr) = kvs_serve(&["--port", "0", "--threads", "2"]);
    let mut a = connect(&addr);
    let mut b = connect(&addr);
    // WATCH in database 1: a write to the same name in database 0 leaves it alone...
    cmd(&mut a, &["SELECT", "1"]);
    cmd(&mut a, &["WATCH", "w"]);
    cmd(&mut b, &["SET", "w", "0"]);
    cmd(&mut a, &["MULTI"]);
    cmd(&mut a, &["SET", "done", "1"]);
    assert_eq!(cmd(&mut a, &["EXEC"]), Value::Array(vec![ok()]));
    // ...one in database 1 aborts the transaction.
    cmd(&mut a, &["WATCH", "w"]);
    cmd(&mut b, &["SELECT", "1"]);
    cmd(&mut b, &["SET", "w", "1"]);
    cmd(&mut a, &["MULTI"]);
    cmd(&mut a, &["SET", "done", "2"]);
    assert_eq!(cmd(&mut a, &["EXEC"]), Value::Nil);
    // SWAPDB touches a watched key that the swap brings in.
    cmd(&mut a, &["SELECT", "3"]);
    cmd(&mut a, &["WATCH", "w"]);
    cmd(&mut b, &["SWAPDB", "1", "3"]);
    cmd(&mut a, &["MULTI"]);
    cmd(&mut a, &["PING"]);
    assert_eq!(cmd(&mut a, &["EXEC"]), Value::Nil);

    // A client blocked on a list in database 2 is not served by a push to database 0,
    // is by MOVE into database 2.
    let waiter = std::thread::spawn({
        let addr = addr.clone();
        move || {
            let mut w = connect(&addr);
            cmd(&mut w, &["SELECT", "2"]);
            cmd(&mut w, &["BLPOP", "q", "5"])
        }
    });
    std::thread::sleep(Duration::from_millis(300));
    cmd(&mut b, &["SELECT", "0"]);
    cmd(&mut b, &["RPUSH", "q", "wrong-db"]);
    std::thread::sleep(Duration::from_millis(200));
    assert!(!waiter.is_finished(), "served from another database");
    assert_eq!(cmd(&mut b, &["MOVE", "q", "2"]), Value::Int(1));
    let got = waiter.join().expect("waiter");
    assert_eq!(got, Value::Array(vec![bulk("q"), bulk("wrong-db")]));

    // Notifications name the key's database; MOVE tells both sides.
    cmd(&mut b, &["CONFIG", "SET", "notify-keyspace-events", "KEA"]);
    let mut sub = connect(&addr);
    let mut ps = sub.as_pubsub();
    ps.psubscribe("__key*@*__:*").expect("psubscribe");
    ps.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    cmd(&mut b, &["SELECT", "5"]);
    cmd(&mut b, &["SET", "n", "1"]);
    cmd(&mut b, &["MOVE", "n", "6"]);
    let mut seen = Vec::new();
    while seen.len() < 5 {
        let m = ps.get_message().expect("a notification");
        let payload: String = m.get_payload().unwrap();
        seen.push(format!("{} {payload}", m.get_channel_name()));
    }
    assert_eq!(
        seen,
        [
            "__keyspace@5__:n set",
            "__keyevent@5__:set n",
            "__keyspace@5__:n move_from",
            "__keyevent@5__:move_from n",
            "__keyspace@6__:n move_to",
        ]
    );
}

#[test]
fn select_in_a_script_stays_in_it_and_in_multi_it_stays() {
    let (_server, addr) = kvs_serve(&["--port", "0"]);
    let mut c = connect(&addr);
    let script = "redis.call('select', 4); redis.call('set', 's', 'four'); return 1";
    assert_eq!(cmd(&mut c, &["EVAL", script, "0"]), Value::Int(1));
    assert_eq!(cmd(&mut c, &["GET", "s"]), Value::Nil);
    cmd(&mut c, &["MULTI"]);
    cmd(&mut c, &["SELECT", "4"]);
    cmd(&mut c, &["GET", "s"]);
    assert_eq!(
        cmd(&mut c, &["EXEC"]),
        Value::Array(vec![ok(), bulk("four")])
    );
    // The transaction's SELECT holds after it, as in Redis.
    assert_eq!(cmd(&mut c, &["GET", "s"]), bulk("four"));
    let list: String = redis::cmd("CLIENT").arg("INFO").query(&mut c).unwrap();
    assert!(list.contains(" db=4 "), "{list}");
    // RESET goes back to database 0.
    cmd(&mut c, &["RESET"]);
    assert_eq!(cmd(&mut c, &["GET", "s"]), Value::Nil);
}
