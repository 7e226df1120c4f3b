//! SORT ... STORE and ZRANGESTORE through the real binary with an append-only log:
//! what they stored (and the destinations they emptied) is the same after `kill -9`
//! and a restart from the log, with two event loops so the BY/GET keys may live in
//! other shards than the sorted key.

mod common;

use common::{cmd, connect, durable_args, fresh_log, kvs_serve};
use redis::Value;

fn strings(items: &[&str]) -> Value {
    Value::Array(
        items
            .iter()
            .map(|s| Value::BulkString(s.as_bytes().to_vec()))
            .collect(),
    )
}

#[test]
fn stored_results_survive_a_restart_from_the_log() {
    let aof = fresh_log("kvs-sort");
    let args = durable_args(&aof);
    let sorted = strings(&["b", "9", "c", "", "a", "7"]);
    let ranged = strings(&["b", "20", "c", "30"]);
    {
        let (_server, addr) = kvs_serve(&args);
        let mut c = connect(&addr);
        cmd(&mut c, &["RPUSH", "src", "a", "b", "c"]);
        cmd(&mut c, &["MSET", "w_a", "3", "w_b", "1", "w_c", "2"]);
        cmd(&mut c, &["HSET", "h_a", "f", "7"]);
        cmd(&mut c, &["HSET", "h_b", "f", "9"]);
        // Something there before: STORE replaces it whatever its type.
        cmd(&mut c, &["SET", "dst", "old"]);
        let n = cmd(
            &mut c,
            &[
                "SORT", "src", "BY", "w_*", "GET", "#", "GET", "h_*->f", "STORE", "dst",
            ],
        );
        assert_eq!(n, Value::Int(6));
        assert_eq!(cmd(&mut c, &["LRANGE", "dst", "0", "-1"]), sorted);
        // An empty result deletes the destination.
        cmd(&mut c, &["RPUSH", "gone", "x"]);
        assert_eq!(
            cmd(&mut c, &["SORT", "nosuchkey", "STORE", "gone"]),
            Value::Int(0)
        );
        cmd(&mut c, &["ZADD", "z", "10", "a", "20", "b", "30", "c"]);
        assert_eq!(
            cmd(
                &mut c,
                &["ZRANGESTORE", "zd", "z", "(10", "+inf", "BYSCORE"]
            ),
            Value::Int(2)
        );
        cmd(&mut c, &["ZADD", "zgone", "1", "x"]);
        assert_eq!(
            cmd(&mut c, &["ZRANGESTORE", "zgone", "z", "5", "9"]),
            Value::Int(0)
        );
        // _server is killed with SIGKILL when dropped.
    }
    let (_server, addr) = kvs_serve(&args);
    let mut c = connect(&addr);
    assert_eq!(cmd(&mut c, &["LRANGE", "dst", "0", "-1"]), sorted);
    assert_eq!(
        cmd(&mut c, &["ZRANGE", "zd", "0", "-1", "WITHSCORES"]),
        ranged
    );
    assert_eq!(cmd(&mut c, &["EXISTS", "gone", "zgone"]), Value::Int(0));
}
